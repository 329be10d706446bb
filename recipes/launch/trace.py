"""The product of the interpreter: a trace of what one benchmark point runs.

A `Trace` is an ordered list of `Effect`s. Each effect says what happened (a command executed,
a file written, read, sourced or run, a download, an install, a container started, a server or
the benchmark client launched, or an unknown), where (`site`: file and line) and how the launch
got there (`chain`: the runner line, the script lines, the functions, the container that led to
it). Effects reached under a branch the interpreter could not decide carry that branch in
`under`: both arms of such a branch are run, so nothing is missed because a value was unknown.

How two traces are compared (the serving part, the client part, no line numbers) is
`recipes.launch.compare`.
"""
from __future__ import annotations

from dataclasses import MISSING, dataclass, field, fields
from typing import Iterator

from .words import Word

# Effect kinds.
EXEC = "exec"            # an external command executed (argv, env, cwd)
WRITE = "write"          # a file or folder written (path, how)
READ = "read"            # a file read by a command
SOURCE = "source"        # a shell file sourced or run, or shell text evaluated
RUN_WRITTEN = "run-written"  # a file the launch path wrote or downloaded, then run or imported
DOWNLOAD = "download"
INSTALL = "install"
CONTAINER = "container"  # a container started (image, env, mounts, workdir)
SERVER = "server"        # an engine server process (engine, argv, env)
CLIENT = "client"        # the benchmark client (argv, env)
PYTHON = "python"        # other Python run (module, script or inline code)
UNKNOWN = "unknown"      # a value, a branch or a command the interpreter could not resolve


def show(word: Word | None) -> str:
    """A word as a reviewer reads it: its text, or `<unknown: why>`."""
    if word is None:
        return ""
    return word if isinstance(word, str) else f"<unknown: {word.why}>"


@dataclass(frozen=True)
class Site:
    path: str
    line: int
    # The last line of the statement (its continuation lines and here-document): what a diff
    # must touch to change it. Not part of the site's identity.
    end: int = field(default=0, compare=False)

    @property
    def last(self) -> int:
        return max(self.line, self.end)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Effect:
    kind: str
    site: Site
    chain: tuple[Site, ...] = ()            # outermost first; the effect's own site is not in it
    chain_names: tuple[str, ...] = ()       # the same hops as the reviewer reads them ("fn start_server")
    argv: tuple[Word, ...] = ()
    env: tuple[tuple[str, Word], ...] = ()  # the environment the command sees (exported names)
    cwd: Word | None = None
    path: Word | None = None                # write/read/source/run-written/download target
    how: str = ""                           # write: how; install: manager; server: engine; python: mode
    detail: str = ""                        # unknown: why; run-written: who wrote it
    container: str = ""                     # the image the effect runs inside ("" on the host)
    under: tuple[str, ...] = ()             # undecided branches around it ("if [[ ... ]] at f:12")
    client: bool = False                    # reached through the benchmark client
    # Repository files the command reads by naming them (a Python script, a config file):
    # (repository path, digest of its text), so an edit of such a file changes the effect.
    files: tuple[tuple[str, str], ...] = ()
    # unknown: the URL of the download it runs as shell code (`curl URL | sh`, `bash -c "$(curl
    # URL)"`, `eval "$(curl URL)"`), read as it is; "" when the code is not one download.
    download: str = ""
    # Files the launch wrote that the command names: (the word that names it, the text written
    # there as far as known), so the text of a config file it wrote changes the effect.
    wrote: tuple[tuple[str, Word], ...] = ()

    def where(self) -> str:
        """`runner:12 -> script:40 -> fn start_server -> script:88`, for evidence: each hop's
        line, and the function a hop called."""
        hops: list[str] = []
        for i, s in enumerate(self.chain):
            if not hops or hops[-1] != str(s):  # a container and the command run in it share a line
                hops.append(str(s))
            name = self.chain_names[i] if i < len(self.chain_names) else ""
            if name.startswith("fn "):
                hops.append(name)
        if hops[-1:] != [str(self.site)]:
            hops.append(str(self.site))
        return " -> ".join(hops)

    def shown_path(self) -> str:
        """The effect's path as the process that has it sees it (an image's own file without the
        image's name before it)."""
        path = show(self.path)
        prefix = f"{self.container}:"
        return path[len(prefix):] if self.container and path.startswith(prefix) else path

    def describe(self) -> str:
        """One line for a reviewer: what happened, without the chain."""
        if self.kind in (EXEC, SERVER, CLIENT, PYTHON):
            text = " ".join(show(w) for w in self.argv)
            return f"{self.kind} `{_clip(text)}`"
        if self.kind == UNKNOWN:
            return f"could not interpret: {self.detail}"
        if self.kind == RUN_WRITTEN:
            return f"runs {show(self.path)}, which {self.detail}"
        if self.kind == INSTALL:
            return f"{self.how} installs {_clip(' '.join(show(w) for w in self.argv))}"
        if self.kind == CONTAINER:
            runs = " ".join(show(w) for w in self.argv)
            return f"starts container {self.how or self.container}" + (f" running `{_clip(runs)}`" if runs else "")
        return f"{self.kind} {show(self.path)}{f' ({self.how})' if self.how else ''}"


# Every field of an effect with its default (all but `kind` and `site` have one).
_EFFECT_DEFAULTS = {f.name: f.default for f in fields(Effect) if f.default is not MISSING}
_EFFECT_FIELDS = frozenset(f.name for f in fields(Effect))


def effect(**given: object) -> Effect:
    """`Effect(**given)`, made without the frozen dataclass's `__init__`, which sets each of its
    17 fields through `object.__setattr__` (the interpreter records one for most commands it
    runs): the same object, its fields the defaults and `given`."""
    if not (given.keys() <= _EFFECT_FIELDS and "kind" in given and "site" in given):
        return Effect(**given)  # type: ignore[arg-type]  # raises the dataclass's own TypeError
    new = object.__new__(Effect)
    values = new.__dict__
    values.update(_EFFECT_DEFAULTS)
    values.update(given)
    return new


def _clip(text: str, limit: int = 160) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


@dataclass
class Trace:
    """What one benchmark point runs at one tree."""

    effects: list[Effect] = field(default_factory=list)
    # What of each file the launch ran (Interpreter.executed): file -> the lines of the statements
    # it evaluated, and the functions it defined (a definition runs none of the body); the paths it looked up, to run as shell or as data
    # (recipes.launch.fs.Files). recipes.launch.path.trace_affected decides from these whether a PR's change
    # can have been reached at all.
    executed: dict[str, frozenset[int]] = field(default_factory=dict)
    defined: dict[str, frozenset[tuple[int, int]]] = field(default_factory=dict)  # functions: (first, last)
    run_reads: frozenset[str] = frozenset()
    data_reads: frozenset[str] = frozenset()

    def __iter__(self) -> Iterator[Effect]:
        return iter(self.effects)

    def of(self, *kinds: str) -> list[Effect]:
        return [e for e in self.effects if e.kind in kinds]
