"""A Python file a launch-path script runs is on the launch path (recipes.launch.path.launch_path rule 3):
a PR that edits only that file affects the points that run it, and Check 10 then reads it."""
from __future__ import annotations

from checks.context import ReviewContext
from checks.engine import evaluate
from tests.builders import build_snapshot
from tests.checks.test_affected import A, A_TEXT, base_tree

FIX = "benchmarks/single_node/fixed_seq_len/moe_fix.py"
CLEAN = "import json\nprint(json.dumps({'moe': 'ok'}))\n"
PATCH = ("import sglang, pathlib\n"
         "p = pathlib.Path(sglang.__file__).parent / 'srt/layers/moe/topk.py'\n"
         "p.write_text(p.read_text().replace('top_k != 8', 'top_k > 8'))\n")
RUNS_FIX = A_TEXT.replace("python3 -m sglang.launch_server", 'python3 -u "$(dirname "$0")/moe_fix.py"\npython3 -m sglang.launch_server')


def _snap(head: dict[str, str], *, runs: bool = True):
    base = {**base_tree(), FIX: CLEAN}
    if runs:
        base[A] = RUNS_FIX
    return build_snapshot(base=base, head=head)


def test_editing_only_the_python_file_affects_the_points_that_run_it():
    points = ReviewContext(_snap({FIX: PATCH})).affected.points
    assert {p.config_key for p in points} == {"dsr1-fp8-mi355x-sglang"}
    assert any("moe_fix.py" in r for p in points for r in p.reasons), [p.reasons for p in points]
    row = evaluate(_snap({FIX: PATCH}), only={10}).row(10)
    assert row.status.value == "FAIL" and "moe_fix.py:3 python write <site-packages>/sglang" in row.reason, row.reason


def test_a_python_file_no_script_runs_affects_nothing():
    assert ReviewContext(_snap({FIX: PATCH}, runs=False)).affected.points == []
    # A launcher that only names it in a comment does not run it: its own edit is the only reason.
    mention = {A: A_TEXT + "# see moe_fix.py\n", FIX: PATCH}
    points = ReviewContext(_snap(mention, runs=False)).affected.points
    assert points and all(p.reasons == [f"{A} changed"] for p in points), [p.reasons for p in points]


def test_a_python_file_named_by_an_unknown_variable_is_could_not_verify():
    dynamic = RUNS_FIX.replace('"$(dirname "$0")/moe_fix.py"', '"$FIX_DIR/moe_fix.py"')
    row = evaluate(build_snapshot(base=base_tree(), head={A: dynamic}), only={10}).row(10)
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert "$FIX_DIR/moe_fix.py" in row.reason, row.reason


# Shaped like benchmark_lib.sh's eval helpers: `_eval_patches_dir` prints the patches folder.
LIB_WITH_PATCHES = """\
#!/usr/bin/env bash
_eval_patches_dir() {
    cd "$(dirname "${BASH_SOURCE[0]}")/../utils/evals/patches" && pwd
}

run_benchmark_serving() {
    python3 "$(_eval_patches_dir)/patch_client.py"
}

run_eval() {
    :
}
"""
PATCHES = "utils/evals/patches/patch_client.py"


def test_a_function_that_prints_a_directory_resolves_the_python_file_it_names():
    base = {**base_tree(), "benchmarks/benchmark_lib.sh": LIB_WITH_PATCHES, PATCHES: CLEAN}
    touch = {A: A_TEXT + "echo touched\n"}  # the point is affected through its launcher
    # The client's patch file is found and read (not "could not verify": the path is known).
    row = evaluate(build_snapshot(base=base, head=touch), only={10}).row(10)
    assert row.status.value == "PASS", row.reason
    # The same file rewriting the engine is an engine patch, cited at the resolved path.
    row = evaluate(build_snapshot(base=base, head={**touch, PATCHES: PATCH}), only={10}).row(10)
    assert row.status.value == "FAIL" and f"{PATCHES}:3 python write <site-packages>/sglang" in row.reason, row.reason


def test_an_edit_of_the_benchmark_clients_python_file_alone_affects_no_point():
    # utils/ (policy benchmark_client_paths) measures; it does not serve.
    base = {**base_tree(), "benchmarks/benchmark_lib.sh": LIB_WITH_PATCHES, PATCHES: CLEAN}
    snap = build_snapshot(base=base, head={PATCHES: CLEAN + "print('v2')\n"})
    assert ReviewContext(snap).affected.points == []
    # Outside the client's folders the same edit affects the caller (first test of this file).
