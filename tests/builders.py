"""Shared test builders and fakes: a PRSnapshot from a compact dict, and scripted fake checks.

`build_snapshot(spec)` keys (all optional):

    repo, number, title, body, author, state, draft, base_ref, html_url
    base_sha, head_sha, current_head_sha      # defaults BASE_SHA / HEAD_SHA
    base:   {path: text}                      # tree at the merge base
    head:   {path: text | null}               # overlay on base (null deletes); or
    head_tree: {path: text}                   # the complete head tree instead of an overlay
    target: {path: text}                      # tip of the target branch (defaults to base)
    target_changes: {path: text | null}       # or: what reached the target branch after the PR
                                              # branched, an overlay on base (null deletes)
    # In any tree a value {link: "target text"} is a symbolic link (followed inside the tree).
    files:  [path | {path, status, previous_path, patch, additions, deletions}]
            # derived from base vs head when absent
    commits: [sha | {sha, message, parents}]  # default: one commit, the head
    signoff: {id, author, body, kind, association, created_at, ...} | null
    comments: [{id?, author, body, association, kind, is_bot, created_at}]
    labels: [name]
    check_runs: {sha | "head" | "base": [{name, conclusion, status, run_id, details_url}]}
    runs:   [{id, head, conclusion, status, event, workflow, created_at,
              artifacts: [name | {name, expired}], throughput: [row], evals: [row],
              meta: {artifact: {...}}}]
    reuse:  {run_id, command, comment: {...}}   # an accepted source given as data; absent, Checks
                                                # 1 and 4 derive it from comments and runs
                                                # (checks.sweep_runs.reuse_source)
    upstream: [{url, kind, repo, number, state, merged, title, text}]
    users:  {login: {permission, role_name} | {unavailable: reason}}
    team_members: {team: [login] | {unavailable: reason}}
    review_date: YYYY-MM-DD
    config: {paths: ..., policy: ..., sweep: ...}   # RepoConfig overrides
    unreadable: {path: reason}

Any list- or dict-valued field may instead be `{unavailable: "reason"}`, giving `Unavailable`.
`users`, `team_members`, `runs` and `upstream` answer the snapshot's accessors
(checks.snapshot.SnapshotData): a login, team, run or link they do not hold is "not provided".
"""
from __future__ import annotations

import difflib

import copy
import re
import threading
from pathlib import Path
from datetime import date, datetime, timezone
from typing import Any, Iterable

import yaml

from checks.registry import CHECK_NUMBERS, CHECKS
from checks.result import CheckResult, Status
from checks.snapshot import (
    Artifact,
    ChangedFile,
    CheckRun,
    Comment,
    Commit,
    PRSnapshot,
    ReuseSource,
    SweepRun,
    Unavailable,
    UpstreamRef,
    UserAccess,
)
from recipes.config import RepoConfig
from recipes.source import MemorySource

BASE_SHA = "ba5e" + "0" * 36
HEAD_SHA = "feed" + "1" * 36
REPO = "SemiAnalysisAI/InferenceX"
T0 = datetime(2026, 10, 8, 12, 0, tzinfo=timezone.utc)
# InferenceX's own settings (its maintainers, teams, bot account and srt-slurm forks), which the
# package's defaults no longer carry: a test about InferenceX passes them as `config`.
INFERENCEX_CONFIG_FILE = Path(__file__).resolve().parents[1] / "examples" / "inferencex" / "infx-review.yml"


def inferencex_config() -> dict:
    """The example config of InferenceX (examples/inferencex/infx-review.yml), as a `config` value."""
    return yaml.safe_load(INFERENCEX_CONFIG_FILE.read_text(encoding="utf-8"))


# The keys build_snapshot reads (this module's docstring); case files and their bases are held to them.
SNAPSHOT_KEYS = frozenset({
    "repo", "number", "title", "body", "author", "state", "draft", "base_ref", "html_url",
    "base_sha", "head_sha", "current_head_sha", "base", "head", "head_tree", "target", "target_changes", "files",
    "commits", "signoff", "comments", "labels", "check_runs", "runs", "reuse", "upstream", "users",
    "team_members", "review_date", "config", "unreadable",
})
# The snapshot keys that are trees ({path: text}); a `head` value of null deletes the file in the PR.
TREE_KEYS = ("base", "head", "head_tree", "target", "target_changes")
LINK_KEY = "link"  # a tree value {link: "target text"} is a symbolic link


