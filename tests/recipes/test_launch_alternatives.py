"""Values an undecided branch leaves different keep their alternatives (recipes.launch.words
OneOf/OneOfRest): a command whose words hold them runs once per value, each run under the
choice, within caps past which the words are unknown as before."""
from __future__ import annotations

from recipes.launch.compare import NO_SERVER_MARK, compare, opaque
from recipes.launch.fs import WORKSPACE, Files
from recipes.launch.point import Tracer
from recipes.launch.alternatives import MAX_ALTERNATIVE_RUNS
from recipes.launch.shell import Interpreter
from recipes.launch.trace import EXEC, SERVER, UNKNOWN, Effect, Site
from recipes.launch.words import MAX_ALTERNATIVES, OneOf, OneOfRest, Unknown
from recipes.points import BenchmarkPoint
from recipes.source import MemorySource

AMD = BenchmarkPoint(config_key="dsr1-fp8-mi355x-sglang-disagg", scenario="fixed-seq-len", isl=8192, osl=1024,
                     tp=8, conc_list=[4, 8], runner="mi355x", framework="sglang-disagg", precision="fp8",
                     model="deepseek-ai/DeepSeek-R1-0528", model_prefix="dsr1", multinode=True, disagg=True,
                     workers={"prefill": {"num-worker": 1, "tp": 8}, "decode": {"num-worker": 1, "tp": 8}})

# The shape of InferenceX's AMD multi-node submit.sh: an exclude list read by Python on the
# submit host (not known), an option array only one arm fills, and the sbatch command built as
# an array around it.
SUBMIT = """\
NUM_NODES=2
EXCLUDE_OPT=()
NODE_EXCLUDES_YAML="$(dirname "$0")/node_excludes.yaml"
if [[ -f "$NODE_EXCLUDES_YAML" ]]; then
    RESOLVED_EXCLUDE_NODES=$(python3 -c "import yaml; print(yaml.safe_load(open('$NODE_EXCLUDES_YAML'))['x'])")
else
    RESOLVED_EXCLUDE_NODES=""
fi
if [[ -n "$RESOLVED_EXCLUDE_NODES" ]]; then
    EXCLUDE_OPT=(--exclude "$RESOLVED_EXCLUDE_NODES")
fi
sbatch_cmd=(
    sbatch
    --parsable
    -N "$NUM_NODES"
    "${EXCLUDE_OPT[@]}"
    --time 08:00:00
    "$(dirname "$0")/job.slurm"
)
JOB_ID=$("${sbatch_cmd[@]}")
echo "$JOB_ID"
"""

JOB = "python3 -m sglang.launch_server --model-path /models/dsr1 --port 30000\n"


def run(text, env=None, files=None, path="launch.sh"):
    it = Interpreter(Files(MemorySource({path: text, **(files or {})})), inputs=env or {})
    state = it.initial_state()
    state.argv0 = f"{WORKSPACE}/{path}"
    it.run_top(text, path, state)
    return it, state


def execs(it):
    return [" ".join(w if isinstance(w, str) else "?" for w in e.argv) for e in it.trace.of(EXEC)]


