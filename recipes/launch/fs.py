"""The files a launch sees: the repository checked out at the workspace, what the launch itself
wrote or downloaded (an overlay), and inside a container the mounts that map its paths to the
host's.

Paths are absolute inside the interpreter. The repository is checked out at `WORKSPACE` on the
runner (the runners `cd` there and use relative paths, or `$GITHUB_WORKSPACE`); a container sees
a host folder at the container path its mount names. A read goes to the overlay first (a file
the launch wrote: its text when known, who wrote it), then to the repository. Nothing here
touches the real disk: the repository is read through the `FileSource` it was given.

A folder the launch copies the checkout (or a folder of it) to is a copy of the checkout
(`Files.copy`): `cp -rT`, `rsync -a SRC/ DEST`, or `tar -c` of it into an archive, copies of that
archive (`sbcast`, `cp`) and `tar -x` of it into a folder. A file of the repository at that
folder is the repository's file (what the launch wrote into the checkout before the copy goes
along; what it writes into the copy afterwards is the overlay's, as in WORKSPACE); any other
file there is not known (the folder may hold files from before). A copy's place may be a value
the bot cannot know (`/tmp/ws-$JOB_ID`): see `Files.copy`.
"""
from __future__ import annotations

import functools
import hashlib
import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .trace import Site
from .words import Unknown, Word

if TYPE_CHECKING:
    from .effects import Copy

WORKSPACE = "/github/workspace"
# Where another repository's checkout the launch makes (srt-slurm's) sits on the host: its files
# are named `<repo>@<commit>:<path>` (checks.result.external_path).
EXTERNAL = "/external-checkout"
# Where a copy of the checkout at a place the bot cannot name sits (`Files.copy`): `<COPIES>/<n>`.
COPIES = "/copy-of-checkout"
MAX_OVERLAY_FILES = 2_000
MAX_COPIES = 64
MAX_FILE_CHARS = 1_000_000


@dataclass(frozen=True)
class Written:
    """A file the launch wrote: its text when the interpreter knows it, and by what."""

    text: Word
    by: str        # "heredoc", "download", "copy", ...
    site: Site


# Writes that leave the files of a folder there as they were (`mkdir -p` of a folder that is
# there, `chmod -R`): a copy of the checkout stays one.
_SAME_FILES = ("create", "mode")

# A folder (or file) of the checkout as a copy takes it: its WORKSPACE path, and the files the
# launch had written under it (path relative to it, what was written).
_Tree = tuple[str, tuple[tuple[str, Written], ...]]
# A place named by a value the bot cannot know, as a record's key (`Files._key`).
_Place = tuple[str, str, str]


