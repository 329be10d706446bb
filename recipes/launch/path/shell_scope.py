"""How a runner-chosen launch chain's shell texts see their variables (recipes.launch.path.runner_launch).

A `Scope` is one text of the chain (a file, or a `bash -c` / container string) with what it
runs under: its working directory, the variables its caller passes (a lookup that returns the
value, None when unset, or raises `Unknown` when the bot cannot know it: a default
`${X:-d}` is then not taken), and, in a container, its repository mounts. A variable's value
at a line is the last top-level assignment before it on a branch that holds for the point
(recipes.launch.path.conditions.evaluate_condition), else the caller's; `${v%%p}`, `${v#p}`, `${v:-d}`,
`$(pwd)`, `$(dirname "$0")` and `$(cd DIR && pwd)` are evaluated. The checkout is the absolute
folder `REPO_ROOT`, mapped back to repository paths by `join_path`.
"""
from __future__ import annotations

import bisect
import functools
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from recipes.launch.path.conditions import NAME_REF, conjuncts, evaluate_condition, reads_only_variables
from recipes.wording import join
from recipes.identity import by_identity
from recipes.scripts import Bound, ScriptAnalysis, trim_pattern

# What `Scope.expand` may change in a word: a word without any of these is itself.
_SPECIAL_CHARS = frozenset("$'\"\\`")
_SPECIAL = re.compile("[" + re.escape("".join(sorted(_SPECIAL_CHARS))) + "]")
MSG_VAR_AMBIGUOUS = "{where} runs {ref}: ${name} is set in a branch the bot cannot decide ({lines})"


@dataclass
class Gap:
    """The hop the bot could not follow."""

    path: str
    line: int | None
    why: str


class Stop(Exception):
    def __init__(self, gap: Gap) -> None:
        super().__init__(gap.why)
        self.gap = gap

    def kept(self) -> "Stop":
        """This failure as a memo keeps it: without the traceback of where it was raised (whose
        frames hold the scope that holds the memo: a cycle only a full collection frees)."""
        self.__traceback__ = self.__context__ = self.__cause__ = None
        return self

    def again(self) -> "Stop":
        """A fresh copy of a kept failure to raise, so the kept one never carries a traceback."""
        fresh = type(self).__new__(type(self))
        fresh.__dict__.update(self.__dict__)
        fresh.args = self.args
        return fresh


class Unknown(Stop):
    """A variable whose value the bot cannot know (not unset: unknown), so a default
    (`${X:-d}`) is not taken for it."""

    def __init__(self, name: str) -> None:
        super().__init__(Gap("", None, f"${name} is not known"))
        self.name = name


# A caller's variables: the value, None when unset, Unknown raised when not knowable.
Lookup = Callable[[str], "str | None"]
_BY_NAME = "_runner_launch_assignments"
_CHANGE_POINTS = "_shell_scope_change_points"  # per analysis: `Scope._change_points`
_TOP_CONDITIONS = "_shell_scope_top_conditions"  # per analysis: `top_conditions`
_LINES = "_runner_launch_assignment_lines"  # per analysis: name -> sorted top-level assignment lines


