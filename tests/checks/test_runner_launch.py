"""The launch chain of a point whose runner picks its script at run time (recipes.launch.path.runner_launch),
on a small fixture shaped like the AMD disagg chain: runner -> benchmarks/multi_node/<name>.sh
(`cd` + `bash ./submit.sh`) -> `sbatch job.slurm` -> `srun bash -lc "docker run -v repo:/workspace
IMAGE bash -lc '/workspace/.../server.sh'"` -> server.sh sourcing server_<engine>.sh by ENGINE."""
from __future__ import annotations

from checks.engine import evaluate
from tests.builders import build_snapshot
from tests.checks.test_check_09_runner_chosen import MASTER, RUNNERS

RUNNER = """#!/usr/bin/env bash
if [[ "$IS_MULTINODE" == "true" ]]; then
    SCRIPT_NAME="${EXP_NAME%%_*}_${PRECISION}_mi355x_${FRAMEWORK}.sh"
    if [[ "$FRAMEWORK" == "sglang-disagg" ]] || [[ "$FRAMEWORK" == "vllm-disagg" ]]; then
        if [[ "${SCENARIO_SUBDIR}" == "agentic/" ]]; then
            BENCHMARK_SUBDIR="multi_node/agentic"
        else
            BENCHMARK_SUBDIR="multi_node"
        fi
    else
        BENCHMARK_SUBDIR="single_node/fixed_seq_len"
    fi
    JOB_ID=$(bash "benchmarks/${BENCHMARK_SUBDIR}/${SCRIPT_NAME}")
fi
"""
LAUNCHER = "benchmarks/multi_node/dsr1_fp8_mi355x_sglang-disagg.sh"
LAUNCHER_TEXT = """#!/usr/bin/env bash
cd "$GITHUB_WORKSPACE/benchmarks/multi_node/amd_utils" || exit 1
export CONTAINER_IMAGE=$IMAGE
JOB_ID=$(bash ./submit.sh $PREFILL_NODES $DECODE_NODES)
echo "$JOB_ID"
"""
SUBMIT = """#!/bin/bash
export ENGINE="${FRAMEWORK:-sglang}"
export DOCKER_IMAGE_NAME=$CONTAINER_IMAGE
sbatch_cmd=(
    sbatch
    --parsable
    -N "$NUM_NODES"
    --time "$TIME_LIMIT"
    "$(dirname "$0")/job.slurm"
)
JOB_ID=$("${sbatch_cmd[@]}")
echo "$JOB_ID"
"""
JOB = """#!/bin/bash
ENGINE="${ENGINE:-sglang-disagg}"
RUN_FILE="server.sh"
export DI_REPO_DIR=$(cd "$(pwd)/../../.." && pwd)
DOCKER_MOUNT_PATH="/workspace"
WS_PATH="${DOCKER_MOUNT_PATH}/benchmarks/multi_node/amd_utils"
export RUN_FILE_FULL="$WS_PATH/${RUN_FILE}"
srun --nodelist="$NODES" bash -lc "
docker run --rm \\
    -v ${DI_REPO_DIR}:${DOCKER_MOUNT_PATH} \\
    -e ENGINE=$ENGINE \\
    -e WS_PATH=$WS_PATH \\
    --name \\"bench\\" \\
    \\"$DOCKER_IMAGE_NAME\\" bash -lc '
        set -o pipefail
        '"$RUN_FILE_FULL"' 2>&1 | tee /run_logs/server.log
    '
"
"""
SERVER = """#!/bin/bash
ENGINE="${ENGINE:-sglang-disagg}"
if [[ "$ENGINE" == "vllm-disagg" ]]; then
    source "$WS_PATH/server_vllm.sh"
else
    source "$WS_PATH/server_sglang.sh"
fi
"""
SGLANG = """#!/bin/bash
{patch}
python3 -m sglang.launch_server --model-path /models/DeepSeek-R1 --tp-size 8 --disaggregation-mode decode
"""
VLLM = """#!/bin/bash
sed -i 's/a/b/' /usr/local/lib/python3.12/dist-packages/vllm/engine.py
vllm serve /models/DeepSeek-R1
"""
U = "benchmarks/multi_node/amd_utils"


def _files(**over: str) -> dict[str, str]:
    files = {"configs/amd-master.yaml": MASTER, "configs/runners.yaml": RUNNERS, "runners/launch_mi355x-amds.sh": RUNNER,
             LAUNCHER: LAUNCHER_TEXT, f"{U}/submit.sh": SUBMIT, f"{U}/job.slurm": JOB, f"{U}/server.sh": SERVER,
             f"{U}/server_sglang.sh": SGLANG.format(patch=""), f"{U}/server_vllm.sh": VLLM}
    files.update(over)
    return files


def _row(check: int, files: dict[str, str]):
    snap = build_snapshot({"base": {"configs/runners.yaml": RUNNERS}, "head": files})
    return evaluate(snap, only={check}).row(check)


