"""bench/job.py: its reduced mode runs the route and review jobs of one event against the
emulator and prints the figures' shape (no timing is asserted: speed is measured by the bench
scripts, never by tests); its arguments are checked before anything runs."""
from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
SCRIPT = PROJECT / "bench" / "job.py"


def _job_module():
    spec = importlib.util.spec_from_file_location("bench_job", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod  # its dataclasses look their module up
    spec.loader.exec_module(mod)
    return mod


def test_reduced_mode_routes_and_posts_a_verdict_and_prints_the_figures():
    proc = subprocess.run([sys.executable, str(SCRIPT), "--no-install", "--runs", "1", "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr  # exit 1 when routing or the verdict comment failed
    f = json.loads(proc.stdout)
    assert f["runs"] == 1 and f["way"] == "none" and f["installs_from"] is None
    assert "pip_job_s_median" not in f, "no pip figure when nothing was installed"
    s = f["ways"]["none"]
    assert {"route", "job", "event", "route_run", "job_run", "venv", "job_cpu", "event_cpu"} <= set(s)
    assert not any(k.endswith("install") for k in s)
    for key in ("route", "job", "event"):
        assert set(s[key]) == {"median", "p95", "min"} and 0 < s[key]["min"] <= s[key]["median"] <= s[key]["p95"]
    assert f["job_s_median"] == s["job"]["median"] and f["event_s_median"] == s["event"]["median"]
    assert f["job_cpu_s_median"] == s["job_cpu"]["median"] > 0
    assert s["event"]["median"] > s["job"]["median"]


def test_arguments():
    job = _job_module()
    args = job.parse_args([])
    assert args.ways == ["uv", "pip"] and args.runs == job.DEFAULT_RUNS
    assert job.parse_args(["--no-install", "--ways", "pip"]).ways == ["none"]
    assert job.parse_args(["--ways", "uv-lazy"]).ways == ["uv-lazy"]
    assert job.parse_args(["--from-index"]).from_index and not args.from_index
    # The wheelhouse alone, or the index as a runner reads it.
    assert job.source_flags(Path("/w")) == ["--no-index", "--find-links", "/w"] and job.source_flags(job.FROM_INDEX) == []
    for bad in (["--ways", "conda"], ["--ways", ","], ["--runs", "0"]):
        with pytest.raises(SystemExit) as exc:
            job.parse_args(bad)
        assert exc.value.code == 2, bad


def test_the_pip_figure_sits_beside_the_job_figure():
    job = _job_module()
    one = {"median": 1.0, "p95": 2.0, "min": 0.5}
    per_way = {w: {"job": one, "event": {"median": 3.0, "p95": 4.0, "min": 2.0}, "job_cpu": one} for w in ("uv", "pip")}
    job.measure = lambda ways, runs, wheelhouse: {w: per_way[w] for w in ways}
    f = job.figures(["uv", "pip"], 3, Path("/wheels"))
    assert (f["way"], f["job_s_median"], f["job_s_p95"], f["pip_job_s_median"], f["pip_job_s_p95"]) == ("uv", 1.0, 2.0, 1.0, 2.0)
    assert "pip_job_s_median" not in job.figures(["pip"], 3, Path("/wheels"))
