"""Check 4 (Reuse command): an authorized reviewer pinned the sweep run to merge with (advisory).

What it checks:
    Some PR comment from an author whose association is in policy `authorized_associations`
    (OWNER, MEMBER, COLLABORATOR) holds a whole-line `/use <run_id>`, `/reuse-sweep-run
    <run_id>` or bare `/reuse-sweep-run` (grammar in checks/commands.py: any letter case, not
    inside a `>` quote or code block; the last matching line of a comment and the newest
    authorized comment win). Bare `/use` is not a command. Bots never count.
Why it matters:
    At merge, results are ingested from the pinned run; without an authorized command the
    Merge Ingest run fails and nothing is published.
Evidence it cites:
    The command comment (link, author, association); unauthorized or quoted attempts.
Not applicable when:
    Never. The check is advisory: it gives PASS or WARN, never FAIL.
How to fix:
    Post `/use <run_id>` (the passing sweep run of an in-PR commit) as a maintainer comment.
"""
from __future__ import annotations

from checks.sweep_runs import REUSE_REFUSED, REUSE_RUNS_UNAVAILABLE, reuse_problem
from checks.commands import find_reuse_command, unauthorized_commands
from checks.result import CheckResult, Evidence
from checks.snapshot import Unavailable
from checks.text import join

MSG_PASS = "{command} was posted by {author} ({association})."
MSG_REMINDER = "post `/use <run_id>` naming the passing sweep run so the merge ingests its results"
MSG_NONE = "No `/use <run_id>` or `/reuse-sweep-run` command from an {who} comment; " + MSG_REMINDER + "."
MSG_UNAUTHORIZED = " Ignored: {items}."
MSG_BAD_SOURCE = "{command} by {author} ({association}) names a run the merge cannot ingest: {problem}; " + MSG_REMINDER + "."
MSG_UNAVAILABLE = "could not verify: the PR's comments could not be read ({reason}); " + MSG_REMINDER + "."


def _source_problem(ctx, run_id: int) -> tuple[str, bool] | None:
    """Why the named run is not a valid reuse source (spec 9.3, checks.sweep_runs.reuse_problem;
    completion is Check 1's to judge), and whether that is for lack of evidence; None when the
    merge could ingest it."""
    run = ctx.snapshot.sweep_run(run_id)
    if isinstance(run, Unavailable):
        return REUSE_RUNS_UNAVAILABLE.format(run=run_id, reason=run.reason), True
    if run is None:
        # GitHub mode always looks the named run up (an unknown id comes back unreadable);
        # a snapshot without it (local mode, a test) judges the command alone.
        return None
    shas = ctx.snapshot.commit_shas
    if isinstance(shas, Unavailable):
        return REUSE_RUNS_UNAVAILABLE.format(run=run_id, reason=shas.reason), True
    if isinstance(run.artifacts, Unavailable):
        return REUSE_RUNS_UNAVAILABLE.format(run=run_id, reason=run.artifacts.reason), True
    refusal = reuse_problem(run, ctx.config.sweep, run_id=run_id, pr_shas=shas, require_success=False)
    return (REUSE_REFUSED.format(reason=refusal.reason), False) if refusal is not None else None


def _who(authorized: list[str]) -> str:
    return join(authorized, "or")


class ReuseCommandCheck:
    def applies(self, ctx) -> str | None:
        return None

    def evaluate(self, ctx) -> CheckResult:
        comments = ctx.snapshot.comments
        if isinstance(comments, Unavailable):
            return CheckResult.warned(MSG_UNAVAILABLE.format(reason=comments.reason),
                                      Evidence(note="PR comments", unavailable=True))
        authorized = ctx.config.policy.authorized_associations
        bots = {b.lower() for b in ctx.config.policy.bot_logins}
        comments = [c for c in comments if c.author.lower() not in bots]
        found = find_reuse_command(comments, authorized)
        if found is not None:
            comment, cmd = found
            bad = _source_problem(ctx, cmd.run_id) if cmd.run_id is not None else None
            if bad is not None:
                problem, missing = bad
                return CheckResult.warned(
                    MSG_BAD_SOURCE.format(command=cmd, author=comment.author, association=comment.association,
                                          problem=problem),
                    Evidence(url=comment.url or None, note=f"{cmd.text} (line {cmd.line})"),
                    Evidence(run_id=cmd.run_id, note=problem, unavailable=missing),
                )
            return CheckResult.passed(
                MSG_PASS.format(command=cmd, author=comment.author, association=comment.association),
                Evidence(url=comment.url or None, note=f"{cmd.text} (line {cmd.line})"),
                command=cmd.command, run_id=cmd.run_id, comment_id=comment.id,
            )
        refused = unauthorized_commands(comments, authorized)
        reason = MSG_NONE.format(who=_who(authorized))
        if refused:
            items = "; ".join(f"{cmd} by {c.author} ({c.association})" for c, cmd in refused[:3])
            reason += MSG_UNAUTHORIZED.format(items=items)
        return CheckResult.warned(
            reason, *(Evidence(url=c.url or None, note=f"{cmd} by {c.author} ({c.association})") for c, cmd in refused)
        )