def test_the_whole_chain_is_followed_and_the_engine_branch_not_taken_does_not_count():
    # server_vllm.sh patches vLLM, but ENGINE is sglang-disagg for this point (submit.sh
    # exports it from FRAMEWORK and the container gets it with -e): that branch never runs.
    row = _row(10, _files())
    assert row.status.value == "PASS", row.reason
    paths = {e.path for e in row.evidence}
    assert "server_vllm.sh" not in " ".join(p or "" for p in paths)
    assert "sglang.launch_server" in row.reason, row.reason  # the server command in the container was read


def test_a_patch_down_the_chain_fails():
    patch = "sed -i 's/x/y/' /sgl-workspace/sglang/python/sglang/srt/layers/moe.py"
    row = _row(10, _files(**{f"{U}/server_sglang.sh": SGLANG.format(patch=patch)}))
    assert row.status.value == "FAIL", row.reason
    assert not row.reason.startswith("could not verify"), row.reason
    assert f"{U}/server_sglang.sh:2" in row.reason


def test_a_hop_the_bot_cannot_follow_is_could_not_verify_naming_it():
    text = LAUNCHER_TEXT.replace("bash ./submit.sh", 'bash "$SUBMIT_DIR/submit.sh"')
    for check in (8, 10):
        row = _row(check, _files(**{LAUNCHER: text}))
        assert row.status.value == "FAIL", row.reason
        assert row.reason.startswith("could not verify dsr1-fp8-mi355x-sglang-disagg-mtp"), row.reason
        assert f"{LAUNCHER}:4 runs $SUBMIT_DIR/submit.sh: $SUBMIT_DIR is not known for this point" in row.reason
        assert any(e.path == LAUNCHER and e.line == 4 and e.unavailable for e in row.evidence), row.evidence


def test_a_missing_script_the_runner_names_is_could_not_verify():
    files = _files()
    del files[LAUNCHER]
    row = _row(10, files)
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert f"runners/launch_mi355x-amds.sh:13 runs {LAUNCHER}, which is not in the repository" in row.reason


def test_a_container_path_outside_every_mount_is_could_not_verify():
    job = JOB.replace("-v ${DI_REPO_DIR}:${DOCKER_MOUNT_PATH}", "-v /nfs/models:/models")
    row = _row(10, _files(**{f"{U}/job.slurm": job}))
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert "inside the container, a path under no repository mount" in row.reason


def test_an_opaque_eval_on_the_chain_ends_it():
    sgl = SGLANG.format(patch='eval "$(python3 -c "print(1)")"')
    row = _row(8, _files(**{f"{U}/server_sglang.sh": sgl}))
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert f"line 2 of {U}/server_sglang.sh" in row.reason


def test_a_change_down_the_chain_affects_the_point():
    # Only server_sglang.sh changes: the point is affected through the chain the runner picks.
    files = _files()
    base = dict(files)
    files[f"{U}/server_sglang.sh"] = SGLANG.format(patch="export SGLANG_X=1")
    snap = build_snapshot({"base": base, "head": files})
    row = evaluate(snap, only={10}).row(10)
    assert row.status.value == "PASS", row.reason
    assert "dsr1-fp8-mi355x-sglang-disagg-mtp" in row.reason


def test_a_change_on_the_branch_not_taken_does_not_affect_the_point():
    files = _files()
    base = dict(files)
    files[f"{U}/server_vllm.sh"] = VLLM + "echo changed\n"
    snap = build_snapshot({"base": base, "head": files})
    row = evaluate(snap, only={10}).row(10)
    assert row.status.value == "N/A", row.reason


def test_an_internal_error_in_the_walk_is_could_not_verify_never_a_crash(monkeypatch):
    import recipes.launch.path.runner_launch as rl

    def boom(*_a, **_k):
        raise ValueError("boom")

    monkeypatch.setattr(rl._Walker, "command", boom)
    row = _row(10, _files())
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert "the bot could not follow the chain (ValueError: boom)" in row.reason


# A TileRT-shaped chain: the runner `exec`s the script it names (nothing after runs), which
# `exec`s a submit script whose function starts a pyxis container (`srun --container-image
# --container-mounts=$GITHUB_WORKSPACE:/workspace bash /workspace/.../run_node.sh`).
T_MASTER = MASTER.replace("dsr1-fp8-mi355x-sglang-disagg-mtp", "glm5.1-fp8-b200-tilert").replace(
    "framework: sglang-disagg", "framework: tilert").replace("runner: mi355x-disagg", "runner: b200-multinode").replace(
    "model-prefix: dsr1", "model-prefix: glm5.1").replace("spec-decoding: mtp", "spec-decoding: none")
T_RUNNERS = "labels:\n  b200-multinode: [b200-dgxc_0]\n"
T_RUNNER = """#!/usr/bin/env bash
if [[ "$IS_MULTINODE" == "true" ]]; then
    if [[ "$FRAMEWORK" == "tilert" ]]; then
        TILERT_DISAGG="$GITHUB_WORKSPACE/benchmarks/multi_node/${EXP_NAME%%_*}_${PRECISION}_b200_${FRAMEWORK}-disagg.sh"
        exec bash "$TILERT_DISAGG"
    fi
    curl -LsSf https://example.com/install.sh | sh
fi
"""
T_LAUNCHER = "benchmarks/multi_node/glm5.1_fp8_b200_tilert-disagg.sh"
T_SUBMIT = """#!/usr/bin/env bash
launch_role() {
    srun --jobid="$JOB_ID" --ntasks=1 \\
        --container-image="$SQUASH" \\
        --container-mounts="$GITHUB_WORKSPACE:/workspace,$MODEL_PATH:$MODEL_PATH" \\
        --no-container-entrypoint \\
        bash "/workspace/benchmarks/multi_node/tilert_utils/run_node.sh"
}
launch_role
"""
T_NODE = """#!/usr/bin/env bash
{patch}
python3 -m sglang.launch_server --model-path "$MODEL_PATH"
"""


