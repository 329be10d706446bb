"""The interpreter's state: caps, control-flow signals, variables and functions of a shell
process, the merge of undecided branches, and the context of the file being run."""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Optional

from .frame import _EXPORTED, MAX_EXPORTED, Frame, changed_names, new_frame
from .fs import WORKSPACE
from .plans import keep, plan, table
from .trace import CLIENT, EXEC, PYTHON, READ, RUN_WRITTEN, SERVER, Site
from .chars import words_chars
from .words import HOLE, MAX_ALTERNATIVES, Holed, Installed, OneOf, OneOfRest, OrEmpty, Rest, Unknown, Word, or_empty

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

_PARSED: dict[str, tuple[Any, bytes]] = {}  # shell text -> (its syntax tree, its bytes)


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
SYMBOL = "\x01pt:"  # \x01, not \x00: shell text that holds one (`bash -c "...$CONC..."`) still parses


def symbolic(*values: object) -> bool:
    """Whether a decision would read a point's symbolic value (then it is not decided)."""
    return any(isinstance(v, str) and SYMBOL in v for v in values)


# Variables bash sets in every shell to values of the machine the job runs on (traced as symbols).
SHELL_SET = frozenset({"UID", "EUID", "PPID", "BASHPID", "HOSTNAME", "RANDOM", "SRANDOM", "SECONDS",
                       "EPOCHSECONDS", "EPOCHREALTIME"})


def symbol(name: str) -> str:
    return f"{SYMBOL}{name}\x01"


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


class _Dead(_Exit):
    """No path goes on from here: each one exited, or left a loop, a function or a sourced file
    early and waits at that statement's `Pad`; the statement goes on from those."""

    def __init__(self) -> None:
        super().__init__(None)


class Pad:
    """Where the paths that leave a loop (`break`, `continue`), a function or a sourced file
    (`return`) early wait for it to end. An arm of an undecided branch that leaves does not go
    on, but bash goes on after the loop or the call from the state that arm left: the statement
    merges the waiting states with its own (`ControlFlow.rejoin`). `kind`: "loop", "call" or
    "source"."""

    __slots__ = ("kind", "breaks", "continues", "returns")

    def __init__(self, kind: str):
        self.kind = kind
        self.breaks: list[tuple["State", str]] = []     # (the state, why a value it set is unknown)
        self.continues: list[tuple["State", str]] = []
        self.returns: list[tuple["State", str, Optional[int]]] = []  # ... and the status

    def waiting(self) -> bool:
        return bool(self.breaks or self.continues or self.returns)


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

    frames: list[dict[str, Var]] = field(default_factory=lambda: [new_frame(outermost=True)])
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
        # Made for every arm, subshell and pipeline part: every field as it is, then new
        # containers for those a process changes in place.
        new = object.__new__(State)
        fields = new.__dict__
        fields.update(self.__dict__)
        fields["frames"] = [f.copy() for f in self.frames]
        fields["functions"], fields["aliases"] = dict(self.functions), dict(self.aliases)
        fields["positional"], fields["dirstack"], fields["traps"] = list(self.positional), list(self.dirstack), dict(self.traps)
        return new

    def child(self) -> "State":
        """A new shell process started from this one: exported variables only."""
        return State(frames=[process_frame(self.exported())], cwd=self.cwd,
                     container=self.container, mounts=self.mounts, open_env=self.open_env,
                     unset_names=self.unset_names)

    def lookup(self, name: str) -> Optional[Var]:
        frames = self.frames
        if len(frames) == 1:  # outside functions
            return frames[0].get(name)
        for frame in reversed(frames):
            var = frame.get(name)
            if var is not None:
                return var
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

    def env_key(self) -> Optional[tuple[int, ...]]:
        """What `exported` reads, as the frames' versions (None when a frame is a plain dict)."""
        try:
            return tuple([f.version for f in self.frames])
        except AttributeError:
            return None

    def exported(self) -> dict[str, Word]:
        key = self.env_key()
        known = _EXPORTED.get(key) if key is not None else None
        if known is not None:
            return dict(known)
        # Most values are text, their own scalar (run for every command a launch runs).
        out: dict[str, Word] = {k: v.value if v.value.__class__ is str else _scalar(v.value)
                                for k, v in (self.frames[0].items() if self.frames else ()) if v.exported}
        in_functions(out, self.frames[1:])
        if key is not None:
            if len(_EXPORTED) >= MAX_EXPORTED:
                _EXPORTED.clear()
            _EXPORTED[key] = dict(out)
        return out


