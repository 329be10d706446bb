"""An agentic launcher the PR adds under benchmarks/single_node/agentic/ is a config for Checks 9-11
even before a master-config entry names it (the point is read from the file name)."""
from __future__ import annotations

from checks.engine import evaluate
from tests.builders import build_snapshot

SCRIPT = "benchmarks/single_node/agentic/dsv4_fp4_mi355x_sglang_mtp.sh"
GOLDEN = """deepseek-v4-pro:
  thinking_on:
    3: 2.49
"""
LAUNCH = """#!/usr/bin/env bash
source "$(dirname "$0")/../../benchmark_lib.sh"
{pin}
python3 -m sglang.launch_server --model-path $MODEL --tp 8 --speculative-algorithm EAGLE --speculative-num-steps 3 &
{extra}
"""
PIN = """if [[ "${EVAL_ONLY:-false}" != "true" ]]; then
    export SGLANG_SIMULATE_ACC_LEN=2.49
fi"""


def _rows(pin: str = PIN, extra: str = "", checks=(9, 10, 11)):
    snap = build_snapshot({
        "base": {"configs/runners.yaml": "labels: {}\n", "golden_al_distribution/dsv4_mtp.yaml": GOLDEN,
                 "benchmarks/benchmark_lib.sh": "run_benchmark_serving() { :; }\n",
                 "configs/amd-master.yaml": "# AMD configs\n"},
        "head": {SCRIPT: LAUNCH.format(pin=pin, extra=extra)},
    })
    v = evaluate(snap, only=set(checks))
    return {n: v.row(n) for n in checks}


def test_an_added_agentic_script_without_a_master_entry_is_judged():
    rows = _rows()
    assert rows[9].status.value == "PASS" and "AgentX" in rows[9].reason, rows[9].reason
    assert rows[10].status.value == "PASS", rows[10].reason
    assert rows[11].status.value == "PASS", rows[11].reason
    assert "SGLANG_SIMULATE_ACC_LEN=2.49" in rows[11].reason


def test_its_unpinned_acceptance_fails_check_11():
    row = _rows(pin="")[11]
    assert row.status.value == "FAIL" and SCRIPT in row.reason and "SGLANG_SIMULATE_ACC_LEN" in row.reason


def test_its_engine_patch_fails_check_10():
    row = _rows(extra="sed -i 's/a/b/' /usr/local/lib/python3.12/site-packages/sglang/srt/server_args.py\n")[10]
    assert row.status.value == "FAIL" and f"{SCRIPT}:7" in row.reason


def test_a_non_agentic_folder_or_a_listed_script_adds_nothing():
    snap = build_snapshot({
        "base": {"configs/runners.yaml": "labels: {}\n", "configs/amd-master.yaml": "# AMD configs\n"},
        "head": {"benchmarks/single_node/fixed_seq_len/dsv4_fp4_mi355x_sglang_mtp.sh": LAUNCH.format(pin="", extra="")},
    })
    v = evaluate(snap, only={9, 10, 11})
    assert {v.row(n).status.value for n in (9, 10, 11)} == {"N/A"}
