"""What the vocabulary's handlers share: the handler type, the "not understood" exception, and the
handlers of whole families (readers, writers of every operand, copies, wrappers, subcommands)."""
from __future__ import annotations

import posixpath
import re
from typing import Callable

from ..effects import CommandEffects, Copy, Write
from ..options import Options, Parsed, opts, parse, under
from ..words import Unknown, Word


Handler = Callable[[Word, list[Word], "Word | None"], CommandEffects]


class _Unknown(Exception):
    """A form of a known command the vocabulary does not understand (the reason)."""


def _pure(spec: Options | None = None) -> Handler:
    """No effect on files (prints, asks the system, sleeps); `spec` when an option could have one."""
    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        if spec is not None:
            parse(args, spec)
        return CommandEffects()
    return handle


def _reads(valued: str = "", *, write: str = "") -> Options:
    """The options of a reader: those that take a value (`head -n 5`), and `write` ones that name
    a file it writes (`tree -o FILE`): with such an option the reader is risky (fails closed)."""
    return opts(valued=f"{valued} {write}", risky=bool(write))


def _reader(spec: Options, *, program_first: bool = False, program_opts: tuple[str, ...] = (),
            read_opts: tuple[str, ...] = (), write_opts: tuple[str, ...] = ()) -> Handler:
    """Reads its file operands (after a program/pattern operand unless one of `program_opts`
    gave it) and the files of `read_opts`; no operand: standard input. `write_opts` name files
    it writes (`sort -o FILE`)."""
    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        p = parse(args, spec)
        files = p.operands
        if program_first and not p.has(*program_opts):
            files = files[1:]
        reads = [under(f, cwd) for f in (*p.values(*read_opts), *files) if f != "-"]
        writes = [Write(under(f, cwd), "create") for f in p.values(*write_opts) if f != "-"]
        return CommandEffects(reads=reads, writes=writes)
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


# Patterns that leave out only git's own folder, which the bot's view of the checkout does not
# hold anyway: a copy with other excludes is not a copy of the checkout.
_GIT_ONLY = frozenset({".git", ".git/", "./.git", "*/.git", "**/.git", ".git/*", "*/.git/*", "/.git"})


def _only_git(patterns: list[Word]) -> bool:
    return all(isinstance(p, str) and p in _GIT_ONLY for p in patterns)


def _tree_copy(source: Word, dest: Word) -> Copy:
    """The files of `source` land at `dest`."""
    return Copy("tree", dest, ((source, ""),))


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
    while env_words and rest and (pair := _assignment(rest[0])) is not None:
        env.append(pair)
        rest.pop(0)
    if not rest:
        if needs_command:
            raise _Unknown("no command to run")
        return CommandEffects()
    return CommandEffects(runs=[(tuple(rest), tuple(env), chdir)])


_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _assignment(word: Word) -> tuple[str, Word] | None:
    """`NAME=value` as (NAME, value); a word whose known start is `NAME=` (`HF_TOKEN=$HF_TOKEN`)
    has an unknown value; anything else is no assignment."""
    if isinstance(word, str):
        if not _ASSIGNMENT.match(word):
            return None
        name, _, value = word.partition("=")
        return name, value
    if not _ASSIGNMENT.match(word.prefix):
        return None
    name, _, start = word.prefix.partition("=")
    return name, Unknown(word.why, start, word.suffix)


def _program(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """An engine or tool the interpreter classifies from its argv (servers, clients, CLIs)."""
    return CommandEffects(programs=[(name, tuple(args))])


def _subcommands(table: dict[str, Handler], *, spec: Options = Options()) -> Handler:
    """A command whose first operand picks what it does (`docker`, `hf`, `enroot`): the global
    options (`spec`, `docker -H HOST run`), then the subcommand's handler with the words after it."""
    globals_ = Options(spec.flags, spec.valued, spec.attached, spec.risky, stop=True)

    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        p = parse(args, globals_)
        if not p.operands:
            raise _Unknown("no subcommand")
        sub = p.operands[0]
        if isinstance(sub, Unknown):
            raise _Unknown(f"an unknown subcommand ({sub.why})")
        handler = table.get(sub)
        if handler is None:
            raise _Unknown(f"subcommand `{sub}` is not in the vocabulary")
        return handler(name, p.operands[1:], cwd)
    return handle


def _not_command(why: str) -> Handler:
    """A word the history's scripts run that is no command (a typo, pasted text): bash prints
    "command not found" there."""
    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        raise _Unknown(why)
    return handle


def _names(paths: list[Word]) -> list[str]:
    return [p if isinstance(p, str) else f"<{p.why}>" for p in paths]


def _words(name: Word, args: list[Word]) -> str:
    return " ".join(w if isinstance(w, str) else "<?>" for w in (name, *args))[:120]


def _joined_text(words: list[Word]) -> CommandEffects:
    """Words a command joins with spaces and runs as shell text (`ssh HOST ls -l`, `watch`, `tmux new`)."""
    if any(isinstance(w, Unknown) for w in words):
        raise _Unknown("shell text with an unknown word")
    return CommandEffects(shell_text=[(" ".join(w for w in words if isinstance(w, str)), ())])


def _split_list(value: Word) -> list[Word]:
    """`A,B,C`; of a value known only up to a point (`$WS:/workspace,$HF:$HF`), the items its
    known text completes, the item around its unknown part as unknown, and the items its known
    end completes (`/a:/b,$WS:/workspace,/dev/kfd:/dev/kfd`)."""
    if isinstance(value, str):
        return value.split(",")
    done = value.prefix.split(",")[:-1] if "," in value.prefix else []
    after = value.suffix.split(",")[1:] if "," in value.suffix else []
    rest = Unknown(value.why, value.prefix.rsplit(",", 1)[-1] if "," in value.prefix else value.prefix,
                   value.suffix.split(",", 1)[0])
    return [*done, rest, *after]


def _fixed_write(path: Word, how: str) -> Handler:
    """A command that always writes the same place (`ldconfig`: the library cache)."""
    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        return CommandEffects(writes=[Write(path, how)])
    return handle
