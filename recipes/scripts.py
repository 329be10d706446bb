"""Static analysis of bash launch scripts and command strings: env, server flags, patches, installs.

Parsing uses tree-sitter-bash, an error-tolerant grammar: every construct of the language
(`case`, `[[ ]]`, arrays, heredocs, fd redirects such as `exec 9>&-`) is read natively, and a
line the grammar cannot read becomes one warning Finding, "could not read line N of FILE",
with `partial` set; the rest of the script is still analysed. Nothing raises: an internal
error or a script over `MAX_SCRIPT_CHARS` is a Finding too (`ScriptAnalysis.unreadable`).
Each (path, text) is analysed once per process (`analyze_script` memoizes), so every point
and every check shares one analysis. Measured on the 2,450 distinct shell scripts of the
InferenceX history: tree-sitter reads 2,439 without an error node in 1.4 s in all; bashlex
failed on 2,182 of them (the old rewrite-and-fallback analyser: 1,321 partial, 8 crashes,
115 s).

Quoted text and comments are never runtime: flags come only from the words of the command
that starts the server, never from `echo "..."` strings or `# ...` comments.

Patch rule (Check 10): `git apply`/`git am`, `patch`, and `.patch`/`.diff` files are always
reported. `sed -i`/`perl -pi` are reported unless every target is benign. Redirects, heredoc
writes, `python -c`/heredoc Python that writes files, and copies are reported only when the
target is sensitive: site-/dist-packages, Python lib dirs, /sgl-workspace, engine source
trees, model config files, or a path derived from an import lookup (`x.__file__`,
importlib, `site.getsitepackages()`, `pip show`). Benign targets are /tmp, /var/tmp, /dev,
and log/result files. Anything naming sitecustomize/usercustomize or a `.pth` file is a
"sitecustomize" op.

Limits (best effort): variables are resolved from assignments seen earlier in the file
(not from the caller's environment); arrays and `$VAR` flag bundles are expanded when their
value is known; `printf` of literals and `${v#p}`/`${v%p}` trims are evaluated; a branch guarded
by `EVAL_ONLY` being true never replaces the value the benchmark run serves (`eval_branch`);
`bash -c`/`eval` strings are analysed recursively up to a small depth; commands assembled in
other ways (printf into a file, functions building argv) are not.

This module is the public API (import from here); the analysis lives in `recipes/bash/` by
concern: `model` (result types, messages), `values` (literal arithmetic, printf, trims),
`walker` (the tree-sitter walk: assignments, arrays, conditions), `commands` (what a command
means: setters, sources, wrappers, nested shells) and `detect` (launch, pip and patch
detection). The engine vocabulary below (`ENGINE_PACKAGES`, `BENCHMARK_TOOLING`) is defined
here and read by those modules at call time.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

from .bash.commands import SETTERS, WRAPPERS
from .bash.detect import _PY_FLAGS as PY_FLAGS, _PY_VALUE_FLAGS as PY_VALUE_FLAGS, _PYTHON as _PY_INTERPRETER
from .bash.detect import PIP_VALUE_OPTIONS, _python_module, flag_words
from .launch.pycode import py_writes
from .bash.model import (
    MAX_ARRAY_ITEMS, MAX_BRACKET_DEPTH, MAX_COMMANDS, MAX_CONDITION_CHARS, MAX_LIST_OPERATORS, MAX_PRINTF_WIDTH,
    MAX_ELEMENTS, MAX_RESOLVED_CHARS, MAX_SEPARATORS, MAX_TRIM_CHARS, MAX_VALUE_CHARS, MSG_BOUND, Bound,
)
from .bash.model import (
    EVAL_GUARD, MAX_SCRIPT_CHARS, MSG_CAP, MSG_INTERNAL, MSG_JSON_FLAG, MSG_OPAQUE, MSG_OPAQUE_EVAL, MSG_OPAQUE_RUN,
    MSG_PARSE, MSG_UNCLOSED_HEREDOC, PATCH_KINDS, UNREADABLE_CODES, CodeUnit, Flag, FunctionDef, Heredoc, Located,
    PatchOp, PipInstall, ScriptAnalysis, ServerLaunch, ShellCommand, eval_branch, normalise_flag, package_name,
    point_branch,
)
from .bash.model import _Ctx
from .bash.values import _eval_number, _literal_arithmetic, _literal_printf, trim_pattern
from .bash.parse import _captures, parse_bash
from .bash.walker import _Analyzer
from .errors import Finding

# Engine vocabulary of the analysis (pip targets that are the serving stack: the engine
# profiles' packages, PEP 503-matched; and benchmark tooling that is fine to install). The bash
# modules read it from here at call time.
from .engines import ENGINE_PACKAGES  # noqa: E402
BENCHMARK_TOOLING = {"aiperf", "lm-eval", "lm_eval", "genai-perf", "evalscope", "datasets"}

__all__ = [
    "MAX_ARRAY_ITEMS", "MAX_BRACKET_DEPTH", "MAX_COMMANDS", "MAX_CONDITION_CHARS", "MAX_LIST_OPERATORS",
    "MAX_PRINTF_WIDTH", "MAX_ELEMENTS", "MAX_SEPARATORS", "MAX_RESOLVED_CHARS", "MAX_TRIM_CHARS", "MAX_VALUE_CHARS", "MSG_BOUND", "Bound",
    "BENCHMARK_TOOLING", "ENGINE_PACKAGES", "EVAL_GUARD",
    "MAX_SCRIPT_CHARS", "MSG_CAP", "MSG_INTERNAL", "MSG_JSON_FLAG", "MSG_OPAQUE", "MSG_OPAQUE_EVAL", "MSG_OPAQUE_RUN",
    "MSG_PARSE", "MSG_UNCLOSED_HEREDOC", "PATCH_KINDS", "PIP_VALUE_OPTIONS", "SETTERS", "UNREADABLE_CODES", "WRAPPERS",
    "CodeUnit", "CodeUnits", "Flag", "FunctionDef", "Heredoc", "Located", "PatchOp", "PipInstall", "ScriptAnalysis",
    "ServerLaunch", "ShellCommand", "analyze_command_line", "analyze_python_file", "analyze_script", "code_text", "code_units",
    "eval_branch", "flag_words", "python_file_run", "python_file_runs",
    "normalise_flag", "package_name", "point_branch", "trim_pattern",
]
_INTERNALS = (_Analyzer, _Ctx, _eval_number, _literal_arithmetic, _literal_printf, py_writes, _python_module)


# --------------------------------------------------------------------------- public API


_MEMO: dict[tuple, ScriptAnalysis] = {}
_MEMO_MAX = 4096


def analyze_script(text: str, path: str, *, line_offset: int = 0, env: dict[str, int] | None = None) -> ScriptAnalysis:
    """Analyse a whole bash script. Never raises: unreadable input becomes findings.

    `env` gives one benchmark point's matrix values (CONC, DCP_SIZE, ...): they are set before
    the first line and the branches they rule out are not walked, so the result is what that
    point runs (used only where a value differs per branch; see recipes.effective).
    Memoized per process on (path, line offset, text, env): the result is shared by every
    caller and must not be mutated."""
    key = (path, line_offset, text, tuple(sorted(env.items())) if env else None)
    hit = _MEMO.get(key)
    if hit is not None:
        return hit
    out = _analyze(text, path, line_offset, env) if env else _analyze(text, path, line_offset)
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.clear()
    _MEMO[key] = out
    return out


def _analyze(text: str, path: str, line_offset: int, env: dict[str, int] | None = None) -> ScriptAnalysis:
    if len(text) > MAX_SCRIPT_CHARS:
        out = ScriptAnalysis(path=path, partial=True)
        out.findings.append(Finding(path=path, line=None, code="shell-cap", severity="warning",
                                    message=MSG_CAP.format(path=path, size=len(text), cap=MAX_SCRIPT_CHARS)))
        return out
    try:
        return _Analyzer(text, path, line_offset, env).run()
    except RecursionError:
        error = "nesting too deep"
    except Exception as exc:  # noqa: BLE001 - no construct may crash the checks that read scripts
        error = f"{type(exc).__name__}: {exc}"[:200]
    out = ScriptAnalysis(path=path, partial=True)
    out.findings.append(Finding(path=path, line=None, code="shell-parse", severity="warning",
                                message=MSG_INTERNAL.format(path=path, error=error)))
    return out


@dataclass(frozen=True)
class CodeUnits:
    """A script's code without comments or layout: its top level and each function body.

    Two versions of a file differ in `top` when code outside any function changed, and in
    `functions[name]` when that function's body changed (an added or removed function is a
    change of that function only). `None` from `code_units` means the text could not be read."""

    top: str
    functions: dict[str, str]
    lines: tuple[str, ...] = ()  # every line of the file with comments blanked (for line diffs)


# Every comment and function definition of a script, for `code_units`.
_UNITS_QUERY = "(comment) @comment (function_definition) @function"


def code_units(text: str) -> CodeUnits | None:
    """Split a script into its top-level code and its function bodies, comments and
    indentation dropped, to attribute a change to functions (recipes.launch.path.launch_path).
    The last few texts' answers are kept (the affected rule splits a changed script's head text
    to attribute the change, then again to follow its changed functions): not to be mutated."""
    return _code_units(text)


@functools.lru_cache(maxsize=64)
def _code_units(text: str) -> CodeUnits | None:
    if len(text) > MAX_SCRIPT_CHARS:
        return None
    try:
        src = text.encode("utf-8", "surrogatepass")
        root = parse_bash(src, same_bytes=True)[0].root_node  # the text stays as written (same positions)
        if root.has_error:
            return None
        found = _captures(root, _UNITS_QUERY)
        comments = [(n.start_byte, n.end_byte) for n in found.get("comment", [])]
        functions = list(found.get("function", []))

        def code(start: int, end: int, holes: list[tuple[int, int]]) -> str:
            parts: list[bytes] = []
            at = start
            for a, b in sorted(h for h in holes if start <= h[0] and h[1] <= end):
                if a >= at:
                    parts.append(src[at:a])
                    at = b
            parts.append(src[at:end])
            lines = b"".join(parts).decode("utf-8", "replace").split("\n")
            return "\n".join(ln.strip() for ln in lines if ln.strip())

        outer = [f for f in functions if not any(g is not f and g.start_byte <= f.start_byte and f.end_byte <= g.end_byte
                                                 for g in functions)]
        bodies: dict[str, str] = {}
        for f in functions:
            name = f.child_by_field_name("name")
            if name is not None:
                key = name.text.decode("utf-8", "replace")
                bodies[key] = bodies.get(key, "") + code(f.start_byte, f.end_byte, comments)
        top = code(0, len(src), comments + [(f.start_byte, f.end_byte) for f in outer])
        blanked = bytearray(src)
        for a, b in comments:
            blanked[a:b] = b" " * (b - a)
        lines = tuple(ln.strip() for ln in blanked.decode("utf-8", "replace").split("\n"))
        return CodeUnits(top=top, functions=bodies, lines=lines)
    except (Bound, RecursionError, ValueError, TypeError, AttributeError):
        return None


def code_text(text: str) -> str | None:
    """The script with its comments blanked, line for line (`code_units`' lines: tree-sitter finds
    the comments, so a `#` in a string, a heredoc body or `${#x}` is not one); None when the
    text is over the cap or does not parse cleanly, so a caller falls back to the whole text."""
    units = code_units(text)
    return None if units is None else "\n".join(units.lines)


def analyze_command_line(text: str, path: str, line: int) -> ScriptAnalysis:
    """Analyse one command string (a recipe's setup script or benchmark.command) found at `line`."""
    return analyze_script(text, path, line_offset=max(0, line - 1))


# A Python file run by a launch-path script (`python3 [-u ...] fix.py`) is read the way a Python
# heredoc is: a write into the serving stack is an engine patch. It is fed to the analyser as the
# body of `python3 - <<MARK`; a file holding the marker line ends the heredoc early, and what
# follows is then read as bash, which is unreadable and so "could not verify", never a PASS.
_PY_FILE_MARK = "INFX_REVIEW_PY_EOF_7f3a"


def python_file_run(argv: list[str]) -> str | None:
    """The `.py` file a command runs with a Python interpreter (`python3 -u x.py args`), or None
    (`-m MODULE`, `-c CODE`, stdin, or not a Python interpreter)."""
    if not argv or not _PY_INTERPRETER.match(str(argv[0]).rsplit("/", 1)[-1]):
        return None
    j = 1
    while j < len(argv) and (argv[j] in PY_FLAGS or argv[j] in PY_VALUE_FLAGS):
        j += 2 if argv[j] in PY_VALUE_FLAGS else 1
    word = str(argv[j]) if j < len(argv) else ""
    return word if word.endswith(".py") and not word.startswith("-") else None


def python_file_runs(analysis: ScriptAnalysis) -> tuple[tuple[str, str | None, int], ...]:
    """(file as written, enclosing function or None, line) of every command of `analysis` that
    runs a Python file (`python_file_run`), in script order. Computed once per analysis (the
    analysis is shared by every point whose launch path holds the script: a cache, not state)."""
    cached = analysis.__dict__.get("_python_runs")
    if cached is None:
        found = ((python_file_run([str(a) for a in (cmd.expanded or cmd.argv)]), cmd.function, cmd.line)
                 for cmd in analysis.commands)
        cached = analysis.__dict__["_python_runs"] = tuple(f for f in found if f[0] is not None)
    return cached


def analyze_python_file(code: str, path: str) -> ScriptAnalysis:
    """What a Python file run on a launch path does to the serving stack (its writes), as the
    analysis of that run: patches cite line 1 of the file."""
    return analyze_script(f"python3 - <<'{_PY_FILE_MARK}'\n{code}\n{_PY_FILE_MARK}\n", path)
