"""The launch interpreter's bash semantics (recipes.launch.shell), one construct class per test.

A small command table stands in for the vocabulary here so each test names exactly the
commands it relies on; the real table is tested in tests/recipes/test_vocabulary.py and the two
together in tests/recipes/test_launch_point.py.
"""
from __future__ import annotations

import resource
import time

import pytest

from recipes.launch.effects import CommandEffects, Container, PythonRun, Write
from recipes.launch.fs import WORKSPACE, Files
from recipes.launch.shell import Interpreter
from recipes.launch.trace import EXEC, PYTHON, RUN_WRITTEN, SOURCE, UNKNOWN, WRITE
from recipes.launch.words import Unknown
from recipes.source import MemorySource


def table(argv, cwd=None):
    """A few commands, described as the real vocabulary describes them."""
    head = argv[0]
    if head in ("run", "serve", "sleep", "hostname"):
        return CommandEffects()
    if head == "sed":
        ce = CommandEffects()
        if any(isinstance(a, str) and a.startswith("-i") for a in argv[1:]):
            ce.writes.append(Write(argv[-1], "in-place edit"))
        return ce
    if head == "cp":
        return CommandEffects(reads=[argv[1]], writes=[Write(argv[-1], "copy")])
    if head == "bash":
        args = list(argv[1:])
        if args and args[0] == "-c":
            return CommandEffects(shell_text=[(args[1], tuple(args[2:]))])
        return CommandEffects(shell_files=[(args[0], tuple(args[1:]))]) if args else CommandEffects(shell_stdin=True)
    if head == "python3":
        args = list(argv[1:])
        if args and args[0] == "-m":
            return CommandEffects(python=[PythonRun(module=args[1], argv=tuple(args[2:]))])
        if not args or args[0] == "-":
            return CommandEffects(python=[PythonRun(argv=tuple(args[1:]))])  # its program on stdin
        return CommandEffects(python=[PythonRun(script=args[0], argv=tuple(args[1:]))])
    if head == "docker":
        # docker run -e A=1 -e B -v SRC:DST -w DIR IMAGE CMD...
        args, env, passed, mounts, workdir = list(argv[2:]), [], [], [], None
        while args and isinstance(args[0], str) and args[0].startswith("-"):
            opt, val = args[0], args[1]
            args = args[2:]
            if opt == "-e":
                if "=" in val:
                    k, _, v = val.partition("=")
                    env.append((k, v))
                else:
                    passed.append(val)
            elif opt == "-v":
                src, _, dst = val.partition(":")
                mounts.append((src, dst))
            elif opt == "-w":
                workdir = val
        return CommandEffects(containers=[Container(image=args[0], env=tuple(env), env_from_host=tuple(passed),
                                                    mounts=tuple(mounts), workdir=workdir, argv=tuple(args[1:]))])
    return None


def run(text, env=None, files=None, path="launch.sh"):
    repo = MemorySource({path: text, **(files or {})})
    it = Interpreter(Files(repo), vocabulary=table, inputs=env or {})
    state = it.initial_state()
    state.argv0 = f"{WORKSPACE}/{path}"
    it.run_top(text, path, state)
    return it.trace, state


def argvs(trace, kind=EXEC):
    return [" ".join(w if isinstance(w, str) else "?" for w in e.argv) for e in trace.of(kind)]


def test_every_builtin_that_assigns_reaches_the_command():
    trace, _ = run(
        'A=1\nexport B=2\ndeclare C=3\ntypeset -x D=4\nprintf -v E "%s-%d" e 5\nread -r F G <<< "f g"\n'
        'let "H = 2 * 4"\nmapfile -t I <<< $\'i1\\ni2\'\n(( J = H + 1 ))\nf() { local K=k; run "$K"; }\n'
        'run "$A" "$B" "$C" "$D" "$E" "$F" "$G" "$H" "${I[1]}" "$J"\nf\nL=l run "$L"\n')
    assert argvs(trace) == ["run 1 2 3 4 e-5 f g 8 i2 9", "run k", "run ?"]


