"""`python -m bot inspect`: counts, findings, exit codes, the JSON contract, and --ref."""
from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from bot.cli import main

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "repos"
CONTRACT = {"layout", "configs", "recipes", "points", "changelog_entries", "golden_curves", "errors"}


def _run_json(capsys, *argv: str) -> tuple[int, dict]:
    rc = main(["inspect", *argv, "--format", "json"])
    return rc, json.loads(capsys.readouterr().out)


def test_clean_new_layout_fixture(capsys):
    rc, report = _run_json(capsys, str(FIXTURES / "new-layout"))
    assert CONTRACT <= set(report)
    assert rc == 0 and report["errors"] == []
    assert (report["layout"], report["configs"], report["recipes"], report["points"]) == ("inferencex-e2e", 3, 3, 8)
    assert (report["changelog_entries"], report["golden_curves"]) == (2, 1)


def test_root_layout_reports_the_missing_launcher(capsys):
    rc, report = _run_json(capsys, str(FIXTURES / "root-layout"))
    assert rc == 1 and report["layout"] == "root"
    (err,) = report["errors"]
    assert (err["path"], err["line"]) == ("configs/nvidia-master.yaml", 30) and "gptoss_fp4_b200" in err["message"]


def test_broken_master_config_exits_1_with_file_and_line(tmp_path, capsys):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "new-layout", repo)
    master = repo / "inferencex-e2e/configs/amd-master.yaml"
    master.write_text(master.read_text().replace("      - tp: 8\n", "      - tp: eight\n"))
    rc, report = _run_json(capsys, str(repo))
    assert rc == 1
    assert any(e["path"] == "inferencex-e2e/configs/amd-master.yaml" and e["line"] == 30 and "tp" in e["message"]
               for e in report["errors"])


def test_text_format(capsys):
    rc = main(["inspect", str(FIXTURES / "new-layout")])
    out = capsys.readouterr().out
    assert rc == 0 and "layout: inferencex-e2e" in out and "points: 8" in out and "errors: 0" in out


def test_git_ref(tmp_path, capsys):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "new-layout", repo)
    env = ["-c", "user.name=t", "-c", "user.email=t@example.invalid"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "-A"], check=True)
    subprocess.run(["git", "-C", str(repo), *env, "commit", "-qm", "fixture"], check=True)
    # The working tree changes after the commit; --ref must read the committed tree.
    shutil.rmtree(repo / "inferencex-e2e/benchmarks")
    rc, report = _run_json(capsys, str(repo), "--ref", "HEAD")
    assert rc == 0 and report["points"] == 8 and report["recipes"] == 3
    rc, report = _run_json(capsys, str(repo))
    assert rc == 1 and report["recipes"] == 0
    assert main(["inspect", str(repo), "--ref", "no-such-ref"]) == 2


def test_real_snapshot(inferencex_dir, capsys):
    rc, report = _run_json(capsys, str(inferencex_dir))
    assert rc == 1  # the snapshot mixes file versions: real inconsistencies are findings
    assert (report["layout"], report["configs"], report["changelog_entries"]) == ("inferencex-e2e", 216, 1101)
    assert (report["points"], report["golden_curves"]) == (1646, 9)
    # Every recipe file of the snapshot (its MANIFEST lists them): the ones points name, plus the
    # mi300x vLLM recipe that no arm names (a warning).
    assert report["recipes"] == 112
    orphan = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/vllm/mi300x-fp4-mtp/agentic.yaml"
    assert [w["code"] for w in report["warnings"] if w["path"] == orphan] == ["unused-recipe"]
    atom = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom/mi355x-fp4-mtp/agentic.yaml"
    assert any(e["path"] == atom and e["line"] == 10 and "nightly_202610070333" in e["message"] for e in report["errors"])


