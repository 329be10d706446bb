"""The verdict engine and the review context, with scripted fake checks."""
from __future__ import annotations

import logging

import pytest

from checks.context import ReviewContext
from checks.engine import VerdictStatus, evaluate, overall_status
from checks.result import CheckResult, Evidence, Status
from checks.snapshot import Unavailable
from tests.builders import HEAD_SHA, FakeCheck, agentic_entry, build_snapshot, fake_checks
from checks.registry import CHECK_NUMBERS


def test_all_pass_and_na_is_pass():
    v = evaluate(build_snapshot(), checks=fake_checks({3: "only ATOM is touched"}))
    assert v.status is VerdictStatus.PASS
    assert [r.number for r in v.rows] == sorted(CHECK_NUMBERS)
    assert v.row(3).status is Status.NA and v.row(3).reason == "only ATOM is touched"


def test_any_fail_rejects_even_with_warnings():
    v = evaluate(build_snapshot(), checks=fake_checks({2: CheckResult.failed("below bar"), 15: CheckResult.warned("claim")}))
    assert v.status is VerdictStatus.REJECTED
    assert [r.number for r in v.failed] == [2] and [r.number for r in v.warned] == [15]


def test_warn_without_fail_warns():
    v = evaluate(build_snapshot(), checks=fake_checks({4: CheckResult.warned("post /use")}))
    assert v.status is VerdictStatus.WARN


def test_applies_reason_skips_evaluate():
    fake = FakeCheck(7, na="no benchmark configs changed")
    v = evaluate(build_snapshot(), checks=fake_checks({7: fake}))
    assert fake.calls == 0 and v.row(7).status is Status.NA


def test_crashing_check_is_a_fail_row_and_others_still_run(caplog):
    crash = FakeCheck(5, raises=KeyError("items"))
    after = FakeCheck(6)
    with caplog.at_level(logging.ERROR, logger="checks.engine"):
        v = evaluate(build_snapshot(), checks=fake_checks({5: crash, 6: after}))
    row = v.row(5)
    assert row.status is Status.FAIL
    assert row.reason == "could not be evaluated: KeyError: 'items'"
    assert after.calls == 1 and v.row(6).status is Status.PASS
    assert any(r.exc_info and "check 5" in r.getMessage() for r in caplog.records)  # traceback logged


def test_crashing_advisory_check_warns():
    v = evaluate(build_snapshot(), checks=fake_checks({14: FakeCheck(14, raises=RuntimeError("boom"))}))
    assert v.row(14).status is Status.WARN and "RuntimeError: boom" in v.row(14).reason
    assert v.status is VerdictStatus.WARN


def test_non_result_return_is_a_fail_row():
    bad = FakeCheck(9)
    bad.result = "PASS"  # type: ignore[assignment]
    v = evaluate(build_snapshot(), checks=fake_checks({9: bad}))
    assert v.row(9).status is Status.FAIL and "TypeError" in v.row(9).reason


@pytest.mark.parametrize("number", [4, 14, 15])
def test_advisory_fail_becomes_warn(number, caplog):
    with caplog.at_level(logging.WARNING, logger="checks.engine"):
        v = evaluate(build_snapshot(), checks=fake_checks({number: CheckResult.failed("nope")}))
    assert v.row(number).status is Status.WARN and v.status is VerdictStatus.WARN
    assert "advisory" in caplog.text


@pytest.mark.parametrize("number", [0, 1, 13])
def test_blocking_warn_becomes_fail(number):
    v = evaluate(build_snapshot(), checks=fake_checks({number: CheckResult.warned("hmm")}))
    assert v.row(number).status is Status.FAIL and v.status is VerdictStatus.REJECTED


def test_retired_check_is_na_and_not_called():
    retired = FakeCheck(11, retired=True)
    v = evaluate(build_snapshot(), checks=fake_checks({11: retired}))
    assert retired.calls == 0 and v.row(11).status is Status.NA and "retired" in v.row(11).reason


