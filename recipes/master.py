"""Master configs (`*-master.yaml`): config key -> entry, parsed leniently with a line for every value."""
from __future__ import annotations

import re
from collections import OrderedDict
from functools import cached_property, lru_cache
from typing import Any, Callable

from pydantic import ConfigDict, Field

from .errors import Finding, RecipeError
from .model import Model, keep, kept
from .yamlio import MAX_YAML_BYTES, YamlDoc, at_line, decode_text, load_chunk, load_yaml, top_level_chunks

SCENARIO_FIXED = "fixed-seq-len"
SCENARIO_AGENTIC = "agentic-coding"
SCENARIOS = (SCENARIO_FIXED, SCENARIO_AGENTIC)

# Multi-node arms name their recipe as `CONFIG_FILE=recipes/...`, relative to the srt-slurm
# recipe root; that root lives here in the benchmark repository (spec 2.1).
CONFIG_FILE_KEY = "CONFIG_FILE"
EVAL_CONFIG_FILE_KEY = "EVAL_CONFIG_FILE"
SRT_RECIPES_PREFIX = "recipes/"
MULTI_NODE_RECIPE_ROOT = "benchmarks/multi_node/srt-slurm-recipes"

MSG_WRONG_TYPE = "{field}: expected {kind}, got {value!r}"
MSG_NOT_MAPPING = "expected a mapping of config keys to entries"
MSG_ENTRY_NOT_MAPPING = "{key}: an entry must be a mapping"
MSG_MISSING = "{key}: required field {field!r} is missing"
MSG_UNKNOWN_SCENARIO = "{key}: unknown scenario {name!r} (expected one of {known})"
MSG_BAD_SETTING = "additional-settings item {item!r} is not KEY=VALUE"
MSG_NO_CONC = "arm has neither conc-start/conc-end nor conc-list"

REQUIRED_ENTRY_FIELDS = ("image", "model", "model-prefix", "runner", "precision", "framework", "multinode")


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _is_int_list(v: Any) -> bool:
    return isinstance(v, list) and all(_is_int(x) for x in v)


# (checker, human-readable kind, types every value of which passes the checker) per field kind;
# the last spares the checker's call for the values YAML actually gives.
_KINDS: dict[str, tuple[Callable[[Any], bool], str, frozenset[type]]] = {
    "int": (_is_int, "an integer", frozenset({int})),
    "num": (_is_num, "a number", frozenset({int, float})),
    "bool": (lambda v: isinstance(v, bool), "true or false", frozenset({bool})),
    "str": (lambda v: isinstance(v, str), "a string", frozenset({str})),
    "map": (lambda v: isinstance(v, dict), "a mapping", frozenset({dict})),
    "ints": (_is_int_list, "a list of integers", frozenset()),
    "strs": (lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v), "a list of strings", frozenset()),
    "name": (lambda v: isinstance(v, (str, dict)), "a name or a {name, version} mapping", frozenset({str, dict})),
    "list": (lambda v: isinstance(v, list), "a list", frozenset({list})),
}
_FieldSpec = dict[str, tuple[str, Callable[[Any], bool], str, frozenset[type]]]


def _line(lines: dict[tuple, int], keypath: tuple, parent_line: int | None) -> int | None:
    """`YamlDoc.line(*keypath)` given the parent path's answer: one lookup instead of a walk."""
    return lines.get(keypath, parent_line)


class _Reader:
    """Takes typed fields out of one YAML mapping; wrong types become findings, the value None."""

    def __init__(self, doc: YamlDoc, findings: list[Finding]):
        self.doc = doc
        self.findings = findings

    def fields(self, raw: dict, keypath: tuple, spec: _FieldSpec,
               parent_line: int | None) -> tuple[dict[str, Any], dict[str, Any]]:
        """`parent_line` is the line of `keypath` itself (what `doc.line(*keypath)` answers).
        The fields' own lines are worked out later, when first asked for (`_Sourced.lines`)."""
        known: dict[str, Any] = {}
        extra: dict[str, Any] = {}
        for k, v in raw.items():
            is_str = type(k) is str
            field = spec.get(k) if is_str or isinstance(k, str) else None
            if field is None:
                extra[k if is_str else str(k)] = v
                continue
            name, check, what, passing = field
            if type(v) not in passing and (v is None or not check(v)):
                if v is not None:
                    self.findings.append(Finding(
                        path=self.doc.path, line=self.doc.lines.get(keypath + (k,), parent_line), code="type",
                        message=MSG_WRONG_TYPE.format(field=k, kind=what, value=v),
                    ))
                continue
            known[name] = v
        return known, extra


