"""Check 9 reads the client helper's option handling: a flag that the helper turns into the
chat template (`run_benchmark_serving --dsv4` in benchmark_lib.sh) counts like `--use-chat-template`."""
from __future__ import annotations

from checks.engine import evaluate
from tests.builders import RUNNERS, build_snapshot, check_row, single_node_entry

MASTER = single_node_entry("dsv4-fp4-b200-vllm-mtp", image="vllm/vllm-openai:v0.11", model="deepseek-ai/DeepSeek-V4-Pro",
                           runner="b200", precision="fp4", framework="vllm", arm="tp: 8, ep: 1, spec-decoding: mtp, conc-start: 4, conc-end: 4")
SCRIPT = "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b200_vllm_mtp.sh"
LIB = "benchmarks/benchmark_lib.sh"
HELPER = """\
run_benchmark_serving() {
    local use_chat_template=false
    local dsv4=false
    while [[ $# -gt 0 ]]; do
        case $1 in
            --model) model="$2"; shift 2 ;;
            --trust-remote-code) shift ;;
            --num-prompts) shift 2 ;;
            --use-chat-template)
                use_chat_template=true
                shift
                ;;
            --dsv4)
                dsv4=true
                use_chat_template=true
                shift
                ;;
            *) return 1 ;;
        esac
    done
    local cmd=(python3 utils/bench_serving/benchmark_serving.py --model "$model")
    if [[ "$use_chat_template" == true ]]; then
        cmd+=(--use-chat-template)
    fi
    "${cmd[@]}"
}
"""
LAUNCHER = """\
#!/usr/bin/env bash
source "$(dirname "$0")/../../benchmark_lib.sh"
vllm serve $MODEL --tensor-parallel-size 8 --speculative-config '{"method":"mtp","num_speculative_tokens":2}' &
run_benchmark_serving \\
    --model "$MODEL" \\
    {flag}
"""


def _row(flag: str, helper: str = HELPER):
    return check_row(9, {"base": {**RUNNERS, LIB: helper},
                         "head": {"configs/nvidia-master.yaml": MASTER, SCRIPT: LAUNCHER.replace("{flag}", flag)}})


def test_helper_flag_that_implies_the_template_passes():
    # The helper's `--dsv4)` arm sets use_chat_template=true; the interpreter ran it, so the client
    # command it builds at benchmark_lib.sh:23 has --use-chat-template.
    row = _row("--dsv4")
    assert row.status.value == "PASS", row.reason
    assert f"{SCRIPT}:4 -> fn run_benchmark_serving -> {LIB}:25" in row.reason, row.reason


def test_helper_flag_that_does_not_imply_the_template_fails():
    helper = HELPER.replace("                dsv4=true\n                use_chat_template=true\n", "                dsv4=true\n")
    row = _row("--dsv4", helper)
    assert row.status.value == "FAIL" and "without --use-chat-template" in row.reason, row.reason
    assert SCRIPT in row.reason


def test_no_flag_fails():
    row = _row("--num-prompts 40")
    assert row.status.value == "FAIL" and "without --use-chat-template" in row.reason, row.reason


def test_the_plain_flag_still_passes_through_the_helper():
    row = _row("--use-chat-template")
    assert row.status.value == "PASS", row.reason
    assert f"{SCRIPT}:4 -> fn run_benchmark_serving" in row.reason


def test_flag_echoed_when_the_spec_array_is_non_empty_passes():
    launcher = ("#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/../../benchmark_lib.sh\"\n"
                "SPEC_ARGS=(--method eagle3 --num-speculative-tokens 3)\n"
                "vllm serve $MODEL --tensor-parallel-size 8 \"${SPEC_ARGS[@]}\" &\n"
                "run_benchmark_serving \\\n    --model \"$MODEL\" \\\n"
                "    --trust-remote-code $( [[ ${#SPEC_ARGS[@]} -gt 0 ]] && echo \"--use-chat-template\" )\n")
    snap = build_snapshot({"base": {**RUNNERS, LIB: HELPER},
                           "head": {"configs/nvidia-master.yaml": MASTER, SCRIPT: launcher}})
    row = evaluate(snap, only={9}).row(9)
    assert row.status.value == "PASS", row.reason
    empty = launcher.replace("SPEC_ARGS=(--method eagle3 --num-speculative-tokens 3)", "SPEC_ARGS=()")
    snap = build_snapshot({"base": {**RUNNERS, LIB: HELPER},
                           "head": {"configs/nvidia-master.yaml": MASTER, SCRIPT: empty}})
    assert evaluate(snap, only={9}).row(9).status.value == "FAIL"


def test_an_untraced_point_is_judged_by_the_script_reading(monkeypatch):
    # Past the review's interpreter budget a point has no trace (recipes.launch.path.trace_affected): its
    # launch scripts are read as before (the helper's `--dsv4)` arm), never passed unread.
    import recipes.launch.path.trace_affected as ta

    monkeypatch.setattr(ta, "TRACE_BUDGET_STEPS", 0)
    row = _row("--dsv4")
    assert row.status.value == "PASS", row.reason
    assert f"--dsv4, which {LIB}:" in row.reason and "turns into --use-chat-template" in row.reason, row.reason
    row = _row("--num-prompts 40")
    assert row.status.value == "FAIL" and "without --use-chat-template" in row.reason, row.reason
