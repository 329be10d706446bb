"""Slash commands in PR comments: `/use`, `/reuse-sweep-run` (spec 9.3; grammar in
checks/commands.py) and `/infx help`, acknowledged with a reaction and, when refused, a reply
that quotes and links the comment and says why (STYLE 5)."""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from bot.github_client import GithubException

from bot import reuse
from bot.command_lines import live_lines, mentions_command
from checks import sweep_runs
from bot.events import ACTION_CREATED, ACTION_EDITED, EVENT_COMMENT, CommentEvent
from bot.github_client import describe_error, fetch
from bot.handlers import (
    REACTION_ACCEPTED,
    REACTION_REFUSED,
    comment_link,
    quote_line,
    set_reaction,
)
from bot.handlers.sweep import SWEEP_COMMANDS
from bot.router import Context, Router
from checks.commands import COMMANDS as REUSE_COMMANDS
from checks.commands import CommandHelp, ReuseCommand, is_authorized, parse_reuse_command
from checks.snapshot import Comment, Unavailable
from checks.text import join
from recipes.config import SweepPolicy

log = logging.getLogger(__name__)

HELP = "/infx help"
HELP_COMMANDS: tuple[CommandHelp, ...] = (
    CommandHelp(
        name=HELP,
        usage="/infx help",
        description="List the commands infx-review understands, with who may use them.",
        examples=("/infx help",),
        who="anyone (bots are ignored)",
    ),
)
HELP_RE = re.compile(r"^\s*/infx(?:[ \t]+help)?\s*$", re.IGNORECASE)
# Bare `/use` is not a command (spec 9.3) but gets a usage reply so the author learns why.
BARE_USE_RE = re.compile(r"^\s*/use\s*$", re.IGNORECASE)

# Reply comments are keyed by the triggering comment, so a redelivery or an edit updates the
# one reply instead of adding another.
COMMAND_MARKER = "<!-- infx-review command comment={key} -->"
HELP_MARKER = "<!-- infx-review help comment={key} -->"

UNAUTHORIZED = "unauthorized"
USAGE = "usage"
MSG_UNAUTHORIZED = "reuse commands need the author association {who}; {author} is {association}"
MSG_USAGE = "`/use` needs a run id on the same line: `/use <run_id>` (or `/reuse-sweep-run` to pick the newest eligible run)"
TEXT_REFUSED = "{quote}\n\n{link} asked for a sweep-run reuse that was **not accepted**: {reason}.\n"
TEXT_ACCEPTED_AFTER_EDIT = "{quote}\n\nAfter the edit, {link} is **accepted**: run {run} will be reused.\n"
TEXT_WITHDRAWN = "{link} no longer carries a reuse command; nothing is reused from it.\n"
TEXT_HELP_TITLE = "**infx-review commands** (asked for in {link}):"
TEXT_HELP_ENTRY = "- `{usage}` — {description} Who: {who}. {example_word}: {examples}"
EXAMPLE_ONE = "Example"
EXAMPLE_MANY = "Examples"
TEXT_HELP_FOOTER = ("Commands count only as a whole line of their own, outside quotes and code blocks; "
                    "a sign-off is a comment holding `{phrase}`.")
# The one name the bot knows the sweep workflow by (docs/install.md, step 4): whoever checks an
# install with `/infx help` sees which file's runs count and which file the caller's
# workflow_run filter must name by its `name:`.
TEXT_HELP_SWEEP = ("Sweep workflow: `{workflow}` in `{mode}` mode (`sweep.workflow` and `sweep.mode` of "
                   "`.github/infx-review.yml`); only its runs count.")

MSG_ACCEPTED = "%s: %s accepted (run %s)"
MSG_REFUSED = "%s: %s refused: %s"


@dataclass(frozen=True)
class Decision:
    """The outcome of one reuse command: the run accepted, or the refusal."""

    command: str
    run_id: int | None = None
    refusal: sweep_runs.Refusal | None = None

    @property
    def accepted(self) -> bool:
        return self.refusal is None