# Where a model's field lines are read from when first asked for: the document's lines, the
# mapping's key path and the mapping itself (its own line is the model's `line`).
_LinesSource = tuple[dict, tuple, dict]


def _field_lines(doc_lines: dict, keypath: tuple, parent_line: int | None, raw: dict, settings: int) -> dict[str, int]:
    """Field name as written -> its line, for every key of `raw` (the fields' own lines, or the
    mapping's line when a field has none); `additional-settings[i]` for each settings item."""
    lines: dict[str, int] = {}
    for k in raw:
        line = doc_lines.get(keypath + (k,), parent_line)
        if line is not None:
            lines[k if type(k) is str else str(k)] = line
    for i in range(settings):
        line = _settings_item_line(doc_lines, keypath, parent_line, i)
        if line is not None:
            lines[f"additional-settings[{i}]"] = line
    return lines


def _settings_item_line(doc_lines: dict, keypath: tuple, parent_line: int | None, i: int) -> int | None:
    """The line of a worker block's i-th `additional-settings` item: its own, else the list's,
    else the block's (the one rule `lines`, `setting_line` and the findings share)."""
    as_kp = keypath + ("additional-settings",)
    return doc_lines.get(as_kp + (i,), doc_lines.get(as_kp, parent_line))


def _locate(model: "_Sourced", source: _LinesSource) -> None:
    """Say where `model.lines` will be read from (kept beside the fields, `recipes.model.keep`)."""
    keep(model, "lines_source", source)


class Located(Model):
    """Where a value was written."""

    model_config = ConfigDict(frozen=True)

    path: str
    line: int | None = None


class _Sourced(Model):
    model_config = ConfigDict(frozen=True)

    path: str = ""
    line: int | None = None
    extra: dict[str, Any] = Field(default_factory=dict)

    @cached_property
    def lines(self) -> dict[str, int]:
        """Field name as written (e.g. "conc-list") -> its line. Worked out on first use: a
        master config has about 20,000 fields and a review cites a few (`_locate`)."""
        source = kept(self, "lines_source")
        if source is None:
            return {}
        doc_lines, keypath, raw = source
        return _field_lines(doc_lines, keypath, self.line, raw, len(getattr(self, "additional_settings", ())))

    def line_of(self, field: str) -> int | None:
        source = kept(self, "lines_source")
        if source is not None and "lines" not in self.__dict__ and field in source[2]:
            # One field's line, looked up alone, as `_field_lines` looks it up.
            return source[0].get(source[1] + (field,), self.line)
        return self.lines.get(field, self.line)

    def where(self, field: str | None = None) -> Located:
        return Located(path=self.path, line=self.line_of(field) if field else self.line)


def split_recipe_ref(ref: str) -> tuple[str, str | None]:
    """`path.yaml:selector` -> (path, selector); a bare path has no selector."""
    path, sep, selector = ref.partition(".yaml:")
    if sep:
        return path + ".yaml", selector.strip() or None
    path, sep, selector = ref.partition(".yml:")
    if sep:
        return path + ".yml", selector.strip() or None
    return ref, None


