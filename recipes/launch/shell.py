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
the interpreter follows into what they run: wrappers, `bash -c`, shell files, containers."""
from __future__ import annotations

from typing import Any, Callable, Optional

from .alternatives import RUNS_CODE, MAX_ALTERNATIVE_RUNS, MAX_COMBINATIONS, Alternatives
from .assign import Assignments
from .builtins import _BUILTINS
from .chars import fill
from .conditions import Conditions
from .control import ControlFlow
from .effects import CommandEffects
from .expand import Expansion
from .frame import adopt, new_frame
from .fs import Files
from .nodes import (
    _all_lines,
    _command_parts,
    _declaration_parts,
    _list_parts,
    _short_text,
    _statement_lines,
    _statements,
)
from .plans import forget as forget_plans
from .plans import plan, table
from .processes import Processes
from .redirects import Redirects
from .recursion import assigned_names
from .state import (
    _NAMES_FILES,
    _PARSED,
    _SKIP,
    BUILTINS,
    MAX_EFFECTS,
    MAX_PARSED,
    MAX_SCRIPT_CHARS,
    MAX_STEPS,
    Budget,
    Ctx,
    Func,
    Out,
    Pad,
    State,
    Var,
    _assign_state,
    process_frame,
    _Dead,
    _Exit,
    _first_error,
    _Loop,
    _Return,
    _short,
    merge_states,
)
from .trace import DOWNLOAD, UNKNOWN, WRITE, Effect, Site, Trace, effect
from .words import Downloaded, Holed, Installed, OneOf, OneOfRest, Unknown, Word, combinations


Vocabulary = Callable[..., Optional[CommandEffects]]


# A statement's type and lines (`nodes._statement_lines`), a command's and a declaration's
# parts, the statements in a file or a compound statement (the named children of a node, less
# comments and keywords): looked up before `plan` (once per statement run).
_STATEMENT_LINES = table("statement")
_STATEMENT_LISTS = table("statements")
_COMMANDS = table("command")
_DECLARATIONS = table("declaration")


Classifier = Callable[[tuple[Word, ...], "Interpreter", State, Ctx], Optional[tuple[str, str]]]


class Interpreter(ControlFlow, Alternatives, Assignments, Processes, Expansion, Conditions, Redirects):
    """Runs shell text for one trace. `vocabulary(argv, cwd)` describes external commands;
