"""Which sweep run a reuse command may name: the fail-closed rules of spec 9.3 as pure functions
over plain data (a run, the PR's commit SHAs, artifacts, the sweep policy)."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

from checks.commands import find_reuse_command
from checks.snapshot import Artifact, Comment, ReuseSource, SweepRun, Unavailable
# The rule itself (spec 9.3) lives beside the sweep-run choice it feeds (checks/sweep_runs.py).
from checks.sweep_runs import EXPIRED, MSG_NOT_REUSABLE_PR, NOT_REUSABLE_PR, Refusal, reuse_problem
from recipes.config import Policy, SweepPolicy


def _parse_time(value: Any):
    # bot.github_client.parse_time, imported on use: local mode never loads PyGithub otherwise.
    from bot.github_client import parse_time

    return parse_time(value)


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
