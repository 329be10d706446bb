"""bench/replay.py on a small history shaped like the real one: which commits it replays, the PR
file it synthesizes (signer, complete checklist) and the summary it prints."""
from __future__ import annotations

import importlib.util
import shutil
import sys
import subprocess
from pathlib import Path

import pytest
from checks.registry import CHECK_NUMBERS

PROJECT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "repos"

spec = importlib.util.spec_from_file_location("replay", PROJECT / "bench" / "replay.py")
replay = importlib.util.module_from_spec(spec)
sys.modules["replay"] = replay  # dataclasses look their module up by name
spec.loader.exec_module(replay)

CODEOWNERS = """* @InferenceX/core

# AMD master config
configs/amd-master.yaml @amd-owner @InferenceX/core
"""
CHECKLIST = """# Review checklist

```
As a PR reviewer and CODEOWNER, I have verified:
- [ ] The sweep ran on a commit of this PR
  - [ ] Evals passed
- [ ] The perf-changelog entry is appended at the end
```
"""
NEW_ENTRY = """- config-keys:
    - dsr1-fp4-mi355x-atom
  description:
    - "Raise max-num-seqs"
  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/42
"""


def _git(repo: Path, *args: str) -> str:
    env = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    return subprocess.run(["git", "-C", str(repo), *env, *args], check=True, capture_output=True,
                          text=True).stdout


