"""The interpreter's state: caps, control-flow signals, variables and functions of a shell
process, the merge of undecided branches, and the context of the file being run."""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Optional

from .fs import WORKSPACE
from .trace import CLIENT, EXEC, PYTHON, READ, RUN_WRITTEN, SERVER, Site
from .words import Rest, Unknown, Word

MAX_STEPS = 300_000          # nodes evaluated per trace


MAX_VALUE_CHARS = 200_000    # one variable's or word's text


MAX_FIELDS = 10_000          # words one expansion may produce (brace expansion, arrays)


MAX_LOOP = 512               # iterations of one loop


MAX_DEPTH = 48               # nested calls, sources, evals, shells, substitutions


MAX_EFFECTS = 50_000


MAX_TRIM_CHARS = 4_096       # pattern trims and replacements on longer values are unknown


MAX_SCRIPT_CHARS = 1_000_000


MAX_ARRAY = 10_000


MAX_PARSED = 512             # syntax trees kept per process (every trace of a review shares them)


_PARSED: dict[bytes, tuple[Any, bytes]] = {}


BUILTINS = frozenset({
    "cd", "pushd", "popd", "pwd", "export", "declare", "typeset", "local", "readonly", "unset", "set",
    "shopt", "shift", "source", ".", "eval", "exec", "read", "printf", "echo", "let", "mapfile", "readarray",
    "alias", "unalias", "trap", "return", "exit", "break", "continue", "true", "false", ":", "test", "[",
    "wait", "getopts", "command", "builtin", "type", "hash", "ulimit", "umask", "jobs", "disown", "kill",
    "times", "caller", "enable", "help", "logout", "bg", "fg", "suspend", "compgen", "complete", "dirs",
    "history", "fc",
})


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


class Budget(Exception):
    """A cap was hit: the interpretation of this trace stops."""


# A point's value that the trace carries as a symbol (its concurrency): every point of an arm then
# shares one trace. A decision that reads the symbol (a test, arithmetic, a pattern) is undecided,
# like one on any value the interpreter does not know: every arm it may take is traced.
SYMBOL = "\x00pt:"


def symbolic(*values: object) -> bool:
    """Whether a decision would read a point's symbolic value (then it is not decided)."""
    return any(isinstance(v, str) and SYMBOL in v for v in values)


def symbol(name: str) -> str:
    return f"{SYMBOL}{name}\x00"


class _Exit(Exception):
    def __init__(self, status: Optional[int], site: Optional[Site] = None):
        self.status = status
        self.site = site  # the `exit` (or `exec`) that ends the script


class _Return(Exception):
    def __init__(self, status: Optional[int]):
        self.status = status


class _Loop(Exception):
    def __init__(self, kind: str, n: int):
        self.kind, self.n = kind, n


@dataclass
class Var:
    value: Any  # Word, list[Word] (indexed array) or dict[str, Word] (associative array)
    exported: bool = False
    readonly: bool = False


@dataclass
class Func:
    node: Any
    src: bytes
    path: str
    local: Any = None  # the file's path as the defining script named it (its BASH_SOURCE)


