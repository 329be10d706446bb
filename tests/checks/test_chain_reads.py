"""Check 11 on an AgentX MTP point of AMD's runner-chosen disagg chain (recipes.launch.path.chain_reads), shaped
like InferenceX's server_sglang.sh of August 2026 (#2643): the draft length reaches
`--speculative-num-steps` through a function's parameter (`build_server_config ...
"$DECODE_MTP_SIZE"`), and the simulated AL is picked by a `case` on the model and the draft
length. Before, the row was "could not verify: no draft length is set" on all five history
commits with this config; the knob's value was the case's last arm whatever the point's length."""
from __future__ import annotations

from checks.engine import evaluate
from tests.builders import build_snapshot
from tests.checks.test_runner_launch import RUNNER, SUBMIT, U
from tests.checks.test_runner_models_yaml import SERVER as MODELS_PROGRAM

MASTER = """dsv4-fp4-mi355x-sglang-disagg-agentic-mtp:
  image: lmsysorg/sglang-rocm:v0.5.17
  model: deepseek-ai/DeepSeek-V4-Pro
  model-prefix: dsv4
  runner: mi355x-disagg
  precision: fp4
  framework: sglang-disagg
  multinode: true
  disagg: true
  scenarios:
    agentic-coding:
    - dram-utilization: 0.80
      search-space:
      - spec-decoding: "mtp"
        conc-list: [ 4 ]
        prefill:
          num-worker: 1
          tp: 8
          ep: 1
          dp-attn: false
          additional-settings:
          - "PREFILL_NODES=1"
        decode:
          num-worker: 1
          tp: 8
          ep: 1
          dp-attn: false
          additional-settings:
          - "DECODE_NODES=1"
{k_setting}"""
RUNNERS = "labels:\n  mi355x-disagg: [mi355x-amds_0]\n"
RUNNER_SCRIPT = RUNNER.replace('if [[ "$IS_MULTINODE" == "true" ]]; then\n',
                               'if [[ "$IS_MULTINODE" == "true" ]]; then\n    export MODEL_NAME=${MODEL##*/}\n')
LAUNCHER = "benchmarks/multi_node/agentic/dsv4_fp4_mi355x_sglang-disagg.sh"
LAUNCHER_TEXT = """#!/usr/bin/env bash
export DECODE_MTP_SIZE="${DECODE_MTP_SIZE:-0}"
cd "$GITHUB_WORKSPACE/benchmarks/multi_node/amd_utils" || exit 1
export CONTAINER_IMAGE=$IMAGE
JOB_ID=$(bash ./submit.sh $PREFILL_NODES $DECODE_NODES)
"""
JOB = """#!/bin/bash
ENGINE="${ENGINE:-sglang-disagg}"
export DI_REPO_DIR=$(cd "$(pwd)/../../.." && pwd)
DOCKER_MOUNT_PATH="/workspace"
WS_PATH="${DOCKER_MOUNT_PATH}/benchmarks/multi_node/amd_utils"
srun --nodelist="$NODES" bash -lc "
docker run --rm \\
    -v ${DI_REPO_DIR}:${DOCKER_MOUNT_PATH} \\
    -e ENGINE=$ENGINE \\
    -e WS_PATH=$WS_PATH \\
    -e MODEL_NAME=$MODEL_NAME \\
    -e IS_AGENTIC=$IS_AGENTIC \\
    -e DECODE_MTP_SIZE=$DECODE_MTP_SIZE \\
    -e EVAL_ONLY=$EVAL_ONLY \\
    \\"$DOCKER_IMAGE_NAME\\" bash -lc '$WS_PATH/server.sh'
"
"""
SERVER = """#!/bin/bash
source "$WS_PATH/server_sglang.sh"
"""
MODELS = """DeepSeek-V4-Pro-AgentX:
  base_flags: "--trust-remote-code"
  mtp_flags: "--speculative-algorithm EAGLE --speculative-eagle-topk 1"
"""
# The models-file program of test_runner_models_yaml, printing the entry's MTP flags too.
PROGRAM = MODELS_PROGRAM.split("python3 -m sglang.launch_server")[0].replace(
    """print(f'MODEL_ENV=\\"{m.get(\\"env\\", \\"\\")}\\"')""",
    """print(f'MODEL_MTP_FLAGS=\\"{m.get(\\"mtp_flags\\", \\"\\")}\\"')""")
