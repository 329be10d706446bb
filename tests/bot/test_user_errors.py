"""User errors (issue 30): each is one line on standard error, exit 2, naming what to fix (the
repository, the PR, the token or the network, with the URL), never a traceback. The GitHub cases
run the real command in a process against the emulator (or a closed port on 127.0.0.1)."""
from __future__ import annotations

import io
import os
import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from bot import cli
from ghsim import Emulator

PROJECT = Path(__file__).resolve().parents[2]
SEED = PROJECT / "ghsim" / "worlds" / "seed"
# The command as a user runs it; the retry policy's waits are zeroed so the repeats after a
# refused connection take no time (their number is the policy's own).
RUN = """
import sys
import bot.retry_policy
bot.retry_policy.BACKOFF_FACTOR = 0.0
sys.argv = ["infx-review", *{argv!r}]
import bot.__main__
raise SystemExit(bot.__main__.main())
"""


def run_cli(argv: list[str], token: str = "none", **kw) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INFX_"))}
    env["GITHUB_TOKEN"] = token
    return subprocess.run([sys.executable, "-c", RUN.format(argv=argv)], cwd=PROJECT, env=env,
                          capture_output=True, text=True, timeout=120, **kw)


def run_here(argv: list[str], capsys) -> SimpleNamespace:
    """The command run in this process (for errors found before any request)."""
    code = cli.main(argv)
    out = capsys.readouterr()
    return SimpleNamespace(returncode=code, stdout=out.out, stderr=out.err)


def one_line_error(proc: subprocess.CompletedProcess | SimpleNamespace) -> str:
    """The single stderr line of a failed command (asserting there is exactly one)."""
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "WARNING" not in proc.stderr, proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    return lines[0]


@pytest.fixture(scope="module")
def emu():
    with Emulator(SEED) as emulator:
        yield emulator


def _check(emu, repo: str, number: int, token: str | None = None) -> str:
    proc = run_cli(["check", str(number), "--repo", repo, "--github-url", emu.url],
                   token=token or emu.world.bot.token)
    assert proc.stdout == ""
    return one_line_error(proc)


def test_a_wrong_repository_is_named_as_the_thing_to_fix(emu):
    line = _check(emu, "SemiAnalysisAI/NoSuchRepo", emu.world.pr.number)
    assert line.startswith("error: repository SemiAnalysisAI/NoSuchRepo was not found")
    assert f"{emu.url}/repos/SemiAnalysisAI/NoSuchRepo " in line and "check --repo" in line


def test_a_wrong_pr_number_is_told_apart_from_a_wrong_repository(emu):
    line = _check(emu, emu.world.repo, 99999)
    assert line.startswith(f"error: pull request #99999 was not found in {emu.world.repo}")
    assert f"{emu.url}/repos/{emu.world.repo}/pulls/99999" in line and "check the PR number" in line


def test_a_bad_token_is_named_as_the_token(emu):
    line = _check(emu, emu.world.repo, emu.world.pr.number, token="ghp_not_a_token")
    assert line.startswith("error: GitHub refused the credentials") and "HTTP 401" in line
    assert "GITHUB_TOKEN" in line and "repository" not in line


def test_the_good_triple_still_gives_a_verdict(emu):
    proc = run_cli(["check", str(emu.world.pr.number), "--repo", emu.world.repo, "--github-url", emu.url],
                   token=emu.world.bot.token)
    assert proc.returncode == 0 and proc.stdout.startswith("## "), proc.stderr


def test_an_unreachable_api_is_one_line_after_the_retries_naming_the_url():
    with socket.socket() as s:  # a port nothing listens on once this socket is closed
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}"
    line = one_line_error(run_cli(["check", "7", "--repo", "octo/bench", "--github-url", url]))
    assert line.startswith(f"error: cannot reach the GitHub API at {url}/repos/octo/bench/pulls/7")
    assert "Connection refused" in line and "network" in line