@dataclass
class Scope:
    """Where a text runs: its file, working directory, the variables its caller passed, and
    the container mounts (container folder -> repository folder) when it runs in one."""

    path: str
    analysis: ScriptAnalysis
    cwd: str | None
    outer: Lookup
    mounts: dict[str, str | None] = field(default_factory=dict)
    lines: Sequence[str] = field(default_factory=list)
    offset: int = 0
    parent: "Scope | None" = None
    container: bool = False  # runs inside a container (sees only its -e variables and -v mounts)
    memo: dict = field(default_factory=dict, repr=False)  # (name, line, cwd) -> (ok, value or Stop)
    where_used: int = field(default=0, repr=False)  # decisions `_holds_where_used` made (memo keys)
    # The shell function whose body this scope reads (`call`): its own assignments, else the
    # caller's variables at the call; None for the text's top level.
    function: str | None = None

    def starts(self, line: int, word: str) -> bool:
        """Whether `line` starts with the command `word` (a `cd` inside `$(...)` does not)."""
        k = line - self.offset - 1
        text = self.lines[k].lstrip() if 0 <= k < len(self.lines) else ""
        return text == word or text.startswith(word + " ")

    def value(self, name: str, line: int, seen: frozenset = frozenset()) -> str | None:
        """The value of $name at `line`: the last assignment before it on a branch that holds
        for the point, else the caller's. Raises Stop when branches the bot cannot decide
        set it."""
        if (name, line) in seen:
            return None
        # The value depends on `line` only through which assignments come before it: lines
        # with the same ones share it (a failure keeps its own line, which its text names).
        lines = self._lines(name)
        shared = (name, -1 - bisect.bisect_left(lines, line), self.cwd)
        hit = self.memo.get(shared) or self.memo.get((name, line, self.cwd))
        if hit is None:
            used = self.where_used
            try:
                hit = (True, self._value(name, line, seen | {(name, line)}))
            except Stop as stop:
                hit = (False, stop.kept())
            # A value decided by the branch the use shares with the assignment (`_holds_where_used`)
            # holds at this line only.
            self.memo[shared if hit[0] and self.where_used == used else (name, line, self.cwd)] = hit
        if hit[0]:
            return hit[1]
        raise hit[1].again()

    def _lines(self, name: str) -> list[int]:
        by_function = self.analysis.__dict__.setdefault(_LINES, {})
        index = by_function.get(self.function)
        if index is None:
            index = {}
            for n, loc, _ in self.analysis.assignments:
                if loc.function == self.function:
                    index.setdefault(n, []).append(loc.line)
            index = by_function[self.function] = {n: sorted(v) for n, v in index.items()}
        return index.get(name, [])

    def _value(self, name: str, line: int, seen: frozenset) -> str | None:
        by_function = self.analysis.__dict__.setdefault(_BY_NAME, {})
        index = by_function.get(self.function)
        if index is None:
            index = by_function[self.function] = {}
            for n, loc, _ in self.analysis.assignments:
                if loc.function == self.function:
                    index.setdefault(n, []).append(loc)
        cands = [loc for loc in index.get(name, ()) if loc.line < line]
        undecided: list[int] = []
        for loc in reversed(cands):
            holds = self.holds(loc.condition, loc.line, seen)
            if holds is None:
                holds = self._holds_where_used(loc, line, seen)
            if holds is False:
                continue
            if holds is None:
                undecided.append(loc.line)
                continue
            if undecided:
                raise Stop(Gap(self.path, undecided[0], MSG_VAR_AMBIGUOUS.format(
                    where=f"{self.path}:{line}", ref=f"${name}", name=name, lines=join(undecided, None))))
            return self.expand(loc.value, loc.line, seen)
        if undecided:
            raise Stop(Gap(self.path, undecided[0], MSG_VAR_AMBIGUOUS.format(
                where=f"{self.path}:{line}", ref=f"${name}", name=name, lines=join(undecided, None))))
        if name == "PWD" and self.cwd is not None:
            return absolute(self.cwd)
        return self.outer(name)

    def _holds_where_used(self, loc: Any, line: int, seen: frozenset) -> bool | None:
        """Whether an assignment whose branch the point's values cannot decide held, given that
        the use at `line` runs: the tests the two lines' conditions start with (`if [ "$NODE_RANK"
        -eq 0 ]` around both `export IS_MTP=true` and `eval "$BENCH_CMD"`) hold at the use, so
        they held at the assignment when they read only variables that nothing in between can
        change (no assignment of them between the lines or in a function, no `source` between);
        the rest of the assignment's condition is then evaluated. None when that does not decide."""
        use = top_conditions(self.analysis).get(line) if self.function is None else None
        if not use or not loc.condition:
            return None
        mine, theirs = conjuncts(loc.condition), conjuncts(use)
        k = 0
        while k < min(len(mine), len(theirs)) and mine[k] == theirs[k]:
            k += 1
        if k == 0 or not reads_only_variables(" && ".join(mine[:k])):
            return None
        names = set(_cond_names(" && ".join(mine[:k])))
        in_functions, sources = self._change_points()
        if names & in_functions or _any_between(sources, loc.line, line):
            return None
        if any(_any_between(self._lines(n), loc.line, line) for n in names):
            return None
        rest = " && ".join(mine[k:])
        result = self.holds(rest, loc.line, seen) if rest else True
        if result is not None:
            self.where_used += 1
        return result

    def _change_points(self) -> tuple[frozenset[str], list[int]]:
        """The names some function of this text assigns, and the lines of its `source`s."""
        found = self.analysis.__dict__.get(_CHANGE_POINTS)
        if found is None:
            a = self.analysis
            found = (frozenset(n for n, loc, _ in a.assignments if loc.function is not None),
                     sorted(src.line for src in a.sources))
            a.__dict__[_CHANGE_POINTS] = found
        return found

    def call(self, function: str, args: list[str], line: int) -> "Scope":
        """The scope of `function`'s body as the command at `line` of this text calls it with the
        words `args` (as written): `$1`.. are those words read here, any other variable the
        body does not set is this text's at the call (bash's dynamic scope). A word the bot
        cannot know makes its parameter unknown, not empty."""
        def outer(name: str) -> str | None:
            if name.isdigit():
                k = int(name)
                if k == 0:
                    return absolute(self.path)
                if k > len(args):
                    return None
                value = self.expand(args[k - 1], line)
                if value is None:
                    raise Unknown(name)
                return value
            return self.value(name, line)

        return Scope(self.path, self.analysis, self.cwd, outer, mounts=self.mounts, lines=self.lines,
                     offset=self.offset, parent=self, container=self.container, function=function)

    def raw(self, name: str, line: int) -> list[str]:
        """The texts, as written, $name may hold at `line`: its top-level assignments before it
        back to the last on a branch that surely holds (this text's, then the enclosing
        text's), skipping branches that do not hold; [] when there is none."""
        out: list[str] = []
        scope: Scope | None = self
        while scope is not None:
            for n, loc, _ in reversed(scope.analysis.assignments):
                if n != name or loc.function is not None or loc.line >= line:
                    continue
                holds = scope.holds(loc.condition, loc.line)
                if holds is not False:
                    out.append(loc.value)
                if holds is True:
                    return out
            scope = scope.parent
        return out

    def holds(self, cond: str | None, line: int, seen: frozenset = frozenset()) -> bool | None:
        if not cond:
            return True
        names = _cond_names(cond)
        # Like a value, a condition's truth depends on `line` only through which assignments
        # of its variables come before it.
        key = ("holds", cond, tuple(bisect.bisect_left(self._lines(n), line) for n in names), self.cwd)
        hit = self.memo.get(key) if not seen else None
        if hit is not None:
            return hit[0]
        env: dict[str, str] = {}
        for name in names:
            try:
                v = self.value(name, line, seen)
            except Stop:
                v = None
            if v is not None:
                env[name] = v
        result = evaluate_condition(cond, env)
        if not seen:
            self.memo[key] = (result,)
        return result

    def expand(self, text: str, line: int, seen: frozenset = frozenset(), *, keep: bool = False,
               defer: bool = False) -> str | None:
        """`text` with its variables substituted and quotes removed (one shell word); None
        when a part is only known at run time (a command substitution, an unknown variable).
        With `keep`, such a part stays as written: a string another shell reads again
        (`bash -c "..."`, a container's), where it is looked up in its turn; with `defer`,
        every `$` part stays (only quotes are removed), for a host shell started by this one."""
        text = text.strip()
        if not _SPECIAL.search(text):
            return text  # nothing to substitute or unquote
        out, i = [], 0
        quote = None
        n = len(text)
        while i < n:
            ch = text[i]
            if quote == "'":  # everything up to the closing quote is literal
                j = text.find("'", i)
                if j < 0:
                    out.append(text[i:])
                    break
                out.append(text[i:j])
                quote = None
                i = j + 1
                continue
            if ch not in _SPECIAL_CHARS:  # a run of literal characters, copied at once
                m = _SPECIAL.search(text, i)
                j = m.start() if m else n
                out.append(text[i:j])
                i = j
                continue
            if ch in "'\"" and (quote is None or quote == ch):
                quote = None if quote else ch
                i += 1
                continue
            if ch == "\\" and i + 1 < len(text):
                nxt = text[i + 1]
                if quote == '"' and nxt not in '$`"\\\n':
                    out.append(text[i:i + 2])  # inside double quotes a backslash escapes only $ ` " \ newline
                elif nxt != "\n":
                    out.append(nxt)
                elif keep:
                    out.append("\\\n")  # a continuation the inner shell reads the same; lines stay
                i += 2
                continue
            if ch == "`":
                if not keep:
                    return None
                out.append(ch)
                i += 1
                continue
            if ch == "$" and defer:
                # Left for the inner shell, which sees the same values through its caller (a
                # host shell it starts), and the text stays the same for every point.
                end = _token_end(text, i)
                out.append(text[i:end])
                i = end
                continue
            if ch == "$":
                start = i
                try:
                    if text.startswith("$(", i):
                        v, i = self._command_sub(text, i, line, seen)
                    elif text.startswith("${", i):
                        end = _closing(text, i + 1)
                        if end < 0:
                            return None if not keep else "".join(out) + text[i:]
                        v, i = self._param(text[i + 2:end], line, seen), end + 1
                    else:
                        m = re.match(r"\$([A-Za-z_]\w*|[0-9])", text[i:])
                        if not m:
                            out.append(ch)
                            i += 1
                            continue
                        v = absolute(self.path) if m.group(1) == "0" else self.value(m.group(1), line, seen)
                        i += m.end()
                except Stop:  # unknown, or set on a branch the bot cannot decide
                    if not keep:
                        raise
                    v = None
                    i = _token_end(text, start)
                if v is None:
                    if not keep:
                        return None
                    v = text[start:i]
                out.append(v)
                continue
            out.append(ch)
            i += 1
        return "".join(out)

    def _param(self, inner: str, line: int, seen: frozenset) -> str | None:
        m = re.match(r"([A-Za-z_]\w*|[0-9]+)(.*)$", inner, re.S)
        if not m:
            return None
        name, rest = m.group(1), m.group(2)
        value = self.value(name, line, seen)
        if not rest:
            return value
        op = re.match(r"(:?-|##?|%%?)(.*)$", rest, re.S)
        if not op:
            return None
        kind, arg = op.group(1), op.group(2)
        if kind in (":-", "-"):
            if value is None or (kind == ":-" and value == ""):
                return self.expand(arg, line, seen)
            return value
        pattern = self.expand(arg, line, seen) if arg else ""
        if value is None or pattern is None:
            return None
        try:
            return trim_pattern(value, kind, pattern)
        except Bound:
            return None  # over the trim bound: not a value the chain can know

    def _command_sub(self, text: str, i: int, line: int, seen: frozenset) -> tuple[str | None, int]:
        """`$(dirname "$0")`, `$(pwd)` and `$(cd "DIR" && pwd)`: the only substitutions that
        name a folder the bot can know."""
        end = _closing(text, i + 1, "(", ")")
        if end < 0:
            return None, len(text)
        body = text[i + 2:end].strip()
        if body == "pwd":
            return (absolute(self.cwd) if self.cwd is not None else None), end + 1
        m = re.fullmatch(r"""dirname\s+(?:"\$(?:0|\{0\}|\{BASH_SOURCE(?:\[0\])?\}|BASH_SOURCE)"|\$0)""", body)
        if m:
            return absolute(posixpath.dirname(self.path)), end + 1
        m = re.fullmatch(r"""cd\s+(.+?)\s*(?:&&|;)\s*pwd(?:\s+-P)?""", body, re.S)
        if m:
            target = self.expand(m.group(1), line, seen)
            folder = join_path(self.cwd, target) if target is not None else None
            return (absolute(folder) if folder is not None else None), end + 1
        return None, end + 1


