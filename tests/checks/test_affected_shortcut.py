"""The affected rule's shortcut (recipes.launch.path.trace_affected.unreached): a point reached only through a
shared file is not affected, without tracing the base, when its head trace ran none of what the
PR changed (recipes.launch.reached); any doubt compares the base and head traces as before."""
from __future__ import annotations

from checks.context import ReviewContext
from recipes.launch.path.trace_affected import MEMO_SHORTCUT, tracer
from recipes.launch.reached import Hunk, hunks, reached, same_skeleton
from tests.builders import build_snapshot
from tests.checks.test_affected import base_tree

R = "runners/launch_mi355x-amds.sh"
DSR1, GPTOSS = "dsr1-fp8-mi355x-sglang", "gptoss-fp4-mi355x-vllm"

RUNNER = """\
#!/usr/bin/env bash
pick_path() {
    export MODEL_PATH=/data/other
}
if [[ $MODEL_PREFIX == "dsr1" ]]; then
    export X=1
    export Y=1
elif [[ $MODEL_PREFIX == "kimi" ]]; then
    export X=3
    pick_path
else
    export X=2
fi
docker run --rm -e X -e Y -e MODEL_PATH -v "$GITHUB_WORKSPACE":/workspace -w /workspace "$IMAGE" bash "benchmarks/single_node/${EXP_NAME%%_*}.sh"
"""


def review(head_runner: str, extra: dict[str, str] | None = None, head_extra: dict[str, str] | None = None):
    tree = base_tree()
    tree["configs/runners.yaml"] = "labels:\n  mi355x:\n    - mi355x-amds_0\n"
    tree[R] = RUNNER
    tree["benchmarks/single_node/dsr1.sh"] = tree["benchmarks/single_node/gptoss.sh"] = 'vllm serve "$MODEL"\n'
    tree.update(extra or {})
    ctx = ReviewContext(build_snapshot(base=tree, head={R: head_runner, **(head_extra or {})}))
    got = {p.config_key: p.reasons for p in ctx.affected.points}
    stats = dict(ctx.memo(MEMO_SHORTCUT, lambda: {"decided": 0, "compared": 0, "why": {}}))
    review.why = stats.pop("why")  # why each compared point was compared
    return got, stats, tracer(ctx, "base").runs


def test_a_change_inside_a_function_the_point_never_calls_needs_no_base_trace():
    got, stats, base_runs = review(RUNNER.replace("/data/other", "/data/elsewhere"))
    assert got == {}
    # Two points per entry (conc 4 and 8), none traced at the base.
    assert stats == {"decided": 4, "compared": 0} and base_runs == 0


def test_a_master_config_change_beside_it_does_not_stop_the_shortcut():
    # A PR adds an entry (its own points are affected by that) and edits a runner function the
    # other points never call: the master config gives each point its values, the head point's
    # in both traces, so it is no reason to trace the base.
    from tests.checks.test_affected import MASTER, entry

    master = base_tree()[MASTER] + entry("kimi-fp4-mi355x-vllm", "kimi", "fp4", "vllm")
    got, stats, base_runs = review(RUNNER.replace("/data/other", "/data/elsewhere"), head_extra={MASTER: master})
    assert set(got) == {"kimi-fp4-mi355x-vllm"}
    assert stats == {"decided": 4, "compared": 0} and base_runs == 0


def test_a_changed_workflow_template_is_compared():
    template = ".github/workflows/benchmark-tmpl.yml"
    env = "env:\n  IMAGE: ${{ inputs.image }}\n  EXP_NAME: ${{ inputs.exp-name }}\n  MODEL_PREFIX: ${{ inputs.model-prefix }}\n"
    got, stats, _ = review(RUNNER.replace("/data/other", "/data/elsewhere"),
                           extra={template: env}, head_extra={template: env + "  X_UNUSED: b\n"})
    assert stats["decided"] == 0 and stats["compared"] > 0
    assert review.why == {"a changed file the tracer reads": stats["compared"]}


def test_a_new_elif_arm_another_model_takes_needs_no_base_trace():
    head = RUNNER.replace("else\n    export X=2", 'elif [[ $MODEL_PREFIX == "dsv4" ]]; then\n    export X=4\nelse\n    export X=2')
    got, stats, base_runs = review(head)
    # dsr1 takes the first arm: the new test is never evaluated. gptoss reaches `else` through
    # it, so its traces are compared (and agree).
    assert got == {}
    assert stats == {"decided": 2, "compared": 2} and base_runs == 1


def test_the_same_change_when_the_point_takes_that_arm_is_compared_and_affected():
    head = RUNNER.replace("else\n    export X=2", 'elif [[ $MODEL_PREFIX == "gptoss" ]]; then\n    export X=4\nelse\n    export X=2')
    got, stats, _ = review(head)
    assert list(got) == [GPTOSS] and got[GPTOSS][0].endswith("with X=4 (was 2)")
    assert stats == {"decided": 2, "compared": 2}


def test_a_deleted_line_the_point_ran_is_compared_and_affected():
    got, stats, _ = review(RUNNER.replace("    export Y=1\n", ""))
    assert list(got) == [DSR1] and "Y" in got[DSR1][0]
    assert stats["compared"] >= 1


