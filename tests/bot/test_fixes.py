"""Suggested fixes: a finding with one mechanical YAML fix (Check 9's USE_CHAT_TEMPLATE, Check 11's
golden AL on a simulated-acceptance knob) carries it; the fixed line is rendered by ruamel.yaml's
round-trip dumper and spliced in, so every other byte stays; applying the suggestion as GitHub
does makes the check pass."""
from __future__ import annotations

import copy

import pytest

from bot.fixes import Fix, FixError, apply_fix, apply_suggestion, apply_to_tree, fixes_of, suggestion_comment
from checks.engine import evaluate
from tests.builders import build_snapshot
from tests.checks.test_check_cases import CASES, load_case

FIXABLE = {
    "check_09/fail_fixed_seq_chat_template_false.yaml": ("USE_CHAT_TEMPLATE", "'true'"),
    "check_11/fail_handwritten_al_differs.yaml": ("SGLANG_SIMULATE_ACC_LEN", "'3.51'"),
    "check_11/fail_trt_env_written_as_al.yaml": ("TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS", None),
}


def _row(case: dict):
    verdict = evaluate(build_snapshot(case["snapshot"]), only=[case["check"]])
    return verdict, next(r for r in verdict.rows if r.number == case["check"])


@pytest.mark.parametrize("name", sorted(FIXABLE))
def test_applying_the_suggestion_by_githubs_rules_makes_the_check_pass(name):
    case = load_case(CASES / name)
    verdict, row = _row(case)
    assert row.status.value == "FAIL"
    (fix,) = fixes_of(verdict)
    key, rendered = FIXABLE[name]
    head = case["snapshot"]["head"]
    text = head[fix.path]
    marker, body = suggestion_comment(fix, text)
    assert body.startswith(marker + "\n") and "```suggestion\n" in body
    suggestion = body.split("```suggestion\n", 1)[1].rsplit("\n```", 1)[0]
    fixed = apply_suggestion(text, fix.line, suggestion)
    assert fixed == apply_fix(text, fix)
    before, after = text.splitlines(), fixed.splitlines()
    assert len(before) == len(after)
    changed = [i + 1 for i, (a, b) in enumerate(zip(before, after)) if a != b]
    assert changed == [fix.line] and key in after[fix.line - 1]
    if rendered:
        assert after[fix.line - 1].endswith(f"{key}: {rendered}"), "the quoting style is kept"
    patched = copy.deepcopy(case)
    patched["snapshot"]["head"][fix.path] = fixed
    _, again = _row(patched)
    assert again.status.value == "PASS", again.reason


def test_comments_order_and_quoting_stay_byte_identical():
    text = ("# a recipe\nbenchmark:   # harness\n  env:\n    MODEL: \"x\"   # the model\n"
            "    USE_CHAT_TEMPLATE: 'false'  # keep this comment\n    OTHER: yes\n  list: [1,   2]\n")
    fix = Fix(9, "r.yaml", 5, "USE_CHAT_TEMPLATE", "true", "")
    out = apply_fix(text, fix)
    assert out == text.replace("USE_CHAT_TEMPLATE: 'false'", "USE_CHAT_TEMPLATE: 'true'")
    crlf = text.replace("\n", "\r\n")
    assert apply_fix(crlf, fix) == out.replace("\n", "\r\n")


def test_a_fix_that_no_longer_matches_its_line_is_refused():
    text = "env:\n  A: '1'\n  USE_CHAT_TEMPLATE: 'false'\n"
    with pytest.raises(FixError):
        apply_fix(text, Fix(9, "r.yaml", 2, "USE_CHAT_TEMPLATE", "true", ""))
    with pytest.raises(FixError):
        apply_fix("env: [unclosed\n", Fix(9, "r.yaml", 1, "env", "x", ""))


def test_local_fix_edits_the_working_tree(tmp_path):
    name = "check_09/fail_fixed_seq_chat_template_false.yaml"
    case = load_case(CASES / name)
    verdict, _ = _row(case)
    (fix,) = fixes_of(verdict)
    target = tmp_path / fix.path
    target.parent.mkdir(parents=True)
    target.write_text(case["snapshot"]["head"][fix.path], encoding="utf-8")
    missing = Fix(9, "nope.yaml", 1, "A", "b", "")
    results = apply_to_tree(tmp_path, [fix, missing])
    assert results[0] == (fix, None) and results[1][1] is not None
    assert "USE_CHAT_TEMPLATE: 'true'" in target.read_text(encoding="utf-8")
