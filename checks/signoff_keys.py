"""The sign-off key grammar (spec 11.2), the only place it is spelled: `issuecomment-<id>`,
`pullrequestreview-<id>` or `discussion_r<id>`, the anchor GitHub gives each comment kind."""
from __future__ import annotations

import re

PREFIX_BY_KIND = {"issue_comment": "issuecomment-", "review": "pullrequestreview-", "review_comment": "discussion_r"}
KIND_BY_PREFIX = {prefix: kind for kind, prefix in PREFIX_BY_KIND.items()}
_PREFIXES = "|".join(re.escape(p) for p in PREFIX_BY_KIND.values())
# A key: one of the prefixes and a positive id with no leading zero.
KEY_PATTERN = rf"(?:{_PREFIXES})[1-9][0-9]*"
KEY_RE = re.compile(rf"({_PREFIXES})([1-9][0-9]*)")
PREFIXES_TEXT = "issuecomment-, pullrequestreview- or discussion_r"


def signoff_key(kind: str, comment_id: int) -> str:
    """The key of a comment: `signoff_key("review", 7)` -> `pullrequestreview-7`."""
    return f"{PREFIX_BY_KIND[kind]}{comment_id}"


def parse_signoff_key(text: str) -> tuple[str, int] | None:
    """(comment kind, id) from a key or a comment URL (`...#issuecomment-1`); None otherwise."""
    m = KEY_RE.search(text or "")
    return (KIND_BY_PREFIX[m.group(1)], int(m.group(2))) if m else None


def is_signoff_key(text: str) -> bool:
    return KEY_RE.fullmatch(text or "") is not None
