"""A FileSource over the GitHub API: a commit's files from one repository archive (tarball) or one
recursive tree listing, contents fetched only when read (blobs API, so files over 1 MB work too),
each blob once, shared across trees and keyed by the git SHA of its bytes."""
from __future__ import annotations

import base64
import hashlib
import io
import logging
import posixpath
import re
import tarfile
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from collections.abc import Mapping
from typing import Any, Callable, Iterable

from bot.github_client import GitHubApi, describe_error
from recipes.source import LINK_MODE, PathIndex, resolve_links

log = logging.getLogger(__name__)

# A file larger than this is not fetched (the blobs API serves up to 100 MB; no check needs that).
MAX_BLOB_BYTES = 25 * 1024 * 1024
MSG_TREE = "the file list of {repo}@{sha} could not be fetched: {error}"
MSG_TREE_TRUNCATED = "GitHub truncated the file list of {repo}@{sha} (too many files)"
MSG_BLOB = "{path} at {repo}@{sha} could not be fetched: {error}"
MSG_TOO_LARGE = "{path} at {repo}@{sha} is {size} bytes, over the {limit}-byte fetch cap"
MSG_ARCHIVE = "the archive of {repo}@{sha} could not be used: {error}"
MSG_ARCHIVE_UNREADABLE = "not a gzip tar archive ({error})"
MSG_ARCHIVE_LAYOUT = "expected one top-level directory, found {found}"
MSG_ARCHIVE_COMMIT = "it is the archive of commit {found}, not {sha}"
MSG_ARCHIVE_UNPACKED = "it unpacks to over {limit} bytes"
MSG_ARCHIVE_ATTRIBUTES = "{path} sets {attribute}, so the archive may differ from the commit"
MSG_ARCHIVE_MISMATCH = "{path} {problem} in the archive, unlike the head tree and the PR's changed files say"
# A repository archive larger than this once unpacked is abandoned (the per-file path takes over).
MAX_ARCHIVE_UNPACKED = 1 << 30
ATTRIBUTES_FILE = ".gitattributes"
# Attributes that make GitHub's archive differ from the commit: dropped files (export-ignore),
# expanded keywords (export-subst), LFS objects in place of their pointers (filter=lfs).
ARCHIVE_ATTRIBUTES = ("export-ignore", "export-subst", "filter=")
# Change statuses whose path must exist, or must not exist, on the base side.
ABSENT_AT_BASE = frozenset({"added", "copied"})
_HUNK_RE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_NO_NEWLINE = "\\ No newline at end of file"


class RemoteReadError(OSError):
    """A file that exists at the ref but could not be read. Raised (never None, which would
    mean "no such file"), so the check reading it reports missing evidence."""


