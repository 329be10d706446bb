"""The PR snapshot: the only view of a pull request that a check may read.

Guarantees:
- Fixed for one evaluation: built once (from GitHub, a local checkout or a test), frozen.
- `head_sha` is the pinned head that every check assesses; `current_head_sha` is what GitHub
  reported last (it differs when the PR moved during the run).
- Lists are in GitHub's order unless stated: commits oldest first, comments by creation time.
- Anything GitHub (or the checkout) could not tell us is an `Unavailable` carrying the reason,
  never an empty list or a default. Checks turn `Unavailable` into non-passing evidence.
- What only some checks need (team membership, a user's access, a sweep run with its artifacts,
  an upstream recipe) is asked through the accessors of `PRData` (`snapshot.is_team_member(...)`,
  `snapshot.sweep_run(...)`, ...), so the check that needs a fact is the one place deciding
  which facts matter. Each answer is obtained at most once and is the same every time it is
  asked. A snapshot built in memory (tests, local mode) answers from its fields; the GitHub
  builder attaches a `PRData` that reads the API on first use (bot/github_data.py).
- Two baselines, one per question (docs/baselines.md lists every comparison):
  "what did this PR change?" compares the MERGE BASE (`merge_base_tree`, the field `base`)
  with the head, so what landed on the target branch after the PR branched is never the PR's
  doing; "what is the rule?" reads the TARGET branch's tip (`target_tree`, the field `target`)
  as fetched for the review (CODEOWNERS, checklist template, MODELS.md, bars, curves, waivers,
  the bot's own policy file). A check picks one of the two by name, never `base` for a rule.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from datetime import date, datetime
from collections.abc import Callable, Iterable, Mapping
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, PrivateAttr, SkipValidation

from checks.signoff_keys import signoff_key
from recipes.config import RepoConfig
from recipes.evidence import Unavailable  # noqa: F401 (re-exported)
from recipes.model import Model
from recipes.source import FileSource, MemorySource

CommentKind = Literal["issue_comment", "review", "review_comment"]
FileStatus = Literal["added", "modified", "removed", "renamed", "copied", "changed", "unchanged"]


class _Frozen(Model):
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


class ExternalTree(_Frozen):
    """Another repository's tree at a ref, as a runner clones it (an srt-slurm checkout): `ref`
    as the script names it, `sha` the commit it resolved to on the review date."""

    repo: str  # owner/name
    ref: str
    sha: str
    source: Annotated[FileSource, SkipValidation]


# (owner/name, ref) -> the tree, Unavailable (why it could not be read), or None (no such
# repository is known to the reader).
ExternalReader = Callable[[str, str], "ExternalTree | Unavailable | None"]


class UserAccess(_Frozen):
    login: str
    permission: str | None = None  # admin / maintain / write / triage / read / none
    role_name: str | None = None


def _empty_source() -> FileSource:
    return MemorySource({})


class PRData(ABC):
    """The facts about a PR that checks ask for by name (policy-bot's `pull.Context`): pure
    interface, no I/O here. An implementation answers each question at most once (cached,
    safe to ask from several threads) and never raises: what it cannot tell is `Unavailable`
    with the reason; None means it holds no answer at all (nothing was provided or fetched)."""

    @abstractmethod
    def is_team_member(self, team: str, login: str, *, settle: bool = False) -> bool | Unavailable | None:
        """Whether `login` is an active member of `team` (`org/slug`). An unknown answer may be
        settled by one more read when the caller says it decides something (`settle`): GitHub's
        404 means "not a member" only for a team the token can see."""

    @abstractmethod
    def user_access(self, login: str) -> UserAccess | Unavailable | None:
        """`login`'s permission and role on the repository."""

    @abstractmethod
    def sweep_run(self, run_id: int) -> SweepRun | Unavailable | None:
        """Actions run `run_id` with its artifact list and, for a run of the sweep workflow, the
        rows of the artifacts the checks read."""

    @abstractmethod
    def workflow_runs(self) -> list[SweepRun] | Unavailable:
        """Completed `pull_request` runs of the sweep workflow on the PR's head branch (artifact
        lists may be `Unavailable` until asked with `run_artifacts`)."""

    @abstractmethod
    def run_artifacts(self, run_id: int) -> list[Artifact] | Unavailable:
        """The artifact list of run `run_id` (no contents)."""

    @abstractmethod
    def upstream_ref(self, url: str, repo: str | None = None, number: int | None = None) -> UpstreamRef | None:
        """The upstream recipe a link names: a pull request (`repo`, `number`) or a page (`url`)."""

    def external_tree(self, repo: str, ref: str) -> ExternalTree | Unavailable | None:
        """Repository `repo` (owner/name) at `ref` (a branch as of the review date, a tag or a
        commit), for what a runner clones; None when this source reads no other repository."""
        return None

    def ask_together(self, questions: Iterable[Callable[[], Any]]) -> None:
        """Ask these accessor calls at once (a source that reads lazily overlaps their waits);
        their answers are then cached. A check calls it for what it will certainly ask."""
        for question in questions:
            question()


MSG_RUNS_NOT_LISTED = "the sweep workflow's runs were not listed"


class SnapshotData(PRData):
    """The accessors over the snapshot's own fields (tests, local mode, JSON fixtures)."""

    def __init__(self, snapshot: "PRSnapshot"):
        self.s = snapshot

    def external_tree(self, repo: str, ref: str) -> ExternalTree | Unavailable | None:
        reader = self.s.external
        return reader(repo, ref) if reader is not None else None

    def is_team_member(self, team: str, login: str, *, settle: bool = False) -> bool | Unavailable | None:
        want = team.lower().lstrip("@")
        for name, members in self.s.team_members.items():
            if name.lower().lstrip("@") == want:
                if isinstance(members, Unavailable):
                    return members
                return login.lower().lstrip("@") in {m.lower().lstrip("@") for m in members}
        return None

    def user_access(self, login: str) -> UserAccess | Unavailable | None:
        users = self.s.users
        if login in users:
            return users[login]
        return next((v for k, v in users.items() if k.lower() == login.lower()), None)

    def sweep_run(self, run_id: int) -> SweepRun | Unavailable | None:
        runs = self.s.sweep_runs
        return runs if isinstance(runs, Unavailable) else runs.get(run_id)

    def workflow_runs(self) -> list[SweepRun] | Unavailable:
        runs = self.s.sweep_runs
        return runs if isinstance(runs, Unavailable) else list(runs.values())

    def run_artifacts(self, run_id: int) -> list[Artifact] | Unavailable:
        run = self.sweep_run(run_id)
        if run is None:
            return Unavailable(reason=MSG_RUNS_NOT_LISTED)
        return run if isinstance(run, Unavailable) else run.artifacts

    def upstream_ref(self, url: str, repo: str | None = None, number: int | None = None) -> UpstreamRef | None:
        upstream = self.s.upstream
        if url in upstream:
            return upstream[url]
        for ref in upstream.values():
            if repo and ref.repo and ref.number == number and ref.repo.lower() == repo.lower():
                return ref
            if not repo and ref.url.rstrip("/").split("#")[0] == url.rstrip("/").split("#")[0]:
                return ref
        return None


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
    # Trees: the merge base of the PR (`base`, see `merge_base_tree`), the pinned head, and the
    # tip of the target branch (`target`, see `target_tree`; None: the same commit as `base`).
    # A tree may read lazily (GitHub mode); a file it cannot read raises OSError, never None.
    base: FileSource = Field(default_factory=_empty_source)
    head: FileSource = Field(default_factory=_empty_source)
    target: FileSource | None = None
    commits: list[Commit] | Unavailable = Field(default_factory=list)
    signoff: Comment | None = None
    comments: list[Comment] | Unavailable = Field(default_factory=list)
    labels: list[str] | Unavailable = Field(default_factory=list)
    check_runs: dict[str, list[CheckRun] | Unavailable] | Unavailable = Field(default_factory=dict)
    sweep_runs: dict[int, SweepRun] | Unavailable = Field(default_factory=dict)
    # An accepted reuse source given as data (tests); None: checks.sweep_runs.reuse_source decides.
    reuse: ReuseSource | None = None
    upstream: dict[str, UpstreamRef] = Field(default_factory=dict)
    users: dict[str, UserAccess | Unavailable] = Field(default_factory=dict)
    team_members: dict[str, list[str] | Unavailable] = Field(default_factory=dict)
    # The day the review is judged on (UTC); the caller decides it, the core never reads the clock.
    review_date: date
    config: RepoConfig = Field(default_factory=RepoConfig)
    # Files over the fetch cap or unreadable at a side: path -> reason (a live mapping in GitHub
    # mode, complete before any tree read returns).
    unreadable: Annotated[Mapping[str, str], SkipValidation] = Field(default_factory=dict)
    html_url: str = ""
    # Other repositories' trees a runner clones (local mode: `--external-repo`); None: none.
    external: Annotated[ExternalReader | None, SkipValidation] = None
    # The accessors' implementation; None answers from the fields above (SnapshotData).
    _data: PRData | None = PrivateAttr(default=None)

    def with_data(self, data: PRData) -> "PRSnapshot":
        """This snapshot answering its accessors from `data` (e.g. the GitHub API, lazily)."""
        self._data = data
        return self

    @property
    def data(self) -> PRData:
        return self._data if self._data is not None else SnapshotData(self)

    @property
    def is_lazy(self) -> bool:
        """Whether the accessors may wait on I/O (then checks are best evaluated concurrently)."""
        return self._data is not None

    # --- accessors (PRData): the checks' only way to the facts beyond the fields ----------
    def is_team_member(self, team: str, login: str, *, settle: bool = False) -> bool | Unavailable | None:
        return self.data.is_team_member(team, login, settle=settle)

    def user_access(self, login: str) -> UserAccess | Unavailable | None:
        return self.data.user_access(login)

    def sweep_run(self, run_id: int) -> SweepRun | Unavailable | None:
        return self.data.sweep_run(run_id)

    def workflow_runs(self) -> list[SweepRun] | Unavailable:
        return self.data.workflow_runs()

    def run_artifacts(self, run_id: int) -> list[Artifact] | Unavailable:
        return self.data.run_artifacts(run_id)

    def upstream_ref(self, url: str, repo: str | None = None, number: int | None = None) -> UpstreamRef | None:
        return self.data.upstream_ref(url, repo, number)

    def external_tree(self, repo: str, ref: str) -> ExternalTree | Unavailable | None:
        return self.data.external_tree(repo, ref)

    def ask_together(self, questions: Iterable[Callable[[], Any]]) -> None:
        self.data.ask_together(questions)

    @property
    def merge_base_tree(self) -> FileSource:
        """The tree the PR branched from (GitHub's compare `merge_base_commit`, `git merge-base`
        locally): the one side of every "what did this PR change?" question (added or changed
        entries, curves, bars, MODELS.md rows, changelog appends, links). Commits that reached
        the target branch after the PR branched are not in it, so they never read as the PR's."""
        return self.base

    @property
    def target_tree(self) -> FileSource:
        """The tip of the target branch as read for the review: the one tree that answers "what
        is the rule?" (CODEOWNERS, the checklist template, MODELS.md on the review date, eval
        bars, golden curves, waivers, `.github/infx-review.yml`). A PR never loosens it."""
        return self.target if self.target is not None else self.base

    @property
    def commit_shas(self) -> list[str] | Unavailable:
        if isinstance(self.commits, Unavailable):
            return self.commits
        return [c.sha for c in self.commits]

    @property
    def head_moved(self) -> bool:
        return bool(self.current_head_sha) and self.current_head_sha != self.head_sha
