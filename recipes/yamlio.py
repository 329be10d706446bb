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
from yaml.composer import ComposerError
from yaml.constructor import SafeConstructor
from yaml.events import (
    AliasEvent, DocumentEndEvent, MappingEndEvent, MappingStartEvent, ScalarEvent, SequenceEndEvent, SequenceStartEvent,
    StreamEndEvent,
)
from yaml.nodes import ScalarNode

from .errors import RecipeError

MAX_YAML_BYTES = 8 * 1024 * 1024
# Values bound (docs/bounds.md): commas plus lines, counted before parsing, an upper bound of the
# nodes of any form but a deep one (MAX_DEPTH). Composing costs about 9 us a node, so 8 MB of
# `k: v` lines took 11 s; the largest real files hold 11,634 (nvidia-master.yaml) and 8,468
# (perf-changelog.yaml). recipes.master counts the same for a master config (MAX_MASTER_VALUES).
MAX_YAML_VALUES = 60_000
MSG_TOO_MANY_VALUES = "holds {n} values (commas and lines), over the {limit}-value limit; it was not parsed"
# Alias expansion bound ("billion laughs"): nodes reachable once aliases are followed.
MAX_EXPANDED_NODES = 2_000_000
# Nesting bound: real files nest < 20 deep; consumers of the data recurse, so a deeper
# document must be a finding before Python's recursion limit turns it into a crash.
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


def decode_text(data: bytes, path: str, *, max_bytes: int = MAX_YAML_BYTES, max_values: int | None = None) -> str:
    """Bytes to text, refusing oversized, binary and non-UTF-8 files with a finding (and, given
    `max_values`, files holding more values than that: `check_values`)."""
    if len(data) > max_bytes:
        raise RecipeError.at(
            path, None, f"file is {len(data)} bytes, over the {max_bytes}-byte limit", "too-large"
        )
    if max_values is not None:
        check_values(data, path, max_values)
    if b"\0" in data[:8192] or b"\0" in data:
        raise RecipeError.at(path, None, "binary file (contains NUL bytes)", "binary")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        line = data[: e.start].count(b"\n") + 1
        raise RecipeError.at(path, line, f"not UTF-8 text ({e.reason})", "encoding") from None


def check_values(data: bytes | str, path: str, limit: int = MAX_YAML_VALUES) -> None:
    """Raise a "too-large" RecipeError when `data` holds more than `limit` values (commas plus
    lines, counted in C before anything is parsed)."""
    comma, line = (b",", b"\n") if isinstance(data, bytes) else (",", "\n")
    n = data.count(comma) + data.count(line)  # type: ignore[arg-type]
    if n > limit:
        raise RecipeError.at(path, None, MSG_TOO_MANY_VALUES.format(n=n, limit=limit), "too-large")


_SCALARS: dict[tuple[str, str], Any] = {}
# A plain scalar's text -> its value, for the texts whose value depends on the text alone
# (`_CACHEABLE_TAGS` and strings): one look-up instead of resolving the tag again.
_PLAIN: dict[str, Any] = {}
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
    # Only lines at column 0 that are neither blank nor comments are looked at (a regex scan,
    # not a Python loop over the file's ten thousand lines).
    cuts: list[int] = []
    for m in _COLUMN0_RE.finditer("\n" + text):
        if not starts(m.group(1)):
            return None  # `---`, `%YAML`, a flow collection, a tab, another kind of node at column 0
        cuts.append(m.start())  # the line's start in `text`: the match starts at its newline
    if not cuts or any(ln.strip() and not ln.lstrip().startswith("#") for ln in text[:cuts[0]].split("\n")):
        return None
    out: list[tuple[int, str]] = []
    line, at = 1, 0
    for a, b in zip(cuts, cuts[1:] + [len(text)]):
        line += text.count("\n", at, a)
        at = a
        out.append((line, text[a:b]))
    return out


# A line at column 0 that is neither blank nor a comment, with the newline before it (a literal
# first character lets the regex engine skip from newline to newline).
_COLUMN0_RE = re.compile(r"\n([^ #\n][^\n]*)")


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
    _PLAIN.clear()
    _plain_tag.cache_clear()
    _CHUNKS.clear()


try:  # libyaml: ~20x faster than the pure-Python parser on the 750 KB changelog
    from yaml._yaml import CParser as _Parser
except ImportError:  # pragma: no cover - the wheels ship libyaml
    from yaml.loader import SafeLoader as _Parser

# A mapping frame waiting for its next key, and the pending key of a `<<` merge.
_KEY = object()
_MERGE = object()


