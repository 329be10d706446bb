"""End to end: recorded webhook payloads through `python -m bot handle-event` (PyGithub over HTTP)
against the strict emulator, one test per flow of issue 6, asserting on the effects log."""
from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest
from github import GithubException

from bot.cli import main
from bot.commands.handle_event import handle_event
from bot.events import event_name_from_filename, load_payload
from bot.handlers.signoff import DESC_FRESH_REQUIRED, STATE_FRESH_REQUIRED
from ghsim import Emulator
from ghsim import effects as fx
from checks.render import HEADERS, HEAD_MOVED_LINE, MARKER
from checks.engine import VerdictStatus
from tests.builders import PushOnce, emulator_api, failing_api, handle_twice, hooked_api

PROJECT = Path(__file__).resolve().parents[2]
WORLDS = PROJECT / "ghsim" / "worlds"
PAYLOADS = Path(__file__).resolve().parents[1] / "payloads"
REVIEW_DATE = "2026-11-29"
SEED_SIGNOFF = "issuecomment-4401"
REUSE_REVIEWER_TOKEN = "ghp_reuse_reviewer"
GOOD_RUN = 37597985033
def world(name: str | Path) -> Emulator:
    return Emulator(name if isinstance(name, Path) else WORLDS / name, strict=True)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for var in ("GITHUB_STEP_SUMMARY", "GITHUB_RUN_ID", "GITHUB_DELIVERY", "INFX_BOT_LOGIN", "GITHUB_REPOSITORY",
                "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH"):
        monkeypatch.delenv(var, raising=False)


def send(emu: Emulator, monkeypatch, path: Path, *, name: str | None = None) -> int:
    """One event through the real CLI entry point, as an Actions job would run it."""
    monkeypatch.setenv("GITHUB_TOKEN", emu.world.bot.token)
    return main(["handle-event", "--event-name", name or event_name_from_filename(path), "--event-path", str(path),
                 "--github-url", emu.url, "--review-date", REVIEW_DATE])


def variant(tmp_path: Path, source: Path, **changes) -> Path:
    """A recorded payload with a few fields replaced (a SHA only known after a push)."""
    data = load_payload(source)
    for dotted, value in changes.items():
        node = data
        *parents, last = dotted.split("__")
        for p in parents:
            node = node[p]
        node[last] = value
    out = tmp_path / source.name
    out.write_text(json.dumps(data), encoding="utf-8")
    return out


def bot_effects(emu: Emulator, since: int = 0) -> list[dict]:
    return [e for e in emu.effects[since:] if e["actor"] == emu.world.bot.login]


def effects_of(monkeypatch, world_name: str | Path, payload: Path) -> list[dict]:
    """The bot's effects when `payload` is the one event delivered to a fresh `world_name`
    (handled, exit 0, every write well-formed)."""
    with world(world_name) as emu:
        assert send(emu, monkeypatch, payload) == 0
        emu.assert_clean()
        return bot_effects(emu)


def kinds(effects: list[dict]) -> list[str]:
    return [e["kind"] for e in effects]


def event(world_name: str, stem: str) -> Path:
    found = sorted((WORLDS / world_name / "events").glob(f"*.{stem}.json"))
    assert len(found) == 1, stem
    return found[0]


# ---------------------------------------------------------------- sign-off verification

def test_conversation_comment_signoff_is_verified_and_published(monkeypatch):
    with world("seed") as emu:
        assert send(emu, monkeypatch, PAYLOADS / "issue_comment.signoff-created.json") == 0
        emu.assert_clean()
        effects = bot_effects(emu)
    assert kinds(effects) == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_STATUS_SET, fx.EFFECT_CHECK_RUN_CREATED]
    body = effects[0]["body"]
    assert body.startswith(MARKER.format(key=SEED_SIGNOFF) + "\n" + HEADERS[VerdictStatus.WARN])
    assert effects[1]["state"] == "success" and effects[1]["sha"] == emu.head_sha
    assert effects[1]["description"] == "CODEOWNER checklist passed with warnings (Check 15)"