assert "MODEL_MTP_FLAGS" in PROGRAM
SGLANG = "#!/bin/bash\nDECODE_MTP_SIZE=\"${DECODE_MTP_SIZE:-0}\"\n" + PROGRAM.replace("#!/bin/bash\n", "") + r"""
build_server_config() {
    local mode="$1"
    local tp_size="$2"
    local decode_mtp_size="$3"
    local mtp_config=""
    if [ "$decode_mtp_size" -gt 0 ]; then
        mtp_config="${MODEL_MTP_FLAGS} --speculative-num-steps ${decode_mtp_size} --speculative-num-draft-tokens $((decode_mtp_size + 1))"
    fi
    local full_config="--tp-size ${tp_size} ${MODEL_BASE_FLAGS}"
    if [[ -n "$mtp_config" ]]; then
        full_config="$full_config $mtp_config"
    fi
    echo "$full_config"
}

PREFILL_SERVER_CONFIG=$(build_server_config "prefill" "8" "$DECODE_MTP_SIZE")
DECODE_SERVER_CONFIG=$(build_server_config "decode" "8" "{call_k}")

DECODE_SIM_ACC_ENV=""
if [[ "$DECODE_MTP_SIZE" -gt 0 ]] && [[ "${IS_AGENTIC:-0}" == "1" ]]; then
    if [[ "${EVAL_ONLY:-false}" == "true" ]]; then
        echo "[INFO] Eval mode: synthetic MTP disabled"
    else
        DSV4_GOLDEN_AL=""
        case "${MODEL_NAME}:${DECODE_MTP_SIZE}" in
            *DeepSeek-V4*:1) DSV4_GOLDEN_AL={al_1} ;;
            *DeepSeek-V4*:3) DSV4_GOLDEN_AL=2.49 ;;
        esac
        if [[ -n "$DSV4_GOLDEN_AL" ]]; then
            DECODE_SIM_ACC_ENV="SGLANG_SIMULATE_ACC_LEN=${DSV4_GOLDEN_AL} SGLANG_SIMULATE_ACC_METHOD=match-expected"
        fi
    fi
fi
DECODE_CMD="${DECODE_SIM_ACC_ENV} python3 -m sglang.launch_server --model-path /models/${MODEL_NAME} --disaggregation-mode decode ${DECODE_SERVER_CONFIG}"
bash -c "$DECODE_CMD"
"""
GOLDEN = "golden_al_distribution/dsv4_mtp.yaml"
GOLDEN_TEXT = "deepseek-v4-pro:\n  thinking_on:\n    1: 1.79\n    2: 2.27\n    3: 2.49\n"


def _row(k: int | None, *, al_1: str = "1.79", call_k: str = "$DECODE_MTP_SIZE", extra: str = "",
         sglang: str = SGLANG, job: str = JOB):
    setting = f'          - "DECODE_MTP_SIZE={k}"\n' if k is not None else ""
    head = {"configs/amd-master.yaml": MASTER.format(k_setting=setting), "configs/runners.yaml": RUNNERS,
            "runners/launch_mi355x-amds.sh": RUNNER_SCRIPT, LAUNCHER: LAUNCHER_TEXT, f"{U}/submit.sh": SUBMIT,
            f"{U}/job.slurm": job, f"{U}/server.sh": SERVER, f"{U}/models.yaml": MODELS,
            f"{U}/server_sglang.sh": sglang.replace("{al_1}", al_1).replace("{call_k}", call_k) + extra}
    snap = build_snapshot({"base": {"configs/runners.yaml": RUNNERS, GOLDEN: GOLDEN_TEXT}, "head": head})
    return evaluate(snap, only={11}).row(11)


def test_the_draft_length_a_function_parameter_carries_is_read_and_the_golden_al_passes():
    row = _row(3)
    assert row.status.value == "PASS", row.reason
    assert "SGLANG_SIMULATE_ACC_LEN=2.49" in row.reason and "K=3 = 2.49" in row.reason, row.reason
    assert f"{U}/server_sglang.sh" in row.reason, row.reason  # the file that sets it, not "None"
    # The line that starts the decode server (`bash -c "$DECODE_CMD"`), whose command line holds the flags.
    run_line = SGLANG.rstrip("\n").count("\n") + 1
    assert SGLANG.splitlines()[run_line - 1] == 'bash -c "$DECODE_CMD"'
    assert any(e.path == f"{U}/server_sglang.sh" and e.line == run_line for e in row.evidence), row.evidence


