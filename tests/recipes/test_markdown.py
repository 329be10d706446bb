"""Markdown helpers: live text versus quotes/code/comments, sections, links."""
from __future__ import annotations

from recipes.markdown import find_section, links, strip_quotes_and_code

BODY = """intro line
> quoted /use 1
lazy continuation of the quote
- a list item after the quote

```bash
/use 2 inside a fence
```
<!-- hidden /use 3 -->
visible <!-- inline --> tail
<!-- multi
line comment -->

    indented code /use 4

- list
    indented continuation stays text
~~~~
tilde fence
~~~~
last /use 5
"""


def test_strip_quotes_and_code_keeps_only_live_text():
    live = dict(strip_quotes_and_code(BODY))
    texts = "\n".join(live.values())
    assert live[1] == "intro line"
    assert 2 not in live and 3 not in live  # the quote and its lazy continuation
    assert live[4] == "- a list item after the quote"
    assert "/use 2" not in texts and "/use 3" not in texts and "/use 4" not in texts
    assert live[10] == "visible  tail"
    assert "multi" not in texts and "line comment" not in texts
    assert live[17] == "    indented continuation stays text"
    assert "tilde fence" not in texts
    assert live[21] == "last /use 5"


def test_unclosed_fence_hides_the_rest():
    live = strip_quotes_and_code("a\n```\nb\nc\n")
    assert [t for _, t in live if t] == ["a"]


def test_find_section_atx_runs_to_next_same_level_heading():
    text = "# Top\n## Additional detail section:\n- one\n### sub\n- two\n## Next\n- three\n"
    sec = find_section(text, r"additional detail")
    assert sec is not None
    assert sec.line == 2 and sec.body_line == 3
    assert "- one" in sec.text and "- two" in sec.text and "three" not in sec.text


def test_find_section_plain_title_with_colon_and_ignores_quoted_heading():
    text = "> ## Additional detail section\n\nSome prose\nAdditional detail section:\n\n• link https://x.test/a\n"
    sec = find_section(text, r"^additional detail")
    assert sec is not None and sec.line == 4
    assert "https://x.test/a" in sec.text
    assert find_section("nothing here\n", r"additional detail") is None


def test_links_extracts_markdown_auto_and_bare_urls_once():
    text = (
        "See [the PR](https://github.com/o/r/pull/1), <https://example.com/a?b=1>, "
        "and https://example.com/path_(x). Also (https://github.com/o/r/issues/2). "
        "Again https://github.com/o/r/pull/1"
    )
    assert links(text) == [
        "https://github.com/o/r/pull/1",
        "https://example.com/a?b=1",
        "https://example.com/path_(x)",
        "https://github.com/o/r/issues/2",
    ]


def test_every_leaf_parser_survives_garbage():
    """Bad input is a finding, never an exception: a seeded shuffle of hostile fragments."""
    import random
    from datetime import date

    from recipes.changelog import diff_changelog, parse_changelog
    from recipes.checklist import match_checklist, parse_signoff, parse_template, unchecked_explained
    from recipes.codeowners import parse_codeowners
    from recipes.golden import load_golden
    from recipes.models_md import parse_models
    from recipes.source import MemorySource
    from recipes.thresholds import parse_thresholds
    from recipes.waivers import parse_waiver

    pieces = [
        "- ", "[x]", "|", "---", "```", "> ", "\n", "  ", "\t", "{", "}", "[", "]", ":", "`", "## ",
        "**", "(", ")", "config-keys", "As a PR reviewer and CODEOWNER", "Signed:", "Additional detail:",
        "2026-13-45", "Monday, February 30, 2026", " is the last day", "`p`", "Single-turn 8k1k",
        "@u", "*", "\\", "\0", "\r", "0.5", "<!--", "http://a.b/(c", "&a", "*a", "!!float x",
        "thinking_on", "3: 9", "logs/[a",
    ]
    rng = random.Random(7)
    for _ in range(300):
        s = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 40)))
        b = s.encode()
        parse_changelog(b, "p")
        diff_changelog(b[: len(b) // 2], b, "p")
        diff_changelog(b, b[: len(b) // 2], "p")
        parse_codeowners(s, "c").owners_of("a/b")
        parse_models(s, "m").is_deprecated("p", "8k1k", on=date(2026, 1, 1), precision="bf16")
        tpl, so = parse_template(s, "t"), parse_signoff(s)
        for m in match_checklist(tpl, so):
            unchecked_explained(m.template_item, s)
        parse_waiver(s, "w/1.md")
        parse_thresholds(b, "th").bar("p", "gsm8k")
        load_golden(MemorySource({"g/a.yaml": b}), "g").lookup("p", "mtp", "thinking_on", 3)
        strip_quotes_and_code(s)
        find_section(s, "additional")
        links(s)


def test_github_pull_is_one_parser_for_every_spelling():
    from recipes.markdown import github_pull

    assert github_pull("https://github.com/vllm-project/recipes/pull/120") == ("vllm-project/recipes", 120)
    assert github_pull("https://www.github.com/sgl-project/sglang/pull/7#issuecomment-1") == ("sgl-project/sglang", 7)
    assert github_pull("github.com/o/r/pull/3603#discussion_r9") == ("o/r", 3603)
    assert github_pull("https://github.com/o/r/issues/5") is None
    assert github_pull("https://example.com/github.com/o/r/pull/1") is None
