"""Verdict rendering: spec 11.1 layout, 11.2 comment framing, escaping, limits and golden files."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from checks.engine import VerdictStatus, evaluate
from checks.render import (
    HEADERS,
    MARKER_RE,
    ROW_RE,
    render_comment,
    render_markdown,
    validate_comment,
    validate_verdict_markdown,
)
from checks.result import CheckResult, Evidence
from checks.text import COMMENT_MAX, STATUS_DESCRIPTION_MAX, escape_inline, status_description
from tests.builders import HEAD_SHA, build_snapshot, fake_checks, inferencex_config
from checks.registry import CHECK_NUMBERS, ADVISORY_NUMBERS

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
SIGNOFF = {"id": 4401, "author": "seungrokj", "association": "COLLABORATOR", "body": "As a PR reviewer and CODEOWNER"}
RECIPE = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom/mi355x-fp4-mtp/agentic.yaml"


def verdict_of(overrides=None, **snap):
    snap.setdefault("signoff", SIGNOFF)
    snap.setdefault("number", 3603)
    snap.setdefault("config", inferencex_config())  # its maintainers are the Check 14 escalation
    return evaluate(build_snapshot(**snap), checks=fake_checks(overrides))


def render_checked(verdict) -> str:
    md = render_markdown(verdict)
    assert validate_verdict_markdown(md) == []
    body = render_comment(verdict, verdict.signoff.key)
    assert validate_comment(body) == []
    return md


# --- golden files ------------------------------------------------------------------------------
def golden_pass():
    return verdict_of({
        0: CheckResult.passed("@seungrokj is a named owner of every changed path.", Evidence(path="inferencex-e2e/configs/amd-master.yaml", line=412)),
        1: CheckResult.passed("Run 37597985033 ran on in-PR commit d3ba89f3 and its agentic and eval jobs succeeded.", Evidence(run_id=37597985033)),
        3: "The PR affects only framework: atom (a vendor engine).",
        12: "The new changelog entry has no append-only: true.",
    })


def golden_warn():
    mermaid = "xychart-beta\n  title \"dsv41flash agentic mi355x atom\"\n  x-axis [9.5, 12, 20]\n  line [1200, 1500, 2100]"
    return verdict_of({
        3: "The PR affects only framework: atom (a vendor engine).",
        14: CheckResult.warned("Curve dsv41flash / agentic-coding / mi355x atom has 4/5 frontier points.",
                               Evidence(run_id=37597985033, artifact="results_bmk"), mermaid=mermaid),
        15: CheckResult.warned("The body says TP2 c64 = 4 but the recipe sets ATOM_PREFILL_DECODE_INTERVAL to 8.",
                               Evidence(path=RECIPE, line=118)),
    })


def golden_rejected():
    return verdict_of({
        1: CheckResult.failed("No passing sweep/eval on any commit in this PR; run the sweep or post /use <run_id>."),
        2: CheckResult.failed("Could not verify: eval artifact eval_results_all of run 37597985033 expired.",
                              Evidence(run_id=37597985033, artifact="eval_results_all", unavailable=True)),
        4: CheckResult.warned("No /use <run_id> command from an authorized user; post one to pin the run."),
        12: "The new changelog entry has no append-only: true.",
    }, current_head_sha="d" * 40)


@pytest.mark.golden
@pytest.mark.parametrize("name, build", [("pass", golden_pass), ("warn", golden_warn), ("rejected", golden_rejected)])
def test_golden(name, build):
    md = render_checked(build()) + "\n"
    path = GOLDEN / f"verdict_{name}.md"
    if UPDATE or not path.exists():
        path.parent.mkdir(exist_ok=True)
        path.write_text(md, encoding="utf-8")
        if not UPDATE:
            pytest.fail(f"golden file {path.name} was missing and has been written; re-run")
    assert md == path.read_text(encoding="utf-8")


# --- layout (spec 11.1) --------------------------------------------------------------------------
def test_pass_layout_exactly():
    md = render_checked(golden_pass())
    lines = md.split("\n")
    assert lines[0] == HEADERS[VerdictStatus.PASS]
    assert lines[1] == "" and lines[2] == "<details>" and lines[3] == "<summary>Passed and not applicable checks</summary>"
    assert lines[4] == "" and lines[-1] == "</details>" and lines[-2] == ""
    rows = [line for line in lines if ROW_RE.fullmatch(line)]
    assert [int(ROW_RE.fullmatch(r).group(2)) for r in rows] == sorted(CHECK_NUMBERS)
    # rows separated by exactly one blank line
    body = lines[5:-2]
    assert all(body[i] == "" for i in range(1, len(body), 2))
    assert "<details open" not in md


def test_rejected_mentions_author_with_blocking_summary_and_expands_fail_and_warn():
    v = golden_rejected()
    md = render_checked(v)
    lines = md.split("\n")
    assert lines[0] == "## ❌❌❌ **REJECTED** ❌❌❌"
    assert lines[2].startswith("@seungrokj: ") and "Check 1 (Sweep on in-PR commit) and Check 2 (Evals)" in lines[2]
    group = md.index("<details>")
    for n in (1, 2, 4):
        assert md.index(f"Check {n} (") < group
    for n in (0, 3, 12, 15):
        assert md.index(f"Check {n} (") > group
    assert md.count("Check 4 (Reuse command)") == 1
    assert "newer commit was not assessed" in md and "d" * 40 in md
    assert "@functionstackx" not in md  # Check 4 warnings never add mentions


def test_check_14_warn_adds_escalation_right_after_header():
    md = render_checked(golden_warn())
    lines = md.split("\n")
    assert lines[0] == "## ⚠️ **Verdict: WARN** ⚠️" and lines[1] == ""
    assert lines[2].startswith("@functionstackx @cquil11 @Oseltamivir @adibarra ")
    assert "does not grant or enforce a bypass" in lines[2]


def test_mermaid_details_nested_in_row_and_kept_outside_group():
    md = render_checked(golden_warn())
    assert md.index("```mermaid") < md.index("<summary>Passed and not applicable checks</summary>")
    assert "<summary>Check 14 (Pareto coverage) details</summary>" in md


def test_group_omitted_only_when_every_check_fails():
    v = verdict_of({n: CheckResult.failed(f"bad {n}") for n in sorted(CHECK_NUMBERS) if n not in ADVISORY_NUMBERS}
                   | {n: CheckResult.warned(f"meh {n}") for n in (4, 14, 15)})
    md = render_checked(v)
    assert "<details>" not in md.replace("<details>\n<summary>Check 14", "")


def test_evidence_links_point_at_the_assessed_sha():
    md = render_checked(golden_warn())
    assert f"[{RECIPE.replace('_', chr(92) + '_')}:118](https://github.com/SemiAnalysisAI/InferenceX/blob/{HEAD_SHA}/{RECIPE}#L118)" in md
    assert "(https://github.com/SemiAnalysisAI/InferenceX/actions/runs/37597985033)" in md


def test_comment_framing():
    v = golden_pass()
    body = render_comment(v, "issuecomment-4401")
    first, rest = body.split("\n", 1)
    assert MARKER_RE.fullmatch(first).group(1) == "issuecomment-4401"
    assert body.endswith(f"\n\nAssessed commit: `{HEAD_SHA}`.\n")
    assert rest.startswith(HEADERS[v.status])
    with pytest.raises(ValueError):
        render_comment(v, "issuecomment-012")


# --- escaping untrusted text ------------------------------------------------------------------
HOSTILE = [
    "<!-- codeowner-signoff-verify signoff=issuecomment-1 -->",
    "line one\n✅ Check 3 (Upstream recipe): PASS — forged row",
    "x\u2028✅ Check 3 (Upstream recipe): PASS — forged via U+2028",
    "a): PASS — b",
    "@everyone please look, cc @InferenceX/core",
    "[click](javascript:alert(1)) ![img](https://evil/x.png) <img src=x onerror=alert(1)>",
    "## ✅✅✅ **Verdict: PASS** ✅✅✅",
    "see #3603, SemiAnalysisAI/InferenceX#3387 and https://evil.example/x",
    "```\ncode fence\n```",
]


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_reason_cannot_forge_rows_links_mentions_or_markers(text):
    v = verdict_of({2: CheckResult.failed(f"claim: {text}", Evidence(path=f"docs/{text}.md", line=1, note=text))})
    md = render_checked(v)
    row = next(line for line in md.split("\n") if line.startswith("❌ Check 2 (Evals)"))
    assert ROW_RE.fullmatch(row).group(3) == "FAIL"
    rows = [line for line in md.split("\n") if ROW_RE.fullmatch(line.strip())]
    assert len(rows) == len(CHECK_NUMBERS)
    assert "<!--" not in md and "<img" not in md
    assert "@everyone" not in md and "@InferenceX" not in md
    assert re.search(r"(?<!\\)\]\((?:javascript|https?://evil)", md) is None  # no live link target
    assert not re.search(r"(?<!\\)\[click\]", md)
    assert re.search(r"#\d", md) is None  # no issue cross-references


def test_escape_inline_is_one_line_and_truncated():
    out = escape_inline("a\nb\r\nc\u2029d\x85e" + "z" * 1000, 50)
    assert "\n" not in out and "\r" not in out and len(out) <= 60 and out.endswith("…")


def test_long_reasons_are_truncated_and_comment_fits():
    huge = "word " * 20000
    v = verdict_of({n: CheckResult.failed(huge, *[Evidence(path=f"p{i}.yaml", line=i) for i in range(50)]) for n in sorted(CHECK_NUMBERS) if n not in ADVISORY_NUMBERS}
                   | {14: CheckResult.warned("few", mermaid=["xychart-beta\n" + "line [1]\n" * 5000] * 5)})
    body = render_comment(v, "issuecomment-1")
    assert len(body) <= COMMENT_MAX
    assert validate_comment(body) == []
    assert "and 44 more" in body


def test_status_description_limit():
    d = status_description("Sign-off verification rejected\n" + "x" * 500)
    assert len(d) == STATUS_DESCRIPTION_MAX and "\n" not in d


# --- the validator itself ----------------------------------------------------------------------
def test_validator_rejects_broken_verdicts():
    md = render_markdown(golden_rejected())
    assert validate_verdict_markdown(md) == []
    assert any("header" in e for e in validate_verdict_markdown(md.replace("❌❌❌ **REJECTED** ❌❌❌", "✅✅✅ **Verdict: PASS** ✅✅✅", 1)))
    assert any("duplicate" in e for e in validate_verdict_markdown(md + "\n\n✅ Check 0 (CODEOWNER): PASS — again"))
    assert any("does not match the row format" in e for e in validate_verdict_markdown(md + "\n✅ Check 16 (x) PASS"))
    assert any("emoji" in e for e in validate_verdict_markdown(md.replace("❌ Check 1 (", "✅ Check 1 (")))
    assert any("cannot FAIL" in e for e in validate_verdict_markdown(md.replace("⚠️ Check 4 (Reuse command): WARN", "❌ Check 4 (Reuse command): FAIL")))
    assert any("missing [12]" in e for e in validate_verdict_markdown(re.sub(r"➖ Check 12 .*", "", md)))
    assert any("first line" in e for e in validate_verdict_markdown("hello\n" + md))


def test_partial_verdict_renders_only_its_rows():
    v = evaluate(build_snapshot(signoff=SIGNOFF), only={0, 14}, checks=fake_checks())
    md = render_markdown(v)
    assert validate_verdict_markdown(md, expected={0, 14}) == []
    assert "Check 1 (" not in md


def test_safe_url_and_quote_path():
    from checks.text import quote_path, safe_url

    assert safe_url("javascript:alert(1)") is None and safe_url("/relative") is None
    assert safe_url("https://x.test/a b") is None
    assert safe_url("https://github.com/o/r/pull/1#issuecomment-2") == "https://github.com/o/r/pull/1#issuecomment-2"
    assert safe_url("https://x.test/a(b)[c]") == "https://x.test/a%28b%29%5Bc%5D"
    assert quote_path("dir/a b@c#d.yaml") == "dir/a%20b%40c%23d.yaml"


def test_evidence_with_unsafe_url_renders_as_plain_text():
    v = verdict_of({3: CheckResult.passed("linked", Evidence(url="javascript:alert(1)", note="recipe"))})
    md = render_checked(v)
    row = next(line for line in md.split("\n") if line.startswith("✅ Check 3"))
    assert "](" not in row and "javascript:" not in row and row.endswith("(javascript\u200d:alert(1), recipe)")
