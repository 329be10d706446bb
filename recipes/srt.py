"""srt-slurm recipes: variants by srtctl merge rules (spec 3), read from both recipe formats;
binding points to variants is recipes.binding."""
from __future__ import annotations

import json
import re
from functools import cached_property, partial
from typing import TYPE_CHECKING, Any, Callable, Iterable

from pydantic import ConfigDict, Field

from . import engines
from .engines import canonical_engine as normalize_engine
from .errors import Finding, RecipeError
from .model import Model, keep, kept
from .values import as_int
from .yamlio import YamlDoc, load_yaml

if TYPE_CHECKING:
    from .binding import BindFacts

BASE = "base"
OVERRIDE_PREFIX = "override_"
ZIP_PREFIX = "zip_override_"
SCHEMA_KEY = "schema"
AGENTIC_CLIENT = "srt_agentic.sh"
SINGLE_NODE_ROLE = "agg"
BENCHMARK_TYPE = "custom"
SA_BENCH = "sa-bench"
DCP_FLAG = "decode-context-parallel-size"
# srtctl's schema default for an sa-bench `benchmark.use_chat_template` that is not written.
SA_BENCH_CHAT_DEFAULT = True
# The older srt-slurm format (pre-`schema: 2`, spec 3.4): role names and backend block suffixes.
LEGACY_ROLE_NAMES = {"agg": "aggregated", "prefill": "prefill", "decode": "decode"}
LEGACY_CONFIG_SUFFIX = "_config"
LEGACY_ENV_SUFFIX = "_environment"
# Which engine a master-config framework runs (spec 5.4), the engine-args block of the older
# format, and which engines multiply GPUs by decode context parallelism all come from the engine
# profiles (recipes.engines); binding takes the repository's `framework_family`.

MSG_ZIP_LENGTHS = "Incompatible zip lengths in {block}: {lengths}"
MSG_ZIP_EMPTY = "empty list in {block} at {key}"
MSG_NOT_MAPPING = "{block} must be a mapping"
MSG_BASE_NOT_MAPPING = "recipe must be a mapping"
MSG_UNKNOWN_TOP = "unknown top-level key {key!r} in a recipe bundle"
# Variants of one recipe file (base, overrides, zip slices; each a merged copy of the base). The
# largest real bundle has 29. Over it: an error finding and no variants (docs/bounds.md).
MAX_VARIANTS = 1_000
MSG_TOO_MANY_VARIANTS = ("expands to {n:,} variants (the base, {overrides:,} override blocks and {slices:,} zip "
                         "slices), over the {cap:,}-variant bound (MAX_VARIANTS); it was not expanded")

_ZIP_SELECTOR = re.compile(r"^(zip_override_[^\[\]]+)(?:\[(\d+)\])?$")

KeyPath = tuple[Any, ...]


