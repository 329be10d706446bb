"""Bash's text rules as pure functions: quoting and escapes, word splitting, glob patterns
(case arms, `[[ == ]]`, trims and replacements), brace expansion and `printf`."""
from __future__ import annotations

import functools
import re
from typing import Any, Optional

from .state import (
    MAX_FIELDS,
    MAX_TRIM_CHARS,
    MAX_VALUE_CHARS,
    _intersperse,
    _join_unknown,
    _short,
    one_of_runs,
    symbolic,
)
from .words import HOLE, MAX_ALTERNATIVES, Holed, OneOf, OneOfRest, Split, Unknown, Word, alternatives, picks, unclassed


def _expansion_end(text: str, i: int) -> Optional[int]:
    """Where an expansion starting at text[i] (`$x`, `${...}`, `$(...)`, `$((...))`, `` `...` ``)
    ends, or None when text[i] starts none."""
    n = len(text)
    if text[i] == "`":
        j = i + 1
        while j < n and text[j] != "`":
            j += 2 if text[j] == "\\" else 1
        return j + 1 if j < n else None
    if i + 1 >= n:
        return None
    nxt = text[i + 1]
    if nxt in "({":
        close = ")" if nxt == "(" else "}"
        depth, j = 0, i + 1
        while j < n:
            ch = text[j]
            if ch == "\\":
                j += 2
                continue
            if ch == nxt:
                depth += 1
            elif ch == close:
                depth -= 1
                if depth == 0:
                    return j + 1
            j += 1
        return None
    if nxt.isdigit() or nxt in "@*#?$!-":
        return i + 2
    m = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text[i + 1:])
    return i + 1 + m.end() if m else None


_WORD_ESC = re.compile(r"\\(.)", re.S)


_DQ_ESC = re.compile(r'\\([\\"$`\n])')


def _unescape_word(text: str) -> str:
    if "\\" not in text:
        return text
    return _WORD_ESC.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


def _unescape_dq(text: str) -> str:
    if "\\" not in text:
        return text
    return _DQ_ESC.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), text)


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


# Characters an unquoted expansion splits on or globs with: a value that may hold one is not
# one word of those characters.
_SPACE = frozenset(" \t\n")
_GLOBS = frozenset("*?[")
_SPLITS = _SPACE | _GLOBS
_BLANK = re.compile(r"[ \t\n]+")


def _fields(segs: list[tuple[str, Any]]) -> list[Word]:
    """Split an argument's segments into fields as bash does (IFS whitespace on unquoted
    expansions; quoted parts and literals never split; `"$@"` makes a field per word)."""
    if len(segs) == 1:  # most often one text that does not split: the one field the loops below make
        kind, value = segs[0]
        if value.__class__ is str and (kind == "q" or (kind == "u_lit" and value)) and len(value) <= MAX_VALUE_CHARS:
            return [value]
    for kind, value in segs:
        if (kind == "u" or kind == "fields") and _split_alternatives(kind, value, len(segs)):
            got = _fields_per_alternative(segs)
            if got is not None:
                return got
            break
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
            if value.chars is not None and len(segs) == 1 and type(value) is Unknown and not value.prefix \
                    and not value.suffix and not value.chars & _GLOBS:
                # Alone in its word, a value of known characters (`$(seq 1 $N)`, digits a line)
                # splits into any number of words, each of its characters but blanks.
                inner = value.chars - _SPACE
                return [Split(value.why, chars=inner)] if inner else []
            if value.chars is not None and (value.chars & _SPLITS or (
                    isinstance(value, Holed) and not value.template.replace(HOLE, ""))):
                value = unclassed(value)  # it may split, or name files as a glob
            # Alone in its word, a plain unknown may be any number of words (`Split`). A value
            # empty on one path (`OrEmpty`) keeps what it is when set (its known start).
            alone = not current and len(segs) == 1 and type(value) is Unknown
            if alone and (_BLANK.search(value.prefix) or _BLANK.search(value.suffix)):
                return _known_ends(value)
            current.append(Split(value.why, value.prefix, value.suffix) if alone else value)
            have = True
            continue
        if value == "":
            continue
        pieces = _BLANK.split(value)
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
    # A field of one text is that text (what `_join_unknown` makes of it, without the call).
    return [f[0] if len(f) == 1 and f[0].__class__ is str and len(f[0]) <= MAX_VALUE_CHARS else _join_unknown(f)
            for f in fields]


