"""The affected-point rule: a point is affected only through its launch path (recipes.launch.path.launch_path, the
textual reach rule), and, when only files other points share reach it, only when its interpreted
trace changed (recipes.launch.path.trace_affected): the first difference is then its reason."""
from __future__ import annotations

from tests.builders import build_snapshot, single_node_entry
from checks.context import ReviewContext
from recipes.launch.path.serving import serving_views

MASTER = "configs/amd-master.yaml"
LIB = "benchmarks/benchmark_lib.sh"
A = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x_sglang.sh"
B = "benchmarks/single_node/fixed_seq_len/gptoss_fp4_mi355x_vllm.sh"


def entry(key: str, prefix: str, precision: str, framework: str) -> str:
    return single_node_entry(key, image="lmsysorg/sglang:v0.5.12-rocm700-mi35x", model=f"org/{prefix}", prefix=prefix,
                             runner="mi355x", precision=precision, framework=framework, isl=1024, osl=1024,
                             arm="tp: 8, conc-start: 4, conc-end: 8")


LIB_TEXT = """\
#!/usr/bin/env bash
# Shared helpers: run_benchmark_serving, run_eval.
export PORT=${PORT:-8888}

run_benchmark_serving() {
    python3 utils/bench_serving/benchmark_serving.py --port "$PORT" "$@"
}

run_eval() {
    lm_eval --model local-completions --tasks gsm8k
}
"""

A_TEXT = """\
#!/usr/bin/env bash
source "$(dirname "$0")/../../benchmark_lib.sh"
python3 -m sglang.launch_server --model-path $MODEL --tp 8 &
run_benchmark_serving --max-concurrency $CONC
if [ "${RUN_EVAL}" = "true" ]; then
    run_eval
fi
"""

# B mentions benchmark_lib.sh only in a comment and an echo: it does not run it.
B_TEXT = """\
#!/usr/bin/env bash
# Unlike the sglang launchers this one does not use benchmark_lib.sh.
echo "benchmark_lib.sh not needed"
vllm serve $MODEL --tensor-parallel-size 8
"""


def base_tree() -> dict[str, str]:
    return {
        MASTER: entry("dsr1-fp8-mi355x-sglang", "dsr1", "fp8", "sglang")
        + entry("gptoss-fp4-mi355x-vllm", "gptoss", "fp4", "vllm"),
        LIB: LIB_TEXT, A: A_TEXT, B: B_TEXT,
    }


def affected(head: dict[str, str]) -> dict[str, list[str]]:
    snap = build_snapshot(base=base_tree(), head=head)
    return {p.config_key: p.reasons for p in ReviewContext(snap).affected.points}


def scopes(head: dict[str, str], tree: dict[str, str] | None = None) -> dict[str, str]:
    snap = build_snapshot(base=tree or base_tree(), head=head)
    return {p.config_key: p.scope for p in ReviewContext(snap).affected.points}


def test_changed_library_function_affects_its_callers_only():
    head = {LIB: LIB_TEXT.replace("--tasks gsm8k", "--tasks gsm8k,mmlu")}
    got = affected(head)
    assert set(got) == {"dsr1-fp8-mi355x-sglang"}  # B only mentions the file
    # `run_eval` starts lm_eval, the eval client: only what the client runs changed.
    (reason,) = got["dsr1-fp8-mi355x-sglang"]
    assert reason.startswith(f"what its benchmark client runs changed at runner:1 -> {A}:6 -> fn run_eval -> {LIB}:10")
    assert "--tasks gsm8k,mmlu" in reason and "(was client `lm_eval --model local-completions --tasks gsm8k`" in reason
    assert scopes(head) == {"dsr1-fp8-mi355x-sglang": "client"}


def test_function_nobody_calls_affects_nothing():
    head = {LIB: LIB_TEXT + "\nunused_helper() {\n    echo hi\n}\n"}
    assert affected(head) == {}


def test_comment_only_change_affects_nothing():
    head = {LIB: LIB_TEXT.replace("# Shared helpers", "# Shared bash helpers")}
    assert affected(head) == {}


