"""The characters an unknown value can hold, and shell text with such values in it.

A command's output the interpreter cannot compute may still be bounded: `tr -c 'a-z_' _` prints
only those characters, `grep -o '[0-9]+'` only digits, `scontrol show hostnames` host names, an
`awk` program printing a field of a repository file only what that field holds there. The bound
is `words.Unknown.chars` (None: any character). A text joined from known parts and such values
keeps each in its place (`words.Holed`), and `fill` decides whether shell text with holes can be
read: a hole whose characters cannot change how bash parses the text around it (inside single
quotes without `'`, inside double quotes without `"`, `$`, a backtick or `\\`, in a plain word
without blanks, quotes, operators or glob characters) is read as that unknown value; any other
hole leaves the text unknown, as it may be code.
"""
from __future__ import annotations

import re
import secrets
import string
from typing import Any, Callable, Optional

from .words import HOLE, OneOf, OneOfRest, Unknown, chars_of

try:  # Python 3.11+
    import re._parser as _sre  # type: ignore[import-not-found]
    from re import _constants as _C  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants as _C  # type: ignore[no-redef]
    import sre_parse as _sre  # type: ignore[no-redef]


DIGITS = frozenset(string.digits)
# What arithmetic prints: a 64-bit integer.
INTEGER = DIGITS | {"-"}
# Integers one a line (`seq` of bounds known to be integers).
INTEGER_LINES = INTEGER | {"\n"}
# Slurm node names as `scontrol show hostnames` prints them, one a line (RFC 1123 host names,
# with `_` and `.` as sites use them).
HOST_NAMES = frozenset(string.ascii_letters + string.digits + "-._\n")
# What `ip route get ADDR` prints: addresses (IPv4, IPv6), keywords, numbers and interface names
# (letters, digits, `.`, `_`, `-`, `@` for a VLAN's parent), in words separated by blanks.
ROUTE_OUTPUT = frozenset(string.ascii_letters + string.digits + ".:/_@- \n")
_WORD = frozenset(string.ascii_letters + string.digits + "_")
_SPACE = frozenset(" \t\n\r\f\v")

# Characters a hole may hold and still not change how bash reads the text around it.
_NOT_IN_SINGLE = frozenset("'")
_NOT_IN_DOUBLE = frozenset('"$`\\')
# A plain word: letters, digits and punctuation that is no operator, quote, expansion, glob,
# brace, comment, tilde or assignment (and `,`: a hole in a word with braces is not read).
_PLAIN_WORD = frozenset(string.ascii_letters + string.digits + "_./:@%+-")


# --- regular expressions ------------------------------------------------------------------

_CATEGORIES = {
    _C.CATEGORY_DIGIT: DIGITS,
    _C.CATEGORY_WORD: _WORD,
    _C.CATEGORY_SPACE: _SPACE,
}
MAX_RANGE = 1024  # a class range wider than this (`[\x00-\uffff]`) is any character


def regex_chars(pattern: str, *, pcre: bool = True, fold: bool = False) -> Optional[frozenset]:
    """The characters a match of `pattern` (Python/PCRE syntax) can hold, or None when it can be
    any character (`.`, a negated class or category, a case-insensitive letter, what this does
    not read). PCRE's `\\K` (keep out what came before) is read as matching nothing, so the
    characters before it count too: a superset."""
    if pcre:
        pattern = re.sub(r"(?<!\\)((?:\\\\)*)\\K", r"\1", pattern)
    if re.search(r"\[[:=.]", pattern) or (not pcre and re.search(r"\[[^\]]*\\", pattern)):
        # `[[:upper:]]`, `[=a=]`: classes Python reads as their letters; a backslash in a POSIX
        # bracket is a backslash, in Python an escape.
        return None
    try:
        parsed = _sre.parse(pattern)
    except Exception:  # re.error, RecursionError on a hostile nest, an unsupported escape
        return None
    try:
        got = _items(parsed, fold or bool(parsed.state.flags & re.IGNORECASE))
    except RecursionError:
        return None
    return frozenset(got) if got is not None else None


