"""Shell branch conditions over a point's variables (rule 4 of recipes.launch.path.launch_path for top-level
code, and the runner's choices in recipes.launch.path.srt_checkout): whether the condition the bash walker
recorded for a command (`[[ $FRAMEWORK == x && ... ]]`, negated earlier branches of
an elif chain, `X matches P` case arms) holds for the variables the sweep sets. Three-valued:
a test the bot cannot evaluate (a file test, a command) is unknown, never guessed."""
from __future__ import annotations

import functools
import re
from typing import Any

from recipes.identity import by_identity

_TEST = re.compile(r"(\[\[?)\s+(.*?)\s+\]\]?")
_CMP = re.compile(r"""^!?\s*"?\$\{?([A-Za-z_]\w*)(?::?-[^}"]*)?\}?"?\s*(==|=|!=)\s*(.+?)\s*$""")
# The subject starts a run of non-blanks (the lookbehind): without it each position of a long
# run was tried, and each try read the rest of the run (quadratic).
_MATCHES = re.compile(r"""(?<!\S)(\S+) matches (\S+)""")
# `[ "$N" -gt 0 ]`: an integer test of a variable against a written integer.
_NUM = re.compile(r"""^!?\s*"?\$\{?([A-Za-z_]\w*)(?::?-[^}"]*)?\}?"?\s+-(eq|ne|gt|ge|lt|le)\s+(["']?)(-?\d+)\3\s*$""")
_INT = re.compile(r"^[+-]?\d+$")
# `[ "$NODE_RANK" -lt "$NODE_OFFSET" ]`: an integer test of two variables (it reads nothing else).
_NUM_OF_VARS = re.compile(r"""^!?\s*"?\$\{?[A-Za-z_]\w*\}?"?\s+-(eq|ne|gt|ge|lt|le)\s+"?\$\{?[A-Za-z_]\w*\}?"?\s*$""")
VAR_REF = re.compile(r"\$\{?([A-Za-z_]\w*)\}?")  # `$NAME` or `${NAME}`, matched whole
# `${NAME}` (group 1) or `$NAME` (group 2) inside a text (not `${NAME:-d}`, whose name VAR_REF finds).
NAME_REF = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
_NUM_OPS = {"eq": int.__eq__, "ne": int.__ne__, "gt": int.__gt__, "ge": int.__ge__, "lt": int.__lt__, "le": int.__le__}
_GROUP_OPEN = re.compile(r"(?<!\S)\{\s+")
_GROUP_CLOSE = re.compile(r";\s*\}(?!\S)")
# Grouping and negation a `[[ ]]` test writes around one comparison (`( ! ( "$A" == x`), and the
# closing parentheses after it (` )) `; a parenthesis inside quotes is the value's).
_LEAD = re.compile(r"^(?:\s*(?:\(|!(?=[\s(])))*\s*")
_TRAIL = re.compile(r"(?:\s*\))*\s*$")


def _atom(text: str, env: dict[str, str]) -> bool | None:
    """One `$VAR == value` comparison, or None when it is not one over a known variable."""
    import fnmatch

    m = _CMP.match(text.strip())
    if not m:
        return _integer_atom(text, env)
    if m.group(1) not in env:
        return None
    written = m.group(3).strip()
    want = written.strip("'\"")
    if "$" in want or "`" in want:
        return None
    quoted = written[:1] in "'\"" and written != want
    got = env[m.group(1)] == want if quoted else fnmatch.fnmatchcase(env[m.group(1)], want)
    neg = text.strip().startswith("!")
    res = got if m.group(2) != "!=" else not got
    return not res if neg else res


