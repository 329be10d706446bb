"""Local mode end to end on the bundled worlds: `sandbox checkout` then `check --local`, as an author would."""
from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from bot.cli import main
from checks.registry import CHECK_NUMBERS

WORLDS = Path(__file__).resolve().parents[2] / "ghsim" / "worlds"

# What the real verifier said on the seed thread (spec 11, ../shared/seed): WARN on 15 only,
# N/A on 3 and 12, PASS elsewhere.
SEED_ROWS = {n: "PASS" for n in sorted(CHECK_NUMBERS)} | {3: "N/A", 12: "N/A", 15: "WARN"}


def _checkout(world: str, tmp_path: Path, capsys) -> tuple[Path, Path, str]:
    dest = tmp_path / world
    assert main(["sandbox", "checkout", "--world", str(WORLDS / world), str(dest)]) == 0
    capsys.readouterr()
    head = subprocess.run(["git", "-C", str(dest), "rev-parse", "HEAD"], capture_output=True, text=True, check=True).stdout.strip()
    return dest, dest.with_name(dest.name + ".pr.yaml"), head


def _check(dest: Path, pr: Path, head: str, capsys, *extra: str) -> tuple[int, str]:
    code = main(["check", "--local", str(dest), "--base", "main", "--head", head, "--pr", str(pr),
                 "--review-date", "2026-10-20", *extra])
    return code, capsys.readouterr().out


def test_seed_world_in_local_mode_matches_the_real_verdict_rows(tmp_path, capsys):
    dest, pr, head = _checkout("seed", tmp_path, capsys)
    code, out = _check(dest, pr, head, capsys, "--format", "json")
    verdict = json.loads(out)
    assert code == 0
    assert verdict["verdict"] == "WARN"
    assert {c["number"]: c["status"] for c in verdict["checks"]} == SEED_ROWS
    assert verdict["head_sha"] == head


def test_rejected_world_in_local_mode_exits_1_with_markdown(tmp_path, capsys):
    dest, pr, head = _checkout("rejected", tmp_path, capsys)
    code, out = _check(dest, pr, head, capsys)
    assert code == 1
    assert out.startswith("## ❌❌❌ **REJECTED** ❌❌❌")
    assert "❌ Check 6 (Upstream images / ordering): FAIL" in out


def test_checkout_refuses_a_non_empty_destination(tmp_path, capsys):
    (tmp_path / "busy").mkdir()
    (tmp_path / "busy" / "file").write_text("x")
    assert main(["sandbox", "checkout", "--world", str(WORLDS / "seed"), str(tmp_path / "busy")]) == 2
    assert "not empty" in capsys.readouterr().err


@pytest.mark.parametrize("world", ["seed", "rejected"])
def test_checkout_pr_file_names_commits_by_sha(world, tmp_path, capsys):
    dest, pr, head = _checkout(world, tmp_path, capsys)
    import yaml

    data = yaml.safe_load(pr.read_text())
    for key in data.get("check_runs", {}):
        assert len(key) == 40 and all(c in "0123456789abcdef" for c in key)
    assert Path(data["artifacts_dir"]).is_dir()


def test_local_mode_accepts_the_reuse_command_like_github_mode(tmp_path, capsys):
    """The seed's `/reuse-sweep-run 37597985033` (COLLABORATOR) names a run of the PR's own
    commit c1 with reusable artifacts: local mode accepts it, so Check 1 names the command."""
    dest, pr, head = _checkout("seed", tmp_path, capsys)
    code, out = _check(dest, pr, head, capsys, "--format", "json", "--only", "1")
    row = json.loads(out)["checks"][0]
    assert row["status"] == "PASS"
    assert "reuse-sweep-run" in row["reason"]


def test_local_mode_refuses_a_reuse_command_naming_an_unknown_run(tmp_path, capsys):
    import yaml

    dest, pr, head = _checkout("seed", tmp_path, capsys)
    data = yaml.safe_load(pr.read_text())
    for c in data["comments"]:
        c["body"] = c["body"].replace("/reuse-sweep-run 37597985033", "/reuse-sweep-run 123")
    pr.write_text(yaml.safe_dump(data, sort_keys=False))
    code, out = _check(dest, pr, head, capsys, "--format", "json", "--only", "1")
    row = json.loads(out)["checks"][0]
    assert "reuse-sweep-run" not in row["reason"]
