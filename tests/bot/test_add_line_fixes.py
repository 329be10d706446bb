"""Suggested fixes that ADD a line (issue 13): a missing `USE_CHAT_TEMPLATE` in a recipe's
benchmark.env (Check 9) and a missing `pr-link` in an append-only changelog entry (Check 12).

The new line goes after the last line of the block that lacks the entry, indented and quoted
like its siblings; every existing byte stays (comments, order, quoting, line endings). On
GitHub it is a ```suggestion on that last line holding the line itself and the new one
(GitHub replaces the commented line by the suggestion's lines); applying it so yields the file
`check --local --fix` writes, and the check passes on it.
"""
from __future__ import annotations

import copy
from pathlib import Path

import pytest

from bot.fixes import Fix, FixError, apply_fix, apply_suggestion, apply_to_tree, fixes_of, suggestion_comment, suggestion_line
from checks.engine import evaluate
from tests.builders import build_snapshot
from tests.checks.test_check_cases import load_case

CASES = Path(__file__).resolve().parents[1] / "cases"
CHANGELOG = "inferencex-e2e/perf-changelog.yaml"


def _case(name: str) -> dict:
    # Through the case runner's loader, so a case that extends a shared base resolves here too.
    return load_case(CASES / name)


def _row(case: dict):
    verdict = evaluate(build_snapshot(case["snapshot"]), only=[case["check"]])
    return verdict, next(r for r in verdict.rows if r.number == case["check"])


def _chat_case() -> dict:
    case = _case("check_09/fail_fixed_seq_no_chat_template.yaml")
    path = next(p for p in case["snapshot"]["head"] if p.endswith("agentic.yaml"))
    # Real-shaped detail: a comment on the last entry and one after the block.
    text = case["snapshot"]["head"][path]
    text = text.replace("    OSL: '1024'\n", "    OSL: '1024'   # output length\n  # the client reads env only\n")
    case["snapshot"]["head"][path] = text
    return case


def _pr_link_case() -> dict:
    case = _case("check_12/pass_add_concurrency.yaml")
    head = case["snapshot"]["head"]
    head[CHANGELOG] = head[CHANGELOG].replace("  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n", "")
    case["snapshot"]["repo"] = "SemiAnalysisAI/InferenceX"
    return case


def _apply_as_github(case: dict, fix: Fix) -> str:
    text = case["snapshot"]["head"][fix.path]
    marker, body = suggestion_comment(fix, text)
    assert body.startswith(marker + "\n") and "```suggestion\n" in body
    suggestion = body.split("```suggestion\n", 1)[1].rsplit("\n```", 1)[0]
    line = suggestion_line(text, fix)
    assert suggestion.split("\n")[0] == text.splitlines()[line - 1], "the commented line is kept as the first line"
    return apply_suggestion(text, line, suggestion)


@pytest.mark.parametrize("build,check,added", [
    (_chat_case, 9, "    USE_CHAT_TEMPLATE: 'true'"),
    (_pr_link_case, 12, "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/3700"),
])
def test_added_line_suggestion_applied_by_githubs_rules_makes_the_check_pass(build, check, added):
    case = build()
    verdict, row = _row(case)
    assert row.status.value == "FAIL", row.reason
    (fix,) = fixes_of(verdict)
    assert fix.op == "add" and fix.check == check
    text = case["snapshot"]["head"][fix.path]
    fixed = _apply_as_github(case, fix)
    assert fixed == apply_fix(text, fix)
    before, after = text.splitlines(keepends=True), fixed.splitlines(keepends=True)
    assert len(after) == len(before) + 1
    at = suggestion_line(text, fix)
    assert after[at] == added + "\n"
    assert after[:at] + after[at + 1:] == before, "every other line is byte-identical"
    patched = copy.deepcopy(case)
    patched["snapshot"]["head"][fix.path] = fixed
    _, again = _row(patched)
    assert again.status.value == "PASS", again.reason


def test_missing_description_fails_naming_the_entry_with_no_mechanical_fix():
    case = _case("check_12/pass_add_concurrency.yaml")
    head = case["snapshot"]["head"]
    head[CHANGELOG] = head[CHANGELOG].replace(
        '  description:\n    - "Add concurrency 32 to the existing TP2 curve"\n', "")
    verdict, row = _row(case)
    assert row.status.value == "FAIL" and "no `description`" in row.reason and f"{CHANGELOG}:7" in row.reason
    assert not fixes_of(verdict), "what the entry should say is not mechanical"


