"""The launch chain of a point whose runner picks its script at run time (AMD multi-node disagg).

A master-config entry of framework `sglang-disagg` / `vllm-disagg` / `atom-disagg` on mi355x
names no recipe or launcher: `runners/launch_mi355x-amds.sh` builds
`SCRIPT_NAME="${EXP_NAME%%_*}_${PRECISION}_mi355x_${FRAMEWORK}.sh"`, picks `BENCHMARK_SUBDIR`
and runs `bash "benchmarks/${BENCHMARK_SUBDIR}/${SCRIPT_NAME}"`. This module evaluates that
reference with the point's values (recipes.launch.path.launch_path.point_env, the one definition of the
variables the sweep sets) and follows the chain the real files run, hop by hop:

- `bash FILE` / `source FILE` whose name is built from variables, read as recipes.launch.path.shell_scope
  evaluates them (the last assignment on a branch that holds for the point, else the caller's);
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

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from recipes.launch.path.launch_path import (
    dir_functions, MEMO_RUNNERS, MAX_PATH_FILES, LaunchPath, build_path, trusted_download, read_analysis,
    resolve_ref, runner_nodes, runner_scripts,
)
from recipes.launch.path.shell_scope import (
    MISSING, REPO_ROOT, Gap, Lookup, RootLookup, Scope, Stop, Unknown, array_elements, file_lines, join_path, projection,
    file_projection, seen_as, top_conditions, try_expand,
)
from recipes.launch.path.branch_words import branch_words, runner_env
from recipes.models_yaml import ModelsEntry, bash_unescaped, heredoc_unescaped, read_program, select_entry
from recipes.scripts import UNREADABLE_CODES, ScriptAnalysis, analyze_command_line, python_file_run


MSG_VAR_UNKNOWN = "{where} runs {ref}: ${name} is not known for this point"
MSG_RUNTIME = "{where} runs {ref}, a name built by a command only known at run time"
MSG_NOT_IN_REPO = "{where} runs {target}, which is not in the repository"
MSG_OPTION_UNKNOWN = "{where}: {tool} option {option} is not one the bot can map"
MSG_NO_PROGRAM = "{where}: the bot cannot tell what {tool} runs"
MSG_CONTAINER_PATH = "{where} runs {target} inside the container, a path under no repository mount"
MSG_MOUNT_UNKNOWN = "{where} runs {target} under the container mount {dst}, whose folders the bot cannot know"
MSG_CWD_UNKNOWN = "{where} runs {ref} from a working directory the bot cannot know"
MSG_INTERNAL = "the bot could not follow the chain ({error})"
MSG_TOO_DEEP = "{where}: the launch chain is longer than {limit} files"
MSG_MODELS_ENTRY = "{where} reads {path}: {why}"

# `eval "$(python3 -c "...")"`: a program whose printed assignments the shell runs.
_PY_EVAL = re.compile(r'eval\s+"\$\(\s*python3?\s+-c\s+"(.*)"\s*\)"\s*(?:;|&&|$)', re.S)

_POSITIONAL = re.compile(r"\$(?:@|\*|[1-9]|\{[1-9]\})")
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
                "-v", "--verbose", "-O", "-l", "--label", "--overlap", "--exact", "--kill-on-bad-exit", "-K",
               "--no-container-entrypoint", "--container-remap-root", "--no-container-remap-root",
               "--container-mount-home", "--no-container-mount-home", "--container-writable", "--container-readonly"}
DOCKER_MOUNT = {"-v", "--volume"}
UNKNOWN_MOUNT = "\x00unknown"  # a mount whose container folder the bot cannot know
DOCKER_ENV = {"-e", "--env"}


@dataclass
class Chain:
    """What a runner-chosen point runs: the files and command strings of its chain, the
    sources not taken for its values, and the first hop that could not be followed."""

    files: list[tuple[str, str]] = field(default_factory=list)  # (path, via), in chain order
    commands: list[tuple[str, ScriptAnalysis]] = field(default_factory=list)
    skip: set[tuple[str, int]] = field(default_factory=set)  # (holder, line) of sources not run
    gap: Gap | None = None
    launcher: str | None = None  # the script the runner picks
    # Model-settings programs read on the way (recipes.models_yaml): (holder, line, entry).
    entries: list[tuple[str, int, ModelsEntry]] = field(default_factory=list)
    read: set[tuple[str, int]] = field(default_factory=set)  # (holder, line) of programs read
    runners: list[str] = field(default_factory=list)  # the runner scripts the walk started from
    # The top-level commands passing a variable a branch may set to an option, with the text
    # they run in (`chain_words` reads their words per point), and every text the walk read.
    branch_commands: list[tuple[Scope, Any]] = field(default_factory=list, repr=False)
    scopes: list[Scope] = field(default_factory=list, repr=False)
    root: "RootLookup | None" = field(default=None, repr=False)
    word_sets: list = field(default_factory=list, repr=False)  # [(asked projection, words)]
    flag_sets: dict = field(default_factory=dict, repr=False)  # flag or =NAME -> [(asked, reads)]

    def path(self, repo: Any, src: Any, mounts: Any) -> LaunchPath:
        return build_path(repo, src, mounts, list(self.files), list(self.commands), skip=frozenset(self.skip))


class _Walker:
    def __init__(self, ctx: Any, point: Any) -> None:
        self.repo, self.src = ctx.head_repo, ctx.snapshot.head
        self.mounts = ctx.config.policy.workspace_mounts
        self.trusted = ctx.config.policy.trusted_installers
        self.point = point
        self.chain = Chain()
        self.seen: set[tuple[str, int]] = set()

    # -- where a reference leads ------------------------------------------------------------
    def target(self, scope: Scope, written: str, line: int) -> str:
        """The repository file a reference names; Stop naming the hop when there is none."""
        where = f"{scope.path}:{line}"
        try:
            value = scope.expand(written, line)
        except Unknown as unknown:
            raise Stop(Gap(scope.path, line, MSG_VAR_UNKNOWN.format(where=where, ref=written, name=unknown.name)))
        if value is None:
            raise Stop(Gap(scope.path, line, MSG_RUNTIME.format(where=where, ref=written)))
        if value.startswith("/") and not value.startswith(REPO_ROOT):
            for dst, src in sorted(scope.mounts.items(), key=lambda kv: -len(kv[0])):
                if value == dst or value.startswith(dst.rstrip("/") + "/"):
                    if src is None:
                        raise Stop(Gap(scope.path, line, MSG_MOUNT_UNKNOWN.format(where=where, target=value, dst=dst)))
                    path = join_path(src, value[len(dst.rstrip("/")):].lstrip("/"))
                    if path is not None and self.repo.exists(path):
                        return path
                    raise Stop(Gap(scope.path, line, MSG_NOT_IN_REPO.format(where=where, target=path or value)))
            if UNKNOWN_MOUNT in scope.mounts:
                raise Stop(Gap(scope.path, line, MSG_MOUNT_UNKNOWN.format(where=where, target=value, dst="(unknown)")))
            raise Stop(Gap(scope.path, line, MSG_CONTAINER_PATH.format(where=where, target=value)))
        if scope.cwd is None and not value.startswith(REPO_ROOT):
            raise Stop(Gap(scope.path, line, MSG_CWD_UNKNOWN.format(where=where, ref=written)))
        path = join_path(scope.cwd, value)
        if path is not None and self.repo.exists(path):
            return path
        raise Stop(Gap(scope.path, line, MSG_NOT_IN_REPO.format(where=where, target=path or value)))

    # -- one text ---------------------------------------------------------------------------
    def walk(self, scope: Scope, via: str, *, record: str = "file") -> None:
        key = (scope.path, id(scope.analysis))
        if key in self.seen:
            return
        self.seen.add(key)
        self.chain.scopes.append(scope)
        if record == "file":
            if len(self.chain.files) >= MAX_PATH_FILES:
                raise Stop(Gap(scope.path, None, MSG_TOO_DEEP.format(where=scope.path, limit=MAX_PATH_FILES)))
            self.chain.files.append((scope.path, via))
        elif record == "command":
            self.chain.commands.append((scope.path, scope.analysis))
        a = scope.analysis
        source_lines, conditions, events = _events(a)
        for line, kind, item in events:
            if kind == 2:
                if scope.holds(conditions.get(line), line) is not False:
                    self.unreadable(scope, item)
                continue
            if kind == 3:
                self.chain.branch_commands.append((scope, item))
                continue
            if scope.holds(item.condition, line) is False:
                if kind == 1:
                    self.chain.skip.add((scope.path, line))
                continue
            try:
                if kind == 1:
                    self.source(scope, item)
                else:
                    self.command(scope, item, line in source_lines)
            except Unknown as unknown:
                written = item.value if kind == 1 else " ".join(item.argv[:3])
                raise Stop(Gap(scope.path, line, MSG_VAR_UNKNOWN.format(
                    where=f"{scope.path}:{line}", ref=written, name=unknown.name))) from None
            if kind == 1 and scope.starts(line, "exec") and scope.holds(item.condition, line) is True:
                for later in a.sources:  # `exec`: nothing after it runs
                    if later.line > line:
                        self.chain.skip.add((scope.path, later.line))
                return

    def unreadable(self, scope: Scope, f: Any) -> None:
        """Top-level code the bot cannot read (an `eval` of a run-time string) on the point's
        branch: what follows from it is unknown, so the chain ends here; unless it is a trusted
        installer's download, or evals a variable whose text the chain knows
        (`eval "$DOCKER_CMD_DETECT"`): that text is read instead."""
        if trusted_download(scope.analysis, f.line, self.trusted) or self.models(scope, f.line or 0):
            return
        text = self.evaled(scope, f.line)
        if text is None:
            raise Stop(Gap(f.path or scope.path, f.line, f.message))
        self.chain.read.add((scope.path, f.line or 0))
        inner = analyze_command_line(text, scope.path, f.line or 1)
        self.walk(Scope(scope.path, inner, scope.cwd, scope.outer, dict(scope.mounts), text.splitlines(),
                        (f.line or 1) - 1, parent=scope, container=scope.container),
                  f"run by {scope.path}", record="command")

    def models(self, scope: Scope, line: int) -> bool:
        """`eval "$(python3 -c "...")"` of a program that picks an entry of a models file and
        prints its fields (recipes.models_yaml): the entry is read with this point's values
        and the chain goes on; a program of another shape is not read (False)."""
        cmd = next((c for c in scope.analysis.commands if c.line == line and c.argv[:1] == ["eval"]), None)
        m = _PY_EVAL.match(cmd.text.strip()) if cmd is not None else None
        program = read_program(bash_unescaped(m.group(1))) if m else None
        if program is None:
            return False
        self.read_models(scope, line, program)
        return True

    def models_file(self, scope: Scope, ref: Any) -> bool:
        """`python3 << EOF > "$TMP"` ... `source "$TMP"`: the here-document's program read like
        an eval'd one (server_atom.sh); False when the sourced file is not written that way."""
        name = re.fullmatch(r'"?\$\{?([A-Za-z_]\w*)\}?"?', ref.value.strip())
        if name is None:
            return False
        writer = re.compile(r'python3?\s+(?:-\s+)?<<-?\s*(\w+)\s*>\s*"?\$\{?' + name.group(1) + r'\}?"?\s*$')
        doc = next((h for h in reversed(scope.analysis.heredocs) if h.line < ref.line and not h.quoted
                    and writer.match(h.command.strip())), None)
        program = read_program(heredoc_unescaped(doc.body)) if doc is not None else None
        if program is None:
            return False
        self.read_models(scope, doc.line, program)
        self.chain.read.add((scope.path, ref.line))
        return True

    def read_models(self, scope: Scope, line: int, program: Any) -> None:
        where = f"{scope.path}:{line}"
        path = self.target(scope, program.config, line)
        written = program.model
        try:
            model = scope.expand(program.model, line)
            written = program.agentic or written
            agentic = scope.expand(program.agentic, line) if program.agentic is not None else None
        except Unknown as unknown:
            raise Stop(Gap(scope.path, line, MSG_VAR_UNKNOWN.format(where=where, ref=written, name=unknown.name))) \
                from None
        if model is None or (program.agentic is not None and agentic is None):
            raise Stop(Gap(scope.path, line, MSG_RUNTIME.format(where=where, ref=written)))
        try:
            data = self.src.read(path)
        except OSError:
            data = None
        entry = select_entry(data or b"", path, program, model, agentic)
        if isinstance(entry, str):
            raise Stop(Gap(scope.path, line, MSG_MODELS_ENTRY.format(where=where, path=path, why=entry)))
        self.chain.entries.append((scope.path, line, entry))
        self.chain.read.add((scope.path, line))

    def evaled(self, scope: Scope, line: int | None) -> str | None:
        """The text `eval "$NAME"` at `line` runs, when the chain knows NAME's value."""
        k = (line or 0) - scope.offset - 1
        text = scope.lines[k].strip() if 0 <= k < len(scope.lines) else ""
        m = re.match(r"""eval\s+"\$\{?([A-Za-z_]\w*)\}?"\s*(?:;|&&|$)""", text)
        if not m:
            return None
        try:
            value = scope.value(m.group(1), line or 0)
        except Stop:
            return None
        return value if value and "$(" not in value and "`" not in value else None

    def source(self, scope: Scope, ref: Any) -> None:
        written = ref.value.strip()
        self.chain.skip.add((scope.path, ref.line))  # decided here, not again by the launch path
        if "$" not in written and "`" not in written:
            # A plain name: relative to the working directory, a harness mount path on the host
            # (recipes.launch.path.launch_path), or a container or system file (nothing of ours runs there),
            # except, in a container, a path where the harness mounts the checkout (/workspace)
            # that no mount of this container maps.
            if not scope.container:
                here = join_path(scope.cwd, written) if not written.startswith("/") else None
                path = here if here is not None and self.repo.exists(here) else \
                    resolve_ref(self.repo, self.mounts, written, scope.path)
                if path is None:
                    return
            else:
                try:
                    path = self.target(scope, written, ref.line)
                except Stop:
                    if any(written.startswith(m.rstrip("/") + "/") for m in self.mounts):
                        raise
                    return
        elif self.models_file(scope, ref):
            return  # the models file's entry was read (the sourced file only sets its fields)
        elif self.plain_program(scope, written, ref.line):
            return  # `$BARRIER_CMD` holding `python3 ...`: a program, not a script of the repository
        else:
            path = self.target(scope, written, ref.line)
        if self.chain.launcher is None:
            self.chain.launcher = path
        self.file(path, scope, ref.line, scope.cwd, scope.mounts)

    def file(self, path: str, caller: Scope, line: int, cwd: str | None, mounts: dict,
             outer: Lookup | None = None) -> None:
        analysis = read_analysis(self.src, path)
        if analysis is None:
            raise Stop(Gap(caller.path, line, MSG_NOT_IN_REPO.format(where=f"{caller.path}:{line}", target=path)))
        look = outer or (lambda n, s=caller, ln=line: s.value(n, ln))
        self.walk(Scope(path, analysis, cwd, look, dict(mounts), file_lines(self.src, path),
                         container=outer is not None or caller.container), f"run by {caller.path}")

    def command(self, scope: Scope, cmd: Any, is_source: bool) -> None:
        words = list(cmd.expanded or cmd.argv)
        if not words:
            return
        where = f"{scope.path}:{cmd.line}"
        head = words[0]
        py = python_file_run([str(w) for w in words])
        if py is not None:
            # `python3 $WS_PATH/fix.py`: a Python file on the launch path (recipes.launch.path.launch_path rule 3),
            # found where it runs (in a container, through its mounts); a leaf of the chain. One
            # the walk cannot place is left to the launch path's own reading (`"$(dir_fn)/x.py"`, a
            # file the runner writes at run time), which names it when its name is built at run time.
            try:
                path = self.target(scope, py, cmd.line)
            except Stop:
                return
            self.chain.skip.add((scope.path, cmd.line))
            if path not in {p for p, _ in self.chain.files}:
                self.chain.files.append((path, f"run by {scope.path}"))
            return
        if head == "cd" and cmd.function is not None and cmd.function in dir_functions(scope.analysis):
            return  # `_patches_dir() { cd DIR && pwd; }`: run inside `$(...)`, it prints DIR
        if head == "cd" and len(words) >= 2 and scope.starts(cmd.line, "cd"):
            target = scope.expand(words[1], cmd.line)
            scope.cwd = (self.mapped(scope, target) if target.startswith("/") and not target.startswith(REPO_ROOT)
                         else join_path(scope.cwd, target)) if target is not None else None
            return
        if head == "sbatch":
            script, _ = self.options(scope, cmd.line, words, 1, "sbatch")
            self.file(self.target(scope, script, cmd.line), scope, cmd.line, scope.cwd, scope.mounts)
            return
        if head == "srun":
            i = self.options(scope, cmd.line, words, 1, "srun")[1]
            mounts, outer = self.pyxis(scope, cmd.line, words[1:i])
            self.program(scope, cmd, words, i, mounts, outer, is_source)
            return
        if head == "eval" and len(words) == 2 and re.fullmatch(r'"?\$\{?[A-Za-z_]\w*\}?"?', cmd.argv[1] if
                                                                len(cmd.argv) == 2 else ""):
            self.eval_var(scope, cmd)
            return
        if cmd.function is not None and _POSITIONAL.fullmatch(head.strip('"')):
            # A wrapper function running its arguments (`"$@"` after its shifts, `eval "$2"`):
            # what runs is what its call sites pass, read there.
            self.wrapped(scope, cmd, head.strip('"'))
            return
        raw = list(cmd.argv)
        if _container_run(raw) is not None:
            self.container(scope, cmd, raw, _container_run(raw))
            return
        if not is_source and (head.endswith(SCRIPT_SUFFIXES) or (scope.container and head.startswith("/"))
                              or head.startswith(("./", "$"))):
            # A script run by its path (`./x.sh`, `/workspace/.../server.sh` in a container).
            if head.startswith("$") and words[1:2] and words[1] in ("-m", "-c", "-"):
                return  # `"$PY" -m pip ...`, `"$PY" -c ...`: an interpreter, not a script of the repository
            if head.startswith("$") and not head.endswith(SCRIPT_SUFFIXES) and try_expand(scope, head, cmd.line) is None:
                if self.plain_program(scope, head, cmd.line):
                    return  # `$BARRIER_CMD` set to `python3 ...`: a program, not a script of the repository
                if scope.container:
                    # What runs in the container is only known at run time: never a PASS past it.
                    name = re.fullmatch(r'"?\$\{?([A-Za-z_]\w*)\}?"?', head)
                    why = (MSG_VAR_UNKNOWN.format(where=where, ref=head, name=name.group(1)) if name
                           else MSG_RUNTIME.format(where=where, ref=head))
                    raise Stop(Gap(scope.path, cmd.line, why))
                return  # `$DOCKER_CMD ps`, `$MAYBE_EXEC ...` on the host: a program chosen at run time
            if scope.container and head.startswith("/") and not self.ours(scope, head):
                return  # `/usr/local/bin/atomesh`: the image's own program, under no mount of ours
            self.program(scope, cmd, words, 0, scope.mounts, scope.outer if scope.container else None, False)

    def mapped(self, scope: Scope, value: str) -> str | None:
        """The repository folder a container path lies in through the container's mounts
        (`cd "$WS_PATH"`); None when no mount of a repository folder holds it."""
        for dst, src in sorted(scope.mounts.items(), key=lambda kv: -len(kv[0])):
            if src is not None and (value == dst or value.startswith(dst.rstrip("/") + "/")):
                return join_path(src, value[len(dst.rstrip("/")):].lstrip("/"))
        return None

    def ours(self, scope: Scope, path: str) -> bool:
        """Whether a container path may hold a file of this repository: under one of the
        container's mounts, or where the harness mounts the checkout (policy workspace_mounts)."""
        under = [m.rstrip("/") for m in list(scope.mounts) + list(self.mounts)]
        return UNKNOWN_MOUNT in scope.mounts or any(m == "" or path == m or path.startswith(m + "/") for m in under)

    def wrapped(self, scope: Scope, cmd: Any, head: str) -> None:
        """The command a wrapper function runs from its parameters, at each of its call sites:
        `"$@"` (after the function's `shift`s) is run as words, `$N` as a command text."""
        fn = scope.analysis.functions.get(cmd.function)
        shifts = sum(int(c.argv[1]) if len(c.argv) > 1 and c.argv[1].isdigit() else 1
                     for c in scope.analysis.commands
                     if c.function == cmd.function and c.argv[:1] == ["shift"] and c.line < cmd.line)
        for call in [c for c in scope.analysis.commands if c.argv[:1] == [cmd.function]]:
            if fn is not None and fn.line <= call.line <= fn.end_line:
                continue  # a recursive call: its own call sites decide
            if head in ("$@", "$*"):
                words = list(call.expanded or call.argv)[1 + shifts:]
                if not words:
                    continue
                prog = words[0]
                if prog in _SHELLS or prog.endswith(SCRIPT_SUFFIXES) or prog.startswith(("/", "./", "$")):
                    self.program(scope, call, words, 0, scope.mounts, None, False)
                continue
            n = int(head.lstrip("${").rstrip("}"))
            if n >= len(call.argv):
                continue
            text = call.argv[n]
            inner = analyze_command_line(text, scope.path, call.line)
            self.walk(Scope(scope.path, inner, scope.cwd, lambda v, s=scope, ln=call.line: s.value(v, ln),
                            dict(scope.mounts), text.splitlines(), call.line - 1, parent=scope,
                            container=scope.container), f"run by {scope.path}", record="command")

    def eval_var(self, scope: Scope, cmd: Any) -> None:
        """`eval "$CMD"`: each text CMD may hold there (as written at its assignment) is read
        as a command line, its variables looked up at the eval; none known ends the chain."""
        name = cmd.argv[1].strip('"').lstrip("$").strip("{}")
        local = [loc.value for n, loc, _ in scope.analysis.assignments
                 if n == name and cmd.function is not None and loc.function == cmd.function and loc.line < cmd.line]
        if local and _POSITIONAL.fullmatch(local[-1].strip('"')):
            self.wrapped(scope, cmd, local[-1].strip('"'))  # `local cmd="$2"; eval "$cmd"`
            return
        texts = scope.raw(name, cmd.line)
        if not texts:
            where = f"{scope.path}:{cmd.line}"
            raise Stop(Gap(scope.path, cmd.line, MSG_VAR_UNKNOWN.format(where=where, ref=cmd.argv[1], name=name)))
        self.chain.read.add((scope.path, cmd.line))
        for text in dict.fromkeys(texts):
            inner = analyze_command_line(text, scope.path, cmd.line)
            self.walk(Scope(scope.path, inner, scope.cwd, lambda v, s=scope, ln=cmd.line: s.value(v, ln),
                            dict(scope.mounts), text.splitlines(), cmd.line - 1, parent=scope,
                            container=scope.container), f"run by {scope.path}", record="command")

    def plain_program(self, scope: Scope, head: str, line: int) -> bool:
        """Whether `$NAME` holds a command line (as written) whose program is not a shell, a
        script or a path: e.g. `python3 $WS/sync.py ...`, nothing of the chain to follow."""
        name = re.fullmatch(r'"?\$\{?([A-Za-z_]\w*)\}?"?', head)
        texts = scope.raw(name.group(1), line) if name else []
        return bool(texts) and all(self._plain(scope, t, line) for t in texts)

    @staticmethod
    def _plain(scope: Scope, text: str, line: int) -> bool:
        words = text.strip().strip("'\"").split()
        prog = try_expand(scope, words[0], line) if words else None
        return bool(prog) and re.fullmatch(r"[A-Za-z][\w.+-]*", prog) is not None and prog not in _SHELLS \
            and not prog.endswith(SCRIPT_SUFFIXES)

    def pyxis(self, scope: Scope, line: int, opts: list[str]) -> tuple[dict, Lookup | None]:
        """`srun --container-image=... --container-mounts=SRC:DST,...`: a container that keeps
        the caller's environment and sees the listed mounts (None, None: no container)."""
        if not any(o.startswith("--container-image") for o in opts):
            return scope.mounts, None
        mounts: dict[str, str | None] = {}
        for o in opts:
            if o.startswith("--container-mounts="):
                for pair in o.split("=", 1)[1].strip("'\"").split(","):
                    src, _, dst = pair.partition(":")
                    folder = try_expand(scope, src, line)
                    target = try_expand(scope, dst.split(":")[0], line) or UNKNOWN_MOUNT
                    mounts[target.rstrip("/") or "/"] = join_path(scope.cwd, folder) if folder is not None else None
        return mounts, (lambda n, s=scope, ln=line: s.value(n, ln))

    def options(self, scope: Scope, line: int, words: list[str], i: int, tool: str) -> tuple[str, int]:
        """The first word after `tool`'s options, and its index."""
        where = f"{scope.path}:{line}"
        while i < len(words):
            w = words[i]
            if not w.startswith("-"):
                if w.startswith("$") and "/" not in w:
                    raise Stop(Gap(scope.path, line, MSG_OPTION_UNKNOWN.format(where=where, tool=tool, option=w)))
                return w, i
            if "=" in w or w in SLURM_FLAGS:
                i += 1
            elif w in SLURM_VALUE:
                i += 2
            else:
                raise Stop(Gap(scope.path, line, MSG_OPTION_UNKNOWN.format(where=where, tool=tool, option=w)))
        raise Stop(Gap(scope.path, line, MSG_NO_PROGRAM.format(where=where, tool=tool)))

    def program(self, scope: Scope, cmd: Any, words: list[str], i: int, mounts: dict,
                outer: Lookup | None, is_source: bool) -> None:
        """What a wrapper (`srun`, a container) runs from word `i`: a shell string or a script."""
        prog = words[i] if i < len(words) else ""
        inside = outer is not None
        if prog in _SHELLS and i + 2 < len(words) and _SCRIPT_FLAGS.match(words[i + 1]):
            text, first = self.script_text(scope, cmd, words, i, defer=not inside)
            analysis = analyze_command_line(text, scope.path, first)
            look = outer or (lambda n, s=scope, ln=cmd.line: s.value(n, ln))
            inner = Scope(scope.path, analysis, None if inside else scope.cwd, look, dict(mounts),
                          text.splitlines(), first - 1, parent=scope, container=inside or scope.container)
            self.walk(inner, f"run by {scope.path}", record="command")
            return
        # A path the wrapper runs is read where it runs: in the container, through its mounts.
        here = dataclasses.replace(scope, mounts=dict(mounts), container=True) if inside else scope
        if prog in _SHELLS and i + 1 < len(words):
            if is_source and not inside:
                return  # the analyser reports it as a source: followed there
            self.file(self.target(here, words[i + 1], cmd.line), scope, cmd.line, scope.cwd, mounts, outer)
            return
        if prog.startswith(("/", "./", "$")) or prog.endswith(SCRIPT_SUFFIXES):
            path = self.target(here, prog, cmd.line)
            self.file(path, scope, cmd.line, scope.cwd, mounts, outer)

    def script_text(self, scope: Scope, cmd: Any, words: list[str], i: int, *, defer: bool) -> tuple[str, int]:
        """The string a `bash -c` runs, as this shell hands it over: the raw word after the
        flag in the command's text. For a container its variables are substituted from this
        scope (the container does not inherit them; those not known stay); for a host shell
        (`defer`) they stay and are looked up through this scope. The analyser's own expansion
        is not used: it takes a `${X:-default}` default where the caller sets X. Also the
        file line the string starts on."""
        nth = sum(1 for k in range(i) if words[k] in _SHELLS and k + 1 < len(words) and _SCRIPT_FLAGS.match(words[k + 1]))
        found = list(re.finditer(r"(?:^|\s)(?:/(?:usr/)?bin/)?(?:bash|sh)\s+-[a-z]*c[a-z]*\s+", cmd.text))
        if len(found) <= nth:
            return "".join(words[i + 2:]), cmd.line
        m = found[nth]
        raw = cmd.text[m.end():]
        # The string's first line, so the lines of what it runs are the file's own (line_offset).
        first = cmd.line + cmd.text[:m.end()].count("\n")
        return scope.expand(raw, cmd.line, keep=True, defer=defer) or "", first

    def container(self, scope: Scope, cmd: Any, words: list[str], run: int) -> None:
        """`docker run ... IMAGE bash -c STRING`: the container sees its `-e` variables and its
        `-v` mounts of repository folders; what it runs is the trailing shell string."""
        where = f"{scope.path}:{cmd.line}"
        env: dict[str, str] = {}
        mounts: dict[str, str | None] = {}
        unknown: list[str] = []
        words = self.arrays(scope, cmd.line, words, unknown)
        for j in range(run + 1, len(words) - 1):
            opt, arg = words[j], words[j + 1]
            if opt in DOCKER_ENV and "=" in arg:
                name, _, value = arg.partition("=")
                env[name] = value  # expanded when the container reads it
            elif opt in DOCKER_MOUNT and ":" in arg:
                src, dst = arg.split(":")[:2]
                s, dst = try_expand(scope, src, cmd.line), try_expand(scope, dst, cmd.line) or UNKNOWN_MOUNT
                if s is None or dst == UNKNOWN_MOUNT:
                    mounts[dst.rstrip("/") or "/"] = None
                elif s.startswith(REPO_ROOT) or not s.startswith("/"):
                    folder = join_path(scope.cwd, s)
                    mounts[dst.rstrip("/") or "/"] = folder
        shell = next((k for k in range(len(words) - 2, run, -1)
                      if words[k] in _SHELLS and _SCRIPT_FLAGS.match(words[k + 1])), None)
        if shell is None:
            if any(v is not None for v in mounts.values()) or None in mounts.values():
                # The checkout is mounted but what runs in it is the image's choice or a word
                # the bot cannot place: never a PASS on the part before it.
                raise Stop(Gap(scope.path, cmd.line, MSG_NO_PROGRAM.format(where=where, tool="the container")))
            return  # the image's own program, with nothing of the repository mounted

        def look(name: str) -> str | None:
            if name in env:
                value = try_expand(scope, env[name], cmd.line)
                if value is None:
                    raise Unknown(name)
                return value
            if unknown:
                raise Unknown(name)  # it may come from a word the bot cannot expand
            return None

        self.program(scope, cmd, words, shell, mounts, look, False)

    def arrays(self, scope: Scope, line: int, words: list[str], unknown: list[str]) -> list[str]:
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
            elems = array_elements(scope, m.group(1), line)
            if elems is None:
                unknown.append(w)
            else:
                out.extend(elems)
        return out


