"""A bash interpreter over tree-sitter-bash's syntax tree that records effects instead of running.

It evaluates what bash would: variables set by every builtin that assigns (`=`, `export`,
`declare`/`typeset`/`local`/`readonly`, `printf -v`, `read`, `let`, `mapfile`/`readarray`,
`(( ))`, env prefixes), expansions (defaults, trims, replacement, case, length, indirection,
arrays, command and arithmetic substitution, brace expansion), word splitting, functions with
dynamic scope, aliases (when `expand_aliases` is on), `eval` and `source` of text it knows,
traps, here-documents and here-strings, subshells, pipelines and `&&`/`||` lists.

What it cannot decide it does not guess:
- a value it cannot know is an `Unknown` word carrying why;
- a branch whose test it cannot decide runs both arms; effects inside carry the branch in
  `under`, and variables the arms set differently become unknown after it;
- a command it does not know (not a builtin, not a function, not in the vocabulary) is an
  UNKNOWN effect naming the line.
Every loop, value, call depth, file count and step count is capped; hitting a cap is an UNKNOWN
effect and the interpretation of that script stops, never a hang.

External commands are described by the vocabulary (`recipes.launch.vocabulary.effects`), which
the interpreter follows into what they run: wrappers, `bash -c`, shell files, containers.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Optional

from .effects import CommandEffects, Container, PythonRun
from .fs import WORKSPACE, Files, Written, norm
from .trace import (
    CLIENT, CONTAINER, DOWNLOAD, EXEC, INSTALL, PYTHON, READ, RUN_WRITTEN, SERVER, SOURCE, UNKNOWN, WRITE,
    Effect, Site, Trace,
)
from .words import Unknown, Word

# ---------------------------------------------------------------------------- caps

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


# A point's value that the trace may carry as a symbol (its concurrency): every point of an arm
# then shares one trace. A decision that reads the symbol (a test, arithmetic, a pattern) raises
# NeedsConcrete and the trace is made again with the real value.
SYMBOL = "\x00pt:"


class NeedsConcrete(Exception):
    """A decision read a symbolic value: trace again with the point's own values."""


def concrete(*values: object) -> None:
    for v in values:
        if isinstance(v, str) and SYMBOL in v:
            raise NeedsConcrete(v)


def symbol(name: str) -> str:
    return f"{SYMBOL}{name}\x00"


class _Exit(Exception):
    def __init__(self, status: Optional[int]):
        self.status = status


class _Return(Exception):
    def __init__(self, status: Optional[int]):
        self.status = status


class _Loop(Exception):
    def __init__(self, kind: str, n: int):
        self.kind, self.n = kind, n


# ---------------------------------------------------------------------------- state


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

    def copy(self) -> "State":
        return State(frames=[{k: Var(_copy_value(v.value), v.exported, v.readonly) for k, v in f.items()}
                             for f in self.frames],
                     functions=dict(self.functions), aliases=dict(self.aliases), positional=list(self.positional),
                     argv0=self.argv0, cwd=self.cwd, dirstack=list(self.dirstack), traps=dict(self.traps),
                     expand_aliases=self.expand_aliases, status=self.status, container=self.container,
                     mounts=self.mounts)

    def child(self) -> "State":
        """A new shell process started from this one: exported variables only."""
        env = self.exported()
        return State(frames=[{k: Var(v, exported=True) for k, v in env.items()}], cwd=self.cwd,
                     container=self.container, mounts=self.mounts)

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
            if value is not _KEEP:
                var.value = value
            if export is not None:
                var.exported = export

    def unset(self, name: str) -> None:
        for frame in reversed(self.frames):
            if name in frame:
                del frame[name]
                return

    def exported(self) -> dict[str, Word]:
        out: dict[str, Word] = {}
        for frame in self.frames:
            for k, v in frame.items():
                if v.exported:
                    out[k] = _scalar(v.value)
                elif k in out:
                    del out[k]
        return out


_KEEP = object()
_ABSENT = object()


def _copy_value(value: Any) -> Any:
    if isinstance(value, list):
        return list(value)
    if isinstance(value, dict):
        return dict(value)
    return value


def _scalar(value: Any) -> Word:
    if isinstance(value, list):
        return value[0] if value else ""
    if isinstance(value, dict):
        return value.get("0", "")
    return "" if value is None else value


def _join_unknown(parts: Iterable[Word]) -> Word:
    out: list[str] = []
    for p in parts:
        if isinstance(p, Unknown):
            known = "".join(out) + p.prefix
            return Unknown(p.why, known[:256]) if known != p.prefix else p
        out.append(p)
    text = "".join(out)
    if len(text) > MAX_VALUE_CHARS:
        return Unknown(f"a value over {MAX_VALUE_CHARS:,} characters")
    return text


def _merge_values(a: Any, b: Any, why: str) -> Any:
    if a == b:
        return a
    return Unknown(why)


def merge_states(states: list[State], why: str) -> State:
    """The state after a branch whose arm is not known: what the arms agree on, else unknown."""
    first = states[0]
    if len(states) == 1:
        return first
    out = first.copy()
    for depth, frame in enumerate(out.frames):
        names = set(frame)
        for s in states[1:]:
            if depth < len(s.frames):
                names |= set(s.frames[depth])
        for name in names:
            values = []
            exported = False
            for s in states:
                f = s.frames[depth] if depth < len(s.frames) else {}
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
            if out.aliases.get(name, text) != text:
                out.aliases[name] = text  # the later arm's definition; both were recorded as effects
            out.aliases.setdefault(name, text)
        out.cwd = _merge_values(out.cwd, s.cwd, why)
        out.expand_aliases = out.expand_aliases or s.expand_aliases
        out.traps.update(s.traps)
        if out.positional != s.positional:
            out.positional = [Unknown(why)]
    out.status = None
    return out


# ---------------------------------------------------------------------------- context


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

    def site(self, node: Any) -> Site:
        return Site(self.path, node.start_point[0] + 1)

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


# ---------------------------------------------------------------------------- the interpreter

Vocabulary = Callable[..., Optional[CommandEffects]]
Classifier = Callable[[tuple[Word, ...], "Interpreter", State, Ctx], Optional[tuple[str, str]]]


