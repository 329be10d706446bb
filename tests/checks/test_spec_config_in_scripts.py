"""Check 11 on old-layout agentic launchers that build the speculative config in shell code.

The vLLM `--speculative-config` JSON (method, num_speculative_tokens, synthetic acceptance),
built in a variable per `EVAL_ONLY` branch, as an array element, with `printf`, or a TRT-LLM
`speculative_config` block written by a heredoc: the draft length is read wherever the JSON is
built, and the benchmark run's branch (EVAL_ONLY not true) is the served config. Fixtures are
small scripts shaped like the real launchers under benchmarks/single_node/agentic/.
"""
from __future__ import annotations

from checks.engine import evaluate
from recipes.effective import effective_config
from recipes.points import BenchmarkPoint
from recipes.scripts import analyze_script, eval_branch
from tests.builders import build_snapshot

GOLDEN = "golden_al_distribution/dsv4_mtp.yaml"
GOLDEN_TEXT = "deepseek-v4-pro:\n  thinking_on:\n    3: 2.49\n  thinking_off:\n    3: 2.97\n"
MINIMAX_GOLDEN = "golden_al_distribution/minimaxm3_eagle3_gqa.yaml"
MINIMAX_TEXT = "minimax-m3:\n  thinking_on:\n    3: 2.78\n"
SCRIPT = "benchmarks/single_node/agentic/dsv4_fp4_b200_vllm_mtp.sh"


def _master(framework: str = "vllm", prefix: str = "dsv4", model: str = "deepseek-ai/DeepSeek-V4-Pro") -> str:
    return f"""{prefix}-fp4-b200-{framework}-agentic-mtp:
  image: vllm/vllm-openai:v0.20.0
  model: {model}
  model-prefix: {prefix}
  runner: cluster:b200-nb
  precision: fp4
  framework: {framework}
  multinode: false
  scenarios:
    agentic-coding:
    - search-space:
      - {{ tp: 8, ep: 1, spec-decoding: mtp, conc-list: [4] }}
"""


def _row(script: str, *, path: str = SCRIPT, master: str | None = None, golden: tuple[str, str] = (GOLDEN, GOLDEN_TEXT)):
    snap = build_snapshot({"base": {golden[0]: golden[1], "configs/runners.yaml": "labels: {}\n"},
                           "head": {"configs/nvidia-master.yaml": master or _master(), path: script}})
    return evaluate(snap, only={11}).row(11)


VLLM_BRANCHES = """#!/usr/bin/env bash
NUM_SPEC_TOKENS=3
if [ "${EVAL_ONLY:-false}" = "true" ]; then
    SPEC_CONFIG="{\\"method\\": \\"mtp\\", \\"num_speculative_tokens\\": $NUM_SPEC_TOKENS}"
else
    SPEC_CONFIG="{\\"method\\": \\"mtp\\", \\"num_speculative_tokens\\": $NUM_SPEC_TOKENS, \\"rejection_sample_method\\": \\"synthetic\\", \\"synthetic_acceptance_length\\": 2.49}"
fi
VLLM_CMD=(
    vllm serve "$MODEL"
    --tensor-parallel-size 8
    --speculative-config "$SPEC_CONFIG"
)
"${VLLM_CMD[@]}" > "$SERVER_LOG" 2>&1 &
"""


def test_json_in_a_variable_per_eval_branch_passes():
    row = _row(VLLM_BRANCHES)
    assert row.status.value == "PASS", row.reason
    assert "synthetic_acceptance_length=2.49" in row.reason and "K=3" in row.reason