def register(router: Router) -> None:
    router.add(EVENT_COMMENT, ACTION_CREATED, on_comment, name="commands.on_comment")
    router.add(EVENT_COMMENT, ACTION_EDITED, on_comment, name="commands.on_comment")


def declarations() -> tuple[CommandHelp, ...]:
    """Every command, declared next to its parser; the help text reads only these."""
    return (*REUSE_COMMANDS, *SWEEP_COMMANDS, *HELP_COMMANDS)


def help_markdown(link: str, phrase: str, sweep: SweepPolicy | None = None) -> str:
    lines = [TEXT_HELP_TITLE.format(link=link), ""]
    for c in declarations():
        examples = ", ".join(f"`{e}`" for e in c.examples)
        # Declarations say `<run_id>`; outside code spans GitHub would take it for an HTML tag.
        description = c.description.rstrip(".").replace("<", "&lt;").replace(">", "&gt;") + "."
        lines.append(TEXT_HELP_ENTRY.format(usage=c.usage, description=description, who=c.who, examples=examples,
                                            example_word=EXAMPLE_ONE if len(c.examples) == 1 else EXAMPLE_MANY))
    lines += ["", TEXT_HELP_FOOTER.format(phrase=phrase)]
    if sweep is not None:
        lines += ["", TEXT_HELP_SWEEP.format(workflow=sweep.workflow, mode=sweep.mode)]
    return "\n".join(lines + [""])


def asks_help(body: str) -> bool:
    return any(HELP_RE.match(line) for line in live_lines(body))


def bare_use_line(body: str) -> str | None:
    found = None
    for line in live_lines(body):
        if BARE_USE_RE.match(line):
            found = line.strip()
    return found


def _current(ctx: Context, event: CommentEvent) -> Comment | None:
    """The comment as it is now: an edit or a slow job must judge the latest text, not the
    payload's (None when it was deleted)."""
    c = event.comment
    path = {"issue_comment": f"{ctx.r}/issues/comments/{c.id}",
            "review_comment": f"{ctx.r}/pulls/comments/{c.id}",
            "review": f"{ctx.r}/pulls/{event.number}/reviews/{c.id}"}[c.kind]
    try:
        item = ctx.api.get(path)
    except GithubException as exc:
        if exc.status == 404:
            return None
        raise
    return c.model_copy(update={"body": item.get("body") or "",
                                "association": str(item.get("author_association") or c.association)})


def decide(ctx: Context, number: int, comment: Comment, command: ReuseCommand) -> Decision:
    """Authorization, then the fail-closed run validation of checks/sweep_runs.py."""
    policy, sweep = ctx.config.policy, ctx.config.sweep
    if not is_authorized(comment, policy.authorized_associations):
        who = join(policy.authorized_associations, "or")
        return Decision(command.command, command.run_id, sweep_runs.Refusal(UNAUTHORIZED, MSG_UNAUTHORIZED.format(
            who=who, author=comment.author, association=comment.association)))
    pr = ctx.pull(number)
    blocked = reuse.pr_labels_problem([lb.get("name", "") for lb in pr.get("labels") or []], sweep)
    if blocked is not None:
        return Decision(command.command, command.run_id, blocked)
    commits = fetch(f"the commits of {ctx.repo}#{number}", lambda: ctx.api.list(f"{ctx.r}/pulls/{number}/commits"))
    shas: list[str] | Unavailable = commits if isinstance(commits, Unavailable) else [c["sha"] for c in commits]
    if command.run_id is None:
        return _decide_bare(ctx, pr, command, shas)
    run = _read_run(ctx, command.run_id)
    problem = sweep_runs.reuse_problem(run, sweep, run_id=command.run_id, pr_shas=shas)
    return Decision(command.command, command.run_id, problem)


def _read_run(ctx: Context, run_id: int):
    try:
        run = ctx.api.get(f"{ctx.r}/actions/runs/{run_id}")
    except GithubException as exc:
        if exc.status == 404:
            return None
        return Unavailable(reason=describe_error(exc))
    except Exception as exc:
        return Unavailable(reason=describe_error(exc))
    return reuse.sweep_run_from(run, _artifacts(ctx, run_id))


