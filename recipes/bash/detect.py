"""What a command does to the serving stack, read from its words: the server launch (engine,
entry point, flags, JSON-valued flags), pip installs, and patch operations with how sensitive
their targets are (see recipes.scripts for the patch rule). `Detectors` is a mixin of the
analyser (recipes.bash.walker): it reads the analyser's variables, working directory and
heredocs, and adds to its result.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterator

from .. import engines
from ..launch.image import CODE_TREE, SCRATCH
from ..launch.pycode import CUSTOMIZE, IMPORT_LOOKUP, PY_LITERAL_PATH, imported_modules, py_writes
from .model import (
    MSG_JSON_FLAG, Flag, Finding, PatchOp, PipInstall, ServerLaunch, ShellCommand, _vocabulary, eval_branch,
    normalise_flag,
)
from .values import _PARAM

PIP_VALUE_OPTIONS = {
    "-r", "--requirement", "-c", "--constraint", "-i", "--index-url", "--extra-index-url",
    "-f", "--find-links", "-t", "--target", "--prefix", "--root", "--upgrade-strategy",
    "--trusted-host", "--no-binary", "--only-binary", "--platform", "--python-version",
    "--implementation", "--abi", "-C", "--config-settings", "--src", "--cache-dir", "--log",
    "--progress-bar", "--python", "--report",
}
# Where an image keeps code (recipes.launch.image, the one list Check 10 reads off the trace too),
# and a model's own files (Check 8's).
_SENSITIVE_PATH = re.compile(
    CODE_TREE + r"|(?:^|/)(?:config|generation_config|tokenizer_config)\.json$|\.safetensors\.index\.json$"
    r"|(?:^|/)(?:modeling|configuration)_[^/]*\.py$|/hub/models--",
)
_SENSITIVE_VAR = re.compile(r"\$\{?(?:[A-Z0-9_]*(?:SITE|PACKAGES|SGLANG|VLLM|ATOM|TRTLLM|TENSORRT|ENGINE)[A-Z0-9_]*)", re.I)
_BENIGN_PATH = re.compile(SCRATCH.pattern + r"|\.(?:log|txt|out|err|csv)$|(?:^|/)(?:logs?|results?)/")
IMPORT_LOOKUP_TARGET = "<path from an import lookup>"
_PYTHON = re.compile(r"^python(?:\d+(?:\.\d+)?)?$")
_JSON_START = re.compile(r'^\s*(?:\{\s*["}]|\[)')
_NUMBER = re.compile(r"^-?\d+(?:\.\d+)?$")
_PIP = re.compile(r"^pip\d*(?:\.\d+)?$")
GIT_CODE_CHANGES = frozenset({"cherry-pick", "merge", "pull", "rebase", "revert"})


def flag_words(argv: list[str], start: int = 0) -> Iterator[tuple[int, str | None, str]]:
    """The words of a command from `start` as a server's option parser reads them: (i, name,
    value) for an option (`--x=v`, `--x v`, a bare `--x` with value ""), where i is the index
    of the last word it takes, and (i, None, word) for a positional. A negative number is a
    value, never an option."""
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
            yield i, name, value
        else:
            yield i, None, word
        i += 1


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



class Detectors:
    """Launch, pip and patch detection over one command (mixed into the analyser)."""

    out: Any
    path: str
    tainted: set[str]
    cwd: str | None
    _function: str | None
    _heredoc_by_line: dict

    def resolve(self, value: str) -> str:  # provided by the analyser
        raise NotImplementedError

    def detect_launch(self, cmd: ShellCommand, argv: list[str]) -> None:
        # How each engine's server is started comes from its profile (recipes/engines.py).
        modules, subcommands = engines.launch_modules(), engines.launch_subcommands()
        executables = engines.launch_executables()
        runs_module = "-m" in argv  # `_python_module` finds nothing without it
        for i, word in enumerate(argv):
            base = word.rsplit("/", 1)[-1]
            engine = entry = None
            start = 0
            m = _python_module(argv, i) if runs_module else None
            if m is not None:
                if argv[m] in modules:
                    engine, entry, start = modules[argv[m]], argv[m], m + 1
            elif (base, argv[i + 1] if i + 1 < len(argv) else "") in subcommands:
                engine = subcommands[(base, argv[i + 1])]
                entry, start = f"{base} {argv[i + 1]}", i + 2
            elif base in executables:
                engine, entry, start = executables[base], base, i + 1
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
        for i, name, value in flag_words(argv, start):
            if name is not None:
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
                sl.positionals.append(value)
        return sl

    def detect_pip(self, cmd: ShellCommand, argv: list[str]) -> None:
        if "install" not in argv and "develop" not in argv and "bdist_wheel" not in argv:
            return  # every form below names one of these words
        for i, word in enumerate(argv):
            base = word.rsplit("/", 1)[-1]
            rest: list[str] | None = None
            if _PIP.match(base) and "install" in argv[i + 1:i + 2]:
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
        if CUSTOMIZE.search(target):
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
        if target and CUSTOMIZE.search(target):
            kind = "sitecustomize"
        self.out.patches.append(PatchOp(kind=kind, target=target, line=cmd_line, text=text, sensitive=sensitive,
                                        function=self._function))

    def detect_patches(self, cmd: ShellCommand, argv: list[str], head: str) -> None:
        args = argv[1:]
        text, line = cmd.text, cmd.line
        heredocs = self._heredoc_by_line.get(line, [])
        if CUSTOMIZE.search(" ".join(argv)) and head not in ("echo", "printf"):
            self.add_patch("sitecustomize", next((a for a in args if CUSTOMIZE.search(a)), None), line, text)
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
        writes = py_writes(code)
        if CUSTOMIZE.search(code) and writes:
            return "sitecustomize.py"
        if not writes:
            return None
        for m in PY_LITERAL_PATH.finditer(code):
            if self.classify(m.group(1)) == "sensitive":
                return m.group(1)
        if IMPORT_LOOKUP.search(code):
            engines = [m for m in imported_modules(code) if m.split(".")[0] in _vocabulary().ENGINE_PACKAGES]
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
