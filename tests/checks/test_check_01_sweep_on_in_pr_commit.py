"""Check 1's shared choice: what Checks 2 and 14 read through chosen_sweep_run()."""
from __future__ import annotations

import pytest

from checks.sweep_runs import chosen_sweep_run, job_kind, run_id_of, sweep_choice
from checks.context import ReviewContext
from checks.snapshot import CheckRun
from recipes.config import RepoConfig
from tests.builders import build_snapshot

PASSING = [
    {"name": "agentic / benchmark (x tp2 c1)", "conclusion": "success", "run_id": 42},
    {"name": "agentic eval / benchmark (x tp2 c128)", "conclusion": "success", "run_id": 42},
]


@pytest.mark.parametrize("name, kind", [
    ("single-node 8k1k / benchmark (dsr1 tp8 c4)", "benchmark"),
    ("single-node 1k1k / benchmark", "benchmark"),
    ("multi-node 8k1k / benchmark", "benchmark"),
    ("multi-node agentic / benchmark", "benchmark"),
    ("agentic / benchmark", "benchmark"),
    ("canary / benchmark (x)", "benchmark"),
    ("eval / benchmark", "eval"),
    ("agentic eval / benchmark", "eval"),
    ("multi-node eval / benchmark", "eval"),
    ("multi-node agentic eval / benchmark", "eval"),
    ("collect-evals / collect", None),
    ("collect-results / collect", None),
    ("check-changelog", None),
    ("reuse-sweep-gate", None),
    ("agentics / benchmark", None),
])
def test_job_kind(name, kind):
    assert job_kind(name, RepoConfig()) == kind


def test_run_id_from_details_url_when_run_id_is_missing():
    cr = CheckRun(name="eval / x", details_url="https://github.com/o/r/actions/runs/37597985033/job/5")
    assert run_id_of(cr) == 37597985033
    assert run_id_of(CheckRun(name="eval / x")) is None


def test_chosen_run_is_the_snapshot_run_and_is_computed_once():
    snap = build_snapshot({"check_runs": {"head": PASSING}, "runs": [{"id": 42, "evals": []}]})
    ctx = ReviewContext(snap)
    run = chosen_sweep_run(ctx)
    assert run is snap.sweep_runs[42]
    assert sweep_choice(ctx) is sweep_choice(ctx)


def test_a_run_the_snapshot_did_not_fetch_is_not_chosen_and_is_could_not_verify():
    # Without the run, its workflow is unknown: the jobs' names alone prove nothing (issue 12).
    ctx = ReviewContext(build_snapshot({"check_runs": {"head": PASSING}}))
    assert chosen_sweep_run(ctx) is None
    assert any("workflow of run 42" in u for u in sweep_choice(ctx).unavailable)


def test_no_qualifying_run_gives_none():
    ctx = ReviewContext(build_snapshot({"check_runs": {"head": PASSING[:1]}}))
    assert chosen_sweep_run(ctx) is None