def test_top_level_change_affects_every_caller():
    head = {LIB: LIB_TEXT.replace("PORT:-8888", "PORT:-9999")}
    got = affected(head)
    assert set(got) == {"dsr1-fp8-mi355x-sglang"}
    # The library exports PORT before the launcher starts its server: the server's environment.
    assert got["dsr1-fp8-mi355x-sglang"] == [
        f"what it runs changed at runner:1 -> {A}:3: server `python3 -m sglang.launch_server --model-path org/dsr1 "
        "--tp 8` with PORT=9999 (was 8888)"]


def test_launcher_run_through_bash_and_variables():
    helper = "benchmarks/single_node/fixed_seq_len/common/env.sh"
    b_text = 'SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"\nbash "$SCRIPT_DIR/common/env.sh"\n' + B_TEXT
    tree = base_tree()
    tree.update({B: b_text, helper: "export VLLM_USE_V1=1\n"})
    snap = build_snapshot(base=tree, head={helper: "export VLLM_USE_V1=0\n"})
    # `bash env.sh` runs it in a child shell: its export never reaches the launcher's server, so
    # what the point runs is the same (the textual rule alone said affected).
    assert ReviewContext(snap).affected.points == []
    sourced = tree | {B: b_text.replace('bash "$SCRIPT_DIR', 'source "$SCRIPT_DIR')}
    snap = build_snapshot(base=sourced, head={helper: "export VLLM_USE_V1=0\n"})
    got = {p.config_key: p.reasons for p in ReviewContext(snap).affected.points}
    assert list(got) == ["gptoss-fp4-mi355x-vllm"] and got["gptoss-fp4-mi355x-vllm"][0].endswith(
        "with VLLM_USE_V1=0 (was 1)")


def test_runner_script_change_affects_points_of_its_nodes():
    tree = base_tree()
    tree["configs/runners.yaml"] = "labels:\n  mi355x:\n    - mi355x-amds_0\n    - mi355x-amds_1\n  b200:\n    - b200-nb_0\n"
    run = 'docker run --rm {opts}-v "$GITHUB_WORKSPACE":/workspace -w /workspace $IMAGE bash benchmarks/{script}\n'
    tree["runners/launch_mi355x-amds.sh"] = run.format(opts="", script="x.sh")
    tree["runners/launch_b200-nb.sh"] = run.format(opts="", script="y.sh")
    tree["benchmarks/x.sh"] = "vllm serve $MODEL --tensor-parallel-size 8\n"
    tree["benchmarks/z.sh"] = "vllm serve $MODEL --tensor-parallel-size 4\n"
    # A container option that changes nothing the server sees: the same trace.
    snap = build_snapshot(base=tree, head={"runners/launch_mi355x-amds.sh": run.format(opts="--ipc=host ", script="x.sh")})
    assert ReviewContext(snap).affected.points == []
    # Another script: what both points of the runner's label run changed.
    snap = build_snapshot(base=tree, head={"runners/launch_mi355x-amds.sh": run.format(opts="", script="z.sh")})
    got = {p.config_key: p.reasons for p in ReviewContext(snap).affected.points}
    assert set(got) == {"dsr1-fp8-mi355x-sglang", "gptoss-fp4-mi355x-vllm"}
    assert got["gptoss-fp4-mi355x-vllm"] == [
        "what it runs changed at sweep job:1 -> runners/launch_mi355x-amds.sh:1: starts container "
        "lmsysorg/sglang:v0.5.12-rocm700-mi35x running `bash benchmarks/z.sh` (was starts container "
        "lmsysorg/sglang:v0.5.12-rocm700-mi35x running `bash benchmarks/x.sh` at runners/launch_mi355x-amds.sh:1)"]
    snap = build_snapshot(base=tree, head={"runners/launch_b200-nb.sh": "echo changed\n"})
    assert ReviewContext(snap).affected.points == []