def test_review_summary_signoff_is_verified(monkeypatch):
    effects = effects_of(monkeypatch, "rejected", PAYLOADS / "pull_request_review.signoff-submitted.json")
    assert kinds(effects) == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_STATUS_SET, fx.EFFECT_CHECK_RUN_CREATED]
    assert effects[0]["body"].startswith(MARKER.format(key="pullrequestreview-5120") + "\n" + HEADERS[VerdictStatus.REJECTED])
    assert effects[1]["state"] == "failure"


def test_inline_review_comment_signoff_is_verified(monkeypatch, tmp_path):
    inline = tmp_path / "seed-inline"
    shutil.copytree(WORLDS / "seed", inline)
    text = (inline / "world.yaml").read_text(encoding="utf-8")
    assert text.count("    kind: issue_comment\n") == 1
    (inline / "world.yaml").write_text(text.replace("    kind: issue_comment\n", "    kind: review_comment\n"), encoding="utf-8")
    effects = effects_of(monkeypatch, inline, PAYLOADS / "pull_request_review_comment.signoff-created.json")
    assert kinds(effects) == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_STATUS_SET, fx.EFFECT_CHECK_RUN_CREATED]
    assert effects[0]["body"].startswith(MARKER.format(key="discussion_r4401") + "\n")


def test_manual_dispatch_by_url_overrides_the_draft_gate(monkeypatch):
    with world("seed") as emu:
        emu.world.pr.draft = True  # the PR went back to draft; a maintainer dispatches anyway
        assert send(emu, monkeypatch, PAYLOADS / "workflow_dispatch.signoff-url.json") == 0
        emu.assert_clean()
        effects = bot_effects(emu)
    assert kinds(effects) == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_STATUS_SET, fx.EFFECT_CHECK_RUN_CREATED]
    assert effects[0]["body"].startswith(MARKER.format(key=SEED_SIGNOFF))


def test_dispatch_naming_a_comment_of_another_pr_is_refused(monkeypatch):
    with world("seed") as emu:
        code = send(emu, monkeypatch, PAYLOADS / "workflow_dispatch.signoff-other-pr.json")
        emu.assert_clean()
        assert code == 2 and emu.effects == []


def test_draft_pr_is_not_verified(monkeypatch):
    with world("seed") as emu:
        emu.world.pr.draft = True
        assert send(emu, monkeypatch, PAYLOADS / "issue_comment.signoff-created.json") == 0
        emu.assert_clean()
        assert emu.effects == []
        assert emu.requests["GET /repos/{owner}/{repo}/pulls/{number}/files"] == 0


def test_the_bots_own_comment_is_ignored_without_a_request(monkeypatch):
    payload = load_payload(PAYLOADS / "issue_comment.bot-comment.json")
    assert "As a PR reviewer and CODEOWNER" in payload["comment"]["body"]
    with world("seed") as emu:
        assert send(emu, monkeypatch, PAYLOADS / "issue_comment.bot-comment.json") == 0
        assert emu.effects == [] and sum(emu.requests.values()) == 0


def test_a_comment_without_phrase_or_command_writes_nothing(monkeypatch):
    with world("seed") as emu:
        assert send(emu, monkeypatch, PAYLOADS / "issue_comment.signoff-created.json") == 0
        since = len(emu.effects)
        emu.reset_counters()
        assert send(emu, monkeypatch, PAYLOADS / "issue_comment.plain-comment.json") == 0
        emu.assert_clean()
        assert emu.effects[since:] == []
        # The catch-up reads the three comment lists to see the sign-off's verdict is current.
        assert emu.requests["GET /repos/{owner}/{repo}/pulls/{number}"] == 0
        assert emu.requests["GET /repos/{owner}/{repo}/pulls/{number}/reviews"] == 1


