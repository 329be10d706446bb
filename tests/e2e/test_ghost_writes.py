"""Writes that land but answer an error (a 5xx or a dropped connection after GitHub applied
them): the emulator's ghost-write knob, and that every create path of the bot (verdict comment,
reply comment, sweep claim, workflow dispatch) still happens exactly once."""
from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
import requests
from github import GithubException, RateLimitExceededException

from bot import retry_policy
from bot.commands.handle_event import handle_event
from bot.events import load_payload
from bot.github_client import create_once, make_retry
from bot.handlers import sweep as sweep_handler
from bot.publisher import ACTION_CREATED, Publisher
from ghsim import Emulator
from ghsim import effects as fx
from ghsim.faults import FAULT_DROP
from checks.engine import Row, SignoffRef, Verdict, VerdictStatus
from checks.render import MARKER
from checks.result import Status
from checks.registry import CHECK_NUMBERS
from tests.builders import emulator_api, failing_api, handle_twice

WORLDS = Path(__file__).resolve().parents[2] / "ghsim" / "worlds"
KEY = "issuecomment-4401"
REVIEW_DATE = date(2026, 11, 29)
COMMENT_CREATE = "POST /repos/{owner}/{repo}/issues/{number}/comments"
DISPATCH = "POST /repos/{owner}/{repo}/actions/workflows/{workflow_id}/dispatches"
PAYLOADS = Path(__file__).resolve().parents[1] / "payloads"
REUSE_REVIEWER_TOKEN = "ghp_reuse_reviewer"
GOOD_RUN = 37597985033
# Seeds whose first ghost is a 502 and a dropped connection respectively (asserted below).
SEED_502, SEED_DROP = 2, 0


@pytest.fixture(autouse=True)
def _fast(monkeypatch):
    # Backoff and the dispatch settle wait only slow the tests; the decisions stay the same.
    monkeypatch.setattr(retry_policy, "BACKOFF_FACTOR", 0.0)
    monkeypatch.setattr(sweep_handler, "DISPATCH_SETTLE_S", 0.0)
    for var in ("GITHUB_STEP_SUMMARY", "INFX_BOT_LOGIN"):
        monkeypatch.delenv(var, raising=False)


def bot_effects(emu: Emulator, kind: str) -> list[dict]:
    return [e for e in emu.effects if e["actor"] == emu.world.bot.login and e["kind"] == kind]


def live_bot_comments(emu: Emulator, marker: str) -> list[dict]:
    api = emulator_api(emu)
    try:
        comments = api.list(f"/repos/{emu.world.repo}/issues/{emu.world.pr.number}/comments")
    finally:
        api.close()
    return [c for c in comments if c["user"]["login"] == emu.world.bot.login and c["body"].startswith(marker)]


def verdict(emu: Emulator) -> Verdict:
    rows = [Row(number=n, name=f"Check{n}", status=Status.PASS, reason=f"reason {n}") for n in sorted(CHECK_NUMBERS)]
    return Verdict(status=VerdictStatus.PASS, rows=rows, repo=emu.world.repo, pr=emu.world.pr.number,
                   head_sha=emu.head_sha, signoff=SignoffRef(author="seungrokj", key=KEY))


# ---------------------------------------------------------------- the emulator's knob

@pytest.mark.parametrize("seed, answer", [(SEED_502, 502), (SEED_DROP, FAULT_DROP)])
def test_a_ghost_write_is_applied_and_then_answered_as_failed(seed, answer):
    with Emulator(WORLDS / "seed", strict=True, ghost_write_rate=1.0, ghost_write_limit=1, seed=seed) as emu:
        url = f"{emu.url}/repos/{emu.world.repo}/issues/{emu.world.pr.number}/comments"
        headers = {"Authorization": f"token {emu.world.bot.token}"}
        body = json.dumps({"body": "hello"})
        if answer == FAULT_DROP:
            with pytest.raises(requests.ConnectionError):
                requests.post(url, data=body, headers=headers, timeout=5)
        else:
            assert requests.post(url, data=body, headers=headers, timeout=5).status_code == answer
        # The cap is reached: the next write is answered normally.
        assert requests.post(url, data=body, headers=headers, timeout=5).status_code == 201
        emu.assert_clean()
        assert [e["body"] for e in bot_effects(emu, fx.EFFECT_COMMENT_CREATED)] == ["hello", "hello"]
        assert [(m, a) for m, _, a in emu.ghost_writes] == [("POST", answer)]


