"""Making untrusted text safe for a verdict comment, GitHub's length limits, and every list join and plural of a reason, in one place."""
from __future__ import annotations

import re
from typing import Iterable
from recipes.wording import LIST_MORE, join  # noqa: F401 (re-exported)

# GitHub rejects a commit-status description over 140 characters and an issue comment body
# over 65536 characters (REST API validation errors, not truncation).
STATUS_DESCRIPTION_MAX = 140
COMMENT_MAX = 65536
# Longest piece of user-derived text we let into one verdict row.
INLINE_MAX = 600
ELLIPSIS = "…"

# A zero-width joiner after "@" keeps the text readable but stops GitHub from notifying anyone.
_ZWJ = "\u200d"
_MENTION_RE = re.compile(r"@(?=[A-Za-z0-9_-])")
# "#123" and "owner/repo#123" would cross-link (and notify) other issues.
_ISSUE_REF_RE = re.compile(r"(?<!&)#(?=\d)")
# Characters that start Markdown structure (links, images, emphasis, code, HTML, tables).
_MD_SPECIAL = {
    "\\": "\\\\",
    "[": "\\[",
    "]": "\\]",
    "`": "\\`",
    "*": "\\*",
    "_": "\\_",
    "~": "\\~",
    "|": "\\|",
    "<": "&lt;",
    ">": "&gt;",
    "&": "&amp;",
}
_MD_SPECIAL_RE = re.compile("|".join(re.escape(c) for c in _MD_SPECIAL))
# The publisher's row regex is greedy up to the last "): <STATUS> — ", so untrusted text must
# never contain an em dash (it becomes an en dash) or it could re-parse a row's status.
_EM_DASH = "\u2014"
_EN_DASH = "\u2013"
# Bare URLs are autolinked by GitHub; breaking the scheme keeps them visible but inert.
_URL_SCHEME_RE = re.compile(r"\b(https?|ftp|javascript|data|mailto):", re.IGNORECASE)


def one_line(text: str) -> str:
    """Collapse every kind of line break and run of whitespace (incl. U+2028/U+2029, NEL)
    into one space, so user text can never start a line of its own (and forge a row)."""
    return " ".join(str(text).split())


def truncate(text: str, limit: int) -> str:
    """At most `limit` characters, ending in an ellipsis when shortened."""
    if limit <= 0:
        return ""
    if len(text) <= limit:
        return text
    return text[: max(limit - len(ELLIPSIS), 0)].rstrip() + ELLIPSIS


def escape_inline(text: object, limit: int = INLINE_MAX) -> str:
    """Untrusted text as one inert Markdown line: no HTML or `<!--` markers, no links or
    images, no @-mentions or issue cross-references, no line breaks; truncated to `limit`."""
    flat = truncate(one_line(str(text)), limit).replace(_EM_DASH, _EN_DASH)
    flat = _MD_SPECIAL_RE.sub(lambda m: _MD_SPECIAL[m.group(0)], flat)
    flat = _URL_SCHEME_RE.sub(lambda m: f"{m.group(1)}{_ZWJ}:", flat)
    flat = _MENTION_RE.sub("@" + _ZWJ, flat)
    return _ISSUE_REF_RE.sub("#" + _ZWJ, flat)


def escape_link_text(text: object, limit: int = 120) -> str:
    """Text shown inside `[...]` of a link we build ourselves."""
    return escape_inline(text, limit)


_URL_SAFE_RE = re.compile(r"[^A-Za-z0-9\-._~:/?#@!$&'*+,;=%]")


def safe_url(url: str) -> str | None:
    """An http(s) URL with characters that could end a Markdown link percent-encoded, or None
    for anything else (javascript:, data:, relative, or containing whitespace)."""
    url = str(url).strip()
    if not re.match(r"^https?://[^\s/]+", url):
        return None
    if any(c.isspace() for c in url):
        return None
    return _URL_SAFE_RE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode()), url)


_PATH_SAFE_RE = re.compile(r"[^A-Za-z0-9\-._~/]")


def quote_path(path: str) -> str:
    """A repository path as URL path segments: everything but unreserved characters and `/`
    percent-encoded (so a hostile file name cannot end the link or mention anyone)."""
    return _PATH_SAFE_RE.sub(lambda m: "".join(f"%{b:02X}" for b in m.group(0).encode()), path)


def status_description(text: str) -> str:
    """A commit-status description that GitHub accepts (one line, at most 140 characters)."""
    return truncate(one_line(text), STATUS_DESCRIPTION_MAX)


def cap_comment(text: str, notice: str = "\n\n(Output truncated to fit GitHub's comment size limit.)\n") -> str:
    """Hard cap for a comment body; callers should first try to shorten it meaningfully."""
    if len(text) <= COMMENT_MAX:
        return text
    return text[: COMMENT_MAX - len(notice)] + notice


def plural(n: int, one: str, many: str | None = None) -> str:
    """`one` for a count of 1, else `many` (default `one` + "s"): `plural(2, "is", "are")`."""
    return one if n == 1 else (many if many is not None else one + "s")


def count(n: int, one: str, many: str | None = None) -> str:
    """`1 file`, `3 files`."""
    return f"{n} {plural(n, one, many)}"


LIST_MAX = 3


def keys_text(keys: Iterable[object], limit: int = LIST_MAX) -> str:
    """`a, b, c and 2 more` for config keys in a reason."""
    return join(keys, None, limit=limit, unique=True)


def items_text(items: Iterable[object], limit: int = LIST_MAX) -> str:
    """`x; y; z; and 2 more` for the problems listed in one reason."""
    return join(items, None, sep="; ", limit=limit, unique=True)
