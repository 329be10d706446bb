"""The reuse slash commands (`/use`, `/reuse-sweep-run`): their grammar, help and who may use them.

One grammar for Check 4 and the bot's command handler (spec 9.3, STYLE 5): a command is a whole
line of live text (not inside a `>` quote or a code block), in any letter case, with optional
surrounding whitespace. Within one comment the last matching line wins; across comments the
newest (by `created_at`) comment from an authorized author wins, whichever command it used.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

from recipes.markdown import strip_quotes_and_code

from .snapshot import Comment

USE = "/use"
REUSE_SWEEP_RUN = "/reuse-sweep-run"
# Upstream's regex (spec 9.3), applied per live line; the command word ignores case (STYLE 5).
REUSE_COMMAND_RE = re.compile(
    r"^\s*(?:(/reuse-sweep-run)(?:[ \t]+(\d+))?|(/use)[ \t]+(\d+))\s*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class CommandHelp:
    """What the help text says about one command; generated help reads only this."""

    name: str
    usage: str
    description: str
    examples: tuple[str, ...]
    who: str


AUTHORIZED_WHO = "OWNER, MEMBER or COLLABORATOR of the repository (author_association)"
COMMANDS: tuple[CommandHelp, ...] = (
    CommandHelp(
        name=USE,
        usage="/use <run_id>",
        description="Reuse the results of sweep run <run_id> (a passing run on a commit of this PR) "
                    "instead of sweeping again; bare `/use` is not a command.",
        examples=("/use 37597985033",),
        who=AUTHORIZED_WHO,
    ),
    CommandHelp(
        name=REUSE_SWEEP_RUN,
        usage="/reuse-sweep-run [<run_id>]",
        description="Legacy spelling of /use; without a run id, the latest successful eligible run "
                    "of this PR is selected.",
        examples=("/reuse-sweep-run 37597985033", "/reuse-sweep-run"),
        who=AUTHORIZED_WHO,
    ),
)


@dataclass(frozen=True)
class ReuseCommand:
    """One parsed reuse command line."""

    command: str  # USE or REUSE_SWEEP_RUN, canonical lower case
    run_id: int | None  # None only for a bare /reuse-sweep-run
    line: int  # 1-based line in the comment body
    text: str  # the line as written, stripped

    @property
    def explicit(self) -> bool:
        return self.run_id is not None

    def __str__(self) -> str:
        return f"{self.command} {self.run_id}" if self.run_id is not None else self.command


def help_text() -> str:
    """Plain-text help for every reuse command, generated from COMMANDS."""
    blocks = []
    for c in COMMANDS:
        examples = "\n".join(f"    {e}" for e in c.examples)
        blocks.append(f"{c.usage}\n  {c.description}\n  Who: {c.who}\n  Examples:\n{examples}")
    return "\n\n".join(blocks)


def parse_reuse_command(body: str) -> ReuseCommand | None:
    """The command a comment body carries: its last matching live line, or None."""
    found = None
    for line_no, line in strip_quotes_and_code(body or ""):
        m = REUSE_COMMAND_RE.match(line)
        if not m:
            continue
        if m.group(1):
            run = int(m.group(2)) if m.group(2) else None
            found = ReuseCommand(REUSE_SWEEP_RUN, run, line_no, line.strip())
        else:
            found = ReuseCommand(USE, int(m.group(4)), line_no, line.strip())
    return found


def is_authorized(comment: Comment, authorized: Iterable[str]) -> bool:
    """Whether the comment's author association may issue reuse commands (bots never may)."""
    allowed = {a.upper() for a in authorized}
    return not comment.is_bot and (comment.association or "").upper() in allowed


def _oldest_first(comments: Iterable[Comment]) -> list[Comment]:
    def order(item: tuple[int, Comment]) -> tuple:
        i, c = item
        return (1, c.created_at, i) if c.created_at is not None else (0, 0, i)

    return [c for _, c in sorted(enumerate(comments), key=order)]


def find_reuse_command(
    comments: Iterable[Comment], authorized: Iterable[str]
) -> tuple[Comment, ReuseCommand] | None:
    """The winning command: from the newest authorized comment that carries one.
    Comments without `created_at` count as oldest; equal times keep the given order."""
    allowed = list(authorized)
    for comment in reversed(_oldest_first(comments)):
        if not is_authorized(comment, allowed):
            continue
        cmd = parse_reuse_command(comment.body)
        if cmd is not None:
            return comment, cmd
    return None


def unauthorized_commands(
    comments: Iterable[Comment], authorized: Iterable[str]
) -> list[tuple[Comment, ReuseCommand]]:
    """Commands from authors who may not issue them (for explaining a refusal)."""
    allowed = list(authorized)
    out = []
    for comment in comments:
        if is_authorized(comment, allowed):
            continue
        cmd = parse_reuse_command(comment.body)
        if cmd is not None:
            out.append((comment, cmd))
    return out
