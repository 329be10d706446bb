"""GitHub's documented limits (docs/github-limits.md), one test each: the emulator refuses or
behaves as GitHub does, and the bot stays within the limit without relying on the emulator's
leniency."""
from __future__ import annotations

import base64
import json
import shutil
from contextlib import contextmanager
from datetime import date, datetime, timezone
from pathlib import Path
from types import SimpleNamespace

import pytest
from github import GithubException
from pydantic import ValidationError

import yaml

from bot.commands.handle_event import handle_event
from bot.handlers.catchup import WHY_STALE, is_current, newest_uncovered
from bot.pipeline import review_pr
from bot.router import Context
from bot.routing import JOB_REVIEW, JOB_SKIP, route_event
from bot.pipeline import Rendered, build_snapshot
from bot.snapshot_builder import _changed_file
from checks.engine import evaluate
from bot.publisher import (
    CHECK_TEXT_MAX,
    STATUS_CONTEXT_MAX,
    TEXT_TRUNCATED,
    Publisher,
    signoff_stamp,
    utf8_fit,
)
from checks.engine import Row, SignoffRef, Verdict, VerdictStatus
from checks.fixes import FIXES_KEY, OP_SET
from checks.registry import CHECK_NUMBERS
from checks.render import MARKER, render_markdown
from checks.result import Evidence, Status
from checks.snapshot import Comment, Unavailable
from ghsim import Emulator
from ghsim import effects as fx
from recipes.config import DISPATCH_INPUTS_MAX, Policy, SweepPolicy
from tests.builders import emulator_api

WORLDS = Path(__file__).resolve().parents[2] / "ghsim" / "worlds"
REVIEW_DATE = date(2026, 11, 29)
MASTER = "inferencex-e2e/configs/amd-master.yaml"
KEY = "issuecomment-4401"


def _verdict(emu: Emulator, rows: list[Row] | None = None) -> Verdict:
    rows = rows or [Row(number=n, name=f"Check{n}", status=Status.PASS, reason=f"reason {n}")
                    for n in sorted(CHECK_NUMBERS)]
    worst = VerdictStatus.REJECTED if any(r.status is Status.FAIL for r in rows) else VerdictStatus.PASS
    return Verdict(status=worst, rows=rows, repo=emu.world.repo, pr=emu.world.pr.number, head_sha=emu.head_sha,
                   signoff=SignoffRef(author="seungrokj", key=KEY))


@contextmanager
def _served(world: str, token: str | None = None):
    """The emulator serving a sandbox world, and a client of it (the bot's, or `token`'s)."""
    with Emulator(WORLDS / world, strict=True) as emu:
        api = emulator_api(emu, token)
        try:
            yield emu, api
        finally:
            api.close()


def _refused(call) -> GithubException:
    with pytest.raises(GithubException) as info:
        call()
    assert info.value.status == 422
    return info.value


class _Head:
    """The assessed head's files, read through the contents API."""

    def __init__(self, api, emu: Emulator):
        self.api, self.repo, self.sha = api, emu.world.repo, emu.head_sha

    def read(self, path: str) -> bytes:
        item = self.api.get(f"/repos/{self.repo}/contents/{path}", {"ref": self.sha})
        return base64.b64decode(item["content"])


def _pr_files(api, emu: Emulator) -> SimpleNamespace:
    """What publishing suggestions reads of a snapshot: the PR's changed files and the head."""
    files = [_changed_file(f) for f in api.list(f"/repos/{emu.world.repo}/pulls/{emu.world.pr.number}/files")]
    return SimpleNamespace(files=files, head=_Head(api, emu))


def _built(api, emu: Emulator):
    """The snapshot and its verdict (evaluating it lets every background read finish)."""
    snapshot = build_snapshot(api, emu.world.repo, emu.world.pr.number, review_date=REVIEW_DATE)
    return snapshot, evaluate(snapshot)


def _check_runs(emu: Emulator) -> list[dict]:
    return [e for e in emu.effects if e["kind"] in (fx.EFFECT_CHECK_RUN_CREATED, fx.EFFECT_CHECK_RUN_UPDATED)]


# ----- check-run output: 65,535 bytes of UTF-8, not characters -----------------------------------