def tree_source(tree: dict[str, Any]) -> MemorySource:
    """A MemorySource of a builder tree: text values are files, {link: text} values links."""
    files = {p: v for p, v in tree.items() if not isinstance(v, dict)}
    links = {}
    for p, v in tree.items():
        if isinstance(v, dict):
            assert set(v) == {LINK_KEY} and isinstance(v[LINK_KEY], str), f"{p}: a tree value is text or {{link: text}}"
            links[p] = v[LINK_KEY]
    return MemorySource(files, links)


def read_yaml(text: str) -> Any:
    """A test data file (case, base, world) as plain data, read with libyaml: PyYAML's pure-Python
    reader took 1.1 s for the 243 check cases, which every worker reads at collection and each
    test again, and about 3 s for the 1.5 MB hostile conc-list case."""
    return yaml.load(text, Loader=yaml.CSafeLoader)


def _maybe(value: Any, build) -> Any:
    """`Unavailable` when the spec says so, else `build(value)`. (An Unavailable is falsy, so `or` won't do.)"""
    missing = _unavailable(value)
    return build(value) if missing is None else missing


def _unavailable(value: Any) -> Unavailable | None:
    if isinstance(value, Unavailable):
        return value
    if isinstance(value, dict) and set(value) == {"unavailable"}:
        return Unavailable(reason=str(value["unavailable"]))
    return None


def _deep_update(base: dict, override: dict) -> dict:
    out = copy.deepcopy(base)
    for k, v in override.items():
        out[k] = _deep_update(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out


def _patch(before: object, after: object) -> str | None:
    """The unified diff GitHub shows for a text file (3 lines of context, no file header)."""
    if not isinstance(before, str) or not isinstance(after, str):
        return None
    return "\n".join(list(difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=3))[2:])


def diff_trees(base: dict[str, str], head: dict[str, str]) -> list[ChangedFile]:
    """Changed files between two trees, in path order (no rename detection), with their patches."""
    out = []
    for path in sorted(set(base) | set(head)):
        if path not in head:
            out.append(ChangedFile(path=path, status="removed", deletions=str(base[path]).count("\n"),
                                   patch=_patch(base[path], "")))
        elif path not in base:
            out.append(ChangedFile(path=path, status="added", additions=str(head[path]).count("\n"),
                                   patch=_patch("", head[path])))
        elif base[path] != head[path]:
            out.append(ChangedFile(path=path, status="modified", patch=_patch(base[path], head[path])))
    return out


def make_comment(spec: dict, *, default_id: int = 1, pr: int = 1, repo: str = REPO) -> Comment:
    spec = dict(spec)
    cid = int(spec.pop("id", default_id))
    kind = spec.pop("kind", "issue_comment")
    anchor = {"issue_comment": "issuecomment-", "review": "pullrequestreview-", "review_comment": "discussion_r"}[kind]
    spec.setdefault("url", f"https://github.com/{repo}/pull/{pr}#{anchor}{cid}")
    spec.setdefault("created_at", T0)
    spec.setdefault("author", "someone")
    return Comment(id=cid, kind=kind, **spec)


def _commit_ref(ref: Any, base_sha: str, head_sha: str) -> str:
    return {"head": head_sha, "base": base_sha}.get(str(ref), str(ref))


def _sweep_run(spec: dict, base_sha: str, head_sha: str, repo: str) -> SweepRun:
    spec = dict(spec)
    run_id = int(spec.pop("id"))
    head = _commit_ref(spec.pop("head", "head"), base_sha, head_sha)
    artifacts: Any = spec.pop("artifacts", [])
    if _unavailable(artifacts) is None:
        artifacts = [Artifact(name=a) if isinstance(a, str) else Artifact(**a) for a in artifacts]
    else:
        artifacts = _unavailable(artifacts)
    fields: dict[str, Any] = {}
    for key in ("throughput", "evals"):
        if key in spec:
            value = spec.pop(key)
            missing = _unavailable(value)
            fields[key] = value if missing is None else missing
    return SweepRun(
        run_id=run_id,
        head_sha=head,
        event=spec.pop("event", "pull_request"),
        status=spec.pop("status", "completed"),
        conclusion=spec.pop("conclusion", "success"),
        workflow_path=spec.pop("workflow", ".github/workflows/run-sweep.yml"),
        created_at=spec.pop("created_at", T0),
        html_url=spec.pop("html_url", f"https://github.com/{repo}/actions/runs/{run_id}"),
        artifacts=artifacts,
        meta=spec.pop("meta", {}),
        **fields,
    )


