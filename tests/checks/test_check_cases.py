"""Runs every case file under tests/cases/check_NN/*.yaml through the engine (format: tests/cases/README.md)."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from checks.engine import evaluate
from tests.builders import build_snapshot

CASES = Path(__file__).resolve().parents[1] / "cases"
CASE_KEYS = {"description", "check", "snapshot", "expect"}
EXPECT_KEYS = {"status", "reason_contains", "reason_excludes", "evidence_contains", "details"}
STATUSES = {"PASS", "FAIL", "WARN", "N/A"}


def discover() -> list:
    files = sorted(CASES.glob("check_[0-9][0-9]/*.yaml"))
    assert files, f"no case files under {CASES}"
    return [pytest.param(f, id=f"{f.parent.name}/{f.stem}") for f in files]


def load_case(path: Path) -> dict:
    case = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(case, dict), f"{path}: a case file is a mapping"
    assert set(case) <= CASE_KEYS and {"description", "check", "expect"} <= set(case), (
        f"{path}: keys must be {sorted(CASE_KEYS)} (snapshot optional), got {sorted(case)}"
    )
    desc = case["description"]
    assert isinstance(desc, str) and desc.strip() and "\n" not in desc.strip(), f"{path}: description is one line"
    assert case["check"] == int(path.parent.name[len("check_"):]), f"{path}: `check` must match its directory"
    expect = case["expect"]
    assert isinstance(expect, dict) and set(expect) <= EXPECT_KEYS, f"{path}: expect keys are {sorted(EXPECT_KEYS)}"
    assert expect.get("status") in STATUSES, f"{path}: expect.status must be one of {sorted(STATUSES)}"
    return case


@pytest.mark.parametrize("path", discover())
def test_case(path: Path):
    case = load_case(path)
    number = case["check"]
    verdict = evaluate(build_snapshot(case.get("snapshot") or {}), only={number})
    row = verdict.row(number)
    expect = case["expect"]
    context = f"{path.parent.name}/{path.name} ({case['description']}): got {row.status.value} — {row.reason}"
    assert row.status.value == expect["status"], context
    for needle in expect.get("reason_contains", []):
        assert needle in row.reason, f"{context}\n  reason lacks {needle!r}"
    for needle in expect.get("reason_excludes", []):
        assert needle not in row.reason, f"{context}\n  reason contains {needle!r}"
    labels = [e.label() for e in row.evidence]
    for needle in expect.get("evidence_contains", []):
        assert any(needle in label for label in labels), f"{context}\n  no evidence item mentions {needle!r}: {labels}"
    problems = details_mismatches(expect.get("details", {}), row.details)
    assert problems == [], f"{context}\n  details differ: {problems}"


def details_mismatches(want, got, where: str = "details") -> list[str]:
    """Where the row's details differ from the case's `expect.details`: mappings are compared
    key by key (keys the case does not name are ignored), everything else by equality."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return [f"{where} is {got!r}, expected a mapping"]
        return [p for k, v in want.items() for p in details_mismatches(v, got.get(k), f"{where}.{k}")]
    return [] if want == got else [f"{where} is {got!r}, expected {want!r}"]


def test_runner_checks_status_reason_and_evidence(tmp_path, monkeypatch):
    # Guards the runner itself with a scripted check, independent of the real check modules.
    import checks.registry
    from checks.result import CheckResult, Evidence
    from tests.builders import FakeCheck, fake_checks

    fake = FakeCheck(7, result=CheckResult.failed("dsv4 8k1k is deprecated", Evidence(path="docs/MODELS.md", line=12)))
    monkeypatch.setattr(checks.registry, "CHECKS", tuple(fake_checks({7: fake})))
    case_dir = tmp_path / "check_07"
    case_dir.mkdir()
    good = case_dir / "good.yaml"
    good.write_text(
        "description: a deprecated scenario fails\ncheck: 7\nsnapshot: {number: 5}\n"
        "expect: {status: FAIL, reason_contains: [deprecated], evidence_contains: ['MODELS.md:12']}\n"
    )
    test_case(good)
    for bad_expect in ("{status: PASS}", "{status: FAIL, reason_contains: [active]}",
                       "{status: FAIL, reason_excludes: [dsv4]}", "{status: FAIL, evidence_contains: [nowhere]}"):
        bad = case_dir / "bad.yaml"
        bad.write_text(f"description: wrong expectation\ncheck: 7\nexpect: {bad_expect}\n")
        with pytest.raises(AssertionError):
            test_case(bad)
    wrong_dir = case_dir / "wrong.yaml"
    wrong_dir.write_text("description: x\ncheck: 8\nexpect: {status: FAIL}\n")
    with pytest.raises(AssertionError, match="must match its directory"):
        load_case(wrong_dir)
    typo = case_dir / "typo.yaml"
    typo.write_text("description: x\ncheck: 7\nexpected: {status: FAIL}\n")
    with pytest.raises(AssertionError, match="keys must be"):
        load_case(typo)