def test_check_10_reads_only_functions_the_path_calls():
    # A patch inside a library function the launcher never calls is not on the launch path.
    lib = LIB_TEXT + "\napply_fix() {\n    git -C /sgl-workspace/sglang apply /tmp/fix.patch\n}\n"
    tree = base_tree()
    tree[LIB] = lib
    snap = build_snapshot(base=tree, head={A: A_TEXT + "echo done\n"})
    ctx = ReviewContext(snap)
    view = serving_views(ctx)[0]
    lib_use = next(u for u in view.scripts if u.path == LIB)
    assert lib_use.executed == frozenset({"run_benchmark_serving", "run_eval"})
    assert [p.function for p in lib_use.analysis.patches] == ["apply_fix"] and lib_use.patches == []
    # Once the launcher calls it, the same patch is on the path.
    snap = build_snapshot(base=tree, head={A: A_TEXT + "apply_fix\n"})
    view = serving_views(ReviewContext(snap))[0]
    lib_use = next(u for u in view.scripts if u.path == LIB)
    assert [p.line for p in lib_use.patches] == [14]


def test_old_era_launcher_directly_under_single_node():
    # Before benchmarks/single_node/fixed_seq_len/ existed, launchers sat in single_node/ itself.
    old = "benchmarks/single_node/dsr1_fp8_mi355x.sh"
    tree = {MASTER: entry("dsr1-fp8-mi355x-sglang", "dsr1", "fp8", "sglang"), old: A_TEXT}
    snap = build_snapshot(base=tree, head={old: A_TEXT.replace("--tp 8", "--tp 4")})
    ctx = ReviewContext(snap)
    points = ctx.affected.points
    assert [p.point.conc for p in points] == [4, 8]
    assert all(p.point.launcher.path == old and p.reasons == [f"{old} changed"] for p in points)
    assert all(v.unavailable is None for v in serving_views(ctx))


def test_entry_over_the_point_cap_is_unverifiable_fast():
    import time

    from checks.engine import evaluate

    conc = ", ".join(str(i) for i in range(1, 20_002))
    huge = entry("dsr1-fp8-mi355x-sglang", "dsr1", "fp8", "sglang").replace(
        "{ tp: 8, conc-start: 4, conc-end: 8 }", f"{{ tp: 8, conc-list: [{conc}] }}")
    t0 = time.perf_counter()
    snap = build_snapshot(base=base_tree(), head={MASTER: huge + entry("gptoss-fp4-mi355x-vllm", "gptoss", "fp4", "vllm")})
    verdict = evaluate(snap, only={8, 10})
    assert time.perf_counter() - t0 < 2.0
    rows = {r.number: r for r in verdict.rows}
    for n in (8, 10):
        assert rows[n].status == "FAIL"
        assert "could not verify: entry dsr1-fp8-mi355x-sglang expands to 20,001 benchmark points" in rows[n].reason


def test_opaque_code_only_counts_when_the_path_runs_it():
    lib = LIB_TEXT + '\nbootstrap() {\n    curl -sSL https://example.com/x.sh | bash\n}\n'
    tree = base_tree()
    tree[LIB] = lib
    snap = build_snapshot(base=tree, head={A: A_TEXT + "echo done\n"})
    assert all(v.script_gap is None for v in serving_views(ReviewContext(snap)))
    snap = build_snapshot(base=tree, head={A: A_TEXT + "bootstrap\n"})
    view = serving_views(ReviewContext(snap))[0]
    assert view.script_gap.startswith(f"could not verify: could not read what line 14 of {LIB} runs")