_EVENTS = "_runner_launch_events"


def _events(a: ScriptAnalysis) -> tuple[set[int], dict[int, str | None], list[tuple[int, int, Any]]]:
    """What a walk of this text visits, in line order, computed once per text: its sources,
    the commands that can be a hop and the unreadable lines, outside functions nothing calls
    (a hop inside a called function runs when it is called; its variables are read as the top
    level sets them)."""
    cached = a.__dict__.get(_EVENTS)
    if cached is None:
        called = {w for c in a.commands for w in (c.argv[:1] + c.argv[1:2]) if w in a.functions}
        unreadable = [(f.line or 0, 2, f) for f in a.findings if f.code in UNREADABLE_CODES
                      and all(fn.name in called for fn in a.functions.values() if fn.line <= (f.line or 0) <= fn.end_line)]
        # `echo`, `python3 ...`, `sed ...`: nothing of the chain to follow.
        events = [(c.line, 0, c) for c in a.commands if _may_hop(c)] + [(s.line, 1, s) for s in a.sources] + unreadable
        # A top-level command passing a word a branch chose (`run_benchmark_serving ... $extra_flags`
        # after `if [ "$IS_MTP" = "true" ]; then extra_flags="--use-chat-template"; fi`).
        events += [(c.line, 3, c) for c in a.commands if c.function is None and branch_words(a, c)]
        events = [e for e in events if e[1] == 2 or e[2].function is None or e[2].function in called]
        cached = ({s.line for s in a.sources}, top_conditions(a), sorted(events, key=lambda e: (e[0], e[1])))
        a.__dict__[_EVENTS] = cached
    return cached


