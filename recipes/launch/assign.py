"""Assignments by `=`, `+=`, arrays (indexed and associative) and the declaration builtins."""
from __future__ import annotations

import re
from typing import Any, Optional

from .nodes import _assignment_parts
from .plans import plan, table
from .state import (
    _KEEP,
    _NAME,
    _SKIP,
    MAX_ARRAY,
    Ctx,
    State,
    Var,
    _join_unknown,
    _scalar,
)
from .words import Unknown, Word


_ASSIGNMENTS = table("assignment")  # an assignment's parts, looked up before `plan`


class Assignments:
    """Assignments by `=`, `+=`, arrays (indexed and associative) and the declaration builtins."""

    def assign(self, node: Any, state: State, ctx: Ctx, *, local: bool = False,
               export: Optional[bool] = None, arrays: str = "") -> None:
        parts = _ASSIGNMENTS.get(node) or plan("assignment", node, ctx.src, _assignment_parts)
        if parts is None:
            return
        name, value_node, append, subscript, idx = parts
        index: Optional[Word] = None
        if subscript:
            index = self.word_text(idx, state, ctx) if idx is not None else "0"
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