def _artifacts(ctx: Context, run_id: int):
    items = fetch(f"the artifacts of run {run_id}",
                  lambda: ctx.api.list(f"{ctx.r}/actions/runs/{run_id}/artifacts", key="artifacts"))
    return items if isinstance(items, Unavailable) else reuse.artifacts_from(items)


def _decide_bare(ctx: Context, pr: dict, command: ReuseCommand, shas) -> Decision:
    sweep = ctx.config.sweep
    if isinstance(shas, Unavailable):
        return Decision(command.command, None, sweep_runs.Refusal(sweep_runs.NOT_THIS_PR, sweep_runs.MSG_COMMITS.format(why=shas.reason)))
    workflow = sweep.workflow.rsplit("/", 1)[-1]
    runs = fetch("the sweep workflow's runs", lambda: ctx.api.list(
        f"{ctx.r}/actions/workflows/{workflow}/runs",
        {"branch": (pr.get("head") or {}).get("ref") or "", "event": sweep_runs.PULL_REQUEST_EVENT, "status": sweep_runs.COMPLETED},
        key="workflow_runs"))
    if isinstance(runs, Unavailable):
        return Decision(command.command, None, sweep_runs.Refusal(sweep_runs.UNKNOWN_RUN, runs.reason))
    picked = reuse.pick_reusable(runs, shas, sweep, lambda rid: _artifacts(ctx, rid))
    if picked is None:
        return Decision(command.command, None, sweep_runs.Refusal(sweep_runs.NO_ELIGIBLE_RUN, sweep_runs.MSG_NO_ELIGIBLE))
    return Decision(command.command, picked, None)


def on_comment(event: CommentEvent, ctx: Context) -> None:
    if event.comment is None or not event.is_pull_request:
        return
    if not (mentions_command(event.comment.body) or (event.action == ACTION_EDITED and mentions_command(event.previous_body))):
        return
    comment = _current(ctx, event)
    if comment is None:
        return
    key = comment.key
    if asks_help(comment.body):
        ctx.upsert_marked(event.number, HELP_MARKER.format(key=key),
                          help_markdown(comment_link(event), ctx.config.policy.signoff_phrase, ctx.config.sweep))
    command = parse_reuse_command(comment.body)
    marker = COMMAND_MARKER.format(key=key)
    if command is None:
        bare = bare_use_line(comment.body)
        if bare is not None:
            _refuse(ctx, event, marker, bare, sweep_runs.Refusal(USAGE, MSG_USAGE))
        elif event.action == ACTION_EDITED:
            # The edit removed the command: withdraw our acknowledgement with it.
            set_reaction(ctx, event, None)
            if ctx.own_comments(event.number, marker):
                ctx.upsert_marked(event.number, marker, TEXT_WITHDRAWN.format(link=comment_link(event)))
        return
    decision = decide(ctx, event.number, comment, command)
    if decision.accepted:
        log.info(MSG_ACCEPTED, event.describe(), command, decision.run_id)
        set_reaction(ctx, event, REACTION_ACCEPTED)
        if event.action == ACTION_EDITED and ctx.own_comments(event.number, marker):
            ctx.upsert_marked(event.number, marker, TEXT_ACCEPTED_AFTER_EDIT.format(
                quote=quote_line(command.text), link=comment_link(event), run=decision.run_id))
        return
    _refuse(ctx, event, marker, command.text, decision.refusal)


def _refuse(ctx: Context, event: CommentEvent, marker: str, line: str, refusal: sweep_runs.Refusal) -> None:
    log.info(MSG_REFUSED, event.describe(), line, refusal.reason)
    set_reaction(ctx, event, REACTION_REFUSED)
    ctx.upsert_marked(event.number, marker, TEXT_REFUSED.format(
        quote=quote_line(line), link=comment_link(event), reason=refusal.reason))