def _items(items: Any, fold: bool) -> Optional[set]:
    out: set[str] = set()
    for op, av in items:
        got = _item(op, av, fold)
        if got is None:
            return None
        out |= got
    return out


def _item(op: Any, av: Any, fold: bool) -> Optional[set]:
    if op is _C.LITERAL:
        return _literal(av, fold)
    if op is _C.IN:
        out: set[str] = set()
        for kind, value in av:
            if kind is _C.NEGATE:
                return None
            if kind is _C.LITERAL:
                got = _literal(value, fold)
            elif kind is _C.RANGE:
                lo, hi = value
                if hi - lo > MAX_RANGE:
                    return None
                got = set()
                for c in range(lo, hi + 1):
                    more = _literal(c, fold)
                    if more is None:
                        return None
                    got |= more
            elif kind is _C.CATEGORY:
                got = set(_CATEGORIES[value]) if value in _CATEGORIES else None
            else:
                return None
            if got is None:
                return None
            out |= got
        return out
    if op in (_C.MAX_REPEAT, _C.MIN_REPEAT, getattr(_C, "POSSESSIVE_REPEAT", None)):
        return _items(av[2], fold)
    if op is _C.SUBPATTERN:
        add, remove = av[1], av[2]
        inner = (fold or bool(add & re.IGNORECASE)) and not bool(remove & re.IGNORECASE)
        return _items(av[3], inner)
    if op is getattr(_C, "ATOMIC_GROUP", None):
        return _items(av, fold)
    if op is _C.BRANCH:
        out = set()
        for branch in av[1]:
            got = _items(branch, fold)
            if got is None:
                return None
            out |= got
        return out
    if op is _C.CATEGORY:
        return set(_CATEGORIES[av]) if av in _CATEGORIES else None
    if op in (_C.AT, _C.ASSERT, _C.ASSERT_NOT, _C.GROUPREF):
        return set()  # anchors and lookarounds match no text; a back-reference repeats a group's
    if op is _C.GROUPREF_EXISTS:
        out = set()
        for branch in av[1:]:
            if branch is not None:
                got = _items(branch, fold)
                if got is None:
                    return None
                out |= got
        return out
    return None


def _literal(code: int, fold: bool) -> Optional[set]:
    c = chr(code)
    if fold and c.lower() != c.upper():
        if not c.isascii() or c in "kKsS":
            return None  # folds to characters outside ASCII (the Kelvin sign, the long s)
        return {c.lower(), c.upper()}
    return {c}


# --- awk -----------------------------------------------------------------------------------

# What an awk program may do and still print only fields and its own strings: no formatting
# (`printf`, `%c` makes any character), no case change, no input or commands, no separators.
_AWK_REFUSED = re.compile(r"\b(?:printf|sprintf|getline|system|toupper|tolower|close|fflush|ORS|OFS|RS|FS|"
                          r"CONVFMT|OFMT|ENVIRON|ARGV|SUBSEP|substr|split|match|function|func)\b|[|>]")
_AWK_PRINT = re.compile(r"\bprint\b([^;}\n]*)")
_AWK_ARG = r"(?:\$\d+|S\d+|NR|NF|FNR)"
_AWK_ARGS = re.compile(rf"\s*(?:{_AWK_ARG}(?:\s*,?\s*{_AWK_ARG})*)?\s*")
_AWK_SUB = re.compile(r"\b(g?sub)\s*\(\s*(R\d+|S\d+)\s*,\s*S(\d+)\s*(?:,\s*([^)]*?))?\s*\)")


