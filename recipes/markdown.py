"""Markdown text helpers: what a reader would see as live text, sections by title, and links."""
from __future__ import annotations

import re
from dataclasses import dataclass
from html.parser import HTMLParser

from markdown_it import MarkdownIt

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
# No `[` in the link text: from each `[` of `[[[...` the text ran to the next `]` (quadratic).
_MD_LINK = re.compile(r"\[[^\[\]\n]*\]\(\s*<?(https?://[^\s)>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
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


class _HtmlState(HTMLParser):
    """The HTML elements open at a point of the document (raw HTML blocks and inline HTML share
    one stack, as the browser builds one tree), and which source lines of the HTML fed to it
    carry text, and inside what: "text" (rendered visibly), "quote" or "code"."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[tuple[str, int]] = []  # (tag, depth of the Markdown container it opened in)
        self.container = 0
        self.base_line = 0
        self.seen: dict[int, str] = {}

    def kind(self) -> str:
        tags = {t for t, _ in self.stack}
        if tags & _HTML_QUOTE_TAGS:
            return "quote"
        if tags & _HTML_CODE_TAGS:
            return "code"
        return "text"

    def feed_at(self, html: str, first_line: int) -> dict[int, str]:
        self.base_line, self.seen = first_line, {}
        self.lineno, self.offset = 1, 0
        self.feed(html)
        if self.rawdata:  # an unfinished construct ends with its block (never spills into the next)
            self.goahead(True)
            self.rawdata = ""
        return self.seen

    def handle_starttag(self, tag: str, attrs) -> None:
        if tag not in _VOID_TAGS:
            self.stack.append((tag, self.container))

    def handle_startendtag(self, tag: str, attrs) -> None:
        return None

    def handle_endtag(self, tag: str) -> None:
        for i in range(len(self.stack) - 1, -1, -1):
            if self.stack[i][0] == tag:
                del self.stack[i:]
                return

    def handle_data(self, data: str) -> None:
        if not data.strip():
            return
        line = self.base_line + self.getpos()[0] - 1
        kind = self.kind()
        for k, piece in enumerate(data.split("\n")):
            if piece.strip():
                prev = self.seen.get(line + k)
                # A line with any visible text is visible; otherwise it is what hides it.
                if prev != "text":
                    self.seen[line + k] = kind if prev is None or kind == "text" else prev

    def close_container(self, depth: int) -> None:
        """Elements opened inside a Markdown container end with it (the browser closes them)."""
        while self.stack and self.stack[-1][1] > depth:
            self.stack.pop()


_HTML_QUOTE_TAGS = frozenset({"blockquote"})
_HTML_CODE_TAGS = frozenset({"pre", "code", "xmp", "listing", "plaintext"})
_VOID_TAGS = frozenset({"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
                        "source", "track", "wbr"})
_PARSER = MarkdownIt("commonmark")


def _visibility(text: str) -> list[tuple[int, str, str]]:
    """Classify every line as "text", "code" or "quote", with comments removed, from the block
    structure GitHub renders (CommonMark, which GFM extends: its tables, task lists and
    strikethrough never change what is a quote or code): `>` quotes with their lazy lines and
    quotes nested in list items, fenced and indented code, and raw HTML (`<blockquote>`,
    `<pre>`, `<code>`, comments) both as blocks and inline."""
    norm = text.replace("\r\n", "\n").replace("\r", "\n")
    raw = norm.split("\n")
    lines = _drop_comments(raw)
    kinds = ["text"] * len(raw)
    html = _HtmlState()
    try:
        tokens = _PARSER.parse(norm)
    except RecursionError:  # absurd nesting: nothing can be shown to be live text
        return [(i, line, "code") for i, line in enumerate(lines, start=1)]

    def mark(start: int, end: int, kind: str) -> None:
        for n in range(start, min(end, len(kinds))):
            if kinds[n] == "text" or kind == "quote":
                kinds[n] = kind

    for tok in tokens:
        if tok.type == "blockquote_open":
            html.container += 1
            if tok.map:
                mark(tok.map[0], tok.map[1], "quote")
            continue
        if tok.type == "blockquote_close":
            html.container -= 1
            html.close_container(html.container)
            continue
        if tok.type == "list_item_open":
            html.container += 1
            continue
        if tok.type == "list_item_close":
            html.container -= 1
            html.close_container(html.container)
            continue
        if tok.type in ("fence", "code_block") and tok.map:
            mark(tok.map[0], tok.map[1], "code")
            continue
        if tok.type == "html_block" and tok.map:
            before = html.kind()
            seen = html.feed_at(tok.content, tok.map[0] + 1)
            for n in range(tok.map[0], min(tok.map[1], len(kinds))):
                kind = seen.get(n + 1)
                if kind is None:
                    kind = before if before != "text" else "text"
                if kind != "text":
                    mark(n, n + 1, kind)
            continue
        if tok.type == "inline" and tok.map:
            hidden = html.kind()
            if hidden != "text":
                mark(tok.map[0], tok.map[1], hidden)
            if any(c.type == "html_inline" for c in tok.children or ()):
                _inline(tok, html, mark)
    return [(i, line, kinds[i - 1]) for i, line in enumerate(lines, start=1)]


def _inline(tok, html: _HtmlState, mark) -> None:
    """Lines of one paragraph whose text sits only inside inline `<code>` / `<blockquote>`."""
    line = tok.map[0]
    per_line: dict[int, set[str]] = {}
    for child in tok.children or ():
        if child.type in ("softbreak", "hardbreak"):
            line += 1
        elif child.type == "html_inline":
            html.feed_at(child.content, line + 1)
        elif child.type in ("text", "code_inline") and child.content.strip():
            per_line.setdefault(line, set()).add(html.kind())
    for n, kinds in per_line.items():
        if "text" not in kinds:
            mark(n, n + 1, "quote" if "quote" in kinds else "code")


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
