"""The files a launch sees: the repository checked out at the workspace, what the launch itself
wrote or downloaded (an overlay), and inside a container the mounts that map its paths to the
host's.

Paths are absolute inside the interpreter. The repository is checked out at `WORKSPACE` on the
runner (the runners `cd` there and use relative paths, or `$GITHUB_WORKSPACE`); a container sees
a host folder at the container path its mount names. A read goes to the overlay first (a file
the launch wrote: its text when known, who wrote it), then to the repository. Nothing here
touches the real disk: the repository is read through the `FileSource` it was given.
"""
from __future__ import annotations

import hashlib
import posixpath
from dataclasses import dataclass
from typing import Any

from .trace import Site
from .words import Unknown, Word

WORKSPACE = "/github/workspace"
# Where another repository's checkout the launch makes (srt-slurm's) sits on the host: its files
# are named `<repo>@<commit>:<path>` (checks.result.external_path).
EXTERNAL = "/external-checkout"
MAX_OVERLAY_FILES = 2_000
MAX_FILE_CHARS = 1_000_000


@dataclass(frozen=True)
class Written:
    """A file the launch wrote: its text when the interpreter knows it, and by what."""

    text: Word
    by: str        # "heredoc", "download", "copy", ...
    site: Site


def norm(path: str) -> str:
    out = posixpath.normpath(path)
    return "/" + out.lstrip("/") if out.startswith("//") else out


class Files:
    """The host's view: the repository under WORKSPACE plus the overlay of written files."""

    def __init__(self, repo: Any):
        self.repo = repo  # a recipes.source.FileSource: read(path) -> bytes | None, list(dir)
        self.overlay: dict[str, Written] = {}
        self.read_texts: dict[str, str] = {}  # repository path -> text read (each file is read once)
        self._missing: set[str] = set()
        self.externals: list[tuple[str, Any]] = []  # (`repo@commit`, its FileSource)
        self.noted: set[str] = set()  # repository paths a caller's hook read for the launch
        # Every repository path the launch looked up, found or not (recipes.launch.path.trace_affected's
        # shortcut): `run_reads` to run or source it as shell, `data_reads` for anything else
        # (its text read as data, digested, a test of its existence, a folder listed).
        self.run_reads: set[str] = set()
        self.data_reads: set[str] = set()

    def mount_external(self, key: str, source: Any) -> str:
        """The host folder of another repository's checkout (`key` = `repo@commit`), read through
        its FileSource: a file there is named `key:path`."""
        for i, (k, _) in enumerate(self.externals):
            if k == key:
                return f"{EXTERNAL}/{i}"
        self.externals.append((key, source))
        return f"{EXTERNAL}/{len(self.externals) - 1}"

    def _external(self, p: str) -> tuple[str, Any, str] | None:
        """(key, source, path inside it) of a host path in an external checkout."""
        if not p.startswith(EXTERNAL + "/"):
            return None
        index, _, rel = p[len(EXTERNAL) + 1:].partition("/")
        if not index.isdigit() or int(index) >= len(self.externals):
            return None
        key, source = self.externals[int(index)]
        return key, source, rel

    def note(self, rel: str) -> None:
        """A repository file the launch depends on that was read outside `read` (a hook's recipe)."""
        self.noted.add(rel)

    def depends(self) -> frozenset[str]:
        """The repository paths the launch's outcome depends on: every file read, every path
        found absent (adding it changes the launch) and what a hook noted."""
        return frozenset(self.read_texts) | frozenset(self._missing) | frozenset(self.noted)

    def repo_path(self, host_path: str) -> str | None:
        """The repository path of a host path under the workspace, or None."""
        p = norm(host_path)
        if p == WORKSPACE:
            return ""
        if p.startswith(WORKSPACE + "/"):
            return p[len(WORKSPACE) + 1:]
        ext = self._external(p)
        if ext is not None:
            return f"{ext[0]}:{ext[2]}"
        return None

    def write(self, host_path: str, written: Written) -> bool:
        """Record a write; False when the overlay is full (the caller reports it)."""
        p = norm(host_path)
        if p not in self.overlay and len(self.overlay) >= MAX_OVERLAY_FILES:
            return False
        if isinstance(written.text, str) and len(written.text) > MAX_FILE_CHARS:
            written = Written(Unknown("the text written is over the size cap"), written.by, written.site)
        self.overlay[p] = written
        return True

    def written(self, host_path: str) -> Written | None:
        return self.overlay.get(norm(host_path))

    def inside_written(self, host_path: str) -> bool:
        """Whether a folder above the path is one the launch wrote (`git clone`, `tar -x`,
        `mkdir`, a download unpacked): what else is in it is not known."""
        if not self.overlay:
            return False
        p = posixpath.dirname(norm(host_path))
        while p not in ("/", ""):
            if p in self.overlay:
                return True
            p = posixpath.dirname(p)
        return False

    def read(self, host_path: str, *, run: bool = False) -> str | None:
        """The repository file's text at a host path (not the overlay), or None. `run`: read to
        run or source it as shell (else it is read as data)."""
        rel = self.repo_path(host_path)
        if rel is None or rel == "":
            return None
        (self.run_reads if run else self.data_reads).add(rel)
        if rel in self.read_texts:
            return self.read_texts[rel]
        if rel in self._missing:
            return None
        ext = self._external(norm(host_path))
        try:
            data = ext[1].read(ext[2]) if ext is not None else self.repo.read(rel)
        except Exception:  # a FileSource raises on a folder, a link out, a file over its cap
            return None
        if data is None:
            self._missing.add(rel)
            return None
        text = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
        self.read_texts[rel] = text
        return text

    def exists(self, host_path: str) -> bool | None:
        """Whether a host path exists: True/False for the overlay and the repository, None
        elsewhere (the runner's own disk, the image: unknown)."""
        p = norm(host_path)
        if p in self.overlay:
            return True
        if self.inside_written(p):
            return None  # in a folder the launch cloned, unpacked or made: its contents are not known
        rel = self.repo_path(p)
        if rel is None:
            return None
        if rel == "":
            return True
        if self.read(p) is not None:
            return True
        self.data_reads.add(rel)
        ext = self._external(p)
        try:
            return bool(ext[1].list(ext[2]) if ext is not None else self.repo.list(rel))
        except Exception:
            return None

    def digest(self, host_path: str) -> str | None:
        """A short digest of the repository file at a host path (None: not a repository file).
        A word found to name no file is an argument, not a file the launch depends on."""
        rel = self.repo_path(host_path)
        known = rel in self._missing
        text = self.read(host_path)
        if text is None:
            if not known and rel is not None:
                self._missing.discard(rel)
            return None
        return hashlib.blake2b(text.encode("utf-8", "replace"), digest_size=8).hexdigest()
