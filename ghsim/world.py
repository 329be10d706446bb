"""Emulator worlds: the `world.yaml` model and turning a world directory into a real git repository."""
from __future__ import annotations

import os
import shutil
import subprocess
import threading
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Mapping

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bot.prfile import PRFile
from recipes.errors import RecipeError
from recipes.yamlio import load_yaml

WORLD_FILE = "world.yaml"
BASE_DIR = "base"
COMMITS_DIR = "commits"

# Fixed identities and dates are what make commit SHAs reproducible from run to run.
DEFAULT_BASE_DATE = datetime(2026, 1, 1, tzinfo=timezone.utc)
COMMIT_SPACING = timedelta(hours=1)
BASE_AUTHOR = ("InferenceX Sandbox", "sandbox@inferencex.invalid")
COMMITTER = ("GitHub", "noreply@github.com")
BASE_MESSAGE = "Base of the sandbox world"
NOREPLY_DOMAIN = "users.noreply.github.com"

# Commit references that are not commit ids (prfile.py: check_runs keys, runs[].head).
REF_HEAD = "head"
REF_BASE = "base"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class BotIdentity(_Strict):
    login: str = "github-actions[bot]"
    token: str = "ghs_sandbox"


class WorldCommit(_Strict):
    id: str
    message: str = ""
    delete: list[str] = Field(default_factory=list)
    # Overlay directory relative to the world; defaults to commits/<id>/ (absent means no files).
    overlay: str | None = None
    date: datetime | None = None


class OtherRepoSpec(_Strict):
    """A repository the world's runners clone (ghsim/others.py)."""

    repo: str
    dir: str  # its files, relative to the world directory
    refs: list[str] = Field(default_factory=lambda: ["main"])


class World(_Strict):
    repo: str
    default_branch: str = "main"
    head_branch: str = "feature"
    bot: BotIdentity = Field(default_factory=BotIdentity)
    tokens: dict[str, str] = Field(default_factory=dict)
    commits: list[WorldCommit] = Field(default_factory=list)
    # Commits that reach `default_branch` after the PR branched (the PR's merge base stays the
    # base commit; GitHub's compare answers it as `merge_base_commit`).
    target_commits: list[WorldCommit] = Field(default_factory=list)
    pr: PRFile = Field(default_factory=PRFile)
    teams: dict[str, list[str]] = Field(default_factory=dict)
    other_repos: list[OtherRepoSpec] = Field(default_factory=list)

    @property
    def owner(self) -> str:
        return self.repo.split("/", 1)[0]

    @property
    def name(self) -> str:
        return self.repo.split("/", 1)[1]


def utc(dt: datetime) -> datetime:
    """Naive datetimes in a world mean UTC."""
    return dt.replace(tzinfo=timezone.utc) if dt.tzinfo is None else dt.astimezone(timezone.utc)


def load_world(world_dir: str | Path) -> World:
    """Parse and validate `world.yaml`; problems are `RecipeError`s naming the line."""
    path = Path(world_dir) / WORLD_FILE
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise RecipeError.at(str(path), None, f"cannot read world file: {e.strerror}", "world") from None
    doc = load_yaml(raw, str(path))
    if not isinstance(doc.data, dict):
        raise RecipeError.at(str(path), 1, "world.yaml must be a mapping", "world")
    try:
        world = World.model_validate(doc.data)
    except ValidationError as e:
        err = e.errors()[0]
        loc = tuple(err["loc"])
        where = ".".join(str(p) for p in loc) or "(top)"
        raise RecipeError.at(str(path), doc.line(*loc), f"{where}: {err['msg']}", "world") from None
    if "/" not in world.repo:
        raise RecipeError.at(str(path), doc.line("repo"), "repo must be owner/name", "world")
    ids = [("commits", i, c.id) for i, c in enumerate(world.commits)] + \
        [("target_commits", i, c.id) for i, c in enumerate(world.target_commits)]
    for n, (key, i, cid) in enumerate(ids):
        if cid in [x[2] for x in ids[:n]] or cid in (REF_HEAD, REF_BASE):
            raise RecipeError.at(str(path), doc.line(key, i, "id"), f"commit id {cid!r} is reserved or repeated", "world")
    return world


def commit_dates(world: World) -> tuple[datetime, list[datetime]]:
    """The base commit's date and each PR commit's date (unset ones follow the previous by an hour)."""
    base = DEFAULT_BASE_DATE
    explicit = [utc(c.date) for c in [*world.commits, *world.target_commits] if c.date]
    if explicit and min(explicit) <= base:
        base = min(explicit) - COMMIT_SPACING
    dates, prev = [], base
    for c in world.commits:
        prev = utc(c.date) if c.date else prev + COMMIT_SPACING
        dates.append(prev)
    return base, dates