def test_a_comment_on_a_pr_whose_signoff_job_was_lost_verifies_that_signoff(monkeypatch):
    """The seed PR has a sign-off but no verdict (its job was cancelled): any later job catches up."""
    effects = effects_of(monkeypatch, "seed", PAYLOADS / "issue_comment.plain-comment.json")
    assert kinds(effects) == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_STATUS_SET, fx.EFFECT_CHECK_RUN_CREATED]
    assert effects[0]["body"].startswith(MARKER.format(key=SEED_SIGNOFF) + "\n")


def signoff_with_push_during_run() -> tuple[str, str, list[dict]]:
    """The seed sign-off handled while a reviewer pushes right after the handler pinned the head
    (its first read of the PR), which the handler reports as handled: (pinned head, pushed head,
    the bot's effects)."""
    with world("seed") as emu:
        pinned = emu.head_sha
        push = PushOnce(emu, {"NOTES.md": "pushed during the review\n"})
        pr_path = f"/pulls/{emu.world.pr.number}"
        api = hooked_api(emu, after=lambda call, path: call == "get" and path.endswith(pr_path) and push())
        try:
            handled = handle_event(api, "issue_comment", load_payload(PAYLOADS / "issue_comment.signoff-created.json"),
                                   env={}, review_date=None)
        finally:
            api.close()
        emu.assert_clean()
        effects = bot_effects(emu)
    assert handled.ok and push.sha and push.sha != pinned
    return pinned, push.sha, effects


def test_head_moved_during_the_run_is_named_and_marked_for_a_fresh_verification():
    pinned, pushed, effects = signoff_with_push_during_run()
    assert kinds(effects) == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_STATUS_SET, fx.EFFECT_CHECK_RUN_CREATED,
                              fx.EFFECT_STATUS_SET]
    assert HEAD_MOVED_LINE.format(sha=pushed) in effects[0]["body"]
    assert f"Assessed commit: `{pinned}`." in effects[0]["body"]
    assert effects[1]["sha"] == pinned and effects[2]["sha"] == pinned, "the check run is on the assessed head"
    assert (effects[3]["sha"], effects[3]["state"]) == (pushed, STATE_FRESH_REQUIRED)
    assert effects[3]["description"] == DESC_FRESH_REQUIRED.format(sha=pushed[:12])


def explode_at(monkeypatch, step: str) -> None:
    """The pipeline's `step` (bot.pipeline.evaluate, .build_snapshot) raises RuntimeError("boom")."""
    import bot.pipeline

    def explode(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(bot.pipeline, step, explode)


def test_a_crash_still_publishes_a_failing_status(monkeypatch):
    explode_at(monkeypatch, "evaluate")
    effects = effects_of(monkeypatch, "seed", PAYLOADS / "issue_comment.signoff-created.json")
    assert kinds(effects) == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_STATUS_SET]
    assert effects[1]["state"] == "failure" and "could not complete" in effects[1]["description"]
    assert "evaluating the checks failed (RuntimeError)" in effects[0]["body"]


def test_a_crash_building_the_snapshot_fails_the_pinned_head_not_a_later_one(monkeypatch):
    explode_at(monkeypatch, "build_snapshot")
    pinned, _, effects = signoff_with_push_during_run()
    assert kinds(effects) == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_STATUS_SET]
    assert (effects[1]["sha"], effects[1]["state"]) == (pinned, "failure")
    assert f"Assessed commit: `{pinned}`." in effects[0]["body"]


def test_push_after_a_verdict_requires_a_fresh_verification(monkeypatch, tmp_path):
    with world("seed") as emu:
        send(emu, monkeypatch, PAYLOADS / "issue_comment.signoff-created.json")
        verdict_url = bot_effects(emu)[1]["target_url"]
        new_head = emu.push({"NOTES.md": "a later commit\n"})
        since = len(emu.effects)
        payload = variant(tmp_path, PAYLOADS / "pull_request.synchronize.json", after=new_head,
                          pull_request__head__sha=new_head)
        assert send(emu, monkeypatch, payload) == 0
        emu.assert_clean()
        effects = bot_effects(emu, since)
    assert kinds(effects) == [fx.EFFECT_STATUS_SET]
    assert (effects[0]["sha"], effects[0]["state"], effects[0]["target_url"]) == (new_head, STATE_FRESH_REQUIRED, verdict_url)


