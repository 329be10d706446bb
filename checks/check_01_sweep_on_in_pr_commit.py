"""Check 1 (Sweep on in-PR commit): a sweep with benchmarks and evals passed on a commit of this PR.

What it checks:
    Among the PR's current commits, one has a sweep run whose executed benchmark check runs
    (display names `single-node .../`, `multi-node .../`, `agentic /`, `canary /`) and eval
    check runs (`eval /`, `agentic eval /`, `multi-node eval /`, `multi-node agentic eval /`)
    all concluded `success`, with at least one of each. Check runs are grouped by the run id in
    their `details_url` (`/actions/runs/<id>`), so a failed run and a later passing run on the
    same commit are judged separately. `skipped` jobs were not executed: they are ignored and
    never count as success. `collect-results` / `collect-evals` prove nothing (they can be
    green when every eval job was skipped). An accepted reuse source (`/use <run_id>`) counts
    the same when its run completed with `success` on a commit that is still in the PR. The
    run used is the reuse source when valid, else the newest qualifying commit's run; Checks 2
    and 14 read it through `chosen_sweep_run(ctx)`. Only check runs of a workflow run of the
    configured sweep workflow (`sweep.workflow`, started by `pull_request`, or by
    `workflow_dispatch` in dispatch mode) count: any workflow can name its jobs `eval / x`, so a
    group is judged by its run's workflow path and event; a run whose workflow could not be read
    is "could not verify", never a PASS.
Why it matters:
    A sign-off vouches for measured results; results from a commit that is no longer in the
    PR, or from a sweep whose evals were skipped, say nothing about what will merge.
Evidence it cites:
    The run id and commit, the check runs that succeeded or failed, the reuse comment.
Not applicable when:
    Never: every sign-off needs a sweep on an in-PR commit. Missing commits or check runs are
    a FAIL ("could not verify"), never a PASS.
How to fix:
    Run a sweep on the PR (add the primary sweep label, e.g. `full-sweep-fail-fast`), or
    re-anchor a passing run of an in-PR commit with `/use <run_id>`.
"""
from __future__ import annotations

from collections import defaultdict

from checks.result import CheckResult, Evidence
from checks.sweep_runs import MSG_NO_JOBS, SOURCE_REUSE, RunJobs, reuse_source, short_sha, sweep_choice
from checks.text import join, plural

MSG_NO_PASS = "no passing sweep/eval on any commit in this PR"
MSG_FIX = "run a sweep (add the `{label}` label) or re-anchor a passing run with `/use <run_id>`"
MSG_PASS = "Run {run} ran on in-PR commit {sha}: {jobs} succeeded."
MSG_PASS_REUSE = "Run {run}, selected by {command} {run} from {author}, ran on in-PR commit {sha}{jobs}."
MSG_NOT_HEAD = " The head {head} is a later commit."
MSG_UNAVAILABLE = "could not verify: {what}"
MSG_REUSE_COMPLETED = " and completed with conclusion success"


def _jobs_summary(jobs: RunJobs) -> str:
    counts: dict[str, int] = defaultdict(int)
    for cr in jobs.passed:
        counts[cr.name.partition(" / ")[0].strip() + " /"] += 1
    parts = [f"{n} {name} {plural(n, 'job')}" for name, n in counts.items()]
    return join(parts) if parts else "its jobs"


class SweepOnInPrCommitCheck:
    def applies(self, ctx) -> str | None:
        return None

    def evaluate(self, ctx) -> CheckResult:
        choice = sweep_choice(ctx)
        fix = MSG_FIX.format(label=ctx.config.sweep.default_label)
        if not choice.found:
            unverified = [MSG_UNAVAILABLE.format(what=u) for u in choice.unavailable]
            detail = "; ".join(choice.problems[:3] + unverified) or MSG_NO_JOBS
            return CheckResult.failed(
                f"{MSG_NO_PASS}: {detail}; {fix}.",
                *(Evidence(note=u, unavailable=True) for u in choice.unavailable),
            )

        head = ctx.snapshot.head_sha
        evidence = [Evidence(run_id=choice.run_id, url=choice.run.html_url if choice.run else None,
                             note=f"commit {choice.sha}")]
        if choice.source == SOURCE_REUSE:
            reuse = reuse_source(ctx)
            jobs = f": {_jobs_summary(choice.jobs)} succeeded" if choice.jobs and choice.jobs.qualifies else (
                MSG_REUSE_COMPLETED
            )
            reason = MSG_PASS_REUSE.format(run=choice.run_id, command=reuse.command, author=reuse.comment.author,
                                           sha=short_sha(choice.sha), jobs=jobs)
            evidence.append(Evidence(url=reuse.comment.url or None, note=f"{reuse.command} by {reuse.comment.author}"))
        else:
            reason = MSG_PASS.format(run=choice.run_id, sha=short_sha(choice.sha), jobs=_jobs_summary(choice.jobs))
        if head and choice.sha != head:
            reason += MSG_NOT_HEAD.format(head=short_sha(head))
        return CheckResult.passed(reason, *evidence, run_id=choice.run_id, sha=choice.sha, source=choice.source)