def build_snapshot(spec: dict | None = None, **overrides: Any) -> PRSnapshot:
    """A frozen PRSnapshot from the compact dict described in this module's docstring."""
    spec = {**(spec or {}), **overrides}
    repo = spec.get("repo", REPO)
    number = int(spec.get("number", 1))
    base_sha = spec.get("base_sha", BASE_SHA)
    head_sha = spec.get("head_sha", HEAD_SHA)

    base_files: dict[str, str] = dict(spec.get("base", {}))
    if "head_tree" in spec:
        head_files = dict(spec["head_tree"])
    else:
        head_files = dict(base_files)
        for path, text in (spec.get("head") or {}).items():
            if text is None:
                head_files.pop(path, None)
            else:
                head_files[path] = text

    files: Any
    if "files" in spec:
        files = _unavailable(spec["files"])
        if files is None:
            files = [ChangedFile(path=f) if isinstance(f, str) else ChangedFile(**f) for f in spec["files"]]
    else:
        files = diff_trees(base_files, head_files)

    commits: Any = spec.get("commits", [head_sha])
    if _unavailable(commits) is None:
        commits = [Commit(sha=c) if isinstance(c, str) else Commit(**c) for c in commits]
    else:
        commits = _unavailable(commits)

    signoff = None
    if spec.get("signoff"):
        signoff = make_comment(spec["signoff"], default_id=9001, pr=number, repo=repo)

    comments: Any = spec.get("comments", [])
    if _unavailable(comments) is None:
        comments = [make_comment(c, default_id=100 + i, pr=number, repo=repo) for i, c in enumerate(comments)]
    else:
        comments = _unavailable(comments)

    labels: Any = spec.get("labels", [])
    labels = _maybe(labels, list)

    check_runs: Any = spec.get("check_runs", {})
    if _unavailable(check_runs) is None:
        resolved: dict[str, Any] = {}
        for ref, runs in check_runs.items():
            sha = _commit_ref(ref, base_sha, head_sha)
            if _unavailable(runs) is not None:
                resolved[sha] = _unavailable(runs)
                continue
            items = []
            for r in runs:
                r = dict(r)
                run_id = r.get("run_id")
                if run_id and not r.get("details_url"):
                    r["details_url"] = f"https://github.com/{repo}/actions/runs/{run_id}/job/1"
                r.setdefault("conclusion", "success")
                items.append(CheckRun(head_sha=sha, **r))
            resolved[sha] = items
        check_runs = resolved
    else:
        check_runs = _unavailable(check_runs)

    sweep_runs: Any = spec.get("runs", [])
    if _unavailable(sweep_runs) is None:
        sweep_runs = {int(r["id"]): _sweep_run(r, base_sha, head_sha, repo) for r in sweep_runs}
    else:
        sweep_runs = _unavailable(sweep_runs)

    reuse = None
    if spec.get("reuse"):
        r = dict(spec["reuse"])
        reuse = ReuseSource(
            run_id=int(r["run_id"]),
            command=r.get("command", "/use"),
            explicit=r.get("explicit", True),
            comment=make_comment(r.get("comment", {"body": f"/use {r['run_id']}"}), pr=number, repo=repo),
        )

    upstream = {}
    for u in spec.get("upstream", []):
        u = dict(u)
        u.setdefault("url", f"https://github.com/{u.get('repo', 'vllm-project/recipes')}/pull/{u.get('number', 1)}")
        upstream[u["url"]] = UpstreamRef(**u)

    users = {
        login: _maybe(v, lambda d, login=login: UserAccess(login=login, **d)) for login, v in spec.get("users", {}).items()
    }
    team_members = {team: _maybe(v, list) for team, v in spec.get("team_members", {}).items()}

    review_date = spec.get("review_date", date(2026, 10, 8))
    if isinstance(review_date, str):
        review_date = date.fromisoformat(review_date)
    config = RepoConfig.model_validate(_deep_update(RepoConfig().model_dump(), spec.get("config", {})))

    return PRSnapshot(
        repo=repo,
        number=number,
        title=spec.get("title", ""),
        body=spec.get("body", ""),
        author=spec.get("author", "author"),
        state=spec.get("state", "open"),
        draft=bool(spec.get("draft", False)),
        base_ref=spec.get("base_ref", "main"),
        base_sha=base_sha,
        head_sha=head_sha,
        current_head_sha=spec.get("current_head_sha", head_sha),
        files=files,
        base=tree_source(base_files),
        head=tree_source(head_files),
        target=_target_source(spec, base_files),
        commits=commits,
        signoff=signoff,
        comments=comments,
        labels=labels,
        check_runs=check_runs,
        sweep_runs=sweep_runs,
        reuse=reuse,
        upstream=upstream,
        users=users,
        team_members=team_members,
        review_date=review_date,
        config=config,
        unreadable=dict(spec.get("unreadable", {})),
        html_url=spec.get("html_url", f"https://github.com/{repo}/pull/{number}"),
    )


