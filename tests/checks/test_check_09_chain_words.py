"""Check 9 on an AMD disagg MTP point: the runner-chosen chain ends in bench.sh, whose client command
passes `$extra_flags`, set to `--use-chat-template` only on the branch where `IS_MTP` is true;
server_sglang.sh exports IS_MTP from DECODE_MTP_SIZE inside `if [ "$NODE_RANK" -eq 0 ]`, around the
eval of the benchmark command too; DECODE_MTP_SIZE is the master config's decode
`additional-settings` entry, which the multi-node workflow exports. Shaped like the real files
(#2146 era); before, all 16 such merged PRs were "could not verify"."""
from __future__ import annotations

from checks.engine import evaluate
from checks.launch_path import point_env
from tests.builders import build_snapshot
from tests.checks.test_check_09_runner_chosen import MASTER, RUNNERS
from tests.checks.test_runner_launch import JOB as RL_JOB, LAUNCHER, U, _files

DECODE = "decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}"
# job.slurm of tests/checks/test_runner_launch.py, also passing the model, each node's rank and the
# draft length (with its default) to the container, as the real one does.
JOB = RL_JOB.replace('ENGINE="${ENGINE:-sglang-disagg}"\n',
                     'ENGINE="${ENGINE:-sglang-disagg}"\nDECODE_MTP_SIZE=${DECODE_MTP_SIZE:-0}\n').replace(
    "    -e WS_PATH=$WS_PATH \\\n",
    "    -e WS_PATH=$WS_PATH \\\n    -e MODEL_NAME=$MODEL_NAME \\\n    -e NODE_RANK=\\$SLURM_PROCID \\\n"
    "    -e DECODE_MTP_SIZE=$DECODE_MTP_SIZE \\\n")
SGLANG = """#!/bin/bash
NODE_RANK="${NODE_RANK:-0}"
DECODE_MTP_SIZE="${DECODE_MTP_SIZE:-0}"
python3 -m sglang.launch_server --model-path /models/DeepSeek-R1 --tp-size 8 --disaggregation-mode decode
if [ "$NODE_RANK" -eq 0 ]; then
    if [ "$DECODE_MTP_SIZE" -gt 0 ]; then
        export IS_MTP=true
    else
        export IS_MTP=false
    fi
    BENCH_CMD="bash $WS_PATH/bench.sh 1 1"
{before_eval}    eval "$BENCH_CMD"
fi
"""
BENCH = """#!/bin/bash
source "$(dirname "$0")/../../benchmark_lib.sh"
ENGINE="${ENGINE:-sglang-disagg}"
for max_concurrency in 64 128; do
    extra_flags=""
    if [[ "$ENGINE" == "vllm-disagg" ]]; then
        extra_flags="--trust-remote-code"
    else
        if [ "$IS_MTP" = "true" ]; then
            if [[ "$MODEL_NAME" == "DeepSeek-V4-Pro" ]]; then
                extra_flags="--dsv4"
            else
                extra_flags="--use-chat-template"
            fi
        fi
    fi
    run_benchmark_serving \\
        --model "$MODEL_PATH" \\
        --max-concurrency "$max_concurrency" \\
        $extra_flags
done
"""
LIB = """#!/usr/bin/env bash
run_benchmark_serving() {
    local use_chat_template=false
    while [[ $# -gt 0 ]]; do
        case $1 in
            --use-chat-template) use_chat_template=true; shift ;;
            --dsv4) use_chat_template=true; shift ;;
            *) shift ;;
        esac
    done
    python3 utils/bench_serving/benchmark_serving.py
}
"""


