"""A shell word's value as the interpreter knows it: text, or an explicit unknown with its reason.

A `Word` is either `str` (the exact text bash would produce) or `Unknown` (a value the
interpreter could not resolve: a variable nobody set, a command substitution of a program it
does not model, a value over a cap). Unknowns carry why, so a row that depends on one can say
"could not verify" naming the cause instead of guessing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union


@dataclass(frozen=True)
class Unknown:
    """A value the interpreter could not resolve, and why (shown to the reviewer). `prefix` is
    the known text before the first unknown part (`--jobid=` of `--jobid=$(...)`): a word that
    starts with a known `-x` is that option, one that starts with other known text is no option."""

    why: str
    prefix: str = ""
    suffix: str = ""  # the known text after the last unknown part (`/lib.sh` of `$ROOT/lib.sh`)

    def __str__(self) -> str:  # pragma: no cover - for debugging output only
        return f"<unknown: {self.why}>"


@dataclass(frozen=True)
class OrEmpty(Unknown):
    """A value the arms of an undecided branch left empty in one arm and set in another (`SEL=""`,
    then `SEL="$candidate"` in a loop that may find one): empty, or text that starts with
    `set_prefix` and ends with `set_suffix`. Any reader sees an unknown that may be empty (no
    known start); `${SEL:-default}` is the set value or the default, and keeps their common ends."""

    set_prefix: str = ""
    set_suffix: str = ""


class Rest(Unknown):
    """The unknown end of an array whose undecided branch arms left it with different elements:
    how many elements it holds is unknown too (`m+=(x)` in one arm only)."""


@dataclass(frozen=True)
class Installed(Unknown):
    """Where a program is installed (`command -v python3`): a path the bot cannot know, ending
    in `/NAME`; running that path runs the program NAME that a PATH look-up finds. `also`: the
    paths ending in `/NAME` that other arms of an undecided branch set instead (`$DIR/uv`, where
    an installer put it): running the word runs one of them, each as shipped unless the launch
    wrote it or it is a repository file (`Interpreter.run_argv` checks)."""

    also: tuple[str, ...] = ()

    @property
    def program(self) -> str:
        return self.suffix[1:]


@dataclass(frozen=True)
class Downloaded(Unknown):
    """The text of a download (`curl -fsSL URL`, its output): unknown, but from `url`, so that
    running it as shell code (`curl URL | sh`) can be judged by where it comes from."""

    url: str = ""


Word = Union[str, Unknown]
