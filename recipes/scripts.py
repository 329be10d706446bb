"""Static analysis of bash launch scripts and command strings: env, server flags, patches, installs.

Parsing uses bashlex after a length-preserving rewrite of the constructs it cannot read
(heredoc bodies, `NAME=(...)` arrays, `[[ ]]`, arithmetic), so byte offsets still map to the
original lines. When bashlex still fails (e.g. `case`), the script is analysed logical line
by logical line, a warning Finding names the line, and `partial` is set. Nothing raises.

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
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import Any

import bashlex
import bashlex.errors

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

MSG_PARSE = "bash parser could not read this script ({error}); analysed line by line, results may be incomplete"
MSG_LINE = "could not tokenise this line; only a text scan was done"
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


@dataclass(frozen=True)
class PipInstall:
    targets: list[str]
    line: int
    text: str
    from_vcs: bool = False
    from_wheel: bool = False
    from_path: bool = False

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

    def env(self, name: str) -> Located | None:
        """The last assignment of `name` (exported, plain, or a launch-command prefix)."""
        return self.exports.get(name)

    def assignments_of(self, name: str) -> list[Located]:
        """Every assignment of `name` in source order (e.g. both branches of an if/else)."""
        return [loc for n, loc, _ in self.assignments if n == name]


def normalise_flag(name: str) -> str:
    """`--Speculative_Config` -> `speculative-config` (vLLM/SGLang accept both spellings)."""
    return name.lstrip("-").replace("_", "-").lower()


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


# --------------------------------------------------------------------------- preparation


@dataclass
class _Prepared:
    text: str  # same length as the input; unreadable constructs blanked
    heredocs: list[tuple[int, Heredoc]]  # (offset of `<<`, heredoc)
    arrays: dict[int, tuple[str, bool, str, int]]  # offset of NAME -> (name, append, inner, inner offset)
    findings: list[Finding]
    arith: dict[int, int] = field(default_factory=dict)  # `$((` offset -> end of its `))`


def _blank(chars: list[str], start: int, end: int, fill: str = " ") -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = fill


def _match_paren(text: str, start: int, open_: str = "(", close: str = ")") -> int:
    """Offset just past the bracket closing the one at `start`, skipping quotes; -1 if none."""
    depth = 0
    i = start
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'":
            j = text.find("'", i + 1)
            i = n if j < 0 else j + 1
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c == "#" and (i == 0 or text[i - 1] in " \t\n"):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if c == open_:
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def _prepare(text: str, path: str, line_of) -> _Prepared:
    chars = list(text)
    heredocs: list[tuple[int, Heredoc]] = []
    arrays: dict[int, tuple[str, bool, str, int]] = {}
    findings: list[Finding] = []
    arith: dict[int, int] = {}
    pending: list[tuple[int, str, bool, bool, int]] = []  # (op offset, delim, strip tabs, quoted, op end)
    n = len(text)
    i = 0
    word_start = True
    while i < n:
        c = text[i]
        if c == "\n":
            i += 1
            word_start = True
            for op_at, delim, strip, quoted, _end in pending:
                body_start = i
                body_lines: list[str] = []
                closed = False
                while i < n:
                    j = text.find("\n", i)
                    j = n if j < 0 else j
                    raw = text[i:j]
                    check = raw.lstrip("\t") if strip else raw
                    if check == delim:
                        _blank(chars, i, j)
                        i = j + 1 if j < n else n
                        closed = True
                        break
                    body_lines.append(raw)
                    _blank(chars, i, j)
                    i = j + 1 if j < n else n
                if not closed:
                    findings.append(Finding(path=path, line=line_of(op_at), code="shell-parse", severity="warning",
                                            message=MSG_UNCLOSED_HEREDOC.format(delim=delim)))
                cmd_start = text.rfind("\n", 0, op_at) + 1
                cmd_end = text.find("\n", op_at)
                heredocs.append((op_at, Heredoc(
                    delimiter=delim, body="\n".join(body_lines) + ("\n" if body_lines else ""),
                    line=line_of(op_at), body_line=line_of(body_start) if body_start < n else line_of(op_at) + 1,
                    quoted=quoted, command=text[cmd_start:cmd_end if cmd_end >= 0 else n].strip(),
                )))
            pending = []
            continue
        if c == "\\":
            i += 2
            word_start = False
            continue
        if c == "'":
            j = text.find("'", i + 1)
            i = n if j < 0 else j + 1
            word_start = False
            continue
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            word_start = False
            continue
        if c == "#" and word_start:
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("<<", i) and not text.startswith("<<<", i):
            m = _HEREDOC_OP.match(text, i)
            if m:
                if m.group(4) is not None:
                    delim, quoted = m.group(4), text[m.start(4) - 1] == "\\"  # `<<\EOF` is quoted too
                else:
                    delim, quoted = (m.group(2) if m.group(2) is not None else m.group(3)), True
                pending.append((i, delim, m.group(1) == "-", quoted, m.end()))
                _blank(chars, i, m.end())
                i = m.end()
                word_start = False
                continue
        if word_start:
            m = _ARRAY_ASSIGN.match(text, i)
            if m:
                open_at = m.end() - 1
                close_at = _match_paren(text, open_at)
                if close_at > 0:
                    arrays[i] = (m.group(1), m.group(2) == "+=", text[open_at + 1:close_at - 1], open_at + 1)
                    _blank(chars, open_at, close_at)
                    i = close_at
                    word_start = False
                    continue
            if text.startswith("[[", i) and (i + 2 >= n or text[i + 2] in " \t\n"):
                chars[i + 1] = " "
                i += 2
                continue
            if text.startswith("((", i):
                close_at = _match_paren(text, i)
                if close_at > 0:
                    _blank(chars, i, close_at)
                    chars[i] = ":"
                    i = close_at
                    continue
        if text.startswith("]]", i) and i > 0 and text[i - 1] in " \t" and (i + 2 >= n or text[i + 2] in " \t\n;&|)"):
            chars[i] = " "
            i += 2
            continue
        if text.startswith("$((", i):
            close_at = _match_paren(text, i + 1)
            if close_at > 0:
                arith[i] = close_at
                _blank(chars, i, close_at)
                chars[i] = "0"
                i = close_at
                word_start = False
                continue
        word_start = c in " \t;&|(){}"
        i += 1
    return _Prepared("".join(chars), heredocs, arrays, findings, arith)


# --------------------------------------------------------------------------- analysis


@dataclass
class _Ctx:
    conditions: tuple[str, ...] = ()
    depth: int = 0


class _Analyzer:
    def __init__(self, text: str, path: str, line_offset: int):
        self.text = text
        self.path = path
        self.offset = line_offset
        self._nl = [i for i, c in enumerate(text) if c == "\n"]
        self.out = ScriptAnalysis(path=path)
        self.vars: dict[str, str] = {}
        self.tainted: set[str] = set()
        self.cwd: str | None = None  # best effort: the directory relative targets resolve against
        self._prev_cwd: str | None = None
        self.prep: _Prepared | None = None
        self._heredoc_by_line: dict[int, list[Heredoc]] = {}

    # ----- positions
    def line_of(self, pos: int) -> int:
        return bisect_right(self._nl, pos - 1) + 1 + self.offset

    # ----- entry
    def run(self) -> ScriptAnalysis:
        prep = _prepare(self.text, self.path, self.line_of)
        self.prep = prep
        self.out.findings.extend(prep.findings)
        for _, h in prep.heredocs:
            self.out.heredocs.append(h)
            self._heredoc_by_line.setdefault(h.line, []).append(h)
        try:
            nodes = bashlex.parse(prep.text) if prep.text.strip() else []
        except (bashlex.errors.ParsingError, NotImplementedError, AttributeError, IndexError,
                TypeError, ValueError, AssertionError, RecursionError) as e:
            pos = getattr(e, "position", None)
            line = self.line_of(pos) if isinstance(pos, int) else None
            msg = getattr(e, "message", None) or str(e) or type(e).__name__
            self.out.findings.append(Finding(path=self.path, line=line, code="shell-parse", severity="warning",
                                             message=MSG_PARSE.format(error=msg)))
            self.out.partial = True
            self._line_mode(prep.text)
        else:
            for node in nodes:
                self.walk(node, _Ctx(), base=0)
        self._heredoc_patches()
        if self.out.server_launches:
            self.out.server_launch = self.out.server_launches[0]
        return self.out

    # ----- AST walk
    def walk(self, node: Any, ctx: _Ctx, base: int) -> None:
        kind = node.kind
        if kind == "command":
            self.command(node, ctx, base)
        elif kind == "if":
            self.if_node(node, ctx, base)
        elif kind == "function":
            for p in node.parts:
                if p.kind not in ("word", "reservedword"):
                    self.walk(p, ctx, base)
        elif kind in ("commandsubstitution", "processsubstitution"):
            self.walk(node.command, ctx, base)
        elif kind in ("word", "assignment"):
            for p in getattr(node, "parts", []) or []:
                self.walk(p, ctx, base)
        elif kind == "redirect":
            out = getattr(node, "output", None)
            if out is not None and not isinstance(out, int):
                self.walk(out, ctx, base)
        else:
            for attr in ("parts", "list"):
                for p in getattr(node, attr, None) or []:
                    self.walk(p, ctx, base)

    def if_node(self, node: Any, ctx: _Ctx, base: int) -> None:
        previous: list[str] = []
        current: str | None = None
        expect_cond = False
        for p in node.parts:
            if p.kind == "reservedword":
                if p.word in ("if", "elif"):
                    expect_cond = True
                elif p.word == "then":
                    expect_cond = False
                elif p.word == "else":
                    current = " && ".join(f"! ( {c} )" for c in previous)
                continue
            if expect_cond:
                cond = self.text[base + p.pos[0]: base + p.pos[1]].strip().rstrip(";").strip()
                self.walk(p, ctx, base)
                current = " && ".join([f"! ( {c} )" for c in previous] + [cond])
                previous.append(cond)
                continue
            inner = _Ctx(ctx.conditions + ((current,) if current else ()), ctx.depth)
            self.walk(p, inner, base)

    def word_text(self, node: Any, base: int) -> str:
        """bashlex's word, or the original text where the rewrite blanked `$((...))`."""
        a, b = base + node.pos[0], base + node.pos[1]
        if self.prep is not None and self.prep.text[a:b] != self.text[a:b]:
            b = max([b] + [end for start, end in self.prep.arith.items() if a <= start < b])
            raw = self.text[a:b]
            return raw[1:-1] if len(raw) > 1 and raw[0] == raw[-1] and raw[0] in "'\"" else raw
        return node.word

    def source_text(self, base: int, node: Any) -> str:
        return self.text[base + node.pos[0]: base + node.pos[1]]

    def command(self, node: Any, ctx: _Ctx, base: int) -> None:
        words: list[tuple[str, int, str]] = []  # (word, pos, raw source)
        prefix: list[tuple[str, int]] = []
        redirects: list[tuple[str, str]] = []
        for p in node.parts:
            if p.kind == "assignment" and not words:
                prefix.append((self.word_text(p, base), p.pos[0]))
                self.walk(p, ctx, base)
            elif p.kind in ("word", "assignment"):
                words.append((self.word_text(p, base), p.pos[0], self.source_text(base, p)))
                self.walk(p, ctx, base)
            elif p.kind == "redirect":
                out = p.output
                target = out.word if hasattr(out, "word") else str(out)
                redirects.append((p.type, target))
                self.walk(p, ctx, base)
        line = self.line_of(base + node.pos[0])
        text = self.source_text(base, node).strip()
        cond = " && ".join(ctx.conditions) or None
        argv = [w for w, _, _ in words]
        is_launch_like = bool(argv)
        env: dict[str, Located] = {}
        for word, pos in prefix:
            name, value = word.split("=", 1) if "=" in word else (word, "")
            name = name.rstrip("+")
            loc = self.assign(name, value, self.line_of(base + pos), cond, exported=is_launch_like,
                              array_at=base + pos, raw=word)
            if is_launch_like:
                env[name] = loc
        if not argv:
            return
        expanded, arg_lines, arg_conds = self.expand_words(words, base)
        cmd = ShellCommand(argv=argv, line=line, text=text, env=env, redirects=redirects,
                           conditional=bool(cond), condition=cond, expanded=expanded, arg_lines=arg_lines,
                           arg_conditions=arg_conds)
        self.handle(cmd, ctx)

    # ----- variables
    def resolve(self, value: str) -> str:
        def sub(m: re.Match) -> str:
            name = m.group(1) or m.group(4)
            if name in self.vars:
                return self.vars[name]
            if m.group(2) and m.group(3) is not None:
                return m.group(3)
            return m.group(0)
        return _PARAM.sub(sub, value)

    def assign(self, name: str, value: str, line: int, cond: str | None, *, exported: bool,
               array_at: int | None = None, raw: str = "") -> Located:
        if self.prep and array_at is not None and array_at in self.prep.arrays:
            self.array_assign(array_at, cond)
            items = self.out.arrays.get(name, [])
            return Located(value=" ".join(e.value for e in items), line=line, conditional=bool(cond), condition=cond)
        resolved = self.resolve(value)
        loc = Located(value=value, line=line, conditional=bool(cond), condition=cond, resolved=resolved)
        if "$(" in raw or "`" in raw:
            low = raw.lower()
            if ("python" in low and _IMPORT_LOOKUP.search(raw)) or "pip show" in low:
                self.tainted.add(name)
        self.vars[name] = resolved
        self.out.assignments.append((name, loc, exported))
        self.out.exports[name] = loc
        return loc

    def array_assign(self, at: int, cond: str | None) -> None:
        assert self.prep is not None
        name, append, inner, inner_at = self.prep.arrays[at]
        items: list[Located] = []
        pos = inner_at
        for raw_line in inner.split("\n"):
            line = self.line_of(pos)
            try:
                parts = shlex.split(raw_line, comments=True)
            except ValueError:
                parts = raw_line.split()
            for part in parts:
                items.append(Located(value=part, line=line, conditional=bool(cond), condition=cond,
                                     resolved=self.resolve(part)))
            pos += len(raw_line) + 1
        if append:
            self.out.arrays.setdefault(name, []).extend(items)
        else:
            self.out.arrays[name] = items

    def expand_words(self, words: list[tuple[str, int, str]], base: int) -> tuple[list[str], list[int], list[str | None]]:
        out: list[str] = []
        lines: list[int] = []
        conds: list[str | None] = []  # condition under which an array element was added
        for word, pos, raw in words:
            line = self.line_of(base + pos)
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
            conds.append(None)
        return out, lines, conds

    # ----- per-command analysis
    def handle(self, cmd: ShellCommand, ctx: _Ctx) -> None:
        self.out.commands.append(cmd)
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
                                raw=self._raw_for(cmd, name) or arg)
                elif head == "export" and name in self.out.exports:
                    self.out.assignments.append((name, self.out.exports[name], True))
            return
        if head in ("source", ".") and len(argv) > 1:
            self.out.sources.append(Located(value=cmd.argv[1], line=cmd.line, conditional=bool(cond),
                                            condition=cond, resolved=argv[1]))
            return
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
        if head in ("bash", "sh", "eval") and ctx.depth < MAX_NESTING:
            inner = None
            if head == "eval":
                inner = " ".join(argv[1:])
            elif "-c" in argv[1:-1]:
                inner = argv[argv.index("-c") + 1]
            if inner:
                self.nested(inner, cmd.line, ctx)
                return
            script = next((a for a in argv[1:] if not a.startswith("-")), None)
            if head != "eval" and script:
                # `bash helper.sh` runs a referenced script: report it with the sourced helpers.
                self.out.sources.append(Located(value=cmd.argv[argv.index(script)] if len(cmd.argv) == len(argv) else script,
                                                line=cmd.line, conditional=bool(cond), condition=cond, resolved=script))
        self.detect_launch(cmd, argv)
        self.detect_pip(cmd, argv)
        self.detect_patches(cmd, cmd.argv, cmd.argv[0].rsplit("/", 1)[-1])

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
        try:
            prep = _prepare(inner, self.path, sub.line_of)
            sub.prep = prep
            for node in bashlex.parse(prep.text):
                sub.walk(node, _Ctx(ctx.conditions, ctx.depth + 1), base=0)
        except Exception:  # a string that is not shell: nothing runtime to report
            return
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
            if _PYTHON.match(base) and argv[i + 1:i + 2] == ["-m"] and i + 2 < len(argv):
                module = argv[i + 2]
                if module in LAUNCH_MODULES:
                    engine, entry, start = LAUNCH_MODULES[module], module, i + 3
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
                sl.flags[key] = flag
                sl.flag_list.append(flag)
                if _JSON_START.match(value):
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
                self.out.pip_installs.append(PipInstall(targets=["."], line=cmd.line, text=cmd.text, from_path=True))
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
            self.out.pip_installs.append(PipInstall(targets=targets, line=cmd.line, text=cmd.text,
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
        self.out.patches.append(PatchOp(kind=kind, target=target, line=cmd_line, text=text, sensitive=sensitive))

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
        if head == "patch":
            target = None
            for k, a in enumerate(args):
                if a in ("-d", "--directory") and k + 1 < len(args):
                    target = args[k + 1]
                elif a.startswith("--directory="):
                    target = a.split("=", 1)[1]
            self.add_patch("patch", target or self.cwd, line, text)
            return
        if head in ("sed", "perl") and any(a == "-i" or a.startswith("--in-place") or re.match(r"^-[a-zA-Z]*i", a) for a in args):
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
        if _CUSTOMIZE.search(code) and _PY_WRITE.search(code):
            return "sitecustomize.py"
        if not _PY_WRITE.search(code):
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
                    self.out.patches.append(PatchOp(kind=kind, target=target, line=h.line, text=h.command))

    # ----- fallback
    def _line_mode(self, prepared: str) -> None:
        stack: list[list[str]] = []  # per open `if`/`case`: conditions seen so far, last is current
        first_bad: int | None = None
        for raw, start in _logical_lines(prepared):
            base = start
            stripped = raw.strip()
            if not stripped or stripped.startswith("#"):
                continue
            ctx = _Ctx(tuple(self._current(stack)))
            try:
                nodes = bashlex.parse(raw)
                for node in nodes:
                    self.walk(node, ctx, base=base)
                continue
            except Exception:
                if first_bad is None:
                    first_bad = self.line_of(start)
            body = stripped
            case = re.match(r"^case\s+(.+?)\s+in\s*$", body)
            arm = re.match(r"^\(?([^()]+)\)\s*(.*)$", body) if stack and stack[-1][0].startswith("case ") else None
            if case:
                stack.append([f"case {case.group(1)}"])
                continue
            if arm and not body.startswith("esac"):
                # A case arm: its commands run only when the word matches the pattern.
                stack[-1] = [stack[-1][0], f"{stack[-1][0][5:]} matches {arm.group(1).strip()}"]
                body = arm.group(2).strip()
            elif re.match(r"^esac\b", body) and stack:
                stack.pop()
                continue
            m = re.match(r"^(if|elif)\s+(.*?)(?:;\s*then\b(.*))?$", body, re.S)
            if m:
                cond = m.group(2).strip().rstrip(";").strip()
                if m.group(1) == "if":
                    stack.append([cond])
                elif stack:
                    stack[-1].append(cond)
                body = (m.group(3) or "").strip()
                self._parse_fragment(cond, start + raw.find(cond), _Ctx(tuple(self._current(stack)[:-1])))
            elif re.match(r"^else\b", body):
                if stack:
                    stack[-1].append("")
                body = body[4:].strip()
            elif re.match(r"^fi\b", body):
                if stack:
                    stack.pop()
                body = body[2:].lstrip(";").strip()
            body = re.sub(r"^(?:then|do|done|esac|\{|\}|;;)\b\s*|^[^()\s]+\)\s*|\s*;;\s*$|^(?:function\s+)?[A-Za-z_][\w-]*\s*\(\)\s*\{?\s*$", "", body).strip()
            body = re.sub(r"^(?:for|while|until|case|select)\b.*?(?:;\s*do\b|\bin\s*$)", "", body).strip()
            body = re.sub(r"\s*;?\s*(?:done|fi|esac|\})\s*$", "", body).strip()
            if body:
                self._parse_fragment(body, start + max(0, raw.find(body)), _Ctx(tuple(self._current(stack))))

        if first_bad is not None:
            for k, f in enumerate(self.out.findings):
                if f.code == "shell-parse" and f.line is None:
                    self.out.findings[k] = f.model_copy(update={"line": first_bad})

    @staticmethod
    def _current(stack: list[list[str]]) -> list[str]:
        out: list[str] = []
        for conds in stack:
            if conds[0].startswith("case "):
                if len(conds) > 1:
                    out.append(conds[-1])
                continue
            prior = [f"! ( {c} )" for c in conds[:-1] if c]
            last = conds[-1]
            out.append(" && ".join(prior + ([last] if last else [])))
        return [c for c in out if c]

    def _parse_fragment(self, fragment: str, start: int, ctx: _Ctx) -> None:
        try:
            nodes = bashlex.parse(fragment)
        except Exception:
            pass
        else:
            # The fragment is a verbatim slice of the text at `start`, so offsets stay valid.
            for node in nodes:
                self.walk(node, ctx, base=start)
            return
        line = self.line_of(start)
        try:
            argv = shlex.split(fragment, comments=True)
        except ValueError:
            argv = fragment.split()
            self.out.findings.append(Finding(path=self.path, line=line, code="shell-parse", severity="warning",
                                             message=MSG_LINE))
        if argv:
            cond = " && ".join(ctx.conditions) or None
            cmd = ShellCommand(argv=argv, line=line, text=fragment, conditional=bool(cond), condition=cond,
                               expanded=[self.resolve(a) for a in argv], arg_lines=[line] * len(argv))
            lead = 0
            while lead < len(argv) and "=" in argv[lead] and _ENV_NAME.match(argv[lead].split("=", 1)[0]):
                name, value = argv[lead].split("=", 1)
                self.assign(name, value, line, cond, exported=False, raw=argv[lead])
                lead += 1
            if lead < len(argv):
                cmd.argv, cmd.expanded, cmd.arg_lines = argv[lead:], cmd.expanded[lead:], cmd.arg_lines[lead:]
                self.handle(cmd, ctx)


def _logical_lines(text: str) -> list[tuple[str, int]]:
    """Physical lines joined across backslash continuations and open quotes, with start offsets."""
    out: list[tuple[str, int]] = []
    n = len(text)
    i = 0
    start = 0
    quote: str | None = None
    while i < n:
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 2
                continue
            if c == quote:
                quote = None
        elif c == "\\":
            i += 2
            continue
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == start or text[i - 1] in " \t;"):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        elif c == "\n":
            out.append((text[start:i], start))
            start = i + 1
        i += 1
    if start < n:
        out.append((text[start:], start))
    return out


# --------------------------------------------------------------------------- public API


def analyze_script(text: str, path: str, *, line_offset: int = 0) -> ScriptAnalysis:
    """Analyse a whole bash script. Never raises: unreadable input becomes findings."""
    try:
        return _Analyzer(text, path, line_offset).run()
    except RecursionError:
        out = ScriptAnalysis(path=path, partial=True)
        out.findings.append(Finding(path=path, line=None, code="shell-parse", severity="warning",
                                    message=MSG_PARSE.format(error="nesting too deep")))
        return out


def analyze_command_line(text: str, path: str, line: int) -> ScriptAnalysis:
    """Analyse one command string (a recipe's setup script or benchmark.command) found at `line`."""
    return analyze_script(text, path, line_offset=max(0, line - 1))