class WorkerBlock(_Sourced):
    """A multi-node `prefill`, `decode` or `worker` block."""

    role: str
    num_worker: int | None = None
    tp: int | None = None
    ep: int | None = None
    pp: int | None = None
    dcp_size: int | None = None
    pcp_size: int | None = None
    dp_attn: bool | None = None
    hardware: Any = None
    additional_settings: list[str] = Field(default_factory=list)

    @property
    def settings(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for item in self.additional_settings:
            key, sep, value = item.partition("=")
            if sep:
                out[key.strip()] = value.strip()
        return out

    def setting_line(self, key: str) -> int | None:
        """The line of the first item that sets `key`."""
        for i, item in enumerate(self.additional_settings):
            if item.partition("=")[0].strip() == key:
                return self._item_line(i)
        return None

    def setting_lines(self) -> dict[str, int]:
        """The line of each key's item in force (the last that sets it, as `settings` reads)."""
        out: dict[str, int] = {}
        for i, item in enumerate(self.additional_settings):
            key, sep, _ = item.partition("=")
            line = self._item_line(i) if sep else None
            if line is not None:
                out[key.strip()] = line
        return out

    def _item_line(self, i: int) -> int | None:
        source = kept(self, "lines_source")
        if source is not None and "lines" not in self.__dict__:
            line = _settings_item_line(source[0], source[1], self.line, i)
            return self.line_of("additional-settings") if line is None else line
        return self.lines.get(f"additional-settings[{i}]", self.line_of("additional-settings"))

    def config_file(self, key: str = CONFIG_FILE_KEY) -> tuple[str, str | None] | None:
        """(repository path relative to the layout root, selector) of a `CONFIG_FILE` setting."""
        return config_file_ref(self.settings.get(key))


def config_file_ref(value: str | None) -> tuple[str, str | None] | None:
    """`WorkerBlock.config_file` for a setting's value already looked up (None or empty: none)."""
    if not value:
        return None
    path, selector = split_recipe_ref(value)
    if path.startswith(SRT_RECIPES_PREFIX):
        path = f"{MULTI_NODE_RECIPE_ROOT}/{path[len(SRT_RECIPES_PREFIX):]}"
    return path, selector


class Arm(_Sourced):
    """One search-space arm."""

    index: int = 0
    tp: int | None = None
    ep: int | None = None
    pp: int | None = None
    dcp_size: int | None = None
    pcp_size: int | None = None
    dp_attn: bool | None = None
    spec_decoding: str | None = None
    conc_start: int | None = None
    conc_end: int | None = None
    conc_list: list[int] | None = None
    router: Any = None
    srt_recipe: str | None = None
    kv_offloading: str | None = None
    kv_offload_backend: Any = None
    kv_p2p_transfer: Any = None
    num_nodes: int | None = None
    prefill: WorkerBlock | None = None
    decode: WorkerBlock | None = None
    worker: WorkerBlock | None = None

    @property
    def recipe_ref(self) -> tuple[str, str | None] | None:
        return split_recipe_ref(self.srt_recipe) if self.srt_recipe else None

    @property
    def is_multinode(self) -> bool:
        return any(b is not None for b in (self.prefill, self.decode, self.worker))

    @property
    def blocks(self) -> list[WorkerBlock]:
        return [b for b in (self.prefill, self.decode, self.worker) if b is not None]


class ScenarioItem(_Sourced):
    """One item of `scenarios.<name>`: its sequence lengths (fixed-seq) or DRAM share (agentic)."""

    scenario: str
    index: int = 0
    isl: int | None = None
    osl: int | None = None
    dram_utilization: float | None = None
    arms: list[Arm] = Field(default_factory=list)


class MasterEntry(_Sourced):
    # `_raw`, kept by `_entry`: the YAML mapping the entry was read from (plain data, no
    # positions): two entries with equal mappings are the same entry wherever they sit.

    key: str
    image: str | None = None
    model: str | None = None
    model_prefix: str | None = None
    runner: str | None = None
    precision: str | None = None
    framework: str | None = None
    multinode: bool | None = None
    disagg: bool | None = None
    router: Any = None
    kv_p2p_transfer: Any = None
    scenarios: list[ScenarioItem] = Field(default_factory=list)

    @property
    def arms(self) -> list[tuple[ScenarioItem, Arm]]:
        return [(s, a) for s in self.scenarios for a in s.arms]


class MasterFile(Model):
    path: str
    entries: dict[str, MasterEntry] = Field(default_factory=dict)
    findings: list[Finding] = Field(default_factory=list)


# Commas plus lines: the real nvidia-master.yaml has about 11,600 (1,691 commas, 9,943 lines).
MAX_MASTER_VALUES = 60_000
MSG_TOO_MANY_VALUES = "holds {n} values (commas and lines), over the {limit}-value limit; it was not parsed"

_ENTRY_FIELDS = {
    "image": "str", "model": "str", "model-prefix": "str", "runner": "str", "precision": "str",
    "framework": "str", "multinode": "bool", "disagg": "bool", "router": "name",
    "kv-p2p-transfer": "name", "scenarios": "map",
}
_ITEM_FIELDS = {"isl": "int", "osl": "int", "dram-utilization": "num", "search-space": "list"}
_ARM_FIELDS = {
    "tp": "int", "ep": "int", "pp": "int", "dcp-size": "int", "pcp-size": "int", "dp-attn": "bool",
    "spec-decoding": "str", "conc-start": "int", "conc-end": "int", "conc-list": "ints",
    "router": "name", "srt-recipe": "str", "kv-offloading": "str", "kv-offload-backend": "name",
    "kv-p2p-transfer": "name", "num-nodes": "int",
}
_BLOCK_FIELDS = {
    "num-worker": "int", "tp": "int", "ep": "int", "pp": "int", "dcp-size": "int", "pcp-size": "int",
    "dp-attn": "bool", "additional-settings": "strs",
}
_ROLE_BLOCKS = ("prefill", "decode", "worker")


def _compile(spec: dict[str, str]) -> _FieldSpec:
    """Field as written -> (model attribute, type check, kind for messages, always-passing types)."""
    return {k: (k.replace("-", "_"), *_KINDS[kind]) for k, kind in spec.items()}


_ENTRY_SPEC = _compile(_ENTRY_FIELDS)
_ITEM_SPEC = _compile(_ITEM_FIELDS)
_ARM_SPEC = _compile(dict(_ARM_FIELDS, **{r: "map" for r in _ROLE_BLOCKS}))
_BLOCK_SPEC = _compile(_BLOCK_FIELDS)


def parse_master(data: bytes | str, path: str) -> MasterFile:
    """Parse one master config. Never raises: unreadable input is a finding and no entries."""
    raw = data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data
    values = raw.count(b",") + raw.count(b"\n") if len(raw) <= MAX_YAML_BYTES else 0
    if values > MAX_MASTER_VALUES:
        # Composing YAML costs about 9 us a node; a real master config has a few thousand.
        return MasterFile(path=path, findings=[Finding(path=path, line=None, code="too-large",
                                                       message=MSG_TOO_MANY_VALUES.format(n=values, limit=MAX_MASTER_VALUES))])
    chunked = _parse_by_entry(data, path)
    if chunked is not None:
        return chunked
    try:
        doc = load_yaml(data, path)
    except RecipeError as e:
        return MasterFile(path=path, findings=[e.finding])
    return master_from_doc(doc)


# --- parsing entry by entry ------------------------------------------------------------------
# A PR changes a few entries of a master config of hundreds: its head, base and target views
# differ in those entries only. A master config is a block mapping of config keys, each entry
# independent of the others (no anchors are used), so each top-level block is parsed on its own
# (lines shifted to the file's) and kept by its text: an unchanged entry is parsed once per
# process and is the same object in every view, and so is its expansion into points
# (recipes.repository). Anything but that plain shape is parsed whole, as is any file whose
# blocks do not all parse: the whole parse is then the one that reports.
_TOP_KEY_RE = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+/-]*:[ \t]*(?:#.*)?")
_ENTRY_CACHE: "OrderedDict[tuple[str, str, int], tuple[dict[str, MasterEntry], list[Finding]]]" = OrderedDict()
ENTRY_CACHE_SIZE = 4096


def clear_entry_cache() -> None:
    _ENTRY_CACHE.clear()


def _top_level_blocks(text: str) -> list[tuple[int, str, str]] | None:
    """(first line, key, text) of each top-level entry, or None unless the file is a plain
    block mapping whose keys are simple names written alone on their line, each once
    (yamlio.top_level_chunks)."""
    chunks = top_level_chunks(text, _TOP_KEY_RE.fullmatch)
    if chunks is None or len(chunks) < 2:
        return None
    keys = [chunk.split(":", 1)[0] for _, chunk in chunks]
    if len(set(keys)) != len(keys):
        return None  # the whole parse reports the duplicate
    return [(first, key, chunk) for (first, chunk), key in zip(chunks, keys)]


def _parse_by_entry(data: bytes | str, path: str) -> MasterFile | None:
    try:  # the whole parse reports an oversized, binary or non-UTF-8 file
        text = data if isinstance(data, str) else decode_text(data, path)
    except RecipeError:
        return None
    if len(text) > MAX_YAML_BYTES:
        return None
    blocks = _top_level_blocks(text)
    if blocks is None:
        return None
    entries: dict[str, MasterEntry] = {}
    findings: list[Finding] = []
    for first, key, block in blocks:
        cache_key = (path, block, first)
        hit = _ENTRY_CACHE.get(cache_key)
        if hit is None:
            try:
                doc = at_line(load_chunk(block, path), first)
            except RecipeError:
                return None
            if not isinstance(doc.data, dict) or list(doc.data) != [key]:
                return None
            part = master_from_doc(doc)
            hit = _ENTRY_CACHE[cache_key] = (part.entries, part.findings)
            if len(_ENTRY_CACHE) > ENTRY_CACHE_SIZE:
                _ENTRY_CACHE.popitem(last=False)
        else:
            _ENTRY_CACHE.move_to_end(cache_key)
        entries.update(hit[0])
        findings.extend(hit[1])
    return MasterFile(path=path, entries=entries, findings=findings)


def master_from_doc(doc: YamlDoc) -> MasterFile:
    findings: list[Finding] = []
    entries: dict[str, MasterEntry] = {}
    if doc.data is not None and not isinstance(doc.data, dict):
        findings.append(Finding(path=doc.path, line=1, message=MSG_NOT_MAPPING))
    elif doc.data is not None:
        reader = _Reader(doc, findings)
        for key, raw in doc.data.items():
            key = str(key)
            if not isinstance(raw, dict):
                findings.append(Finding(path=doc.path, line=doc.line(key), message=MSG_ENTRY_NOT_MAPPING.format(key=key)))
                continue
            entries[key] = _entry(reader, key, raw)
    # Built last: pydantic copies lists on construction, so findings must be complete first.
    return MasterFile(path=doc.path, entries=entries, findings=findings)


def _entry(reader: _Reader, key: str, raw: dict) -> MasterEntry:
    doc = reader.doc
    lmap = doc.lines
    entry_line = _line(lmap, (key,), doc.line())
    known, extra = reader.fields(raw, (key,), _ENTRY_SPEC, entry_line)
    for field in REQUIRED_ENTRY_FIELDS:
        if field not in raw:
            reader.findings.append(Finding(
                path=doc.path, line=entry_line, code="missing-field",
                message=MSG_MISSING.format(key=key, field=field),
            ))
    scenarios: list[ScenarioItem] = []
    scen_line = _line(lmap, (key, "scenarios"), entry_line)
    for name, items in (known.pop("scenarios", None) or {}).items():
        name_line = _line(lmap, (key, "scenarios", name), scen_line)
        if name not in SCENARIOS:
            reader.findings.append(Finding(
                path=doc.path, line=name_line, code="unknown-scenario",
                message=MSG_UNKNOWN_SCENARIO.format(key=key, name=name, known=", ".join(SCENARIOS)),
            ))
            continue
        if not isinstance(items, list):
            reader.findings.append(Finding(
                path=doc.path, line=name_line, code="type",
                message=MSG_WRONG_TYPE.format(field=name, kind="a list", value=items),
            ))
            continue
        for i, item in enumerate(items):
            kp = (key, "scenarios", name, i)
            item_line = _line(lmap, kp, name_line)
            if not isinstance(item, dict):
                reader.findings.append(Finding(
                    path=doc.path, line=item_line, code="type",
                    message=MSG_WRONG_TYPE.format(field=name, kind="a mapping", value=item),
                ))
                continue
            scenarios.append(_item(reader, name, i, item, kp, item_line))
    entry = MasterEntry(key=key, path=doc.path, line=entry_line, extra=extra, scenarios=scenarios, **known)
    keep(entry, "_raw", raw)
    _locate(entry, (lmap, (key,), raw))
    return entry


def _item(reader: _Reader, name: str, index: int, raw: dict, kp: tuple, item_line: int | None) -> ScenarioItem:
    lmap = reader.doc.lines
    known, extra = reader.fields(raw, kp, _ITEM_SPEC, item_line)
    arms = []
    ss_kp = kp + ("search-space",)
    ss_line = _line(lmap, ss_kp, item_line)
    for j, arm in enumerate(known.pop("search_space", None) or []):
        akp = ss_kp + (j,)
        arm_line = _line(lmap, akp, ss_line)
        if not isinstance(arm, dict):
            reader.findings.append(Finding(
                path=reader.doc.path, line=arm_line, code="type",
                message=MSG_WRONG_TYPE.format(field="search-space item", kind="a mapping", value=arm),
            ))
            continue
        arms.append(_arm(reader, j, arm, akp, arm_line))
    if "dram_utilization" in known:
        known["dram_utilization"] = float(known["dram_utilization"])
    item = ScenarioItem(scenario=name, index=index, path=reader.doc.path, line=item_line, extra=extra, arms=arms, **known)
    _locate(item, (lmap, kp, raw))
    return item


def _arm(reader: _Reader, index: int, raw: dict, kp: tuple, arm_line: int | None) -> Arm:
    doc = reader.doc
    known, extra = reader.fields(raw, kp, _ARM_SPEC, arm_line)
    for role in _ROLE_BLOCKS:
        if role in known:
            bkp = kp + (role,)
            known[role] = _block(reader, role, known[role], bkp, _line(doc.lines, bkp, arm_line))
    if "conc_list" not in known and "conc_start" not in known:
        reader.findings.append(Finding(path=doc.path, line=arm_line, code="missing-field", message=MSG_NO_CONC))
    arm = Arm(index=index, path=doc.path, line=arm_line, extra=extra, **known)
    _locate(arm, (doc.lines, kp, raw))
    return arm


def _block(reader: _Reader, role: str, raw: dict, kp: tuple, block_line: int | None) -> WorkerBlock:
    doc = reader.doc
    known, extra = reader.fields(raw, kp, _BLOCK_SPEC, block_line)
    if "hardware" in extra:
        known["hardware"] = extra.pop("hardware")
    settings = known.get("additional_settings", [])
    block = WorkerBlock(role=role, path=doc.path, line=block_line, extra=extra, **known)
    _locate(block, (doc.lines, kp, raw))
    for i, item in enumerate(settings):
        if "=" not in item:
            line = _settings_item_line(doc.lines, kp, block_line, i)
            reader.findings.append(Finding(path=doc.path, line=line, code="type", message=MSG_BAD_SETTING.format(item=item)))
    return block


# --- images -------------------------------------------------------------------------------

DEFAULT_REGISTRY = "docker.io"


class ImageRef(Model):
    """A container image split into parts; `#` after the registry host is read as `/` (enroot)."""

    model_config = ConfigDict(frozen=True)

    repository: str  # registry-qualified unless on Docker Hub, e.g. "rocm/atom-dev", "nvcr.io/nvidia/x"
    tag: str | None = None
    digest: str | None = None

    @property
    def canonical(self) -> str:
        s = self.repository
        if self.tag:
            s += f":{self.tag}"
        if self.digest:
            s += f"@{self.digest}"
        return s


def _looks_like_host(part: str) -> bool:
    return "." in part or ":" in part or part == "localhost"


def normalize_image(image: str) -> ImageRef:
    s = image.strip()
    rest, _, digest = s.partition("@")
    host, sep, after = rest.partition("#")
    if sep and _looks_like_host(host):
        rest = f"{host}/{after}"
    tag = None
    last = rest.rsplit("/", 1)[-1]
    if ":" in last:
        rest, _, tag = rest.rpartition(":")
    parts = rest.split("/")
    if len(parts) > 1 and parts[0] in (DEFAULT_REGISTRY, "index.docker.io", "registry-1.docker.io"):
        parts = parts[1:]
        if len(parts) == 2 and parts[0] == "library":
            parts = parts[1:]
    return ImageRef(repository="/".join(parts), tag=tag or None, digest=digest or None)


@lru_cache(maxsize=4096)  # binding asks it for every (variant, point) pair: few distinct images
def images_match(a: str, b: str) -> bool:
    """Same repository, and every component both sides pin (tag, digest) is equal."""
    x, y = normalize_image(a), normalize_image(b)
    if x.repository != y.repository:
        return False
    compared = False
    for part in ("tag", "digest"):
        u, v = getattr(x, part), getattr(y, part)
        if u and v:
            if u != v:
                return False
            compared = True
    return compared or (x.tag is None and y.tag is None and x.digest is None and y.digest is None)
