"""Starting a sweep: a primary sweep label added, or `/sweep [fail-fast]` from a user with write
permission; what to sweep comes from the PR's new perf-changelog entries (spec 4.3, 9.1, 9.4).
Idempotent: the bot's reply carries a marker for the head and labels it started, checked first."""
from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field

from bot.github_client import GithubException

from bot.events import ACTION_CREATED, ACTION_LABELED, EVENT_COMMENT, EVENT_PULL_REQUEST, CommentEvent, PullRequestEvent
from bot.command_lines import parse_sweep_command
from bot.dates import parse_time
from bot.github_client import create_once, describe_error, fetch
from bot.github_data import merge_base
from bot.handlers import comment_link, quote_line
from bot.remote_source import BlobStore, RemoteTree
from bot.router import Context, Router
from checks.commands import CommandHelp
from checks.snapshot import Unavailable
from checks.text import escape_inline
from recipes.changelog import diff_changelog, resolve_config_keys
from recipes.config import BOT_DISPATCH_INPUTS, RepoConfig
from recipes.layout import detect_layout
from recipes.master import SCENARIOS
from recipes.repository import Repository
from recipes.source import FileSource

log = logging.getLogger(__name__)

MODE_DISPATCH = "dispatch"
# What start_sweep did.
ALREADY, NOTHING, DISPATCHED, LABELED, LABEL_PRESENT, LABEL_MODE, CONFIG_ERROR = (
    "already", "nothing", "dispatched", "labeled", "label-present", "label-mode", "config-error")
WRITE_ROLES = frozenset({"admin", "maintain", "write"})
WRITE_PERMISSIONS = frozenset({"admin", "write"})
PROBLEM_MAX = 300
SWEEP_COMMANDS: tuple[CommandHelp, ...] = (
    CommandHelp(
        name="/sweep",
        usage="/sweep [fail-fast]",
        description="Start the benchmark sweep for this PR's new perf-changelog entries on its current head: "
                    "in `dispatch` mode the bot dispatches the sweep workflow, in `label` mode it applies the "
                    "primary sweep label that starts it. The same head and labels never start twice.",
        examples=("/sweep", "/sweep fail-fast"),
        who="users with write, maintain or admin permission on the repository",
    ),
)
# Dispatch inputs the bot always sets; configured extras never replace them.
# The inputs the bot dispatches the sweep with (recipes.config.BOT_DISPATCH_INPUTS, which bounds
# the configured extras by workflow_dispatch's 25).
INPUT_REF, INPUT_PR, INPUT_KEYS, INPUT_FAIL_FAST = BOT_DISPATCH_INPUTS

SWEEP_MARKER = "<!-- infx-review sweep head={head} labels={labels} -->"
SWEEP_COMMAND_MARKER = "<!-- infx-review sweep-command comment={key} -->"
CONFIG_ERROR_MARKER = "<!-- infx-review config-error head={head} -->"
TEXT_CONFIG_ERROR = ("No sweep was started for commit `{sha}` (asked for by {trigger}): the repository's "
                     "`.github/infx-review.yml` is invalid. Fix it on the default branch "
                     "(`python -m bot config-schema --check .github/infx-review.yml`):\n\n{problems}\n")
# Lets a job recognise its own claim among racing jobs' claims when the claim's POST answered an
# error after it landed; the completed reply drops it.
CLAIM_NONCE = "<!-- infx-review claim={nonce} -->"
DISPATCH_EVENT = "workflow_dispatch"
# A workflow dispatch is not idempotent and GitHub's answer (204) names no run: after a dispatch
# POST that failed in a way that may have landed, the workflow's dispatched runs created by the
# bot since the claim are looked up, and only when there is none is it dispatched once more.
# GitHub creates the run asynchronously, so an empty list is read again after this long; a run
# GitHub creates later still is missed and the sweep dispatched twice, and a run the bot
# dispatched for another PR in the same moment is taken for this one (the reply then says
# started for a sweep that was not): both need a failure after the dispatch landed.
DISPATCH_ATTEMPTS = 2
DISPATCH_SETTLE_S = 3.0
RETURN_RUN_DETAILS = "return_run_details"
RUN_ID_KEY = "workflow_run_id"

TEXT_DISPATCHED = ("Started the sweep: `workflow_dispatch` of `{workflow}` for commit `{sha}` "
                   "(fail-fast: {fail_fast}), asked for by {trigger}.")
TEXT_LABELED = ("Applied the label `{label}` for commit `{sha}`, asked for by {trigger}; `{workflow}` starts "
                "on it.")
