"""Commands that run other commands or code: wrappers (env, sudo, timeout, xargs, ...), shells,
Python, package managers (`pip_effects`, shared by pip, `python -m pip` and `uv pip`) and builds."""
from __future__ import annotations

import re
from typing import Sequence

from ..effects import CommandEffects, Download, Install, PythonRun, Write
from ..image import PIP_INDEX_OPTIONS
from ..options import OptionError, Options, opts, parse, Parsed, under
from ..words import Unknown, Word
from .common import Handler, _joined_text, _names, _run, _Unknown, _words


def _env(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`env [-i] [-u NAME] [-C DIR] [-S TEXT] [NAME=value...] [CMD...]`; no command: prints."""
    p = parse(args, opts("-i -0 -v --ignore-environment --null --debug", valued="-u -C -S --unset --chdir "
                                                                               "--split-string", stop=True))
    rest = list(p.operands)
    for text in p.values("-S", "--split-string"):
        if isinstance(text, Unknown):
            raise _Unknown(f"`-S` with unknown text ({text.why})")
        rest = [*text.split(), *rest]
    chdir = p.last("-C", "--chdir")
    out = _run(rest, env_words=True, chdir=under(chdir, cwd) if chdir is not None else None)
    if out.runs:
        out.unsets = tuple(n for n in p.values("-u", "--unset") if isinstance(n, str))
        if any(isinstance(n, Unknown) for n in p.values("-u", "--unset")):
            raise _Unknown("`-u` with an unknown name")
        out.clears_env = p.has("-i", "--ignore-environment")
    return out


def _sudo(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-E -H -n -S -k -K -b -P -A -B -N -i -s -l -v -V -e --preserve-env --set-home "
                         "--non-interactive --stdin --background --login --shell --edit",
                         valued="-u -g -U -C -h -p -r -t -D -T --user --group --host --prompt --chdir --close-from "
                                "--command-timeout",
                         attached="--preserve-env", stop=True))
    if p.has("-i", "-s", "--login", "--shell") or p.has("-l", "-v", "-V", "-e", "--edit"):
        raise _Unknown("a login shell, an editor or a listing")
    chdir = p.last("-D", "--chdir")
    out = _run(p.operands, env_words=True, needs_command=True, chdir=under(chdir, cwd) if chdir is not None else None)
    out.clears_env = not p.has("-E", "--preserve-env")
    return out


def _xargs(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`xargs [opts] CMD ARGS`: runs CMD with words read from standard input (unknown here): in
    place of the `-I` string, or after ARGS."""
    p = parse(args, opts("-0 -r -t -p -x -o --null --no-run-if-empty --verbose --interactive --exit --open-tty",
                         valued="-I -n -P -d -L -E -s -a --arg-file --delimiter --max-args --max-procs "
                                "--max-lines --eof --max-chars --replace --process-slot-var",
                         attached="-i -e -l", stop=True))
    cmd: list[Word] = list(p.operands) or ["echo"]
    read: Word = Unknown("a word xargs reads from its input")
    replace = p.last("-I", "--replace") or ("{}" if p.has("-i") else None)
    if replace is not None:
        cmd = [cmd[0], *(read if w == replace else w for w in cmd[1:])]
    else:
        cmd.append(read)
    return CommandEffects(reads=[under(f, cwd) for f in p.values("-a", "--arg-file")], runs=[(tuple(cmd), (), None)])


_DURATION = re.compile(r"^\d+(?:\.\d+)?[smhd]?$")


def _timeout(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("--preserve-status --foreground -v --verbose", valued="-s -k --signal --kill-after",
                         stop=True))
    duration = p.operands[0] if p.operands else None
    if isinstance(duration, Unknown):
        pass  # any duration: the command still runs
    elif duration is None or not _DURATION.match(duration):
        raise _Unknown(f"`{duration}` is not a duration")
    return _run(p.operands[1:], needs_command=True)


def _time(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-p -v -a -q --portability --verbose --append --quiet", valued="-o -f --output --format",
                         stop=True))
    out = _run(p.operands)
    how = "append" if p.has("-a", "--append") else "create"
    out.writes = [Write(under(f, cwd), how) for f in p.values("-o", "--output")]
    return out