_HOP_HEADS = {"cd", "sbatch", "srun", "eval"}


def _may_hop(cmd: Any) -> bool:
    """Whether `_Walker.command` can do anything with this command (cheap, before its branch)."""
    words = cmd.expanded or cmd.argv
    if not words:
        return False
    head = words[0]
    return (head in _HOP_HEADS or head.startswith(("/", "./", "$", '"$')) or head.endswith(SCRIPT_SUFFIXES)
            or _container_run(list(cmd.argv)) is not None or python_file_run([str(w) for w in words]) is not None)


def _container_run(words: list[str]) -> int | None:
    """Index of `run` in `docker run`, `sudo docker run`, `$DOCKER_CMD run`, `exec docker run`."""
    for k in range(1, min(len(words), 4)):
        if words[k] == "run" and re.search(r"docker|podman", words[k - 1], re.I):
            return k
    return None


MEMO_CHAIN_WALKS = "runner_launch.walks:{runner}"


def runner_chain(ctx: Any, point: Any) -> Chain | None:
    """The chain of a point with no launcher file, from its runner scripts; None when no
    runner script of its label runs a script for it."""
    env = runner_env(ctx, point)
    root = ctx.head_repo.layout.root or ""
    # The walk reads the point only through the variables it asks for: a point whose values
    # of those are the same runs the same chain (the model, precision, ... differ per point,
    # but most hops depend on few of them). Walked once per such set of values per review.
    walks: list = ctx.memo(MEMO_CHAIN_WALKS.format(runner=point.runner), list)
    for asked, chain in walks:
        if all(seen_as(env.get(name, MISSING), trim) == value for name, (trim, value) in asked.items()):
            return chain
    outer = RootLookup(env)
    chain = _walk_runner(ctx, point, root, outer)
    paths = _chain_paths(chain) if chain is not None else None
    src = ctx.snapshot.head
    walks.append(({name: projection(name, value, None) if paths is None else file_projection(src, paths, name, value)
                   for name, value in outer.asked.items()}, chain))
    if chain is not None:
        chain.root = outer
    return chain


