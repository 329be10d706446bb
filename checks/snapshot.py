"""The PR snapshot: the only view of a pull request that a check may read.

Guarantees:
- Fixed for one evaluation: built once (from GitHub, a local checkout or a test), frozen.
- `head_sha` is the pinned head that every check assesses; `current_head_sha` is what GitHub
  reported last (it differs when the PR moved during the run).
- Lists are in GitHub's order unless stated: commits oldest first, comments by creation time.
- Anything GitHub (or the checkout) could not tell us is an `Unavailable` carrying the reason,
  never an empty list or a default. Checks turn `Unavailable` into non-passing evidence.
"""
from __future__ import annotations

from datetime import date, datetime
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from checks.signoff_keys import signoff_key
from recipes.config import RepoConfig
from recipes.source import FileSource, MemorySource

CommentKind = Literal["issue_comment", "review", "review_comment"]
FileStatus = Literal["added", "modified", "removed", "renamed", "copied", "changed", "unchanged"]


class Unavailable(BaseModel):
    """Evidence that could not be obtained, and why."""

    model_config = ConfigDict(frozen=True)

    reason: str

    def __bool__(self) -> bool:  # so `if snapshot.comments:` never treats it as data
        return False


T = TypeVar("T")
Maybe = T | Unavailable


def is_unavailable(value: Any) -> bool:
    return isinstance(value, Unavailable)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)


class Comment(_Frozen):
    """A conversation comment, a review summary, or an inline review comment."""

    id: int
    kind: CommentKind = "issue_comment"
    author: str
    association: str = "NONE"
    is_bot: bool = False
    body: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    url: str = ""

    @property
    def key(self) -> str:
        """The sign-off key used in the hidden marker (spec 11.2)."""
        return signoff_key(self.kind, self.id)


class ChangedFile(_Frozen):
    path: str
    status: FileStatus = "modified"
    previous_path: str | None = None
    patch: str | None = None
    additions: int = 0
    deletions: int = 0


class Commit(_Frozen):
    sha: str
    message: str = ""
    parents: list[str] = Field(default_factory=list)


class CheckRun(_Frozen):
    name: str
    status: str = "completed"
    conclusion: str | None = None
    details_url: str = ""
    run_id: int | None = None
    head_sha: str = ""


class Artifact(_Frozen):
    name: str
    id: int = 0
    expired: bool = False
    size_in_bytes: int = 0


class SweepRun(_Frozen):
    """One Actions run of the sweep workflow, with the parsed artifacts the checks need."""

    run_id: int
    head_sha: str = ""
    event: str = "pull_request"
    status: str = "completed"
    conclusion: str | None = None
    workflow_path: str = ""
    created_at: datetime | None = None
    html_url: str = ""
    artifacts: list[Artifact] | Unavailable = Field(default_factory=list)
    # Throughput rows (flat or nested AgentX) from the throughput artifact, as JSON objects.
    throughput: list[dict] | Unavailable | None = None
    # Eval rows from the eval artifact, as JSON objects.
    evals: list[dict] | Unavailable | None = None
    # Per-job metadata (e.g. meta_env.json contents), keyed by artifact name.
    meta: dict[str, dict] = Field(default_factory=dict)


class ReuseSource(_Frozen):
    """An accepted `/use` or `/reuse-sweep-run` command and the run it selected."""

    run_id: int
    comment: Comment
    command: str  # "/use", "/reuse-sweep-run"
    explicit: bool = True


class UpstreamRef(_Frozen):
    """A resolved upstream recipe reference (a PR or a published page)."""

    url: str
    kind: Literal["pull", "page"] = "pull"
    repo: str | None = None
    number: int | None = None
    state: str | None = None  # open / closed
    merged: bool | None = None
    title: str = ""
    # Text of the published page or of the PR's changed recipe files, when fetched.
    text: str | None = None
    unavailable: str | None = None


class UserAccess(_Frozen):
    login: str
    permission: str | None = None  # admin / maintain / write / triage / read / none
    role_name: str | None = None


def _empty_source() -> FileSource:
    return MemorySource({})


class PRSnapshot(_Frozen):
    repo: str
    number: int
    title: str = ""
    body: str = ""
    author: str = ""
    state: str = "open"
    draft: bool = False
    base_ref: str = "main"
    base_sha: str = ""
    head_sha: str = ""
    current_head_sha: str = ""
    files: list[ChangedFile] | Unavailable = Field(default_factory=list)
    # Trees: the merge base of the PR, the pinned head, and the tip of the target branch
    # (CODEOWNERS and the checklist template are read from the target branch, spec 7 and 8).
    base: Any = Field(default_factory=_empty_source)
    head: Any = Field(default_factory=_empty_source)
    target: Any = None
    commits: list[Commit] | Unavailable = Field(default_factory=list)
    signoff: Comment | None = None
    comments: list[Comment] | Unavailable = Field(default_factory=list)
    labels: list[str] | Unavailable = Field(default_factory=list)
    check_runs: dict[str, list[CheckRun] | Unavailable] | Unavailable = Field(default_factory=dict)
    sweep_runs: dict[int, SweepRun] | Unavailable = Field(default_factory=dict)
    reuse: ReuseSource | None = None
    upstream: dict[str, UpstreamRef] = Field(default_factory=dict)
    users: dict[str, UserAccess | Unavailable] = Field(default_factory=dict)
    team_members: dict[str, list[str] | Unavailable] = Field(default_factory=dict)
    # The day the review is judged on (UTC); the caller decides it, the core never reads the clock.
    review_date: date
    config: RepoConfig = Field(default_factory=RepoConfig)
    # Files over the fetch cap or unreadable at a side: path -> reason.
    unreadable: dict[str, str] = Field(default_factory=dict)
    html_url: str = ""

    @property
    def target_tree(self) -> FileSource:
        return self.target if self.target is not None else self.base

    @property
    def commit_shas(self) -> list[str] | Unavailable:
        if isinstance(self.commits, Unavailable):
            return self.commits
        return [c.sha for c in self.commits]

    @property
    def head_moved(self) -> bool:
        return bool(self.current_head_sha) and self.current_head_sha != self.head_sha
