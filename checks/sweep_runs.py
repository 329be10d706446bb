"""The sweep run a review reads: which check runs prove a sweep passed on an in-PR commit, and
which run Checks 1, 2 and 14 read (spec 12, Check 1; spec 9.3 for reuse sources).

A group of check runs counts only when its run belongs to the configured sweep workflow, started
by `pull_request` (or `workflow_dispatch` in dispatch mode): any workflow can name its jobs
`eval / x`. The choice is computed once per review (`sweep_choice`, memoized in the context),
and so is the accepted reuse source (`reuse_source`). The runs are asked of the snapshot
(`snapshot.sweep_run(id)`) only as the choice reaches them, so GitHub mode reads exactly the
runs this module looks at.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field
from typing import Callable, Iterable, Sequence

from checks.commands import find_reuse_command
from checks.snapshot import Artifact, CheckRun, ReuseSource, SweepRun, Unavailable
from checks.text import join
from recipes.config import SweepPolicy

log = logging.getLogger(__name__)

MEMO_KEY = "sweep_run"
MEMO_REUSE = "reuse_source"
# Candidate runs whose jobs qualify read before the choice gives up (each costs a run read):
# any workflow can name its jobs `eval / x`, so a PR could otherwise list hundreds.
MAX_CANDIDATE_RUNS = 8
SHORT_SHA = 8
RUN_ID_RE = re.compile(r"/actions/runs/(\d+)")
SUCCESS = "success"
SKIPPED = "skipped"
COMPLETED = "completed"
KIND_BENCH = "benchmark"
KIND_EVAL = "eval"
SOURCE_REUSE = "reuse"
SOURCE_CHECK_RUNS = "check runs"

MSG_NO_JOBS = "no benchmark or eval check runs on any of its commits"
MSG_NO_RUN_ID = "check runs on {sha} name no Actions run (no run id in details_url)"
MSG_FAILED_JOBS = "{where} on {sha} has {n} unsuccessful job(s) ({names})"
MSG_MISSING_KIND = "{where} on {sha} has no executed {kind} job (skipped jobs never count)"
MSG_COMMITS_UNAVAILABLE = "the PR's commits could not be listed: {reason}"
MSG_RUNS_UNAVAILABLE = "check runs could not be listed: {reason}"
MSG_COMMIT_RUNS_UNAVAILABLE = "check runs of {sha} could not be listed: {reason}"
REUSE_NOT_FOUND = "reuse source run {run} is not among the PR's sweep runs"
REUSE_RUNS_UNAVAILABLE = "reuse source run {run} could not be checked: {reason}"
REUSE_REFUSED = "reuse source {reason}"
MSG_NOT_SWEEP_WORKFLOW = "run {run} on {sha} is a run of {path}, not of the sweep workflow {workflow}; its jobs do not count"
MSG_NOT_SWEEP_EVENT = "run {run} on {sha} was started by {event}, not by {events}; its jobs do not count"
MSG_WORKFLOW_UNREAD = "the workflow of run {run} on {sha} could not be read ({reason})"
MSG_WORKFLOW_UNKNOWN = "the workflow of run {run} on {sha} is not known"
PULL_REQUEST_EVENT = "pull_request"
DISPATCH_EVENT = "workflow_dispatch"
DISPATCH_MODE = "dispatch"


@dataclass
class RunJobs:
    """The family check runs of one run on one commit."""

    run_id: int | None
    sha: str
    passed: list[CheckRun] = field(default_factory=list)
    failed: list[CheckRun] = field(default_factory=list)
    kinds: set[str] = field(default_factory=set)

    @property
    def qualifies(self) -> bool:
        return not self.failed and self.kinds >= {KIND_BENCH, KIND_EVAL}


@dataclass
class SweepChoice:
    """The run Check 1 accepted (or why none qualified), shared with Checks 2 and 14."""

    run_id: int | None = None
    sha: str = ""
    source: str = ""  # SOURCE_REUSE or SOURCE_CHECK_RUNS; "" when nothing qualified
    run: SweepRun | None = None
    jobs: RunJobs | None = None
    # Why candidates were rejected, most informative first (for the FAIL reason).
    problems: list[str] = field(default_factory=list)
    unavailable: list[str] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return self.run_id is not None


def run_id_of(cr: CheckRun) -> int | None:
    """The Actions run a check run belongs to: CheckRun.run_id, else parsed from details_url."""
    if cr.run_id:
        return int(cr.run_id)
    m = RUN_ID_RE.search(cr.details_url or "")
    return int(m.group(1)) if m else None


def job_kind(name: str, config) -> str | None:
    """KIND_EVAL, KIND_BENCH or None for a check-run name like `agentic eval / benchmark (...)`."""
    display, sep, _ = name.partition(" / ")
    if not sep:
        display = name[:-2] if name.endswith(" /") else None
        if display is None:
            return None
    display = display.strip()
    if display in config.sweep.eval_job_names:
        return KIND_EVAL
    for prefix in config.sweep.benchmark_job_prefixes:
        if display == prefix or display.startswith(prefix + " "):
            return KIND_BENCH
    return None


def group_runs(runs: list[CheckRun], sha: str, config) -> list[RunJobs]:
    groups: dict[int | None, RunJobs] = {}
    for cr in runs:
        kind = job_kind(cr.name, config)
        if kind is None or cr.conclusion == SKIPPED:
            continue
        rid = run_id_of(cr)
        g = groups.setdefault(rid, RunJobs(run_id=rid, sha=sha))
        if cr.status == COMPLETED and cr.conclusion == SUCCESS:
            g.passed.append(cr)
            g.kinds.add(kind)
        else:
            g.failed.append(cr)
    # Newest run first: Actions run ids grow over time.
    return sorted(groups.values(), key=lambda g: g.run_id or 0, reverse=True)


def sweep_events(sweep) -> tuple[str, ...]:
    """The events that start real sweep runs: `pull_request` (label mode, spec 9.1), plus
    `workflow_dispatch` when the bot itself dispatches the sweep."""
    return (PULL_REQUEST_EVENT, DISPATCH_EVENT) if sweep.mode == DISPATCH_MODE else (PULL_REQUEST_EVENT,)


def workflow_problem(run: SweepRun | None, sweep) -> tuple[str, str] | None:
    """Why `run` is not a run of the configured sweep workflow: ("not-sweep", why) for another
    workflow or event, ("unknown", why) when its workflow was never read; None when it is one."""
    if run is None:
        return ("unknown", "")
    path = (run.workflow_path or "").split("@", 1)[0]
    if not path:
        return ("unknown", "")
    if path != sweep.workflow:
        return ("not-sweep", path)
    if run.event not in sweep_events(sweep):
        return ("not-sweep-event", run.event or "an unknown event")
    return None


# --- which run may be a reuse source (spec 9.3, fail closed) ---------------------------------
# Refusal codes: one per reason a command is refused (the reply says the reason in words).
UNKNOWN_RUN = "unknown-run"
NOT_SWEEP = "not-sweep"
NOT_THIS_PR = "not-this-pr"
FAILED = "failed"
EXPIRED = "expired"
NO_ELIGIBLE_RUN = "no-eligible-run"
NOT_REUSABLE_PR = "not-reusable-pr"

MSG_UNKNOWN = "run {run} was not found in this repository"
MSG_UNREADABLE = "run {run} could not be read ({why})"
MSG_WORKFLOW = "run {run} is a run of {path}, not of the sweep workflow {workflow}"
MSG_EVENT = "run {run} was started by {event}, not by a pull request"
MSG_NOT_COMPLETED = "run {run} has not completed (status {status})"
MSG_NOT_SUCCESS = "run {run} did not succeed (conclusion {conclusion})"
MSG_NO_HEAD = "run {run} names no head commit"
MSG_NOT_IN_PR = "run {run} ran on {sha}, which is not a commit of this pull request"
MSG_COMMITS = "the pull request's commits could not be read ({why})"
MSG_ARTIFACTS = "the artifacts of run {run} could not be read ({why})"
MSG_EXPIRED = "run {run} has no unexpired reusable artifact ({names})"
MSG_NO_ELIGIBLE = ("no completed, successful sweep run on a commit of this pull request has an unexpired "
                   "reusable artifact")
MSG_NOT_REUSABLE_PR = "this pull request carries {labels}, whose runs cannot be reused"


@dataclass(frozen=True)
class Refusal:
    """Why a reuse source is not accepted: a stable code and one sentence."""

    code: str
    reason: str

    def __str__(self) -> str:
        return self.reason


def is_reusable_artifact(name: str, sweep: SweepPolicy) -> bool:
    """Spec 9.2 `has_reusable_result_artifacts`: the aggregate results or an AgentX job result."""
    return name in sweep.reusable_artifacts or any(name.startswith(p) for p in sweep.reusable_artifact_prefixes)


def reuse_problem(run: SweepRun | Unavailable | None, sweep: SweepPolicy, *, run_id: int,
                  pr_shas: Sequence[str] | Unavailable | None = None, require_success: bool = True,
                  require_artifacts: bool = True) -> Refusal | None:
    """Spec 9.3, fail closed: a completed, successful `pull_request` run of the sweep workflow on
    a commit of the PR (from the PR's commit list, never `run.pull_requests`) with an unexpired
    reusable artifact. `pr_shas=None` skips the commit test and `require_success=False` the
    outcome tests, for callers that judge those elsewhere (Check 4); `require_artifacts=False`
    skips the artifact test for Check 1, whose run Check 2 reads artifact by artifact."""
    if run is None:
        return Refusal(UNKNOWN_RUN, MSG_UNKNOWN.format(run=run_id))
    if isinstance(run, Unavailable):
        return Refusal(UNKNOWN_RUN, MSG_UNREADABLE.format(run=run_id, why=run.reason))
    path = run.workflow_path.split("@", 1)[0]
    if path != sweep.workflow:
        return Refusal(NOT_SWEEP, MSG_WORKFLOW.format(run=run_id, path=path or "an unknown workflow",
                                                      workflow=sweep.workflow))
    if run.event != PULL_REQUEST_EVENT:
        return Refusal(NOT_SWEEP, MSG_EVENT.format(run=run_id, event=run.event or "an unknown event"))
    if require_success:
        if run.status != COMPLETED:
            return Refusal(FAILED, MSG_NOT_COMPLETED.format(run=run_id, status=run.status or "unknown"))
        if run.conclusion != SUCCESS:
            return Refusal(FAILED, MSG_NOT_SUCCESS.format(run=run_id, conclusion=run.conclusion or "none"))
    if not run.head_sha:
        return Refusal(NOT_THIS_PR, MSG_NO_HEAD.format(run=run_id))
    if isinstance(pr_shas, Unavailable):
        return Refusal(NOT_THIS_PR, MSG_COMMITS.format(why=pr_shas.reason))
    if pr_shas is not None and run.head_sha not in pr_shas:
        return Refusal(NOT_THIS_PR, MSG_NOT_IN_PR.format(run=run_id, sha=run.head_sha[:12]))
    if not require_artifacts:
        return None
    if isinstance(run.artifacts, Unavailable):
        return Refusal(EXPIRED, MSG_ARTIFACTS.format(run=run_id, why=run.artifacts.reason))
    if not any(is_reusable_artifact(a.name, sweep) and not a.expired for a in run.artifacts):
        names = join((a.name + (" expired" if a.expired else "") for a in run.artifacts
                          if is_reusable_artifact(a.name, sweep)), None) or "none reusable"
        return Refusal(EXPIRED, MSG_EXPIRED.format(run=run_id, names=names))
    return None


def pick_reusable(runs: Iterable[SweepRun], pr_shas: Sequence[str], sweep: SweepPolicy,
                  artifacts_of: Callable[[int], Sequence[Artifact] | Unavailable]) -> int | None:
    """Bare `/reuse-sweep-run`: the newest run (by `created_at`, then id) that passes every rule
    of `reuse_problem`. `artifacts_of(run_id)` is called only for runs passing the cheaper tests."""
    def order(run: SweepRun) -> tuple:
        return (run.created_at.isoformat() if run.created_at else "", run.run_id)

    for run in sorted(runs, key=order, reverse=True):
        precheck = reuse_problem(run, sweep, run_id=run.run_id, pr_shas=pr_shas, require_artifacts=False)
        if precheck is not None:
            continue
        artifacts = artifacts_of(run.run_id)
        full = run.model_copy(update={"artifacts": artifacts if isinstance(artifacts, Unavailable) else list(artifacts)})
        if reuse_problem(full, sweep, run_id=run.run_id, pr_shas=pr_shas) is None:
            return run.run_id
    return None


def _find_reuse(ctx) -> ReuseSource | None:
    snap = ctx.snapshot
    if snap.reuse is not None:  # given as data (a test's snapshot)
        return snap.reuse
    comments = snap.comments
    if isinstance(comments, Unavailable):
        return None
    policy, sweep = ctx.config.policy, ctx.config.sweep
    bots = {b.lower() for b in policy.bot_logins}
    found = find_reuse_command([c for c in comments if c.author.lower() not in bots and not c.is_bot],
                               policy.authorized_associations)
    if found is None:
        return None
    comment, command = found
    run_id = command.run_id
    if run_id is None:
        runs = snap.workflow_runs()
        if isinstance(runs, Unavailable):
            return None
        shas = snap.commit_shas
        run_id = pick_reusable(runs, [] if isinstance(shas, Unavailable) else shas, sweep, snap.run_artifacts)
        if run_id is None:
            return None
    # Completion and the in-PR commit are Check 1's to judge and explain (_check_reuse).
    refusal = reuse_problem(snap.sweep_run(run_id), sweep, run_id=run_id, require_success=False)
    if refusal is not None:
        log.info("reuse command %s by %s not accepted: %s", command, comment.author, refusal)
        return None
    return ReuseSource(run_id=run_id, comment=comment, command=command.command, explicit=command.run_id is not None)


def reuse_source(ctx) -> ReuseSource | None:
    """The accepted `/use` or `/reuse-sweep-run` source of this review (spec 9.3): the newest
    authorized command's run (the bare form picks the newest eligible run), when it is a run of
    the sweep workflow started by `pull_request` with a reusable artifact. Computed once."""
    return ctx.memo(MEMO_REUSE, lambda: _find_reuse(ctx))


def short_sha(sha: str) -> str:
    return sha[:SHORT_SHA]


def _describe_rejected(g: RunJobs) -> str:
    where = f"run {g.run_id}" if g.run_id else "check runs without a run id"
    if g.failed:
        names = join((f"{cr.name}: {cr.conclusion or cr.status}" for cr in g.failed), None, limit=3)
        return MSG_FAILED_JOBS.format(where=where, sha=short_sha(g.sha), n=len(g.failed), names=names)
    if g.qualifies:  # only reachable without a run id
        return MSG_NO_RUN_ID.format(sha=short_sha(g.sha))
    missing = KIND_EVAL if KIND_EVAL not in g.kinds else KIND_BENCH
    return MSG_MISSING_KIND.format(where=where, sha=short_sha(g.sha), kind=missing)


def _check_reuse(ctx, shas: list[str]) -> tuple[SweepRun | None, str | None]:
    """The accepted reuse source's run when the spec 9.3 rules hold for it on this PR's commits."""
    reuse = reuse_source(ctx)
    if reuse is None:
        return None, None
    run = ctx.snapshot.sweep_run(reuse.run_id)
    if isinstance(run, Unavailable):
        return None, REUSE_RUNS_UNAVAILABLE.format(run=reuse.run_id, reason=run.reason)
    if run is None:
        return None, REUSE_NOT_FOUND.format(run=reuse.run_id)
    refusal = reuse_problem(run, ctx.config.sweep, run_id=reuse.run_id, pr_shas=shas, require_artifacts=False)
    if refusal is not None:
        return None, REUSE_REFUSED.format(reason=refusal.reason)
    return run, None


def _choose(ctx) -> SweepChoice:
    snap = ctx.snapshot
    choice = SweepChoice()
    shas = snap.commit_shas
    if isinstance(shas, Unavailable):
        choice.unavailable.append(MSG_COMMITS_UNAVAILABLE.format(reason=shas.reason))
        return choice
    reuse_run, reuse_problem = _check_reuse(ctx, shas)
    if reuse_problem:
        choice.problems.append(reuse_problem)

    all_runs = snap.check_runs
    per_commit: dict[str, list[RunJobs]] = {}
    if isinstance(all_runs, Unavailable):
        choice.unavailable.append(MSG_RUNS_UNAVAILABLE.format(reason=all_runs.reason))
    else:
        for sha in shas:
            runs = all_runs.get(sha, [])
            if isinstance(runs, Unavailable):
                choice.unavailable.append(MSG_COMMIT_RUNS_UNAVAILABLE.format(sha=short_sha(sha), reason=runs.reason))
                continue
            per_commit[sha] = group_runs(runs, sha, ctx.config)

    if reuse_run is not None:
        jobs = next((g for g in per_commit.get(reuse_run.head_sha, []) if g.run_id == reuse_run.run_id), None)
        choice.run_id, choice.sha, choice.source = reuse_run.run_id, reuse_run.head_sha, SOURCE_REUSE
        choice.run, choice.jobs = reuse_run, jobs
        return choice

    sweep = ctx.config.sweep
    asked = 0
    for sha in reversed(shas):  # newest commit first
        for g in per_commit.get(sha, []):
            if not (g.qualifies and g.run_id is not None):
                choice.problems.append(_describe_rejected(g))
                continue
            # The jobs' names prove nothing by themselves: their run must be a sweep run.
            run: SweepRun | Unavailable | None = None
            if asked < MAX_CANDIDATE_RUNS:
                asked += 1
                run = snap.sweep_run(g.run_id)
            runs = run if isinstance(run, Unavailable) else None
            run = None if isinstance(run, Unavailable) else run
            problem = workflow_problem(run, sweep)
            if problem is not None:
                kind, what = problem
                if kind == "not-sweep":
                    choice.problems.insert(0, MSG_NOT_SWEEP_WORKFLOW.format(
                        run=g.run_id, sha=short_sha(sha), path=what, workflow=sweep.workflow))
                elif kind == "not-sweep-event":
                    choice.problems.insert(0, MSG_NOT_SWEEP_EVENT.format(
                        run=g.run_id, sha=short_sha(sha), event=what, events=join(sweep_events(sweep), "or", sep=" or ")))
                elif isinstance(runs, Unavailable):
                    choice.unavailable.append(MSG_WORKFLOW_UNREAD.format(run=g.run_id, sha=short_sha(sha), reason=runs.reason))
                elif run is not None and isinstance(run.artifacts, Unavailable):
                    choice.unavailable.append(MSG_WORKFLOW_UNREAD.format(run=g.run_id, sha=short_sha(sha),
                                                                         reason=run.artifacts.reason))
                else:
                    choice.unavailable.append(MSG_WORKFLOW_UNKNOWN.format(run=g.run_id, sha=short_sha(sha)))
                continue
            choice.run_id, choice.sha, choice.source, choice.jobs = g.run_id, sha, SOURCE_CHECK_RUNS, g
            choice.run = run
            return choice
    return choice


def sweep_choice(ctx) -> SweepChoice:
    """Check 1's decision for this evaluation (computed once, shared through ctx.memo)."""
    return ctx.memo(MEMO_KEY, lambda: _choose(ctx))


def chosen_sweep_run(ctx) -> SweepRun | None:
    """The sweep run Checks 2 and 14 should read, or None when no run qualified. A run the
    snapshot did not fetch comes back with `Unavailable` artifacts, throughput and evals."""
    return sweep_choice(ctx).run

