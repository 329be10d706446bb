"""GitHub webhook payloads as a few normalised events: one CommentEvent for the three comment
kinds, PullRequestEvent, WorkflowRunEvent and DispatchEvent (STYLE 4, 5; spec 8.2)."""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from bot.dates import parse_time
from checks.snapshot import Comment

# GitHub's event names (the X-GitHub-Event header, GITHUB_EVENT_NAME in Actions).
EVENT_ISSUE_COMMENT = "issue_comment"
EVENT_REVIEW = "pull_request_review"
EVENT_REVIEW_COMMENT = "pull_request_review_comment"
EVENT_PULL_REQUEST = "pull_request"
# Same payload; callers use it so fork PRs get a write token (the bot never runs PR code).
EVENT_PULL_REQUEST_TARGET = "pull_request_target"
EVENT_WORKFLOW_RUN = "workflow_run"
EVENT_DISPATCH = "workflow_dispatch"
EVENT_PING = "ping"
# The one name the three comment events are routed under.
EVENT_COMMENT = "comment"

ACTION_CREATED = "created"
ACTION_EDITED = "edited"
ACTION_SUBMITTED = "submitted"
ACTION_LABELED = "labeled"
ACTION_SYNCHRONIZE = "synchronize"
ACTION_COMPLETED = "completed"
# workflow_dispatch payloads carry no action; routing uses this one.
ACTION_NONE = ""

# Comment kinds, as checks.snapshot.Comment spells them.
KIND_BY_EVENT = {EVENT_ISSUE_COMMENT: "issue_comment", EVENT_REVIEW: "review", EVENT_REVIEW_COMMENT: "review_comment"}
# A review is "submitted" where comments are "created": one action name for all three.
COMMENT_ACTIONS = {ACTION_SUBMITTED: ACTION_CREATED}
BOT_TYPE = "Bot"
BOT_SUFFIX = "[bot]"

# workflow_dispatch input names the review workflow passes through (several spellings seen).
INPUT_PR = ("pr-number", "pr_number", "pr")
INPUT_SIGNOFF = ("comment_url", "comment-url", "signoff-url", "signoff_url", "signoff")

MSG_NOT_OBJECT = "the {name} payload is not a JSON object"
MSG_MISSING = "the {name} payload has no {field}"
MSG_BAD_JSON = "cannot read the event payload {path}: {error}"
MSG_BAD_FILENAME = "{path}: payload file names are [NN.]<event_name>[.<case>].json"


class EventError(ValueError):
    """A payload that cannot be understood: named, never a crash deeper in."""


@dataclass(frozen=True)
class Actor:
    login: str
    type: str = "User"

    @property
    def is_bot(self) -> bool:
        return self.type == BOT_TYPE or self.login.lower().endswith(BOT_SUFFIX)


@dataclass(frozen=True)
class Event:
    """What every event carries: its routing key, the delivery, the repository and the sender."""

    name: str
    action: str
    delivery: str
    repo: str
    default_branch: str
    sender: Actor
    payload: Mapping[str, Any] = field(repr=False, compare=False, default_factory=dict)

    @property
    def key(self) -> tuple[str, str]:
        return (self.name, self.action)

    def describe(self) -> str:
        return f"{self.name}" + (f".{self.action}" if self.action else "") + f" ({self.delivery})"


@dataclass(frozen=True)
class CommentEvent(Event):
    """A conversation comment, review summary or inline review comment, created or edited.
    `number` is the PR (or issue) it was made on; `is_pull_request` is False for an issue."""

    number: int = 0
    is_pull_request: bool = True
    comment: Comment | None = None
    previous_body: str | None = None
    # The PR's state as the payload reported it (review events carry the PR; comments do not).
    pr_state: str | None = None
    pr_draft: bool | None = None


@dataclass(frozen=True)
class PullRequestEvent(Event):
    number: int = 0
    head_sha: str = ""
    state: str = "open"
    draft: bool = False
    labels: tuple[str, ...] = ()
    label: str | None = None  # the label added or removed, for labeled/unlabeled


