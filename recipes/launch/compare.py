"""Did a PR change what a point runs: its trace at the base against its trace at the head.

A trace holds everything the launch did; what decides what is *served* is a projection of it:
- every effect inside a container (what runs where the server runs), except the client's;
- the servers, wherever they start (an srt-slurm recipe's servers start from the runner);
- on the runner itself, what brings code or configuration in: Python, installs, downloads,
  checkouts, unpacking and in-place edits, files the launch wrote and then ran, containers
  started (image, environment, the folders they see, not where those come from on the host),
  and every unknown that may hide code (a command, a source, an eval it could not read).
Plain host commands (`salloc --partition`, `rm`, log redirects) and the host side of a mount
are the runner's housekeeping: a change there does not change what is served.

The client part is what runs under the benchmark client (`Effect.client`) and installs of the
client's own packages; a difference only there affects the client's check (Check 9), not the
serving checks. Line numbers never count: a line that only moved is no change.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterable, Optional

from .trace import CLIENT, CONTAINER, DOWNLOAD, INSTALL, PYTHON, RUN_WRITTEN, SERVER, SOURCE, UNKNOWN, WRITE, Effect, show
from .words import Holed, OneOf, OneOfRest, Unknown, alternatives

SERVING = "serving"
CLIENT_ONLY = "client"
# Writes on the runner that change code or configuration (others are data and logs).
_HOST_CODE_WRITES = ("checkout", "unpack", "in-place edit", "install", "link")
# Unknowns that may hide code: what they run is not known, so no comparison can clear them.
OPAQUE_MARKS = (
    "not a command the interpreter knows", "is not understood", "a file whose path is not known", "eval of text that is not known",
    "shell text that is not known", "runs shell code from its input", "the interpretation stopped",
    "could not parse", "a command whose name is not known", "whose text is not known", "not a file",
)
# A launch that ends before any server starts: what it serves is not known at all.
NO_SERVER_MARK = "before any server starts"
OPAQUE_MARKS += (NO_SERVER_MARK,)
_LINE_REF = re.compile(r"(\S+?):\d+\b")


def opaque(effect: Effect) -> bool:
    """An unknown that may hide code (a command, a source, an eval the interpreter could not read)."""
    return effect.kind == UNKNOWN and any(m in effect.detail for m in OPAQUE_MARKS)


# A `.` or `..` path segment (also percent-encoded): `https://astral.sh/uv/../x` is not under uv/.
_DOT_SEGMENT = re.compile(r"/(?:\.|%2e){1,2}(?:[/?#]|$)", re.IGNORECASE)


def trusted_url(url: str, trusted_installers: Iterable[str]) -> bool:
    """Whether `url` is under one of the policy's `trusted_installers` (URL prefixes of installers
    that only install benchmark tooling, such as uv's `https://astral.sh/uv/`)."""
    return bool(url) and not _DOT_SEGMENT.search(url) and any(p and url.startswith(p) for p in trusted_installers)


def hides_code(effect: Effect, trusted_installers: Iterable[str] = ()) -> bool:
    """An unknown that may hide code (`opaque`), unless the code it could not read is one download
    from a trusted installer (`Effect.download`, e.g. `curl -LsSf https://astral.sh/uv/install.sh | sh`):
    the one rule Check 10 and the affected rule apply, with the policy's `trusted_installers`."""
    return opaque(effect) and not trusted_url(effect.download, trusted_installers)


def _norm(value: object) -> object:
    if isinstance(value, (OneOf, OneOfRest)):
        # The values an undecided branch left are compared too: another value is another launch.
        return ("?", _LINE_REF.sub(r"\1", value.why), tuple(tuple(_norm(w) for w in run) for run in alternatives(value) or ()))
    if isinstance(value, Holed):
        # A text with holes: its known parts are compared too (an edit of a here-document's text).
        return ("?", _LINE_REF.sub(r"\1", value.why), value.template)
    if isinstance(value, Unknown):
        return ("?", _LINE_REF.sub(r"\1", value.why))
    if isinstance(value, str):
        return value
    return value


def _key(e: Effect) -> tuple:
    """The effect as a comparison sees it (no lines; a mount by its container side only).
    Kept on the effect (frozen: its key never changes; not a field, so not in its equality): a
    trace shared by many points is compared once per point."""
    cached = e.__dict__.get("_compare_key")
    if cached is None:
        cached = e.__dict__["_compare_key"] = _make_key(e)
    return cached