def _clone(v: Any) -> Any:
    """A deep copy of plain YAML data (faster than copy.deepcopy)."""
    if isinstance(v, dict):
        return {k: _clone(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_clone(x) for x in v]
    return v


def _set_origins(origins: dict[KeyPath, int], value: Any, kp: KeyPath, doc: YamlDoc, src: KeyPath) -> None:
    """Record the source line of `value` and everything under it."""
    _record_lines(origins, value, kp, doc.lines, src, doc.line(*src))


def _record_lines(origins: dict[KeyPath, int], value: Any, kp: KeyPath, lines: dict[KeyPath, int], src: KeyPath,
                  line: int | None) -> None:
    # `line` is `doc.line(*src)`. A child's is its own recorded line or else its parent's (what
    # `YamlDoc.line` walks up to), so one look-up per child replaces a walk to the root.
    if line is not None:
        origins[kp] = line
    if isinstance(value, dict):
        for k, v in value.items():
            child = src + (k,)
            child_line = lines.get(child, line)
            if isinstance(v, dict):
                _record_lines(origins, v, kp + (k,), lines, child, child_line)
            elif child_line is not None:
                origins[kp + (k,)] = child_line


def _drop_origins(origins: dict[KeyPath, int], kp: KeyPath) -> None:
    # Origins are prefix-closed (a path is recorded with all its ancestors), so a path that is
    # not recorded has no recorded descendants and the scan can be skipped.
    if kp not in origins:
        return
    n = len(kp)
    for key in [k for k in origins if k[:n] == kp]:
        del origins[key]


def deep_merge(base: dict, block: dict) -> dict:
    """srtctl merge: mappings merge recursively, lists and scalars replace, null deletes."""
    out = _clone(base)
    _merge_into(out, block, None, (), None, ())
    return out


def _merge_into(dst: dict, src: dict, origins: dict | None, kp: KeyPath, doc: YamlDoc | None, src_kp: KeyPath) -> None:
    """Merge `src` into `dst` in place. A mapping merged into is copied first, so `dst` may share
    its untouched sub-mappings with the base it was shallow-copied from (copy on write)."""
    for k, v in src.items():
        here = kp + (k,)
        old = dst.get(k)
        if v is None:
            dst.pop(k, None)
            if origins is not None:
                _forget_origins(origins, here, old)
        elif isinstance(v, dict) and isinstance(old, dict):
            child = dst[k] = dict(old)
            _merge_into(child, v, origins, here, doc, src_kp + (k,))
        else:
            dst[k] = _clone(v)
            if origins is not None and doc is not None:
                _forget_origins(origins, here, old)
                _set_origins(origins, v, here, doc, src_kp + (k,))


def _forget_origins(origins: dict[KeyPath, int], kp: KeyPath, old: Any) -> None:
    """Drop the origins of the value `old` that stood at `kp`. Only a mapping's keys have origins
    below its own, so another value's one entry is dropped without scanning them all."""
    if isinstance(old, dict):
        _drop_origins(origins, kp)
    else:
        origins.pop(kp, None)


def _without_nulls(d: dict) -> dict:
    """`d` without null values at any mapping depth; `d` itself (not a copy) when it has none,
    so mappings shared with the base stay shared and are never edited."""
    out: dict | None = None
    for k, v in d.items():
        if v is None:
            nv = None
        elif isinstance(v, dict):
            nv = _without_nulls(v)
            if nv is v:
                if out is not None:
                    out[k] = v
                continue
        else:
            if out is not None:
                out[k] = v
            continue
        if out is None:  # first change: copy what came before it
            out = {}
            for k0, v0 in d.items():
                if k0 == k:
                    break
                out[k0] = v0
        if nv is not None:
            out[k] = nv
    return d if out is None else out


def _lists(block: Any, kp: KeyPath = ()) -> Iterable[tuple[KeyPath, list]]:
    if isinstance(block, dict):
        for k, v in block.items():
            yield from _lists(v, kp + (k,))
    elif isinstance(block, list):
        yield kp, block


def zip_length(block: dict, name: str = "zip_override") -> int:
    """N for a zip block: the common length of its lists (length-1 lists broadcast)."""
    lengths = set()
    for kp, lst in _lists(block):
        if not lst:
            raise ValueError(MSG_ZIP_EMPTY.format(block=name, key=".".join(map(str, kp))))
        if len(lst) != 1:
            lengths.add(len(lst))
    if len(lengths) > 1:
        raise ValueError(MSG_ZIP_LENGTHS.format(block=name, lengths=sorted(lengths)))
    return lengths.pop() if lengths else 1


def zip_slice(block: Any, i: int) -> Any:
    """Slice i of a zip block: every list replaced by its i-th (or only) element. The elements
    are the block's own, not copies: a slice is merged, and merging copies what it stores."""
    if isinstance(block, dict):
        return {k: zip_slice(v, i) for k, v in block.items()}
    if isinstance(block, list):
        return block[i] if len(block) > 1 else block[0]
    return block


class SpecDecode(Model):
    """Speculative decoding as a role's args state it."""

    model_config = ConfigDict(frozen=True)

    method: str | None = None  # lower-cased: dspark, mtp, eagle, eagle3, nextn, ...
    draft_length: int | None = None
    draft_model: str | None = None
    line: int | None = None


def _json_obj(v: Any) -> dict | None:
    if isinstance(v, dict):
        return v
    if isinstance(v, str):
        try:
            obj = json.loads(v)
        except ValueError:
            return None
        return obj if isinstance(obj, dict) else None
    return None


def keypath_kind(kp: KeyPath) -> str:
    """What a key path of a variant's data sets, in either recipe format: "arg" (an engine
    flag of a role), "env" (server environment), "client-env" (`benchmark.env`) or "recipe"."""
    n = len(kp)
    if n >= 4 and kp[0] == "roles" and kp[2] == "args":
        return "arg"
    if n >= 4 and kp[0] == "roles" and kp[2] == "env":
        return "env"
    if n >= 2 and kp[0] == "environment":
        return "env"
    if n >= 3 and kp[:2] == ("benchmark", "env"):
        return "client-env"
    if n >= 4 and kp[0] == "backend" and kp[1] in engines.legacy_config_keys() and kp[2] in LEGACY_ROLE_NAMES.values():
        return "arg"
    if n >= 3 and kp[0] == "backend" and isinstance(kp[1], str) and kp[1].endswith(LEGACY_ENV_SUFFIX) \
            and kp[1][:-len(LEGACY_ENV_SUFFIX)] in LEGACY_ROLE_NAMES.values():
        return "env"
    return "recipe"


class Variant(Model):
    """One concrete recipe: base deep-merged with one override block (or a zip slice)."""

    model_config = ConfigDict(frozen=True)

    path: str
    name: str
    selector: str | None  # "base", "override_x", "zip_override_x[i]"; None for a plain recipe
    data: dict[Any, Any]
    line: int | None = None  # line of the block that defines the variant

    @cached_property
    def origins(self) -> dict[KeyPath, int]:
        """Key path (inside `data`) -> line where the effective value was written. Worked out
        on first use: binding compares every variant's values, but only the variants a verdict
        cites need their lines (bench/core.py). How is kept as `origins_of` (recipe_from_doc)."""
        origins_of = kept(self, "origins_of")
        return origins_of() if origins_of is not None else {}

    def line_of(self, *keys: Any) -> int | None:
        k = tuple(keys)
        if not k:
            return self.line
        origins = self.__dict__.get("origins")
        if origins is None:
            # A plain recipe's table is one walk of its document: built whole at once. A bundle
            # variant's is a merge of its block with lines, of which one key's part is enough.
            origins = self.origins if self.selector is None else self._origins_under(k[0])
        while k:
            if k in origins:
                return origins[k]
            k = k[:-1]
        return self.line

    def _origins_under(self, top: Any) -> dict[KeyPath, int]:
        """Origins that are right for the key paths under one top-level key, the rest left as
        they are: what `line_of` reads, without merging the variant's other blocks with lines
        (binding asks each variant whose container differs for the line of `model.container`).
        Only for the first key asked: a second one builds the whole table, which a review citing
        several parts of a variant would otherwise build after several partial ones."""
        by_top = kept(self, "origins_under")
        if isinstance(by_top, tuple) and by_top[0] == top:
            return by_top[1]
        if by_top is not None:
            return self.origins
        origins_of = kept(self, "origins_of")
        partial_origins = origins_of(top) if origins_of is not None else {}
        keep(self, "origins_under", (top, partial_origins))
        return partial_origins

    def get(self, *keys: Any, default: Any = None) -> Any:
        node: Any = self.data
        for k in keys:
            if not isinstance(node, dict) or k not in node:
                return default
            node = node[k]
        return node

    @cached_property
    def engine(self) -> str | None:
        e = self.data.get("engine")
        if e is None and isinstance(self.data.get("backend"), dict):
            key = self._legacy_config_key
            e = self.data["backend"].get("type") or (key[:-len(LEGACY_CONFIG_SUFFIX)] if key else None)
        return normalize_engine(e.get("type") if isinstance(e, dict) else e)

    @property
    def engine_path(self) -> KeyPath:
        return ("engine",) if "engine" in self.data else ("backend", "type")

    def _text(self, *keys: str) -> str | None:
        """A string field; any other type is reported by parse_recipe and reads as absent here."""
        value = self.get(*keys)
        return value if isinstance(value, str) else None

    @property
    def model_path(self) -> str | None:
        return self._text("model", "path")

    @property
    def container(self) -> str | None:
        return self._text("model", "container")

    @property
    def precision(self) -> str | None:
        return self._text("model", "precision")

    # --- the serving view: one model over both recipe formats (spec 3.4) -------------------
    # Schema 2 writes `roles.<role>.{args,env}`; the older srt-slurm format writes engine flags
    # under `backend.<engine>_config.{aggregated,prefill,decode}` and the server environment
    # under `backend.{aggregated,prefill,decode}_environment`. Every reader below (roles, args,
    # env, gpus, tp, spec_decode, the key paths `role_path` gives) answers for both, so no
    # check ever reads the raw format.
    # `data` never changes after parsing, so what is derived from it is computed once per
    # variant (binding asks for it once per (point, variant) pair).
    @cached_property
    def legacy(self) -> bool:
        """True for the older `backend.*_config` / `*_environment` format."""
        if isinstance(self.data.get("roles"), dict):
            return False
        backend = self.data.get("backend")
        return isinstance(backend, dict) and any(
            isinstance(k, str) and (k.endswith(LEGACY_CONFIG_SUFFIX) or k.endswith(LEGACY_ENV_SUFFIX)) for k in backend)

    @cached_property
    def _legacy_config_key(self) -> str | None:
        """`sglang_config` / `vllm_config` / `trtllm_config`: the engine-args block of the backend."""
        backend = self.data.get("backend")
        if not isinstance(backend, dict):
            return None
        engine = normalize_engine(backend.get("type"))
        if engine and isinstance(backend.get(f"{engine}{LEGACY_CONFIG_SUFFIX}"), dict):
            return f"{engine}{LEGACY_CONFIG_SUFFIX}"
        for name in engines.legacy_config_keys():
            if isinstance(backend.get(name), dict):
                return name
        return None

    def role_path(self, role: str, part: str) -> KeyPath:
        """Where in `data` a role's `args` or `env` live, in this recipe's format."""
        if not self.legacy:
            return ("roles", role, part)
        old = LEGACY_ROLE_NAMES.get(role, role)
        if part == "env":
            return ("backend", f"{old}{LEGACY_ENV_SUFFIX}")
        return ("backend", self._legacy_config_key or "", old)

    @property
    def roles(self) -> list[str]:
        if self.legacy:
            backend = self.data["backend"]
            cfg = backend.get(self._legacy_config_key or "")
            found = []
            for role, old in LEGACY_ROLE_NAMES.items():
                if (isinstance(cfg, dict) and old in cfg) or f"{old}{LEGACY_ENV_SUFFIX}" in backend:
                    found.append(role)
            return found
        r = self.data.get("roles")
        return [str(k) for k in r] if isinstance(r, dict) else []

    def role(self, role: str = "agg") -> dict:
        r = self.get("roles", role)
        return r if isinstance(r, dict) else {}

    def args(self, role: str = "agg") -> dict:
        a = self.get(*self.role_path(role, "args"))
        return a if isinstance(a, dict) else {}

    def env(self, role: str = "agg") -> dict:
        e = self.get(*self.role_path(role, "env"))
        return e if isinstance(e, dict) else {}

    @property
    def environment(self) -> dict:
        """Recipe-wide server environment, applied after role env (spec 3.4)."""
        e = self.data.get("environment")
        return e if isinstance(e, dict) else {}

    def server_env(self, role: str = "agg") -> dict:
        return {**self.env(role), **self.environment}

    @property
    def benchmark_env(self) -> dict:
        e = self.get("benchmark", "env")
        return e if isinstance(e, dict) else {}

    @property
    def benchmark_type(self) -> str | None:
        t = self.get("benchmark", "type")
        return t.strip().lower() if isinstance(t, str) else None

    def chat_template(self) -> tuple[Any, KeyPath | None, bool]:
        """(value, key path, written) of the benchmark client's chat-template switch.

        sa-bench recipes carry `benchmark.use_chat_template`, which srtctl defaults to true
        when absent; other clients read `benchmark.env.USE_CHAT_TEMPLATE` and have no default
        (None)."""
        if self.benchmark_type == SA_BENCH:
            if "use_chat_template" in (self.get("benchmark") or {}):
                return self.get("benchmark", "use_chat_template"), ("benchmark", "use_chat_template"), True
            return SA_BENCH_CHAT_DEFAULT, ("benchmark", "type"), False
        if "USE_CHAT_TEMPLATE" in self.benchmark_env:
            return self.benchmark_env["USE_CHAT_TEMPLATE"], ("benchmark", "env", "USE_CHAT_TEMPLATE"), True
        return None, None, False

    @property
    def benchmark_command(self) -> str | None:
        return self.get("benchmark", "command")

    def gpus(self, role: str = "agg") -> int | None:
        if self.legacy:
            return as_int(self.get(*self.gpus_path(role)))
        return as_int(self.role(role).get("gpus"))

    def gpus_path(self, role: str = "agg") -> KeyPath:
        if self.legacy:  # `resources.gpus_per_{agg,prefill,decode}`
            return ("resources", f"gpus_per_{role}")
        return ("roles", role, "gpus")

    @property
    def conc(self) -> str | None:
        c = self.benchmark_env.get("CONC")
        return None if c is None else str(c)

    @property
    def generation_role(self) -> str:
        return "decode" if "decode" in self.roles else "agg"

    def tp(self, role: str = "agg") -> int | None:
        """Tensor parallelism as the engine derives it (spec 3.3)."""
        p = engines.profile(self.engine)
        if p is None or not (p.tp_flags or p.tp_is_gpus):
            return None
        if p.tp_is_gpus:
            return self.gpus(role)
        args = self.args(role)
        tp = as_int(next((args[f] for f in p.tp_flags if f in args), p.tp_default))
        if p.tp_times is None:
            return tp
        dp = as_int(args.get(p.tp_times, 1))
        return tp * dp if tp and dp else None

    def _spec_config(self, role: str) -> tuple[Any, dict, str, Any] | None:
        """(engine spec fields, the config holding the method, the flag that holds it, the raw
        method) of a role; None when the engine has no speculative flags or none is set."""
        p = engines.profile(self.engine)
        fields = p.spec if p is not None else None
        if fields is None:
            return None
        args = self.args(role)
        if fields.block is not None:  # one flag holds the whole speculative config
            raw, key = args.get(fields.block), fields.block
            if not raw:
                return None
            if fields.block_is_json:
                cfg = _json_obj(raw) or {}
            elif isinstance(raw, dict):
                cfg = raw
            else:
                return None
            return fields, cfg, key, cfg.get(fields.method[0])
        key = next((k for k in fields.method if k in args), fields.method[0])
        method = args.get(key)
        return (fields, args, key, method) if method else None

    def spec_decode(self, role: str | None = None) -> SpecDecode:
        """Speculative method and draft length per engine (spec 3.4, 5.4); empty when none."""
        role = role or self.generation_role
        found = self._spec_config(role)
        if found is None:
            return SpecDecode()
        fields, cfg, key, method = found
        method = str(method).lower() if method else None
        k = cfg.get(fields.draft_length_by_method.get(method or "", fields.draft_length))
        return SpecDecode(method=method, draft_length=as_int(k), draft_model=cfg.get(fields.draft_model),
                          line=self.line_of(*self.role_path(role, "args"), key))

    @cached_property
    def speculates(self) -> bool:
        """Whether the generation role names a speculative method (binding asks every variant)."""
        found = self._spec_config(self.generation_role)
        return found is not None and bool(found[3])

    @cached_property
    def _binding_facts(self) -> "BindFacts":
        """What binding compares with every point, derived from `data` once."""
        from .binding import BindFacts  # binding builds on variants; imported when first used

        return BindFacts(self)


class Recipe(Model):
    """A recipe file and every variant it expands to (sorted override blocks, then zip slices)."""

    path: str
    is_bundle: bool = False
    base_name: str | None = None
    variants: list[Variant] = Field(default_factory=list)
    findings: list[Finding] = Field(default_factory=list)

    def select(self, selector: str | None) -> list[Variant]:
        """Variants a selector names; None means the default set (spec 3.2)."""
        if selector is None:
            return [v for v in self.variants if v.selector != BASE] or [v for v in self.variants if v.selector == BASE]
        m = _ZIP_SELECTOR.match(selector)
        if m and m.group(2) is None:
            return [v for v in self.variants if (v.selector or "").startswith(m.group(1) + "[")]
        return [v for v in self.variants if v.selector == selector]

    def variant(self, selector: str) -> Variant | None:
        found = self.select(selector)
        return found[0] if len(found) == 1 else None


# Fields the binding compares as text (spec 2.3); another type is a finding, not a crash.
STRING_FIELDS = (("model", "path"), ("model", "container"), ("model", "precision"))
MSG_NOT_TEXT = "`{field}` must be a string, not {value!r}"


def parse_recipe(data: bytes | str, path: str) -> Recipe:
    """Parse one recipe file. Never raises: unreadable input is a finding and no variants."""
    try:
        doc = load_yaml(data, path)
    except RecipeError as e:
        return Recipe(path=path, findings=[e.finding])
    recipe = recipe_from_doc(doc)
    seen: set[tuple] = set()
    for v in recipe.variants:
        for keys in STRING_FIELDS:
            value = v.get(*keys)
            if value is None or isinstance(value, str):
                continue
            line = v.line_of(*keys)
            if (keys, line) not in seen:
                seen.add((keys, line))
                recipe.findings.append(Finding(path=path, line=line, code="wrong-type",
                                               message=MSG_NOT_TEXT.format(field=".".join(keys), value=value)))
    return recipe


def _variant(*, path: str, name: str, selector: str | None, data: dict, line: int | None,
             origins_of: Callable[[], dict[KeyPath, int]]) -> Variant:
    v = Variant.model_validate({"path": path, "name": name, "selector": selector, "data": data, "line": line})
    keep(v, "origins_of", origins_of)
    return v


ALL = object()  # `_Origins`: every top-level key


def _only(block: dict, top: Any) -> dict:
    """`block`, or only its entry for the top-level key `top`."""
    if top is ALL:
        return block
    return {top: block[top]} if top in block else {}


class _Origins:
    """Where each value of a recipe's variants was written, worked out per variant on request by
    the same merge that built its data, now keeping lines (`_merge_into` with origins)."""

    def __init__(self, doc: YamlDoc, base: dict | None):
        self.doc = doc
        self.base = base  # the bundle's base block (with `schema` copied in); None for a plain recipe
        self._base_origins: dict[KeyPath, int] | None = None

    def plain(self) -> dict[KeyPath, int]:
        """A plain recipe's origins: one walk of its document (`Variant.line_of` asks for them
        whole)."""
        origins: dict[KeyPath, int] = {}
        for k, v in self.doc.data.items():
            _set_origins(origins, v, (k,), self.doc, (k,))
        return origins

    # Each `of_*` takes `top`, a top-level key: then only the paths under it need be right.
    # Merging touches the origins under each key it merges and nothing else, so merging the
    # block's entry for `top` alone gives those paths the lines the whole merge gives them.
    def of_base(self, top: Any = ALL) -> dict[KeyPath, int]:
        """The base's origins (all of them whatever `top`: they are worked out once per recipe)."""
        if self._base_origins is None:
            doc, origins, written = self.doc, {}, self.doc.data[BASE]
            for k, v in self.base.items():
                # A key recipe_from_doc copied into the base (the bundle's top-level `schema`)
                # was written at the top level.
                _set_origins(origins, v, (k,), doc, (BASE, k) if k in written else (k,))
            self._base_origins = origins
        return dict(self._base_origins)

    def of_override(self, key: str, top: Any = ALL) -> dict[KeyPath, int]:
        origins = self.of_base()
        _merge_into(dict(self.base), _only(self.doc.data[key] or {}, top), origins, (), self.doc, (key,))
        return origins

    def of_zip_slice(self, key: str, i: int, top: Any = ALL) -> dict[KeyPath, int]:
        block = _only(self.doc.data[key], top)
        origins = self.of_base()
        _merge_into(dict(self.base), zip_slice(block, i), origins, (), self.doc, (key,))
        for kp, lst in _lists(block):
            # Sliced values were written inside a list: point at the element's own line.
            line = self.doc.line(key, *kp, i if len(lst) > 1 else 0)
            if line is not None and kp in origins:
                origins[kp] = line
        return origins


def recipe_from_doc(doc: YamlDoc) -> Recipe:
    path = doc.path
    raw = doc.data
    findings: list[Finding] = []
    if not isinstance(raw, dict):
        findings.append(Finding(path=path, line=1, message=MSG_BASE_NOT_MAPPING))
        return Recipe(path=path, findings=findings)
    if BASE not in raw:
        name = raw.get("name")
        # A non-string `name:` (e.g. `name: 2`) is read as its text rather than rejected.
        base_name = name if name is None or isinstance(name, str) else str(name)
        return Recipe(path=path, base_name=base_name, variants=[
            _variant(path=path, name=str(name or path), selector=None, data=raw, line=1,
                     origins_of=_Origins(doc, None).plain)
        ])
    base = raw[BASE]
    if not isinstance(base, dict):
        findings.append(Finding(path=path, line=doc.line(BASE), message=MSG_NOT_MAPPING.format(block=BASE)))
        return Recipe(path=path, is_bundle=True, findings=findings)
    base = dict(base)
    if SCHEMA_KEY in raw and SCHEMA_KEY not in base:
        base[SCHEMA_KEY] = raw[SCHEMA_KEY]
    lines = _Origins(doc, base)
    base_name = str(base.get("name") or "")
    variants = [_variant(path=path, name=base_name, selector=BASE, data=base, line=doc.line(BASE),
                         origins_of=lines.of_base)]
    overrides = sorted(k for k in raw if isinstance(k, str) and k.startswith(OVERRIDE_PREFIX))
    zips = sorted(k for k in raw if isinstance(k, str) and k.startswith(ZIP_PREFIX))
    slices = 0
    for key in zips:
        try:
            slices += zip_length(raw[key], key) if isinstance(raw[key], dict) else 0
        except ValueError:
            pass  # reported below, with the block
    if 1 + len(overrides) + slices > MAX_VARIANTS:
        findings.append(Finding(path=path, line=doc.line(BASE), code="too-large", message=MSG_TOO_MANY_VARIANTS.format(
            n=1 + len(overrides) + slices, overrides=len(overrides), slices=slices, cap=MAX_VARIANTS)))
        return Recipe(path=path, is_bundle=True, base_name=base_name, findings=findings)
    for k in raw:
        if k not in (BASE, SCHEMA_KEY) and k not in overrides and k not in zips:
            findings.append(Finding(path=path, line=doc.line(k), severity="warning", code="unknown-key",
                                    message=MSG_UNKNOWN_TOP.format(key=k)))
    for key in overrides:
        block = raw[key]
        if block is None:
            block = {}
        if not isinstance(block, dict):
            findings.append(Finding(path=path, line=doc.line(key), message=MSG_NOT_MAPPING.format(block=key)))
            continue
        data = dict(base)  # copy on write: _merge_into copies each mapping it changes
        _merge_into(data, block, None, (), None, ())
        name = block.get("name") or f"{base_name}_{key[len(OVERRIDE_PREFIX):]}"
        data["name"] = name
        variants.append(_variant(path=path, name=str(name), selector=key, data=data, line=doc.line(key),
                                 origins_of=partial(lines.of_override, key)))
    base_nulls = bool(zips) and _without_nulls(base) is not base
    for key in zips:
        block = raw[key]
        if not isinstance(block, dict):
            findings.append(Finding(path=path, line=doc.line(key), message=MSG_NOT_MAPPING.format(block=key)))
            continue
        try:
            n = zip_length(block, key)
        except ValueError as e:
            findings.append(Finding(path=path, line=doc.line(key), code="zip", message=str(e)))
            continue
        group = key[len(ZIP_PREFIX):]
        for i in range(n):
            sliced = zip_slice(block, i)
            data = dict(base)
            _merge_into(data, sliced, None, (), None, ())
            # A zip variant has no null at any mapping depth. Its values come from the base and
            # from the slice, so when neither holds a null there is none to drop.
            if base_nulls or _without_nulls(sliced) is not sliced:
                data = _without_nulls(data)  # `data` itself or a fresh copy, never `base`
            name = sliced.get("name") if isinstance(block.get("name"), list) else None
            name = name or f"{base_name}_{group}_{i}"
            data["name"] = name
            variants.append(_variant(path=path, name=str(name), selector=f"{key}[{i}]", data=data,
                                     line=doc.line(key), origins_of=partial(lines.of_zip_slice, key, i)))
    return Recipe(path=path, is_bundle=True, base_name=base_name, variants=variants, findings=findings)