def _skip_first(spec: Options, *, unless: tuple[str, ...] = ()) -> Handler:
    """A wrapper whose first operand is its own (`taskset MASK cmd`, `chrt PRIO cmd`); with one of
    `unless` (`-p PID`) it runs nothing."""
    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        p = parse(args, spec)
        if p.has(*unless):
            return CommandEffects()
        return _run(p.operands[1:], needs_command=True)
    return handle


def _flock(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`flock [opts] FILE CMD...` or `flock FILE -c TEXT` (takes the lock FILE); `flock FD`."""
    p = parse(args, opts("-s -x -e -n -u -o -F --shared --exclusive --nonblock --unlock --close --no-fork "
                         "--verbose --nb", valued="-w -E -c --timeout --conflict-exit-code --command", stop=True))
    if not p.operands:
        raise _Unknown("no lock file")
    lock, rest = p.operands[0], p.operands[1:]
    if isinstance(lock, str) and lock.isdigit():
        return CommandEffects()
    out = CommandEffects(writes=[Write(under(lock, cwd), "create")])
    texts = p.values("-c", "--command")
    if rest and rest[0] in ("-c", "--command") and len(rest) > 1:
        texts, rest = [rest[1]], []
    out.shell_text = [(t, ()) for t in texts]
    if rest:
        out.runs = [(tuple(rest), (), None)]
    return out


def _watch(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-d -t -b -e -g -c -x -p -w -C --differences --no-title --beep --errexit --chgexit "
                         "--color --exec --precise --no-wrap", valued="-n -q --interval --equexit", stop=True))
    if not p.operands:
        raise _Unknown("no command")
    if p.has("-x", "--exec"):
        return CommandEffects(runs=[(tuple(p.operands), (), None)])
    return _joined_text(p.operands)


def _mpirun(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`mpirun [opts] CMD...`: `-x NAME[=value]` exports to the ranks; `--mca K V` takes two words."""
    env: list[tuple[str, Word]] = []
    k = 0
    while k < len(args):
        word = args[k]
        if isinstance(word, Unknown):
            raise _Unknown(f"an unknown word where an option could be ({word.why})")
        if not word.startswith("-"):
            break
        if word in ("--mca", "-mca", "--gmca", "-gmca", "--prtemca", "--pmixmca"):
            k += 3
        elif word in _MPI_VALUED:
            if word == "-x" and k + 1 < len(args) and isinstance(args[k + 1], str) and "=" in args[k + 1]:
                key, _, value = args[k + 1].partition("=")
                env.append((key, value))
            k += 2
        elif word in _MPI_FLAGS:
            k += 1
        else:
            raise _Unknown(f"option `{word}` is not in the vocabulary")
    if k >= len(args):
        raise _Unknown("no command")
    return CommandEffects(runs=[(tuple(args[k:]), tuple(env), None)])


_MPI_VALUED = frozenset("-np -n -c -N -H --host -hostfile --hostfile -machinefile --machinefile -x --bind-to "
                        "--map-by --rank-by -npernode --npernode -wdir --wdir --prefix --output".split())


_MPI_FLAGS = frozenset("--allow-run-as-root --oversubscribe --report-bindings -report-bindings --display-map "
                       "--tag-output -tag-output --bind-to-core -v --verbose -q --quiet --timestamp-output".split())


_SHELL = opts("-c -s -i -l -e -x -u -v -n -a -f -h -m -B -C -E -H -P -T -b -k -p -t -r --login --norc --noprofile "
              "--posix --restricted --verbose --noediting --debugger --dump-strings",
              valued="-o -O --rcfile --init-file", stop=True)


def _shell(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`bash -c TEXT [$0 [$1...]]`, `bash [-s] [args]` (the script from standard input),
    `bash FILE [args]`; `-n` only reads. `+o NAME`/`+x` turn options off."""
    words = [w for k, w in enumerate(args)
             if not (isinstance(w, str) and w.startswith("+") and len(w) > 1)
             and not (k > 0 and args[k - 1] in ("+o", "+O"))]
    p = parse(words, _SHELL)
    if p.has("-c"):
        if not p.operands:
            raise _Unknown("`-c` without its text")
        return CommandEffects(shell_text=[(p.operands[0], tuple(p.operands[1:]))])
    if p.has("-s") or not p.operands:
        return CommandEffects(shell_stdin=True)
    script = under(p.operands[0], cwd)
    if p.has("-n"):
        return CommandEffects(reads=[script])
    return CommandEffects(shell_files=[(script, tuple(p.operands[1:]))])


_PY_FLAGS = frozenset("bBdEhiIOPqsSuvVxR")


def _python(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`python [opts] (-m MOD | -c CODE | - | FILE) args`: options end at the program."""
    k = 0
    while k < len(args):
        word = args[k]
        k += 1
        if isinstance(word, Unknown):
            raise _Unknown(f"an unknown word where an option could be ({word.why})")
        if word == "-":
            return CommandEffects(python=[PythonRun(argv=tuple(args[k:]))])
        if word in ("--version", "--help", "-V", "-h"):
            return CommandEffects()
        if word == "--check-hash-based-pycs":
            k += 1
            continue
        if not word.startswith("-"):
            return CommandEffects(python=[PythonRun(script=under(word, cwd), argv=tuple(args[k:]))])
        for j in range(1, len(word)):
            letter, rest = word[j], word[j + 1:]
            if letter in "cmWX":
                value: Word
                if rest:
                    value = rest
                elif k < len(args):
                    value, k = args[k], k + 1
                else:
                    raise _Unknown(f"`-{letter}` without its value")
                if letter == "c":
                    return CommandEffects(python=[PythonRun(code=value, argv=tuple(args[k:]))])
                if letter == "m":
                    return CommandEffects(python=[PythonRun(module=value, argv=tuple(args[k:]))])
                break
            if letter not in _PY_FLAGS:
                raise _Unknown(f"option `-{letter}` (in `{word}`) is not in the vocabulary")
    return CommandEffects(python=[PythonRun(argv=())])


def _torchrun(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`torchrun [opts] SCRIPT args`, `-m MOD args`, `--no-python CMD args` (options spelled with
    `-` or `_`)."""
    p = parse([_dashed(w) for w in args], opts("--standalone -m --module --no-python --run-path",
                           valued="--nproc-per-node --nnodes --node-rank --master-addr --master-port --rdzv-backend "
                                  "--rdzv-endpoint --rdzv-id --rdzv-conf --max-restarts --monitor-interval --role "
                                  "--log-dir -r -t --redirects --tee --local-ranks-filter --start-method "
                                  "--local-addr --logs-specs --event-log-handler", stop=True))
    if not p.operands:
        raise _Unknown("no program")
    program, rest = p.operands[0], tuple(p.operands[1:])
    if p.has("--no-python"):
        return CommandEffects(runs=[((program, *rest), (), None)])
    if p.has("-m", "--module"):
        return CommandEffects(python=[PythonRun(module=program, argv=rest)])
    return CommandEffects(python=[PythonRun(script=under(program, cwd), argv=rest)])


def _dashed(word: Word) -> Word:
    """A long option with `_` spelled with `-` (`--nproc_per_node=8` is `--nproc-per-node=8`)."""
    if not isinstance(word, str) or not word.startswith("--"):
        return word
    name, eq, value = word.partition("=")
    return name.replace("_", "-") + eq + value


_PIP_GLOBAL_FLAGS = ("-q -v -U -I -y --yes --quiet --verbose --no-cache-dir --disable-pip-version-check "
                     "--isolated --no-input --no-color --require-virtualenv --break-system-packages "
                     "--system --no-python-downloads --offline --native-tls --preview --no-progress")


_PIP_GLOBAL_VALUED = ("--exists-action --root-user-action --proxy --retries --timeout --cache-dir --log --python -p "
                      "--progress-bar --trusted-host --cert --client-cert --use-feature --use-deprecated "
                      "--directory --project --color --config-file")


_PIP_INSTALL = opts(
    _PIP_GLOBAL_FLAGS + " --upgrade --force-reinstall --no-deps --pre --user --no-build-isolation --no-index "
    "--ignore-installed --no-warn-script-location --no-clean --require-hashes --dry-run --compile --no-compile "
    "--prefer-binary --use-pep517 --no-use-pep517 --no-warn-conflicts --ignore-requires-python --reinstall "
    "--no-binary-all --no-editable --strict --no-sources --all-extras --refresh --no-verify-hashes "
    "--exact",
    valued=_PIP_GLOBAL_VALUED + " -r -c -e -i -f -t -C --requirement --constraint --editable --index-url "
    "--extra-index-url --find-links --target --prefix --root --upgrade-strategy --no-binary --only-binary "
    "--platform --python-version --implementation --abi --config-settings --src --report --global-option "
    "--build-option --index --default-index --index-strategy --torch-backend --prerelease --link-mode "
    "--reinstall-package -d --dest -w --wheel-dir --override --extra --resolution --python-platform --exclude-newer "
    "-P --upgrade-package")


def pip_effects(argv: Sequence[Word], cwd: Word | None = None, manager: str = "pip") -> CommandEffects:
    """What `pip ARGS` does (also `python -m pip ARGS` and `uv pip ARGS`, `manager="uv"`): installs
    (requirements, `-r FILE`, `-e DIR`, URLs, each with the indexes given), uninstalls, downloads."""
    try:
        return _pip(list(argv[1:]), cwd, manager)
    except (_Unknown, OptionError) as why:
        return CommandEffects(unknown=f"`{manager} pip`: {why}" if manager != "pip" else f"`pip`: {why}")


def _pip(args: list[Word], cwd: Word | None, manager: str) -> CommandEffects:
    p = parse(args, _PIP_INSTALL)
    if not p.operands:
        return CommandEffects()
    sub, rest = p.operands[0], p.operands[1:]
    if sub == "install" or (manager == "uv" and sub == "sync"):
        return _pip_install(p, rest, cwd, manager)
    if sub == "uninstall":
        names = [w for w in rest if not (isinstance(w, str) and w.startswith("-"))]
        return CommandEffects(writes=[Write(Unknown(f"the installed package {_names([n])[0]}"), "delete")
                                      for n in names])
    if sub in ("download", "wheel"):
        folder = p.last("-d", "--dest", "-w", "--wheel-dir")
        return CommandEffects(downloads=[Download(w, folder) for w in rest])
    if sub in ("list", "freeze", "show", "check", "config", "cache", "inspect", "help", "debug", "hash", "index",
               "search", "compile", "tree", "venv"):
        return CommandEffects()
    raise _Unknown(f"subcommand `{_names([sub])[0]}` is not in the vocabulary")


def _pip_install(p: Parsed, rest: list[Word], cwd: Word | None, manager: str) -> CommandEffects:
    index: list[Word] = []
    packages: list[Word] = []
    editable: list[Word] = []
    for option, value in p.options:
        if option in PIP_INDEX_OPTIONS and value is not None:
            index += [option, value]
        elif option == "--no-index":
            index.append(option)
        elif option in ("-r", "--requirement") and value is not None:
            packages += ["-r", value]
        elif option in ("-e", "--editable") and value is not None:
            editable.append(value)
    packages += [w for w in rest if w != "--"]
    out = CommandEffects(reads=[under(f, cwd) for f in p.values("-r", "--requirement", "-c", "--constraint")])
    if packages:
        out.installs.append(Install(manager, tuple(packages), tuple(index)))
    for folder in editable:
        out.installs.append(Install(manager, ("-e", folder), tuple(index), editable=True))
        out.reads.append(under(folder, cwd))
    if not out.installs:
        out.installs.append(Install(manager, (Unknown("the project's own dependencies"),), tuple(index)))
    for folder in p.values("-t", "--target", "--prefix", "--root"):
        out.writes.append(Write(under(folder, cwd), "create"))
    return out


def _pip_command(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    return pip_effects([name, *args], cwd)


def _apt_key(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`apt-key add FILE` / `apt-key adv ...` change apt's keyring; other forms list it."""
    if any(a in ("add", "adv") for a in args):
        return CommandEffects(writes=[Write("/etc/apt/trusted.gpg", "in-place edit")])
    return CommandEffects()


def _uv(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts(_PIP_GLOBAL_FLAGS, valued=_PIP_GLOBAL_VALUED, stop=True))
    if not p.operands:
        raise _Unknown("no subcommand")
    sub, rest = p.operands[0], list(p.operands[1:])
    if sub == "pip":
        return pip_effects(["uv", *rest], cwd, manager="uv")
    if sub in ("sync", "add", "lock"):
        return pip_effects(["uv", "sync" if sub != "add" else "install", *rest], cwd, manager="uv")
    if sub == "venv":
        q = parse(rest, opts("--seed --system-site-packages --allow-existing --clear -q --quiet",
                             valued="-p --python --prompt --relocatable"))
        return CommandEffects(writes=[Write(under(q.operands[0] if q.operands else ".venv", cwd), "create")])
    if sub == "run":
        q = parse(rest, opts("--no-project --isolated --no-sync --frozen --locked --all-extras -q --quiet "
                             "--no-dev --active --script -s -m --module --no-editable",
                             valued="--with --with-requirements -p --python --extra --env-file --directory "
                                    "--project --index-url --extra-index-url --group", stop=True))
        out = CommandEffects()
        withs = q.values("--with")
        if withs:
            out.installs.append(Install("uv", tuple(withs), tuple(q.values("--index-url", "--extra-index-url"))))
        if not q.operands:
            raise _Unknown("no command")
        if q.has("-m", "--module"):
            out.python.append(PythonRun(module=q.operands[0], argv=tuple(q.operands[1:])))
        else:
            out.runs.append((tuple(q.operands), (), None))
        return out
    if sub in ("--version", "version", "self", "cache", "python", "tree"):
        return CommandEffects()
    raise _Unknown(f"subcommand `{_names([sub])[0]}` is not in the vocabulary")


_PACKAGE_INDEX = frozenset({"-c", "--channel", "--registry", "--index-url", "--enablerepo", "--repo"})


_PACKAGE_VALUED = frozenset({"-n", "--name", "-p", "--prefix", "-f", "--file", "-t", "--target-release", "-o",
                             "--option", "--root", "--git", "--path", "--version", "--features", "--installroot"})


def _system_packages(manager: str, *, installs: tuple[str, ...], removes: tuple[str, ...],
                     harmless: tuple[str, ...], refresh: tuple[str, ...] = ()) -> Handler:
    """apt-get/apt/yum/dnf/conda/npm: `install PKG...` (with `-c CHANNEL`/`--registry` indexes),
    removals, and read-only subcommands."""
    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        words: list[Word] = []
        index: list[Word] = []
        k = 0
        while k < len(args):
            word = args[k]
            k += 1
            if word in _PACKAGE_INDEX or word in _PACKAGE_VALUED:
                if k >= len(args):
                    raise _Unknown(f"`{word}` without its value")
                if word in _PACKAGE_INDEX:
                    index += [word, args[k]]
                k += 1
            elif not (isinstance(word, str) and word.startswith("-")):
                words.append(word)
        if not words:
            return CommandEffects()
        sub, rest = words[0], words[1:]
        if isinstance(sub, Unknown):
            raise _Unknown(f"an unknown subcommand ({sub.why})")
        if sub in installs:
            packages = tuple(rest) or (Unknown(f"the packages {manager} {sub} reads from its files"),)
            return CommandEffects(installs=[Install(manager, packages, tuple(index))])
        if sub in removes:
            return CommandEffects(writes=[Write(Unknown(f"the installed package {n}"), "delete")
                                          for n in _names(rest)])
        if sub in refresh:
            return CommandEffects(downloads=[Download(Unknown(f"the {manager} package lists"), None)])
        if sub in harmless:
            return CommandEffects()
        raise _Unknown(f"subcommand `{sub}` is not in the vocabulary")
    return handle


def _conda(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    if args and args[0] == "run":
        p = parse(args[1:], opts("--no-capture-output --live-stream -v", valued="-n -p --name --prefix --cwd",
                                 stop=True))
        if not p.operands:
            raise _Unknown("no command")
        return CommandEffects(runs=[(tuple(p.operands), (), None)])
    if args[:2] == ["env", "create"]:
        files = [args[k + 1] for k, w in enumerate(args[:-1]) if w in ("-f", "--file")]
        return CommandEffects(reads=[under(f, cwd) for f in files],
                              installs=[Install("conda", tuple(files) or (Unknown("environment.yml"),))])
    return _system_packages("conda", installs=("install", "create", "update", "upgrade"),
                            removes=("remove", "uninstall"),
                            harmless=("list", "info", "activate", "deactivate", "search", "config", "clean",
                                      "init", "env"))(name, args, cwd)


def _dpkg(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    if args and args[0] in ("-i", "--install"):
        return CommandEffects(installs=[Install("dpkg", tuple(under(f, cwd) for f in args[1:]))],
                              reads=[under(f, cwd) for f in args[1:]])
    if args and args[0] in ("-r", "--remove", "-P", "--purge"):
        return CommandEffects(writes=[Write(Unknown(f"the installed package {n}"), "delete")
                                      for n in _names(args[1:])])
    if args and args[0] in ("-l", "--list", "-s", "--status", "-L", "--listfiles", "-S", "--search",
                            "--print-architecture", "--get-selections", "--compare-versions", "-x", "-c", "--contents",
                            "--version"):
        return CommandEffects()
    raise _Unknown("an action that is not in the vocabulary")


def _maturin(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    here = cwd if cwd is not None else "."
    if args and args[0] == "develop":
        return CommandEffects(installs=[Install("maturin", (here,), editable=True)], reads=[here])
    if args and args[0] == "build":
        return CommandEffects(reads=[here], writes=[Write(under("target", here), "create")])
    raise _Unknown("a maturin command that is not in the vocabulary")


def _build(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """make/cmake/ninja/meson run the recipes of a build file the vocabulary does not read: a
    program (the interpreter decides, e.g. by whose build file it is) that reads the build folder
    (`-C DIR`, `-B DIR`, `-S DIR`, the working directory) and writes into it; an `install` target
    (`make install`, `cmake --install`) also writes where the build installs, which is not known."""
    folder = next((args[k + 1] for k, w in enumerate(args[:-1]) if w in ("-C", "-B", "--build", "--directory")),
                  None)
    here = under(folder, cwd) if folder is not None else (cwd if cwd is not None else ".")
    if len(args) == 1 and args[0] in ("--version", "-v", "--help"):
        return CommandEffects()
    writes = [Write(here, "create")]
    if any(isinstance(w, str) and (w in ("install", "--install") or w.startswith("install-")) for w in args):
        writes.append(Write(Unknown(f"where `{_words(name, args)}` installs"), "create"))
    return CommandEffects(reads=[here], writes=writes, programs=[(name, tuple(args))])


def _su(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`su [-] [USER] -c TEXT` runs TEXT as shell text (so does `runuser USER -c TEXT`);
    `runuser -u USER -- CMD...` runs CMD; a login shell without a command is not interpreted."""
    if isinstance(name, str) and name.rsplit("/", 1)[-1] == "runuser" and args[:1] in (["-u"], ["--user"]):
        p = parse(args, opts("-l -m -p --login --preserve-environment",
                             valued="-u -g -G --user --group --supp-group -w", stop=True))
        return _run(p.operands, needs_command=True)
    p = parse([w for w in args if w != "-"],
              opts("-l -m -p -f --login --preserve-environment --fast",
                   valued="-c -s -g -G -w --command --shell --group"))
    texts = p.values("-c", "--command")
    if not texts:
        raise _Unknown("a login shell")
    return CommandEffects(shell_text=[(t, ()) for t in texts])