def test_a_model_folder_the_node_decides_is_a_positional_word_not_a_hidden_flag():
    # launch_b200-dgxc.sh: the first candidate folder that exists, else a default; the served
    # model is then not known, but it is the positional word of `vllm serve`, not a flag.
    pick = ('SEL=""\nfor c in /lustre/models/dsv4-pro /lustre/models/DeepSeek-V4-Pro; do\n'
            '    if [[ -d "$c" ]]; then SEL="$c"; break; fi\ndone\nMODEL_DIR="${SEL:-/lustre/models/dsv4}"\n')
    script = VLLM_BRANCHES.replace("#!/usr/bin/env bash\n", "#!/usr/bin/env bash\n" + pick)
    row = _row(script.replace('vllm serve "$MODEL"', 'vllm serve "$MODEL_DIR"'))
    assert row.status.value == "PASS", row.reason
    row = _row(script.replace('vllm serve "$MODEL"', 'vllm serve "$MODEL" $(cat /opt/extra-flags)'))
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason


def test_reversed_branches_serve_the_benchmark_run_not_the_eval():
    # `!= true` first: the eval-only else branch is assigned last but is not the served config.
    script = VLLM_BRANCHES.replace('= "true" ]', '!= "true" ]')
    lines = script.split("\n")
    lines[3], lines[5] = lines[5], lines[3]
    row = _row("\n".join(lines))
    assert row.status.value == "PASS", row.reason
    assert "2.49" in row.reason


def test_synthetic_only_in_the_eval_branch_fails():
    lines = VLLM_BRANCHES.split("\n")
    lines[3], lines[5] = lines[5], lines[3]  # synthetic under EVAL_ONLY=true, real for the benchmark
    row = _row("\n".join(lines))
    assert row.status.value == "FAIL"
    assert "only when EVAL_ONLY is true" in row.reason or "not pinned" in row.reason, row.reason


def test_unguarded_json_fails_for_evals():
    script = """#!/usr/bin/env bash
SPEC_CONFIG='{"method": "mtp", "num_speculative_tokens": 3, "rejection_sample_method": "synthetic", "synthetic_acceptance_length": 2.49}'
vllm serve "$MODEL" --speculative-config "$SPEC_CONFIG"
"""
    row = _row(script)
    assert row.status.value == "FAIL"
    assert "without an EVAL_ONLY guard" in row.reason and f"{SCRIPT}:3" in row.reason


def test_wrong_al_in_the_json_fails():
    row = _row(VLLM_BRANCHES.replace("2.49}", "2.7}"))
    assert row.status.value == "FAIL"
    assert "2.7" in row.reason and "2.49" in row.reason


def test_printf_built_json_is_read():
    script = """#!/usr/bin/env bash
DRAFT_MODEL="Inferact/MiniMax-M3-EAGLE3-GQA"
NUM_SPEC_TOKENS=3
SYNTHETIC_ACCEPT_LEN=2.78
DRAFT_MODEL_PATH="/models/${DRAFT_MODEL##*/}"
if [ "${EVAL_ONLY:-}" = "true" ]; then
    SPEC_CONFIG=$(printf \\
        '{"method":"eagle3","model":"%s","num_speculative_tokens":%d}' \\
        "$DRAFT_MODEL_PATH" "$NUM_SPEC_TOKENS")
else
    SPEC_CONFIG=$(printf \\
        '{"method":"eagle3","model":"%s","num_speculative_tokens":%d,"rejection_sample_method":"synthetic","synthetic_acceptance_length":%.2f}' \\
        "$DRAFT_MODEL_PATH" "$NUM_SPEC_TOKENS" "$SYNTHETIC_ACCEPT_LEN")
fi
vllm serve "$MODEL" --speculative-config "$SPEC_CONFIG"
"""
    path = "benchmarks/single_node/agentic/minimaxm3_fp4_b200_mtp.sh"
    master = _master(prefix="minimaxm3", model="MiniMaxAI/MiniMax-M3").replace("dsv4", "minimaxm3")
    row = _row(script, path=path, master=master, golden=(MINIMAX_GOLDEN, MINIMAX_TEXT))
    assert row.status.value == "PASS", row.reason
    # The GQA draft (its name from `${DRAFT_MODEL##*/}`) picks the GQA curve.
    assert "minimaxm3_eagle3_gqa.yaml" in row.reason and "2.78" in row.reason


