"""Checks 8, 9, 10, 11 and 13 on the bundled sandbox worlds give the rows their README expects."""
from __future__ import annotations

import pytest

from checks.engine import evaluate
from tests.builders import world_snapshot

MINE = {8, 9, 10, 11, 13}


@pytest.fixture(scope="module")
def seed_rows(tmp_path_factory):
    verdict = evaluate(world_snapshot("seed", tmp_path_factory.mktemp("seed")), only=MINE)
    return {r.number: r for r in verdict.rows}


@pytest.fixture(scope="module")
def rejected_rows(tmp_path_factory):
    verdict = evaluate(world_snapshot("rejected", tmp_path_factory.mktemp("rejected")), only=MINE)
    return {r.number: r for r in verdict.rows}


def test_seed_rows_all_pass(seed_rows):
    assert {n: r.status.value for n, r in seed_rows.items()} == {8: "PASS", 9: "PASS", 10: "PASS", 11: "PASS", 13: "PASS"}


def test_seed_check_8_exempts_atom_from_event_publication(seed_rows):
    reason = seed_rows[8].reason
    assert "publish_events_and_metrics is a TRT-LLM srtctl key that ATOM does not support" in reason
    assert "dsv41flash-fp4-mi355x-atom-agentic-dspark" in reason


def test_seed_check_9_is_chat_by_construction(seed_rows):
    assert "srt_agentic.sh" in seed_rows[9].reason


def test_seed_check_11_cites_golden_351_for_dspark_k5(seed_rows):
    row = seed_rows[11]
    assert "--spec-decode-acceptance-length 3.51" in row.reason
    assert "dsv41flash_dspark.yaml thinking_on K=5 = 3.51" in row.reason
    labels = [e.label() for e in row.evidence]
    assert any("golden_al_distribution/dsv41flash_dspark.yaml:" in label for label in labels)
    assert any("mi355x-fp4-mtp/agentic.yaml:" in label for label in labels)


def test_seed_check_13_reads_the_signoff_draft_evidence(seed_rows):
    row = seed_rows[13]
    assert "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE is not enabled" in row.reason
    assert "deepseek-ai/DeepSeek-V4.1-Flash" in row.reason


def test_rejected_rows(rejected_rows):
    assert {n: r.status.value for n, r in rejected_rows.items()} == {8: "FAIL", 9: "N/A", 10: "FAIL", 11: "N/A", 13: "N/A"}


def test_rejected_check_8_names_the_hf_overrides_line(rejected_rows):
    row = rejected_rows[8]
    assert 'hf-overrides={"num_experts_per_tok": 6}' in row.reason
    assert any(e.label().endswith("dsr1/vllm/mi355x-fp4/8k1k.yaml:34") for e in row.evidence)


def test_rejected_check_10_names_script_line_and_missing_waiver(rejected_rows):
    row = rejected_rows[10]
    # The trace's finding: the in-place edit at its line, with the chain that reached it (the
    # recipe, then its setup script), in the reason and in the evidence's note.
    assert "moe-topk-fix.sh:6 in-place edit" in row.reason, row.reason
    assert "8k1k.yaml:44 -> inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsr1/vllm/mi355x-fp4/moe-topk-fix.sh:6" \
        in row.reason, row.reason
    cited = [e for e in row.evidence if e.path and e.path.endswith("moe-topk-fix.sh") and e.line == 6]
    assert cited and cited[0].note and " -> " in cited[0].note, row.evidence
    assert "site-packages/vllm" in row.reason
    assert "no waiver inferencex-e2e/docs/waiver/3712.md" in row.reason
