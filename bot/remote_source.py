"""A FileSource over the GitHub API: one recursive tree listing per commit, file contents fetched
only when read (blobs API, so files over 1 MB work too), each blob once, shared across trees."""
from __future__ import annotations

import base64
import hashlib
import logging
import re
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable, Iterable

from bot.github_client import GitHubApi, describe_error

log = logging.getLogger(__name__)

# A file larger than this is not fetched (the blobs API serves up to 100 MB; no check needs that).
MAX_BLOB_BYTES = 25 * 1024 * 1024
MSG_TREE = "the file list of {repo}@{sha} could not be fetched: {error}"
MSG_TREE_TRUNCATED = "GitHub truncated the file list of {repo}@{sha} (too many files)"
MSG_BLOB = "{path} at {repo}@{sha} could not be fetched: {error}"
MSG_TOO_LARGE = "{path} at {repo}@{sha} is {size} bytes, over the {limit}-byte fetch cap"
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


class RemoteTree:
    """The files of one commit. `derive(path, blob_sha)` may produce a file without a download
    (e.g. from the PR patch); its bytes are used only when their git SHA matches the tree's."""

    def __init__(self, api: GitHubApi, repo: str, sha: str, blobs: BlobStore, *, derive: Derive | None = None):
        self.api, self.repo, self.sha, self.blobs = api, repo, sha, blobs
        self.derive = derive
        self._entries: dict[str, tuple[str, int]] | None = None
        self._error: str | None = None
        self._lock = threading.Lock()

    def _tree(self) -> dict[str, tuple[str, int]]:
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
                    except Exception as exc:  # the whole side becomes unreadable, with the reason
                        self._error = MSG_TREE.format(repo=self.repo, sha=self.sha, error=describe_error(exc))
        if self._entries is None:
            raise RemoteReadError(self._error)
        return self._entries

    def blob_sha(self, path: str) -> str | None:
        entry = self._tree().get(path.strip("/"))
        return entry[0] if entry else None

    def read(self, path: str) -> bytes | None:
        path = path.strip("/")
        entry = self._tree().get(path)
        if entry is None:
            return None
        sha, size = entry
        data = self.blobs.cached(sha)
        if data is not None:
            return data
        if size > MAX_BLOB_BYTES:
            raise RemoteReadError(MSG_TOO_LARGE.format(path=path, repo=self.repo, sha=self.sha, size=size,
                                                       limit=MAX_BLOB_BYTES))
        if self.derive is not None:
            derived = self.derive(path, sha)
            if derived is not None:
                self.blobs.put(sha, derived)
                return derived
        try:
            return self.blobs.get(sha)
        except Exception as exc:
            raise RemoteReadError(MSG_BLOB.format(path=path, repo=self.repo, sha=self.sha,
                                                  error=describe_error(exc))) from None

    def list(self, directory: str) -> list[str]:
        directory = directory.strip("/")
        prefix = f"{directory}/" if directory else ""
        return sorted(p for p in self._tree() if p.startswith(prefix))

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