def _git_env(author: tuple[str, str], when: datetime) -> dict[str, str]:
    stamp = f"{int(when.timestamp())} +0000"
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(
        GIT_AUTHOR_NAME=author[0], GIT_AUTHOR_EMAIL=author[1], GIT_AUTHOR_DATE=stamp,
        GIT_COMMITTER_NAME=COMMITTER[0], GIT_COMMITTER_EMAIL=COMMITTER[1], GIT_COMMITTER_DATE=stamp,
        # Keep the user's global config (signing, hooks, templates) out of the sandbox repo.
        GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1",
    )
    return env


def git(repo: Path, *args: str, env: dict[str, str] | None = None, input: bytes | None = None) -> str:
    if env is None:
        env = _git_env(BASE_AUTHOR, DEFAULT_BASE_DATE)
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], env=env, input=input, capture_output=True, check=False
    )
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed in {repo}: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout.decode()


def author_of(login: str) -> tuple[str, str]:
    return (login, f"{login}@{NOREPLY_DOMAIN}")


def _overlay(src: Path, dest: Path) -> None:
    """Copy a world's files into the repository. A symbolic link is copied as a link (its text
    goes into git, as a push would store it); its target is never read, so a world cannot pull
    files from outside itself into the repository."""
    if src.is_dir():
        for dirpath, dirnames, filenames in os.walk(src):  # never into linked directories
            for name in [*dirnames, *filenames]:
                s_path = Path(dirpath, name)
                d_path = dest / s_path.relative_to(src)
                if s_path.is_symlink() or d_path.is_symlink():  # replace, never write through a link
                    if d_path.is_symlink() or d_path.is_file():
                        d_path.unlink()
                    elif d_path.is_dir():
                        shutil.rmtree(d_path)
        shutil.copytree(src, dest, dirs_exist_ok=True, symlinks=True, ignore=shutil.ignore_patterns(".git"))


def apply_change(
    repo: Path,
    *,
    overlay_dir: Path | None = None,
    files: Mapping[str, str | bytes | None] | None = None,
    delete: list[str] = (),  # type: ignore[assignment]
    message: str,
    author: tuple[str, str],
    when: datetime,
) -> str:
    """Apply an overlay dir, in-memory files (None deletes) and deletions; commit; return the SHA."""
    if overlay_dir is not None:
        _overlay(overlay_dir, repo)
    for rel, content in (files or {}).items():
        target = repo / rel
        if target.is_symlink():
            target.unlink()  # replaced (or deleted), never written through
        if content is None:
            if target.exists():
                target.unlink()
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content.encode() if isinstance(content, str) else content)
    for rel in delete:
        target = repo / rel
        if target.is_symlink() or target.is_file():
            target.unlink()
        elif target.is_dir():
            shutil.rmtree(target)
    env = _git_env(author, when)
    git(repo, "add", "-A", env=env)
    git(repo, "commit", "-q", "--allow-empty", "--no-verify", "-m", message or "(no message)", env=env)
    return git(repo, "rev-parse", "HEAD", env=env).strip()


@dataclass
class BuiltWorld:
    """A world materialised as a git checkout with the PR's head branch checked out."""

    path: Path
    base_sha: str  # the base commit: where the PR branched (its merge base)
    shas: dict[str, str]
    head_sha: str
    world: World = field(repr=False, default=None)  # type: ignore[assignment]
    # The default branch's tip: `base_sha` unless the world has `target_commits`.
    target_sha: str = ""
    # Other repositories (owner/name -> (built path, commit SHA)).
    others: dict[str, tuple[Path, str]] = field(default_factory=dict)

    def resolve(self, ref: str) -> str:
        """A commit reference from world.yaml (commit id, head, base or full SHA) to a SHA."""
        if ref == REF_HEAD:
            return self.head_sha
        if ref == REF_BASE:
            return self.base_sha
        return self.shas.get(ref, ref)