class Interpreter:
    """Runs shell text for one trace. `vocabulary(argv, cwd)` describes external commands;
    `classify(argv, ...)` names an engine server or the benchmark client: (SERVER, engine) or
    (CLIENT, what), else None."""

    def __init__(self, files: Files, *, vocabulary: Vocabulary | None = None,
                 classify: Classifier | None = None, inputs: dict[str, str] | None = None,
                 hooks: dict[str, Callable[..., Optional[int]]] | None = None):
        if vocabulary is None:
            from .vocabulary import effects as vocabulary
        self.files = files
        self.vocabulary = vocabulary
        self.classify = classify
        self.trace = Trace()
        self.steps = 0
        # The point's variables the launch starts with, and which of them it read: a trace is
        # the same for every point that gives those names the same values (sharing).
        self.inputs = dict(inputs or {})
        self.read: set[str] = set()
        self.deps: list[Any] = []   # other inputs a hook read (the recipe variant a point binds)
        # Commands modelled by the caller (`srtctl`: what a recipe runs): name -> handler.
        self.hooks = dict(hooks or {})

    def note(self, name: str) -> None:
        """A variable was read: when it is one of the inputs, the trace depends on its value."""
        if name in self.inputs:
            self.read.add(name)

    def initial_state(self) -> State:
        """A shell that starts with the inputs exported."""
        state = State(frames=[{k: Var(v, exported=True) for k, v in self.inputs.items()}])
        return state

    # ---------------------------------------------------------------- recording

    def emit(self, kind: str, ctx: Ctx, node_or_site: Any, state: State, **kw: Any) -> None:
        if len(self.trace.effects) >= MAX_EFFECTS:
            raise Budget(f"over {MAX_EFFECTS:,} effects")
        site = node_or_site if isinstance(node_or_site, Site) else ctx.site(node_or_site)
        self.trace.effects.append(Effect(kind=kind, site=site, chain=ctx.chain, chain_names=ctx.names,
                                         under=ctx.under, container=state.container,
                                         client=ctx.client or kw.pop("client", False), **kw))

    def unknown(self, ctx: Ctx, where: Any, state: State, why: str) -> None:
        self.emit(UNKNOWN, ctx, where, state, detail=why)

    def tick(self) -> None:
        self.steps += 1
        if self.steps > MAX_STEPS:
            raise Budget(f"over {MAX_STEPS:,} steps")

    # ---------------------------------------------------------------- entry points

    def parse(self, text: str) -> tuple[Any, bytes]:
        from recipes.bash.walker import parse_bash

        data = text.encode("utf-8", "replace")
        hit = _PARSED.get(data)
        if hit is None:
            if len(_PARSED) >= MAX_PARSED:
                _PARSED.pop(next(iter(_PARSED)))
            hit = _PARSED[data] = parse_bash(data)
        return hit

    def run_text(self, text: str, path: str, state: State, ctx: Ctx | None = None, *, top: bool = False) -> None:
        """Run shell text as a file of its own (a script, a sourced file, an eval'd string)."""
        ctx = ctx or Ctx(path=path, src=b"")
        if len(text) > MAX_SCRIPT_CHARS:
            self.unknown(ctx, Site(path, 1), state, f"{path} is over {MAX_SCRIPT_CHARS:,} characters")
            return
        tree, src = self.parse(text)
        inner = replace(ctx, path=path, src=src)
        if tree.root_node.has_error:
            bad = _first_error(tree.root_node)
            self.unknown(inner, bad, state, f"could not parse line {bad.start_point[0] + 1} of {path}")
        self.block(tree.root_node.children, state, inner)

    def run_top(self, text: str, path: str, state: State, ctx: Ctx | None = None) -> Optional[int]:
        """Run the launch's first script; a cap that is hit ends the trace with an unknown."""
        ctx = ctx or Ctx(path=path, src=b"")
        try:
            return self.run_script(text, path, state, ctx)
        except Budget as b:
            self.trace.effects.append(Effect(kind=UNKNOWN, site=Site(path, 1), chain=ctx.chain, chain_names=ctx.names,
                                             detail=f"the interpretation stopped: {b}"))
            return None

    def run_script(self, text: str, path: str, state: State, ctx: Ctx) -> Optional[int]:
        """Run a script as a process: `exit` ends it, its EXIT trap runs, the status returns."""
        try:
            self.run_text(text, path, state, ctx)
            status = state.status
        except _Exit as e:
            status = e.status
        except (_Return, _Loop):
            status = state.status
        trap = state.traps.pop("EXIT", None)
        if trap is not None:
            text_, site = trap
            if isinstance(text_, str):
                try:
                    self.run_text(text_, f"{site.path} (EXIT trap)", state, ctx.deeper(site, "trap EXIT"))
                except (_Exit, _Return, _Loop):
                    pass
            else:
                self.unknown(ctx, site, state, f"the EXIT trap's text is unknown ({text_.why})")
        return status

    # ---------------------------------------------------------------- statements

    def block(self, nodes: Iterable[Any], state: State, ctx: Ctx) -> None:
        for node in nodes:
            if node.is_named and node.type not in _SKIP:
                self.statement(node, state, ctx)

    def statement(self, node: Any, state: State, ctx: Ctx, *, stdin: Word | None = None,
                  out: Out | None = None) -> Optional[int]:
        self.tick()
        t = node.type
        handler = _STATEMENTS.get(t)
        if handler is None:
            if node.type == "ERROR":
                return None  # reported once per file by run_text
            self.unknown(ctx, node, state, f"`{_short(ctx.text(node))}` ({t}) is not interpreted")
            state.status = None
            return None
        try:
            status = handler(self, node, state, ctx, stdin, out)
        except (_Exit, _Return, _Loop, Budget, NeedsConcrete):
            raise
        except RecursionError:
            raise Budget(f"nesting too deep at {ctx.site(node)}")
        except Exception as e:  # an interpreter fault is an unknown at this line, never a crash
            self.unknown(ctx, node, state, f"internal error interpreting `{_short(ctx.text(node))}` "
                                           f"({type(e).__name__}: {_short(str(e))})")
            status = None
        state.status = status
        return status

    def _program(self, node, state, ctx, stdin, out):
        self.block(node.children, state, ctx)
        return state.status

    def _compound(self, node, state, ctx, stdin, out):
        status = 0
        for child in node.named_children:
            if child.type in _SKIP:
                continue
            status = self.statement(child, state, ctx, stdin=stdin, out=out)
        return status

    def _subshell(self, node, state, ctx, stdin, out):
        inner = state.copy()
        try:
            self._compound(node, inner, ctx, stdin, out)
            return inner.status
        except _Exit as e:
            return e.status

    def _list(self, node, state, ctx, stdin, out):
        kids = [c for c in node.children if c.type not in _SKIP]
        left = self.statement(kids[0], state, ctx, stdin=stdin, out=out)
        for op, right in zip(kids[1::2], kids[2::2]):
            run = {"&&": left == 0 if left is not None else None, "||": left != 0 if left is not None else None,
                   ";": True, "&": True}.get(op.type, True)
            if run is True:
                left = self.statement(right, state, ctx, stdin=stdin, out=out)
            elif run is None:
                cond = f"`{_short(ctx.text(kids[0]))}` at {ctx.site(kids[0])}"
                left = self._maybe(lambda s, c: self.statement(right, s, c, stdin=stdin, out=out), state, ctx, cond)
        return left

    def _maybe(self, body: Callable[[State, Ctx], Any], state: State, ctx: Ctx, cond: str) -> Optional[int]:
        """Run `body` when it may or may not run: both outcomes, merged."""
        return self.run_arms([(cond, body)], state, ctx, fallthrough=True, why=f"set only when {cond}")

    def run_arms(self, arms: list[tuple[str, Callable[[State, Ctx], Any]]], state: State, ctx: Ctx, *,
                 fallthrough: bool, why: str) -> Optional[int]:
        """Arms of an undecided branch: each runs from a copy of the state with its test in
        `under`; the states of the arms that go on (and, with `fallthrough`, of running none)
        are merged. An arm that leaves (`exit`, `return`, `break`) does not go on; when none
        goes on, the first way out is taken."""
        results: list[State] = []
        escape: Exception | None = None
        for label, runner in arms:
            arm = state.copy()
            try:
                runner(arm, replace(ctx, under=ctx.under + (label,)))
                results.append(arm)
            except (_Exit, _Return, _Loop) as e:
                escape = escape or e
        if fallthrough:
            results.append(state.copy())
        if not results:
            assert escape is not None
            raise escape
        _assign_state(state, merge_states(results, why))
        return None

    def _negated(self, node, state, ctx, stdin, out):
        status = self.statement(node.named_children[-1], state, ctx, stdin=stdin, out=out)
        return None if status is None else int(status == 0)

    def _pipeline(self, node, state, ctx, stdin, out):
        kids = [c for c in node.named_children if c.type not in _SKIP]
        feed: Word | None = stdin
        status: Optional[int] = 0
        for i, kid in enumerate(kids):
            last = i == len(kids) - 1
            sink = out if last else Out()
            # Each part of a pipeline runs in a subshell (bash without lastpipe).
            part = state.copy()
            status = self.statement(kid, part, ctx, stdin=feed, out=sink)
            if not last:
                feed = sink.value()
                if isinstance(feed, str) and not sink.parts:
                    feed = Unknown("the output of a command the interpreter does not model")
        return status

    def _redirected(self, node, state, ctx, stdin, out):
        body = node.child_by_field_name("body")
        redirects = [c for c in node.named_children if c != body and c.type.endswith("redirect")]
        sink = out
        new_stdin = stdin
        writes: list[tuple[Word, str, Any]] = []
        for r in redirects:
            got = self.redirect(r, state, ctx)
            if got is None:
                continue
            kind, value = got
            if kind == "stdin":
                new_stdin = value
            elif kind in ("write", "append"):
                writes.append((value, kind, r))
            elif kind == "devnull":
                sink = None
        if writes:
            sink = Out()
        status = None
        if body is None:
            return 0
        status = self.statement(body, state, ctx, stdin=new_stdin, out=sink) if body.is_named else 0
        for target, kind, r in writes:
            text = sink.value() if sink is not None else Unknown("output")
            self.write_file(target, text, "redirect" if kind == "write" else "append", state, ctx, r)
        return status

    def redirect(self, node: Any, state: State, ctx: Ctx) -> Optional[tuple[str, Word]]:
        t = node.type
        if t == "heredoc_redirect":
            start = node.child_by_field_name("heredoc_start") or _child(node, "heredoc_start")
            body = _child(node, "heredoc_body")
            quoted = start is not None and bool(re.search(r"['\"\\]", ctx.text(start)))
            text = self.heredoc_text(body, state, ctx, quoted) if body is not None else ""
            # A heredoc may carry its own redirect (`cat <<EOF > file`).
            for inner in node.named_children:
                if inner.type == "file_redirect":
                    got = self.redirect(inner, state, ctx)
                    if got and got[0] in ("write", "append"):
                        self.write_file(got[1], text, "heredoc", state, ctx, inner)
                        # the command's output went to the file; what it printed is the heredoc
                        # only for `cat`, which is the common case: written above.
            return ("stdin", text)
        if t == "herestring_redirect":
            arg = [c for c in node.named_children]
            value = self.word_text(arg[-1], state, ctx) if arg else ""
            return ("stdin", _join_unknown([value, "\n"]) if isinstance(value, str) else value)
        if t == "file_redirect":
            op = next((c.type for c in node.children if not c.is_named), ">")
            dest = node.child_by_field_name("destination")
            if dest is None:
                return None
            target = self.word_text(dest, state, ctx)
            if op in (">&", "<&", "&>&") or target in ("/dev/null",):
                if op in (">&",) and isinstance(target, str) and target.isdigit():
                    return None
                return ("devnull", "") if target == "/dev/null" else None
            if isinstance(target, str) and target in ("/dev/stdout", "/dev/stderr", "/dev/tty"):
                return None
            if op in ("<",):
                path = self.host_path(target, state)
                self.emit(READ, ctx, node, state, path=path)
                return ("stdin", self.read_text(path, state, ctx, node, quiet=True))
            if op in (">>", "&>>"):
                return ("append", target)
            return ("write", target)
        return None

    def heredoc_text(self, body: Any, state: State, ctx: Ctx, quoted: bool) -> Word:
        if quoted:
            return ctx.text(body)
        parts: list[Word] = []
        pos = body.start_byte
        for child in body.named_children:
            if child.type == "heredoc_content":
                continue
            parts.append(_unescape_heredoc(ctx.src[pos:child.start_byte].decode("utf-8", "replace")))
            parts.append(self.word_text(child, state, ctx, quoted=True))
            pos = child.end_byte
        parts.append(_unescape_heredoc(ctx.src[pos:body.end_byte].decode("utf-8", "replace")))
        return _join_unknown(parts)

    def write_file(self, target: Word, text: Word, how: str, state: State, ctx: Ctx, node: Any) -> None:
        path = self.host_path(target, state)
        self.emit(WRITE, ctx, node, state, path=path, how=how)
        if isinstance(path, str):
            old = self.files.written(path)
            if how == "append" and old is not None:
                text = _join_unknown([old.text, text])
            if not self.files.write(path, Written(text, how, ctx.site(node))):
                self.unknown(ctx, node, state, "over the cap of files written by one launch")

    # ---------------------------------------------------------------- control flow

    def _if(self, node, state, ctx, stdin, out):
        clauses: list[tuple[Any, list[Any]]] = []
        cond_nodes: list[Any] = []
        body: list[Any] = []
        current_cond: Any = None
        for child in node.children:
            if child.type == "if" or child.type == "then" or child.type == "fi" or not child.is_named:
                if child.type == "then":
                    current_cond = cond_nodes
                    cond_nodes = []
                continue
            if child.type in ("elif_clause", "else_clause"):
                continue
            if current_cond is None:
                cond_nodes.append(child)
            else:
                body.append(child)
        clauses.append((current_cond or [], body))
        for child in node.named_children:
            if child.type == "elif_clause":
                conds, bod, seen_then = [], [], False
                for c in child.children:
                    if c.type == "then":
                        seen_then = True
                        continue
                    if not c.is_named or c.type in _SKIP:
                        continue
                    (bod if seen_then else conds).append(c)
                clauses.append((conds, bod))
            elif child.type == "else_clause":
                clauses.append((None, [c for c in child.named_children if c.type not in _SKIP]))
        return self.branches(clauses, state, ctx, stdin, out)

    def branches(self, clauses: list[tuple[Any, list[Any]]], state: State, ctx: Ctx, stdin, out) -> Optional[int]:
        """if/elif/else: the first arm whose test holds; undecided tests run every arm that may."""
        pending: list[tuple[str, State, Callable[[State, Ctx], Any]]] = []
        undecided: list[str] = []
        for conds, body in clauses:
            if conds is None:
                decided: Optional[bool] = True
                label = "else"
            else:
                status = None
                for c in conds:
                    if c.type in _SKIP:
                        continue
                    status = self.statement(c, state, ctx)
                decided = None if status is None else status == 0
                label = f"`{_short(' '.join(ctx.text(c) for c in conds if c.type not in _SKIP))}` at " \
                        f"{ctx.site(conds[0]) if conds else ''}"
            if decided is False:
                continue
            runner = (lambda b: lambda s, c: self._compound_list(b, s, c, stdin, out))(body)
            if decided is True and not undecided:
                return runner(state, ctx)
            if decided is True:
                pending.append((label, state, runner))
                break
            undecided.append(label)
            pending.append((label, state, runner))
        if not pending:
            return 0
        if not undecided:
            return 0
        # Several arms may run: each from a copy of the state, effects under its test, then merged.
        last_sure = pending[-1][0] == "else" or len(pending) > len(undecided)
        return self.run_arms([(label, runner) for label, _, runner in pending], state, ctx,
                             fallthrough=not last_sure, why=f"set on an undecided branch ({undecided[0]})")

    def _compound_list(self, nodes: list[Any], state: State, ctx: Ctx, stdin, out) -> Optional[int]:
        status: Optional[int] = 0
        for n in nodes:
            if n.type in _SKIP or not n.is_named:
                continue
            status = self.statement(n, state, ctx, stdin=stdin, out=out)
        return status

    def _case(self, node, state, ctx, stdin, out):
        value_node = node.child_by_field_name("value")
        value = self.word_text(value_node, state, ctx) if value_node is not None else ""
        clauses: list[tuple[Any, list[Any]]] = []
        for item in node.named_children:
            if item.type != "case_item":
                continue
            pats = [c for c in item.children_by_field_name("value")]
            body = [c for c in item.named_children if c not in pats and c.type not in _SKIP]
            verdict: Optional[bool] = False
            for p in pats:
                pattern = self.pattern_text(p, state, ctx)
                m = _glob_match(value, pattern)
                if m is True:
                    verdict = True
                    break
                if m is None:
                    verdict = None
            clauses.append((verdict, body, item))
        # Reuse `branches` with precomputed verdicts.
        pending = []
        undecided = []
        for verdict, body, item in clauses:
            if verdict is False:
                continue
            runner = (lambda b: lambda s, c: self._compound_list(b, s, c, stdin, out))(body)
            label = f"case arm `{_short(ctx.text(item).split(')', 1)[0])}` at {ctx.site(item)}"
            if verdict is True and not undecided:
                return runner(state, ctx)
            pending.append((label, runner))
            if verdict is True:
                break
            undecided.append(label)
        if not pending:
            return 0
        last_sure = len(pending) > len(undecided)
        return self.run_arms(pending, state, ctx, fallthrough=not last_sure,
                             why=f"set on an undecided case arm ({undecided[0]})")

    def _for(self, node, state, ctx, stdin, out):
        var = node.child_by_field_name("variable")
        body = node.child_by_field_name("body")
        values = node.children_by_field_name("value")
        name = ctx.text(var) if var is not None else "_"
        if values:
            words: list[Word] = []
            for v in values:
                words += self.expand(v, state, ctx)
        else:
            words = list(state.positional)
        known = all(isinstance(w, str) for w in words)
        if not known or len(words) > MAX_LOOP:
            why = (f"the loop at {ctx.site(node)} has over {MAX_LOOP} iterations" if known
                   else f"the list of the loop at {ctx.site(node)} is not known")
            if len(words) > MAX_LOOP:
                self.unknown(ctx, node, state, why)
            cond = f"loop `for {name}` at {ctx.site(node)}"
            state.set(name, Unknown(why))
            return self._maybe(lambda s, c: self._loop_body(body, s, c, stdin, out), state, ctx, cond)
        status: Optional[int] = 0
        for w in words:
            state.set(name, w)
            try:
                status = self._loop_body(body, state, ctx, stdin, out)
            except _Loop as e:
                if e.n > 1:
                    raise _Loop(e.kind, e.n - 1)
                if e.kind == "break":
                    break
        return status

    def _loop_body(self, body, state, ctx, stdin, out):
        try:
            return self._compound(body, state, ctx, stdin, out)
        except _Loop as e:
            if e.n > 1:
                raise _Loop(e.kind, e.n - 1)
            if e.kind == "break":
                raise _Loop("break", 1)
            return None

    def _while(self, node, state, ctx, stdin, out):
        """`while`/`until`: iterate while the test is decided (an option-parsing loop over `$@`);
        from the first undecided test on, the body runs once more as a branch that may run."""
        conds = [c for c in node.children_by_field_name("condition") if c.is_named and c.type not in _SKIP]
        body = node.child_by_field_name("body")
        until = node.children and node.children[0].type == "until"
        label = f"loop `{_short(' '.join(ctx.text(c) for c in conds))}` at {ctx.site(node)}"

        def once(s: State, c: Ctx) -> None:
            try:
                self._compound(body, s, c, stdin, out)
            except _Loop as e:
                if e.n > 1:
                    raise _Loop(e.kind, e.n - 1)
        for _ in range(MAX_LOOP):
            status = None
            for c in conds:
                status = self.statement(c, state, ctx, stdin=stdin)
            holds = None if status is None else (status == 0) != bool(until)
            if holds is False:
                return 0
            if holds is None:
                return self._maybe(once, state, ctx, label)
            try:
                self._compound(body, state, ctx, stdin, out)
            except _Loop as e:
                if e.n > 1:
                    raise _Loop(e.kind, e.n - 1)
                if e.kind == "break":
                    return 0
        self.unknown(ctx, node, state, f"the loop at {ctx.site(node)} ran over {MAX_LOOP} iterations")
        return None

    def _c_for(self, node, state, ctx, stdin, out):
        body = node.child_by_field_name("body")
        cond = f"loop `{_short(ctx.text(node).split(')', 1)[0])}))` at {ctx.site(node)}"
        for child in node.named_children:
            if child != body and child.type not in _SKIP:
                self.arith(ctx.text(child), state, ctx, child)

        def once(s: State, c: Ctx) -> None:
            try:
                self._compound(body, s, c, stdin, out)
            except _Loop:
                pass
        return self._maybe(once, state, ctx, cond)

    def _function_def(self, node, state, ctx, stdin, out):
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is not None and body is not None:
            state.functions[ctx.text(name_node)] = Func(body, ctx.src, ctx.path)
        return 0

    def _test(self, node, state, ctx, stdin, out):
        inner = [c for c in node.named_children if c.type not in _SKIP]
        if not inner:
            return 1
        verdict = self.test_expr(inner[0], state, ctx)
        return None if verdict is None else int(not verdict)

    def _arith_statement(self, node, state, ctx, stdin, out):
        inner = [c for c in node.named_children if c.type not in _SKIP]
        value = None
        for c in inner:
            value = self.arith(ctx.text(c), state, ctx, c)
        if value is None:
            return None
        return int(value == 0)

    def _declaration(self, node, state, ctx, stdin, out):
        head = node.children[0].type if node.children else "declare"
        words: list[Any] = [c for c in node.children[1:] if c.is_named]
        return self.declare(head, words, state, ctx, node)

    def _unset(self, node, state, ctx, stdin, out):
        for c in node.named_children:
            for w in self.expand(c, state, ctx):
                if isinstance(w, str) and not w.startswith("-"):
                    state.unset(w.split("[", 1)[0])
        return 0

    def _assignments(self, node, state, ctx, stdin, out):
        for c in node.named_children:
            if c.type == "variable_assignment":
                self.assign(c, state, ctx)
        return 0

    def _assignment(self, node, state, ctx, stdin, out):
        self.assign(node, state, ctx)
        return 0

    # ---------------------------------------------------------------- assignments

    def assign(self, node: Any, state: State, ctx: Ctx, *, local: bool = False,
               export: Optional[bool] = None, arrays: str = "") -> None:
        name_node = node.child_by_field_name("name")
        value_node = node.child_by_field_name("value")
        if name_node is None:
            return
        append = any(not c.is_named and c.type == "+=" for c in node.children)
        index: Optional[Word] = None
        if name_node.type == "subscript":
            base = name_node.child_by_field_name("name")
            idx = name_node.child_by_field_name("index")
            name = ctx.text(base) if base is not None else ctx.text(name_node)
            index = self.word_text(idx, state, ctx) if idx is not None else "0"
        else:
            name = ctx.text(name_node)
        if value_node is None:
            value: Any = ""
        elif value_node.type == "array":
            value = self.array_value(value_node, state, ctx, assoc="A" in arrays or isinstance(state.get(name), dict))
        else:
            value = self.word_text(value_node, state, ctx)
        current = state.get(name)
        if index is not None:
            container = current if isinstance(current, (list, dict)) else ([] if current is None else [current])
            if isinstance(index, Unknown):
                state.set(name, Unknown(f"an element of {name} set at an unknown index"), local=local, export=export)
                return
            if isinstance(container, dict) or "A" in arrays:
                container = dict(container) if isinstance(container, dict) else {}
                container[index] = _join_unknown([container.get(index, ""), value]) if append else value
            else:
                i = self.arith(index, state, ctx, node)
                if i is None or i < 0 or i > MAX_ARRAY:
                    state.set(name, Unknown(f"an element of {name} set at index {index}"), local=local, export=export)
                    return
                container = list(container)
                while len(container) <= i:
                    container.append("")
                container[i] = _join_unknown([container[i], value]) if append else value
            state.set(name, container, local=local, export=export)
            return
        if append:
            if isinstance(value, list):
                base = current if isinstance(current, list) else ([] if current in (None, "") else [_scalar(current)])
                value = base + value
                if len(value) > MAX_ARRAY:
                    value = Unknown(f"{name} grew over {MAX_ARRAY:,} elements")
            elif isinstance(current, list):
                value = current[:1] and [_join_unknown([current[0], value])] + current[1:] or [value]
            else:
                value = _join_unknown([_scalar(current) if current is not None else "", value])
        elif isinstance(current, list) and not isinstance(value, (list, dict)):
            value = [value] + current[1:]
        if "i" in arrays and isinstance(value, str):
            n = self.arith(value, state, ctx, node)
            value = str(n) if n is not None else Unknown(f"`{value}` as an integer")
        state.set(name, value, local=local, export=export)

    def array_value(self, node: Any, state: State, ctx: Ctx, *, assoc: bool) -> Any:
        if assoc:
            out: dict[str, Word] = {}
            text = ctx.text(node).strip()[1:-1]
            for m in re.finditer(r"\[([^\]]*)\]=(\"[^\"]*\"|'[^']*'|\S*)", text):
                key = m.group(1)
                raw = m.group(2)
                value = self.expand_text(raw, state, ctx, node)
                out[key] = value
            return out
        words: list[Word] = []
        for c in node.named_children:
            if c.type in _SKIP:
                continue
            words += self.expand(c, state, ctx)
            if len(words) > MAX_ARRAY:
                return Unknown(f"an array over {MAX_ARRAY:,} elements")
        return words

    def declare(self, head: str, words: list[Any], state: State, ctx: Ctx, node: Any) -> int:
        flags = ""
        local = head in ("local",) or (head in ("declare", "typeset") and ctx.function != "")
        export = True if head == "export" else None
        for w in words:
            if w.type == "variable_assignment":
                if "g" in flags:
                    local = False
                self.assign(w, state, ctx, local=local, export=export if export else ("x" in flags or None),
                            arrays=flags)
                continue
            texts = [ctx.text(w)] if w.type == "variable_name" else self.expand(w, state, ctx)
            for text in texts:
                if isinstance(text, Unknown):
                    self.unknown(ctx, node, state, f"`{head}` of a name the interpreter cannot know")
                    continue
                if text.startswith(("-", "+")) and len(text) > 1:
                    if text.startswith("-"):
                        flags += text[1:]
                    if head == "export" and "n" in text:
                        export = False
                    continue
                name, eq, value = text.partition("=")
                if not _NAME.match(name):
                    continue
                if "f" in flags:
                    continue  # `export -f fn`, `declare -f fn`: functions, not variables
                if eq:
                    state.set(name, value, local=local, export=export if export else ("x" in flags or None))
                elif state.lookup(name) is None or local:
                    if local and (state.frames[-1].get(name) is None):
                        state.frames[-1][name] = Var([] if "a" in flags else ({} if "A" in flags else ""),
                                                     exported=bool(export))
                    elif state.lookup(name) is None:
                        state.set(name, [] if "a" in flags else ({} if "A" in flags else ""), export=export)
                    else:
                        state.set(name, _KEEP, export=export)
                else:
                    state.set(name, _KEEP, export=export if export is not None else ("x" in flags or None))
        return 0

    # ---------------------------------------------------------------- commands

    def _command(self, node, state, ctx, stdin, out):
        prefix: list[tuple[str, Word]] = []
        argv: list[Word] = []
        name_node = node.child_by_field_name("name")
        redirects: list[Any] = []
        for child in node.named_children:
            if child.type == "variable_assignment" and name_node is not None and child.start_byte < name_node.start_byte:
                n = child.child_by_field_name("name")
                v = child.child_by_field_name("value")
                prefix.append((ctx.text(n), self.word_text(v, state, ctx) if v is not None else ""))
            elif child.type == "variable_assignment" and name_node is None:
                self.assign(child, state, ctx)
            elif child.type.endswith("redirect"):
                redirects.append(child)
            elif child.type == "command_name":
                argv += self.expand(child.named_children[0] if child.named_children else child, state, ctx)
            elif child.type not in _SKIP:
                argv += self.expand(child, state, ctx)
        if name_node is None:
            return 0
        sink, new_stdin, writes = out, stdin, []
        for r in redirects:
            got = self.redirect(r, state, ctx)
            if got is None:
                continue
            if got[0] == "stdin":
                new_stdin = got[1]
            elif got[0] in ("write", "append"):
                writes.append((got[1], got[0], r))
            elif got[0] == "devnull":
                sink = None
        if writes:
            sink = Out()
        status = self.run_argv(argv, prefix, state, ctx, node, stdin=new_stdin, out=sink)
        for target, kind, r in writes:
            self.write_file(target, sink.value() if sink is not None else Unknown("output"),
                            "redirect" if kind == "write" else "append", state, ctx, r)
        return status

    def run_argv(self, argv: list[Word], prefix: list[tuple[str, Word]], state: State, ctx: Ctx, node: Any,
                 *, stdin: Word | None = None, out: Out | None = None, functions: bool = True) -> Optional[int]:
        if not argv:
            return 0
        head = argv[0]
        if isinstance(head, Unknown):
            self.unknown(ctx, node, state, f"a command whose name is not known ({head.why})")
            return None
        if state.expand_aliases and head in state.aliases and functions:
            text = state.aliases[head]
            if isinstance(text, Unknown):
                self.unknown(ctx, node, state, f"alias {head} of unknown text")
                return None
            words = self.expand_text_words(text, state, ctx, node)
            argv = words + argv[1:]
            head = argv[0]
            if isinstance(head, Unknown):
                self.unknown(ctx, node, state, f"a command whose name is not known ({head.why})")
                return None
        if functions and head in state.functions:
            return self.call_function(head, argv, prefix, state, ctx, node, stdin, out)
        if head in BUILTINS:
            saved = self._apply_prefix(prefix, state) if prefix else None
            try:
                # A builtin with no model here (`kill`, `wait`, `ulimit`, ...) changes no variable
                # the launch reads; its status is the running system's: unknown.
                return _BUILTINS[head](self, argv, state, ctx, node, stdin, out) if head in _BUILTINS else None
            finally:
                if saved is not None:
                    self._restore_prefix(saved, state)
        return self.external(argv, prefix, state, ctx, node, stdin=stdin, out=out)

    def _apply_prefix(self, prefix: list[tuple[str, Word]], state: State) -> list[tuple[str, Optional[Var]]]:
        saved = []
        for name, value in prefix:
            var = state.frames[-1].get(name)
            saved.append((name, None if var is None else Var(var.value, var.exported, var.readonly)))
            state.frames[-1][name] = Var(value, exported=True)
        return saved

    def _restore_prefix(self, saved, state: State) -> None:
        for name, var in reversed(saved):
            if var is None:
                state.frames[-1].pop(name, None)
            else:
                state.frames[-1][name] = var

    def call_function(self, name: str, argv: list[Word], prefix, state: State, ctx: Ctx, node: Any,
                      stdin: Word | None, out: Out | None) -> Optional[int]:
        fn = state.functions[name]
        site = ctx.site(node)
        inner = ctx.deeper(site, f"fn {name}", path=fn.path, src=fn.src, function=name)
        saved_pos = state.positional
        state.positional = list(argv[1:])
        state.frames.append({})
        for k, v in prefix:
            state.frames[-1][k] = Var(v, exported=True)
        try:
            status = self.statement(fn.node, state, inner, stdin=stdin, out=out)
        except _Return as r:
            status = r.status
        finally:
            state.frames.pop()
            state.positional = saved_pos
        return status

    # ---------------------------------------------------------------- external commands

    def env_of(self, state: State, prefix: list[tuple[str, Word]]) -> tuple[tuple[str, Word], ...]:
        """The environment a command sees, less what it inherits unchanged from the point's
        inputs (the same in both trees of a comparison, and kept out so that points share)."""
        env = state.exported()
        for k, v in prefix:
            env[k] = v
        return tuple(sorted((k, v) for k, v in env.items() if self.inputs.get(k, _ABSENT) != v))

    def external(self, argv: list[Word], prefix, state: State, ctx: Ctx, node: Any, *,
                 stdin: Word | None = None, out: Out | None = None) -> Optional[int]:
        head = argv[0]
        assert isinstance(head, str)
        env = self.env_of(state, prefix)
        role = self.classify(tuple(argv), self, state, ctx) if self.classify else None
        if role is not None:
            kind, what = role
            self.emit(kind, ctx, node, state, argv=tuple(argv), env=env, cwd=state.cwd, how=what,
                      client=kind == CLIENT)
            if kind == CLIENT:
                return None
        hook = self.hooks.get(head)
        if hook is not None:
            self.emit(EXEC, ctx, node, state, argv=tuple(argv), env=env, cwd=state.cwd)
            return hook(self, argv, state, ctx, node)
        # A script of the repository run by path (`./x.sh`, `"$DIR/x.sh"`, `benchmarks/x.sh`).
        if "/" in head:
            return self.run_program(head, argv[1:], prefix, state, ctx, node, stdin, out)
        try:
            ce = self.vocabulary(tuple(argv), state.cwd)
        except Exception as e:  # a vocabulary handler's fault is an unknown, never a crash
            ce = CommandEffects(unknown=f"{head}: {type(e).__name__}")
        model = _OUTPUT_MODELS.get(head)
        if ce is None and model is None:
            self.emit(EXEC, ctx, node, state, argv=tuple(argv), env=env, cwd=state.cwd)
            self.unknown(ctx, node, state, f"`{head}` is not a command the interpreter knows")
            if out is not None:
                out.write(Unknown(f"the output of {head}"))
            return None
        if role is None:
            self.emit(EXEC, ctx, node, state, argv=tuple(argv), env=env, cwd=state.cwd)
        if ce is not None:
            self.apply(ce, argv, prefix, state, ctx, node, stdin=stdin, out=out)
        if model is not None:
            text, status = model(self, argv, state, stdin)
            if out is not None:
                out.write(text)
            return status
        if out is not None and not _PURE_QUIET.get(head, False):
            out.write(Unknown(f"the output of {head}"))
        return None

    def apply(self, ce: CommandEffects, argv: list[Word], prefix, state: State, ctx: Ctx, node: Any, *,
              stdin: Word | None, out: Out | None) -> None:
        head = argv[0]
        if ce.unknown:
            self.unknown(ctx, node, state, f"{head}: {ce.unknown}")
        for path in ce.reads:
            self.emit(READ, ctx, node, state, path=self.host_path(path, state))
        for w in ce.writes:
            target = self.host_path(w.path, state)
            self.emit(WRITE, ctx, node, state, path=target, how=w.how)
            if isinstance(target, str):
                self.files.write(target, Written(Unknown(f"written by {head}"), f"{w.how} by {head}", ctx.site(node)))
        for d in ce.downloads:
            dest = self.host_path(d.dest, state) if d.dest is not None else None
            self.emit(DOWNLOAD, ctx, node, state, argv=(d.url,), path=dest)
            if isinstance(dest, str):
                self.files.write(dest, Written(Unknown(f"downloaded from {d.url}"), "downloaded", ctx.site(node)))
        for inst in ce.installs:
            self.emit(INSTALL, ctx, node, state, argv=tuple(inst.packages) + tuple(inst.index), how=inst.manager,
                      detail="editable" if inst.editable else "")
        for sub_argv, env_add, cwd in ce.runs:
            sub_prefix = list(prefix) + list(env_add)
            inner = state.copy()
            if getattr(ce, "clears_env", False):
                # `env -i`, `srun --export=NONE`: nothing of this shell's environment goes along.
                inner = State(cwd=state.cwd, container=state.container, mounts=state.mounts)
            for name in getattr(ce, "unsets", ()):
                inner.unset(name)
            if cwd is not None:
                inner.cwd = self.host_path(cwd, state)
            self.run_argv(list(sub_argv), sub_prefix, inner, ctx, node, stdin=stdin, out=out, functions=False)
        for text, args in ce.shell_text:
            self.child_shell_text(text, args, prefix, state, ctx, node, out)
        for path, args in ce.shell_files:
            self.child_shell_file(path, args, prefix, state, ctx, node, out)
        if ce.shell_stdin:
            if isinstance(stdin, str):
                self.child_shell_text(stdin, (), prefix, state, ctx, node, out)
            else:
                why = stdin.why if isinstance(stdin, Unknown) else "no input"
                self.unknown(ctx, node, state, f"{head} runs shell code from its input, which is not known ({why})")
        for py in ce.python:
            self.python(py, argv, prefix, state, ctx, node)
        for c in ce.containers:
            self.container(c, prefix, state, ctx, node, out)
        for prog, args in ce.programs:
            self.run_program(prog, list(args), prefix, state, ctx, node, stdin, out, known_program=True)

    def child_shell_text(self, text: Word, args: tuple[Word, ...], prefix, state: State, ctx: Ctx, node: Any,
                         out: Out | None) -> None:
        if isinstance(text, Unknown):
            self.unknown(ctx, node, state, f"shell text that is not known ({text.why})")
            return
        child = state.child()
        for k, v in prefix:
            child.set(k, v, export=True)
        if args:
            child.argv0, child.positional = args[0], list(args[1:])
        site = ctx.site(node)
        self.emit(SOURCE, ctx, node, state, path=f"{site} (shell text)", how="shell text")
        self.run_script(text, f"{site.path}:{site.line} (shell text)", child,
                        ctx.deeper(site, "bash -c"))

    def child_shell_file(self, path: Word, args: tuple[Word, ...], prefix, state: State, ctx: Ctx, node: Any,
                         out: Out | None) -> None:
        host = self.host_path(path, state)
        text = self.script_text(host, state, ctx, node, "runs")
        if text is None:
            return
        child = state.child()
        for k, v in prefix:
            child.set(k, v, export=True)
        child.argv0, child.positional = host, list(args)
        label = self.label(host)
        self.run_script(text, label, child, ctx.deeper(ctx.site(node), f"bash {label}"))

    def label(self, host: Word) -> str:
        if isinstance(host, Unknown):
            return "<unknown>"
        rel = self.files.repo_path(host)
        return rel if rel else host

    def script_text(self, host: Word, state: State, ctx: Ctx, node: Any, verb: str) -> Optional[str]:
        """The text of a script the launch runs or sources, or None (reported)."""
        if isinstance(host, Unknown):
            self.unknown(ctx, node, state, f"{verb} a file whose path is not known ({host.why})")
            return None
        written = self.files.written(host)
        if written is not None:
            self.emit(RUN_WRITTEN, ctx, node, state, path=host,
                      detail=f"the launch wrote at {written.site} ({written.by})")
            if isinstance(written.text, str):
                return written.text
            self.unknown(ctx, node, state, f"{verb} {host}, whose text is not known ({written.text.why})")
            return None
        self.emit(SOURCE, ctx, node, state, path=host, how=verb)
        text = self.files.read(host)
        if text is None:
            exists = self.files.exists(host)
            where = "in the repository" if self.files.repo_path(host) is not None else "outside the repository"
            self.unknown(ctx, node, state, f"{verb} {host}, {'a folder' if exists else 'not a file'} {where}")
            return None
        return text

    def run_program(self, prog: Word, args: list[Word], prefix, state: State, ctx: Ctx, node: Any,
                    stdin: Word | None, out: Out | None, *, known_program: bool = False) -> Optional[int]:
        host = self.host_path(prog, state)
        env = self.env_of(state, prefix)
        if isinstance(host, str):
            written = self.files.written(host)
            rel = self.files.repo_path(host)
            if written is None and rel is None:
                # A program of the image or the runner (`/usr/local/bin/atomesh`): as shipped.
                base = posixpath.basename(host)
                if not known_program:
                    ce = self.vocabulary((base, *args), state.cwd)
                    if ce is not None:
                        self.emit(EXEC, ctx, node, state, argv=(host, *args), env=env, cwd=state.cwd)
                        self.apply(ce, [base, *args], prefix, state, ctx, node, stdin=stdin, out=out)
                        return None
                self.emit(EXEC, ctx, node, state, argv=(host, *args), env=env, cwd=state.cwd)
                if not known_program:
                    self.unknown(ctx, node, state, f"runs {host}, a program outside the repository")
                return None
        self.emit(EXEC, ctx, node, state, argv=(host, *args), env=env, cwd=state.cwd)
        text = self.script_text(host, state, ctx, node, "runs")
        if text is None:
            return None
        first = text.split("\n", 1)[0]
        if first.startswith("#!") and "python" in first:
            self.emit(PYTHON, ctx, node, state, argv=(host, *args), env=env, cwd=state.cwd, how="script", path=host)
            return None
        child = state.child()
        for k, v in prefix:
            child.set(k, v, export=True)
        child.argv0, child.positional = host, list(args)
        label = self.label(host)
        return self.run_script(text, label, child, ctx.deeper(ctx.site(node), f"run {label}"))

    def python(self, py: PythonRun, argv: list[Word], prefix, state: State, ctx: Ctx, node: Any) -> None:
        env = self.env_of(state, prefix)
        if py.script is not None:
            host = self.host_path(py.script, state)
            if isinstance(host, str) and self.files.written(host) is not None:
                w = self.files.written(host)
                self.emit(RUN_WRITTEN, ctx, node, state, path=host, detail=f"the launch wrote at {w.site} ({w.by})")
            self.emit(PYTHON, ctx, node, state, argv=tuple(argv), env=env, cwd=state.cwd, how="script", path=host)
            if isinstance(host, str) and self.files.repo_path(host):
                self.files.read(host)
            return
        if py.module is not None:
            self.emit(PYTHON, ctx, node, state, argv=tuple(argv), env=env, cwd=state.cwd, how="module",
                      path=py.module)
            return
        self.emit(PYTHON, ctx, node, state, argv=tuple(argv), env=env, cwd=state.cwd,
                  how="code" if py.code is not None else "stdin", detail=_python_code_detail(py.code))

    def container(self, c: Container, prefix, state: State, ctx: Ctx, node: Any, out: Out | None) -> None:
        host_env = state.exported()
        for k, v in prefix:
            host_env[k] = v
        env: dict[str, Word] = {}
        for name in c.env_from_host:
            if name in host_env:
                env[name] = host_env[name]
        for name, value in c.env:
            env[name] = value
        for f in c.env_files:
            self.unknown(ctx, node, state, f"an env file {f} passed into the container")
        mounts = []
        for host, inside in c.mounts:
            h = self.host_path(host, state)
            if isinstance(h, str) and isinstance(inside, str):
                mounts.append((norm(inside), h))
            else:
                self.unknown(ctx, node, state, "a container mount whose path is not known")
        image = c.image if isinstance(c.image, str) else f"<unknown image: {c.image.why}>"
        self.emit(CONTAINER, ctx, node, state, argv=tuple(c.argv), env=tuple(sorted(env.items())),
                  cwd=c.workdir, how=image, path=c.entrypoint)
        child = State(frames=[{k: Var(v, exported=True) for k, v in env.items()}],
                      cwd=c.workdir if c.workdir is not None else "/", container=image,
                      mounts=tuple(sorted(mounts, key=lambda m: -len(m[0]))))
        argv = list(c.argv)
        if c.entrypoint is not None:
            argv = [c.entrypoint] + argv
        if not argv:
            return  # the image's own command, as shipped
        site = ctx.site(node)
        self.run_argv(argv, [], child, ctx.deeper(site, f"container {image}"), node, out=out, functions=False)

    # ---------------------------------------------------------------- paths

    def host_path(self, word: Word | None, state: State) -> Word:
        """A path as the host sees it: relative to the cwd, through the container's mounts."""
        if word is None:
            return Unknown("no path")
        if isinstance(word, Unknown):
            return word
        path = word
        if path.startswith("~"):
            home = state.get("HOME")
            path = (home if isinstance(home, str) else "/root") + path[1:]
        if not path.startswith("/"):
            if isinstance(state.cwd, Unknown):
                return Unknown(f"{path} relative to a folder that is not known ({state.cwd.why})")
            path = posixpath.join(state.cwd, path)
        path = norm(path)
        if state.container:
            for inside, host in state.mounts:
                if path == inside or path.startswith(inside.rstrip("/") + "/"):
                    return norm(host + path[len(inside):]) if inside != "/" else norm(host + path)
            return f"{state.container}:{path}"  # the image's own file
        return path

    def read_text(self, path: Word, state: State, ctx: Ctx, node: Any, *, quiet: bool = False) -> Word:
        if isinstance(path, Unknown):
            return path
        written = self.files.written(path)
        if written is not None:
            return written.text
        text = self.files.read(path)
        return text if text is not None else Unknown(f"the text of {path}")

    # ---------------------------------------------------------------- words

    def word_text(self, node: Any, state: State, ctx: Ctx, *, quoted: bool = True) -> Word:
        """A word's text without splitting (an assignment's value, a redirect target)."""
        parts = self.segments(node, state, ctx, quoted=True)
        out: list[Word] = []
        for seg in parts:
            if seg[0] == "fields":
                out.append(" ".join(w for w in seg[1] if isinstance(w, str)) if all(isinstance(w, str) for w in seg[1])
                           else next(w for w in seg[1] if isinstance(w, Unknown)))
            else:
                out.append(seg[1])
        return _join_unknown(out)

    def expand(self, node: Any, state: State, ctx: Ctx) -> list[Word]:
        """A word's fields after expansion and splitting (an argument)."""
        self.tick()
        if node.type == "brace_expression" or (node.type in ("word", "concatenation") and "{" in ctx.text(node)
                                               and (".." in ctx.text(node) or "," in ctx.text(node))):
            braced = _brace_expand(ctx.text(node))
            if braced is not None and len(braced) > 1 and "$" not in ctx.text(node) and "`" not in ctx.text(node):
                if len(braced) > MAX_FIELDS:
                    return [Unknown(f"a brace expansion of over {MAX_FIELDS:,} words")]
                return [_unescape_word(b) for b in braced]
        segs = self.segments(node, state, ctx, quoted=False)
        return _fields(segs)

    def expand_text(self, text: str, state: State, ctx: Ctx, node: Any) -> Word:
        """The value of a word given as text (an associative array element, an alias)."""
        words = self.expand_text_words(text, state, ctx, node)
        if any(isinstance(w, Unknown) for w in words):
            return next(w for w in words if isinstance(w, Unknown))
        return " ".join(words)  # type: ignore[arg-type]

    def expand_text_words(self, text: str, state: State, ctx: Ctx, node: Any) -> list[Word]:
        tree, src = self.parse(": " + text)
        cmd = tree.root_node.named_children[0] if tree.root_node.named_children else None
        inner = replace(ctx, src=src)
        if cmd is None or cmd.type != "command":
            return [Unknown(f"`{_short(text)}` as words")]
        out: list[Word] = []
        for c in cmd.named_children[1:]:
            if c.type not in _SKIP:
                out += self.expand(c, state, inner)
        return out

    def pattern_text(self, node: Any, state: State, ctx: Ctx) -> Word:
        """A glob pattern as written, with its expansions' text (quoted parts escaped)."""
        if node.type in ("word", "extglob_pattern", "regex"):
            text = ctx.text(node)
            if "$" not in text and "`" not in text:
                return text
        segs = self.segments(node, state, ctx, quoted=False)
        out: list[Word] = []
        for kind, value in segs:
            if kind == "fields":
                value = " ".join(v for v in value if isinstance(v, str)) if all(isinstance(v, str) for v in value) \
                    else Unknown("a pattern")
            if isinstance(value, str) and kind == "q":
                value = re.sub(r"([*?\[\]\\])", r"\\\1", value)
            out.append(value)
        return _join_unknown(out)

    def segments(self, node: Any, state: State, ctx: Ctx, *, quoted: bool) -> list[tuple[str, Any]]:
        """The parts of a word: ("q", text) quoted, ("u", text) unquoted (split later) and
        ("fields", [words]) for `"$@"`/`"${a[@]}"`."""
        t = node.type
        if t in ("word", "number", "extglob_pattern"):
            text = ctx.text(node)
            return [("q" if quoted else "u_lit", _unescape_word(text) if not quoted else text)]
        if t == "raw_string":
            return [("q", ctx.text(node)[1:-1])]
        if t == "ansi_c_string":
            return [("q", _ansi_c(ctx.text(node)[2:-1]))]
        if t in ("string", "translated_string"):
            out: list[tuple[str, Any]] = []
            pos = node.start_byte + (2 if t == "translated_string" else 1)
            end = node.end_byte - 1
            for child in node.named_children:
                if child.type == "string_content":
                    out.append(("q", _unescape_dq(ctx.src[child.start_byte:child.end_byte].decode("utf-8", "replace"))))
                else:
                    if child.start_byte > pos:
                        gap = ctx.src[pos:child.start_byte].decode("utf-8", "replace")
                        if gap.strip('"'):
                            out.append(("q", _unescape_dq(gap)))
                    out += self.segments(child, state, ctx, quoted=True)
                pos = child.end_byte
            if not node.named_children and end > pos:
                out.append(("q", _unescape_dq(ctx.src[pos:end].decode("utf-8", "replace"))))
            if not out:
                out.append(("q", ""))
            return out
        if t == "concatenation":
            out = []
            for child in node.children:
                if child.type in _SKIP:
                    continue
                if not child.is_named:
                    out.append(("q" if quoted else "u_lit", ctx.text(child)))
                    continue
                out += self.segments(child, state, ctx, quoted=quoted)
            return out
        if t == "simple_expansion":
            name_node = node.named_children[0] if node.named_children else None
            name = ctx.text(name_node) if name_node is not None else ctx.text(node)[1:]
            return self.param(name, None, state, ctx, node, quoted)
        if t == "expansion":
            return self.expansion(node, state, ctx, quoted)
        if t == "command_substitution":
            return [("q" if quoted else "u", self.substitute(node, state, ctx))]
        if t == "process_substitution":
            inner = state.copy()
            self._compound(node, inner, ctx, None, Out())
            return [("q", "/dev/fd/63")]
        if t == "arithmetic_expansion":
            inner = [c for c in node.named_children if c.type not in _SKIP]
            value = None
            for c in inner:
                value = self.arith(ctx.text(c), state, ctx, c)
            return [("q" if quoted else "u", str(value) if value is not None else
                     Unknown(f"the arithmetic `{_short(ctx.text(node))}`"))]
        if t == "brace_expression":
            return [("q" if quoted else "u_lit", ctx.text(node))]
        if t == "command_name":
            return self.segments(node.named_children[0], state, ctx, quoted=quoted) if node.named_children else []
        return [("q", Unknown(f"`{_short(ctx.text(node))}` ({t})"))]

    def param(self, name: str, index: Optional[str], state: State, ctx: Ctx, node: Any, quoted: bool):
        kind = "q" if quoted else "u"
        if name in ("@", "*"):
            words = list(state.positional)
            if quoted and name == "@":
                return [("fields", words)]
            return [(kind, _join_unknown(_intersperse(words, " ")))]
        if name == "#":
            return [(kind, str(len(state.positional)))]
        if name.isdigit():
            i = int(name)
            if i == 0:
                return [(kind, state.argv0)]
            return [(kind, state.positional[i - 1] if i <= len(state.positional) else "")]
        if name == "?":
            return [(kind, str(state.status) if state.status is not None else Unknown("the last command's status"))]
        if name in ("$", "!"):
            # A process id: one fixed number, so `/tmp/x.$$` is one path in every trace.
            return [(kind, "4242" if name == "$" else "4243")]
        if name in ("-", "_"):
            return [(kind, Unknown(f"${name}"))]
        self.note(name)
        value = state.get(name)
        if value is None and name in ("BASH_SOURCE", "FUNCNAME", "LINENO"):
            value = self.special(name, ctx, node)
            if index is not None:
                return self.indexed(name, value, index, state, ctx, node, quoted)
        if value is None:
            special = _ENVIRONMENT_DEFAULTS.get(name)
            if special is not None:
                return [(kind, special(state))]
            return [(kind, Unknown(f"${name} is not set on this path"))]
        if index is not None:
            return self.indexed(name, value, index, state, ctx, node, quoted)
        return [(kind, _scalar(value))]

    def special(self, name: str, ctx: Ctx, node: Any) -> Any:
        """BASH_SOURCE (the file being run, as the host sees it), FUNCNAME, LINENO."""
        if name == "LINENO":
            return str(node.start_point[0] + 1) if node is not None else "0"
        if name == "FUNCNAME":
            return [ctx.function] if ctx.function else []
        path = ctx.path
        if " (" in path or path.startswith("<"):
            return [Unknown(f"BASH_SOURCE of {path}")]
        return [path if path.startswith("/") else f"{WORKSPACE}/{path}"]

    def indexed(self, name: str, value: Any, index: str, state: State, ctx: Ctx, node: Any, quoted: bool):
        kind = "q" if quoted else "u"
        if index in ("@", "*"):
            words = list(value.values()) if isinstance(value, dict) else (
                list(value) if isinstance(value, list) else [value])
            if isinstance(value, Unknown):
                return [(kind, value)]
            if quoted and index == "@":
                return [("fields", words)]
            return [(kind, _join_unknown(_intersperse(words, " ")))]
        if isinstance(value, dict):
            key = self.expand_text(index, state, ctx, node) if "$" in index else index.strip("'\"")
            if isinstance(key, Unknown):
                return [(kind, key)]
            return [(kind, value.get(key, ""))]
        i = self.arith(index, state, ctx, node)
        if i is None:
            return [(kind, Unknown(f"{name}[{index}]"))]
        seq = value if isinstance(value, list) else [value]
        if i < 0:
            i += len(seq)
        return [(kind, seq[i] if 0 <= i < len(seq) else "")]

    def expansion(self, node: Any, state: State, ctx: Ctx, quoted: bool):
        """`${...}`: read from its text with the grammar's parts."""
        kind = "q" if quoted else "u"
        kids = [c for c in node.children if c.type not in ("${", "}")]
        if not kids:
            return [(kind, "")]
        first = kids[0]
        # ${#x}, ${#a[@]}
        if not first.is_named and first.type == "#" and len(kids) == 2:
            target = kids[1]
            value = self._value_of(target, state, ctx)
            if isinstance(value, Unknown):
                return [(kind, value)]
            if isinstance(value, tuple):
                seq, index = value[1], value[2]
                if isinstance(seq, Unknown):
                    return [(kind, seq)]
                if index in ("@", "*"):
                    return [(kind, str(len(seq)) if isinstance(seq, (list, dict)) else "1")]
                got = self.indexed(value[0], seq, index, state, ctx, node, True)[0][1]
                return [(kind, str(len(got)) if isinstance(got, str) else got)]
            return [(kind, str(len(value)) if isinstance(value, str) else Unknown("a length"))]
        # ${!x}, ${!prefix*}, ${!a[@]}
        if not first.is_named and first.type == "!":
            target = kids[1] if len(kids) > 1 else None
            if target is None:
                return [(kind, Unknown("${!}"))]
            text = ctx.text(node)
            if text.endswith(("*}", "@}")) and target.type == "variable_name":
                prefix = ctx.text(target)
                names = sorted({k for f in state.frames for k in f if k.startswith(prefix)})
                return [(kind, " ".join(names))]
            if target.type == "subscript":
                base = target.child_by_field_name("name")
                value = state.get(ctx.text(base)) if base is not None else None
                keys = list(value.keys()) if isinstance(value, dict) else [str(i) for i in range(len(value))] \
                    if isinstance(value, list) else (["0"] if value is not None else [])
                return [("fields", keys)] if quoted else [(kind, " ".join(keys))]
            ref = self._value_of(target, state, ctx)
            if isinstance(ref, Unknown) or isinstance(ref, tuple):
                return [(kind, Unknown(f"the variable {ctx.text(target)} names"))]
            if not _NAME.match(ref or ""):
                m = re.fullmatch(r"([A-Za-z_]\w*)\[([^\]]*)\]", ref or "")
                if m:
                    value = state.get(m.group(1))
                    if value is None:
                        return [(kind, Unknown(f"${{{ref}}} is not set"))]
                    return self.indexed(m.group(1), value, m.group(2), state, ctx, node, quoted)
                return [(kind, Unknown(f"${{!{ctx.text(target)}}} names `{ref}`"))]
            rest = kids[2:]
            if rest:
                return [(kind, Unknown(f"`{_short(ctx.text(node))}`"))]
            return self.param(ref, None, state, ctx, node, quoted)
        target = first
        value = self._value_of(target, state, ctx)
        name = ctx.text(target)
        rest = kids[1:]
        if not rest:
            if isinstance(value, tuple):
                return self.indexed(value[0], value[1], value[2], state, ctx, node, quoted)
            return [(kind, value if value is not None else Unknown(f"${name} is not set on this path"))]
        op_node = rest[0]
        op = op_node.type if not op_node.is_named else ctx.text(op_node)
        operands = rest[1:]
        if isinstance(value, tuple):
            got = self.indexed(value[0], value[1], value[2], state, ctx, node, True)
            value = got[0][1] if got[0][0] != "fields" else _join_unknown(_intersperse(got[0][1], " "))
        is_set = value is not None and not (isinstance(value, Unknown) and value.why.endswith("is not set on this path"))
        if op in (":-", "-", ":=", "=", ":+", "+", ":?", "?"):
            empty = (not is_set) or (op.startswith(":") and value == "")
            if isinstance(value, Unknown) and is_set:
                if op in (":-", "-", ":=", "="):
                    return [(kind, value)]
                if op in (":+", "+"):
                    return [(kind, Unknown(f"whether {name} is set ({value.why})"))]
            operand = self._operand(operands, state, ctx, quoted)
            if op in (":-", "-"):
                return operand if empty else [(kind, value)]
            if op in (":=", "="):
                if empty:
                    state.set(name, _segments_text(operand))
                    return operand
                return [(kind, value)]
            if op in (":+", "+"):
                return [(kind, "")] if empty else operand
            if empty:
                return [(kind, Unknown(f"${{{name}{op}...}} fails: {name} is not set"))]
            return [(kind, value)]
        if not is_set:
            value = ""
        if isinstance(value, Unknown):
            return [(kind, value)]
        if op in ("#", "##", "%", "%%"):
            pattern = self._pattern_operand(operands, state, ctx)
            return [(kind, _trim(value, op, pattern))]
        if op in ("/", "//", "/#", "/%"):
            pats = [o for o in operands if o.is_named]
            pattern = self.pattern_text(pats[0], state, ctx) if pats else ""
            slashes = [o for o in operands if not o.is_named and o.type == "/"]
            repl: Word = ""
            if len(pats) > 1:
                repl = self.word_text(pats[1], state, ctx)
            elif slashes and len(pats) == 1 and pats[0].start_byte < slashes[0].start_byte:
                repl = ""
            anchor = ctx.text(op_node) if op_node.is_named else op
            return [(kind, _replace(value, anchor, pattern, repl))]
        concrete(value)
        if op in ("^", "^^", ",", ",,"):
            return [(kind, value.upper() if op == "^^" else value.lower() if op == ",," else
                     (value[:1].upper() + value[1:]) if op == "^" else (value[:1].lower() + value[1:]))]
        if op == ":":
            nums = [ctx.text(o) for o in operands if o.is_named]
            try:
                off = self.arith(nums[0], state, ctx, node) if nums else 0
                length = self.arith(nums[1], state, ctx, node) if len(nums) > 1 else None
            except IndexError:
                off, length = None, None
            if off is None:
                return [(kind, Unknown(f"`{_short(ctx.text(node))}`"))]
            s = value[off:] if off >= 0 else value[len(value) + off:]
            if length is not None:
                s = s[:length] if length >= 0 else s[:len(s) + length]
            return [(kind, s)]
        if op == "@":
            return [(kind, Unknown(f"`{_short(ctx.text(node))}`"))]
        return [(kind, Unknown(f"`{_short(ctx.text(node))}`"))]

    def _value_of(self, target: Any, state: State, ctx: Ctx) -> Any:
        """A `${}` target's value: Word, None when unset, or (name, value, index) for a subscript."""
        if target.type == "subscript":
            base = target.child_by_field_name("name")
            idx = target.child_by_field_name("index")
            name = ctx.text(base) if base is not None else ""
            self.note(name)
            value = state.get(name)
            if value is None and name in ("BASH_SOURCE", "FUNCNAME"):
                value = self.special(name, ctx, target)
            if value is None:
                return None
            index = ctx.text(idx) if idx is not None else "0"
            if idx is not None and idx.type not in ("word", "number") and index not in ("@", "*"):
                iv = self.word_text(idx, state, ctx)
                if isinstance(iv, Unknown):
                    return iv
                index = iv
            return (name, value, index)
        name = ctx.text(target)
        got = self.param(name, None, state, ctx, target, True)
        if not got:
            return ""
        k, v = got[0]
        if k == "fields":
            return _join_unknown(_intersperse(v, " "))
        if isinstance(v, Unknown) and v.why.endswith("is not set on this path"):
            return None
        return v

    def _operand(self, operands: list[Any], state: State, ctx: Ctx, quoted: bool):
        named = [o for o in operands if o.is_named]
        if not named:
            return [("q" if quoted else "u", "")]
        out = []
        for o in named:
            out += self.segments(o, state, ctx, quoted=quoted)
        return out

    def _pattern_operand(self, operands: list[Any], state: State, ctx: Ctx) -> Word:
        named = [o for o in operands if o.is_named]
        return _join_unknown([self.pattern_text(o, state, ctx) for o in named]) if named else ""

    def substitute(self, node: Any, state: State, ctx: Ctx) -> Word:
        """`$(...)`/backticks: the statements run in a subshell; their output as far as known."""
        inner = state.copy()
        out = Out()
        try:
            self.depth_guard(ctx)
            for child in node.named_children:
                if child.type not in _SKIP:
                    self.statement(child, inner, replace(ctx, depth=ctx.depth + 1), out=out)
        except _Exit:
            pass
        except (_Return, _Loop):
            pass
        value = out.value()
        if isinstance(value, str):
            value = value.rstrip("\n")
        state.status = inner.status
        return value

    def depth_guard(self, ctx: Ctx) -> None:
        if ctx.depth + 1 > MAX_DEPTH:
            raise Budget(f"substitutions nested over {MAX_DEPTH} deep")

    # ---------------------------------------------------------------- tests and arithmetic

    def test_expr(self, node: Any, state: State, ctx: Ctx) -> Optional[bool]:
        t = node.type
        if t == "parenthesized_expression":
            inner = [c for c in node.named_children]
            return self.test_expr(inner[0], state, ctx) if inner else None
        if t == "unary_expression":
            op = node.child_by_field_name("operator")
            opt = ctx.text(op) if op is not None else (node.children[0].type if node.children else "")
            operand = [c for c in node.named_children if c != op]
            if opt == "!":
                v = self.test_expr(operand[0], state, ctx) if operand else None
                return None if v is None else not v
            value = self.word_text(operand[0], state, ctx) if operand else ""
            return self.unary(opt, value, state)
        if t == "binary_expression":
            left = node.child_by_field_name("left")
            right = node.child_by_field_name("right")
            op = node.child_by_field_name("operator")
            opt = ctx.text(op) if op is not None else ""
            if opt in ("&&", "-a"):
                a = self.test_expr(left, state, ctx)
                if a is False:
                    return False
                b = self.test_expr(right, state, ctx)
                return False if b is False else (True if a and b else None)
            if opt in ("||", "-o"):
                a = self.test_expr(left, state, ctx)
                if a is True:
                    return True
                b = self.test_expr(right, state, ctx)
                return True if b is True else (False if a is False and b is False else None)
            lv = self.word_text(left, state, ctx)
            if opt in ("==", "=", "!="):
                rv = self.pattern_text(right, state, ctx)
                m = _glob_match(lv, rv)
                return None if m is None else (m if opt != "!=" else not m)
            if opt == "=~":
                rv = self.word_text(right, state, ctx) if right.type != "regex" else ctx.text(right)
                concrete(lv, rv)
                if isinstance(lv, Unknown) or isinstance(rv, Unknown) or "$" in rv:
                    return None
                try:
                    return re.search(rv, lv) is not None
                except re.error:
                    return None
            rv = self.word_text(right, state, ctx)
            return _binary(opt, lv, rv, self, state, ctx, node)
        if t in ("word", "string", "raw_string", "simple_expansion", "expansion", "concatenation", "number"):
            v = self.word_text(node, state, ctx)
            return None if isinstance(v, Unknown) else v != ""
        if t == "test_command":
            inner = [c for c in node.named_children]
            return self.test_expr(inner[0], state, ctx) if inner else False
        return None

    def unary(self, op: str, value: Word, state: State) -> Optional[bool]:
        if op not in ("-z", "-n"):
            concrete(value)
        if op == "-z":
            return None if isinstance(value, Unknown) else value == ""
        if op == "-n":
            return None if isinstance(value, Unknown) else value != ""
        if op in ("-f", "-e", "-d", "-r", "-s", "-x", "-L", "-h", "-w"):
            path = self.host_path(value, state)
            if isinstance(path, Unknown):
                return None
            exists = self.files.exists(path)
            if exists is None or op in ("-x", "-s", "-L", "-h"):
                return None
            if op == "-d" and exists:
                rel = self.files.repo_path(path)
                if rel is None:
                    return None
                return rel == "" or self.files.read(path) is None
            if op == "-f" and exists:
                return self.files.read(path) is not None or self.files.written(path) is not None
            return exists
        if op == "-v":
            return None if isinstance(value, Unknown) else state.lookup(value) is not None
        return None

    def test_argv(self, args: list[Word], state: State) -> Optional[bool]:
        """`test`/`[`: POSIX test over words."""
        if args and args[-1] == "]":
            args = args[:-1]
        return _test_words(args, self, state)

    def arith(self, text: Word, state: State, ctx: Ctx, node: Any) -> Optional[int]:
        if isinstance(text, Unknown):
            return None
        return _Arith(self, state, ctx, node).evaluate(text)


