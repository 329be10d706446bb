"""Local mode: snapshots from temporary git repositories and the `check --local` CLI."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

import checks.registry
from bot.cli import main
from bot.local import LocalModeError, build_local_snapshot
from checks.snapshot import Unavailable
from tests.builders import fake_checks
from checks.result import CheckResult
from checks.registry import CHECK_NUMBERS

GIT_ENV = {
    "GIT_AUTHOR_NAME": "Test", "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "Test", "GIT_COMMITTER_EMAIL": "t@example.com",
    "GIT_AUTHOR_DATE": "2026-10-08T10:00:00Z", "GIT_COMMITTER_DATE": "2026-10-08T10:00:00Z",
    "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1", "HOME": os.devnull,
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env, text=True).stdout.strip()


def write(repo: Path, files: dict[str, str | None]) -> None:
    for path, text in files.items():
        p = repo / path
        if text is None:
            p.unlink()
        else:
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_text(text)


def commit(repo: Path, message: str, files: dict[str, str | None]) -> str:
    write(repo, files)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> dict:
    """main: base commit (+ one later commit on main); pr: two commits (modify, add, delete, rename)."""
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    git(r, "remote", "add", "origin", "https://github.com/SemiAnalysisAI/InferenceX.git")
    base = commit(r, "base", {
        "inferencex-e2e/configs/amd-master.yaml": "a: 1\n",
        "inferencex-e2e/docs/old.md": "old\n" * 20,
        "inferencex-e2e/drop.txt": "bye\n",
        "README.md": "hi\n",
    })
    git(r, "checkout", "-q", "-b", "pr")
    c1 = commit(r, "first PR commit", {
        "inferencex-e2e/configs/amd-master.yaml": "a: 2\nb: 3\n",
        "inferencex-e2e/new.yaml": "x: 1\n",
    })
    os.rename(r / "inferencex-e2e/docs/old.md", r / "inferencex-e2e/docs/renamed.md")
    c2 = commit(r, "second PR commit\n\nwith a body", {"inferencex-e2e/drop.txt": None})
    git(r, "checkout", "-q", "main")
    main_tip = commit(r, "unrelated main commit", {"README.md": "hello\n"})
    return {"path": r, "base": base, "c1": c1, "c2": c2, "main": main_tip, "tmp": tmp_path}


def test_snapshot_diff_commits_and_trees(repo):
    snap = build_local_snapshot(repo["path"], "main", "pr")
    assert snap.repo == "SemiAnalysisAI/InferenceX"
    assert snap.base_sha == repo["base"]  # the merge base, not the newer main tip
    assert snap.head_sha == snap.current_head_sha == repo["c2"]
    assert [c.sha for c in snap.commits] == [repo["c1"], repo["c2"]]
    assert snap.commits[1].message.startswith("second PR commit")
    assert snap.commits[1].parents == [repo["c1"]]
    files = {f.path: f for f in snap.files}
    assert files["inferencex-e2e/configs/amd-master.yaml"].status == "modified"
    assert files["inferencex-e2e/configs/amd-master.yaml"].additions == 2
    assert files["inferencex-e2e/configs/amd-master.yaml"].patch.startswith("@@")
    assert "+b: 3" in files["inferencex-e2e/configs/amd-master.yaml"].patch
    assert files["inferencex-e2e/new.yaml"].status == "added"
    assert files["inferencex-e2e/drop.txt"].status == "removed"
    renamed = files["inferencex-e2e/docs/renamed.md"]
    assert renamed.status == "renamed" and renamed.previous_path == "inferencex-e2e/docs/old.md"
    assert "README.md" not in files  # only on main: not part of the PR
    # base = merge base, target = the target branch tip, head = the PR head
    assert snap.base.read("README.md") == b"hi\n"
    assert snap.target_tree.read("README.md") == b"hello\n"
    assert snap.head.read("inferencex-e2e/new.yaml") == b"x: 1\n"
    assert snap.head.read("inferencex-e2e/drop.txt") is None


def test_absent_keys_are_unavailable_but_empty_lists_mean_none(repo):
    snap = build_local_snapshot(repo["path"], "main", "pr")
    for value in (snap.comments, snap.labels, snap.check_runs, snap.sweep_runs):
        assert isinstance(value, Unavailable)
        assert value.reason.startswith("not provided in local mode")
    pr = repo["tmp"] / "pr.yaml"
    pr.write_text("comments: []\nlabels: []\ncheck_runs: {}\nruns: []\n")
    snap = build_local_snapshot(repo["path"], "main", "pr", pr_file=pr)
    assert snap.comments == [] and snap.labels == [] and snap.check_runs == {} and snap.sweep_runs == {}


def test_pr_file_comments_signoff_check_runs_and_artifacts(repo):
    art = repo["tmp"] / "arts" / "555" / "results_bmk"
    art.mkdir(parents=True)
    (art / "agg_bmk.json").write_text(json.dumps([{"conc": 1, "tput_per_gpu": 100.0}]))
    ev = repo["tmp"] / "arts" / "555" / "eval_results_all"
    ev.mkdir(parents=True)
    (ev / "agg_eval_all.json").write_text(json.dumps([{"task": "gsm8k", "score": 0.97}]))
    (ev / "meta_env.json").write_text(json.dumps({"image": "rocm/atom-dev:nightly"}))
    pr = repo["tmp"] / "pr.yaml"
    pr.write_text(f"""\