def test_local_fix_adds_the_line_in_the_working_tree(tmp_path):
    case = _chat_case()
    verdict, _ = _row(case)
    (fix,) = fixes_of(verdict)
    target = tmp_path / fix.path
    target.parent.mkdir(parents=True)
    text = case["snapshot"]["head"][fix.path].replace("\n", "\r\n")  # CRLF stays CRLF
    target.write_bytes(text.encode("utf-8"))
    assert apply_to_tree(tmp_path, [fix]) == [(fix, None)]
    out = target.read_bytes().decode("utf-8")
    assert "    USE_CHAT_TEMPLATE: 'true'\r\n" in out and out.count("\n") == out.count("\r\n") == text.count("\n") + 1
    # Running it again is refused: the entry is there now.
    assert apply_to_tree(tmp_path, [fix])[0][1] is not None


def test_quoting_follows_the_siblings_and_a_boolean_word_is_quoted():
    text = "benchmark:\n  env:\n    CONC: 4\n    MODEL: m   # model\n"
    fix = Fix(9, "r.yaml", 2, "USE_CHAT_TEMPLATE", "true", "", op="add", parent="env")
    assert apply_fix(text, fix) == text + '    USE_CHAT_TEMPLATE: "true"\n'
    dq = text.replace("MODEL: m", 'MODEL: "m"')
    assert apply_fix(dq, fix).endswith('    USE_CHAT_TEMPLATE: "true"\n')


def test_an_entry_whose_last_value_is_a_list_or_nested_block_gets_the_line_after_it():
    text = ("- config-keys:\n  - a\n  description:\n    - \"x\"\n  append-only: true\n  scenario-type:\n  - agentic-coding\n"
            "\n- config-keys: [b]\n")
    fix = Fix(12, "c.yaml", 1, "pr-link", "https://github.com/o/r/pull/9", "", op="add")
    out = apply_fix(text, fix)
    assert out.splitlines()[7] == "  pr-link: https://github.com/o/r/pull/9"
    assert out.replace("  pr-link: https://github.com/o/r/pull/9\n", "") == text


def test_no_fix_for_a_flow_mapping_a_present_key_or_a_moved_line():
    flow = "benchmark:\n  env: {CONC: '4'}\n"
    with pytest.raises(FixError):
        apply_fix(flow, Fix(9, "r.yaml", 2, "USE_CHAT_TEMPLATE", "true", "", op="add", parent="env"))
    present = "benchmark:\n  env:\n    USE_CHAT_TEMPLATE: 'false'\n"
    with pytest.raises(FixError):
        apply_fix(present, Fix(9, "r.yaml", 2, "USE_CHAT_TEMPLATE", "true", "", op="add", parent="env"))
    with pytest.raises(FixError):
        apply_fix(present, Fix(9, "r.yaml", 3, "USE_CHAT_TEMPLATE", "true", "", op="add", parent="env"))
    with pytest.raises(FixError):
        apply_fix("env: [unclosed\n", Fix(9, "r.yaml", 1, "X", "1", "", op="add", parent="env"))


class _Api:
    """The few calls publish_suggestions makes, recorded."""

    def __init__(self):
        self.posted: list[tuple[str, dict]] = []

    def login(self):
        return "infx-bot"

    def list(self, path):
        return []

    def post(self, path, body):
        self.posted.append((path, body))
        return {"id": 1}


def test_the_review_comment_goes_on_the_line_the_new_one_follows():
    from bot.publisher import Publisher

    case = _chat_case()
    snap = build_snapshot(case["snapshot"])
    verdict = evaluate(snap, only=[9])
    (fix,) = fixes_of(verdict)
    api = _Api()
    assert Publisher(api, snap.repo, snap.number).publish_suggestions(verdict, snap) == 1
    (path, body), = api.posted
    text = case["snapshot"]["head"][fix.path]
    anchor = suggestion_line(text, fix)
    assert anchor != fix.line and body["line"] == anchor and body["path"] == fix.path
    assert text.splitlines()[anchor - 1].strip().startswith("OSL:")