def git_blob_sha(data: bytes) -> str:
    """The SHA git gives these bytes as a blob, to verify content we did not download."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def apply_patch(before: str, patch: str) -> list[str] | None:
    """The lines after applying a GitHub file patch (hunks only) to `before`, or None when the
    patch does not apply. Line endings are decided by the caller (see `candidates`)."""
    old = before.split("\n")
    if old and old[-1] == "":
        old.pop()
    out: list[str] = []
    pos = 0
    lines = patch.split("\n")
    i = 0
    while i < len(lines):
        m = _HUNK_RE.match(lines[i])
        if not m:
            if lines[i].strip() == "" and i == len(lines) - 1:
                break
            return None
        start = int(m.group(1))
        length = int(m.group(2)) if m.group(2) is not None else 1
        start_idx = start - 1 if length else start
        if start_idx < pos or start_idx > len(old):
            return None
        out.extend(old[pos:start_idx])
        pos = start_idx
        i += 1
        while i < len(lines) and not lines[i].startswith("@@"):
            line = lines[i]
            if line == _NO_NEWLINE:
                i += 1
                continue
            tag, text = line[:1], line[1:]
            if tag == " ":
                if pos >= len(old) or old[pos] != text:
                    return None
                out.append(text)
                pos += 1
            elif tag == "-":
                if pos >= len(old) or old[pos] != text:
                    return None
                pos += 1
            elif tag == "+":
                out.append(text)
            elif line == "" and i == len(lines) - 1:
                pass
            else:
                return None
            i += 1
    out.extend(old[pos:])
    return out


def candidates(lines: list[str]) -> Iterable[bytes]:
    """A patch does not always say whether the file ends with a newline: try both."""
    text = "\n".join(lines)
    yield (text + "\n").encode("utf-8") if lines else b""
    yield text.encode("utf-8")


class BlobStore:
    """Blob contents by SHA, fetched at most once even when several threads ask together."""

    def __init__(self, api: GitHubApi, repo: str):
        self.api, self.repo = api, repo
        self._data: dict[str, bytes] = {}
        self._locks: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()
        self.fetched = 0

    def cached(self, sha: str) -> bytes | None:
        return self._data.get(sha)

    def put(self, sha: str, data: bytes) -> None:
        with self._lock:
            self._data.setdefault(sha, data)

    def get(self, sha: str) -> bytes:
        if sha in self._data:
            return self._data[sha]
        with self._lock:
            lock = self._locks.setdefault(sha, threading.Lock())
        with lock:
            if sha not in self._data:
                blob = self.api.get(f"/repos/{self.repo}/git/blobs/{sha}")
                content = blob.get("content") or ""
                data = base64.b64decode(content) if blob.get("encoding", "base64") == "base64" else content.encode()
                with self._lock:
                    self._data[sha] = data
                    self.fetched += 1
            return self._data[sha]


Derive = Callable[[str, str], bytes | None]
Entries = dict[str, tuple[str, int]]


@dataclass
class Archive:
    """A commit's files as its repository archive has them: path -> (git blob SHA of the bytes,
    size). The bytes themselves went to the BlobStore. `altered` names a .gitattributes that
    may make the archive differ from the commit (then its file list is not trusted)."""

    sha: str
    entries: Entries
    altered: str | None = None
    links: frozenset[str] = frozenset()  # paths that are symbolic links (their bytes: the link text)


def read_archive(data: bytes, sha: str, blobs: BlobStore, *, max_unpacked: int = MAX_ARCHIVE_UNPACKED) -> Archive:
    """Unpack GitHub's tarball of commit `sha` (one top-level `<owner>-<repo>-<short sha>/`
    directory) into `blobs`. Raises ValueError naming what is wrong with it."""
    try:
        tar = tarfile.open(fileobj=io.BytesIO(data), mode="r:gz")
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise ValueError(MSG_ARCHIVE_UNREADABLE.format(error=exc)) from None
    entries: Entries = {}
    links: set[str] = set()
    tops: set[str] = set()
    altered = None
    unpacked = 0
    with tar:
        try:
            members = tar.getmembers()
        except (tarfile.TarError, OSError, EOFError) as exc:
            raise ValueError(MSG_ARCHIVE_UNREADABLE.format(error=exc)) from None
        # git archive (and GitHub) record the commit in a pax global header.
        commit = tar.pax_headers.get("comment")
        if commit and commit != sha:
            raise ValueError(MSG_ARCHIVE_COMMIT.format(found=commit, sha=sha))
        for m in members:
            top, _, rel = m.name.strip("/").partition("/")
            tops.add(top)
            if not rel or not (m.isreg() or m.issym()):
                continue  # directories (and submodules, which archives show as empty ones)
            if m.issym():
                content = m.linkname.encode("utf-8", "surrogateescape")
                links.add(rel)
            else:
                unpacked += m.size
                if unpacked > max_unpacked:
                    raise ValueError(MSG_ARCHIVE_UNPACKED.format(limit=max_unpacked))
                handle = tar.extractfile(m)
                content = handle.read() if handle is not None else b""
            blob = git_blob_sha(content)
            entries[rel] = (blob, len(content))
            if len(content) <= MAX_BLOB_BYTES:
                blobs.put(blob, content)
            if posixpath.basename(rel) == ATTRIBUTES_FILE and altered is None:
                text = content.decode("utf-8", "replace")
                hit = next((a for a in ARCHIVE_ATTRIBUTES if a in text), None)
                if hit is not None:
                    altered = MSG_ARCHIVE_ATTRIBUTES.format(path=rel, attribute=hit.rstrip("="))
    if len(tops) != 1:
        raise ValueError(MSG_ARCHIVE_LAYOUT.format(found=len(tops)))
    return Archive(sha=sha, entries=entries, altered=altered, links=frozenset(links))


def fetch_archive(api: GitHubApi, repo: str, sha: str, blobs: BlobStore, max_bytes: int) -> Archive:
    """The tarball of `repo@sha` (redirect, then the download), unpacked into `blobs`. Raises
    RemoteReadError with the reason when it cannot be had or read."""
    try:
        url = api.redirect_target(f"/repos/{repo}/tarball/{sha}")
        return read_archive(api.download(url, max_bytes), sha, blobs)
    except Exception as exc:  # any failure leaves the per-file path, never a wrong file list
        raise RemoteReadError(MSG_ARCHIVE.format(repo=repo, sha=sha, error=describe_error(exc))) from None


def archive_mismatch(archive: Archive, head: Entries, files: Iterable[Any]) -> str | None:
    """Why the archive's file list cannot stand for the base side of a PR whose head tree is
    `head` and whose changes from that base are `files` (ChangedFile-like), or None when it can.
    Every file the PR leaves alone must be in the archive with the head's blob SHA, and every
    changed file must be present or absent as its status says; so nothing the archive dropped
    or rewrote goes unnoticed."""
    if archive.altered:
        return archive.altered
    tar = archive.entries
    touched: set[str] = set()
    for f in files:
        touched.update(p for p in (f.path, f.previous_path) if p)
        before = f.previous_path or f.path
        if f.status in ABSENT_AT_BASE:
            if f.path in tar:
                return MSG_ARCHIVE_MISMATCH.format(path=f.path, problem="is present")
        elif before not in tar:
            return MSG_ARCHIVE_MISMATCH.format(path=before, problem="is missing")
    for path, (sha, _) in head.items():
        if path in touched:
            continue
        if path not in tar:
            return MSG_ARCHIVE_MISMATCH.format(path=path, problem="is missing")
        if tar[path][0] != sha:
            return MSG_ARCHIVE_MISMATCH.format(path=path, problem="has other content")
    extra = next((p for p in tar if p not in touched and p not in head), None)
    if extra is not None:
        return MSG_ARCHIVE_MISMATCH.format(path=extra, problem="is present")
    return None


_builder = threading.local()


def mark_builder_thread(active: bool = True) -> None:
    """Mark the calling thread as one of the snapshot builder's: its reads never wait on a
    tree's gate (they are what the gate waits for)."""
    _builder.active = active


