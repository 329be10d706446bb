"""Where a serving view's settings are set (`Hit`s): the keys of its srt-slurm variant, the
exports and server flags of the scripts that run for it, its models-file entries and its
master-config settings; each computed once per review and shared by the views that hold the
same variant, script or entry (`shared`)."""
from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from recipes.evidence import Evidence
from recipes.engines import generation
from recipes.launch.knobs import json_object as knobs_json_object
from recipes.scripts import ScriptAnalysis
from recipes.srt import keypath_kind
from recipes.values import flag_name as norm_name

def json_object(value: Any) -> dict | None:
    """A JSON-valued flag as a dict: already a mapping in YAML, or a JSON string (knobs.json_object)."""
    return value if isinstance(value, dict) else knobs_json_object(value)


@dataclass(frozen=True)
class Hit:
    """One place a knob is set: its value, file and line, and what kind of setting it is."""

    name: str  # as written
    value: Any
    path: str
    line: int | None
    # "arg", "env", "client-env", "json", "recipe", "script-env", "script-flag", "setting"
    kind: str
    condition: str | None = None  # enclosing shell if-test, when conditional
    parent: str | None = None  # the JSON-valued flag holding this key
    key: str = field(init=False, repr=False, compare=False)  # norm_name(name), computed once

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", norm_name(self.name))

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}" if self.line else self.path

    @property
    def shown(self) -> str:
        """`name=value` as a reviewer would write it."""
        inner = f"{self.parent} {self.name}" if self.parent else self.name
        value = self.value
        if isinstance(value, (dict, list)):
            value = json.dumps(value, separators=(",", ":"))
        return f"{inner}={value}"

    def evidence(self, note: str | None = None) -> Evidence:
        return Evidence(path=self.path, line=self.line, note=note)


_NEW = object.__new__


def hit(name: str, value: Any, path: str, line: int | None, kind: str, condition: str | None = None,
         parent: str | None = None) -> Hit:
    """`Hit(...)` for the walks below, which build tens of thousands per review: the frozen
    dataclass's __init__ sets each field through object.__setattr__; this fills the same
    instance dict, in field order, at once."""
    key = norm_name(name)  # remembered per name by recipes.values.flag_name
    h = _NEW(Hit)
    h.__dict__.update(name=name, value=value, path=path, line=line, kind=kind, condition=condition, parent=parent,
                      key=key)
    return h


@dataclass
class ScriptUse:
    """A bash text that runs for a point, analysed: a file, or a recipe command string."""

    path: str  # repository path of the file holding the text
    analysis: ScriptAnalysis
    via: str  # "launcher", "setup_script", "benchmark.command", "run by <path>"
    # The functions of this text the launch path calls (recipes.launch.path.launch_path); code in any
    # other function body never runs for the point.
    executed: frozenset[str] = frozenset()

    def runs(self, function: str | None) -> bool:
        return function is None or function in self.executed

    def line_runs(self, line: int | None) -> bool:
        """Whether a line is executed code: outside every function, or in one the path calls."""
        if line is None:
            return True
        inside = [f for f in self.analysis.functions.values() if f.line <= line <= f.end_line]
        if not inside:
            return True
        return self.runs(min(inside, key=lambda f: f.end_line - f.line).name)

    @property
    def patches(self) -> list:
        """The analysis' patch operations on the executed launch path."""
        return [p for p in self.analysis.patches if self.runs(p.function)]


def _walk_json(obj: Any, path: str, line: int | None, parent: str, condition: str | None = None,
               into: list[Hit] | None = None) -> list[Hit]:
    """A hit per key of a JSON value, depth first, appended to `into` (a list, not a generator:
    the walks run tens of thousands of times per review)."""
    out = [] if into is None else into
    if isinstance(obj, dict):
        for k, v in obj.items():
            out.append(hit(name=str(k), value=v, path=path, line=line, kind="json", parent=parent, condition=condition))
            if isinstance(v, (dict, list)):
                _walk_json(v, path, line, parent, condition, out)
    elif isinstance(obj, list):
        for v in obj:
            if isinstance(v, (dict, list)):
                _walk_json(v, path, line, parent, condition, out)
    return out


_KINDS: dict[tuple, str] = {}
_KINDS_GENERATION = [-1]