@functools.lru_cache(maxsize=8192)
def norm(path: str) -> str:
    """The path without `.`, `..` and doubled slashes (kept per path: every command looks paths up)."""
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
        # Copies of the checkout: host folder (or file) -> the WORKSPACE path it is a copy of.
        self.copies: dict[str, str] = {}
        # Archives of the checkout (`tar -c`, and their copies): archive path -> its members, each
        # (member name, the WORKSPACE path, the overlay files under it then, relative).
        self.archives: dict[str | _Place, tuple[tuple[str, _Tree], ...]] = {}
        # A place the bot cannot name (an `Unknown`): what wrote there (`how`s), and the folder
        # that stands for a copy of the checkout there.
        self._unknown_writes: dict[_Place, list[str]] = {}
        self._unknown_copies: dict[_Place, str] = {}
        self._named = 0  # the folders `COPIES/<n>` given so far

    def snapshot(self) -> tuple:
        """What a later command can read of the files the launch made, as values that compare
        equal when nothing changed (a loop's fixed point, a recursive call's start): the written
        files, the copies and archives of the checkout, the places named by unknown values."""
        return (dict(self.overlay), dict(self.copies), dict(self.archives),
                {k: tuple(v) for k, v in self._unknown_writes.items()}, dict(self._unknown_copies), self._named)

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
        """The repository path of a host path under the workspace (or a copy of it), or None."""
        p = norm(host_path)
        if p == WORKSPACE:
            return ""
        if p.startswith(WORKSPACE + "/"):
            return p[len(WORKSPACE) + 1:]
        ext = self._external(p)
        if ext is not None:
            return f"{ext[0]}:{ext[2]}"
        copied = self._copied(p)
        if copied is not None:
            return copied[len(WORKSPACE) + 1:] if copied != WORKSPACE else ""
        return None

    def _copied(self, p: str) -> str | None:
        """The WORKSPACE path a (normalised) host path in a copy of the checkout stands for: the
        copy nearest above it decides, unless a folder the launch wrote since (cloned, unpacked,
        deleted; one it only made with `mkdir` or changed the mode of holds what is copied into
        it) is nearer."""
        if not self.copies:
            return None
        q = p
        while True:
            if q in self.copies:
                return self.copies[q] + p[len(q):]
            if q != p and q in self.overlay and self.overlay[q].by.split(" ", 1)[0] not in _SAME_FILES:
                return None
            if q in ("/", "") or q.startswith(WORKSPACE + "/"):
                return None
            q = posixpath.dirname(q)

    def copy(self, copy: Copy, sources: list[Word], dest: Word) -> None:
        """Record what a copy made (`recipes.launch.effects.Copy`; `sources` and `dest` as host
        paths), after its writes were recorded. Only a copy of the checkout (a folder or a file
        of it, or of a copy of it) is kept; anything else stays what the writes made it.

        A place the bot cannot name (`/tmp/ws-$JOB_ID` with the job id unknown) is keyed by its
        value: the same variable's value, used again, is equal to it. Two places an equal value
        names could still be two places (two `$(mktemp)` of unknown templates): such a key is kept
        only when nothing but `mkdir`, `rm` or `chmod` wrote that value before the copy, and dropped by
        any later write to it (`changed`), so an archive or a folder written twice is never taken
        for the checkout's. A copy of the checkout there stands at its own folder, `COPIES/<n>`,
        which `unknown_copy` gives for the value and the paths below it."""
        kind = copy.kind
        if kind == "commit":
            # Only the checkout itself is a git work tree the bot knows, and a clone of it holds
            # its commit: the repository's files, not what the launch wrote there.
            if isinstance(sources[0], str) and norm(sources[0]) == WORKSPACE and self._tree_of(WORKSPACE):
                self._place((WORKSPACE, ()), dest)
        elif kind in ("tree", "pack"):
            trees = [self._tree_of(s) for s in sources]
            if any(t is None for t in trees):
                return
            if kind == "tree":
                self._place(trees[0], dest)
            elif self._keyable(dest, ("create",)):
                self.archives[self._key(dest)] = tuple((m, t) for (_, m), t in zip(copy.sources, trees) if t)
        elif kind == "file":
            found = self.archives.get(self._key(sources[0]))
            if found is not None and self._keyable(dest, ("copy",)):
                self.archives[self._key(dest)] = found
        elif kind == "unpack":
            found = self.archives.get(self._key(sources[0]))
            for member, tree in found or ():
                if isinstance(dest, str):
                    self._place(tree, posixpath.join(dest, member) if member else dest)
                elif not member:
                    self._place(tree, dest)

    @staticmethod
    def _key(path: Word) -> str | _Place:
        """A place as a record's key: a path, or an unknown value's reason and known ends (what
        else it carries is left out: the same variable's value read back from shell text that
        held it, or split from a list of mounts, keeps them but not its kind nor what it held)."""
        return norm(path) if isinstance(path, str) else (path.why, path.prefix, path.suffix)

    def _keyable(self, path: Word, own: tuple[str, ...]) -> bool:
        """Whether a place can hold a record: a known path, or a value nothing wrote before this
        copy but `mkdir`, `rm` or `chmod` (the copy's own write, of a kind in `own`, is its last)."""
        if isinstance(path, str):
            return True
        hows = self._unknown_writes.get(self._key(path), [])
        return bool(hows) and hows[-1] in own and all(h in ("create", "delete", "mode") for h in hows[:-1])

    def _tree_of(self, source: Word) -> _Tree | None:
        """The checkout's folder (or file) a copy reads, with the files the launch wrote under it:
        None when it is not one (a folder the launch made, cloned or wrote)."""
        if not isinstance(source, str):
            return None
        p = norm(source)
        if p in self.overlay:
            return None
        if p == WORKSPACE or p.startswith(WORKSPACE + "/"):
            if self.inside_written(p):
                return None
            canon = p
        else:
            canon = self._copied(p)
            if canon is None:
                return None
        if canon != WORKSPACE and not self._in_repo(canon):
            return None
        below = tuple((q[len(p):], w) for q, w in self.overlay.items() if q.startswith(p + "/"))
        return canon, below

    def _in_repo(self, workspace_path: str) -> bool:
        """Whether the repository holds a file or folder at a WORKSPACE path (not the overlay)."""
        rel = self.repo_path(workspace_path)
        return rel == "" or (rel is not None and self._repo_has(workspace_path, rel) is True)

    def _place(self, tree: _Tree, dest: Word) -> None:
        """`dest` now holds the checkout's folder `tree[0]`: its repository files, and what the
        launch had written under it. Files the launch wrote there before that the repository does
        not hold stay."""
        if isinstance(dest, Unknown):
            if not self._keyable(dest, ("copy", "unpack")):
                return
            d = self._unknown_copies.get(self._key(dest)) or f"{COPIES}/{self._named}"
        else:
            d = norm(dest)
        if d in ("/", "") or d == WORKSPACE or d.startswith(WORKSPACE + "/") or d.startswith(EXTERNAL + "/") \
                or (d not in self.copies and len(self.copies) >= MAX_COPIES):
            return
        if isinstance(dest, Unknown) and self._key(dest) not in self._unknown_copies:
            self._unknown_copies[self._key(dest)] = d
            self._named += 1
        canon, below = tree
        for q in [q for q in self.overlay if q == d or q.startswith(d + "/")]:
            if q == d or self._in_repo(canon + q[len(d):]):
                del self.overlay[q]  # the copy's file (or folder) replaces what was there
        for q in [q for q in self.copies if q == d or q.startswith(d + "/")]:
            del self.copies[q]
        self.copies[d] = canon
        for rel, written in below:
            self.write(d + rel, written)

    def unknown_copy(self, path: Unknown) -> str | None:
        """The folder that stands for a copy of the checkout at a place the bot cannot name: the
        value itself, or that value and a known path after it (`$DEST/benchmarks/x.sh`)."""
        if not self._unknown_copies:
            return None
        why, prefix, suffix = self._key(path)
        for (w, p, s), folder in self._unknown_copies.items():
            if (w, p) == (why, prefix) and (suffix == s or suffix.startswith(s + "/")):
                return norm(folder + suffix[len(s):])
        return None

    def changed(self, path: Word, how: str) -> None:
        """A write of any kind to `path`, before what it copies is recorded: an archive there is
        replaced, a copy of the checkout there (or below) overwritten, unless the write leaves its
        files as they were (`_SAME_FILES`; a mode change leaves an archive as it was). A place the bot cannot
        name that is written twice is dropped for good (`copy`)."""
        if isinstance(path, Unknown):
            key = self._key(path)
            self._unknown_writes.setdefault(key, []).append(how)
            if how != "mode":
                self.archives.pop(key, None)
            if how not in _SAME_FILES and key in self._unknown_copies:
                self.copies.pop(self._unknown_copies.pop(key), None)
            return
        p = norm(path)
        if how != "mode":
            for key in [k for k in self.archives if isinstance(k, str) and (k == p or k.startswith(p + "/"))]:
                del self.archives[key]
        if how not in _SAME_FILES:
            for q in [q for q in self.copies if q == p or q.startswith(p + "/")]:
                del self.copies[q]

    def as_checkout(self, host_path: str) -> str:
        """A host path in a copy of the checkout as the checkout's own path (WORKSPACE/...); any
        other path as it is."""
        p = norm(host_path)
        if p.startswith(WORKSPACE + "/") or p == WORKSPACE:
            return host_path
        copied = self._copied(p)
        return copied if copied is not None else host_path

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
        copied = self._copied(p)
        if copied is not None:
            # A file of the checkout is in its copy; any other may be there from before.
            return True if self._in_repo(copied) else None
        if self.inside_written(p):
            return None  # in a folder the launch cloned, unpacked or made: its contents are not known
        rel = self.repo_path(p)
        if rel is None:
            return None
        if rel == "":
            return True
        return self._repo_has(p, rel)

    def _repo_has(self, p: str, rel: str) -> bool | None:
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