# ---------------------------------------------------------------------------- statement table


def _assign_state(target: State, source: State) -> None:
    target.frames = source.frames
    target.functions = source.functions
    target.aliases = source.aliases
    target.positional = source.positional
    target.cwd = source.cwd
    target.traps = source.traps
    target.expand_aliases = source.expand_aliases
    target.status = source.status


_STATEMENTS: dict[str, Callable[..., Optional[int]]] = {
    "program": Interpreter._program,
    "compound_statement": Interpreter._compound,
    "do_group": Interpreter._compound,
    "subshell": Interpreter._subshell,
    "list": Interpreter._list,
    "negated_command": Interpreter._negated,
    "pipeline": Interpreter._pipeline,
    "redirected_statement": Interpreter._redirected,
    "if_statement": Interpreter._if,
    "case_statement": Interpreter._case,
    "for_statement": Interpreter._for,
    "c_style_for_statement": Interpreter._c_for,
    "while_statement": Interpreter._while,
    "function_definition": Interpreter._function_def,
    "test_command": Interpreter._test,
    "declaration_command": Interpreter._declaration,
    "unset_command": Interpreter._unset,
    "variable_assignment": Interpreter._assignment,
    "variable_assignments": Interpreter._assignments,
    "command": Interpreter._command,
}
_SKIP = frozenset({"comment", "heredoc_body", "heredoc_start", "heredoc_end", "heredoc_content", ";", ";;", "&",
                   "\n", "then", "fi", "do", "done", "esac", "in"})


