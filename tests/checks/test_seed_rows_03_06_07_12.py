"""The seed and rejected sandbox worlds, and the real InferenceX snapshot, give the expected rows for Checks 3, 6, 7 and 12."""
from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from checks.engine import evaluate
from tests.builders import build_snapshot, world_snapshot

MINE = {3, 6, 7, 12}
REVIEW_DATE = date(2026, 11, 29)  # ghsim/worlds/README.md: after the dsv4 8k1k last day


@pytest.fixture(scope="module")
def seed_rows(tmp_path_factory):
    snap = world_snapshot("seed", tmp_path_factory.mktemp("seed"), review_date=REVIEW_DATE)
    verdict = evaluate(snap, only=MINE)
    return {n: verdict.row(n) for n in MINE}


@pytest.fixture(scope="module")
def rejected_rows(tmp_path_factory):
    snap = world_snapshot("rejected", tmp_path_factory.mktemp("rejected"), review_date=REVIEW_DATE)
    verdict = evaluate(snap, only=MINE)
    return {n: verdict.row(n) for n in MINE}


def test_seed_check_3_is_not_applicable_to_an_atom_only_pr(seed_rows):
    row = seed_rows[3]
    assert row.status.value == "N/A"
    assert row.reason == (
        "The PR affects only framework: atom (ATOM vendor engine). No vLLM/SGLang production serving "
        "configuration is added or changed."
    )


def test_seed_check_6_passes_with_both_open_source_entries_named(seed_rows):
    row = seed_rows[6]
    assert row.status.value == "PASS"
    (entry,) = row.details["entries"].values()
    assert (entry["framework"], entry["image_rule"], entry["ordering"]) == ("atom", "n/a", "open-source-first")
    assert entry["open_source_entries"] == ["dsv41flash-fp4-mi355x-vllm-agentic-dspark",
                                            "dsv41flash-fp4-mi355x-sglang-agentic-dspark"]
    assert any("amd-master.yaml:" in e.label() and "vllm-agentic-dspark" in e.label() for e in row.evidence)


def test_seed_check_7_passes_on_the_target_models_md(seed_rows):
    row = seed_rows[7]
    assert row.status.value == "PASS"
    assert row.reason == "In MODELS.md, dsv41flash lists agentic coding as active and no deprecated scenarios."
    assert any(e.label().startswith("inferencex-e2e/docs/MODELS.md:") for e in row.evidence)


def test_seed_check_12_is_not_applicable(seed_rows):
    assert seed_rows[12].status.value == "N/A"
    assert seed_rows[12].reason == "The new changelog entry has no append-only: true."


def test_rejected_check_3_fails_on_the_unmerged_vllm_recipe_only(rejected_rows):
    row = rejected_rows[3]
    assert row.status.value == "FAIL"
    assert row.reason.startswith("vllm-project/recipes#131 is open and not merged")
    assert "sgl-project/sglang#24810 (merged) matches dsv4-fp4-mi355x-sglang" in row.reason


def test_rejected_check_6_fails_on_the_rocm_fork_image(rejected_rows):
    row = rejected_rows[6]
    assert row.status.value == "FAIL"
    assert "dsr1-fp4-mi355x-vllm (framework vllm, SKU mi355x) uses rocm/vllm-dev:nightly_20261112" in row.reason
    # The AITER sentence in the Additional detail section is not a new-architecture exception.
    assert "exception stated" not in row.reason


def test_rejected_check_7_fails_on_dsv4_8k1k(rejected_rows):
    row = rejected_rows[7]
    assert row.status.value == "FAIL"
    assert "dsv4-fp4-mi355x-sglang submits a deprecated combination" in row.reason
    assert "2026-09-08 was its last day" in row.reason
    assert "dsr1" not in row.reason


def test_rejected_check_12_is_not_applicable(rejected_rows):
    assert rejected_rows[12].status.value == "N/A"


# --- the real InferenceX data snapshot ------------------------------------------------------------

ATOM_KEY = "dsv41flash-fp4-mi355x-atom-agentic-dspark"
DATA_DIRS = ("inferencex-e2e/configs", "inferencex-e2e/docs", "inferencex-e2e/benchmarks")


def _tree(root: Path) -> dict[str, str]:
    out = {}
    for d in DATA_DIRS:
        for p in sorted((root / d).rglob("*")):
            if p.is_file():
                out[str(p.relative_to(root))] = p.read_text(encoding="utf-8")
    return out


def _without_entry(text: str, key: str) -> str:
    """The master-config text with one top-level entry (and its body) removed."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, l in enumerate(lines) if l.startswith(f"{key}:"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i][:1] not in (" ", "\n", "#", "")), len(lines))
    return "".join(lines[:start] + lines[end:])


def test_real_snapshot_restoring_the_atom_entry(inferencex_dir):
    # The seed PR on the real data: the base lacks the ATOM dsv41flash entry, the head has it.
    head = _tree(inferencex_dir)
    amd = "inferencex-e2e/configs/amd-master.yaml"
    base = dict(head, **{amd: _without_entry(head[amd], ATOM_KEY)})
    assert ATOM_KEY not in base[amd] and ATOM_KEY in head[amd]
    snap = build_snapshot({"number": 3603, "base": base, "head_tree": head, "review_date": "2026-10-08"})
    verdict = evaluate(snap, only=MINE)
    assert verdict.row(3).status.value == "N/A"
    row6 = verdict.row(6)
    assert row6.status.value == "PASS", row6.reason
    assert "dsv41flash-fp4-mi355x-vllm-agentic-dspark" in row6.reason
    assert "dsv41flash-fp4-mi355x-sglang-agentic-dspark" in row6.reason
    row7 = verdict.row(7)
    assert row7.status.value == "PASS", row7.reason
    assert "dsv41flash lists agentic coding as active" in row7.reason
    assert verdict.row(12).status.value == "N/A"