def awk_output(program: str, texts: "list[str] | frozenset", sep: Optional[str]) -> "tuple[frozenset, bool] | None":
    """The characters an awk program's output can hold, read over `texts` (each file's known
    text; or a character class, the characters of an input whose text is not known), and whether
    it prints one line and exits; None when the program does more than print fields (`$N`), its
    own strings, NR or NF (after `sub`/`gsub` with a string replacement), or this does not read it."""
    skeleton = _awk_skeleton(program)
    if skeleton is None:
        return None
    code, strings, regexes = skeleton
    if _AWK_REFUSED.search(code) or re.search(r"\$[^\d]|\$\d+\s*(?:[-+*/%^]?=(?!=)|\+\+|--)|\bNF\s*=(?!=)", code):
        return None  # a computed field, a field or NF assigned
    extra: set[str] = set()  # characters a sub/gsub writes into some field
    removed: dict[int, frozenset] = {}  # characters `gsub(/[..]/, "", $N); print $N` leaves out of $N
    for m in _AWK_SUB.finditer(code):
        replacement = strings[int(m.group(3))]
        if "\\" in replacement:
            return None
        target = (m.group(4) or "$0").strip()
        if not re.fullmatch(r"\$\d+|[A-Za-z_]\w*", target):
            return None
        extra.update(replacement.replace("&", ""))
        if replacement == "" and m.group(2).startswith("R") and target.startswith("$"):
            cls = re.fullmatch(r"\[([^\]\\^-]+)\]", regexes[int(m.group(2)[1:])])
            after = code[m.end():]
            if cls and re.match(rf"\s*;\s*print\s+\{target}\s*[;}}\n]", after):
                removed[int(target[1:])] = frozenset(cls.group(1))
    prints = list(_AWK_PRINT.finditer(code))
    out: set[str] = set()
    if _implicit_print(code):
        # A pattern without an action prints its lines.
        got = _field_chars(texts, sep, 0)
        out |= (got or set()) | extra | {"\n"}
    if not prints:
        return frozenset(out), False
    for m in prints:
        args = m.group(1)
        if not _AWK_ARGS.fullmatch(args):
            return None
        fields = [int(f) for f in re.findall(r"\$(\d+)", args)] or ([] if args.strip() else [0])
        for n in fields:
            got = _field_chars(texts, sep, n)
            if got is None:
                return None
            deleted = removed.get(n, frozenset()) if re.fullmatch(rf"\s*\${n}\s*", args) else frozenset()
            out |= (got - deleted) | extra
        for k in re.findall(r"S(\d+)", args):
            out.update(strings[int(k)])
        if re.search(r"\bN?F?NR\b|\bNF\b", args):
            out |= DIGITS
        if "," in args:
            out.add(" ")
    one_line = "END" not in code and not _implicit_print(code) and all(
        re.match(r"\s*;\s*exit\b", code[m.end():]) for m in prints)
    return frozenset(out), one_line


def _implicit_print(code: str) -> bool:
    """Whether a rule of the program has a pattern and no action (`/x/`, `NR == 1`): awk prints
    the lines it matches."""
    depth, pending = 0, []
    for c in code:
        if c == "{":
            if depth == 0:
                items = [x for x in re.split(r"[;\n]", "".join(pending)) if x.strip()]
                if len(items) > 1:
                    return True  # a pattern before the one this action belongs to
                pending = []
            depth += 1
        elif c == "}":
            depth -= 1
        elif depth == 0:
            pending.append(c)
    return bool("".join(pending).strip())


def _field_chars(texts: "list[str] | frozenset", sep: Optional[str], n: int) -> Optional[set]:
    if isinstance(texts, frozenset):
        # An input known only by its characters: a line holds any of them but the newline; a
        # field of the default separator no blank either, of another separator not that one.
        line = set(texts) - {"\n"}
        if n == 0:
            return line
        return line - _SPACE if sep is None or sep == " " else line - set(sep) if len(sep) == 1 else line
    out: set[str] = set()
    for text in texts:
        for line in text.split("\n"):
            if n == 0:
                out.update(line)
            elif sep is None or sep == " ":
                parts = line.split()
                out.update(parts[n - 1] if n <= len(parts) else "")
            elif len(sep) == 1 and sep not in "\\^$.[]|()*+?{}":
                parts = line.split(sep)
                out.update(parts[n - 1] if n <= len(parts) else "")
            elif sep == "\\t":
                parts = line.split("\t")
                out.update(parts[n - 1] if n <= len(parts) else "")
            else:
                out.update(line)  # a field is some of its line
    return out


