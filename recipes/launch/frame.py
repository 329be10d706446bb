"""A function frame of the interpreter's state (`recipes.launch.state.State.frames`), versioned
so that the environment a command sees is computed once per change, not once per command."""
from __future__ import annotations

import itertools
from typing import Any

_VERSIONS = itertools.count(1)


class Frame(dict):
    """One function frame's variables (name -> `state.Var`). `version` names what
    `State.exported` reads of it: a change that may change that (an exported variable set or
    unset; a new name in a function's frame, which may hide an exported one of its caller) takes
    a version no frame had before; a copy keeps it. Equal versions: equal exported variables.
    `outermost`: the process's own frame, which hides nothing. `readonly`: whether a readonly
    variable may be in it."""

    __slots__ = ("version", "outermost", "readonly")  # made by `new_frame` (copied for every arm: no __init__)

    def copy(self) -> "Frame":
        new = Frame(self)
        new.version, new.outermost, new.readonly = self.version, self.outermost, self.readonly
        return new

    def __setitem__(self, name: str, var: Any) -> None:
        old = self.get(name)
        if var.exported or (old.exported if old is not None else not self.outermost):
            self.version = next(_VERSIONS)
        if var.readonly:
            self.readonly = True
        dict.__setitem__(self, name, var)

    # Every other change takes a new version.
    def __delitem__(self, name: str) -> None:
        self.version = next(_VERSIONS)
        dict.__delitem__(self, name)

    def pop(self, *args: Any) -> Any:
        self.version = next(_VERSIONS)
        return dict.pop(self, *args)

    def update(self, *args: Any, **kw: Any) -> None:
        self.version, self.readonly = next(_VERSIONS), True
        dict.update(self, *args, **kw)

    def setdefault(self, *args: Any) -> Any:
        self.version, self.readonly = next(_VERSIONS), True
        return dict.setdefault(self, *args)

    def popitem(self) -> Any:
        self.version = next(_VERSIONS)
        return dict.popitem(self)

    def clear(self) -> None:
        self.version = next(_VERSIONS)
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
    return new


# `State.exported` of frames by their versions (every trace of a review shares it).
_EXPORTED: dict[tuple[int, ...], dict[str, Any]] = {}


MAX_EXPORTED = 4_096