def in_functions(env: dict[str, Word], frames: Iterable[Frame],
                 keep: Optional[Callable[[str, Word], bool]] = None) -> dict[str, Word]:
    """`env`, the environment of a process's own frame, as its function frames `frames` change
    it: an exported variable sets its name (if `keep(name, value)`, when given), any other hides it."""
    for frame in frames:
        for k, var in frame.items():
            if var.exported:
                value = var.value if var.value.__class__ is str else _scalar(var.value)
                if keep is None or keep(k, value):
                    env[k] = value
                    continue
            env.pop(k, None)
    return env


_KEEP = object()


# Effects whose named repository files are part of them (their text changes the effect).
_NAMES_FILES = frozenset({EXEC, SERVER, CLIENT, PYTHON, READ, RUN_WRITTEN})


_FILE_SUFFIXES = (".py", ".yaml", ".yml", ".json", ".toml", ".cfg", ".jinja", ".txt")


_SHELL_SUFFIXES = (".sh", ".bash", ".slurm")  # interpreted: their effects are in the trace


MAX_NAMED_WORDS = 64


_ABSENT = object()


def process_frame(env: dict[str, Word]) -> Frame:
    """The outermost frame of a new process: `env`, every name exported."""
    return new_frame({k: Var(v, exported=True) for k, v in env.items()}, outermost=True)


def _scalar(value: Any) -> Word:
    if isinstance(value, list):
        return value[0] if value else ""
    if isinstance(value, dict):
        return value.get("0", "")
    return "" if value is None else value


def _join_unknown(parts: Iterable[Word]) -> Word:
    if parts.__class__ is not list:  # read, never changed: a list is not copied
        parts = list(parts)
    for p in parts:  # type: ignore[union-attr]
        if p.__class__ is not str:
            break
    else:  # the common case: every part known, most often one
        text = parts[0] if len(parts) == 1 else "".join(parts)  # type: ignore[arg-type,index]
        return text if len(text) <= MAX_VALUE_CHARS else Unknown(f"a value over {MAX_VALUE_CHARS:,} characters")
    out: list[str] = []
    for i, p in enumerate(parts):
        if isinstance(p, Unknown):
            if isinstance(p, OneOf) or any(isinstance(q, OneOf) for q in parts[i + 1:]):
                joined = _join_alternatives(parts)
                if joined is not None:
                    return joined
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
            if known == p.prefix and suffix == p.suffix and (
                    p.chars is None or not any(isinstance(q, Unknown) for q in parts[i + 1:])):
                # Nothing known around it: the unknown stands for the text, unless its
                # characters would be taken for those of the other unknown parts too.
                return p
            if all(q.chars is not None for q in parts[i:] if isinstance(q, Unknown)):
                holed = _join_holed(parts, p, known, suffix)
                if holed is not None:
                    return holed
            return Unknown(p.why, known[:256], suffix[-256:])
        out.append(p)
    text = "".join(out)
    if len(text) > MAX_VALUE_CHARS:
        return Unknown(f"a value over {MAX_VALUE_CHARS:,} characters")
    return text


MAX_HOLES = 64  # unknown parts a text keeps with their places (`words.Holed`); past it, plain unknown


def _join_holed(parts: list[Word], first: Unknown, known: str, suffix: str) -> Optional[Word]:
    """Text joined from known parts and unknowns whose characters are bounded: a `Holed` that
    keeps each unknown part in its place (nested ones inlined) and the union of the characters
    (None past MAX_HOLES or MAX_VALUE_CHARS)."""
    template: list[str] = []
    holes: list[Unknown] = []
    chars: set[str] = set()
    for q in parts:
        if isinstance(q, Holed) and q.holes:
            template.append(q.template)
            holes += q.holes
        elif isinstance(q, Unknown):
            template.append(HOLE)
            holes.append(q)
        else:
            template.append(q)
            chars.update(q)
            continue
        chars.update(q.chars)
    text = "".join(template)
    if len(holes) > MAX_HOLES or len(text) > MAX_VALUE_CHARS:
        return None
    return Holed(first.why, known[:256], suffix[-256:], chars=frozenset(chars), template=text, holes=tuple(holes))