`classify(argv, ...)` names an engine server or the benchmark client: (SERVER, engine) or
(CLIENT, what), else None."""

    def __init__(self, files: Files, *, vocabulary: Vocabulary | None = None,
                 classify: Classifier | None = None, inputs: dict[str, str] | None = None,
                 hooks: dict[str, Callable[..., Optional[int]]] | None = None):
        if vocabulary is None:
            from .vocabulary import kept_effects as vocabulary
        self.files = files
        self.vocabulary = vocabulary
        self.classify = classify
        self.trace = Trace()
        self.steps = 0
        self.max_steps = MAX_STEPS  # a tracer lowers it to what is left of the review's budget
        # The point's variables the launch starts with, and which of them it read: a trace is
        # the same for every point that gives those names the same values (sharing).
        self.inputs = dict(inputs or {})
        self.envs: dict[tuple[int, ...], tuple] = {}  # Processes.env_of without a prefix, by State.env_key
        self.read: set[str] = set()
        self.deps: list[Any] = []   # other inputs a hook read (the recipe variant a point binds)
        # Commands modelled by the caller (`srtctl`: what a recipe runs): name -> handler.
        self.hooks = dict(hooks or {})
        # How the first script ended (`ending`) and the last `exit` that ended any script
        # (`last_exit`): (site, status); the site is None for a script that ran to its end.
        self.ending: Optional[tuple[Optional[Site], Optional[int]]] = None
        self.last_exit: Optional[tuple[Site, Optional[int]]] = None
        # What of each file was run (Trace.executed): file -> lines of the statements evaluated;
        # and the functions defined (Trace.defined): file -> (first line, last line) of each.
        self.executed: dict[str, set[int]] = {}
        self.defined: dict[str, set[tuple[int, int]]] = {}
        # The loops, function calls and sources the running process is inside (ControlFlow.pad).
        self.pads: list[Pad] = []
        # Runs of commands whose words have alternatives (run_alternatives), capped per trace.
        self.alternative_runs = 0
        self.alternative_reads: Optional[list[str]] = None  # names read by the test being evaluated
        self.holes_read = 0  # unknown parts of shell text read as values (recipes.launch.chars.fill)
        # The active calls of functions whose text names themselves, innermost last (call_function).
        self.calls: list[_Active] = []

    def ran(self, ctx: Ctx, node: Any, *, first_only: bool = False) -> None:
        """Record that `node` of the running file was evaluated: all its lines, or its first
        (`first_only`). A statement records its own (`statement`, `nodes._statement_lines`)."""
        lines = self.executed.get(ctx.path)
        if lines is None:
            lines = self.executed[ctx.path] = set()
        if first_only:
            lines.add(node.start_point[0] + 1)
        else:
            lines.update(plan("lines", node, ctx.src, _all_lines))

    def note(self, name: str) -> None:
        """A variable was read: when it is one of the inputs, the trace depends on its value."""
        if name in self.inputs:
            self.read.add(name)

    def initial_state(self) -> State:
        """A shell that starts with the inputs exported."""
        state = State(frames=[process_frame(self.inputs)])
        return state

    def emit(self, kind: str, ctx: Ctx, node_or_site: Any, state: State, **kw: Any) -> None:
        if len(self.trace.effects) >= MAX_EFFECTS:
            raise Budget(f"over {MAX_EFFECTS:,} effects")
        site = node_or_site if isinstance(node_or_site, Site) else ctx.site(node_or_site)
        if kind in _NAMES_FILES and "files" not in kw:
            kw["files"], kw["wrote"] = self.named_files(kw.get("argv", ()), kw.get("path"), state)
        path = kw.get("path")
        if kind in (WRITE, DOWNLOAD) and path is not None:
            self.files.changed(path, kw.get("how", "download"))
        if isinstance(path, str) and self.files.copies:
            # A file in a copy of the checkout is named as the checkout's: what the checks read
            # of a path there (a write into an engine's tree, a repository file it depends on)
            # is what they read of the checkout mounted where the copy is.
            kw["path"] = self.files.as_checkout(path)
        self.trace.effects.append(effect(kind=kind, site=site, chain=ctx.chain, chain_names=ctx.names,
                                         under=ctx.under, container=state.container,
                                         client=ctx.client or kw.pop("client", False), **kw))

    def unknown(self, ctx: Ctx, where: Any, state: State, why: str, code: Word | None = None) -> None:
        """An unknown effect; `code`: the shell code it could not read, when it runs some (a
        download's text names its URL in the effect's `download`)."""
        self.emit(UNKNOWN, ctx, where, state, detail=why, download=code.url if isinstance(code, Downloaded) else "")

    def readable(self, text: Unknown, state: State) -> tuple[Optional[str], str]:
        """Shell text with unknown parts (`bash -c "... '$DIR' ..."`) as text to run, when no part
        can change how it parses (recipes.launch.chars.fill): (the text, ""), with each part set
        in `state` as the variable that stands for it. Else (None, why it cannot be read)."""
        if not isinstance(text, Holed) or not text.holes:
            return None, text.why
        if state.get("IFS") not in (None, " \t\n"):
            return None, f"{text.why}: words split on a changed IFS"
        got = fill(text.template, text.holes, self.parse, self.holes_read)
        if isinstance(got, str):
            return None, f"{text.why}: {got}"
        filled, variables = got
        self.holes_read += len(variables)
        for name, value in variables.items():
            state.set(name, value)
        return filled, ""

    def parse(self, text: str) -> tuple[Any, bytes]:
        from recipes.bash.walker import parse_bash

        hit = _PARSED.get(text)  # by the text: a file's text read again is the same str, its hash kept
        if hit is None:
            if len(_PARSED) >= MAX_PARSED:
                _PARSED.pop(next(iter(_PARSED)))
                forget_plans()
            hit = _PARSED[text] = parse_bash(text.encode("utf-8", "replace"))
        return hit

    def run_text(self, text: str, path: str, state: State, ctx: Ctx | None = None, *, top: bool = False) -> None:
        """Run shell text as a file of its own (a script, a sourced file, an eval'd string)."""
        ctx = ctx or Ctx(path=path, src=b"")
        if len(text) > MAX_SCRIPT_CHARS:
            self.unknown(ctx, Site(path, 1), state, f"{path} is over {MAX_SCRIPT_CHARS:,} characters")
            return
        tree, src = self.parse(text)
        inner = ctx.but(path=path, src=src)
        if tree.root_node.has_error:
            bad = _first_error(tree.root_node)
            self.unknown(inner, bad, state, f"could not parse line {bad.start_point[0] + 1} of {path}")
        self.block(tree.root_node, state, inner)

    def run_top(self, text: str, path: str, state: State, ctx: Ctx | None = None) -> Optional[int]:
        """Run the launch's first script; a cap that is hit ends the trace with an unknown."""
        ctx = ctx or Ctx(path=path, src=b"")
        try:
            return self.run_script(text, path, state, ctx, top=True)
        except Budget as b:
            self.trace.effects.append(Effect(kind=UNKNOWN, site=Site(path, 1), chain=ctx.chain, chain_names=ctx.names,
                                             detail=f"the interpretation stopped: {b}"))
            return None

    def run_script(self, text: str, path: str, state: State, ctx: Ctx, *, top: bool = False) -> Optional[int]:
        """Run a script as a process: `exit` ends it, its EXIT trap runs, the status returns.
        `top`: the launch's first script, whose ending is kept in `ending`."""
        site: Optional[Site] = None
        with self.new_process():
            try:
                self.run_text(text, path, state, ctx)
                status = state.status
            except _Exit as e:
                status, site = e.status, e.site
                if site is not None:
                    self.last_exit = (site, status)
            except (_Return, _Loop):
                status = state.status
        if top:
            self.ending = (site, status)
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

    def block(self, node: Any, state: State, ctx: Ctx) -> None:
        """Run the statements of a file's syntax tree (or of a `program` node) in order."""
        for child in _STATEMENT_LISTS.get(node) or plan("statements", node, ctx.src, _statements):
            self.statement(child, state, ctx)

    def statement(self, node: Any, state: State, ctx: Ctx, *, stdin: Word | None = None,
                  out: Out | None = None) -> Optional[int]:
        # One step per statement (and per word, Expansion.expand), counted inline: the hottest call.
        self.steps += 1
        if self.steps > self.max_steps:
            raise Budget(f"over {self.max_steps:,} steps")
        t, lines = _STATEMENT_LINES.get(node) or plan("statement", node, ctx.src, _statement_lines)
        if t == "function_definition":
            # Defining runs no line of the body; a call runs the body's statements.
            self.defined.setdefault(ctx.path, set()).add(lines)
        elif lines:
            ran = self.executed.get(ctx.path)
            if ran is None:
                ran = self.executed[ctx.path] = set()
            ran.update(lines)
        handler = _STATEMENTS.get(t)
        if handler is None:
            if node.type == "ERROR":
                return None  # reported once per file by run_text
            self.unknown(ctx, node, state, f"`{_short(ctx.text(node))}` ({t}) is not interpreted")
            state.status = None
            return None
        try:
            status = handler(self, node, state, ctx, stdin, out)
        except (_Exit, _Return, _Loop, Budget):
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
        self.block(node, state, ctx)
        return state.status

    def _compound(self, node, state, ctx, stdin, out):
        status = 0
        for child in _STATEMENT_LISTS.get(node) or plan("statements", node, ctx.src, _statements):
            status = self.statement(child, state, ctx, stdin=stdin, out=out)
        return status

    def _subshell(self, node, state, ctx, stdin, out):
        inner = state.copy()
        with self.new_process():
            try:
                self._compound(node, inner, ctx, stdin, out)
                return inner.status
            except _Exit as e:
                return e.status

    def _list(self, node, state, ctx, stdin, out):
        kids = plan("list", node, ctx.src, _list_parts)
        left = self.statement(kids[0], state, ctx, stdin=stdin, out=out)
        for op, right in zip(kids[1::2], kids[2::2]):
            run = {"&&": left == 0 if left is not None else None, "||": left != 0 if left is not None else None,
                   ";": True, "&": True}.get(op.type, True)
            if run is True:
                left = self.statement(right, state, ctx, stdin=stdin, out=out)
            elif run is None:
                cond = f"`{plan('short text', kids[0], ctx.src, _short_text)}` at {ctx.site(kids[0])}"
                left = self._maybe(lambda s, c: self.statement(right, s, c, stdin=stdin, out=out), state, ctx, cond)
        return left

    def _maybe(self, body: Callable[[State, Ctx], Any], state: State, ctx: Ctx, cond: str) -> Optional[int]:
        """Run `body` when it may or may not run: both outcomes, merged."""
        return self.run_arms([(cond, body)], state, ctx, fallthrough=True, why=f"set only when {cond}")

    def run_arms(self, arms: list[tuple[str, Callable[[State, Ctx], Any]]], state: State, ctx: Ctx, *,
                 fallthrough: bool, why: str) -> Optional[int]:
        """Arms of an undecided branch: each runs from a copy of the state with its test in
        `under`; the states of the arms that go on (and, with `fallthrough`, of running none)
        are merged. An arm that leaves does not go on: one that `exit`s ends there; one that
        `break`s, `continue`s or `return`s waits, with its state, at the loop or call it leaves,
        which goes on from there too (`ControlFlow.land`). When no arm goes on, the way out is
        the waiting (`_Dead`), else the first exit."""
        results: list[State] = []
        escape: Exception | None = None
        waiting = False
        for label, runner in arms:
            arm = state.copy()
            try:
                runner(arm, ctx.but(under=ctx.under + (label,)))
                results.append(arm)
            except _Dead:
                waiting = True
            except _Exit as e:
                escape = escape or e
            except (_Return, _Loop) as e:
                if self.land(e, arm, why):
                    waiting = True
                else:
                    escape = escape or e
        if fallthrough:
            results.append(state)  # merge_states changes only a copy of the first
        if not results:
            if waiting:
                raise _Dead()
            assert escape is not None
            raise escape
        merged = merge_states(results, why, state)
        for frame, replaced in zip(merged.frames, state.frames):
            adopt(frame, replaced)
        _assign_state(state, merged)
        return None

    def _negated(self, node, state, ctx, stdin, out):
        status = self.statement(node.named_children[-1], state, ctx, stdin=stdin, out=out)
        return None if status is None else int(status == 0)

    def _pipeline(self, node, state, ctx, stdin, out):
        kids = plan("pipeline", node, ctx.src, _statements)
        feed: Word | None = stdin
        status: Optional[int] = 0
        for i, kid in enumerate(kids):
            last = i == len(kids) - 1
            sink = out if last else Out()
            # Each part of a pipeline runs in a subshell (bash without lastpipe): its `exit`
            # ends that part only.
            part = state.copy()
            with self.new_process():
                try:
                    status = self.statement(kid, part, ctx, stdin=feed, out=sink)
                except _Exit as e:
                    status = e.status
            if not last:
                feed = sink.value()
                if isinstance(feed, str) and not sink.parts:
                    feed = Unknown("the output of a command the interpreter does not model")
        return status

    def _function_def(self, node, state, ctx, stdin, out):
        name_node = node.child_by_field_name("name")
        body = node.child_by_field_name("body")
        if name_node is not None and body is not None:
            state.functions[ctx.text(name_node)] = Func(body, ctx.src, ctx.path, ctx.local)
        return 0

    def _test(self, node, state, ctx, stdin, out):
        inner = _STATEMENT_LISTS.get(node) or plan("statements", node, ctx.src, _statements)
        if not inner:
            return 1
        outer, self.alternative_reads = self.alternative_reads, []
        try:
            verdict = self.test_expr(inner[0], state, ctx)
            names = list(dict.fromkeys(self.alternative_reads))
        finally:
            self.alternative_reads = outer
        if verdict is None and names and not any(m in ctx.text(node) for m in RUNS_CODE):
            verdict = self.test_each_value(inner[0], names, state, ctx)
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
        head, words = _DECLARATIONS.get(node) or plan("declaration", node, ctx.src, _declaration_parts)
        return self.declare(head, list(words), state, ctx, node)

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

    def _command(self, node, state, ctx, stdin, out):
        prefix: list[tuple[str, Word]] = []
        argv: list[Word] = []
        name_node, assignments, redirects, words = _COMMANDS.get(node) or plan("command", node, ctx.src, _command_parts)
        for child, is_prefix, n, v in assignments:
            if not is_prefix:
                self.assign(child, state, ctx)
            else:
                prefix.append((ctx.text(n), self.word_text(v, state, ctx) if v is not None else ""))
        for group in words:
            argv += self.expand(group[0], state, ctx) if len(group) == 1 else self.expand_joined(group, state, ctx)
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
        if _has_alternatives(argv):
            runs = combinations(argv, MAX_COMBINATIONS)
            if runs is not None and self.alternative_runs + len(runs) <= MAX_ALTERNATIVE_RUNS:
                self.alternative_runs += len(runs)
                return self.run_alternatives(runs, prefix, state, ctx, node, stdin=stdin, out=out,
                                             functions=functions)
            # Past the caps, the words stay unknown: the command is read as one it cannot know.
        head = argv[0]
        if isinstance(head, Installed):
            # `"$(command -v python3)" -m ...`: the program a PATH look-up finds, not a function;
            # or, on other paths, one at a place that holds the program as shipped.
            for path in head.also:
                host = self.host_path(path, state)
                if not isinstance(host, str) or self.files.written(host) is not None or self.files.repo_path(host):
                    self.unknown(ctx, node, state, f"a command whose name is not known ({head.why}, or {path})")
                    return None
            return self.external([head.program, *argv[1:]], prefix, state, ctx, node, stdin=stdin, out=out)
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
        # BASH_SOURCE in a function is the file that defined it, not the caller's.
        inner = ctx.deeper(site, f"fn {name}", path=fn.path, src=fn.src, function=name,
                           **({"local": fn.local} if fn.local is not None else {}))
        saved_pos = state.positional
        state.positional = list(argv[1:])
        state.frames.append(new_frame())
        for k, v in prefix:
            state.frames[-1][k] = Var(v, exported=True)
        active = None
        if fn.src.find(name.encode(), fn.node.start_byte, fn.node.end_byte) >= 0:  # it may call itself
            active = _Active(name, self._call_view(state, ctx, stdin), len(ctx.under), self.files.snapshot())
            again = next((a for a in reversed(self.calls) if a.name == name), None)
            if again is not None and len(ctx.under) > again.under and again.view == active.view \
                    and again.files == active.files:
                names = assigned_names(name, state.functions)
                if names is not None:
                    state.frames.pop()
                    state.positional = saved_pos
                    again.cut = site
                    return self._not_again(name, names, site, state, out)
            self.calls.append(active)
        pad = self.pad("call")
        try:
            ending, status = self.run_in(pad, lambda: self.statement(fn.node, state, inner, stdin=stdin, out=out),
                                         state, f"set on a path that returned early from {name}")
            status = self.returned(pad, state, ending != "dead", status)
        finally:
            self.unpad(pad)
            state.frames.pop()
            state.positional = saved_pos
            if active is not None:
                self.calls.pop()
                if active.cut is not None and self.files.snapshot() != active.files:
                    self.unknown(ctx, node, state, f"{name} writes files, and its recursive call at {active.cut} "
                                                   f"that was not followed may write others: what it leaves is "
                                                   f"not understood")
        return status

    def _call_view(self, state: State, ctx: Ctx, stdin: Word | None) -> tuple:
        """What a function's call can read when it starts: the variables it sees (innermost
        first), its arguments, the functions, aliases, folder, traps, ... of the process, its
        standard input, whether it runs under the client. Two calls with equal views do the same."""
        seen: dict[str, Var] = {}
        for frame in state.frames:
            seen.update(frame)
        view = state.copy()  # every field of the process, as `State` has them
        view.frames = [seen]
        return (view, ctx.client, stdin)

    def _not_again(self, name: str, names: frozenset[str], site: Site, state: State, out: Out | None) -> None:
        """A call of `name` from the very state its active call started from, under a branch that
        call did not decide (a `while read` over `pgrep`'s output): bash would run the same text
        from the same state, so what it runs is what the active call runs and records. It is not
        interpreted again; its status and output are unknown, and so is every variable it can
        assign that outlives it (`recursion.assigned_names`)."""
        why = f"set by the recursive call of {name} at {site}, which was not followed"
        for n in sorted(names):
            var = state.lookup(n)
            if var is None or not var.readonly:
                state.set(n, Unknown(why))
        if out is not None:
            out.write(Unknown(f"the output of the recursive call of {name} at {site}"))
        return None

    def returned(self, pad: Pad, state: State, live: bool, status: Optional[int]) -> Optional[int]:
        """A function or a sourced file ends: `state` is the merge of the paths that went on to
        its end (`live`) and those that returned early; the status, when they all agree on it."""
        if not pad.returns:
            if not live:
                raise _Dead()
            return status
        statuses = {r[2] for r in pad.returns} | ({status} if live else set())
        self.rejoin(state, live, pad.returns)
        return statuses.pop() if len(statuses) == 1 else None


def _has_alternatives(argv: list[Word]) -> bool:
    """Whether a word of a command has alternatives (`OneOf`, `OneOfRest`); most are text."""
    for w in argv:
        if w.__class__ is not str and isinstance(w, (OneOf, OneOfRest)):
            return True
    return False


class _Active:
    """A call of a function that may call itself, while it runs: what it started from (`view`,
    the files written then), how many undecided branches its caller was under, and the site of
    a recursive call that was not followed (`cut`)."""

    __slots__ = ("name", "view", "under", "files", "cut")

    def __init__(self, name: str, view: tuple, under: int, files: tuple):
        self.name, self.view, self.under, self.files = name, view, under, files
        self.cut: Optional[Site] = None


_STATEMENTS: dict[str, Callable[..., Optional[int]]] = {
    "program": Interpreter._program,
    "compound_statement": Interpreter._compound,
    "do_group": Interpreter._compound,
    "subshell": Interpreter._subshell,
    "list": Interpreter._list,
    "negated_command": Interpreter._negated,
    "pipeline": Interpreter._pipeline,
    "redirected_statement": Redirects._redirected,
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




# `(( ... ))` parses as a compound statement holding an arithmetic expression.
def _compound_or_arith(self, node, state, ctx, stdin, out):
    if node.children and node.children[0].type == "((":
        return Interpreter._arith_statement(self, node, state, ctx, stdin, out)
    return Interpreter._compound(self, node, state, ctx, stdin, out)
_STATEMENTS["compound_statement"] = _compound_or_arith
