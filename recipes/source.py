"""The one small interface through which the model reads a repository tree.

`read(path)` returns the file's bytes or None when it does not exist; `list(directory)`
returns every file path below `directory` (recursive, repository-relative, sorted).
The same parsers therefore read a working tree, a git ref, an in-memory dict, or files
fetched from the GitHub API.
"""
from __future__ import annotations

import atexit
import bisect
import errno
import os
import posixpath
import re
import stat
import subprocess
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Callable, Iterable, Protocol, runtime_checkable

# Symbolic links are followed the way a checkout on the runner follows them, inside the
# repository only: a link (or a `..` path) that leaves it is refused and reported.
MAX_LINK_HOPS = 40  # Linux's own limit on symbolic links in one lookup
LINK_MODE = "120000"
MSG_LINK_ESCAPES = "{path} is a symbolic link to {target}, which leaves the repository; it is not followed"
MSG_LINK_LOOP = "{path}: too many levels of symbolic links"
MSG_PATH_ESCAPES = "{path} leaves the repository; it is not read"


@runtime_checkable
class FileSource(Protocol):
    def read(self, path: str) -> bytes | None: ...

    def list(self, directory: str) -> list[str]: ...


def _norm(path: str) -> str:
    return path.strip("/")


def inside_path(path: str) -> str | None:
    """`path` normalised (`a/./b/../c` -> `a/c`), or None when it leaves the repository
    (`../x`, an absolute path after normalising away the leading slash is still inside)."""
    norm = posixpath.normpath(_norm(path)) if _norm(path) else ""
    if norm == "." :
        return ""
    if norm == ".." or norm.startswith("../"):
        return None
    return norm


def resolve_links(path: str, link_text: Callable[[str], str | None]) -> tuple[str | None, str | None]:
    """(the path a checkout would open for `path`, None) following every symbolic link on the
    way, component by component; or (None, why) when a link leaves the repository, loops, or
    the path itself does. `link_text(p)` is the target text of `p` when `p` is a link, else None."""
    parts = [c for c in _norm(path).split("/") if c not in ("", ".")]
    done: list[str] = []
    hops = 0
    while parts:
        comp = parts.pop(0)
        if comp == "..":
            if not done:
                return None, MSG_PATH_ESCAPES.format(path=path)
            done.pop()
            continue
        here = "/".join([*done, comp])
        target = link_text(here)
        if target is None:
            done.append(comp)
            continue
        hops += 1
        if hops > MAX_LINK_HOPS:
            return None, MSG_LINK_LOOP.format(path=path)
        if target.startswith("/") or not target:
            return None, MSG_LINK_ESCAPES.format(path=here, target=target or "(empty)")
        rest = [c for c in target.split("/") if c not in ("", ".")]
        # The link's target is relative to the directory holding the link.
        depth, escapes = len(done), False
        for c in rest:
            if c == "..":
                depth -= 1
                if depth < 0:
                    escapes = True
                    break
            else:
                depth += 1
        if escapes:
            return None, MSG_LINK_ESCAPES.format(path=here, target=target)
        parts = rest + parts
    return "/".join(done), None


class PathIndex:
    """The sorted paths of a fixed tree, listed by directory with a binary search: checks list
    directories once per (point, setting), so a scan of every path per call was quadratic."""

    def __init__(self, paths: Iterable[str]):
        self._sorted = sorted(paths)

    def under(self, directory: str) -> list[str]:
        """Every path below `directory` (all of them for the root), sorted; never `directory` itself."""
        directory = _norm(directory)
        if not directory:
            return list(self._sorted)
        prefix = directory + "/"
        lo = bisect.bisect_left(self._sorted, prefix)
        hi = lo
        n = len(self._sorted)
        while hi < n and self._sorted[hi].startswith(prefix):
            hi += 1
        return self._sorted[lo:hi]


def links_of(src: object) -> dict[str, str]:
    """Every symbolic link of a tree: path -> the link's target text as stored (`{}` for a
    source that cannot tell, e.g. one without links). Links are read through by `read`; this
    is for the questions about the links themselves (checks.two_readings)."""
    links = getattr(src, "links", None)
    return dict(links()) if callable(links) else {}


def link_resolution(path: str, links: dict[str, str]) -> tuple[str | None, str | None]:
    """`resolve_links` of `path` over a {link path: target text} map."""
    return resolve_links(path, links.get)