def _awk_skeleton(program: str) -> "tuple[str, list[str], list[str]] | None":
    """The program with each string literal as `S<k>` and each regular expression as `R<k>`,
    and those literals (a string's text, escapes read), or None when a literal does not end."""
    code: list[str] = []
    strings: list[str] = []
    regexes: list[str] = []
    i, n = 0, len(program)
    while i < n:
        c = program[i]
        if c == "#":
            j = program.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == '"':
            j, text = i + 1, []
            while j < n and program[j] != '"':
                if program[j] == "\\" and j + 1 < n:
                    text.append(program[j:j + 2])
                    j += 2
                    continue
                text.append(program[j])
                j += 1
            if j >= n:
                return None
            code.append(f" S{len(strings)} ")
            strings.append("".join(text))
            i = j + 1
            continue
        before = "".join(code).rstrip()[-1:]
        if c == "/" and (before == "" or before in "(,{!~&|;\n}"):
            j, in_class = i + 1, False
            while j < n and (program[j] != "/" or in_class):
                if program[j] == "\\":
                    j += 2
                    continue
                if program[j] == "[":
                    in_class = True
                elif program[j] == "]":
                    in_class = False
                j += 1
            if j >= n:
                return None
            code.append(f" R{len(regexes)} ")
            regexes.append(program[i + 1:j])
            i = j + 1
            continue
        code.append(c)
        i += 1
    return "".join(code), strings, regexes


def path_lookup_chars(path: object, name: str) -> Optional[frozenset]:
    """The characters of where a PATH look-up finds NAME (`which NAME`, `command -v NAME`): a
    folder of PATH (`path`, the variable's value) and the name; None when PATH is not known text."""
    if not isinstance(path, str):
        return None
    return frozenset(path.replace(":", "")) | frozenset(name) | {"/"}


# --- tr -------------------------------------------------------------------------------------

_TR_CLASSES = {
    "alnum": string.ascii_letters + string.digits, "alpha": string.ascii_letters, "digit": string.digits,
    "lower": string.ascii_lowercase, "upper": string.ascii_uppercase, "space": " \t\n\r\f\v",
    "blank": " \t", "punct": string.punctuation, "xdigit": string.hexdigits,
}
_TR_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "b": "\b", "\\": "\\"}


def tr_set(spec: str) -> Optional[str]:
    """The characters of a `tr` set, in order (`a-z`, `[:digit:]`, `\\n`, `\\NNN`); None for what
    this does not read (`[c*n]`, `[=c=]`, an empty set)."""
    out: list[str] = []
    i, n = 0, len(spec)
    while i < n:
        m = re.match(r"\[:([a-z]+):\]", spec[i:])
        if m:
            if m.group(1) not in _TR_CLASSES:
                return None
            out.append(_TR_CLASSES[m.group(1)])
            i += m.end()
            continue
        if spec[i] == "[" and re.match(r"\[.\*|\[=", spec[i:]):
            return None
        c, i = _tr_char(spec, i)
        if i + 1 < n and spec[i] == "-":
            hi, j = _tr_char(spec, i + 1)
            if ord(hi) < ord(c) or ord(hi) - ord(c) > MAX_RANGE:
                return None
            out.append("".join(chr(k) for k in range(ord(c), ord(hi) + 1)))
            i = j
            continue
        out.append(c)
    return "".join(out) or None