def test_ghost_draws_repeat_with_the_seed_and_leave_reads_and_refusals_alone():
    def run(seed: int) -> list:
        with Emulator(WORLDS / "seed", ghost_write_rate=0.5, seed=seed) as emu:
            url = f"{emu.url}/repos/{emu.world.repo}/issues/{emu.world.pr.number}/comments"
            headers = {"Authorization": f"token {emu.world.bot.token}"}
            for i in range(12):
                assert requests.get(url, headers=headers, timeout=5).status_code == 200
                try:
                    requests.post(url, data=json.dumps({"body": f"c{i}"}), headers=headers, timeout=5)
                except requests.ConnectionError:
                    pass
            # A refused write was not applied, so it is never a ghost.
            assert requests.post(url, data="{}", headers=headers, timeout=5).status_code == 422
            assert len(bot_effects(emu, fx.EFFECT_COMMENT_CREATED)) == 12
            return list(emu.ghost_writes)

    first = run(5)
    assert first == run(5) and 0 < len(first) < 12
    assert first != run(6)


def test_the_sandbox_command_takes_the_ghost_write_rate():
    import argparse

    from bot.commands.sandbox import add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args(["serve", "--world", "w", "--ghost-write-rate", "0.25"])
    assert args.ghost_write_rate == 0.25
    assert parser.parse_args(["serve", "--world", "w"]).ghost_write_rate == 0.0


# ---------------------------------------------------------------- the client

def test_the_transport_repeats_edits_and_rate_limited_posts_but_not_failed_posts():
    retry = make_retry()
    assert not retry.is_retry("POST", 502) and not retry.is_retry("POST", 500)
    assert retry.is_retry("POST", 403) and retry.is_retry("POST", 429)
    assert retry.is_retry("PATCH", 502) and retry.is_retry("GET", 503) and retry.is_retry("DELETE", 502)


def test_a_post_answered_502_after_landing_is_not_repeated():
    with Emulator(WORLDS / "seed", strict=True, ghost_write_rate=1.0, ghost_write_limit=1, seed=SEED_502) as emu:
        api = emulator_api(emu)
        try:
            with pytest.raises(GithubException) as err:
                api.post(f"/repos/{emu.world.repo}/issues/{emu.world.pr.number}/comments", {"body": "once"})
        finally:
            api.close()
        emu.assert_clean()
        assert err.value.status == 502
        assert emu.requests[COMMENT_CREATE] == 1
        assert len(bot_effects(emu, fx.EFFECT_COMMENT_CREATED)) == 1


class _Calls:
    def __init__(self, *outcomes):
        self.outcomes, self.count = list(outcomes), 0

    def __call__(self):
        self.count += 1
        out = self.outcomes.pop(0)
        if isinstance(out, BaseException):
            raise out
        return out


def test_create_once_adopts_what_landed_and_never_repeats_a_refusal():
    post, find = _Calls(GithubException(502, {}, {})), _Calls({"id": 7})
    assert create_once("x", post, find) == {"id": 7} and (post.count, find.count) == (1, 1)

    post, find = _Calls(requests.ConnectionError("dropped"), {"id": 8}), _Calls(None)
    assert create_once("x", post, find) == {"id": 8} and (post.count, find.count) == (2, 1)

    for refusal in (GithubException(422, {}, {}), GithubException(403, {"message": "Resource not accessible"}, {})):
        post, find = _Calls(refusal), _Calls()
        with pytest.raises(GithubException):
            create_once("x", post, find)
        assert (post.count, find.count) == (1, 0)

    # A rate limit that reaches create_once outlasted the transport's waits (bot/retry_policy.py):
    # it was not applied, and it is not repeated here either.
    post, find = _Calls(RateLimitExceededException(403, {"message": "secondary rate limit"}, {}), {"id": 9}), _Calls(None)
    with pytest.raises(RateLimitExceededException):
        create_once("x", post, find)
    assert (post.count, find.count) == (1, 0)


