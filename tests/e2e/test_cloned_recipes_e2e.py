"""End to end over HTTP: a multi-node recipe that only the srt-slurm repository the runner
clones holds is read from that repository through the API (ghsim `other_repos:`), at the
commit GitHub names for the ref the runner pins, and cited there."""
from __future__ import annotations

import json
from pathlib import Path

from bot.cli import main
from ghsim import Emulator
from tests.checks.test_external_srt_recipe import CONFIG, MASTER, RECIPE, RUNNER, RUNNERS

REVIEW_DATE = "2026-11-29"
WORLD = """repo: SemiAnalysisAI/InferenceX
default_branch: main
head_branch: feat/dsr1-gb200
bot: {login: "github-actions[bot]", token: "ghs_sandbox"}
commits:
  - {id: c1, message: "Add the DSR1 GB200 MTP arm", date: 2026-11-20T09:00:00Z}
pr: {number: 77, title: "Add the DSR1 GB200 MTP arm", author: alice}
other_repos:
  - {repo: NVIDIA/srt-slurm, dir: srt-slurm, refs: [main, sa-submission-q2-2026]}
"""


def _world(tmp_path: Path, recipe: str | None) -> Path:
    root = tmp_path / "world"
    files = {"world.yaml": WORLD, "base/configs/runners.yaml": RUNNERS, "base/runners/launch_gb200-nv.sh": RUNNER,
             "base/configs/nvidia-master.yaml": "{}\n", "commits/c1/configs/nvidia-master.yaml": MASTER,
             "srt-slurm/README.md": "srt-slurm\n"}
    if recipe is not None:
        files[f"srt-slurm/{CONFIG}"] = recipe
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    return root


def _rows(emu: Emulator, capsys, monkeypatch) -> dict[int, dict]:
    monkeypatch.setenv("GITHUB_TOKEN", emu.world.bot.token)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    code = main(["check", "77", "--repo", emu.world.repo, "--github-url", emu.url, "--review-date", REVIEW_DATE,
                 "--only", "9,10", "--format", "json"])
    out, _ = capsys.readouterr()
    assert code in (0, 1)
    return {c["number"]: c for c in json.loads(out)["checks"]}


def test_the_cloned_repositorys_recipe_is_read_over_the_api_and_cited_there(tmp_path, capsys, monkeypatch):
    with Emulator(_world(tmp_path, RECIPE), strict=True) as emu:
        rows = _rows(emu, capsys, monkeypatch)
        emu.assert_clean()
        sha = emu.others["nvidia/srt-slurm"].sha
        asked = [e["path"] for e in emu.request_log if e["path"].startswith("/repos/NVIDIA/srt-slurm/")]
    assert rows[9]["status"] == "PASS", rows[9]["reason"]
    assert f"NVIDIA/srt-slurm@{sha[:12]}:{CONFIG}" in json.dumps(rows[9]["evidence"]) or \
        any(e.get("path") == f"NVIDIA/srt-slurm@{sha}:{CONFIG}" for e in rows[9]["evidence"]), rows[9]["evidence"]
    assert rows[10]["status"] == "PASS", rows[10]["reason"]
    assert any("commits/sa-submission-q2-2026" in k for k in asked), asked


def test_a_ref_without_the_recipe_is_could_not_verify_over_the_api(tmp_path, capsys, monkeypatch):
    with Emulator(_world(tmp_path, None), strict=True) as emu:
        rows = _rows(emu, capsys, monkeypatch)
        emu.assert_clean()
    for n in (9, 10):
        assert rows[n]["status"] == "FAIL" and rows[n]["reason"].startswith("could not verify"), rows[n]["reason"]
        assert f"which has no {CONFIG}" in rows[n]["reason"]


def test_a_patch_the_cloned_setup_script_runs_is_read_over_the_api(tmp_path, capsys, monkeypatch):
    # The recipe names a setup script only the clone holds; that script runs a patch file of the
    # same checkout through srtctl's /configs mount, and the patch rewrites an engine source.
    from tests.checks.test_cloned_setup_runs import DEPS, INSTALL, PATCH_PY
    root = _world(tmp_path, RECIPE.replace("backend:\n", "setup_script: deps.sh\nbackend:\n"))
    for rel, text in {"configs/deps.sh": DEPS, "configs/install-dynamo.sh": INSTALL,
                      "configs/patches/hash_fix.py": PATCH_PY}.items():
        (root / "srt-slurm" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "srt-slurm" / rel).write_text(text, encoding="utf-8")
    with Emulator(root, strict=True) as emu:
        rows = _rows(emu, capsys, monkeypatch)
        emu.assert_clean()
        sha = emu.others["nvidia/srt-slurm"].sha
    assert rows[10]["status"] == "FAIL" and not rows[10]["reason"].startswith("could not verify"), rows[10]["reason"]
    # The chain runs through the clone's setup script to the patch file it runs.
    assert "openai_server.py" in rows[10]["reason"] and f"NVIDIA/srt-slurm@{sha}:configs/deps.sh:" in rows[10]["reason"]
    assert any(e.get("path") == f"NVIDIA/srt-slurm@{sha}:configs/patches/hash_fix.py" for e in rows[10]["evidence"]), \
        rows[10]["evidence"]