def _scalar(ctor: SafeConstructor, path: str, tag: str, event: ScalarEvent) -> Any:
    """A scalar of another tag than str that `_SCALARS` does not hold, built as SafeLoader builds
    it, and kept there per (tag, text) when its value depends only on them (the same `8192`,
    `true`, `1` recur thousands of times; `_compose` looks there first)."""
    value = event.value
    node = ScalarNode(tag, value, event.start_mark, event.end_mark, event.style)
    try:
        ctor_fn = ctor.yaml_constructors.get(tag)
        built = ctor_fn(ctor, node) if ctor_fn else ctor.construct_object(node, deep=True)
    except (yaml.YAMLError, ValueError, OverflowError) as e:
        # Constructors raise plain ValueError for e.g. `2026-13-45` or `!!float x`.
        raise RecipeError.at(path, event.start_mark.line + 1, f"bad scalar: {e}", "yaml")
    if tag in _CACHEABLE_TAGS:
        if len(_SCALARS) >= _SCALAR_CACHE_SIZE:
            _SCALARS.clear()
        _SCALARS[(tag, value)] = built
    return built


def _merge(path: str, merged: dict | None, source: Any, line: int) -> dict:
    """A mapping's merged keys (None before its first `<<`) with a `<<` source added (a mapping
    or a list of them): the first source that has a key wins, and the mapping's own keys win
    over all (applied at its end)."""
    merged = {} if merged is None else merged
    for src in source if isinstance(source, list) else (source,):
        if not isinstance(src, dict):
            raise RecipeError.at(path, line, "merge key needs a mapping", "yaml")
        for k, v in src.items():
            merged.setdefault(k, v)
    return merged


def _compose(text: str, path: str, max_nodes: int) -> tuple[Any, dict[tuple[Key, ...], int]]:
    """The value of a one-document YAML text and the lines of its key paths, built straight from
    libyaml's events: no node tree, so with the collector running (it walked the tree) a file
    loads in about half the time of compose-then-build. SafeLoader's semantics (YAML 1.1 tags,
    `<<` merges, shared aliases) and its composer's errors (undefined or duplicate anchor, a
    second document) are kept.

    `YamlDoc.line` falls back to the nearest recorded ancestor, so a path's line is recorded only
    where it differs from the line its parent path resolves to; a mapping value's path resolves to
    its key's line. An alias shares the anchored value and records no line of its own. Aliases
    are bounded by `max_nodes`: each adds the node count of what it names (a "billion laughs"
    document is refused as soon as its expansion passes the bound)."""
    parser = _Parser(text)
    get = parser.get_event
    get()  # the stream's start
    event = get()
    if type(event) is StreamEndEvent:
        return None, {}
    document = event
    ctor = SafeConstructor()
    lines: dict[tuple[Key, ...], int] = {}
    anchors: dict[str, tuple[Any, int | None, Any]] = {}  # name -> (value, node count or None while open, mark)
    holder: list[Any] = []
    # The open collection: its value, key path, the line its path resolves to, whether it is a
    # mapping, the pending key (_KEY when a key is next) and its line, and the `<<`-merged keys.
    cont: Any = holder
    kp: tuple[Key, ...] = ()
    cline: int | None = None
    is_map = False
    # Mappings built with a `<<` merge, and the line of the first merge that takes one in: such a
    # nested merge is where PyYAML (srtctl's reader) and YAML's rules can disagree.
    merged_ids: set[int] = set()
    nested_merge: list[int] = []
    key: Any = _KEY
    kline = 0
    merged: dict | None = None
    stack: list[tuple] = []
    count = 0  # nodes so far, an alias counting as what it names
    while True:
        event = get()
        kind = type(event)
        if kind is ScalarEvent:
            value = event.value
            tag = event.tag
            plain = tag is None and event.implicit[0]  # most scalars, and a few thousand texts
            hit = _PLAIN.get(value, _MISSING) if plain else _MISSING
            if hit is not _MISSING:
                value = hit
            else:
                if tag is None or tag == "!":
                    tag = _plain_tag(value) if event.implicit[0] else _STR_TAG
                if tag != _STR_TAG:
                    hit = _SCALARS.get((tag, value), _MISSING)  # `_scalar`'s cache hit, in line
                    if hit is not _MISSING:
                        value = hit
                    else:
                        value = _MERGE if tag == _MERGE_TAG and is_map and key is _KEY else _scalar(ctor, path, tag, event)
                if plain and (tag == _STR_TAG or tag in _CACHEABLE_TAGS):
                    if len(_PLAIN) >= _SCALAR_CACHE_SIZE:
                        _PLAIN.clear()
                    _PLAIN[event.value] = value
            count += 1
            line = event.start_mark.line + 1
            if event.anchor is not None:
                _anchor(anchors, event, value, 1)
            alias = False
        elif kind is AliasEvent:
            name = event.anchor
            if name not in anchors:
                raise ComposerError(None, None, f"found undefined alias {name!r}", event.start_mark)
            value, size, _ = anchors[name]
            count += size or 1  # an alias inside what it names counts once, as a node
            if count > max_nodes:
                raise RecipeError.at(path, None, f"YAML expands to more than {max_nodes} nodes (alias bomb?)",
                                     "alias-bomb")
            line = event.start_mark.line + 1
            if is_map and key is _KEY and isinstance(value, (dict, list)):
                raise RecipeError.at(path, line, "mapping keys must be scalars", "yaml")
            alias = True
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            line = event.start_mark.line + 1
            tag = event.tag
            if tag is not None and tag != "!" and tag != _MAP_TAG and tag != _SEQ_TAG:
                # `!!set {a, b}`, `!!omap [...]`, `!custom [...]`: the real loader would build
                # something else or refuse; reading it as a plain collection would hide that.
                what = "mapping" if kind is MappingStartEvent else "sequence"
                raise RecipeError.at(path, line, f"YAML tag {tag} on a {what} is not supported", "yaml-tag")
            new: Any = {} if kind is MappingStartEvent else []
            if is_map:
                if key is _KEY:
                    raise RecipeError.at(path, line, "mapping keys must be scalars", "yaml")
                if key is _MERGE:
                    child_kp = kp + ("<<",)
                else:
                    child_kp = kp + (key,)
                    cont[key] = new
                child_line = kline
            else:
                child_kp = kp + (len(cont),) if stack else ()
                child_line = line
                if line != cline:
                    lines[child_kp] = line
                cont.append(new)
            if len(child_kp) > MAX_DEPTH:
                raise RecipeError.at(path, line, f"YAML nests deeper than {MAX_DEPTH} levels", "too-deep")
            count += 1
            anchor = event.anchor
            if anchor is not None:
                _anchor(anchors, event, new, None)
            stack.append((cont, kp, cline, is_map, key, kline, merged, anchor, count))
            cont, kp, cline, is_map, key, merged = new, child_kp, child_line, kind is MappingStartEvent, _KEY, None
            continue
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            if merged is not None:
                for k, v in merged.items():
                    cont.setdefault(k, v)
                merged_ids.add(id(cont))
            done = cont
            cont, kp, cline, is_map, key, kline, merged, anchor, start = stack.pop()
            if anchor is not None:
                anchors[anchor] = (done, count - start + 1, anchors[anchor][2])
            if key is _MERGE:
                if any(id(s) in merged_ids for s in (done if isinstance(done, list) else [done])):
                    nested_merge.append(kline)
                merged = _merge(path, merged, done, kline)
            key = _KEY
            continue
        elif kind is DocumentEndEvent:
            break
        else:
            continue
        # A scalar or an alias: the next key of a mapping, a mapping's value or an item.
        if is_map:
            if key is _KEY:
                if value is _MERGE:
                    if merged is not None:
                        raise RecipeError.at(path, line, "duplicate key '<<' (a mapping takes one merge key; "
                                                         "list several sources in it)", "duplicate-key")
                    key, kline = _MERGE, line
                    continue
                if value in cont:
                    raise RecipeError.at(path, line, f"duplicate key {value!r} (first at line "
                                                     f"{lines.get(kp + (value,), cline)})", "duplicate-key")
                key, kline = value, line
                if line != cline:
                    lines[kp + (value,)] = line
            else:
                if key is _MERGE:
                    if alias and id(value) in merged_ids:
                        nested_merge.append(line)
                    merged = _merge(path, merged, value, line)
                else:
                    cont[key] = value
                key = _KEY
        else:
            if line != cline and not alias:  # an alias records no line of its own
                lines[kp + (len(cont),) if stack else ()] = line
            cont.append(value)
    event = get()
    if type(event) is not StreamEndEvent:
        raise ComposerError("expected a single document in the stream", document.start_mark,
                            "but found another document", event.start_mark)
    if nested_merge and _pyyaml_reading(text) != holder[0]:
        # srtctl reads recipes with PyYAML, whose merge of a mapping that itself merged differs
        # from YAML's rules: two readings of one file, so the bot takes neither.
        raise RecipeError.at(path, nested_merge[0], "this `<<` merges a mapping that has its own `<<`, which PyYAML "
                                                   "(srtctl's reader) resolves differently from YAML's merge rules; "
                                                   "write the keys out so that the file has one reading",
                             "merge-ambiguous")
    return holder[0], lines