CONC_BRANCHES = """#!/usr/bin/env bash
if [ "$CONC" -le 8 ]; then
    NUM_SPEC_TOKENS=3
    SYNTHETIC_ACCEPT_LEN=2.49
elif [ "$CONC" -le 16 ]; then
    NUM_SPEC_TOKENS=2
    SYNTHETIC_ACCEPT_LEN=2.27
else
    NUM_SPEC_TOKENS=0
fi
SPEC_ARGS=()
if [ "$NUM_SPEC_TOKENS" -gt 0 ]; then
    if [ "${EVAL_ONLY:-false}" = "true" ]; then
        SPEC_CONFIG="{\\"method\\": \\"mtp\\", \\"num_speculative_tokens\\": $NUM_SPEC_TOKENS}"
    else
        SPEC_CONFIG="{\\"method\\": \\"mtp\\", \\"num_speculative_tokens\\": $NUM_SPEC_TOKENS, \\"rejection_sample_method\\": \\"synthetic\\", \\"synthetic_acceptance_length\\": $SYNTHETIC_ACCEPT_LEN}"
    fi
    SPEC_ARGS=(--speculative-config "$SPEC_CONFIG")
fi
vllm serve "$MODEL" "${SPEC_ARGS[@]}"
"""
GOLDEN_K2 = "deepseek-v4-pro:\n  thinking_on:\n    2: 2.27\n    3: 2.49\n"


def _conc_master(concs: str) -> str:
    return _master().replace("conc-list: [4]", f"conc-list: [{concs}]")


def test_draft_length_per_concurrency_branch_is_read_per_point():
    # CONC=4 takes K=3 (AL 2.49), CONC=12 takes K=2 (AL 2.27): each point judged on its own branch.
    row = _row(CONC_BRANCHES, master=_conc_master("4, 12"), golden=(GOLDEN, GOLDEN_K2))
    assert row.status.value == "PASS", row.reason
    assert "K=3 = 2.49" in row.reason and "K=2 = 2.27" in row.reason


def test_a_branch_with_the_wrong_al_for_its_draft_length_fails():
    script = CONC_BRANCHES.replace("SYNTHETIC_ACCEPT_LEN=2.27", "SYNTHETIC_ACCEPT_LEN=2.49")
    row = _row(script, master=_conc_master("12"), golden=(GOLDEN, GOLDEN_K2))
    assert row.status.value == "FAIL"
    assert "writes AL 2.49" in row.reason and "2.27" in row.reason and "K=2" in row.reason


def test_a_point_whose_branch_does_not_speculate_has_nothing_to_pin():
    row = _row(CONC_BRANCHES, master=_conc_master("4, 64"), golden=(GOLDEN, GOLDEN_K2))
    assert row.status.value == "PASS", row.reason
    # K=0: the c64 point's server starts with no speculative config (its line in the trace).
    assert ":c64 runs without speculative decoding" in row.reason and f"{SCRIPT}:20" in row.reason


def test_draft_length_per_branch_the_point_does_not_decide_is_could_not_verify():
    script = CONC_BRANCHES.replace('"$CONC" -le 8', '"$GPU_ARCH" -le 8').replace('"$CONC" -le 16', '"$GPU_ARCH" -le 16')
    row = _row(script, golden=(GOLDEN, GOLDEN_K2))
    assert row.status.value == "FAIL"
    # The trace names the branch the point's values leave open and the server it reaches.
    assert row.reason.startswith("could not verify") and "undecided branch" in row.reason, row.reason
    assert f"{SCRIPT}:20" in row.reason and f'`[ "$GPU_ARCH" -le 8 ]` at {SCRIPT}:2)' in row.reason, row.reason
    assert all(e.unavailable for e in row.evidence)


