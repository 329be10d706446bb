"""Sign-off verification on events (spec 8.2): a comment, review summary or inline comment
carrying the sign-off phrase on an open, non-draft PR; a manual dispatch naming the sign-off;
and the status a new head gets once a verdict exists."""
from __future__ import annotations

import logging

from bot.events import (
    ACTION_CREATED,
    ACTION_EDITED,
    ACTION_NONE,
    ACTION_SYNCHRONIZE,
    EVENT_COMMENT,
    EVENT_DISPATCH,
    EVENT_PULL_REQUEST,
    CommentEvent,
    DispatchEvent,
    EventError,
    PullRequestEvent,
)
from bot.publisher import Publisher
from bot.router import Context, Router
from bot.snapshot_builder import find_signoff, parse_signoff_ref, SnapshotError
from checks.render import MARKER
from recipes.markdown import github_pull

log = logging.getLogger(__name__)

OPEN = "open"
# Any verdict comment of ours, whichever sign-off it is for.
VERDICT_MARKER_PREFIX = MARKER.split("{", 1)[0]
STATE_FRESH_REQUIRED = "pending"
DESC_FRESH_REQUIRED = "New commit {sha}: a fresh sign-off verification is required"

MSG_SKIP_GATE = "not verifying %s on %s#%s: the PR is %s"
MSG_DISPATCH_NO_SIGNOFF = "workflow_dispatch without a sign-off URL input: nothing to verify (%s)"
MSG_DISPATCH_NO_PR = "workflow_dispatch needs the pr-number input with the sign-off URL {url}"
MSG_DISPATCH_OTHER_PR = "the sign-off {url} is not on {repo}#{number}"
MSG_HEAD_MOVED = "%s#%s moved to %s during verification; marking it for a fresh verification"
MSG_REVIEW_ERROR = "verification of %s#%s ended with: %s"


def register(router: Router) -> None:
    router.add(EVENT_COMMENT, ACTION_CREATED, on_comment, name="signoff.on_comment")
    router.add(EVENT_COMMENT, ACTION_EDITED, on_comment, name="signoff.on_comment")
    router.add(EVENT_DISPATCH, ACTION_NONE, on_dispatch, name="signoff.on_dispatch")
    router.add(EVENT_PULL_REQUEST, ACTION_SYNCHRONIZE, on_synchronize, name="signoff.on_synchronize")


def _review_pr():
    # Imported late: the pipeline pulls in the checks, which routing alone does not need.
    from bot.pipeline import review_pr
    return review_pr


def gate_problem(pr: dict) -> str | None:
    """Why an event may not start a verification of this PR (spec 8.2), or None."""
    if pr.get("state") != OPEN:
        return str(pr.get("state") or "not open")
    if pr.get("draft"):
        return "a draft"
    return None


def verify(ctx: Context, number: int, *, signoff_ref: str | None, head: str):
    """Build, evaluate and publish one verdict with the head pinned at `head`. A verdict whose
    head moved also marks the newer commit as needing a fresh verification."""
    ctx.verified.add(number)
    review = (ctx.review or _review_pr())(ctx.api, ctx.repo, number, post=True, signoff_ref=signoff_ref,
                                          review_date=ctx.review_date, pin_head=head)
    if review.error:
        log.warning(MSG_REVIEW_ERROR, ctx.repo, number, review.error)
    verdict = review.verdict
    if verdict is not None and verdict.head_moved is not None:
        moved_to = verdict.head_moved.current_head_sha
        log.info(MSG_HEAD_MOVED, ctx.repo, number, moved_to)
        target = review.published.comment_url if review.published else None
        mark_fresh_required(ctx, number, moved_to, target)
    return review


def mark_fresh_required(ctx: Context, number: int, sha: str, target_url: str | None) -> bool:
    """The status on a head no verdict has assessed: a fresh sign-off verification is needed."""
    publisher = Publisher(ctx.api, ctx.repo, number, context=ctx.config.policy.status_context)
    return publisher.set_status(sha, STATE_FRESH_REQUIRED, DESC_FRESH_REQUIRED.format(sha=sha[:12]), target_url)


def on_comment(event: CommentEvent, ctx: Context) -> None:
    comment = event.comment
    if comment is None or not event.is_pull_request:
        return
    policy = ctx.config.policy
    if find_signoff([comment], policy.signoff_phrase, policy.bot_logins) is None:
        return
    pr = ctx.pull(event.number)
    problem = gate_problem(pr)
    if problem:
        log.info(MSG_SKIP_GATE, comment.key, ctx.repo, event.number, problem)
        return
    verify(ctx, event.number, signoff_ref=comment.key, head=pr["head"]["sha"])


def on_dispatch(event: DispatchEvent, ctx: Context) -> None:
    """A maintainer's manual run: the sign-off URL names the comment, and the open/draft gate
    does not apply (spec 8.2). The URL must be on the same repository and PR."""
    url = event.signoff_url
    if not url:
        log.info(MSG_DISPATCH_NO_SIGNOFF, event.describe())
        return
    number = event.pr_number
    if number is None:
        raise EventError(MSG_DISPATCH_NO_PR.format(url=url))
    try:
        parse_signoff_ref(url)
    except SnapshotError as exc:
        raise EventError(str(exc)) from None
    pull = github_pull(url)
    if pull and (pull[0].lower() != ctx.repo.lower() or pull[1] != number):
        raise EventError(MSG_DISPATCH_OTHER_PR.format(url=url, repo=ctx.repo, number=number))
    pr = ctx.pull(number)
    verify(ctx, number, signoff_ref=url, head=pr["head"]["sha"])


def on_synchronize(event: PullRequestEvent, ctx: Context) -> None:
    """Pushes never start a verification; once a verdict exists, the new head is marked as
    needing a fresh one (a verdict describes only the commit it assessed, spec 11.2)."""
    verdicts = ctx.own_comments(event.number, VERDICT_MARKER_PREFIX)
    if not verdicts or not event.head_sha:
        return
    mark_fresh_required(ctx, event.number, event.head_sha, verdicts[-1].get("html_url"))