def test_the_emulator_refuses_a_check_run_text_over_65535_bytes_even_under_65535_characters():
    with _served("seed") as (emu, api):
        text = "é" * 32_769  # 32,769 characters, 65,538 bytes
        body = {"name": "x", "head_sha": emu.head_sha, "status": "completed", "conclusion": "success",
                "output": {"title": "t", "summary": "s", "text": text}}
        error = _refused(lambda: api.post(f"/repos/{emu.world.repo}/check-runs", body))
        body["output"] = {"title": "t", "summary": text}
        _refused(lambda: api.post(f"/repos/{emu.world.repo}/check-runs", body))
        body["output"] = {"title": "t", "summary": "s", "text": text[:-1]}  # 65,536 bytes... still over
        _refused(lambda: api.post(f"/repos/{emu.world.repo}/check-runs", body))
        body["output"] = {"title": "t", "summary": "s", "text": "é" * 32_767 + "a"}  # 65,535 bytes
        assert api.post(f"/repos/{emu.world.repo}/check-runs", body)["id"]
    assert "maximum bytesize of 65535" in str(error.data)


def test_the_bot_keeps_a_long_check_run_text_within_65535_bytes():
    with _served("seed") as (emu, api):
        verdict = _verdict(emu)
        rendered = Rendered(verdict)
        # A verdict with many Pareto charts: under 65,535 characters, over 65,535 bytes.
        rendered.__dict__["markdown"] = "".join(f"| point {i} | 33.6 s → 288 s |\n" for i in range(2040))
        assert len(rendered.markdown) < CHECK_TEXT_MAX < len(rendered.markdown.encode())
        assert Publisher(api, emu.world.repo, emu.world.pr.number, env={}).publish_check_run(
            verdict, None, rendered=rendered)
        emu.assert_clean()
        [run] = _check_runs(emu)
    assert len(run["output"]["text"].encode("utf-8")) <= CHECK_TEXT_MAX
    assert run["output"]["text"] == render_markdown(verdict, with_details=False), "the details are dropped first"


def test_a_text_over_the_byte_limit_is_cut_at_a_line_and_says_so():
    text = "".join(f"| point {i} | 33.6 s → 288 s |\n" for i in range(2040))
    cut = utf8_fit(text, CHECK_TEXT_MAX)
    assert len(cut.encode("utf-8")) <= CHECK_TEXT_MAX and cut.endswith(TEXT_TRUNCATED)
    kept = cut[: -len(TEXT_TRUNCATED)]
    assert kept.endswith("|\n") and text.startswith(kept) and len(kept.encode()) > CHECK_TEXT_MAX - 200
    one_line = "é" * 40_000  # no line to cut at: whole characters only
    cut = utf8_fit(one_line, CHECK_TEXT_MAX)
    assert len(cut.encode("utf-8")) <= CHECK_TEXT_MAX and set(cut[: -len(TEXT_TRUNCATED)]) == {"é"}
    assert utf8_fit("short", CHECK_TEXT_MAX) == "short"
    chart = "```mermaid\n" + "".join(f"  {i}: 33.6 → 288\n" for i in range(4000)) + "```\n"
    cut = utf8_fit(chart, CHECK_TEXT_MAX)
    assert len(cut.encode("utf-8")) <= CHECK_TEXT_MAX and cut.endswith("\n```\n" + TEXT_TRUNCATED), "the block is closed"


# ----- annotations past the first 50: every PATCH carries the whole output -----------------------

def test_annotation_updates_keep_the_check_runs_text():
    with _served("seed") as (emu, api):
        evidence = [Evidence(path=MASTER, line=i + 1) for i in range(70)]
        rows = [Row(number=n, name=f"Check{n}", status=Status.FAIL if n == 8 else Status.PASS,
                    reason=f"reason {n}", evidence=evidence if n == 8 else []) for n in sorted(CHECK_NUMBERS)]
        verdict = _verdict(emu, rows)
        assert Publisher(api, emu.world.repo, emu.world.pr.number, env={}).publish_check_run(verdict, None)
        run_id = _check_runs(emu)[0]["id"]
        served = api.get(f"/repos/{emu.world.repo}/check-runs/{run_id}")
        # GitHub requires a title and a summary whenever an update carries an output.
        _refused(lambda: api.patch(f"/repos/{emu.world.repo}/check-runs/{run_id}",
                                   {"output": {"title": "t", "annotations": []}}))
        updates = [e for e in _check_runs(emu) if e["kind"] == fx.EFFECT_CHECK_RUN_UPDATED]
    assert updates and all(u["output"]["text"] == served["output"]["text"] for u in updates)
    assert "Check 8 (Check8)" in (served["output"]["text"] or ""), "the text survives the annotation updates"
    assert served["output"]["annotations_count"] == 70


