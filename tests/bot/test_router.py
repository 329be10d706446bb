"""The router (fixed order, isolated failures, bots dropped), the event model over the recorded
payloads, and the reusable workflow's shape (trigger, permissions, no PR checkout)."""
from __future__ import annotations

import logging
import re
from pathlib import Path

import pytest
import yaml

from bot.events import (
    EVENT_COMMENT,
    CommentEvent,
    DispatchEvent,
    EventError,
    PullRequestEvent,
    WorkflowRunEvent,
    event_name_from_filename,
    load_payload,
    parse_event,
)
from bot.handlers import HANDLER_MODULES, build_router
from bot.router import Router

PROJECT = Path(__file__).resolve().parents[2]
PAYLOADS = Path(__file__).resolve().parents[1] / "payloads"
WORLD_EVENTS = sorted((PROJECT / "ghsim" / "worlds").glob("*/events/*.json"))
REVIEW_WORKFLOW = PROJECT / ".github" / "workflows" / "review.yml"


class FakeCtx:
    """Only what the router asks of a context."""

    def __init__(self, ignored: set[str] = frozenset()):
        self.ignored = ignored
        self.asked: list[str] = []

    def is_ignored_author(self, login: str, is_bot: bool) -> bool:
        self.asked.append(login)
        return is_bot or login in self.ignored


def comment_event(author: str = "alice", user_type: str = "User", action: str = "created") -> CommentEvent:
    payload = {"action": action, "issue": {"number": 7, "pull_request": {}},
               "comment": {"id": 1, "body": "hi", "user": {"login": author, "type": user_type},
                           "author_association": "MEMBER"},
               "repository": {"full_name": "o/r", "default_branch": "main"}, "sender": {"login": author}}
    return parse_event("issue_comment", payload, delivery="d-1")


# ---------------------------------------------------------------- router

def test_handlers_run_in_registration_order_and_a_failure_is_isolated(caplog):
    calls = []
    router = Router()
    router.add(EVENT_COMMENT, "created", lambda e, c: calls.append("first"), name="first")

    def broken(e, c):
        calls.append("broken")
        raise RuntimeError("bug")

    router.add(EVENT_COMMENT, "created", broken, name="broken")
    router.add(EVENT_COMMENT, "created", lambda e, c: calls.append("last"), name="last")
    router.add(EVENT_COMMENT, "edited", lambda e, c: calls.append("edited"), name="edited")
    with caplog.at_level(logging.ERROR, logger="bot.router"):
        outcomes = router.dispatch(comment_event(), FakeCtx())
    assert calls == ["first", "broken", "last"]
    assert [(o.handler, o.ok) for o in outcomes] == [("first", True), ("broken", False), ("last", True)]
    assert "RuntimeError" in outcomes[1].error
    logged = [r.getMessage() for r in caplog.records]
    assert any("broken" in m and "d-1" in m for m in logged), logged


def test_bot_comments_never_reach_a_handler():
    router, calls = Router(), []
    router.add(EVENT_COMMENT, "created", lambda e, c: calls.append(e), name="h")
    assert router.dispatch(comment_event("dependabot[bot]", "Bot"), FakeCtx()) == []
    assert router.dispatch(comment_event("Klaud-Cold"), FakeCtx({"Klaud-Cold"})) == []
    assert calls == []
    assert len(router.dispatch(comment_event("alice"), FakeCtx())) == 1 and len(calls) == 1


def test_unrouted_events_ask_nothing_of_the_context():
    router, ctx = Router(), FakeCtx()
    assert router.dispatch(comment_event(action="deleted"), ctx) == [] and ctx.asked == []


def test_build_router_registers_concerns_in_the_fixed_order():
    names = [r.name for r in build_router().registrations]
    modules = [n.split(".", 1)[0] for n in names]
    concerns = [m.rsplit(".", 1)[-1] for m in HANDLER_MODULES]
    assert [c for c in concerns if c in modules] == concerns
    assert modules == sorted(modules, key=concerns.index), "registrations are grouped by concern, in order"
    comment_handlers = [r.name for r in build_router().registrations if (r.event, r.action) == (EVENT_COMMENT, "created")]
    assert comment_handlers == ["signoff.on_comment", "commands.on_comment", "sweep.on_comment", "catchup.on_any_event"]


