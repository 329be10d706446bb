"""The launch chain of a point whose runner picks its script at run time (AMD multi-node disagg).

A master-config entry of framework `sglang-disagg` / `vllm-disagg` / `atom-disagg` on mi355x
names no recipe or launcher: `runners/launch_mi355x-amds.sh` builds
`SCRIPT_NAME="${EXP_NAME%%_*}_${PRECISION}_mi355x_${FRAMEWORK}.sh"`, picks `BENCHMARK_SUBDIR`
and runs `bash "benchmarks/${BENCHMARK_SUBDIR}/${SCRIPT_NAME}"`. This module evaluates that
reference with the point's values (checks.launch_path.point_env, the one definition of the
variables the sweep sets) and follows the chain the real files run, hop by hop:

- `bash FILE` / `source FILE` whose name is built from variables: each variable is the last
  assignment before the line whose branch holds for the point (`[[ $FRAMEWORK == ... ]]`,
  judged by checks.launch_path.evaluate_condition), else the value the caller passed down;
  `${v%%p}`, `${v#p}`, `${v:-d}` are evaluated;
- `cd DIR` then `bash ./x.sh`: relative names resolve against the working directory;
- `sbatch [options] FILE`: the job script (the job runs in the submit directory);
- `srun [options] bash -c STRING` and `srun ... bash FILE`: the string is read as a script;
- `docker run ... IMAGE bash -c STRING` (also `$DOCKER_CMD run`): the string runs in the
  container, which sees only the `-e NAME=VALUE` variables and the `-v SRC:DST` mounts whose
  source is a repository folder; a command or source naming a container path under such a
  mount is that repository file.

A branch whose condition is false for the point is not followed (its `source` is skipped on
the launch path too). Any hop the bot cannot follow (a variable it cannot know, a file that is
not in the repository, an option it cannot map, a container path outside every mount) ends
the chain: the result names that hop (file:line) and the checks report "could not verify"
with it, never a PASS on part of the path.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, Callable

from checks.launch_path import (
    MEMO_RUNNERS, MAX_PATH_FILES, LaunchPath, build_path, evaluate_condition, point_env, read_analysis,
    resolve_ref, runner_nodes, runner_scripts,
)
from checks.text import join
from recipes.scripts import UNREADABLE_CODES, ScriptAnalysis, analyze_command_line, trim_pattern

MEMO_CHAIN = "runner_launch:{point}"

MSG_VAR_UNKNOWN = "{where} runs {ref}: ${name} is not known for this point"
MSG_RUNTIME = "{where} runs {ref}, a name built by a command only known at run time"
MSG_VAR_AMBIGUOUS = "{where} runs {ref}: ${name} is set in a branch the bot cannot decide ({lines})"
MSG_NOT_IN_REPO = "{where} runs {target}, which is not in the repository"
MSG_OPTION_UNKNOWN = "{where}: {tool} option {option} is not one the bot can map"
MSG_NO_PROGRAM = "{where}: the bot cannot tell what {tool} runs"
MSG_CONTAINER_PATH = "{where} runs {target} inside the container, a path under no repository mount"
MSG_MOUNT_UNKNOWN = "{where} runs {target} under the container mount {dst}, whose host folder the bot cannot know"
MSG_CWD_UNKNOWN = "{where} runs {ref} from a working directory the bot cannot know"
MSG_INTERNAL = "the bot could not follow the chain ({error})"
MSG_TOO_DEEP = "{where}: the launch chain is longer than {limit} files"

_NAME = re.compile(r"\$(?:\{([A-Za-z_]\w*)\}|([A-Za-z_]\w*))")
_SHELLS = {"bash", "sh", "/bin/bash", "/bin/sh", "/usr/bin/bash", "/usr/bin/env bash"}
SCRIPT_SUFFIXES = (".sh", ".bash", ".slurm")
_SCRIPT_FLAGS = re.compile(r"^-[a-z]*c[a-z]*$")  # -c, -lc, -ec, -xc

# Options that take a value when written apart from it (`-N 3`, `--time 08:00:00`); any other
# option written without `=` is a flag. An option word the bot does not know ends the hop.
SLURM_VALUE = {"-N", "-n", "-p", "-A", "-t", "-o", "-e", "-J", "-w", "-x", "-c", "-G", "-D", "--nodes", "--ntasks",
                "--partition", "--account", "--time", "--output", "--error", "--job-name", "--nodelist", "--exclude",
                "--gres", "--mem", "--cpus-per-task", "--ntasks-per-node", "--export", "--chdir", "--dependency",
                "--qos", "--reservation", "--constraint", "--gpus", "--gpus-per-node", "--signal", "--comment"}
SLURM_FLAGS = {"--parsable", "--exclusive", "--spread-job", "--wait", "--hold", "--requeue", "--no-requeue",
                "--overcommit", "--contiguous", "--test-only", "--use-min-nodes", "--unbuffered", "-Q", "--quiet",
                "-v", "--verbose", "-O", "-l", "--label", "--overlap", "--exact", "--kill-on-bad-exit", "-K"}
DOCKER_MOUNT = {"-v", "--volume"}
DOCKER_ENV = {"-e", "--env"}


@dataclass
class Gap:
    """The hop the bot could not follow."""

    path: str
    line: int | None
    why: str


@dataclass
class Chain:
    """What a runner-chosen point runs: the files and command strings of its chain, the
    sources not taken for its values, and the first hop that could not be followed."""

    files: list[tuple[str, str]] = field(default_factory=list)  # (path, via), in chain order
    commands: list[tuple[str, ScriptAnalysis]] = field(default_factory=list)
    skip: set[tuple[str, int]] = field(default_factory=set)  # (holder, line) of sources not run
    gap: Gap | None = None
    launcher: str | None = None  # the script the runner picks

    def path(self, repo: Any, src: Any, mounts: Any) -> LaunchPath:
        return build_path(repo, src, mounts, list(self.files), list(self.commands), skip=frozenset(self.skip))


class _Stop(Exception):
    def __init__(self, gap: Gap) -> None:
        super().__init__(gap.why)
        self.gap = gap


class _Unknown(_Stop):
    """A variable whose value the bot cannot know (not unset: unknown), so a default
    (`${X:-d}`) is not taken for it."""

    def __init__(self, name: str) -> None:
        super().__init__(Gap("", None, f"${name} is not known"))
        self.name = name


# A caller's variables: the value, None when unset, _Unknown raised when not knowable.
Lookup = Callable[[str], "str | None"]
_BY_NAME = "_runner_launch_assignments"  # per analysis: name -> its top-level assignments


@dataclass
class _Scope:
    """Where a text runs: its file, working directory, the variables its caller passed, and
    the container mounts (container folder -> repository folder) when it runs in one."""

    path: str
    analysis: ScriptAnalysis
    cwd: str | None
    outer: Lookup
    mounts: dict[str, str | None] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    offset: int = 0
    parent: "_Scope | None" = None
    container: bool = False  # runs inside a container (sees only its -e variables and -v mounts)
    memo: dict = field(default_factory=dict, repr=False)  # (name, line, cwd) -> (ok, value or _Stop)

    def starts(self, line: int, word: str) -> bool:
        """Whether `line` starts with the command `word` (a `cd` inside `$(...)` does not)."""
        k = line - self.offset - 1
        text = self.lines[k].lstrip() if 0 <= k < len(self.lines) else ""
        return text == word or text.startswith(word + " ")

    def value(self, name: str, line: int, seen: frozenset = frozenset()) -> str | None:
        """The value of $name at `line`: the last assignment before it on a branch that holds
        for the point, else the caller's. Raises _Stop when branches the bot cannot decide
        set it."""
        if (name, line) in seen:
            return None
        key = (name, line, self.cwd)
        hit = self.memo.get(key)
        if hit is None:
            try:
                hit = (True, self._value(name, line, seen | {(name, line)}))
            except _Stop as stop:
                hit = (False, stop)
            self.memo[key] = hit
        if hit[0]:
            return hit[1]
        raise hit[1]

    def _value(self, name: str, line: int, seen: frozenset) -> str | None:
        index = self.analysis.__dict__.get(_BY_NAME)
        if index is None:
            index = {}
            for n, loc, _ in self.analysis.assignments:
                if loc.function is None:
                    index.setdefault(n, []).append(loc)
            self.analysis.__dict__[_BY_NAME] = index
        cands = [loc for loc in index.get(name, ()) if loc.line < line]
        undecided: list[int] = []
        for loc in reversed(cands):
            holds = self.holds(loc.condition, loc.line, seen)
            if holds is False:
                continue
            if holds is None:
                undecided.append(loc.line)
                continue
            if undecided:
                raise _Stop(Gap(self.path, undecided[0], MSG_VAR_AMBIGUOUS.format(
                    where=f"{self.path}:{line}", ref=f"${name}", name=name, lines=join(undecided, None))))
            return self.expand(loc.value, loc.line, seen)
        if undecided:
            raise _Stop(Gap(self.path, undecided[0], MSG_VAR_AMBIGUOUS.format(
                where=f"{self.path}:{line}", ref=f"${name}", name=name, lines=join(undecided, None))))
        if name == "PWD" and self.cwd is not None:
            return _absolute(self.cwd)
        return self.outer(name)

    def holds(self, cond: str | None, line: int, seen: frozenset = frozenset()) -> bool | None:
        if not cond:
            return True
        env: dict[str, str] = {}
        for m in _NAME.finditer(cond):
            name = m.group(1) or m.group(2)
            try:
                v = self.value(name, line, seen)
            except _Stop:
                v = None
            if v is not None:
                env[name] = v
        return evaluate_condition(cond, env)

    def expand(self, text: str, line: int, seen: frozenset = frozenset(), *, keep: bool = False) -> str | None:
        """`text` with its variables substituted and quotes removed (one shell word); None
        when a part is only known at run time (a command substitution, an unknown variable).
        With `keep`, such a part stays as written: a string another shell reads again
        (`bash -c "..."`), where it is looked up in its turn."""
        out, i = [], 0
        text = text.strip()
        quote = None
        while i < len(text):
            ch = text[i]
            if quote == "'":
                if ch == "'":
                    quote = None
                else:
                    out.append(ch)
                i += 1
                continue
            if ch in "'\"" and (quote is None or quote == ch):
                quote = None if quote else ch
                i += 1
                continue
            if ch == "\\" and i + 1 < len(text):
                nxt = text[i + 1]
                if quote == '"' and nxt not in '$`"\\\n':
                    out.append(ch)  # inside double quotes a backslash escapes only $ ` " \ newline
                elif nxt != "\n":
                    out.append(nxt)
                i += 2
                continue
            if ch == "`":
                if not keep:
                    return None
                out.append(ch)
                i += 1
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
                        v = _absolute(self.path) if m.group(1) == "0" else self.value(m.group(1), line, seen)
                        i += m.end()
                except _Stop:  # unknown, or set on a branch the bot cannot decide
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
        m = re.match(r"([A-Za-z_]\w*)(.*)$", inner, re.S)
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
        return trim_pattern(value, kind, pattern)

    def _command_sub(self, text: str, i: int, line: int, seen: frozenset) -> tuple[str | None, int]:
        """`$(dirname "$0")`, `$(pwd)` and `$(cd "DIR" && pwd)`: the only substitutions that
        name a folder the bot can know."""
        end = _closing(text, i + 1, "(", ")")
        if end < 0:
            return None, len(text)
        body = text[i + 2:end].strip()
        if body == "pwd":
            return (_absolute(self.cwd) if self.cwd is not None else None), end + 1
        m = re.fullmatch(r"""dirname\s+(?:"\$(?:0|\{0\}|\{BASH_SOURCE(?:\[0\])?\}|BASH_SOURCE)"|\$0)""", body)
        if m:
            return _absolute(posixpath.dirname(self.path)), end + 1
        m = re.fullmatch(r"""cd\s+(.+?)\s*(?:&&|;)\s*pwd(?:\s+-P)?""", body, re.S)
        if m:
            target = self.expand(m.group(1), line, seen)
            folder = _join(self.cwd, target) if target is not None else None
            return (_absolute(folder) if folder is not None else None), end + 1
        return None, end + 1


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


def _join(cwd: str | None, target: str) -> str | None:
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


def _absolute(path: str) -> str:
    return f"{REPO_ROOT}/{path}" if path else REPO_ROOT


class _Walker:
    def __init__(self, ctx: Any, point: Any) -> None:
        self.repo, self.src = ctx.head_repo, ctx.snapshot.head
        self.mounts = ctx.config.policy.workspace_mounts
        self.point = point
        self.chain = Chain()
        self.seen: set[tuple[str, int]] = set()

    # -- where a reference leads ------------------------------------------------------------
    def target(self, scope: _Scope, written: str, line: int) -> str:
        """The repository file a reference names; _Stop naming the hop when there is none."""
        where = f"{scope.path}:{line}"
        try:
            value = scope.expand(written, line)
        except _Unknown as unknown:
            raise _Stop(Gap(scope.path, line, MSG_VAR_UNKNOWN.format(where=where, ref=written, name=unknown.name)))
        if value is None:
            raise _Stop(Gap(scope.path, line, MSG_RUNTIME.format(where=where, ref=written)))
        if value.startswith("/") and not value.startswith(REPO_ROOT):
            for dst, src in sorted(scope.mounts.items(), key=lambda kv: -len(kv[0])):
                if value == dst or value.startswith(dst.rstrip("/") + "/"):
                    if src is None:
                        raise _Stop(Gap(scope.path, line, MSG_MOUNT_UNKNOWN.format(where=where, target=value, dst=dst)))
                    path = _join(src, value[len(dst.rstrip("/")):].lstrip("/"))
                    if path is not None and self.repo.exists(path):
                        return path
                    raise _Stop(Gap(scope.path, line, MSG_NOT_IN_REPO.format(where=where, target=path or value)))
            raise _Stop(Gap(scope.path, line, MSG_CONTAINER_PATH.format(where=where, target=value)))
        if scope.cwd is None and not value.startswith(REPO_ROOT):
            raise _Stop(Gap(scope.path, line, MSG_CWD_UNKNOWN.format(where=where, ref=written)))
        path = _join(scope.cwd, value)
        if path is not None and self.repo.exists(path):
            return path
        raise _Stop(Gap(scope.path, line, MSG_NOT_IN_REPO.format(where=where, target=path or value)))

    # -- one text ---------------------------------------------------------------------------
    def walk(self, scope: _Scope, via: str, *, record: str = "file") -> None:
        key = (scope.path, id(scope.analysis))
        if key in self.seen:
            return
        self.seen.add(key)
        if record == "file":
            if len(self.chain.files) >= MAX_PATH_FILES:
                raise _Stop(Gap(scope.path, None, MSG_TOO_DEEP.format(where=scope.path, limit=MAX_PATH_FILES)))
            self.chain.files.append((scope.path, via))
        elif record == "command":
            self.chain.commands.append((scope.path, scope.analysis))
        a = scope.analysis
        for f in a.findings:
            if f.code in UNREADABLE_CODES and not any(fn.line <= (f.line or 0) <= fn.end_line for fn in a.functions.values()):
                # Top-level code the bot cannot read (an `eval` of a run-time string): what follows
                # from it is unknown, so the chain ends here, unless it evals a variable whose
                # text the chain knows (`eval "$DOCKER_CMD_DETECT"`): that text is read instead.
                text = self.evaled(scope, f.line)
                if text is None:
                    raise _Stop(Gap(f.path or scope.path, f.line, f.message))
                inner = analyze_command_line(text, scope.path, f.line or 1)
                self.walk(_Scope(scope.path, inner, scope.cwd, scope.outer, dict(scope.mounts), text.splitlines(),
                                 (f.line or 1) - 1, parent=scope, container=scope.container),
                          f"run by {scope.path}", record="command")
        source_lines = {s.line for s in a.sources}
        events = sorted([(c.line, 0, c) for c in a.commands] + [(s.line, 1, s) for s in a.sources],
                        key=lambda e: (e[0], e[1]))
        for line, kind, item in events:
            if item.function is not None:
                continue  # function bodies: the launch path tracks which run (build_path)
            if scope.holds(item.condition, line) is False:
                if kind == 1:
                    self.chain.skip.add((scope.path, line))
                continue
            try:
                if kind == 1:
                    self.source(scope, item)
                else:
                    self.command(scope, item, line in source_lines)
            except _Unknown as unknown:
                written = item.value if kind == 1 else " ".join(item.argv[:3])
                raise _Stop(Gap(scope.path, line, MSG_VAR_UNKNOWN.format(
                    where=f"{scope.path}:{line}", ref=written, name=unknown.name))) from None

    def evaled(self, scope: _Scope, line: int | None) -> str | None:
        """The text `eval "$NAME"` at `line` runs, when the chain knows NAME's value."""
        k = (line or 0) - scope.offset - 1
        text = scope.lines[k].strip() if 0 <= k < len(scope.lines) else ""
        m = re.match(r"""eval\s+"\$\{?([A-Za-z_]\w*)\}?"\s*(?:;|&&|$)""", text)
        if not m:
            return None
        try:
            value = scope.value(m.group(1), line or 0)
        except _Stop:
            return None
        return value if value and "$(" not in value and "`" not in value else None

    def source(self, scope: _Scope, ref: Any) -> None:
        written = ref.value.strip()
        self.chain.skip.add((scope.path, ref.line))  # decided here, not again by the launch path
        if "$" not in written and "`" not in written:
            # A plain name: relative to the working directory, a harness mount path on the host
            # (checks.launch_path), or a container or system file (nothing of ours runs there),
            # except, in a container, a path where the harness mounts the checkout (/workspace)
            # that no mount of this container maps.
            if not scope.container:
                here = _join(scope.cwd, written) if not written.startswith("/") else None
                path = here if here is not None and self.repo.exists(here) else \
                    resolve_ref(self.repo, self.mounts, written, scope.path)
                if path is None:
                    return
            else:
                try:
                    path = self.target(scope, written, ref.line)
                except _Stop:
                    if any(written.startswith(m.rstrip("/") + "/") for m in self.mounts):
                        raise
                    return
        else:
            path = self.target(scope, written, ref.line)
        if self.chain.launcher is None:
            self.chain.launcher = path
        self.file(path, scope, ref.line, scope.cwd, scope.mounts)

    def file(self, path: str, caller: _Scope, line: int, cwd: str | None, mounts: dict,
             outer: Lookup | None = None) -> None:
        analysis = read_analysis(self.src, path)
        if analysis is None:
            raise _Stop(Gap(caller.path, line, MSG_NOT_IN_REPO.format(where=f"{caller.path}:{line}", target=path)))
        look = outer or (lambda n, s=caller, ln=line: s.value(n, ln))
        self.walk(_Scope(path, analysis, cwd, look, dict(mounts), _lines(self.src, path),
                         container=outer is not None or caller.container), f"run by {caller.path}")

    def command(self, scope: _Scope, cmd: Any, is_source: bool) -> None:
        words = list(cmd.expanded or cmd.argv)
        if not words:
            return
        where = f"{scope.path}:{cmd.line}"
        head = words[0]
        if head == "cd" and len(words) >= 2 and scope.starts(cmd.line, "cd"):
            target = scope.expand(words[1], cmd.line)
            scope.cwd = _join(scope.cwd, target) if target is not None else None
            return
        if head == "sbatch":
            script, _ = self.options(scope, cmd.line, words, 1, "sbatch")
            self.file(self.target(scope, script, cmd.line), scope, cmd.line, scope.cwd, scope.mounts)
            return
        if head == "srun":
            i = self.options(scope, cmd.line, words, 1, "srun")[1]
            self.program(scope, cmd, words, i, scope.mounts, None, is_source)
            return
        raw = list(cmd.argv)
        if _container_run(raw) is not None:
            self.container(scope, cmd, raw, _container_run(raw))
            return
        if not is_source and (head.endswith(SCRIPT_SUFFIXES) or (scope.container and head.startswith("/"))
                              or head.startswith(("./", "$"))):
            # A script run by its path (`./x.sh`, `/workspace/.../server.sh` in a container).
            if head.startswith("$") and not head.endswith(SCRIPT_SUFFIXES) and _try_expand(scope, head, cmd.line) is None:
                return  # `$DOCKER_CMD ps`, `$MAYBE_EXEC ...`: a program chosen at run time, not a script
            self.program(scope, cmd, words, 0, scope.mounts, scope.outer if scope.container else None, False)

    def options(self, scope: _Scope, line: int, words: list[str], i: int, tool: str) -> tuple[str, int]:
        """The first word after `tool`'s options, and its index."""
        where = f"{scope.path}:{line}"
        while i < len(words):
            w = words[i]
            if not w.startswith("-"):
                if w.startswith("$") and "/" not in w:
                    raise _Stop(Gap(scope.path, line, MSG_OPTION_UNKNOWN.format(where=where, tool=tool, option=w)))
                return w, i
            if "=" in w or w in SLURM_FLAGS:
                i += 1
            elif w in SLURM_VALUE:
                i += 2
            else:
                raise _Stop(Gap(scope.path, line, MSG_OPTION_UNKNOWN.format(where=where, tool=tool, option=w)))
        raise _Stop(Gap(scope.path, line, MSG_NO_PROGRAM.format(where=where, tool=tool)))

    def program(self, scope: _Scope, cmd: Any, words: list[str], i: int, mounts: dict,
                outer: Lookup | None, is_source: bool) -> None:
        """What a wrapper (`srun`, a container) runs from word `i`: a shell string or a script."""
        prog = words[i] if i < len(words) else ""
        inside = outer is not None
        if prog in _SHELLS and i + 2 < len(words) and _SCRIPT_FLAGS.match(words[i + 1]):
            text = self.script_text(scope, cmd, words, i)
            analysis = analyze_command_line(text, scope.path, cmd.line)
            look = outer or (lambda n, s=scope, ln=cmd.line: s.value(n, ln))
            inner = _Scope(scope.path, analysis, None if inside else scope.cwd, look, dict(mounts),
                           text.splitlines(), cmd.line - 1, parent=scope, container=inside or scope.container)
            self.walk(inner, f"run by {scope.path}", record="command")
            return
        if prog in _SHELLS and i + 1 < len(words):
            if is_source and not inside:
                return  # the analyser reports it as a source: followed there
            self.file(self.target(scope, words[i + 1], cmd.line), scope, cmd.line, scope.cwd, mounts, outer)
            return
        if prog.startswith(("/", "./", "$")) or prog.endswith(SCRIPT_SUFFIXES):
            path = self.target(scope, prog, cmd.line)
            self.file(path, scope, cmd.line, scope.cwd, mounts, outer)

    def script_text(self, scope: _Scope, cmd: Any, words: list[str], i: int) -> str:
        """The string a `bash -c` runs, as this shell hands it over: the raw word after the
        flag in the command's text, its variables substituted from this scope (those only known
        later stay for the inner shell). The analyser's own expansion is not used: it takes a
        `${X:-default}` default where the caller sets X."""
        nth = sum(1 for k in range(i) if words[k] in _SHELLS and k + 1 < len(words) and _SCRIPT_FLAGS.match(words[k + 1]))
        found = list(re.finditer(r"(?:^|\s)(?:/(?:usr/)?bin/)?(?:bash|sh)\s+-[a-z]*c[a-z]*\s+", cmd.text))
        if len(found) <= nth:
            return "".join(words[i + 2:])
        m = found[nth]
        raw = cmd.text[m.end():]
        return scope.expand(raw, cmd.line, keep=True) or ""

    def container(self, scope: _Scope, cmd: Any, words: list[str], run: int) -> None:
        """`docker run ... IMAGE bash -c STRING`: the container sees its `-e` variables and its
        `-v` mounts of repository folders; what it runs is the trailing shell string."""
        where = f"{scope.path}:{cmd.line}"
        env: dict[str, str | None] = {}
        mounts: dict[str, str | None] = {}
        unknown: list[str] = []
        words = self.arrays(scope, cmd.line, words, unknown)
        for j in range(run + 1, len(words) - 1):
            opt, arg = words[j], words[j + 1]
            if opt in DOCKER_ENV and "=" in arg:
                name, _, value = arg.partition("=")
                env[name] = _try_expand(scope, value, cmd.line)
            elif opt in DOCKER_MOUNT and ":" in arg:
                src, dst = arg.split(":")[:2]
                s = _try_expand(scope, src, cmd.line)
                if s is None:
                    mounts[dst.rstrip("/") or "/"] = None
                elif s.startswith(REPO_ROOT) or not s.startswith("/"):
                    folder = _join(scope.cwd, s)
                    mounts[dst.rstrip("/") or "/"] = folder
        shell = next((k for k in range(len(words) - 2, run, -1)
                      if words[k] in _SHELLS and _SCRIPT_FLAGS.match(words[k + 1])), None)
        if shell is None:
            if any(v is not None for v in mounts.values()) or None in mounts.values():
                # The checkout is mounted but what runs in it is the image's choice or a word
                # the bot cannot place: never a PASS on the part before it.
                raise _Stop(Gap(scope.path, cmd.line, MSG_NO_PROGRAM.format(where=where, tool="the container")))
            return  # the image's own program, with nothing of the repository mounted

        def look(name: str) -> str | None:
            if name in env:
                if env[name] is None:
                    raise _Unknown(name)
                return env[name]
            if unknown:
                raise _Unknown(name)  # it may come from a word the bot cannot expand
            return None

        self.program(scope, cmd, words, shell, mounts, look, False)

    def arrays(self, scope: _Scope, line: int, words: list[str], unknown: list[str]) -> list[str]:
        """`${NAME[*]}` / `${NAME[@]}` words expanded from the array the script built (elements
        on branches that hold for the point); a word the bot cannot expand is noted."""
        out: list[str] = []
        for w in words:
            m = re.fullmatch(r"\$\{(\w+)\[[*@]\](?:\+[^}]*)?\}\}?", w)
            if not m:
                out.append(w)
                if w.startswith("$(") or (w.startswith("${") and not re.fullmatch(r"\$\{\w+:-\}", w)):
                    unknown.append(w)
                continue
            elems = _array(scope, m.group(1), line)
            if elems is None:
                unknown.append(w)
            else:
                out.extend(elems)
        return out


