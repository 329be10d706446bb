"""What the interpreter reads of a syntax node that does not depend on the state (which children
of a command are its words, the clauses of an `if`), read once per node: a launch runs the same
functions and loops again and again."""
from __future__ import annotations

from typing import Any, Callable

# (what, id of the source, first byte, last byte) -> (the source, what was read). The entry holds
# the source, so its id() cannot be another source's while it is kept (`is` checks it anyway).
_PLANS: dict[tuple[str, int, int, int], tuple[bytes, Any]] = {}


MAX_PLANS = 65_536


def forget() -> None:
    """Drop every plan (their nodes keep their syntax trees alive): when a tree is dropped."""
    _PLANS.clear()


def plan(what: str, src: bytes, node: Any, read: Callable[[Any], Any]) -> Any:
    """`read(node)` for the node of `src`, kept: it must not depend on anything but the node."""
    key = (what, id(src), node.start_byte, node.end_byte)
    hit = _PLANS.get(key)
    if hit is not None and hit[0] is src:
        return hit[1]
    got = read(node)
    if len(_PLANS) >= MAX_PLANS:
        _PLANS.clear()
    _PLANS[key] = (src, got)
    return got
