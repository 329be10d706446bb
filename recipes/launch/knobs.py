"""The settings a point's servers and benchmark client run with, read from its trace.

A trace (`recipes.launch.trace`) records each server and client process with its resolved
argv and the environment it sees, however a script built them (`printf -v`, arrays, `eval`,
a helper function's option handling, a variable set on the way into a container). `knobs`
reads those into `Knob` records, one per setting, so a check asks "which draft-precision flags
does this point's server get" without reading a script:

- a flag as each engine's argument parser reads it: `--a=b`, `--a b`, a boolean `--a` (its
  value is `true`); every occurrence is kept and the last of each name is marked `wins`, as
  argparse (and srtctl's own parser) keep the last;
- a key inside a JSON-valued flag (`--speculative-config '{"quantization": "fp8"}'`), with its
  parent flag as written and its depth (1: a key of the object itself, as an engine that reads
  the object's own keys sees it; 2 and more: inside a nested object or list);
- an environment variable the process sees (less what it inherits unchanged from the point's
  inputs: those are the master config's own values, read where they are written);
- a word the interpreter could not resolve where a flag may stand (a whole unknown word, the
  unknown end of an array) is an `opaque` knob: any flag may hide in it.

`settings_in_force(effect)` keeps what one server's engine reads (each flag's last occurrence, the
own keys of a JSON flag in force, its environment) and says why its command line cannot be read
whole; `spec_values` reads its speculative settings from those (flags, or a JSON block per the
engine's recipes.engines SpecFields) and `speculates` whether it starts speculative decoding
(Check 11, and `ServingView.is_speculative` for a point a launcher starts).

Each knob keeps the `Effect` it came from: `effect.site` and `effect.where()` are its evidence
(file:line and the chain that led there) and `effect.under` the undecided branches around it.
The srt-slurm hook's SERVER/CLIENT effects carry the recipe's values as `a.b.c=value` items, not
a command line: those are read from the parsed recipe (`recipes.srt`), not here.

Pure, and memoised per trace: the points of one arm share one trace.
"""
from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, replace
from typing import Any, Iterable, Optional

from recipes.values import flag_name

from .trace import CLIENT, SERVER, Effect, Trace
from .words import Rest, Split, Unknown, Word

SERVER_FLAG = "server flag"
SERVER_ENV = "server env"
CLIENT_FLAG = "client flag"
CLIENT_ENV = "client env"
JSON_KEY = "json key"

BARE = "true"           # the value of a boolean flag written without one
RECIPE_EFFECT = "srt-slurm"  # the `how` of the srt hook's SERVER/CLIENT effects
MAX_JSON_CHARS = 100_000
MAX_JSON_KEYS = 2_000
_MEMO = "_knobs"


@dataclass(frozen=True)
class Knob:
    """One setting of one server or client process."""

    name: str          # as written: `--speculative-config`, `quantization`, `SGLANG_X` ("" when opaque)
    key: str           # recipes.values.flag_name(name)
    value: Word        # the text, or Unknown (why)
    kind: str          # SERVER_FLAG, SERVER_ENV, CLIENT_FLAG, CLIENT_ENV or JSON_KEY
    effect: Effect     # the process it is given to: `site`, `where()`, `under`
    parent: str = ""   # JSON_KEY: the flag holding the JSON, as written
    wins: bool = True  # the last occurrence of its name in that process (the one in force)
    bare: bool = False  # a flag written without a value
    opaque: bool = False  # an unresolved word where any flag may stand
    depth: int = 0     # JSON_KEY: 1 for a key of the flag's object itself, more when nested

    @property
    def role(self) -> str:
        """"server" or "client": whose setting it is."""
        return "client" if self.effect.kind == CLIENT else "server"

    @property
    def known(self) -> bool:
        return isinstance(self.value, str) and not self.opaque

    @property
    def shown(self) -> str:
        """`--name=value` (`parent name=value` for a JSON key) as a reviewer reads it."""
        value = self.value if isinstance(self.value, str) else f"<unknown: {self.value.why}>"
        if self.opaque:
            return f"a word the bot could not resolve ({value})"
        if self.kind == JSON_KEY:
            return f"{self.parent} {self.name}={value}"
        return f"{self.name}={value}"