def test_the_case_arm_of_the_points_draft_length_is_the_value_judged():
    # The static reading substitutes the case's last arm (2.49) for every point; a K=1 point
    # runs the first arm.
    row = _row(1)
    assert row.status.value == "PASS", row.reason
    assert "SGLANG_SIMULATE_ACC_LEN=1.79" in row.reason and "K=1 = 1.79" in row.reason, row.reason


def test_a_wrong_arm_for_the_points_draft_length_fails_at_its_value():
    row = _row(1, al_1="2.00")
    assert row.status.value == "FAIL" and not row.reason.startswith("could not verify"), row.reason
    assert "2" in row.reason and "1.79" in row.reason, row.reason


def test_a_length_the_point_does_not_set_starts_servers_that_do_not_speculate():
    # DECODE_MTP_SIZE defaults to 0: the traced servers carry no speculative flag, so there is
    # no acceptance to pin (before the trace, the script reading found no length: could not verify).
    row = _row(None)
    assert row.status.value == "PASS", row.reason
    assert "runs without speculative decoding" in row.reason and f"{U}/server_sglang.sh:" in row.reason, row.reason


def test_a_call_with_a_word_the_bot_cannot_know_stays_could_not_verify():
    row = _row(3, call_k="$(cat /tmp/mtp)")
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason


def test_a_text_with_thousands_of_calls_is_read_up_to_a_bound_and_stays_unknown():
    from recipes.launch.path.chain_reads import MAX_READS, function_flag
    from recipes.launch.path.shell_scope import Scope
    from recipes.scripts import analyze_script

    body = 'f() {\n  local k="$1"\n  x="--speculative-num-steps ${k}"\n  echo "$x"\n}\n'
    text = body + "".join(f'A{i}=$(f "3")\n' for i in range(5000))
    scope = Scope("s.sh", analyze_script(text, "s.sh"), "/w", lambda n: None, lines=text.splitlines())
    reads = function_flag(scope, "--speculative-num-steps")
    # Read up to the bound (each call is a scope of its own), then one unknown for the rest.
    assert len(reads) == MAX_READS + 1 and reads[-1].value is None
    assert {r.value for r in reads[:MAX_READS]} == {"3"}


def test_a_literal_value_elsewhere_in_the_file_is_judged_as_written():
    # Only the setting the `KNOB=$VAR` assignment gave takes the point's arm; another one the
    # file writes as a literal keeps its value.
    extra = ('PREFILL_CMD="SGLANG_SIMULATE_ACC_LEN=2.00 python3 -m sglang.launch_server --model-path /models/x"\n'
             'bash -c "$PREFILL_CMD"\n')
    row = _row(3, extra=extra)
    assert row.status.value == "FAIL" and not row.reason.startswith("could not verify"), row.reason
    assert "SGLANG_SIMULATE_ACC_LEN=2.00" in row.reason, row.reason


def test_a_length_written_in_the_server_command_itself_is_read():
    literal = SGLANG.replace("${DECODE_SERVER_CONFIG}", "--speculative-num-steps 3 ${DECODE_SERVER_CONFIG}")
    literal = literal.replace("--speculative-num-steps ${decode_mtp_size}", "--speculative-eagle-topk 1")
    assert literal.count("--speculative-num-steps") == 1
    row = _row(3, extra="", sglang=literal)
    assert row.status.value == "PASS", row.reason
    assert "K=3 = 2.49" in row.reason, row.reason


def test_a_guard_inside_a_container_that_is_not_given_eval_only_does_not_guard():
    # server_sglang.sh tests `${EVAL_ONLY:-false}`, but a `docker run` that does not pass
    # EVAL_ONLY in leaves it unset there: the eval-only run's decode server gets the knob too.
    job = JOB.replace("    -e EVAL_ONLY=$EVAL_ONLY \\\n", "")
    assert job != JOB
    row = _row(3, job=job)
    assert row.status.value == "FAIL" and "without an EVAL_ONLY guard" in row.reason, row.reason
    assert f"{U}/server_sglang.sh" in row.reason and "job.slurm" in row.reason, row.reason