def _arith_stmt(self, node, state, ctx, stdin, out):
    return Interpreter._arith_statement(self, node, state, ctx, stdin, out)


# `(( ... ))` parses as a compound statement holding an arithmetic expression.
def _compound_or_arith(self, node, state, ctx, stdin, out):
    if node.children and node.children[0].type == "((":
        return Interpreter._arith_statement(self, node, state, ctx, stdin, out)
    return Interpreter._compound(self, node, state, ctx, stdin, out)


_STATEMENTS["compound_statement"] = _compound_or_arith


# ---------------------------------------------------------------------------- builtins


def _b_cd(self: Interpreter, argv, state: State, ctx, node, stdin, out):
    args = [a for a in argv[1:] if not (isinstance(a, str) and a in ("-P", "-L", "-e", "--"))]
    target: Word = args[0] if args else (state.get("HOME") or "/root")
    if argv[0] == "popd":
        state.cwd = state.dirstack.pop() if state.dirstack else Unknown("popd with an empty stack")
        return 0
    if target == "-":
        state.cwd = _scalar(state.get("OLDPWD")) if state.get("OLDPWD") is not None else Unknown("cd -")
        return 0
    if argv[0] == "pushd":
        state.dirstack.append(state.cwd)
    old = state.cwd
    state.cwd = self.host_path(target, state)
    state.set("OLDPWD", old)
    state.set("PWD", state.cwd)
    if isinstance(state.cwd, str):
        exists = self.files.exists(state.cwd)
        return None if exists is None else (0 if exists else 1)
    return None