def is_recipe_effect(effect: Effect) -> bool:
    """The srt hook's SERVER/CLIENT effect: the recipe's values as items, read from the recipe."""
    return effect.how.startswith(RECIPE_EFFECT)


def servers(trace: Trace | Iterable[Effect]) -> list[Effect]:
    """The engines' server processes (the srt hook's recipe effect excepted)."""
    return [e for e in trace if e.kind == SERVER and not is_recipe_effect(e)]


def clients(trace: Trace | Iterable[Effect]) -> list[Effect]:
    """The benchmark client and eval processes (the srt hook's recipe effect excepted)."""
    return [e for e in trace if e.kind == CLIENT and not is_recipe_effect(e)]


def reached(trace: Trace | Iterable[Effect]) -> bool:
    """Whether the trace reached a server or a client at all (a launch that stops early, an
    `exit` the interpreter took, reaches neither: nothing can be read of what is served)."""
    return any(e.kind in (SERVER, CLIENT) for e in trace)


def knobs(trace: Trace) -> list[Knob]:
    """Every setting of the trace's servers and clients, in trace order (memoised per trace)."""
    cached = trace.__dict__.get(_MEMO)
    if cached is None or cached[0] != len(trace.effects):
        out: list[Knob] = []
        for e in trace.effects:
            if e.kind in (SERVER, CLIENT) and not is_recipe_effect(e):
                out.extend(effect_knobs(e))
        cached = trace.__dict__[_MEMO] = (len(trace.effects), out)
    return cached[1]


def effect_knobs(effect: Effect) -> list[Knob]:
    """One process's settings: its flags (and the keys of JSON-valued ones), then its env."""
    client = effect.kind == CLIENT
    flag_kind, env_kind = (CLIENT_FLAG, CLIENT_ENV) if client else (SERVER_FLAG, SERVER_ENV)
    out = _flags(effect, flag_kind)
    for name, value in effect.env:
        out.append(Knob(name=name, key=flag_name(name), value=value, kind=env_kind, effect=effect))
    return _mark_last(out)


def _is_option(word: Word) -> bool:
    if isinstance(word, str):
        return word.startswith("-") and len(word) > 1 and not _is_number(word)
    return word.prefix.startswith("-") and not _is_number(word.prefix)


def _option_text(word: Word) -> str:
    """What an option word says of itself: its text, or an unknown word's known start (`--tp=`
    of `--tp=$TP`)."""
    return word if isinstance(word, str) else word.prefix


def may_set(effect: Effect, keys: "set[str] | frozenset[str]") -> bool:
    """Whether the command can set a flag whose key (`flag_name`) is in `keys`: every flag its
    parser reads (`effect_knobs`) is named by an option word, so a command none of whose option
    words names one does not, and its settings need not be built."""
    return any(_is_option(w) and flag_name(_option_text(w).partition("=")[0]) in keys for w in effect.argv)


def _is_number(word: str) -> bool:
    try:
        float(word)
    except ValueError:
        return False
    return True


_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")


# Python's own options that take the next word as their value (`python3 -X dev -m ...`).
PY_OPTS_WITH_VALUE = frozenset({"-W", "-X", "-Q"})


def python_options_end(words: "tuple[Word, ...] | list[Word]", i: int = 0) -> int:
    """The index, from `i`, of the first of `words` after the Python interpreter's own options:
    a `-m`/`-c`, the script, or a word whose text is not known."""
    while i < len(words) and isinstance(words[i], str) and words[i].startswith("-") and words[i] not in ("-m", "-c"):
        i += 2 if words[i] in PY_OPTS_WITH_VALUE else 1
    return i


def _program_words(argv: tuple[Word, ...]) -> list[Word]:
    """The words the program's own parser reads: after `python3 [-u ...] -m MODULE` or
    `python3 SCRIPT`, else after the command's name."""
    head = argv[0] if argv else None
    if not isinstance(head, str) or not _PYTHON.fullmatch(posixpath.basename(head)):
        return list(argv[1:])
    i = python_options_end(argv, 1)
    return list(argv[i + 2:] if i < len(argv) and argv[i] in ("-m", "-c") else argv[i + 1:])