def test_check_9_reads_a_library_functions_own_chat_flag_as_the_launcher_calls_it():
    from checks.check_09_spec_decode_chat_template import client_use

    lib = LIB_TEXT.replace('''run_benchmark_serving() {
    python3 utils/bench_serving/benchmark_serving.py --port "$PORT" "$@"
}''', '''run_benchmark_serving() {
    local cmd=(python3 utils/bench_serving/benchmark_serving.py --port "$PORT")
    if [[ "$1" == --chat ]]; then
        cmd+=(--use-chat-template)
    fi
    "${cmd[@]}"
}''')
    tree = base_tree()
    tree[LIB] = lib
    snap = build_snapshot(base=tree, head={A: A_TEXT + "echo done\\n"})
    ctx = ReviewContext(snap)
    use = client_use(ctx, serving_views(ctx)[0])
    assert use.state == "off" and f"{A}:4 -> fn run_benchmark_serving -> {LIB}:" in use.where  # never `--chat`
    # A flag the helper drops ("$@" is not passed on) never reaches the client.
    snap = build_snapshot(base=tree, head={A: A_TEXT.replace("--max-concurrency $CONC", "--max-concurrency $CONC --use-chat-template")})
    ctx = ReviewContext(snap)
    assert client_use(ctx, serving_views(ctx)[0]).state == "off"
    snap = build_snapshot(base=tree, head={A: A_TEXT.replace("run_benchmark_serving --max", "run_benchmark_serving --chat --max")})
    ctx = ReviewContext(snap)
    assert client_use(ctx, serving_views(ctx)[0]).state == "on"


def test_runner_branch_that_does_not_select_the_point_affects_nothing():
    runner = """\
#!/usr/bin/env bash
export HF_HUB_CACHE=/mnt/hf
if [[ "$IS_MULTINODE" == "true" ]]; then
    srtctl apply -f "$CONFIG_FILE"
else
    if [[ $FRAMEWORK == "vllm" ]]; then
        export VLLM_FLAG=1
    fi
    docker run --rm -e VLLM_FLAG -v "$GITHUB_WORKSPACE":/workspace -w /workspace "$IMAGE" bash "benchmarks/single_node/${EXP_NAME%%_*}.sh"
fi
"""
    tree = base_tree()
    tree["configs/runners.yaml"] = "labels:\n  mi355x:\n    - mi355x-amds_0\n"
    tree["runners/launch_mi355x-amds.sh"] = runner
    tree["benchmarks/single_node/dsr1.sh"] = tree["benchmarks/single_node/gptoss.sh"] = 'vllm serve "$MODEL"\n'
    r = "runners/launch_mi355x-amds.sh"
    # Only the multi-node branch changes: no single-node point takes it.
    snap = build_snapshot(base=tree, head={r: runner.replace('srtctl apply -f', 'srtctl apply --verbose -f')})
    assert ReviewContext(snap).affected.points == []
    # The vLLM-only branch: only the vLLM point.
    snap = build_snapshot(base=tree, head={r: runner.replace("VLLM_FLAG=1", "VLLM_FLAG=2")})
    got = {p.config_key: p.reasons for p in ReviewContext(snap).affected.points}
    assert list(got) == ["gptoss-fp4-mi355x-vllm"] and got["gptoss-fp4-mi355x-vllm"][0].endswith(
        "with VLLM_FLAG=2 (was 1)")
    # A container option nothing inside sees: no point; a changed test line: both points,
    # the flag now set for the one and no longer for the other.
    snap = build_snapshot(base=tree, head={r: runner.replace("docker run --rm", "docker run --rm --ipc=host")})
    assert ReviewContext(snap).affected.points == []
    snap = build_snapshot(base=tree, head={r: runner.replace('$FRAMEWORK == "vllm"', '$FRAMEWORK == "sglang"')})
    assert {p.config_key for p in ReviewContext(snap).affected.points} == {
        "dsr1-fp8-mi355x-sglang", "gptoss-fp4-mi355x-vllm"}


