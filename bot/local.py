"""Local mode: a PRSnapshot from a git checkout plus an optional PR description file, no GitHub.

Trees come from git (`recipes.source.GitSource`): the merge base of BASE and HEAD is the PR
base, BASE itself is the target branch tip, HEAD is the assessed commit. The diff and the
commit list come from git. Everything only GitHub knows (comments, labels, check runs, sweep
runs and their artifacts, users, upstream PRs) comes from the `--pr` YAML (bot/prfile.py
PRFile); the snapshot's accessors (checks.snapshot.SnapshotData) answer from it, and the checks
decide which of it matters (the accepted reuse source included: checks/sweep_runs.py). A key absent from that file means "unknown" and becomes `Unavailable("not provided in
local mode: ...")`; an explicit empty list means "none".
"""
from __future__ import annotations

import os

import re
import subprocess
import threading
from datetime import date, timezone
from pathlib import Path
from typing import Iterable, Any

from pydantic import ValidationError

from bot.prfile import PRComment, PRFile, PRRun
from bot.dates import review_day
from checks.signoff_keys import signoff_key
from checks.snapshot import (
    Artifact,
    ChangedFile,
    CheckRun,
    Comment,
    Commit,
    ExternalTree,
    PRSnapshot,
    SweepRun,
    Unavailable,
    UpstreamRef,
    UserAccess,
)
from recipes.config import CONFIG_PATH, RepoConfig, load_config_file, read_repo_config
from recipes.errors import RecipeError
from recipes.layout import benchmark_markers, detect_layout, is_benchmark_repository
from recipes.source import GitSource
from recipes.yamlio import YamlDoc, load_yaml

NOT_PROVIDED = "not provided in local mode: {what}"
LOCAL_REPO_FALLBACK = "local/{name}"
_STATUS = {"A": "added", "M": "modified", "D": "removed", "R": "renamed", "C": "copied", "T": "changed"}
_GITHUB_REMOTE_RE = re.compile(r"github\.com[:/]([A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+?)(?:\.git)?/?$")
# Ids for comments the PR file leaves without one; far from ids people write by hand.
_FIRST_SYNTHETIC_ID = 900_000_001


MSG_CONFIG_UNREADABLE = "cannot read the configuration file {path}: {error}"


def read_config_file(path: str | Path) -> bytes:
    """The bytes of a `--config` file, which must be valid: a file given explicitly that cannot
    be applied is a usage error naming every problem, not a note in a verdict."""
    try:
        data, findings = load_config_file(path)
    except OSError as e:
        raise LocalModeError(MSG_CONFIG_UNREADABLE.format(path=path, error=e.strerror or e)) from None
    if findings:
        raise LocalModeError("\n".join(str(f) for f in findings))
    return data


class ConfiguredTree(GitSource):
    """The target branch as the bot reads it, with `--config`'s bytes in place of its own
    `.github/infx-review.yml` (a repository without one, such as InferenceX, reviewed with the
    settings it would have)."""

    def __init__(self, repo: str | Path, sha: str, config: bytes):
        super().__init__(repo, sha, resolved=True)
        self.config_bytes = config

    def read(self, path: str) -> bytes | None:
        if path.strip("/") == CONFIG_PATH:
            return self.config_bytes
        return super().read(path)


MSG_NOT_BENCHMARK = ("{path} is not an InferenceX-style benchmark repository: neither --base {base} nor --head {head} "
                     "has {markers}; give the root of a benchmark checkout (or set paths: in .github/infx-review.yml)")


class LocalModeError(Exception):
    """A usage problem (bad ref, bad PR file): the message names the object, file and line."""


def _git(repo: str, *args: str) -> str:
    try:
        proc = subprocess.run(
            ["git", "-C", repo, "-c", "core.quotepath=off", *args],
            check=True, capture_output=True,
        )
    except FileNotFoundError as e:
        raise LocalModeError("git is not installed or not on PATH") from e
    except subprocess.CalledProcessError as e:
        err = e.stderr.decode("utf-8", "replace").strip().splitlines()
        raise LocalModeError(f"git {' '.join(args)} failed in {repo}: {err[-1] if err else e}") from None
    return proc.stdout.decode("utf-8", "replace")


def resolve_commit(repo: str, ref: str, what: str = "ref") -> str:
    try:
        return _git(repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}").strip()
    except LocalModeError:
        raise LocalModeError(f"{what} {ref!r} is not a commit in {repo}") from None


