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
value is known; `bash -c`/`eval` strings are analysed recursively up to a small depth;
commands assembled in other ways (printf into a file, functions building argv) are not.
"""
from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field, replace
from typing import Any

from .errors import Finding

PATCH_KINDS = (
    "patch-file", "git-apply", "patch", "sed-inplace", "heredoc-write",
    "redirect-write", "python-c-write", "sitecustomize", "copy-overwrite",
)
# Module or executable -> engine. Matched after wrappers such as nohup/numactl/mpirun.
LAUNCH_MODULES = {
    "sglang.launch_server": "sglang",
    "sglang_router.launch_server": "sglang",
    "sglang.srt.entrypoints.http_server": "sglang",
    "vllm.entrypoints.openai.api_server": "vllm",
    "vllm.entrypoints.api_server": "vllm",
    "atom.entrypoints.openai_server": "atom",
    "tensorrt_llm.commands.serve": "trtllm",
    "tensorrt_llm.serve": "trtllm",
}
LAUNCH_SUBCOMMANDS = {("vllm", "serve"): "vllm", ("sglang", "serve"): "sglang", ("atom", "serve"): "atom"}
LAUNCH_EXECUTABLES = {"trtllm-serve": "trtllm"}
SETTERS = {"export", "declare", "typeset", "local", "readonly"}
ENGINE_PACKAGES = {
    "sglang", "sgl-kernel", "sgl_kernel", "vllm", "tensorrt-llm", "tensorrt_llm", "atom", "aiter",
    "flashinfer", "flashinfer-python", "triton", "torch", "transformers", "deep-gemm", "deep_gemm",
    "deep-ep", "deep_ep", "mooncake-transfer-engine", "xgrammar", "tilert",
}
BENCHMARK_TOOLING = {"aiperf", "lm-eval", "lm_eval", "genai-perf", "evalscope", "datasets"}
PIP_VALUE_OPTIONS = {
    "-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url",
    "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--upgrade-strategy",
    "--trusted-host", "--no-binary", "--only-binary", "--platform", "--python-version",
    "--implementation", "--abi", "-C", "--config-settings", "--src", "--cache-dir", "--log",
    "--progress-bar", "--python", "--report",
}
_SENSITIVE_PATH = re.compile(
    r"site-packages|dist-packages|/sgl-workspace|/usr/(?:local/)?lib/python|/opt/conda/lib/python"
    r"|/(?:sglang|vllm|tensorrt_llm|atom|aiter|flashinfer|triton|sgl-kernel)/"
    r"|(?:^|/)(?:config|generation_config|tokenizer_config)\.json$|\.safetensors\.index\.json$"
    r"|(?:^|/)(?:modeling|configuration)_[^/]*\.py$|/hub/models--",
)
_SENSITIVE_VAR = re.compile(r"\$\{?(?:[A-Z0-9_]*(?:SITE|PACKAGES|SGLANG|VLLM|ATOM|TRTLLM|TENSORRT|ENGINE)[A-Z0-9_]*)", re.I)
_BENIGN_PATH = re.compile(r"^(?:/tmp/|/var/tmp/|/dev/|/proc/self/)|\.(?:log|txt|out|err|csv)$|(?:^|/)(?:logs?|results?)/")
_CUSTOMIZE = re.compile(r"sitecustomize|usercustomize|\.pth\b|PYTHONSTARTUP")
_IMPORT_LOOKUP = re.compile(r"__file__|importlib|find_spec|getsitepackages|getusersitepackages|inspect\.getfile|sysconfig|site-packages|dist-packages")
_PY_WRITE = re.compile(
    r"open\([^)]*['\"][^'\"]*[wax+][^'\"]*['\"]|\.write_text\(|\.write_bytes\(|shutil\.(?:copy|copyfile|copy2|move)\("
    r"|os\.(?:replace|rename)\(|inplace\s*=\s*True"
)
_PY_LITERAL_PATH = re.compile(r"['\"](/[^'\"\s]+)['\"]")
_PY_IMPORTED = re.compile(r"(?:^|;)\s*(?:import|from)\s+([A-Za-z_][\w., ]*)", re.M)
_FIND_SPEC = re.compile(r"(?:find_spec|import_module)\(\s*['\"]([\w.]+)")
IMPORT_LOOKUP_TARGET = "<path from an import lookup>"
_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)?)?$")
_PARAM = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=])([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)")
_ARRAY_REF = re.compile(r'^"?\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}"?$')
_SIMPLE_REF = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?$")
_ARRAY_ASSIGN = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(\+?=)\(")
_HEREDOC_OP = re.compile(r"<<(-?)[ \t]*(?:'([^'\n]*)'|\"([^\"\n]*)\"|\\?([A-Za-z0-9_.\-]+))")
_JSON_START = re.compile(r'^\s*(?:\{\s*["}]|\[)')
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_NESTING = 3
MAX_RESOLVED_HEREDOC = 100_000  # characters of an unquoted heredoc body expanded line by line
GIT_CODE_CHANGES = frozenset({"cherry-pick", "merge", "pull", "rebase", "revert"})

MAX_SCRIPT_CHARS = 1_000_000
UNREADABLE_CODES = frozenset({"shell-parse", "shell-cap", "shell-opaque"})

MSG_PARSE = "could not read line {line} of {path} ({what}); the rest of the script was analysed"
MSG_CAP = "could not read {path}: {size:,} characters is over the {cap:,}-character cap for a script"
MSG_INTERNAL = "could not read {path} ({error})"
MSG_OPAQUE = "could not read what line {line} of {path} runs: {what}"
MSG_OPAQUE_RUN = "a script it downloads or reads from a pipe (`{text}`)"
MSG_OPAQUE_EVAL = "`eval` of a string only known at run time (`{text}`)"
# Commands that run another command, with their options that take a value.
WRAPPERS = {
    "command": frozenset({"-p"}), "env": frozenset({"-u", "--unset", "-C", "--chdir", "-S", "--split-string"}),
    "sudo": frozenset({"-u", "-g", "-U", "-C", "-h", "-p", "-r", "-t", "-D"}), "nohup": frozenset(),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "xargs": frozenset({"-I", "-i", "-n", "-P", "-d", "-L", "-E", "-s", "-a", "--arg-file", "--delimiter",
                        "--max-args", "--max-procs", "--replace"}),
    "nice": frozenset({"-n", "--adjustment"}), "stdbuf": frozenset({"-i", "-o", "-e"}), "time": frozenset(),
    "setsid": frozenset(), "ionice": frozenset({"-c", "-n", "-p"}), "chrt": frozenset(),
}
_DYNAMIC = re.compile(r"^\s*(?:\$\(|`|\$\{?[A-Za-z_@*])")
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
        return [t for t in self.targets if package_name(t) in ENGINE_PACKAGES]

    @property
    def is_benchmark_tooling(self) -> bool:
        """Only benchmark-client / eval packages from an index (installing these is fine)."""
        return bool(self.targets) and not (self.from_vcs or self.from_wheel or self.from_path) and all(
            package_name(t) in BENCHMARK_TOOLING for t in self.targets
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
    """One function body or the top level of a script, as checks.launch_path follows it."""

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


def normalise_flag(name: str) -> str:
    """`--Speculative_Config` -> `speculative-config` (vLLM/SGLang accept both spellings)."""
    return name.lstrip("-").replace("_", "-").lower()


EVAL_GUARD = "EVAL_ONLY"
# One test of the eval switch: `[ "${EVAL_ONLY:-false}" = "true" ]`, `[[ $EVAL_ONLY == true ]]`,
# `[ "$EVAL_ONLY" != "true" ]`, or a `case "$EVAL_ONLY" in true)` arm.
_EVAL_TEST = re.compile(
    r"""EVAL_ONLY(?::?-[^}"'\s]*)?\}?["']?\s*(?P<op>==?|!=)\s*["']?(?P<value>[A-Za-z0-9]+)["']?"""
    r"""|EVAL_ONLY\}?["']? matches (?P<arms>[^&]+)""")
