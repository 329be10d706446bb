"""The documentation holds together: each check's page under docs/checks is what its docstring
generates (`make docs`), and every relative link of README.md and docs/ reaches a file of the
repository and, when it names a heading (`#anchor`), a heading of that file as GitHub slugs it."""
from __future__ import annotations

import re
from pathlib import Path

from markdown_it import MarkdownIt

from checks.docs import PAGES_DIR, main, page_name, stale_pages
from checks.registry import CHECKS

PROJECT = Path(__file__).resolve().parents[2]
LIVE = [c for c in CHECKS if not getattr(c, "retired", False)]
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)


def _documents() -> list[Path]:
    return [PROJECT / "README.md", *sorted((PROJECT / "docs").rglob("*.md"))]


def _tokens(text: str):
    md = MarkdownIt("commonmark").enable("table")
    for block in md.parse(text):
        yield from block.children or ()


def links(text: str) -> list[str]:
    """Link and image targets of a Markdown text (code spans and blocks hold none)."""
    out = []
    for tok in _tokens(text):
        if tok.type == "link_open":
            out.append(str(tok.attrs.get("href", "")))
        elif tok.type == "image":
            out.append(str(tok.attrs.get("src", "")))
    return out


def anchors(text: str) -> set[str]:
    """The heading anchors GitHub gives a Markdown file: lower case, punctuation other than `-`
    and `_` dropped, spaces to `-`, repeats numbered."""
    md = MarkdownIt("commonmark")
    tokens = md.parse(text)
    seen: dict[str, int] = {}
    out = set()
    for i, tok in enumerate(tokens):
        if tok.type != "heading_open":
            continue
        title = "".join(c.content for c in tokens[i + 1].children or () if c.type in ("text", "code_inline"))
        slug = re.sub(r"[^\w\- ]", "", title.strip().lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def broken_links(path: Path, text: str) -> list[str]:
    """Each relative link of `text` (the file at `path`) that reaches no file or no heading."""
    out = []
    for target in links(text):
        if not target or _SCHEME.match(target):
            continue
        file_part, _, anchor = target.partition("#")
        dest = (path.parent / file_part).resolve() if file_part else path
        if not dest.exists():
            out.append(f"{path.relative_to(PROJECT)}: {target}: no such file")
        elif PROJECT not in dest.parents and dest != PROJECT:
            out.append(f"{path.relative_to(PROJECT)}: {target}: outside the repository")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(
                dest.read_text(encoding="utf-8") if file_part else text):
            out.append(f"{path.relative_to(PROJECT)}: {target}: no heading #{anchor} there")
    return out


def test_the_check_pages_are_what_the_docstrings_generate():
    assert stale_pages(PROJECT / PAGES_DIR, LIVE) == [], "run `make docs`"


def test_a_stale_missing_or_orphan_page_is_named(tmp_path):
    assert main(["--out", str(tmp_path)]) == 0
    first, second = LIVE[0], LIVE[1]
    (tmp_path / page_name(first)).write_text("# edited by hand\n", encoding="utf-8")
    (tmp_path / page_name(second)).unlink()
    (tmp_path / "check_99.md").write_text("# gone\n", encoding="utf-8")
    assert stale_pages(tmp_path, LIVE) == [
        f"{tmp_path / page_name(second)}: missing",
        f"{tmp_path / page_name(first)}: out of date with its docstring",
        f"{tmp_path / 'check_99.md'}: no check has this page",
    ]
    assert main(["--out", str(tmp_path), "--check"]) == 1
    assert main(["--out", str(tmp_path)]) == 0 and main(["--out", str(tmp_path), "--check"]) == 0
    assert not (tmp_path / "check_99.md").exists()


def test_every_relative_link_in_the_readme_and_docs_resolves():
    problems = []
    for doc in _documents():
        problems += broken_links(doc, doc.read_text(encoding="utf-8"))
    assert problems == []


def test_a_broken_link_or_anchor_is_named():
    readme = PROJECT / "README.md"
    text = ("[ok](docs/install.md) [gone](docs/nope.md) [web](https://example.com/x) "
            "[bad anchor](docs/install.md#no-such-heading) `[code](not/a/link.md)`\n\n## A heading, here\n\n"
            "[self](#a-heading-here) [self bad](#elsewhere)\n")
    assert broken_links(readme, text) == [
        "README.md: docs/nope.md: no such file",
        "README.md: docs/install.md#no-such-heading: no heading #no-such-heading there",
        "README.md: #elsewhere: no heading #elsewhere there",
    ]


def test_a_summary_starts_a_sentence_but_keeps_a_name_spelled_as_it_is():
    from checks.docs import sentence, summary
    from checks.registry import check_by_number

    assert summary(check_by_number(0)).startswith("the sign-off") and sentence(check_by_number(0)).startswith("The sign-off")
    assert sentence(check_by_number(3)).startswith("vLLM/SGLang")