number: 3603
title: Restore ATOM
labels: [full-sweep-fail-fast]
signoff: {{id: 44, author: seungrokj, association: COLLABORATOR, body: "As a PR reviewer and CODEOWNER", created_at: 2026-10-09T00:00:00Z}}
comments:
  - {{author: bot, user_type: Bot, body: welcome, created_at: 2026-10-08T00:00:00Z}}
  - {{id: 7, author: seungrokj, association: COLLABORATOR, body: /reuse-sweep-run 555, created_at: 2026-10-08T12:00:00Z}}
check_runs:
  {repo["c1"][:10]}: [{{name: "agentic / benchmark (tp2 c1)", run_id: 555}}]
  head: [{{name: "eval / gsm8k", conclusion: skipped}}]
runs:
  - {{id: 555, head: {repo["c1"]}, artifacts: [{{name: results_bmk}}, {{name: eval_results_all}}, {{name: bmk_agentic_x, expired: true}}]}}
artifacts_dir: arts
users: {{seungrokj: {{permission: write, role_name: write}}}}
upstream: [{{repo: vllm-project/recipes, number: 120, state: closed, merged: true, files: {{"a.md": "text"}}}}]
""")
    snap = build_local_snapshot(repo["path"], "main", "pr", pr_file=pr)
    assert snap.number == 3603 and snap.labels == ["full-sweep-fail-fast"]
    assert snap.signoff.key == "issuecomment-44"
    assert snap.signoff.url.endswith("/pull/3603#issuecomment-44")
    assert [c.author for c in snap.comments] == ["bot", "seungrokj", "seungrokj"]  # sign-off joins, by time
    assert snap.comments[0].is_bot and snap.comments[0].id > 0
    assert set(snap.check_runs) == {repo["c1"], repo["c2"]}
    run = snap.check_runs[repo["c1"]][0]
    assert run.run_id == 555 and "/actions/runs/555/" in run.details_url
    sweep = snap.sweep_runs[555]
    assert sweep.head_sha == repo["c1"]
    assert sweep.throughput == [{"conc": 1, "tput_per_gpu": 100.0}]
    assert sweep.evals == [{"task": "gsm8k", "score": 0.97}]
    assert sweep.meta == {"eval_results_all": {"image": "rocm/atom-dev:nightly"}}
    assert snap.users["seungrokj"].permission == "write"
    (ref,) = snap.upstream.values()
    assert ref.url == "https://github.com/vllm-project/recipes/pull/120" and ref.merged and "text" in ref.text


def test_missing_artifacts_dir_makes_artifact_contents_unavailable(repo):
    pr = repo["tmp"] / "pr.yaml"
    pr.write_text("runs: [{id: 1, head: head, artifacts: [{name: results_bmk}]}]\n")
    sweep = build_local_snapshot(repo["path"], "main", "pr", pr_file=pr).sweep_runs[1]
    assert isinstance(sweep.throughput, Unavailable) and "artifacts_dir" in sweep.throughput.reason


def test_commit_aliases_resolve_world_ids(repo):
    pr = repo["tmp"] / "pr.yaml"
    pr.write_text("check_runs: {c1: [{name: 'eval / x'}]}\n")
    snap = build_local_snapshot(repo["path"], "main", "pr", pr_file=pr, commit_aliases={"c1": repo["c1"]})
    assert list(snap.check_runs) == [repo["c1"]]


@pytest.mark.parametrize("content, expected", [
    ("number: 1\nlabels: [a]\nbogus: 3\n", ":3: bogus"),
    ("number: 1\ncomments:\n  - body: x\n    kind: tweet\n", ":4: comments.0.kind"),
    ("number: [\n", "malformed YAML"),
    ("check_runs:\n  nosuchref: [{name: x}]\n", ":2: commit 'nosuchref' does not resolve"),
])
def test_bad_pr_file_is_a_clear_error_naming_file_and_line(repo, content, expected, capsys):
    pr = repo["tmp"] / "pr.yaml"
    pr.write_text(content)
    with pytest.raises(LocalModeError, match=expected.replace("[", r"\[")) as info:
        build_local_snapshot(repo["path"], "main", "pr", pr_file=pr)
    assert str(pr) in str(info.value)
    code = main(["check", "--local", str(repo["path"]), "--base", "main", "--head", "pr", "--pr", str(pr)])
    assert code == 2
    assert str(pr) in capsys.readouterr().err


def test_cli_json_contract_and_rejected_exit_code(repo, capsys, monkeypatch):
    monkeypatch.setattr(checks.registry, "CHECKS", tuple(fake_checks({3: CheckResult.failed("recipe not merged")})))
    code = main(["check", "--local", str(repo["path"]), "--base", "main", "--head", "pr", "--format", "json",
                 "--review-date", "2026-10-08"])
    data = json.loads(capsys.readouterr().out)
    assert code == 1
    assert set(data) == {"verdict", "repo", "pr", "head_sha", "checks"}
    assert data["verdict"] == "REJECTED" and data["head_sha"] == repo["c2"]
    assert [c["number"] for c in data["checks"]] == sorted(CHECK_NUMBERS)
    assert data["checks"][3] == {"number": 3, "name": "Upstream recipe", "status": "FAIL",
                                 "reason": "recipe not merged", "evidence": []}


def test_cli_markdown_pass_exit_zero_and_only(repo, capsys, monkeypatch):
    monkeypatch.setattr(checks.registry, "CHECKS", tuple(fake_checks({14: CheckResult.warned("3/5")})))
    code = main(["check", "--local", str(repo["path"]), "--base", "main", "--head", "pr"])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("## ⚠️ **Verdict: WARN** ⚠️")
    code = main(["check", "--local", str(repo["path"]), "--base", "main", "--head", "pr", "--only", "0,14",
                 "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0 and data["partial"] is True and [c["number"] for c in data["checks"]] == [0, 14]


def test_cli_real_registry_always_gives_one_row_per_check(repo, capsys):
    code = main(["check", "--local", str(repo["path"]), "--base", "main", "--head", "pr", "--format", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == (1 if data["verdict"] == "REJECTED" else 0)
    assert [c["number"] for c in data["checks"]] == sorted(CHECK_NUMBERS)


@pytest.mark.parametrize("argv, message", [
    (["--base", "nosuch", "--head", "pr"], "--base 'nosuch' is not a commit"),
    (["--base", "main"], "needs --base REF and --head REF"),
    (["--base", "main", "--head", "pr", "--only", "3,99"], "--only takes check numbers"),
    (["--base", "main", "--head", "pr", "--review-date", "08/10/2026"], "--review-date: must be YYYY-MM-DD, not '08/10/2026'"),
    (["--base", "main", "--head", "pr", "--pr", "/nonexistent/pr.yaml"], "cannot read PR file"),
])
def test_cli_usage_errors_exit_2(repo, capsys, argv, message):
    assert main(["check", "--local", str(repo["path"]), *argv]) == 2
    assert message in capsys.readouterr().err


def test_cli_not_a_repository(tmp_path, capsys):
    assert main(["check", "--local", str(tmp_path), "--base", "a", "--head", "b"]) == 2
    assert "not a git repository" in capsys.readouterr().err


def test_neither_mode_is_a_clear_exit_2(capsys):
    assert main(["check"]) == 2
    assert "give a PR number (GitHub mode) or --local PATH" in capsys.readouterr().err


def test_old_layout_and_any_two_commits(tmp_path, capsys, monkeypatch):
    r = tmp_path / "old"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    a = commit(r, "a", {"configs/amd-master.yaml": "x: 1\n", "benchmarks/dsr1_fp8_mi300x.sh": "echo 1\n"})
    b = commit(r, "b", {"benchmarks/dsr1_fp8_mi300x.sh": "echo 2\n"})
    monkeypatch.setattr(checks.registry, "CHECKS", tuple(fake_checks()))
    snap = build_local_snapshot(r, a, b)
    assert snap.repo == "local/old"
    assert [f.path for f in snap.files] == ["benchmarks/dsr1_fp8_mi300x.sh"]
    assert main(["check", "--local", str(r), "--base", a, "--head", b]) == 0
    assert capsys.readouterr().out.startswith("## ✅✅✅ **Verdict: PASS** ✅✅✅")


def test_seed_world_snapshot_via_local_mode(tmp_path):
    from tests.builders import world_snapshot

    snap = world_snapshot("seed", tmp_path / "seed")
    assert snap.repo == "SemiAnalysisAI/InferenceX" and snap.number == 3603
    assert snap.signoff is not None and snap.signoff.author == "seungrokj"
    assert len(snap.commit_shas) == 2 and snap.head_sha == snap.commit_shas[-1]
    runs = snap.sweep_runs
    assert 37597985033 in runs and runs[37597985033].head_sha == snap.commit_shas[0]
    assert isinstance(runs[37597985033].throughput, list) and runs[37597985033].throughput
    assert any(c.author == "seungrokj" and "/reuse-sweep-run" in c.body for c in snap.comments)