_EVAL_TRUE = frozenset({"true", "1", "yes"})


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
            asserts = bool(arms & _EVAL_TRUE)
        else:
            asserts = (m.group("value").lower() in _EVAL_TRUE) == (m.group("op") != "!=")
        if _negated(condition, m.start()):
            asserts = not asserts
        if asserts:
            return True
        found = False
    return found


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


_PY_WRITE_CALLS = frozenset({"write_text", "write_bytes", "copy", "copyfile", "copy2", "copytree", "move",
                             "replace", "rename", "symlink", "symlink_to", "link"})


def _py_writes(code: str) -> bool:
    """Whether Python code writes a file: read with Python's own parser (nested parentheses,
    keyword modes, `Path(...).open("w")`), with the regex as the fallback for text that is not
    plain Python (a heredoc with shell expansions)."""
    import ast

    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return bool(_PY_WRITE.search(code))
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        fn = node.func
        name = fn.attr if isinstance(fn, ast.Attribute) else fn.id if isinstance(fn, ast.Name) else ""
        if name == "open":
            mode = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "mode"), None)
            if isinstance(fn, ast.Attribute) and not node.args:  # Path(...).open(mode=...) / .open("w")
                mode = next((k.value for k in node.keywords if k.arg == "mode"), None)
            if isinstance(fn, ast.Attribute) and node.args and isinstance(node.args[0], ast.Constant):
                mode = node.args[0] if len(node.args) == 1 else mode
            if isinstance(mode, ast.Constant) and isinstance(mode.value, str) and set(mode.value) & set("wax+"):
                return True
            if mode is not None and not isinstance(mode, ast.Constant):
                return True  # a mode only known at run time
        elif name in _PY_WRITE_CALLS and isinstance(fn, ast.Attribute):
            owner = fn.value.id if isinstance(fn.value, ast.Name) else ""
            if name in ("write_text", "write_bytes", "rename", "symlink_to") or owner in ("os", "shutil"):
                return True
        elif any(k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value for k in node.keywords):
            return True
    return False


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


# Interpreter options before `-m` (`python3 -u -m atom...`); those in the second set take a value.
_PY_FLAGS = frozenset({"-u", "-O", "-OO", "-B", "-E", "-s", "-S", "-I", "-q", "-b", "-bb", "-P", "-R", "-d", "-v"})
_PY_VALUE_FLAGS = frozenset({"-X", "-W"})


def _python_module(argv: list[str], i: int) -> int | None:
    """The index of MODULE when argv[i] runs a Python interpreter as `... -m MODULE`: a python
    executable by name, or one held in a variable or found at run time (`"$SGLANG_PYTHON"`,
    `$(command -v python3)`), past interpreter options such as `-u`; else None."""
    word = argv[i]
    base = word.rsplit("/", 1)[-1]
    if not (_PYTHON.match(base) or "python" in word.lower() or word.startswith("$")):
        return None
    j = i + 1
    while j < len(argv) and (argv[j] in _PY_FLAGS or argv[j] in _PY_VALUE_FLAGS):
        j += 2 if argv[j] in _PY_VALUE_FLAGS else 1
    return j + 1 if argv[j:j + 1] == ["-m"] and j + 1 < len(argv) else None


_TRIM = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(##|#|%%|%)([^}]*)\}")


def trim_pattern(value: str, op: str, pattern: str) -> str:
    """bash `${v#p}` / `${v##p}` (shortest / longest prefix matching glob p removed) and
    `${v%p}` / `${v%%p}` (suffix)."""
    import fnmatch

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


# --------------------------------------------------------------------------- parsing

_PARSER: Any = None


def _parser() -> Any:
    """The tree-sitter bash parser, built on first use (the grammar is a compiled extension)."""
    global _PARSER
    if _PARSER is None:
        import tree_sitter
        import tree_sitter_bash

        _PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))
    return _PARSER


_DQ_ESCAPE = re.compile(r'\\([\\"$`])|\\\n')
_WORD_ESCAPE = re.compile(r"\\(.)|\\\n", re.S)
_ANSI_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", "'": "'", '"': '"', "e": "\x1b", "a": "\a"}
_QUOTED_DELIM = re.compile(r"""['"\\]""")
_REDIRECT_NODES = ("file_redirect", "heredoc_redirect", "herestring_redirect")
_STATEMENT_SKIP = ("comment", "heredoc_body", "heredoc_start", "heredoc_end", "regex")


@dataclass
class _Ctx:
    conditions: tuple[str, ...] = ()
    depth: int = 0
    function: str | None = None


