"""Check 2 behaviour that case files cannot express: eval rows GitHub could not provide."""
from __future__ import annotations

from checks.engine import evaluate
from checks.result import Status
from checks.snapshot import Unavailable
from tests.builders import build_snapshot


def test_unavailable_eval_rows_fail_as_unverified():
    snap = build_snapshot({
        "check_runs": {"head": [
            {"name": "single-node 8k1k / benchmark", "conclusion": "success", "run_id": 500},
            {"name": "eval / benchmark", "conclusion": "success", "run_id": 500},
        ]},
        "runs": [{"id": 500}],
    })
    run = snap.sweep_runs[500].model_copy(update={"evals": Unavailable(reason="artifact expired")})
    snap = snap.model_copy(update={"sweep_runs": {500: run}})
    row = evaluate(snap, only={2}).row(2)
    assert row.status is Status.FAIL
    assert row.reason.startswith("could not verify: the eval rows of run 500 could not be read (artifact expired)")
    assert any(e.unavailable and e.run_id == 500 for e in row.evidence)


def test_run_chosen_but_not_fetched_is_unverified_not_passed():
    snap = build_snapshot({"check_runs": {"head": [
        {"name": "single-node 8k1k / benchmark", "conclusion": "success", "run_id": 501},
        {"name": "eval / benchmark", "conclusion": "success", "run_id": 501},
    ]}})
    row = evaluate(snap, only={2}).row(2)
    assert row.status is Status.FAIL and "could not verify" in row.reason and "501" in row.reason