def _repo_name(repo_path: str) -> str:
    try:
        url = _git(repo_path, "config", "--get", "remote.origin.url").strip()
    except LocalModeError:
        url = ""
    m = _GITHUB_REMOTE_RE.search(url)
    return m.group(1) if m else LOCAL_REPO_FALLBACK.format(name=Path(repo_path).resolve().name or "repo")


# --- other repositories a runner clones (--external-repo OWNER/NAME=DIR) -------------------
MSG_EXTERNAL_SPEC = "--external-repo {spec!r}: expected OWNER/NAME=DIR"
MSG_EXTERNAL_NOT_GIT = "--external-repo {repo}={path}: not a git repository"
MSG_EXTERNAL_NO_REF = "{repo} has no ref {ref!r} in {path}"
MSG_EXTERNAL_TOO_EARLY = "{repo} branch {ref!r} has no commit on or before {day} in {path}"
_HEX = re.compile(r"^[0-9a-f]{7,40}$")


def add_review_inputs(parser: Any, when: str = "", config_default: str | None = None) -> None:
    """The `--external-repo` and `--config` options of a command that reviews or traces a tree
    (parsed by `external_repos` and `read_config_file`); `when` says when they apply."""
    lead = f"{when}: " if when else ""
    parser.add_argument("--external-repo", metavar="OWNER/NAME=DIR", action="append", default=[],
                        help=f"{lead}a local clone of a repository the runners clone (e.g. NVIDIA/srt-slurm=../srt-slurm), "
                             "read as a review reads it: its recipes and setup scripts; repeatable")
    parser.add_argument("--config", metavar="FILE", default=config_default,
                        help=f"{lead}apply this configuration instead of the target branch's .github/infx-review.yml "
                             "(e.g. examples/inferencex/infx-review.yml for an InferenceX checkout)")


def external_repos(specs: Iterable[str]) -> dict[str, str]:
    """`OWNER/NAME=DIR` options -> {owner/name (lower case): DIR}, each DIR checked to be git."""
    out: dict[str, str] = {}
    for spec in specs:
        repo, sep, path = spec.partition("=")
        if not sep or not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+", repo) or not path:
            raise LocalModeError(MSG_EXTERNAL_SPEC.format(spec=spec))
        try:
            _git(path, "rev-parse", "--git-dir")
        except LocalModeError:
            raise LocalModeError(MSG_EXTERNAL_NOT_GIT.format(repo=repo, path=path)) from None
        out[repo.lower()] = path
    return out


class LocalExternal:
    """`PRSnapshot.external` over local clones: a branch is read as it stood on the review date
    (its newest first-parent commit up to the end of that day), as the runner would have cloned
    it then; a tag or a commit as it is. Each (repository, ref) is resolved once."""

    def __init__(self, dirs: dict[str, str], day: date):
        self.dirs, self.day = dirs, day
        self._trees: dict[tuple[str, str], ExternalTree | Unavailable] = {}
        self._lock = threading.Lock()

    def __call__(self, repo: str, ref: str) -> ExternalTree | Unavailable | None:
        path = self.dirs.get(repo.lower())
        if path is None:
            return None
        key = (repo.lower(), ref)
        with self._lock:
            if key not in self._trees:
                self._trees[key] = self._resolve(repo, path, ref)
            return self._trees[key]

    def _verify(self, path: str, name: str) -> str | None:
        try:
            return _git(path, "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}").strip() or None
        except LocalModeError:
            return None

    def _resolve(self, repo: str, path: str, ref: str) -> ExternalTree | Unavailable:
        sha = self._verify(path, f"refs/tags/{ref}") or (self._verify(path, ref) if _HEX.match(ref) else None)
        if sha is None:
            branch = next((b for b in (ref if ref == "HEAD" else f"refs/heads/{ref}", f"refs/remotes/origin/{ref}")
                           if self._verify(path, b)), None)
            if branch is None:
                return Unavailable(reason=MSG_EXTERNAL_NO_REF.format(repo=repo, ref=ref, path=path))
            try:
                sha = _git(path, "rev-list", "-1", "--first-parent", f"--before={self.day.isoformat()}T23:59:59Z",
                           branch).strip()
            except LocalModeError as e:
                return Unavailable(reason=str(e))
            if not sha:
                return Unavailable(reason=MSG_EXTERNAL_TOO_EARLY.format(repo=repo, ref=ref, day=self.day, path=path))
        return ExternalTree(repo=repo, ref=ref, sha=sha, source=GitSource(path, sha, resolved=True))