def test_create_once_stops_when_it_cannot_tell_or_after_its_attempts():
    failure = GithubException(503, {}, {})
    post, find = _Calls(failure), _Calls(requests.ConnectionError("list failed"))
    with pytest.raises(GithubException) as err:
        create_once("x", post, find)
    assert err.value is failure and post.count == 1

    post, find = _Calls(*[GithubException(502, {}, {})] * 3), _Calls(None, None, None)
    with pytest.raises(GithubException):
        create_once("x", post, find, attempts=3)
    assert (post.count, find.count) == (3, 3)


# ---------------------------------------------------------------- the verdict comment

@pytest.mark.parametrize("seed", [SEED_502, SEED_DROP])
def test_a_verdict_whose_comment_post_landed_but_failed_creates_one_comment(seed):
    with Emulator(WORLDS / "seed", strict=True, ghost_write_rate=1.0, ghost_write_limit=1,
                  ghost_write_only=COMMENT_CREATE, seed=seed) as emu:
        api = emulator_api(emu)
        try:
            out = Publisher(api, emu.world.repo, emu.world.pr.number, env={}).publish(verdict(emu))
        finally:
            api.close()
        emu.assert_clean()
        assert len(emu.ghost_writes) == 1
        assert out.comment_action == ACTION_CREATED and out.comment_url.endswith(
            f"#issuecomment-{bot_effects(emu, fx.EFFECT_COMMENT_CREATED)[0]['id']}")
        assert len(bot_effects(emu, fx.EFFECT_COMMENT_CREATED)) == 1
        assert len(live_bot_comments(emu, MARKER.format(key=KEY))) == 1
        assert [e["state"] for e in bot_effects(emu, fx.EFFECT_STATUS_SET)] == ["success"]


def test_the_happy_path_makes_no_extra_request():
    with Emulator(WORLDS / "seed", strict=True) as emu:
        api = emulator_api(emu)
        try:
            api.login()
            emu.reset_counters()
            Publisher(api, emu.world.repo, emu.world.pr.number, env={}).publish(verdict(emu))
        finally:
            api.close()
        # List our comments, create one; read the statuses, write one.
        assert sum(emu.requests.values()) == 4


def test_a_whole_signoff_event_with_every_write_ghosted_at_a_seeded_rate(monkeypatch):
    payload = PAYLOADS / "issue_comment.signoff-created.json"
    for seed in (1, 2, 3):
        with Emulator(WORLDS / "seed", strict=True, ghost_write_rate=0.5, seed=seed) as emu:
            api = emulator_api(emu)
            try:
                handled = handle_event(api, "issue_comment", load_payload(payload), env={}, review_date=REVIEW_DATE)
            finally:
                api.close()
            emu.assert_clean()
            assert handled.ok, handled
            assert len(live_bot_comments(emu, MARKER.format(key=KEY))) == 1
            assert len(bot_effects(emu, fx.EFFECT_COMMENT_CREATED)) == 1
            assert bot_effects(emu, fx.EFFECT_STATUS_SET)[-1]["state"] == "success"


# ---------------------------------------------------------------- reply comments and reactions

def test_a_refusal_reply_whose_post_landed_but_failed_is_one_comment():
    payload = load_payload(sorted((WORLDS / "reuse" / "events").glob("*.use-failed-run.json"))[0])
    with Emulator(WORLDS / "reuse", strict=True, ghost_write_rate=1.0, ghost_write_limit=1,
                  ghost_write_only=COMMENT_CREATE, seed=SEED_DROP) as emu:
        first, again = handle_twice(emulator_api(emu), "issue_comment", payload)
        emu.assert_clean()
        assert len(emu.ghost_writes) == 1
        assert first.ok and again.ok, (first, again)
        replies = bot_effects(emu, fx.EFFECT_COMMENT_CREATED)
        assert len(replies) == 1 and "comment=issuecomment-5005 -->" in replies[0]["body"].split("\n", 1)[0]
        assert [e["content"] for e in bot_effects(emu, fx.EFFECT_REACTION_ADDED)] == ["-1"]


