"""Runs every case file under tests/cases/check_NN/*.yaml through the engine (format: tests/cases/README.md)."""
from __future__ import annotations

import copy
import re
from pathlib import Path

import pytest

from checks.engine import evaluate
from tests.builders import SNAPSHOT_KEYS, TREE_KEYS, build_snapshot, read_yaml

CASES = Path(__file__).resolve().parents[1] / "cases"
CASE_KEYS = {"description", "check", "extends", "snapshot", "expect"}
BASE_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")
EXPECT_KEYS = {"status", "reason_contains", "reason_excludes", "evidence_contains", "details"}
STATUSES = {"PASS", "FAIL", "WARN", "N/A"}


def discover() -> list:
    files = sorted(CASES.glob("check_[0-9][0-9]/*.yaml"))
    assert files, f"no case files under {CASES}"
    return [pytest.param(f, id=f"{f.parent.name}/{f.stem}") for f in files]


def merge_snapshot(base: dict, over: dict) -> dict:
    """`over` merged onto `base`, two snapshot dicts: trees (base, head, head_tree, target,
    target_changes) path by path, a null path deleting the file (in the overlays `head` and
    `target_changes` the null stays: it is the overlay's own "this file is deleted"); other
    mappings key by key; lists and scalars replace."""
    out = copy.deepcopy(base)
    for key, value in over.items():
        if key in TREE_KEYS and isinstance(value, dict) and isinstance(out.get(key), dict):
            for file, text in value.items():
                if text is None and key not in ("head", "target_changes"):
                    out[key].pop(file, None)
                else:
                    out[key][file] = copy.deepcopy(text)
        else:
            out[key] = _merge_value(out[key], value) if key in out else copy.deepcopy(value)
    return out


def _merge_value(base, over):
    if isinstance(base, dict) and isinstance(over, dict):
        return {**base, **{k: _merge_value(base[k], v) if k in base else copy.deepcopy(v) for k, v in over.items()}}
    return copy.deepcopy(over)


def resolve_bases(names, where: Path, bases: Path, chain: tuple[str, ...] = ()) -> dict:
    """The snapshot dict of `extends: names` (one name or a list, merged left to right), read
    from `bases`/NAME.yaml; each base may extend others. `where` is the file asking, for errors."""
    names = [names] if isinstance(names, str) else names
    assert isinstance(names, list) and names and all(isinstance(n, str) for n in names), (
        f"{where}: `extends` is a base name or a non-empty list of names, got {names!r}"
    )
    out: dict = {}
    for name in names:
        assert BASE_NAME.fullmatch(name), f"{where}: base name {name!r} is not a plain file stem"
        assert name not in chain, f"{where}: `extends` cycle: {' -> '.join([*chain, name])}"
        file = bases / f"{name}.yaml"
        assert file.is_file(), f"{where}: unknown base {name!r} (no {file})"
        out = merge_snapshot(out, load_base(file, bases, (*chain, name)))
    return out


def load_base(path: Path, bases: Path, chain: tuple[str, ...]) -> dict:
    data = read_yaml(path.read_text(encoding="utf-8"))
    assert isinstance(data, dict), f"{path}: a base is a snapshot mapping"
    unknown = set(data) - SNAPSHOT_KEYS - {"extends"}
    assert not unknown, f"{path}: unknown keys {sorted(unknown)} (a base is a build_snapshot dict, plus `extends`)"
    own = {k: v for k, v in data.items() if k != "extends"}
    return merge_snapshot(resolve_bases(data["extends"], path, bases, chain), own) if "extends" in data else own


def load_case(path: Path) -> dict:
    """The case file at `path`, checked, with `snapshot` resolved over the bases it extends
    (tests/cases/_bases beside its check directory)."""
    case = read_yaml(path.read_text(encoding="utf-8"))
    assert isinstance(case, dict), f"{path}: a case file is a mapping"
    assert set(case) <= CASE_KEYS and {"description", "check", "expect"} <= set(case), (
        f"{path}: keys must be {sorted(CASE_KEYS)} (extends and snapshot optional), got {sorted(case)}"
    )
    snapshot = case.get("snapshot") or {}
    assert isinstance(snapshot, dict), f"{path}: snapshot is a mapping"
    unknown = set(snapshot) - SNAPSHOT_KEYS
    assert not unknown, f"{path}: unknown snapshot keys {sorted(unknown)} (see tests/builders.py)"
    if "extends" in case:
        case["snapshot"] = merge_snapshot(resolve_bases(case["extends"], path, path.parent.parent / "_bases"), snapshot)
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
