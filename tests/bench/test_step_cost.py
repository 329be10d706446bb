"""bench/step_cost.py: reading callgrind's count, and a row that says when a checkout's traces
differ (the runs themselves need the history, so they stay out of CI)."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(PROJECT))
spec = importlib.util.spec_from_file_location("step_cost", PROJECT / "bench" / "step_cost.py")
step_cost = importlib.util.module_from_spec(spec)
spec.loader.exec_module(step_cost)


def test_the_instruction_count_is_read_from_callgrinds_summary():
    stderr = "==7== Callgrind, a call-graph generating cache profiler\n==7==\n==7== Events    : Ir\n" \
             "==7== Collected : 4166077051\n==7==\n==7== I   refs:      9,904,531,002\n"
    assert int(step_cost._COLLECTED.search(stderr).group(1)) == 4_166_077_051
    assert step_cost._COLLECTED.search("==7== I   refs:      9,904,531,002\n") is None


def test_a_checkout_whose_steps_or_traces_differ_is_named(monkeypatch, tmp_path):
    runs = {"before": {"cpu": [0.2, 0.1], "steps": [100, 50], "digests": ["a", "b"]},
            "same": {"cpu": [0.1, 0.05], "steps": [100, 50], "digests": ["a", "b"]},
            "steps": {"cpu": [0.1, 0.05], "steps": [100, 51], "digests": ["a", "b"]},
            "trace": {"cpu": [0.1, 0.05], "steps": [100, 50], "digests": ["a", "c"]}}
    monkeypatch.setattr(step_cost, "compile_bot", lambda bot: None)
    monkeypatch.setattr(step_cost, "verdict_command", lambda *a: (["python", "-m", "bot"], {"number": 7}))
    monkeypatch.setattr(step_cost, "one_run", lambda bot, cmd, instructions: runs[bot.name])
    bots = [tmp_path / name for name in runs]
    [row] = step_cost.measure("repo", [("sha" * 8, "2025-01-01", "s")], bots, 2, [], None, False)
    assert row["steps"] == 150 and row["traces"] == 2
    assert row["same_traces"] == {str(tmp_path / "before"): True, str(tmp_path / "same"): True,
                                  str(tmp_path / "steps"): False, str(tmp_path / "trace"): False}
    assert row["cpu_s"][str(tmp_path / "before")] == 0.3 and row["cpu_s"][str(tmp_path / "same")] == 0.15
