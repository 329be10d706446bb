"""What the bash analysis reports: its result types, the finding messages, and the small pure
helpers they use (flag and package names, which run a branch serves).

`recipes.scripts` is the public API; these types are re-exported there. The engine vocabulary
the types consult (`ENGINE_PACKAGES`, `BENCHMARK_TOOLING`) is the public module's, read at call
time so that module can take it from wherever the vocabulary lives.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import Finding
from ..values import flag_name as normalise_flag  # `--Speculative_Config` -> `speculative-config`
from ..values import is_enabled

PATCH_KINDS = (
    "patch-file", "git-apply", "patch", "sed-inplace", "heredoc-write",
    "redirect-write", "python-c-write", "sitecustomize", "copy-overwrite",
)
# Module or executable -> engine. Matched after wrappers such as nohup/numactl/mpirun.
MAX_SCRIPT_CHARS = 262_144  # 2.9 times the largest script of the history (benchmark_lib.sh, 88,945)
# Bounds of one analysis (docs/bounds.md). Hitting one is a "shell-cap" finding naming the line and
# the bound: the script is then unreadable for the checks ("could not verify"), never a hang.
# The real history's scripts (313 in the InferenceX and srt-slurm histories) reach at most: 823 commands, a
# 2,721-character value, 138 array elements, a 1,754-character branch condition.
MAX_VALUE_CHARS = 65_536  # one expanded value or word
MAX_RESOLVED_CHARS = 4_000_000  # every expanded value of one analysis together
MAX_ARRAY_ITEMS = 10_000  # elements of one array, and words of one expanded command
MAX_ELEMENTS = 100_000  # array elements, expanded words and word parts of one analysis together
MAX_COMMANDS = 5_000  # statements walked (nested `bash -c`/`eval` strings included)
MAX_CONDITION_CHARS = 20_000  # the if/elif/case conditions around one statement, as text
MAX_TRIM_CHARS = 4_096  # a value `${v#glob}`/`${v%glob}` trims (each cut is one glob match)
MAX_PRINTF_WIDTH = 4_096  # width or precision of one `printf` conversion
MAX_BRACKET_DEPTH = 500  # `(`/`{` nesting, read before parsing (tree-sitter's queries slow down
#                          with depth: 40,000 nested `$(` took over 20 s)
MAX_SEPARATORS = 30_000  # newlines and `;` in one script, read before parsing (each can end a
#                          statement the parse and its queries visit: 100,000 `a;` took 1.8 s)
MAX_LIST_OPERATORS = 20_000  # `|`, `&&`, `||` in one script, read before parsing (each nests the
#                              parse tree one level deeper; past 65,535 one query took 76 s)
UNREADABLE_CODES = frozenset({"shell-parse", "shell-cap", "shell-opaque"})

MSG_PARSE = "could not read line {line} of {path} ({what}); the rest of the script was analysed"
MSG_CAP = "could not read {path}: {size:,} characters is over the {cap:,}-character cap for a script"
MSG_BOUND = "could not verify line {line} of {path}: {what} is over the {cap:,} bound ({name}){rest}"
MSG_BOUND_REST = "; the rest of the script was not read"
MSG_INTERNAL = "could not read {path} ({error})"
MSG_OPAQUE = "could not read what line {line} of {path} runs: {what}"
MSG_OPAQUE_RUN = "a script it downloads or reads from a pipe (`{text}`)"
MSG_OPAQUE_EVAL = "`eval` of a string only known at run time (`{text}`)"
MSG_JSON_FLAG = "--{flag} value is not valid JSON ({error})"
MSG_UNCLOSED_HEREDOC = "here-document {delim!r} is never closed"


# --------------------------------------------------------------------------- result types


@dataclass(frozen=True)
class Located:
    """A value with its 1-based source line; `condition` is the enclosing if-test, if any."""

    value: str
    line: int
    conditional: bool = False
    condition: str | None = None
    resolved: str | None = None  # value with earlier-assigned variables substituted
    function: str | None = None  # the shell function whose body holds it (runs only when called)


@dataclass(frozen=True)
class Flag(Located):
    original: str = ""  # spelling as written, e.g. "--speculative_config"


@dataclass
class ShellCommand:
    argv: list[str]
    line: int
    text: str
    env: dict[str, Located] = field(default_factory=dict)  # `VAR=x cmd` prefix assignments
    redirects: list[tuple[str, str]] = field(default_factory=list)  # (operator, target)
    conditional: bool = False
    condition: str | None = None
    expanded: list[str] = field(default_factory=list)  # argv with known arrays/vars expanded
    arg_lines: list[int] = field(default_factory=list)  # line of each `expanded` word
    arg_conditions: list[str | None] = field(default_factory=list)  # extra condition per `expanded` word
    function: str | None = None  # the shell function whose body holds it (runs only when called)
    end_line: int = 0  # last line of the command (0: same as `line`)


@dataclass
class ServerLaunch(ShellCommand):
    engine: str = ""
    entry: str = ""  # "sglang.launch_server", "vllm serve", ...
    flags: dict[str, Flag] = field(default_factory=dict)  # normalised name -> last occurrence
    flag_list: list[Flag] = field(default_factory=list)
    positionals: list[str] = field(default_factory=list)
    json_flags: dict[str, dict] = field(default_factory=dict)

    def flag(self, name: str) -> Flag | None:
        return self.flags.get(normalise_flag(name))


@dataclass(frozen=True)
class PatchOp:
    kind: str  # one of PATCH_KINDS
    target: str | None
    line: int
    text: str
    sensitive: bool = True  # False: the target is unknown rather than a known engine/model path
    function: str | None = None  # the shell function whose body holds it (runs only when called)


@dataclass(frozen=True)
class PipInstall:
    targets: list[str]
    line: int
    text: str
    from_vcs: bool = False
    from_wheel: bool = False
    from_path: bool = False
    function: str | None = None  # the shell function whose body holds it (runs only when called)

    @property
    def packages(self) -> list[str]:
        return [package_name(t) for t in self.targets]

    @property
    def engine_targets(self) -> list[str]:
        return [t for t in self.targets if package_name(t) in _vocabulary().ENGINE_PACKAGES]

    @property
    def is_benchmark_tooling(self) -> bool:
        """Only benchmark-client / eval packages from an index (installing these is fine)."""
        return bool(self.targets) and not (self.from_vcs or self.from_wheel or self.from_path) and all(
            package_name(t) in _vocabulary().BENCHMARK_TOOLING for t in self.targets
        )


@dataclass(frozen=True)
class Heredoc:
    delimiter: str
    body: str
    line: int  # line of the command carrying `<<`
    body_line: int
    quoted: bool  # quoted delimiter: the body is literal (no expansion)
    command: str = ""
    resolved: str | None = None  # an unquoted body with earlier-assigned variables substituted


@dataclass(frozen=True)
class FunctionDef:
    """A shell function the script defines: `name() { ... }` spanning `line`..`end_line`."""

    name: str
    line: int
    end_line: int


@dataclass
class CodeUnit:
    """One function body or the top level of a script, as recipes.launch.path.launch_path follows it."""

    words: set[str] = field(default_factory=set)
    sources: list[Located] = field(default_factory=list)


@dataclass
class ScriptAnalysis:
    path: str
    exports: dict[str, Located] = field(default_factory=dict)
    assignments: list[tuple[str, Located, bool]] = field(default_factory=list)  # (name, value, exported)
    arrays: dict[str, list[Located]] = field(default_factory=dict)
    commands: list[ShellCommand] = field(default_factory=list)
    server_launch: ServerLaunch | None = None
    server_launches: list[ServerLaunch] = field(default_factory=list)
    patches: list[PatchOp] = field(default_factory=list)
    pip_installs: list[PipInstall] = field(default_factory=list)
    sources: list[Located] = field(default_factory=list)  # helpers sourced (`source`, `.`) or run (`bash f.sh`)
    heredocs: list[Heredoc] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    partial: bool = False
    functions: dict[str, FunctionDef] = field(default_factory=dict)
    # (first line, last line, condition) of each statement in an if/elif/else or case-arm body:
    # its lines, a nested `if`'s own test lines included, run only when the condition holds.
    branches: list[tuple[int, int, str]] = field(default_factory=list)
    # What each "shell-opaque" line runs, whole (line -> command text): callers that trust a
    # known tooling installer (recipes.config Policy.trusted_installers) read the URLs in it.
    opaque_texts: dict[int, str] = field(default_factory=dict)

    @property
    def unreadable(self) -> Finding | None:
        """The finding naming what could not be read (a line, an unclosed heredoc, the size cap)."""
        return next((f for f in self.findings if f.code in UNREADABLE_CODES), None)

    def units(self) -> dict[str | None, "CodeUnit"]:
        """What each function body (None: the top level) runs: the words of its commands and
        the files it sources or runs. Computed once."""
        cached = self.__dict__.get("_units")
        if cached is not None:
            return cached
        out: dict[str | None, CodeUnit] = {}
        for cmd in self.commands:
            if not cmd.argv:
                continue
            u = out.setdefault(cmd.function, CodeUnit())
            words = cmd.expanded or cmd.argv
            u.words.update(words[:1] + cmd.argv[:1] + words[1:])
        for src in self.sources:
            out.setdefault(src.function, CodeUnit()).sources.append(src)
        self.__dict__["_units"] = out
        return out

    def own_calls(self) -> frozenset[str]:
        """The functions this script's own top level runs, directly or through its other
        functions (a name its code calls that it defines). Computed once."""
        cached = self.__dict__.get("_own_calls")
        if cached is None:
            units = self.units()
            seen: set[str] = set()
            todo: list[str | None] = [None]
            while todo:
                unit = units.get(todo.pop())
                for word in unit.words if unit is not None else ():
                    if word in units and word not in seen:
                        seen.add(word)
                        todo.append(word)
            cached = self.__dict__["_own_calls"] = frozenset(seen)
        return cached

    def calls(self, name: str) -> list[ShellCommand]:
        """Every command that calls `name` (a function or program), in source order."""
        return [c for c in self.commands if c.argv and c.argv[0] == name]

    def env(self, name: str) -> Located | None:
        """The last assignment of `name` (exported, plain, or a launch-command prefix)."""
        return self.exports.get(name)

    def assignments_of(self, name: str) -> list[Located]:
        """Every assignment of `name` in source order (e.g. both branches of an if/else)."""
        return [loc for n, loc, _ in self.assignments if n == name]


def _short(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 3] + "..."


EVAL_GUARD = "EVAL_ONLY"
# One test of the eval switch: `[ "${EVAL_ONLY:-false}" = "true" ]`, `[[ $EVAL_ONLY == true ]]`,
# `[ "$EVAL_ONLY" != "true" ]`, or a `case "$EVAL_ONLY" in true)` arm.
_EVAL_TEST = re.compile(
    r"""EVAL_ONLY(?::?-[^}"'\s]*)?\}?["']?\s*(?P<op>==?|!=)\s*["']?(?P<value>[A-Za-z0-9]+)["']?"""
    r"""|EVAL_ONLY\}?["']? matches (?P<arms>[^&]+)""")


