"""if/elif/else, case, for, while/until and C-style loops: decided arms run alone, undecided
arms each run from a copy of the state and are merged."""
from __future__ import annotations

from typing import Any, Callable, Optional

from .state import _SKIP, MAX_LOOP, Ctx, State, _Loop, _short
from .text import _glob_match
from .words import Unknown, Word


class ControlFlow:
    """if/elif/else, case, for, while/until and C-style loops: decided arms run alone, undecided
arms each run from a copy of the state and are merged."""

    def _if(self, node, state, ctx, stdin, out):
        clauses: list[tuple] = []
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
                clauses.append((conds, bod, child))
            elif child.type == "else_clause":
                clauses.append((None, [c for c in child.named_children if c.type not in _SKIP], child))
        return self.branches(clauses, state, ctx, stdin, out)

    def branches(self, clauses: list[tuple], state: State, ctx: Ctx, stdin, out) -> Optional[int]:
        """if/elif/else: the first arm whose test holds; undecided tests run every arm that may."""
        pending: list[tuple[str, State, Callable[[State, Ctx], Any]]] = []
        undecided: list[str] = []
        for conds, body, *head in clauses:
            if head:
                self.ran(ctx, head[0], first_only=True)  # the `elif` / `else` line reached
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
            if not any(v is True for v, _, _ in clauses):
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
