"""Which sweep run a reuse command may name: the fail-closed rules of spec 9.3 as pure functions
over plain data (a run, the PR's commit SHAs, artifacts, the sweep policy)."""
from __future__ import annotations

from typing import Any, Callable, Iterable, Mapping, Sequence

from bot.dates import parse_time
from checks.snapshot import Artifact, SweepRun, Unavailable
# The rule itself (spec 9.3) lives beside the sweep-run choice it feeds (checks/sweep_runs.py).
from checks.sweep_runs import MSG_NOT_REUSABLE_PR, NOT_REUSABLE_PR, Refusal
from checks.sweep_runs import pick_reusable as pick_runs
from recipes.config import SweepPolicy


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
        created_at=parse_time(run.get("created_at")),
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
    """Bare `/reuse-sweep-run` over REST run objects: checks.sweep_runs.pick_reusable, the one rule."""
    return pick_runs([sweep_run_from(run, []) for run in runs], pr_shas, sweep, artifacts_of)