class _Analyzer:
    def __init__(self, text: str, path: str, line_offset: int):
        self.text = text
        self.src = text.encode("utf-8", "surrogatepass")
        self.path = path
        self.offset = line_offset
        self.out = ScriptAnalysis(path=path)
        self.vars: dict[str, str] = {}
        self.tainted: set[str] = set()
        self.cwd: str | None = None  # best effort: the directory relative targets resolve against
        self._prev_cwd: str | None = None
        self._heredoc_by_line: dict[int, list[Heredoc]] = {}
        self._lines: list[bytes] | None = None
        self._function: str | None = None  # of the command being handled
        self._stdin_heredoc: Heredoc | None = None  # a heredoc fed to the command being handled

    # ----- positions and text
    def line(self, node: Any) -> int:
        return node.start_point[0] + 1 + self.offset

    def raw(self, node: Any) -> str:
        return self.src[node.start_byte:node.end_byte].decode("utf-8", "replace")

    def physical_line(self, row: int) -> str:
        if self._lines is None:
            self._lines = self.src.split(b"\n")
        return self._lines[row].decode("utf-8", "replace") if row < len(self._lines) else ""

    def value(self, node: Any) -> str:
        """A word as the shell passes it after quote removal; expansions keep their spelling."""
        t = node.type
        if t == "word":
            return _WORD_ESCAPE.sub(lambda m: m.group(1) or "", self.raw(node))
        if t == "raw_string":
            return self.raw(node)[1:-1]
        if t in ("string", "translated_string"):
            raw = self.raw(node)
            inner = raw[2:-1] if t == "translated_string" else raw[1:-1]
            return _DQ_ESCAPE.sub(lambda m: m.group(1) or "", inner)
        if t == "ansi_c_string":
            return re.sub(r"\\(.)", lambda m: _ANSI_ESCAPES.get(m.group(1), m.group(1)), self.raw(node)[2:-1])
        if t == "concatenation":
            out: list[str] = []
            at = node.start_byte
            for c in node.children:
                if c.start_byte > at:
                    out.append(self.src[at:c.start_byte].decode("utf-8", "replace"))
                out.append(self.value(c))
                at = c.end_byte
            if node.end_byte > at:
                out.append(self.src[at:node.end_byte].decode("utf-8", "replace"))
            return "".join(out)
        return self.raw(node)

    # ----- entry
    def run(self) -> ScriptAnalysis:
        tree = _parser().parse(self.src)
        root = tree.root_node
        if root.has_error:
            self.report_error(root)
        self.walk(root, _Ctx())
        self._heredoc_patches()
        if self.out.server_launches:
            self.out.server_launch = self.out.server_launches[0]
        return self.out

    def report_error(self, root: Any) -> None:
        """One finding naming the first line the grammar could not read; the rest still counts."""
        node = root
        while True:
            nxt = next((c for c in node.children if c.type == "ERROR" or c.is_missing or c.has_error), None)
            if nxt is None or node.type == "ERROR" or node.is_missing:
                break
            node = nxt
        if node.is_missing:
            what = f"missing `{node.type}`"
        else:
            snippet = self.raw(node).strip().split("\n", 1)[0][:40] or "end of file"
            what = f"unexpected `{snippet}`"
        line = self.line(node)
        self.out.partial = True
        self.out.findings.append(Finding(path=self.path, line=line, code="shell-parse", severity="warning",
                                         message=MSG_PARSE.format(line=line, path=self.path, what=what)))

    # ----- tree walk
    def walk(self, node: Any, ctx: _Ctx) -> None:
        t = node.type
        if t == "command":
            self.command(node, ctx, [], None)
        elif t == "redirected_statement":
            self.redirected(node, ctx)
        elif t == "variable_assignment":
            self.assignment(node, ctx, exported=False)
        elif t == "declaration_command":
            self.declaration(node, ctx)
        elif t == "if_statement":
            self.if_node(node, ctx)
        elif t == "case_statement":
            self.case_node(node, ctx)
        elif t == "function_definition":
            self.function_node(node, ctx)
        elif t == "pipeline":
            self.pipeline(node, ctx)
        elif t in _STATEMENT_SKIP:
            return
        else:
            for c in node.named_children:
                self.walk(c, ctx)

    def pipeline(self, node: Any, ctx: _Ctx) -> None:
        heads = []
        for c in node.named_children:
            cmd = c.child_by_field_name("body") if c.type == "redirected_statement" else c
            name = cmd.child_by_field_name("name") if cmd is not None and cmd.type == "command" else None
            args = [a for a in cmd.children_by_field_name("argument")] if name is not None else []
            heads.append((self.value(name).rsplit("/", 1)[-1] if name is not None else "",
                          [self.value(a) for a in args]))
        fetched = False
        for head, args in heads:
            while head in WRAPPERS and args:  # `| sudo sh`, `| env X=1 bash`
                rest = [a for a in args if not a.startswith("-") and "=" not in a]
                head, args = (rest[0].rsplit("/", 1)[-1], args[args.index(rest[0]) + 1:]) if rest else ("", [])
            if head in ("curl", "wget"):
                fetched = True
            elif fetched and (head in ("bash", "sh", "zsh", "source") or _PYTHON.match(head)) and \
                    not any(not a.startswith("-") for a in args if a not in ("-s", "-")):
                self.opaque(self.line(node), MSG_OPAQUE_RUN.format(text=_short(self.raw(node))), self.raw(node))
                break
        for c in node.named_children:
            self.walk(c, ctx)

    def substitutions(self, node: Any, ctx: _Ctx) -> None:
        """Commands inside `$(...)`, backticks and `<(...)` within a word run too."""
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type in ("command_substitution", "process_substitution"):
                for c in n.named_children:
                    self.walk(c, ctx)
                continue
            stack.extend(reversed(n.named_children))

    def redirected(self, node: Any, ctx: _Ctx) -> None:
        body = node.child_by_field_name("body")
        redirects = [c for c in node.named_children if c.type in _REDIRECT_NODES]
        if body is not None and body.type == "command":
            gap = b""
            if redirects and redirects[0].start_byte > body.end_byte:
                gap = self.src[body.end_byte:redirects[0].start_byte]
            self.command(body, ctx, redirects, gap.decode("utf-8", "replace"), stmt=node)
            return
        if body is not None:
            self.walk(body, ctx)
        sink: list[tuple[str, str]] = []
        extra: list[tuple[str, int, str]] = []
        for r in redirects:
            self.redirect(r, ctx, sink, extra, [], self.line(node))

    def redirect(self, node: Any, ctx: _Ctx, redirects: list[tuple[str, str]], words: list[tuple[str, int, str]],
                 heredocs: list[Heredoc], cmd_line: int, after: list[Any] | None = None) -> None:
        t = node.type
        if t == "file_redirect":
            op = next((c.type for c in node.children if not c.is_named), "")
            dests = node.children_by_field_name("destination")
            redirects.append((op, self.value(dests[0]) if dests else ""))
            for d in dests[1:]:  # the grammar reads words after a redirect as more targets
                words.append((self.value(d), self.line(d), self.raw(d)))
            for d in dests:
                self.substitutions(d, ctx)
        elif t == "heredoc_redirect":
            self.heredoc(node, ctx, redirects, words, heredocs, cmd_line, after)
        else:
            self.substitutions(node, ctx)

    def heredoc(self, node: Any, ctx: _Ctx, redirects: list[tuple[str, str]], words: list[tuple[str, int, str]],
                heredocs: list[Heredoc], cmd_line: int, after: list[Any] | None) -> None:
        start = body = end = None
        strip = False
        for c in node.children:
            if c.type == "<<-":
                strip = True
            elif c.type == "heredoc_start":
                start = c
            elif c.type == "heredoc_body":
                body = c
            elif c.type == "heredoc_end":
                end = c
            elif c.type in ("file_redirect", "herestring_redirect"):
                self.redirect(c, ctx, redirects, words, heredocs, cmd_line)
            elif c.is_named and c.type not in _STATEMENT_SKIP and after is not None:
                after.append(c)  # `<<EOF | tee log`: the pipeline continues after the operator
        if start is None:
            return
        spelled = self.raw(start)
        delim = _QUOTED_DELIM.sub("", spelled)
        text = self.raw(body) if body is not None else ""
        if strip:
            text = "\n".join(ln.lstrip("\t") for ln in text.split("\n"))
        line = self.line(node)
        if end is None or end.is_missing or self.raw(end).strip("\t ") != delim:
            self.out.findings.append(Finding(path=self.path, line=line, code="shell-parse", severity="warning",
                                             message=MSG_UNCLOSED_HEREDOC.format(delim=delim)))
            self.out.partial = True
        h = Heredoc(delimiter=delim, body=text, line=line,
                    body_line=self.line(body) if body is not None else line + 1,
                    quoted=bool(_QUOTED_DELIM.search(spelled)),
                    command=self.physical_line(node.start_point[0]).strip())
        if not h.quoted and "$" in text and len(text) <= MAX_RESOLVED_HEREDOC:
            h = replace(h, resolved="\n".join(self.resolve(ln) if "$" in ln else ln for ln in text.split("\n")))
        heredocs.append(h)
        self.out.heredocs.append(h)
        self._heredoc_by_line.setdefault(line, []).append(h)
        if cmd_line != line:
            self._heredoc_by_line.setdefault(cmd_line, []).append(h)

    def command(self, node: Any, ctx: _Ctx, outer_redirects: list[Any], gap: str | None, stmt: Any = None) -> None:
        words: list[tuple[str, int, str]] = []  # (value, line, raw source)
        prefix: list[Any] = []
        redirects: list[tuple[str, str]] = []
        heredocs: list[Heredoc] = []
        after: list[Any] = []
        named = False
        line = self.line(node)
        for c in node.named_children:
            t = c.type
            if t == "variable_assignment" and not named:
                prefix.append(c)
            elif t == "command_name":
                named = True
                inner = c.named_children[0] if c.named_children else c
                words.append((self.value(inner), self.line(c), self.raw(c)))
                self.substitutions(c, ctx)
            elif t in _REDIRECT_NODES:
                self.redirect(c, ctx, redirects, words, heredocs, line, after)
            elif t == "comment":
                continue
            else:
                words.append((self.value(c), self.line(c), self.raw(c)))
                self.substitutions(c, ctx)
        if gap and gap.strip():  # words the grammar leaves between the command and a heredoc
            try:
                parts = shlex.split(gap, comments=True)
            except ValueError:
                parts = gap.split()
            words.extend((p, line, p) for p in parts)
        for r in outer_redirects:
            self.redirect(r, ctx, redirects, words, heredocs, line, after)
        if heredocs and stmt is not None:
            first_body = min((c.start_byte for r in outer_redirects for c in r.children if c.type == "heredoc_body"),
                             default=stmt.end_byte)
            text = self.src[stmt.start_byte:first_body].decode("utf-8", "replace").strip()
        else:
            text = self.raw(stmt if stmt is not None else node).strip()
        cond = " && ".join(ctx.conditions) or None
        argv = [w for w, _, _ in words]
        env: dict[str, Located] = {}
        for p in prefix:
            loc = self.assignment(p, ctx, exported=bool(argv))
            if argv and loc is not None:
                env[self.assign_name(p)] = loc
        self._stdin_heredoc = heredocs[0] if heredocs else None
        if argv:
            expanded, arg_lines, arg_conds = self.expand_words(words)
            last = (stmt if stmt is not None else node).end_point[0] + 1 + self.offset
            cmd = ShellCommand(argv=argv, line=line, text=text, env=env, redirects=redirects,
                               conditional=bool(cond), condition=cond, expanded=expanded, arg_lines=arg_lines,
                               arg_conditions=arg_conds, function=ctx.function, end_line=last)
            self.handle(cmd, ctx)
        for a in after:
            self.walk(a, ctx)

    # ----- assignments
    @staticmethod
    def assign_name(node: Any) -> str:
        name = node.child_by_field_name("name")
        return name.text.decode("utf-8", "replace") if name is not None and name.text else ""

    def assignment(self, node: Any, ctx: _Ctx, *, exported: bool) -> Located | None:
        name_node = node.child_by_field_name("name")
        if name_node is None or name_node.type != "variable_name":
            self.substitutions(node, ctx)
            return None  # `ARR[i]=x`: one element, not a variable
        name = self.raw(name_node)
        value_node = node.child_by_field_name("value")
        append = any(c.type == "+=" for c in node.children)
        cond = " && ".join(ctx.conditions) or None
        line = self.line(node)
        if value_node is not None:
            self.substitutions(value_node, ctx)
        if value_node is not None and value_node.type == "array":
            self.array_assign(name, append, value_node, cond)
            items = self.out.arrays.get(name, [])
            return Located(value=" ".join(e.value for e in items), line=line, conditional=bool(cond),
                           condition=cond, function=ctx.function)
        value = self.value(value_node) if value_node is not None else ""
        if append and name in self.vars:
            value = self.vars[name] + value
        return self.assign(name, value, line, cond, exported=exported, raw=self.raw(node), function=ctx.function)

    def declaration(self, node: Any, ctx: _Ctx) -> None:
        head = next((c.type for c in node.children if not c.is_named), "export")
        flags = "".join(self.raw(c) for c in node.named_children if c.type == "word" and self.raw(c).startswith("-"))
        exported = head == "export" or (head in ("declare", "typeset") and "x" in flags)
        argv = [head]
        line = self.line(node)
        for c in node.named_children:
            if c.type == "variable_assignment":
                self.assignment(c, ctx, exported=exported)
                argv.append(self.raw(c))
            elif c.type == "variable_name":
                name = self.raw(c)
                argv.append(name)
                if exported and name in self.out.exports:
                    self.out.assignments.append((name, self.out.exports[name], True))
            else:
                argv.append(self.value(c))
                self.substitutions(c, ctx)
        cond = " && ".join(ctx.conditions) or None
        self.out.commands.append(ShellCommand(argv=argv, line=line, text=self.raw(node).strip(),
                                              conditional=bool(cond), condition=cond, expanded=list(argv),
                                              arg_lines=[line] * len(argv), function=ctx.function))

    # ----- control flow
    def if_node(self, node: Any, ctx: _Ctx) -> None:
        previous: list[str] = []

        def clause(n: Any, cond_allowed: bool) -> None:
            in_cond = cond_allowed
            conds: list[Any] = []
            current = " && ".join(f"! ( {c} )" for c in previous) if not cond_allowed else None
            for c in n.children:
                if not c.is_named:
                    if c.type == "then":
                        in_cond = False
                        cond = "; ".join(self.raw(x).strip() for x in conds).strip().rstrip(";").strip()
                        current = " && ".join([f"! ( {p} )" for p in previous] + [cond])
                        previous.append(cond)
                    continue
                if c.type in ("elif_clause", "else_clause"):
                    continue
                if in_cond:
                    conds.append(c)
                    self.walk(c, ctx)
                    continue
                self.walk(c, _Ctx(ctx.conditions + ((current,) if current else ()), ctx.depth, ctx.function))

        clause(node, True)
        for c in node.named_children:
            if c.type == "elif_clause":
                clause(c, True)
            elif c.type == "else_clause":
                clause(c, False)

    def case_node(self, node: Any, ctx: _Ctx) -> None:
        word = node.child_by_field_name("value")
        subject = self.raw(word) if word is not None else ""
        if word is not None:
            self.substitutions(word, ctx)
        for item in node.named_children:
            if item.type != "case_item":
                continue
            patterns = [self.raw(p) for p in item.children_by_field_name("value")]
            cond = f"{subject} matches {'|'.join(patterns)}"
            inner = _Ctx(ctx.conditions + (cond,), ctx.depth, ctx.function)
            values = {p.id for p in item.children_by_field_name("value")}
            for c in item.named_children:
                if c.id not in values:
                    self.walk(c, inner)

    def function_node(self, node: Any, ctx: _Ctx) -> None:
        name_node = node.child_by_field_name("name")
        name = self.raw(name_node) if name_node is not None else ""
        if name:
            self.out.functions[name] = FunctionDef(name=name, line=self.line(node),
                                                   end_line=node.end_point[0] + 1 + self.offset)
        body = node.child_by_field_name("body")
        if body is not None:
            self.walk(body, _Ctx(ctx.conditions, ctx.depth, name or ctx.function))


    def resolve(self, value: str) -> str:
        def sub(m: re.Match) -> str:
            name = m.group(1) or m.group(4)
            if name in self.vars:
                return self.vars[name]
            if m.group(2) and m.group(3) is not None:
                return m.group(3)
            return m.group(0)
        out = _TRIM.sub(self._trim, value) if "${" in value else value
        out = _PARAM.sub(sub, out)
        if "$((" in out or "awk" in out:
            out = _literal_arithmetic(out, self.vars)
        if "printf" in out:
            out = _literal_printf(out)
        return out

    def _trim(self, m: re.Match) -> str:
        """`${DRAFT_MODEL##*/}`, `${MODEL_PATH%/}`: a known value with a glob prefix/suffix removed."""
        name, op, pattern = m.group(1), m.group(2), m.group(3)
        if name not in self.vars or "$" in pattern:
            return m.group(0)
        return trim_pattern(self.vars[name], op, pattern)

    def assign(self, name: str, value: str, line: int, cond: str | None, *, exported: bool,
               raw: str = "", function: str | None = None) -> Located:
        resolved = self.resolve(value)
        loc = Located(value=value, line=line, conditional=bool(cond), condition=cond, resolved=resolved,
                      function=function)
        if "$(" in raw or "`" in raw:
            low = raw.lower()
            if ("python" in low and _IMPORT_LOOKUP.search(raw)) or "pip show" in low:
                self.tainted.add(name)
        self.out.assignments.append((name, loc, exported))
        if eval_branch(cond) is True and name in self.vars:
            # `if [ "$EVAL_ONLY" = true ]; then X=eval-value; fi`: the benchmark run keeps the value
            # it had (or gets from the other branch); the eval-only one is recorded, not served.
            return loc
        self.vars[name] = resolved
        self.out.exports[name] = loc
        return loc

    def value_condition(self, raw: str) -> str | None:
        """The conditions of the assignments a word's variables were last given under: the
        value of `"$SPEC_CONFIG"` set in an `if`/`else` branch holds only in that branch."""
        conds: list[str] = []
        for m in _PARAM.finditer(raw):
            src = self.out.exports.get(m.group(1) or m.group(4) or "")
            if src is not None and src.condition and src.condition not in conds:
                conds.append(src.condition)
        return " && ".join(conds) or None

    def array_assign(self, name: str, append: bool, node: Any, cond: str | None) -> None:
        items: list[Located] = []
        for el in node.named_children:
            if el.type == "comment":
                continue
            raw = self.raw(el)
            ref = _ARRAY_REF.match(raw.strip())
            if ref and ref.group(1) in self.out.arrays:
                # `"${SPEC_ARGS[@]}"` inside another array: its elements, with their own lines.
                for item in self.out.arrays[ref.group(1)]:
                    where = " && ".join(c for c in (cond, item.condition) if c) or None
                    items.append(Located(value=item.value, line=item.line, conditional=bool(where), condition=where,
                                         resolved=item.resolved))
                continue
            value = self.value(el)
            simple = _SIMPLE_REF.match(raw.strip())
            if simple and el.type != "string" and simple.group(1) in self.vars and "$(" not in self.vars[simple.group(1)]:
                for part in self.vars[simple.group(1)].split():  # unquoted `$FLAGS` splits on whitespace
                    items.append(Located(value=part, line=self.line(el), conditional=bool(cond), condition=cond,
                                         resolved=part))
                continue
            where = " && ".join(c for c in (cond, self.value_condition(raw)) if c) or None
            items.append(Located(value=value, line=self.line(el), conditional=bool(where), condition=where,
                                 resolved=self.resolve(value)))
        if append:
            self.out.arrays.setdefault(name, []).extend(items)
        elif eval_branch(cond) is not True or name not in self.out.arrays:
            self.out.arrays[name] = items  # an eval-only branch does not replace the served array

    def expand_words(self, words: list[tuple[str, int, str]]) -> tuple[list[str], list[int], list[str | None]]:
        out: list[str] = []
        lines: list[int] = []
        conds: list[str | None] = []  # condition under which an array element was added
        for word, line, raw in words:
            m = _ARRAY_REF.match(raw.strip())
            if m and m.group(1) in self.out.arrays:
                for item in self.out.arrays[m.group(1)]:
                    out.append(item.resolved or item.value)
                    lines.append(item.line)
                    conds.append(item.condition)
                continue
            m = _SIMPLE_REF.match(raw.strip())
            if m and m.group(1) in self.vars and not raw.startswith('"'):
                # Unquoted expansion splits on whitespace only; quotes inside the value stay.
                src = self.out.exports.get(m.group(1))
                value = self.vars[m.group(1)]
                for part in ([value] if "$(" in value else value.split()):
                    out.append(part)
                    lines.append(src.line if src else line)
                    conds.append(src.condition if src else None)
                continue
            out.append(self.resolve(word))
            lines.append(line)
            conds.append(self.value_condition(raw))
        return out, lines, conds

    # ----- per-command analysis
    def handle(self, cmd: ShellCommand, ctx: _Ctx) -> None:
        self.out.commands.append(cmd)
        self._function = cmd.function
        argv = cmd.expanded or cmd.argv
        head = argv[0].rsplit("/", 1)[-1]
        cond = cmd.condition
        if head in SETTERS:
            # Literal words, so `export X=$Y` keeps `$Y` as the value and `resolved` expands it.
            lines = cmd.arg_lines if len(cmd.arg_lines) == len(cmd.argv) else [cmd.line] * len(cmd.argv)
            for arg, line in zip(cmd.argv[1:], lines[1:]):
                if arg.startswith("-"):
                    continue
                name, has_value, value = arg.partition("=")
                if not _ENV_NAME.match(name):
                    continue
                if has_value:
                    self.assign(name, value, line, cond, exported=head == "export",
                                raw=self._raw_for(cmd, name) or arg, function=cmd.function)
                elif head == "export" and name in self.out.exports:
                    self.out.assignments.append((name, self.out.exports[name], True))
            return
        if head in ("source", ".") and len(argv) > 1 and argv[1].startswith(("<(", "/dev/fd/", "/proc/self/fd/")):
            self.opaque(cmd.line, MSG_OPAQUE_RUN.format(text=_short(cmd.text)))
            return
        if head in ("source", ".") and len(argv) > 1:
            self.out.sources.append(Located(value=cmd.argv[1], line=cmd.line, conditional=bool(cond),
                                            condition=cond, resolved=argv[1], function=cmd.function))
            return
        if head == "exec" and len(argv) > 1 and len(cmd.argv) == len(argv) and ctx.depth < MAX_NESTING:
            # `exec CMD ...` replaces the shell with CMD: analyse CMD itself.
            inner = ShellCommand(argv=cmd.argv[1:], line=cmd.line, text=cmd.text, env=cmd.env,
                                 redirects=cmd.redirects, conditional=cmd.conditional, condition=cmd.condition,
                                 expanded=cmd.expanded[1:], arg_lines=cmd.arg_lines[1:],
                                 arg_conditions=cmd.arg_conditions[1:], function=cmd.function)
            self.handle(inner, _Ctx(ctx.conditions, ctx.depth + 1, ctx.function))
            return
        if head.endswith(".sh") and not argv[0].startswith("$"):
            # `./helper.sh` or `"$(dirname "$0")/helper.sh"`: a script the launcher runs.
            self.out.sources.append(Located(value=cmd.argv[0], line=cmd.line, conditional=bool(cond),
                                            condition=cond, resolved=argv[0], function=cmd.function))
        if head in ("cd", "pushd", "popd"):
            target = argv[1] if len(argv) > 1 else None
            previous = self.cwd
            if head == "popd" or target == "-":
                self.cwd = self._prev_cwd
            elif target is None:
                self.cwd = None
            else:
                self.cwd = target if target.startswith("/") or self.cwd is None else f"{self.cwd.rstrip('/')}/{target}"
            self._prev_cwd = previous
            return
        if head in WRAPPERS and ctx.depth < MAX_NESTING:
            inner_cmd = self.unwrap(cmd, head)
            if inner_cmd is not None:
                # `sudo -E git apply x`, `timeout 60 sed -i ...`: judge the wrapped command.
                self.handle(inner_cmd, _Ctx(ctx.conditions, ctx.depth + 1, ctx.function))
                return
        if head in ("bash", "sh", "eval") and ctx.depth < MAX_NESTING:
            inner = None
            if head == "eval":
                inner = " ".join(argv[1:])
                if _DYNAMIC.search(inner):
                    self.opaque(cmd.line, MSG_OPAQUE_EVAL.format(text=_short(cmd.text)))
                    return
            else:
                flag_c = next((k for k, a in enumerate(argv[1:-1], 1) if re.fullmatch(r"-[a-zA-Z]*c[a-zA-Z]*", a)), None)
                if flag_c is not None:
                    inner = argv[flag_c + 1]
            if inner:
                self.nested(inner, cmd.line, ctx)
                return
            script = next((a for a in argv[1:] if not a.startswith("-")), None)
            stdin = head != "eval" and ("-s" in argv[1:] or script is None)
            if stdin and self._stdin_heredoc is not None:
                # `bash -s <<'EOF'`: the heredoc body is the script.
                h = self._stdin_heredoc
                self.nested(h.body, h.body_line, ctx)
                return
            if script is not None and script.startswith(("<(", "/dev/fd/", "/proc/self/fd/")):
                self.opaque(cmd.line, MSG_OPAQUE_RUN.format(text=_short(cmd.text)))
                return
            if head != "eval" and script:
                # `bash helper.sh` runs a referenced script: report it with the sourced helpers.
                self.out.sources.append(Located(value=cmd.argv[argv.index(script)] if len(cmd.argv) == len(argv) else script,
                                                line=cmd.line, conditional=bool(cond), condition=cond, resolved=script,
                                                function=cmd.function))
        self.detect_launch(cmd, argv)
        self.detect_pip(cmd, argv)
        self.detect_patches(cmd, cmd.argv, cmd.argv[0].rsplit("/", 1)[-1])

    def opaque(self, line: int, message: str, text: str | None = None) -> None:
        """Something on the path runs code the bot cannot read: a "could not verify" finding."""
        self.out.partial = True
        if text is not None:
            self.out.opaque_texts[line] = text
        self.out.findings.append(Finding(path=self.path, line=line, code="shell-opaque", severity="warning",
                                         message=MSG_OPAQUE.format(line=line, path=self.path, what=message)))

    def unwrap(self, cmd: ShellCommand, head: str) -> ShellCommand | None:
        """The command a wrapper (`env`, `sudo`, `nohup`, `timeout`, `xargs`, ...) runs, or None."""
        words = cmd.expanded or cmd.argv
        k = 1
        value_opts = WRAPPERS[head]
        while k < len(words):
            w = words[k]
            if head == "command" and w in ("-v", "-V"):
                return None  # `command -v x` only asks where x is
            if w == "--":
                k += 1
                break
            if w.startswith("-") and len(w) > 1:
                k += 2 if w in value_opts else 1
                continue
            if head == "env" and "=" in w and _ENV_NAME.match(w.split("=", 1)[0]):
                k += 1
                continue
            if head == "timeout" and re.fullmatch(r"[\d.]+[smhd]?", w):
                k += 1
                break
            break
        if head == "timeout" and k < len(words) and re.fullmatch(r"[\d.]+[smhd]?", words[k]):
            k += 1
        if k >= len(words):
            return None
        same = len(cmd.argv) == len(words)
        argv = cmd.argv[k:] if same else words[k:]
        return ShellCommand(argv=argv, line=cmd.line, text=cmd.text, env=cmd.env, redirects=cmd.redirects,
                            conditional=cmd.conditional, condition=cmd.condition, expanded=words[k:],
                            arg_lines=cmd.arg_lines[k:], arg_conditions=cmd.arg_conditions[k:], function=cmd.function)

    def _raw_for(self, cmd: ShellCommand, name: str) -> str | None:
        m = re.search(rf"\b{re.escape(name)}=(\$\(.*)", cmd.text, re.S)
        return m.group(0) if m else None

    def nested(self, inner: str, line: int, ctx: _Ctx) -> None:
        sub = _Analyzer(inner, self.path, line - 1)
        sub.vars = dict(self.vars)
        sub.tainted = set(self.tainted)
        sub.out.arrays = dict(self.out.arrays)
        sub.out.exports = dict(self.out.exports)
        sub.cwd = self.cwd
        sub.out.functions = self.out.functions
        try:
            tree = _parser().parse(sub.src)
            sub.walk(tree.root_node, _Ctx(ctx.conditions, ctx.depth + 1, ctx.function))
        except (RecursionError, ValueError, TypeError, IndexError, KeyError, AttributeError):
            return  # a string that is not shell: nothing runtime to report
        for c in sub.out.commands:
            c.conditional = c.conditional or bool(ctx.conditions)
            c.condition = c.condition or (" && ".join(ctx.conditions) or None)
        self.out.commands.extend(sub.out.commands)
        self.out.patches.extend(sub.out.patches)
        self.out.pip_installs.extend(sub.out.pip_installs)
        self.out.server_launches.extend(sub.out.server_launches)
        self.out.sources.extend(sub.out.sources)
        for name, loc, exported in sub.out.assignments:
            self.out.assignments.append((name, loc, exported))
            self.out.exports[name] = loc
        self.vars.update(sub.vars)
        self.tainted |= sub.tainted

    def detect_launch(self, cmd: ShellCommand, argv: list[str]) -> None:
        for i, word in enumerate(argv):
            base = word.rsplit("/", 1)[-1]
            engine = entry = None
            start = 0
            m = _python_module(argv, i)
            if m is not None:
                if argv[m] in LAUNCH_MODULES:
                    engine, entry, start = LAUNCH_MODULES[argv[m]], argv[m], m + 1
            elif (base, argv[i + 1] if i + 1 < len(argv) else "") in LAUNCH_SUBCOMMANDS:
                engine = LAUNCH_SUBCOMMANDS[(base, argv[i + 1])]
                entry, start = f"{base} serve", i + 2
            elif base in LAUNCH_EXECUTABLES:
                engine, entry, start = LAUNCH_EXECUTABLES[base], base, i + 1
                if start < len(argv) and argv[start] == "serve":
                    start += 1
            if engine:
                self.out.server_launches.append(self.launch(cmd, argv, engine, entry or "", start))
                return

    def launch(self, cmd: ShellCommand, argv: list[str], engine: str, entry: str, start: int) -> ServerLaunch:
        lines = cmd.arg_lines if len(cmd.arg_lines) == len(argv) else [cmd.line] * len(argv)
        sl = ServerLaunch(argv=cmd.argv, line=cmd.line, text=cmd.text, env=cmd.env, redirects=cmd.redirects,
                          conditional=cmd.conditional, condition=cmd.condition, expanded=cmd.expanded,
                          arg_lines=cmd.arg_lines, engine=engine, entry=entry)
        i = start
        while i < len(argv):
            word = argv[i]
            if word.startswith("-") and len(word) > 1 and not _NUMBER.match(word):
                if word.startswith("--") and "=" in word:
                    name, value = word.split("=", 1)
                elif i + 1 < len(argv) and not (argv[i + 1].startswith("-") and not _NUMBER.match(argv[i + 1])):
                    name, value = word, argv[i + 1]
                    i += 1
                else:
                    name, value = word, ""
                key = normalise_flag(name)
                extra = cmd.arg_conditions[i] if len(cmd.arg_conditions) == len(argv) else None
                where = " && ".join(c for c in (cmd.condition, extra) if c) or None
                flag = Flag(value=value, line=lines[i], conditional=bool(where), condition=where,
                            resolved=value, original=name)
                served = not (key in sl.flags and eval_branch(where) is True)
                if served:
                    sl.flags[key] = flag
                sl.flag_list.append(flag)
                if served and _JSON_START.match(value):
                    try:
                        parsed = json.loads(value)
                    except ValueError as e:
                        self.out.findings.append(Finding(path=self.path, line=flag.line, code="json-flag",
                                                         severity="warning",
                                                         message=MSG_JSON_FLAG.format(flag=key, error=e)))
                    else:
                        if isinstance(parsed, dict):
                            sl.json_flags[key] = parsed
            else:
                sl.positionals.append(word)
            i += 1
        return sl

    def detect_pip(self, cmd: ShellCommand, argv: list[str]) -> None:
        for i, word in enumerate(argv):
            base = word.rsplit("/", 1)[-1]
            rest: list[str] | None = None
            if re.match(r"^pip\d*(?:\.\d+)?$", base) and "install" in argv[i + 1:i + 2]:
                rest = argv[i + 2:]
            elif _PYTHON.match(base) and argv[i + 1:i + 4] == ["-m", "pip", "install"]:
                rest = argv[i + 4:]
            elif base == "uv" and argv[i + 1:i + 3] == ["pip", "install"]:
                rest = argv[i + 3:]
            elif _PYTHON.match(base) and len(argv) > i + 2 and argv[i + 1].endswith("setup.py") and argv[i + 2] in ("install", "develop", "bdist_wheel"):
                self.out.pip_installs.append(PipInstall(targets=["."], line=cmd.line, text=cmd.text, from_path=True,
                                                        function=cmd.function))
                return
            if rest is None:
                continue
            targets: list[str] = []
            editable = False
            j = 0
            while j < len(rest):
                a = rest[j]
                if a in ("-e", "--editable"):
                    editable = True
                    if j + 1 < len(rest):
                        targets.append(rest[j + 1])
                    j += 2
                    continue
                if a in PIP_VALUE_OPTIONS:
                    if a in ("-r", "--requirement") and j + 1 < len(rest):
                        targets.append(f"-r {rest[j + 1]}")
                    j += 2
                    continue
                if a.startswith("-"):
                    j += 1
                    continue
                targets.append(a)
                j += 1
            vcs = any(re.search(r"(?:^|@\s*|\s)(?:git|hg|svn|bzr)\+|\.git(?:@|#|$)|github\.com/", t) for t in targets)
            wheel = any(re.search(r"\.whl(?:$|[#?])", t) for t in targets)
            local = editable or any(
                t.startswith((".", "/", "~", "file:")) or (t.endswith((".tar.gz", ".zip")) and "://" not in t)
                for t in targets if not t.startswith("-r ")
            )
            self.out.pip_installs.append(PipInstall(targets=targets, line=cmd.line, text=cmd.text, function=cmd.function,
                                                    from_vcs=vcs, from_wheel=wheel, from_path=local))
            return

    # ----- patches
    def classify(self, target: str | None) -> str:
        """'sensitive', 'benign' or 'unknown' for a write target (see module docstring)."""
        if not target:
            return "unknown"
        if _CUSTOMIZE.search(target):
            return "sensitive"
        names = {m.group(1) or m.group(4) for m in _PARAM.finditer(target)}
        if names & self.tainted or _SENSITIVE_VAR.search(target) or "$(python" in target:
            return "sensitive"
        resolved = self.resolve(target)
        if not resolved.startswith("/") and self.cwd:
            resolved = f"{self.cwd.rstrip('/')}/{resolved}"
        if _SENSITIVE_PATH.search(resolved):
            return "sensitive"
        if _BENIGN_PATH.search(resolved):
            return "benign"
        return "unknown"

    def add_patch(self, kind: str, target: str | None, cmd_line: int, text: str, sensitive: bool = True) -> None:
        if target and _CUSTOMIZE.search(target):
            kind = "sitecustomize"
        self.out.patches.append(PatchOp(kind=kind, target=target, line=cmd_line, text=text, sensitive=sensitive,
                                        function=self._function))

    def detect_patches(self, cmd: ShellCommand, argv: list[str], head: str) -> None:
        args = argv[1:]
        text, line = cmd.text, cmd.line
        heredocs = self._heredoc_by_line.get(line, [])
        if _CUSTOMIZE.search(" ".join(argv)) and head not in ("echo", "printf"):
            self.add_patch("sitecustomize", next((a for a in args if _CUSTOMIZE.search(a)), None), line, text)
            return
        if head == "git" and any(a in ("apply", "am") for a in args):
            target = args[args.index("-C") + 1] if "-C" in args[:-1] else self.cwd
            self.add_patch("git-apply", target, line, text)
            return
        if head == "git" and any(a in GIT_CODE_CHANGES for a in args):
            # Other commits brought into an engine source tree (`git fetch fork && git cherry-pick`).
            target = args[args.index("-C") + 1] if "-C" in args[:-1] else self.cwd
            if self.classify(target) == "sensitive":
                self.add_patch("git-apply", target, line, text)
                return
        if head == "patch":
            target = None
            for k, a in enumerate(args):
                if a in ("-d", "--directory") and k + 1 < len(args):
                    target = args[k + 1]
                elif a.startswith("--directory="):
                    target = a.split("=", 1)[1]
            self.add_patch("patch", target or self.cwd, line, text)
            return
        if head in ("sed", "perl") and any(a == "-i" or a.startswith("--in-place") or re.match(r"^-[a-zA-Z0-9]*i", a) for a in args):
            files = self._sed_files(args) if head == "sed" else [a for a in args if not a.startswith("-")][1:]
            classes = [self.classify(f) for f in files] or ["unknown"]
            if any(c != "benign" for c in classes):
                target = next((f for f, c in zip(files, classes) if c == "sensitive"), files[0] if files else None)
                self.add_patch("sed-inplace", target, line, text, sensitive="sensitive" in classes)
            return
        if _PYTHON.match(head) and "-c" in args[:-1]:
            code = args[args.index("-c") + 1]
            target = self.python_write_target(code)
            if target:
                self.add_patch("python-c-write", target, line, text)
                return
        if any(a.endswith((".patch", ".diff")) for a in args):
            self.add_patch("patch-file", next(a for a in args if a.endswith((".patch", ".diff"))), line, text)
            return
        if head in ("cp", "mv", "install", "rsync", "ln"):
            dests = [a for a in args if not a.startswith("-")]
            if "-t" in args[:-1]:
                dests = [args[args.index("-t") + 1]]
            if len(dests) >= 2 or "-t" in args:
                dest = dests[-1]
                if self.classify(dest) == "sensitive":
                    self.add_patch("copy-overwrite", dest, line, text)
                    return
        if head in ("wget", "curl"):
            for k, a in enumerate(args):
                if a in ("-O", "-o", "--output", "--output-document") and k + 1 < len(args):
                    if self.classify(args[k + 1]) == "sensitive":
                        self.add_patch("copy-overwrite", args[k + 1], line, text)
                        return
        if head in ("tee", "dd"):
            for a in args:
                t = a[3:] if a.startswith("of=") else a
                if not a.startswith("-") and self.classify(t) == "sensitive":
                    self.add_patch("heredoc-write" if heredocs else "redirect-write", t, line, text)
                    return
        for op, target in cmd.redirects:
            if op in (">", ">>", ">|", "&>") and self.classify(target) == "sensitive":
                self.add_patch("heredoc-write" if heredocs else "redirect-write", target, line, text)
                return

    @staticmethod
    def _sed_files(args: list[str]) -> list[str]:
        files: list[str] = []
        script_seen = False
        k = 0
        while k < len(args):
            a = args[k]
            if a in ("-e", "--expression", "-f", "--file"):
                script_seen = True
                k += 2
                continue
            if a.startswith("-"):
                k += 1
                continue
            if not script_seen:
                script_seen = True
            else:
                files.append(a)
            k += 1
        return files

    def python_write_target(self, code: str) -> str | None:
        """A sensitive file the Python code writes, or a description of one; None if benign."""
        writes = _py_writes(code)
        if _CUSTOMIZE.search(code) and writes:
            return "sitecustomize.py"
        if not writes:
            return None
        for m in _PY_LITERAL_PATH.finditer(code):
            if self.classify(m.group(1)) == "sensitive":
                return m.group(1)
        if _IMPORT_LOOKUP.search(code):
            mods = _FIND_SPEC.findall(code)
            for imported in _PY_IMPORTED.findall(code):
                mods += [m.strip().split(" ")[0] for m in imported.split(",")]
            engines = [m for m in mods if m.split(".")[0] in ENGINE_PACKAGES]
            return f"{engines[0]}.__file__" if engines else IMPORT_LOOKUP_TARGET
        if any(name in self.tainted and (f"'{name}'" in code or f"${name}" in code or f"${{{name}}}" in code or f"environ['{name}']" in code or f'environ["{name}"]' in code) for name in self.tainted):
            return IMPORT_LOOKUP_TARGET
        return None

    def _heredoc_patches(self) -> None:
        """Python fed a heredoc (`python3 - <<EOF`) that writes into the serving stack."""
        for h in self.out.heredocs:
            head = h.command.split()[0].rsplit("/", 1)[-1] if h.command.split() else ""
            runner = [w.rsplit("/", 1)[-1] for w in h.command.split()]
            if any(_PYTHON.match(w) for w in runner[:3]) or head in ("python", "python3"):
                target = self.python_write_target(h.body)
                if target and not any(p.line == h.line for p in self.out.patches):
                    kind = "sitecustomize" if target == "sitecustomize.py" else "heredoc-write"
                    fn = next((f.name for f in self.out.functions.values() if f.line <= h.line <= f.end_line), None)
                    self.out.patches.append(PatchOp(kind=kind, target=target, line=h.line, text=h.command, function=fn))

    # ----- fallback