def test_push_without_a_verdict_sets_no_status(monkeypatch):
    with world("seed") as emu:
        assert send(emu, monkeypatch, PAYLOADS / "pull_request.synchronize.json") == 0
        emu.assert_clean()
        assert emu.effects == []


def test_sweep_completion_reverifies_and_updates_the_existing_verdict(monkeypatch):
    with world("seed") as emu:
        api = emulator_api(emu)
        stale = api.post(f"/repos/{emu.world.repo}/issues/{emu.world.pr.number}/comments", {
            "body": MARKER.format(key=SEED_SIGNOFF) + "\n" + HEADERS[VerdictStatus.REJECTED] + "\n\nstale\n"})
        api.close()
        since = len(emu.effects)
        assert send(emu, monkeypatch, PAYLOADS / "workflow_run.sweep-completed.json") == 0
        emu.assert_clean()
        effects = bot_effects(emu, since)
    assert kinds(effects) == [fx.EFFECT_COMMENT_EDITED, fx.EFFECT_STATUS_SET, fx.EFFECT_CHECK_RUN_CREATED]
    assert effects[0]["id"] == stale["id"]
    assert effects[0]["body"].startswith(MARKER.format(key=SEED_SIGNOFF) + "\n" + HEADERS[VerdictStatus.WARN])


def test_sweep_completion_without_a_verdict_catches_up_and_another_workflow_does_nothing(monkeypatch):
    with world("seed") as emu:
        assert send(emu, monkeypatch, PAYLOADS / "workflow_run.other-workflow-completed.json") == 0
        emu.assert_clean()
        assert emu.effects == []
        # The seed sign-off has no verdict (its job was lost): the completion's job verifies it.
        assert send(emu, monkeypatch, PAYLOADS / "workflow_run.sweep-completed.json") == 0
        emu.assert_clean()
        assert kinds(bot_effects(emu)) == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_STATUS_SET, fx.EFFECT_CHECK_RUN_CREATED]


def test_redelivered_signoff_event_writes_nothing_twice(monkeypatch):
    with world("seed") as emu:
        send(emu, monkeypatch, PAYLOADS / "issue_comment.signoff-created.json")
        send(emu, monkeypatch, PAYLOADS / "issue_comment.signoff-created.json")
        send(emu, monkeypatch, PAYLOADS / "issue_comment.signoff-edited.json")  # the edit leaves the text as it was
        emu.assert_clean()
        assert kinds(bot_effects(emu)) == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_STATUS_SET, fx.EFFECT_CHECK_RUN_CREATED]


# ---------------------------------------------------------------- reuse commands

@pytest.fixture(scope="module")
def reuse_world():
    """One emulator for the reuse cases: each acts on its own comment, so effects are read per comment."""
    with world("reuse") as emu:
        yield emu


def effects_on(emu: Emulator, comment_id: int) -> tuple[list[str], list[str]]:
    """(reactions the bot added on the comment, bodies of the bot's replies keyed to it)."""
    marker = f"comment=issuecomment-{comment_id} -->"
    reactions = [e["content"] for e in bot_effects(emu) if e["kind"] == fx.EFFECT_REACTION_ADDED and e["comment_id"] == comment_id]
    replies = [e["body"] for e in bot_effects(emu) if "body" in e and e["body"].split("\n", 1)[0].endswith(marker)]
    return reactions, replies


def test_use_accepted_gets_a_thumbs_up_and_no_reply(reuse_world, monkeypatch):
    assert send(reuse_world, monkeypatch, event("reuse", "use-accepted")) == 0
    reuse_world.assert_clean()
    assert effects_on(reuse_world, 5001) == (["+1"], [])