def test_expansions_read_as_bash_reads_them():
    trace, _ = run(
        'P=/a/b/c.tar.gz\nN=MODEL\nMODEL=m\narr=(x "y z")\n'
        'run "${P##*/}" "${P%%.*}" "${P#*/}" "${P%.*}" "${P//a/A}" "${U:-dflt}" "${V:=set}" "$V" '
        '"${N,,}" "${MODEL^^}" "${#P}" "${!N}" "${#arr[@]}" "${arr[@]}" $((3 + 4 * 2)) {1..3} "$(echo sub)"\n')
    assert argvs(trace)[0] == ("run c.tar.gz /a/b/c a/b/c.tar.gz /a/b/c.tar /A/b/c.tAr.gz dflt set set model M 13 "
                              "m 2 x y z 11 1 2 3 sub")


def test_arithmetic_in_a_default_and_the_conditional_operator():
    # TileRT's submit.sh:4 (#2533): the grammar reads `$((` inside `${X:-...}` as a command
    # substitution of a subshell, which ran `4` as a command; `? :` is bash's conditional.
    trace, _ = run(
        'PREFILL_TP=4\nG="${GPUS:-${GPU_COUNT:-$(( ${PREFILL_TP:-8} > ${DECODE_TP:-8} ? ${PREFILL_TP:-8} : ${DECODE_TP:-8} ))}}"\n'
        'X=4\nrun "$G" $(( X > 8 ? X : 8 )) $(( 0 ? 2 : 0 ? 4 : 5 )) $(( (1 > 2) ? 7 : (3 ? 8 : 9) )) $(( 2 * (1 ? 3 : 4) ))\n')
    assert argvs(trace) == ["run 8 8 5 8 ?"]  # the last: a `?` inside a larger expression stays unknown
    assert not trace.of(UNKNOWN)


def test_a_default_that_starts_with_a_name_is_its_text():
    # InferenceX's AMD submit.sh: the grammar reads `mia1` of this default as a variable's name.
    trace, _ = run('N="${SLURM_EXCLUDE_NODES:-mia1-p01-g09,mia1-p01-g11}"\nrun "$N" ${U:-vllm-x}\n')
    assert argvs(trace) == ["run mia1-p01-g09,mia1-p01-g11 vllm-x"]


def test_word_splitting_and_quoting():
    trace, _ = run('X="a  b"\nrun $X "$X" \'$X\' "" ${EMPTY_UNSET:-}\n')
    assert [e.argv for e in trace.of(EXEC)][0] == ("run", "a", "b", "a  b", "$X", "")


def test_a_value_nobody_set_is_unknown_and_says_why():
    trace, _ = run('run "--model=$MODEL_PATH"\n')
    word = trace.of(EXEC)[0].argv[1]
    assert isinstance(word, Unknown) and "$MODEL_PATH is not set" in word.why


def test_functions_locals_positional_and_an_option_parsing_loop():
    trace, state = run(
        'parse() {\n  local port="" model=""\n  while [[ $# -gt 0 ]]; do\n    case $1 in\n'
        '      --port) port="$2"; shift 2 ;;\n      --model) model="$2"; shift 2 ;;\n'
        '      *) echo "bad $1"; return 1 ;;\n    esac\n  done\n  serve --port "$port" --model "$model"\n}\n'
        'parse --model m --port 8000\n')
    assert argvs(trace) == ["serve --port 8000 --model m"]
    assert state.get("port") is None  # the function's locals are gone after it returns


