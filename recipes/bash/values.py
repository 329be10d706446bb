"""Values bash computes from literals, as the analysis resolves them: parameter references,
`${v#p}`/`${v%p}` trims, `$(( ))` and `awk 'BEGIN{print ...}'` arithmetic, and `printf` of
literal arguments (the vLLM JSON some launchers build with it). Anything not made of known
literals is left as written.
"""
from __future__ import annotations

import re
import shlex
from typing import Any

from .model import MAX_PRINTF_WIDTH, MAX_TRIM_CHARS, Bound

# `$X`, `${X}`, `${X:-default}`; the default may hold one level of braces (`${A:-${B}/x}`).
_PARAM = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=])((?:[^{}]|\{[^{}]*\})*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_ARRAY_REF = re.compile(r'^"?\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}"?$')
_SIMPLE_REF = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")


_ARITH = re.compile(r"\$\(\(\s*([\w\s+\-*/%()]+?)\s*\)\)")
_ARITH_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_AWK = re.compile(r"""\$\(\s*awk\s+(['"])\s*BEGIN\s*\{\s*print\s+([0-9.\s+\-*/()]+?)\s*;?\s*\}\s*\1\s*\)""")


def _eval_number(expr: str, integer: bool) -> float | int | None:
    """A literal arithmetic expression (digits, + - * / % and parentheses), or None."""
    import ast
    import operator

    ops = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Mod: operator.mod}

    def ev(n: Any) -> float | int:
        if isinstance(n, ast.Constant) and isinstance(n.value, (int, float)) and not isinstance(n.value, bool):
            if integer and isinstance(n.value, float):
                raise ValueError("bash arithmetic is integer only")
            return n.value
        if isinstance(n, ast.UnaryOp) and isinstance(n.op, (ast.USub, ast.UAdd)):
            v = ev(n.operand)
            return -v if isinstance(n.op, ast.USub) else v
        if isinstance(n, ast.BinOp):
            a, b = ev(n.left), ev(n.right)
            if isinstance(n.op, ast.Div):
                if integer:
                    return int(a / b)  # bash truncates toward zero
                return a / b
            if type(n.op) in ops:
                return ops[type(n.op)](a, b)
        raise ValueError("not a literal expression")

    if len(expr) > 200:
        return None
    try:
        return ev(ast.parse(expr.strip(), mode="eval").body)
    except (SyntaxError, ValueError, ZeroDivisionError, RecursionError, TypeError):
        return None


def _literal_arithmetic(text: str, names: dict[str, str] | None = None) -> str:
    """`$((8 * 2))` -> `16` and `$(awk 'BEGIN{print (2.99-1)/3}')` -> `0.663333` when every
    operand is a literal (after variable substitution); anything else is left as written."""
    def arith(m: re.Match) -> str:
        # Inside `$(( ))` a bare name is a variable: only known integer values are substituted.
        expr = _ARITH_NAME.sub(lambda n: (names or {}).get(n.group(0), n.group(0)).strip(), m.group(1))
        v = _eval_number(expr, integer=True) if not _ARITH_NAME.search(expr) else None
        return m.group(0) if v is None else str(v)

    def awk(m: re.Match) -> str:
        v = _eval_number(m.group(2), integer=False)
        return m.group(0) if v is None else f"{v:.6g}"  # awk prints numbers with OFMT %.6g

    return _AWK.sub(awk, _ARITH.sub(arith, text))



