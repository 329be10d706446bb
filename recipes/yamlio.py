"""The one YAML entry point: fast (libyaml) parsing that keeps line numbers and rejects hostile input.

Values come back as plain Python data; `YamlDoc.line(*keys)` gives the 1-based source line of
any node by its key path. Duplicate mapping keys, alias expansion beyond a bound, files over a
size cap, binary and non-UTF-8 input are `RecipeError`s naming file and line.
"""
from __future__ import annotations

import re
from collections import OrderedDict
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

import yaml
from yaml.constructor import SafeConstructor
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from .errors import RecipeError

MAX_YAML_BYTES = 8 * 1024 * 1024
# Alias expansion bound ("billion laughs"): nodes reachable once aliases are followed.
MAX_EXPANDED_NODES = 2_000_000
# Nesting bound: real files nest < 20 deep; the builder and every consumer of the data recurse,
# so a deeper document must be a finding before Python's recursion limit turns it into a crash.
MAX_DEPTH = 200
_MERGE_TAG = "tag:yaml.org,2002:merge"
_STR_TAG = "tag:yaml.org,2002:str"
_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
# Tags whose value depends only on the scalar text and is immutable, so one construction per
# distinct text can be shared (the same `8192`, `true`, `1` recur thousands of times).
_CACHEABLE_TAGS = frozenset(
    "tag:yaml.org,2002:" + t for t in ("null", "bool", "int", "float", "timestamp")
)
_SCALAR_CACHE_SIZE = 8192

# SafeLoader's YAML 1.1 implicit resolvers, by the first character of a plain scalar.
_IMPLICIT = yaml.resolver.Resolver.yaml_implicit_resolvers
_WILDCARD = tuple(_IMPLICIT.get(None, ()))


@lru_cache(maxsize=_SCALAR_CACHE_SIZE)
def _plain_tag(value: str) -> str:
    """The tag SafeLoader's resolver gives a plain scalar (same table, same order)."""
    for tag, regexp in (*_IMPLICIT.get(value[:1], ()), *_WILDCARD):
        if regexp.match(value):
            return tag
    return _STR_TAG


_RESOLVED_FIRST = frozenset(k for k in _IMPLICIT if k is not None)


def _resolve(self: Any, kind: type, value: str, implicit: tuple[bool, bool]) -> str:
    # libyaml calls back into Python for every node; the stock resolver tries a list of regexes
    # per plain scalar, which was a third of the load time of a master config.
    if kind is ScalarNode:
        if implicit[0] and (value[:1] in _RESOLVED_FIRST or _WILDCARD):
            return _plain_tag(value)
        return _STR_TAG
    return _SEQ_TAG if kind is SequenceNode else _MAP_TAG


# libyaml's composer also calls `descend_resolver(parent, index)` and `ascend_resolver()` for
# every node; they only serve path resolvers, which SafeLoader has none of. Builtins that
# accept those arguments and ignore the result cost a fraction of the Python no-op methods.
_IGNORE_ARGS = {"descend_resolver": slice, "ascend_resolver": tuple}

try:  # libyaml is ~20x faster than the pure-Python parser on the 750 KB changelog
    _Loader: type = type("_Loader", (yaml.CSafeLoader,), {"resolve": _resolve, **_IGNORE_ARGS})
except AttributeError:  # pragma: no cover - wheels ship libyaml
    _Loader = yaml.SafeLoader
# An alias needs an anchor; without one the expansion bound cannot be exceeded. An anchor is an
# `&` at the start or after a space or one of `[{,:-`, followed by a character libyaml accepts in
# an anchor name (`[0-9A-Za-z_-]`; `&&`, `&.` or `& ` is no anchor: libyaml refuses it at a
# node's start, so a shell `a && b` in a plain scalar does not count). Written with the `&`
# first (the test behind it), the search skips to each `&` instead of trying every position:
# 0.2 ms instead of 25 ms on a 330 KB master config.
ANCHOR_RE = re.compile(r"&(?<![^\s\[\{,:-]&)[0-9A-Za-z_-]")

Key = str | int