def _b_pwd(self, argv, state, ctx, node, stdin, out):
    if out is not None:
        out.write(_join_unknown([state.cwd, "\n"]) if isinstance(state.cwd, str) else state.cwd)
    return 0


def _b_echo(self, argv, state, ctx, node, stdin, out):
    args = list(argv[1:])
    newline, escapes = True, False
    while args and isinstance(args[0], str) and re.fullmatch(r"-[neE]+", args[0]):
        flags = args.pop(0)
        newline = newline and "n" not in flags
        escapes = "e" in flags
    if out is not None:
        text = _join_unknown(_intersperse(args, " "))
        if escapes and isinstance(text, str):
            text = _ansi_c(text)
        out.write(_join_unknown([text, "\n" if newline else ""]))
    return 0


def _b_printf(self, argv, state, ctx, node, stdin, out):
    args = list(argv[1:])
    target = None
    if len(args) >= 2 and args[0] == "-v":
        target = args[1]
        args = args[2:]
    if args and args[0] == "--":
        args = args[1:]
    text = _printf(args) if args else ""
    if target is not None:
        if isinstance(target, Unknown):
            self.unknown(ctx, node, state, "printf -v into a variable whose name is not known")
            return None
        m = re.fullmatch(r"([A-Za-z_]\w*)(?:\[(.*)\])?", target)
        if not m:
            return 1
        if m.group(2) is not None:
            cur = state.get(m.group(1))
            seq = list(cur) if isinstance(cur, list) else []
            i = self.arith(m.group(2), state, ctx, node)
            if i is None or i > MAX_ARRAY:
                state.set(m.group(1), Unknown("printf -v into an element"))
            else:
                while len(seq) <= i:
                    seq.append("")
                seq[i] = text
                state.set(m.group(1), seq)
        else:
            state.set(m.group(1), text)
        return 0
    if out is not None:
        out.write(text)
    return 0