def top_conditions(a: ScriptAnalysis) -> dict[int, str | None]:
    """Line -> the condition the top-level command or assignment written there runs under (a
    command's, else the last assignment's of the line), computed once per text."""
    index = a.__dict__.get(_TOP_CONDITIONS)
    if index is None:
        index = {loc.line: loc.condition for _, loc, _ in a.assignments if loc.function is None}
        index.update((c.line, c.condition) for c in a.commands if c.function is None)
        a.__dict__[_TOP_CONDITIONS] = index
    return index


def _any_between(lines: list[int], after: int, before: int) -> bool:
    """Whether the sorted `lines` hold one strictly between `after` and `before`."""
    i = bisect.bisect_right(lines, after)
    return i < len(lines) and lines[i] < before


@functools.lru_cache(maxsize=4096)
def _cond_names(cond: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(m.group(1) or m.group(2) for m in NAME_REF.finditer(cond)))


def _token_end(text: str, start: int) -> int:
    """The end of the `$...` token at `start` (`$NAME`, `${...}`, `$(...)`)."""
    if text.startswith("$(", start):
        end = _closing(text, start + 1, "(", ")")
    elif text.startswith("${", start):
        end = _closing(text, start + 1)
    else:
        m = re.match(r"\$([A-Za-z_]\w*|[0-9])", text[start:])
        return start + (m.end() if m else 1)
    return len(text) if end < 0 else end + 1


