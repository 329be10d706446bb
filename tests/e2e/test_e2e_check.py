"""End to end: `python -m bot check PR# --post` through PyGithub over HTTP against the strict
emulator, asserting on its effects log (comments, statuses) and on the verdict rows."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from bench.verdict import generate_world
from bot.cli import main
from bot.github_client import GitHubApi
from ghsim import Emulator
from ghsim import effects as fx
from tests.builders import emulator_api
from checks.registry import CHECK_NUMBERS

WORLDS = Path(__file__).resolve().parents[2] / "ghsim" / "worlds"
REVIEW_DATE = "2026-11-29"
REVIEWER_TOKEN = "ghp_seed_reviewer"
SIGNOFF_ID = 4401
# The expected rows of ghsim/worlds/README.md.
SEED_ROWS = {0: "PASS", 1: "PASS", 2: "PASS", 3: "N/A", 4: "PASS", 5: "PASS", 6: "PASS", 7: "PASS", 8: "PASS",
             9: "PASS", 10: "PASS", 11: "PASS", 12: "N/A", 13: "PASS", 14: "PASS", 15: "WARN"}
REJECTED_ROWS = {0: "FAIL", 1: "PASS", 2: "FAIL", 3: "FAIL", 4: "WARN", 5: "FAIL", 6: "FAIL", 7: "FAIL", 8: "FAIL",
                 9: "N/A", 10: "FAIL", 11: "N/A", 12: "N/A", 13: "N/A", 14: "WARN", 15: "PASS"}
NON_PASSING = {"FAIL", "WARN"}
FAULT_SEEDS = (3, 17)
# Issue 5's request budgets per verdict (reads): the seed world, and the seed world grown by 300
# changed files and 300 comments.
SEED_READ_BUDGET = 20
GROWN_READ_BUDGET = 40
GROWN_FILES = GROWN_COMMENTS = 300


def open_world(name: str, **knobs) -> Emulator:
    return Emulator(WORLDS / name, strict=True, **knobs)


def check(emu: Emulator, capsys, monkeypatch, *extra: str, token: str | None = None) -> tuple[int, str, str]:
    monkeypatch.setenv("GITHUB_TOKEN", token or emu.world.bot.token)
    monkeypatch.delenv("GITHUB_STEP_SUMMARY", raising=False)
    code = main(["check", str(emu.world.pr.number), "--repo", emu.world.repo, "--github-url", emu.url,
                 "--review-date", REVIEW_DATE, *extra])
    out, err = capsys.readouterr()
    return code, out, err


def as_reviewer(emu: Emulator) -> GitHubApi:
    """A human's client: world changes go through the API, as the reviewer would make them."""
    return emulator_api(emu, REVIEWER_TOKEN)


def bot_effects(emu: Emulator) -> list[dict]:
    return [e for e in emu.effects if e["actor"] == emu.world.bot.login]


def rows(out: str) -> dict[int, str]:
    return {c["number"]: c["status"] for c in json.loads(out)["checks"]}


def test_seed_json_rows_match_the_world_readme(capsys, monkeypatch):
    with open_world("seed") as emu:
        code, out, _ = check(emu, capsys, monkeypatch, "--format", "json")
        emu.assert_clean()
        assert emu.effects == []  # no --post, no writes
    data = json.loads(out)
    assert code == 0 and data["verdict"] == "WARN" and rows(out) == SEED_ROWS
    assert data["repo"] == "SemiAnalysisAI/InferenceX" and data["pr"] == 3603


def test_seed_verdict_reads_within_the_request_budget(capsys, monkeypatch):
    with open_world("seed") as emu:
        code, out, _ = check(emu, capsys, monkeypatch, "--format", "json")
        reads = sum(emu.requests.values())
        emu.assert_clean()
    assert code == 0 and rows(out) == SEED_ROWS
    assert reads <= SEED_READ_BUDGET, reads


def test_300_files_and_300_comments_stay_within_the_request_budget(tmp_path, capsys, monkeypatch):
    world = generate_world(tmp_path / "world", GROWN_FILES, GROWN_COMMENTS)
    with Emulator(world, strict=True) as emu:
        code, out, _ = check(emu, capsys, monkeypatch, "--format", "json")
        counts = dict(emu.requests)
        emu.assert_clean()
    assert code in (0, 1) and len(json.loads(out)["checks"]) == len(CHECK_NUMBERS)
    assert sum(counts.values()) <= GROWN_READ_BUDGET, counts
    # Growth is pagination of the two long lists only (100 per page), never a request per file.
    assert counts["GET /repos/{owner}/{repo}/pulls/{number}/files"] == 4
    assert counts["GET /repos/{owner}/{repo}/issues/{number}/comments"] == 4
    assert counts.get("GET /repos/{owner}/{repo}/git/blobs/{sha}", 0) == 0


def test_rejected_world_rows_and_exit_code(capsys, monkeypatch):
    with open_world("rejected") as emu:
        code, out, _ = check(emu, capsys, monkeypatch, "--format", "json", "--post")
        emu.assert_clean()
        statuses = [e for e in bot_effects(emu) if e["kind"] == fx.EFFECT_STATUS_SET]
    assert code == 1 and rows(out) == REJECTED_ROWS
    assert [s["state"] for s in statuses] == ["failure"]


