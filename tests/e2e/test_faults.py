"""The fault benchmark in small: the real pipeline with posting against the emulator with 20% of
requests failing (and, optionally, writes that land but answer an error) gives no wrong PASS, no
duplicate comment and never leaves a PR without a status; plus the comparison rules of
bench/faults.py and the publisher's fallback when the comment fails."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
from github import GithubException

from bot import retry_policy
from bot.github_client import CREATE_ATTEMPTS, GitHubApi, make_github, token_auth
from ghsim import Emulator
from bot.publisher import STATE_FAILURE, Publisher
from checks.engine import Row, Verdict, VerdictStatus
from checks.result import Status
from checks.registry import CHECK_NUMBERS

PROJECT = Path(__file__).resolve().parents[2]
RUNS_PER_WORLD = 5
HEAD = "a" * 40


def _load_bench():
    name = "bench_faults"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, PROJECT / "bench" / "faults.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # registered first, so worker processes can unpickle its functions
    spec.loader.exec_module(module)
    return module


faults = _load_bench()


def test_fault_runs_never_pass_wrongly_duplicate_or_skip_the_status():
    summary = faults.run_bench(RUNS_PER_WORLD, jobs=2)
    assert summary["worlds"]["seed"]["fault_free_verdict"] == "WARN"
    assert summary["worlds"]["rejected"]["fault_free_verdict"] == "REJECTED"
    total = summary["total"]
    assert total["runs"] == 2 * RUNS_PER_WORLD
    assert total["wrong_pass"] == 0, summary["problems"]
    assert total["duplicate_comments"] == 0, summary["problems"]
    assert total["no_status"] == 0, summary["problems"]
    assert total["unexplained"] == 0, summary["problems"]
    assert faults.failures(summary) == []
    table = faults.format_table(summary)
    assert table.splitlines()[0].startswith("| world | runs | equal |") and "| total | 10 |" in table


def test_ghost_writes_land_but_never_duplicate_a_comment():
    summary = faults.run_bench(4, jobs=2, ghost_write_rate=0.3, worlds=("seed",))
    total = summary["total"]
    assert summary["ghost_writes"] > 0, "the knob must have hit some writes"
    assert total["duplicate_comments"] == 0, summary["problems"]
    assert total["wrong_pass"] == 0 and total["no_status"] == 0, summary["problems"]


def _outcome(verdict, rows, *, unavailable=(), state="success", markers=1, reasons=None, sha=HEAD):
    return faults.Outcome(
        world="w", seed=1, verdict=verdict, rows=dict(rows), unavailable_rows=list(unavailable),
        reasons=reasons or {n: "reason" for n in rows}, statuses=[{"state": state, "description": "d", "sha": sha}]
        if state else [], marker_comments=markers, error=None, seconds=0.1, requests=10, head_sha=HEAD,
    )


CLEAN = _outcome("REJECTED", {0: "FAIL", 1: "PASS", 12: "N/A", 14: "WARN"}, state="failure")


def test_equal_run_is_counted_equal_and_clean():
    j = faults.judge(_outcome("REJECTED", CLEAN.rows, state="failure"), CLEAN)
    assert j.equal and not j.unavailable and not j.wrong_pass and not j.unexplained
    assert not j.no_status and not j.duplicate_comments


@pytest.mark.parametrize("rows, verdict, state, why", [
    ({0: "PASS", 1: "PASS", 12: "N/A", 14: "WARN"}, "WARN", "success", "Check 0: PASS, fault-free FAIL"),
    ({0: "N/A", 1: "PASS", 12: "N/A", 14: "WARN"}, "WARN", "failure", "Check 0: N/A, fault-free FAIL"),
    ({0: "FAIL", 1: "PASS", 12: "PASS", 14: "WARN"}, "REJECTED", "failure", "Check 12: PASS, fault-free N/A"),
    ({0: "FAIL", 1: "PASS", 12: "N/A", 14: "PASS"}, "REJECTED", "failure", "Check 14: PASS, fault-free WARN"),
    (CLEAN.rows, "REJECTED", "success", "status success, fault-free verdict REJECTED"),
])
def test_wrong_pass_definitions(rows, verdict, state, why):
    j = faults.judge(_outcome(verdict, rows, state=state), CLEAN)
    assert any(why in w for w in j.wrong_pass), j.wrong_pass


def test_a_worse_row_must_name_what_was_unavailable():
    worse = {0: "FAIL", 1: "FAIL", 12: "N/A", 14: "WARN"}
    silent = faults.judge(_outcome("REJECTED", worse, state="failure"), CLEAN)
    assert silent.unexplained and not silent.wrong_pass
    named = faults.judge(_outcome("REJECTED", worse, state="failure", unavailable=[1]), CLEAN)
    assert not named.unexplained and named.unavailable
    said = faults.judge(_outcome("REJECTED", worse, state="failure",
                                 reasons={**{n: "r" for n in worse}, 1: "could not verify: check runs"}), CLEAN)
    assert not said.unexplained


def test_missing_status_and_duplicate_comments_are_counted():
    assert faults.judge(_outcome("REJECTED", CLEAN.rows, state=None), CLEAN).no_status
    assert faults.judge(_outcome("REJECTED", CLEAN.rows, state="failure", sha="b" * 40), CLEAN).no_status
    assert faults.judge(_outcome("REJECTED", CLEAN.rows, state="failure", markers=2), CLEAN).duplicate_comments
    # One comment left but two created (one deleted since) is a duplicate too.
    twice = _outcome("REJECTED", CLEAN.rows, state="failure")
    twice.created_marker_comments = 2
    assert faults.judge(twice, CLEAN).duplicate_comments
    no_verdict = _outcome(None, {}, state="failure")
    j = faults.judge(no_verdict, CLEAN)
    assert j.unavailable and not j.wrong_pass and not j.equal


class _FlakyApi:
    """A GitHub API whose comment writes always fail (after the client's own retries)."""

    def __init__(self, comment_error: int | None = 503, status_failures: int = 0):
        self.comment_error = comment_error
        self.status_failures = status_failures
        self.statuses: list[dict] = []
        self.comment_posts = 0

    def login(self) -> str:
        return "github-actions[bot]"

    def list(self, path, params=None, key=None):
        return []

    def get(self, path, params=None):
        return {"statuses": []}

    def post(self, path, body):
        if path.endswith("/comments"):
            self.comment_posts += 1
            if self.comment_error:
                raise GithubException(self.comment_error, {"message": "Service Unavailable"}, {})
            return {"html_url": "https://github.com/o/r/pull/1#issuecomment-9"}
        if self.status_failures:
            self.status_failures -= 1
            raise GithubException(502, {"message": "Bad Gateway"}, {})
        self.statuses.append(body)
        return body

    def post_idempotent(self, path, body):
        return self.post(path, body)  # no transport here: the emulator test below covers its repeats

    def patch(self, path, body):
        raise AssertionError("nothing to edit")


def _verdict(status: VerdictStatus = VerdictStatus.PASS) -> Verdict:
    from checks.engine import SignoffRef

    rows = [Row(number=n, name=f"c{n}", status=Status.PASS, reason="ok") for n in sorted(CHECK_NUMBERS)]
    return Verdict(status=status, rows=rows, repo="o/r", pr=1, head_sha=HEAD,
                   signoff=SignoffRef(author="alice", key="issuecomment-7"))


@pytest.fixture
def no_backoff(monkeypatch):
    monkeypatch.setattr(retry_policy, "BACKOFF_FACTOR", 0.0)


def test_a_verdict_comment_that_cannot_be_posted_still_gets_a_failure_status(no_backoff):
    api = _FlakyApi(comment_error=503)
    with pytest.raises(GithubException):
        Publisher(api, "o/r", 1, env={}).publish(_verdict())
    # Each post that failed is looked up before the next, then it gives up.
    assert api.comment_posts == CREATE_ATTEMPTS
    assert [s["state"] for s in api.statuses] == [STATE_FAILURE]
    assert "verdict comment could not be posted (HTTP 503 Service Unavailable)" in api.statuses[0]["description"]


def test_a_status_write_that_fails_once_is_tried_again(no_backoff):
    """A status POST answered 502 (here after landing) is repeated by the transport: it is one of the
    POSTs whose repeat is harmless."""
    world = PROJECT / "ghsim" / "worlds" / "seed"
    with Emulator(world, strict=True, ghost_write_rate=1.0, ghost_write_limit=1, ghost_write_only="statuses") as emu:
        api = GitHubApi(make_github(emu.url, auth=token_auth(emu.world.bot.token), env={}))
        try:
            sha = emu.head_sha
            written = Publisher(api, emu.world.repo, emu.world.pr.number, env={}).set_status(
                sha, "success", "ok", None)
        finally:
            api.close()
        emu.assert_clean()
        assert written and len(emu.ghost_writes) == 1
        assert emu.requests["POST /repos/{owner}/{repo}/statuses/{sha}"] == 2
