"""Paths that leave a loop, a function or a sourced file early under an undecided test
(recipes.launch.control `Pad`): bash goes on after the loop or the call from the state the arm
left, so the interpreter does too; a value the paths set differently is unknown, never the
value of one of them."""
from __future__ import annotations

from recipes.launch.trace import EXEC, UNKNOWN
from recipes.launch.words import Unknown
from tests.recipes.test_launch_shell import argvs, run, table


def _curl_table(argv, cwd=None):
    # `curl` and `kill` stand for what the launch cannot know the outcome of; `uv` for a tool.
    from recipes.launch.effects import CommandEffects
    return CommandEffects() if argv[0] in ("curl", "kill", "uv") else table(argv, cwd)


def _values(trace, name):
    """The words a command got as its first argument, over every run of it."""
    return {e.argv[1] for e in trace.of(EXEC) if e.argv and e.argv[0] == name}


def run_real(text, **kw):
    import recipes.launch.shell as shell
    from recipes.launch.fs import WORKSPACE, Files
    from recipes.source import MemorySource

    path = kw.pop("path", "launch.sh")
    repo = MemorySource({path: text, **kw.pop("files", {})})
    it = shell.Interpreter(Files(repo), vocabulary=_curl_table, inputs=kw.pop("env", {}))
    state = it.initial_state()
    state.argv0 = f"{WORKSPACE}/{path}"
    it.run_top(text, path, state)
    return it, state


# The LMCache health loop of benchmarks/single_node/agentic/dsv4_fp4_b200_vllm.sh (#2231).
HEALTH_LOOP = """\
READY=0
for _ in $(seq 1 3); do
    if ! kill -0 "$PID" 2>/dev/null; then
        echo "died" >&2
        exit 1
    fi
    if curl --output /dev/null --silent --fail "http://127.0.0.1:$PORT/healthcheck"; then
        READY=1
        break
    fi
    sleep 2
done
if [ "$READY" -ne 1 ]; then
    echo "not healthy" >&2
    exit 1
fi
serve --port 8000
"""


def test_a_break_under_an_undecided_test_goes_on_after_the_loop():
    it, state = run_real(HEALTH_LOOP, env={"PORT": "9000", "PID": "4243"})
    # READY is 1 on the path that broke out, 0 on the one that ran out of passes: not known,
    # so the final `exit 1` is an undecided arm and the server starts after it.
    assert isinstance(state.get("READY"), Unknown)
    assert "serve --port 8000" in argvs(it.trace)
    assert it.ending == (None, None) or it.ending[0] is None


def test_a_decided_break_still_ends_the_loop_with_its_state():
    _, state = run_real('for i in 1 2 3; do X=$i; if [ "$i" = 2 ]; then break; fi; done\n')
    assert state.get("X") == "2"


def test_a_path_that_only_ever_breaks_keeps_what_it_set():
    # Every arm leaves (one breaks, one exits): the loop ends with the breaking arm's state.
    trace, state = run('for i in 1 2; do if [[ "$A" == x ]]; then B=set; break; else exit 3; fi; done\n'
                       'run "$B"\n')
    assert argvs(trace) == ["run set"]


def test_a_continue_under_an_undecided_test_reaches_the_next_pass():
    trace, state = run('N=0\nfor i in 1 2; do if [[ "$A" == x ]]; then N=skip; continue; fi; N=$i; done\n'
                       'run "$N"\n')
    assert _values(trace, "run") == {"2", "skip"}  # one run per value the paths left (alternatives)


def test_a_return_under_an_undecided_test_goes_on_after_the_call():
    # benchmark_lib.sh's wait_for_amd_gpu_clean: a poll loop that breaks when clean, then
    # returns 1 when it never was; the caller goes on either way when the status is not read.
    text = """\
wait_clean() {
    local clean=false
    for i in $(seq 1 3); do
        if curl -s http://127.0.0.1/vram; then clean=true; break; fi
        sleep 10
    done
    if [ "$clean" != "true" ]; then
        return 1
    fi
    OK=yes
}
wait_clean || exit 1
serve
"""
    it, state = run_real(text)
    assert "serve" in argvs(it.trace)
    # OK is set on the path that went on to the function's end, not on the one that returned.
    assert isinstance(state.get("OK"), Unknown)


def test_a_function_that_returns_early_on_one_path_merges_what_both_set():
    trace, _ = run('f() { if [[ "$A" == x ]]; then V=early; return 0; fi; V=late; }\nf\nrun "$V"\n')
    assert _values(trace, "run") == {"early", "late"}


def test_a_sourced_file_that_returns_early_merges_too():
    trace, _ = run('source lib.sh\nrun "$V"\n',
                   files={"lib.sh": 'if [[ "$A" == x ]]; then V=early; return 0; fi\nV=late\n'})
    assert _values(trace, "run") == {"early", "late"}


def test_an_exit_in_a_pipeline_part_ends_that_part_only():
    trace, _ = run('echo a | { read x; exit 1; }\nrun after\n')
    assert argvs(trace) == ["run after"]


