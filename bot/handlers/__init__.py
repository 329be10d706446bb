"""The event handlers, one module per concern, merged into one router in a fixed order; and the
acknowledgement helpers (reactions, reply comments) the command handlers share."""
from __future__ import annotations

import importlib
import logging

from bot.events import CommentEvent
from bot.router import Context, Router
from checks.text import escape_inline

log = logging.getLogger(__name__)

# Concern modules, in the order their handlers run for the same event: the sign-off first (the
# verdict matters most), then commands, sweep dispatch, and sweep completion. Each exposes
# `register(router)`.
HANDLER_MODULES = (
    "bot.handlers.signoff",
    "bot.handlers.commands",
    "bot.handlers.sweep",
    "bot.handlers.completion",
    # Last: the fallback that verifies a sign-off whose own job was lost (bot/handlers/catchup.py).
    "bot.handlers.catchup",
)

REACTION_ACCEPTED = "+1"
REACTION_REFUSED = "-1"
ACK_REACTIONS = (REACTION_ACCEPTED, REACTION_REFUSED)
# GitHub has no reactions on review summaries; the reply comment is the only acknowledgement.
REACTION_PATHS = {"issue_comment": "issues/comments", "review_comment": "pulls/comments"}
QUOTE_MAX = 200


def build_router() -> Router:
    router = Router()
    for name in HANDLER_MODULES:
        importlib.import_module(name).register(router)
    return router


def quote_line(text: str) -> str:
    """The triggering command as an inert one-line Markdown quote."""
    return "> " + escape_inline(text, QUOTE_MAX)


def comment_link(event: CommentEvent) -> str:
    c = event.comment
    return f"[this comment]({c.url})" if c is not None and c.url.startswith("https://") else "this comment"


def _delete(ctx: Context, path: str) -> None:
    # A retried DELETE whose first try was applied finds the reaction gone: that is the goal.
    ctx.api.delete(path, missing_ok=True)


def set_reaction(ctx: Context, event: CommentEvent, want: str | None) -> None:
    """Make the bot's acknowledgement on the comment exactly `want` (or none). For an edit the
    current reactions are read and a stale one removed, so the reaction reflects the latest
    evaluation; a new comment has none of ours, and adding one twice is a no-op on GitHub."""
    c = event.comment
    sub = REACTION_PATHS.get(c.kind) if c is not None else None
    if sub is None:
        return
    path = f"{ctx.r}/{sub}/{c.id}/reactions"
    have: set[str] = set()
    if event.action != "created":
        me = ctx.own_login.lower()
        for r in ctx.api.list(path):
            if str((r.get("user") or {}).get("login", "")).lower() != me or r.get("content") not in ACK_REACTIONS:
                continue
            if r.get("content") == want:
                have.add(want)
            else:
                _delete(ctx, f"{path}/{r['id']}")
    if want is not None and want not in have:
        # GitHub answers 200 with the existing reaction to a repeat, so a retry adds nothing.
        ctx.api.post_idempotent(path, {"content": want})