def test_only_runs_selected_checks_and_marks_partial():
    fakes = fake_checks()
    v = evaluate(build_snapshot(), only={1, 2}, checks=fakes)
    assert [r.number for r in v.rows] == [1, 2] and v.partial
    assert v.to_json()["partial"] is True
    assert sum(f.calls for f in fakes) == 2
    full = evaluate(build_snapshot(), only=set(CHECK_NUMBERS), checks=fake_checks())
    assert not full.partial and "partial" not in full.to_json()


def test_only_with_unknown_number_is_an_error():
    with pytest.raises(ValueError, match="no check numbered 16"):
        evaluate(build_snapshot(), only={16}, checks=fake_checks())


def test_unimplemented_registry_checks_are_rows_never_missing():
    v = evaluate(build_snapshot())
    assert [r.number for r in v.rows] == sorted(CHECK_NUMBERS)
    assert all(r.reason for r in v.rows)


def test_json_contract_exact_shape():
    ev = [Evidence(path="a.yaml", line=3), Evidence(run_id=42, artifact="results_bmk"),
          Evidence(note="comments", unavailable=True)]
    snap = build_snapshot(number=3603, signoff={"id": 5, "author": "seungrokj", "body": "x"})
    v = evaluate(snap, checks=fake_checks({1: CheckResult.passed("ran", *ev)}))
    data = v.to_json()
    assert list(data) == ["verdict", "repo", "pr", "head_sha", "checks"]
    assert data["verdict"] == "PASS" and data["pr"] == 3603 and data["head_sha"] == HEAD_SHA
    assert data["checks"][1] == {
        "number": 1, "name": "Sweep on in-PR commit", "status": "PASS", "reason": "ran",
        "evidence": [
            {"path": "a.yaml", "line": 3, "url": None},
            {"path": None, "line": None, "url": None, "run_id": 42, "artifact": "results_bmk"},
            {"path": None, "line": None, "url": None, "note": "comments", "unavailable": True},
        ],
    }
    assert v.signoff.key == "issuecomment-5" and v.signoff.author == "seungrokj"


def test_head_moved_is_recorded():
    v = evaluate(build_snapshot(current_head_sha="9" * 40), checks=fake_checks())
    assert v.head_moved is not None and v.head_moved.current_head_sha == "9" * 40
    assert evaluate(build_snapshot(), checks=fake_checks()).head_moved is None


def test_overall_status_table():
    v = evaluate(build_snapshot(), checks=fake_checks())
    rows = list(v.rows)
    assert overall_status(rows) is VerdictStatus.PASS
    rows[4] = rows[4].model_copy(update={"status": Status.WARN})
    assert overall_status(rows) is VerdictStatus.WARN
    rows[0] = rows[0].model_copy(update={"status": Status.FAIL})
    assert overall_status(rows) is VerdictStatus.REJECTED


# --- ReviewContext ---------------------------------------------------------------------------
def test_context_changed_paths_include_both_rename_sides():
    snap = build_snapshot(files=[{"path": "b.yaml", "status": "renamed", "previous_path": "a.yaml"}, "c.md"])
    assert ReviewContext(snap).changed_paths == frozenset({"a.yaml", "b.yaml", "c.md"})
    unknown = build_snapshot(files={"unavailable": "GitHub returned 500"})
    assert isinstance(ReviewContext(unknown).changed_paths, Unavailable)


def test_context_config_from_target_tree_overrides_snapshot_config():
    yml = "policy:\n  pareto_min_frontier: 7\n"
    ctx = ReviewContext(build_snapshot(target={".github/infx-review.yml": yml}, head={".github/infx-review.yml": "policy: {pareto_min_frontier: 1}\n"}))
    assert ctx.config.policy.pareto_min_frontier == 7  # the PR cannot loosen its own policy
    ctx = ReviewContext(build_snapshot(config={"policy": {"pareto_min_frontier": 3}}))
    assert ctx.config.policy.pareto_min_frontier == 3  # no file: the snapshot's configuration
    bad = ReviewContext(build_snapshot(base={".github/infx-review.yml": "policy:\n  nonsense: 1\n"}))
    assert bad.config.policy.pareto_min_frontier == 5 and bad.config_findings[0].line == 2


