"""`python -m bot demo`: the real pipeline over HTTP against a bundled world, and its report."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from bot.cli import main
from bot.commands.demo import DEFAULT_SCENARIO, TITLE_EFFECTS, scenarios
from checks.registry import CHECK_NUMBERS

PROJECT = Path(__file__).resolve().parents[2]
# A verdict must stay cheap: the seed world's whole run (reads and both writes) stays under this.
MAX_DEMO_REQUESTS = 60


def test_bundled_scenarios_include_seed_and_rejected():
    assert {"seed", "rejected"} <= set(scenarios()) and DEFAULT_SCENARIO == "seed"


def test_demo_json_reports_verdict_checks_effects_and_requests(capsys):
    code = main(["demo", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0
    assert set(data) == {"verdict", "checks", "effects", "requests"}
    assert data["verdict"] == "WARN" and [c["number"] for c in data["checks"]] == sorted(CHECK_NUMBERS)
    assert [e["kind"] for e in data["effects"]] == ["comment_created", "status_set", "check_run_created"]
    assert data["effects"][0]["body"].startswith("<!-- codeowner-signoff-verify signoff=issuecomment-4401 -->")
    assert 0 < data["requests"] <= MAX_DEMO_REQUESTS


def test_demo_rejected_scenario_in_markdown(capsys):
    code = main(["demo", "--scenario", "rejected"])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("## ❌❌❌ **REJECTED** ❌❌❌")
    assert TITLE_EFFECTS in out and "- status_set by github-actions[bot]" in out and "state=failure" in out
    assert "Requests served:" in out


def test_demo_on_a_world_directory(tmp_path, capsys):
    world = tmp_path / "w"
    shutil.copytree(PROJECT / "ghsim" / "worlds" / "seed", world)
    assert main(["demo", "--world", str(world), "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["verdict"] == "WARN"


def test_demo_unknown_scenario_is_a_usage_error(capsys, tmp_path):
    assert main(["demo", "--scenario", "nope"]) == 2
    assert "seed" in capsys.readouterr().err
    assert main(["demo", "--world", str(tmp_path)]) == 2


def test_demo_runs_as_a_fresh_process():
    """What `make demo` runs, from the project directory, with no environment set up."""
    proc = subprocess.run([sys.executable, "-m", "bot", "demo"], cwd=PROJECT, capture_output=True, text=True,
                          timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("## ⚠️ **Verdict: WARN** ⚠️") and "comment_created" in proc.stdout


def test_demo_reuse_scenario_prints_accepted_and_refused_commands(capsys):
    assert main(["demo", "--scenario", "reuse", "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    reactions = [e["content"] for e in data["effects"] if e["kind"] == "reaction_added"]
    assert "+1" in reactions and "-1" in reactions, "the scenario shows commands accepted and refused"
    refusals = [e["body"] for e in data["effects"] if e["kind"] == "comment_created" and "not accepted" in e["body"]]
    assert len(refusals) == reactions.count("-1")
    assert 0 < data["requests"]


def test_demo_sweep_scenario_prints_one_dispatch_for_the_label(capsys):
    assert main(["demo", "--scenario", "sweep"]) == 0
    out = capsys.readouterr().out
    assert TITLE_EFFECTS in out
    assert out.count("- workflow_dispatched by github-actions[bot]") == 1, "the redelivered label starts nothing more"
    assert "| `dsv41flash-fp4-mi355x-atom-agentic-dspark` | agentic-coding | 16 |" in out