def test_a_break_inside_a_function_does_not_leave_the_callers_loop_state():
    # bash: `break` in a function is not the caller's loop's; the interpreter at least keeps
    # the caller's loop whole (it never merges a function's frame into the loop's state).
    trace, state = run('f() { if [[ "$A" == x ]]; then break; fi; }\nfor i in 1 2; do f; done\nrun end\n')
    assert "run end" in argvs(trace)
    assert len(state.frames) == 1
    assert not [e for e in trace.of(UNKNOWN) if "internal error" in e.detail]


# benchmark_lib.sh's ensure_agentic_uv: uv from PATH, else where its installer puts it.
ENSURE_UV = """\
ensure_uv() {
    if command -v uv >/dev/null 2>&1; then
        UV_BIN="$(command -v uv)"
        return
    fi
    UV_BIN="/opt/uv/bin/uv"
}
ensure_uv
"$UV_BIN" venv /tmp/venv
"""


def test_a_program_found_on_path_or_where_an_installer_put_it_runs_either_way():
    it, _ = run_real(ENSURE_UV)
    assert not it.trace.of(UNKNOWN)
    assert it.trace.of(EXEC)[-1].argv[:2] == ("uv", "venv")


def test_a_program_path_the_launch_wrote_is_not_read_as_the_program():
    it, _ = run_real(ENSURE_UV.replace('UV_BIN="/opt/uv/bin/uv"', 'UV_BIN="/opt/uv/bin/uv"; echo "#!/bin/sh" > "$UV_BIN"'))
    assert any("a command whose name is not known" in e.detail for e in it.trace.of(UNKNOWN))


def test_a_command_naming_a_config_file_the_launch_wrote_carries_its_text():
    # minimaxm3_fp4_b200_trt_mtp.sh (#2686): the TRT-LLM config is a here-document, then
    # `trtllm-serve --config ser.yaml`; Check 11 reads the speculative block from this text.
    text = 'K=3\ncat << EOF > ser.yaml\nspeculative_config:\n    max_draft_len: $K\nEOF\nserve --config ser.yaml\n'
    trace, _ = run(text)
    serve = trace.of(EXEC)[-1]
    assert serve.wrote == (("ser.yaml", "speculative_config:\n    max_draft_len: 3\n"),)
    # ... and so the text changes the effect as a comparison sees it.
    other, _ = run(text.replace("K=3", "K=4"))
    from recipes.launch.compare import _key
    assert _key(other.of(EXEC)[-1]) != _key(serve)


def test_a_variable_bash_always_sets_is_known_text_but_decides_nothing():
    # runners/launch_mi300x-amds.sh (#2580): COMPUTE_TMPDIR="$SQUASH_DIR/tmp-${UID}", then
    # `bash -c "... mkdir -p '$COMPUTE_TMPDIR' ..."`: shell text it can now read.
    trace, _ = run('D="/raid/tmp-${UID}"\nbash -c "mkdir -p \'$D\'; run \'$D\'"\n'
                   'if [ "$EUID" -ne 0 ]; then run user; else run root; fi\n')
    assert not [e for e in trace.of(UNKNOWN) if "not known" in e.detail], trace.of(UNKNOWN)
    runs = trace.of(EXEC)
    assert [e.argv[1] for e in runs[-2:]] == ["user", "root"] and all(e.under for e in runs[-2:])
    trace, _ = run('run $((UID + 1))\n')
    assert isinstance(trace.of(EXEC)[0].argv[1], Unknown)  # not 1: the uid is the machine's


def test_a_value_empty_on_one_path_keeps_the_ends_of_its_default():
    # runners/launch_b200-dgxc.sh: the first candidate folder that exists, else the default.
    text = """\
SELECTED=""
for candidate in /lustre/models/deepseek-v4-pro /lustre/models/dsv4-pro; do
    if [[ -d "$candidate" ]]; then
        SELECTED="$candidate"
        break
    fi
done
export MODEL_PATH="${SELECTED:-/lustre/models/deepseek-v4-pro}"
run "$MODEL_PATH"
run "${SELECTED}"
"""
    trace, _ = run(text)
    # Each candidate is known: the alternatives are kept, and the default fills the empty one.
    runs = [e.argv[1] for e in trace.of(EXEC)]
    assert set(runs[:-3]) == {"/lustre/models/deepseek-v4-pro", "/lustre/models/dsv4-pro"}
    assert set(runs[-3:]) == {"", "/lustre/models/deepseek-v4-pro", "/lustre/models/dsv4-pro"}  # it may be empty
    # A candidate not wholly known: "empty, or text with these ends" (OrEmpty), whose default
    # keeps the ends the default and the set values share.
    trace, _ = run('if [[ "$A" == x ]]; then S=/lustre/models/deepseek-v4-pro; elif [[ "$B" == y ]]; then S=""\n'
                   'else S="/lustre/models/d${SUFFIX}-v4-pro"; fi\nrun "${S:-/lustre/models/deepseek-v4-pro}"\n')
    [path] = [e.argv[1] for e in trace.of(EXEC)]
    assert isinstance(path, Unknown) and path.prefix == "/lustre/models/d" and path.suffix == "-v4-pro"
