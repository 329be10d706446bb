"""What the interpreter reads of a syntax node that does not depend on the state (which children
of a command are its words, the clauses of an `if`), read once per node: a launch runs the same
functions and loops again and again."""
from __future__ import annotations

from typing import Any, Callable

# what -> node -> what was read. A node is equal only to itself (its tree and place), and keeps
# its tree alive while it is a key, so no other node can take its place.
_PLANS: dict[str, dict[Any, Any]] = {}


MAX_PLANS = 16_384  # nodes kept per `what`


def table(what: str) -> dict[Any, Any]:
    """The plans kept for `what` (node -> what was read): the hottest callers look a node up
    there themselves (`kept.get(node)`) and call `plan` only when it is not there yet."""
    kept = _PLANS.get(what)
    if kept is None:
        kept = _PLANS[what] = {}
    return kept


def plan(what: str, node: Any, src: bytes, read: Callable[[Any, bytes], Any]) -> Any:
    """`read(node, src)` for a node of the text `src`, kept: it must read nothing but the two."""
    kept = _PLANS.get(what)
    if kept is None:
        kept = table(what)
    try:
        return kept[node]
    except KeyError:
        pass
    except TypeError:  # a node that does not hash (none of tree-sitter's): read each time
        return read(node, src)
    return keep(kept, node, read(node, src))


def keep(kept: dict[Any, Any], node: Any, value: Any) -> Any:
    """Keep `value` for `node` in a table (`table`), emptied first when it holds MAX_PLANS."""
    if len(kept) >= MAX_PLANS:
        kept.clear()
    kept[node] = value
    return value


def forget() -> None:
    """Drop every plan (their nodes keep their syntax trees alive): when a tree is dropped. The
    tables stay (their callers hold them), emptied."""
    for kept in _PLANS.values():
        kept.clear()