def test_an_undecided_branch_runs_both_arms_and_says_so():
    trace, state = run('if [[ "$GPU" == mi355x ]]; then X=amd; run amd; else X=nv; run nv; fi\nrun "$X"\n')
    runs = trace.of(EXEC)
    assert [e.argv[1] for e in runs[:2]] == ["amd", "nv"]
    assert all(e.under for e in runs[:2])
    # After it, X is unknown to every reader that does not look for alternatives; a command
    # that uses it runs once per arm's value, each run under the choice.
    assert isinstance(state.get("X"), Unknown)
    assert [(e.argv[1], len(e.under)) for e in runs[2:]] == [("amd", 1), ("nv", 1)]
    assert runs[3].under[0].startswith("one of 2 values of X set on an undecided branch (`[[ \"$GPU\" == mi355x ]]` at launch.sh:1)")
    assert runs[3].under[0].endswith(": `nv`")


def test_a_decided_branch_runs_one_arm():
    trace, _ = run('if [[ "$GPU" == mi355x ]]; then run amd; elif [ "$GPU" = b200 ]; then run nv; fi\n',
                   env={"GPU": "b200"})
    assert argvs(trace) == ["run nv"]
    assert not trace.of(EXEC)[0].under


def test_an_arm_that_exits_does_not_go_on():
    trace, _ = run('if [[ -z "$X" ]]; then echo missing; exit 1; fi\nrun after\n')
    assert argvs(trace) == ["run after"]  # reached when X is set, which the point may do


def test_unknown_command_is_an_unknown_naming_its_line():
    trace, _ = run('run ok\nfrobnicate --all\n')
    unknowns = trace.of(UNKNOWN)
    assert len(unknowns) == 1 and unknowns[0].site.line == 2 and "frobnicate" in unknowns[0].detail


def test_an_alias_is_what_it_stands_for():
    trace, _ = run('shopt -s expand_aliases\nalias edit="sed -i s/a/b/"\nedit /opt/engine/model.py\n')
    writes = trace.of(WRITE)
    assert [(w.path, w.how) for w in writes] == [("/opt/engine/model.py", "in-place edit")]


def test_eval_of_known_text_is_interpreted_and_unknown_text_is_not_guessed():
    trace, _ = run('CMD="sed -i s/x/y/ /opt/a.py"\neval "$CMD"\neval "$FROM_OUTSIDE"\n')
    assert [w.path for w in trace.of(WRITE)] == ["/opt/a.py"]
    assert any("eval of text that is not known" in u.detail for u in trace.of(UNKNOWN))


def test_a_file_the_launch_writes_then_runs_is_run_written_and_interpreted():
    trace, _ = run('cat > /tmp/fix.sh <<EOF\nsed -i s/a/b/ /opt/engine/x.py\nEOF\nbash /tmp/fix.sh\n'
                   'printf "import os\\n" > /tmp/p.py\npython3 /tmp/p.py\n')
    ran = trace.of(RUN_WRITTEN)
    assert [e.path for e in ran] == ["/tmp/fix.sh", "/tmp/p.py"]
    assert "/opt/engine/x.py" in [w.path for w in trace.of(WRITE)]


def test_a_sourced_repository_file_runs_in_the_same_shell():
    trace, state = run('source "$(dirname "$0")/lib.sh"\nhelper\n',
                       files={"lib.sh": 'LIBVAR=1\nhelper() { run "from-lib-$LIBVAR"; }\n'})
    assert argvs(trace) == ["dirname /github/workspace/launch.sh", "run from-lib-1"]
    assert [e.path for e in trace.of(SOURCE)] == [f"{WORKSPACE}/lib.sh"]
    assert trace.of(EXEC)[1].chain_names == ("fn helper",)


def test_bash_source_in_a_function_is_the_file_that_defined_it():
    # benchmark_lib.sh's `_eval_patches_dir`: `cd "$(dirname "${BASH_SOURCE[0]}")/..."` inside a
    # function a launcher in another folder calls names the library's folder, not the caller's.
    trace, _ = run('source "$(dirname "$0")/../lib/lib.sh"\nhelper\n', path="bench/launch.sh",
                   files={"lib/lib.sh": 'helper() { run "${BASH_SOURCE[0]}"; }\n'})
    assert argvs(trace)[-1] == "run /github/workspace/lib/lib.sh"