def _pyyaml_reading(text: str) -> Any:
    """The document as PyYAML's safe loader reads it (C loader where built)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError:
        return _PYYAML_FAILED


_PYYAML_FAILED = object()


def _anchor(anchors: dict, event: Any, value: Any, size: int | None) -> None:
    name = event.anchor
    if name in anchors:
        raise ComposerError(f"found duplicate anchor {name!r}; first occurrence", anchors[name][2],
                            "second occurrence", event.start_mark)
    anchors[name] = (value, size, event.start_mark)


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
    check_values(text, path)
    try:
        value, lines = _compose(text, path, max_nodes)
    except yaml.YAMLError as e:
        raise _yaml_error(path, e, line_offset) from None
    except RecipeError as e:
        if line_offset and e.finding.line:
            raise RecipeError.at(path, e.finding.line + line_offset, e.finding.message, e.finding.code) from None
        raise
    if line_offset:
        lines = {k: v + line_offset for k, v in lines.items()}
    return YamlDoc(path=path, data=value, lines=lines)


def _yaml_error(path: str, e: yaml.YAMLError, offset: int) -> RecipeError:
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    line = mark.line + 1 + offset if mark is not None else None
    problem = getattr(e, "problem", None) or str(e).splitlines()[0]
    return RecipeError.at(path, line, f"malformed YAML: {problem}", "yaml")