# --------------------------------------------------------------------------- public API


_MEMO: dict[tuple[str, int, str], ScriptAnalysis] = {}
_MEMO_MAX = 4096


def analyze_script(text: str, path: str, *, line_offset: int = 0) -> ScriptAnalysis:
    """Analyse a whole bash script. Never raises: unreadable input becomes findings.

    Memoized per process on (path, line offset, text): the result is shared by every caller
    and must not be mutated."""
    key = (path, line_offset, text)
    hit = _MEMO.get(key)
    if hit is not None:
        return hit
    out = _analyze(text, path, line_offset)
    if len(_MEMO) >= _MEMO_MAX:
        _MEMO.clear()
    _MEMO[key] = out
    return out


def _analyze(text: str, path: str, line_offset: int) -> ScriptAnalysis:
    if len(text) > MAX_SCRIPT_CHARS:
        out = ScriptAnalysis(path=path, partial=True)
        out.findings.append(Finding(path=path, line=None, code="shell-cap", severity="warning",
                                    message=MSG_CAP.format(path=path, size=len(text), cap=MAX_SCRIPT_CHARS)))
        return out
    try:
        return _Analyzer(text, path, line_offset).run()
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


def code_units(text: str) -> CodeUnits | None:
    """Split a script into its top-level code and its function bodies, comments and
    indentation dropped, to attribute a change to functions (checks.launch_path)."""
    if len(text) > MAX_SCRIPT_CHARS:
        return None
    try:
        src = text.encode("utf-8", "surrogatepass")
        root = _parser().parse(src).root_node
        if root.has_error:
            return None
        comments: list[tuple[int, int]] = []
        functions: list[Any] = []
        stack = [root]
        while stack:
            n = stack.pop()
            if n.type == "comment":
                comments.append((n.start_byte, n.end_byte))
                continue
            if n.type == "function_definition":
                functions.append(n)
            stack.extend(n.children)

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
    except (RecursionError, ValueError, TypeError, AttributeError):
        return None


def analyze_command_line(text: str, path: str, line: int) -> ScriptAnalysis:
    """Analyse one command string (a recipe's setup script or benchmark.command) found at `line`."""
    return analyze_script(text, path, line_offset=max(0, line - 1))