# ----- a review-comment suggestion only on a line of the PR's diff --------------------------------

def _fix(line: int, value: str) -> dict:
    return {"op": OP_SET, "path": MASTER, "line": line, "key": "image", "value": value, "why": "pin the image"}


def _suggestion_verdict(emu: Emulator, fixes: list[dict]) -> Verdict:
    rows = [Row(number=n, name=f"Check{n}", status=Status.FAIL if n == 6 else Status.PASS, reason=f"reason {n}",
                details={FIXES_KEY: fixes} if n == 6 else {}) for n in sorted(CHECK_NUMBERS)]
    return _verdict(emu, rows)


def test_the_emulator_refuses_a_review_comment_outside_the_diff_hunks():
    with _served("seed") as (emu, api):
        body = {"body": "x", "commit_id": emu.head_sha, "path": MASTER, "side": "RIGHT"}
        # amd-master.yaml has 73 lines on the base; the PR appends lines 74-89 (one hunk, 71-89).
        error = _refused(lambda: api.post(f"/repos/{emu.world.repo}/pulls/3603/comments", {**body, "line": 6}))
        assert api.post(f"/repos/{emu.world.repo}/pulls/3603/comments", {**body, "line": 71})["id"]
        assert api.post(f"/repos/{emu.world.repo}/pulls/3603/comments", {**body, "line": 89})["id"]
        _refused(lambda: api.post(f"/repos/{emu.world.repo}/pulls/3603/comments", {**body, "line": 70}))
    assert "pull_request_review_thread.line must be part of the diff" in str(error.data)


def test_suggestions_outside_the_diff_go_into_the_verdict_and_inside_ones_are_posted():
    with _served("seed") as (emu, api):
        snapshot = _pr_files(api, emu)
        verdict = _suggestion_verdict(emu, [_fix(6, "lmsysorg/sglang:v0.5.13"), _fix(78, "rocm/atom-dev:v1")])
        publisher = Publisher(api, emu.world.repo, emu.world.pr.number, env={})
        plan = publisher.plan_suggestions(verdict, snapshot)
        publisher.publish(verdict, rendered=Rendered(verdict), notes=plan.notes)
        posted = publisher.publish_suggestions(verdict, snapshot, plan=plan)
        comments = api.list(f"/repos/{emu.world.repo}/issues/3603/comments")
        emu.assert_clean()
        inline = [e for e in emu.effects if e["kind"] == fx.EFFECT_REVIEW_COMMENT_CREATED]
    assert posted == 1 and [(e["path"], e["line"]) for e in inline] == [(MASTER, 78)]
    verdict_body = next(c["body"] for c in comments if c["body"].startswith(MARKER.format(key=KEY)))
    assert f"{MASTER}:6" in verdict_body and "lmsysorg/sglang:v0.5.13" in verdict_body
    assert f"{MASTER}:78" not in verdict_body


def test_one_refused_suggestion_does_not_stop_the_others():
    with _served("seed") as (emu, api):
        snapshot = _pr_files(api, emu)
        # A file list whose patch claims line 6 is in a hunk (a stale list): GitHub refuses it.
        snapshot.files = [f.model_copy(update={"patch": "@@ -1,3 +1,10 @@\n" + (f.patch or "")})
                          if f.path == MASTER else f for f in snapshot.files]
        verdict = _suggestion_verdict(emu, [_fix(6, "lmsysorg/sglang:v0.5.13"), _fix(78, "rocm/atom-dev:v1")])
        posted = Publisher(api, emu.world.repo, emu.world.pr.number, env={}).publish_suggestions(verdict, snapshot)
        inline = [e for e in emu.effects if e["kind"] == fx.EFFECT_REVIEW_COMMENT_CREATED]
    assert posted == 1 and [e["line"] for e in inline] == [78]