def _flags(effect: Effect, kind: str) -> list[Knob]:
    words = _program_words(effect.argv)
    out: list[Knob] = []
    i = 0
    while i < len(words):
        w = words[i]
        i += 1
        if isinstance(w, Rest) or (isinstance(w, Unknown) and not w.prefix):
            # An unknown number of words, or one whose text is unknown: any flag may be in it.
            out.append(Knob(name="", key="", value=w, kind=kind, effect=effect, opaque=True))
            continue
        if not _is_option(w):
            continue  # a positional word (the model of `vllm serve MODEL`, a script, a module)
        name, eq, rest = _option_text(w).partition("=")
        if eq:
            value: Word = rest if isinstance(w, str) else Unknown(w.why, prefix=rest, suffix=w.suffix)
            out.extend(_knob(name, value, kind, effect))
            continue
        if isinstance(w, Unknown):
            # `--$X`, `--a$X`: the flag's own name is unknown.
            out.append(Knob(name="", key="", value=w, kind=kind, effect=effect, opaque=True))
            continue
        nxt = words[i] if i < len(words) else None
        if nxt is None or _is_option(nxt) or isinstance(nxt, Rest):
            out.append(Knob(name=name, key=flag_name(name), value=BARE, kind=kind, effect=effect, bare=True))
            continue
        i += 1
        out.extend(_knob(name, nxt, kind, effect))
        if isinstance(nxt, Split) and not nxt.prefix:
            # Its value, or the value and more words (flags among them): any flag may be there.
            out.append(Knob(name="", key="", value=nxt, kind=kind, effect=effect, opaque=True))
    return out


def _knob(name: str, value: Word, kind: str, effect: Effect) -> list[Knob]:
    """A flag and, when its value is a JSON object, a knob per key inside it (breadth first)."""
    out = [Knob(name=name, key=flag_name(name), value=value, kind=kind, effect=effect)]
    obj = json_object(value)
    if obj is not None:
        _walk(obj, name, effect, out)
    return out


def json_object(value: Word) -> Optional[dict]:
    """A JSON-valued flag's object, or None (not JSON, not an object, too large, unknown)."""
    if not isinstance(value, str) or not value.lstrip().startswith("{") or len(value) > MAX_JSON_CHARS:
        return None
    try:
        obj = json.loads(value)
    except ValueError:
        return None
    return obj if isinstance(obj, dict) else None


def _walk(obj: object, parent: str, effect: Effect, out: list[Knob]) -> None:
    stack = [(obj, 1)]
    while stack and len(out) < MAX_JSON_KEYS:
        node, depth = stack.pop(0)
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for k, v in items:
            if isinstance(node, dict):
                shown = v if isinstance(v, str) else json.dumps(v, separators=(",", ":"))
                out.append(Knob(name=str(k), key=flag_name(str(k)), value=shown, kind=JSON_KEY, effect=effect,
                                parent=parent, depth=depth))
            if isinstance(v, (dict, list)):
                stack.append((v, depth + 1 if isinstance(node, dict) else depth))  # a list is no level


def _mark_last(found: list[Knob]) -> list[Knob]:
    """Every occurrence kept; `wins` only on the last of each (kind, name), and on a JSON key
    when the occurrence of the flag holding it wins (json.loads keeps the last of a key)."""
    holder: list[int] = []  # each knob's flag: its own index, or its JSON parent's
    for i, k in enumerate(found):
        holder.append(holder[-1] if k.kind == JSON_KEY and holder else i)
    last: dict[tuple, int] = {}
    for i, k in enumerate(found):
        if not k.opaque and k.kind != JSON_KEY:
            last[(k.kind, k.key)] = i
    out: list[Knob] = []
    for i, k in enumerate(found):
        if k.opaque:
            out.append(k)
        elif k.kind != JSON_KEY:
            out.append(k if last[(k.kind, k.key)] == i else _lost(k))
        else:
            parent = found[holder[i]]
            out.append(k if last[(parent.kind, parent.key)] == holder[i] else _lost(k))
    return out


def _lost(k: Knob) -> Knob:
    return replace(k, wins=False)