def _b_export(self, argv, state, ctx, node, stdin, out):
    # Reached for `export` written as a plain command word (`builtin export X=1`, `command export`).
    return self.declare(argv[0], [], state, ctx, node) if len(argv) == 1 else _declare_words(self, argv, state, ctx, node)


def _declare_words(self: Interpreter, argv, state: State, ctx: Ctx, node) -> int:
    head = argv[0]
    flags = ""
    export = True if head == "export" else None
    local = head == "local" or (head in ("declare", "typeset") and ctx.function != "")
    for w in argv[1:]:
        if isinstance(w, Unknown):
            self.unknown(ctx, node, state, f"`{head}` of words the interpreter cannot know")
            continue
        if w.startswith(("-", "+")) and len(w) > 1 and "=" not in w:
            flags += w[1:] if w.startswith("-") else ""
            continue
        name, eq, value = w.partition("=")
        if not _NAME.match(name):
            continue
        if eq:
            state.set(name, value, local=local, export=export if export else ("x" in flags or None))
        else:
            state.set(name, _KEEP if state.lookup(name) else "", local=local and state.frames[-1].get(name) is None,
                      export=export if export else ("x" in flags or None))
    return 0


def _b_unset(self, argv, state, ctx, node, stdin, out):
    for w in argv[1:]:
        if isinstance(w, str) and not w.startswith("-"):
            state.unset(w.split("[", 1)[0])
    return 0


def _b_set(self, argv, state, ctx, node, stdin, out):
    args = list(argv[1:])
    if "--" in args:
        state.positional = args[args.index("--") + 1:]
        return 0
    if args and isinstance(args[0], str) and not args[0].startswith(("-", "+")):
        state.positional = args
    return 0


def _b_shopt(self, argv, state, ctx, node, stdin, out):
    args = list(argv[1:])
    if "expand_aliases" in args:
        state.expand_aliases = "-s" in args
    return 0


def _b_shift(self, argv, state, ctx, node, stdin, out):
    n = 1
    if len(argv) > 1:
        n = self.arith(argv[1], state, ctx, node) or 0
    state.positional = state.positional[n:]
    return 0


def _b_source(self: Interpreter, argv, state: State, ctx: Ctx, node, stdin, out):
    if len(argv) < 2:
        return 1
    host = self.host_path(argv[1], state)
    text = self.script_text(host, state, ctx, node, "sources")
    if text is None:
        return None
    label = self.label(host)
    saved = state.positional
    if len(argv) > 2:
        state.positional = list(argv[2:])
    try:
        self.run_text(text, label, state, ctx.deeper(ctx.site(node), f"source {label}"))
    except _Return as r:
        return r.status
    finally:
        if len(argv) > 2:
            state.positional = saved
    return state.status


def _b_eval(self: Interpreter, argv, state: State, ctx: Ctx, node, stdin, out):
    text = _join_unknown(_intersperse(argv[1:], " "))
    if isinstance(text, Unknown):
        self.unknown(ctx, node, state, f"eval of text that is not known ({text.why})")
        return None
    site = ctx.site(node)
    self.run_text(text, f"{site.path}:{site.line} (eval)", state, ctx.deeper(site, "eval"))
    return state.status


def _b_exec(self: Interpreter, argv, state: State, ctx: Ctx, node, stdin, out):
    if len(argv) == 1:
        return 0  # `exec 3>file`: redirections only
    args = list(argv[1:])
    while args and isinstance(args[0], str) and args[0] in ("-c", "-l", "-a"):
        args = args[2:] if args[0] == "-a" else args[1:]
    status = self.run_argv(args, [], state, ctx, node, stdin=stdin, out=out, functions=False)
    raise _Exit(status)


def _b_exit(self, argv, state, ctx, node, stdin, out):
    code = self.arith(argv[1], state, ctx, node) if len(argv) > 1 else state.status
    raise _Exit(code)


def _b_return(self, argv, state, ctx, node, stdin, out):
    code = self.arith(argv[1], state, ctx, node) if len(argv) > 1 else state.status
    raise _Return(code)


def _b_loop(self, argv, state, ctx, node, stdin, out):
    n = self.arith(argv[1], state, ctx, node) if len(argv) > 1 else 1
    raise _Loop(argv[0], n or 1)


def _b_read(self: Interpreter, argv, state: State, ctx: Ctx, node, stdin, out):
    args = list(argv[1:])
    names: list[str] = []
    array: Optional[str] = None
    delim = "\n"
    i = 0
    while i < len(args):
        a = args[i]
        if isinstance(a, Unknown):
            self.unknown(ctx, node, state, "read into a variable whose name is not known")
            return None
        if a == "-a" and i + 1 < len(args):
            array = args[i + 1] if isinstance(args[i + 1], str) else None
            i += 2
            continue
        if a == "-d" and i + 1 < len(args):
            delim = args[i + 1] if isinstance(args[i + 1], str) else "\n"
            i += 2
            continue
        if a in ("-p", "-t", "-n", "-N", "-u", "-i") and i + 1 < len(args):
            i += 2
            continue
        if a.startswith("-"):
            i += 1
            continue
        names.append(a)
        i += 1
    if not names and array is None:
        names = ["REPLY"]
    if not isinstance(stdin, str):
        why = stdin.why if isinstance(stdin, Unknown) else "its input is not known"
        for n in names + ([array] if array else []):
            state.set(n, Unknown(f"read at {ctx.site(node)}: {why}"))
        return None
    line = stdin.split(delim or "\0", 1)[0] if delim else stdin
    ifs = _scalar(state.get("IFS")) if state.get("IFS") is not None else " \t\n"
    if isinstance(ifs, Unknown):
        for n in names:
            state.set(n, Unknown("read with an unknown IFS"))
        return None
    if array is not None:
        state.set(array, _split(line, ifs))
        return 0
    fields = _split(line, ifs, maxsplit=len(names) - 1) if names else []
    for j, n in enumerate(names):
        state.set(n, fields[j] if j < len(fields) else "")
    return 0 if stdin else 1


def _b_mapfile(self: Interpreter, argv, state: State, ctx: Ctx, node, stdin, out):
    args = [a for a in argv[1:]]
    name = "MAPFILE"
    strip = False
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-t":
            strip = True
        elif a in ("-d", "-n", "-O", "-s", "-u", "-C", "-c") and i + 1 < len(args):
            i += 1
        elif isinstance(a, str) and not a.startswith("-"):
            name = a
        i += 1
    if not isinstance(stdin, str):
        state.set(name, Unknown(f"{argv[0]} at {ctx.site(node)} read input that is not known"))
        return None
    lines = stdin.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not strip:
        lines = [ln + "\n" for ln in lines]
    if len(lines) > MAX_ARRAY:
        state.set(name, Unknown(f"{argv[0]} of over {MAX_ARRAY:,} lines"))
        return None
    state.set(name, lines)
    return 0


def _b_let(self, argv, state, ctx, node, stdin, out):
    value = None
    for expr in argv[1:]:
        value = self.arith(expr, state, ctx, node)
    return None if value is None else int(value == 0)


def _b_alias(self, argv, state, ctx, node, stdin, out):
    for w in argv[1:]:
        if isinstance(w, Unknown):
            self.unknown(ctx, node, state, "an alias the interpreter cannot know")
            continue
        name, eq, text = w.partition("=")
        if eq:
            state.aliases[name] = text
    return 0


def _b_unalias(self, argv, state, ctx, node, stdin, out):
    for w in argv[1:]:
        if isinstance(w, str):
            state.aliases.pop(w, None)
    return 0


def _b_trap(self, argv, state, ctx, node, stdin, out):
    if len(argv) >= 3:
        for sig in argv[2:]:
            if isinstance(sig, str):
                state.traps[sig.upper().removeprefix("SIG")] = (argv[1], ctx.site(node))
    return 0


def _b_true(self, argv, state, ctx, node, stdin, out):
    return 0


def _b_false(self, argv, state, ctx, node, stdin, out):
    return 1


def _b_test(self, argv, state, ctx, node, stdin, out):
    v = self.test_argv(list(argv[1:]), state)
    return None if v is None else int(not v)


def _b_command(self: Interpreter, argv, state: State, ctx: Ctx, node, stdin, out):
    args = list(argv[1:])
    if args and args[0] in ("-v", "-V"):
        if out is not None:
            out.write(Unknown("where a command is installed"))
        return None  # whether a program is installed is the image's business
    while args and args[0] == "-p":
        args = args[1:]
    if argv[0] == "builtin":
        return self.run_argv(args, [], state, ctx, node, stdin=stdin, out=out, functions=False)
    return self.run_argv(args, [], state, ctx, node, stdin=stdin, out=out, functions=False)


def _b_type(self, argv, state, ctx, node, stdin, out):
    if out is not None:
        out.write(Unknown("`type`/`hash` output"))
    return None


def _b_getopts(self, argv, state, ctx, node, stdin, out):
    if len(argv) >= 3 and isinstance(argv[2], str):
        state.set(argv[2], Unknown("an option getopts reads"))
    return None


def _b_noop(self, argv, state, ctx, node, stdin, out):
    return 0


_BUILTINS: dict[str, Callable[..., Optional[int]]] = {
    "cd": _b_cd, "pushd": _b_cd, "popd": _b_cd, "pwd": _b_pwd, "echo": _b_echo, "printf": _b_printf,
    "export": _b_export, "declare": _b_export, "typeset": _b_export, "local": _b_export, "readonly": _b_export,
    "unset": _b_unset, "set": _b_set, "shopt": _b_shopt, "shift": _b_shift, "source": _b_source, ".": _b_source,
    "eval": _b_eval, "exec": _b_exec, "exit": _b_exit, "logout": _b_exit, "return": _b_return,
    "break": _b_loop, "continue": _b_loop, "read": _b_read, "mapfile": _b_mapfile, "readarray": _b_mapfile,
    "let": _b_let, "alias": _b_alias, "unalias": _b_unalias, "trap": _b_trap, "true": _b_true, ":": _b_true,
    "false": _b_false, "test": _b_test, "[": _b_test, "command": _b_command, "builtin": _b_command,
    "type": _b_type, "hash": _b_noop, "getopts": _b_getopts,
}