def _make_key(e: Effect) -> tuple:
    argv = tuple(_norm(w) for w in e.argv)
    env = tuple((k, _norm(v)) for k, v in e.env)
    detail = _LINE_REF.sub(r"\1", e.detail) if e.kind == UNKNOWN else ""
    path = _norm(e.path)
    if e.how == "shell text" and isinstance(path, str):
        path = _LINE_REF.sub(r"\1", path)  # `bash -c` text is named by its line: lines never count
    return (e.kind, argv, env, _norm(e.cwd), path, e.how, detail, e.container, e.client, len(e.under),
            e.chain_names, e.files, tuple((w, _norm(t)) for w, t in e.wrote))


def serving_part(effects: Iterable[Effect], client_install: Callable[[Effect], bool] = lambda e: False) -> list[Effect]:
    out = []
    for e in effects:
        if e.client or client_install(e) or e.kind == CLIENT:
            continue
        if e.container or e.kind in (SERVER, PYTHON, INSTALL, DOWNLOAD, RUN_WRITTEN, CONTAINER, SOURCE):
            out.append(e)
        elif e.kind == WRITE and e.how in _HOST_CODE_WRITES:
            out.append(e)
        elif e.kind == UNKNOWN and opaque(e):
            out.append(e)
    return out


def client_part(effects: Iterable[Effect], client_install: Callable[[Effect], bool] = lambda e: False) -> list[Effect]:
    return [e for e in effects if e.client or e.kind == CLIENT or client_install(e)]


@dataclass(frozen=True)
class Difference:
    """Where two traces first differ, and which part it is in."""

    scope: str                 # SERVING or CLIENT_ONLY
    base: Optional[Effect]
    head: Optional[Effect]

    def reason(self) -> str:
        scope = "what its benchmark client runs" if self.scope == CLIENT_ONLY else "what it runs"
        if self.head is not None and self.base is not None:
            return f"{scope} changed at {self.head.where()}: {self.head.describe()}{_changed(self.base, self.head)}"
        if self.head is not None:
            return f"it now also runs, at {self.head.where()}: {self.head.describe()}"
        assert self.base is not None
        return f"it no longer runs {self.base.describe()} (at {self.base.site} on the base)"


def _changed(base: Effect, head: Effect) -> str:
    """What differs between two effects at one place, for a reviewer: the words, the
    environment, the folder or the container."""
    if base.kind != head.kind:
        return f" (was {base.describe()} at {base.site})"
    if _key(base)[1] != _key(head)[1]:
        return f" (was {base.describe()} at {base.site})"
    old, new = dict(base.env), dict(head.env)
    env = [f"{k}={show(new.get(k))}" + (f" (was {show(old[k])})" if k in old else " (new)")
           for k in sorted(set(old) | set(new)) if _norm(old.get(k)) != _norm(new.get(k))]
    if env:
        return f" with {', '.join(env[:4])}{' ...' if len(env) > 4 else ''}"
    for label, a, b in (("in", show(base.cwd), show(head.cwd)), ("path", show(base.path), show(head.path)),
                        ("container", base.container, head.container)):
        if a != b:
            return f" ({label} {b}, was {a})"
    if base.files != head.files:
        changed = sorted({p for p, _ in set(base.files) ^ set(head.files)})
        return f" ({', '.join(changed[:3])} {'it reads ' if len(changed) == 1 else ''}changed)"
    if base.wrote != head.wrote:
        changed = sorted({w for w, _ in set(base.wrote) ^ set(head.wrote)})
        return f" (the text the launch wrote to {', '.join(changed[:3])} changed)"
    if len(base.under) != len(head.under):
        return " (now under a different set of undecided branches)"
    return f" (was at {base.site})"


def first_difference(base: list[Effect], head: list[Effect]) -> tuple[Optional[Effect], Optional[Effect]] | None:
    for x, y in zip(base, head):
        if _key(x) != _key(y):
            return x, y
    if len(base) != len(head):
        n = min(len(base), len(head))
        return (base[n] if n < len(base) else None), (head[n] if n < len(head) else None)
    return None


def compare(base: Iterable[Effect], head: Iterable[Effect],
            client_install: Callable[[Effect], bool] = lambda e: False) -> Optional[Difference]:
    """The first difference of the serving part, else of the client part, else None."""
    base, head = list(base), list(head)
    d = first_difference(serving_part(base, client_install), serving_part(head, client_install))
    if d is not None:
        return Difference(SERVING, *d)
    d = first_difference(client_part(base, client_install), client_part(head, client_install))
    if d is not None:
        return Difference(CLIENT_ONLY, *d)
    return None
