"""Markdown text helpers: what a reader would see as live text, sections by title, and links."""
from __future__ import annotations

import re
from dataclasses import dataclass

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_QUOTE = re.compile(r"^ {0,3}>")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+•]|\d{1,9}[.)])(?:[ \t]|$)")
# Lines that end a paragraph, so they cannot be a quote's lazy continuation (CommonMark 5.1).
_INTERRUPTS = re.compile(r"^ {0,3}(?:#{1,6}(?:[ \t]|$)|[-*+](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$)|`{3,}|~{3,}|(?:[-*_][ \t]*){3,}$|<)")
_COMMENT_OPEN = "<!--"
_COMMENT_CLOSE = "-->"
_BOLD_TITLE = re.compile(r"^ {0,3}(?:\*\*|__)(.+?)(?:\*\*|__)[ \t]*:?[ \t]*$")

# Markdown links and autolinks first, then bare URLs; the order keeps the closing
# parenthesis of `[t](url)` out of the URL.
_MD_LINK = re.compile(r"\[[^\]\n]*\]\(\s*<?(https?://[^\s)>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_AUTOLINK = re.compile(r"<(https?://[^\s>]+)>")
_BARE_URL = re.compile(r"https?://[^\s<>\"'`\]\[]+")
_TRAILING = ".,;:!?'\"*_"
# A GitHub pull request URL. One parser, so the snapshot builder fetches exactly the upstream
# PRs that Check 3 reads, and a dispatch's sign-off URL is judged the same way.
_GITHUB_PULL = re.compile(
    r"(?:https?://)?(?:www\.)?github\.com/([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+)/pull/(\d+)", re.IGNORECASE
)


@dataclass(frozen=True)
class Section:
    """A titled part of a document: `line` is the title's 1-based line, `text` what follows it."""

    title: str
    text: str
    line: int
    body_line: int
    end_line: int


def _drop_comments(lines: list[str]) -> list[str]:
    """Remove HTML comments (which may span lines); a fully commented line becomes empty."""
    out: list[str] = []
    in_comment = False
    for line in lines:
        kept = []
        rest = line
        while rest:
            if in_comment:
                end = rest.find(_COMMENT_CLOSE)
                if end < 0:
                    rest = ""
                    break
                rest = rest[end + len(_COMMENT_CLOSE):]
                in_comment = False
            else:
                start = rest.find(_COMMENT_OPEN)
                if start < 0:
                    kept.append(rest)
                    break
                kept.append(rest[:start])
                rest = rest[start + len(_COMMENT_OPEN):]
                in_comment = True
        out.append("".join(kept))
    return out


def _visibility(text: str) -> list[tuple[int, str, str]]:
    """Classify every line as "text", "code" or "quote", with comments removed."""
    raw = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    lines = _drop_comments(raw)
    out: list[tuple[int, str, str]] = []
    fence: str | None = None
    prev_kind = "blank"  # blank | text | list | list-text | code | code-blank | quote
    in_list = False  # indented lines after a blank inside a list continue the item, not code
    for i, line in enumerate(lines, start=1):
        if fence is not None:
            m = _FENCE.match(line)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
                fence = None
            out.append((i, line, "code"))
            continue
        if not line.strip():
            out.append((i, line, "text"))
            prev_kind = "blank" if prev_kind != "code" else "code-blank"
            continue
        m = _FENCE.match(line)
        if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
            fence = m.group(1)
            out.append((i, line, "code"))
            prev_kind = "blank"
            continue
        if _QUOTE.match(line):
            out.append((i, line, "quote"))
            prev_kind = "quote"
            continue
        if prev_kind == "quote" and not _INTERRUPTS.match(line):
            # GitHub renders a lazy continuation line inside the quote above it.
            out.append((i, line, "quote"))
            continue
        indented = line.startswith("    ") or line.startswith("\t")
        if indented and (prev_kind in ("code", "code-blank") or (prev_kind == "blank" and not in_list)):
            out.append((i, line, "code"))
            prev_kind = "code"
            continue
        if _LIST_ITEM.match(line):
            prev_kind = "list"
            in_list = True
        elif (line.startswith(" ") or line.startswith("\t")) and in_list:
            prev_kind = "list-text"
        else:
            if prev_kind == "blank":
                in_list = False  # an unindented paragraph after a blank line ends the list
            prev_kind = "text"
        out.append((i, line, "text"))
    return out


def classify_lines(text: str) -> list[tuple[int, str, str]]:
    """Every line as (1-based line, text with comments removed, kind), kind being
    "text", "code" or "quote"."""
    return _visibility(text)


def strip_quotes_and_code(text: str) -> list[tuple[int, str]]:
    """Lines a reader sees as live text: (1-based line, text) outside fenced and indented code
    blocks and `>` quotes (with their lazy continuation lines), HTML comments removed."""
    return [(i, line) for i, line, kind in _visibility(text) if kind == "text"]


def heading_title(line: str) -> tuple[int, str] | None:
    """(level, title) of an ATX heading, or of a whole-line bold title (level 7), else None."""
    m = _ATX.match(line)
    if m:
        return len(m.group(1)), (m.group(2) or "").strip()
    m = _BOLD_TITLE.match(line)
    if m:
        return 7, m.group(1).strip()
    return None


def find_section(text: str, title_regex: str) -> Section | None:
    """The first section whose title matches `title_regex` (case-insensitive search).

    A title is an ATX heading, a whole-line bold phrase, or a plain line that matches the
    regex and ends with a colon (how GitHub-rendered copies show `### Title:`). The section
    runs to the next heading of the same or a higher level (any heading for non-ATX titles),
    or the end. Headings inside code blocks and quotes are ignored.
    """
    pattern = re.compile(title_regex, re.IGNORECASE)
    visible = _visibility(text)
    raw = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    start: tuple[int, int, str] | None = None  # (index, level, title)
    for idx, (_, line, kind) in enumerate(visible):
        if kind != "text" or not line.strip():
            continue
        head = heading_title(line)
        if head and pattern.search(head[1]):
            start = (idx, head[0], head[1])
            break
        stripped = line.strip()
        if stripped.endswith(":") and pattern.search(stripped) and not _LIST_ITEM.match(line):
            start = (idx, 8, stripped.rstrip(":").strip())
            break
    if start is None:
        return None
    idx, level, title = start
    end = len(visible)
    for j in range(idx + 1, len(visible)):
        _, line, kind = visible[j]
        if kind != "text":
            continue
        head = heading_title(line)
        if head is None:
            continue
        if level <= 6 and head[0] <= level:
            end = j
            break
        if level > 6 and head[0] <= 6:
            end = j
            break
    body = raw[idx + 1:end]
    return Section(
        title=title,
        text="\n".join(body),
        line=idx + 1,
        body_line=idx + 2,
        end_line=end,
    )


def _clean_url(url: str) -> str:
    url = url.rstrip(_TRAILING)
    # A bare URL inside parentheses keeps its closing parenthesis unless it is balanced.
    while url.endswith(")") and url.count(")") > url.count("("):
        url = url[:-1].rstrip(_TRAILING)
    return url


def github_pull(url: str) -> tuple[str, int] | None:
    """(owner/name, number) of a GitHub pull request URL, or None."""
    m = _GITHUB_PULL.match(url.strip())
    return (m.group(1), int(m.group(2))) if m else None


def links(text: str) -> list[str]:
    """Every http(s) URL in the text (Markdown links, autolinks and bare URLs), in order, once."""
    found: list[tuple[int, str]] = []
    spans: list[tuple[int, int]] = []
    for rx in (_MD_LINK, _AUTOLINK):
        for m in rx.finditer(text):
            found.append((m.start(), _clean_url(m.group(1))))
            spans.append(m.span())
    for m in _BARE_URL.finditer(text):
        if any(a <= m.start() < b for a, b in spans):
            continue
        found.append((m.start(), _clean_url(m.group(0))))
    seen: set[str] = set()
    out: list[str] = []
    for _, url in sorted(found, key=lambda t: t[0]):
        if url and url not in seen:
            seen.add(url)
            out.append(url)
    return out
