"""Checks 8 and 10 on a runner-chosen AMD disagg chain whose server script takes its flags from
models.yaml through an inline program (recipes.models_yaml, read by recipes.launch.path.runner_launch): the
entry the program selects for the point is read, so the rows are decided with the file and
line of the entry; a program or entry the bot cannot read stays a could-not-verify naming it."""
from __future__ import annotations

from tests.checks.test_runner_launch import JOB, U, _files, _row

JOB_MODEL = JOB.replace("-e WS_PATH=$WS_PATH \\\n",
                        "-e WS_PATH=$WS_PATH \\\n    -e MODEL_NAME=DeepSeek-R1 \\\n    -e IS_AGENTIC=$IS_AGENTIC \\\n")
assert JOB_MODEL != JOB
SERVER = r"""#!/bin/bash
MODELS_YAML="${WS_PATH}/models.yaml"
eval "$(python3 -c "
import yaml, sys
model_name = '${MODEL_NAME}'
is_agentic = '${IS_AGENTIC:-0}'.strip().lower() in ('1', 'true')
model_key = f'{model_name}-AgentX' if is_agentic else f'{model_name}-DI'
with open('${MODELS_YAML}') as f:
    models = yaml.safe_load(f)
if model_key not in models:
    if model_name in models:
        model_key = model_name
m = models[model_key]
print(f'MODEL_BASE_FLAGS=\"{m.get(\"base_flags\", \"\")}\"')
print(f'MODEL_ENV=\"{m.get(\"env\", \"\")}\"')
")"
python3 -m sglang.launch_server --model-path /models/DeepSeek-R1 $MODEL_BASE_FLAGS
"""
MODELS = """DeepSeek-R1:
  base_flags: "--attention-backend aiter"
DeepSeek-R1-AgentX:
  base_flags: "--hf-overrides '{{\\"num_hidden_layers\\": 2}}'"
DeepSeek-R1-DI:
  base_flags: "--kv-cache-dtype fp8 {extra}"
  env: "SGLANG_USE_AITER=1"
"""


def _files_with(models: str = MODELS.format(extra=""), server: str = SERVER) -> dict[str, str]:
    return _files(**{f"{U}/job.slurm": JOB_MODEL, f"{U}/server_sglang.sh": server, f"{U}/models.yaml": models})


def test_the_di_entry_the_program_selects_is_read_and_a_clean_entry_passes():
    for check in (8, 10):
        row = _row(check, _files_with())
        assert row.status.value == "PASS", row.reason


def test_an_architecture_flag_in_the_selected_entry_fails_check_8_at_its_line():
    row = _row(8, _files_with(MODELS.format(extra="--hf-overrides '{{}}'")))
    assert row.status.value == "FAIL" and not row.reason.startswith("could not verify"), row.reason
    assert f"{U}/models.yaml:6 sets --hf-overrides" in row.reason, row.reason
    assert any(e.path == f"{U}/models.yaml" and e.line == 6 for e in row.evidence), row.evidence


def test_the_agentx_entry_of_a_non_agentic_point_does_not_count():
    # The AgentX entry overrides the layer count, but this point is not agentic: its key is -DI.
    row = _row(8, _files_with())
    assert "models.yaml:4" not in row.reason, row.reason


def test_a_missing_entry_is_could_not_verify_naming_the_program_line():
    models = "Other-DI:\n  base_flags: \"\"\n"
    row = _row(8, _files_with(models))
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert (f"{U}/server_sglang.sh:3 reads {U}/models.yaml: {U}/models.yaml has no entry DeepSeek-R1-DI and no "
            "fallback entry DeepSeek-R1") in row.reason, row.reason


def test_a_program_of_another_shape_stays_could_not_verify_naming_its_line():
    server = SERVER.replace("m = models[model_key]", "m = models[pick(model_key)]")
    row = _row(8, _files_with(server=server))
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert f"line 3 of {U}/server_sglang.sh" in row.reason, row.reason


def test_a_model_name_the_container_does_not_get_is_could_not_verify():
    files = _files_with()
    files[f"{U}/job.slurm"] = JOB  # no -e MODEL_NAME: unknown inside the container
    row = _row(8, files)
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert f"{U}/server_sglang.sh:3" in row.reason and "$MODEL_NAME is not known" in row.reason, row.reason


WRAPPERS = r"""#!/bin/bash
cd "$WS_PATH"
run_or_die() {
    local desc="$1" cmd="$2"
    if ! eval "$cmd"; then exit 1; fi
}
wait_or_die() {
    local watch=$1 log=$2; shift 2
    "$@" > "$log" & local pid=$!
    wait "$pid"
}
BARRIER_CMD="python3 $WS_PATH/sync.py barrier --timeout 300"
run_or_die "barrier" "python3 $WS_PATH/sync.py barrier --timeout 300"
wait_or_die "$server_pid" "$LOGS/sync.log" python3 "$WS_PATH/sync.py" wait
BENCH_CMD="bash $WS_PATH/bench.sh 1 1 $((TP*2))"
eval "$BENCH_CMD"
"""
BENCH = """#!/bin/bash
sed -i 's/a/b/' /sgl-workspace/sglang/python/sglang/srt/server_args.py
"""