TEXT_LABEL_PRESENT = ("The label `{label}` is already on this PR, so `{workflow}` already started on it; remove "
                      "and add it again to sweep commit `{sha}` once more.")
TEXT_STARTING = "Starting the sweep for commit `{sha}`, asked for by {trigger}."
TEXT_START_FAILED = ("The sweep for commit `{sha}`, asked for by {trigger}, could not be started ({error}); "
                     "nothing was started, so asking again may start it.")
TEXT_NOTHING = ("Nothing to sweep at commit `{sha}`: `{changelog}` has no new entry in this PR, so no sweep was "
                "started (asked for by {trigger}).")
TEXT_TABLE_HEAD = "| Config | Scenarios | Points |\n| --- | --- | --- |"
TEXT_TABLE_ROW = "| `{key}` | {scenarios} | {points} |"
TEXT_TOTAL = "{configs} config(s), {points} point(s), from {entries} new perf-changelog entr{ies}{append}."
TEXT_APPEND_ONLY = " (append-only: only the newly added points)"
TEXT_PROBLEMS = "Problems found while planning (the sweep workflow validates the changelog too):"
TEXT_REFUSED = "{quote}\n\n{link} was not run: `/sweep` needs write, maintain or admin permission; {login} has {perm}.\n"
TEXT_CLOSED = "{quote}\n\n{link} was not run: this PR is {state}.\n"
TEXT_EVALS_ONLY = "evals only"
TEXT_ALREADY = ("{quote}\n\n{link} started nothing new: a sweep of this head with these labels was already "
                "started ({earlier}).\n")

MSG_ALREADY = "%s: a sweep for %s with labels %s was already started (marker found); nothing to do"
MSG_LABEL_MODE = "%s: label %s added by %s; in label mode the sweep workflow starts itself"
MSG_LOST_CLAIM = "%s: another job claimed the sweep for %s with labels %s first (comment %s); nothing to do"
MSG_BOT_LABEL = "%s: label %s was added by the bot itself"
MSG_WHAT_CLAIM = "the sweep claim for {head} on {repo}#{number}"
MSG_WHAT_DISPATCH = "the dispatch of {workflow} for {head} on {repo}#{number}"
MSG_NO_RUN_DETAILS = "%s: GitHub refused return_run_details (HTTP %s); dispatching without it"
TEXT_RUN = " Run: [{run}]({url})."


@dataclass(frozen=True)
class ConfigSweep:
    key: str
    scenarios: tuple[str, ...]
    points: int
    evals_only: bool = False


@dataclass
class SweepPlan:
    """What the PR's new changelog entries select (spec 4.3): configs, scenarios and how many
    benchmark points each generates at the head (only new ones for append-only entries)."""

    changelog: str
    configs: list[ConfigSweep] = field(default_factory=list)
    entries: int = 0
    append_only: bool = False
    problems: list[str] = field(default_factory=list)

    @property
    def is_empty(self) -> bool:
        return not self.configs

    @property
    def keys(self) -> list[str]:
        return [c.key for c in self.configs]

    @property
    def points(self) -> int:
        return sum(c.points for c in self.configs)


def _count(points) -> int:
    return sum(len(p.conc_list) if p.conc_list else 1 for p in points)


def plan_sweep(base: FileSource, head: FileSource, config: RepoConfig) -> SweepPlan:
    """The sweep a PR asks for, from the appended changelog entries and the head's master configs."""
    layout = detect_layout(head, config.paths)
    diff = diff_changelog(base.read(layout.changelog), head.read(layout.changelog), layout.changelog)
    plan = SweepPlan(changelog=layout.changelog, entries=len(diff.added))
    plan.problems.extend(str(f) for f in diff.findings)
    if not diff.added:
        return plan
    flags = {e.append_only for e in diff.added}
    if len(flags) > 1:
        plan.problems.append("append-only entries are mixed with regular ones; the sweep workflow rejects that")
    plan.append_only = True in flags
    head_repo = Repository(head, config)
    by_key: dict[str, list] = {}
    for p in head_repo.points:
        by_key.setdefault(p.config_key, []).append(p)
    base_ids: set[str] | None = None
    done: set[tuple[str, str]] = set()
    selected: dict[str, dict] = {}
    for entry in diff.added:
        keys, unmatched = resolve_config_keys(entry.config_keys, head_repo.entries)
        plan.problems.extend(f"{entry.path}:{entry.line}: config-keys pattern {u!r} matches no config" for u in unmatched)
        if entry.append_only and base_ids is None:
            base_ids = {p.point_id for p in Repository(base, config).points}
        for key in keys:
            for scenario in entry.scenario_type or SCENARIOS:
                if (key, scenario) in done:
                    continue  # an earlier entry already generated this config's scenario
                done.add((key, scenario))
                points = [p for p in by_key.get(key, []) if p.scenario == scenario]
                if entry.append_only:
                    points = [p for p in points if p.point_id not in (base_ids or set())]
                if not points:
                    continue
                item = selected.setdefault(key, {"scenarios": [], "points": 0, "evals_only": True})
                item["scenarios"].append(scenario)
                item["points"] += 0 if entry.evals_only else _count(points)
                item["evals_only"] = item["evals_only"] and entry.evals_only
    plan.configs = [ConfigSweep(k, tuple(v["scenarios"]), v["points"], v["evals_only"]) for k, v in selected.items()]
    return plan