def eval_branch(condition: str | None) -> bool | None:
    """Which run a piece of code serves, from the if/case conditions around it: True when it
    runs only for the eval (`EVAL_ONLY` is true), False when only for the benchmark run
    (`EVAL_ONLY` is not true: the throughput config), None when the conditions do not test
    `EVAL_ONLY`. Reads the condition text the analyser records (`! ( X )` for an else/elif
    branch), so `if [ "$EVAL_ONLY" != true ]; then A; else B; fi` gives False for A, True for B."""
    if not condition or EVAL_GUARD not in condition:
        return None
    found: bool | None = None
    for m in _EVAL_TEST.finditer(condition):
        if m.group("arms") is not None:
            arms = {a.strip().strip("'\"").lower() for a in m.group("arms").split("|")}
            asserts = any(is_enabled(a) for a in arms)
        else:
            asserts = is_enabled(m.group("value")) == (m.group("op") != "!=")
        if _negated(condition, m.start()):
            asserts = not asserts
        if asserts:
            return True
        found = False
    return found


_NUMERIC_TEST = re.compile(r"""\[\[?\s*"?\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?"?\s+-(gt|ge|lt|le|eq|ne)\s+"?(-?\d+)"?\s*\]\]?""")
_COMPARE = {"gt": int.__gt__, "ge": int.__ge__, "lt": int.__lt__, "le": int.__le__, "eq": int.__eq__, "ne": int.__ne__}