def test_context_memo_computes_once():
    ctx = ReviewContext(build_snapshot())
    calls = []
    assert ctx.memo("run", lambda: calls.append(1) or 42) == 42
    assert ctx.memo("run", lambda: calls.append(1) or 43) == 42
    assert calls == [1]


def test_context_additional_detail_without_signoff_is_empty():
    ctx = ReviewContext(build_snapshot())
    assert ctx.signoff_doc is None and ctx.additional_detail == ""


def test_context_signoff_doc_uses_checklist_parser():
    body = "As a PR reviewer and CODEOWNER, I have reviewed this and have:\n- [x] item\n\n### Additional detail section:\n- recipe at https://x\n\nSigned: `bob`\n"
    ctx = ReviewContext(build_snapshot(signoff={"author": "bob", "body": body}))
    assert "recipe at" in ctx.additional_detail


# --- affected points (needs recipes.repository, written concurrently) --------------------------
MASTER = "inferencex-e2e/configs/amd-master.yaml"


def _entry(key: str, image: str, recipe: str) -> str:
    return agentic_entry(key, image=image, prefix="dsv41flash",
                         arm=f"tp: 2, ep: 1, spec-decoding: draft_model, conc-list: [1, 2], srt-recipe: {recipe}")


def test_context_affected_points():
    r1 = "benchmarks/single_node/srt-slurm-recipes/a/agentic.yaml"
    r2 = "benchmarks/single_node/srt-slurm-recipes/b/agentic.yaml"
    base_master = _entry("a-fp4-mi355x-atom", "rocm/atom:1", r1) + _entry("b-fp4-mi355x-atom", "rocm/atom:1", r2) + _entry("gone-fp4-mi355x-atom", "rocm/atom:1", r2)
    # Entry a changes image; b is untouched in the master config but its recipe changes; c is new.
    head_master = "# a comment shifting every line\n" + _entry("a-fp4-mi355x-atom", "rocm/atom:2", r1) + _entry("b-fp4-mi355x-atom", "rocm/atom:1", r2) + _entry("c-fp4-mi355x-atom", "rocm/atom:1", r1)
    snap = build_snapshot(
        base={MASTER: base_master, f"inferencex-e2e/{r1}": "base: {}\n", f"inferencex-e2e/{r2}": "base: {}\n"},
        head={MASTER: head_master, f"inferencex-e2e/{r2}": "base: {x: 1}\n"},
    )
    aff = ReviewContext(snap).affected
    assert aff.added_keys == ["c-fp4-mi355x-atom"]
    assert aff.removed_keys == ["gone-fp4-mi355x-atom"]
    assert aff.changed_keys == ["a-fp4-mi355x-atom", "c-fp4-mi355x-atom"]
    assert aff.config_keys == ["a-fp4-mi355x-atom", "b-fp4-mi355x-atom", "c-fp4-mi355x-atom"]
    why = {p.config_key: " ".join(p.reasons) for p in aff.points}
    assert "changed" in why["a-fp4-mi355x-atom"] and "added" in why["c-fp4-mi355x-atom"]
    assert r2 in why["b-fp4-mi355x-atom"]
    assert aff.unavailable is None


def test_context_nothing_affected_for_docs_only_change():
    master = _entry("a-fp4-mi355x-atom", "rocm/atom:1", "benchmarks/x.yaml")
    snap = build_snapshot(base={MASTER: master, "README.md": "a"}, head={"README.md": "b"})
    aff = ReviewContext(snap).affected
    assert aff.points == [] and aff.changed_keys == [] and aff.is_empty
