"""A function frame of the interpreter's state (`recipes.launch.state.State.frames`), versioned
so that the environment a command sees is computed once per change, not once per command."""
from __future__ import annotations

import itertools
from typing import Any, Optional

_VERSIONS = itertools.count(1)


class Frame(dict):
    """One function frame's variables (name -> `state.Var`). `version` names what
    `State.exported` reads of it: a change that may change that (an exported variable set or
    unset; a new name in a function's frame, which may hide an exported one of its caller) takes
    a version no frame had before; a copy keeps it. Equal versions: equal exported variables.
    `outermost`: the process's own frame, which hides nothing. `readonly`: whether a readonly
    variable may be in it.

    What a copy changed, for the merge of undecided branches (`changed_names`): `source`, the
    `ident` of the frame it was copied from (a number, not the frame: a copy never keeps its
    source alive), when its `mods` (changes counted) were `source_mods`; `changed`, the names
    set or removed in it since (None: not known, as for a frame not made by `copy`). A name not
    in `changed` is bound to the very `Var` the source had."""

    # Made by `new_frame` (copied for every arm: no __init__).
    __slots__ = ("version", "outermost", "readonly", "ident", "mods", "source", "source_mods", "changed")

    def copy(self) -> "Frame":
        new = Frame(self)
        new.version, new.outermost, new.readonly = self.version, self.outermost, self.readonly
        new.ident, new.mods, new.source, new.source_mods, new.changed = next(_IDENTS), 0, self.ident, self.mods, set()
        return new

    def _changing(self, name: Any) -> None:
        self.mods += 1
        if self.changed is not None:
            if name is _ANY:
                self.changed = None
            else:
                self.changed.add(name)

    def __setitem__(self, name: str, var: Any) -> None:
        old = self.get(name)
        if var.exported or (old.exported if old is not None else not self.outermost):
            self.version = next(_VERSIONS)
        if var.readonly:
            self.readonly = True
        self._changing(name)
        dict.__setitem__(self, name, var)

    # Every other change takes a new version.
    def __delitem__(self, name: str) -> None:
        self.version = next(_VERSIONS)
        self._changing(name)
        dict.__delitem__(self, name)

    def pop(self, *args: Any) -> Any:
        self.version = next(_VERSIONS)
        self._changing(args[0] if args else _ANY)
        return dict.pop(self, *args)

    def update(self, *args: Any, **kw: Any) -> None:
        self.version, self.readonly = next(_VERSIONS), True
        self._changing(_ANY)
        dict.update(self, *args, **kw)

    def setdefault(self, *args: Any) -> Any:
        self.version, self.readonly = next(_VERSIONS), True
        self._changing(args[0] if args else _ANY)
        return dict.setdefault(self, *args)

    def popitem(self) -> Any:
        self.version = next(_VERSIONS)
        self._changing(_ANY)
        return dict.popitem(self)

    def clear(self) -> None:
        self.version = next(_VERSIONS)
        self._changing(_ANY)
        dict.clear(self)

    def __ior__(self, other: Any) -> "Frame":
        self.update(other)
        return self


def new_frame(variables: Any = (), *, outermost: bool = False) -> Frame:
    """A new frame holding `variables` (a mapping or pairs)."""
    new = Frame(variables)
    new.version = next(_VERSIONS) if new else 0  # empty frames are all alike
    new.outermost = outermost
    new.readonly = any(var.readonly for var in new.values())
    new.ident, new.mods, new.source, new.source_mods, new.changed = next(_IDENTS), 0, 0, 0, None
    return new


_IDENTS = itertools.count(1)


_ANY = object()  # a change of names not known (`Frame.update`, `clear`, ...)


def changed_names(frames: list[Any], source: Any) -> Optional[set[str]]:
    """Names that may be bound to different `Var`s in `frames`: the union of what each changed
    since it was copied from `source`, unchanged since (`source` itself among them changed
    nothing). None when that is not known: a frame not so copied (or a plain dict), or `source`
    changed after a copy."""
    if not isinstance(source, Frame):
        return None
    names: set[str] = set()
    for f in frames:
        if f is source:
            continue
        changed = getattr(f, "changed", None)
        if changed is None or f.source != source.ident or f.source_mods != source.mods:
            return None
        names |= changed
    return names


def adopt(merged: Any, replaced: Any) -> None:
    """`merged`, a copy of `replaced` made for an arm and then changed (the merge of the arms),
    takes its place in its process: it is then what `replaced` was copied from, changed by what
    both changed (not known unless `replaced` itself was a copy)."""
    if merged is replaced or not isinstance(merged, Frame) or not isinstance(replaced, Frame) \
            or merged.source != replaced.ident or merged.source_mods != replaced.mods:
        return
    if merged.changed is None or replaced.changed is None:
        merged.source, merged.changed = 0, None
    else:
        merged.changed |= replaced.changed
        merged.source, merged.source_mods = replaced.source, replaced.source_mods


# `State.exported` of frames by their versions (every trace of a review shares it).
_EXPORTED: dict[tuple[int, ...], dict[str, Any]] = {}


MAX_EXPORTED = 4_096