def _integer_atom(text: str, env: dict[str, str]) -> bool | None:
    """`$N -gt 0` (-eq, -ne, -gt, -ge, -lt, -le) when N holds a plain integer; a value that is
    not one (bash would read it as an arithmetic expression, or fail) is unknown."""
    m = _NUM.match(text.strip())
    if not m or m.group(1) not in env or not _INT.match(env[m.group(1)].strip()):
        return None
    res = _NUM_OPS[m.group(2)](int(env[m.group(1)].strip()), int(m.group(4)))
    return not res if text.strip().startswith("!") else res


def evaluate_condition(cond: str, env: dict[str, str]) -> bool | None:
    """Whether a recorded shell condition (if/elif/else chains, `X matches P` case arms) holds
    for these variables: True, False, or None when it depends on something else.

    A condition deep in an elif chain repeats every earlier branch's test (`! ( a ) && ! ( b )
    && c`): its top-level conjuncts are evaluated one by one, each once per set of variables."""
    return _evaluate_conjuncts(cond, tuple(sorted(env.items())))


# Kept by condition and variables: every point of a launch path asks about the same changed
# lines' conditions, with one of a few sets of variables.
@functools.lru_cache(maxsize=65536)
def _evaluate_conjuncts(cond: str, items: tuple[tuple[str, str], ...]) -> bool | None:
    cond = _ungroup(cond)
    parts = conjuncts(cond)
    if len(parts) == 1:
        return _evaluate_condition(cond, _named(cond, items))
    result: bool | None = True
    for part in parts:
        value = _evaluate_condition(part, _named(part, items))
        if value is False:
            return False
        if value is None:
            result = None
    return result


def variables_read(text: str, env: dict[str, str]) -> dict[str, str]:
    """The variables of `env` that conditions written in `text` can read: `evaluate_condition`
    reads a variable only where a `$NAME` or `${NAME...}` refers to it (a comparison, an integer
    test, a case subject), so one the text never refers to cannot change its value (`$MODEL_PREFIX`
    does not refer to MODEL)."""
    names = _referenced(text)
    return {k: v for k, v in env.items() if k in names}


@functools.lru_cache(maxsize=256)
def _referenced(text: str) -> frozenset[str]:
    return frozenset(VAR_REF.findall(text))


def _ungroup(cond: str) -> str:
    """`{ a || b; }` groups written like `( a || b )`."""
    return _GROUP_OPEN.sub("( ", _GROUP_CLOSE.sub(" )", cond))


def _named(text: str, items: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The variables a condition's text can read (`variables_read`'s rule), so that points
    differing in others share one evaluation: every point of a runner differs in EXP_NAME."""
    names = _referenced(text)
    return tuple(kv for kv in items if kv[0] in names)


@functools.lru_cache(maxsize=4096)
def reads_only_variables(cond: str) -> bool:
    """Whether a condition is made only of comparisons of variables with written values (`[[ $A ==
    x ]]`, `[ "$N" -gt 0 ]`, `$A matches P`), negations, groups and `&&`/`||`: its truth then depends
    on nothing but those variables' values (no file test, no command)."""
    cond = _ungroup(cond)
    for m in _TEST.finditer(cond):
        for part in re.split(r"\s*(?:&&|\|\|)\s*", m.group(2)):
            lead = _LEAD.match(part).group(0)
            trail = _TRAIL.search(part[len(lead):]).group(0)
            body = part[len(lead):len(part) - len(trail)].strip()
            cmp = _CMP.match(body)
            if not (cmp and "$" not in cmp.group(3) and "`" not in cmp.group(3)) and not _NUM.match(body) \
                    and not _NUM_OF_VARS.match(body):
                return False
    if any(not VAR_REF.fullmatch(m.group(1).strip("'\"")) for m in _MATCHES.finditer(cond)):
        return False
    rest = _MATCHES.sub(" ", _TEST.sub(" ", cond))
    return re.fullmatch(r"(?:\s|!|\(|\)|&&|\|\|)*", rest) is not None