def test_sbatch_given_an_array_the_arms_left_different_reaches_the_jobs_server_in_both_runs():
    src = MemorySource({
        "runners/launch_mi355x-amds.sh": "bash benchmarks/multi_node/amd_utils/submit.sh\n",
        "benchmarks/multi_node/amd_utils/submit.sh": SUBMIT,
        "benchmarks/multi_node/amd_utils/node_excludes.yaml": "x: mia1-p01-g09\n",
        "benchmarks/multi_node/amd_utils/job.slurm": JOB,
    })
    trace = Tracer(src).trace(AMD, ["runners/launch_mi355x-amds.sh"]).runners["runners/launch_mi355x-amds.sh"]
    sbatch = [e for e in trace.of(EXEC) if e.argv[0] == "sbatch"]
    assert [e.argv[3:5] for e in sbatch] == [("2", "--exclude"), ("2", "--time")]
    assert isinstance(sbatch[0].argv[5], Unknown)  # the node list Python printed
    for sb in sbatch:
        assert len(sb.under) == 1
        assert sb.under[0].startswith("one of 2 values of EXCLUDE_OPT set on an undecided branch "
                                      "(`[[ -n \"$RESOLVED_EXCLUDE_NODES\" ]]` at "
                                      "benchmarks/multi_node/amd_utils/submit.sh:9)")
    assert sbatch[0].under[0].endswith(": `--exclude <unknown>`") and sbatch[1].under[0].endswith(": no words")
    # Either way sbatch runs job.slurm alike: it is followed once, as sure as sbatch itself.
    [server] = trace.of(SERVER)
    assert server.argv[:3] == ("python3", "-m", "sglang.launch_server") and not server.under
    assert server.chain[-1].path == "benchmarks/multi_node/amd_utils/submit.sh"
    assert not [e for e in trace.of(UNKNOWN) if opaque(e)]
    assert not [e for e in trace.effects if NO_SERVER_MARK in e.detail]
    # An option that changes what the job runs (`--chdir`) runs the job once per value.
    src = MemorySource({**{k: src.read(k).decode() for k in (
        "runners/launch_mi355x-amds.sh", "benchmarks/multi_node/amd_utils/node_excludes.yaml",
        "benchmarks/multi_node/amd_utils/job.slurm")},
        "benchmarks/multi_node/amd_utils/submit.sh": SUBMIT.replace('(--exclude "$RESOLVED_EXCLUDE_NODES")',
                                                                    '(--chdir /scratch)')})
    trace = Tracer(src).trace(AMD, ["runners/launch_mi355x-amds.sh"]).runners["runners/launch_mi355x-amds.sh"]
    servers = trace.of(SERVER)
    assert [(s.cwd, len(s.under)) for s in servers] == [("/scratch", 1), ("/github/workspace", 1)]
    assert servers[0].under[0].endswith(": `--chdir /scratch`")


def test_a_command_name_an_undecided_branch_chooses_runs_each_helper():
    # The agentic launchers' shape: which replay helper runs depends on a value the sweep sets
    # and the bot does not know (DURATION).
    text = ('run_agentic_replay() { serve replay --result-dir "$1"; }\n'
            'run_agentic_replay_timed() { serve replay-timed --duration "$DURATION" --result-dir "$1"; }\n'
            'if [[ "$DURATION" -gt 0 ]]; then REPLAY=run_agentic_replay_timed; else REPLAY=run_agentic_replay; fi\n'
            '"$REPLAY" /workspace/results\n')
    it, _ = Interpreter(Files(MemorySource({"launch.sh": text})), vocabulary=lambda argv, cwd: _known(argv),
                        inputs={"DURATION": Unknown("DURATION")}), None
    state = it.initial_state()
    it.run_top(text, "launch.sh", state)
    assert execs(it) == ["serve replay-timed --duration ? --result-dir /workspace/results",
                         "serve replay --result-dir /workspace/results"]
    assert [e.under[0].rsplit(": ", 1)[1] for e in it.trace.of(EXEC)] == ["`run_agentic_replay_timed`",
                                                                          "`run_agentic_replay`"]
    assert not it.trace.of(UNKNOWN)
    # The same name one arm leaves to a value the bot does not know stays a name it cannot know.
    it, _ = run(text.replace("REPLAY=run_agentic_replay;", "REPLAY=$(cat /etc/replay);"),
                env={"DURATION": Unknown("DURATION")})
    assert any("a command whose name is not known" in e.detail for e in it.trace.of(UNKNOWN))


def _known(argv):
    from recipes.launch.effects import CommandEffects

    return CommandEffects() if argv[0] in ("serve", "true") else None


