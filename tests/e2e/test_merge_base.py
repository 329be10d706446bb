"""The PR's own baseline end to end: a world whose target branch moved on after the PR branched
(ghsim `target_commits`). GitHub mode (the compare API's `merge_base_commit`) and local mode
(`git merge-base`) both compare the merge base with the head for "what did this PR change?",
and read the target tip for the rules."""
from __future__ import annotations

import json
import shutil
import subprocess
from datetime import date
from pathlib import Path

import pytest

from bot.cli import main
from bot.snapshot_builder import build_snapshot
from checks.engine import evaluate
from ghsim import Emulator
from tests.builders import emulator_api

SEED = Path(__file__).resolve().parents[2] / "ghsim" / "worlds" / "seed"
THRESHOLDS = "inferencex-e2e/infx/evals/thresholds.yaml"
GOLDEN = "inferencex-e2e/infx/golden_al_distribution"
NEW_CURVE = f"{GOLDEN}/qwen3.5_mtp.yaml"
# The seed's gsm8k default bar is 0.90 and its eval scores 0.973: 0.95 still passes, so the
# row shows the bar came from the target tip and nothing reads as lowered by the PR.
RAISED = '"gsm8k": 0.95'


@pytest.fixture(scope="module")
def moved_world(tmp_path_factory) -> Path:
    """The seed world plus one commit on main after the PR branched: a raised gsm8k bar and a
    new golden curve, neither of which the PR has."""
    dest = tmp_path_factory.mktemp("moved") / "seed"
    shutil.copytree(SEED, dest)
    bars = (SEED / "base" / THRESHOLDS).read_text()
    assert '"gsm8k": 0.90' in bars
    overlay = dest / "commits" / "m1"
    (overlay / THRESHOLDS).parent.mkdir(parents=True)
    (overlay / THRESHOLDS).write_text(bars.replace('"gsm8k": 0.90', RAISED, 1))
    (overlay / NEW_CURVE).parent.mkdir(parents=True)
    (overlay / NEW_CURVE).write_text("qwen3.5-397b-a17b:\n  thinking_on:\n    3: 3.39\n")
    with (dest / "world.yaml").open("a") as f:
        f.write("\ntarget_commits:\n  - id: m1\n    message: Raise the gsm8k bar and add the qwen3.5 curve\n")
    return dest


def test_emulator_compare_names_the_merge_base_of_a_diverged_pr(moved_world):
    with Emulator(moved_world, strict=True) as emu:
        assert emu.merge_base_sha != emu.base_sha
        api = emulator_api(emu)
        r = f"/repos/{emu.world.repo}"
        found = api.get(f"{r}/compare/{emu.base_sha}...{emu.head_sha}")
        assert found["merge_base_commit"]["sha"] == emu.merge_base_sha
        assert found["status"] == "diverged"
        assert (found["ahead_by"], found["behind_by"]) == (len(emu.world.commits), 1)
        assert THRESHOLDS not in {f["filename"] for f in found["files"]}
        pr = api.get(f"{r}/pulls/{emu.world.pr.number}")
        assert pr["base"]["sha"] == emu.base_sha
        # The PR's files are its own changes from the merge base, as GitHub lists them.
        files = {f["filename"] for f in api.list(f"{r}/pulls/{emu.world.pr.number}/files")}
        assert THRESHOLDS not in files and NEW_CURVE not in files
        emu.assert_clean()


def test_github_mode_compares_the_merge_base_and_reads_rules_from_the_target(moved_world):
    with Emulator(moved_world, strict=True) as emu:
        snap = build_snapshot(emulator_api(emu), emu.world.repo, emu.world.pr.number, review_date=date(2026, 11, 29))
        assert snap.base_sha == emu.merge_base_sha
        assert RAISED.encode() in snap.target_tree.read(THRESHOLDS)
        assert snap.merge_base_tree.read(NEW_CURVE) is None
        verdict = evaluate(snap)
        two, eleven = verdict.row(2), verdict.row(11)
        assert two.status.value == "PASS", two.reason
        assert "0.95" in two.reason and "lowers" not in two.reason
        assert eleven.status.value == "PASS", eleven.reason
        assert "qwen3.5_mtp" not in eleven.reason


def test_local_mode_uses_git_merge_base(moved_world, tmp_path, capsys):
    dest = tmp_path / "checkout"
    assert main(["sandbox", "checkout", "--world", str(moved_world), str(dest)]) == 0
    capsys.readouterr()
    head = subprocess.run(["git", "-C", str(dest), "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()
    code = main(["check", "--local", str(dest), "--base", "main", "--head", head,
                 "--pr", str(dest.with_name(dest.name + ".pr.yaml")), "--review-date", "2026-10-20",
                 "--format", "json", "--only", "2,11"])
    rows = {c["number"]: c for c in json.loads(capsys.readouterr().out)["checks"]}
    assert rows[2]["status"] == "PASS" and "0.95" in rows[2]["reason"], rows[2]
    assert rows[11]["status"] == "PASS", rows[11]
    assert code in (0, 1)


SWEEP = SEED.parent / "sweep"
CHANGELOG = "inferencex-e2e/perf-changelog.yaml"
OTHER_KEY = "dsr1-fp4-mi355x-sglang"
PR_KEY = "dsv41flash-fp4-mi355x-atom-agentic-dspark"


def test_sweep_starts_what_the_pr_appends_not_what_main_appended_since(tmp_path, monkeypatch):
    """Another PR's changelog entry merged to main after this PR branched: the sweep this PR's
    label starts runs only this PR's entry (its head against its merge base)."""
    from ghsim import effects as fx

    world = tmp_path / "sweep"
    shutil.copytree(SWEEP, world)
    log = (SWEEP / "base" / CHANGELOG).read_text()
    overlay = world / "commits" / "m1" / CHANGELOG
    overlay.parent.mkdir(parents=True)
    overlay.write_text(log + f"\n- config-keys:\n    - {OTHER_KEY}\n  description:\n    - \"Another PR\"\n"
                             "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/3700\n")
    with (world / "world.yaml").open("a") as f:
        f.write("\ntarget_commits:\n  - id: m1\n    message: Another PR appends its changelog entry\n")
    event = sorted((SWEEP / "events").glob("*.labeled-full-sweep-fail-fast.json"))[0]
    with Emulator(world, strict=True) as emu:
        monkeypatch.setenv("GITHUB_TOKEN", emu.world.bot.token)
        assert main(["handle-event", "--event-name", "pull_request", "--event-path", str(event),
                     "--github-url", emu.url, "--review-date", "2026-11-29"]) == 0
        emu.assert_clean()
        dispatched = [e for e in emu.effects if e["kind"] == fx.EFFECT_WORKFLOW_DISPATCHED]
        assert len(dispatched) == 1
        keys = " ".join(str(v) for v in dispatched[0]["inputs"].values())
        assert PR_KEY in keys and OTHER_KEY not in keys
        # Against the target tip, main's entry would read as this PR rewriting the changelog.
        said = " ".join(str(e.get("body") or "") for e in emu.effects if e["actor"] == emu.world.bot.login)
        assert "existing changelog bytes were changed" not in said