# ---------------------------------------------------------------- events

@pytest.mark.parametrize("path", sorted(PAYLOADS.glob("*.json")) + WORLD_EVENTS, ids=lambda p: p.name)
def test_every_recorded_payload_parses_and_is_scrubbed(path):
    text = path.read_text(encoding="utf-8")
    assert not re.search(r"gh[pousr]_[A-Za-z0-9]{20,}|\"token\"\s*:", text), "payloads carry no tokens"
    event = parse_event(event_name_from_filename(path), load_payload(path), delivery="x")
    assert event.repo == "SemiAnalysisAI/InferenceX"
    assert build_router().handlers_for(event), f"{path.name} reaches no handler"


def test_three_comment_kinds_become_one_comment_event():
    kinds = {}
    for name in ("issue_comment.signoff-created", "pull_request_review.signoff-submitted",
                 "pull_request_review_comment.signoff-created"):
        path = PAYLOADS / f"{name}.json"
        event = parse_event(event_name_from_filename(path), load_payload(path))
        assert isinstance(event, CommentEvent) and event.key == (EVENT_COMMENT, "created")
        kinds[event.comment.kind] = event.comment.key
    assert kinds == {"issue_comment": "issuecomment-4401", "review": "pullrequestreview-5120",
                     "review_comment": "discussion_r4401"}


def test_edited_comment_keeps_the_previous_body():
    event = parse_event("issue_comment", load_payload(PAYLOADS / "issue_comment.use-edited.json"))
    assert event.action == "edited" and event.comment.body == "/use 37597985033"
    assert event.previous_body == "/use 37700000001"


def test_other_event_kinds():
    pr = parse_event("pull_request_target", load_payload(PAYLOADS / "pull_request.labeled-by-bot.json"))
    assert isinstance(pr, PullRequestEvent) and pr.key == ("pull_request", "labeled")
    assert pr.label == "full-sweep-fail-fast" and pr.sender.is_bot
    run = parse_event("workflow_run", load_payload(PAYLOADS / "workflow_run.sweep-completed.json"))
    assert isinstance(run, WorkflowRunEvent) and run.pr_numbers == (3603,) and run.run_id == 37597985033
    assert run.workflow_path == ".github/workflows/run-sweep.yml"
    dispatch = parse_event("workflow_dispatch", load_payload(PAYLOADS / "workflow_dispatch.signoff-url.json"))
    assert isinstance(dispatch, DispatchEvent) and dispatch.key == ("workflow_dispatch", "")
    assert dispatch.pr_number == 3603 and dispatch.signoff_url.endswith("#issuecomment-4401")


@pytest.mark.parametrize("name, payload", [
    ("issue_comment", []),
    ("issue_comment", {"action": "created", "issue": {"number": 1}}),
    ("pull_request", {"action": "labeled"}),
    ("workflow_run", {"action": "completed", "workflow_run": {}}),
])
def test_malformed_payloads_are_named_errors(name, payload):
    with pytest.raises(EventError, match=name):
        parse_event(name, payload)


@pytest.mark.parametrize("filename, name", [
    ("issue_comment.signoff-created.json", "issue_comment"),
    ("01.pull_request.labeled-full-sweep-fail-fast.json", "pull_request"),
    ("workflow_run.json", "workflow_run"),
])
def test_event_name_from_filename(filename, name):
    assert event_name_from_filename(filename) == name


def test_event_name_from_a_bad_filename():
    with pytest.raises(EventError):
        event_name_from_filename("payload.txt")


# ---------------------------------------------------------------- the reusable workflow

def _workflow() -> dict:
    data = yaml.safe_load(REVIEW_WORKFLOW.read_text(encoding="utf-8"))
    data["on"] = data.pop(True, data.get("on"))  # YAML 1.1 reads a bare `on` key as true
    return data


ALLOWED = {"contents": {"read"}, "pull-requests": {"write", "read"}, "issues": {"write", "read"},
           "statuses": {"write", "read"}, "actions": {"read", "write"}, "checks": {"read", "write"}}
PINNED_ACTION = re.compile(r"^actions/(checkout|setup-python)@[0-9a-f]{40}$")


