"""recipes.launch.path.reach: the name filter that spares building launch paths that cannot hold a changed
file. It may keep too much, never too little; a name only a comment holds does not count
(real shape: benchmark_lib.sh's `# ... launch_mi355x-amds.sh derives PORT ...` made every
launcher a candidate for a change of the AMD runner's scripts, e944302e8d)."""
from __future__ import annotations

from checks.context import ReviewContext
from recipes.launch.path.reach import reach_names
from recipes.scripts import code_text
from tests.builders import RUNNERS, build_snapshot

LIB = "benchmarks/benchmark_lib.sh"
LAUNCHER = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x.sh"
CHANGED = "runners/launch_mi355x-amds.sh"


def _names(lib: str, targets: tuple[str, ...] = (CHANGED,)) -> set[str]:
    head = {**RUNNERS, LIB: lib, CHANGED: "#!/bin/bash\necho run\n",
            LAUNCHER: '#!/bin/bash\nsource "$(dirname "$0")/../../benchmark_lib.sh"\nrun_benchmark_serving\n'}
    ctx = ReviewContext(build_snapshot(base=head, head=head))
    return reach_names(ctx.head_repo, ctx.snapshot.head, targets)


def test_a_name_only_a_comment_holds_does_not_reach():
    lib = "#!/bin/bash\n# launch_mi355x-amds.sh derives PORT from RUNNER_NAME\nrun_benchmark_serving() { :; }\n"
    assert _names(lib) == {"launch_mi355x-amds.sh"}


def test_a_name_the_code_holds_reaches_and_so_do_the_files_naming_that_one():
    lib = '#!/bin/bash\nrun_benchmark_serving() { bash "$GITHUB_WORKSPACE/runners/launch_mi355x-amds.sh"; }\n'
    assert _names(lib) == {"launch_mi355x-amds.sh", "benchmark_lib.sh", "dsr1_fp8_mi355x.sh"}


def test_a_hash_in_a_string_a_heredoc_or_an_expansion_is_not_a_comment():
    for lib in ('#!/bin/bash\necho "# see launch_mi355x-amds.sh"\n',
                "#!/bin/bash\nbash <<EOF\n# launch_mi355x-amds.sh\nEOF\n",
                "#!/bin/bash\nn=${#x}; bash launch_mi355x-amds.sh\n"):
        assert "benchmark_lib.sh" in _names(lib), lib


def test_a_text_that_does_not_parse_counts_whole():
    lib = "#!/bin/bash\n# launch_mi355x-amds.sh\nif then fi (\n"
    assert code_text(lib) is None
    assert "benchmark_lib.sh" in _names(lib)


def test_code_text_blanks_comments_only_and_keeps_line_numbers():
    text = "#!/bin/bash\necho a # b.sh\nx='# c.sh'\n"
    code = code_text(text)
    assert code is not None and code.count("\n") == text.count("\n")
    assert "b.sh" not in code and "'# c.sh'" in code and "echo a" in code


# --- a change inside functions reaches through the functions' names (affected_names) ----------
# Real shape: 6816ed05f2 (#2690) edits `build_replay_cmd` of benchmark_lib.sh, which ~230
# launchers source and 36 files name; only the latter can run the change.
REPLAY_LIB = """\
#!/bin/bash
export PORT=${PORT:-8888}
build_replay_cmd() {
    REPLAY_CMD="aiperf profile --url http://localhost:$PORT"
}
run_agentic_replay() {
    build_replay_cmd
    eval "$REPLAY_CMD"
}
run_benchmark_serving() {
    python3 utils/bench_serving/benchmark_serving.py --port "$PORT"
}
"""
SOURCES_LIB = 'source "$(dirname "$0")/../../benchmark_lib.sh"\n'
AGENTIC = "benchmarks/single_node/agentic/kimik3_fp4_b300_vllm_mtp.sh"
HELPER = "benchmarks/multi_node/agentic_srt.sh"
USES_HELPER = "benchmarks/multi_node/dsv4_fp4_gb300_dynamo-trt.sh"


def _affected_names(lib: str, head_lib: str, extra: dict[str, str] | None = None) -> set[str]:
    from recipes.launch.path.launch_path import file_change
    from recipes.launch.path.reach import affected_names

    files = {**RUNNERS, LAUNCHER: "#!/bin/bash\n" + SOURCES_LIB + "run_benchmark_serving\n",
             AGENTIC: "#!/bin/bash\n" + SOURCES_LIB + "run_agentic_replay  # the replay\n", **(extra or {})}
    snap = build_snapshot(base={**files, LIB: lib}, head={LIB: head_lib})
    ctx = ReviewContext(snap)
    change = file_change(snap.base, snap.head, LIB, "modified", None)
    return affected_names(ctx.head_repo, snap.head, {LIB: change})