@dataclass
class State:
    """One shell process: variables (a stack of function frames), functions, aliases, cwd."""

    frames: list[dict[str, Var]] = field(default_factory=lambda: [{}])
    functions: dict[str, Func] = field(default_factory=dict)
    aliases: dict[str, str] = field(default_factory=dict)
    positional: list[Word] = field(default_factory=list)
    argv0: Word = "bash"
    cwd: Word = WORKSPACE
    dirstack: list[Word] = field(default_factory=list)
    traps: dict[str, tuple[Word, Site]] = field(default_factory=dict)
    expand_aliases: bool = False
    status: Optional[int] = 0
    container: str = ""
    mounts: tuple[tuple[str, str], ...] = ()  # (container path, host path)
    # An environment the launch does not fully set (srt-slurm's setup-script container): an
    # environment variable it never set may be set there (recipes.launch.expand).
    open_env: bool = False
    unset_names: frozenset = frozenset()  # names this process unset (`unset X`): unset for sure

    def assigned(self, name: str) -> bool:
        return name in self.unset_names

    def copy(self) -> "State":
        # Vars and their values are never changed in place (`set` puts a new Var, assignments
        # build new lists and dicts), so a copy shares them: one dict copy per frame.
        return State(frames=[dict(f) for f in self.frames],
                     functions=dict(self.functions), aliases=dict(self.aliases), positional=list(self.positional),
                     argv0=self.argv0, cwd=self.cwd, dirstack=list(self.dirstack), traps=dict(self.traps),
                     expand_aliases=self.expand_aliases, status=self.status, container=self.container,
                     mounts=self.mounts, open_env=self.open_env, unset_names=self.unset_names)

    def child(self) -> "State":
        """A new shell process started from this one: exported variables only."""
        env = self.exported()
        return State(frames=[{k: Var(v, exported=True) for k, v in env.items()}], cwd=self.cwd,
                     container=self.container, mounts=self.mounts, open_env=self.open_env,
                     unset_names=self.unset_names)

    def lookup(self, name: str) -> Optional[Var]:
        for frame in reversed(self.frames):
            if name in frame:
                return frame[name]
        return None

    def get(self, name: str) -> Any:
        var = self.lookup(name)
        return None if var is None else var.value

    def set(self, name: str, value: Any, *, local: bool = False, export: Optional[bool] = None) -> None:
        frame = self.frames[-1] if local else None
        if frame is None:
            for f in reversed(self.frames):
                if name in f:
                    frame = f
                    break
            else:
                frame = self.frames[0]
        var = frame.get(name)
        if var is None:
            frame[name] = Var(value, exported=bool(export))
        else:
            frame[name] = Var(var.value if value is _KEEP else value,
                              var.exported if export is None else export, var.readonly)

    def unset(self, name: str) -> None:
        if self.open_env:
            self.unset_names = self.unset_names | {name}
        for frame in reversed(self.frames):
            if name in frame:
                del frame[name]
                return

    def exported(self) -> dict[str, Word]:
        out: dict[str, Word] = {}
        for frame in self.frames:
            for k, v in frame.items():
                if v.exported:
                    value = v.value
                    # Most values are text, their own scalar (run for every command a launch runs).
                    out[k] = value if value.__class__ is str else _scalar(value)
                elif k in out:
                    del out[k]
        return out


_KEEP = object()


# Effects whose named repository files are part of them (their text changes the effect).
_NAMES_FILES = frozenset({EXEC, SERVER, CLIENT, PYTHON, READ, RUN_WRITTEN})


_FILE_SUFFIXES = (".py", ".yaml", ".yml", ".json", ".toml", ".cfg", ".jinja", ".txt")


_SHELL_SUFFIXES = (".sh", ".bash", ".slurm")  # interpreted: their effects are in the trace


MAX_NAMED_WORDS = 64


_ABSENT = object()


def _scalar(value: Any) -> Word:
    if isinstance(value, list):
        return value[0] if value else ""
    if isinstance(value, dict):
        return value.get("0", "")
    return "" if value is None else value


def _join_unknown(parts: Iterable[Word]) -> Word:
    parts = list(parts)
    out: list[str] = []
    for i, p in enumerate(parts):
        if isinstance(p, Unknown):
            known = "".join(out) + p.prefix
            tail: list[str] = []
            for q in reversed(parts[i + 1:]):
                if isinstance(q, Unknown):
                    tail.append(q.suffix)
                    break
                tail.append(q)
            else:
                tail.append(p.suffix)
            suffix = "".join(reversed(tail))
            if known == p.prefix and suffix == p.suffix:
                return p
            return Unknown(p.why, known[:256], suffix[-256:])
        out.append(p)
    text = "".join(out)
    if len(text) > MAX_VALUE_CHARS:
        return Unknown(f"a value over {MAX_VALUE_CHARS:,} characters")
    return text


def _merge_values(a: Any, b: Any, why: str) -> Any:
    """Two arms' values of one variable: the same value, else what both arms agree on: the
    words an array starts with (`PIP=(python3 -m pip install)` and `PIP+=(--flag)` in one arm
    keep the command), the text a string starts and ends with."""
    if a == b:
        return a
    if isinstance(a, list) and isinstance(b, list):
        if len(a) == len(b) and not (a and isinstance(a[-1], Rest)) and not (b and isinstance(b[-1], Rest)):
            return [x if x == y else Unknown(why) for x, y in zip(a, b)]
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n] and not isinstance(a[n], Rest):
            n += 1
        return a[:n] + [Rest(why)]
    if isinstance(a, str) and isinstance(b, str):
        head = posixpath.commonprefix([a, b])
        tail = posixpath.commonprefix([a[len(head):][::-1], b[len(head):][::-1]])[::-1]
        return Unknown(why, head[:256], tail[-256:])
    return Unknown(why)