def _t_files(patch: str = "") -> dict[str, str]:
    return {"configs/nvidia-master.yaml": T_MASTER, "configs/runners.yaml": T_RUNNERS,
            "runners/launch_b200-dgxc.sh": T_RUNNER,
            T_LAUNCHER: '#!/usr/bin/env bash\nexec bash "$(dirname "$0")/tilert_utils/submit.sh"\n',
            "benchmarks/multi_node/tilert_utils/submit.sh": T_SUBMIT,
            "benchmarks/multi_node/tilert_utils/run_node.sh": T_NODE.format(patch=patch)}


def test_exec_and_a_pyxis_container_in_a_function_are_followed():
    row = _row(10, _t_files())
    assert row.status.value == "PASS", row.reason  # the curl after the runner's `exec` never runs
    patch = "sed -i 's/a/b/' /usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py"
    row = _row(10, _t_files(patch))
    assert row.status.value == "FAIL" and not row.reason.startswith("could not verify"), row.reason
    assert "benchmarks/multi_node/tilert_utils/run_node.sh:2" in row.reason


def test_an_unreadable_line_in_a_called_function_ends_the_chain_and_an_interpreter_is_no_hop():
    node = T_NODE.format(patch='wait_tcp() {\n    until nc -z "$1" "$2"; do sleep 1; done ) }\n}\n'
                               'wait_tcp localhost 8000\n"$PY" -m pip --version')
    files = _t_files()
    files["benchmarks/multi_node/tilert_utils/run_node.sh"] = node
    row = _row(10, files)
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert "could not read line 3 of benchmarks/multi_node/tilert_utils/run_node.sh" in row.reason, row.reason


# TileRT's run_node.sh:184 (#2533): `(exec 3<>"/dev/tcp/$host/$port")` probes a port. The grammar
# has no `<>` (open for reading and writing); the bot reads it as the write it also is.
WAIT_TCP = 'wait_tcp() {\n    until (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; do sleep 1; done\n}\nwait_tcp localhost 8000'


def test_a_read_write_redirect_is_read_and_the_chain_followed():
    files = _t_files(WAIT_TCP)
    row = _row(10, files)
    assert row.status.value == "PASS", row.reason
    assert "sglang.launch_server" in row.reason, row.reason


def test_a_read_write_redirect_into_the_engine_is_a_write():
    files = _t_files(WAIT_TCP + "\nexec 4<>/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py")
    row = _row(10, files)
    assert row.status.value == "FAIL" and not row.reason.startswith("could not verify"), row.reason
    assert "benchmarks/multi_node/tilert_utils/run_node.sh:6" in row.reason, row.reason


# Check 9 on that chain: run_node.sh runs the client from a function its own top level calls.
T9_MASTER = T_MASTER.replace("spec-decoding: none", "spec-decoding: mtp")
CLIENT_FN = 'run_bench() {\n    python3 -m sglang.bench_serving --model "$MODEL_PATH" --use-chat-template --port 8000\n}\n'


def _t9_files(node_patch: str, **over: str) -> dict[str, str]:
    files = _t_files(node_patch)
    files["configs/nvidia-master.yaml"] = T9_MASTER
    files.update(over)
    return files


def test_check_9_counts_a_client_flag_in_a_function_the_run_script_calls_itself():
    row = _row(9, _t9_files(CLIENT_FN + "run_bench"))
    assert row.status.value == "PASS", row.reason
    assert "benchmarks/multi_node/tilert_utils/run_node.sh:3" in row.reason, row.reason


def test_check_9_reads_a_sourced_librarys_function_as_the_script_calls_it():
    # The same function in a library the script sources: the interpreter runs it as called, so
    # its client gets the flag; a function nobody calls runs no client (could not verify).
    lib = "benchmarks/multi_node/tilert_utils/bench_lib.sh"
    node = 'source "$(dirname "$0")/bench_lib.sh"\nrun_bench'
    row = _row(9, _t9_files(node, **{lib: "#!/usr/bin/env bash\n" + CLIENT_FN}))
    assert row.status.value == "PASS", row.reason
    assert "tilert_utils/run_node.sh:3 -> fn run_bench -> benchmarks/multi_node/tilert_utils/bench_lib.sh:3" in row.reason
    row = _row(9, _t9_files('source "$(dirname "$0")/bench_lib.sh"\ntrue', **{lib: "#!/usr/bin/env bash\n" + CLIENT_FN}))
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert "no benchmark client" in row.reason, row.reason