def _closing(text: str, start: int, open_: str = "{", close: str = "}") -> int:
    depth = 0
    for j in range(start, len(text)):
        if text[j] == open_:
            depth += 1
        elif text[j] == close:
            depth -= 1
            if depth == 0:
                return j
    return -1


# The checkout as the scripts see it (`$GITHUB_WORKSPACE`, `$(pwd)`): an absolute path the bot
# maps back to repository paths.
REPO_ROOT = "/__checkout__"


def join_path(cwd: str | None, target: str) -> str | None:
    """A repository path from a folder and a path (relative, or under the checkout's absolute
    root); None when it leaves the tree or is another absolute path."""
    if target.startswith(REPO_ROOT):
        p = posixpath.normpath(target)
        if p == REPO_ROOT:
            return ""
        return p[len(REPO_ROOT) + 1:] if p.startswith(REPO_ROOT + "/") else None
    if target.startswith("/") or cwd is None:
        return None
    p = posixpath.normpath(posixpath.join(cwd, target)) if cwd not in ("", ".") else posixpath.normpath(target)
    if p == ".":
        return ""
    return None if p.startswith("..") else p


def absolute(path: str) -> str:
    return f"{REPO_ROOT}/{path}" if path else REPO_ROOT


def array_elements(scope: Scope | None, name: str, line: int) -> list[str] | None:
    """The elements of array `name` as the script defines it for the point (None: unknown)."""
    while scope is not None:
        elems = scope.analysis.arrays.get(name)
        if elems:
            out = []
            for e in elems:
                holds = scope.holds(e.condition, e.line)
                if holds is None:
                    return None
                if holds:
                    out.append(e.value)  # as written: the analyser's resolution ignores the caller's values
            if not out:
                return None  # only another branch's definition was recorded
            return out
        scope = scope.parent
    return None