def _join_alternatives(parts: list[Word]) -> Optional[Word]:
    """Text joined from known parts and values with alternatives (`--exclude=$X`, X one of two
    texts): one of the joined texts, while there are at most MAX_ALTERNATIVES; else None."""
    choices: list[list[str]] = []
    for p in parts:
        if isinstance(p, OneOf) and all(isinstance(v, str) for v in p.values):
            choices.append(list(p.values))
        elif isinstance(p, str):
            choices.append([p])
        else:
            return None
    texts = [""]
    for options in choices:
        texts = list(dict.fromkeys(t + o for t in texts for o in options))
        if len(texts) > MAX_ALTERNATIVES or any(len(t) > MAX_VALUE_CHARS for t in texts):
            return None
    if len(texts) == 1:
        return texts[0]
    first = next(p for p in parts if isinstance(p, OneOf))
    labels = list(dict.fromkeys(p.label for p in parts if isinstance(p, OneOf)))
    return one_of_texts(texts, first.why, "; ".join(labels))


def one_of_texts(texts: list[str], why: str, label: str) -> OneOf:
    """A value that is one of `texts`, known before and after what they differ in."""
    head, tail = _common_ends(texts)
    return OneOf(why, head[:256], tail[-256:], values=tuple(texts), label=label)


def _merge_values(a: Any, b: Any, why: str, name: str = "") -> Any:
    """Two arms' values of one variable: the same value; else, when each arm's value is known
    (text, or an array of words) and there are at most MAX_ALTERNATIVES of them, one of them
    (`OneOf`, `OneOfRest` after the words all agree on: a command that uses it runs once per
    value); else what the arms agree on: the words an array starts with (`PIP=(python3 -m pip
    install)` and `PIP+=(--flag)` in one arm keep the command), the text a string starts and ends
    with."""
    if a is b:
        return a
    if a is None or b is None:  # set in one arm only, to a text or a plain unknown (most often)
        other = b if a is None else a
        if other.__class__ is str or other.__class__ is Unknown:
            return Unknown(why)
    if a == b:
        return a
    program = _one_program(a, b)
    if program is not None:
        return program
    alts_a, alts_b = _alternatives_of(a), _alternatives_of(b)
    if alts_a is not None and alts_b is not None and isinstance(alts_a[0], str) == isinstance(alts_b[0], str):
        union = list(alts_a)
        union += [v for v in alts_b if v not in union]
        if len(union) <= MAX_ALTERNATIVES:
            return _one_of(union, why, name)
        if isinstance(union[0], str):
            head, tail = _common_ends(union)
            return Unknown(why, head[:256], tail[-256:])
        n = _common_prefix_len(union)
        chars = words_chars(union)
        if all(len(v) == len(union[0]) for v in union):
            return [w if all(v[i] == w for v in union) else Unknown(why, chars=chars) for i, w in enumerate(union[0])]
        return union[0][:n] + [Rest(why, chars=chars)]
    if isinstance(a, list) and isinstance(b, list):
        chars = words_chars([a, b])
        if len(a) == len(b) and not (a and isinstance(a[-1], Rest)) and not (b and isinstance(b[-1], Rest)):
            return [x if x == y else Unknown(why, chars=chars) for x, y in zip(a, b)]
        n = 0
        while n < min(len(a), len(b)) and a[n] == b[n] and not isinstance(a[n], Rest):
            n += 1
        return a[:n] + [Rest(why, chars=chars)]
    if _may_be_empty(a) or _may_be_empty(b):
        if all(isinstance(x, (str, Unknown)) and not isinstance(x, Rest) for x in (a, b)):
            return or_empty([a, b], why)
    if isinstance(a, (str, Unknown)) and isinstance(b, (str, Unknown)) and not isinstance(a, Rest) \
            and not isinstance(b, Rest):
        # The text both start and end with (an unknown value's known ends count).
        head = posixpath.commonprefix([x if isinstance(x, str) else x.prefix for x in (a, b)])
        tail = posixpath.commonprefix([(x[len(head):] if isinstance(x, str) else x.suffix)[::-1] for x in (a, b)])[::-1]
        return Unknown(why, head[:256], tail[-256:], chars=words_chars([a, b]))
    return Unknown(why, chars=words_chars([a, b]) if isinstance(a, list) or isinstance(b, list) else None)