def test_comment_created_then_left_alone_then_edited_in_place(capsys, monkeypatch):
    with open_world("seed") as emu:
        code, out, err = check(emu, capsys, monkeypatch, "--post")
        assert code == 0 and out.startswith("## ⚠️ **Verdict: WARN** ⚠️")
        first = bot_effects(emu)
        assert [e["kind"] for e in first] == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_STATUS_SET, fx.EFFECT_CHECK_RUN_CREATED]
        comment_id = first[0]["id"]
        assert first[0]["body"].startswith(f"<!-- codeowner-signoff-verify signoff=issuecomment-{SIGNOFF_ID} -->\n")
        assert first[1]["state"] == "success" and first[1]["sha"] == emu.head_sha
        assert first[1]["description"] == "CODEOWNER checklist passed with warnings (Check 15)"

        check(emu, capsys, monkeypatch, "--post")
        assert bot_effects(emu) == first  # two identical runs: the second writes nothing

        # The reviewer edits the sign-off (drops the Additional detail section): a new verdict.
        human = as_reviewer(emu)
        path = f"/repos/{emu.world.repo}/issues/comments/{SIGNOFF_ID}"
        body = human.get(path)["body"]
        human.patch(path, {"body": body.split("### Additional detail section:")[0]})
        code, _, _ = check(emu, capsys, monkeypatch, "--post")
        later = bot_effects(emu)[len(first):]
        assert [e["kind"] for e in later] == [fx.EFFECT_COMMENT_EDITED, fx.EFFECT_STATUS_SET, fx.EFFECT_CHECK_RUN_CREATED]
        assert later[0]["id"] == comment_id and later[0]["author"] == emu.world.bot.login
        assert later[1]["state"] == "failure" and code == 1

        # A push moves the head: the same comment is edited and the status lands on the new head.
        new_head = emu.push({"inferencex-e2e/docs/notes.md": "notes\n"})
        check(emu, capsys, monkeypatch, "--post")
        last = bot_effects(emu)[len(first) + len(later):]
        assert last[0]["kind"] == fx.EFFECT_COMMENT_EDITED and last[0]["id"] == comment_id
        assert f"Assessed commit: `{new_head}`." in last[0]["body"]
        assert last[1]["sha"] == new_head
        emu.assert_clean()


def test_forged_marker_in_a_user_comment_is_ignored(capsys, monkeypatch):
    with open_world("seed") as emu:
        human = as_reviewer(emu)
        forged = human.post(f"/repos/{emu.world.repo}/issues/{emu.world.pr.number}/comments",
                            {"body": f"<!-- codeowner-signoff-verify signoff=issuecomment-{SIGNOFF_ID} -->\nPASS"})
        check(emu, capsys, monkeypatch, "--post")
        mine = bot_effects(emu)
        assert [e["kind"] for e in mine] == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_STATUS_SET, fx.EFFECT_CHECK_RUN_CREATED]
        assert mine[0]["id"] != forged["id"]
        emu.assert_clean()


@pytest.mark.parametrize("seed", FAULT_SEEDS)
def test_twenty_percent_5xx_never_give_a_wrong_pass(seed, capsys, monkeypatch):
    with open_world("seed", fail_rate=0.2, seed=seed) as emu:
        code, out, err = check(emu, capsys, monkeypatch, "--post", "--format", "json")
        emu.assert_clean()
        effects = bot_effects(emu)
    statuses = [e for e in effects if e["kind"] == fx.EFFECT_STATUS_SET]
    assert len(statuses) == 1, err  # a status always goes out
    assert sum(e["kind"] == fx.EFFECT_COMMENT_CREATED for e in effects) <= 1
    if code == 2:
        assert statuses[0]["state"] == "failure"
        return
    got = rows(out)
    for number, expected in SEED_ROWS.items():
        assert got[number] == expected or got[number] in NON_PASSING, (number, got[number], expected)
    assert json.loads(out)["verdict"] in ("WARN", "REJECTED")


def test_missing_credentials_and_arguments_are_usage_errors(capsys, monkeypatch):
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    for var in ("INFX_APP_ID", "INFX_APP_PRIVATE_KEY", "INFX_APP_PRIVATE_KEY_PATH", "INFX_APP_INSTALLATION_ID",
                "GITHUB_REPOSITORY"):
        monkeypatch.delenv(var, raising=False)
    assert main(["check", "1", "--repo", "o/r", "--github-url", "http://127.0.0.1:9"]) == 2
    assert "GITHUB_TOKEN" in capsys.readouterr().err
    assert main(["check", "1"]) == 2
    assert "--repo" in capsys.readouterr().err
    assert main(["check"]) == 2
    monkeypatch.setenv("GITHUB_TOKEN", "x")
    assert main(["check", "1", "--repo", "o/r", "--post", "--only", "0"]) == 2


def test_unknown_pr_is_exit_2_and_no_writes(capsys, monkeypatch):
    with open_world("seed") as emu:
        monkeypatch.setenv("GITHUB_TOKEN", emu.world.bot.token)
        code = main(["check", "99", "--repo", emu.world.repo, "--github-url", emu.url, "--post"])
        err = capsys.readouterr().err
        assert code == 2 and "99" in err and emu.effects == []


def test_bad_signoff_ref_still_publishes_a_failure_status(capsys, monkeypatch):
    with open_world("seed") as emu:
        code, _, err = check(emu, capsys, monkeypatch, "--post", "--signoff", "issuecomment-12345")
        effects = bot_effects(emu)
        emu.assert_clean()
    assert code == 2 and "not a comment" in err
    assert [e["kind"] for e in effects] == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_STATUS_SET]
    assert effects[1]["state"] == "failure" and "could not complete" in effects[1]["description"]
