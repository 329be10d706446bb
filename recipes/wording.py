"""Lists in prose: every reason's "a, b and c" is built here (checks.text re-exports it)."""
from __future__ import annotations

from typing import Iterable

LIST_MORE = "and {n} more"


def join(items: Iterable[object], conj: str | None = "and", *, sep: str = ", ", limit: int | None = None,
         unique: bool = False, more_sep: str | None = None) -> str:
    """`a`, `a and b`, `a, b and c` (`conj="or"`: `a, b or c`; `conj=None`: `a, b, c`). Over
    `limit` items: the first `limit`, then `and N more` (`a, b, c and 2 more`; with `sep="; "`:
    `x; y; z; and 2 more`, unless `more_sep` says what comes before `and`). `unique` drops
    repeats, keeping the first."""
    words = [str(i) for i in items]
    if unique:
        words = list(dict.fromkeys(words))
    if limit is not None and len(words) > limit:
        if more_sep is None:
            more_sep = " " if sep == ", " else sep
        return sep.join(words[:limit]) + more_sep + LIST_MORE.format(n=len(words) - limit)
    if conj is None or len(words) < 2:
        return sep.join(words)
    return sep.join(words[:-1]) + f" {conj} " + words[-1]
