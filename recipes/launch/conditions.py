"""`[[ ]]`, `[`/`test` and arithmetic tests in three-valued logic: True, False or None when a
value they read is not known."""
from __future__ import annotations

import re
from typing import Any, Optional

from .arith import _Arith, _binary, _test_words
from .nodes import _binary_parts, _unary_parts
from .plans import plan, table
from .state import Ctx, State, _join_unknown, symbolic
from .text import _glob_match
from .words import Unknown, Word


_BINARY = table("binary")  # a binary test's parts, looked up before `plan`


class Conditions:
    """`[[ ]]`, `[`/`test` and arithmetic tests in three-valued logic: True, False or None when a
value they read is not known."""

    def test_expr(self, node: Any, state: State, ctx: Ctx) -> Optional[bool]:
        t = node.type
        if t == "parenthesized_expression":
            inner = [c for c in node.named_children]
            return self.test_expr(inner[0], state, ctx) if inner else None
        if t == "unary_expression":
            opt, operand = plan("unary", node, ctx.src, _unary_parts)
            if opt == "!":
                v = self.test_expr(operand[0], state, ctx) if operand else None
                return None if v is None else not v
            value = self.word_text(operand[0], state, ctx) if operand else ""
            return self.unary(opt, value, state)
        if t == "binary_expression":
            left, opt, right, rights = _BINARY.get(node) or plan("binary", node, ctx.src, _binary_parts)
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
                rv = _join_unknown([self.pattern_text(r, state, ctx) for r in rights])
                m = _glob_match(lv, rv)
                return None if m is None else (m if opt != "!=" else not m)
            if opt == "=~":
                rv = _join_unknown([self.word_text(r, state, ctx) if r.type != "regex" else ctx.text(r) for r in rights])
                if symbolic(lv, rv):
                    return None
                if isinstance(lv, Unknown) or isinstance(rv, Unknown) or "$" in rv:
                    return None
                try:
                    return re.search(rv, lv) is not None
                except re.error:
                    return None
            rv = _join_unknown([self.word_text(r, state, ctx) for r in rights])
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
            if symbolic(value):
                return None
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