@dataclass(frozen=True)
class WorkflowRunEvent(Event):
    run_id: int = 0
    workflow_path: str = ""
    run_event: str = ""
    status: str = ""
    conclusion: str | None = None
    head_sha: str = ""
    pr_numbers: tuple[int, ...] = ()
    # Where the run's head lives (a fork's owner for a PR from a fork) and its branch: GitHub
    # leaves `pull_requests` empty when the head is in a fork, so these find the PR instead.
    head_owner: str = ""
    head_branch: str = ""


@dataclass(frozen=True)
class DispatchEvent(Event):
    inputs: Mapping[str, str] = field(default_factory=dict)
    ref: str = ""

    def input(self, names: tuple[str, ...]) -> str | None:
        for n in names:
            value = self.inputs.get(n)
            if value not in (None, ""):
                return str(value).strip()
        return None

    @property
    def pr_number(self) -> int | None:
        value = self.input(INPUT_PR)
        return int(value) if value and value.isdigit() else None

    @property
    def signoff_url(self) -> str | None:
        return self.input(INPUT_SIGNOFF)


def _actor(user: Any) -> Actor:
    user = user if isinstance(user, Mapping) else {}
    return Actor(login=str(user.get("login") or "ghost"), type=str(user.get("type") or "User"))


def _need(obj: Mapping[str, Any], key: str, name: str) -> Any:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    if value is None:
        raise EventError(MSG_MISSING.format(name=name, field=key))
    return value


def _comment(item: Mapping[str, Any], kind: str) -> Comment:
    author = _actor(item.get("user"))
    created = item.get("submitted_at") if kind == "review" else item.get("created_at")
    return Comment(
        id=int(item["id"]),
        kind=kind,  # type: ignore[arg-type]
        author=author.login,
        association=str(item.get("author_association") or "NONE"),
        is_bot=author.is_bot,
        body=item.get("body") or "",
        created_at=parse_time(created),
        updated_at=parse_time(item.get("updated_at") or created),
        url=str(item.get("html_url") or ""),
    )


def delivery_id(payload: Mapping[str, Any], env: Mapping[str, str]) -> str:
    """The webhook delivery id when known; in Actions the run id and attempt (one job per
    event); else a digest of the payload, so log lines about one event still line up."""
    if env.get("GITHUB_DELIVERY"):
        return env["GITHUB_DELIVERY"]
    if env.get("GITHUB_RUN_ID"):
        return f"run-{env['GITHUB_RUN_ID']}.{env.get('GITHUB_RUN_ATTEMPT', '1')}"
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
    return f"payload-{digest[:12]}"


def parse_event(name: str, payload: Any, *, delivery: str = "", repo: str | None = None) -> Event:
    """The normalised event for a webhook `name` and its JSON payload. Unknown events come
    back as a plain Event (no handler will want them); malformed ones raise EventError."""
    if not isinstance(payload, Mapping):
        raise EventError(MSG_NOT_OBJECT.format(name=name))
    repository = payload.get("repository") or {}
    base = dict(
        name=name,
        action=str(payload.get("action") or ACTION_NONE),
        delivery=delivery or "unknown",
        repo=str(repo or repository.get("full_name") or ""),
        default_branch=str(repository.get("default_branch") or "main"),
        sender=_actor(payload.get("sender")),
        payload=payload,
    )
    if name in KIND_BY_EVENT:
        return _comment_event(name, payload, base)
    if name in (EVENT_PULL_REQUEST, EVENT_PULL_REQUEST_TARGET):
        base["name"] = EVENT_PULL_REQUEST
        pr = _need(payload, "pull_request", name)
        label = payload.get("label") or {}
        return PullRequestEvent(
            **base,
            number=int(_need(pr, "number", name)),
            head_sha=str((pr.get("head") or {}).get("sha") or ""),
            state=str(pr.get("state") or "open"),
            draft=bool(pr.get("draft")),
            labels=tuple(str(lb.get("name")) for lb in pr.get("labels") or [] if lb.get("name")),
            label=label.get("name") if isinstance(label, Mapping) else None,
        )
    if name == EVENT_WORKFLOW_RUN:
        run = _need(payload, "workflow_run", name)
        return WorkflowRunEvent(
            **base,
            run_id=int(_need(run, "id", name)),
            workflow_path=str(run.get("path") or "").split("@", 1)[0],
            run_event=str(run.get("event") or ""),
            status=str(run.get("status") or ""),
            conclusion=run.get("conclusion"),
            head_sha=str(run.get("head_sha") or ""),
            pr_numbers=tuple(int(p["number"]) for p in run.get("pull_requests") or [] if p.get("number")),
            head_owner=str(((run.get("head_repository") or {}).get("owner") or {}).get("login") or ""),
            head_branch=str(run.get("head_branch") or ""),
        )
    if name == EVENT_DISPATCH:
        inputs = payload.get("inputs") or {}
        if not isinstance(inputs, Mapping):
            raise EventError(MSG_MISSING.format(name=name, field="inputs object"))
        return DispatchEvent(**base, inputs={str(k): "" if v is None else str(v) for k, v in inputs.items()},
                             ref=str(payload.get("ref") or ""))
    return Event(**base)