# --- the diff ----------------------------------------------------------------------------
# GitHub's files API leaves `patch` out for very large diffs; local mode does the same, so a
# 50 MB file does not become a 50 MB patch (and 800,000 line objects) in memory.
MAX_PATCH_LINES = 20_000


def _split_z(text: str) -> list[str]:
    parts = text.split("\0")
    return parts[:-1] if parts and parts[-1] == "" else parts


def _patches(repo: str, base: str, head: str, exclude: Iterable[str] = ()) -> dict[str, str]:
    """GitHub-style patches (hunks only) keyed by new path (old path for deletions). Files in
    `exclude` (too big: GitHub's files API gives them no patch either) are not diffed at all."""
    out: dict[str, str] = {}
    spec = [f":(exclude,literal){p}" for p in exclude]
    text = _git(repo, "diff", "-M", "--no-color", "--no-ext-diff", base, head, *(["--", ".", *spec] if spec else []))
    for chunk in re.split(r"(?m)^(?=diff --git )", text):
        if not chunk.startswith("diff --git "):
            continue
        path = None
        header_end = chunk.find("\n@@")
        for line in (chunk if header_end < 0 else chunk[:header_end]).splitlines():
            if line.startswith("+++ b/"):
                path = line[6:]
            elif line.startswith("rename to "):
                path = path or line[10:]
            elif line.startswith("--- a/") and path is None:
                path = line[6:]
            elif line.startswith("@@"):
                break
        hunk_at = chunk.find("\n@@")
        if path is None or hunk_at < 0:
            continue  # binary or mode-only change: GitHub gives no patch either
        out[path] = chunk[hunk_at + 1:].rstrip("\n")
    return out


def changed_files(repo: str, base: str, head: str) -> list[ChangedFile]:
    status_parts = _split_z(_git(repo, "diff", "--name-status", "-M", "-z", base, head))
    numstat_parts = _split_z(_git(repo, "diff", "--numstat", "-M", "-z", base, head))
    counts: dict[str, tuple[int, int]] = {}
    i = 0
    while i < len(numstat_parts):
        fields = numstat_parts[i].split("\t")
        adds, dels = (int(x) if x.isdigit() else 0 for x in fields[:2])
        if len(fields) >= 3 and fields[2]:
            counts[fields[2]] = (adds, dels)
            i += 1
        else:  # rename: "<a>\t<d>\t" then old path, new path
            counts[numstat_parts[i + 2]] = (adds, dels)
            i += 3
    big = sorted(p for p, (a, d) in counts.items() if a + d > MAX_PATCH_LINES)
    patches = _patches(repo, base, head, exclude=big)
    files: list[ChangedFile] = []
    i = 0
    while i < len(status_parts):
        code = status_parts[i]
        kind = _STATUS.get(code[:1], "changed")
        if code[:1] in ("R", "C"):
            old, new = status_parts[i + 1], status_parts[i + 2]
            i += 3
        else:
            old, new = None, status_parts[i + 1]
            i += 2
        adds, dels = counts.get(new, (0, 0))
        files.append(ChangedFile(
            path=new, status=kind, previous_path=old, patch=patches.get(new),
            additions=adds, deletions=dels,
        ))
    return files


def commits_between(repo: str, base: str, head: str) -> list[Commit]:
    out = []
    text = _git(repo, "log", "--reverse", "--format=%H%x00%P%x00%B%x1e", f"{base}..{head}")
    for record in text.split("\x1e"):
        record = record.strip("\n")
        if not record:
            continue
        sha, parents, message = record.split("\0", 2)
        out.append(Commit(sha=sha, parents=parents.split(), message=message.strip()))
    return out


# --- the PR file -------------------------------------------------------------------------
def load_pr_file(path: str | Path) -> tuple[PRFile, YamlDoc]:
    p = Path(path)
    try:
        data = p.read_bytes()
    except OSError as e:
        raise LocalModeError(f"cannot read PR file {p}: {e.strerror or e}") from None
    try:
        doc = load_yaml(data, str(p))
    except RecipeError as e:
        raise LocalModeError(str(e.finding)) from None
    raw = doc.data if doc.data is not None else {}
    if not isinstance(raw, dict):
        raise LocalModeError(f"{p}:1: a PR file is a mapping of keys (see bot/prfile.py)")
    try:
        return PRFile.model_validate(raw), doc
    except ValidationError as e:
        problems = []  # every problem, one line each, in the order of the file
        for err in e.errors():
            loc = tuple(err["loc"])
            problems.append((doc.line(*loc) or 1, f"{'.'.join(map(str, loc))}: {err['msg']}"))
        raise LocalModeError("\n".join(f"{p}:{line}: {msg}" for line, msg in sorted(problems, key=lambda x: x[0]))) from None