# ----- workflow_dispatch: at most 25 inputs, only declared ones -----------------------------------

def test_the_emulator_refuses_undeclared_or_too_many_dispatch_inputs():
    with _served("sweep") as (emu, api):
        path = f"/repos/{emu.world.repo}/actions/workflows/run-sweep.yml/dispatches"
        declared = {"ref": emu.head_sha, "pr-number": "1", "config-keys": "a"}
        error = _refused(lambda: api.post(path, {"ref": "main", "inputs": {**declared, "colour": "red"}}))
        many = {**declared, **{f"x{i}": "1" for i in range(23)}}
        _refused(lambda: api.post(path, {"ref": "main", "inputs": many}))
        missing = _refused(lambda: api.post(path, {"ref": "main", "inputs": {"ref": emu.head_sha}}))
        api.post(path, {"ref": "main", "inputs": declared})
    assert "Unexpected inputs provided" in str(error.data) and "colour" in str(error.data)
    assert "pr-number" in str(missing.data)


def test_a_dispatch_input_the_sweep_workflow_does_not_declare_is_reported_in_the_claim(tmp_path):
    world = tmp_path / "sweep"
    shutil.copytree(WORLDS / "sweep", world)
    config = world / "base" / ".github" / "infx-review.yml"
    config.write_text(config.read_text(encoding="utf-8").replace('canary: "true"', 'canary: "true"\n    colour: red'),
                      encoding="utf-8")
    payload = _payload_at(WORLDS / "sweep" / "events" / "01.pull_request.labeled-full-sweep-fail-fast.json")
    with Emulator(world, strict=True) as emu:
        api = emulator_api(emu)
        try:
            handled = handle_event(api, "pull_request", payload, env={}, review_date=REVIEW_DATE)
        finally:
            api.close()
        emu.assert_clean()
        effects = emu.effects
    assert not handled.ok and not any(e["kind"] == fx.EFFECT_WORKFLOW_DISPATCHED for e in effects)
    [failed] = [e for e in effects if e["kind"] == fx.EFFECT_COMMENT_EDITED]
    assert "could not be started" in failed["body"] and "Unexpected inputs provided" in failed["body"]
    assert "colour" in failed["body"]


def test_the_config_bounds_the_extra_dispatch_inputs():
    extra = {f"input-{i}": "1" for i in range(DISPATCH_INPUTS_MAX)}
    with pytest.raises(ValidationError) as info:
        SweepPolicy(dispatch_inputs=extra)
    assert "at most 25" in str(info.value)
    SweepPolicy(dispatch_inputs=dict(list(extra.items())[:DISPATCH_INPUTS_MAX - 4]))


# ----- commit status: context at most 255 characters, description 140 ----------------------------

def test_the_emulator_refuses_a_status_context_over_255_characters():
    with _served("seed") as (emu, api):
        path = f"/repos/{emu.world.repo}/statuses/{emu.head_sha}"
        error = _refused(lambda: api.post(path, {"state": "success", "context": "c" * 256}))
        assert api.post(path, {"state": "success", "context": "c" * 255})["context"] == "c" * 255
    assert "context" in str(error.data)


def test_the_bot_refuses_a_status_context_github_would_refuse():
    assert STATUS_CONTEXT_MAX == 255
    with pytest.raises(ValidationError) as info:
        Policy(status_context="c" * 256)
    assert "255" in str(info.value)
    Policy(status_context="c" * 255)
    with _served("seed") as (emu, api):
        with pytest.raises(ValueError):
            Publisher(api, emu.world.repo, emu.world.pr.number, context="c" * 256, env={})


# ----- a review sign-off edited later keeps its submitted_at --------------------------------------

