"""Checks that read a point's launch path (8: architecture hacks, 10: engine patches) cannot
pass a point whose launcher the runner picks at run time: nothing of what the server runs is
evidence, so the row is "could not verify" naming the runner's line (missing evidence is never
a PASS). The point is the real AMD disagg shape (tests/checks/test_check_09_runner_chosen.py)."""
from __future__ import annotations

import pytest

from checks.engine import evaluate
from tests.builders import build_snapshot
from tests.checks.test_check_09_runner_chosen import MASTER, RUNNER, RUNNERS

def _row(check: int):
    head = {"configs/amd-master.yaml": MASTER, "configs/runners.yaml": RUNNERS,
            "runners/launch_mi355x-amds.sh": RUNNER}
    snap = build_snapshot({"base": {"configs/runners.yaml": RUNNERS}, "head": head})
    return evaluate(snap, only={check}).row(check)


@pytest.mark.parametrize("check", [8, 10])
def test_a_runner_chosen_launcher_is_could_not_verify(check):
    row = _row(check)
    assert row.status.value == "FAIL", row.reason
    assert row.reason.startswith("could not verify dsr1-fp8-mi355x-sglang-disagg-mtp"), row.reason
    assert "runners/launch_mi355x-amds.sh:4 runs benchmarks/multi_node/dsr1_fp8_mi355x_sglang-disagg.sh, which is not in the repository" in row.reason
    assert "what the server runs is unknown" in row.reason
    assert all(e.unavailable for e in row.evidence)
