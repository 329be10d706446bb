"""A configuration file the bot cannot apply is never ignored silently (issue 30): the verdict
carries a short "Configuration" note naming each problem by file:line, standard error says the
same, and the default policy is applied, in local mode and in GitHub mode."""
from __future__ import annotations

import logging
import os
import shutil
import subprocess
import sys
from datetime import date
from pathlib import Path

from bot.cli import main
from bot.pipeline import review_pr
from checks.render import render_comment, validate_comment
from ghsim import Emulator
from tests.builders import emulator_api

PROJECT = Path(__file__).resolve().parents[2]
SEED = PROJECT / "ghsim" / "worlds" / "seed"
BROKEN = b"sweep:\n  mode: dispach\npolicy:\n  pareto_min_frontier: 1\n  no_such_knob: true\n"
PROBLEMS = [".github/infx-review.yml:2: sweep.mode: Input should be 'label' or 'dispatch'",
            ".github/infx-review.yml:5: policy.no_such_knob: Extra inputs are not permitted"]
NOTE = "**Configuration:** " + "; ".join(p.replace("_", "\\_") for p in PROBLEMS)


def _git(path: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True, text=True, env=env).stdout


def _local_world(tmp_path: Path) -> tuple[Path, str]:
    """The seed world as a checkout whose target branch (main) gained a broken config file."""
    dest = tmp_path / "seed"
    assert main(["sandbox", "checkout", "--world", str(SEED), str(dest)]) == 0
    head = _git(dest, "rev-parse", "HEAD").strip()
    _git(dest, "checkout", "-q", "main")
    (dest / ".github" / "infx-review.yml").write_bytes(BROKEN)
    _git(dest, "add", ".github/infx-review.yml")
    _git(dest, "commit", "-qm", "a broken config")
    return dest, head


def test_local_mode_notes_the_broken_file_in_the_verdict_and_on_stderr(tmp_path, capsys):
    dest, head = _local_world(tmp_path)
    argv = ["check", "--local", str(dest), "--base", "main", "--head", head, "--pr", f"{dest}.pr.yaml",
            "--review-date", "2026-11-29", "--only", "0"]
    proc = subprocess.run([sys.executable, "-m", "bot", *argv], cwd=PROJECT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode in (0, 1), proc.stderr
    assert NOTE in proc.stdout and "the default policy applied instead" in proc.stdout
    for problem in PROBLEMS:  # one stderr line each, file:line first
        assert any(line.endswith(f"{problem} (this file is not applied: the default policy is)")
                   for line in proc.stderr.splitlines()), proc.stderr
    capsys.readouterr()
    main([*argv, "--format", "json"])
    assert '"configuration": [\n    "' + PROBLEMS[0] in capsys.readouterr().out


def test_github_mode_notes_the_broken_file_in_the_published_verdict(tmp_path, caplog):
    world = tmp_path / "seed"
    shutil.copytree(SEED, world)
    (world / "base" / ".github" / "infx-review.yml").write_bytes(BROKEN)
    with Emulator(world, strict=True) as emu:
        api = emulator_api(emu)
        try:
            with caplog.at_level(logging.WARNING, logger="bot.pipeline"):
                review = review_pr(api, emu.world.repo, emu.world.pr.number, post=False,
                                   review_date=date(2026, 11, 29))
        finally:
            api.close()
    verdict = review.verdict
    assert verdict.configuration == PROBLEMS
    assert NOTE in review.rendered.markdown
    assert [r.getMessage() for r in caplog.records if r.name == "bot.pipeline"] == [
        f"{p} (this file is not applied: the default policy is)" for p in PROBLEMS]
    body = render_comment(verdict, verdict.signoff.key)
    assert NOTE in body and validate_comment(body) == []


def test_a_good_file_adds_no_note(tmp_path):
    world = tmp_path / "seed"
    shutil.copytree(SEED, world)
    (world / "base" / ".github" / "infx-review.yml").write_text("policy:\n  pareto_min_frontier: 5\n")
    with Emulator(world, strict=True) as emu:
        api = emulator_api(emu)
        try:
            review = review_pr(api, emu.world.repo, emu.world.pr.number, post=False, review_date=date(2026, 11, 29))
        finally:
            api.close()
    assert review.verdict.configuration == [] and "Configuration" not in review.rendered.markdown


def test_local_mode_applies_an_explicit_config_file_over_the_target_branchs(tmp_path):
    """`check --local --config FILE`: a checkout without InferenceX's file (or with a broken one)
    reviewed with InferenceX's settings, passed explicitly."""
    from bot.local import build_local_snapshot
    from checks.context import ReviewContext
    from tests.builders import INFERENCEX_CONFIG_FILE

    dest, head = _local_world(tmp_path)
    snap = build_local_snapshot(dest, "main", head, pr_file=f"{dest}.pr.yaml", review_date=date(2026, 11, 29),
                                config_file=INFERENCEX_CONFIG_FILE)
    ctx = ReviewContext(snap)
    assert ctx.config_findings == []  # the broken file on main is not read
    assert ctx.config.policy.pareto_escalation == ["@functionstackx", "@cquil11", "@Oseltamivir", "@adibarra"]


def test_an_explicit_config_file_that_cannot_be_applied_is_a_usage_error(tmp_path, capsys):
    dest, head = _local_world(tmp_path)
    bad = tmp_path / "mine.yml"
    bad.write_bytes(BROKEN)
    capsys.readouterr()
    argv = ["check", "--local", str(dest), "--base", "main", "--head", head, "--pr", f"{dest}.pr.yaml"]
    assert main([*argv, "--config", str(bad)]) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err.splitlines() == [f"error: {bad}:2: sweep.mode: Input should be 'label' or 'dispatch'",
                                                      f"error: {bad}:5: policy.no_such_knob: Extra inputs are not permitted"]
    assert main([*argv, "--config", str(tmp_path / "absent.yml")]) == 2
    assert "cannot read the configuration file" in capsys.readouterr().err
    assert main(["check", "7", "--repo", "octo/bench", "--config", str(bad)]) == 2
    assert "--config applies to local mode only" in capsys.readouterr().err