def register(router: Router) -> None:
    router.add(EVENT_PULL_REQUEST, ACTION_LABELED, on_labeled, name="sweep.on_labeled")
    router.add(EVENT_COMMENT, ACTION_CREATED, on_comment, name="sweep.on_comment")


def permission_of(ctx: Context, login: str) -> tuple[bool, str]:
    """(may write, what GitHub said) from the collaborator permission API."""
    data = fetch(f"the repository permission of {login}",
                 lambda: ctx.api.get(f"{ctx.r}/collaborators/{login}/permission"))
    if isinstance(data, Unavailable):
        return False, "a permission GitHub did not report"
    role, perm = data.get("role_name"), data.get("permission")
    ok = (role in WRITE_ROLES) if role else (perm in WRITE_PERMISSIONS)
    return ok, f"{role or perm or 'no'} permission"


def on_comment(event: CommentEvent, ctx: Context) -> None:
    """Only new conversation comments start sweeps: an edit starting GPU work would surprise its
    author, and review comments run in the workflow job that may not dispatch."""
    if event.comment is None or not event.is_pull_request or event.comment.kind != "issue_comment":
        return
    parsed = parse_sweep_command(event.comment.body)
    if parsed is None:
        return
    line, fail_fast = parsed
    marker = SWEEP_COMMAND_MARKER.format(key=event.comment.key)
    may_write, perm = permission_of(ctx, event.comment.author)
    if not may_write:
        ctx.upsert_marked(event.number, marker, TEXT_REFUSED.format(
            quote=quote_line(line), link=comment_link(event), login=event.comment.author, perm=perm))
        return
    pr = ctx.pull(event.number)
    if pr.get("state") != "open":
        ctx.upsert_marked(event.number, marker, TEXT_CLOSED.format(
            quote=quote_line(line), link=comment_link(event), state=pr.get("state")))
        return
    sweep = ctx.config.sweep
    label = sweep.fail_fast_label if fail_fast else sweep.default_label
    done, url = start_sweep(ctx, event.number, label, fail_fast=fail_fast or label == sweep.fail_fast_label,
                            trigger=f"{comment_link(event)} by {event.comment.author}", apply_label=True)
    if done == ALREADY:
        ctx.upsert_marked(event.number, marker, TEXT_ALREADY.format(
            quote=quote_line(line), link=comment_link(event), earlier=f"[earlier]({url})" if url else "earlier"))


def on_labeled(event: PullRequestEvent, ctx: Context) -> None:
    sweep = ctx.config.sweep
    if event.label not in sweep.primary_labels or event.state != "open":
        return
    if ctx.is_ignored_author(event.sender.login, event.sender.is_bot):
        log.info(MSG_BOT_LABEL, event.describe(), event.label)
        return
    if sweep.mode != MODE_DISPATCH and not ctx.config_problems:
        log.info(MSG_LABEL_MODE, event.describe(), event.label, event.sender.login)
        return
    start_sweep(ctx, event.number, event.label, fail_fast=event.label == sweep.fail_fast_label,
                trigger=f"the label `{event.label}` added by {event.sender.login}", apply_label=False)


