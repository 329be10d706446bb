"""A file the launch depends on through a construct the textual launch path does not read (a path
built by `printf -v` or from an array, a name a runner builds from the point's values) makes the
point affected when the PR changes it: the trace decides (recipes.launch.path.trace_affected.probe)."""
from __future__ import annotations

from tests.builders import build_snapshot, single_node_entry
from tests.checks.test_affected import MASTER, entry
from checks.context import ReviewContext

LAUNCHER = "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_mi355x_sglang.sh"
OTHER = "benchmarks/single_node/fixed_seq_len/gptoss_fp4_mi355x_vllm.sh"
HELPER = "benchmarks/single_node/helpers/sglang_env.sh"


PRINTF_LAUNCHER = """\
#!/usr/bin/env bash
printf -v helper '%s/../helpers/%s_env.sh' "$(dirname "$0")" "$FRAMEWORK"
source "$helper"
python3 -m sglang.launch_server --model-path "$MODEL" --tp 8 --mem-fraction-static "$MEM_FRACTION"
"""
ARRAY_LAUNCHER = """\
#!/usr/bin/env bash
parts=("$(dirname "$0")/.." helpers "${FRAMEWORK}_env.sh")
source "${parts[0]}/${parts[1]}/${parts[2]}"
python3 -m sglang.launch_server --model-path "$MODEL" --tp 8 --mem-fraction-static "$MEM_FRACTION"
"""
OTHER_TEXT = "#!/usr/bin/env bash\nvllm serve $MODEL --tensor-parallel-size 8\n"


def tree(launcher: str) -> dict[str, str]:
    return {
        MASTER: entry("qwen3.5-fp8-mi355x-sglang", "qwen3.5", "fp8", "sglang")
        + entry("gptoss-fp4-mi355x-vllm", "gptoss", "fp4", "vllm"),
        LAUNCHER: launcher, OTHER: OTHER_TEXT, HELPER: "export MEM_FRACTION=0.8\n",
    }


def affected(base: dict[str, str], head: dict[str, str], **policy) -> dict[str, list[str]]:
    snap = build_snapshot(base=base, head=head, **({"config": {"policy": policy}} if policy else {}))
    return {p.config_key: p.reasons for p in ReviewContext(snap).affected.points}


def test_a_helper_sourced_through_a_printf_v_path_affects_the_point_that_runs_it():
    got = affected(tree(PRINTF_LAUNCHER), {HELPER: "export MEM_FRACTION=0.9\n"})
    # The trace reads the helper, and what the server runs changed: that is the reason.
    assert got == {"qwen3.5-fp8-mi355x-sglang": [
        f"what it runs changed at runner:1 -> {LAUNCHER}:4: server `python3 -m sglang.launch_server --model-path "
        "org/qwen3.5 --tp 8 --mem-fraction-static 0.9` (was server `python3 -m sglang.launch_server --model-path "
        f"org/qwen3.5 --tp 8 --mem-fraction-static 0.8` at {LAUNCHER}:4)"]}


def test_a_helper_sourced_through_an_array_path_affects_the_point_that_runs_it():
    got = affected(tree(ARRAY_LAUNCHER), {HELPER: "export MEM_FRACTION=0.9\n"})
    assert list(got) == ["qwen3.5-fp8-mi355x-sglang"]


def test_a_change_the_launch_does_not_see_affects_nothing():
    # The helper's change leaves the served command as it was: the trace says so.
    assert affected(tree(PRINTF_LAUNCHER), {HELPER: "export MEM_FRACTION=0.8  # the default\n"}) == {}
    # Another framework's helper: the built path never names it, the trace never reads it.
    base = dict(tree(PRINTF_LAUNCHER), **{"benchmarks/single_node/helpers/vllm_env.sh": "export X=1\n"})
    assert affected(base, {"benchmarks/single_node/helpers/vllm_env.sh": "export X=2\n"}) == {}


def test_without_the_trace_the_textual_rule_alone_misses_it():
    # What the probe adds: the reach rule alone does not see the helper (policy trace_affected off).
    assert affected(tree(PRINTF_LAUNCHER), {HELPER: "export MEM_FRACTION=0.9\n"}, trace_affected=False) == {}


RUNNER = """\
#!/usr/bin/env bash
docker run --rm -v "$GITHUB_WORKSPACE":/workspace -w /workspace "$IMAGE" \\
    bash benchmarks/single_node/${SCENARIO_SUBDIR}${EXP_NAME%%_*}_${PRECISION}_mi355x.sh
"""


def test_a_script_the_runner_builds_the_name_of_affects_the_point_that_runs_it():
    # The MTP point's own launcher is `..._mtp.sh`, but the runner builds the name without the
    # suffix: the point runs the plain script, and a change there changes what it serves.
    plain = "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_mi355x.sh"
    base = {
        MASTER: single_node_entry("qwen3.5-fp8-mi355x-sglang-mtp", image="lmsysorg/sglang:v0.5.12-rocm700-mi35x",
                                  model="org/qwen3.5", prefix="qwen3.5", runner="mi355x", precision="fp8",
                                  framework="sglang", isl=1024, osl=1024, arm="tp: 8, conc-start: 4, conc-end: 8, spec-decoding: mtp"),
        "configs/runners.yaml": "labels:\n  mi355x:\n    - mi355x-amds_0\n",
        "runners/launch_mi355x-amds.sh": RUNNER,
        plain: "python3 -m sglang.launch_server --model-path $MODEL --tp 8\n",
        "benchmarks/single_node/fixed_seq_len/qwen3.5_fp8_mi355x_mtp.sh":
            "python3 -m sglang.launch_server --model-path $MODEL --tp 8 --speculative-algorithm EAGLE\n",
    }
    got = affected(base, {plain: "python3 -m sglang.launch_server --model-path $MODEL --tp 4\n"})
    assert list(got) == ["qwen3.5-fp8-mi355x-sglang-mtp"]
    assert "--tp 4" in got["qwen3.5-fp8-mi355x-sglang-mtp"][-1]