@pytest.mark.parametrize("stem, comment_id, line, reason", [
    ("use-unauthorized", 5002, "/use 37597985033", "drive-by-dev is CONTRIBUTOR"),
    ("use-unknown-run", 5003, "/use 37799999999", "run 37799999999 was not found"),
    ("use-other-pr", 5004, "/use 37700000003", "not a commit of this pull request"),
    ("use-failed-run", 5005, "/use 37700000001", "did not succeed (conclusion failure)"),
    ("use-artifacts-expired", 5006, "/use 37700000002", "no unexpired reusable artifact"),
    ("bare-use", 5007, "/use", "needs a run id on the same line"),
])
def test_use_refused_for_each_reason(reuse_world, monkeypatch, stem, comment_id, line, reason):
    assert send(reuse_world, monkeypatch, event("reuse", stem)) == 0
    reuse_world.assert_clean()
    reactions, replies = effects_on(reuse_world, comment_id)
    assert reactions == ["-1"] and len(replies) == 1
    reply = replies[0]
    assert f"\n> {line}\n" in reply, "the reply quotes the command"
    assert f"#issuecomment-{comment_id})" in reply, "the reply links the comment"
    assert reason in reply and "not accepted" in reply


def test_bare_reuse_sweep_run_picks_the_newest_eligible_run(reuse_world, monkeypatch):
    assert send(reuse_world, monkeypatch, event("reuse", "bare-reuse-sweep-run")) == 0
    reuse_world.assert_clean()
    assert effects_on(reuse_world, 5009) == (["+1"], [])


def test_quoted_command_is_ignored(reuse_world, monkeypatch):
    before = len(reuse_world.effects)
    assert send(reuse_world, monkeypatch, event("reuse", "quoted-use")) == 0
    reuse_world.assert_clean()
    assert reuse_world.effects[before:] == []


def test_help_lists_every_declared_command(reuse_world, monkeypatch):
    from bot.handlers.commands import declarations

    assert send(reuse_world, monkeypatch, event("reuse", "infx-help")) == 0
    replies = [e["body"] for e in bot_effects(reuse_world) if "body" in e and "help comment=issuecomment-5010" in e["body"]]
    assert len(replies) == 1
    for c in declarations():
        assert f"`{c.usage}`" in replies[0] and c.who in replies[0]
    # The reuse world has no .github/infx-review.yml: the default sweep workflow, by path.
    assert "Sweep workflow: `.github/workflows/run-sweep.yml` in `label` mode" in replies[0]


def test_redelivered_refusal_adds_no_second_reply(reuse_world, monkeypatch):
    send(reuse_world, monkeypatch, event("reuse", "use-failed-run"))
    send(reuse_world, monkeypatch, event("reuse", "use-failed-run"))
    reactions, replies = effects_on(reuse_world, 5005)
    assert reactions == ["-1"] and len(replies) == 1


def test_edited_command_is_rechecked_and_the_stale_reaction_removed(monkeypatch):
    with world("reuse") as emu:
        assert send(emu, monkeypatch, PAYLOADS / "issue_comment.use-before-edit.json") == 0
        first = bot_effects(emu)
        assert kinds(first) == [fx.EFFECT_REACTION_ADDED, fx.EFFECT_COMMENT_CREATED]
        assert first[0]["content"] == "-1"
        human = emulator_api(emu, REUSE_REVIEWER_TOKEN)
        human.patch(f"/repos/{emu.world.repo}/issues/comments/5011", {"body": f"/use {GOOD_RUN}"})
        human.close()
        since = len(emu.effects)
        assert send(emu, monkeypatch, PAYLOADS / "issue_comment.use-edited.json") == 0
        emu.assert_clean()
        after = bot_effects(emu, since)
    assert [(e["kind"], e.get("content")) for e in after] == [
        (fx.EFFECT_REACTION_REMOVED, "-1"), (fx.EFFECT_REACTION_ADDED, "+1"), (fx.EFFECT_COMMENT_EDITED, None)]
    assert after[2]["id"] == first[1]["id"] and "**accepted**" in after[2]["body"]


