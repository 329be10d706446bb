"""A shell word's value as the interpreter knows it: text, or an explicit unknown with its reason.

A `Word` is either `str` (the exact text bash would produce) or `Unknown` (a value the
interpreter could not resolve: a variable nobody set, a command substitution of a program it
does not model, a value over a cap). Unknowns carry why, so a row that depends on one can say
"could not verify" naming the cause instead of guessing.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field, replace
from typing import Iterable, Optional, Union


@dataclass(frozen=True)
class Unknown:
    """A value the interpreter could not resolve, and why (shown to the reviewer). `prefix` is
    the known text before the first unknown part (`--jobid=` of `--jobid=$(...)`): a word that
    starts with a known `-x` is that option, one that starts with other known text is no option."""

    why: str
    prefix: str = ""
    suffix: str = ""  # the known text after the last unknown part (`/lib.sh` of `$ROOT/lib.sh`)
    # The characters the value can hold, where what made it bounds them (`tr -c 'a-z_' _`, a
    # host name, digits of arithmetic): `recipes.launch.chars`. None: any character. Whatever
    # transforms a value into one it cannot bound clears it (`unclassed`).
    chars: Optional[frozenset] = field(default=None, kw_only=True)

    def __str__(self) -> str:  # pragma: no cover - for debugging output only
        return f"<unknown: {self.why}>"


class Split(Unknown):
    """An unquoted expansion whose value is not known, standing alone as a word (`$FLAGS`,
    `$(cat args)`): bash splits it, so it may be any number of words. Readers that count on one
    word per position (a flag's value: recipes.launch.knobs) must not."""


@dataclass(frozen=True)
class OrEmpty(Unknown):
    """A value the arms of an undecided branch left empty in one arm and set in another (`SEL=""`,
    then `SEL="$candidate"` in a loop that may find one): empty, or text that starts with
    `set_prefix` and ends with `set_suffix`. Any reader sees an unknown that may be empty (no
    known start); `${SEL:-default}` is the set value or the default, and keeps their common ends."""

    set_prefix: str = ""
    set_suffix: str = ""


def _set_ends(value: "Word") -> "list[tuple[str, str]]":
    """The (start, end) of each non-empty value `value` may be."""
    if isinstance(value, str):
        return [(value, value)] if value else []
    if isinstance(value, OrEmpty):
        return [(value.set_prefix, value.set_suffix)]
    if isinstance(value, OneOf):
        return [(v, v) if isinstance(v, str) else (v.prefix, v.suffix) for v in value.values if v != ""]
    return [(value.prefix, value.suffix)]


def or_empty(values: list, why: str) -> "OrEmpty":
    """Empty, or one of `values` (texts, unknowns with known ends, values already empty-or-set or
    with alternatives): what the set ones start and end with."""
    ends = [e for v in values for e in _set_ends(v)]
    if not ends:
        return OrEmpty(why)
    head = posixpath.commonprefix([p for p, _ in ends])
    tail = posixpath.commonprefix([s[::-1] for _, s in ends])[::-1]
    return OrEmpty(why, set_prefix=head[:256], set_suffix=tail[-256:])


# Where a text with holes (`Holed.template`) has a part the interpreter could not resolve.
HOLE = "\x01hole\x01"


@dataclass(frozen=True)
class Holed(Unknown):
    """A text with some parts unknown (a here-document whose `$(seq 1 $N)` is not known):
    unknown to any reader, and `template`, the text with HOLE for each unknown part, for a reader
    that can use the rest (a config file's other keys: checks.acceptance_runs). `holes`: the
    unknown parts in order, when the text was joined from parts whose characters are bounded
    (`chars`): shell text with such holes may still be read (`recipes.launch.chars.fill`)."""

    template: str = ""
    holes: tuple = ()


def unclassed(word: "Word") -> "Word":
    """`word` without the characters it was known to hold: for a value a transformation may
    change into other characters (a replacement, a case change, escapes)."""
    if isinstance(word, Holed) and word.holes:
        return Unknown(word.why, word.prefix, word.suffix)  # its template is no longer its text
    if isinstance(word, Unknown) and word.chars is not None:
        return replace(word, chars=None)
    return word


def chars_of(word: "Word") -> "Optional[frozenset]":
    """The characters a word can hold: a text's own, an unknown's bound, else None."""
    return frozenset(word) if isinstance(word, str) else word.chars


class Rest(Unknown):
    """The unknown end of an array whose undecided branch arms left it with different elements:
    how many elements it holds is unknown too (`m+=(x)` in one arm only)."""


@dataclass(frozen=True)
class OneOf(Unknown):
    """A word the arms of an undecided branch left different, each arm's value known: one of
    `values` (at most `MAX_ALTERNATIVES`). It is unknown to every reader that does not look for
    alternatives; a command whose words hold one runs once per value (`Interpreter.run_argv`).
    `label` names the variable and the branch (`one of 2 values of X set on an undecided branch
    (...)`): the runs carry it in `under`."""

    values: tuple[Word, ...] = ()
    label: str = ""


@dataclass(frozen=True)
class OneOfRest(Rest):
    """The end of an array the arms of an undecided branch left different in length or
    elements, each arm's known: one of `values`, each a run of words (`()` or `(--exclude X)`)."""

    values: tuple[tuple[Word, ...], ...] = ()
    label: str = ""


MAX_ALTERNATIVES = 4  # values a variable keeps from an undecided branch; past it, plain unknown


def alternatives(word: "Word") -> "list[tuple[Word, ...]] | None":
    """The runs of words a word may stand for (each value of a `OneOf` is one word), else None."""
    if isinstance(word, OneOfRest):
        return list(word.values)
    if isinstance(word, OneOf):
        return [(v,) for v in word.values]
    return None


def picks(words: "Iterable[Word]", cap: int) -> "list[dict[Word, int]] | None":
    """Every choice of one value for each word with alternatives among `words` (the same word
    twice is one choice: a variable has one value), as word -> index; None past `cap` choices."""
    distinct = list(dict.fromkeys(w for w in words if isinstance(w, (OneOf, OneOfRest))))
    out: list[dict[Word, int]] = [{}]
    for w in distinct:
        out = [{**p, w: i} for p in out for i in range(len(alternatives(w) or ()))]
        if len(out) > cap:
            return None
    return out


def combinations(words: "list[Word]", cap: int) -> "list[tuple[list[Word], tuple[tuple[str, str], ...]]] | None":
    """Every list of words `words` may stand for, each word with alternatives replaced by one of
    its values, with what was chosen: (the word's label, the value shown); None past `cap`."""
    chosen = picks(words, cap)
    if chosen is None:
        return None
    out = []
    for pick in chosen:
        run: list[Word] = []
        for w in words:
            run += (alternatives(w) or [])[pick[w]] if w in pick else [w]
        out.append((run, tuple((w.label, _shown((alternatives(w) or [])[i])) for w, i in pick.items())))
    return out


def _shown(words: "tuple[Word, ...]") -> str:
    if not words:
        return "no words"
    text = " ".join(w if isinstance(w, str) else "<unknown>" for w in words)
    return f"`{text if len(text) <= 80 else text[:77] + '...'}`"


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
