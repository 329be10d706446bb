"""if/elif/else, case, for, while/until and C-style loops: decided arms run alone, undecided
arms each run from a copy of the state and are merged."""
from __future__ import annotations

from typing import Any, Callable, Optional

from .nodes import _if_clauses
from .plans import plan, table
from .state import (
    _SKIP,
    MAX_LOOP,
    Ctx,
    Pad,
    State,
    _assign_state,
    _Dead,
    _Exit,
    _Loop,
    _Return,
    _common_ends,
    _short,
    merge_states,
    one_of_texts,
)
from .text import _glob_match
from .words import MAX_ALTERNATIVES, Unknown, Word

# A `for` loop over more known words than this may be widened once it reaches a fixed point
# (`ControlFlow._widened`): the history's loops whose variable matters (a port or a worker per
# pass: `seq 0 $((TP - 1))`, `for t in 64 ... 8192`) have at most 8 words, its poll and retry
# loops that go on unchanged (`seq 1 60`, `seq 1 90`, `{1..30}`) have more.
WIDEN_OVER = 8

_IFS = table("if")  # an `if`'s clauses, looked up before `plan`


class ControlFlow:
    """if/elif/else, case, for, while/until and C-style loops: decided arms run alone, undecided
arms each run from a copy of the state and are merged."""

    def _if(self, node, state, ctx, stdin, out):
        return self.branches(_IFS.get(node) or plan("if", node, ctx.src, _if_clauses), state, ctx, stdin, out)

    def branches(self, clauses: list[tuple], state: State, ctx: Ctx, stdin, out) -> Optional[int]:
        """if/elif/else: the first arm whose test holds; undecided tests run every arm that may."""
        pending: list[tuple[str, State, Callable[[State, Ctx], Any]]] = []
        undecided: list[str] = []
        for conds, body, *head in clauses:
            if head:
                self.ran(ctx, head[0], first_only=True)  # the `elif` / `else` line reached
            if conds is None:
                decided: Optional[bool] = True
            else:
                status = None
                for c in conds:
                    if c.type in _SKIP:
                        continue
                    status = self.statement(c, state, ctx)
                decided = None if status is None else status == 0
            if decided is False:
                continue
            runner = (lambda b: lambda s, c: self._compound_list(b, s, c, stdin, out))(body)
            if decided is True and not undecided:
                return runner(state, ctx)
            label = "else" if conds is None else f"`{_short(' '.join(ctx.text(c) for c in conds if c.type not in _SKIP))}` " \
                                                 f"at {ctx.site(conds[0]) if conds else ''}"
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
            verdict: Optional[bool] = False
            self.ran(ctx, item, first_only=True)  # bash tries the item's patterns
            for p in pats:
                self.ran(ctx, p)
            for p in pats:
                pattern = self.pattern_text(p, state, ctx)
                m = _glob_match(value, pattern)
                if m is True:
                    verdict = True
                    break
                if m is None:
                    verdict = None
            if verdict is False:
                continue  # an arm that cannot run: its body is not needed
            starts = {c.start_byte for c in pats}
            body = [c for c in item.named_children if c.start_byte not in starts and c.type not in _SKIP]
            clauses.append((verdict, body, item))
            if verdict is True:
                break  # bash tries no item after one that matches
        # Reuse `branches` with precomputed verdicts.
        pending = []
        undecided = []
        for verdict, body, item in clauses:
            if verdict is False:
                continue
            runner = (lambda b: lambda s, c: self._compound_list(b, s, c, stdin, out))(body)
            if verdict is True and not undecided:
                return runner(state, ctx)
            end = ctx.src.find(b")", item.start_byte, item.end_byte)
            head = ctx.src[item.start_byte:end if end >= 0 else item.end_byte].decode("utf-8", "replace")
            label = f"case arm `{_short(head)}` at {ctx.site(item)}"
            pending.append((label, runner))
            if verdict is True:
                break
            undecided.append(label)
        if not pending:
            return 0
        last_sure = len(pending) > len(undecided)
        return self.run_arms(pending, state, ctx, fallthrough=not last_sure,
                             why=f"set on an undecided case arm ({undecided[0]})")

    # -- paths that leave a loop, a function or a sourced file early (`Pad`)

    def new_process(self) -> "_NewProcess":
        """A new process (a script, a subshell, a pipeline part, a substitution): no loop, call
        or sourced file of its parent's can be left from inside it (`with self.new_process():`)."""
        return _NewProcess(self)

    def pad(self, kind: str) -> Pad:
        pad = Pad(kind)
        self.pads.append(pad)
        return pad

    def unpad(self, pad: Pad) -> None:
        assert self.pads and self.pads[-1] is pad
        self.pads.pop()

    def land(self, e: Exception, state: State, why: str, below: Optional[Pad] = None) -> bool:
        """Put a path that `break`s, `continue`s or `return`s (`e`) at the pad of the statement it
        leaves (below the pad `below`, when given). False when no statement of this process is
        there to take it (a `break` out of a function: bash does not leave the caller's loop)."""
        pads = self.pads
        if below is not None:
            pads = pads[:next(i for i in range(len(pads) - 1, -1, -1) if pads[i] is below)]
        if isinstance(e, _Return):
            for pad in reversed(pads):
                if pad.kind != "loop":
                    pad.returns.append((state, why, e.status))
                    return True
            return False
        if not isinstance(e, _Loop):
            return False
        n, target = e.n, None
        for pad in reversed(pads):
            if pad.kind == "call":
                break
            if pad.kind == "loop":
                target = pad  # `break N` past the outermost loop leaves them all
                n -= 1
                if n <= 0:
                    break
        if target is None:
            return False
        (target.breaks if e.kind == "break" else target.continues).append((state, why))
        return True

    def run_in(self, pad: Pad, run: Callable[[], Any], state: State, why: str) -> tuple[str, Optional[int]]:
        """Run a loop's body or a function's or sourced file's text on `state`, under `pad`:
        how it ended ("done", "break", "continue", "return", or "dead": no path goes on from
        `state`, the others wait at the pads), and its status."""
        try:
            return "done", run()
        except _Dead as e:
            return self._away(e, pad, state, why)
        except _Exit as e:
            return self._away(e, pad, state, why)
        except _Loop as e:
            if pad.kind == "loop":
                if e.n <= 1:
                    return e.kind, None
                e = _Loop(e.kind, e.n - 1)
            return self._away(e, pad, state, why)
        except _Return as e:
            if pad.kind != "loop":
                return "return", e.status
            return self._away(e, pad, state, why)

    def _away(self, e: Exception, pad: Pad, state: State, why: str) -> tuple[str, Optional[int]]:
        """The path on `state` leaves past `pad`'s statement: alone, it takes the statement with
        it (as before: the exception goes on); with other paths waiting at the pad, it exits
        or lands further out, and the statement goes on from those."""
        if not pad.waiting():
            raise e
        if isinstance(e, (_Loop, _Return)) and not self.land(e, state.copy(), why, below=pad):
            raise e
        return "dead", None

    def rejoin(self, state: State, live: bool, waiting: list[tuple]) -> bool:
        """`state` becomes the merge of itself (when `live`: a path goes on from it) and the
        states waiting at a pad; False when there is no path at all."""
        paths = ([state] if live else []) + [w[0] for w in waiting]
        if not paths:
            return False
        if len(paths) > 1 or not live:
            _assign_state(state, merge_states(paths, waiting[0][1] if waiting else ""))
        return True

    def _turn(self, pad: Pad, state: State, run: Callable[[], Any], why: str) -> tuple[str, Optional[int]]:
        """One pass of a loop's body: "next" when a path goes on to the next pass (`state` is
        then the merge of those that do), else "break" (`state` left the loop) or "dead"."""
        ending, status = self.run_in(pad, run, state, why)
        going = ending in ("done", "continue")
        if pad.continues:
            if ending == "break":
                pad.breaks.append((state.copy(), why))
            waiting, pad.continues = pad.continues, []
            self.rejoin(state, going, waiting)
            return "next", None
        return ("next" if going else ending), status

    def _loop_end(self, pad: Pad, state: State, live: bool) -> bool:
        """The loop ends: `state` is the merge of the paths that leave it; True when that merged
        some (the status is then not known)."""
        waiting = pad.breaks + pad.continues
        if not self.rejoin(state, live, waiting):
            raise _Dead()
        return bool(waiting)

    def _once(self, pad: Pad, body: Any, why: str, stdin, out) -> Callable[[State, Ctx], None]:
        """A loop's body as an arm that may run once more (its test is not decided): a `break`
        or `continue` on its way ends that pass, and so the loop."""
        def run(s: State, c: Ctx) -> None:
            if self.run_in(pad, lambda: self._compound(body, s, c, stdin, out), s, why)[0] == "dead":
                raise _Dead()
        return run

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
        why = f"set on a pass of the loop at {ctx.site(node)} that left it early"
        pad = self.pad("loop")
        try:
            if not known or len(words) > MAX_LOOP:
                reason = (f"the loop at {ctx.site(node)} has over {MAX_LOOP} iterations" if known
                          else f"the list of the loop at {ctx.site(node)} is not known")
                if len(words) > MAX_LOOP:
                    self.unknown(ctx, node, state, reason)
                cond = f"loop `for {name}` at {ctx.site(node)}"
                state.set(name, Unknown(reason))
                status = self._maybe(self._once(pad, body, why, stdin, out), state, ctx, cond)
                return None if self._loop_end(pad, state, True) else status
            status: Optional[int] = 0
            ending = "next"
            start: Optional[tuple[State, tuple]] = None
            for i, w in enumerate(words):
                state.set(name, w)
                if len(words) > WIDEN_OVER and i < len(words) - 1:
                    if start is not None and self._fixed_point(start, state, name):
                        ending, status = self._widened(words[i:], pad, node, body, name, state, ctx, stdin, out, why)
                        break
                    start = (state.copy(), self.files.snapshot())
                ending, status = self._turn(pad, state, lambda: self._compound(body, state, ctx, stdin, out), why)
                if ending != "next":
                    break
            return None if self._loop_end(pad, state, ending != "dead") else status
        finally:
            self.unpad(pad)

    def _fixed_point(self, start: tuple[State, tuple], state: State, name: str) -> bool:
        """Whether a pass of a `for` loop starts from the state the previous one started from
        (`start`: that state and the files written then), but for the loop's variable: the
        variables, functions, arguments, folder, traps, ... and every file the launch wrote (a
        pass reads them). Identity first: what a pass did not set is the very same object."""
        before, files = start
        for frame, old in zip(reversed(state.frames), reversed(before.frames)):
            if name in frame:
                if name not in old:
                    return False
                old[name] = frame[name]  # `before` is a private copy
                break
        return before == state and files == self.files.snapshot()

    def _widened(self, rest: list[str], pad: Pad, node, body, name: str, state: State, ctx: Ctx, stdin, out,
                 why: str) -> tuple[str, Optional[int]]:
        """The remaining passes of a `for` loop at a fixed point: each would run the same body
        from the same state with the variable set to one of `rest`, so one pass with the variable
        set to any of them (a `OneOf` when there are few, else an unknown) stands for them all.
        What they print is known up to where they differ: the text after it is not."""
        values = list(dict.fromkeys(rest))
        label = f"one of the {len(values)} values of {name} left at the fixed point of the loop at {ctx.site(node)}"
        if len(values) <= MAX_ALTERNATIVES:
            value: Word = one_of_texts(values, label, label)
        else:
            head, tail = _common_ends(values)
            value = Unknown(f"{label} (`{_short(values[0], 20)}` ... `{_short(values[-1], 20)}`)", head[:256],
                            tail[-256:])
        state.set(name, value)
        printed = len(out.parts) if out is not None else 0
        ending, status = self._turn(pad, state, lambda: self._compound(body, state, ctx, stdin, out), why)
        if out is not None and len(out.parts) > printed:
            out.write(Unknown(f"the output of the passes of the loop at {ctx.site(node)} after its fixed point"))
        var = state.lookup(name)
        if ending == "next" and var is not None and var.value is value:
            state.set(name, rest[-1])  # the last pass leaves the last word, unless the body set it
        return ending, status

    def _while(self, node, state, ctx, stdin, out):
        """`while`/`until`: iterate while the test is decided (an option-parsing loop over `$@`);
        from the first undecided test on, the body runs once more as a branch that may run."""
        conds = [c for c in node.children_by_field_name("condition") if c.is_named and c.type not in _SKIP]
        body = node.child_by_field_name("body")
        until = node.children and node.children[0].type == "until"
        label = f"loop `{_short(' '.join(ctx.text(c) for c in conds))}` at {ctx.site(node)}"
        why = f"set on a pass of the loop at {ctx.site(node)} that left it early"
        pad = self.pad("loop")
        try:
            for _ in range(MAX_LOOP):
                status = None
                for c in conds:
                    status = self.statement(c, state, ctx, stdin=stdin)
                holds = None if status is None else (status == 0) != bool(until)
                if holds is False:
                    return None if self._loop_end(pad, state, True) else 0
                if holds is None:
                    self._maybe(self._once(pad, body, why, stdin, out), state, ctx, label)
                    self._loop_end(pad, state, True)
                    return None
                ending, _ = self._turn(pad, state, lambda: self._compound(body, state, ctx, stdin, out), why)
                if ending != "next":
                    return None if self._loop_end(pad, state, ending != "dead") else 0
            self.unknown(ctx, node, state, f"the loop at {ctx.site(node)} ran over {MAX_LOOP} iterations")
            self._loop_end(pad, state, True)
            return None
        finally:
            self.unpad(pad)

    def _c_for(self, node, state, ctx, stdin, out):
        body = node.child_by_field_name("body")
        cond = f"loop `{_short(ctx.text(node).split(')', 1)[0])}))` at {ctx.site(node)}"
        for child in node.named_children:
            if child != body and child.type not in _SKIP:
                self.arith(ctx.text(child), state, ctx, child)
        why = f"set on a pass of the loop at {ctx.site(node)} that left it early"
        pad = self.pad("loop")
        try:
            status = self._maybe(self._once(pad, body, why, stdin, out), state, ctx, cond)
            return None if self._loop_end(pad, state, True) else status
        finally:
            self.unpad(pad)


class _NewProcess:
    """`ControlFlow.new_process`: the pads of the running process are put aside while the block
    runs and given back however it ends (a class, not a generator: one is made for every
    subshell, substitution and pipeline part)."""

    __slots__ = ("flow", "pads")

    def __init__(self, flow: ControlFlow) -> None:
        self.flow = flow

    def __enter__(self) -> None:
        self.pads, self.flow.pads = self.flow.pads, []

    def __exit__(self, *exc: object) -> None:
        self.flow.pads = self.pads
