"""A runner change confined to a list only tested for membership: the shape of launch_b300-nv.sh's
STAGED_MODELS, whose element InferenceX #2227 removed. The runner is shared by every b300 point, so
each point's trace decides (recipes.launch.path.trace_affected): only the points whose server changed are affected,
however the list is read (recipes.launch.path.array_membership is the textual rule's narrower reading)."""
from __future__ import annotations

from tests.builders import build_snapshot, single_node_entry
from recipes.launch.path.array_membership import list_edits
from checks.context import ReviewContext

MASTER = "configs/nvidia-master.yaml"
RUNNER = "runners/launch_b300-nv.sh"
SCRIPTS = "benchmarks/single_node/fixed_seq_len"
TOP_LEVEL = "launch_b300-nv.sh: top-level code changed (runner for b300)"

# The single-node branch of launch_b300-nv.sh (bae2753a36^), cut down to what the rule reads.
RUNNER_TEXT = """\
#!/usr/bin/env bash
if [[ "$IS_MULTINODE" == "true" ]]; then
    source "$GITHUB_WORKSPACE/.venv/bin/activate"
    srtctl apply -f "$CONFIG_FILE"
else
    HF_HUB_CACHE_MOUNT="/scratch/models/"
    WRITABLE_MODELS_DIR="/data/models/"

    # Pre-staged model
    STAGED_MODELS=(
        DeepSeek-R1-0528
        Kimi-K2.6
        Kimi-K2.6-NVFP4
        MiniMax-M3
    )

    MODEL_BASENAME="${MODEL##*/}"
    if [[ " ${STAGED_MODELS[*]} " == *" ${MODEL_BASENAME} "* ]]; then
        export MODEL_PATH="${HF_HUB_CACHE_MOUNT%/}/${MODEL_BASENAME}"
    else
        export MODEL_PATH="${WRITABLE_MODELS_DIR%/}/${MODEL_BASENAME}"
    fi

    BENCH_SCRIPT="benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_b300_${FRAMEWORK}.sh"
    srun --container-mounts=$HF_HUB_CACHE_MOUNT:$HF_HUB_CACHE_MOUNT bash "$BENCH_SCRIPT"
fi
"""
# (config key, model, model prefix, precision): two models in the list, one outside it.
POINTS = [("kimik2.6-fp4-b300-vllm", "nvidia/Kimi-K2.6-NVFP4", "kimik2.6", "fp4"),
          ("kimik2.6-fp8-b300-vllm", "moonshotai/Kimi-K2.6", "kimik2.6", "fp8"),
          ("glm5-fp8-b300-vllm", "zai-org/GLM-5-FP8", "glm5", "fp8")]
EVERYONE = {key for key, *_ in POINTS}


def base_tree(runner: str = RUNNER_TEXT) -> dict[str, str]:
    tree = {MASTER: "".join(single_node_entry(key, image="vllm/vllm-openai:v0.20.0", model=model, prefix=prefix,
                                              runner="b300", precision=precision, framework="vllm")
                            for key, model, prefix, precision in POINTS),
            "configs/runners.yaml": "labels:\n  b300:\n    - b300-nv_0\n",
            RUNNER: runner}
    for _, _, prefix, precision in POINTS:
        tree[f"{SCRIPTS}/{prefix}_{precision}_b300_vllm.sh"] = "#!/usr/bin/env bash\nvllm serve $MODEL_PATH --tp 8\n"
    return tree


def affected(head_runner: str, base_runner: str = RUNNER_TEXT) -> dict[str, list[str]]:
    snap = build_snapshot(base=base_tree(base_runner), head={RUNNER: head_runner})
    return {p.config_key: p.reasons for p in ReviewContext(snap).affected.points}


def server_moved(script: str, model: str, line: int, old: str, new: str) -> list[str]:
    return [f"what it runs changed at sweep job:1 -> {RUNNER}:{line} -> {SCRIPTS}/{script}:2: server `vllm serve "
            f"{new}/{model} --tp 8` (was server `vllm serve {old}/{model} --tp 8` at {SCRIPTS}/{script}:2)"]


def test_a_removed_element_affects_only_the_point_it_named():
    got = affected(RUNNER_TEXT.replace("        Kimi-K2.6-NVFP4\n", ""))
    assert got == {"kimik2.6-fp4-b300-vllm": server_moved("kimik2.6_fp4_b300_vllm.sh", "Kimi-K2.6-NVFP4", 24,
                                                          "/scratch/models", "/data/models")}


def test_an_added_element_affects_only_the_point_it_names():
    got = affected(RUNNER_TEXT.replace("        MiniMax-M3\n", "        MiniMax-M3\n        GLM-5-FP8\n"))
    assert got == {"glm5-fp8-b300-vllm": server_moved("glm5_fp8_b300_vllm.sh", "GLM-5-FP8", 26,
                                                      "/data/models", "/scratch/models")}


def test_an_element_nobody_runs_affects_nothing():
    assert affected(RUNNER_TEXT.replace("        MiniMax-M3\n", "        MiniMax-M3\n        Qwen3.5-397B-A17B\n")) == {}