def _split_and(text: str) -> list[str]:
    """`a && ! ( b && c ) && d` -> [`a`, `! ( b && c )`, `d`] (only top-level `&&` splits)."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif depth == 0 and text.startswith(" && ", i):
            parts.append(text[start:i])
            start = i + 4
            i += 4
            continue
        i += 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def point_branch(condition: str | None, env: dict[str, int]) -> bool | None:
    """Whether the analyser's condition text holds for a point whose matrix values are `env`:
    numeric tests of those variables (`[ "$CONC" -le 8 ]`, `[[ "$DCP_SIZE" -gt 1 ]]`), negated
    (`! ( ... )`, an else branch) and joined with `&&`; None when any part is something else."""
    if not condition:
        return True
    results = []
    for part in _split_and(condition):
        if part.startswith("! (") and part.endswith(")"):
            inner = point_branch(part[3:-1], env)
            results.append(None if inner is None else not inner)
            continue
        m = _NUMERIC_TEST.fullmatch(part)
        if m is None or m.group(1) not in env:
            return None
        results.append(_COMPARE[m.group(2)](env[m.group(1)], int(m.group(3))))
    if any(r is False for r in results):
        return False
    return None if any(r is None for r in results) else True


def _negated(text: str, at: int) -> bool:
    """Whether position `at` sits inside an odd number of `! ( ... )` groups."""
    stack: list[bool] = []
    i = 0
    while i < at:
        if text.startswith("! (", i):
            stack.append(True)
            i += 3
            continue
        ch = text[i]
        if ch == "(":
            stack.append(False)
        elif ch == ")" and stack:
            stack.pop()
        i += 1
    return sum(stack) % 2 == 1


def package_name(target: str) -> str:
    """Distribution name of a pip target: `lm-eval[api]==0.4` -> `lm-eval`, URLs -> last segment."""
    t = target.strip()
    if "#egg=" in t:
        t = t.split("#egg=", 1)[1]
    elif " @ " in t or ("@" in t and "://" in t and not t.startswith(("git+", "http"))):
        t = t.split("@", 1)[0]  # PEP 508 `name @ url`
    elif "://" in t or t.endswith((".whl", ".tar.gz", ".zip")) or t.startswith((".", "/")):
        last = t.rstrip("/").rsplit("/", 1)[-1]
        last = re.sub(r"\.git$", "", re.sub(r"@.*$", "", last))
        return last.split("-")[0].lower() if last.endswith((".whl", ".tar.gz", ".zip")) else last.lower()
    return re.split(r"[\[<>=!~;@ ]", t, maxsplit=1)[0].lower()



@dataclass
class _Ctx:
    """Where the walk is: the enclosing if/case conditions, the nesting depth of `bash -c`/`eval`
    strings, and the function whose body it is in."""

    conditions: tuple[str, ...] = ()
    depth: int = 0
    function: str | None = None

    @property
    def joined(self) -> str | None:
        """The conditions as one text (`a && b`), or None; built once and shared by every
        statement under them (a statement keeps it, so copies would grow with the nesting)."""
        if "_joined" not in self.__dict__:
            self.__dict__["_joined"] = " && ".join(self.conditions) or None
        return self.__dict__["_joined"]


@dataclass
class Budget:
    """What one analysis has spent (shared with the analyses of its nested `bash -c`/`eval`
    strings): statements walked and characters of expanded values."""

    statements: int = 0
    elements: int = 0
    chars: int = 0
    spent: bool = False  # MAX_RESOLVED_CHARS was reached: nothing more is expanded


    def spend(self, elements: int) -> None:
        """Count `elements` array elements, words or word parts; raise Bound past MAX_ELEMENTS."""
        self.elements += elements
        if self.elements > MAX_ELEMENTS:
            raise Bound("MAX_ELEMENTS", MAX_ELEMENTS, "the array elements, words and word parts", stop=True)


class Bound(Exception):
    """A bound of the analysis was reached (see the MAX_* constants): `name` is the constant,
    `cap` its value, `what` the thing over it. `stop`: the rest of the script is not read."""

    def __init__(self, name: str, cap: int, what: str, *, stop: bool = False, line: int | None = None):
        super().__init__(f"{what} is over the {cap:,} bound ({name})")
        self.name, self.cap, self.what, self.stop, self.line = name, cap, what, stop, line


def _vocabulary() -> Any:
    """The public module, whose engine vocabulary the analysis uses (imported when first needed:
    it imports this one)."""
    from .. import scripts

    return scripts