def test_review_workflow_is_reusable_and_pins_the_bot():
    wf = _workflow()
    assert set(wf["on"]) == {"workflow_call"}
    assert wf["on"]["workflow_call"]["inputs"]["bot-ref"]["required"] is True
    assert wf.get("permissions") == {}
    for name, job in wf["jobs"].items():
        runs = " ".join(s.get("run", "") for s in job["steps"])
        assert "--require-hashes" in runs and "-r .infx-review/requirements.lock" in runs
        assert "^[0-9a-f]{40}$" in runs, "only a full commit SHA is installed"
        assert "rev-parse HEAD" in runs, "the checked-out commit is the pinned one"
        assert "python -m bot route-event" in runs if name == "route" else "python -m bot handle-event" in runs
        for step in job["steps"]:
            if "uses" in step:
                assert PINNED_ACTION.match(step["uses"]), step["uses"]
        if name != "route":
            c = job["concurrency"]
            assert "pull_request.number" in c["group"] and c["cancel-in-progress"] is False and c["queue"] == "max"


def test_review_workflow_never_checks_out_pr_code():
    text = REVIEW_WORKFLOW.read_text(encoding="utf-8")
    assert "github.event.pull_request.head" not in text
    for job in _workflow()["jobs"].values():
        for s in job["steps"]:
            if str(s.get("uses", "")).startswith("actions/checkout"):
                # Only infx-review itself, at the pinned commit, without a stored token; the token
                # that reads it is the private copy's read token when given (docs/install.md).
                assert s["with"] == {"repository": "${{ inputs.bot-repository }}", "ref": "${{ inputs.bot-ref }}",
                                     "path": ".infx-review", "persist-credentials": False,
                                     "token": "${{ secrets.bot-repository-token || github.token }}"}


def test_review_workflow_permissions_are_least_privilege():
    jobs = _workflow()["jobs"]
    for name, job in jobs.items():
        perms = job["permissions"]
        for scope, level in perms.items():
            assert level in ALLOWED.get(scope, set()), (name, scope, level)
    writers = [n for n, j in jobs.items() if j["permissions"].get("actions") == "write"]
    assert writers == ["sweep"], "only the dispatching job may write actions"
    assert jobs["sweep"]["if"] == "needs.route.outputs.job == 'sweep'"
    assert jobs["review"]["if"] == "needs.route.outputs.job == 'review'"
    assert jobs["route"]["permissions"] == {"contents": "read"}


def test_an_author_check_that_fails_stops_the_event_with_a_named_error(caplog):
    class Broken(FakeCtx):
        def is_ignored_author(self, login, is_bot):
            raise ConnectionError("GitHub unreachable")

    router, calls = Router(), []
    router.add(EVENT_COMMENT, "created", lambda e, c: calls.append(e), name="h")
    outcomes = router.dispatch(comment_event(), Broken())
    assert calls == [] and [(o.handler, o.ok) for o in outcomes] == [("router.author_check", False)]


# ---------------------------------------------------------------- the context's marked replies

def test_a_reply_that_vanished_before_its_edit_is_posted_anew(monkeypatch):
    """The handlers' replies use the publisher's upsert rule: a 404 on the edit means the comment
    was deleted meanwhile, so a new one is posted instead of the handler failing."""
    from github import Auth, GithubException

    from bot.github_client import GitHubApi, make_github
    from bot.router import Context
    from ghsim import Emulator

    marker = "<!-- infx-review command comment=issuecomment-1 -->"
    with Emulator(PROJECT / "ghsim" / "worlds" / "seed", strict=True) as emu:
        api = GitHubApi(make_github(emu.url, auth=Auth.Token(emu.world.bot.token)))
        try:
            ctx = Context(api=api, repo=emu.world.repo, env={})
            first, action = ctx.upsert_marked(emu.world.pr.number, marker, "refused")
            assert action == "created"
            assert ctx.upsert_marked(emu.world.pr.number, marker, "refused")[1] == "unchanged"

            def gone(self, path, body):
                raise GithubException(404, {"message": "Not Found"}, {})

            monkeypatch.setattr(GitHubApi, "patch", gone)
            second, action = ctx.upsert_marked(emu.world.pr.number, marker, "accepted after the edit")
        finally:
            api.close()
        emu.assert_clean()
    assert action == "created" and second["id"] != first["id"]
    assert second["body"] == marker + "\naccepted after the edit"