def _kind_of(kp: tuple) -> str:
    """keypath_kind, remembered per key path (every variant of a recipe format repeats the same
    paths) until the engine registry it reads changes."""
    if _KINDS_GENERATION[0] != generation():
        _KINDS.clear()
        _KINDS_GENERATION[0] = generation()
    kind = _KINDS.get(kp)
    if kind is None:
        if len(_KINDS) > 65536:
            _KINDS.clear()
        kind = _KINDS[kp] = keypath_kind(kp)
    return kind


def variant_hits(variant: Any) -> list[Hit]:
    origins, path, out = variant.origins, variant.path, []

    def walk(node: Any, kp: tuple, kp_line: int | None) -> None:
        # `kp_line` is variant.line_of(*kp); a key's line is its own origin or that fallback.
        if isinstance(node, dict):
            for k, v in node.items():
                here = kp + (k,)
                line = origins.get(here, kp_line)
                out.append(hit(name=str(k), value=v, path=path, line=line, kind=_kind_of(here)))
                obj = json_object(v) if isinstance(v, str) else None
                if obj is not None:
                    _walk_json(obj, path, line, str(k), into=out)
                elif isinstance(v, (dict, list)):
                    walk(v, here, line)
        elif isinstance(node, list):
            for v in node:
                if isinstance(v, (dict, list)):
                    walk(v, kp, kp_line)

    walk(variant.data, (), variant.line_of())
    return out


def shared_variant_hits(variant: Any, shared: dict | None) -> tuple[list[Hit], dict[str, list[tuple[int, Hit]]]]:
    """`variant_hits` and their index by key, computed once per variant and review: points
    served by one variant but set up differently (worker counts) do not share their views'
    hits, but share these (Hits are frozen; neither is changed by a caller)."""
    def build() -> tuple[list[Hit], dict[str, list[tuple[int, Hit]]]]:
        hits = variant_hits(variant)
        index: dict[str, list[tuple[int, Hit]]] = {}
        for pos, h in enumerate(hits):
            index.setdefault(h.key, []).append((pos, h))
        return hits, index
    return shared_once(shared, ("variant", id(variant)), variant, build)


def shared_once(shared: dict | None, key: tuple, obj: Any, build: Callable[[], Any]) -> Any:
    """`build()` once per review for `obj`, whose id is in `key`: the entry keeps `obj` alive,
    so no other object can take its id while the review shares it."""
    if shared is None:
        return build()
    found = shared.get(key)
    if found is None or found[0] is not obj:
        found = shared[key] = (obj, build())
    return found[1]


def effective_hits(eff: Any) -> Iterable[Hit]:
    for kind, table in (("arg", eff.args), ("env", eff.env), ("client-env", eff.client_env)):
        for name, o in table.items():
            yield hit(name=name, value=o.value, path=o.path, line=o.line, kind=kind)
            obj = json_object(o.value) if kind == "arg" else None
            if obj is not None:
                yield from _walk_json(obj, o.path, o.line, name)


def shared_script_hits(use: ScriptUse) -> list[Hit]:
    """`_script_hits`, computed once per (text, path, executed functions): points that run the
    same script share its hits (Hits are frozen)."""
    memo = use.analysis.__dict__.setdefault("_script_hits", {})
    key = (use.path, use.executed)
    if key not in memo:
        memo[key] = list(_script_hits(use))
    return memo[key]


def _script_hits(use: ScriptUse) -> Iterable[Hit]:
    """Settings of the executed launch path only (a function the path never calls is not run)."""
    a = use.analysis
    seen: set[tuple] = set()
    for name, loc, exported in a.assignments:
        if not exported or not use.runs(loc.function):
            continue
        key = (name, loc.line)
        if key in seen:
            continue
        seen.add(key)
        value = loc.resolved if loc.resolved is not None else loc.value
        yield hit(name=name, value=value, path=use.path, line=loc.line, kind="script-env",
                   condition=_expanded_condition(a, name, loc.line, loc.line, loc.condition))
    for cmd in a.commands:
        if not use.runs(cmd.function):
            continue
        for name, loc in cmd.env.items():
            value = loc.resolved if loc.resolved is not None else loc.value
            cond = _expanded_condition(a, name, cmd.line, max(cmd.line, cmd.end_line), loc.condition or cmd.condition)
            yield hit(name=name, value=value, path=use.path, line=loc.line, kind="script-env", condition=cond)
    for launch in a.server_launches:
        if not use.runs(launch.function):
            continue
        for flag in launch.flag_list:
            value = flag.resolved if flag.resolved is not None else flag.value
            yield hit(name=flag.original or str(flag.value), value=value, path=use.path, line=flag.line,
                       kind="script-flag", condition=flag.condition or launch.condition)
        for fname, obj in launch.json_flags.items():
            f = launch.flags.get(fname)
            cond = (f.condition if f else None) or launch.condition
            yield from _walk_json(obj, use.path, f.line if f else launch.line, fname, cond)