def test_a_test_line_inside_a_branch_the_point_does_not_take_affects_nothing():
    # #2362 (6b6d4c82c2) added an `elif` to the model chain inside launch_b300-nv.sh's
    # multi-node branch: a test line no command covers, but it runs only when that branch does.
    runner = """\
#!/usr/bin/env bash
if [[ "$IS_MULTINODE" == "true" ]]; then
if [[ $MODEL_PREFIX == "dsr1" ]]; then
    export MODEL_PATH=/data/dsr1
else
    echo "Unsupported model: $MODEL_PREFIX"
    exit 1
fi
    srtctl apply -f "$CONFIG_FILE"
else
    docker run --rm "$IMAGE" bash "benchmarks/single_node/${EXP_NAME%%_*}.sh"
fi
"""
    tree = base_tree()
    tree["configs/runners.yaml"] = "labels:\n  mi355x:\n    - mi355x-amds_0\n"
    r = "runners/launch_mi355x-amds.sh"
    tree[r] = runner
    head = runner.replace('else\n    echo "Unsupported', 'elif [[ $MODEL_PREFIX == "dsv4" ]]; then\n'
                          '    export MODEL_PATH=/data/dsv4\nelse\n    echo "Unsupported')
    assert head != runner
    snap = build_snapshot(base=tree, head={r: head})
    assert ReviewContext(snap).affected.points == []
    # The same test line at the top level decides a branch of every point.
    top = runner.replace('if [[ "$IS_MULTINODE" == "true" ]]; then\n', 'if [[ "$IS_MULTINODE" == "true" ]] || [[ -n "$X" ]]; then\n')
    snap = build_snapshot(base=tree, head={r: top})
    assert {p.config_key for p in ReviewContext(snap).affected.points} == {"dsr1-fp8-mi355x-sglang", "gptoss-fp4-mi355x-vllm"}


def test_check_9_counts_a_substitution_that_prints_the_flag():
    from checks.check_09_spec_decode_chat_template import client_use

    # The substitution passes the flag exactly when the launcher's array is non-empty.
    text = A_TEXT.replace("python3 -m sglang", "SPEC_ARGS=(--speculative-algorithm EAGLE)\npython3 -m sglang").replace(
        "--max-concurrency $CONC", '--max-concurrency $CONC $( [[ ${#SPEC_ARGS[@]} -gt 0 ]] && echo "--use-chat-template" )')
    snap = build_snapshot(base=base_tree(), head={A: text})
    ctx = ReviewContext(snap)
    use = client_use(ctx, serving_views(ctx)[0])
    assert use.state == "on" and f"{A}:5 -> fn run_benchmark_serving" in use.where
    snap = build_snapshot(base=base_tree(), head={A: text.replace("SPEC_ARGS=(--speculative-algorithm EAGLE)", "SPEC_ARGS=()")})
    ctx = ReviewContext(snap)
    assert client_use(ctx, serving_views(ctx)[0]).state == "off"


def test_points_of_one_script_launcher_and_runner_share_their_roots():
    import recipes.launch.path.launch_path as lp

    ctx = ReviewContext(build_snapshot(base=base_tree(), head={LIB: LIB_TEXT + "# x\n"}))
    points = {}
    for p in ctx.head_repo.points:
        points.setdefault(p.config_key, []).append(p)
    a1, a2 = points["dsr1-fp8-mi355x-sglang"][:2]
    (b1,) = points["gptoss-fp4-mi355x-vllm"][:1]
    assert a1.conc != a2.conc and a1.launcher.path == a2.launcher.path == A
    names, shared = {"benchmark_lib.sh", A.rsplit("/", 1)[-1], B.rsplit("/", 1)[-1]}, {}
    first = lp.affected_roots(ctx, a1, names, shared)
    assert lp.affected_roots(ctx, a2, names, shared) is first
    assert [f for f, _ in first.files] == [A]
    assert [f for f, _ in lp.affected_roots(ctx, b1, names, shared).files] == [B]
    assert len(shared) == 2