def test_python_code_the_launch_runs_is_read_for_what_it_writes():
    trace, _ = run("python3 - <<'PY'\nimport sglang, os\np = os.path.dirname(sglang.__file__)\n"
                   "open(os.path.join(p, 'x.py'), 'a').write('#')\nPY\n"
                   "python3 fix.py\n", files={"fix.py": "import json\nprint(json.dumps(1))\n"})
    writes = [(e.path, e.how, e.site.line) for e in trace.of(WRITE)]
    assert writes == [("<site-packages>/sglang", "python write", 1)], writes


def test_an_exit_trap_runs_when_the_script_ends():
    trace, _ = run("trap 'run cleanup' EXIT\nrun main\nexit 0\nrun never\n")
    assert argvs(trace) == ["run main", "run cleanup"]


def test_bash_c_gets_its_positional_words_and_only_exported_variables():
    trace, _ = run('export E=exp\nL=loc\nbash -c \'run "$0" "$1" "$E" "${L:-none}"\' zero one\n')
    assert argvs(trace)[-1] == "run zero one exp none"


def test_environment_set_on_the_way_into_a_container_reaches_the_server():
    trace, _ = run('export HOSTVAR=h\ndocker run -e SGLANG_HACK=1 -e HOSTVAR -v "$PWD":/ws -w /ws img '
                   'python3 -m sglang.launch_server --port 1\n')
    py = trace.of(PYTHON)[0]
    assert py.container == "img"
    assert dict(py.env) == {"SGLANG_HACK": "1", "HOSTVAR": "h"}


def test_a_container_path_under_a_mount_is_the_repository_file():
    trace, _ = run('docker run -v "$GITHUB_WORKSPACE":/ws -w /ws img bash bench.sh\n',
                   env={"GITHUB_WORKSPACE": WORKSPACE}, files={"bench.sh": "run inside\n"})
    assert "run inside" in argvs(trace)
    assert trace.of(EXEC)[-1].container == "img"


def test_subshells_and_pipelines_do_not_leak_variables():
    _, state = run('X=outer\n( X=sub )\necho hi | read X\n')
    assert state.get("X") == "outer"


@pytest.mark.parametrize("text", [
    'x=a\nfor i in $(seq 64); do x="$x$x"; done\nrun "$x"\n',                  # a value that doubles
    'run {1..99999999}\n',                                                      # a huge brace expansion
    'f() { f; }\nf\n',                                                          # endless recursion
    'E=\'eval "$E"\'\neval "$E"\n',                                             # eval of itself
    'while true; do run; done\n',                                               # a loop that never ends
    'source "$0"\n',                                                            # a script sourcing itself
    'a=(); for i in $(seq 100000); do a+=("$i"); done\n',                       # an array that grows
    'printf -v X "%099999999d" 1\nrun "$X"\n',                                  # a printf width bomb
    'x=${x:-${x:-${x:-${x:-${x:-${x:-${x:-${x:-${x:-${x:-${x:-${x:-y}}}}}}}}}}}}\nrun "$x"\n',
])
def test_every_input_is_bounded(text):
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.process_time()
    trace, _ = run(text)
    assert time.process_time() - start < 2.0
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 300 * 1024  # KiB on Linux
    assert trace.effects  # the cap or the value shows as an effect, never a silent end


def test_text_tools_over_known_input_are_computed():
    trace, state = run('IMAGE=rocm/sgl:v0.5@sha256:ab\nSQ="/squash/$(echo "$IMAGE" | sed \'s/[\\/:@#]/_/g\').sqsh"\n'
                       'A=$(echo "a.b.c" | cut -d. -f2)\nB=$(echo HeLLo | tr A-Z a-z)\nC=$(printf "x\\ny\\n" | head -n1)\n'
                       'run "$SQ" "$A" "$B" "$C"\n')
    assert argvs(trace)[-1] == "run /squash/rocm_sgl_v0.5_sha256_ab.sqsh b hello x"