@pytest.fixture
def history(tmp_path: Path) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "ix"
    shutil.copytree(FIXTURES / "root-layout", repo)
    (repo / ".github").mkdir()
    (repo / ".github/CODEOWNERS").write_text(CODEOWNERS)
    (repo / "benchmarks/multi_node/amd_utils").mkdir(parents=True)
    (repo / "benchmarks/multi_node/amd_utils/job.slurm").write_text("#!/bin/bash\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "initial layout")
    (repo / "README.md").write_text("docs only\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "Docs only (#41)")
    (repo / "docs").mkdir()
    (repo / "docs/PR_REVIEW_CHECKLIST.md").write_text(CHECKLIST)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "Add the review checklist (#40)")
    master = repo / "configs/amd-master.yaml"
    master.write_text(master.read_text() + "\n")
    with open(repo / "perf-changelog.yaml", "a") as f:
        f.write(NEW_ENTRY)
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "Raise dsr1 ATOM max-num-seqs (#42)\n\nLonger body.")
    return repo


def test_only_first_parent_commits_that_touch_the_changelog(history):
    commits = replay.pr_commits(str(history), None, None)
    assert [subject for _, _, subject in commits] == ["initial layout", "Raise dsr1 ATOM max-num-seqs (#42)"]


def test_the_pr_file_signs_with_the_master_config_owner_and_checks_every_item(history):
    sha = _git(history, "rev-parse", "HEAD").strip()
    pr = replay.pr_file(str(history), sha, "Raise dsr1 ATOM max-num-seqs (#42)", "2026-08-01T00:00:00Z")
    assert pr["number"] == 42 and pr["body"] == "Longer body."
    assert pr["signoff"]["author"] == "amd-owner"
    assert pr["teams"] == {replay.CORE_TEAM: ["amd-owner"]}
    body = pr["signoff"]["body"]
    assert body.startswith(replay.SIGNOFF_PHRASE)
    assert body.count("- [x]") == 3 and "- [ ]" not in body and "\n  - [x] Evals passed" in body


def test_a_branch_without_a_checklist_gets_the_phrase_alone(history):
    first = _git(history, "rev-list", "--max-parents=0", "HEAD").strip()
    assert replay.signoff_body(str(history), first).startswith(replay.SIGNOFF_PHRASE)
    assert "- [x]" not in replay.signoff_body(str(history), first)


def test_bot_caused_names_a_file_the_commit_has(history):
    sha = _git(history, "rev-parse", "HEAD").strip()
    # The launcher exists at another folder of that commit: the bot looked in the wrong place.
    wrong_folder = "could not verify: benchmarks/single_node/dsr1_fp4_mi355x_atom.sh was not found"
    assert replay.bot_caused(str(history), sha, wrong_folder)
    assert not replay.bot_caused(str(history), sha, "could not verify: benchmarks/nowhere.sh was not found")
    assert not replay.bot_caused(str(history), sha, "could not verify: not provided in local mode: check runs")
    # A copy whose source the commit lacks is the commit's problem, whatever the referrer is.
    copy = ("could not verify: recipes/x/a.yaml named at configs/amd-master.yaml:7 is copied into the srt-slurm "
            "checkout from benchmarks/multi_node/srt-slurm-recipes/x/a.yaml (runners/launch_gb300-nv.sh:3), which is "
            "not in this repository; commit the recipe or fix the copy.")
    assert not replay.bot_caused(str(history), sha, copy)
    # A Slurm batch script of the commit the launch runs (`sbatch .../job.slurm`) is a file too.
    assert replay.bot_caused(str(history), sha, "could not verify x: its interpreted launch reaches neither its "
                                                "servers nor its client (sweep job:1 -> ... -> benchmarks/multi_node/"
                                                "amd_utils/job.slurm:176: could not interpret: shell text that is not "
                                                "known (the output of awk))")
    # The review's own interpreter budget is the bot's limit, whatever the reason names.
    assert replay.bot_caused(str(history), sha, "could not verify x-fp8-mi355x-vllm: its launch was not interpreted, "
                                                "the review's 50,000 interpreter steps were spent on other points")
    # A source the bot resolved as bash does, to a path the commit lacks: the script's defect,
    # though a file of that name is elsewhere.
    lib = ('could not verify x: benchmarks/single_node/fixed_seq_len/x.sh:3 sources $(dirname "$0")/../'
           'dsr1_fp4_mi355x_atom.sh, which is benchmarks/single_node/fixed_seq_len/../dsr1_fp4_mi355x_atom.sh, not a file of the repository')
    assert not replay.bot_caused(str(history), sha, lib.replace("fixed_seq_len/../", "elsewhere/"))
    present = next(n for n in sorted(replay.tree_names(str(history), sha)) if n.endswith(".sh") and "/" in n)
    assert replay.bot_caused(str(history), sha, f"could not verify x: a.sh:3 sources y, which is {present}, "
                                                "not a file of the repository")
    # A file refused for a key it sets twice is the file's defect, though the commit has it.
    launcher = "benchmarks/single_node/dsr1_fp4_mi355x_atom.sh"
    assert replay.bot_caused(str(history), sha, f"could not verify: the recipe {launcher}:9 is not understood")
    assert not replay.bot_caused(str(history), sha, f"could not verify: the recipe {launcher}:9: duplicate key "
                                                    "'moe-runner-backend' (first at line 4), so the effective serving config")


def test_a_replayed_commit_gives_a_verdict_and_a_summary(history):
    sha, date, subject = replay.pr_commits(str(history), None, None)[-1]
    with_tmp = history.parent / "work"
    with_tmp.mkdir()
    result = replay.replay_one(str(history), sha, date, subject, str(with_tmp))
    assert result.code in (0, 1), result.error
    assert result.cpu is not None and 0 < result.cpu
    assert sorted(row["number"] for row in result.rows) == sorted(CHECK_NUMBERS)
    summary = replay.summarize(str(history), [result])
    assert summary["commits"] == 1 and summary["rows"] == len(CHECK_NUMBERS)
    assert summary["could_not_be_evaluated"] == []
    assert sum(summary["rows_per_check"][0].values()) == 1


def test_compare_reports_status_changes_between_two_runs(history, tmp_path):
    import json

    sha = replay.pr_commits(str(history), None, None)[-1][0]
    rows = [{"number": 7, "status": "FAIL", "reason": "could not verify: MODELS.md was not found"},
            {"number": 8, "status": "PASS", "reason": "ok"}]
    for side, status in (("before", "FAIL"), ("after", "N/A")):
        (tmp_path / side).mkdir()
        record = {"sha": sha, "pr": 42, "wall": 1.0, "rows": [dict(rows[0], status=status), rows[1]]}
        (tmp_path / side / f"{sha}.json").write_text(json.dumps(record))
    c = replay.compare(str(tmp_path / "before"), str(tmp_path / "after"))
    assert c["commits"] == 1
    assert c["per_check"][7] == {"before": {"FAIL": 1}, "after": {"N/A": 1}}
    assert [(r["check"], r["before"], r["after"]) for r in c["changed_rows"]] == [(7, "FAIL", "N/A")]


def test_each_process_reports_its_own_cpu_time(tmp_path):
    import sys

    busy = "import sys; x = sum(i * i for i in range(3_000_000)); print('out'); print('err', file=sys.stderr); sys.exit(1)"
    code, out, err, cpu = replay.run_measured([sys.executable, "-c", busy], tmp_path, 60)
    assert (code, out.strip(), err.strip()) == (1, "out", "err")
    idle = replay.run_measured([sys.executable, "-c", "import time; time.sleep(0.3)"], tmp_path, 60)[3]
    # The busy child's CPU time is its own; a sleeping child uses almost none.
    assert cpu > 0.05 and idle < cpu


def test_a_process_past_the_timeout_is_killed_and_reported(tmp_path):
    import sys

    code, _, _, _ = replay.run_measured([sys.executable, "-c", "import time; time.sleep(30)"], tmp_path, 0.5)
    assert code is None
