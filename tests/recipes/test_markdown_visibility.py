"""What GitHub renders as live text (issue 12): quotes and code decided from the rendered block
structure, not line regexes. The structure is checked against GitHub's own renderer, cmark-gfm
(through `cmarkgfm`, when installed), on every document below."""
from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest

from recipes.markdown import classify_lines, strip_quotes_and_code

CMD = "/reuse-sweep-run 123"

# (document, 1-based lines that must NOT be live text)
HIDDEN = {
    "html blockquote": (f"hi\n<blockquote>\n{CMD}\n</blockquote>\nafter", {3}),
    "html blockquote with blank lines": (f"hi\n\n<blockquote>\n\n{CMD}\n\n</blockquote>\n\nafter", {5}),
    "unclosed html blockquote hides the rest": (f"<blockquote>\n\nx\n\n{CMD}", {3, 5}),
    "list item quote": (f"- > {CMD}\n- item", {1}),
    "ordered list item quote": (f"1. > {CMD}", {1}),
    "nested quote lazy line": (f"> > a\n{CMD}", {1, 2}),
    "html pre": (f"<pre>\n{CMD}\n</pre>\nx", {2}),
    "html pre with blank lines": (f"<pre>\n\n{CMD}\n\n</pre>\nx", {3}),
    "indented code after a heading": (f"## Title\n    {CMD}\n", {2}),
    "indented code in a list item": (f"- item\n\n        {CMD}\n", {3}),
    "html code block": (f"<code>\n{CMD}\n</code>", {2}),
    "inline html code in a paragraph": (f"text\n<code>\n{CMD}\n</code>\nmore", {3}),
    "fence in a list item": (f"- a\n\n  ```\n  {CMD}\n  ```\n", {4}),
    "html comment": (f"<!--\n{CMD}\n-->", set()),  # kept as an empty live line
    "tilde fence": (f"~~~\n{CMD}\n~~~", {2}),
}
VISIBLE = {
    "plain": (CMD, {1}),
    "after a closed html quote": (f"<blockquote>\nq\n</blockquote>\n\n{CMD}", {5}),
    "list continuation is text": (f"- item\n  {CMD}", {2}),
    "paragraph continuation with 4 spaces is text": (f"para\n    {CMD}", {2}),
    "details body is visible": (f"<details>\n\n{CMD}\n\n</details>", {3}),
    "after a quote, a list item interrupts": (f"> q\n- {CMD}", {2}),
}


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_hidden_lines_are_not_live(name):
    doc, hidden = HIDDEN[name]
    live = dict(strip_quotes_and_code(doc))
    assert all(n not in live or CMD not in live[n] for n in hidden), (name, classify_lines(doc))
    assert not any(CMD in text for text in live.values()), (name, classify_lines(doc))


@pytest.mark.parametrize("name", sorted(VISIBLE))
def test_visible_lines_stay_live(name):
    doc, shown = VISIBLE[name]
    live = dict(strip_quotes_and_code(doc))
    assert all(n in live and CMD.split()[0] in live[n] for n in shown), (name, classify_lines(doc))


def test_pathological_nesting_is_not_live_and_does_not_crash():
    doc = ">" * 5000 + f" {CMD}\n" + "- " * 3000 + CMD
    kinds = {kind for _, line, kind in classify_lines(doc) if CMD in line}
    assert "quote" in kinds or "code" in kinds


def test_a_65000_character_comment_is_classified_fast():
    import time

    doc = ("a line of ordinary comment text\n" * 2000) + "> quoted\n" * 100
    start = time.perf_counter()
    rows = classify_lines(doc)
    assert len(rows) == doc.count("\n") + 1
    assert time.perf_counter() - start < 1.0


# ----- the same structure as GitHub's renderer ---------------------------------------------------

class _Ranges(HTMLParser):
    """Source lines cmark-gfm puts inside <blockquote> / <pre> (from data-sourcepos)."""

    def __init__(self):
        super().__init__()
        self.quote: set[int] = set()
        self.code: set[int] = set()

    def handle_starttag(self, tag, attrs):
        pos = dict(attrs).get("data-sourcepos")
        if tag not in ("blockquote", "pre") or not pos:
            return
        m = re.match(r"(\d+):\d+-(\d+):(\d+)", pos)
        first, last = int(m.group(1)), int(m.group(2)) - (1 if m.group(3) == "0" else 0)
        (self.quote if tag == "blockquote" else self.code).update(range(first, last + 1))


MARKDOWN_ONLY = [
    "a\n> b\nlazy\n- c\n",
    "> a\n>\n> b\n\nc",
    "- > q\n- item\n  > nested\n\nend",
    "## h\n    code\n\ntext",
    "para\n    not code\n\n    code",
    "1. x\n\n       code in item\n\n2. y",
    "```\nf\n```\n~~~~\ng\n~~~~",
    "> ```\n> fenced in quote\n> ```\n",
    "- a\n\n  ```\n  b\n  ```\n- c",
    "> q\n# heading ends it\n",
    "> q\n---\n",
    "text\n> q\n    > not code, lazy?\n",
    "* a\n\n    b\n\n        c",
]


@pytest.mark.parametrize("doc", MARKDOWN_ONLY)
def test_quotes_and_code_match_cmark_gfm(doc):
    cmarkgfm = pytest.importorskip("cmarkgfm")
    from cmarkgfm.cmark import Options

    html = cmarkgfm.github_flavored_markdown_to_html(doc, options=Options.CMARK_OPT_SOURCEPOS)
    ranges = _Ranges()
    ranges.feed(html)
    ours = {n: kind for n, line, kind in classify_lines(doc) if line.strip()}
    theirs = {n: ("quote" if n in ranges.quote else "code" if n in ranges.code else "text") for n in ours}
    assert ours == theirs, html