class MemorySource:
    """Files held in a dict (tests, snapshots); `links` ({path: target text}) are symbolic
    links, listed and followed like a checkout's (inside the tree only)."""

    def __init__(self, files: dict[str, bytes | str], links: dict[str, str] | None = None):
        self._files = {
            _norm(k): (v.encode() if isinstance(v, str) else v) for k, v in files.items()
        }
        self._links = {_norm(k): v for k, v in (links or {}).items()}
        self._index: PathIndex | None = None

    def read(self, path: str) -> bytes | None:
        if not self._links:
            return self._files.get(_norm(path))
        resolved, problem = resolve_links(path, self._links.get)
        return None if problem is not None or resolved is None else self._files.get(resolved)

    def list(self, directory: str) -> list[str]:
        if self._index is None:
            self._index = PathIndex([*self._files, *self._links])
        return self._index.under(directory)

    def paths(self) -> list[str]:
        return sorted(self._files)

    def links(self) -> dict[str, str]:
        return dict(self._links)


class DirSource:
    """A checkout on disk."""

    def __init__(self, root: str | os.PathLike[str]):
        self.root = Path(root)
        self._real_root = str(self.root.resolve())
        self._inside_prefix = os.path.join(self._real_root, "")  # "/repo/", or "/" for the root
        # Paths refused (a `..` path, a link out of the root), with the reason.
        self.failures: dict[str, str] = {}
        self._real_dirs: dict[str, str] = {}  # a folder below the root -> its realpath (`_real_dir`)

    def _real_dir(self, rel: str) -> str:
        """The realpath of a folder below the root, `rel` normalised (no `.`, `..` or empty part).
        It is worked out from its parent's, once per source: one lstat per folder instead of
        one per path component (a recipe-heavy load reads a hundred files from as many
        folders). Resolving a path's parent first and then its last part is what realpath does."""
        real = self._real_dirs.get(rel)
        if real is None:
            real = self._real_dirs[rel] = self._realpath(rel)
        return real

    def _realpath(self, rel: str) -> str:
        """`os.path.realpath` of what is at `rel` (normalised) below the root: its folder's
        realpath (`_real_dir`) joined with its name, the name resolved in full when it is a
        link. A file is checked each time it is read."""
        head, name = os.path.split(rel)
        if not name:
            return self._real_root
        joined = os.path.join(self._real_dir(head), name)
        return os.path.realpath(joined) if os.path.islink(joined) else joined

    def read(self, path: str) -> bytes | None:
        rel = inside_path(path)
        if rel is None:
            self.failures[_norm(path)] = MSG_PATH_ESCAPES.format(path=path)
            return None
        # os.path rather than pathlib: a recipe-heavy load reads hundreds of files, and the
        # Path objects (one per parent directory in the containment test) cost more than the read.
        p = os.path.join(self.root, rel)
        try:
            real = self._realpath(rel)
            try:
                mode: int | None = os.stat(real).st_mode
            except OSError as e:
                if e.errno == errno.ELOOP:  # a symbolic link loop: unreadable, not an escape
                    return None
                mode = None
            if real != self._real_root and not real.startswith(self._inside_prefix):
                if os.path.lexists(p):
                    self.failures[rel] = MSG_LINK_ESCAPES.format(path=rel, target=os.readlink(p) if os.path.islink(p) else real)
                return None
            if mode is not None and stat.S_ISREG(mode):  # not a directory, a FIFO or a device
                with open(real, "rb") as f:
                    return f.read()
        except OSError:
            return None
        return None

    def list(self, directory: str) -> list[str]:
        base = self.root / _norm(directory)
        if not base.is_dir():
            return []
        out = []
        for dirpath, dirnames, filenames in os.walk(base):  # never into linked directories
            dirnames[:] = [d for d in dirnames if d != ".git"]
            for f in filenames:
                out.append(str(Path(dirpath, f).relative_to(self.root)).replace(os.sep, "/"))
        return sorted(out)