_ENV_WORD = re.compile(r"^[A-Za-z_]\w*=")


def entry_hits(holder: str, line: int, entry: Any) -> list[Hit]:
    """The settings a models-file entry hands the server script (recipes.models_yaml): each
    printed value that is a flag string gives its flags, one of `NAME=VALUE` words its
    variables; at the entry's line, or the program's for a default it prints."""
    out: list[Hit] = []
    for ev in entry.values:
        if not ev.value or not ev.value.strip():
            continue
        path, at = (entry.path, ev.line) if ev.line is not None else (holder, line)
        try:
            words = shlex.split(ev.value)
        except ValueError:
            words = ev.value.split()
        if all(_ENV_WORD.match(w) for w in words):
            out.extend(Hit(name=w.split("=", 1)[0], value=w.split("=", 1)[1], path=path, line=at, kind="script-env")
                       for w in words)
            continue
        i = 0
        while i < len(words):
            w = words[i]
            if w.startswith("-") and len(w) > 1:
                if w.startswith("--") and "=" in w:
                    name, value = w.split("=", 1)
                elif i + 1 < len(words) and not words[i + 1].startswith("-"):
                    name, value = w, words[i + 1]
                    i += 1
                else:
                    name, value = w, True
                out.append(Hit(name=name, value=value, path=path, line=at, kind="script-flag"))
                obj = json_object(value) if isinstance(value, str) else None
                if obj is not None:
                    out.extend(_walk_json(obj, path, at, name))
            i += 1
    return out


# `NAME=` inside an assigned value, as a prefix word writes it (not `X_NAME=`).
_WRITES_NAME = re.compile(r"(?<![\w])([A-Za-z_]\w*)=")


def _prefix_writers(a: ScriptAnalysis) -> dict[str, list[tuple[int, str | None]]]:
    """NAME -> (line, condition) of each assignment whose value writes `NAME=`, once per
    analysis: `_expanded_condition` asks it for every prefix of every command, and scanning all
    of server_sglang.sh's assignments each time was a tenth of a large review."""
    cached = a.__dict__.get("_prefix_writers")
    if cached is None:
        cached = {}
        for _n, loc, _e in a.assignments:
            if "=" in loc.value:
                for name in dict.fromkeys(_WRITES_NAME.findall(loc.value)):
                    cached.setdefault(name, []).append((loc.line, loc.condition))
        a.__dict__["_prefix_writers"] = cached
    return cached


def _expanded_condition(a: ScriptAnalysis, name: str, first: int, last: int, cond: str | None) -> str | None:
    """The condition of a `NAME=value` prefix that reached a command through a variable
    (`$DECODE_CMD` holding `${SIM_ENV} python3 ...`): the analyser takes the variable's last
    assignment whatever its branch, so the branches of the assignments that write `NAME=` are
    added (only when every one of them is on a branch)."""
    written = [c for line, c in _prefix_writers(a).get(name, ()) if not first <= line <= last]
    if not written or any(not c for c in written):
        return cond
    extra = written[0] if len(set(written)) == 1 else " || ".join(f"( {c} )" for c in dict.fromkeys(written))
    return f"{cond} && ( {extra} )" if cond else extra


def setting_hits(point: Any) -> Iterable[Hit]:
    for role, block in (point.workers or {}).items():
        lines = (getattr(point, "setting_lines", None) or {}).get(role) or {}
        for key, value in (block.get("settings") or {}).items():
            yield hit(name=key, value=value, path=point.source_path, line=lines.get(key, point.source_line), kind="setting",
                       parent=f"{role}.additional-settings")