def test_eval_of_a_command_variable_and_wrapper_functions_are_followed():
    files = _files_with(server=SERVER + WRAPPERS.replace("#!/bin/bash\n", ""))
    files[f"{U}/bench.sh"] = "#!/bin/bash\necho bench\n"
    row = _row(10, files)
    # sync.py is run by the wrappers: a Python file on the launch path, found through the mount;
    # absent, its code is unknown.
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert "$WS_PATH/sync.py" in row.reason, row.reason
    files[f"{U}/sync.py"] = "import sys\nprint(sys.argv)\n"
    row = _row(10, files)
    assert row.status.value == "PASS", row.reason
    files[f"{U}/sync.py"] = "open('/sgl-workspace/sglang/python/sglang/srt/server_args.py', 'w').write('')\n"
    row = _row(10, files)
    assert row.status.value == "FAIL" and f"{U}/sync.py" in row.reason, row.reason
    files[f"{U}/bench.sh"] = BENCH
    row = _row(10, files)
    assert row.status.value == "FAIL" and not row.reason.startswith("could not verify"), row.reason
    assert f"{U}/bench.sh:2" in row.reason, row.reason


SIMULATED = r"""
SIM_ENV=""
if [[ "${IS_AGENTIC:-0}" == "1" ]]; then
    SIM_ENV="SGLANG_SIMULATE_ACC_LEN=2.5"
fi
DECODE_CMD="${SIM_ENV} python3 -m sglang.launch_server --model-path /models/x"
bash -c "$DECODE_CMD"
"""


def test_a_synthetic_knob_only_on_the_agentic_branch_is_not_set_for_a_fixed_seq_point():
    # The analyser expands $DECODE_CMD with SIM_ENV's last value whatever its branch; the
    # knob's branch (IS_AGENTIC is 0 for this point) is what decides.
    row = _row(11, _files_with(server=SERVER + SIMULATED))
    assert "SGLANG_SIMULATE_ACC_LEN" not in row.reason, row.reason
    always = SIMULATED.replace('if [[ "${IS_AGENTIC:-0}" == "1" ]]; then', "if true; then")
    row = _row(11, _files_with(server=SERVER + always))
    assert row.status.value == "FAIL" and "SGLANG_SIMULATE_ACC_LEN" in row.reason, row.reason


def test_a_change_to_the_selected_entry_affects_the_point_and_one_to_another_entry_does_not():
    from checks.engine import evaluate
    from tests.builders import build_snapshot

    base = _files_with()
    head = dict(base)
    head[f"{U}/models.yaml"] = MODELS.format(extra="--hf-overrides '{{}}'")
    row = evaluate(build_snapshot({"base": base, "head": head}), only={8}).row(8)
    assert row.status.value == "FAIL" and f"{U}/models.yaml:6 sets --hf-overrides" in row.reason, row.reason
    head[f"{U}/models.yaml"] = MODELS.format(extra="").replace('"--attention-backend aiter"', '"--other"')
    row = evaluate(build_snapshot({"base": base, "head": head}), only={8}).row(8)
    assert row.status.value == "N/A", row.reason  # the bare entry is not the one this point reads


def _walks(files: dict[str, str]) -> int:
    from checks.context import ReviewContext
    from recipes.launch.path.runner_launch import MEMO_CHAIN_WALKS, runner_chain
    from tests.builders import build_snapshot

    ctx = ReviewContext(build_snapshot({"base": {}, "head": files}))
    points = [p for p in ctx.head_repo.points if p.launcher is None]
    assert len({(p.isl, p.osl) for p in points}) == 2
    chains = {id(runner_chain(ctx, p)) for p in points}
    assert len(chains) == len(ctx.memo(MEMO_CHAIN_WALKS.format(runner=points[0].runner), list))
    return len(chains)


def test_points_that_differ_only_in_what_the_chain_trims_away_share_one_walk():
    from tests.checks.test_check_09_runner_chosen import MASTER

    master = MASTER.replace("    - isl: 8192\n", "    - isl: 1024\n      osl: 1024\n      search-space:\n"
                            "      - spec-decoding: mtp\n        conc-list: [64]\n"
                            "        prefill: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}\n"
                            "        decode: {num-worker: 1, tp: 8, ep: 8, dp-attn: true}\n    - isl: 8192\n")
    files = _files_with()
    files["configs/amd-master.yaml"] = master
    # The runner reads only ${EXP_NAME%%_*}: dsr1_1k1k and dsr1_8k1k run the same chain.
    assert _walks(files) == 1
    # A script that reads the whole name tells them apart.
    files[f"{U}/submit.sh"] = files[f"{U}/submit.sh"].replace("#!/bin/bash\n", '#!/bin/bash\nLOG="$EXP_NAME"\n')
    assert _walks(files) == 2


def test_a_directory_function_cd_does_not_move_the_walk():
    # `_patches_dir` runs inside $(...): its cd never changes the caller's directory; the
    # container folder `cd "$WS_PATH"` enters is the mounted repository folder.
    extra = '''
cd "$WS_PATH"
_patches_dir() {
    cd /opt/elsewhere && pwd
}
PATCH_DIR="$(_patches_dir)"
bash ./bench.sh
'''
    files = _files_with(server=SERVER + extra)
    files[f"{U}/bench.sh"] = "#!/bin/bash\nsed -i 's/a/b/' /sgl-workspace/sglang/python/sglang/srt/server_args.py\n"
    row = _row(10, files)
    assert row.status.value == "FAIL" and f"{U}/bench.sh:2" in row.reason, row.reason
