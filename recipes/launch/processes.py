"""What external commands do: the vocabulary's answer followed into wrappers, shells, scripts,
Python and containers, and paths as the host sees them."""
from __future__ import annotations

import posixpath
from typing import Any, Iterable, Optional

from .effects import CommandEffects, Container, PythonRun
from .frame import MAX_EXPORTED
from .fs import WORKSPACE, Written, norm
from .outputs import _OUTPUT_MODELS, _PURE_QUIET
from .state import _ABSENT, _FILE_SUFFIXES, _SHELL_SUFFIXES, BUILTINS, MAX_NAMED_WORDS, Ctx, Out, State, _short, \
    in_functions, process_frame
from .pycode import SITE_PACKAGES, write_targets
from .text import _python_code_detail
from .trace import (
    CLIENT,
    CONTAINER,
    DOWNLOAD,
    EXEC,
    INSTALL,
    PYTHON,
    READ,
    RUN_WRITTEN,
    SOURCE,
    WRITE,
    Site,
)
from .words import Downloaded, Unknown, Word, unclassed


# Commands none of whose options runs a program or reads code: name -> whether it writes files.
FILE_ONLY = {
    **dict.fromkeys("mv cp rm rmdir mkdir chmod chown chgrp ln touch install truncate sbcast unsquashfs "
                    "mksquashfs tee split".split(), True),
    **dict.fromkeys("cat head tail wc ls stat du df basename dirname realpath readlink grep egrep fgrep cut tr "
                    "uniq md5sum sha1sum sha256sum diff cmp date sleep hostname nproc nvidia-smi rocm-smi amd-smi "
                    "scancel squeue scontrol sinfo sacct id whoami free lscpu numastat file column paste "
                    "rev tac fold base64 jq yq printenv env_parallel".split(), False),
}


def _naming_words(argv: Iterable[Word]) -> tuple[str, ...]:
    """The words of `argv` that may name a file (`named_files`): its first MAX_NAMED_WORDS texts,
    an option's value after `--opt=`; no option, shell script or bare name without a file's suffix."""
    out: list[str] = []
    for w in [w for w in argv if isinstance(w, str)][:MAX_NAMED_WORDS]:
        w = w.split("=", 1)[1] if w.startswith("-") and "=" in w else w
        if not w or w.startswith("-") or w.endswith(_SHELL_SUFFIXES) or (
                "/" not in w and not w.endswith(_FILE_SUFFIXES)):
            continue
        out.append(w)
    return tuple(out)


# `_naming_words` of an argv, per argv (a tuple of words; its texts alone decide): an effect of a
# command a launch runs again and again reads them once. Emptied when it holds MAX_NAMING.
_NAMING: dict[tuple[Word, ...], tuple[str, ...]] = {}
MAX_NAMING = 4_096


