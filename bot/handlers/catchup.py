"""The fallback that makes a lost job harmless: every job recomputes, from the PR's own state,
the newest sign-off without a current verdict and verifies it. GitHub cancels a pending job when
its concurrency group overflows (always with one pending slot; on GitHub Enterprise Server, which
may not accept `queue: max`), so a sign-off whose job was cancelled is verified by the next job
that runs for the PR, whatever its event."""
from __future__ import annotations

import logging

from bot.events import (
    ACTION_COMPLETED,
    ACTION_CREATED,
    ACTION_EDITED,
    ACTION_LABELED,
    EVENT_COMMENT,
    EVENT_PULL_REQUEST,
    EVENT_REVIEW,
    EVENT_REVIEW_COMMENT,
    EVENT_WORKFLOW_RUN,
    CommentEvent,
    Event,
    PullRequestEvent,
    WorkflowRunEvent,
)
from bot.dates import parse_time
from bot.handlers.signoff import gate_problem, verify
from bot.publisher import SIGNOFF_STAMP_RE, signoff_digest
from bot.router import Context, Router
from bot.snapshot_builder import _comment, find_signoff
from checks.render import MARKER
from checks.snapshot import Comment

log = logging.getLogger(__name__)

MSG_CURRENT = "%s: the newest sign-off %s on %s#%s has a current verdict"
MSG_CATCH_UP = "%s: the newest sign-off %s on %s#%s has no current verdict (%s); verifying it now"
MSG_GATE = "%s: not catching up on %s#%s: the PR is %s"
MSG_NO_PR = "%s: could not list the PRs of %s:%s: %s"
# Runs that follow a review on a fork PR (see bot/routing.py).
REVIEW_EVENTS = (EVENT_REVIEW, EVENT_REVIEW_COMMENT)
WHY_NONE = "no verdict comment"
WHY_STALE = "the sign-off changed after its verdict"


def register(router: Router) -> None:
    for event, action in ((EVENT_COMMENT, ACTION_CREATED), (EVENT_COMMENT, ACTION_EDITED),
                          (EVENT_PULL_REQUEST, ACTION_LABELED), (EVENT_WORKFLOW_RUN, ACTION_COMPLETED)):
        router.add(event, action, on_any_event, name="catchup.on_any_event")


def _numbers(event: Event, ctx: Context) -> tuple[int, ...]:
    if isinstance(event, CommentEvent):
        return (event.number,) if event.is_pull_request else ()
    if isinstance(event, PullRequestEvent):
        return (event.number,)
    if isinstance(event, WorkflowRunEvent):
        if event.workflow_path == ctx.config.sweep.workflow:
            return event.pr_numbers
        if event.run_event in REVIEW_EVENTS:
            # The run that follows a review on a fork PR, which had a read-only token (bot/routing.py):
            # this one has write access. GitHub lists no PR for a fork's head: found by that head.
            return event.pr_numbers or _prs_with_head(ctx, event)
    return ()


def _prs_with_head(ctx: Context, event: WorkflowRunEvent) -> tuple[int, ...]:
    """The open PRs whose head is the run's (`owner:branch`, "List pull requests",
    https://docs.github.com/en/rest/pulls/pulls#list-pull-requests)."""
    if not event.head_owner or not event.head_branch:
        return ()
    try:
        pulls = ctx.api.list(f"{ctx.r}/pulls", {"state": "open", "head": f"{event.head_owner}:{event.head_branch}"})
    except Exception as exc:  # the next event for the PR catches up anyway
        log.warning(MSG_NO_PR, ctx.delivery, event.head_owner, event.head_branch, exc)
        return ()
    return tuple(int(p["number"]) for p in pulls if p.get("number"))


def is_current(verdict: dict | None, signoff: Comment) -> tuple[bool, str]:
    """Whether the bot's verdict comment assessed this version of the sign-off."""
    if verdict is None:
        return False, WHY_NONE
    m = SIGNOFF_STAMP_RE.search(verdict.get("body") or "")
    seen = signoff.updated_at or signoff.created_at
    if m:
        # An edited review keeps its date (reviews have no updated_at): the text digest tells.
        same_text = m.group(2) is None or m.group(2) == signoff_digest(signoff.body or "")
        return (parse_time(m.group(1)) == seen and same_text, WHY_STALE)
    # Verdicts without a stamp (an incomplete verification): current unless edited after it.
    written = parse_time(verdict.get("updated_at") or verdict.get("created_at"))
    return (written is None or seen is None or written >= seen, WHY_STALE)


def newest_uncovered(ctx: Context, number: int) -> tuple[Comment, str] | None:
    """(sign-off, why) when the PR's newest sign-off has no current verdict, else None."""
    r = f"{ctx.r}/pulls/{number}"
    issue_comments = ctx.api.list(f"{ctx.r}/issues/{number}/comments")
    comments = [_comment(c, "issue_comment") for c in issue_comments]
    comments += [_comment(c, "review") for c in ctx.api.list(f"{r}/reviews") if c.get("submitted_at")]
    comments += [_comment(c, "review_comment") for c in ctx.api.list(f"{r}/comments")]
    policy = ctx.config.policy
    signoff = find_signoff(comments, policy.signoff_phrase, policy.bot_logins)
    if signoff is None:
        return None
    me, marker = ctx.own_login.lower(), MARKER.format(key=signoff.key)
    verdict = next((c for c in issue_comments
                    if str((c.get("user") or {}).get("login", "")).lower() == me
                    and (c.get("body") or "").split("\n", 1)[0].rstrip("\r") == marker), None)
    current, why = is_current(verdict, signoff)
    if current:
        log.info(MSG_CURRENT, ctx.delivery, signoff.key, ctx.repo, number)
        return None
    return signoff, why


def on_any_event(event: Event, ctx: Context) -> None:
    """Runs after every other handler: a PR this job already verified is left alone."""
    for number in _numbers(event, ctx):
        if number in ctx.verified:
            continue
        found = newest_uncovered(ctx, number)
        if found is None:
            continue
        pr = ctx.pull(number, fresh=True)
        problem = gate_problem(pr)
        if problem:
            log.info(MSG_GATE, ctx.delivery, ctx.repo, number, problem)
            continue
        signoff, why = found
        log.warning(MSG_CATCH_UP, ctx.delivery, signoff.key, ctx.repo, number, why)
        verify(ctx, number, signoff_ref=signoff.key, head=pr["head"]["sha"])