def _known_ends(value: Unknown) -> list[Word]:
    """The fields of an unquoted unknown alone in its word whose known start or end holds whole
    words (`$REPLAY_CMD`, built as `"$CLI profile --url ..."` and then given flags on undecided
    branches): the words before the last blank of its start and after the first blank of its end
    are fields of their own, and what lies between is any number of words (`Split`) that begin
    and end with the partial words next to it."""
    lead = _BLANK.split(value.prefix)
    trail = _BLANK.split(value.suffix)
    return [w for w in lead[:-1] if w] + [Split(value.why, lead[-1], trail[0])] + [w for w in trail[1:] if w]


def _split_alternatives(kind: str, value: Any, n: int) -> bool:
    """Whether a part with alternatives makes fields that depend on which value it has: an
    unquoted one some value of which splits or is empty, a `"${a[@]}"` that ends in alternatives
    next to other text (other parts keep their alternatives in the words they join)."""
    if kind == "u":
        return isinstance(value, OneOf) and any(
            not isinstance(v, str) or not v or re.search(r"[ \t\n]", v) for v in value.values)
    return n > 1 and any(isinstance(w, OneOfRest) for w in value)


def _fields_per_alternative(segs: list[tuple[str, Any]]) -> Optional[list[Word]]:
    """The fields of a word, split as each choice of its parts' alternatives splits; the words
    every choice gives alike are kept, the others are the alternatives (None past the cap)."""
    words = [w for kind, value in segs for w in (value if kind == "fields" else [value])]
    chosen = picks(words, MAX_ALTERNATIVES)
    if chosen is None:
        return None
    results: list[list[Word]] = []
    for pick in chosen:
        concrete: list[tuple[str, Any]] = []
        for kind, value in segs:
            if kind == "fields":
                run: list[Word] = []
                for w in value:
                    run += (alternatives(w) or [])[pick[w]] if w in pick else [w]
                concrete.append((kind, run))
            elif value in pick:
                concrete.append((kind, (alternatives(value) or [])[pick[value]][0]))
            else:
                concrete.append((kind, value))
        results.append(_fields(concrete))
    first = next(w for w in words if isinstance(w, (OneOf, OneOfRest)))
    label = "; ".join(dict.fromkeys(w.label for w in words if isinstance(w, (OneOf, OneOfRest))))
    return one_of_runs(results, first.why, label)


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


@functools.lru_cache(maxsize=4096)
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
            j = _bracket_end(pattern, i)
            if j < 0:
                out.append(re.escape(c))
            else:
                body = pattern[i + 1:j]
                negate = body.startswith(("!", "^"))
                body = body[1:] if negate else body
                # A class name (`[:alpha:]`) is its ranges; any other `[`, `\\` or `^` is itself.
                parts = re.split(r"(\[:\w+:\])", body)
                body = "".join(_CLASSES.get(x[2:-2], "") if x.startswith("[:") and x.endswith(":]")
                               else x.replace("\\", "\\\\").replace("[", "\\[").replace("^", "\\^") for x in parts)
                out.append(f"[{'^' if negate else ''}{body}]")
                i = j + 1
                continue
        else:
            out.append(re.escape(c))
        i += 1
    return "".join(out)