def test_an_unknown_part_keeps_the_known_text_before_it():
    trace, _ = run('run --jobid=$(squeue -h | head -n1)\n')
    word = trace.of(EXEC)[-1].argv[1]
    assert isinstance(word, Unknown) and word.prefix == "--jobid="


def test_what_the_arms_of_an_undecided_branch_agree_on_is_kept():
    trace, _ = run('CMD=(python3 -m pip install)\nif pip --help | grep -q break; then CMD+=(--break-system-packages); fi\n'
                   'NAME=m\nM=/models/$NAME/x.safetensors\nif [[ -n "$FAST" ]]; then M=/scratch/$NAME/x.safetensors; fi\n'
                   '"${CMD[@]}" aiperf\nrun "$M"\n')
    # Few values, each known: the command runs once per value (below); past the cap (five
    # places here), what the arms agree on is kept.
    assert [e.argv for e in trace.of(PYTHON)] == [("python3", "-m", "pip", "install", "--break-system-packages", "aiperf"),
                                                  ("python3", "-m", "pip", "install", "aiperf")]
    assert [e.argv[1] for e in trace.of(EXEC) if e.argv[0] == "run"] == ["/scratch/m/x.safetensors", "/models/m/x.safetensors"]
    trace, _ = run('CMD=(python3 -m pip install)\nM=/models/m/x.safetensors\nfor g in a b c d e; do\n'
                   '  if [[ "$GPU" == "$g" ]]; then CMD+=("--$g"); M=/$g/m/x.safetensors; fi\ndone\n'
                   '"${CMD[@]}" aiperf\nrun "$M"\n')
    pip = trace.of(PYTHON)[-1]
    assert pip.argv[:4] == ("python3", "-m", "pip", "install") and isinstance(pip.argv[4], Unknown)
    model = trace.of(EXEC)[-1].argv[1]
    assert isinstance(model, Unknown) and (model.prefix, model.suffix) == ("/", "/m/x.safetensors")


def test_an_array_the_arms_grow_differently_has_an_unknown_length():
    # benchmark_lib.sh's check_env_vars: `missing+=("$v")` under a test the point does not
    # decide, then `exit 1` when the array is not empty. The length is unknown, so the exit is
    # an arm that may run, and the launch goes on after it.
    trace, _ = run('m=()\nif [[ -z "$X" ]]; then m+=(X); fi\n'
                   'if [[ ${#m[@]} -gt 0 ]]; then run "${m[0]}"; exit 1; fi\nserve\n', env={"X": Unknown("X")})
    assert argvs(trace)[-1] == "serve"
    assert argvs(trace)[:2] == ["run X", "run "] and all(len(e.under) == 2 for e in trace.of(EXEC)[:2])
    # Arms that grow an array to the same length keep it, with the element they disagree on unknown.
    trace, _ = run('a=(x y)\nif [[ -n "$X" ]]; then a[1]=z; fi\nrun "${#a[@]}" "${a[0]}"\n', env={"X": Unknown("X")})
    assert argvs(trace) == ["run 2 x"]


def test_an_operator_applies_to_the_variable_an_indirection_names():
    trace, _ = run('for v in A B; do run "${!v:-unset}" "${!v#a}"; done\n', env={"A": "abc"})
    assert argvs(trace) == ["run abc bc", "run unset "]