def test_the_array_read_in_a_loop_is_read_too():
    # The textual rule gave up on a list read any other way (every point stayed affected); the
    # trace runs the loop: it prints, and changes nothing the other points run.
    loop = RUNNER_TEXT.replace("    MODEL_BASENAME=", '    for m in "${STAGED_MODELS[@]}"; do echo "$m"; done\n'
                                                    "    MODEL_BASENAME=")
    got = affected(loop.replace("        Kimi-K2.6-NVFP4\n", ""), loop)
    assert set(got) == {"kimik2.6-fp4-b300-vllm"}


def test_a_subject_computed_by_a_command_is_read_too():
    computed = RUNNER_TEXT.replace('MODEL_BASENAME="${MODEL##*/}"', 'MODEL_BASENAME="$(basename "$MODEL")"')
    got = affected(computed.replace("        Kimi-K2.6-NVFP4\n", ""), computed)
    assert set(got) == {"kimik2.6-fp4-b300-vllm"}


def test_a_subject_the_bot_cannot_know_keeps_every_point_affected():
    unknown = RUNNER_TEXT.replace('MODEL_BASENAME="${MODEL##*/}"', 'MODEL_BASENAME="$(lookup-model "$MODEL")"')
    got = affected(unknown.replace("        Kimi-K2.6-NVFP4\n", ""), unknown)
    assert set(got) == EVERYONE and all(reasons[0] == TOP_LEVEL and "could not rule it out" in reasons[1]
                                        for reasons in got.values())


def test_a_change_outside_the_array_keeps_the_rule():
    # Beside the element, a line every single-node point runs: all of them, as before.
    # Beside the element, the folder every unstaged model is read from: the points that read it.
    head = RUNNER_TEXT.replace("        Kimi-K2.6-NVFP4\n", "").replace('"/data/models/"', '"/data/models2/"')
    got = affected(head)
    assert set(got) == {"kimik2.6-fp4-b300-vllm", "glm5-fp8-b300-vllm"}
    # Only the multi-node branch changes: no single-node point, as before.
    assert affected(RUNNER_TEXT.replace("srtctl apply -f", "srtctl apply --verbose -f")) == {}


def _edit(old: str, new: str, text: str = RUNNER_TEXT) -> tuple:
    return list_edits(text, text.replace(old, new))


def test_list_edits_reads_only_the_shapes_it_can_decide():
    drop = ("        Kimi-K2.6-NVFP4\n", "")
    (edit,) = _edit(*drop)
    assert (edit.name, edit.removed, edit.added) == ("STAGED_MODELS", frozenset({"Kimi-K2.6-NVFP4"}), frozenset())
    assert [(t.line, t.subject) for t in edit.tests] == [(17, "MODEL_BASENAME")]
    # A one-line array, an `elif` test, `[@]` and `!=` read the same.
    one_line = RUNNER_TEXT.replace("(\n        DeepSeek-R1-0528\n        Kimi-K2.6\n        Kimi-K2.6-NVFP4\n"
                                   "        MiniMax-M3\n    )", "(DeepSeek-R1-0528 Kimi-K2.6 Kimi-K2.6-NVFP4)")
    assert _edit(" Kimi-K2.6-NVFP4)", ")", one_line)[0].removed == {"Kimi-K2.6-NVFP4"}
    elif_ = RUNNER_TEXT.replace('    if [[ " ${STAGED_MODELS[*]} " == *" ${MODEL_BASENAME} "* ]]',
                                '    if [[ $MODEL_PREFIX == "kimik2.5" ]]; then\n        :\n'
                                '    elif [[ " ${STAGED_MODELS[@]} " != *" $MODEL_BASENAME "* ]]')
    assert _edit(*drop, text=elif_)[0].tests[0].subject == "MODEL_BASENAME"
    # Every other shape keeps the rule: (), the point stays affected.
    unreadable = {
        "appended": RUNNER_TEXT.replace("fi\n", "    STAGED_MODELS+=(Extra)\nfi\n", 1),
        "counted": RUNNER_TEXT.replace("    MODEL_BASENAME=", '    echo "${#STAGED_MODELS[@]}"\n    MODEL_BASENAME='),
        "single brackets": RUNNER_TEXT.replace('[[ " ${STAGED_MODELS[*]} " == *" ${MODEL_BASENAME} "* ]]',
                                               '[ " ${STAGED_MODELS[*]} " == *" ${MODEL_BASENAME} "* ]'),
        "IFS": RUNNER_TEXT.replace("    MODEL_BASENAME=", "    IFS=,\n    MODEL_BASENAME="),
        "subject read": RUNNER_TEXT.replace("    MODEL_BASENAME=", "    read -r MODEL_BASENAME\n    MODEL_BASENAME="),
        "quoted element": RUNNER_TEXT.replace("        MiniMax-M3\n", '        "MiniMax M3"\n'),
        "glob element": RUNNER_TEXT.replace("        MiniMax-M3\n", "        MiniMax-*\n"),
    }
    for why, text in unreadable.items():
        assert _edit(*drop, text=text) == (), why
    assert _edit("STAGED_MODELS=(", "STAGED_MODELS+=(") == ()  # the assignment itself changed
    assert _edit('"/data/models/"', '"/data/models2/"') == ()  # no array element changed