def _array(scope: _Scope | None, name: str, line: int) -> list[str] | None:
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


def _lines(src: Any, path: str) -> list[str]:
    try:
        data = src.read(path)
    except Exception:  # noqa: BLE001 - an unreadable file has no lines the walk can read
        return []
    return data.decode("utf-8", "replace").splitlines() if data else []


def _try_expand(scope: _Scope, text: str, line: int) -> str | None:
    try:
        return scope.expand(text, line)
    except _Stop:
        return None


def _container_run(words: list[str]) -> int | None:
    """Index of `run` in `docker run`, `sudo docker run`, `$DOCKER_CMD run`, `exec docker run`."""
    for k in range(1, min(len(words), 4)):
        if words[k] == "run" and re.search(r"docker|podman", words[k - 1], re.I):
            return k
    return None


WORKSPACE_VARS = ("GITHUB_WORKSPACE",)  # the runner's checkout, its working directory


def runner_chain(ctx: Any, point: Any) -> Chain | None:
    """The chain of a point with no launcher file, from its runner scripts; None when no
    runner script of its label runs a script for it."""
    def build() -> Chain | None:
        repo = ctx.head_repo
        nodes = ctx.memo(MEMO_RUNNERS, lambda: runner_nodes(repo, ctx.snapshot.head))
        paths = runner_scripts(repo, nodes, point.runner)
        if not paths:
            return None
        env = point_env(point)
        root = repo.layout.root or ""
        env.update({name: _absolute(root) for name in WORKSPACE_VARS})

        def outer(name: str) -> str | None:
            if name in env:
                return env[name]
            raise _Unknown(name)  # not a value the sweep sets: only known at run time

        walker = _Walker(ctx, point)
        try:
            for path in paths:
                analysis = read_analysis(ctx.snapshot.head, path)
                if analysis is not None:
                    scope = _Scope(path, analysis, root, outer, lines=_lines(ctx.snapshot.head, path))
                    walker.walk(scope, f"runner for {point.runner}", record="runner")
        except _Stop as stop:
            walker.chain.gap = stop.gap
        except (RecursionError, Exception) as exc:  # noqa: BLE001 - no script may crash the checks
            walker.chain.gap = Gap(paths[0], None, MSG_INTERNAL.format(error=f"{type(exc).__name__}: {exc}"[:200]))
        chain = walker.chain
        if chain.launcher is None and chain.gap is None:
            return None
        return chain

    # Points with the same runner label and values run the same chain: walked once per review.
    key = (point.runner, tuple(sorted(point_env(point).items())))
    return ctx.memo(MEMO_CHAIN.format(point=repr(key)), build)


MEMO_CHAIN_PATH = "runner_launch.path:{key}"


def chain_path(ctx: Any, chain: Chain) -> LaunchPath:
    """The launch path of a whole chain: one build over all its files and strings, so the
    functions the chain calls in a library it sources are known; the sources the walk decided
    (not taken for the point, or resolved by it) are not followed again."""
    key = (tuple(chain.files), tuple((h, id(a)) for h, a in chain.commands), tuple(sorted(chain.skip)))
    return ctx.memo(MEMO_CHAIN_PATH.format(key=repr(key)),
                    lambda: chain.path(ctx.head_repo, ctx.snapshot.head, ctx.config.policy.workspace_mounts))
