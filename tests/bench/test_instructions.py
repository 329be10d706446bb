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


def test_config_reaches_every_verdict_command(monkeypatch, tmp_path, capsys):
    # The replay's verdicts apply examples/inferencex/infx-review.yml: counted without it, a
    # verdict is another one (no srt-slurm clone is read, say).
    commands = []
    monkeypatch.setattr(instructions.shutil, "which", lambda name: "/usr/bin/valgrind")
    monkeypatch.setattr(instructions, "compile_bot", lambda bot: None)
    monkeypatch.setattr(instructions, "commit_of", lambda repo, sha: (sha * 5, "2026-01-02T00:00:00Z", "a PR"))
    monkeypatch.setattr(instructions, "measure", lambda cmd, bot: (commands.append(cmd), (1000, "{}"))[1])
    # The PR file verdict_command writes (read from the history otherwise).
    monkeypatch.setitem(instructions.verdict_command.__globals__, "pr_file", lambda repo, sha, subject, date: {"number": 1})
    config = tmp_path / "infx-review.yml"
    config.write_text("policy: {}\n")
    assert instructions.main(["--ix", ".", "--bot", ".", "--config", str(config), "abcdef01"]) == 0
    assert commands and commands[0][-2:] == ["--config", str(config)]
    commands.clear()
    assert instructions.main(["--ix", ".", "--bot", ".", "abcdef01"]) == 0
    assert "--config" not in commands[0]
    capsys.readouterr()
