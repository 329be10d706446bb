"""One reading or none in GitHub mode: a symbolic link the PR adds, read from the emulator's
trees (mode 120000), makes Check 0 ask for the owners of the file it reads and the serving rows
FAIL naming both places."""
from __future__ import annotations

import os
import shutil
from datetime import date
from pathlib import Path

from bot.snapshot_builder import build_snapshot
from checks.engine import evaluate
from ghsim import Emulator
from tests.builders import emulator_api

SEED = Path(__file__).resolve().parents[2] / "ghsim" / "worlds" / "seed"
LINK = "inferencex-e2e/configs/extra-master.yaml"
TARGET = "inferencex-e2e/configs/nvidia-master.yaml"


def test_a_link_the_pr_adds_is_two_readings_in_github_mode(tmp_path):
    world = tmp_path / "seed"
    shutil.copytree(SEED, world)
    link = world / "commits" / "c1" / LINK
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink("nvidia-master.yaml", link)
    with Emulator(world, strict=True) as emu:
        snap = build_snapshot(emulator_api(emu), emu.world.repo, emu.world.pr.number, review_date=date(2026, 11, 29))
        verdict = evaluate(snap)
        emu.assert_clean()
    zero = verdict.row(0)
    # The AMD owner who signed the seed PR is no owner of the NVIDIA file read through the link.
    assert zero.status.value == "FAIL", zero.reason
    assert f"{TARGET} (read through the symbolic link {LINK}" in zero.reason
    for n in (6, 7, 8, 9, 10, 11, 13):
        row = verdict.row(n)
        assert row.status.value == "FAIL", (n, row.reason)
        assert f"makes {LINK} a symbolic link to {TARGET}" in row.reason, (n, row.reason)