def _target_source(spec: dict, base_files: dict[str, Any]) -> MemorySource | None:
    """The target tip: `target` in full, or base overlaid with `target_changes`; None (= the
    merge base) when neither is given."""
    assert not ("target" in spec and "target_changes" in spec), "give `target` or `target_changes`, not both"
    if "target" in spec:
        return tree_source(spec["target"])
    if "target_changes" not in spec:
        return None
    tip = dict(base_files)
    for path, text in spec["target_changes"].items():
        if text is None:
            tip.pop(path, None)
        else:
            tip[path] = text
    return tree_source(tip)


class FakeCheck:
    """A check with scripted behaviour: a fixed result, an N/A reason, or an exception."""

    def __init__(
        self,
        number: int,
        name: str | None = None,
        *,
        result: CheckResult | None = None,
        na: str | None = None,
        raises: BaseException | None = None,
        advisory: bool | None = None,
        retired: bool = False,
    ):
        registered = {c.number: c for c in CHECKS}.get(number)
        self.number = number
        self.name = name or (registered.name if registered else f"Fake {number}")
        self.advisory = advisory if advisory is not None else bool(registered and registered.advisory)
        self.escalates = bool(registered and registered.escalates)
        self.retired = retired
        self.result = result or CheckResult.passed(f"fake check {number} passed")
        self.na = na
        self.raises = raises
        self.calls = 0

    def applies(self, ctx) -> str | None:
        return self.na

    def evaluate(self, ctx) -> CheckResult:
        self.calls += 1
        if self.raises is not None:
            raise self.raises
        return self.result


def fake_checks(overrides: dict[int, FakeCheck | CheckResult | str] | None = None) -> list[FakeCheck]:
    """One passing fake per registered check, named like it; `overrides` maps a number to a
    FakeCheck, a CheckResult, or an N/A reason string."""
    out = []
    for number in sorted(CHECK_NUMBERS):
        o = (overrides or {}).get(number)
        if isinstance(o, FakeCheck):
            out.append(o)
        elif isinstance(o, CheckResult):
            out.append(FakeCheck(number, result=o))
        elif isinstance(o, str):
            out.append(FakeCheck(number, na=o))
        else:
            out.append(FakeCheck(number))
    return out


def statuses(verdict) -> dict[int, str]:
    return {r.number: r.status.value for r in verdict.rows}


def all_status(value: Status, numbers: Iterable[int]) -> dict[int, str]:
    return {n: value.value for n in numbers}


def check_row(number: int, spec: dict | PRSnapshot):
    """The row of check `number` alone for a PR: `spec` is build_snapshot's dict or a snapshot."""
    from checks.engine import evaluate

    snapshot = spec if isinstance(spec, PRSnapshot) else build_snapshot(spec)
    return evaluate(snapshot, only={number}).row(number)


# An empty runners file: enough of the base tree for a master config's runner names to resolve.
RUNNERS = {"configs/runners.yaml": "labels: {}\n"}


def _entry_head(key: str, *, image: str, model: str, runner: str, precision: str, framework: str,
                prefix: str | None = None) -> str:
    return f"""{key}:
  image: {image}
  model: {model}
  model-prefix: {prefix or key.split("-", 1)[0]}
  runner: {runner}
  precision: {precision}
  framework: {framework}
  multinode: false
  scenarios:
"""