def test_an_argument_file_a_launcher_reads_with_cat_affects_the_point():
    # Not a script: the textual path never holds it; its name in the launcher's code makes the
    # point probed, and the trace reads it.
    args = "benchmarks/single_node/fixed_seq_len/qwen3.5_args.txt"
    launcher = 'ARGS=$(cat "$(dirname "$0")/qwen3.5_args.txt")\npython3 -m sglang.launch_server --model-path $MODEL $ARGS\n'
    base = dict(tree(launcher), **{args: "--tp 8\n"})
    got = affected(base, {args: "--tp 4\n"})
    assert list(got) == ["qwen3.5-fp8-mi355x-sglang"]
    assert got["qwen3.5-fp8-mi355x-sglang"][0].endswith(f"`cat /infmax-workspace/{args}` ({args} it reads changed)")
    # A text file no script names is read by no launch: nothing is probed, nothing affected.
    notes = "benchmarks/single_node/fixed_seq_len/notes.txt"
    assert affected(dict(base, **{notes: "a\n"}), {notes: "b\n"}) == {}


def test_the_probes_leave_the_reserve_of_the_budget_to_the_checks(monkeypatch):
    # A probe only might find a point; the checks must trace the points the PR surely changed
    # (#2158 lost its own new point's trace to probes). With the reserve the whole budget, the
    # probe spends nothing and is skipped; with none, the same probe finds the point.
    import recipes.launch.path.trace_affected as ta

    monkeypatch.setattr(ta, "PROBE_RESERVE", ta.TRACE_BUDGET_STEPS)
    assert affected(tree(PRINTF_LAUNCHER), {HELPER: "export MEM_FRACTION=0.9\n"}) == {}
    monkeypatch.setattr(ta, "PROBE_RESERVE", 0)
    assert list(affected(tree(PRINTF_LAUNCHER), {HELPER: "export MEM_FRACTION=0.9\n"})) == ["qwen3.5-fp8-mi355x-sglang"]


def test_the_probes_the_spent_budget_skips_are_logged_once(monkeypatch, caplog):
    # Both launchers build the helper's path: two probes, both past the budget. A PR that
    # reaches thousands of points logged one identical line per point.
    import recipes.launch.path.trace_affected as ta

    monkeypatch.setattr(ta, "PROBE_RESERVE", ta.TRACE_BUDGET_STEPS)
    base = dict(tree(PRINTF_LAUNCHER), **{OTHER: PRINTF_LAUNCHER.replace("sglang.launch_server", "vllm.entrypoints.openai.api_server")})
    with caplog.at_level("WARNING", logger=ta.__name__):
        assert affected(base, {HELPER: "export MEM_FRACTION=0.9\n"}) == {}
    skipped = [r for r in caplog.records if r.name == ta.__name__ and "not traced" in r.getMessage()]
    assert len(skipped) == 1 and "later probes of this review are skipped" in skipped[0].getMessage()


def _base_runs(head: dict[str, str], base: dict[str, str]) -> tuple[dict[str, list[str]], int]:
    """The affected points and how many launches the base tracer interpreted."""
    from recipes.launch.path.trace_affected import tracer

    ctx = ReviewContext(build_snapshot(base=base, head=head))
    got = {p.config_key: p.reasons for p in ctx.affected.points}
    return got, tracer(ctx, "base").runs


def test_a_probe_whose_head_trace_reads_no_changed_file_does_not_trace_the_base():
    # Both runs read the same files until one reads a file the trees hold differently, and that
    # would be a changed file the head reads: the base trace is the head's, not made again.
    vllm_env = "benchmarks/single_node/helpers/vllm_env.sh"
    base = dict(tree(PRINTF_LAUNCHER), **{vllm_env: "export X=1\n"})
    got, runs = _base_runs({vllm_env: "export X=2\n"}, base)
    assert got == {} and runs == 0
    # A changed file the head reads is compared with the base as before.
    got, runs = _base_runs({HELPER: "export MEM_FRACTION=0.9\n"}, tree(PRINTF_LAUNCHER))
    assert list(got) == ["qwen3.5-fp8-mi355x-sglang"] and runs > 0


def test_a_file_gone_from_a_folder_the_head_tests_is_found_in_the_base_trace():
    # The head finds no `extra` folder and reads nothing in it; the base sourced the file the PR
    # deleted from it. The head's test of the folder is what ties it: the base is traced.
    extra = "benchmarks/single_node/helpers/extra/tuning.sh"
    launcher = ('d="$(dirname "$0")/../helpers/extra"\nif [ -d "$d" ]; then source "$d/tuning.sh"; fi\n'
                'python3 -m sglang.launch_server --model-path "$MODEL" --tp 8 --mem-fraction-static "${MEM:-0.8}"\n')
    base = dict(tree(launcher), **{extra: "MEM=0.5\n"})
    got, runs = _base_runs({extra: None}, base)
    assert list(got) == ["qwen3.5-fp8-mi355x-sglang"] and runs > 0