# ---------------------------------------------------------------- sweep dispatch

def test_label_dispatches_the_sweep_with_the_pinned_head(monkeypatch):
    with world("sweep") as emu:
        assert send(emu, monkeypatch, event("sweep", "labeled-full-sweep-fail-fast")) == 0
        emu.assert_clean()
        effects = bot_effects(emu)
        head = emu.head_sha
    # The reply that records the start is claimed first, then the dispatch, then the reply completed.
    assert kinds(effects) == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_WORKFLOW_DISPATCHED, fx.EFFECT_COMMENT_EDITED]
    marker = f"<!-- infx-review sweep head={head} labels=full-sweep-fail-fast -->\n"
    assert effects[0]["body"].startswith(marker) and effects[2]["id"] == effects[0]["id"]
    d = effects[1]
    assert (d["workflow"], d["ref"]) == (".github/workflows/run-sweep.yml", "main")
    assert d["inputs"] == {"canary": "true", "ref": head, "pr-number": "3603",
                           "config-keys": "dsv41flash-fp4-mi355x-atom-agentic-dspark", "fail-fast": "true"}
    reply = effects[2]["body"]
    assert reply.startswith(marker)
    assert "| `dsv41flash-fp4-mi355x-atom-agentic-dspark` | agentic-coding | 16 |" in reply


def test_redelivered_label_event_dispatches_once(monkeypatch):
    with world("sweep") as emu:
        send(emu, monkeypatch, event("sweep", "labeled-full-sweep-fail-fast"))
        send(emu, monkeypatch, event("sweep", "labeled-redelivered"))
        emu.assert_clean()
        assert kinds(bot_effects(emu)) == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_WORKFLOW_DISPATCHED,
                                           fx.EFFECT_COMMENT_EDITED]


def reply_fails_after_start(emu: Emulator):
    """A client on which GitHub fails (after retries) the first comment write that follows the
    sweep's start, as when a job dies between starting the sweep and recording it; `failed`
    says it did."""
    state = {"started": False}

    def write(call: str, path: str) -> None:
        if call not in ("post", "patch"):
            return
        if path.endswith("/dispatches"):
            state["started"] = True
        elif state["started"] and not api.failed and "/comments" in path:
            api.failed = True
            raise GithubException(502, {"message": "Bad Gateway"}, {})

    api = hooked_api(emu, before=write)
    api.failed = False
    return api


def label_event_twice(make_api):
    """The sweep world's full-sweep label event handled twice on the client `make_api(emu)`
    gives: (first result, second result, the bot's effects, the client)."""
    payload = load_payload(event("sweep", "labeled-full-sweep-fail-fast"))
    with world("sweep") as emu:
        api = make_api(emu)
        first, second = handle_twice(api, "pull_request", payload)
        emu.assert_clean()
        return first, second, bot_effects(emu), api


def test_a_job_that_dies_after_dispatching_is_not_redispatched_on_redelivery():
    first, second, effects, api = label_event_twice(reply_fails_after_start)
    assert api.failed and not first.ok and second.ok
    assert kinds(effects).count(fx.EFFECT_WORKFLOW_DISPATCHED) == 1


def test_a_refused_dispatch_leaves_no_record_so_a_retry_dispatches():
    refused = GithubException(422, {"message": "Unexpected inputs provided"}, {})
    first, second, effects, _ = label_event_twice(lambda emu: failing_api(emu, "/dispatches", refused))
    assert not first.ok and second.ok
    assert kinds(effects).count(fx.EFFECT_WORKFLOW_DISPATCHED) == 1
    failed = [e for e in effects if e["kind"] == fx.EFFECT_COMMENT_EDITED and "could not be started" in e["body"]]
    assert len(failed) == 1 and not failed[0]["body"].startswith("<!--") and "HTTP 422" in failed[0]["body"]