def test_a_recipe_no_point_names_is_still_parsed(tmp_path, capsys):
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURES / "new-layout", repo)
    orphan = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/x/sglang/b200-fp8/8k1k.yaml"
    (repo / orphan).parent.mkdir(parents=True)
    (repo / orphan).write_text("base:\n  name: x\noverride_a: {roles: [1\n")
    rc, report = _run_json(capsys, str(repo))
    assert rc == 1 and report["recipes"] == 4
    (err,) = report["errors"]
    assert (err["path"], err["line"]) == (orphan, 4) and "malformed YAML" in err["message"]
    assert {"path": orphan, "line": 1, "code": "unused-recipe"}.items() <= report["warnings"][-1].items()


def test_error_items_follow_the_contract(capsys):
    _, report = _run_json(capsys, str(FIXTURES / "root-layout"))
    assert report["layout"] in ("root", "inferencex-e2e")
    for key in CONTRACT - {"layout", "errors"}:
        assert type(report[key]) is int
    for e in report["errors"]:
        assert {"path", "line", "message"} <= set(e)
        assert isinstance(e["path"], str) and isinstance(e["message"], str)
        assert e["line"] is None or type(e["line"]) is int


def _srt_fixture(tmp_path: Path) -> tuple[Path, Path]:
    """A benchmark tree whose gb200 runner clones NVIDIA/srt-slurm for a point whose recipe is
    only in that checkout, and a local clone of it holding the recipe."""
    from tests.checks.test_external_srt_recipe import CONFIG, MASTER, RECIPE, RUNNER, RUNNERS

    repo, srt = tmp_path / "repo", tmp_path / "srt"
    files = {repo / "configs/nvidia-master.yaml": MASTER, repo / "configs/runners.yaml": RUNNERS,
             repo / "runners/launch_gb200-nv.sh": RUNNER, srt / CONFIG: RECIPE}
    for path, text in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x",
           "PATH": "/usr/bin:/bin"}
    for args in (["init", "-q", "-b", "sa-submission-q2-2026"], ["add", "-A"], ["commit", "-qm", "recipe"]):
        subprocess.run(["git", "-C", str(srt), *args], check=True, capture_output=True, env=env)
    return repo, srt


def test_trace_binds_the_recipe_of_the_cloned_srt_slurm_checkout_as_the_review_does(tmp_path, capsys):
    # The review's tracer reads a recipe the runner's srt-slurm checkout holds (--external-repo);
    # inspect --trace builds that same tracer, so it shows the servers the review judges.
    repo, srt = _srt_fixture(tmp_path)
    key = "dsr1-fp4-gb200-dynamo-trt-mtp"
    rc, alone = _run_json(capsys, str(repo), "--trace", key)
    assert rc == 0 and "server" not in [e["kind"] for e in alone["effects"]]
    assert any("cannot bind" in e["what"] for e in alone["effects"] if e["kind"] == "unknown"), alone["effects"]
    rc, bound = _run_json(capsys, str(repo), "--trace", key, "--external-repo", f"NVIDIA/srt-slurm={srt}")
    servers = [e for e in bound["effects"] if e["kind"] == "server"]
    assert rc == 0 and servers and not [e for e in bound["effects"] if e["kind"] == "unknown"], bound["effects"]
    assert "NVIDIA/srt-slurm@" in servers[0]["where"] and "ctx1_gen1" in servers[0]["what"]


def test_trace_with_a_bad_external_repo_is_a_usage_error(tmp_path, capsys):
    repo, _ = _srt_fixture(tmp_path)
    rc = main(["inspect", str(repo), "--trace", "dsr1-fp4-gb200-dynamo-trt-mtp", "--external-repo", f"srt={tmp_path}"])
    assert rc == 2 and "expected OWNER/NAME=DIR" in capsys.readouterr().err


def test_trace_coverage_counts_the_review_s_traces(tmp_path, capsys):
    from bench.trace_coverage import main as coverage

    repo, srt = _srt_fixture(tmp_path)
    assert coverage([str(repo)]) == 0
    assert "1 config keys, 0 reach a server, 1 do not" in capsys.readouterr().out
    assert coverage([str(repo), "--external-repo", f"NVIDIA/srt-slurm={srt}"]) == 0
    assert "1 config keys, 1 reach a server, 0 do not" in capsys.readouterr().out