def _comment(c: PRComment, cid: int, repo: str, number: int) -> Comment:
    return Comment(
        id=cid,
        kind=c.kind,
        author=c.author,
        association=c.association,
        is_bot=c.user_type == "Bot",
        body=c.body,
        created_at=c.created_at,
        updated_at=c.updated_at,
        url=f"https://github.com/{repo}/pull/{number}#{signoff_key(c.kind, cid)}",
    )


def _by_time(comments: list[Comment]) -> list[Comment]:
    """Creation order when every comment has a time; otherwise the file's order is kept."""
    if any(c.created_at is None for c in comments):
        return comments
    return sorted(comments, key=lambda c: c.created_at if c.created_at.tzinfo else c.created_at.replace(tzinfo=timezone.utc))


class _Resolver:
    def __init__(self, repo_path: str, base_sha: str, head_sha: str, aliases: dict[str, str], pr_path: str, doc: YamlDoc | None):
        self.repo_path, self.aliases, self.pr_path, self.doc = repo_path, aliases, pr_path, doc
        self.fixed = {"head": head_sha, "base": base_sha}

    def __call__(self, ref: str, *keys: Any) -> str:
        if ref in self.fixed:
            return self.fixed[ref]
        if ref in self.aliases:
            return self.aliases[ref]
        try:
            return resolve_commit(self.repo_path, ref)
        except LocalModeError:
            line = self.doc.line(*keys) if self.doc else None
            raise LocalModeError(
                f"{self.pr_path}:{line or 1}: commit {ref!r} does not resolve in {self.repo_path}"
            ) from None


def _sweep_run(run: PRRun, head_sha: str, repo: str, artifacts_root: Path | None, config: RepoConfig) -> SweepRun:
    artifacts = [Artifact(name=a.name, expired=a.expired) for a in run.artifacts]
    fields: dict[str, Any] = {}
    meta: dict[str, dict] = {}
    if artifacts_root is None:
        missing = Unavailable(reason=NOT_PROVIDED.format(what=f"artifacts_dir (artifact contents of run {run.id})"))
        fields = {"throughput": missing, "evals": missing}
    else:
        # Only a PR file with runs reads artifacts (recipes/artifacts.py: symbolic links and files
        # over the caps are refused, never followed or read).
        from recipes.artifacts import META_FILE, folder_files, json_rows, rows_from

        sweep = config.sweep
        per_artifact: dict[str, list[dict] | Unavailable] = {}
        for a in run.artifacts:
            folder = artifacts_root / str(run.id) / a.name
            if a.expired:
                per_artifact[a.name] = Unavailable(reason=f"artifact {a.name} of run {run.id} expired")
            elif not _inside(folder, artifacts_root):
                per_artifact[a.name] = Unavailable(reason=f"artifact folder {folder} is outside artifacts_dir {artifacts_root}")
            elif not folder.is_dir() and not folder.is_symlink():
                per_artifact[a.name] = Unavailable(reason=f"artifact folder {folder} is missing")
            else:
                rows, objects, problems = json_rows(folder_files(folder, artifacts_root))
                if META_FILE in objects:
                    meta[a.name] = objects[META_FILE]
                per_artifact[a.name] = (
                    Unavailable(reason=f"unreadable artifact file {problems[0]}") if problems else rows
                )
        # The aggregate artifact is authoritative; per-job artifacts stand in only without it.
        throughput = rows_from(per_artifact, sweep.throughput_artifact, "bmk_")
        evals = rows_from(per_artifact, sweep.eval_artifact, "eval_")
        fields = {"throughput": throughput, "evals": evals}
    return SweepRun(
        run_id=run.id,
        head_sha=head_sha,
        event=run.event,
        status=run.status,
        conclusion=run.conclusion,
        workflow_path=run.workflow,
        created_at=run.created_at,
        html_url=f"https://github.com/{repo}/actions/runs/{run.id}",
        artifacts=artifacts,
        meta=meta,
        **fields,
    )


def _inside(path: Path, root: Path) -> bool:
    """`path` stays under `root` lexically (an artifact name such as `../x` does not)."""
    return os.path.normpath(path).startswith(os.path.normpath(root) + os.sep)