@dataclass
class YamlDoc:
    path: str
    data: Any
    lines: dict[tuple[Key, ...], int] = field(default_factory=dict)

    def line(self, *keys: Key) -> int | None:
        """Line of the node at `keys` (closest ancestor that has one), 1-based."""
        k = tuple(keys)
        while True:
            if k in self.lines:
                return self.lines[k]
            if not k:
                return None
            k = k[:-1]


def decode_text(data: bytes, path: str, *, max_bytes: int = MAX_YAML_BYTES) -> str:
    """Bytes to text, refusing oversized, binary and non-UTF-8 files with a finding."""
    if len(data) > max_bytes:
        raise RecipeError.at(
            path, None, f"file is {len(data)} bytes, over the {max_bytes}-byte limit", "too-large"
        )
    if b"\0" in data[:8192] or b"\0" in data:
        raise RecipeError.at(path, None, "binary file (contains NUL bytes)", "binary")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise RecipeError.at(path, line, f"not UTF-8 text ({e.reason})", "encoding") from None


_SCALARS: dict[tuple[str, str], Any] = {}
_MISSING = object()


def top_level_chunks(text: str, starts: Callable[[str], bool]) -> list[tuple[int, str]] | None:
    """(first line, exact text) of each top-level node of a plain block collection, for reading
    a large file node by node (master configs, the changelog); None unless every line at column
    0 is a comment or a chunk's first line (`starts`), nothing but comments and blank lines
    precedes the first, and no BOM, CR or anchor is anywhere. A chunk runs to the next one's
    first line: its last newline and the blank lines after it belong to it, as a `|` or `|+`
    scalar ending there reads them in the whole file."""
    if text.startswith("\ufeff") or "\r" in text or ANCHOR_RE.search(text):
        return None
    lines = text.split("\n")
    firsts: list[int] = []
    for i, line in enumerate(lines):
        if not line or line[0] in " #":
            continue
        if not starts(line):
            return None  # `---`, `%YAML`, a flow collection, a tab, another kind of node at column 0
        firsts.append(i)
    if not firsts or any(ln.strip() and not ln.lstrip().startswith("#") for ln in lines[:firsts[0]]):
        return None
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line) + 1
    cuts = [offsets[i] for i in firsts] + [len(text)]
    return [(i + 1, text[a:b]) for i, a, b in zip(firsts, cuts, cuts[1:])]


# Chunks (`top_level_chunks`) parsed on their own and kept by (path, text), their lines counted
# from the chunk's first line: a chunk two views of a file share (a master-config entry, a
# changelog item) is composed once wherever it sits, and `at_line` places it. A PR that adds
# lines above an entry shifts it (26 of nvidia-master.yaml's 155 entries at d85fa13fc0).
_CHUNKS: "OrderedDict[tuple[str, str], YamlDoc]" = OrderedDict()
CHUNK_CACHE_SIZE = 8192


def load_chunk(text: str, path: str) -> YamlDoc:
    """`load_yaml` of one chunk of a file, lines counted from its first line, kept per process.
    Raises RecipeError as load_yaml does (a failure is not kept)."""
    key = (path, text)
    doc = _CHUNKS.get(key)
    if doc is None:
        doc = _CHUNKS[key] = load_yaml(text, path)
        if len(_CHUNKS) > CHUNK_CACHE_SIZE:
            _CHUNKS.popitem(last=False)
    else:
        _CHUNKS.move_to_end(key)
    return doc


def at_line(doc: YamlDoc, first: int) -> YamlDoc:
    """A chunk's document with its lines counted from line `first` of the file."""
    shift = first - 1
    return doc if not shift else YamlDoc(path=doc.path, data=doc.data, lines={k: v + shift for k, v in doc.lines.items()})


def clear_caches() -> None:
    """Forget resolved scalars and parsed chunks (benchmarks measuring a cold start call this)."""
    _SCALARS.clear()
    _plain_tag.cache_clear()
    _CHUNKS.clear()