def _bracket_end(pattern: str, i: int) -> int:
    """Where the bracket expression that opens at `i` closes (a `]` first in it, or inside a
    `[:class:]`, does not close it); -1 when it does not close."""
    k = i + 1
    if k < len(pattern) and pattern[k] in "!^":
        k += 1
    if k < len(pattern) and pattern[k] == "]":
        k += 1
    while k < len(pattern):
        if pattern.startswith("[:", k):
            end = pattern.find(":]", k + 2)
            if end >= 0:
                k = end + 2
                continue
        if pattern[k] == "]":
            return k
        k += 1
    return -1


_CLASSES = {"alpha": "a-zA-Z", "digit": "0-9", "alnum": "a-zA-Z0-9", "space": " \\t\\n\\r\\f\\v", "upper": "A-Z",
            "lower": "a-z", "xdigit": "0-9a-fA-F", "punct": "!-/:-@\\[-`{-~"}


def _glob_match(value: Word, pattern: Word) -> Optional[bool]:
    if isinstance(pattern, str) and pattern and pattern.strip("*") == "":
        return True  # `*)`: any text, known or not
    if isinstance(value, OneOf) and isinstance(pattern, str) and all(isinstance(v, str) for v in value.values):
        got = {_glob_match(v, pattern) for v in value.values}
        return got.pop() if len(got) == 1 else None  # decided when every value decides alike
    if symbolic(value, pattern):
        return None
    if isinstance(value, Unknown) or isinstance(pattern, Unknown):
        return None
    compiled = _glob_compiled(pattern)
    return None if compiled is None else compiled.fullmatch(value) is not None


@functools.lru_cache(maxsize=4096)
def _glob_compiled(pattern: str) -> Optional[re.Pattern]:
    rx = _glob_regex(pattern)
    if rx is None:
        return None
    try:
        return re.compile(rx, re.S)
    except re.error:
        return None


def part_of(value: Unknown) -> Unknown:
    """An unknown part of `value` (a substring): its characters, not its template nor its known
    ends (an offset may cut into either)."""
    return Unknown(value.why, chars=value.chars)


def trim_unknown(value: Unknown, op: str, pattern: Word) -> Unknown:
    """`${X%pattern}` (or `%%`, `#`, `##`) of an unknown value: its characters, and its known ends
    where the trim cannot reach past them. A literal pattern the end it trims holds is cut from
    that end (`${LIST%, }` of a list that ends in `, `); one that end is long enough to rule out
    leaves the value as it is; any other trim (a glob, an end too short to tell) may remove all
    of the unknown part and the other end with it."""
    suffix = op in ("%", "%%")
    end = value.suffix if suffix else value.prefix
    literal = isinstance(pattern, str) and pattern and _glob_regex(pattern) == re.escape(pattern)
    if literal and not (isinstance(value, Holed) and value.holes):
        if (end.endswith(pattern) if suffix else end.startswith(pattern)):
            if suffix:
                return Unknown(value.why, value.prefix, end[: len(end) - len(pattern)], chars=value.chars)
            return Unknown(value.why, end[len(pattern):], value.suffix, chars=value.chars)
        if len(end) >= len(pattern):
            return value
    return part_of(value)


def _trim(value: str, op: str, pattern: Word) -> Word:
    if symbolic(value, pattern):
        return Unknown("a trim of a value each point has its own of")
    if isinstance(pattern, Unknown):
        return Unknown(pattern.why)
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
    if symbolic(value, pattern):
        return Unknown("a replacement in a value each point has its own of")
    if isinstance(pattern, Unknown):
        return Unknown(pattern.why)
    if isinstance(repl, Unknown):
        return Unknown(repl.why)
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
        # The regex has no anchor or look-around (`_glob_regex`): a match ending anywhere at i
        # is one the unbounded `match` finds too, so where it finds none no end is tried.
        if not done and c.match(value, i) is not None:
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
        return Unknown(fmt.why)
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
                out.append(arg if conv == "s" else Unknown(arg.why))  # `%b`, `%q`, a width: other text
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


def _python_code_detail(code: Word | None) -> str:
    if code is None:
        return "reads its program from standard input"
    if isinstance(code, Unknown):
        return f"inline code that is not known ({code.why})"
    return _short(code, 200)