@functools.lru_cache(maxsize=4096)
def conjuncts(cond: str) -> tuple[str, ...]:
    """`cond` split at its top-level ` && ` (outside parentheses, `[[ ]]` and quotes): the
    enclosing branches' tests of a recorded condition, outermost first (`if a && b` gives two)."""
    parts, depth, quote, start, i = [], 0, "", 0, 0
    while i < len(cond):
        ch = cond[i]
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif cond.startswith("[[", i) or ch == "(":
            depth += 1
            i += 1 if ch == "(" else 2
            continue
        elif cond.startswith("]]", i) or ch == ")":
            depth -= 1
            i += 1 if ch == ")" else 2
            continue
        elif depth == 0 and cond.startswith(" && ", i):
            parts.append(cond[start:i])
            i += 4
            start = i
            continue
        i += 1
    if depth != 0 or quote:
        return (cond,)  # unbalanced: evaluated whole, as before
    parts.append(cond[start:])
    return tuple(p for p in parts if p.strip()) or (cond,)


def _kleene(tokens: list[str], atoms: list[bool | None]) -> bool | None:
    """`tokens` (`_aN`, and, or, not, parentheses; Python's precedence) in three-valued logic,
    an unknown atom being None. Every atom occurs once in a condition (each test is its own
    atom), and for such read-once formulas this is exactly "the value every assignment of the
    unknowns gives, or None". Raises ValueError on a malformed sequence."""
    pos = 0

    def peek() -> str | None:
        return tokens[pos] if pos < len(tokens) else None

    def take() -> str:
        nonlocal pos
        if pos >= len(tokens):
            raise ValueError("condition ends early")
        pos += 1
        return tokens[pos - 1]

    def disjunction(depth: int) -> bool | None:
        value = conjunction(depth)
        while peek() == "or":
            take()
            right = conjunction(depth)
            value = True if value is True or right is True else (None if value is None or right is None else False)
        return value

    def conjunction(depth: int) -> bool | None:
        value = negation(depth)
        while peek() == "and":
            take()
            right = negation(depth)
            value = False if value is False or right is False else (None if value is None or right is None else True)
        return value

    def negation(depth: int) -> bool | None:
        if depth > MAX_CONDITION_DEPTH:
            raise ValueError("condition nested too deeply")
        tok = take()
        if tok == "not":
            inner = negation(depth + 1)
            return None if inner is None else not inner
        if tok == "(":
            inner = disjunction(depth + 1)
            if take() != ")":
                raise ValueError("unbalanced parentheses")
            return inner
        if tok.startswith("_a"):
            return atoms[int(tok[2:])]
        raise ValueError(f"unexpected {tok!r}")

    value = disjunction(0)
    if pos != len(tokens):
        raise ValueError("trailing tokens")
    return value


MAX_CONDITION_DEPTH = 200


def _subject(subject: str, env: dict[str, str]) -> str | None:
    """The word a `case` tests, with its plain `$NAME` / `${NAME}` parts substituted
    (`"${MODEL_NAME}:${DECODE_MTP_SIZE}"`); None when one is not known or another expansion
    (a default, a command) is left, or when it names no variable."""
    missing = False

    def sub(m: re.Match) -> str:
        nonlocal missing
        name = m.group(1) or m.group(2)
        if name not in env:
            missing = True
            return ""
        return env[name]

    value = NAME_REF.sub(sub, subject)
    if value == subject:
        return None  # a literal word: not a test of the point's variables (left unknown)
    if missing or "$" in NAME_REF.sub("", subject) or "`" in subject:
        return None
    return value