class _Builder:
    def __init__(self, path: str, max_nodes: int):
        self.path = path
        self.max_nodes = max_nodes
        self.lines: dict[tuple[Key, ...], int] = {}
        self._objs: dict[int, Any] = {}
        self._sizes: dict[int, int] = {}
        self._ctor = SafeConstructor()
        # Only an alias (`*name`) makes one node reachable twice; without one, every node is
        # built exactly once, so nothing is remembered and leaf scalars are built in line.
        self.shares = True

    def size(self, node: Node, depth: int = 0) -> int:
        """Expanded node count with aliases followed, memoised so a bomb is measured cheaply."""
        nid = id(node)
        if nid in self._sizes:
            return self._sizes[nid]
        if depth > MAX_DEPTH:
            raise RecipeError.at(
                self.path, node.start_mark.line + 1, f"YAML nests deeper than {MAX_DEPTH} levels", "too-deep"
            )
        self._sizes[nid] = 1  # cycle guard
        total = 1
        if isinstance(node, SequenceNode):
            for child in node.value:
                total += self.size(child, depth + 1)
        elif isinstance(node, MappingNode):
            for k, v in node.value:
                total += self.size(k, depth + 1) + self.size(v, depth + 1)
        self._sizes[nid] = total
        return total

    def scalar(self, node: ScalarNode) -> Any:
        tag = node.tag
        cacheable = tag in _CACHEABLE_TAGS
        if cacheable:
            key = (tag, node.value)
            hit = _SCALARS.get(key, _MISSING)
            if hit is not _MISSING:
                return hit
        try:
            ctor = self._ctor.yaml_constructors.get(tag)
            value = ctor(self._ctor, node) if ctor else self._ctor.construct_object(node, deep=True)
        except (yaml.YAMLError, ValueError, OverflowError) as e:
            # Constructors raise plain ValueError for e.g. `2026-13-45` or `!!float x`.
            raise RecipeError.at(self.path, node.start_mark.line + 1, f"bad scalar: {e}", "yaml")
        if cacheable:
            if len(_SCALARS) >= _SCALAR_CACHE_SIZE:
                _SCALARS.clear()
            _SCALARS[key] = value
        return value

    def build(self, node: Node, keypath: tuple[Key, ...], parent_line: int | None = None,
              forced_line: int | None = None) -> Any:
        """The value of `node`. `YamlDoc.line` falls back to the nearest recorded ancestor, so a
        path's line is recorded only where it differs from the line its parent path resolves to
        (`parent_line`); flow-style lists and mappings, most of a master config, then cost no
        entries. A mapping value's path resolves to its key's line (`forced_line`), which the
        caller records."""
        shares = self.shares
        if shares:
            nid = id(node)
            if nid in self._objs:  # an alias: share the object, do not index its lines again
                return self._objs[nid]
        line = forced_line if forced_line is not None else node.start_mark.line + 1
        if forced_line is None and line != parent_line:
            self.lines[keypath] = line
        if isinstance(node, ScalarNode):
            value = node.value if node.tag == _STR_TAG else self.scalar(node)
            if shares:
                self._objs[nid] = value
            return value
        if len(keypath) > MAX_DEPTH:
            raise RecipeError.at(
                self.path, node.start_mark.line + 1, f"YAML nests deeper than {MAX_DEPTH} levels", "too-deep"
            )
        if node.tag not in (_SEQ_TAG, _MAP_TAG):
            # `!!set {a, b}`, `!!omap [...]`, `!custom [...]`: the real loader would build
            # something else or refuse; reading it as a plain collection would hide that.
            kind = "sequence" if isinstance(node, SequenceNode) else "mapping"
            raise RecipeError.at(self.path, line, f"YAML tag {node.tag} on a {kind} is not supported", "yaml-tag")
        lines = self.lines
        if isinstance(node, SequenceNode):
            out: list[Any] = []
            if shares:
                self._objs[nid] = out
            for i, child in enumerate(node.value):
                if not shares and isinstance(child, ScalarNode):  # `build(child, ...)` in line
                    cline = child.start_mark.line + 1
                    if cline != line:
                        lines[keypath + (i,)] = cline
                    tag = child.tag
                    if tag == _STR_TAG:
                        out.append(child.value)
                    else:  # the scalar cache's hit in line, `scalar` on a miss
                        hit = _SCALARS.get((tag, child.value), _MISSING)
                        out.append(self.scalar(child) if hit is _MISSING else hit)
                else:
                    out.append(self.build(child, keypath + (i,), line))
            return out
        if isinstance(node, MappingNode):
            result: dict[Any, Any] = {}
            if shares:
                self._objs[nid] = result
            merged: dict[Any, Any] = {}
            key_lines: dict[Any, int] = {}
            for knode, vnode in node.value:
                if knode.tag == _MERGE_TAG:
                    sources = vnode.value if isinstance(vnode, SequenceNode) else [vnode]
                    for src in sources:
                        val = self.build(src, keypath + ("<<",), line)
                        if not isinstance(val, dict):
                            raise RecipeError.at(
                                self.path, src.start_mark.line + 1, "merge key needs a mapping", "yaml"
                            )
                        for mk, mv in val.items():
                            merged.setdefault(mk, mv)
                    continue
                kline = knode.start_mark.line + 1
                if not isinstance(knode, ScalarNode):
                    raise RecipeError.at(self.path, kline, "mapping keys must be scalars", "yaml")
                key = knode.value if knode.tag == _STR_TAG else self.scalar(knode)
                if key in key_lines:
                    raise RecipeError.at(
                        self.path, kline, f"duplicate key {key!r} (first at line {key_lines[key]})", "duplicate-key"
                    )
                key_lines[key] = kline
                # The key's own line is the useful one for scalars written on the same line.
                path = keypath + (key,)
                if kline != line:
                    lines[path] = kline
                if not shares and isinstance(vnode, ScalarNode):  # `build(vnode, ...)` in line
                    tag = vnode.tag
                    if tag == _STR_TAG:
                        result[key] = vnode.value
                    else:  # the scalar cache's hit in line, `scalar` on a miss
                        hit = _SCALARS.get((tag, vnode.value), _MISSING)
                        result[key] = self.scalar(vnode) if hit is _MISSING else hit
                else:
                    result[key] = self.build(vnode, path, line, kline)
            for mk, mv in merged.items():
                result.setdefault(mk, mv)
            return result
        raise RecipeError.at(self.path, node.start_mark.line + 1, "unsupported YAML node", "yaml")


