"""Which sweep run a reuse command may name: the fail-closed rules of spec 9.3 as pure functions
over plain data (a run, the PR's commit SHAs, artifacts, the sweep policy)."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

from checks.commands import find_reuse_command
from checks.snapshot import Artifact, Comment, ReuseSource, SweepRun, Unavailable
from recipes.config import Policy, SweepPolicy


def _parse_time(value: Any):
    # bot.github_client.parse_time, imported on use: local mode never loads PyGithub otherwise.
    from bot.github_client import parse_time

    return parse_time(value)


PULL_REQUEST_EVENT = "pull_request"
COMPLETED = "completed"
SUCCESS = "success"

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


def artifacts_from(items: Iterable[Mapping[str, Any]]) -> list[Artifact]:
    return [Artifact(name=str(a["name"]), id=int(a.get("id") or 0), expired=bool(a.get("expired")),
                     size_in_bytes=int(a.get("size_in_bytes") or 0)) for a in items]


def sweep_run_from(run: Mapping[str, Any], artifacts: Sequence[Artifact] | Unavailable) -> SweepRun:
    """A SweepRun from the REST run object and its artifact list (no artifact contents)."""
    return SweepRun(
        run_id=int(run["id"]),
        head_sha=str(run.get("head_sha") or ""),
        event=str(run.get("event") or ""),
        status=str(run.get("status") or ""),
        conclusion=run.get("conclusion"),
        workflow_path=str(run.get("path") or ""),
        created_at=_parse_time(run.get("created_at")),
        html_url=str(run.get("html_url") or ""),
        artifacts=artifacts if isinstance(artifacts, Unavailable) else list(artifacts),
    )


def reuse_problem(run: SweepRun | Unavailable | None, sweep: SweepPolicy, *, run_id: int,
                  pr_shas: Sequence[str] | Unavailable | None = None, require_success: bool = True) -> Refusal | None:
    """Spec 9.3, fail closed: a completed, successful `pull_request` run of the sweep workflow on
    a commit of the PR (from the PR's commit list, never `run.pull_requests`) with an unexpired
    reusable artifact. `pr_shas=None` skips the commit test and `require_success=False` the
    outcome tests, for callers that judge those elsewhere (Check 1)."""
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
    if isinstance(run.artifacts, Unavailable):
        return Refusal(EXPIRED, MSG_ARTIFACTS.format(run=run_id, why=run.artifacts.reason))
    if not any(is_reusable_artifact(a.name, sweep) and not a.expired for a in run.artifacts):
        names = ", ".join(a.name + (" expired" if a.expired else "") for a in run.artifacts
                          if is_reusable_artifact(a.name, sweep)) or "none reusable"
        return Refusal(EXPIRED, MSG_EXPIRED.format(run=run_id, names=names))
    return None


def pr_labels_problem(labels: Iterable[str], sweep: SweepPolicy) -> Refusal | None:
    """PRs carrying `evals-only` or `agentx-fast` cannot use reuse (spec 9.3)."""
    blocked = [lb for lb in labels if lb in sweep.not_reusable_labels]
    if blocked:
        return Refusal(NOT_REUSABLE_PR, MSG_NOT_REUSABLE_PR.format(labels=", ".join(blocked)))
    return None


def pick_reusable(runs: Iterable[Mapping[str, Any]], pr_shas: Sequence[str], sweep: SweepPolicy,
                  artifacts_of: Callable[[int], Sequence[Artifact] | Unavailable]) -> int | None:
    """Bare `/reuse-sweep-run`: the newest run (by `created_at`, then id) that passes every rule.
    `artifacts_of(run_id)` is called only for runs that pass the cheaper tests."""
    def order(run: Mapping[str, Any]) -> tuple:
        return (str(run.get("created_at") or ""), int(run.get("id") or 0))

    for run in sorted(runs, key=order, reverse=True):
        bare = sweep_run_from(run, [])
        precheck = reuse_problem(bare, sweep, run_id=bare.run_id, pr_shas=pr_shas)
        if precheck is not None and precheck.code != EXPIRED:
            continue
        full = sweep_run_from(run, artifacts_of(bare.run_id))
        if reuse_problem(full, sweep, run_id=bare.run_id, pr_shas=pr_shas) is None:
            return bare.run_id
    return None


def accepted_reuse(comments: Sequence[Comment] | Unavailable, runs: Mapping[int, SweepRun] | Unavailable,
                   pr_shas: Sequence[str] | Unavailable, policy: Policy, sweep: SweepPolicy) -> ReuseSource | None:
    """The reuse source when every run is already at hand (local mode): the newest authorized
    command, its run (the bare form picks the newest eligible one), judged by the rules above
    minus completion and in-PR commit, which Check 1 judges and explains itself."""
    if isinstance(comments, Unavailable) or isinstance(runs, Unavailable):
        return None
    bots = {b.lower() for b in policy.bot_logins}
    found = find_reuse_command([c for c in comments if c.author.lower() not in bots and not c.is_bot],
                               policy.authorized_associations)
    if found is None:
        return None
    comment, command = found
    run_id = command.run_id
    if run_id is None:
        shas = [] if isinstance(pr_shas, Unavailable) else list(pr_shas)
        eligible = [r for r in runs.values()
                    if reuse_problem(r, sweep, run_id=r.run_id, pr_shas=shas) is None]
        if not eligible:
            return None
        run_id = max(eligible, key=lambda r: (r.created_at.isoformat() if r.created_at else "", r.run_id)).run_id
    if reuse_problem(runs.get(run_id), sweep, run_id=run_id, require_success=False) is not None:
        return None
    return ReuseSource(run_id=run_id, comment=comment, command=command.command, explicit=command.run_id is not None)