def find(found: Iterable[Knob], *names: str, kinds: Iterable[str] | None = None,
         parents: Iterable[str] | None = None) -> list[Knob]:
    """The knobs named one of `names` (any spelling), of some kinds; for JSON keys, inside one
    of `parents`."""
    wanted = {flag_name(n) for n in names}
    allowed = set(kinds) if kinds is not None else None
    holders = {flag_name(p) for p in parents} if parents is not None else None
    return [k for k in found if k.key in wanted and (allowed is None or k.kind in allowed)
            and (holders is None or flag_name(k.parent) in holders)]


def opaque(found: Iterable[Knob], *kinds: str) -> list[Knob]:
    """The unresolved words where a flag of `kinds` may stand."""
    return [k for k in found if k.opaque and (not kinds or k.kind in kinds)]


def brief(effect: Effect, last: int = 3) -> str:
    """`effect.where()` shortened for a sentence: its first hop (the runner's line) and its last
    `last` hops (the script line, the function, the effect's own line); evidence keeps it whole."""
    hops = effect.where().split(" -> ")
    if len(hops) <= last + 2:
        return " -> ".join(hops)
    return " -> ".join([hops[0], "..."] + hops[-last:])


def chain_note(effect: Effect) -> str:
    """The evidence note of a setting: the whole chain, and the undecided branches around it."""
    return f"via {effect.where()}" + (f"; under {'; '.join(effect.under)}" if effect.under else "")


def settings_in_force(effect: Effect) -> tuple[list[Knob], Optional[str]]:
    """One server's settings as its engine reads them: its environment, the last occurrence of
    each flag, and the own keys of the JSON object a flag in force holds (an engine reads
    `--speculative-config`'s object, not what is nested in it); and why its command line cannot
    be read whole (the first word where any flag may hide), or None."""
    found = effect_knobs(effect)
    hidden = opaque(found)
    why = f"a word of its command line is not known ({hidden[0].value.why})" if hidden else None
    return [k for k in found if not k.opaque and k.wins and k.depth <= 1], why


def spec_values(found: list[Knob], fields: Any) -> Optional[tuple[dict[str, Word], Optional[str]]]:
    """The speculative settings a server's settings in force (`settings_in_force`) give its engine, by
    recipes.values.flag_name; `fields` is the engine's recipes.engines SpecFields. Its own flags
    (SGLang, ATOM), or the keys of the JSON object its block flag holds (vLLM
    `--speculative-config`); with why they cannot be read (that flag holds no JSON object), else
    None. None for an engine that reads them from a file (TRT-LLM's YAML) or has none."""
    if fields is None or (fields.block is not None and not fields.block_is_json):
        return None
    flags = [k for k in found if k.kind == SERVER_FLAG]
    if fields.block is None:
        return {k.key: k.value for k in flags}, None
    raw = find(flags, fields.block)
    if raw and json_object(raw[-1].value) is None:
        return {}, f"{raw[-1].name} is not a JSON object ({raw[-1].shown})"
    block = flag_name(fields.block)
    return {k.key: k.value for k in found if k.kind == JSON_KEY and flag_name(k.parent) == block}, None


_NO_METHOD = ("", "none", "null", "false")


def speculates(effect: Effect) -> Optional[bool]:
    """Whether an engine's server process starts speculative decoding, by its settings in force:
    a method set (SGLang `--speculative-algorithm`, ATOM `--method`) or a `--speculative-config`
    object with any key (vLLM). None when its flags cannot tell: an engine that reads them from
    a file (TRT-LLM) or has none, a method the trace does not know, a block that is not JSON, or
    none set where a word of the command line may hide one."""
    from recipes import engines

    profile = engines.profile(effect.how)
    found, hidden = settings_in_force(effect)
    read = spec_values(found, profile.spec if profile is not None else None)
    if read is None or read[1] is not None:
        return None
    values = read[0]
    fields = profile.spec
    method = next((values[flag_name(m)] for m in fields.method if flag_name(m) in values), None)
    if method is not None:
        return None if not isinstance(method, str) else method.strip().lower() not in _NO_METHOD
    if fields.block is not None and values:
        return True  # vLLM infers the method from the draft model
    own = flag_name(fields.block) if fields.block is not None else ""
    if hidden or any(k.key.startswith(("speculative", "num-speculative")) and k.key != own
                     for k in found if k.kind == SERVER_FLAG):
        return None  # a flag may hide it, or speculative flags of another form (vLLM's early `--speculative-model`)
    return False