def start_sweep(ctx: Context, number: int, label: str, *, fail_fast: bool, trigger: str,
                apply_label: bool) -> tuple[str, str]:
    """Start (or decline) the sweep for the PR's head as it is now. Returns what was done
    (ALREADY, NOTHING, DISPATCHED, LABELED, LABEL_PRESENT or LABEL_MODE) and the URL of the
    bot's reply that records it."""
    sweep = ctx.config.sweep
    pr = ctx.pull(number, fresh=True)
    head = pr["head"]["sha"]
    if ctx.config_problems:
        # A typo in the config (`mode: dispach`) must not start a sweep in the other mode.
        problems = "\n".join(f"- `{escape_inline(p, PROBLEM_MAX)}`" for p in ctx.config_problems[:10])
        reply, _ = ctx.upsert_marked(number, CONFIG_ERROR_MARKER.format(head=head), TEXT_CONFIG_ERROR.format(
            sha=head[:12], trigger=trigger, problems=problems))
        return CONFIG_ERROR, str(reply.get("html_url") or "")
    present = [lb.get("name", "") for lb in pr.get("labels") or []]
    labels = sorted({lb for lb in present if lb in sweep.primary_labels} | {label})
    marker = SWEEP_MARKER.format(head=head, labels=",".join(labels))
    earlier = ctx.own_comments(number, marker)
    if earlier:
        log.info(MSG_ALREADY, ctx.delivery, head[:12], labels)
        return ALREADY, str(earlier[0].get("html_url") or "")
    blobs = BlobStore(ctx.api, ctx.repo)
    # The entries this PR appends: its head against its merge base, not the target tip (which
    # holds entries other PRs appended since this one branched; checks.snapshot).
    since = merge_base(ctx.api, ctx.repo, pr["base"]["sha"], head)
    plan = plan_sweep(RemoteTree(ctx.api, ctx.repo, since, blobs),
                      RemoteTree(ctx.api, ctx.repo, head, blobs), ctx.config)
    if plan.is_empty:
        reply, _ = ctx.upsert_marked(number, marker, TEXT_NOTHING.format(sha=head[:12], changelog=plan.changelog,
                                                                         trigger=trigger) + _problems(plan))
        return NOTHING, str(reply.get("html_url") or "")
    workflow = sweep.workflow
    if sweep.mode != MODE_DISPATCH and not apply_label:
        return LABEL_MODE, ""
    if sweep.mode != MODE_DISPATCH and label in present:
        text = TEXT_LABEL_PRESENT.format(label=label, workflow=workflow, sha=head[:12])
        reply, _ = ctx.upsert_marked(number, marker, text + "\n\n" + _table(plan) + _problems(plan))
        return LABEL_PRESENT, str(reply.get("html_url") or "")
    # The reply is the record that this head and these labels were started, so it is written
    # before the start: a job that dies after starting cannot leave a redelivery free to start
    # again, and of two jobs racing, the one whose claim is oldest starts while the other yields.
    # Always a new comment: an upsert would hand a racing job the other job's claim as its own.
    claim = _post_claim(ctx, number, head, marker, TEXT_STARTING.format(sha=head[:12], trigger=trigger))
    claims = ctx.own_comments(number, marker)
    if claims and int(claims[0]["id"]) != int(claim["id"]):
        log.info(MSG_LOST_CLAIM, ctx.delivery, head[:12], labels, claims[0]["id"])
        ctx.api.delete(f"{ctx.r}/issues/comments/{claim['id']}", missing_ok=True)
        return ALREADY, str(claims[0].get("html_url") or "")
    try:
        if sweep.mode == MODE_DISPATCH:
            inputs = {**{k: str(v) for k, v in sweep.dispatch_inputs.items()},
                      INPUT_REF: head, INPUT_PR: str(number), INPUT_KEYS: ",".join(plan.keys),
                      INPUT_FAIL_FAST: "true" if fail_fast else "false"}
            run = _dispatch(ctx, number, workflow, head, inputs, since=str(claim.get("created_at") or ""))
            text, done = TEXT_DISPATCHED.format(workflow=workflow, sha=head[:12],
                                                fail_fast="yes" if fail_fast else "no", trigger=trigger), DISPATCHED
            if run.get("id") and str(run.get("html_url") or "").startswith("https://"):
                text += TEXT_RUN.format(run=run["id"], url=run["html_url"])
        else:
            # Adding a label that is already there changes nothing, so a retry is harmless.
            ctx.api.post_idempotent(f"{ctx.r}/issues/{number}/labels", {"labels": [label]})
            text, done = TEXT_LABELED.format(label=label, sha=head[:12], trigger=trigger, workflow=workflow), LABELED
    except Exception as exc:
        # GitHub refused the start: the claim loses its marker, so a retry of this event may start it.
        ctx.api.patch(f"{ctx.r}/issues/comments/{claim['id']}", {"body": TEXT_START_FAILED.format(
            sha=head[:12], trigger=trigger, error=escape_inline(describe_error(exc), PROBLEM_MAX))})
        raise
    reply = ctx.api.patch(f"{ctx.r}/issues/comments/{claim['id']}",
                          {"body": marker + "\n" + text + "\n\n" + _table(plan) + _problems(plan)})
    return done, str(reply.get("html_url") or "")