_TRIM = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(##|#|%%|%)([^}]*)\}")


_GLOB = frozenset("*?[\\")


def trim_pattern(value: str, op: str, pattern: str) -> str:
    """bash `${v#p}` / `${v##p}` (shortest / longest prefix matching glob p removed) and
    `${v%p}` / `${v%%p}` (suffix). A literal, `*LITERAL` or `LITERAL*` pattern (the ones scripts
    write: `${x##*/}`, `${x%%_*}`, `${x%/}`) is cut at once; any other glob tries each cut, one
    glob match each (quadratic), so over MAX_TRIM_CHARS it raises Bound."""
    fast = _trim_simple(value, op, pattern)
    if fast is not None:
        return fast
    import fnmatch

    if len(value) > MAX_TRIM_CHARS:
        raise Bound("MAX_TRIM_CHARS", MAX_TRIM_CHARS, f"a {len(value):,}-character value trimmed by a pattern")
    rx = re.compile(fnmatch.translate(pattern), re.S)
    cuts = range(len(value) + 1)
    if op in ("#", "##"):
        order = cuts if op == "#" else reversed(cuts)
        for i in order:
            if rx.match(value[:i]):
                return value[i:]
    else:
        order = reversed(cuts) if op == "%" else cuts
        for i in order:
            if rx.match(value[i:]):
                return value[:i]
    return value


def _trim_simple(value: str, op: str, pattern: str) -> str | None:
    """`trim_pattern` of a literal, `*LITERAL` or `LITERAL*` pattern, or None for another glob."""
    prefix = op in ("#", "##")
    if not _GLOB & set(pattern):
        if prefix:
            return value[len(pattern):] if value.startswith(pattern) else value
        return value[:len(value) - len(pattern)] if value.endswith(pattern) else value
    if pattern.startswith("*") and not _GLOB & set(pattern[1:]):
        lit = pattern[1:]
        if prefix:  # the prefix runs to the first (shortest) or last (longest) LITERAL
            at = value.find(lit) if op == "#" else value.rfind(lit)
            return value if at < 0 else value[at + len(lit):]
        if not value.endswith(lit):
            return value
        return value[:len(value) - len(lit)] if op == "%" else ""
    if pattern.endswith("*") and not pattern.endswith("\\*") and not _GLOB & set(pattern[:-1]):
        lit = pattern[:-1]
        if not prefix:  # the suffix starts at the last (shortest) or first (longest) LITERAL
            at = value.rfind(lit) if op == "%" else value.find(lit)
            return value if at < 0 else value[:at]
        if not value.startswith(lit):
            return value
        return value[len(lit):] if op == "#" else ""
    return None


_PRINTF_SUB = re.compile(r"^\$\(\s*printf\s+(?P<args>.+)\)$", re.S)
_PRINTF_SPEC = re.compile(r"%(?P<flags>[-+ 0#]*)(?P<width>\d*)(?P<prec>\.\d+)?(?P<conv>[sdifgeExXo%])")


def _literal_printf(text: str) -> str:
    """`$(printf '{"k":%d}' 3)` -> `{"k":3}` when the format and every argument are literal
    (after variable substitution): the vLLM JSON some launchers build with printf. Anything
    else (`-v`, an unknown argument, a mismatch of arguments and conversions) stays as written."""
    m = _PRINTF_SUB.match(text.strip())
    if m is None:
        return text
    try:
        words = shlex.split(m.group("args").replace("\\\n", " "))
    except ValueError:
        return text
    if not words or words[0].startswith("-") or "$" in words[0] or "`" in words[0]:
        return text
    fmt, args = words[0], words[1:]
    specs = [x for x in _PRINTF_SPEC.finditer(fmt) if x.group("conv") != "%"]
    if len(specs) != len(args) or len(fmt) > 2000:
        return text
    # An argument only known at run time may fill a `%s` (it stays as written, e.g. a model
    # path); a number conversion of one is unknown.
    if any(("$" in a or "`" in a) and (x.group("conv") != "s" or '"' in a) for x, a in zip(specs, args)):
        return text
    for x in specs:
        size = max(int(x.group("width") or 0), int((x.group("prec") or ".0")[1:] or 0))
        if size > MAX_PRINTF_WIDTH:
            raise Bound("MAX_PRINTF_WIDTH", MAX_PRINTF_WIDTH, f"a printf width or precision of {size:,}")
    values = iter(args)

    def conv(x: re.Match) -> str:
        c = x.group("conv")
        if c == "%":
            return "%"
        arg = next(values)
        spec = "%" + x.group("flags") + x.group("width") + (x.group("prec") or "")
        try:
            if c in "di":
                return (spec + "d") % int(arg, 10)
            if c in "xXo":
                return (spec + c) % int(arg, 10)
            if c in "feEg":
                return (spec + c) % float(arg)
        except ValueError:
            raise
        return (spec + "s") % arg

    try:
        out = _PRINTF_SPEC.sub(conv, fmt)
    except (ValueError, TypeError, OverflowError):
        return text
    return out.replace("\\n", "\n").replace("\\t", "\t")