def _row(mtp_size: str | None = "1", before_eval: str = "", model: str = "deepseek-ai/DeepSeek-R1-0528",
         extra_arm: str = ""):
    settings = f", additional-settings: [DECODE_NODES=1, DECODE_MTP_SIZE={mtp_size}]" if mtp_size is not None else ""
    master = MASTER.replace(DECODE, DECODE[:-1] + settings + "}").replace("deepseek-ai/DeepSeek-R1-0528", model)
    master += extra_arm
    launcher = "#!/usr/bin/env bash\ncd \"$GITHUB_WORKSPACE/benchmarks/multi_node/amd_utils\" || exit 1\n" \
               "export MODEL_NAME=${MODEL##*/}\nJOB_ID=$(bash ./submit.sh)\n"
    files = _files(**{"configs/amd-master.yaml": master, LAUNCHER: launcher, f"{U}/job.slurm": JOB,
                      f"{U}/server_sglang.sh": SGLANG.replace("{before_eval}", before_eval), f"{U}/bench.sh": BENCH,
                      "benchmarks/benchmark_lib.sh": LIB})
    snap = build_snapshot({"base": {"configs/runners.yaml": RUNNERS}, "head": files})
    return evaluate(snap, only={9}).row(9)


def test_the_branch_chosen_client_flag_of_an_mtp_point_passes():
    row = _row("1")
    assert row.status.value == "PASS", row.reason
    assert f"pass --use-chat-template to the client ({U}/bench.sh:17)" in row.reason, row.reason
    assert "turns into" not in row.reason  # the flag itself, not one a helper maps onto it


def test_a_flag_the_helper_maps_to_the_template_counts_for_its_model():
    row = _row("1", model="deepseek-ai/DeepSeek-V4-Pro")
    assert row.status.value == "PASS", row.reason
    assert f"pass --dsv4 to the client ({U}/bench.sh:17), which benchmarks/benchmark_lib.sh:7 turns into" in row.reason


def test_a_draft_length_of_zero_runs_the_client_without_the_flag_and_the_row_names_that_line():
    # IS_MTP is false: `$extra_flags` is empty for this point. Still "could not verify", never a
    # PASS: another command of the chain could enable the template.
    row = _row("0")
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert (f"{U}/bench.sh:17 runs run_benchmark_serving without --use-chat-template for this point "
            '(--model $MODEL_PATH --max-concurrency $max_concurrency)') in row.reason, row.reason


def test_without_the_draft_setting_the_words_are_unknown_and_the_row_is_never_a_pass():
    # No DECODE_MTP_SIZE among the arm's settings: the runner's environment may still hold one,
    # so job.slurm's default is not taken and IS_MTP stays unknown.
    row = _row(None)
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert "a flag set on a branch of a client script is not decided" in row.reason, row.reason


def test_a_branch_variable_changed_before_the_use_leaves_it_undecided():
    row = _row("1", before_eval="    NODE_RANK=1\n")
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason


def test_the_workflow_exports_the_prefill_then_decode_settings_with_plain_values_only():
    class Point:
        spec_decoding, is_agentic, model_prefix, framework = "mtp", False, "dsr1", "sglang-disagg"
        workers = {"prefill": {"settings": {"PREFILL_NODES": "2", "X": "a"}},
                   "decode": {"settings": {"DECODE_MTP_SIZE": "3", "X": "b", "Y": "two words", "Z": "$HOME"}},
                   "worker": {"settings": {"W": "1"}}}

    env = point_env(Point())
    assert env["PREFILL_NODES"] == "2" and env["DECODE_MTP_SIZE"] == "3" and env["X"] == "b"
    assert "Y" not in env and "Z" not in env and "W" not in env


def test_points_sharing_a_walk_read_their_own_words():
    # Two arms of one entry walk one chain (nothing on it asks the draft length), but the second
    # never turns MTP on: its client runs without the template, whatever the first one passes.
    arm = "      - spec-decoding: mtp\n        conc-list: [64]\n"
    second = ("      - spec-decoding: mtp\n        conc-list: [128]\n"
              "        prefill: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}\n"
              "        decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true, additional-settings: [DECODE_MTP_SIZE=0]}\n")
    assert arm in MASTER
    row = _row("1", extra_arm=second)
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify dsr1-fp8-mi355x-sglang-disagg-mtp"), row.reason
    assert _row("1", extra_arm=second.replace("DECODE_MTP_SIZE=0", "DECODE_MTP_SIZE=2")).status.value == "PASS"