def lists_first(emu: Emulator, barrier: threading.Barrier):
    """A client that, once it has listed the PR's comments (and found no record of a sweep),
    waits at `barrier`: two of them are two jobs for one PR that both list before either writes."""
    listed = threading.Event()

    def wait(call: str, path: str) -> None:
        if call == "list" and path.endswith("/comments") and "/issues/" in path and not listed.is_set():
            listed.set()
            barrier.wait(10)

    return hooked_api(emu, after=wait)


def test_concurrent_jobs_for_the_same_head_and_labels_dispatch_once():
    payload = load_payload(event("sweep", "labeled-full-sweep-fail-fast"))
    with world("sweep") as emu:
        barrier = threading.Barrier(2)
        apis = [lists_first(emu, barrier) for _ in range(2)]
        results: list = [None, None]

        def job(i: int) -> None:
            results[i] = handle_event(apis[i], "pull_request", payload, env={})

        threads = [threading.Thread(target=job, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        for a in apis:
            a.close()
        emu.assert_clean()
        effects = bot_effects(emu)
        marker = f"<!-- infx-review sweep head={emu.head_sha} labels=full-sweep-fail-fast -->"
        left = [c for c in emulator_api(emu).list(f"/repos/{emu.world.repo}/issues/{emu.world.pr.number}/comments")
                if c["body"].startswith(marker)]
    assert all(r is not None and r.ok for r in results)
    assert kinds(effects).count(fx.EFFECT_WORKFLOW_DISPATCHED) == 1
    assert len(left) == 1, "one record of the sweep remains"


def test_sweep_command_dispatches_then_the_label_for_the_same_head_does_not(monkeypatch):
    with world("sweep") as emu:
        assert send(emu, monkeypatch, event("sweep", "sweep-fail-fast")) == 0
        assert send(emu, monkeypatch, event("sweep", "labeled-full-sweep-fail-fast")) == 0
        emu.assert_clean()
        effects = bot_effects(emu)
    assert kinds(effects) == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_WORKFLOW_DISPATCHED, fx.EFFECT_COMMENT_EDITED]
    assert "asked for by [this comment]" in effects[2]["body"]


def test_sweep_command_without_write_permission_is_refused(monkeypatch):
    effects = effects_of(monkeypatch, "sweep", event("sweep", "sweep-no-permission"))
    assert kinds(effects) == [fx.EFFECT_COMMENT_CREATED]
    assert "needs write, maintain or admin permission; drive-by-dev has read permission" in effects[0]["body"]


def test_label_mode_sweep_command_applies_the_primary_label(monkeypatch):
    effects = effects_of(monkeypatch, "reuse", PAYLOADS / "issue_comment.sweep-label-mode.json")
    assert kinds(effects) == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_LABEL_ADDED, fx.EFFECT_COMMENT_EDITED]
    assert effects[1]["label"] == "full-sweep-fail-fast"
    assert "| `dsv41flash-fp4-mi355x-atom-agentic-dspark` | agentic-coding | 16 |" in effects[2]["body"]


def test_label_mode_human_label_and_bot_label_start_nothing(monkeypatch):
    with world("reuse") as emu:
        assert send(emu, monkeypatch, PAYLOADS / "pull_request.labeled-full-sweep-enabled.json") == 0
        assert send(emu, monkeypatch, PAYLOADS / "pull_request.labeled-by-bot.json") == 0
        emu.assert_clean()
        assert emu.effects == []


def test_pr_without_a_new_changelog_entry_has_nothing_to_sweep(monkeypatch):
    with world("sweep") as emu:
        changelog = "inferencex-e2e/perf-changelog.yaml"
        emu.push({changelog: (WORLDS / "sweep" / "base" / changelog).read_bytes()}, message="Drop the entry")
        assert send(emu, monkeypatch, PAYLOADS / "pull_request.labeled-full-sweep-enabled.json") == 0
        emu.assert_clean()
        effects = bot_effects(emu)
    assert kinds(effects) == [fx.EFFECT_COMMENT_CREATED]
    assert "Nothing to sweep" in effects[0]["body"] and f"`{changelog}` has no new entry" in effects[0]["body"]