def test_a_changed_data_file_the_trace_reads_is_compared():
    flags = "benchmarks/single_node/flags"
    runner = RUNNER.replace("docker run", 'export Z="$(cat benchmarks/single_node/flags)"\ndocker run -e Z')
    got, stats, base_runs = review(runner, extra={flags: "a\n"}, head_extra={flags: "b\n"})
    assert stats["decided"] == 0 and base_runs >= 1
    assert set(got) == {DSR1, GPTOSS} and all("Z=b" in r[0] for r in got.values())


def test_executed_lines_record_what_ran():
    from recipes.launch.fs import Files
    from recipes.launch.shell import Interpreter

    class Src:
        def read(self, path):
            return None

        def list(self, path):
            return []

    text = RUNNER.replace("$MODEL_PREFIX ==", "$UNKNOWN_PREFIX ==", 1) + "pick_path\n"
    it = Interpreter(Files(Src()), inputs={"MODEL_PREFIX": "gptoss", "IMAGE": "img", "EXP_NAME": "gptoss_x"})
    it.run_top(text, "r.sh", it.initial_state())
    ran = it.executed["r.sh"]
    # Defining records the function's span apart; the call at the end runs the body's lines.
    assert {2, 3, 4, 15} <= ran and it.defined["r.sh"] == {(2, 4)}
    # The first test is undecided: both its arm and the rest of the chain ran; the `kimi` test
    # is decided (false), so its arm did not run.
    assert ran == {2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 14, 15}
    it = Interpreter(Files(Src()), inputs={"MODEL_PREFIX": "dsr1", "IMAGE": "img", "EXP_NAME": "dsr1_x"})
    it.run_top(RUNNER, "r.sh", it.initial_state())
    assert sorted(it.executed["r.sh"]) == [5, 6, 7, 13, 14] and it.defined["r.sh"] == {(2, 4)}


def test_reached_counts_the_lines_around_a_removal():
    head = "a\n# note\n\nb\nc\n"
    lines = head.splitlines()
    removal = Hunk(first=4, last=3, removes=True)   # a line removed between `# note`/blank and `b`
    assert reached(removal, {1}, lines) and reached(removal, {4}, lines)
    assert not reached(removal, {5}, lines)
    assert not reached(Hunk(4, 4, removes=False), {1, 5}, lines)   # an added line nobody ran
    assert reached(Hunk(6, 5, removes=True), {5}, lines + [""])     # removed at the end: anything ran
    assert hunks("a\nb\nc\n", "a\nc\n") == [Hunk(2, 1, True)]
    # Around a function nobody called: its header and end are reached only from outside.
    fn = "f() {\n  x\n}\ny\n".splitlines()
    assert not reached(Hunk(2, 2, removes=True), {4}, fn, {(1, 3)})   # its body's line changed
    assert reached(Hunk(1, 1, removes=False), set(), fn, {(1, 3)})     # its header changed
    assert reached(Hunk(4, 3, removes=True), set(), fn, {(1, 3)})      # removed after it


def test_a_change_that_moves_statements_fails_the_skeleton():
    base = "f() {\n  echo f\n}\nx=1\ny=2\n"
    assert same_skeleton(base, base.replace("x=1", "x=3"))
    assert same_skeleton(base, base.replace("y=2\n", "y=2\nz=3\n"))
    # Wrapping statements into a construct, or opening a quote that swallows them, changes it.
    assert not same_skeleton(base, base.replace("x=1\ny=2\n", "if a; then\nx=1\ny=2\nfi\n"))
    assert not same_skeleton(base, base.replace("  echo f\n", '  echo "f\n').replace("y=2", 'y=2"'))
    assert not same_skeleton(base, base + "if\n")  # does not parse


def test_shell_text_named_by_its_line_compares_without_the_line():
    # `bash -c TEXT` is a SOURCE effect named `FILE:LINE (shell text)`: lines added above it
    # moved the name, and the full comparison called the points of #1723's runner affected
    # (fa0f48326a: runners/launch_b200-dgxc.sh:431 became :436).
    from recipes.launch.compare import compare
    from recipes.launch.trace import SOURCE, Effect, Site

    def shell(line: int) -> Effect:
        return Effect(kind=SOURCE, site=Site(R, line), path=f"{R}:{line} (shell text)", how="shell text")

    assert compare([shell(431)], [shell(436)], lambda e: False) is None
    assert compare([shell(431)], [Effect(kind=SOURCE, site=Site(R, 436), path="other.sh", how="source")],
                   lambda e: False) is not None




def test_narrow_keeps_a_points_own_reasons_when_the_shortcut_drops_the_shared_ones():
    # `narrow` is given (index, number of own reasons); the review passes only points without
    # own reasons today, and this path once raised a NameError.
    from checks.context import AffectedPoint
    from recipes.launch.path.trace_affected import narrow

    tree = base_tree()
    tree["configs/runners.yaml"] = "labels:\n  mi355x:\n    - mi355x-amds_0\n"
    tree[R] = RUNNER
    tree["benchmarks/single_node/dsr1.sh"] = tree["benchmarks/single_node/gptoss.sh"] = 'vllm serve "$MODEL"\n'
    ctx = ReviewContext(build_snapshot(base=tree, head={R: RUNNER.replace("/data/other", "/data/elsewhere")}))
    point = next(p for p in ctx.head_repo.points if p.config_key == DSR1)
    own, shared = f"master-config entry {DSR1} changed", "launch_mi355x-amds.sh: `pick_path` changed"
    out = narrow(ctx, [AffectedPoint(point=point, reasons=[own, shared])], [(0, 1)])
    assert [(p.config_key, p.reasons) for p in out] == [(DSR1, [own])]