def test_an_option_loop_over_an_unknown_argument_ends():
    # `case $1` undecided on an unresolved argument: the arms shift differently, so how many
    # arguments remain is unknown and the loop's test is undecided, not true for 512 rounds.
    trace, _ = run('f(){ while [[ $# -gt 0 ]]; do case $1 in --x) run x; shift;; *) shift;; esac; done; }\n'
                   'f --model "$M" --x\nserve\n', env={"M": Unknown("M")})
    assert argvs(trace)[-1] == "serve"
    assert not [e for e in trace.of(UNKNOWN) if "iterations" in e.detail or "loop" in e.detail]


def test_a_here_document_with_an_unknown_part_keeps_its_known_text_for_comparison():
    from recipes.launch.compare import _norm
    from recipes.launch.words import HOLE, Holed

    it = Interpreter(Files(MemorySource({})), vocabulary=table)
    state = it.initial_state()
    it.run_top('cat > a.yaml <<EOF\nk: 3\nsizes: [$(cat /models/n)]\nEOF\n', "t.sh", state)
    text = it.files.written(f"{WORKSPACE}/a.yaml").text
    assert isinstance(text, Holed) and text.template == f"k: 3\nsizes: [{HOLE}]\n"
    # An edit of the known part is another text, though both are unknown.
    other = Holed(text.why, template=text.template.replace("k: 3", "k: 4"))
    assert _norm(text) != _norm(other) and _norm(text) == _norm(Holed(text.why, template=text.template))


def test_bracket_expressions_with_classes_match_as_bash_matches_them():
    # `[[:alpha:]]` once closed at the class's own `]` (and compiled with a nested-set warning).
    trace, _ = run('for v in a 1 "[" x-; do case "$v" in [[:alpha:]]) run alpha "$v";; [![:alnum:][]) run other "$v";;'
                   ' "[") run bracket;; *) run rest "$v";; esac; done\n')
    assert argvs(trace) == ["run alpha a", "run rest 1", "run bracket", "run rest x-"]


def test_an_unquoted_unknown_alone_in_its_word_may_be_several_words():
    from recipes.launch.words import Split

    trace, _ = run('A=$(cat /f)\nrun --m $A "$A" x$A\n', files={})
    words = trace.of(EXEC)[-1].argv
    assert isinstance(words[2], Split) and not isinstance(words[3], Split) and not isinstance(words[4], Split)


def test_a_redirect_of_another_descriptor_leaves_the_standard_output():
    # `2>/dev/null` silences the standard error only: a loop over `$(cmd 2>/dev/null)` may run.
    trace, state = run('for c in $(hostname 2>/dev/null || true); do run "$c"; done\n'
                       'A=$(echo a >&2; echo b)\nB=$(echo c 2> err.log)\nC=$(cat < /dev/null; echo d)\n'
                       'D=$(echo e > /dev/stderr; echo f 2>&1)\n')
    assert argvs(trace)[:2] == ["hostname", "run ?"]
    assert (state.get("A"), state.get("B"), state.get("C"), state.get("D")) == ("b", "c", "d", "f")
    # What `2> err.log` writes there is the standard error: not known.
    err = [e for e in trace.of(WRITE) if e.path == f"{WORKSPACE}/err.log"]
    assert len(err) == 1


def test_a_trim_of_an_unknown_value_keeps_only_the_ends_it_cannot_reach():
    env = {"X": Unknown("X", "x--foo", "/lib, ", chars=None)}
    _, state = run('A="${X#x}"\nB="${X%, }"\nC="${X##*-}"\nD="${X%.sh}"\nE="${X#y}"\nF="${X:1}"\n', env)
    assert (state.get("A").prefix, state.get("A").suffix) == ("--foo", "/lib, ")  # a flag now
    assert (state.get("B").prefix, state.get("B").suffix) == ("x--foo", "/lib")
    assert (state.get("C").prefix, state.get("C").suffix) == ("", "")  # a glob may reach anywhere
    assert state.get("D") == env["X"]  # `/lib, ` does not end in `.sh`: nothing is trimmed
    assert state.get("E") == env["X"]
    assert (state.get("F").prefix, state.get("F").suffix) == ("", "")
