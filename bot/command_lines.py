"""The command lines of a comment, as the routing step and the handlers read them: pure parsers
over the comment text. The routing step (`route-event`) runs for every comment of the
repository, so this module imports neither PyGithub nor the handlers."""
from __future__ import annotations

import re

from recipes.markdown import strip_quotes_and_code

# A line that starts like a reuse or help command (`/use`, `/reuse-sweep-run`, `/infx`).
ANY_COMMAND_RE = re.compile(r"^\s*/(?:use|reuse-sweep-run|infx)\b", re.IGNORECASE)
SWEEP_RE = re.compile(r"^\s*/sweep(?:[ \t]+(fail-fast))?\s*$", re.IGNORECASE)


def live_lines(body: str) -> list[str]:
    """The lines of a comment outside quotes and code (where a command can be written)."""
    return [line for _, line in strip_quotes_and_code(body or "")]


def mentions_command(body: str | None) -> bool:
    """Cheap relevance test: a live line that starts like a reuse or help command."""
    return bool(body) and any(ANY_COMMAND_RE.match(line) for line in live_lines(body or ""))


def parse_sweep_command(body: str) -> tuple[str, bool] | None:
    """(line, fail_fast) of the last live `/sweep` line, or None."""
    found = None
    for line in live_lines(body):
        m = SWEEP_RE.match(line)
        if m:
            found = (line.strip(), bool(m.group(1)))
    return found
