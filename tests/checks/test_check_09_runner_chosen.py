"""Check 9 on a speculative multi-node point that names no recipe or launcher file (AMD disagg,
TileRT): the runner builds the script name at run time (`bash "benchmarks/${SUBDIR}/${SCRIPT_NAME}"`),
so the client command is unknown. That is "could not verify" naming the runner line, never a
FAIL claiming the client runs without the chat template."""
from __future__ import annotations

from checks.engine import evaluate
from tests.builders import build_snapshot

MASTER = """dsr1-fp8-mi355x-sglang-disagg-mtp:
  image: rocm/sgl-dev:v0.5.9
  model: deepseek-ai/DeepSeek-R1-0528
  model-prefix: dsr1
  runner: mi355x-disagg
  precision: fp8
  framework: sglang-disagg
  multinode: true
  disagg: true
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - spec-decoding: mtp
        conc-list: [64]
        prefill: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}
        decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}
"""
RUNNERS = "labels:\n  mi355x-disagg: [mi355x-amds_0]\n"
RUNNER = """#!/usr/bin/env bash
SCRIPT_NAME="${EXP_NAME%%_*}_${PRECISION}_mi355x_${FRAMEWORK}.sh"
BENCHMARK_SUBDIR="multi_node"
JOB_ID=$(bash "benchmarks/${BENCHMARK_SUBDIR}/${SCRIPT_NAME}")
"""


def _row(runner: str | None = RUNNER):
    head = {"configs/amd-master.yaml": MASTER, "configs/runners.yaml": RUNNERS}
    if runner is not None:
        head["runners/launch_mi355x-amds.sh"] = runner
    snap = build_snapshot({"base": {"configs/runners.yaml": RUNNERS}, "head": head})
    return evaluate(snap, only={9}).row(9)


def test_runner_chosen_script_is_could_not_verify_naming_the_runner_line():
    row = _row()
    assert row.status.value == "FAIL"
    assert row.reason.startswith("could not verify dsr1-fp8-mi355x-sglang-disagg-mtp")
    assert ("runners/launch_mi355x-amds.sh:4: could not interpret: runs /github/workspace/benchmarks/multi_node/"
            "dsr1_fp8_mi355x_sglang-disagg.sh, not a file in the repository") in row.reason, row.reason
    assert "without --use-chat-template" not in row.reason
    assert all(e.unavailable for e in row.evidence)


def test_no_runner_script_is_said_so():
    row = _row(runner=None)
    assert row.status.value == "FAIL" and "no runner script or launcher of the point to start from" in row.reason


SN_MASTER = """dsv4-fp4-mi355x-atom-mtp:
  image: rocm/atom:v1
  model: deepseek-ai/DeepSeek-V4-Pro
  model-prefix: dsv4
  runner: mi355x
  precision: fp4
  framework: atom
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - { tp: 8, ep: 1, spec-decoding: mtp, conc-list: [4] }
"""
LAUNCHER = "benchmarks/single_node/fixed_seq_len/dsv4_fp4_mi355x_atom_mtp.sh"
LAUNCHER_TEXT = """#!/usr/bin/env bash

source "$(dirname "$0")/{rel}benchmark_lib.sh"

python3 -m atom.entrypoints.openai_server --model "$MODEL" --method mtp --num-speculative-tokens 3 &
run_benchmark_serving --model "$MODEL" --port 8888 --dsv4
"""
LIB = """#!/usr/bin/env bash
run_benchmark_serving() {
    local use_chat_template=false
    local model="" port=""
    while [[ $# -gt 0 ]]; do
        case $1 in
            --model) model="$2"; shift 2 ;;
            --port) port="$2"; shift 2 ;;
            --dsv4)
                use_chat_template=true
                shift
                ;;
            *) shift ;;
        esac
    done
    local cmd=(python3 /workspace/utils/bench_serving/benchmark_serving.py --model "$model" --port "$port")
    if [[ "$use_chat_template" == true ]]; then
        cmd+=(--use-chat-template)
    fi
    "${cmd[@]}"
}
"""


def _sn_row(rel: str):
    head = {"configs/amd-master.yaml": SN_MASTER, LAUNCHER: LAUNCHER_TEXT.format(rel=rel),
            "benchmarks/benchmark_lib.sh": LIB}
    return evaluate(build_snapshot({"head": head}), only={9}).row(9)


def test_a_helper_sourced_from_a_path_not_in_the_repository_is_could_not_verify():
    # The launcher moved one folder down but kept `../benchmark_lib.sh`: the helper never loads.
    row = _sn_row("../")
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify dsv4-fp4-mi355x-atom-mtp")
    assert f"{LAUNCHER}:3: could not interpret: sources /github/workspace/benchmarks/single_node/benchmark_lib.sh, " \
        "not a file in the repository" in row.reason, row.reason
    assert "without --use-chat-template" not in row.reason


def test_the_same_launcher_with_the_right_path_passes_through_the_helper_flag():
    # `--dsv4` became the template in the helper's option handling: the interpreter ran it, and
    # the client it starts gets --use-chat-template.
    row = _sn_row("../../")
    assert row.status.value == "PASS", row.reason
    assert f"{LAUNCHER}:6 -> fn run_benchmark_serving -> benchmarks/benchmark_lib.sh:" in row.reason, row.reason


def test_a_quoted_case_subject_is_read_too():
    head = {"configs/amd-master.yaml": SN_MASTER, LAUNCHER: LAUNCHER_TEXT.format(rel="../../"),
            "benchmarks/benchmark_lib.sh": LIB.replace("case $1 in", 'case "$1" in')}
    row = evaluate(build_snapshot({"head": head}), only={9}).row(9)
    assert row.status.value == "PASS", row.reason