def from_fork(payload: Mapping[str, Any]) -> bool:
    """Whether the event's pull request has its head in another repository (a fork, or a
    fork since deleted). GitHub runs workflows for such events with a read-only GITHUB_TOKEN
    and without secrets ("Workflows in forked repositories",
    https://docs.github.com/en/actions/writing-workflows/choosing-when-your-workflow-runs/events-that-trigger-workflows#workflows-in-forked-repositories)."""
    pr = payload.get("pull_request")
    repository = payload.get("repository")
    if not isinstance(pr, Mapping) or not isinstance(repository, Mapping):
        return False
    head = pr.get("head") or {}
    if "repo" in head:
        head_repo = head.get("repo") or {}
        return str(head_repo.get("full_name") or "").lower() != str(repository.get("full_name") or "").lower()
    owner = str((repository.get("owner") or {}).get("login") or "")
    label = str(head.get("label") or "")
    return bool(owner and ":" in label) and label.split(":", 1)[0].lower() != owner.lower()


def _comment_event(name: str, payload: Mapping[str, Any], base: dict) -> CommentEvent:
    kind = KIND_BY_EVENT[name]
    base["name"] = EVENT_COMMENT
    base["action"] = COMMENT_ACTIONS.get(base["action"], base["action"])
    if name == EVENT_ISSUE_COMMENT:
        issue = _need(payload, "issue", name)
        item = _need(payload, "comment", name)
        number, is_pr = int(_need(issue, "number", name)), bool(issue.get("pull_request"))
        state, draft = issue.get("state"), issue.get("draft")
    else:
        pr = _need(payload, "pull_request", name)
        item = _need(payload, "review" if name == EVENT_REVIEW else "comment", name)
        number, is_pr = int(_need(pr, "number", name)), True
        state, draft = pr.get("state"), pr.get("draft")
    _need(item, "id", name)
    previous = ((payload.get("changes") or {}).get("body") or {}).get("from")
    return CommentEvent(
        **base,
        number=number,
        is_pull_request=is_pr,
        comment=_comment(item, kind),
        previous_body=previous if isinstance(previous, str) else None,
        pr_state=str(state) if state else None,
        pr_draft=bool(draft) if draft is not None else None,
    )


def load_payload(path: str | Path) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EventError(MSG_BAD_JSON.format(path=path, error=getattr(exc, "strerror", None) or exc)) from None


def event_name_from_filename(path: str | Path) -> str:
    """Recorded payload files are named `[NN.]<event_name>[.<case>].json` (GitHub sends the
    name in a header, not in the payload): `01.issue_comment.use-accepted.json`."""
    parts = Path(path).name.split(".")
    if parts[-1] != "json" or len(parts) < 2:
        raise EventError(MSG_BAD_FILENAME.format(path=path))
    parts = parts[:-1]
    if parts[0].isdigit():
        parts = parts[1:]
    if not parts or not parts[0]:
        raise EventError(MSG_BAD_FILENAME.format(path=path))
    return parts[0]