# External commands whose output the interpreter never needs (quiet by nature).
_PURE_QUIET: dict[str, bool] = {"sleep": True, "mkdir": True, "rm": True, "cp": True, "mv": True, "touch": True,
                                "chmod": True, "ln": True, "wait": True}

def _o_dirname(it: Interpreter, argv, state, stdin):
    args = [a for a in argv[1:] if a != "--"]
    if not args or isinstance(args[0], Unknown):
        return (args[0] if args else Unknown("dirname of nothing")), None
    d = posixpath.dirname(args[0].rstrip("/")) or "."
    return d + "\n", 0


def _o_basename(it: Interpreter, argv, state, stdin):
    args = [a for a in argv[1:] if a not in ("--", "-a")]
    if not args or isinstance(args[0], Unknown):
        return (args[0] if args else Unknown("basename of nothing")), None
    b = posixpath.basename(args[0].rstrip("/"))
    if len(args) > 1 and isinstance(args[1], str) and b.endswith(args[1]) and b != args[1]:
        b = b[: -len(args[1])]
    return b + "\n", 0


def _o_realpath(it: Interpreter, argv, state, stdin):
    args = [a for a in argv[1:] if not (isinstance(a, str) and a.startswith("-"))]
    if argv[0] == "readlink" and "-f" not in argv and "-e" not in argv and "-m" not in argv:
        return Unknown("the target of a link"), None
    if not args:
        return Unknown(f"{argv[0]} of nothing"), None
    path = it.host_path(args[0], state)
    if isinstance(path, Unknown):
        return path, None
    return path + "\n", 0


def _o_cat(it: Interpreter, argv, state, stdin):
    args = [a for a in argv[1:] if not (isinstance(a, str) and a.startswith("-") and a != "-")]
    if not args:
        return (stdin if stdin is not None else Unknown("cat of its input")), 0
    parts: list[Word] = []
    for a in args:
        if a == "-":
            parts.append(stdin if stdin is not None else Unknown("cat of its input"))
            continue
        parts.append(it.read_text(it.host_path(a, state), state, None, None))
    return _join_unknown(parts), None


def _o_seq(it: Interpreter, argv, state, stdin):
    nums = []
    for a in argv[1:]:
        try:
            nums.append(int(a) if isinstance(a, str) else None)
        except ValueError:
            return Unknown("seq of words that are not integers"), None
    if None in nums or not 1 <= len(nums) <= 3:
        return Unknown("seq of unknown bounds"), None
    first, step, last = (1, 1, nums[0]) if len(nums) == 1 else (nums[0], 1, nums[1]) if len(nums) == 2 else nums
    if step == 0 or abs(last - first) // abs(step) > MAX_FIELDS:
        return Unknown(f"seq of over {MAX_FIELDS:,} numbers"), None
    return "".join(f"{n}\n" for n in range(first, last + (1 if step > 0 else -1), step)), 0


def _o_mktemp(it: Interpreter, argv, state, stdin):
    """`mktemp [-d] [-p DIR] [TEMPLATE]`: one fixed name per template, so a trace is repeatable."""
    args = [a for a in argv[1:]]
    folder: Word = "/tmp"
    template: Word = "tmp.XXXXXXXXXX"
    i = 0
    while i < len(args):
        a = args[i]
        if a in ("-p", "--tmpdir") and i + 1 < len(args):
            folder = args[i + 1]
            i += 2
            continue
        if isinstance(a, str) and a.startswith("--tmpdir="):
            folder = a.split("=", 1)[1]
        elif isinstance(a, Unknown) or not a.startswith("-"):
            template = a
        i += 1
    if isinstance(template, Unknown) or isinstance(folder, Unknown):
        return Unknown("a temporary name"), None
    name = template.replace("X", "0") if "/" in template else posixpath.join(folder, template.replace("X", "0"))
    return it.host_path(name, state) if isinstance(it.host_path(name, state), Unknown) else name + "\n", 0


def _bre(pattern: str, extended: bool) -> Optional[str]:
    """A sed regular expression as a Python one (None when it uses what this does not read)."""
    out, i, n = [], 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            d = pattern[i + 1]
            if not extended and d in "(){}+?|":
                out.append(d)
            elif d.isdigit() or d in "nt.*[]^$\\/":
                out.append("\\" + d)
            elif d in "wWsSbB":
                out.append("\\" + d)
            else:
                out.append(re.escape(d))
            i += 2
            continue
        if c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("^", "]") else i + 1)
            if j < 0:
                return None
            out.append(pattern[i:j + 1].replace("[:alpha:]", "a-zA-Z").replace("[:digit:]", "0-9")
                       .replace("[:space:]", " \\t").replace("[:alnum:]", "a-zA-Z0-9"))
            i = j + 1
            continue
        if not extended and c in "(){}+?|":
            out.append("\\" + c)
        else:
            out.append(c)
        i += 1
    return "".join(out)


def _sed_script(script: str, extended: bool) -> Optional[Callable[[str], str]]:
    """`s/RE/REPL/FLAGS` commands joined by `;` (the only sed programs modelled)."""
    steps = []
    for part in [p.strip() for p in script.split(";") if p.strip()]:
        if len(part) < 4 or part[0] != "s":
            return None
        delim = part[1]
        pieces, cur, i = [], [], 2
        while i < len(part):
            ch = part[i]
            if ch == "\\" and i + 1 < len(part):
                cur.append(part[i:i + 2] if part[i + 1] != delim else delim)
                i += 2
                continue
            if ch == delim:
                pieces.append("".join(cur))
                cur = []
            else:
                cur.append(ch)
            i += 1
        pieces.append("".join(cur))
        if len(pieces) != 3 or not re.fullmatch(r"g?I?\d*g?", pieces[2]):
            return None
        rx = _bre(pieces[0], extended)
        if rx is None:
            return None
        try:
            compiled = re.compile(rx, re.I if "I" in pieces[2] else 0)
        except re.error:
            return None
        repl = pieces[1]

        def expand(m: re.Match, repl: str = repl) -> str:
            return re.sub(r"\\(\d)|&|\\(.)", lambda r: (m.group(int(r.group(1))) or "") if r.group(1) else
                          (m.group(0) if r.group(0) == "&" else r.group(2)), repl)
        steps.append((compiled, expand, 0 if "g" in pieces[2] else 1))

    def run(text: str) -> str:
        lines = text.split("\n")
        for compiled, expand, count in steps:
            lines = [compiled.sub(expand, ln, count=count) for ln in lines]
        return "\n".join(lines)
    return run


def _o_sed(it: Interpreter, argv, state, stdin):
    """`sed [-E] [-e] 's/RE/REPL/g'` over known input; anything else is unknown output."""
    args = list(argv[1:])
    extended, scripts, files = False, [], []
    while args:
        a = args.pop(0)
        if isinstance(a, Unknown):
            return Unknown("the output of sed"), None
        if a in ("-E", "-r", "--regexp-extended"):
            extended = True
        elif a == "-e" and args:
            scripts.append(args.pop(0))
        elif a.startswith("-"):
            return Unknown("the output of sed"), None
        elif not scripts:
            scripts.append(a)
        else:
            files.append(a)
    if files or not scripts or any(isinstance(x, Unknown) for x in scripts) or not isinstance(stdin, str):
        return Unknown("the output of sed"), None
    run = _sed_script(";".join(scripts), extended)
    if run is None or len(stdin) > MAX_TRIM_CHARS:
        return Unknown("the output of sed"), None
    return run(stdin), 0


def _o_head_tail(it: Interpreter, argv, state, stdin):
    args = [a for a in argv[1:]]
    count = 10
    if args and isinstance(args[0], str) and re.fullmatch(r"-n?\d+", args[0]):
        count = int(args[0].lstrip("-n"))
        args = args[1:]
    elif len(args) >= 2 and args[0] == "-n" and isinstance(args[1], str) and args[1].isdigit():
        count = int(args[1])
        args = args[2:]
    if args or not isinstance(stdin, str):
        return Unknown(f"the output of {argv[0]}"), None
    lines = stdin.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    picked = lines[:count] if argv[0] == "head" else lines[-count:] if count else []
    return "".join(ln + "\n" for ln in picked), 0


def _o_tr(it: Interpreter, argv, state, stdin):
    args = list(argv[1:])
    if not isinstance(stdin, str) or not all(isinstance(a, str) for a in args):
        return Unknown("the output of tr"), None
    delete = args and args[0] == "-d"
    sets = args[1:] if delete else args
    plain = all(re.fullmatch(r"(?:[^\\\[]|a-z|A-Z|0-9)+", x) for x in sets)
    if not plain or len(sets) != (1 if delete else 2):
        return Unknown("the output of tr"), None

    def chars(x: str) -> str:
        return x.replace("a-z", "abcdefghijklmnopqrstuvwxyz").replace("A-Z", "ABCDEFGHIJKLMNOPQRSTUVWXYZ") \
            .replace("0-9", "0123456789")
    if delete:
        return stdin.translate({ord(c): None for c in chars(sets[0])}), 0
    a, b = chars(sets[0]), chars(sets[1])
    b = b + b[-1:] * (len(a) - len(b)) if b else b
    return stdin.translate({ord(x): ord(y) for x, y in zip(a, b)}), 0


def _o_cut(it: Interpreter, argv, state, stdin):
    args = list(argv[1:])
    delim, field = "\t", None
    while args:
        a = args.pop(0)
        if not isinstance(a, str):
            return Unknown("the output of cut"), None
        if a == "-d" and args and isinstance(args[0], str):
            delim = args.pop(0)
        elif a.startswith("-d") and len(a) > 2:
            delim = a[2:]
        elif a == "-f" and args and isinstance(args[0], str) and args[0].isdigit():
            field = int(args.pop(0))
        elif a.startswith("-f") and a[2:].isdigit():
            field = int(a[2:])
        else:
            return Unknown("the output of cut"), None
    if field is None or not isinstance(stdin, str) or len(delim) != 1:
        return Unknown("the output of cut"), None
    lines = stdin.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    out = []
    for ln in lines:
        parts = ln.split(delim)
        out.append((parts[field - 1] if field - 1 < len(parts) else "") if delim in ln else ln)
    return "".join(x + "\n" for x in out), 0


# Commands whose standard output the interpreter computes (path arithmetic, a file's text).
_OUTPUT_MODELS: dict[str, Callable[..., tuple[Word, Optional[int]]]] = {
    "dirname": _o_dirname, "basename": _o_basename, "realpath": _o_realpath, "readlink": _o_realpath,
    "cat": _o_cat, "seq": _o_seq, "mktemp": _o_mktemp, "sed": _o_sed, "head": _o_head_tail, "tail": _o_head_tail,
    "tr": _o_tr, "cut": _o_cut,
}

_ENVIRONMENT_DEFAULTS: dict[str, Callable[[State], Word]] = {
    "PWD": lambda s: s.cwd,
    "IFS": lambda s: " \t\n",
    "BASH_SOURCE": lambda s: s.argv0,
    "HOME": lambda s: "/root",
}


# ---------------------------------------------------------------------------- helpers


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


_WORD_ESC = re.compile(r"\\(.)", re.S)
_DQ_ESC = re.compile(r'\\([\\"$`\n])')


def _unescape_word(text: str) -> str:
    return _WORD_ESC.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _unescape_dq(text: str) -> str:
    return _DQ_ESC.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _unescape_heredoc(text: str) -> str:
    return re.sub(r"\\([\\$`])|\\\n", lambda m: m.group(1) or "", text)


_ANSI = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "e": "\x1b", "E": "\x1b", "a": "\a",
         "b": "\b", "f": "\f", "v": "\v", "0": "\0"}


def _ansi_c(text: str) -> str:
    def sub(m: re.Match) -> str:
        s = m.group(1)
        if s[0] == "x":
            try:
                return chr(int(s[1:], 16))
            except ValueError:
                return m.group(0)
        if s[0] in "01234567" and len(s) > 1:
            try:
                return chr(int(s, 8))
            except ValueError:
                return m.group(0)
        return _ANSI.get(s, "\\" + s)
    return re.sub(r"\\(x[0-9a-fA-F]{1,2}|[0-7]{1,3}|.)", sub, text)


def _fields(segs: list[tuple[str, Any]]) -> list[Word]:
    """Split an argument's segments into fields as bash does (IFS whitespace on unquoted
    expansions; quoted parts and literals never split; `"$@"` makes a field per word)."""
    fields: list[list[Word]] = []
    current: list[Word] = []
    have = False  # whether the current field exists (a quoted empty string makes one)
    for kind, value in segs:
        if kind == "fields":
            words = list(value)
            if not words:
                continue
            current.append(words[0])
            have = True
            for w in words[1:]:
                fields.append(current)
                current = [w]
            continue
        if kind in ("q", "u_lit"):
            current.append(value)
            have = have or kind == "q" or value != ""
            continue
        # unquoted expansion: split on whitespace
        if isinstance(value, Unknown):
            current.append(value)
            have = True
            continue
        if value == "":
            continue
        pieces = re.split(r"[ \t\n]+", value)
        if pieces[0] == "":
            if have:
                fields.append(current)
                current, have = [], False
            pieces = pieces[1:]
        for j, p in enumerate(pieces):
            if j > 0:
                if have:
                    fields.append(current)
                current, have = [], False
            if p:
                current.append(p)
                have = True
        if len(fields) > MAX_FIELDS:
            return [Unknown(f"an expansion of over {MAX_FIELDS:,} words")]
    if have:
        fields.append(current)
    return [_join_unknown(f) for f in fields]


def _segments_text(segs: list[tuple[str, Any]]) -> Word:
    parts: list[Word] = []
    for kind, value in segs:
        if kind == "fields":
            parts.append(_join_unknown(_intersperse(list(value), " ")))
        else:
            parts.append(value)
    return _join_unknown(parts)


def _split(text: str, ifs: str, maxsplit: int = -1) -> list[str]:
    if ifs == "":
        return [text]
    ws = "".join(c for c in ifs if c in " \t\n")
    other = "".join(c for c in ifs if c not in " \t\n")
    pattern = f"[{re.escape(ws)}]*[{re.escape(other)}][{re.escape(ws)}]*|[{re.escape(ws)}]+" if other \
        else f"[{re.escape(ws)}]+"
    text = text.strip(ws) if ws else text
    if not text:
        return []
    return re.split(pattern, text, maxsplit=maxsplit if maxsplit >= 0 else 0)