def _tr_char(spec: str, i: int) -> tuple[str, int]:
    if spec[i] == "\\" and i + 1 < len(spec):
        m = re.match(r"[0-7]{1,3}", spec[i + 1:])
        if m:
            return chr(int(m.group(0), 8)), i + 1 + m.end()
        return _TR_ESCAPES.get(spec[i + 1], spec[i + 1]), i + 2
    return spec[i], i + 1


# --- shell text with holes ------------------------------------------------------------------

# The variable a read hole becomes (`${__infx_hole_<token>_0}`). The token is drawn once per
# process: text a PR wrote cannot name the variable to assign it (`${!prefix*}` does not list
# it: recipes.launch.expand), and no effect holds a name, only the values.
HOLE_PREFIX = "__infx_hole_"
HOLE_VARIABLE = f"{HOLE_PREFIX}{secrets.token_hex(6)}_{{}}"
_PLACEHOLDER = "INFXHOLE{}X"


def fill(template: str, holes: tuple, parse: Callable[[str], Any], first: int = 0
         ) -> "tuple[str, dict[str, Unknown]] | str":
    """Shell text with holes as text the interpreter can run: each hole where its characters
    cannot change the parse becomes a variable holding that unknown value (`'...'"${V}"'...'`
    inside single quotes, `${V}` inside double quotes, `"${V}"` in a plain word), with those
    variables (numbered from `first`: each text read in a trace has its own, as a function it
    defines may run after another text's). Else why not: the first hole that may change the
    text's structure."""
    if template.count(HOLE) != len(holes) or not holes:
        return "its unknown parts are not in their places"
    pieces = template.split(HOLE)
    if any(_PLACEHOLDER.format(i) in template for i in range(len(holes))) or "IFS" in template:
        # A placeholder the text already holds, or a text that may change how words split.
        return "it names what its unknown parts would be read as"
    probe = "".join(p + (_PLACEHOLDER.format(i) if i < len(holes) else "") for i, p in enumerate(pieces))
    tree, src = parse(probe)
    starts = []
    pos = 0
    for i, p in enumerate(pieces[:-1]):
        pos += len(p.encode("utf-8"))
        starts.append(pos)
        pos += len(_PLACEHOLDER.format(i).encode("utf-8"))
    out: list[str] = []
    variables: dict[str, Unknown] = {}
    for i, hole in enumerate(holes):
        start = starts[i]
        end = start + len(_PLACEHOLDER.format(i))
        node = _deepest(tree.root_node, start, end)
        before = pieces[i][-1:] if pieces[i] else (src[start - 1:start].decode("utf-8", "replace") if start else "")
        how = _place(node, hole, before, src)
        if isinstance(how, str) and how.startswith("!"):
            return f"{hole.why} stands {how[1:]}"
        name = HOLE_VARIABLE.format(first + i)
        variables[name] = hole
        out.append(pieces[i] + how.format(name))
    out.append(pieces[-1])
    return "".join(out), variables


def _deepest(node: Any, start: int, end: int) -> Any:
    while True:
        inner = next((c for c in node.children if c.start_byte <= start and end <= c.end_byte), None)
        if inner is None:
            return node
        node = inner


# Node types no hole may stand in, wherever it is below them: arithmetic reads names and
# operators, a regular expression, a here-document, a comment, what did not parse, a `${...}`
# (its offsets are arithmetic), an array index.
_NO_HOLE = ("arithmetic_expansion", "arithmetic_expression", "regex", "heredoc_body", "heredoc_content",
            "heredoc_redirect", "comment", "ERROR", "ansi_c_string", "translated_string", "test_operator",
            "expansion", "subscript")


