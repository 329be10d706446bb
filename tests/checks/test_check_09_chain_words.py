"""Check 9 on an AMD disagg MTP point: the runner-chosen chain ends in bench.sh, whose client command
passes `$extra_flags`, set to `--use-chat-template` only on the branch where `IS_MTP` is true;
server_sglang.sh exports IS_MTP from DECODE_MTP_SIZE inside `if [ "$NODE_RANK" -eq 0 ]`, around the
eval of the benchmark command too; DECODE_MTP_SIZE is the master config's decode
`additional-settings` entry, which the multi-node workflow exports. Shaped like the real files
(#2146 era); before, all 16 such merged PRs were "could not verify"."""
from __future__ import annotations

from checks.engine import evaluate
from recipes.launch.path.launch_path import point_env
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
    local model=""
    local max_concurrency=""
    while [[ $# -gt 0 ]]; do
        case $1 in
            --model) model="$2"; shift 2 ;;
            --max-concurrency) max_concurrency="$2"; shift 2 ;;
            --use-chat-template) use_chat_template=true; shift ;;
            --dsv4) use_chat_template=true; shift ;;
            *) shift ;;
        esac
    done
    local cmd=(python3 /workspace/utils/bench_serving/benchmark_serving.py --model "$model" --max-concurrency "$max_concurrency")
    if [[ "$use_chat_template" == true ]]; then
        cmd+=(--use-chat-template)
    fi
    "${cmd[@]}"
}
"""


def _row(mtp_size: str | None = "1", before_eval: str = "", model: str = "deepseek-ai/DeepSeek-R1-0528",
         extra_arm: str = ""):
    settings = f", additional-settings: [DECODE_NODES=1, DECODE_MTP_SIZE={mtp_size}]" if mtp_size is not None else ""
    master = MASTER.replace(DECODE, DECODE[:-1] + settings + "}").replace("deepseek-ai/DeepSeek-R1-0528", model)
    master += extra_arm
    launcher = "#!/usr/bin/env bash\ncd \"$GITHUB_WORKSPACE/benchmarks/multi_node/amd_utils\" || exit 1\n" \
               "export CONTAINER_IMAGE=$IMAGE\nexport MODEL_NAME=${MODEL##*/}\nJOB_ID=$(bash ./submit.sh)\n"
    files = _files(**{"configs/amd-master.yaml": master, LAUNCHER: launcher, f"{U}/job.slurm": JOB,
                      f"{U}/server_sglang.sh": SGLANG.replace("{before_eval}", before_eval), f"{U}/bench.sh": BENCH,
                      "benchmarks/benchmark_lib.sh": LIB})
    snap = build_snapshot({"base": {"configs/runners.yaml": RUNNERS}, "head": files})
    return evaluate(snap, only={9}).row(9)


def test_the_branch_chosen_client_flag_of_an_mtp_point_passes():
    row = _row("1")
    assert row.status.value == "PASS", row.reason
    # The client as the trace has it: bench.sh's call, the helper, the command it runs.
    assert f"{U}/bench.sh:17 -> fn run_benchmark_serving -> benchmarks/benchmark_lib.sh:" in row.reason, row.reason
    # The evidence carries the whole chain, from the sweep's job to the helper's command.
    assert any((e.note or "").startswith("via sweep job:1 -> runners/launch_mi355x-amds.sh:13 -> ") and
               f"{U}/bench.sh:17 -> fn run_benchmark_serving" in e.note for e in row.evidence), row.evidence


def test_a_flag_the_helper_maps_to_the_template_counts_for_its_model():
    row = _row("1", model="deepseek-ai/DeepSeek-V4-Pro")
    assert row.status.value == "PASS", row.reason
    # The helper's option handling turned `--dsv4` into the template: the interpreter ran it.
    assert f"{U}/bench.sh:17 -> fn run_benchmark_serving -> benchmarks/benchmark_lib.sh:" in row.reason, row.reason


def test_a_draft_length_of_zero_runs_the_client_without_the_flag_and_the_row_names_that_line():
    # IS_MTP is false: `$extra_flags` is empty for this point. The trace holds every client the
    # chain runs, and none gets the template: a FAIL naming the client's line.
    row = _row("0")
    assert row.status.value == "FAIL" and not row.reason.startswith("could not verify"), row.reason
    assert f"{U}/bench.sh:17 -> fn run_benchmark_serving -> benchmarks/benchmark_lib.sh:" in row.reason, row.reason
    assert "without --use-chat-template" in row.reason


def test_without_the_draft_setting_the_default_is_taken_and_the_row_is_never_a_pass():
    # No DECODE_MTP_SIZE among the arm's settings: the job does not export one, so job.slurm's
    # default 0 is taken (recipes.launch.point.job_env), IS_MTP is false, the client runs plain.
    row = _row(None)
    assert row.status.value == "FAIL" and "without --use-chat-template" in row.reason, row.reason


def test_a_branch_variable_changed_inside_the_arm_does_not_change_what_the_arm_set():
    # IS_MTP was exported on the NODE_RANK 0 arm before NODE_RANK changes; the eval on that arm
    # still runs bench.sh with it, and the other arm runs no client: the template is used.
    row = _row("1", before_eval="    NODE_RANK=1\n")
    assert row.status.value == "PASS", row.reason


def test_a_flag_variable_an_undecided_branch_sets_is_could_not_verify():
    # IS_MTP set only on a branch the point's values do not decide: `$extra_flags` is unknown
    # at the client, so its template use is unknown; never a PASS.
    row = _row("1", before_eval='    [ "$SLURM_PROCID" = 0 ] && export IS_MTP=false\n')
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
    assert row.status.value == "FAIL" and "without --use-chat-template" in row.reason, row.reason
    assert _row("1", extra_arm=second.replace("DECODE_MTP_SIZE=0", "DECODE_MTP_SIZE=2")).status.value == "PASS"