def test_changed_library_function_called_through_a_helper_still_affects_the_point():
    # The launcher never names the changed function: a helper it sources wraps it.
    helper = "benchmarks/single_node/fixed_seq_len/common/evals.sh"
    tree = base_tree()
    tree[helper] = "#!/usr/bin/env bash\nmaybe_eval() {\n    run_eval\n}\n"
    tree[B] = ('#!/usr/bin/env bash\nsource "$(dirname "$0")/../../benchmark_lib.sh"\n'
               'source "$(dirname "$0")/common/evals.sh"\nvllm serve $MODEL &\nmaybe_eval\n')
    snap = build_snapshot(base=tree, head={LIB: LIB_TEXT.replace("--tasks gsm8k", "--tasks gsm8k,mmlu")})
    got = {p.config_key: p.reasons for p in ReviewContext(snap).affected.points}
    assert set(got) == {"dsr1-fp8-mi355x-sglang", "gptoss-fp4-mi355x-vllm"}
    assert got["gptoss-fp4-mi355x-vllm"][0].startswith(
        f"what its benchmark client runs changed at runner:1 -> {B}:5 -> fn maybe_eval -> {helper}:3 -> fn run_eval -> {LIB}:10")


def test_a_function_name_glued_from_a_variable_still_reaches_the_changed_function():
    # `run_${what}` with what=eval calls run_eval: the name filter must keep the launcher.
    tree = base_tree()
    tree[B] = ('#!/usr/bin/env bash\nsource "$(dirname "$0")/../../benchmark_lib.sh"\n'
               'what=eval\nvllm serve $MODEL &\nrun_${what}\n')
    snap = build_snapshot(base=tree, head={LIB: LIB_TEXT.replace("--tasks gsm8k", "--tasks gsm8k,mmlu")})
    got = {p.config_key: p.reasons for p in ReviewContext(snap).affected.points}
    assert got["gptoss-fp4-mi355x-vllm"][0].startswith(
        f"what its benchmark client runs changed at runner:1 -> {B}:5 -> fn run_eval -> {LIB}:10"), got


def test_past_the_trace_budget_a_point_keeps_the_reach_rules_answer(monkeypatch):
    import recipes.launch.path.trace_affected as ta

    monkeypatch.setattr(ta, "TRACE_BUDGET_STEPS", 0)
    got = affected({LIB: LIB_TEXT.replace("# Shared helpers", "# Shared bash helpers").replace(
        "PORT:-8888", "PORT:-8888}${EMPTY:-")})
    # The reach rule's reason stays, and the row says the trace was not made (never dropped).
    assert got == {"dsr1-fp8-mi355x-sglang": [
        f"benchmark_lib.sh: top-level code changed (run by {A})",
        "not traced: the review's 0 interpreter steps were spent"]}


def test_the_points_the_pr_surely_changes_are_traced_before_the_re_judged_ones(monkeypatch):
    # One interpretation fits the budget: it goes to dsr1, whose own entry changed, not to
    # gptoss, affected only through the shared helper (re-judging it first would leave dsr1,
    # the point the PR is about, untraced for the checks).
    import recipes.launch.path.trace_affected as ta
    from recipes.launch.point import Budget

    tree = base_tree()
    tree[B] = A_TEXT.replace("python3 -m sglang.launch_server --model-path", "vllm serve")
    master = tree[MASTER].replace("conc-end: 8", "conc-end: 16", 1)
    head = {MASTER: master, LIB: LIB_TEXT.replace("8888", "8889")}
    sizing = ReviewContext(build_snapshot(base=tree, head=head))
    dsr1 = next(p for p in sizing.head_repo.points if p.config_key == "dsr1-fp8-mi355x-sglang")
    assert ta.head_trace(sizing, dsr1) is not None
    one = sizing.memo(ta.MEMO_BUDGET, lambda: Budget(0)).spent  # the steps of dsr1's one trace
    monkeypatch.setattr(ta, "TRACE_BUDGET_STEPS", one)
    ctx = ReviewContext(build_snapshot(base=tree, head=head))
    got = {p.config_key: p.reasons for p in ctx.affected.points}
    assert got["gptoss-fp4-mi355x-vllm"][-1] == f"not traced: the review's {one:,} interpreter steps were spent"
    assert ta.head_trace(ctx, dsr1) is not None