TRT = """#!/usr/bin/env bash
DRAFT_MODEL="Inferact/MiniMax-M3-EAGLE3-GQA"
DRAFT_MODEL_PATH="/models/${DRAFT_MODEL##*/}"
cat << EOF > ser.yaml
max_batch_size: 64
speculative_config:
    decoding_type: Eagle3
    max_draft_len: 3
    speculative_model: $DRAFT_MODEL_PATH
enable_chunked_prefill: true
EOF
if [ "$EVAL_ONLY" = "true" ]; then
    unset TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS
else
    export TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS=1.78
fi
TRTLLM_CMD=(
    mpirun -n 1 --allow-run-as-root
    trtllm-serve "$MODEL"
    --tp_size 8
    --config ser.yaml
)
"${TRTLLM_CMD[@]}" > "$SERVER_LOG" 2>&1 &
"""


def test_trt_heredoc_config_is_read_from_the_text_the_trace_holds():
    # The draft length is in the YAML the launcher writes (#2686): the server's effect holds the
    # text written there, expansions done, and the golden AL is looked up from it.
    path = "benchmarks/single_node/agentic/minimaxm3_fp4_b200_trt_mtp.sh"
    master = _master(framework="trt", prefix="minimaxm3", model="MiniMaxAI/MiniMax-M3")
    row = _row(TRT, path=path, master=master, golden=(MINIMAX_GOLDEN, MINIMAX_TEXT))
    assert row.status.value == "PASS", row.reason
    row = _row(TRT.replace("=1.78", "=1.5"), path=path, master=master, golden=(MINIMAX_GOLDEN, MINIMAX_TEXT))
    assert row.status.value == "FAIL" and not row.reason.startswith("could not verify"), row.reason
    # A value of that text the bot cannot know could stand anywhere in it: never a pass on a guess.
    unknown = TRT.replace("max_draft_len: 3", "max_draft_len: $(cat /models/k)")
    row = _row(unknown, path=path, master=master, golden=(MINIMAX_GOLDEN, MINIMAX_TEXT))
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert "ser.yaml, which the launch writes, holds a value not known" in row.reason and f"{path}:23" in row.reason


def test_trt_heredoc_config_holding_the_concurrency_elsewhere_is_read(monkeypatch):
    # The capture sizes follow the point's concurrency (a symbol in the trace the points of an
    # arm share): the rest of the file is read, and the speculative block settles the row with
    # no trace per point (each spends the review's step budget: #2686, #2697 ran out of it).
    from tests.checks.test_check_11_agentic_golden_al import _counting_runs

    calls = _counting_runs(monkeypatch)
    path = "benchmarks/single_node/agentic/minimaxm3_fp4_b200_trt_mtp.sh"
    master = _master(framework="trt", prefix="minimaxm3", model="MiniMaxAI/MiniMax-M3")
    sized = TRT.replace("max_batch_size: 64", "max_batch_size: $CONC")
    row = _row(sized, path=path, master=master, golden=(MINIMAX_GOLDEN, MINIMAX_TEXT))
    assert row.status.value == "PASS", row.reason
    assert calls and all(symbolic for _, symbolic in calls), calls
    # A draft length that follows the concurrency is open in that trace, not a guess: the
    # point's own trace reads it (K=4 at concurrency 4, which has no golden value).
    open_k = TRT.replace("max_draft_len: 3", "max_draft_len: $CONC")
    row = _row(open_k, path=path, master=master, golden=(MINIMAX_GOLDEN, MINIMAX_TEXT))
    assert row.status.value == "FAIL" and "no thinking_on value for K=4" in row.reason, row.reason


def test_trt_config_file_of_the_repository_gives_method_and_draft_length():
    path = "benchmarks/single_node/agentic/minimaxm3_fp4_b200_trt_mtp.sh"
    master = _master(framework="trt", prefix="minimaxm3", model="MiniMaxAI/MiniMax-M3")
    config = "benchmarks/single_node/agentic/minimaxm3_trt.yaml"
    text = ("speculative_config:\n  decoding_type: Eagle3\n  max_draft_len: 3\n"
            "  speculative_model: /models/MiniMax-M3-EAGLE3-GQA\n")
    script = TRT.replace("--config ser.yaml", f"--config /workspace/{config}")
    for value, status in (("1.78", "PASS"), ("1.5", "FAIL")):
        snap = build_snapshot({"base": {MINIMAX_GOLDEN: MINIMAX_TEXT, "configs/runners.yaml": "labels: {}\n"},
                               "head": {"configs/nvidia-master.yaml": master, path: script.replace("=1.78", f"={value}"),
                                        config: text}})
        row = evaluate(snap, only={11}).row(11)
        assert row.status.value == status, row.reason
        assert "K=3" in row.reason and "2.78" in row.reason, row.reason


