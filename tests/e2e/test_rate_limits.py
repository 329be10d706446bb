"""GitHub's rate-limit rules (bot/retry_policy.py) against the emulator, on a virtual clock: a
primary limit is never resent before its reset (reads and writes, 403 and 429), a secondary limit
waits at least a minute (or Retry-After), everything within the job's budget, and nothing is
sent while GitHub said the primary limit is spent."""
from __future__ import annotations

from pathlib import Path

import pytest
from github import GithubException

from bot.github_client import GitHubApi, fetch, make_github
from bot.retry_policy import (
    PRIMARY,
    RATE_LIMIT_RETRIES,
    RESET_MARGIN_S,
    SECONDARY,
    SECONDARY_MIN_WAIT_S,
    TRANSIENT,
    RetryPolicy,
    VirtualClock,
    classify,
)
from ghsim import Emulator
from ghsim import effects as fx
from ghsim.auth import APP_ID, INSTALLATION_ID
from checks.snapshot import Unavailable
from tests.builders import emulator_api

SEED = Path(__file__).resolve().parents[2] / "ghsim" / "worlds" / "seed"
PR_ROUTE = "GET /repos/{owner}/{repo}/pulls/{number}"
STATUS_ROUTE = "POST /repos/{owner}/{repo}/statuses/{sha}"
COMMENT_ROUTE = "POST /repos/{owner}/{repo}/issues/{number}/comments"


def api_for(emu: Emulator, clock: VirtualClock, **policy) -> GitHubApi:
    return emulator_api(emu, policy=RetryPolicy(clock=clock, **policy))


def statuses(emu: Emulator, route: str) -> list:
    return [e["status"] for e in emu.request_log if e["route"] == route]