def _upstream(items: list[dict], pr_path: str, doc: YamlDoc | None) -> dict[str, UpstreamRef]:
    out: dict[str, UpstreamRef] = {}
    for i, raw in enumerate(items):
        item = dict(raw)
        files = item.pop("files", None)
        if isinstance(files, dict) and "text" not in item:
            item["text"] = "\n".join(f"{k}\n{v}" for k, v in files.items())
        if "url" not in item:
            if not item.get("repo") or not item.get("number"):
                line = doc.line("upstream", i) if doc else None
                raise LocalModeError(f"{pr_path}:{line or 1}: upstream[{i}] needs a url, or a repo and a number")
            item["url"] = f"https://github.com/{item['repo']}/pull/{item['number']}"
        try:
            ref = UpstreamRef.model_validate({k: v for k, v in item.items() if k in UpstreamRef.model_fields})
        except ValidationError as e:
            line = doc.line("upstream", i) if doc else None
            raise LocalModeError(f"{pr_path}:{line or 1}: upstream[{i}]: {e.errors()[0]['msg']}") from None
        out[ref.url] = ref
    return out


def build_local_snapshot(
    repo_path: str | Path,
    base: str,
    head: str,
    *,
    pr_file: str | Path | None = None,
    review_date: date | None = None,
    repo: str | None = None,
    commit_aliases: dict[str, str] | None = None,
    pr: PRFile | None = None,
    pr_dir: str | Path | None = None,
    team_members: dict[str, list[str]] | None = None,
    external: dict[str, str] | None = None,
    config_file: str | Path | None = None,
) -> PRSnapshot:
    """The snapshot of "a PR from BASE to HEAD" in a local repository.

    The PR description comes from `pr_file`, or already parsed as `pr` (e.g. a sandbox world's
    `pr:`; then `pr_dir` anchors its artifacts_dir). `commit_aliases` maps extra names used in
    it (a world's commit ids) to SHAs. `external` maps other repositories a runner clones
    (owner/name) to local clones of them (`external_repos`). `config_file` (`--config`) is the
    configuration applied instead of the target branch's `.github/infx-review.yml`."""
    repo_path = str(repo_path)
    if not Path(repo_path).is_dir():
        raise LocalModeError(f"{repo_path} is not a directory")
    try:
        _git(repo_path, "rev-parse", "--git-dir")
    except LocalModeError:
        raise LocalModeError(f"{repo_path} is not a git repository") from None
    base_tip = resolve_commit(repo_path, base, "--base")
    head_sha = resolve_commit(repo_path, head, "--head")
    try:
        merge_base = _git(repo_path, "merge-base", base_tip, head_sha).strip()
    except LocalModeError:
        raise LocalModeError(f"--base {base!r} and --head {head!r} share no history") from None

    if config_file is None:
        target_tree = GitSource(repo_path, base_tip, resolved=True)
        base_tree = target_tree if merge_base == base_tip else GitSource(repo_path, merge_base, resolved=True)
    else:  # the base keeps its own file: only the policy comes from --config
        target_tree = ConfiguredTree(repo_path, base_tip, read_config_file(config_file))
        base_tree = GitSource(repo_path, merge_base, resolved=True)
    head_tree = GitSource(repo_path, head_sha, resolved=True)
    config, _ = read_repo_config(target_tree)  # its problems reach the verdict (Verdict.configuration)
    layout = detect_layout(target_tree, config.paths)
    if not is_benchmark_repository(target_tree, layout) and not is_benchmark_repository(head_tree, layout):
        raise LocalModeError(MSG_NOT_BENCHMARK.format(path=repo_path, base=base, head=head,
                                                      markers=benchmark_markers(layout)))

    doc, pr_path = None, "(no --pr file)"
    if pr_file is not None:
        pr, doc = load_pr_file(pr_file)
        pr_path = str(pr_file)
        pr_dir = Path(pr_file).parent
    elif pr is not None:
        pr_path = f"PR description in {pr_dir}" if pr_dir else "PR description"
    else:
        pr = PRFile()
    given = pr.model_fields_set
    name = repo or _repo_name(repo_path)
    resolve = _Resolver(repo_path, merge_base, head_sha, dict(commit_aliases or {}), pr_path, doc)

    def absent(key: str) -> Unavailable:
        return Unavailable(reason=NOT_PROVIDED.format(what=key))

    next_id = _FIRST_SYNTHETIC_ID
    signoff = None
    if pr.signoff is not None:
        sid = pr.signoff.id or next_id
        next_id += 1
        signoff = _comment(pr.signoff, sid, name, pr.number)

    comments: list[Comment] | Unavailable
    if "comments" in given:
        comments = []
        for c in pr.comments:
            cid = c.id
            if cid is None:
                cid, next_id = next_id, next_id + 1
            comments.append(_comment(c, cid, name, pr.number))
        if signoff is not None and all(c.id != signoff.id or c.kind != signoff.kind for c in comments):
            comments.append(signoff)  # the sign-off is itself a comment on the PR
        comments = _by_time(comments)
    else:
        comments = absent("comments")

    check_runs: dict[str, list[CheckRun] | Unavailable] | Unavailable
    if "check_runs" in given:
        check_runs = {}
        for ref, runs in pr.check_runs.items():
            sha = resolve(ref, "check_runs", ref)
            items = check_runs.setdefault(sha, [])
            for r in runs:
                url = r.details_url or (f"https://github.com/{name}/actions/runs/{r.run_id}/job/0" if r.run_id else "")
                items.append(CheckRun(
                    name=r.name, status=r.status, conclusion=r.conclusion, details_url=url,
                    run_id=r.run_id, head_sha=sha,
                ))
    else:
        check_runs = absent("check_runs")

    sweep_runs: dict[int, SweepRun] | Unavailable
    if "runs" in given:
        artifacts_root = None
        if pr.artifacts_dir is not None:
            artifacts_root = Path(pr_dir) / pr.artifacts_dir if pr_dir is not None else Path(pr.artifacts_dir)
            if not artifacts_root.is_dir():
                line = doc.line("artifacts_dir") if doc else None
                raise LocalModeError(f"{pr_path}:{line or 1}: artifacts_dir {artifacts_root} is not a directory")
        sweep_runs = {}
        for i, run in enumerate(pr.runs):
            sha = resolve(run.head, "runs", i, "head")
            sweep_runs[run.id] = _sweep_run(run, sha, name, artifacts_root, config)
    else:
        sweep_runs = absent("runs")

    commits = commits_between(repo_path, base_tip, head_sha)

    return PRSnapshot(
        repo=name,
        number=pr.number,
        title=pr.title,
        body=pr.body,
        author=pr.author,
        state=pr.state,
        draft=pr.draft,
        base_ref=base,
        base_sha=merge_base,
        head_sha=head_sha,
        current_head_sha=head_sha,
        files=changed_files(repo_path, merge_base, head_sha),
        base=base_tree,
        head=head_tree,
        target=target_tree,
        commits=commits,
        signoff=signoff,
        comments=comments,
        labels=list(pr.labels) if "labels" in given else absent("labels"),
        check_runs=check_runs,
        sweep_runs=sweep_runs,
        upstream=_upstream(pr.upstream, pr_path, doc),
        users={
            login: UserAccess(login=login, permission=v.get("permission"), role_name=v.get("role_name"))
            for login, v in pr.users.items()
        },
        team_members={**pr.teams, **(team_members or {})},
        review_date=review_day(review_date),
        config=config,
        external=LocalExternal(external, review_day(review_date)) if external else None,
        # Symbolic links that leave the repository are refused: the checks that read them say so.
        unreadable={**target_tree.link_problems(), **base_tree.link_problems(), **head_tree.link_problems()},
        html_url=f"https://github.com/{name}/pull/{pr.number}",
    )


# --- one tree, no change (inspect --trace, the benches) -------------------------------------
class _ConfigOverlay:
    """A tree read as it is, with `--config`'s bytes in place of its own configuration file."""

    def __init__(self, source: Any, config: bytes):
        self.source, self.config_bytes = source, config

    def read(self, path: str) -> bytes | None:
        return self.config_bytes if path.strip("/") == CONFIG_PATH else self.source.read(path)

    def list(self, directory: str) -> list[str]:
        return self.source.list(directory)


def tree_snapshot(source: Any, *, external: dict[str, str] | None = None, config_file: str | Path | None = None,
                  review_date: date | None = None) -> PRSnapshot:
    """A snapshot whose base and head are one tree (`source`: a working tree or a commit), so a
    tool traces its points as a review of that tree would: with the repositories its runners
    clone (`external`, from `external_repos`; a branch read as it stood on `review_date`, today
    when None) and the policy of `config_file` (`--config`), else the tree's own file."""
    target = _ConfigOverlay(source, read_config_file(config_file)) if config_file is not None else None
    day = review_day(review_date)
    return PRSnapshot(repo="local/tree", number=0, base=source, head=source, target=target, review_date=day,
                      external=LocalExternal(external, day) if external else None)