class Processes:
    """What external commands do: the vocabulary's answer followed into wrappers, shells, scripts,
Python and containers, and paths as the host sees them."""

    def env_of(self, state: State, prefix: list[tuple[str, Word]]) -> tuple[tuple[str, Word], ...]:
        """The environment a command sees, less what it inherits unchanged from the point's
        inputs (the same in both trees of a comparison, and kept out so that points share)."""
        key = None if prefix else state.env_key()
        known = self.envs.get(key) if key is not None else None
        if known is not None:
            return known
        inputs = self.inputs
        if key is not None and len(key) > 1:
            # Inside functions: the environment of the process's own frame (kept by its version,
            # as a command outside functions has it), changed by the names of the function
            # frames, which are few (an exported one sets its name, any other hides it).
            def differs(k: str, v: Word) -> bool:
                return (i := inputs.get(k, _ABSENT)) is not v and i != v

            outer = dict(self.env_of(State(frames=state.frames[:1]), []))
            got = tuple(sorted(in_functions(outer, state.frames[1:], differs).items()))
        else:
            env = state.exported()
            for k, v in prefix:
                env[k] = v
            # Most names still hold the input's own object: `is` answers before `!=` compares.
            got = tuple(sorted([(k, v) for k, v in env.items() if (i := inputs.get(k, _ABSENT)) is not v and i != v]))
        if key is not None:
            if len(self.envs) >= MAX_EXPORTED:
                self.envs.clear()
            self.envs[key] = got
        return got

    def external(self, argv: list[Word], prefix, state: State, ctx: Ctx, node: Any, *,
                 stdin: Word | None = None, out: Out | None = None) -> Optional[int]:
        head = argv[0]
        assert isinstance(head, str)
        env = self.env_of(state, prefix)
        words = tuple(argv)
        role = self.classify(words, self, state, ctx) if self.classify else None
        if role is not None:
            kind, what = role
            self.emit(kind, ctx, node, state, argv=words, env=env, cwd=state.cwd, how=what,
                      client=kind == CLIENT)
            if kind == CLIENT:
                self.client_python(argv, state, ctx, node)
                return None
        hook = self.hooks.get(head)
        if hook is not None:
            self.emit(EXEC, ctx, node, state, argv=words, env=env, cwd=state.cwd)
            return hook(self, argv, state, ctx, node)
        # A script of the repository run by path (`./x.sh`, `"$DIR/x.sh"`, `benchmarks/x.sh`).
        if "/" in head:
            return self.run_program(head, argv[1:], prefix, state, ctx, node, stdin, out)
        try:
            ce = self.vocabulary(words, None)  # relative paths stay relative: host_path resolves them
        except Exception as e:  # a vocabulary handler's fault is an unknown, never a crash
            ce = CommandEffects(unknown=f"{head}: {type(e).__name__}")
        model = _OUTPUT_MODELS.get(head)
        if ce is None and model is None:
            self.emit(EXEC, ctx, node, state, argv=words, env=env, cwd=state.cwd)
            self.unknown(ctx, node, state, f"`{head}` is not a command the interpreter knows")
            if out is not None:
                out.write(Unknown(f"the output of {head}"))
            return None
        if role is None:
            self.emit(EXEC, ctx, node, state, argv=words, env=env, cwd=state.cwd)
        if ce is not None:
            self.apply(ce, argv, prefix, state, ctx, node, stdin=stdin, out=out)
        if model is not None:
            text, status = model(self, argv, state, stdin)
            if out is not None:
                out.write(text)
            return status
        self.unmodelled_output(ce, head, out)
        return None

    def unmodelled_output(self, ce: Optional[CommandEffects], head: str, out: Out | None) -> None:
        """What a command whose output no model computes prints: unknown (a download's text)."""
        if out is not None and not _PURE_QUIET.get(head, False):
            fetched = [d.url for d in (ce.downloads if ce is not None else []) if d.dest is None]
            out.write(Downloaded(f"the download of {fetched[0]}", url=fetched[0])
                      if fetched and isinstance(fetched[0], str) else Unknown(f"the output of {head}"))

    def same_effects(self, argvs: list[list[Word]], state: State, ctx: Ctx, functions: bool) -> Optional[CommandEffects]:
        """The vocabulary's one answer for every argv, when they differ only in words that change
        nothing it runs, reads or writes (`sbatch` with or without `--exclude NODES`): an
        external command that is no server, client, hook or script, else None."""
        head = argv0 = argvs[0][0]
        if not isinstance(head, str) or "/" in head or head in self.hooks or head in _OUTPUT_MODELS \
                or any(a[0] != argv0 for a in argvs) or (functions and head in state.functions) \
                or head in BUILTINS or (state.expand_aliases and head in state.aliases):
            return None
        answers = []
        for argv in argvs:
            if self.classify and self.classify(tuple(argv), self, state, ctx) is not None:
                return None
            try:
                answers.append(self.vocabulary(tuple(argv), None))
            except Exception:
                return None
        return answers[0] if answers[0] is not None and all(a == answers[0] for a in answers) else None

    def named_files(self, argv: Iterable[Word], path: Any, state: State
                    ) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, Word], ...]]:
        """The repository files a command names (an argument, `--opt=FILE`, the effect's path),
        with a digest of each: a server's config file, a Python script, a file read; and the
        files the launch wrote that it names, with the text written there (`cat <<EOF >
        ser.yaml`, then `trtllm-serve --config ser.yaml`)."""
        out: dict[str, str] = {}
        wrote: dict[str, Word] = {}
        if isinstance(path, str):  # read each time: `w is path` below tells the path from an argument
            words = _naming_words(argv) + _naming_words((path,))
        else:
            try:
                words = _NAMING[argv]
            except KeyError:
                if len(_NAMING) >= MAX_NAMING:
                    _NAMING.clear()
                words = _NAMING[argv] = _naming_words(argv)
            except TypeError:  # an argv that does not hash (a list): read each time
                words = _naming_words(argv)
        for w in words:
            host = path if w is path else self.host_path(w, state)
            if isinstance(host, str):
                written = self.files.written(host)
                if written is not None:
                    wrote.setdefault(w, written.text)
                rel = self.files.repo_path(host)
                digest = self.files.digest(host) if rel else None
                if digest is not None:
                    out[rel] = digest
        return tuple(sorted(out.items())), tuple(wrote.items())

    def apply(self, ce: CommandEffects, argv: list[Word], prefix, state: State, ctx: Ctx, node: Any, *,
              stdin: Word | None, out: Out | None) -> None:
        head = argv[0]
        if ce.unknown and isinstance(head, str) and posixpath.basename(head) in FILE_ONLY:
            # No option of this command runs code: a word it cannot read changes only which files
            # it reads or writes. A writer's target is then not known.
            self.unknown(ctx, node, state, f"`{head}` has words it cannot name: {ce.unknown}")
            if FILE_ONLY[posixpath.basename(head)]:
                self.emit(WRITE, ctx, node, state, path=Unknown(f"a file `{head}` writes ({ce.unknown})"),
                          how="unknown")
        elif ce.unknown:
            # What a command the vocabulary does not understand does is not known: it may run or
            # write anything, so it hides code like an unknown command.
            self.unknown(ctx, node, state, f"`{head}` is not understood: {ce.unknown}")
        for path in ce.reads:
            self.emit(READ, ctx, node, state, path=self.host_path(path, state))
        for w in ce.writes:
            target = self.host_path(w.path, state)
            self.emit(WRITE, ctx, node, state, path=target, how=w.how)
            if isinstance(target, str):
                self.files.write(target, Written(Unknown(f"written by {head}"), f"{w.how} by {head}", ctx.site(node)))
        for d in ce.downloads:
            dest = self.host_path(d.dest, state) if d.dest is not None else None
            self.emit(DOWNLOAD, ctx, node, state, argv=(d.url,), path=dest)
            if isinstance(dest, str):
                self.files.write(dest, Written(Unknown(f"downloaded from {d.url}"), "downloaded", ctx.site(node)))
        for c in ce.copies:
            self.files.copy(c, [self.host_path(source, state) for source, _ in c.sources], self.host_path(c.dest, state))
        for inst in ce.installs:
            self.emit(INSTALL, ctx, node, state, argv=tuple(inst.packages) + tuple(inst.index), how=inst.manager,
                      detail="editable" if inst.editable else "")
        for sub_argv, env_add, cwd in ce.runs:
            sub_prefix = list(prefix) + list(env_add)
            inner = state.copy()
            if getattr(ce, "clears_env", False):
                # `env -i`, `srun --export=NONE`: nothing of this shell's environment goes along.
                inner = State(cwd=state.cwd, container=state.container, mounts=state.mounts)
            for name in getattr(ce, "unsets", ()):
                inner.unset(name)
            if cwd is not None:
                inner.cwd = self.local_path(cwd, state)
            self.run_argv(list(sub_argv), sub_prefix, inner, ctx, node, stdin=stdin, out=out, functions=False)
        for text, args in ce.shell_text:
            self.child_shell_text(text, args, prefix, state, ctx, node, out)
        for path, args in ce.shell_files:
            self.child_shell_file(path, args, prefix, state, ctx, node, out)
        if ce.shell_stdin:
            if isinstance(stdin, str):
                self.child_shell_text(stdin, (), prefix, state, ctx, node, out)
            else:
                why = stdin.why if isinstance(stdin, Unknown) else "no input"
                self.unknown(ctx, node, state, f"{head} runs shell code from its input, which is not known ({why})",
                             code=stdin)
        for py in ce.python:
            self.python(py, argv, prefix, state, ctx, node, stdin)
        for c in ce.containers:
            self.container(c, prefix, state, ctx, node, out)
        for prog, args in ce.programs:
            if isinstance(prog, str) and "/" not in prog:
                continue  # a program found on PATH (`vllm serve`): the image's, recorded as executed
            self.run_program(prog, list(args), prefix, state, ctx, node, stdin, out, known_program=True)

    def child_shell_text(self, text: Word, args: tuple[Word, ...], prefix, state: State, ctx: Ctx, node: Any,
                         out: Out | None) -> None:
        child = state.child()
        if isinstance(text, Unknown):
            filled, why = self.readable(text, child)
            if filled is None:
                self.unknown(ctx, node, state, f"shell text that is not known ({why})", code=text)
                return
            text = filled
        for k, v in prefix:
            child.set(k, v, export=True)
        if args:
            child.argv0, child.positional = args[0], list(args[1:])
        site = ctx.site(node)
        self.emit(SOURCE, ctx, node, state, path=f"{site} (shell text)", how="shell text")
        self.run_script(text, f"{site.path}:{site.line} (shell text)", child,
                        ctx.deeper(site, "bash -c"))

    def child_shell_file(self, path: Word, args: tuple[Word, ...], prefix, state: State, ctx: Ctx, node: Any,
                         out: Out | None) -> None:
        host = self.known_path(self.host_path(path, state), ctx)
        text = self.script_text(host, state, ctx, node, "runs")
        if text is None:
            return
        child = state.child()
        for k, v in prefix:
            child.set(k, v, export=True)
        child.argv0, child.positional = self.local_path(path, state), list(args)
        label = self.label(host)
        self.run_script(text, label, child, ctx.deeper(ctx.site(node), f"bash {label}", local=child.argv0))

    def known_path(self, host: Word, ctx: Ctx) -> Word:
        """A path the launch names through a variable it cannot know, found by what follows the
        variable (`$ROOT/benchmarks/x.sh`), so that the file's effects carry its own name."""
        if isinstance(host, Unknown):
            return self.root_relative(host, ctx) or host
        return host

    def label(self, host: Word) -> str:
        if isinstance(host, Unknown):
            return "<unknown>"
        rel = self.files.repo_path(host)
        return rel if rel else host

    def script_text(self, host: Word, state: State, ctx: Ctx, node: Any, verb: str) -> Optional[str]:
        """The text of a script the launch runs or sources, or None (reported)."""
        if isinstance(host, Unknown):
            found = self.root_relative(host, ctx)
            if found is None:
                self.unknown(ctx, node, state, f"{verb} a file whose path is not known ({host.why})")
                return None
            host = found
        written = self.files.written(host)
        if written is not None:
            self.emit(RUN_WRITTEN, ctx, node, state, path=host,
                      detail=f"the launch wrote at {written.site} ({written.by})")
            if isinstance(written.text, str):
                return written.text
            self.unknown(ctx, node, state, f"{verb} {host}, whose text is not known ({written.text.why})")
            return None
        self.emit(SOURCE, ctx, node, state, path=host, how=verb)
        text = self.files.read(host, run=True)
        if text is None:
            exists = self.files.exists(host)
            where = "in the repository" if self.files.repo_path(host) is not None else "outside the repository"
            self.unknown(ctx, node, state, f"{verb} {host}, {'a folder' if exists else 'not a file'} {where}")
            return None
        return text

    def root_relative(self, path: Unknown, ctx: Ctx) -> Optional[str]:
        """`"$ROOT/benchmarks/lib.sh"` with `$ROOT` unknown: a root folder variable naming a file
        of the checkout, taken from the nearest ancestor of the running file that holds the
        known tail (as the repository's own scripts are laid out); None when none does or the
        tail is not a plain relative path."""
        tail = path.suffix
        if path.prefix or not tail.startswith("/") or len(tail) < 2 or ".." in tail:
            return None
        here = ctx.path if not ctx.path.startswith(("<", "/")) and " (" not in ctx.path else ""
        folder = posixpath.dirname(here)
        while True:
            candidate = f"{WORKSPACE}/{posixpath.join(folder, tail.lstrip('/')) if folder else tail.lstrip('/')}"
            if self.files.read(candidate, run=True) is not None:
                return candidate
            if not folder:
                return None
            folder = posixpath.dirname(folder)

    def run_program(self, prog: Word, args: list[Word], prefix, state: State, ctx: Ctx, node: Any,
                    stdin: Word | None, out: Out | None, *, known_program: bool = False) -> Optional[int]:
        host = self.host_path(prog, state)
        env = self.env_of(state, prefix)
        if isinstance(host, str):
            written = self.files.written(host)
            rel = self.files.repo_path(host)
            if written is None and rel is None:
                # A program of the image or the runner (`/usr/local/bin/atomesh`): as shipped.
                base = posixpath.basename(host)
                if not known_program:
                    ce = self.vocabulary((base, *args), None)
                    if ce is not None:
                        self.emit(EXEC, ctx, node, state, argv=(host, *args), env=env, cwd=state.cwd)
                        self.apply(ce, [base, *args], prefix, state, ctx, node, stdin=stdin, out=out)
                        return None
                self.emit(EXEC, ctx, node, state, argv=(host, *args), env=env, cwd=state.cwd)
                if not known_program:
                    self.unknown(ctx, node, state, f"runs {host}, a program outside the repository")
                return None
        self.emit(EXEC, ctx, node, state, argv=(host, *args), env=env, cwd=state.cwd)
        text = self.script_text(host, state, ctx, node, "runs")
        if text is None:
            return None
        first = text.split("\n", 1)[0]
        if first.startswith("#!") and "python" in first:
            self.emit(PYTHON, ctx, node, state, argv=(host, *args), env=env, cwd=state.cwd, how="script", path=host)
            self.python_writes(text, host, state, ctx, node)
            return None
        child = state.child()
        for k, v in prefix:
            child.set(k, v, export=True)
        child.argv0, child.positional = self.local_path(prog, state), list(args)
        label = self.label(host)
        return self.run_script(text, label, child, ctx.deeper(ctx.site(node), f"run {label}", local=child.argv0))

    def python(self, py: PythonRun, argv: list[Word], prefix, state: State, ctx: Ctx, node: Any,
               stdin: Word | None = None) -> None:
        env = self.env_of(state, prefix)
        if py.script is not None:
            host = self.host_path(py.script, state)
            if isinstance(host, str) and self.files.written(host) is not None:
                w = self.files.written(host)
                self.emit(RUN_WRITTEN, ctx, node, state, path=host, detail=f"the launch wrote at {w.site} ({w.by})")
            self.emit(PYTHON, ctx, node, state, argv=tuple(argv), env=env, cwd=state.cwd, how="script", path=host)
            if isinstance(host, Unknown):
                self.unknown(ctx, node, state, f"runs a file whose path is not known: `{_short(ctx.text(node))}` "
                                               f"({host.why})")
            elif self.files.repo_path(host) and self.files.written(host) is None and self.files.read(host) is None:
                self.unknown(ctx, node, state, f"runs {self.label(host)}, not a file in the repository: "
                                               f"`{_short(ctx.text(node))}`")
            else:
                written = self.files.written(host)
                text = written.text if written is not None else self.files.read(host)
                if isinstance(text, str):
                    self.python_writes(text, host, state, ctx, node)
            return
        if py.module is not None:
            self.emit(PYTHON, ctx, node, state, argv=tuple(argv), env=env, cwd=state.cwd, how="module",
                      path=py.module)
            return
        code = py.code if py.code is not None else stdin
        self.emit(PYTHON, ctx, node, state, argv=tuple(argv), env=env, cwd=state.cwd,
                  how="code" if py.code is not None else "stdin",
                  detail=_python_code_detail(py.code) if py.code is not None or not isinstance(stdin, str)
                  else _python_code_detail(stdin))
        if isinstance(code, str):
            self.python_writes(code, None, state, ctx, node)

    def client_python(self, argv: list[Word], state: State, ctx: Ctx, node: Any) -> None:
        """What a Python file the benchmark client runs writes (the client is not followed
        further, but a client helper that rewrites an installed engine file is still a patch)."""
        try:
            ce = self.vocabulary(tuple(argv), None)
        except Exception:  # a vocabulary handler's fault: the client is not followed
            return
        for py in (ce.python if ce is not None else ()):
            if py.script is None:
                continue
            host = self.host_path(py.script, state)
            if isinstance(host, str):
                text = self.files.read(host)
                if isinstance(text, str):
                    self.python_writes(text, host, state, ctx.but(client=True), node)

    def python_writes(self, code: str, script: Word | None, state: State, ctx: Ctx, node: Any) -> None:
        """The files Python code writes, as far as its text says (recipes.launch.pycode): a write
        effect for each, at the script's line of the write when the code is a file, inside the
        same container. A write the text does not place is a write to a path not known."""
        from recipes.engines import ENGINE_PACKAGES

        found = write_targets(code, ENGINE_PACKAGES)
        if found is None:
            return
        line, targets = found
        at: Any = node
        if isinstance(script, str):
            at = Site(self.label(script), line)
            ctx = ctx.deeper(ctx.site(node), f"python {self.label(script)}")
        for target in targets:
            if target is None:
                path: Word = Unknown("a file Python code finds at run time")
            elif target.startswith(SITE_PACKAGES):
                path = f"{state.container}:{target}" if state.container else target
            else:
                path = self.host_path(target, state)
            self.emit(WRITE, ctx, at, state, path=path, how="python write")

    def container(self, c: Container, prefix, state: State, ctx: Ctx, node: Any, out: Out | None) -> None:
        host_env = state.exported()
        for k, v in prefix:
            host_env[k] = v
        env: dict[str, Word] = dict(host_env) if getattr(c, "inherits_env", False) else {}
        for name, value in c.env:
            env[name] = value
        for name in c.env_from_host:  # `-e NAME`: the host's value, when the host has one
            if name in host_env:
                env[name] = host_env[name]
            elif name in env and isinstance(env[name], Unknown):
                del env[name]  # not set on the host: not set inside either
        for f in c.env_files:
            self.unknown(ctx, node, state, f"an env file {f} passed into the container")
        mounts: list[tuple[str, Word]] = []
        for host, inside in c.mounts:
            h = self.host_path(host, state)
            if isinstance(inside, str):
                # A folder whose host side is not known: what is under it is not known either.
                mounts.append((norm(inside), h if isinstance(h, str) else
                               Unknown(f"a file under the container mount {inside}, whose host folder is not known")))
            else:
                self.unknown(ctx, node, state, "a container mount whose container folder is not known")
        image = c.image if isinstance(c.image, str) else f"<unknown image: {c.image.why}>"
        self.emit(CONTAINER, ctx, node, state, argv=tuple(c.argv), env=tuple(sorted(env.items())),
                  cwd=c.workdir, how=image, path=c.entrypoint)
        child = State(frames=[process_frame(env)],
                      cwd=c.workdir if c.workdir is not None else "/", container=image,
                      mounts=tuple(sorted(mounts, key=lambda m: -len(m[0]))))
        argv = list(c.argv)
        if c.entrypoint is not None:
            argv = [c.entrypoint] + argv
        if not argv:
            return  # the image's own command, as shipped
        site = ctx.site(node)
        self.run_argv(argv, [], child, ctx.deeper(site, f"container {image}"), node, out=out, functions=False)

    def local_path(self, word: Word | None, state: State) -> Word:
        """A path as the process that names it sees it: absolute, relative to its working folder
        (inside a container, the container's own path)."""
        if word is None:
            return Unknown("no path")
        cwd = state.cwd
        if isinstance(word, Unknown) or isinstance(cwd, Unknown):
            # A copy of the checkout at a place the bot cannot name, on the host (fs.Files.copy).
            copied = None if state.container else self.files.unknown_copy(word if isinstance(word, Unknown) else cwd)
            if isinstance(word, Unknown):
                if copied is not None:
                    return copied
                # A path that may be relative is another text once joined to the working folder.
                return word if word.prefix.startswith("/") else unclassed(word)
            cwd = copied if copied is not None else cwd
        path = word
        if path.startswith("~"):
            home = state.get("HOME")
            path = (home if isinstance(home, str) else "/root") + path[1:]
        if not path.startswith("/"):
            if isinstance(cwd, Unknown):
                return Unknown(f"{path} relative to a folder that is not known ({cwd.why})")
            path = posixpath.join(cwd, path)
        return norm(path)

    def host_path(self, word: Word | None, state: State) -> Word:
        """A path as the host sees it: relative to the cwd, through the container's mounts."""
        path = self.local_path(word, state)
        if isinstance(path, Unknown):
            return path
        if state.container:
            for inside, host in state.mounts:
                if path == inside or path.startswith(inside.rstrip("/") + "/"):
                    if isinstance(host, Unknown):
                        copied = self.files.unknown_copy(host)
                        if copied is None:
                            return unclassed(host)
                        host = copied
                    return norm(host + path[len(inside):]) if inside != "/" else norm(host + path)
            return f"{state.container}:{path}"  # the image's own file
        return path

    def read_text(self, path: Word, state: State, ctx: Ctx, node: Any, *, quiet: bool = False) -> Word:
        if isinstance(path, Unknown):
            return unclassed(path)
        written = self.files.written(path)
        if written is not None:
            return written.text
        text = self.files.read(path)
        return text if text is not None else Unknown(f"the text of {path}")
