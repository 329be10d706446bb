"""Sweep completion: when a run of the sweep workflow for a PR completes, the PR's existing
sign-off is verified again, so its verdict reflects the new results."""
from __future__ import annotations

import logging

from bot.events import ACTION_COMPLETED, EVENT_WORKFLOW_RUN, WorkflowRunEvent
from bot.handlers.signoff import VERDICT_MARKER_PREFIX, gate_problem, verify
from bot.router import Context, Router

log = logging.getLogger(__name__)

MSG_OTHER_WORKFLOW = "%s: run %s is of %s, not the sweep workflow %s"
MSG_NO_PR = ("%s: run %s names no pull request (GitHub lists none for fork PRs and dispatched runs); "
             "nothing to re-verify")
MSG_NO_VERDICT = "%s: %s#%s has no verdict yet; a sign-off starts the first verification"
MSG_GATE = "%s: not re-verifying %s#%s: the PR is %s"


def register(router: Router) -> None:
    router.add(EVENT_WORKFLOW_RUN, ACTION_COMPLETED, on_run_completed, name="completion.on_run_completed")


def on_run_completed(event: WorkflowRunEvent, ctx: Context) -> None:
    workflow = ctx.config.sweep.workflow
    if event.workflow_path != workflow:
        log.info(MSG_OTHER_WORKFLOW, event.describe(), event.run_id, event.workflow_path, workflow)
        return
    if not event.pr_numbers:
        log.info(MSG_NO_PR, event.describe(), event.run_id)
        return
    for number in event.pr_numbers:
        # Only a PR that already has a verdict is re-verified: the run alone is no sign-off.
        if not ctx.own_comments(number, VERDICT_MARKER_PREFIX):
            log.info(MSG_NO_VERDICT, event.describe(), ctx.repo, number)
            continue
        pr = ctx.pull(number)
        problem = gate_problem(pr)
        if problem:
            log.info(MSG_GATE, event.describe(), ctx.repo, number, problem)
            continue
        # signoff_ref=None: the newest sign-off is the one that counts now (spec 8.2).
        verify(ctx, number, signoff_ref=None, head=pr["head"]["sha"])
