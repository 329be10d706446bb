"""Whether a trace reached a change: the lines a PR changed in a shell file, against the lines of
it the head trace ran (`Trace.executed`).

Bash runs the same inputs the same way, so a point's traces at the base and at the head are the
same up to the first statement that differs between the trees. When the head trace ran no
changed line of a file and the file's statements outside the change are the same statements
(same kinds, same lines, same nesting), the base trace cannot have reached the change either:
whatever led the base into the changed lines led the head to the same place.

- A hunk's own head lines are reached when the head ran one of them (a new `elif` arm another
  model takes is never evaluated; one evaluated before the arm the point takes is).
- A hunk that removed or replaced base lines is also reached when the head ran the nearest code
  line before it or after it (blank lines, comments and lone `then`/`do`/`{`/`(` skipped): the
  base got into the removed lines from the statement before them, or the arm's test, and left
  them to the statement after them or the construct's end (`fi`, `done`, `esac`, `}` lines are
  recorded for every compound statement run). A hunk at the start or end of the file is reached
  when the head ran anything of the file.
- A change that moves statements into or out of a construct, opens a quote or a here-document
  that swallows later lines, or does not parse, fails `same_skeleton`: the caller compares both
  traces.
"""
from __future__ import annotations

import difflib
import functools
from collections import Counter
from dataclasses import dataclass
from typing import Iterable, Optional

# Lines that are no statement of their own: what the nearest-code scan skips.
_OPENERS = frozenset({"then", "do", "{", "(", "then {", ""})
# Syntax-tree nodes that make the skeleton: statements and the arms of if/case.
_SKELETON = frozenset({
    "command", "variable_assignment", "variable_assignments", "declaration_command", "unset_command",
    "test_command", "compound_statement", "do_group", "subshell", "list", "negated_command", "pipeline",
    "redirected_statement", "if_statement", "elif_clause", "else_clause", "case_statement", "case_item",
    "for_statement", "c_style_for_statement", "while_statement", "function_definition",
})


@dataclass(frozen=True)
class Hunk:
    """Head lines `first`..`last` (1-based; `last == first - 1` for a pure deletion, which sat
    between head lines first-1 and first) replace base lines (`removes`: there were some)."""

    first: int
    last: int
    removes: bool


def node_lines(node) -> tuple[int, int]:
    """A syntax node's first and last lines (1-based); a node that ends at the start of a line
    (an arm that runs up to the next `elif`, a here-document's end) ends on the line before."""
    first = node.start_point[0] + 1
    end_row, end_column = node.end_point
    last = end_row + 1
    if end_column == 0 and last > first:
        last -= 1
    return first, last


@functools.lru_cache(maxsize=16)
def _opcodes(base: str, head: str) -> tuple:
    """The line diff of two texts, once per pair (`hunks` and `same_skeleton` both read it)."""
    return tuple(difflib.SequenceMatcher(None, base.splitlines(), head.splitlines(), autojunk=False).get_opcodes())


def hunks(base: str, head: str) -> list[Hunk]:
    ops = _opcodes(base, head)
    return [Hunk(j1 + 1, j2, i2 > i1) for tag, i1, i2, j1, j2 in ops if tag != "equal"]


def _code(line: str) -> bool:
    text = line.strip()
    return not text.startswith("#") and text not in _OPENERS


def reached(hunk: Hunk, ran: Iterable[int], head_lines: list[str],
            defined: Iterable[tuple[int, int]] = ()) -> bool:
    """Whether the head trace, having run lines `ran` of the file and defined the functions
    spanning `defined`, can have reached the hunk (or the base, the lines it replaced).

    A definition counts by its first line inside the hunk (a changed header is run); beside a
    removal, execution goes on from a definition's last line and comes to its first line (the
    body in between is entered only by a call, which records the body's own lines)."""
    ran = set(ran)
    defined = set(defined)
    span = range(hunk.first, hunk.last + 1)
    if any(n in ran for n in span) or any(first in span for first, _ in defined):
        return True
    if not hunk.removes:
        return False
    before = next((n for n in range(hunk.first - 1, 0, -1) if _code(head_lines[n - 1])), None)
    after = next((n for n in range(hunk.last + 1, len(head_lines) + 1) if _code(head_lines[n - 1])), None)
    if before is None or after is None:
        return bool(ran or defined)
    return before in ran or after in ran or any(b == before or a == after for a, b in defined)


def _line_map(base: str, head: str) -> dict[int, int]:
    """Base line -> head line, for the lines the PR left as they were."""
    ops = _opcodes(base, head)
    out: dict[int, int] = {}
    for tag, i1, i2, j1, _ in ops:
        if tag == "equal":
            out.update((i1 + k + 1, j1 + k + 1) for k in range(i2 - i1))
    return out


def _skeleton(text: str, line_of: Optional[dict[int, int]]) -> Optional[Counter]:
    """The file's statements as (kind, first line, last line, nesting), their lines mapped by
    `line_of` (a statement starting or ending on a line it does not map is left out); None when
    the text does not parse."""
    from recipes.bash.walker import parse_bash

    tree, _ = parse_bash(text.encode("utf-8", "replace"))
    if tree.root_node.has_error:
        return None
    out: Counter = Counter()
    stack = [(tree.root_node, 0)]
    while stack:
        node, depth = stack.pop()
        inner = depth
        if node.type in _SKELETON:
            inner = depth + 1
            first, last = node_lines(node)
            if line_of is not None:
                first, last = line_of.get(first), line_of.get(last)
            if first is not None and last is not None:
                out[(node.type, first, last, depth)] += 1
        stack.extend((c, inner) for c in node.named_children)
    return out


def same_skeleton(base: str, head: str) -> bool:
    """Whether the statements outside the PR's hunks are the same statements at both trees."""
    line_of = _line_map(base, head)
    unchanged = set(line_of.values())
    b = _skeleton(base, line_of)
    h = _skeleton(head, None)
    if b is None or h is None:
        return False
    h = Counter({k: v for k, v in h.items() if k[1] in unchanged and k[2] in unchanged})
    return b == h
