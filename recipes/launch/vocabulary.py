"""The one table of command semantics: what each command the launch scripts run reads, writes and
executes. A name not in it is unknown (`effects` returns None) and the interpreter reports it as
such; a known name whose option or form is not understood answers `CommandEffects(unknown=...)`.

`TABLE` maps each command name to one `Entry` (its class, a line saying what it is, and the
handler that reads its words). Handlers are shared by families (`_reader`, `_every_operand`,
`_copy`, `_wrapper`, ...) and each command's options are listed once (`recipes.launch.options`).
Names are looked up by basename (`/usr/bin/sed` is `sed`); a path to a shell script runs that
script (`shell_files`), a path to a `.py` file runs Python, any other path is a program
(`programs`). `python3.12` is `python`, `pip3.10` is `pip`.

Every name of the real history's scripts is in the table or in `SHELL_BUILTINS`
(tests/fixtures/history_commands.txt, made by bench/vocabulary_census.py; docs/launch-vocabulary.md).
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass
from typing import Callable, Sequence

from .effects import CommandEffects, Container, Download, Install, PythonRun, Write
from .options import OptionError, Options, Parsed, opts, parse, under
from .words import Unknown, Word

# Builtins and keywords the interpreter evaluates itself (it never asks `effects` about them).
SHELL_BUILTINS: frozenset[str] = frozenset("""
cd pushd popd dirs export declare typeset local readonly unset set shopt shift source . eval exec
read printf echo let mapfile readarray alias unalias trap return exit break continue true false :
test [ [[ wait getopts command builtin type hash ulimit umask jobs disown kill times caller enable
help logout bg fg suspend compgen complete compopt history fc
""".split())

Handler = Callable[[Word, list[Word], "Word | None"], CommandEffects]


@dataclass(frozen=True)
class Entry:
    cls: str        # one of CLASSES
    what: str       # what the command is, for the docs and a reviewer
    handler: Handler


CLASSES = ("pure", "reader", "writer", "wrapper", "shell", "python", "package", "build", "container",
           "network", "engine", "system", "not-a-command")
TABLE: dict[str, Entry] = {}


def _add(cls: str, names: str, what: str, handler: Handler) -> None:
    assert cls in CLASSES, cls
    for name in names.split():
        assert name not in TABLE, f"{name} classified twice"
        TABLE[name] = Entry(cls, what, handler)


class _Unknown(Exception):
    """A form of a known command the vocabulary does not understand (the reason)."""


def effects(argv: Sequence[Word], cwd: Word | None = None) -> CommandEffects | None:
    """What the command `argv` does, or None when its name is not in the vocabulary. Relative
    paths are resolved against `cwd` when it is given (`recipes.launch.options.under`)."""
    if not argv or isinstance(argv[0], Unknown):
        return None
    name = argv[0]
    args = list(argv[1:])
    base = name.rsplit("/", 1)[-1]
    entry = lookup(name)
    if entry is None:
        if "/" in name and base:
            if base.endswith(_SCRIPT_SUFFIXES):
                return CommandEffects(shell_files=[(under(name, cwd), tuple(args))])
            if base.endswith(".py"):
                return CommandEffects(python=[PythonRun(script=under(name, cwd), argv=tuple(args))])
            return CommandEffects(programs=[(under(name, cwd), tuple(args))])
        return None
    try:
        return entry.handler(name, args, cwd)
    except (_Unknown, OptionError) as why:
        return CommandEffects(unknown=f"`{base}`: {why}")


_SCRIPT_SUFFIXES = (".sh", ".bash", ".slurm")
_FAMILIES = ((re.compile(r"^python\d*(?:\.\d+)?$"), "python"), (re.compile(r"^pip\d*(?:\.\d+)?$"), "pip"))


def lookup(name: str) -> Entry | None:
    """The table entry for a command name or path (by basename), None when there is none. A bare
    script name (`rebuild-deepep.sh`, found on PATH) runs that script."""
    base = name.rsplit("/", 1)[-1]
    if base in TABLE:
        return TABLE[base]
    for pattern, family in _FAMILIES:
        if pattern.match(base):
            return TABLE[family]
    if "/" not in name and base.endswith(_SCRIPT_SUFFIXES):
        return _SCRIPT
    return None


def name_class(name: str) -> str:
    """The class of a command name: "builtin", a table class, "script"/"program" for a path, or
    "unknown"."""
    if name in SHELL_BUILTINS:
        return "builtin"
    entry = lookup(name)
    if entry is not None:
        return entry.cls
    if "/" in name:
        return "script" if name.endswith(_SCRIPT_SUFFIXES + (".py",)) else "program"
    return "unknown"


# --------------------------------------------------------------------------- shared handlers

def _parsed(args: list[Word], spec: Options) -> Parsed:
    return parse(args, spec)


def _pure(spec: Options | None = None) -> Handler:
    """No effect on files (prints, asks the system, sleeps); `spec` when an option could have one."""
    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        if spec is not None:
            parse(args, spec)
        return CommandEffects()
    return handle


def _reader(spec: Options, *, program_first: bool = False, program_opts: tuple[str, ...] = (),
            read_opts: tuple[str, ...] = ()) -> Handler:
    """Reads its file operands (after a program/pattern operand unless one of `program_opts`
    gave it) and the files of `read_opts`; no operand: standard input."""
    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        p = parse(args, spec)
        files = p.operands
        if program_first and not p.has(*program_opts):
            files = files[1:]
        reads = [under(f, cwd) for f in (*p.values(*read_opts), *files) if f != "-"]
        return CommandEffects(reads=reads)
    return handle


def _every_operand(spec: Options, how: str, *, skip_first: Callable[[Parsed], bool] | None = None) -> Handler:
    """Writes (deletes, creates, changes the mode of) every operand: `rm`, `mkdir`, `chmod MODE F`."""
    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        p = parse(args, spec)
        files = p.operands[1:] if skip_first is not None and skip_first(p) else p.operands
        return CommandEffects(writes=[Write(under(f, cwd), how) for f in files])
    return handle


def _copy(spec: Options, how: str, *, target_opts: tuple[str, ...] = ("-t", "--target-directory"),
          one_operand_here: bool = False) -> Handler:
    """Reads its sources and writes the last operand (or the `-t DIR` directory): `cp`, `mv`, `ln`,
    `install`. With one operand and `one_operand_here` (`ln -s TARGET`), writes its basename here."""
    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        p = parse(args, spec)
        target = p.last(*target_opts)
        sources = list(p.operands)
        if target is None:
            if len(sources) == 1 and one_operand_here:
                only = sources[0]
                target = posixpath.basename(only) if isinstance(only, str) else Unknown("the link's name")
            elif len(sources) < 2:
                raise _Unknown("no destination")
            else:
                target = sources.pop()
        reads = [] if how == "link" else [under(s, cwd) for s in sources]
        return CommandEffects(reads=reads, writes=[Write(under(target, cwd), how)])
    return handle


def _runs_rest(spec: Options, *, needs_command: bool = False) -> Handler:
    """A wrapper that runs its first operand as a command with the rest (`nohup`, `nice -n 5`)."""
    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        return _run(parse(args, spec).operands, needs_command=needs_command)
    return handle


def _run(words: list[Word], *, env_words: bool = False, needs_command: bool = False,
         chdir: Word | None = None) -> CommandEffects:
    """Runs `words` as a command (in `chdir`); `env_words`: leading NAME=value words are its
    environment (`env A=1 cmd`, `sudo A=1 cmd`). No command: nothing runs (`env` prints)."""
    rest = list(words)
    env: list[tuple[str, Word]] = []
    while env_words and rest and isinstance(rest[0], str) and _ASSIGNMENT.match(rest[0]):
        key, _, value = rest.pop(0).partition("=")
        env.append((key, value))
    if not rest:
        if needs_command:
            raise _Unknown("no command to run")
        return CommandEffects()
    return CommandEffects(runs=[(tuple(rest), tuple(env), chdir)])


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _program(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """An engine or tool the lead classifies from its argv (servers, clients, CLIs)."""
    return CommandEffects(programs=[(name, tuple(args))])


def _subcommands(table: dict[str, Handler], *, spec: Options = Options(), default: Handler | None = None) -> Handler:
    """A command whose first operand picks what it does (`git`, `docker`, `hf`, `enroot`): the
    global options (`spec`), then the subcommand's handler with the remaining words."""
    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        k = 0
        while k < len(args) and isinstance(args[k], str) and args[k].startswith("-"):
            k += 1
        p = parse(args[:k], spec) if k else Parsed([], [])
        if p.operands:
            raise _Unknown("a global option took the subcommand's place")
        if k >= len(args):
            if default is not None:
                return default(name, [], cwd)
            raise _Unknown("no subcommand")
        sub = args[k]
        if isinstance(sub, Unknown):
            raise _Unknown(f"an unknown subcommand ({sub.why})")
        handler = table.get(sub, default)
        if handler is None:
            raise _Unknown(f"subcommand `{sub}` is not in the vocabulary")
        return handler(name, [*args[:k], *args[k + 1:]] if handler is default else args[k + 1:], cwd)
    return handle


def _not_command(why: str) -> Handler:
    """A word the history's scripts run that is no command (a typo, pasted text): bash prints
    "command not found" there."""
    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        raise _Unknown(why)
    return handle


# --------------------------------------------------------------------------- pure

_add("pure", """
date sleep seq basename dirname hostname nproc uname whoami id groups tty arch printenv env_check
pwd yes expr bc factor numfmt getconf locale logname users uptime
""", "prints or computes text; no file effect", _pure())
_add("pure", "envsubst", "substitutes variables in standard input", _pure())
_add("system", """
nvidia-smi rocm-smi amd-smi rocminfo hipconfig ibv_devices ibv_devinfo ibstat ibdev2netdev rdma nicctl
lscpu lspci free df du top ps pgrep lsof fuser ss netstat ip ping getent findmnt blkid mountpoint
ldd nm nvcc hipcc which whereis
""", "asks the system, the GPUs or the network about their state; no file effect", _pure())
_add("system", "scontrol squeue sinfo sacct scancel sstat", "asks or tells Slurm about jobs; no file effect", _pure())
_add("system", "pkill killall", "signals processes by name", _pure())
_add("system", "sync", "flushes file buffers", _pure())


# --------------------------------------------------------------------------- readers

_READ = opts(risky=False)
_add("reader", """
cat tac head tail wc cut paste column rev fold nl od xxd hexdump strings comm diff cmp diffstat
md5sum sha1sum sha256sum sha512sum shasum b2sum cksum base64 base32 file stat ls tree realpath readlink
zcat bzcat xzcat zstdcat uniq_stdin tr more less iconv
""", "reads the files it names (standard input without one)", _reader(_READ))
_add("reader", "grep egrep fgrep rg", "searches the files it names for a pattern",
     _reader(opts(valued="-e -f -m -A -B -C --regexp --file --max-count --include --exclude --color --colour "
                        "--label --context --after-context --before-context -d -D --devices --directories",
                  risky=False), program_first=True, program_opts=("-e", "-f", "--regexp", "--file"),
            read_opts=("-f", "--file")))
_add("reader", "jq", "reads JSON files with a filter",
     _reader(opts(valued="--arg --argjson --slurpfile --rawfile --args --jsonargs --indent -L --tab",
                  risky=False), program_first=True, read_opts=("--slurpfile", "--rawfile")))
_add("reader", "sort", "sorts the lines of the files it names; `-o FILE` writes",
     lambda name, args, cwd: _sort(args, cwd))
_add("reader", "uniq", "filters repeated lines; a second operand is the output file",
     lambda name, args, cwd: _in_out(args, cwd, opts("-c -d -u -i -D -z --count --repeated --unique "
                                                     "--ignore-case -f -s -w", valued="--skip-fields --skip-chars "
                                                     "--check-chars")))
_add("reader", "find", "lists files; `-exec`/`-delete`/`-fprint` act on them",
     lambda name, args, cwd: _find(args, cwd))


def _sort(args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-n -r -u -h -g -V -f -b -d -i -M -R -s -c -C -m -z --numeric-sort --reverse --unique "
                         "--human-numeric-sort --version-sort --stable --general-numeric-sort",
                         valued="-k -t -o -S -T --key --field-separator --output --buffer-size "
                                "--temporary-directory --parallel --files0-from"))
    out = CommandEffects(reads=[under(f, cwd) for f in p.operands if f != "-"])
    out.writes = [Write(under(f, cwd), "create") for f in p.values("-o", "--output")]
    return out


def _in_out(args: list[Word], cwd: Word | None, spec: Options) -> CommandEffects:
    p = parse(args, spec)
    files = [under(f, cwd) for f in p.operands if f != "-"]
    return CommandEffects(reads=files[:1], writes=[Write(f, "create") for f in files[1:2]])


_FIND_ACTS = {"-delete": "delete"}
_FIND_RUNS = ("-exec", "-execdir", "-ok", "-okdir")
_FIND_WRITES = ("-fprint", "-fprint0", "-fprintf", "-fls")


def _find(args: list[Word], cwd: Word | None) -> CommandEffects:
    """`find ROOTS... EXPR`: reads the roots; `-delete` deletes under them, `-exec CMD {} ;` runs
    CMD with an unknown path, `-fprint FILE` writes FILE."""
    k = 0
    while k < len(args) and isinstance(args[k], str) and args[k] in ("-H", "-L", "-P"):
        k += 1
    roots: list[Word] = []
    while k < len(args) and isinstance(args[k], str) and not args[k].startswith(("-", "(", "!")):
        roots.append(args[k])
        k += 1
    roots = [under(r, cwd) for r in roots] or [under(".", cwd)]
    out = CommandEffects(reads=list(roots))
    while k < len(args):
        word = args[k]
        k += 1
        if isinstance(word, Unknown):
            raise _Unknown(f"an unknown word in the expression ({word.why})")
        if word in _FIND_ACTS:
            out.writes += [Write(Unknown(f"files find selects under {r}"), _FIND_ACTS[word]) for r in _names(roots)]
        elif word in _FIND_WRITES:
            if k >= len(args):
                raise _Unknown(f"`{word}` without its file")
            out.writes.append(Write(under(args[k], cwd), "create"))
            k += 1
        elif word in _FIND_RUNS:
            end = next((j for j in range(k, len(args)) if args[j] in (";", "+")), None)
            if end is None:
                raise _Unknown(f"`{word}` without its `;` or `+`")
            cmd = tuple(Unknown("a path find selects") if w == "{}" else w for w in args[k:end])
            if not cmd:
                raise _Unknown(f"`{word}` without a command")
            out.runs.append((cmd, (), None))
            k = end + 1
    return out


def _names(paths: list[Word]) -> list[str]:
    return [p if isinstance(p, str) else f"<{p.why}>" for p in paths]


# --------------------------------------------------------------------------- text editors (in place)

_SED = opts("-n -E -r -s -u -z --quiet --silent --regexp-extended --separate --unbuffered --null-data --posix "
            "--debug --sandbox --follow-symlinks", valued="-e -f -l --expression --file --line-length",
            attached="-i --in-place")


def _sed(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`sed [-n] SCRIPT FILE...` reads; with `-i`/`--in-place` it edits each FILE in place."""
    p = parse(args, _SED)
    files = p.operands if p.has("-e", "-f", "--expression", "--file") else p.operands[1:]
    scripts = p.values("-e", "--expression") or p.operands[:1]
    if any(isinstance(s, str) and _sed_acts(s) for s in scripts):
        raise _Unknown("a script with `e`, `w` or `r` commands (runs or writes files)")
    files = [under(f, cwd) for f in files]
    out = CommandEffects(reads=[f for f in files if f != "-"] + [under(f, cwd) for f in p.values("-f", "--file")])
    if p.has("-i", "--in-place"):
        if not files:
            raise _Unknown("`-i` with no file")
        out.writes = [Write(f, "in-place edit") for f in files]
    return out


_SED_PLAIN = frozenset("dDpPnNgGhHxlz=qQF")


def _sed_acts(script: str) -> bool:
    """Whether a sed script runs a program or reads or writes a file: the `e`, `r`, `R`, `w`, `W`
    commands and the `e`/`w` flags of `s`; text the scanner cannot follow counts as acting."""
    k, n = 0, len(script)
    while k < n:
        c = script[k]
        if c in " \t\n;}!":
            k += 1
            continue
        if c.isdigit() or c in "$,+~":
            k += 1
            continue
        if c in "/\\":  # an address /re/ or \cREc
            delim = "/" if c == "/" else (script[k + 1] if k + 1 < n else "")
            k = _sed_part(script, k + (1 if c == "/" else 2), delim)
            while k < n and script[k] in "IM":
                k += 1
            continue
        if c == "{":
            k += 1
        elif c in _SED_PLAIN:
            k += 1
            while k < n and script[k].isdigit():
                k += 1
        elif c in ":btT":
            k = _sed_line_end(script, k + 1, stop_at_semicolon=True)
        elif c in "aic":
            k = _sed_line_end(script, k + 1, stop_at_semicolon=False)
        elif c in "sy":
            if k + 1 >= n:
                return True
            delim = script[k + 1]
            k = _sed_part(script, _sed_part(script, k + 2, delim), delim)
            if c == "s":
                flags_end = k
                while flags_end < n and script[flags_end] not in ";\n}":
                    flags_end += 1
                if any(f in script[k:flags_end] for f in "ew"):
                    return True
                k = flags_end
        else:
            return True  # e r R w W, or what the scanner cannot read
    return False


def _sed_part(script: str, k: int, delim: str) -> int:
    """The index after the closing `delim` of a regex or replacement starting at `k`."""
    while k < len(script):
        if script[k] == "\\":
            k += 2
            continue
        if script[k] == delim:
            return k + 1
        k += 1
    return k


def _sed_line_end(script: str, k: int, *, stop_at_semicolon: bool) -> int:
    while k < len(script) and script[k] != "\n" and not (stop_at_semicolon and script[k] in ";}"):
        k += 1
    return k


def _perl(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`perl -pi -e CODE FILE...` edits each FILE in place; perl code that could do more than edit
    the lines it is given (system, open, backticks, unlink, ...) is not interpreted."""
    p = parse(args, opts("-p -n -l -a -w -s -T -t -W -X -0 -C -U -c", valued="-e -E -M -I -m -F -x",
                         attached="-i", stop=True))
    codes = p.values("-e", "-E")
    operands = p.operands
    if not codes:
        if not operands:
            raise _Unknown("perl reading its program from standard input")
        return CommandEffects(programs=[(name, tuple(args))])
    if p.values("-M", "-m") or any(not isinstance(c, str) or _PERL_MORE.search(c) for c in codes):
        raise _Unknown("perl code that could do more than edit lines")
    files = [under(f, cwd) for f in operands]
    out = CommandEffects(reads=[f for f in files if f != "-"])
    if p.has("-i"):
        out.writes = [Write(f, "in-place edit") for f in files]
    return out


_PERL_MORE = re.compile(r"\b(?:system|exec|open|unlink|rename|require|use|do|eval|qx|mkdir|rmdir|link|symlink|"
                        r"chmod|chown|truncate|syscall|fork|kill)\b|`|\bprint\s*\{|>\s*\$")


def _ed(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`ed FILE`, `ex -s -c CMD FILE`, `vim -c CMD FILE`: edits each FILE in place (the commands
    come from standard input or `-c`; whether they write is not read)."""
    cleaned: list[Word] = []
    skip = False
    for k, w in enumerate(args):
        if skip:
            skip = False
            continue
        if isinstance(w, str) and w in ("-c", "-S", "-u", "-i", "-s", "-p", "-w", "-W", "-T", "--cmd"):
            skip = w not in ("-s",) and k + 1 < len(args)
            continue
        if isinstance(w, Unknown) or not w.startswith(("-", "+")):
            cleaned.append(w)
    files = [under(f, cwd) for f in cleaned]
    if not files:
        raise _Unknown("no file to edit")
    return CommandEffects(reads=list(files), writes=[Write(f, "in-place edit") for f in files])


def _patch(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`patch [-pN] [-d DIR] [-i PATCH | < PATCH] [FILE [PATCH]]`: edits the files the patch names
    (under DIR), FILE when given, or writes `-o OUT`."""
    p = parse(args, opts("-R -N -E -f -s -t -u -c -n -l -e -b -F --forward --reverse --dry-run --quiet --silent "
                         "--batch --force --unified --ignore-whitespace --no-backup-if-mismatch --backup --verbose "
                         "--binary --posix", valued="-p -d -i -o -r -D -B -z -V -Y --strip --directory --input "
                                                   "--output --reject-file --fuzz --suffix --prefix",
                         attached="-F"))
    base = p.last("-d", "--directory")
    where = under(base, cwd) if base is not None else cwd
    reads = [under(f, where) for f in p.values("-i", "--input")]
    if p.has("--dry-run"):
        return CommandEffects(reads=reads)
    if len(p.operands) > 1:
        reads.append(under(p.operands[1], where))
    if p.values("-o", "--output"):
        return CommandEffects(reads=reads, writes=[Write(under(f, where), "create") for f in p.values("-o", "--output")])
    if p.operands:
        return CommandEffects(reads=reads, writes=[Write(under(p.operands[0], where), "in-place edit")])
    target = where if base is not None and where is not None else \
        Unknown(f"the files the patch names ({_words(name, args)})")
    return CommandEffects(reads=reads, writes=[Write(target, "in-place edit")])


def _words(name: Word, args: list[Word]) -> str:
    return " ".join(w if isinstance(w, str) else "<?>" for w in (name, *args))[:120]


_add("writer", "sed", "a stream editor; `-i` edits files in place", _sed)
_add("writer", "perl", "perl; `-pi -e` edits files in place", _perl)
_add("writer", "ed ex vi vim nvim", "a text editor run on files: edits them in place", _ed)
_add("writer", "patch", "applies a diff to the files it names", _patch)
_add("writer", "awk gawk mawk nawk", "a text program; `-i inplace`, `print > FILE` and `system()` act on files",
     lambda name, args, cwd: _awk(args, cwd))


def _awk(args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("--posix --traditional --sandbox -S -N -b -c -P -r -O", valued="-F -v -f --field-separator "
                                                                                   "--assign --file -i --include -l -E"))
    if p.values("-i", "--include"):
        if any(v == "inplace" for v in p.values("-i", "--include")):
            files = [under(f, cwd) for f in (p.operands if p.values("-f", "--file") else p.operands[1:])]
            return CommandEffects(reads=list(files), writes=[Write(f, "in-place edit") for f in files])
        raise _Unknown("an awk library (`-i`)")
    program_files = p.values("-f", "--file", "-E")
    programs = [] if program_files else p.operands[:1]
    if any(not isinstance(t, str) or _AWK_ACTS.search(t) for t in programs):
        raise _Unknown("an awk program that writes files or runs commands (`>`, `|`, `system`)")
    if program_files:
        raise _Unknown("an awk program from a file")
    files = [under(f, cwd) for f in p.operands[1:] if not (isinstance(f, str) and _ASSIGNMENT.match(f))]
    return CommandEffects(reads=[f for f in files if f != "-"])


# `print > "f"`, `printf ... >> f`, `print | "cmd"`, `system(...)`, `"cmd" | getline`: acts beyond stdout.
_AWK_ACTS = re.compile(r"\bsystem\s*\(|\|\s*getline|\bprintf?\b[^;{}]*(?:>|\|)|\bclose\s*\(|\bfflush\s*\(\s*\"")


# --------------------------------------------------------------------------- writers

_add("writer", "rm", "deletes the files it names",
     _every_operand(opts("-r -R -f -i -I -d -v --recursive --force --verbose --dir --one-file-system "
                         "--no-preserve-root --preserve-root --interactive", risky=False), "delete"))
_add("writer", "rmdir", "deletes the empty folders it names",
     _every_operand(opts("-p -v --parents --verbose --ignore-fail-on-non-empty", risky=False), "delete"))
_add("writer", "unlink", "deletes the file it names", _every_operand(opts(risky=False), "delete"))
_add("writer", "mkdir", "creates the folders it names",
     _every_operand(opts("-p -v --parents --verbose", valued="-m --mode", risky=False), "create"))
_add("writer", "mkfifo", "creates the named pipes it names", _every_operand(opts(valued="-m --mode", risky=False), "create"))
_add("writer", "touch", "creates the files it names or updates their times",
     _every_operand(opts("-a -c -m -h --no-create", valued="-d -r -t --date --reference --time", risky=False), "create"))
_add("writer", "truncate", "changes the size of the files it names",
     _every_operand(opts("-c -o --no-create --io-blocks", valued="-s -r --size --reference", risky=False), "in-place edit"))
_add("writer", "shred", "overwrites the files it names",
     _every_operand(opts("-f -u -v -z --force --remove --verbose --zero", valued="-n -s --iterations --size"),
                    "delete"))
_MODE = opts("-R -v -c -f -h --recursive --verbose --changes --silent --quiet --no-dereference --dereference",
             valued="--reference --from", risky=False)
_add("writer", "chmod chown chgrp", "changes the mode or owner of the files it names (after the mode/owner)",
     _every_operand(_MODE, "mode", skip_first=lambda p: not p.has("--reference")))
_add("writer", "cp", "copies its sources to the last operand",
     _copy(opts("-r -R -a -f -i -n -p -P -L -H -l -s -u -v -x -b -T -d --recursive --archive --force --no-clobber "
                "--parents --preserve --no-dereference --dereference --update --verbose --remove-destination "
                "--no-target-directory --link --symbolic-link --sparse=always",
                valued="-t -S --target-directory --suffix --backup", attached="--preserve --reflink --sparse"),
           "copy"))
_add("writer", "mv", "moves its sources to the last operand",
     _copy(opts("-f -i -n -u -v -b -T --force --no-clobber --update --verbose --no-target-directory",
                valued="-t -S --target-directory --suffix --backup"), "move"))
_add("writer", "ln", "links the last operand to its sources",
     _copy(opts("-s -f -n -r -v -b -T -i -L -P --symbolic --force --no-dereference --relative --verbose "
                "--no-target-directory", valued="-t -S --target-directory --suffix --backup"), "link",
           one_operand_here=True))


def _install(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-d -D -c -C -p -s -v -b --directory --compare --preserve-timestamps --strip --verbose",
                         valued="-m -o -g -t -S --mode --owner --group --target-directory --suffix"))
    if p.has("-d", "--directory"):
        return CommandEffects(writes=[Write(under(f, cwd), "create") for f in p.operands])
    return _copy(opts(), "copy")(name, [*p.operands, *p.values("-t", "--target-directory")], cwd)


_add("writer", "install", "copies files into place (`-d`: creates folders)", _install)
_add("writer", "tee", "copies standard input to the files it names",
     lambda name, args, cwd: _tee(args, cwd))


def _tee(args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-a -i -p --append --ignore-interrupts", attached="--output-error", risky=False))
    how = "append" if p.has("-a", "--append") else "create"
    return CommandEffects(writes=[Write(under(f, cwd), how) for f in p.operands])


def _dd(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    out = CommandEffects()
    for w in args:
        if isinstance(w, Unknown):
            raise _Unknown(f"an unknown operand ({w.why})")
        key, eq, value = w.partition("=")
        if not eq or key not in ("if", "of", "bs", "ibs", "obs", "count", "skip", "seek", "conv", "status",
                                 "iflag", "oflag", "cbs"):
            raise _Unknown(f"operand `{w}` is not in the vocabulary")
        if key == "if":
            out.reads.append(under(value, cwd))
        elif key == "of":
            out.writes.append(Write(under(value, cwd), "create"))
    return out


_add("writer", "dd", "copies `if=` to `of=`", _dd)
_add("writer", "mktemp", "creates a temporary file or folder (under /tmp unless told)",
     lambda name, args, cwd: _mktemp(args))


def _mktemp(args: list[Word]) -> CommandEffects:
    p = parse(args, opts("-d -u -q -t --directory --dry-run --quiet", valued="-p --tmpdir --suffix"))
    if p.has("-u", "--dry-run"):
        return CommandEffects()
    folder = p.last("-p", "--tmpdir") or "/tmp"
    template = p.operands[0] if p.operands else "tmp.XXXXXXXXXX"
    if isinstance(template, str) and "/" in template and not p.has("-t", "-p", "--tmpdir"):
        path: Word = Unknown(f"a new file named like {template}")
    else:
        path = Unknown(f"a new file in {folder if isinstance(folder, str) else '<?>'}")
    return CommandEffects(writes=[Write(path, "create")])


_add("writer", "ldconfig", "rebuilds the shared-library cache (/etc/ld.so.cache)",
     lambda name, args, cwd: CommandEffects(writes=[Write("/etc/ld.so.cache", "create")]))
_add("writer", "mkfs.ext4 mkfs mkswap", "formats the device it names",
     _every_operand(opts("-F -q -F -E", valued="-L -t -b -m -O -E -N -i"), "create"))
_add("writer", "mount umount", "mounts or unmounts a file system on a folder",
     lambda name, args, cwd: _mount(args, cwd))
_add("writer", "swapon swapoff", "turns swap on a device on or off", _pure())
_add("writer", "sysctl", "reads or sets kernel parameters (`-w`, NAME=VALUE)",
     lambda name, args, cwd: _sysctl(args))
_add("writer", "mdadm", "manages software RAID devices", _not_command("RAID management is not interpreted"))


def _mount(args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-a -r -w -v -f -n -l -R -B --bind --rbind --move -M", valued="-t -o -L -U --types "
                                                                                   "--options"))
    if not p.operands:
        return CommandEffects()
    return CommandEffects(writes=[Write(under(p.operands[-1], cwd), "mount")])


def _sysctl(args: list[Word]) -> CommandEffects:
    p = parse(args, opts("-w -a -n -e -q -p --write --all --values", risky=False))
    sets = [w for w in p.operands if not isinstance(w, str) or "=" in w]
    return CommandEffects(writes=[Write(Unknown(f"kernel parameter {_names([w])[0]}"), "in-place edit") for w in sets])


# --------------------------------------------------------------------------- archives

def _tar(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`tar -x[z]f A [-C DIR]` unpacks into DIR; `tar -c[z]f A FILES` writes A; `tar -t` reads."""
    if args and isinstance(args[0], str) and args[0] and not args[0].startswith("-"):
        args = ["-" + args[0], *args[1:]]  # the old bundled form: `tar xzf A`
    p = parse(args, opts(
        "-x -c -t -r -u -z -j -J -v -p -k -m -h -P -O -a -S -o --extract --get --create --list --append --update "
        "--gzip --bzip2 --xz --zstd --verbose --preserve-permissions --keep-old-files --overwrite --no-same-owner "
        "--same-owner --touch --dereference --absolute-names --to-stdout --auto-compress --skip-old-files "
        "--numeric-owner --no-same-permissions --no-overwrite-dir --recursive-unlink --unlink-first --warning=no-unknown-keyword",
        valued="-f -C -T -X -b --file --directory --files-from --exclude-from --strip-components --exclude "
               "--owner --group --mode --transform --xform --wildcards --anchored --blocking-factor --warning"))
    mode = [m for m in ("x", "c", "t", "r", "u") if p.has(f"-{m}", *_TAR_LONG[m])]
    if len(mode) != 1:
        raise _Unknown("cannot tell whether it extracts, creates or lists")
    archive = p.last("-f", "--file")
    folder = p.last("-C", "--directory")
    where = under(folder, cwd) if folder is not None else (cwd if cwd is not None else ".")
    arch = under(archive, cwd) if archive is not None and archive != "-" else None
    if mode == ["x"]:
        out = CommandEffects(reads=[arch] if arch is not None else [])
        if not p.has("-O", "--to-stdout"):
            out.writes = [Write(where, "unpack")]
        return out
    if mode == ["t"]:
        return CommandEffects(reads=[arch] if arch is not None else [])
    files = [under(f, where) for f in p.operands] + [under(f, cwd) for f in p.values("-T", "--files-from")]
    return CommandEffects(reads=files, writes=[Write(arch, "create")] if arch is not None else [])


_TAR_LONG = {"x": ("--extract", "--get"), "c": ("--create",), "t": ("--list",), "r": ("--append",),
             "u": ("--update",)}


def _unzip(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-o -n -q -qq -j -l -t -v -u -f -a -C -L -X -Z -p", valued="-d -x"))
    if not p.operands:
        raise _Unknown("no archive")
    archive = under(p.operands[0], cwd)
    if p.has("-l", "-t", "-v", "-Z", "-p"):
        return CommandEffects(reads=[archive])
    folder = p.last("-d")
    where = under(folder, cwd) if folder is not None else (cwd if cwd is not None else ".")
    return CommandEffects(reads=[archive], writes=[Write(where, "unpack")])


def _decompress(suffixes: tuple[str, ...], *, compress: bool) -> Handler:
    """gzip/xz/zstd/bzip2 and their `-d` forms: replaces FILE by FILE.gz (or the reverse);
    `-c`/`--stdout`/`-t`/`-l` write nothing."""
    spec = opts("-d -c -f -k -q -v -t -l -r -n -N -1 -2 -3 -4 -5 -6 -7 -8 -9 -T0 --decompress --uncompress "
                "--stdout --to-stdout --force --keep --quiet --verbose --test --list --rm --fast --best",
                valued="-o -S --suffix -T --threads")

    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        p = parse(args, spec)
        files = [under(f, cwd) for f in p.operands if f != "-"]
        out = CommandEffects(reads=list(files))
        if p.has("-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list"):
            return out
        unpack = not compress or p.has("-d", "--decompress", "--uncompress")
        for f in files:
            target = p.last("-o") or _renamed(f, suffixes, unpack)
            out.writes += [Write(under(target, cwd), "unpack" if unpack else "create"), Write(f, "delete")]
        return out
    return handle


def _renamed(path: Word, suffixes: tuple[str, ...], unpack: bool) -> Word:
    if isinstance(path, Unknown):
        return path
    if not unpack:
        return path + suffixes[0]
    for suffix in suffixes:
        if path.endswith(suffix):
            return path[:-len(suffix)]
    return Unknown(f"{path} without its suffix")


_add("writer", "tar", "packs or unpacks archives", _tar)
_add("writer", "unzip", "unpacks a zip archive (into `-d DIR`)", _unzip)
_add("writer", "gzip", "compresses files (`-d`: unpacks)", _decompress((".gz", ".tgz"), compress=True))
_add("writer", "gunzip", "unpacks .gz files", _decompress((".gz", ".tgz"), compress=False))
_add("writer", "xz", "compresses files (`-d`: unpacks)", _decompress((".xz",), compress=True))
_add("writer", "unxz", "unpacks .xz files", _decompress((".xz",), compress=False))
_add("writer", "zstd", "compresses files (`-d`: unpacks)", _decompress((".zst",), compress=True))
_add("writer", "unzstd", "unpacks .zst files", _decompress((".zst",), compress=False))
_add("writer", "bzip2", "compresses files (`-d`: unpacks)", _decompress((".bz2",), compress=True))
_add("writer", "bunzip2", "unpacks .bz2 files", _decompress((".bz2",), compress=False))
_add("writer", "unsquashfs", "unpacks a squashfs image (into `-d DIR`)",
     lambda name, args, cwd: _unsquashfs(args, cwd))


def _unsquashfs(args: list[Word], cwd: Word | None) -> CommandEffects:
    """`unsquashfs [-f] [-d DIR] IMAGE`: its options are single-dash words (`-dest`, `-force`)."""
    folder: Word = "squashfs-root"
    operands: list[Word] = []
    k = 0
    while k < len(args):
        word = args[k]
        k += 1
        if isinstance(word, Unknown):
            raise _Unknown(f"an unknown word where an option could be ({word.why})")
        if word in ("-d", "-dest", "-p", "-processors"):
            if k >= len(args):
                raise _Unknown(f"`{word}` without its value")
            folder = args[k] if word in ("-d", "-dest") else folder
            k += 1
        elif word in ("-f", "-force", "-q", "-quiet", "-n", "-no-progress", "-no-xattrs", "-l", "-ll", "-s"):
            continue
        elif word.startswith("-"):
            raise _Unknown(f"option `{word}` is not in the vocabulary")
        else:
            operands.append(word)
    if not operands:
        raise _Unknown("no image")
    return CommandEffects(reads=[under(operands[0], cwd)], writes=[Write(under(folder, cwd), "unpack")])


# --------------------------------------------------------------------------- network

def _curl(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`curl URL... [-o FILE | -O] [--output-dir DIR]`: downloads each URL to its file (standard
    output without one); `-K` config files and upload forms are not interpreted."""
    p = parse(args, _CURL)
    if p.values("-K", "--config"):
        raise _Unknown("options from a config file (`-K`)")
    urls = p.operands + p.values("--url")
    outputs = p.values("-o", "--output")
    folder = p.last("--output-dir")
    base = under(folder, cwd) if folder is not None else cwd
    remote_name = p.has("-O", "--remote-name", "--remote-name-all", "-J", "--remote-header-name")
    out = CommandEffects(reads=[under(f[1:], cwd) for f in p.values("-d", "--data", "--data-binary", "--data-raw",
                                                                     "--json", "-T", "--upload-file", "-F", "--form")
                                if isinstance(f, str) and f.startswith("@")])
    for k, url in enumerate(urls):
        dest: Word | None = None
        if k < len(outputs):
            dest = under(outputs[k], base) if outputs[k] != "-" else None
        elif remote_name:
            dest = under(_url_basename(url), base)
        out.downloads.append(Download(url, dest))
        if dest is not None:
            out.writes.append(Write(dest, "download"))
    for jar in p.values("-c", "--cookie-jar", "-D", "--dump-header", "--trace", "--trace-ascii", "--stderr"):
        if jar not in ("-", "/dev/null"):
            out.writes.append(Write(under(jar, cwd), "create"))
    return out


_CURL = opts(
    "-s -S -L -f -k -v -I -G -O -J -N -g -i -# -q -Z -4 -6 --tlsv1.2 --tlsv1.3 --ssl-reqd --silent --show-error --location --fail --fail-with-body "
    "--insecure --verbose --head --get --remote-name --remote-name-all --remote-header-name --compressed --no-buffer "
    "--create-dirs --retry-all-errors --retry-connrefused --http1.1 --http2 --globoff --include --progress-bar "
    "--no-progress-meter --parallel --fail-early --ssl-no-revoke --raw --tcp-nodelay --no-keepalive --ipv4 --ipv6",
    valued="-o -X -H -d -u -m -w -A -e -b -c -D -x -T -F -K -r -y -Y -C --output --output-dir --request --header "
           "--data --data-raw --data-binary --data-urlencode --json --user --max-time --connect-timeout --retry "
           "--retry-delay --retry-max-time --write-out --user-agent --referer --cookie --cookie-jar --dump-header "
           "--proxy --noproxy --proto --proto-redir --upload-file --form --config --range --url --cacert --cert --key --resolve "
           "--limit-rate --max-filesize --trace --trace-ascii --stderr --unix-socket --oauth2-bearer")


def _url_basename(url: Word) -> Word:
    if isinstance(url, Unknown):
        return Unknown(f"the file named by an unknown URL ({url.why})")
    name = url.split("?", 1)[0].rstrip("/").rsplit("/", 1)[-1]
    return name or Unknown(f"the file named by {url}")


def _wget(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`wget URL... [-O FILE | -P DIR]`: downloads each URL (to FILE, into DIR, or here)."""
    p = parse(args, opts(
        "-q -v -nv -c -N -r -k -p -x -nd -nc -np -nH --quiet --verbose --no-verbose --continue --timestamping "
        "--recursive --no-check-certificate --no-clobber --no-parent --show-progress --progress=dot --mirror -m "
        "--content-disposition --trust-server-names --no-directories --force-directories --server-response -S",
        valued="-O -P -o -a -t -T -i -U -e -l -A -R --output-document --directory-prefix --output-file "
               "--append-output --tries --timeout --input-file --user-agent --header --user --password "
               "--http-user --http-password --execute --level --accept --reject --limit-rate --wait --post-data "
               "--post-file --read-timeout --connect-timeout --progress --cut-dirs --max-redirect"))
    if p.values("-e", "--execute"):
        raise _Unknown("wgetrc commands (`-e`)")
    urls = list(p.operands) + [Unknown(f"URLs listed in {_names([f])[0]}") for f in p.values("-i", "--input-file")]
    document = p.last("-O", "--output-document")
    folder = p.last("-P", "--directory-prefix")
    base = under(folder, cwd) if folder is not None else cwd
    out = CommandEffects(reads=[under(f, cwd) for f in p.values("-i", "--input-file", "--post-file")])
    recursive = p.has("-r", "--recursive", "-m", "--mirror")
    for url in urls:
        if document is not None:
            dest: Word | None = under(document, cwd) if document != "-" else None
        elif recursive:
            dest = base if base is not None else "."
        else:
            dest = under(_url_basename(url), base)
        out.downloads.append(Download(url, dest))
        if dest is not None:
            out.writes.append(Write(dest, "download"))
    out.writes += [Write(under(f, cwd), "append") for f in p.values("-o", "--output-file", "-a", "--append-output")]
    return out


def _hf_download(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`hf download REPO [FILES] [--local-dir DIR] [--cache-dir DIR]`: fetches from the Hub into
    DIR, or into the Hugging Face cache (HF_HUB_CACHE, unknown here)."""
    p = parse(args, opts("--quiet --force-download --resume-download --local-dir-use-symlinks --dry-run "
                         "--no-progress",
                         valued="--local-dir --cache-dir --revision --token --include --exclude --repo-type "
                                "--max-workers --local-dir-use-symlinks --format"))
    if not p.operands:
        raise _Unknown("no repository")
    repo = p.operands[0]
    url = f"hf://{repo}" if isinstance(repo, str) else Unknown(f"a Hub repository ({repo.why})")
    folder = p.last("--local-dir") or p.last("--cache-dir")
    dest = under(folder, cwd) if folder is not None else Unknown("the Hugging Face cache (HF_HUB_CACHE)")
    if p.has("--dry-run"):
        return CommandEffects()
    return CommandEffects(downloads=[Download(url, dest)], writes=[Write(dest, "download")])


def _hf_upload(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("--private --quiet --create-pr", valued="--token --repo-type --revision --include "
                                                                 "--exclude --commit-message --delete"))
    return CommandEffects(reads=[under(f, cwd) for f in p.operands[1:2]])


_HF = _subcommands({
    "download": _hf_download, "upload": _hf_upload, "login": _pure(), "logout": _pure(), "whoami": _pure(),
    "env": _pure(), "version": _pure(), "scan-cache": _pure(), "repo": _pure(), "auth": _pure(),
    "delete-cache": lambda name, args, cwd: CommandEffects(
        writes=[Write(Unknown("the Hugging Face cache (HF_HUB_CACHE)"), "delete")]),
    "cache": _pure(),
})
_add("network", "curl", "fetches URLs (`-o`/`-O`: into files)", _curl)
_add("network", "wget", "downloads URLs into files", _wget)
_add("network", "huggingface-cli hf", "the Hugging Face Hub client (`download` into `--local-dir` or the cache)", _HF)


def _rclone(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`rclone copy|sync|copyto|move SRC DST`: a `remote:path` source is a download into DST."""
    p = parse(args, opts("-P -v -q --progress --verbose --quiet --no-traverse --checksum --fast-list --ignore-existing "
                         "--dry-run --create-empty-src-dirs -L --copy-links",
                         valued="--transfers --checkers --config --include --exclude --filter --log-file --retries "
                                "--multi-thread-streams --s3-chunk-size --max-age --min-age --bwlimit --log-level"))
    if not p.operands:
        raise _Unknown("no subcommand")
    sub, rest = p.operands[0], p.operands[1:]
    if sub in ("ls", "lsf", "lsd", "lsl", "size", "about", "version", "listremotes", "config", "check", "cat"):
        return CommandEffects()
    if sub not in ("copy", "copyto", "sync", "move", "moveto") or len(rest) != 2:
        raise _Unknown(f"`{_names([sub])[0]}` with {len(rest)} operands is not in the vocabulary")
    src, dst = rest
    out = CommandEffects()
    remote = re.compile(r"^[A-Za-z0-9_-]+:")
    if isinstance(dst, Unknown) or not remote.match(dst):
        dest = under(dst, cwd)
        out.writes.append(Write(dest, "download" if isinstance(src, str) and remote.match(src) else "copy"))
        if isinstance(src, Unknown) or remote.match(src):
            out.downloads.append(Download(src, dest))
        else:
            out.reads.append(under(src, cwd))
    else:
        out.reads.append(under(src, cwd))
    return out


_add("network", "rclone", "copies between local folders and cloud storage", _rclone)


def _ssh(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`ssh [opts] HOST [TEXT...]`: runs the words, joined by spaces, as shell text on HOST."""
    p = parse(args, opts("-A -a -C -f -G -g -K -k -M -N -n -q -s -T -t -v -V -X -x -Y -4 -6",
                         valued="-B -b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w", stop=True))
    if not p.operands:
        raise _Unknown("no host")
    words = p.operands[1:]
    if not words or p.has("-N"):
        return CommandEffects()
    return _joined_text(words)


def _joined_text(words: list[Word]) -> CommandEffects:
    """Words a command joins with spaces and runs as shell text (`ssh HOST ls -l`, `watch`, `tmux new`)."""
    if any(isinstance(w, Unknown) for w in words):
        raise _Unknown("shell text with an unknown word")
    return CommandEffects(shell_text=[(" ".join(w for w in words if isinstance(w, str)), ())])


def _scp(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`scp [opts] SRC... DST`: a `host:path` source is a download into DST."""
    p = parse(args, opts("-r -p -q -C -v -B -3 -4 -6 -O -T", valued="-P -i -o -F -l -c -J -S"))
    if len(p.operands) < 2:
        raise _Unknown("no destination")
    *sources, dst = p.operands
    remote = re.compile(r"^(?:[^/:]+@)?[^/:]+:")
    if isinstance(dst, str) and remote.match(dst):
        return CommandEffects(reads=[under(s, cwd) for s in sources])
    dest = under(dst, cwd)
    out = CommandEffects(writes=[Write(dest, "download")])
    for s in sources:
        if isinstance(s, Unknown) or remote.match(s):
            out.downloads.append(Download(s, dest))
        else:
            out.reads.append(under(s, cwd))
    return out


def _rsync(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-a -r -v -z -P -h -q -u -l -L -p -t -o -g -D -H -A -X -c -n -W -x -R --archive "
                         "--recursive --verbose --compress --progress --partial --delete --delete-after "
                         "--delete-before --quiet --update --checksum --dry-run --inplace --ignore-existing "
                         "--human-readable --links --copy-links --no-perms --no-owner --no-group --times "
                         "--remove-source-files --info=progress2 --mkpath --delete-excluded",
                         valued="-e --rsh --exclude --include --exclude-from --include-from --filter --chmod "
                                "--chown --timeout --bwlimit --log-file --rsync-path --files-from --info "
                                "--backup-dir --suffix"))
    if p.values("-e", "--rsh", "--rsync-path"):
        raise _Unknown("a remote shell command (`-e`, `--rsync-path`)")
    return _scp(name, [w for w in p.operands], cwd) if len(p.operands) >= 2 else CommandEffects()


_add("network", "ssh", "runs shell text on another host", _ssh)
_add("network", "scp", "copies files between hosts", _scp)
_add("writer", "rsync", "copies files and folders (also between hosts)", _rsync)
_add("network", "gh", "the GitHub CLI (asks GitHub; `release download`/`run download` fetch files)",
     lambda name, args, cwd: _gh(args, cwd))
_add("network", "gpg", "checks or imports keys and signatures",
     lambda name, args, cwd: CommandEffects(writes=[Write(Unknown("the GnuPG keyring"), "in-place edit")]))
_add("network", "nc netcat ncat", "opens a network connection (waits for a port)", _pure())


def _gh(args: list[Word], cwd: Word | None) -> CommandEffects:
    if len(args) >= 2 and args[1] == "download" and args[0] in ("release", "run"):
        return CommandEffects(downloads=[Download(Unknown(f"a GitHub {args[0]}'s files"), cwd)],
                              writes=[Write(cwd if cwd is not None else ".", "download")])
    if args and args[0] in ("api", "pr", "issue", "run", "release", "auth", "repo", "workflow", "label", "search"):
        if args[0] in ("pr", "repo") and len(args) > 1 and args[1] in ("checkout", "clone"):
            return CommandEffects(writes=[Write(cwd if cwd is not None else ".", "checkout")],
                                  downloads=[Download(Unknown("a GitHub repository"), cwd)])
        return CommandEffects()
    raise _Unknown("a `gh` command that is not in the vocabulary")


# --------------------------------------------------------------------------- git

_GIT_GLOBAL = opts("--no-pager -p --paginate --bare --no-replace-objects --literal-pathspecs --no-optional-locks "
                   "-P --version --help", valued="-C -c --git-dir --work-tree --namespace --exec-path",
                   stop=True)
# Configuration a `git -c` / `git config` may set without changing what git runs (hooks, aliases,
# pagers, ssh and fsmonitor commands are programs it would run).
_GIT_SAFE_CONFIG = re.compile(r"^(?:safe\.directory|user\.\w+|advice\.\w+|http\.[\w.]+|protocol\.[\w.]+|"
                              r"init\.defaultBranch|core\.(?:autocrlf|filemode|longpaths|compression)|"
                              r"pull\.rebase|fetch\.\w+|submodule\.[\w.-]+\.url|color\.\w+|gc\.auto|"
                              r"url\.[^=]+\.insteadOf|credential\.helper|lfs\.[\w.]+)$", re.I)
_GIT_READS = frozenset("""
status log diff show rev-parse describe ls-files ls-remote ls-tree cat-file blame shortlog rev-list merge-base
version help grep var for-each-ref show-ref reflog count-objects fsck name-rev whatchanged cherry diff-tree
diff-index diff-files check-ignore check-attr verify-commit verify-tag format-patch hash-object push
""".split())
_GIT_CHECKOUTS = frozenset("""
checkout switch reset restore stash cherry-pick merge rebase revert clean rm mv am pull submodule worktree
sparse-checkout lfs
""".split())
_GIT_METADATA = frozenset("add commit fetch init tag branch remote gc prune notes update-index update-ref "
                          "symbolic-ref repack maintenance".split())


def _git(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """git with `-C DIR` (each resolved against the last): what a subcommand changes in the
    repository's work tree ("checkout"/"in-place edit") or only in its `.git`."""
    p = parse(args, _GIT_GLOBAL)
    repo: Word | None = cwd
    for folder in p.values("-C"):
        repo = under(folder, repo)
    work_tree = p.last("--work-tree")
    if work_tree is not None:
        repo = under(work_tree, repo)
    for setting in p.values("-c"):
        _git_config_safe(setting)
    if not p.operands:
        return CommandEffects()
    sub, rest = p.operands[0], p.operands[1:]
    if isinstance(sub, Unknown):
        raise _Unknown(f"an unknown subcommand ({sub.why})")
    here = repo if repo is not None else "."
    if sub == "clone":
        return _git_clone(rest, repo)
    if sub == "apply":
        return _git_apply(rest, repo)
    if sub == "config":
        return _git_config(rest, here)
    if sub == "archive":
        out_files = [w[len("--output="):] for w in rest if isinstance(w, str) and w.startswith("--output=")]
        out_files += [rest[k + 1] for k, w in enumerate(rest[:-1]) if w in ("-o", "--output")]
        return CommandEffects(reads=[here], writes=[Write(under(f, cwd), "create") for f in out_files])
    if sub in _GIT_READS:
        written = [w.split("=", 1)[1] for w in rest if isinstance(w, str) and w.startswith("--output=")]
        written += [rest[k + 1] for k, w in enumerate(rest[:-1]) if w == "--output"]
        if sub == "format-patch":
            written.append(under(next((rest[k + 1] for k, w in enumerate(rest[:-1]) if w in ("-o", "--output-directory")),
                                      "."), here))
        return CommandEffects(reads=[here], writes=[Write(under(f, cwd), "create") for f in written])
    if sub in _GIT_CHECKOUTS:
        out = CommandEffects(reads=[here], writes=[Write(here, "checkout")])
        if sub in ("pull", "submodule", "lfs"):
            out.downloads.append(Download(Unknown("the repository's remote"), here))
        if sub in ("am",):
            out.reads += [under(f, cwd) for f in rest if isinstance(f, str) and not f.startswith("-")]
        return out
    if sub in _GIT_METADATA:
        out = CommandEffects(reads=[here], writes=[Write(under(".git", here), "in-place edit")])
        if sub == "fetch":
            out.downloads.append(Download(Unknown("the repository's remote"), under(".git", here)))
        if sub == "init":
            target = next((w for w in rest if not (isinstance(w, str) and w.startswith("-"))), None)
            out = CommandEffects(writes=[Write(under(target, here) if target is not None else here, "create")])
        return out
    raise _Unknown(f"subcommand `{sub}` is not in the vocabulary")


def _git_config_safe(setting: Word) -> None:
    key = setting.split("=", 1)[0] if isinstance(setting, str) else None
    if key is None or not _GIT_SAFE_CONFIG.match(key):
        raise _Unknown(f"configuration `{_names([setting])[0]}` could make git run a program")


def _git_config(rest: list[Word], here: Word) -> CommandEffects:
    p = parse(rest, opts("--global --system --local --get --get-all --list -l --unset --unset-all --add --bool "
                         "--int --path --show-origin --replace-all --get-regexp --null -z --name-only",
                         valued="--file -f --type --default"))
    if p.has("--get", "--get-all", "--list", "-l", "--get-regexp") or len(p.operands) < 2 and not p.has("--unset",
                                                                                                          "--unset-all"):
        return CommandEffects()
    key = p.operands[0] if p.operands else Unknown("no key")
    _git_config_safe(key)
    if p.has("--global"):
        where: Word = Unknown("the user's ~/.gitconfig")
    elif p.has("--system"):
        where = "/etc/gitconfig"
    else:
        where = under(".git/config", here)
    return CommandEffects(writes=[Write(where, "in-place edit")])


_GIT_CLONE = opts("-q -v -n -l -s --quiet --verbose --no-checkout --bare --mirror --recursive --recurse-submodules "
                  "--single-branch --no-single-branch --shallow-submodules --no-tags --progress --local "
                  "--no-hardlinks --shared --sparse --remote-submodules --also-filter-submodules",
                  valued="-b -o -j -u --branch --origin --depth --jobs --filter --reference --separate-git-dir "
                         "--shallow-since --shallow-exclude --revision --template --upload-pack",
                  attached="--recurse-submodules")


def _git_clone(rest: list[Word], repo: Word | None) -> CommandEffects:
    p = parse(rest, _GIT_CLONE)
    if p.values("-u", "--upload-pack", "--template"):
        raise _Unknown("a clone that runs a program (`--upload-pack`, `--template`)")
    if p.values("-c", "--config"):
        raise _Unknown("a clone that sets configuration")
    if not p.operands or len(p.operands) > 2:
        raise _Unknown(f"{len(p.operands)} operands")
    url = p.operands[0]
    if len(p.operands) == 2:
        dest = p.operands[1]
    elif isinstance(url, str):
        dest = url.rstrip("/").rsplit("/", 1)[-1].rsplit(":", 1)[-1].removesuffix(".git")
    else:
        dest = Unknown(f"the folder named after an unknown URL ({url.why})")
    target = under(dest, repo)
    return CommandEffects(downloads=[Download(url, target)], writes=[Write(target, "checkout")])


def _git_apply(rest: list[Word], repo: Word | None) -> CommandEffects:
    p = parse(rest, opts("-R -v -q --check --stat --numstat --summary --index --cached --reverse --reject "
                         "--verbose --quiet --3way -3 --whitespace=nowarn --whitespace=fix --ignore-whitespace "
                         "--ignore-space-change --unidiff-zero --allow-empty --recount --intent-to-add -N",
                         valued="-p -C --directory --exclude --include --whitespace"))
    here = repo if repo is not None else "."
    reads = [under(f, repo) for f in p.operands if f != "-"]
    if p.has("--check", "--stat", "--numstat", "--summary") and not p.has("--apply"):
        return CommandEffects(reads=reads)
    folder = p.last("--directory")
    target = under(folder, here) if folder is not None else here
    return CommandEffects(reads=reads, writes=[Write(under(".git", here) if p.has("--cached") else target,
                                                     "in-place edit")])


_add("writer", "git", "version control: clones, checks out, applies patches (in `-C DIR`)", _git)


# --------------------------------------------------------------------------- wrappers

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
    p = parse(args, opts("-E -H -n -S -k -K -b -P -A -B -N --preserve-env --set-home --non-interactive --stdin "
                         "--background", valued="-u -g -U -C -h -p -r -t -D -T --user --group --host --prompt "
                                                "--chdir --close-from --command-timeout",
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


_add("wrapper", "env", "runs a command with environment changes (`-u`, `-i`, `-C`, NAME=value)", _env)
_add("wrapper", "sudo", "runs a command as another user (without `-E`: with a reset environment)", _sudo)
_add("wrapper", "xargs", "runs a command with words from its input", _xargs)
_add("wrapper", "timeout", "runs a command with a time limit", _timeout)
_add("wrapper", "time", "runs a command and reports its time (`-o FILE` writes it)", _time)
_add("wrapper", "nohup", "runs a command immune to hangups", _runs_rest(opts(stop=True)))
_add("wrapper", "setsid", "runs a command in a new session",
     _runs_rest(opts("-c -f -w --ctty --fork --wait", stop=True), needs_command=True))
_add("wrapper", "nice", "runs a command at another priority",
     _runs_rest(opts(valued="-n --adjustment", attached="-1 -2 -3 -4 -5 -6 -7 -8 -9", stop=True)))
_add("wrapper", "ionice", "runs a command at another I/O priority",
     _runs_rest(opts("-t", valued="-c -n -p --class --classdata --pid", stop=True)))
_add("wrapper", "stdbuf", "runs a command with other stream buffering",
     _runs_rest(opts(valued="-i -o -e --input --output --error", stop=True), needs_command=True))
_add("wrapper", "numactl", "runs a command bound to NUMA nodes (`--hardware`/`--show`: prints)",
     _runs_rest(opts("-l -H -s --localalloc --hardware --show -a --all",
                     valued="-N -m -C -i -p --cpunodebind --membind --physcpubind --interleave --preferred "
                            "--preferred-many", stop=True)))
_add("wrapper", "taskset", "runs a command bound to CPUs (`-p PID`: changes a process)",
     _skip_first(opts("-a -c --all-tasks --cpu-list -p --pid", stop=True), unless=("-p", "--pid")))
_add("wrapper", "chrt", "runs a command with a real-time priority",
     _skip_first(opts("-b -f -o -r -d -i -a -R -v -m --batch --fifo --other --rr --deadline --idle -p --pid",
                      valued="-T -P -D", stop=True), unless=("-p", "--pid", "-m")))
_add("wrapper", "flock", "runs a command holding a lock file", _flock)
_add("wrapper", "watch", "runs shell text again and again", _watch)
_add("wrapper", "mpirun mpiexec", "runs a command as MPI ranks (`-x NAME=value` exports)", _mpirun)


# --------------------------------------------------------------------------- shells and Python

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


_SCRIPT = Entry("shell", "a shell script found on PATH",
                lambda name, args, cwd: CommandEffects(shell_files=[(name, tuple(args))]))
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
    normal = [w.replace("_", "-") if isinstance(w, str) and w.startswith("--") and "=" not in w
              else (w.split("=", 1)[0].replace("_", "-") + "=" + w.split("=", 1)[1]
                    if isinstance(w, str) and w.startswith("--") else w) for w in args]
    p = parse(normal, opts("--standalone -m --module --no-python --run-path --no-python",
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


_add("shell", "bash sh zsh dash ksh", "a shell: runs `-c TEXT`, a FILE, or its standard input", _shell)
_add("python", "python", "Python (`python3`, `python3.12`): runs `-m MOD`, `-c CODE`, a FILE or its input",
     _python)
_add("python", "torchrun", "runs a Python script as distributed ranks", _torchrun)


# --------------------------------------------------------------------------- packages

_PIP_GLOBAL_FLAGS = ("-q -v -qq -vv -vvv -U -I -y --yes --quiet --verbose --no-cache-dir --disable-pip-version-check "
                     "--isolated --no-input --no-color --require-virtualenv --exists-action --break-system-packages "
                     "--system --no-python-downloads --offline --native-tls --preview --no-progress")
_PIP_GLOBAL_VALUED = ("--root-user-action --proxy --retries --timeout --cache-dir --log --python -p "
                      "--progress-bar --trusted-host --cert --client-cert --use-feature --use-deprecated "
                      "--directory --project --color --config-file")
_PIP_INSTALL = opts(
    _PIP_GLOBAL_FLAGS + " --upgrade --force-reinstall --no-deps --pre --user --no-build-isolation --no-index "
    "--ignore-installed --no-warn-script-location --no-clean --require-hashes --dry-run --compile --no-compile "
    "--prefer-binary --use-pep517 --no-use-pep517 --no-warn-conflicts --ignore-requires-python --reinstall "
    "--no-binary-all --no-editable --strict --no-sources --all-extras --link-mode=copy --refresh --no-verify-hashes --exact",
    valued=_PIP_GLOBAL_VALUED + " -r -c -e -i -f -t -C --requirement --constraint --editable --index-url "
    "--extra-index-url --find-links --target --prefix --root --upgrade-strategy --no-binary --only-binary "
    "--platform --python-version --implementation --abi --config-settings --src --report --global-option "
    "--build-option --index --default-index --index-strategy --torch-backend --prerelease --link-mode "
    "--reinstall-package --override --extra --resolution --python-platform --exclude-newer -P --upgrade-package")
_PIP_INDEX = ("-i", "--index-url", "--extra-index-url", "-f", "--find-links", "--index", "--default-index")


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
        if option in _PIP_INDEX and value is not None:
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


_add("package", "pip", "installs Python packages (also `pip3`, `pip3.12`)",
     lambda name, args, cwd: pip_effects([name, *args], cwd))
_add("package", "uv", "the uv Python package manager (`uv pip install`, `uv run`, `uv venv`)", _uv)
_add("package", "apt-get apt", "installs Debian packages",
     _system_packages("apt", installs=("install", "reinstall", "upgrade", "dist-upgrade", "full-upgrade",
                                       "build-dep"),
                      removes=("remove", "purge", "autoremove"), refresh=("update",),
                      harmless=("clean", "autoclean", "show", "list", "search", "policy", "cache", "download",
                                "source", "check", "changelog")))
_add("package", "yum dnf microdnf", "installs RPM packages",
     _system_packages("yum", installs=("install", "reinstall", "upgrade", "update", "groupinstall", "localinstall"),
                      removes=("remove", "erase", "autoremove"), refresh=("makecache",),
                      harmless=("clean", "info", "list", "search", "repolist", "check-update")))
_add("package", "conda mamba micromamba", "installs conda packages (`-c CHANNEL`), makes environments",
     lambda name, args, cwd: _conda(name, args, cwd))
_add("package", "npm", "installs Node packages",
     _system_packages("npm", installs=("install", "i", "ci", "add", "update"), removes=("uninstall", "remove", "rm"),
                      harmless=("ls", "list", "view", "config", "version", "--version", "cache", "prefix", "root")))
_add("package", "cargo", "builds Rust code and installs Rust programs (`cargo install`)",
     _system_packages("cargo", installs=("install",), removes=("uninstall",),
                      harmless=("--version", "version", "metadata", "tree")))
_add("package", "dpkg", "installs .deb files (`-i`) and lists packages",
     lambda name, args, cwd: _dpkg(args, cwd))
_add("package", "apt-key", "adds keys to apt's keyring",
     lambda name, args, cwd: CommandEffects(writes=[Write("/etc/apt/trusted.gpg", "in-place edit")])
     if any(a in ("add", "adv") for a in args) else CommandEffects())
_add("package", "maturin", "builds a Rust/Python package (`develop`: installs it)",
     lambda name, args, cwd: _maturin(args, cwd))


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


def _dpkg(args: list[Word], cwd: Word | None) -> CommandEffects:
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


def _maturin(args: list[Word], cwd: Word | None) -> CommandEffects:
    here = cwd if cwd is not None else "."
    if args and args[0] == "develop":
        return CommandEffects(installs=[Install("maturin", (here,), editable=True)], reads=[here])
    if args and args[0] == "build":
        return CommandEffects(reads=[here], writes=[Write(under("target", here), "create")])
    raise _Unknown("a maturin command that is not in the vocabulary")


def _build(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """make/cmake/ninja/meson run the recipes of a build file the vocabulary does not read: a
    program (the interpreter decides, e.g. by whose build file it is) that reads the build folder
    (`-C DIR`, `-B DIR`, `-S DIR`, the working directory) and writes into it."""
    folder = next((args[k + 1] for k, w in enumerate(args[:-1]) if w in ("-C", "-B", "--build", "--directory")),
                  None)
    here = under(folder, cwd) if folder is not None else (cwd if cwd is not None else ".")
    if len(args) == 1 and args[0] in ("--version", "-v", "--help"):
        return CommandEffects()
    return CommandEffects(reads=[here], writes=[Write(here, "create")], programs=[(name, tuple(args))])


_add("build", "make cmake ninja meson scons bazel", "runs a build's recipes (a program the interpreter judges)",
     _build)


# --------------------------------------------------------------------------- containers

_DOCKER_RUN = opts(
    "-d -i -t -P --detach --interactive --tty --rm --privileged --init --read-only --publish-all --no-healthcheck "
    "--oom-kill-disable --sig-proxy --quiet -q --help",
    valued="-e -v -w -u -p -h -l -m -a -c --env --env-file --volume --mount --workdir --entrypoint --name --network "
           "--net --ipc --pid --uts --shm-size --device --group-add --security-opt --cap-add --cap-drop --user --gpus "
           "--ulimit --publish --hostname --add-host --label --label-file --runtime --memory --memory-swap --cpus "
           "--cpuset-cpus --cpuset-mems --restart --log-driver --log-opt --platform --pull --dns --tmpfs "
           "--stop-signal --stop-timeout --cgroupns --userns --cidfile --volumes-from --device-cgroup-rule --sysctl "
           "--expose --link --attach --mac-address --oom-score-adj --storage-opt --isolation --detach-keys "
           "--network-alias --health-cmd --health-interval --health-retries --health-timeout --memory-reservation "
           "--cpu-shares --blkio-weight --pids-limit --annotation --hooks-dir --tz --replace --userns-mode")


def _docker_run(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`docker run [opts] IMAGE [CMD...]`: environment (`-e`, `--env-file`), mounts (`-v`,
    `--mount`), working directory, entrypoint and command cross into the container."""
    p = parse(args, Options(_DOCKER_RUN.flags, _DOCKER_RUN.valued, stop=True))
    if not p.operands:
        raise _Unknown("no image")
    return CommandEffects(containers=[_docker_container(p, p.operands[0], tuple(p.operands[1:]), cwd)],
                          reads=[under(f, cwd) for f in p.values("--env-file", "--label-file")],
                          writes=[Write(under(f, cwd), "create") for f in p.values("--cidfile")])


def _docker_exec(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`docker exec [opts] CONTAINER CMD...`: runs CMD in a running container (its name as the image)."""
    p = parse(args, opts("-d -i -t --detach --interactive --tty --privileged",
                         valued="-e -w -u --env --env-file --workdir --user --detach-keys", stop=True))
    if len(p.operands) < 2:
        raise _Unknown("no container or no command")
    return CommandEffects(containers=[_docker_container(p, p.operands[0], tuple(p.operands[1:]), cwd)],
                          reads=[under(f, cwd) for f in p.values("--env-file")])


def _docker_container(p: Parsed, image: Word, argv: tuple[Word, ...], cwd: Word | None) -> Container:
    env: list[tuple[str, Word]] = []
    from_host: list[str] = []
    for value in p.values("-e", "--env"):
        if isinstance(value, Unknown):
            raise _Unknown(f"an environment word that is unknown ({value.why})")
        key, eq, text = value.partition("=")
        env.append((key, text if eq else Unknown(f"{key} passed from the host")))
        if not eq:
            from_host.append(key)
    mounts = [_volume(v, cwd) for v in p.values("-v", "--volume")]
    mounts += [_mount_option(v, cwd) for v in p.values("--mount")]
    entry = p.last("--entrypoint")
    return Container(image=image, env=tuple(env), env_from_host=tuple(from_host),
                     env_files=tuple(under(f, cwd) for f in p.values("--env-file")),
                     mounts=tuple(m for m in mounts if m is not None), workdir=p.last("-w", "--workdir"),
                     entrypoint=entry, argv=argv)


def _volume(spec: Word, cwd: Word | None) -> tuple[Word, Word]:
    """`-v HOST:CONTAINER[:opts]` (a named or anonymous volume: its name as the host side)."""
    if isinstance(spec, Unknown):
        return (spec, Unknown(f"the container side of an unknown mount ({spec.why})"))
    parts = spec.split(":")
    if len(parts) == 1:
        return (Unknown(f"an anonymous volume at {spec}"), spec)
    host = parts[0]
    return (under(host, cwd) if host.startswith((".", "/")) else host, parts[1])


def _mount_option(spec: Word, cwd: Word | None) -> tuple[Word, Word] | None:
    """`--mount type=bind,source=X,target=Y[,readonly]`; a tmpfs mount has no host side."""
    if isinstance(spec, Unknown):
        return (spec, Unknown(f"the container side of an unknown mount ({spec.why})"))
    fields = dict(part.partition("=")[::2] for part in spec.split(","))
    target = fields.get("target") or fields.get("dst") or fields.get("destination")
    if target is None:
        raise _Unknown(f"a mount without a target: `{spec}`")
    if fields.get("type") == "tmpfs":
        return None
    source = fields.get("source") or fields.get("src")
    return (under(source, cwd) if source else Unknown(f"an anonymous volume at {target}"), target)


def _docker_cp(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-a -L -q --archive --follow-link --quiet"))
    if len(p.operands) != 2:
        raise _Unknown("not SRC DST")
    src, dst = p.operands
    inside = re.compile(r"^[\w.-]+:")
    if isinstance(dst, str) and inside.match(dst):
        return CommandEffects(reads=[under(src, cwd)], writes=[Write(Unknown(f"{dst} inside a container"), "copy")])
    return CommandEffects(writes=[Write(under(dst, cwd), "copy")])


_DOCKER = _subcommands({
    "run": _docker_run, "exec": _docker_exec, "cp": _docker_cp,
    "pull": lambda name, args, cwd: CommandEffects(downloads=[Download(a, None) for a in args
                                                              if not (isinstance(a, str) and a.startswith("-"))]),
    "create": _docker_run,
    "load": lambda name, args, cwd: CommandEffects(reads=[under(a, cwd) for k, a in enumerate(args)
                                                          if k > 0 and args[k - 1] in ("-i", "--input")]),
    "save": lambda name, args, cwd: CommandEffects(writes=[Write(under(a, cwd), "create") for k, a in enumerate(args)
                                                           if k > 0 and args[k - 1] in ("-o", "--output")]),
    **{sub: _pure() for sub in ("ps", "images", "logs", "inspect", "info", "version", "stop", "kill", "rm", "rmi",
                                "wait", "stats", "top", "port", "network", "volume", "tag", "push", "login",
                                "logout", "start", "restart", "pause", "unpause", "container", "image", "system",
                                "events", "manifest", "context")},
}, spec=opts("-D --debug --tls --tlsverify", valued="-H --host --context --config --log-level -l"))


_ENROOT_START = opts("-r -w --root --rw", valued="-e -m -c --env --mount --conf", stop=True)


def _enroot_start(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`enroot start [--root] [--rw] [-e NAME[=V]] [-m SRC:DST] NAME [CMD...]`."""
    p = parse(args, _ENROOT_START)
    if not p.operands:
        raise _Unknown("no container")
    q = Parsed([("-e", v) for v in p.values("-e", "--env")] + [("-v", v) for v in p.values("-m", "--mount")],
               [])
    box = _docker_container(q, p.operands[0], tuple(p.operands[1:]), cwd)
    if p.values("-c", "--conf"):
        raise _Unknown("a configuration script (`--conf`) the vocabulary does not read")
    return CommandEffects(containers=[box])


def _enroot_import(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts(valued="-o -a --output --arch"))
    if not p.operands:
        raise _Unknown("no image")
    output = p.last("-o", "--output")
    dest = under(output, cwd) if output is not None else Unknown("a .sqsh file named after the image")
    return CommandEffects(downloads=[Download(p.operands[0], dest)], writes=[Write(dest, "download")])


def _enroot_create(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-f --force", valued="-n --name"))
    if not p.operands:
        raise _Unknown("no image")
    label = p.last("-n", "--name")
    return CommandEffects(reads=[under(p.operands[0], cwd)],
                          writes=[Write(Unknown(f"enroot's container {_names([label])[0] if label else '(unnamed)'}"),
                                        "unpack")])


_ENROOT = _subcommands({
    "start": _enroot_start, "import": _enroot_import, "create": _enroot_create,
    "list": _pure(), "version": _pure(), "export": _pure(),
    "remove": lambda name, args, cwd: CommandEffects(writes=[Write(Unknown(f"enroot's container {n}"), "delete")
                                                             for n in _names([a for a in args if a not in
                                                                              ("-f", "--force")])]),
})


def _apptainer(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`apptainer exec|run|shell [opts] IMAGE [CMD...]` (`-B SRC[:DST],...`, `--env K=V,...`,
    `--pwd DIR`); `pull`/`build` write an image."""
    if not args:
        raise _Unknown("no subcommand")
    sub, rest = args[0], args[1:]
    if sub in ("pull", "build"):
        p = parse(rest, opts("-F --force --fakeroot --sandbox --disable-cache", valued="--name"))
        if not p.operands:
            raise _Unknown("no image")
        dest = under(p.operands[0], cwd)
        source = p.operands[1:] or [Unknown("the image named by the file")]
        return CommandEffects(downloads=[Download(source[0], dest)], writes=[Write(dest, "create")])
    if sub not in ("exec", "run", "shell"):
        if sub in ("version", "inspect", "--version", "cache", "instance"):
            return CommandEffects()
        raise _Unknown(f"subcommand `{_names([sub])[0]}` is not in the vocabulary")
    p = parse(rest, opts("--nv --rocm --cleanenv -e --containall -C --contain -c --writable -w --fakeroot -f "
                         "--no-home --no-mount --writable-tmpfs --compat --no-init --userns -u",
                         valued="-B --bind --mount --env --env-file --pwd -H --home --overlay -o --security "
                                "--app --network --hostname", stop=True))
    if not p.operands:
        raise _Unknown("no image")
    binds = [part for value in p.values("-B", "--bind") for part in _split_list(value)]
    envs = [part for value in p.values("--env") for part in _split_list(value)]
    q = Parsed([("-e", e) for e in envs] + [("-v", b if isinstance(b, Unknown) or ":" in b else f"{b}:{b}")
                                           for b in binds] + [("-w", w) for w in p.values("--pwd")]
               + [("--env-file", f) for f in p.values("--env-file")], [])
    argv = tuple(p.operands[1:]) if sub == "exec" else ()
    return CommandEffects(containers=[_docker_container(q, p.operands[0], argv, cwd)])


def _split_list(value: Word) -> list[Word]:
    return value.split(",") if isinstance(value, str) else [value]


_add("container", "docker podman", "runs and manages containers (`run`/`exec`: env, mounts, workdir cross in)",
     _DOCKER)
_add("container", "enroot", "imports, creates and starts enroot containers", _ENROOT)
_add("container", "apptainer singularity", "runs Apptainer/Singularity images", _apptainer)


# --------------------------------------------------------------------------- Slurm

_SLURM = opts(
    "-l -u -Q -v -k -K -O -E -X -s -H -I --label --unbuffered --quiet --verbose --no-kill --overlap --exclusive "
    "--oversubscribe --pty --multi-prog --container-remap-root --no-container-remap-root --container-mount-home "
    "--no-container-mount-home --container-writable --container-readonly --no-container-entrypoint "
    "--container-entrypoint --no-container-env --kill-on-bad-exit --wait-all-nodes --hold --parsable --test-only "
    "--spread-job --contiguous --no-requeue --requeue --use-min-nodes --immediate --get-user-env --exact --whole "
    "--container-entrypoint-log --no-shell --mem-bind",
    valued="-N -n -c -w -x -p -t -J -A -o -e -i -m -D -d -q -C -W -G -S -a -F -b -M "
           "--nodes --ntasks --cpus-per-task --ntasks-per-node --nodelist --exclude --partition --time --job-name "
           "--account --gres --gpus --gpus-per-node --gpus-per-task --gpu-bind --cpu-bind --mem --mem-per-cpu "
           "--mem-per-gpu --mpi --jobid --het-group --output --error --input --distribution --export --chdir "
           "--container-image --container-mounts --container-workdir --container-name --container-env "
           "--container-save --reservation --qos --dependency --network --comment --constraint --segment "
           "--threads-per-core --cpus-per-gpu --wait --signal --time-min --nodefile --switches --wrap --array "
           "--begin --mail-type --mail-user --open-mode --ntasks-per-gpu --gpus-per-socket --sockets-per-node "
           "--cores-per-socket --cluster --clusters --licenses --priority --nice --export-file --deadline "
           "--container-image-save --tmp --hint --cpu-freq --profile --acctg-freq --uid "
           "--gid --core-spec --thread-spec --prolog --epilog --task-prolog --task-epilog --mincpus --tres-per-task "
           "--gres-flags --power --batch --extra --ntasks-per-core --ntasks-per-socket --reboot --bcast --x11 "
           "--propagate --resv-ports --send-libs --tres-bind",
    attached="--exclusive --kill-on-bad-exit --overlap --propagate", stop=True)


def _export_env(p: Parsed) -> tuple[list[tuple[str, Word]], list[str], bool]:
    """`--export=ALL,X=1,Y` → ([("X", "1")], ["Y"], clears): NONE clears the environment (the
    NAME=value pairs and names still pass); an unknown value fails closed."""
    env: list[tuple[str, Word]] = []
    names: list[str] = []
    clears = False
    for value in p.values("--export"):
        if isinstance(value, Unknown):
            raise _Unknown(f"`--export` with an unknown value ({value.why})")
        for part in value.split(","):
            if part in ("ALL", ""):
                continue
            if part == "NONE" or part == "NIL":
                clears = True
            elif "=" in part:
                key, _, text = part.partition("=")
                env.append((key, text))
            else:
                names.append(part)
    return env, names, clears


def _slurm_writes(p: Parsed, cwd: Word | None) -> list[Write]:
    return [Write(under(f, cwd), "create") for f in p.values("-o", "--output", "-e", "--error")
            if f not in ("/dev/null", "none")] + \
        [Write(under(f, cwd), "create") for f in p.values("--container-save", "--container-image-save")]


def _srun(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`srun [opts] CMD...` on the job's nodes; with `--container-image` (pyxis) in a container:
    `--container-mounts SRC:DST,...`, `--container-workdir`, `--container-env NAMES` (passed from
    the host), `--export=ALL,X=1` (set for the command)."""
    p = parse(args, _SLURM)
    if p.has("--multi-prog"):
        raise _Unknown("`--multi-prog` reads its programs from a file")
    env, names, clears = _export_env(p)
    chdir = p.last("-D", "--chdir")
    out = CommandEffects(writes=_slurm_writes(p, cwd), clears_env=clears,
                         reads=[under(f, cwd) for f in p.values("-i", "--input")])
    image = p.last("--container-image")
    if image is None and not p.values("--container-name"):
        if not p.operands:
            raise _Unknown("no command")
        out.runs = [(tuple(p.operands), tuple(env), under(chdir, cwd) if chdir is not None else None)]
        return out
    host_names = [n for value in p.values("--container-env") for n in _split_list(value)]
    if any(isinstance(n, Unknown) for n in host_names):
        raise _Unknown("`--container-env` with an unknown name")
    mounts = [_volume(m, cwd) for value in p.values("--container-mounts") for m in _split_list(value)]
    named = p.last("--container-name")
    out.containers = [Container(
        image=image if image is not None else Unknown(f"the container named {_names([named])[0]}"),
        env=tuple(env) + tuple((n, Unknown(f"{n} passed from the host")) for n in host_names if isinstance(n, str)),
        env_from_host=tuple([*names, *(n for n in host_names if isinstance(n, str))]),
        mounts=tuple(mounts), workdir=p.last("--container-workdir"), argv=tuple(p.operands))]
    return out


def _sbatch(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`sbatch [opts] FILE [args]` runs FILE as a batch script, `--wrap=TEXT` runs TEXT, neither:
    the script on standard input. The job's environment (`--export`) and folder (`--chdir`) go
    with it: the answer is `runs` of `bash FILE args` / `sh -c TEXT`."""
    p = parse(args, _SLURM)
    env, _names_, clears = _export_env(p)
    chdir = p.last("-D", "--chdir")
    where = under(chdir, cwd) if chdir is not None else None
    out = CommandEffects(writes=_slurm_writes(p, cwd), clears_env=clears)
    wraps = p.values("--wrap")
    if wraps:
        out.runs = [(("sh", "-c", text), tuple(env), where) for text in wraps]
    elif p.operands:
        out.runs = [(("bash", *p.operands), tuple(env), where)]
    else:
        out.shell_stdin = True
    return out


def _salloc(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, _SLURM)
    if not p.operands:
        return CommandEffects()
    return CommandEffects(runs=[(tuple(p.operands), (), None)])


def _sbcast(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-f -p -C --force --preserve --compress", valued="-F -j -s -t --fanout --jobid --size "
                                                                          "--timeout --exclude --send-libs"))
    if len(p.operands) != 2:
        raise _Unknown("not SOURCE DEST")
    return CommandEffects(reads=[under(p.operands[0], cwd)], writes=[Write(p.operands[1], "copy")])


_add("container", "srun", "runs a command on the job's nodes (in a pyxis container with `--container-image`)",
     _srun)
_add("shell", "sbatch", "submits a batch script (`FILE`, `--wrap=TEXT`) with its environment", _sbatch)
_add("wrapper", "salloc", "runs a command in a new allocation", _salloc)
_add("writer", "sbcast", "copies a file to every node of the job", _sbcast)


# --------------------------------------------------------------------------- engines, tools, sessions

_add("engine", """
vllm sglang trtllm-serve trtllm-llmapi-launch trtllm-bench atom dynamo lm_eval lighteval sgl-eval aiperf genai-perf
guidellm vllm-router sglang-router mooncake_master mooncake_client lmcache epp envoy pd-sidecar etcd etcdctl
mini-extra ns srtctl nats-server
""", "an inference engine, router, store or benchmark client (the interpreter classifies its argv)", _program)
_add("engine", "streamlit", "a dashboard web server (srt-slurm's run_dashboard.sh)", _program)


def _profiler(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`nsys profile [opts] CMD...`, `py-spy record [opts] -- CMD...`: runs CMD and writes the
    report (`-o`); other subcommands (`nsys stats`, `py-spy dump --pid`) only read."""
    if not args or args[0] not in ("profile", "launch", "record", "top"):
        return CommandEffects()
    p = parse(args[1:], opts(
        "-f -n -g -s --force-overwrite --stats --native --subprocesses --idle --gil --nonblocking "
        "--trace-fork-before-exec --cuda-memory-usage --show-output --kill --wait",
        valued="-o -t -d -y -c -r -p -F -e -w --output --trace --duration --delay --capture-range --sample "
               "--cuda-graph-trace --gpu-metrics-device --gpu-metrics-devices --cudabacktrace --python-sampling "
               "--session-new --export --rate --format --pid --capture-range-end --cpuctxsw --backtrace "
               "--nvtx-capture --osrt-threshold --gpuctxsw --sampling-period --python-backtrace "
               "--pytorch --cuda-flush-interval --env-var --force-overwrite --show-output --stop-on-exit",
        stop=True))
    out = CommandEffects(writes=[Write(under(f, cwd), "create") for f in p.values("-o", "--output")])
    if p.operands:
        out.runs = [(tuple(p.operands), (), None)]
    return out


def _tmux(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`tmux new-session -d -s NAME [TEXT]`: TEXT runs as shell text; `send-keys` types into a
    pane (not interpreted); other subcommands manage sessions."""
    if not args:
        raise _Unknown("an interactive session")
    sub, rest = args[0], args[1:]
    if sub in ("new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane"):
        p = parse(rest, opts("-d -A -D -E -P -X -h -v -b -f -k -Z", valued="-s -n -c -t -x -y -F -e -l -p"))
        return _joined_text(p.operands) if p.operands else CommandEffects()
    if sub in ("kill-session", "kill-server", "kill-window", "ls", "list-sessions", "has-session", "has",
               "list-windows", "capture-pane", "attach", "attach-session", "display-message", "wait-for"):
        return CommandEffects()
    raise _Unknown(f"subcommand `{_names([sub])[0]}` is not in the vocabulary")


def _kubectl(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """kubectl: reading a cluster is harmless; what it deploys or runs there (`apply`, `create`,
    `exec`, `run`, `patch`, ...) is not interpreted."""
    words = [w for w in args if not (isinstance(w, str) and w.startswith("-"))]
    sub = words[0] if words else None
    if sub in ("get", "describe", "logs", "wait", "version", "config", "top", "port-forward", "api-resources",
               "cluster-info", "explain", "rollout", "delete", "label", "annotate"):
        return CommandEffects()
    raise _Unknown("deploys to or runs in a cluster; not interpreted")


_add("system", "nsys py-spy", "profiles a command (runs it; `-o` writes the report)", _profiler)
_add("shell", "tmux", "runs shell text in a detached terminal session", _tmux)
_add("container", "kubectl", "drives a Kubernetes cluster", _kubectl)
_add("pure", "deactivate", "leaves a Python virtual environment (a function `activate` defines)", _pure())
_add("not-a-command", "c Expand", "no command: a typo (runners/launch_h100-greennode.sh) and text pasted from a GitHub page",
     _not_command("command not found"))


def _sg(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`sg GROUP [-c] TEXT`: runs TEXT as shell text with GROUP as the group (`sg GROUP` alone:
    a shell on standard input)."""
    rest = [w for w in args[1:] if w != "-"]
    if not args:
        raise _Unknown("no group")
    if rest[:1] == ["-c"]:
        rest = rest[1:]
    if not rest:
        return CommandEffects(shell_stdin=True)
    if len(rest) != 1:
        raise _Unknown("more than one word of text")
    return CommandEffects(shell_text=[(rest[0], ())])


_add("wrapper", "sg", "runs shell text with another group (`sg docker -c TEXT`)", _sg)
