"""Bash arithmetic and `test`/`[` comparisons over known words (a symbolic value asks for the
point's own)."""
from __future__ import annotations

import ast
import functools
import re
from typing import TYPE_CHECKING, Any, Optional

from .state import _NAME, SHELL_SET, Ctx, State, _scalar, _short, symbolic
from .words import Unknown, Word

if TYPE_CHECKING:
    from .shell import Interpreter


def _binary(op: str, lv: Word, rv: Word, it: Interpreter, state: State, ctx: Ctx, node: Any) -> Optional[bool]:
    if symbolic(lv, rv):
        return None
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
    if symbolic(*args):
        return None
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


def _balanced(text: str) -> bool:
    """Whether every `)` of the text closes a `(` of it (so parentheses around it pair up)."""
    depth = 0
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if depth < 0:
            return False
    return depth == 0


def _ternary(py: str) -> Optional[tuple[str, str, str]]:
    """`c ? a : b` split at its top-level `?` and the `:` that closes it (the operator groups to
    the right: `c ? a : d ? e : f`), or None when the text is not one."""
    depth, q, pending = 0, -1, 0
    for i, ch in enumerate(py):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and ch == "?":
            if q < 0:
                q = i
            else:
                pending += 1
        elif depth == 0 and ch == ":" and q >= 0:
            if pending:
                pending -= 1
            else:
                return py[:q], py[q + 1:i], py[i + 1:]
    return None


@functools.lru_cache(maxsize=1024)
def _python_text(text: str) -> tuple[str, Optional[re.Match], Optional[re.Match]]:
    """Arithmetic text as Python reads it, and its assignment (`x=...`, `x+=...`) or increment
    (`x++`, `--x`) when it is one. Kept per text: a launch evaluates the same few again and again."""
    py = text.replace("&&", " and ").replace("||", " or ")
    py = re.sub(r"(?<![=!<>])!(?!=)", " not ", py)
    py = re.sub(r"\b0x[0-9a-fA-F]+\b|\b0[0-7]+\b", lambda m: str(int(m.group(0), 0 if m.group(0).startswith("0x") else 8)), py)
    assignment = re.fullmatch(r"\s*([A-Za-z_]\w*)\s*([-+*/%]?)=(?!=)\s*(.+)", py)
    if assignment:
        return py, assignment, None
    return py, None, re.fullmatch(r"\s*(?:([A-Za-z_]\w*)\s*(\+\+|--)|(\+\+|--)\s*([A-Za-z_]\w*))\s*", py)


@functools.lru_cache(maxsize=1024)
def _parsed(py: str) -> Optional[ast.Expression]:
    """Python's syntax tree of an expression (never changed by its readers), None if it is none."""
    try:
        return ast.parse(py, mode="eval")
    except SyntaxError:
        return None


class _Arith:
    """Bash arithmetic over 64-bit integers: names read as variables (recursively, capped)."""

    LIMIT = 2 ** 63

    def __init__(self, it: Interpreter, state: State, ctx: Ctx, node: Any):
        self.it, self.state, self.ctx, self.node = it, state, ctx, node
        self.depth = 0

    def evaluate(self, text: str) -> Optional[int]:
        if symbolic(text):
            return None
        text = text.strip()
        if not text:
            return 0
        if len(text) > 10_000:
            return None
        if "$" in text or "`" in text:
            # Expanded as inside double quotes: bash neither splits nor globs arithmetic text
            # (`? :` is an operator there, not a pattern).
            words = self.it.expand_text_words('"' + text.replace('"', "") + '"', self.state, self.ctx, self.node)
            if any(isinstance(w, Unknown) for w in words):
                return None
            text = " ".join(words)  # type: ignore[arg-type]
        # assignments and increments: x=..., x+=..., x++, ++x
        py, m, step = _python_text(text)
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
        m = step
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
        if "?" in py:
            parts = _ternary(py)
            if parts is None:
                inner = py.strip()
                # `(c ? a : b)` whole: its inside (a `?` deeper in a larger expression: unknown).
                if inner.startswith("(") and inner.endswith(")") and _balanced(inner[1:-1]) \
                        and _ternary(inner[1:-1]) is not None:
                    return self.evaluate_py(inner[1:-1], ast)
                return None
            cond = self.evaluate_py(parts[0], ast)
            return None if cond is None else self.evaluate_py(parts[1] if cond else parts[2], ast)
        tree = _parsed(py.strip())
        return None if tree is None else self.node_value(tree.body, ast)

    def name(self, name: str) -> Optional[int]:
        self.it.note(name)
        self.depth += 1
        if self.depth > 32:
            return None
        value = self.state.get(name)
        if value is None:
            return None if name in SHELL_SET else 0  # `$((UID + 1))`: the machine's, not known
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