def single_node_entry(key: str, *, image: str, model: str, runner: str, precision: str, framework: str,
                      isl: int = 8192, osl: int = 1024, arm: str = "tp: 8, ep: 1, conc-start: 4, conc-end: 4",
                      prefix: str | None = None) -> str:
    """One single-node master-config entry with one fixed-seq-len arm, as `<vendor>-master.yaml`
    text; `prefix` (the model prefix) defaults to the key's first word."""
    head = _entry_head(key, image=image, model=model, runner=runner, precision=precision, framework=framework,
                       prefix=prefix)
    return head + f"""    fixed-seq-len:
    - isl: {isl}
      osl: {osl}
      search-space:
      - {{ {arm} }}
"""


def agentic_entry(key: str, *, image: str = "rocm/atom-dev:n1", model: str = "deepseek-ai/DeepSeek-V4.1-Flash",
                  runner: str = "cluster:mi355x-amds", precision: str = "fp4", framework: str = "atom",
                  scenario: str = "agentic-coding", prefix: str | None = None,
                  arm: str = "tp: 2, ep: 1, spec-decoding: draft_model, conc-list: [1]") -> str:
    """One single-node master-config entry with one search-space arm and no sequence lengths
    (an agentic-coding arm; `scenario` renames it), as `<vendor>-master.yaml` text. The
    defaults are a dsv41flash atom entry on MI355X; `prefix` defaults to the key's first word."""
    head = _entry_head(key, image=image, model=model, runner=runner, precision=precision, framework=framework,
                       prefix=prefix)
    return head + f"""    {scenario}:
    - search-space:
      - {{ {arm} }}
"""


def emulator_github(emu, token: str | None = None, **kw):
    """A PyGithub client of a running emulator as its bot (or as `token`'s user), reading no
    environment; `kw` goes to make_github (budget_s, policy, clock)."""
    from bot.github_client import make_github, token_auth

    kw.setdefault("env", {})
    return make_github(emu.url, auth=token_auth(token or emu.world.bot.token), **kw)


def emulator_api(emu, token: str | None = None, **kw):
    """The bot's GitHubApi on a running emulator (see emulator_github). A test that scripts a
    push, a failure or a pause at one request uses hooked_api."""
    from bot.github_client import GitHubApi

    return GitHubApi(emulator_github(emu, token, **kw))


HOOKED_CALLS = ("get", "list", "post", "patch", "delete")


def hooked_api(emu, *, before=None, after=None, token: str | None = None, **kw):
    """The bot's GitHubApi on a running emulator whose calls (`get`, `list` with all its pages,
    `post`, `patch`, `delete`) run `before(call, path)` ahead of the request and `after(call,
    path)` once it returned: a hook scripts a push, a failure (raise in `before`: a write GitHub
    refused or lost) or a pause at one request. Hooks run on the calling thread."""
    from bot.github_client import GitHubApi

    def hooked(call: str):
        def method(self, path, *args, **kwargs):
            if before is not None:
                before(call, path)
            out = getattr(GitHubApi, call)(self, path, *args, **kwargs)
            if after is not None:
                after(call, path)
            return out

        return method

    api_class = type("HookedApi", (GitHubApi,), {call: hooked(call) for call in HOOKED_CALLS})
    return api_class(emulator_github(emu, token, **kw))


class PushOnce:
    """Pushes `files` as a new commit on the emulator's PR the first time it is called (from any
    thread; later calls do nothing); `sha` is that commit. A hook of hooked_api."""

    def __init__(self, emu, files: dict[str, str], message: str = "Late push"):
        self.emu, self.files, self.message = emu, files, message
        self.sha: str | None = None
        self._lock = threading.Lock()

    def __call__(self) -> str:
        with self._lock:
            if self.sha is None:
                self.sha = self.emu.push(self.files, message=self.message)
        return self.sha


def failing_api(emu, suffix: str, error: BaseException, times: int | None = 1):
    """The bot's client of the emulator whose first `times` POSTs to a path ending in `suffix`
    (None: every one) raise `error` before reaching it, as a refused or lost write looks to the
    bot. `failed` counts them."""

    def refuse(call: str, path: str) -> None:
        if call == "post" and path.endswith(suffix) and (times is None or api.failed < times):
            api.failed += 1
            raise error

    api = hooked_api(emu, before=refuse)
    api.failed = 0
    return api