def test_a_change_inside_a_function_reaches_its_callers_not_every_file_sourcing_the_library():
    head = REPLAY_LIB.replace("localhost:$PORT", "${AIPERF_SERVER_URL:-localhost:$PORT}")
    names = _affected_names(REPLAY_LIB, head)
    # The library's own caller joins the changed function; the launcher calling it is a target.
    assert {"build_replay_cmd", "run_agentic_replay", "kimik3_fp4_b300_vllm_mtp.sh"} <= names
    assert "dsr1_fp8_mi355x.sh" not in names and "benchmark_lib.sh" not in names
    # The same edit seen as a whole-file change would keep every launcher sourcing the library.
    whole = reach_names(ReviewContext(build_snapshot(base={**RUNNERS, LIB: head, LAUNCHER: SOURCES_LIB})).head_repo,
                        build_snapshot(base={**RUNNERS, LIB: head, LAUNCHER: SOURCES_LIB}).head, (LIB,))
    assert "dsr1_fp8_mi355x.sh" in whole


def test_a_helper_calling_the_changed_function_keeps_the_files_that_source_it():
    head = REPLAY_LIB.replace("localhost:$PORT", "${AIPERF_SERVER_URL:-localhost:$PORT}")
    extra = {HELPER: "#!/bin/bash\nwait_idle() { build_replay_cmd; }\n",
             USES_HELPER: '#!/bin/bash\nsource "$(dirname "$0")/agentic_srt.sh"\nwait_idle\n'}
    names = _affected_names(REPLAY_LIB, head, extra)
    assert {"agentic_srt.sh", "dsv4_fp4_gb300_dynamo-trt.sh"} <= names
    assert "dsr1_fp8_mi355x.sh" not in names


def test_a_changed_function_the_top_level_calls_keeps_the_library_and_its_sourcers():
    lib = REPLAY_LIB + "build_replay_cmd\n"
    names = _affected_names(lib, lib.replace("aiperf profile", "aiperf profile -v"))
    assert {"benchmark_lib.sh", "dsr1_fp8_mi355x.sh"} <= names


def test_a_mention_in_a_comment_only_does_not_reach():
    head = REPLAY_LIB.replace("aiperf profile", "aiperf profile -v")
    names = _affected_names(REPLAY_LIB, head, {HELPER: "#!/bin/bash\n# build_replay_cmd lives in benchmark_lib.sh\n"})
    assert "agentic_srt.sh" not in names and "kimik3_fp4_b300_vllm_mtp.sh" in names


def test_a_top_level_change_keeps_the_whole_file_as_a_target():
    names = _affected_names(REPLAY_LIB, REPLAY_LIB.replace("8888", "9999"))
    assert {"benchmark_lib.sh", "dsr1_fp8_mi355x.sh", "kimik3_fp4_b300_vllm_mtp.sh"} <= names


def test_a_glued_word_counts_only_when_its_literal_parts_spell_part_of_a_changed_name():
    from recipes.launch.path.reach import _assembles_one

    names = {"build_replay_cmd"}
    assert _assembles_one('x=1\nbuild_${kind}_cmd "$@"\n', names)
    assert _assembles_one("cmd=build_$kind\n", names)
    assert not _assembles_one('echo "${MODEL}_fp8" "$a$b" a_$b\n', names)  # parts not in the name, or too short


def test_the_recipe_name_finder_finds_exactly_the_names_a_text_holds():
    # `may_name` asks every recipe about a few hundred names at once (reach._finder): found
    # where a name's last dot part occurs, which must find what a plain search finds: names
    # at the very start or end, overlapping, sharing a tail, without a dot, or one inside another.
    from recipes.launch.path.reach import _finder

    names = {"x.sh", "lib_x.sh", "a.b.sh", "env", ".sh", "run.bash", "s.s.s", "é.sh"}
    find = _finder(names)
    texts = [b"", b"x.sh", b"setup: lib_x.sh", b"y.sh", b"a.b.s", b"prefix-a.b.sh-suffix", b"environment",
             b".s", b"s.s.s.s", b"s.s.", b"run.bas", b"run.bash", "é.sh".encode(), b"\xc3.sh", b"sh", b"b.sh"]
    for data in texts:
        assert find(data) == any(n.encode() in data for n in names), data
    assert _finder({"a.sh"})(b"xa.sh") and not _finder({"a.sh"})(b"a.s")


def test_the_dynamic_run_scan_finds_what_the_line_anchored_pattern_finds():
    # blind_files scans every script with a pattern that skips to the characters a match starts
    # with (reach._dynamic_runs); it must find the matches of the `^`-anchored one, at the text's
    # start, at line starts, after `;`, in a row and after a comment.
    from recipes.launch.path.reach import _DYNAMIC_RUN, _dynamic_runs

    texts = ['source "$a"\n', '. "$DIR/${N}.sh"\nbash x', 'x; bash "$b"\n# bash $c\n  exec $d', "\n\nsource $e",
             " bash -x $f\n", "echo a.b\nsh\n", "", "source", "{ . $g; }\n(bash $h)\n!source $i"]
    for text in texts:
        want = [(m.start(), m.end(), m.group(1)) for m in _DYNAMIC_RUN.finditer(text)]
        assert [(m.start(), m.end(), m.group(1)) for m in _dynamic_runs(text)] == want, text