def test_an_edited_review_signoff_makes_its_verdict_stale():
    submitted = datetime(2026, 10, 9, 12, 0, tzinfo=timezone.utc)
    review = Comment(id=77, kind="review", author="seungrokj", body="As a PR reviewer and CODEOWNER ... v1",
                     created_at=submitted, updated_at=submitted)
    verdict = {"body": MARKER.format(key=review.key) + "\nverdict\n" + signoff_stamp(review) + "\n",
               "created_at": "2026-10-09T12:05:00Z", "updated_at": "2026-10-09T12:05:00Z"}
    assert is_current(verdict, review)[0]
    edited = review.model_copy(update={"body": review.body.replace("v1", "v2")})  # same submitted_at
    assert not is_current(verdict, edited)[0]
    # A verdict stamped before the digest existed is judged by the time alone, as it was.
    old = {**verdict, "body": MARKER.format(key=review.key) + f"\n<!-- infx-review signoff-version={submitted.isoformat()} -->\n"}
    assert is_current(old, edited)[0]
    assert not is_current(old, edited.model_copy(update={"updated_at": submitted.replace(hour=13)}))[0]


def test_a_review_signoff_edited_after_its_verdict_is_verified_again():
    with _served("rejected") as (emu, api):
        number = emu.world.pr.number
        review_pr(api, emu.world.repo, number, post=True, review_date=REVIEW_DATE)
        ctx = Context(api=api, repo=emu.world.repo, env={}, review_date=REVIEW_DATE)
        assert newest_uncovered(ctx, number) is None, "the verdict is current"
        author = emulator_api(emu, "ghp_rejected_reviewer")
        try:
            path = f"/repos/{emu.world.repo}/pulls/{number}/reviews/{emu.world.pr.signoff.id}"
            author._request("PUT", path, input={"body": emu.world.pr.signoff.body + "\nEdited: one more line.\n"})
        finally:
            author.close()
        found = newest_uncovered(Context(api=api, repo=emu.world.repo, env={}, review_date=REVIEW_DATE), number)
        emu.assert_clean()
    assert found is not None and found[0].key == f"pullrequestreview-{emu.world.pr.signoff.id}"
    assert found[1] == WHY_STALE


def test_the_emulator_keeps_a_reviews_submitted_at_on_edit_and_has_no_updated_at():
    # chunfangamd, who gave the review
    with _served("rejected", "ghp_rejected_reviewer") as (emu, api):
        path = f"/repos/{emu.world.repo}/pulls/{emu.world.pr.number}/reviews"
        [review] = api.list(path)
        _, edited = api._request("PUT", f"{path}/{review['id']}", input={"body": "new text"})
        [listed] = api.list(path)
        bot = emulator_api(emu)
        try:
            with pytest.raises(GithubException) as refused:  # only its author edits a review
                bot._request("PUT", f"{path}/{review['id']}", input={"body": "the bot's text"})
        finally:
            bot.close()
        emu.assert_clean()
    assert refused.value.status == 403
    assert edited["body"] == listed["body"] == "new text"
    assert edited["submitted_at"] == listed["submitted_at"] == review["submitted_at"]
    assert "updated_at" not in listed


# ----- more than 250 commits in a PR ------------------------------------------------------------

def test_the_emulator_lists_at_most_250_pr_commits_and_the_compare_pages_them_all():
    with _served("seed") as (emu, api):
        emu.push_empty(300)
        listed = api.list(f"/repos/{emu.world.repo}/pulls/3603/commits")
        first = api.get(f"/repos/{emu.world.repo}/compare/{emu.base_sha}...{emu.head_sha}")
        page = api.get(f"/repos/{emu.world.repo}/compare/{emu.base_sha}...{emu.head_sha}",
                       {"per_page": 100, "page": 4})
    assert len(listed) == 250 and first["total_commits"] == 302 and len(first["commits"]) == 250
    assert first["commits"][-1]["sha"] == emu.head_sha, "unpaged, the newest 250"
    assert [c["sha"] for c in page["commits"]][-1] == emu.head_sha and len(page["commits"]) == 2


def test_check_one_sees_the_newest_commits_of_a_pr_with_more_than_250():
    with _served("seed") as (emu, api):
        emu.push_empty(300)
        snapshot, verdict = _built(api, emu)
        emu.assert_clean()
        head = emu.head_sha
    assert not isinstance(snapshot.commits, Unavailable)
    assert len(snapshot.commits) == 302 and snapshot.commits[-1].sha == head
    assert verdict.head_sha == head