def _chain_paths(chain: Chain) -> list[str]:
    """The files of every text the walk read, up to the hop it stopped at when it did (the
    walk's course depends on nothing else of the repository)."""
    # The command strings it read are parts of these files (or of values assigned in them).
    return chain.runners + [p for p, _ in chain.files]



def _walk_runner(ctx: Any, point: Any, root: str, outer: Lookup) -> Chain | None:
    repo = ctx.head_repo
    nodes = ctx.memo(MEMO_RUNNERS, lambda: runner_nodes(repo, ctx.snapshot.head))
    paths = runner_scripts(repo, nodes, point.runner)
    if not paths:
        return None
    walker = _Walker(ctx, point)
    walker.chain.runners = list(paths)
    try:
        for path in paths:
            analysis = read_analysis(ctx.snapshot.head, path)
            if analysis is not None:
                scope = Scope(path, analysis, root, outer, lines=file_lines(ctx.snapshot.head, path))
                walker.walk(scope, f"runner for {point.runner}", record="runner")
    except Stop as stop:
        walker.chain.gap = stop.gap
    except (RecursionError, Exception) as exc:  # noqa: BLE001 - no script may crash the checks
        walker.chain.gap = Gap(paths[0], None, MSG_INTERNAL.format(error=f"{type(exc).__name__}: {exc}"[:200]))
    chain = walker.chain
    if chain.launcher is None and chain.gap is None:
        return None
    return chain


MEMO_CHAIN_PATH = "runner_launch.path:{key}"


def chain_path(ctx: Any, chain: Chain) -> LaunchPath:
    """The launch path of a whole chain: one build over all its files and strings, so the
    functions the chain calls in a library it sources are known; the sources the walk decided
    (not taken for the point, or resolved by it) are not followed again."""
    key = (tuple(chain.files), tuple((h, id(a)) for h, a in chain.commands), tuple(sorted(chain.skip)))
    return ctx.memo(MEMO_CHAIN_PATH.format(key=repr(key)),
                    lambda: chain.path(ctx.head_repo, ctx.snapshot.head, ctx.config.policy.workspace_mounts))