def test_classify_follows_githubs_documented_signals():
    assert classify(403, {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1"}) == PRIMARY
    assert classify(429, {"X-RateLimit-Remaining": "0"}) == PRIMARY
    assert classify(403, {"Retry-After": "60", "x-ratelimit-remaining": "4000"}) == SECONDARY
    assert classify(429, {"x-ratelimit-remaining": "4000"}) == SECONDARY
    assert classify(403, {}, "You have exceeded a secondary rate limit.") == SECONDARY
    assert classify(403, {"x-ratelimit-remaining": "10"}, "Resource not accessible by integration") is None
    assert classify(502, {}) == TRANSIENT and classify(None, None) == TRANSIENT and classify(404, {}) is None


@pytest.mark.parametrize("limit_status", [403, 429])
def test_a_primary_limit_on_a_write_is_resent_once_after_the_reset(limit_status):
    """Another client spent the token's budget: the status POST is refused with remaining 0, and
    the bot sends it again only after x-ratelimit-reset (before: 15 tries in 11 s on a 429)."""
    clock = VirtualClock(start=1_800_000_000.0)
    with Emulator(SEED, strict=True, clock=clock, rate_limit=3, rate_window_s=600, limit_status=limit_status) as emu:
        other = api_for(emu, clock)
        for _ in range(3):
            other.get(f"/repos/{emu.world.repo}/pulls/{emu.world.pr.number}")
        other.close()
        reset = emu._rate_reset
        emu.reset_counters()
        api = api_for(emu, clock)
        try:
            api.post_idempotent(f"/repos/{emu.world.repo}/statuses/{emu.head_sha}",
                                {"state": "success", "context": "c", "description": "d"})
        finally:
            api.close()
        emu.assert_clean()
        assert statuses(emu, STATUS_ROUTE) == [limit_status, 201]
    assert clock.sleeps == [pytest.approx(reset - 1_800_000_000.0 + RESET_MARGIN_S)]
    assert clock.time() >= reset


def test_nothing_is_sent_while_github_said_the_limit_is_spent():
    """The response that brought remaining to 0 is remembered: the next read waits for the reset
    instead of spending a request on a refusal."""
    clock = VirtualClock(start=1_800_000_000.0)
    with Emulator(SEED, strict=True, clock=clock, rate_limit=2, rate_window_s=300) as emu:
        api = api_for(emu, clock)
        try:
            for _ in range(4):
                api.get(f"/repos/{emu.world.repo}/pulls/{emu.world.pr.number}")
        finally:
            api.close()
        assert statuses(emu, PR_ROUTE) == [200] * 4, "no request was refused"
    assert clock.sleeps == [pytest.approx(300 + RESET_MARGIN_S)]


def test_a_secondary_limit_without_retry_after_waits_a_minute_then_longer_within_the_budget():
    clock = VirtualClock()
    with Emulator(SEED, strict=True, clock=clock, rate_limit_rate=1.0, retry_after_s=None) as emu:
        api = api_for(emu, clock)  # the default budget: 12 minutes
        try:
            got = fetch("the PR", lambda: api.get(f"/repos/{emu.world.repo}/pulls/{emu.world.pr.number}"))
        finally:
            api.close()
        n = sum(emu.requests.values())
    assert isinstance(got, Unavailable) and "HTTP 403" in got.reason
    # 60 + 120 + 240 s; the next wait (480 s) would end past the 720 s budget, so it gives up.
    assert clock.sleeps == [SECONDARY_MIN_WAIT_S, 2 * SECONDARY_MIN_WAIT_S, 4 * SECONDARY_MIN_WAIT_S]
    assert n == 4


def test_retry_after_is_honoured_even_when_long_and_the_budget_bounds_it():
    clock = VirtualClock()
    with Emulator(SEED, strict=True, clock=clock, rate_limit_first=2, retry_after_s=60) as emu:
        api = api_for(emu, clock)
        try:
            pr = api.get(f"/repos/{emu.world.repo}/pulls/{emu.world.pr.number}")
        finally:
            api.close()
    assert pr["number"] == emu.world.pr.number and clock.sleeps == [60.0, 60.0]

    clock = VirtualClock()
    with Emulator(SEED, strict=True, clock=clock, rate_limit_first=5, retry_after_s=60) as emu:
        api = api_for(emu, clock, job_budget_s=100)
        try:
            with pytest.raises(GithubException) as err:
                api.get(f"/repos/{emu.world.repo}/pulls/{emu.world.pr.number}")
        finally:
            api.close()
    assert err.value.status == 403 and clock.sleeps == [60.0], "a second minute would pass the 100 s budget"


def test_a_rate_limited_post_is_repeated_and_lands_once():
    """A rate-limit refusal was not applied, so even a comment POST is sent again after it."""
    clock = VirtualClock()
    with Emulator(SEED, strict=True, clock=clock, rate_limit_first=1, retry_after_s=None, limit_status=429) as emu:
        api = api_for(emu, clock)
        try:
            api.post(f"/repos/{emu.world.repo}/issues/{emu.world.pr.number}/comments", {"body": "once"})
        finally:
            api.close()
        emu.assert_clean()
        assert statuses(emu, COMMENT_ROUTE) == [429, 201]
        assert [e["kind"] for e in emu.effects] == [fx.EFFECT_COMMENT_CREATED]
    assert clock.sleeps == [SECONDARY_MIN_WAIT_S]


def _app_env(job: str) -> dict[str, str]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    return {"INFX_APP_ID": str(APP_ID), "INFX_APP_PRIVATE_KEY": pem,
            "INFX_APP_INSTALLATION_ID": str(INSTALLATION_ID), "INFX_JOB": job}


@pytest.mark.parametrize("job,answer", [("review", 403), ("sweep", 204)])
def test_app_tokens_carry_only_their_jobs_permissions_and_a_refusal_is_not_retried(job, answer):
    """Only the sweep job's App token may dispatch (its token is minted with actions: write); the
    review job's is refused with GitHub's 403, which is a refusal, not a limit: never repeated."""
    clock = VirtualClock()
    world = SEED.parent / "sweep"
    with Emulator(world, strict=True, clock=clock) as emu:
        api = GitHubApi(make_github(emu.url, env=_app_env(job), policy=RetryPolicy(clock=clock)))
        try:
            try:
                # The inputs run-sweep.yml requires (GitHub refuses a dispatch without them).
                api.post(f"/repos/{emu.world.repo}/actions/workflows/run-sweep.yml/dispatches",
                         {"ref": emu.world.default_branch, "inputs": {
                             "ref": emu.head_sha, "pr-number": str(emu.world.pr.number), "config-keys": "x"}})
            except GithubException as exc:
                assert exc.status == answer and "not accessible by integration" in str(exc.data)
        finally:
            api.close()
        emu.assert_clean()
        assert statuses(emu, "POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches") == [answer]
        granted = next(iter(emu._install_token_perms.values()))
    assert granted["actions"] == ("write" if job == "sweep" else "read")
    assert clock.sleeps == []


def test_reserve_waits_for_the_reset_before_a_burst_that_would_not_fit():
    clock = VirtualClock(start=1_000.0)
    policy = RetryPolicy(clock=clock)
    policy.observe({"x-ratelimit-remaining": "5", "x-ratelimit-reset": "1030", "x-ratelimit-resource": "core"})
    assert policy.reserve(3) == 0.0
    assert policy.reserve(20) == pytest.approx(30 + RESET_MARGIN_S) and clock.time() >= 1030
    assert policy.reserve(20) == 0.0, "after the reset the old count is forgotten"


def test_every_wait_is_bounded_by_the_job_budget():
    clock = VirtualClock()
    policy = RetryPolicy(clock=clock, job_budget_s=50)
    assert policy.wait_for(SECONDARY, 1, {"Retry-After": "60"}) is None
    assert policy.wait_for(SECONDARY, 1, {"Retry-After": "30"}) == 30
    assert policy.wait_for(PRIMARY, 1, {"x-ratelimit-reset": str(int(clock.time()) + 10)}) \
        == pytest.approx(10 + RESET_MARGIN_S, abs=1)
    assert policy.wait_for(SECONDARY, 1, {}, limited=RATE_LIMIT_RETRIES + 1) is None
