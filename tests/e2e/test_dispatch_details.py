"""Sweep dispatch asks GitHub for the run it starts (`return_run_details: true`, 2026-02) instead
of sleeping and searching the workflow's runs; a server that refuses the parameter (GitHub
Enterprise Server before it) is asked again without it."""
from __future__ import annotations

from pathlib import Path

import pytest

from bot.cli import main
from ghsim import Emulator
from ghsim import effects as fx

WORLDS = Path(__file__).resolve().parents[2] / "ghsim" / "worlds"
RUNS_ROUTE = "GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs"
DISPATCH_ROUTE = "POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches"


def _label_event() -> Path:
    found = sorted((WORLDS / "sweep" / "events").glob("*.labeled-full-sweep-fail-fast.json"))
    assert len(found) == 1
    return found[0]


@pytest.mark.parametrize("details", [True, False])
def test_dispatch_reports_the_started_run_without_searching(monkeypatch, details):
    with Emulator(WORLDS / "sweep", strict=True, run_details=details) as emu:
        monkeypatch.setenv("GITHUB_TOKEN", emu.world.bot.token)
        assert main(["handle-event", "--event-name", "pull_request", "--event-path", str(_label_event()),
                     "--github-url", emu.url, "--review-date", "2026-11-29"]) == 0
        emu.assert_clean()
        bot = [e for e in emu.effects if e["actor"] == emu.world.bot.login]
        dispatched = [e for e in bot if e["kind"] == fx.EFFECT_WORKFLOW_DISPATCHED]
        reply = [e for e in bot if e["kind"] == fx.EFFECT_COMMENT_EDITED][-1]["body"]
        assert len(dispatched) == 1
        assert emu.requests[RUNS_ROUTE] == 0, "no search for the run"
        if details:
            run = dispatched[0]["run_id"]
            assert f"Run: [{run}](https://github.com/{emu.world.repo}/actions/runs/{run})." in reply
            assert emu.requests[DISPATCH_ROUTE] == 1
        else:
            # 422 naming the parameter, then the same dispatch without it: still one run.
            assert [e["status"] for e in emu.request_log if e["route"] == DISPATCH_ROUTE] == [422, 204]
            assert "Run: [" not in reply