def load_yaml(
    data: bytes | str,
    path: str,
    *,
    max_bytes: int = MAX_YAML_BYTES,
    max_nodes: int = MAX_EXPANDED_NODES,
    line_offset: int = 0,
) -> YamlDoc:
    """Parse one YAML document. `line_offset` shifts reported lines (for parsing a file's tail)."""
    text = decode_text(data, path, max_bytes=max_bytes) if isinstance(data, bytes) else data
    if isinstance(data, str) and len(data) > max_bytes:
        raise RecipeError.at(path, None, f"file is over the {max_bytes}-byte limit", "too-large")
    try:
        node = yaml.compose(text, Loader=_Loader)
    except yaml.composer.ComposerError as e:
        raise _yaml_error(path, e, line_offset) from None
    except yaml.YAMLError as e:
        raise _yaml_error(path, e, line_offset) from None
    if node is None:
        return YamlDoc(path=path, data=None)
    builder = _Builder(path, max_nodes)
    builder.shares = "*" in text
    try:
        if "&" in text and ANCHOR_RE.search(text) and builder.size(node) > max_nodes:
            raise RecipeError.at(
                path, None, f"YAML expands to more than {max_nodes} nodes (alias bomb?)", "alias-bomb"
            )
        value = builder.build(node, ())
    except RecipeError as e:
        if line_offset and e.finding.line:
            raise RecipeError.at(path, e.finding.line + line_offset, e.finding.message, e.finding.code) from None
        raise
    lines = builder.lines
    if line_offset:
        lines = {k: v + line_offset for k, v in lines.items()}
    return YamlDoc(path=path, data=value, lines=lines)


def _yaml_error(path: str, e: yaml.YAMLError, offset: int) -> RecipeError:
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    line = mark.line + 1 + offset if mark is not None else None
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    return RecipeError.at(path, line, f"malformed YAML: {problem}", "yaml")