def _post_claim(ctx: Context, number: int, head: str, marker: str, text: str) -> dict:
    """A new claim comment, posted exactly once: after an error that may hide a landed post, the
    claim carrying this job's nonce is adopted, never a racing job's claim."""
    nonce = CLAIM_NONCE.format(nonce=uuid.uuid4().hex)
    body = marker + "\n" + text + "\n" + nonce

    def find() -> dict | None:
        return next((c for c in ctx.own_comments(number, marker) if nonce in (c.get("body") or "")), None)

    return create_once(MSG_WHAT_CLAIM.format(head=head[:12], repo=ctx.repo, number=number),
                       lambda: ctx.api.post(f"{ctx.r}/issues/{number}/comments", {"body": body}), find,
                       policy=getattr(ctx.api, "policy", None))


def _dispatch(ctx: Context, number: int, workflow: str, head: str, inputs: dict[str, str], *, since: str) -> dict:
    """Dispatch the sweep workflow once and return the run GitHub started (`{}` when it does not
    say). GitHub answers a dispatch with `return_run_details: true` with the run's id (since
    2026-02); a GitHub Enterprise Server that refuses the parameter (422/400 naming it) is asked
    again without it. A dispatch POST that failed after it may have landed is repeated (once) only
    when no run dispatched by the bot since the claim was written exists."""
    name = workflow.rsplit("/", 1)[-1]
    runs_path = f"{ctx.r}/actions/workflows/{name}/runs"
    claimed_at = parse_time(since)

    def dispatched_run() -> dict | None:
        me = ctx.own_login.lower()
        params = {"event": DISPATCH_EVENT, "branch": ctx.default_branch}
        if since:
            params["created"] = f">={since}"
        for run in ctx.api.list(runs_path, params, key="workflow_runs"):
            created = parse_time(run.get("created_at"))
            by = str((run.get("triggering_actor") or run.get("actor") or {}).get("login", "")).lower()
            # Without the claim's time no run can be told apart from an older one: none is adopted.
            if by == me and run.get("event") == DISPATCH_EVENT and created is not None \
                    and claimed_at is not None and created >= claimed_at:
                return run
        return None

    policy = getattr(ctx.api, "policy", None)

    def find() -> dict | None:
        run = dispatched_run()
        if run is None and DISPATCH_SETTLE_S:
            (policy.clock.sleep if policy is not None else time.sleep)(DISPATCH_SETTLE_S)
            run = dispatched_run()
        return run

    path = f"{ctx.r}/actions/workflows/{name}/dispatches"
    asks_details = [True]

    def post() -> dict:
        body: dict = {"ref": ctx.default_branch, "inputs": inputs}
        if asks_details[0]:
            body[RETURN_RUN_DETAILS] = True
        try:
            answer = ctx.api.post(path, body)
        except GithubException as exc:
            if not (asks_details[0] and exc.status in (400, 422) and RETURN_RUN_DETAILS in str(exc.data)):
                raise
            asks_details[0] = False  # a server without the parameter: as before it existed
            log.info(MSG_NO_RUN_DETAILS, ctx.delivery, exc.status)
            answer = ctx.api.post(path, {"ref": ctx.default_branch, "inputs": inputs})
        if isinstance(answer, dict) and answer.get(RUN_ID_KEY):
            return {"id": int(answer[RUN_ID_KEY]), "html_url": str(answer.get("html_url") or "")}
        return {}

    return create_once(MSG_WHAT_DISPATCH.format(workflow=workflow, head=head[:12], repo=ctx.repo, number=number),
                       post, find, attempts=DISPATCH_ATTEMPTS, policy=policy)


def _table(plan: SweepPlan) -> str:
    rows = [TEXT_TABLE_ROW.format(key=c.key, scenarios=", ".join(c.scenarios),
                                  points=TEXT_EVALS_ONLY if c.evals_only else c.points) for c in plan.configs]
    total = TEXT_TOTAL.format(configs=len(plan.configs), points=plan.points, entries=plan.entries,
                              ies="y" if plan.entries == 1 else "ies",
                              append=TEXT_APPEND_ONLY if plan.append_only else "")
    return "\n".join([TEXT_TABLE_HEAD, *rows, "", total]) + "\n"


def _problems(plan: SweepPlan) -> str:
    if not plan.problems:
        return ""
    return "\n" + TEXT_PROBLEMS + "\n" + "\n".join(f"- {escape_inline(p, PROBLEM_MAX)}" for p in plan.problems[:10]) + "\n"
