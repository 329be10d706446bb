"""bench/startup.py runs its three kinds of fresh processes and prints the figures (no timing is
asserted: speed is measured by the bench scripts, never by tests)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]


def test_startup_prints_each_kind_with_its_spread():
    out = subprocess.run([sys.executable, str(PROJECT / "bench" / "startup.py"), "--runs", "1", "--no-compile",
                          "--json"], capture_output=True, text=True, check=True, timeout=120).stdout
    figures = json.loads(out)
    assert figures["runs"] == 1 and set(figures["targets_s"]) == {"imports", "help"}
    for kind in ("imports", "help", "python"):
        spread = figures[kind]
        assert set(spread) == {"median", "p95", "min"}
        assert 0 < spread["min"] <= spread["median"] <= spread["p95"]
