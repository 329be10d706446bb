"""A command's words split into options and operands, as getopt/argparse-style parsers read them,
failing closed: the vocabulary's handlers (`recipes.launch.vocabulary`) describe each command's
options once (`Options`) and read the operands from `parse`.

A command is *risky* when some option of it writes, runs or downloads something (`sed -i`,
`sort -o`, `tar --to-command`): there an option the spec does not list, or an unknown word where
an option could be (before the first operand: `sed $OPTS file`), makes the answer unknown; an
unknown word after an operand is an operand (`sed -i 's/a/b/' "$F"` edits an unknown file).
A command none of whose options has such an effect (`cat`, `head`, `wc`) reads an unlisted
option as a flag and an unknown word as an operand: nothing it could hide changes what the
command does to the world.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Sequence

from .words import Unknown, Word


@dataclass(frozen=True)
class Options:
    flags: frozenset[str] = frozenset()      # `-n`, `--quiet`: no value
    valued: frozenset[str] = frozenset()     # `-o FILE`, `-oFILE`, `--output FILE`, `--output=FILE`
    attached: frozenset[str] = frozenset()   # a value only when attached: `-i.bak`, `--in-place=.bak`
    risky: bool = True
    stop: bool = False                       # options end at the first operand (wrappers, interpreters)


def opts(flags: str = "", valued: str = "", attached: str = "", *, risky: bool = True, stop: bool = False) -> Options:
    """An `Options` from space-separated option spellings."""
    return Options(frozenset(flags.split()), frozenset(valued.split()), frozenset(attached.split()), risky, stop)


@dataclass
class Parsed:
    options: list[tuple[str, Word | None]]
    operands: list[Word]

    def has(self, *names: str) -> bool:
        return any(name in names for name, _ in self.options)

    def values(self, *names: str) -> list[Word]:
        return [value for name, value in self.options if name in names and value is not None]

    def last(self, *names: str) -> Word | None:
        found = self.values(*names)
        return found[-1] if found else None


class OptionError(Exception):
    """A word the command's option parser would not read as the spec says (the reason)."""


def parse(args: Sequence[Word], spec: Options) -> Parsed:
    """Options and operands of `args`; raises `OptionError` naming what is not understood."""
    out = Parsed([], [])
    k, only_operands = 0, False
    while k < len(args):
        word = args[k]
        k += 1
        if only_operands:
            out.operands.append(word)
            continue
        if isinstance(word, Unknown):
            if word.prefix.startswith("--") and "=" in word.prefix:
                # `--jobid=$(...)`: a known option whose value is not known.
                name = word.prefix.split("=", 1)[0]
                if name in spec.valued:
                    out.options.append((name, Unknown(word.why, word.prefix.split("=", 1)[1], word.suffix)))
                    continue
                raise OptionError(f"`{name}` with a value not known is not in the vocabulary")
            if word.prefix and not word.prefix.startswith("-"):
                out.operands.append(word)  # starts with known text that is no option: an operand
                only_operands = spec.stop
                continue
            if spec.risky and not out.operands:
                raise OptionError(f"an unknown word where an option could be ({word.why})")
            out.operands.append(word)
            only_operands = spec.stop
            continue
        if word == "--":
            only_operands = True
            continue
        if word == "-" or not word.startswith("-"):
            out.operands.append(word)
            only_operands = spec.stop
            continue
        if word.startswith("--"):
            k = _long(word, args, k, spec, out)
        else:
            k = _short(word, args, k, spec, out)
    return out


def _long(word: str, args: Sequence[Word], k: int, spec: Options, out: Parsed) -> int:
    name, eq, value = word.partition("=")
    if name in spec.valued:
        return _valued(name, value if eq else None, args, k, out)
    if name in spec.attached:
        out.options.append((name, value if eq else None))
        return k
    if name in spec.flags and (not eq or value in ("true", "false")):  # `--rm=true` (docker, nsys)
        out.options.append((name, None) if value != "false" else (name + "=false", None))
        return k
    if spec.risky:
        raise OptionError(f"option `{name}` is not in the vocabulary")
    out.options.append((name, value if eq else None))
    return k


def _valued(name: str, attached: str | None, args: Sequence[Word], k: int, out: Parsed) -> int:
    """An option that takes a value: attached (`-oFILE`, `--output=FILE`) or the next word."""
    if attached is not None:
        out.options.append((name, attached))
        return k
    if k >= len(args):
        raise OptionError(f"`{name}` without its value")
    out.options.append((name, args[k]))
    return k + 1


def _short(word: str, args: Sequence[Word], k: int, spec: Options, out: Parsed) -> int:
    j = 1
    while j < len(word):
        name, rest = "-" + word[j], word[j + 1:]
        if name in spec.valued:
            return _valued(name, rest or None, args, k, out)
        if name in spec.attached:
            out.options.append((name, rest or None))
            return k
        if name not in spec.flags and spec.risky:
            raise OptionError(f"option `{name}` (in `{word}`) is not in the vocabulary")
        out.options.append((name, None))
        j += 1
    return k


def respelled(args: Sequence[Word], spellings: dict[str, str]) -> list[Word]:
    """`args` with the single-dash long options of a command (`wget -nv`, `unsquashfs -dest`)
    spelled as the long options the spec lists (`--no-verbose`, `--dest`)."""
    return [spellings.get(w, w) if isinstance(w, str) else w for w in args]


def under(path: Word, base: Word | None) -> Word:
    """`path` resolved against the directory `base` (None: left as written). A relative path under
    an unknown directory is unknown."""
    if isinstance(path, Unknown) or path.startswith("/") or base is None:
        return path
    if isinstance(base, Unknown):
        return Unknown(f"`{path}` under an unknown directory ({base.why})")
    return posixpath.normpath(posixpath.join(base, path))