def _place(node: Any, hole: Unknown, before: str, src: bytes) -> str:
    """How a hole is written so that the interpreter reads it as its value (a format with `{}`
    for the variable's name), or `!` and why it may change the text."""
    chars = hole.chars if hole.chars is not None else None
    if chars is None:
        return "!where its characters are not known"
    up = node
    while up is not None:
        if up.type in _NO_HOLE or up.type == "command_name" or (
                up.parent is not None and up.parent.type == "function_definition" and up.type == "word"):
            return f"!in {_named(up.type)}, where it may change the text"
        up = up.parent
    if before in ("\\", "$", "~"):
        return f"!after `{before}`, where it may change the text"
    if node.type == "raw_string":
        bad = chars & _NOT_IN_SINGLE
        return f"!inside single quotes and may hold {_shown(bad)}" if bad else "'\"${{{}}}\"'"
    if node.type == "string_content" or (node.type == "string" and node.start_byte < node.end_byte):
        bad = chars & _NOT_IN_DOUBLE
        return f"!inside double quotes and may hold {_shown(bad)}" if bad else "${{{}}}"
    if node.type == "word":
        whole = node
        while whole.parent is not None and whole.parent.type in ("concatenation", "brace_expression", "word"):
            whole = whole.parent
        text = src[whole.start_byte:whole.end_byte].decode("utf-8", "replace")
        if "{" in text or "}" in text:
            return "!in a word with braces, where it may change the text"
        bad = chars - (_PLAIN_WORD | {","})
        return f"!in a plain word and may hold {_shown(bad)}" if bad else "\"${{{}}}\""
    return f"!in {_named(node.type)}, where it may change the text"


def _named(node_type: str) -> str:
    name = node_type.replace("_", " ")
    return ("an " if name[0] in "aeiou" else "a ") + name


def _shown(chars: frozenset) -> str:
    names = {"\n": "a newline", " ": "a blank", "\t": "a tab", "`": "a backtick"}
    picked = sorted(chars)[:4]
    return ", ".join(names.get(c, f"`{c}`") for c in picked) + (" and more" if len(chars) > 4 else "")


def words_chars(values: list) -> Optional[frozenset]:
    """The characters the words of `values` hold (texts, unknowns, arrays of them; None, an unset
    variable, holds none), when each word's are known: what an array the arms of a branch left
    different holds (`( $(seq 1 $N) )` in one arm, numbers in another, unset in a third)."""
    out: set[str] = set()
    for value in values:
        for w in value if isinstance(value, list) else () if value is None else (value,):
            if isinstance(w, (OneOf, OneOfRest)) and w.values:
                # Each of the values an undecided branch left (a text, or a run of words).
                got = words_chars([list(v) if isinstance(v, tuple) else v for v in w.values])
            else:
                got = chars_of(w) if isinstance(w, (str, Unknown)) else None
            if got is None:
                return None
            out |= got
    return frozenset(out)


# What a hole of a YAML file's text may hold and still leave the file's keys and other values
# as they are, when it stands in a `key: value` line's value (`batch_sizes: [$(seq ...)]`):
# numbers and the commas and blanks between them. No newline, comment, quote, bracket, colon,
# anchor, tag or block indicator can then start or end anything around it.
YAML_VALUE_HOLE = DIGITS | frozenset("-+., ")
_YAML_VALUE_LINE = re.compile(r"[ \t]*(?:- )?[A-Za-z0-9_.-]+:[ \t]+(?P<value>.*)")


def yaml_fill(value: Any, placeholder: str) -> Optional[str]:
    """A YAML text with holes (`words.Holed`, a here-document the launch writes) as text with
    `placeholder` for each hole, when every hole holds only YAML_VALUE_HOLE and stands in the
    value of a one-line `key: value` (after its colon): the text then has the same keys and,
    but for the values holding a placeholder, the same values. None otherwise (a hole that may
    hold any character, or stands in a key, an indentation or a line of its own)."""
    if not getattr(value, "holes", None) or value.template.count(HOLE) != len(value.holes):
        return None
    if any(h.chars is None or not h.chars <= YAML_VALUE_HOLE for h in value.holes):
        return None
    for line in value.template.split("\n"):
        if HOLE in line:
            m = _YAML_VALUE_LINE.fullmatch(line)
            if m is None or HOLE in line[: m.start("value")]:
                return None
    return value.template.replace(HOLE, placeholder)