def test_past_the_caps_the_words_stay_unknown():
    # Five values of one variable: over MAX_ALTERNATIVES, the merge keeps only what they agree on.
    assert MAX_ALTERNATIVES == 4
    arms = "".join(f'if [[ "$GPU" == g{i} ]]; then STEP=step{i}; fi\n' for i in range(4))
    it, state = run("STEP=step\n" + arms + '"$STEP"\n')
    assert isinstance(state.get("STEP"), Unknown) and not isinstance(state.get("STEP"), OneOf)
    assert state.get("STEP").prefix == "step"
    assert any("a command whose name is not known" in e.detail for e in it.trace.of(UNKNOWN))
    # Four values are kept and the command runs four times.
    it, state = run("STEP=step\n" + arms.replace("g3", "g2").replace("step3", "step2") + 'run "$STEP"\n')
    assert isinstance(state.get("STEP"), OneOf) and len(state.get("STEP").values) == 4
    # Two words of three values each: nine runs, over the cap of combinations for one command.
    two = ('A=a0\nB=b0\nif [[ "$X" == 1 ]]; then A=a1; B=b1; fi\nif [[ "$X" == 2 ]]; then A=a2; B=b2; fi\n'
           'if [[ "$Y" == 1 ]]; then C=(-c 1); fi\n')
    it, _ = run(two + 'run "$A" "$B"\n')
    assert execs(it) == ["run ? ?"]
    # The same word twice is one value: three runs, not nine.
    it, _ = run(two + 'run "$A" "$A"\n')
    assert execs(it) == ["run a2 a2", "run a1 a1", "run a0 a0"]
    # A trace runs at most MAX_ALTERNATIVE_RUNS commands per alternative; then they are unknown.
    # (The counter keeps the loop from a fixed point: each of its 40 passes runs.)
    it, _ = run('if [[ "$X" == 1 ]]; then A=a1; else A=a2; fi\n'
                'n=0\nfor i in $(seq 1 40); do n=$((n + 1)); run "$A"; done\n')
    runs = [r for r in execs(it) if r.startswith("run")]
    assert runs.count("run ?") == 40 - MAX_ALTERNATIVE_RUNS // 2
    assert len(runs) == 40 + MAX_ALTERNATIVE_RUNS // 2


def test_past_the_caps_a_command_string_keeps_its_known_whole_words():
    # benchmark_lib.sh's build_replay_cmd shape: a command kept as text, then given flags on
    # more undecided branches than MAX_ALTERNATIVES keeps, run unquoted. The words its known
    # start and end hold are the program and its flags; what the branches added is any number
    # of words in between.
    env = {k: Unknown(f"{k} is an input") for k in "ABCD"}
    flags = "".join(f'if [ -n "${k}" ]; then CMD+=" --{k.lower()}"; fi\n' for k in "ABCD")
    it, state = run('CLI=aiperf\nCMD="$CLI profile --seed 42 "\n' + flags + 'CMD+=" --slice 1.0"\n$CMD | tee log\n',
                    env=env)
    assert isinstance(state.get("CMD"), Unknown) and not isinstance(state.get("CMD"), OneOf)
    (client,) = [e for e in it.trace.of(EXEC) if e.argv[0] == "aiperf"]
    assert client.argv[:4] == ("aiperf", "profile", "--seed", "42") and client.argv[-2:] == ("--slice", "1.0")
    assert len(client.argv) == 7 and type(client.argv[4]).__name__ == "Split"
    assert not it.trace.of(UNKNOWN)
    # A partial word at either end stays with the unknown middle: `--url http://h:` + port.
    it, _ = run('CMD="serve --url http://h:"\n' + flags.replace("--", ":") + '$CMD\n', env=env)
    (served,) = [e for e in it.trace.of(EXEC) if e.argv[0] == "serve"]
    assert served.argv[1] == "--url" and served.argv[2].prefix == "http://h:" and len(served.argv) == 3
    # No whole word known at the start: the program is not known, and the trace says so.
    it, _ = run('CMD="$PROG --seed 42"\n' + flags + '$CMD\n', env={**env, "PROG": Unknown("PROG")})
    assert any("a command whose name is not known" in e.detail for e in it.trace.of(UNKNOWN))
    # A known program given a file the branches chose runs a file whose path is not known.
    it, _ = run('CMD="bash /tmp/"\n' + flags.replace(" --", "") + 'CMD+=".sh"\n$CMD\n', env=env)
    assert any(opaque(e) and "a file whose path is not known" in e.detail for e in it.trace.of(UNKNOWN))


def test_alternatives_follow_the_value_through_words_arrays_and_output():
    env = {"X": Unknown("X")}
    it, state = run('if [[ "$X" == 1 ]]; then P="numactl -N0"; else P=""; fi\n'
                    'L=(a)\nif [[ "$X" == 2 ]]; then L=(a b c); fi\n'
                    'run $P serve\nrun "--dir=/x/$P/y"\nrun "${#L[@]}" "${L[0]}"\nO=$(echo "$P")\n', env=env)
    # Unquoted, each value splits as bash splits it (the empty one is no word).
    assert execs(it)[:2] == ["run numactl -N0 serve", "run serve"]
    assert execs(it)[2:4] == ["run --dir=/x/numactl -N0/y", "run --dir=/x//y"]
    # An array's length is one of its arms' lengths; an element all arms agree on is known.
    assert execs(it)[4:] == ["run 3 a", "run 1 a"]
    out = state.get("O")
    assert isinstance(out, OneOf) and out.values == ("numactl -N0", "")
    lengths = state.get("L")
    assert lengths[0] == "a" and isinstance(lengths[-1], OneOfRest)