def _glob_regex(pattern: str) -> Optional[str]:
    """A bash glob (case patterns, `==` in `[[ ]]`, trims) as a Python regex; None for extglob."""
    out = []
    i = 0
    n = len(pattern)
    while i < n:
        c = pattern[i]
        if c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
            continue
        if c in "?*+@!" and i + 1 < n and pattern[i + 1] == "(":
            return None  # extglob
        if c == "*":
            out.append(".*")
        elif c == "?":
            out.append(".")
        elif c == "[":
            j = pattern.find("]", i + 2 if i + 1 < n and pattern[i + 1] in "!^" else i + 1)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j]
                if body.startswith(("!", "^")):
                    body = "^" + body[1:]
                body = body.replace("\\", "\\\\")
                body = re.sub(r"\[:(\w+):\]", lambda m: _CLASSES.get(m.group(1), ""), body)
                out.append(f"[{body}]")
                i = j + 1
                continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


_CLASSES = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "space": " \\t\\n\\r\\f\\v", "upper": "A-Z",
            "lower": "a-z", "xdigit": "0-9a-fA-F", "punct": "!-/:-@\\[-`{-~"}


def _glob_match(value: Word, pattern: Word) -> Optional[bool]:
    concrete(value, pattern)
    if isinstance(value, Unknown) or isinstance(pattern, Unknown):
        return None
    rx = _glob_regex(pattern)
    if rx is None:
        return None
    try:
        return re.fullmatch(rx, value, re.S) is not None
    except re.error:
        return None


def _trim(value: str, op: str, pattern: Word) -> Word:
    concrete(value, pattern)
    if isinstance(pattern, Unknown):
        return pattern
    if len(value) > MAX_TRIM_CHARS:
        return Unknown(f"a trim of a value over {MAX_TRIM_CHARS:,} characters")
    rx = _glob_regex(pattern)
    if rx is None:
        return Unknown(f"the pattern `{pattern}`")
    try:
        c = re.compile(rx, re.S)
    except re.error:
        return Unknown(f"the pattern `{pattern}`")
    n = len(value)
    if op in ("#", "##"):
        rng = range(0, n + 1) if op == "#" else range(n, -1, -1)
        for k in rng:
            if c.fullmatch(value, 0, k):
                return value[k:]
        return value
    rng = range(n, -1, -1) if op == "%" else range(0, n + 1)
    for k in rng:
        if c.fullmatch(value, k, n):
            return value[:k]
    return value


def _replace(value: str, op: str, pattern: Word, repl: Word) -> Word:
    concrete(value, pattern)
    if isinstance(pattern, Unknown):
        return pattern
    if isinstance(repl, Unknown):
        return repl
    if len(value) > MAX_TRIM_CHARS:
        return Unknown(f"a replacement in a value over {MAX_TRIM_CHARS:,} characters")
    rx = _glob_regex(pattern)
    if rx is None or pattern == "":
        return value if pattern == "" else Unknown(f"the pattern `{pattern}`")
    try:
        c = re.compile(rx, re.S)
    except re.error:
        return Unknown(f"the pattern `{pattern}`")
    if op == "/#":
        for k in range(len(value), -1, -1):
            if c.fullmatch(value, 0, k):
                return repl + value[k:]
        return value
    if op == "/%":
        for k in range(0, len(value) + 1):
            if c.fullmatch(value, k):
                return value[:k] + repl
        return value
    out = []
    i = 0
    n = len(value)
    done = False
    while i < n:
        hit = None
        if not done:
            for k in range(n, i, -1):  # longest match at i
                if c.fullmatch(value, i, k):
                    hit = k
                    break
        if hit is not None:
            out.append(repl)
            i = hit
            if op == "/":
                done = True
            continue
        out.append(value[i])
        i += 1
    return "".join(out)


def _brace_expand(text: str) -> Optional[list[str]]:
    """Brace expansion of a literal word (`{a,b}`, `{1..3}`), capped; None when there is none."""
    m = re.search(r"(?<!\$)\{([^{}]*)\}", text)
    if m is None:
        return None
    body = m.group(1)
    pre, post = text[:m.start()], text[m.end():]
    seq = re.fullmatch(r"(-?\d+)\.\.(-?\d+)(?:\.\.(-?\d+))?", body)
    if seq:
        a, b = int(seq.group(1)), int(seq.group(2))
        step = abs(int(seq.group(3) or 1)) or 1
        count = abs(b - a) // step + 1
        if count > MAX_FIELDS:
            return [""] * (MAX_FIELDS + 1)
        items = [str(x) for x in (range(a, b + 1, step) if a <= b else range(a, b - 1, -step))]
    elif "," in body:
        items = body.split(",")
    else:
        return None
    out: list[str] = []
    for item in items:
        tail = _brace_expand(post)
        for t in (tail if tail is not None else [post]):
            out.append(pre + item + t)
            if len(out) > MAX_FIELDS:
                return out
    return out


def _printf(args: list[Word]) -> Word:
    fmt = args[0]
    if isinstance(fmt, Unknown):
        return fmt
    rest = list(args[1:])
    out: list[Word] = []
    spec = re.compile(r"%(%|[-+ 0#]*\d*(?:\.\d+)?[sdiqbxXfgeuoc])")
    rounds = 0
    while True:
        pos = 0
        used = False
        for m in spec.finditer(fmt):
            out.append(_ansi_c(fmt[pos:m.start()]))
            pos = m.end()
            conv = m.group(1)
            if conv == "%":
                out.append("%")
                continue
            used = True
            arg = rest.pop(0) if rest else ""
            if isinstance(arg, Unknown):
                out.append(arg)
                continue
            kind = conv[-1]
            width = conv[:-1]
            if kind in "sqb":
                if kind == "b":
                    arg = _ansi_c(arg)
                if re.search(r"\d{5,}", width):
                    return Unknown("a printf width over the cap")
                out.append(("%" + width + "s") % arg)
            elif kind in "diuxXoc":
                try:
                    n = int(arg, 0) if arg.strip() else 0
                    if re.search(r"\d{5,}", width):
                        return Unknown("a printf width over the cap")
                    out.append(("%" + width + ("d" if kind in "iu" else kind)) % n)
                except (ValueError, TypeError):
                    out.append(Unknown(f"printf of `{arg}` as a number"))
            else:
                try:
                    if re.search(r"\d{5,}", width):
                        return Unknown("a printf width over the cap")
                    out.append(("%" + conv) % float(arg))
                except ValueError:
                    out.append(Unknown(f"printf of `{arg}` as a number"))
        out.append(_ansi_c(fmt[pos:]))
        rounds += 1
        if not rest or not used or rounds > MAX_FIELDS:
            break
    return _join_unknown(out)


def _binary(op: str, lv: Word, rv: Word, it: Interpreter, state: State, ctx: Ctx, node: Any) -> Optional[bool]:
    concrete(lv, rv)
    if op in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
        a = it.arith(lv, state, ctx, node)
        b = it.arith(rv, state, ctx, node)
        if a is None or b is None:
            return None
        return {"-eq": a == b, "-ne": a != b, "-lt": a < b, "-le": a <= b, "-gt": a > b, "-ge": a >= b}[op]
    if isinstance(lv, Unknown) or isinstance(rv, Unknown):
        return None
    if op == "<":
        return lv < rv
    if op == ">":
        return lv > rv
    return None


def _test_words(args: list[Word], it: Interpreter, state: State) -> Optional[bool]:
    concrete(*args)
    if not args:
        return False
    if args[0] == "!":
        v = _test_words(args[1:], it, state)
        return None if v is None else not v
    for i, a in enumerate(args):
        if a in ("-a", "-o") and 0 < i < len(args) - 1:
            left = _test_words(args[:i], it, state)
            right = _test_words(args[i + 1:], it, state)
            if a == "-a":
                return False if False in (left, right) else (None if None in (left, right) else True)
            return True if True in (left, right) else (None if None in (left, right) else False)
    if len(args) == 1:
        return None if isinstance(args[0], Unknown) else args[0] != ""
    if len(args) == 2 and isinstance(args[0], str):
        return it.unary(args[0], args[1], state)
    if len(args) == 3 and isinstance(args[1], str):
        lv, op, rv = args
        if op in ("=", "=="):
            return None if isinstance(lv, Unknown) or isinstance(rv, Unknown) else lv == rv
        if op == "!=":
            return None if isinstance(lv, Unknown) or isinstance(rv, Unknown) else lv != rv
        if op in ("-eq", "-ne", "-lt", "-le", "-gt", "-ge"):
            def num(w: Word) -> Optional[int]:
                try:
                    return int(w) if isinstance(w, str) else None
                except ValueError:
                    return None
            a, b = num(lv), num(rv)
            if a is None or b is None:
                return None
            return {"-eq": a == b, "-ne": a != b, "-lt": a < b, "-le": a <= b, "-gt": a > b, "-ge": a >= b}[op]
    return None


def _python_code_detail(code: Word | None) -> str:
    if code is None:
        return "reads its program from standard input"
    if isinstance(code, Unknown):
        return f"inline code that is not known ({code.why})"
    return _short(code, 200)


class _Arith:
    """Bash arithmetic over 64-bit integers: names read as variables (recursively, capped)."""

    LIMIT = 2 ** 63

    def __init__(self, it: Interpreter, state: State, ctx: Ctx, node: Any):
        self.it, self.state, self.ctx, self.node = it, state, ctx, node
        self.depth = 0

    def evaluate(self, text: str) -> Optional[int]:
        concrete(text)
        text = text.strip()
        if not text:
            return 0
        if len(text) > 10_000:
            return None
        if "$" in text or "`" in text:
            words = self.it.expand_text_words(text.replace('"', ""), self.state, self.ctx, self.node)
            if any(isinstance(w, Unknown) for w in words):
                return None
            text = " ".join(words)  # type: ignore[arg-type]
        import ast

        py = text.replace("&&", " and ").replace("||", " or ")
        py = re.sub(r"(?<![=!<>])!(?!=)", " not ", py)
        py = re.sub(r"\b0x[0-9a-fA-F]+\b|\b0[0-7]+\b", lambda m: str(int(m.group(0), 0 if m.group(0).startswith("0x") else 8)), py)
        # assignments and increments: x=..., x+=..., x++, ++x
        m = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*([-+*/%]?)=(?!=)\s*(.+)", py)
        if m:
            value = self.evaluate_py(m.group(3), ast)
            if value is None:
                self.state.set(m.group(1), Unknown(f"the arithmetic `{_short(text)}`"))
                return None
            if m.group(2):
                cur = self.name(m.group(1))
                if cur is None:
                    return None
                value = self.binop(m.group(2), cur, value)
                if value is None:
                    return None
            self.state.set(m.group(1), str(value))
            return value
        m = re.fullmatch(r"\s*(?:([A-Za-z_]\w*)\s*(\+\+|--)|(\+\+|--)\s*([A-Za-z_]\w*))\s*", py)
        if m:
            name = m.group(1) or m.group(4)
            cur = self.name(name)
            if cur is None:
                self.state.set(name, Unknown(f"the arithmetic `{_short(text)}`"))
                return None
            new = cur + (1 if (m.group(2) or m.group(3)) == "++" else -1)
            self.state.set(name, str(new))
            return cur if m.group(1) else new
        return self.evaluate_py(py, ast)

    def evaluate_py(self, py: str, ast: Any) -> Optional[int]:
        if "," in py:
            py = py.rsplit(",", 1)[-1]
        py = re.sub(r"\?", " if_ ", py) if "?" in py else py
        if "if_" in py:
            return None
        try:
            tree = ast.parse(py.strip(), mode="eval")
        except SyntaxError:
            return None
        return self.node_value(tree.body, ast)

    def name(self, name: str) -> Optional[int]:
        self.it.note(name)
        self.depth += 1
        if self.depth > 32:
            return None
        value = self.state.get(name)
        if value is None:
            return 0
        value = _scalar(value)
        if isinstance(value, Unknown):
            return None
        value = value.strip()
        if not value:
            return 0
        try:
            return int(value, 0) if not value.startswith("0") or value == "0" or value.startswith("0x") else int(value, 8)
        except ValueError:
            if _NAME.match(value):
                return self.name(value)
            return self.evaluate(value)

    def binop(self, op: str, a: int, b: int) -> Optional[int]:
        try:
            if op == "+":
                r = a + b
            elif op == "-":
                r = a - b
            elif op == "*":
                r = a * b
            elif op == "/":
                r = int(a / b)
            elif op == "%":
                r = a - b * int(a / b)
            elif op == "**":
                if b < 0 or b > 128:
                    return None
                r = a ** b
            elif op == "<<":
                r = a << (b & 63)
            elif op == ">>":
                r = a >> (b & 63)
            elif op == "&":
                r = a & b
            elif op == "|":
                r = a | b
            elif op == "^":
                r = a ^ b
            else:
                return None
        except (ZeroDivisionError, OverflowError):
            return None
        r = (r + self.LIMIT) % (2 * self.LIMIT) - self.LIMIT
        return r

    def node_value(self, n: Any, ast: Any) -> Optional[int]:
        if isinstance(n, ast.Constant) and isinstance(n.value, int) and not isinstance(n.value, bool):
            return n.value
        if isinstance(n, ast.Name):
            return self.name(n.id)
        if isinstance(n, ast.UnaryOp):
            v = self.node_value(n.operand, ast)
            if v is None:
                return None
            if isinstance(n.op, ast.USub):
                return -v
            if isinstance(n.op, ast.UAdd):
                return v
            if isinstance(n.op, ast.Not):
                return int(not v)
            if isinstance(n.op, ast.Invert):
                return ~v
            return None
        if isinstance(n, ast.BinOp):
            a, b = self.node_value(n.left, ast), self.node_value(n.right, ast)
            if a is None or b is None:
                return None
            ops = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "/", ast.Mod: "%",
                   ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|",
                   ast.BitXor: "^"}
            op = ops.get(type(n.op))
            return None if op is None else self.binop(op, a, b)
        if isinstance(n, ast.BoolOp):
            vals = [self.node_value(v, ast) for v in n.values]
            if any(v is None for v in vals):
                return None
            return int(all(vals)) if isinstance(n.op, ast.And) else int(any(vals))
        if isinstance(n, ast.Compare) and len(n.ops) == 1:
            a, b = self.node_value(n.left, ast), self.node_value(n.comparators[0], ast)
            if a is None or b is None:
                return None
            op = type(n.ops[0])
            table = {ast.Eq: a == b, ast.NotEq: a != b, ast.Lt: a < b, ast.LtE: a <= b, ast.Gt: a > b,
                     ast.GtE: a >= b}
            return int(table[op]) if op in table else None
        return None
