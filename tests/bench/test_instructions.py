"""bench/instructions.py: reading cachegrind's count, the ratios it prints, and a clear exit
without valgrind (the runs themselves need valgrind and the history, so they stay out of CI)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(PROJECT / "bench"))
spec = importlib.util.spec_from_file_location("instructions", PROJECT / "bench" / "instructions.py")
instructions = importlib.util.module_from_spec(spec)
spec.loader.exec_module(instructions)

# The end of a real `valgrind --tool=cachegrind --cache-sim=no` run of a verdict.
STDERR = """==25554== Cachegrind, a high-precision tracing profiler
==25554== Command: python -m bot check --local HISTORY --base 6816ed05f2^1
==25554==
--25554-- warning: L3 cache found, using its data for the LL simulation.
==25554==
==25554== I   refs:      11,708,406,621
"""


def test_the_instruction_count_is_read_from_the_summary_line():
    assert instructions.instructions_of(STDERR) == 11_708_406_621
    assert instructions.instructions_of("==1== Command: python\n") is None


def test_ratios_are_against_the_first_checkout_and_skip_missing_counts():
    rows = [{"what": "a", "instructions": [100, 90, 110]}, {"what": "b", "instructions": [200, 100, None]},
            {"what": "c", "instructions": [None, 50, 50]}]
    s = instructions.summarize(rows, ["before", "after", "other"])
    assert s["rows"][0]["ratios"] == [1.0, 0.9, 1.1]
    assert s["rows"][2]["ratios"] == [None, None, None]
    assert s["against_first"]["after"] == {"median_ratio": 0.7, "total_ratio": round(190 / 300, 4)}
    assert s["against_first"]["other"] == {"median_ratio": 1.1, "total_ratio": 1.1}


def test_without_valgrind_it_says_so_and_exits_2(monkeypatch, capsys):
    monkeypatch.setattr(instructions.shutil, "which", lambda name: None)
    assert instructions.main(["--ix", ".", "--bot", ".", "--imports"]) == 2
    assert "valgrind is not installed" in capsys.readouterr().err