@pytest.mark.parametrize("seed", [SEED_502, SEED_DROP])
def test_a_reaction_and_its_removal_landing_but_failing_are_harmless(seed):
    with Emulator(WORLDS / "reuse", strict=True, seed=seed) as emu:
        api = emulator_api(emu)
        try:
            assert handle_event(api, "issue_comment", load_payload(PAYLOADS / "issue_comment.use-before-edit.json"),
                                env={}).ok
            human = emulator_api(emu, REUSE_REVIEWER_TOKEN)
            human.patch(f"/repos/{emu.world.repo}/issues/comments/5011", {"body": f"/use {GOOD_RUN}"})
            human.close()
            since = len(emu.effects)
            # The edit is accepted: removing the stale -1 and adding +1 both land and answer an
            # error; the retried DELETE finds it gone, the retried POST meets GitHub's 200 repeat.
            emu.ghost_write_rate, emu.ghost_write_only, emu.ghost_write_limit = 1.0, "/reactions", 2
            handled = handle_event(api, "issue_comment", load_payload(PAYLOADS / "issue_comment.use-edited.json"),
                                   env={})
        finally:
            api.close()
        emu.assert_clean()
        assert handled.ok, handled
        assert [m for m, _, _ in emu.ghost_writes] == ["DELETE", "POST"]
        after = [(e["kind"], e.get("content")) for e in emu.effects[since:] if e["actor"] == emu.world.bot.login]
        assert after == [(fx.EFFECT_REACTION_REMOVED, "-1"), (fx.EFFECT_REACTION_ADDED, "+1"),
                         (fx.EFFECT_COMMENT_EDITED, None)]


# ---------------------------------------------------------------- the sweep claim and dispatch

def _sweep_label_event() -> dict:
    return load_payload(sorted((WORLDS / "sweep" / "events").glob("*.labeled-full-sweep-fail-fast.json"))[0])


@pytest.mark.parametrize("only", [COMMENT_CREATE, DISPATCH])
@pytest.mark.parametrize("seed", [SEED_502, SEED_DROP])
def test_a_sweep_whose_claim_or_dispatch_landed_but_failed_dispatches_once(only, seed):
    with Emulator(WORLDS / "sweep", strict=True, ghost_write_rate=1.0, ghost_write_limit=1,
                  ghost_write_only=only, seed=seed) as emu:
        api = emulator_api(emu)
        try:
            first = handle_event(api, "pull_request", _sweep_label_event(), env={})
            again = handle_event(api, "pull_request", _sweep_label_event(), env={})
        finally:
            api.close()
        emu.assert_clean()
        assert len(emu.ghost_writes) == 1
        assert first.ok and again.ok, (first, again)
        assert len(bot_effects(emu, fx.EFFECT_WORKFLOW_DISPATCHED)) == 1
        assert len(bot_effects(emu, fx.EFFECT_COMMENT_CREATED)) == 1
        marker = sweep_handler.SWEEP_MARKER.format(head=emu.head_sha, labels="full-sweep-fail-fast")
        left = live_bot_comments(emu, marker)
        assert len(left) == 1 and "Started the sweep" in left[0]["body"]
        assert "infx-review claim=" not in left[0]["body"]


def test_a_dispatch_that_did_not_land_is_repeated_once(monkeypatch):
    monkeypatch.setattr(sweep_handler, "DISPATCH_SETTLE_S", 0.01)
    with Emulator(WORLDS / "sweep", strict=True) as emu:
        # GitHub answers 502 to the first dispatch without creating a run.
        api = failing_api(emu, "/dispatches", GithubException(502, {"message": "Bad Gateway"}, {}))
        try:
            handled = handle_event(api, "pull_request", _sweep_label_event(), env={})
        finally:
            api.close()
        emu.assert_clean()
        assert api.failed == 1 and handled.ok, handled
        assert len(bot_effects(emu, fx.EFFECT_WORKFLOW_DISPATCHED)) == 1
        # The run list was read (once, and again after the settle wait) before dispatching again.
        assert emu.requests["GET /repos/{owner}/{repo}/actions/workflows/{workflow_id}/runs"] == 2