@functools.lru_cache(maxsize=8192)
def _evaluate_condition(cond: str, env_items: tuple[tuple[str, str], ...]) -> bool | None:
    # Every point of a config asks about the same conditions with the same few variables.
    import fnmatch

    env = dict(env_items)
    atoms: list[bool | None] = []

    def test(m: re.Match) -> str:
        inner = m.group(2)
        parts = re.split(r"\s*(&&|\|\|)\s*", inner)
        out = []
        for part in parts:
            if part in ("&&", "||"):
                out.append(" and " if part == "&&" else " or ")
                continue
            # `[[ a && ( b || ! ( c ) ) ]]`: grouping and negation around a comparison.
            lead = _LEAD.match(part).group(0)
            trail = _TRAIL.search(part[len(lead):]).group(0)
            body = part[len(lead):len(part) - len(trail)]
            out.extend(" not " if ch == "!" else " ( " for ch in lead if ch in "!(")
            atoms.append(_atom(body, env))
            out.append(f" _a{len(atoms) - 1} ")
            out.append(" ) " * trail.count(")"))
        return "(" + "".join(out) + ")"

    def case(m: re.Match) -> str:
        value = _subject(m.group(1).strip("'\""), env)
        if value is not None:
            atoms.append(any(fnmatch.fnmatchcase(value, p.strip("'\"")) for p in m.group(2).split("|")))
        else:
            atoms.append(None)
        return f" _a{len(atoms) - 1} "

    expr = _MATCHES.sub(case, _TEST.sub(test, cond))
    expr = expr.replace("&&", " and ").replace("||", " or ")
    expr = re.sub(r"(?<![\w])!\s*", " not ", expr)
    tokens = re.findall(r"_a\d+|and|or|not|\(|\)|\S+", expr)
    cleaned: list[str] = []
    for tok in tokens:
        if re.fullmatch(r"_a\d+|and|or|not|\(|\)", tok):
            cleaned.append(tok)
        else:  # a command used as a condition (`command -v x`): unknown
            atoms.append(None)
            cleaned.append(f"_a{len(atoms) - 1}")
    # Adjacent atoms (a command's words) collapse into one unknown.
    merged: list[str] = []
    for tok in cleaned:
        if merged and tok.startswith("_a") and merged[-1].startswith("_a"):
            atoms[int(merged[-1][2:])] = None
            continue
        merged.append(tok)
    try:
        return _kleene(merged, atoms)
    except ValueError:  # e.g. parentheses nested past the limit, or a shape the reduction garbled
        return None


# --- which changed lines of a script a point runs (launch_path rule 4 for top-level code) -----

def selected_lines(a: Any, change: Any, env: dict[str, str]) -> bool:
    """Whether any changed top-level line of a file (its analysis `a`, None when not shell; its
    recipes.launch.path.launch_path.FileChange) runs for a point with this env."""
    if a is None or not change.lines:
        return True
    conditions = _changed_line_conditions(a, change)
    return conditions is None or any(evaluate_condition(cond, env) is not False for cond in conditions)


@by_identity(4096)  # every point of a launch path asks
def _changed_line_conditions(a: Any, change: Any) -> tuple[str, ...] | None:
    """The branch conditions the changed top-level lines run under; None when one of them runs
    whatever the point's variables are (no condition, or a line no command covers: `fi`, a
    test line, ... may change which branch runs). A line no command covers inside a branch
    body (a nested `if`'s test, its `fi`) runs under that body's condition."""
    spans = [(c.line, max(c.end_line, c.line), c.condition) for c in a.commands if c.function is None]
    spans += [(loc.line, loc.line, loc.condition) for _, loc, _ in a.assignments if loc.function is None]
    found: list[str] | None = []
    for line in change.lines:
        if any(f.line <= line <= f.end_line for f in a.functions.values()):
            continue  # function bodies are attributed by function
        covering = [sp for sp in spans if sp[0] <= line <= sp[1]]
        if covering:
            cond = max(covering, key=lambda sp: sp[0])[2]
        else:  # the innermost branch body holding the line, if any
            bodies = [sp for sp in a.branches if sp[0] <= line <= sp[1]]
            cond = max(bodies, key=lambda sp: (sp[0], -sp[1]))[2] if bodies else None
        if cond is None:
            found = None
            break
        found.append(cond)
    return tuple(dict.fromkeys(found)) if found is not None else None
