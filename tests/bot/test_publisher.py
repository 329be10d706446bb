"""The publisher against the emulator: one verdict comment per sign-off among the bot's own
comments, edited or left alone, the commit status and its descriptions, the job summary."""
from __future__ import annotations

from pathlib import Path

import pytest
from github import GithubException

from bot.github_client import GitHubApi, make_github
from bot.publisher import (
    ACTION_CREATED,
    ACTION_EDITED,
    ACTION_UNCHANGED,
    DESC_PASS,
    DESC_REJECTED,
    STATUS_CONTEXT,
    Publisher,
    incomplete_comment,
    status_for,
)
from ghsim import Emulator
from ghsim import effects as fx
from ghsim.auth import APP_ID, INSTALLATION_ID
from checks.engine import Row, SignoffRef, Verdict, VerdictStatus
from checks.render import MARKER, render_comment
from checks.result import Status
from checks.text import STATUS_DESCRIPTION_MAX
from checks.registry import CHECK_NUMBERS
from tests.builders import emulator_api

SEED = Path(__file__).resolve().parents[2] / "ghsim" / "worlds" / "seed"
REVIEWER_TOKEN = "ghp_seed_reviewer"  # seungrokj in the seed world
KEY = "issuecomment-4401"
OTHER_KEY = "issuecomment-4400"


@pytest.fixture
def emu():
    with Emulator(SEED, strict=True) as e:
        yield e
        e.assert_clean()


def api_for(emu: Emulator, token: str | None = None) -> GitHubApi:
    return emulator_api(emu, token)


def publisher(emu: Emulator, env: dict | None = None) -> Publisher:
    return Publisher(api_for(emu), emu.world.repo, emu.world.pr.number, env=env or {})


def verdict(emu: Emulator, statuses: dict[int, Status], key: str = KEY, head: str | None = None) -> Verdict:
    rows = [Row(number=n, name=f"Check{n}", status=statuses.get(n, Status.PASS), reason=f"reason {n}") for n in sorted(CHECK_NUMBERS)]
    worst = (VerdictStatus.REJECTED if Status.FAIL in statuses.values()
             else VerdictStatus.WARN if Status.WARN in statuses.values() else VerdictStatus.PASS)
    return Verdict(status=worst, rows=rows, repo=emu.world.repo, pr=emu.world.pr.number, head_sha=head or emu.head_sha,
                   signoff=SignoffRef(author="seungrokj", key=key))


def kinds(emu: Emulator) -> list[str]:
    return [e["kind"] for e in emu.effects]


def test_created_then_unchanged_then_edited_in_place(emu):
    pub = publisher(emu)
    first = pub.publish(verdict(emu, {}))
    assert first.comment_action == ACTION_CREATED and first.status_state == "success"
    created = emu.effects[0]
    assert created["body"].split("\n", 1)[0] == MARKER.format(key=KEY)
    assert kinds(emu) == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_STATUS_SET]

    again = pub.publish(verdict(emu, {}))
    assert again.comment_action == ACTION_UNCHANGED and not again.status_written
    assert len(emu.effects) == 2  # an identical replay writes nothing

    third = pub.publish(verdict(emu, {2: Status.FAIL}))
    assert third.comment_action == ACTION_EDITED and third.comment_url == first.comment_url
    edit = emu.effects[2]
    assert edit["kind"] == fx.EFFECT_COMMENT_EDITED and edit["id"] == created["id"]
    assert emu.effects[3]["state"] == "failure" and emu.effects[3]["description"] == DESC_REJECTED
    assert emu.effects[3]["target_url"] == first.comment_url


def test_each_signoff_gets_its_own_comment(emu):
    pub = publisher(emu)
    pub.publish(verdict(emu, {}, key=KEY))
    pub.publish(verdict(emu, {}, key=OTHER_KEY))
    created = [e for e in emu.effects if e["kind"] == fx.EFFECT_COMMENT_CREATED]
    assert len(created) == 2 and created[0]["id"] != created[1]["id"]


def test_a_users_comment_with_the_marker_is_ignored(emu):
    user = api_for(emu, REVIEWER_TOKEN)
    forged = user.post(f"/repos/{emu.world.repo}/issues/{emu.world.pr.number}/comments",
                       {"body": MARKER.format(key=KEY) + "\n## ✅✅✅ **Verdict: PASS** ✅✅✅\n"})
    out = publisher(emu).publish(verdict(emu, {2: Status.FAIL}))
    assert out.comment_action == ACTION_CREATED
    edits = [e for e in emu.effects if e["kind"] == fx.EFFECT_COMMENT_EDITED]
    assert edits == []
    assert emu.effects[-2]["actor"] == emu.world.bot.login and emu.effects[-2]["id"] != forged["id"]