class _CatFile:
    """One long-lived `git cat-file --batch` per repository: a blob read costs a pipe round trip
    instead of a process (hundreds of reads per verdict on a real history). Blobs are cached
    by SHA, so the base and head views share every unchanged file."""

    MAX_PROCESSES = 4
    MAX_CACHED_BYTES = 256 * 1024 * 1024
    _procs: "OrderedDict[str, subprocess.Popen]" = OrderedDict()
    _blobs: dict[str, bytes] = {}
    _cached = 0
    _lock = threading.Lock()

    @classmethod
    def read(cls, repo: str, sha: str) -> bytes | None:
        with cls._lock:
            hit = cls._blobs.get(sha)
            if hit is not None:
                return hit
            try:
                data = cls._ask(repo, sha)
            except (OSError, ValueError):
                cls._close(repo)
                return None
            if data is not None and cls._cached + len(data) <= cls.MAX_CACHED_BYTES:
                cls._blobs[sha] = data
                cls._cached += len(data)
            return data

    @classmethod
    def _ask(cls, repo: str, sha: str) -> bytes | None:
        proc = cls._procs.get(repo)
        if proc is None or proc.poll() is not None:
            proc = subprocess.Popen(["git", "-C", repo, "cat-file", "--batch"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
            cls._procs[repo] = proc
            while len(cls._procs) > cls.MAX_PROCESSES:
                cls._close(next(iter(cls._procs)))
        cls._procs.move_to_end(repo)
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(sha.encode() + b"\n")
        proc.stdin.flush()
        header = proc.stdout.readline().split()
        if len(header) != 3 or header[1] != b"blob":
            if not header:
                raise ValueError("git cat-file ended")
            return None  # `<sha> missing`
        size = int(header[2])
        data = proc.stdout.read(size)
        proc.stdout.read(1)  # the newline after the contents
        if len(data) != size:
            raise ValueError("short read from git cat-file")
        return data

    @classmethod
    def _close(cls, repo: str) -> None:
        proc = cls._procs.pop(repo, None)
        if proc is not None:
            try:
                proc.kill()
                proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass

    @classmethod
    def close_all(cls) -> None:
        with cls._lock:
            for repo in list(cls._procs):
                cls._close(repo)


atexit.register(_CatFile.close_all)


_FULL_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class GitSource:
    """Files of one commit of a local git repository, read with `git` plumbing (no checkout)."""

    def __init__(self, repo: str | os.PathLike[str], ref: str, *, resolved: bool = False):
        """`resolved`: `ref` is a commit's full SHA already (the caller asked git), so it is not
        asked again; each `git` process costs a few milliseconds of a verdict."""
        self.repo = str(repo)
        self.ref = ref
        if resolved and not _FULL_SHA.fullmatch(ref):
            raise ValueError(f"not a full commit SHA: {ref!r}")
        self.sha = ref if resolved else self._git("rev-parse", "--verify", f"{ref}^{{commit}}").decode().strip()
        out = self._git("ls-tree", "-r", "-z", "--full-tree", self.sha)
        self._blobs: dict[str, str] = {}
        self._links: set[str] = set()
        # Paths refused (a link out of the repository, a loop), with the reason.
        self.failures: dict[str, str] = {}
        for rec in out.split(b"\0"):
            if not rec:
                continue
            meta, _, name = rec.partition(b"\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == b"blob":
                path = name.decode("utf-8", "surrogateescape")
                self._blobs[path] = parts[2].decode()
                if parts[0].decode() == LINK_MODE:
                    self._links.add(path)
        self._cache: dict[str, bytes] = {}
        self._resolved: dict[str, tuple[str | None, str | None]] = {}  # path -> resolve_links(path)
        self._index: PathIndex | None = None

    def _git(self, *args: str) -> bytes:
        return subprocess.run(
            ["git", "-C", self.repo, *args], check=True, capture_output=True
        ).stdout

    def _blob(self, path: str) -> bytes:
        data = self._cache.get(path)
        if data is None:
            blob = self._blobs[path]
            # One long-lived `git cat-file --batch` per repository; a plain call if it fails.
            data = _CatFile.read(self.repo, blob)
            if data is None:
                data = self._git("cat-file", "blob", blob)
            self._cache[path] = data
        return data

    def _link_text(self, path: str) -> str | None:
        return self._blob(path).decode("utf-8", "surrogateescape") if path in self._links else None

    def read(self, path: str) -> bytes | None:
        path = _norm(path)
        if not self._links:  # the common case: no link anywhere, a path is a blob or nothing
            return self._blob(path) if path in self._blobs else None
        # A commit's links do not change: each path is resolved once (a launch's files are read
        # again by each of its traces).
        got = self._resolved.get(path)
        if got is None:
            got = self._resolved[path] = resolve_links(path, self._link_text)
        resolved, problem = got
        if problem is not None:
            self.failures[path] = problem
            return None
        if resolved not in self._blobs or resolved in self._links:
            return None
        return self._blob(resolved)

    def links(self) -> dict[str, str]:
        """Every symbolic link of the commit: path -> its target text."""
        return {p: self._link_text(p) or "" for p in sorted(self._links)}

    def link_problems(self) -> dict[str, str]:
        """Every symbolic link of the commit that leaves the repository or loops: path -> why."""
        out = {}
        for link in sorted(self._links):
            _, problem = resolve_links(link, self._link_text)
            if problem is not None:
                out[link] = problem
        return out

    def list(self, directory: str) -> list[str]:
        if self._index is None:
            self._index = PathIndex(self._blobs)
        return self._index.under(directory)

    def blob_sha(self, path: str) -> str | None:
        return self._blobs.get(_norm(path))