@pytest.mark.parametrize("argv, words", [
    (["check", "7", "--repo", "octo-bench"], "--repo must be OWNER/NAME"),
    (["check", "0", "--repo", "octo/bench"], "positive integer"),
    (["check", "seven", "--repo", "octo/bench"], "check: error: argument PR: invalid int value"),
])
def test_a_malformed_argument_is_one_line_before_any_request(argv, words, capsys, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "none")
    line = one_line_error(run_here([*argv, "--github-url", "http://127.0.0.1:9"], capsys))
    assert words in line


def _git(path: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(path), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


@pytest.fixture
def not_a_benchmark(tmp_path) -> Path:
    repo = tmp_path / "notes"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "README.md").write_text("# notes\n", encoding="utf-8")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "notes")
    return repo


def test_inspect_on_a_folder_that_is_no_benchmark_repository_says_so(not_a_benchmark, capsys):
    line = one_line_error(run_here(["inspect", str(not_a_benchmark)], capsys))
    assert f"{not_a_benchmark} is not an InferenceX-style benchmark repository" in line
    assert "configs/*-master.yaml" in line
    line = one_line_error(run_here(["inspect", str(not_a_benchmark), "--ref", "main"], capsys))
    assert "at main is not an InferenceX-style benchmark repository" in line


def test_check_local_on_a_folder_that_is_no_benchmark_repository_says_so(not_a_benchmark, capsys):
    proc = run_here(["check", "--local", str(not_a_benchmark), "--base", "main", "--head", "main"], capsys)
    assert proc.stdout == ""  # no verdict (it was REJECTED before)
    assert "is not an InferenceX-style benchmark repository" in one_line_error(proc)


def test_a_pr_file_with_several_problems_lists_every_one(tmp_path):
    from bot.local import LocalModeError, load_pr_file

    bad = tmp_path / "pr.yaml"
    bad.write_text("number: seven\ntitle: ok\nlabels: not-a-list\nsignof: {}\n", encoding="utf-8")
    with pytest.raises(LocalModeError) as e:
        load_pr_file(bad)
    assert str(e.value).splitlines() == [
        f"{bad}:1: number: Input should be a valid integer, unable to parse string as an integer",
        f"{bad}:3: labels: Input should be a valid list",
        f"{bad}:4: signof: Extra inputs are not permitted",
    ]
    assert "more)" not in str(e.value)


def test_a_closed_standard_output_ends_quietly():
    read_end, write_end = os.pipe()
    os.close(read_end)  # the reader is gone before the first byte: `config-schema | head -0`
    try:
        proc = subprocess.run([sys.executable, "-m", "bot", "config-schema"], cwd=PROJECT, stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write_end)
    assert proc.stderr == "" and proc.returncode == cli.EXIT_PIPE_CLOSED


def test_a_broken_pipe_inside_a_command_is_no_internal_error(monkeypatch, capsys):
    class Closed(io.StringIO):
        def write(self, text):
            raise BrokenPipeError(32, "Broken pipe")

    monkeypatch.setattr(sys, "stdout", Closed())
    assert cli.main(["config-schema"]) == cli.EXIT_PIPE_CLOSED
    assert capsys.readouterr().err == ""


def test_a_wrong_path_or_ref_in_local_mode_is_one_line(not_a_benchmark, tmp_path, capsys):
    cases = [
        (["inspect", str(tmp_path / "absent")], "not a directory"),
        (["inspect", str(not_a_benchmark), "--ref", "no-such-ref"], "cannot read no-such-ref"),
        (["check", "--local", str(tmp_path / "absent"), "--base", "main", "--head", "main"], "is not a directory"),
        (["check", "--local", str(not_a_benchmark), "--base", "main", "--head", "no-such-ref"], "no-such-ref"),
    ]
    for argv, words in cases:
        line = one_line_error(run_here(argv, capsys))
        assert line.startswith("error: ") and words in line, argv


def test_a_github_that_keeps_failing_is_one_line_after_the_retries():
    with Emulator(SEED, fail_rate=1.0) as failing:
        proc = run_cli(["check", str(failing.world.pr.number), "--repo", failing.world.repo, "--github-url", failing.url],
                       token=failing.world.bot.token)
    line = one_line_error(proc)
    assert line.startswith(f"error: the GitHub API at {failing.url}/repos/{failing.world.repo}/pulls/")
    assert "kept failing (HTTP 5" in line and "after retries" in line