def test_of_several_own_comments_the_oldest_is_edited(emu):
    bot = api_for(emu)
    path = f"/repos/{emu.world.repo}/issues/{emu.world.pr.number}/comments"
    old = bot.post(path, {"body": MARKER.format(key=KEY) + "\nold"})
    newer = bot.post(path, {"body": MARKER.format(key=KEY) + "\nnewer"})
    out = publisher(emu).publish(verdict(emu, {}))
    assert out.comment_action == ACTION_EDITED
    edits = [e for e in emu.effects if e["kind"] == fx.EFFECT_COMMENT_EDITED]
    assert [e["id"] for e in edits] == [old["id"]] and newer["id"] != old["id"]


def test_a_vanished_comment_is_posted_anew(emu, monkeypatch):
    pub = publisher(emu)
    pub.publish(verdict(emu, {}))

    def gone(self, path, body):
        raise GithubException(404, {"message": "Not Found"}, {})

    monkeypatch.setattr(GitHubApi, "patch", gone)
    out = pub.publish(verdict(emu, {3: Status.FAIL}))
    assert out.comment_action == ACTION_CREATED
    assert kinds(emu).count(fx.EFFECT_COMMENT_CREATED) == 2


def test_status_descriptions_fit_and_name_the_warnings(emu):
    assert status_for(verdict(emu, {})) == ("success", DESC_PASS)
    state, text = status_for(verdict(emu, {14: Status.WARN, 15: Status.WARN}))
    assert state == "success" and text == "CODEOWNER checklist passed with warnings (Checks 14, 15)"
    assert status_for(verdict(emu, {0: Status.FAIL, 15: Status.WARN})) == ("failure", DESC_REJECTED)
    many = {n: Status.WARN for n in sorted(CHECK_NUMBERS)}
    assert len(status_for(verdict(emu, many))[1]) <= STATUS_DESCRIPTION_MAX


def test_status_goes_on_the_assessed_head_not_the_current_one(emu):
    assessed = emu.head_sha
    emu.push({"inferencex-e2e/docs/notes.md": "later\n"})
    publisher(emu).publish(verdict(emu, {}, head=assessed))
    status = [e for e in emu.effects if e["kind"] == fx.EFFECT_STATUS_SET][0]
    assert status["sha"] == assessed and status["context"] == STATUS_CONTEXT


def test_partial_verdicts_are_never_published(emu):
    partial = verdict(emu, {}).model_copy(update={"partial": True})
    with pytest.raises(ValueError):
        publisher(emu).publish(partial)
    assert emu.effects == []


def test_incomplete_verification_posts_rejected_comment_and_failure(emu):
    out = publisher(emu).publish_incomplete(emu.head_sha, "building the snapshot failed (KeyError)", signoff_key=KEY)
    comment, status = emu.effects
    assert comment["body"].startswith(MARKER.format(key=KEY) + "\n## ❌❌❌ **REJECTED** ❌❌❌")
    assert comment["body"].endswith(f"Assessed commit: `{emu.head_sha}`.\n")
    assert status["state"] == "failure" and "could not complete" in status["description"]
    assert out.comment_url == status["target_url"]
    assert incomplete_comment(KEY, emu.head_sha, "x <!-- y -->").count("<!--") == 1  # the reason is escaped


def test_job_summary_is_appended_in_actions(emu, tmp_path):
    summary = tmp_path / "summary.md"
    summary.write_text("earlier step\n")
    out = publisher(emu, env={"GITHUB_STEP_SUMMARY": str(summary)}).publish(verdict(emu, {}))
    text = summary.read_text()
    assert text.startswith("earlier step\n") and "Verdict: PASS" in text and "<!--" not in text
    assert out.extras == ["job summary"]


def test_job_summary_failure_is_logged_not_raised(emu, tmp_path):
    out = publisher(emu, env={"GITHUB_STEP_SUMMARY": str(tmp_path / "missing" / "x.md")}).publish(verdict(emu, {}))
    assert out.extras == [] and out.status_state == "success"


def test_github_app_identity_is_the_bot_login(emu):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    from bot.github_client import auth_from_env

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    auth = auth_from_env({"INFX_APP_ID": str(APP_ID), "INFX_APP_PRIVATE_KEY": pem,
                          "INFX_APP_INSTALLATION_ID": str(INSTALLATION_ID)})
    api = GitHubApi(make_github(emu.url, auth=auth))
    assert api.login() == emu.world.bot.login
    Publisher(api, emu.world.repo, emu.world.pr.number, env={}).publish(verdict(emu, {}))
    assert [e["actor"] for e in emu.effects] == [emu.world.bot.login] * 2
    assert render_comment(verdict(emu, {}), KEY) == emu.effects[0]["body"]