def merge_states(states: list[State], why: str) -> State:
    """The state after a branch whose arm is not known: what the arms agree on, else unknown."""
    first = states[0]
    if len(states) == 1:
        return first
    out = first.copy()
    for depth, frame in enumerate(out.frames):
        others = [s.frames[depth] if depth < len(s.frames) else {} for s in states[1:]]
        # Arms share the Var objects they did not set (State.copy), so only names bound to
        # another object in some arm can differ.
        names: set[str] = set()
        for other in others:
            for k, v in other.items():
                if frame.get(k) is not v:
                    names.add(k)
            if len(other) != len(frame) or names:
                names.update(k for k in frame if k not in other)
        for name in names:
            values = []
            exported = False
            for f in [frame, *others]:
                var = f.get(name)
                values.append(None if var is None else var.value)
                exported = exported or bool(var and var.exported)
            merged = values[0]
            for v in values[1:]:
                merged = _merge_values(merged, v, why)
            if merged is None:
                frame.pop(name, None)
            else:
                frame[name] = Var(merged, exported=exported)
    for s in states[1:]:
        for name, fn in s.functions.items():
            out.functions.setdefault(name, fn)
        for name, text in s.aliases.items():
            out.aliases.setdefault(name, text)
        out.cwd = _merge_values(out.cwd, s.cwd, why)
        out.expand_aliases = out.expand_aliases or s.expand_aliases
        out.traps.update(s.traps)
        if out.positional != s.positional:
            out.positional = _merge_values(list(out.positional), list(s.positional), why)
    out.status = None
    return out


@dataclass(frozen=True)
class Ctx:
    path: str                       # the file being run (repository path, or a label)
    src: bytes
    chain: tuple[Site, ...] = ()
    names: tuple[str, ...] = ()
    under: tuple[str, ...] = ()
    function: str = ""
    depth: int = 0
    client: bool = False
    local: Word = ""   # the running file as its process names it (`$BASH_SOURCE`)

    def site(self, node: Any) -> Site:
        # A command's here-document belongs to the statement around it.
        top = node
        while getattr(top, "parent", None) is not None and top.parent.type == "redirected_statement":
            top = top.parent
        return Site(self.path, node.start_point[0] + 1, top.end_point[0] + 1)

    def text(self, node: Any) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def deeper(self, site: Site, name: str, **kw: Any) -> "Ctx":
        if self.depth + 1 > MAX_DEPTH:
            raise Budget(f"calls nested over {MAX_DEPTH} deep at {site}")
        return replace(self, chain=self.chain + (site,), names=self.names + (name,), depth=self.depth + 1, **kw)


class Out:
    """A command's standard output as far as it is known: pieces of text, or unknown."""

    def __init__(self) -> None:
        self.parts: list[Word] = []
        self.size = 0

    def write(self, word: Word) -> None:
        if isinstance(word, str):
            self.size += len(word)
            if self.size > MAX_VALUE_CHARS:
                word = Unknown(f"output over {MAX_VALUE_CHARS:,} characters")
        self.parts.append(word)

    def value(self) -> Word:
        return _join_unknown(self.parts)


def _assign_state(target: State, source: State) -> None:
    target.frames = source.frames
    target.functions = source.functions
    target.aliases = source.aliases
    target.positional = source.positional
    target.cwd = source.cwd
    target.traps = source.traps
    target.expand_aliases = source.expand_aliases
    target.status = source.status


def _first_error(node: Any) -> Any:
    stack = [node]
    while stack:
        n = stack.pop(0)
        if n.type == "ERROR" or n.is_missing:
            return n
        stack.extend(c for c in n.children if c.has_error or c.type == "ERROR" or c.is_missing)
    return node


def _child(node: Any, kind: str) -> Any:
    for c in node.children:
        if c.type == kind:
            return c
    return None


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _intersperse(words: list[Word], sep: str) -> list[Word]:
    out: list[Word] = []
    for i, w in enumerate(words):
        if i:
            out.append(sep)
        out.append(w)
    return out


# Syntax-tree nodes that are no statement or word of their own.
_SKIP = frozenset({"comment", "heredoc_body", "heredoc_start", "heredoc_end", "heredoc_content", ";", ";;", "&",
                   "\n", "then", "fi", "do", "done", "esac", "in"})