def test_a_comparison_tells_different_alternatives_apart():
    site = Site("launch.sh", 3)

    def server(values):
        word = OneOf("set on an undecided branch (`x` at launch.sh:2)", values=values, label="one of 2 values of A")
        return Effect(kind=SERVER, site=site, env=(("A", word),), argv=("vllm", "serve"))
    assert compare([server(("1", "2"))], [server(("1", "2"))]) is None or not compare([server(("1", "2"))],
                                                                                        [server(("1", "2"))])
    assert compare([server(("1", "2"))], [server(("1", "3"))])


def test_a_server_runs_under_each_choice_of_a_flag_an_arm_set():
    text = ('EXTRA=""\nif [[ "$SLURM_PROCID" == 0 ]]; then EXTRA="--speculative-draft-model-quantization fp8"; fi\n'
            'python3 -m sglang.launch_server --model-path m $EXTRA\n')
    src = MemorySource({"runners/launch_h200-cw.sh": text})
    point = BenchmarkPoint(config_key="dsr1-fp8-h200-sglang", scenario="fixed-seq-len", isl=1024, osl=1024, tp=8,
                           conc=4, image="img:1", runner="h200", framework="sglang", precision="fp8",
                           model="deepseek-ai/DeepSeek-R1", model_prefix="dsr1")
    trace = Tracer(src).trace(point, ["runners/launch_h200-cw.sh"]).runners["runners/launch_h200-cw.sh"]
    servers = trace.of(SERVER)
    assert [s.argv[5:] for s in servers] == [("--speculative-draft-model-quantization", "fp8"), ()]
    assert all(s.under and "one of 2 values of EXTRA" in s.under[0] for s in servers)


def test_a_test_every_value_decides_alike_is_decided():
    env = {"X": Unknown("X")}
    it, _ = run('if [[ "$X" == 1 ]]; then A=a1; L=(a); else A=a2; L=(a b); fi\n'
                'if [ -n "$A" ]; then run set; else run unset; fi\n'
                'if [[ $A == a* && ${#L[@]} -gt 0 ]]; then run a; fi\n'
                'if [[ $A == a1 ]]; then run one; fi\n'
                'if [[ $A == $(cat /x) ]]; then run sub; fi\n', env=env)
    got = [(e.argv[1], len(e.under)) for e in it.trace.of(EXEC) if e.argv[0] == "run"]
    # Decided alike by every value: one arm, under no branch. Decided differently, or with a
    # command in the test (not run again per value): both arms, under the test.
    assert got == [("set", 0), ("a", 0), ("one", 1), ("sub", 1)]


def test_arguments_an_undecided_branch_shifted_differently_keep_each_arms_words():
    it, _ = run('f() {\n  case $1 in --two) shift 2 ;; *) shift ;; esac\n  run "$@"\n  shift 3\n  run "$#"\n}\n'
                'f "$OPT" b c\n', env={"OPT": Unknown("OPT")})
    # `$1` is not known, so both arms shift: one argument left or two, then a shift past the
    # end of either leaves them (and fails).
    assert execs(it) == ["run c", "run b c", "run 1", "run 2"]
    # A test of the arguments every arm decides alike is decided (an option loop goes on).
    it, _ = run('set -- "$OPT" b c\nif [[ $1 == --two ]]; then shift 2; else shift; fi\n'
                'if [[ $# -gt 0 && -n "$1" ]]; then run more; else run none; fi\n', env={"OPT": Unknown("OPT")})
    assert [(e.argv[1], len(e.under)) for e in it.trace.of(EXEC)] == [("more", 0)]
    # A `case` every value decides alike is decided; `*)` matches any text, known or not.
    it, _ = run('if [[ "$X" == 1 ]]; then A=a1; else A=a2; fi\n'
                'case $A in a*) run a ;; *) run other ;; esac\ncase $A in a1) run one ;; *) run two ;; esac\n'
                'case $U in x) run x ;; *) run any ;; esac\n', env={"X": Unknown("X"), "U": Unknown("U")})
    assert [(e.argv[1], len(e.under)) for e in it.trace.of(EXEC)] == [
        ("a", 0), ("one", 1), ("two", 1), ("x", 1), ("any", 1)]