def _may_be_empty(value: Any) -> bool:
    return value == "" or isinstance(value, OrEmpty) or (isinstance(value, OneOf) and "" in value.values)


def _one_program(a: Any, b: Any) -> Optional[Installed]:
    """`AIPERF_UV_BIN="$(command -v uv)"` in one arm, `"$DIR/uv"` in another: a word that runs
    the program uv either way (`Installed`, the other arms' paths in `also`)."""
    if isinstance(b, Installed) and not isinstance(a, Installed):
        a, b = b, a
    if not isinstance(a, Installed):
        return None
    if isinstance(b, Installed):
        if b.suffix != a.suffix:
            return None
        paths = b.also
    elif isinstance(b, str) and b.startswith("/") and b.endswith(a.suffix) and a.suffix:
        paths = (b,)
    else:
        return None
    return replace(a, also=tuple(dict.fromkeys(a.also + paths)))


def _alternatives_of(value: Any) -> Optional[list]:
    """The values a variable may hold, each known: texts, or arrays of words whose number is
    known (an element may be unknown). None for anything else (unset, unknown, an array of
    unknown length, an associative array)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, OneOf):
        return list(value.values) if all(isinstance(v, str) for v in value.values) else None
    if isinstance(value, list):
        if not (value and isinstance(value[-1], OneOfRest)):
            return None if any(isinstance(w, Rest) for w in value) else [value]
        head = value[:-1]
        runs = [head + list(t) for t in value[-1].values]
        return None if any(isinstance(w, Rest) for r in runs for w in r) else runs
    return None


def _one_of(values: list, why: str, name: str) -> Any:
    label = f"one of {len(values)} values of {name or 'a variable'} {why}"
    if isinstance(values[0], str):
        return one_of_texts(values, why, label)
    return one_of_arrays(values, why, label)


def one_of_arrays(runs: list[list[Word]], why: str, label: str) -> list[Word]:
    """An array that is one of `runs`: the words all start with, then a `OneOfRest`."""
    runs = [list(r) for r in dict.fromkeys(tuple(r) for r in runs)]
    if len(runs) == 1:
        return runs[0]
    n = _common_prefix_len(runs)
    return runs[0][:n] + [OneOfRest(why, values=tuple(tuple(r[n:]) for r in runs), label=label)]


def one_of_runs(runs: list[list[Word]], why: str, label: str) -> list[Word]:
    """Words that are one of `runs`: the words all runs start with, then the one word they differ
    in (a `OneOf`, when they differ in one known word at one place) or the rest of each run (a
    `OneOfRest`)."""
    distinct = list(dict.fromkeys(tuple(r) for r in runs))
    if len(distinct) == 1:
        return list(distinct[0])
    n = _common_prefix_len([list(r) for r in distinct])
    tails = [r[n:] for r in distinct]
    if all(len(t) == len(tails[0]) for t in tails) and all(
            t[1:] == tails[0][1:] and isinstance(t[0], str) for t in tails if t):
        if tails[0]:
            return list(distinct[0][:n]) + [one_of_texts([t[0] for t in tails], why, label)] + list(tails[0][1:])
    return list(distinct[0][:n]) + [OneOfRest(why, values=tuple(tails), label=label)]


def _common_ends(texts: list[str]) -> tuple[str, str]:
    """The text all of `texts` start with, and the text they all end with after it."""
    head = posixpath.commonprefix(texts)
    tail = posixpath.commonprefix([t[len(head):][::-1] for t in texts])[::-1]
    return head, tail


def _common_prefix_len(runs: list[list]) -> int:
    n = 0
    while all(n < len(r) for r in runs) and all(r[n] == runs[0][n] for r in runs):
        n += 1
    return n


def merge_states(states: list[State], why: str, base: Optional[State] = None) -> State:
    """The state after a branch whose arm is not known: what the arms agree on, else unknown.
    It is made in the first state, which its callers no longer need as it was (an arm's own
    copy, or the state that becomes the merge). `base`: the state the arms were copied from."""
    first = states[0]
    if len(states) == 1:
        return first
    out = first
    for depth, frame in enumerate(out.frames):
        others = [s.frames[depth] if depth < len(s.frames) else {} for s in states[1:]]
        # Most frames are alike in every arm (compared whole first, in C); a readonly variable an
        # arm set again is then another object all the same, which the merge below makes anew.
        if not getattr(frame, "readonly", True) and all(other == frame for other in others):
            continue
        # Arms share the Var objects they did not set (State.copy), so only names bound to
        # another object in some arm can differ: among those the arms changed, when known.
        get = frame.get
        known = changed_names([frame, *others], base.frames[depth]) \
            if base is not None and depth < len(base.frames) else None
        names: set[str] = set() if known is None else {k for k in known if any(o.get(k) is not get(k) for o in others)}
        for other in others if known is None else ():
            names.update([k for k, v in other.items() if get(k) is not v])
            if len(other) != len(frame) or names:
                names.update(frame.keys() - other.keys())
        for name in names:
            var = get(name)
            merged, exported = (None, False) if var is None else (var.value, bool(var.exported))
            for f in others:
                other = f.get(name)
                merged = _merge_values(merged, None if other is None else other.value, why, name)
                exported = exported or bool(other and other.exported)
            # A Var is set anew (not readonly) unless the first arm's already is that one: then
            # the frame keeps its version, and the environments kept by it.
            if merged is None:
                if var is not None:
                    del frame[name]
            elif var is None or var.value is not merged or var.exported != exported or var.readonly:
                frame[name] = Var(merged, exported=exported)
    for s in states[1:]:
        if not s.functions.keys() <= out.functions.keys():
            for name, fn in s.functions.items():
                out.functions.setdefault(name, fn)
        if not s.aliases.keys() <= out.aliases.keys():
            for name, text in s.aliases.items():
                out.aliases.setdefault(name, text)
        out.cwd = _merge_values(out.cwd, s.cwd, why, "the working folder")
        out.expand_aliases = out.expand_aliases or s.expand_aliases
        out.traps.update(s.traps)
        if out.positional != s.positional:
            out.positional = _merge_values(list(out.positional), list(s.positional), why, "the arguments")
    out.status = None
    return out


def _site_lines(node: Any, src: bytes) -> tuple[int, int]:
    """A node's first line and the last line of its statement: a command's here-document belongs
    to the statement around it."""
    top = node
    parent = getattr(node, "parent", None)
    while parent is not None and parent.type == "redirected_statement":
        top, parent = parent, parent.parent
    return node.start_point[0] + 1, top.end_point[0] + 1


_SITES = table("site object")  # the last `Site` made of a node (`Ctx.site`)


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
        # The site last made for the node, when it was made for this file (a node's text may
        # run under several names: the file, its shell text, an EXIT trap).
        site = _SITES.get(node)
        if site is None or site.path != self.path:
            site = keep(_SITES, node, Site(self.path, *plan("site", node, self.src, _site_lines)))
        return site

    def text(self, node: Any) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def deeper(self, site: Site, name: str, **kw: Any) -> "Ctx":
        if self.depth + 1 > MAX_DEPTH:
            raise Budget(f"calls nested over {MAX_DEPTH} deep at {site}")
        return self.but(chain=self.chain + (site,), names=self.names + (name,), depth=self.depth + 1, **kw)

    def but(self, **changes: Any) -> "Ctx":
        """This context with `changes` (`dataclasses.replace` without its checks of every field:
        made for every arm of every undecided branch and every file run)."""
        new = object.__new__(Ctx)
        new.__dict__.update(self.__dict__, **changes)
        return new


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