def _eff(script: str, path: str = SCRIPT):
    point = BenchmarkPoint(scenario="agentic-coding", config_key="k", point_id="k", source_path="m.yaml", source_line=1)
    return effective_config(point, script=(path, script))


def test_atom_interpreter_option_and_nested_spec_array():
    script = """#!/usr/bin/env bash
NUM_SPEC_TOKENS=3
SPEC_ARGS=(
    --method mtp
    --num-speculative-tokens "$NUM_SPEC_TOKENS"
)
if [ "${EVAL_ONLY:-false}" != "true" ]; then
    SPEC_ARGS+=(--spec-decode-acceptance-length 2.49)
fi
ATOM_CMD=(
    python3 -u -m atom.entrypoints.openai_server
    --model "$MODEL"
    "${SPEC_ARGS[@]}"
)
"${ATOM_CMD[@]}" > "$SERVER_LOG" 2>&1 &
"""
    eff = _eff(script, "benchmarks/single_node/agentic/dsv4_fp4_mi355x_atom_mtp.sh")
    assert (eff.spec_method.value, eff.draft_length.value) == ("mtp", 3)
    assert eff.args["spec-decode-acceptance-length"].value == "2.49"


def test_python_held_in_a_variable_launches_sglang():
    script = """#!/usr/bin/env bash
SGLANG_PYTHON="$(command -v python3)"
SGLANG_CMD=(
    "$SGLANG_PYTHON" -m sglang.launch_server
    --speculative-algorithm EAGLE
    --speculative-num-steps 3
)
"${SGLANG_CMD[@]}" &
"""
    eff = _eff(script)
    assert (eff.spec_method.value, eff.draft_length.value) == ("eagle", 3)


def test_eval_only_flag_does_not_shadow_the_served_one():
    script = """#!/usr/bin/env bash
ARGS=(--max-num-seqs 64)
if [ "$EVAL_ONLY" = "true" ]; then
    ARGS+=(--max-num-seqs 8 --enforce-eager)
fi
vllm serve m "${ARGS[@]}"
"""
    eff = _eff(script)
    assert eff.args["max-num-seqs"].value == "64"
    assert "enforce-eager" not in eff.args  # only the eval run passes it


def test_eval_only_export_does_not_replace_the_served_value():
    a = analyze_script('export X=1\nif [[ "$EVAL_ONLY" == true ]]; then\n  export X=0\nfi\n', "s.sh")
    assert a.exports["X"].value == "1" and len(a.assignments_of("X")) == 2


def test_eval_branch_reads_the_condition_text():
    assert eval_branch('[ "${EVAL_ONLY:-false}" = "true" ]') is True
    assert eval_branch('! ( [ "${EVAL_ONLY:-false}" = "true" ] )') is False
    assert eval_branch('[ "$EVAL_ONLY" != "true" ]') is False
    assert eval_branch('! ( [ "$EVAL_ONLY" != "true" ] )') is True
    assert eval_branch('"$EVAL_ONLY" matches true|1') is True
    assert eval_branch('[ "$CONC" -le 8 ]') is None and eval_branch(None) is None


def test_printf_with_a_run_time_number_stays_unresolved():
    a = analyze_script('K=$(printf "%d" "$UNSET_K")\nvllm serve m --speculative-config "{\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":$K}"\n',
                       "s.sh")
    launch = a.server_launch
    assert launch is not None and "speculative-config" not in launch.json_flags
    assert _eff('K=$(printf "%d" "$UNSET_K")\nvllm serve m --speculative-config "{\\"method\\":\\"mtp\\",\\"num_speculative_tokens\\":$K}"\n').draft_length is None
