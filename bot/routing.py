"""Which job of the reusable workflow an event belongs to: `sweep` (the only job that may dispatch),
`review`, or `skip` (noise that can change nothing), decided by the bot's own parsers so the
workflow's routing and the handlers never disagree about what a command is."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from bot.events import (
    ACTION_EDITED,
    ACTION_LABELED,
    EVENT_COMMENT,
    EVENT_PULL_REQUEST,
    CommentEvent,
    EventError,
    from_fork,
    parse_event,
)
from bot.command_lines import mentions_command, parse_sweep_command
from recipes.config import Policy

JOB_REVIEW = "review"
JOB_SWEEP = "sweep"
JOB_SKIP = "skip"
JOBS = (JOB_REVIEW, JOB_SWEEP, JOB_SKIP)

WHY_SWEEP_COMMAND = "a whole-line /sweep command"
WHY_LABELED = "a label was added (the sweep job checks whether it is a primary sweep label)"
WHY_BOT = "the comment is by a bot"
WHY_NOISE = "the comment holds no command line and no sign-off phrase"
WHY_REVIEW = "everything else goes to the review job"
WHY_FORK_REVIEW = ("a review on a fork PR runs with a read-only token and no secrets; the run of this workflow "
                   "that follows its completion (workflow_run) verifies it")
# Review kinds whose events carry the PR (pull_request_review, pull_request_review_comment).
REVIEW_KINDS = ("review", "review_comment")
WHY_UNPARSABLE = "the payload could not be parsed; the review job reports it"


@dataclass(frozen=True)
class Route:
    job: str
    reason: str


def _may_matter(body: str | None, phrase: str) -> bool:
    """A command line (the bot's own grammar) or the sign-off phrase anywhere (the sign-off parser
    decides about quotes; this only has to keep everything that might be one)."""
    if not body:
        return False
    return mentions_command(body) or parse_sweep_command(body) is not None or phrase.lower() in body.lower()


def route_event(name: str, payload: Any, *, phrase: str | None = None) -> Route:
    """The job for one event. `skip` only for comments that provably change nothing: by a bot, or
    with neither a command nor the sign-off phrase in the new body (nor, for an edit, in the old
    one, since withdrawing a command or a sign-off is handled too)."""
    phrase = phrase or Policy().signoff_phrase
    try:
        event = parse_event(name, payload if isinstance(payload, Mapping) else {})
    except EventError:
        return Route(JOB_REVIEW, WHY_UNPARSABLE)
    if event.key == (EVENT_PULL_REQUEST, ACTION_LABELED):
        return Route(JOB_SWEEP, WHY_LABELED)
    if isinstance(event, CommentEvent) and event.name == EVENT_COMMENT and event.comment is not None:
        c = event.comment
        if c.is_bot:
            return Route(JOB_SKIP, WHY_BOT)
        if c.kind in REVIEW_KINDS and from_fork(event.payload):
            return Route(JOB_SKIP, WHY_FORK_REVIEW)
        if c.kind == "issue_comment" and event.action != ACTION_EDITED and parse_sweep_command(c.body) is not None:
            return Route(JOB_SWEEP, WHY_SWEEP_COMMAND)
        if not _may_matter(c.body, phrase) and not _may_matter(event.previous_body, phrase):
            return Route(JOB_SKIP, WHY_NOISE)
    return Route(JOB_REVIEW, WHY_REVIEW)


def github_output(route: Route) -> str:
    """The lines for $GITHUB_OUTPUT."""
    return f"job={route.job}\n"
