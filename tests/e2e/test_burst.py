"""No sign-off is dropped: a burst of events (a push running, then the sign-off, 5 comments, and a
review with 3 inline comments) replayed through a model of GitHub's concurrency groups
(ghsim/concurrency.py) against the strict emulator, with the routing of the real reusable
workflow (`route` job, then `review` or `sweep` in one group per PR)."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml

from bot.commands.handle_event import handle_event
from bot.handlers import HANDLER_MODULES
from bot.router import Router
from bot.routing import JOB_REVIEW, JOB_SKIP, JOB_SWEEP, route_event
from ghsim import Emulator
from ghsim import effects as fx
from ghsim.concurrency import QUEUE_LIMIT, QUEUE_MAX, QUEUE_SINGLE, Job, run_schedule
from checks.render import MARKER
from tests.builders import emulator_api

import importlib

PROJECT = Path(__file__).resolve().parents[2]
SEED = PROJECT / "ghsim" / "worlds" / "seed"
REVIEW_WORKFLOW = PROJECT / ".github" / "workflows" / "review.yml"
PAYLOADS = Path(__file__).resolve().parents[1] / "payloads"
SIGNOFF_KEY = "issuecomment-4401"
REVIEW_DATE = "2026-11-29"
PLAIN = ["Thanks, looks good.", "Could you rebase on main?", "Nit: the recipe comment has a typo.",
         "CI is green on my side, see https://github.com/SemiAnalysisAI/InferenceX/actions", "LGTM"]
REVIEW_ID, INLINE_IDS = 5010, (5011, 5012, 5013)
# Virtual seconds: a verification takes far longer than a job that finds nothing to do.
VERIFY_S, IDLE_S = 60.0, 15.0


@pytest.fixture
def burst_world(tmp_path) -> Path:
    """The seed world plus the burst's comments, all dated after the sign-off."""
    dest = tmp_path / "world"
    shutil.copytree(SEED, dest)
    data = yaml.safe_load((dest / "world.yaml").read_text(encoding="utf-8"))
    comments = data["pr"]["comments"]
    for i, body in enumerate(PLAIN):
        comments.append({"id": 5001 + i, "author": "yhl-amd", "association": "CONTRIBUTOR",
                         "created_at": f"2026-10-09T14:{6 + i:02d}:00Z", "body": body})
    comments.append({"id": REVIEW_ID, "kind": "review", "author": "seungrokj", "association": "COLLABORATOR",
                     "created_at": "2026-10-09T14:20:00Z", "body": "A few inline notes."})
    for i, cid in enumerate(INLINE_IDS):
        comments.append({"id": cid, "kind": "review_comment", "author": "seungrokj", "association": "COLLABORATOR",
                         "created_at": f"2026-10-09T14:2{i}:30Z", "body": f"Inline note {i + 1}: please double-check."})
    (dest / "world.yaml").write_text(yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return dest


def burst_events(emu: Emulator) -> list[tuple[str, dict]]:
    """(event name, payload) in arrival order, the payloads shaped from what the emulator serves."""
    api = emulator_api(emu)
    r, n = f"/repos/{emu.world.repo}", emu.world.pr.number
    try:
        repo, pr, issue = api.get(r), api.get(f"{r}/pulls/{n}"), api.get(f"{r}/issues/{n}")
        sender = lambda item: item["user"]  # noqa: E731 - the author sends the event
        events = [("pull_request", {"action": "synchronize", "number": n, "pull_request": pr, "repository": repo,
                                    "sender": pr["user"]})]
        for cid in (4401, *range(5001, 5001 + len(PLAIN))):
            c = api.get(f"{r}/issues/comments/{cid}")
            events.append(("issue_comment", {"action": "created", "issue": issue, "comment": c,
                                             "repository": repo, "sender": sender(c)}))
        review = api.get(f"{r}/pulls/{n}/reviews/{REVIEW_ID}")
        events.append(("pull_request_review", {"action": "submitted", "review": review, "pull_request": pr,
                                               "repository": repo, "sender": sender(review)}))
        for cid in INLINE_IDS:
            c = api.get(f"{r}/pulls/comments/{cid}")
            events.append(("pull_request_review_comment", {"action": "created", "comment": c, "pull_request": pr,
                                                           "repository": repo, "sender": sender(c)}))
    finally:
        api.close()
    emu.reset_counters()
    return events


def router_without_catchup() -> Router:
    """The router as it was before the fallback: every concern but the catch-up."""
    router = Router()
    for name in HANDLER_MODULES:
        if not name.endswith(".catchup"):
            importlib.import_module(name).register(router)
    return router


def replay(emu: Emulator, *, queue: str, prefilter: bool, catchup: bool) -> dict:
    """Replay the burst: one job per event (none for what the route job skips, when `prefilter`),
    all in the PR's concurrency group, each running the real handle-event when GitHub would
    start it. Returns what happened."""
    events = burst_events(emu)
    jobs = []
    for t, (name, payload) in enumerate(events):
        job = route_event(name, payload).job if prefilter else JOB_REVIEW
        if job == JOB_SKIP:
            continue
        is_signoff = name == "issue_comment" and payload["comment"]["id"] == 4401
        jobs.append(Job(name=f"{t:02d}.{name}", group=f"pr-{emu.world.pr.number}", arrival=float(t),
                        duration=VERIFY_S if is_signoff else IDLE_S, payload=(name, payload)))
    router = None if catchup else router_without_catchup()
    env = {}

    def work(job: Job) -> None:
        name, payload = job.payload
        api = emulator_api(emu)
        try:
            from datetime import date
            handled = handle_event(api, name, payload, router=router, env=env, delivery=job.name,
                                   review_date=date.fromisoformat(REVIEW_DATE))
        finally:
            api.close()
        assert handled.ok, [o.error for o in handled.outcomes]

    schedule = run_schedule(jobs, work, queue=queue)
    emu.assert_clean()
    marker = MARKER.format(key=SIGNOFF_KEY)
    bot = emu.world.bot.login
    created = [e for e in emu.effects if e["actor"] == bot and e["kind"] == fx.EFFECT_COMMENT_CREATED
               and e["body"].split("\n", 1)[0] == marker]
    statuses = [e for e in emu.effects if e["actor"] == bot and e["kind"] == fx.EFFECT_STATUS_SET]
    return {"queued": len(jobs), "started": [j.name for j in schedule.started],
            "cancelled": [j.name for j in schedule.cancelled], "verdicts": len(created),
            "statuses": len(statuses), "requests": sum(emu.requests.values())}


def test_the_old_workflow_loses_the_signoff(burst_world):
    """One pending slot, no pre-filter, no fallback: each comment cancels the pending sign-off job."""
    with Emulator(burst_world, strict=True) as emu:
        got = replay(emu, queue=QUEUE_SINGLE, prefilter=False, catchup=False)
    assert "01.issue_comment" in got["cancelled"]
    assert got["verdicts"] == 0 and got["statuses"] == 0


@pytest.mark.parametrize("queue,prefilter,catchup", [
    (QUEUE_MAX, False, False),     # queue: max alone
    (QUEUE_SINGLE, False, True),   # the fallback alone (GitHub Enterprise Server without `queue`)
    (QUEUE_SINGLE, True, False),   # the pre-filter alone: noise never queues
    (QUEUE_MAX, True, True),       # what review.yml ships
])
def test_one_verdict_per_signoff(burst_world, queue, prefilter, catchup):
    with Emulator(burst_world, strict=True) as emu:
        got = replay(emu, queue=queue, prefilter=prefilter, catchup=catchup)
    assert got["verdicts"] == 1, got
    assert got["statuses"] == 1, got


def test_the_shipped_configuration_queues_only_what_matters(burst_world):
    with Emulator(burst_world, strict=True) as emu:
        got = replay(emu, queue=QUEUE_MAX, prefilter=True, catchup=True)
    # The push and the sign-off; the 5 comments, the review and its 3 inline comments are noise.
    assert got["queued"] == 2 and got["cancelled"] == [] and got["verdicts"] == 1


def test_the_fallback_catches_up_when_the_signoff_job_is_cancelled(burst_world):
    with Emulator(burst_world, strict=True) as emu:
        got = replay(emu, queue=QUEUE_SINGLE, prefilter=False, catchup=True)
    assert "01.issue_comment" in got["cancelled"]
    # The one pending job that survived (the last inline comment) verified the sign-off.
    assert got["started"][-1] == "10.pull_request_review_comment" and got["verdicts"] == 1


# ---------------------------------------------------------------- the model itself

def test_model_single_keeps_one_pending_and_cancels_the_older():
    jobs = [Job(str(i), "g", float(i), 10.0) for i in range(4)]
    started: list[str] = []
    s = run_schedule(jobs, lambda j: started.append(j.name), queue=QUEUE_SINGLE)
    assert started == ["0", "3"] and [j.name for j in s.cancelled] == ["1", "2"]


def test_model_max_runs_everything_in_arrival_order_up_to_the_limit():
    jobs = [Job(str(i), "g", float(i) / 10, 100.0) for i in range(QUEUE_LIMIT + 3)]
    started: list[str] = []
    s = run_schedule(jobs, lambda j: started.append(j.name), queue=QUEUE_MAX)
    assert started[:3] == ["0", "3", "4"] and started == sorted(started, key=int)
    assert len(s.cancelled) == 2, "past 100 pending, the oldest pending are cancelled (an assumption)"


def test_model_groups_are_independent():
    jobs = [Job("a1", "a", 0.0, 10.0), Job("b1", "b", 1.0, 10.0), Job("a2", "a", 2.0, 1.0), Job("a3", "a", 3.0, 1.0)]
    started: list[str] = []
    run_schedule(jobs, lambda j: started.append(j.name), queue=QUEUE_SINGLE)
    assert started == ["a1", "b1", "a3"]


# ---------------------------------------------------------------- the workflow as shipped

def _workflow() -> dict:
    return yaml.safe_load(REVIEW_WORKFLOW.read_text(encoding="utf-8"))


def test_both_jobs_queue_in_one_group_per_pr():
    jobs = _workflow()["jobs"]
    for name in ("review", "sweep"):
        c = jobs[name]["concurrency"]
        assert c["queue"] == QUEUE_MAX and c["cancel-in-progress"] is False, name
        assert c["group"].startswith("infx-review-${{ github.repository }}-pr-${{ github.event.pull_request.number || github.event.issue.number")
    assert jobs["review"]["if"] == f"needs.route.outputs.job == '{JOB_REVIEW}'"
    assert jobs["sweep"]["if"] == f"needs.route.outputs.job == '{JOB_SWEEP}'"
    assert "concurrency" not in jobs["route"], "routing never waits in the PR's queue"
    assert "python -m bot route-event" in " ".join(s.get("run", "") for s in jobs["route"]["steps"])


@pytest.mark.parametrize("body,job", [
    ("/sweep", JOB_SWEEP),
    ("/SWEEP fail-fast", JOB_SWEEP),
    ("Thanks!\n  /sweep\n", JOB_SWEEP),
    ("please do not /sweep yet", JOB_SKIP),
    ("> /sweep\n\nquoted, not a command", JOB_SKIP),
    ("```\n/sweep\n```", JOB_SKIP),
    ("/sweeping the floor", JOB_SKIP),
    ("/use 37597985033", JOB_REVIEW),
    ("/infx help", JOB_REVIEW),
    ("As a PR reviewer and CODEOWNER, I have reviewed this", JOB_REVIEW),
    ("As a PR reviewer and CODEOWNER, ...\n/sweep", JOB_SWEEP),
    ("see https://github.com/x/y/pull/1", JOB_SKIP),
])
def test_sweep_is_routed_by_a_whole_line_command(body, job):
    payload = json.loads((PAYLOADS / "issue_comment.plain-comment.json").read_text(encoding="utf-8"))
    payload["comment"]["body"] = body
    assert route_event("issue_comment", payload).job == job


def test_edits_bots_and_labels_are_routed():
    payload = json.loads((PAYLOADS / "issue_comment.plain-comment.json").read_text(encoding="utf-8"))
    payload["action"], payload["changes"] = "edited", {"body": {"from": "/use 1"}}
    assert route_event("issue_comment", payload).job == JOB_REVIEW, "withdrawing a command is handled"
    payload["comment"]["body"] = "/sweep"
    assert route_event("issue_comment", payload).job == JOB_REVIEW, "an edited /sweep starts nothing"
    bot = json.loads((PAYLOADS / "issue_comment.bot-comment.json").read_text(encoding="utf-8"))
    assert route_event("issue_comment", bot).job == JOB_SKIP
    labeled = json.loads((PAYLOADS / "pull_request.labeled-full-sweep-enabled.json").read_text(encoding="utf-8"))
    assert route_event("pull_request", labeled).job == JOB_SWEEP
    for path in sorted(PAYLOADS.glob("workflow_*.json")):
        assert route_event(path.name.split(".")[0], json.loads(path.read_text(encoding="utf-8"))).job == JOB_REVIEW


def test_the_workflow_prefilter_keeps_every_event_the_route_job_would_keep():
    """The `if:` of the route job is a superset of the route: every term the bot's parsers can
    match (command words, the sign-off phrase) appears in it."""
    cond = _workflow()["jobs"]["route"]["if"]
    for word in ("/use", "/reuse-sweep-run", "/sweep", "/infx", "inputs.signoff-phrase", "changes.body.from",
                 "user.type == 'Bot'"):
        assert word in cond