def handle_twice(api, event_name: str, payload: dict) -> tuple:
    """`payload` handled twice on `api` (GitHub redelivering it), the client closed after: the
    two HandleResults."""
    from bot.commands.handle_event import handle_event

    try:
        return (handle_event(api, event_name, payload, env={}), handle_event(api, event_name, payload, env={}))
    finally:
        api.close()


REPO_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "repos"


def fixture_files(name: str) -> dict[str, str]:
    """The files of the repository fixture tests/fixtures/repos/`name` as {path: text}, ready for
    a MemorySource or a snapshot tree."""
    root = REPO_FIXTURES / name
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}


WORLDS_DIR = Path(__file__).resolve().parent.parent / "ghsim" / "worlds"


def world_snapshot(world: str | Path, dest: str | Path, *, review_date: date | None = None) -> PRSnapshot:
    """The snapshot local mode builds for a sandbox world (`seed`, `rejected`, or a directory),
    with no server: the world's git repo is built in `dest` (an empty directory, e.g. tmp_path)."""
    from bot.local import build_local_snapshot
    from ghsim.world import build_world_repo

    world_dir = Path(world) if Path(world).is_dir() else WORLDS_DIR / str(world)
    built = build_world_repo(world_dir, dest)
    return build_local_snapshot(
        built.path,
        built.base_sha,
        built.head_sha,
        pr=built.world.pr,
        pr_dir=world_dir,
        repo=built.world.repo,
        commit_aliases=built.shas,
        team_members=dict(built.world.teams),
        review_date=review_date,
    )


class PatchedSource:
    """A file source with one file's text replaced (`old` must occur in it): a world's head
    tree with the fix a test applies."""

    def __init__(self, src: Any, path: str, old: str, new: str):
        self._src, self._path, self._old, self._new = src, path, old, new

    def read(self, path: str) -> bytes | None:
        data = self._src.read(path)
        if path == self._path and data is not None:
            text = data.decode("utf-8")
            assert self._old in text, f"{self._old!r} is not in {path}"
            return text.replace(self._old, self._new).encode("utf-8")
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._src, name)


# The seed world's two findings (ghsim/worlds/README.md, Check 15) and the texts that fix them:
# the body's interval value, and the draft precision the body and changelog state (the sign-off
# records attn.wo_a BF16 -> FP8, which the body omits and the changelog denies).
SEED_CHANGELOG = "inferencex-e2e/perf-changelog.yaml"
SEED_FIXES_BODY = (
    ("TP2 c64 = 4", "TP2 c64 = 8"),
    ("Two compute precisions change with the image bump: routed-expert activations MXFP4 → MXFP8 and RoPE "
     "cos/sin tables FP32 → BF16.",
     "Three compute precisions change with the image bump: attn.wo_a BF16 → FP8, routed-expert activations "
     "MXFP4 → MXFP8 and RoPE cos/sin tables FP32 → BF16."),
)
SEED_FIX_CHANGELOG = (
    "No data-type or precision change to the DSpark draft.",
    "attn.wo_a moves from BF16 to FP8, routed-expert activations from MXFP4 to MXFP8 and RoPE tables from FP32 to BF16.",
)


def fixed_seed(snap: PRSnapshot) -> PRSnapshot:
    """The seed snapshot with both of its Check 15 findings fixed (a clean PASS)."""
    body = snap.body
    for old, new in SEED_FIXES_BODY:
        assert old in body, old
        body = body.replace(old, new)
    head = PatchedSource(snap.head, SEED_CHANGELOG, *SEED_FIX_CHANGELOG)
    return snap.model_copy(update={"body": body, "head": head})


QUADRANT_POINT = re.compile(r'^\s+"([^"]*)":::(\w+): \[([0-9.]+), ([0-9.]+)\]$')


def quadrant_points(chart: str) -> dict[str, list[tuple[str, float, float]]]:
    """A Check 14 `quadrantChart`'s points by class (`f` frontier, `o` off it): (label, x, y)."""
    out: dict[str, list[tuple[str, float, float]]] = {"f": [], "o": []}
    for line in chart.splitlines():
        m = QUADRANT_POINT.match(line)
        if m:
            out[m.group(2)].append((m.group(1), float(m.group(3)), float(m.group(4))))
    return out
