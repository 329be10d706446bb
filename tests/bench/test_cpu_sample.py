"""bench/cpu_sample.py: how sampled stacks are split into the interpreter, the imports and the
rest, and how the rest's calls are counted and printed (the sampling itself needs the history,
so it stays out of CI)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("cpu_sample", PROJECT / "bench" / "cpu_sample.py")
cpu_sample = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cpu_sample)

MAIN = "bot/cli.py:111(main)"
AFFECTED = "checks/context.py:298(affected)"
ROOTS = "recipes/launch/path/launch_path.py:586(affected_roots)"
MEMO = "checks/context.py:478(memo)"
FIND = "/usr/lib/python3.11/re/__init__.py:272(_compile)"
INTERPRET = "recipes/launch/point.py:474(_interpret)"
IMPORT = "<frozen importlib._bootstrap>:1165(_find_and_load)"

# Innermost frame first, as the child records them.
STACKS = {
    (ROOTS, AFFECTED, MAIN): 5,
    (FIND, MEMO, ROOTS, AFFECTED, MAIN): 3,
    (MEMO, AFFECTED, MAIN): 2,
    ("recipes/launch/shell.py:255(statement)", INTERPRET, AFFECTED, MAIN): 7,
    ("recipes/master.py:1(<module>)", IMPORT, MAIN): 4,
}


def test_a_sample_in_the_interpreter_or_an_import_counts_there_only():
    s = cpu_sample.summarize(STACKS)
    assert s["parts"] == {"outside": 10, "interpreter": 7, "imports": 4}
    assert s["samples"] == 21
    assert s["tree"][cpu_sample.COUNT] == 10


def test_own_time_goes_to_the_innermost_function_of_the_project():
    own = cpu_sample.summarize(STACKS)["own"]
    # The regular expression's compile is charged to the memo that asked for it.
    assert own == {ROOTS: 5, MEMO: 5}


def test_the_tree_counts_each_call_path_and_under_starts_at_the_function():
    s = cpu_sample.summarize(STACKS, under="affected_roots")
    tree = s["tree"]
    assert tree[cpu_sample.COUNT] == 8  # the samples outside with affected_roots on the stack
    assert list(k for k in tree if k != cpu_sample.COUNT) == [ROOTS]
    assert tree[ROOTS][cpu_sample.COUNT] == 8 and tree[ROOTS][MEMO][cpu_sample.COUNT] == 3
    assert cpu_sample.summarize(STACKS, under="no such function")["tree"][cpu_sample.COUNT] == 0


def test_the_printed_tree_joins_a_call_that_holds_all_its_callers_samples():
    s = cpu_sample.summarize(STACKS)
    lines = cpu_sample.tree_lines(s["tree"], s["samples"], 0.0, 10)
    assert lines[0].split() == ["47.62%", MAIN, ">", AFFECTED]
    assert lines[1].split() == ["38.10%", ROOTS]
    assert lines[2].split() == ["14.29%", MEMO, ">", FIND]
    assert lines[3].split() == ["9.52%", MEMO]
    # Below the least share, or past the depth, a call is not listed.
    assert len(cpu_sample.tree_lines(s["tree"], s["samples"], 0.2, 10)) == 2
    assert len(cpu_sample.tree_lines(s["tree"], s["samples"], 0.0, 1)) == 1


def test_part_lists_the_samples_of_the_interpreter_instead():
    s = cpu_sample.summarize(STACKS, part="interpreter")
    assert s["parts"] == {"outside": 10, "interpreter": 7, "imports": 4}
    assert s["tree"][cpu_sample.COUNT] == 7
    assert s["own"] == {"recipes/launch/shell.py:255(statement)": 7}
    assert cpu_sample.summarize(STACKS, under="affected_roots", part="interpreter")["tree"][cpu_sample.COUNT] == 0