def build_world_repo(world_dir: str | Path, dest: str | Path) -> BuiltWorld:
    """Build the world's git repo in `dest` (created; must be empty): base commit on the default
    branch, one commit per `commits:` entry on the head branch, which is left checked out."""
    world_dir = Path(world_dir)
    world = load_world(world_dir)
    dest = Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    base_date, dates = commit_dates(world)
    env = _git_env(BASE_AUTHOR, base_date)
    git(dest, "init", "-q", "-b", world.default_branch, env=env)
    _overlay(world_dir / BASE_DIR, dest)
    base_sha = apply_change(dest, message=BASE_MESSAGE, author=BASE_AUTHOR, when=base_date)
    git(dest, "checkout", "-q", "-b", world.head_branch, env=env)
    shas: dict[str, str] = {}
    author = author_of(world.pr.author)
    for commit, when in zip(world.commits, dates):
        overlay = world_dir / (commit.overlay or f"{COMMITS_DIR}/{commit.id}")
        shas[commit.id] = apply_change(
            dest, overlay_dir=overlay, delete=commit.delete, message=commit.message or commit.id,
            author=author, when=when,
        )
    head = shas[world.commits[-1].id] if world.commits else base_sha
    target = base_sha
    if world.target_commits:
        git(dest, "checkout", "-q", world.default_branch, env=env)
        when = (max(dates) if dates else base_date)
        for commit in world.target_commits:
            when = utc(commit.date) if commit.date else when + COMMIT_SPACING
            overlay = world_dir / (commit.overlay or f"{COMMITS_DIR}/{commit.id}")
            target = shas[commit.id] = apply_change(
                dest, overlay_dir=overlay, delete=commit.delete, message=commit.message or commit.id,
                author=BASE_AUTHOR, when=when,
            )
        git(dest, "checkout", "-q", world.head_branch, env=env)
    others: dict[str, tuple[Path, str]] = {}
    for spec in world.other_repos:
        from .others import other_repo_dir

        where = other_repo_dir(dest, spec.repo)
        where.mkdir(parents=True, exist_ok=True)
        git(where, "init", "-q", "-b", "main", env=env)
        _overlay(world_dir / spec.dir, where)
        others[spec.repo] = (where, apply_change(where, message=f"{spec.repo} as the world's runners clone it",
                                                  author=BASE_AUTHOR, when=base_date))
    return BuiltWorld(path=dest, base_sha=base_sha, shas=shas, head_sha=head, world=world, others=others,
                      target_sha=target)


class GitReader:
    """Read-only object access to a built repo through one long-lived `git cat-file --batch`,
    with per-object caches, so serving a request rarely starts a subprocess."""

    def __init__(self, repo: Path):
        self.repo = repo
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._objects: dict[str, tuple[str, bytes]] = {}
        self._trees: dict[tuple[str, bool], list[dict]] = {}

    def _batch(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                ["git", "-C", str(self.repo), "cat-file", "--batch"],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=_git_env(BASE_AUTHOR, DEFAULT_BASE_DATE),
            )
        return self._proc

    def read(self, sha: str) -> tuple[str, bytes] | None:
        """(type, content) of an object, or None when it does not exist."""
        with self._lock:
            if sha in self._objects:
                return self._objects[sha]
            proc = self._batch()
            assert proc.stdin and proc.stdout
            proc.stdin.write(sha.encode() + b"\n")
            proc.stdin.flush()
            header = proc.stdout.readline().decode().split()
            if len(header) != 3:  # "<sha> missing" or an ambiguous name
                return None
            full, kind, size = header
            data = proc.stdout.read(int(size))
            proc.stdout.read(1)
            self._objects[sha] = self._objects[full] = (kind, data)
            return kind, data

    def commit(self, sha: str) -> dict | None:
        """Parsed commit object: tree, parents, author/committer (name, email, date), message."""
        obj = self.read(sha)
        if obj is None or obj[0] != "commit":
            return None
        head, _, message = obj[1].decode(errors="replace").partition("\n\n")
        out: dict = {"tree": "", "parents": [], "message": message.rstrip("\n")}
        for line in head.splitlines():
            key, _, value = line.partition(" ")
            if key == "tree":
                out["tree"] = value
            elif key == "parent":
                out["parents"].append(value)
            elif key in ("author", "committer"):
                name, _, rest = value.partition(" <")
                email, _, stamp = rest.partition("> ")
                out[key] = (name, email, datetime.fromtimestamp(int(stamp.split()[0]), tz=timezone.utc))
        return out

    def tree(self, treeish: str, recursive: bool) -> list[dict] | None:
        """Entries {path, mode, type, sha, size} of a tree or commit, or None if it is neither."""
        key = (treeish, recursive)
        with self._lock:
            if key in self._trees:
                return self._trees[key]
        args = ["ls-tree", "-l", "--full-tree"] + (["-r", "-t"] if recursive else []) + [treeish]
        try:
            text = git(self.repo, *args)
        except RuntimeError:
            return None
        entries = []
        for line in text.splitlines():
            meta, _, path = line.partition("\t")
            mode, kind, sha, size = meta.split()
            entries.append({"path": path, "mode": mode, "type": kind, "sha": sha,
                            "size": None if size == "-" else int(size)})
        with self._lock:
            self._trees[key] = entries
        return entries

    def files(self, commit_sha: str) -> dict[str, dict]:
        """path -> blob entry of every file at a commit."""
        return {e["path"]: e for e in (self.tree(commit_sha, True) or []) if e["type"] == "blob"}

    def close(self) -> None:
        with self._lock:
            if self._proc is not None:
                if self._proc.stdin:
                    self._proc.stdin.close()
                self._proc.wait(timeout=5)
                if self._proc.stdout:
                    self._proc.stdout.close()
                self._proc = None