def test_more_than_250_commits_unreadable_elsewhere_is_could_not_verify(monkeypatch):
    from ghsim.gitdata import GitData

    def refuse(self, req):
        from ghsim.http import HttpError
        raise HttpError(404, "Not Found")

    monkeypatch.setattr(GitData, "h_compare", refuse)
    with _served("seed") as (emu, api):
        emu.push_empty(300)
        snapshot, verdict = _built(api, emu)
    assert isinstance(snapshot.commits, Unavailable) and "250" in snapshot.commits.reason
    row = next(r for r in verdict.rows if r.number == 1)
    assert row.status is not Status.PASS and "250" in row.reason, row.reason


# ----- a sign-off given as a review on a fork PR ------------------------------------------------

PROJECT = Path(__file__).resolve().parents[2]
PAYLOADS = PROJECT / "tests" / "payloads"
REVIEW_EVENTS = {"pull_request_review": "pull_request_review.signoff-submitted.json",
                 "pull_request_review_comment": "pull_request_review_comment.signoff-created.json"}


def _payload_at(path: Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def _payload(name: str) -> dict:
    return _payload_at(PAYLOADS / name)


def _on_a_fork(payload: dict) -> dict:
    head = payload["pull_request"]["head"]
    head["label"] = "a-contributor:" + head["ref"]
    head["repo"] = {"full_name": "a-contributor/InferenceX", "fork": True}
    return payload


@pytest.mark.parametrize("event", sorted(REVIEW_EVENTS))
def test_a_review_on_a_fork_pr_is_not_handled_with_its_read_only_token(event):
    same_repo = _payload(REVIEW_EVENTS[event])
    assert route_event(event, same_repo).job == JOB_REVIEW
    route = route_event(event, _on_a_fork(_payload(REVIEW_EVENTS[event])))
    assert route.job == JOB_SKIP and "fork" in route.reason


def _yaml(path: Path) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads a bare `on` key as true
    return data


def test_the_caller_runs_again_with_write_access_when_its_run_for_a_fork_review_completes():
    caller = _yaml(PROJECT / "docs" / "caller-workflow.yml")
    assert caller["name"] in caller["on"]["workflow_run"]["workflows"], "its own completion starts it again"
    assert set(caller["on"]["workflow_run"]["types"]) == {"completed"}
    route_if = " ".join(_yaml(PROJECT / ".github" / "workflows" / "review.yml")["jobs"]["route"]["if"].split())
    # Only the run that follows a review on a fork goes on; the runs that follow every other run
    # of the caller (including these) stop before a runner starts.
    assert "contains(github.workflow_ref, format('/{0}@', github.event.workflow_run.path))" in route_if
    for term in ("github.event.workflow_run.event == 'pull_request_review'",
                 "github.event.workflow_run.event == 'pull_request_review_comment'",
                 "github.event.workflow_run.head_repository.full_name != github.repository"):
        assert term in route_if


def test_the_run_after_a_fork_review_verifies_it_with_the_pr_found_by_its_head():
    with _served("rejected") as (emu, api):
        payload = _payload("workflow_run.other-workflow-completed.json")
        payload["workflow_run"].update({
            "name": "infx-review", "path": ".github/workflows/infx-review.yml", "event": "pull_request_review",
            "head_sha": emu.head_sha, "head_branch": emu.world.head_branch, "pull_requests": [],
            "head_repository": {"full_name": f"{emu.world.owner}/{emu.world.name}", "owner": {"login": emu.world.owner}}})
        assert route_event("workflow_run", payload).job == JOB_REVIEW
        handled = handle_event(api, "workflow_run", payload, env={})
        emu.assert_clean()
        effects = emu.effects
    assert all(o.ok for o in handled.outcomes)
    review_key = f"pullrequestreview-{emu.world.pr.signoff.id}"
    posted = [e for e in effects if e["kind"] == fx.EFFECT_COMMENT_CREATED]
    assert any(e["body"].startswith(MARKER.format(key=review_key)) for e in posted)
    assert any(e["kind"] == fx.EFFECT_STATUS_SET for e in effects)