def test_a_trace_stops_where_the_budget_ends_and_is_not_made(monkeypatch):
    # A budget one step short of dsr1's trace: the interpretation stops there (a review never
    # spends more than its budget), and the trace is not made, as when the budget is spent before.
    import recipes.launch.path.trace_affected as ta
    from recipes.launch.point import RUN_COST, Budget

    head = {MASTER: base_tree()[MASTER].replace("conc-end: 8", "conc-end: 16", 1)}
    sizing = ReviewContext(build_snapshot(base=base_tree(), head=head))
    dsr1 = next(p for p in sizing.head_repo.points if p.config_key == "dsr1-fp8-mi355x-sglang")
    assert ta.head_trace(sizing, dsr1) is not None
    one = sizing.memo(ta.MEMO_BUDGET, lambda: Budget(0)).spent
    monkeypatch.setattr(ta, "TRACE_BUDGET_STEPS", one - RUN_COST - 1)
    ctx = ReviewContext(build_snapshot(base=base_tree(), head=head))
    assert ta.head_trace(ctx, dsr1) is None
    budget = ctx.memo(ta.MEMO_BUDGET, lambda: Budget(0))
    assert budget.steps < budget.spent <= budget.steps + 1 + RUN_COST  # the step that crossed it
    # A caller that leaves steps to others stops where they begin.
    monkeypatch.setattr(ta, "TRACE_BUDGET_STEPS", one + 500)
    ctx = ReviewContext(build_snapshot(base=base_tree(), head=head))
    assert ta.head_trace(ctx, dsr1, leave=501 + RUN_COST) is None
    assert ctx.memo(ta.MEMO_BUDGET, lambda: Budget(0)).spent <= one + 500 - (501 + RUN_COST) + 1 + RUN_COST
    monkeypatch.setattr(ta, "TRACE_BUDGET_STEPS", one + 500)
    ctx = ReviewContext(build_snapshot(base=base_tree(), head=head))
    assert ta.head_trace(ctx, dsr1, leave=499 - RUN_COST) is not None  # what it leaves still fits it


def test_re_judging_the_candidates_leaves_the_checks_reserve(monkeypatch):
    # With the reserve the whole budget, no candidate is re-judged: each keeps the reach rule's
    # reason and says it was not traced (the checks get what is left).
    import recipes.launch.path.trace_affected as ta

    monkeypatch.setattr(ta, "CHECK_RESERVE", ta.TRACE_BUDGET_STEPS)
    got = affected({LIB: LIB_TEXT.replace("# Shared helpers", "# Shared bash helpers").replace(
        "PORT:-8888", "PORT:-8888}${EMPTY:-")})
    assert got["dsr1-fp8-mi355x-sglang"][-1] == f"not traced: the review's {ta.TRACE_BUDGET_STEPS:,} interpreter steps were spent"


def test_a_trusted_installer_s_download_on_the_path_does_not_keep_the_point_affected():
    # A runs uv's installer (policy `trusted_installers`) through the shared library: the unknown
    # that download leaves is the installer's, so the trace still decides the point (the same rule
    # as Check 10's, recipes.launch.compare.hides_code); any other download keeps the reach rule's answer.
    def tree(url: str) -> dict[str, str]:
        out = base_tree()
        out[LIB] = LIB_TEXT + f"\nensure_uv() {{\n    curl -LsSf {url} | sh\n}}\n"
        out[A] = A_TEXT.replace("source \"$(dirname \"$0\")/../../benchmark_lib.sh\"\n",
                                "source \"$(dirname \"$0\")/../../benchmark_lib.sh\"\nensure_uv\n")
        return out

    for url, kept in (("https://astral.sh/uv/install.sh", False), ("https://example.com/install.sh", True)):
        base = tree(url)
        head = {LIB: base[LIB].replace("export PORT", "BANNER=shared\nexport PORT")}  # read by nothing
        got = {p.config_key: p.reasons for p in ReviewContext(build_snapshot(base=base, head=head)).affected.points}
        if not kept:
            assert got == {}, got
        else:
            assert list(got) == ["dsr1-fp8-mi355x-sglang"], got
            assert "runs shell code from its input" in got["dsr1-fp8-mi355x-sglang"][-1], got