def file_lines(src: Any, path: str) -> tuple[str, ...]:
    """A file's lines, decoded once per source view: every chain walk of a review reads the
    same runner and server scripts again."""
    known = _lines_of(src)
    found = known.get(path)
    if found is None:
        try:
            data = src.read(path)
        except Exception:  # noqa: BLE001 - an unreadable file has no lines the walk can read
            return ()
        found = known[path] = tuple(data.decode("utf-8", "replace").splitlines()) if data else ()
    return found


@by_identity(16)
def _lines_of(src: Any) -> dict[str, tuple[str, ...]]:
    """The decoded lines of one source view's files (filled lazily by `file_lines`)."""
    return {}


def try_expand(scope: Scope, text: str, line: int) -> str | None:
    try:
        return scope.expand(text, line)
    except Stop:
        return None


MISSING = object()  # a variable the point does not set (the walk asked; it was unknown)


class RootLookup:
    """The variables the sweep sets, as the runner scripts see them: the value, or `Unknown`
    for one the sweep does not set (only known at run time). Records what was asked."""

    def __init__(self, env: dict[str, str]) -> None:
        self.env = env
        self.asked: dict[str, Any] = {}

    def __call__(self, name: str) -> str | None:
        value = self.env.get(name, MISSING)
        self.asked[name] = value
        if value is MISSING:
            raise Unknown(name)
        return value


def projection(name: str, value: Any, texts: list[str] | None) -> tuple[str | None, Any]:
    """How the chain can tell values of $name apart: when every use of it in the texts it read
    is `${name%%PATTERN}` with one pattern (the runner's `${EXP_NAME%%_*}`), only the trimmed
    value matters; otherwise the whole value."""
    if texts is None or value is MISSING:
        return None, value
    return projected({u for t in texts for u in _uses(name, t)}, value)


def file_projection(src: Any, paths: list[str], name: str, value: Any) -> tuple[str | None, Any]:
    """`projection` over the texts of these files of a source view (`file_lines`, joined), each
    file's uses of $name found once per view: every walk of a review reads the same files."""
    if value is MISSING:
        return None, value
    known = _uses_of(src)
    uses: set[str] = set()
    for path in paths:
        found = known.get((path, name))
        if found is None:
            found = known[(path, name)] = _uses(name, "\n".join(file_lines(src, path)))
        uses |= found
    return projected(uses, value)


def _uses(name: str, text: str) -> frozenset[str]:
    """How `text` writes its uses of $name after the name: `}`, `%%PATTERN}`, or the rest."""
    return frozenset(m.group(1) for m in re.finditer(r"\$\{?" + re.escape(name) + r"\b(\}|%%[^}]*\}|[^}]*\}?)", text))


@by_identity(16)
def _uses_of(src: Any) -> dict[tuple[str, str], frozenset[str]]:
    """`_uses` of one source view's files, by (path, name) (filled lazily)."""
    return {}


def projected(uses: set[str], value: Any) -> tuple[str | None, Any]:
    """The projection of `value` given how the texts use its variable (`projection`)."""
    if len(uses) == 1 and next(iter(uses)).startswith("%%"):
        trim = next(iter(uses))[2:-1]
        return trim, seen_as(value, trim)
    return None, value


def seen_as(value: Any, trim: str | None) -> Any:
    try:
        return trim_pattern(value, "%%", trim) if trim is not None and isinstance(value, str) else value
    except Bound:
        return value  # over the trim bound: told apart by the whole value