class Gate:
    """Opened once the builder's prefetch of a snapshot's trees is over: until then, readers other
    than the builder wait, so a check never races the prefetch (a file is read once, and every
    failure is named in the snapshot's `unreadable` before a check can look)."""

    def __init__(self) -> None:
        self._open = threading.Event()

    def open(self) -> None:
        self._open.set()

    def wait(self) -> None:
        if not getattr(_builder, "active", False):
            self._open.wait()


class Failures(Mapping):
    """PRSnapshot.unreadable over the trees' `failures`, complete once the gate opens."""

    def __init__(self, trees: Iterable["RemoteTree"], gate: Gate):
        self._trees, self._gate = list(trees), gate

    def _merged(self) -> dict[str, str]:
        self._gate.wait()
        out: dict[str, str] = {}
        for tree in self._trees:  # later trees win (head last)
            out.update(tree.failures)
        return out

    def __getitem__(self, key: str) -> str:
        return self._merged()[key]

    def __iter__(self):
        return iter(self._merged())

    def __len__(self) -> int:
        return len(self._merged())

    def __repr__(self) -> str:
        return repr(self._merged())


class RemoteTree:
    """The files of one commit. `derive(path, blob_sha)` may produce a file without a download
    (e.g. from the PR patch); its bytes are used only when their git SHA matches the tree's."""

    def __init__(self, api: GitHubApi, repo: str, sha: str, blobs: BlobStore, *, derive: Derive | None = None,
                 entries: Entries | None = None, links: Iterable[str] = (), gate: Gate | None = None):
        self.api, self.repo, self.sha, self.blobs = api, repo, sha, blobs
        self.gate = gate
        self.derive = derive
        # Given `entries` (a verified archive's file list), no tree listing is requested.
        self._entries: Entries | None = dict(entries) if entries is not None else None
        # Symbolic links (tree mode 120000), followed inside the repository only (recipes.source).
        self._links: set[str] = set(links)
        self._error: str | None = None
        self._lock = threading.Lock()
        # Files that exist but could not be read, with the reason (PRSnapshot.unreadable).
        self.failures: dict[str, str] = {}
        self._index: PathIndex | None = None
        self._index_of: dict | None = None

    def _tree(self) -> dict[str, tuple[str, int]]:
        if self.gate is not None:
            self.gate.wait()
        if self._entries is None:
            with self._lock:
                if self._entries is None and self._error is None:
                    try:
                        data = self.api.get(f"/repos/{self.repo}/git/trees/{self.sha}", {"recursive": "1"})
                        if data.get("truncated"):
                            self._error = MSG_TREE_TRUNCATED.format(repo=self.repo, sha=self.sha)
                        else:
                            self._entries = {
                                e["path"]: (e["sha"], int(e.get("size") or 0))
                                for e in data.get("tree", []) if e.get("type") == "blob"
                            }
                            self._links = {e["path"] for e in data.get("tree", [])
                                           if e.get("type") == "blob" and str(e.get("mode")) == LINK_MODE}
                    except Exception as exc:  # the whole side becomes unreadable, with the reason
                        self._error = MSG_TREE.format(repo=self.repo, sha=self.sha, error=describe_error(exc))
        if self._entries is None:
            raise RemoteReadError(self._error)
        return self._entries

    def entries(self) -> Entries:
        """path -> (blob SHA, size) of every file; raises RemoteReadError when unlistable."""
        return self._tree()

    def blob_sha(self, path: str) -> str | None:
        entry = self._tree().get(path.strip("/"))
        return entry[0] if entry else None

    def read(self, path: str) -> bytes | None:
        path = path.strip("/")
        tree = self._tree()
        if not self._links:
            return self._read_entry(path)
        resolved, problem = resolve_links(path, self._link_text)
        if problem is not None:  # refused like a missing file, and named in `failures`
            self.failures[path] = problem
            return None
        if resolved in self._links:
            return None
        return self._read_entry(resolved) if resolved in tree else None

    def links(self) -> dict[str, str]:
        """Every symbolic link of the commit: path -> its target text (one blob read each)."""
        self._tree()
        return {p: self._link_text(p) or "" for p in sorted(self._links)}

    def _link_text(self, path: str) -> str | None:
        if path not in self._links:
            return None
        data = self._read_entry(path)
        return data.decode("utf-8", "surrogateescape") if data is not None else None

    def _read_entry(self, path: str) -> bytes | None:
        entry = self._tree().get(path)
        if entry is None:
            return None
        sha, size = entry
        data = self.blobs.cached(sha)
        if data is not None:
            return data
        if size > MAX_BLOB_BYTES:
            raise self._failed(path, MSG_TOO_LARGE.format(path=path, repo=self.repo, sha=self.sha, size=size,
                                                          limit=MAX_BLOB_BYTES))
        if self.derive is not None:
            derived = self.derive(path, sha)
            if derived is not None:
                self.blobs.put(sha, derived)
                return derived
        try:
            return self.blobs.get(sha)
        except Exception as exc:
            raise self._failed(path, MSG_BLOB.format(path=path, repo=self.repo, sha=self.sha,
                                                     error=describe_error(exc))) from None

    def _failed(self, path: str, reason: str) -> RemoteReadError:
        self.failures[path] = reason
        return RemoteReadError(reason)

    def list(self, directory: str) -> list[str]:
        tree = self._tree()
        if self._index is None or self._index_of is not tree:
            self._index, self._index_of = PathIndex(tree), tree
        return self._index.under(directory)

    def prefetch(self, paths: Iterable[str], pool: ThreadPoolExecutor) -> None:
        """Read these files in parallel now (missing or failing ones are left for later reads)."""
        try:
            tree = self._tree()
        except RemoteReadError:
            return
        wanted = [p for p in dict.fromkeys(x.strip("/") for x in paths) if p in tree and self.blobs.cached(tree[p][0]) is None]

        def one(p: str) -> None:
            try:
                self.read(p)
            except RemoteReadError as exc:
                log.debug("prefetch of %s failed: %s", p, exc)

        list(pool.map(one, wanted))
