"""Binding benchmark points to srt recipe variants (spec 2.3): each single-node point validates
against exactly one variant of the recipe its arm names; what does not fit is a finding."""
from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from pydantic import ConfigDict, Field

from . import engines
from .errors import Finding
from .master import images_match
from .model import Model
from .srt import AGENTIC_CLIENT, BENCHMARK_TYPE, DCP_FLAG, SINGLE_NODE_ROLE, Recipe, Variant
from .values import as_int, is_enabled

if TYPE_CHECKING:
    from .points import BenchmarkPoint

MSG_UNKNOWN_SELECTOR = "selector {selector!r} names no variant of {path}"
MSG_NO_MATCH = "no variant of {recipe} matches point {point} ({why})"
MSG_SEVERAL = "{n} variants of {recipe} match point {point}: {names}"
MSG_UNUSED = "variant {name} of {recipe} serves no benchmark point"
MSG_CONTAINER = "model.container {container} differs from the master-config image {image} ({key})"


class BindFacts:
    """The parts of a variant that `mismatches` compares, looked up once per variant: binding
    compares each variant with every point of the arms that name its recipe."""

    __slots__ = ("engine", "model_path", "precision", "gpus", "tp", "benv", "speculates", "agentic_client",
                 "roles", "agg", "btype", "args", "fixed_shape", "dcp")

    def __init__(self, v: Variant):
        self.engine = v.engine
        self.model_path = v.model_path
        self.precision = v.precision
        self.gpus = v.gpus()
        self.tp = v.tp()
        self.benv = v.benchmark_env
        self.speculates = v.speculates
        cmd = v.benchmark_command
        # None when no command is written; else whether it runs the agentic client.
        self.agentic_client = cmd.strip().endswith(AGENTIC_CLIENT) if isinstance(cmd, str) and cmd.strip() else None
        self.roles = v.roles
        self.agg = v.role(SINGLE_NODE_ROLE)
        self.btype = v.get("benchmark", "type")
        self.args = v.args()
        # vLLM and ATOM (a vLLM-derived engine with the same flag) take DCP from
        # `decode-context-parallel-size`; the other engines run DCP 1.
        self.dcp = as_int(self.args.get(DCP_FLAG, 1)) if self.engine in engines.context_parallel_engines() else 1
        self.fixed_shape = _fixed_shape_mismatches(self)


def _fixed_shape_mismatches(f: BindFacts) -> list[str]:
    """The single-node launcher's rules that no point changes (spec 2.3): worked out once per
    variant, first among the shape reasons."""
    why: list[str] = []
    if set(f.roles) != {SINGLE_NODE_ROLE}:
        why.append(f"roles {sorted(f.roles)} != ['{SINGLE_NODE_ROLE}']")
    agg = f.agg
    for key in ("nodes", "workers"):
        if key in agg and as_int(agg[key]) != 1:
            why.append(f"roles.agg.{key} {agg[key]} != 1")
    btype = f.btype
    if btype is not None and btype != BENCHMARK_TYPE:
        why.append(f"benchmark.type {btype} != {BENCHMARK_TYPE}")
    return why


def mismatches(variant: Variant, point: "BenchmarkPoint", families: Mapping[str, str] | None = None) -> list[str]:
    """Why a single-node variant does not validate against a point; empty when it does.
    `families` is the repository's framework -> engine table (policy `framework_family`).

    The container is deliberately not compared here: a stale container is reported as its own
    finding, so that the point still binds and the mismatch names the right variant.
    """
    f = variant._binding_facts
    why: list[str] = []
    table = families if families is not None else engines.default_framework_family()
    want_engine = table.get(point.framework or "")
    if f.engine and want_engine and f.engine != want_engine:
        why.append(f"engine {f.engine} != {want_engine}")
    if f.model_path and point.model and f.model_path != f"hf:{point.model}":
        why.append(f"model.path {f.model_path} != hf:{point.model}")
    if f.precision and point.precision and str(f.precision) != point.precision:
        why.append(f"precision {f.precision} != {point.precision}")
    gpus = f.gpus
    if gpus is not None and point.gpu_count is not None and gpus != point.gpu_count:
        why.append(f"gpus {gpus} != {point.gpu_count}")
    tp = f.tp
    if tp is not None and point.tp is not None and tp != point.tp:
        why.append(f"TP {tp} != {point.tp}")
    benv = f.benv
    if "CONC" in benv and point.conc is not None and str(benv["CONC"]) != str(point.conc):
        why.append(f"CONC {benv['CONC']} != {point.conc}")
    if "KV_OFFLOADING" in benv and str(benv["KV_OFFLOADING"]) != point.kv_offloading:
        why.append(f"KV_OFFLOADING {benv['KV_OFFLOADING']} != {point.kv_offloading}")
    why.extend(_parallel_mismatches(f, point))
    recipe_spec = "mtp" if f.speculates else str(benv.get("SPEC_DECODING", "none"))
    point_spec = "mtp" if point.spec_decoding in ("mtp", "draft_model") else point.spec_decoding
    if recipe_spec != point_spec:
        why.append(f"spec-decoding {recipe_spec} != {point_spec}")
    if f.agentic_client is not None and f.agentic_client != point.is_agentic:
        why.append("benchmark.command agentic client does not match the scenario")
    why.extend(_shape_mismatches(f, point))
    return why


def _shape_mismatches(f: BindFacts, point: "BenchmarkPoint") -> list[str]:
    """The single-node launcher's remaining rules (spec 2.3); fields a recipe may omit (the
    launcher fills them from the matrix) are compared only when written."""
    why = list(f.fixed_shape)
    benv = f.benv
    if "MODEL" in benv and point.model and str(benv["MODEL"]) != point.model:
        why.append(f"benchmark.env.MODEL {benv['MODEL']} != {point.model}")
    # USE_CHAT_TEMPLATE is left to Check 9, which judges it with the variant bound and so can
    # name the value; failing the binding here would only say "no variant".
    if not point.is_agentic:
        for key, want in (("ISL", point.isl), ("OSL", point.osl)):
            if key in benv and want is not None and str(benv[key]) != str(want):
                why.append(f"{key} {benv[key]} != {want}")
    for name, have, want in (("PP", 1, point.pp), ("DCP", f.dcp, point.dcp_size), ("PCP", 1, point.pcp_size)):
        if have != want:
            why.append(f"{name} {want} != {have}")
    return why


def _parallel_mismatches(f: BindFacts, point: "BenchmarkPoint") -> list[str]:
    args = f.args
    engine = f.engine
    ep, dpa = point.ep, point.dp_attn
    why = []
    if engine == "sglang":
        v_ep = as_int(args.get("expert-parallel-size", args.get("ep-size", 1)))
        if v_ep != ep:
            why.append(f"EP {v_ep} != {ep}")
        if is_enabled(args.get("enable-dp-attention", False)) != dpa:
            why.append(f"dp-attention != {dpa}")
        v_dp = as_int(args.get("data-parallel-size", args.get("dp-size", 1)))
        want_dp = point.tp if dpa else 1
        if v_dp != want_dp:
            why.append(f"data-parallel-size {v_dp} != {want_dp}")
    elif engine == "vllm":
        if is_enabled(args.get("enable-expert-parallel", False)) != (ep > 1):
            why.append(f"enable-expert-parallel != (EP {ep} > 1)")
        dp = as_int(args.get("data-parallel-size", 1)) or 1
        if (dp > 1) != dpa:
            why.append(f"data-parallel-size {dp} does not match dp-attn {dpa}")
    elif engine == "trtllm":
        v_ep = as_int(args.get("moe_expert_parallel_size", 1))
        if v_ep != ep:
            why.append(f"EP {v_ep} != {ep}")
        if as_int(args.get("pipeline_parallel_size", 1)) != 1:
            why.append(f"pipeline_parallel_size {args['pipeline_parallel_size']} != 1")
        if is_enabled(args.get("enable_attention_dp", False)) != dpa:
            why.append(f"enable_attention_dp != {dpa}")
    elif engine == "atom":
        if ep not in (1, point.tp):
            why.append(f"EP {ep} must be 1 or TP")
        if is_enabled(args.get("enable-expert-parallel", False)) != (ep > 1):
            why.append(f"enable-expert-parallel != (EP {ep} > 1)")
        if is_enabled(args.get("enable-dp-attention", False)) != dpa:
            why.append(f"enable-dp-attention != {dpa}")
    return why


class Binding(Model):
    """A single-node point and the one variant that serves it (None when zero or several match)."""

    model_config = ConfigDict(frozen=True)

    point_id: str
    recipe: str
    variant: str | None = None  # selector of the bound variant
    candidates: list[str] = Field(default_factory=list)  # selectors of all matches


class Bindings(Model):
    by_point: dict[str, Binding] = Field(default_factory=dict)
    findings: list[Finding] = Field(default_factory=list)


def _index_by_conc(pool: list[Variant]) -> dict[str | None, list[Variant]]:
    out: dict[str | None, list[Variant]] = {}
    for v in pool:
        out.setdefault(v.conc, []).append(v)
    return out


def bind_points(points: list["BenchmarkPoint"], recipes: dict[str, Recipe],
                families: Mapping[str, str] | None = None) -> Bindings:
    """Bind every single-node srt-recipe point to exactly one variant; report what does not fit.
    `families` is the repository's framework -> engine table (policy `framework_family`)."""
    out = Bindings()
    used: dict[str, set[str]] = {}
    offered: dict[str, dict[str, Variant]] = {}
    # Findings about an arm or a recipe line are reported once, not once per point.
    container_seen: set[tuple] = set()
    conc_index: dict[tuple, dict[str | None, list[Variant]]] = {}
    pools: dict[tuple, list[Variant]] = {}
    for p in points:
        launcher = p.launcher
        if p.multinode or launcher is None or launcher.kind != "srt-recipe":
            continue
        recipe = recipes.get(launcher.path)
        if recipe is None or not recipe.variants:
            continue
        pool_key = (recipe.path, launcher.selector)
        candidates = pools.get(pool_key)
        first = candidates is None
        if first:  # an arm's points, and often many arms, share a pool
            candidates = pools[pool_key] = recipe.select(launcher.selector)
        if launcher.selector and not candidates:
            if (p.source_path, p.source_line, launcher.selector) in container_seen:
                continue
            container_seen.add((p.source_path, p.source_line, launcher.selector))
            out.findings.append(Finding(path=p.source_path, line=p.source_line, code="unknown-selector",
                                        message=MSG_UNKNOWN_SELECTOR.format(selector=launcher.selector, path=recipe.path)))
            continue
        pool = candidates
        if first:
            offered.setdefault(recipe.path, {}).update({v.selector or v.name: v for v in pool})
            conc_index[pool_key] = _index_by_conc(pool)
        by_conc = conc_index[pool_key]
        # Only variants whose CONC agrees (or that leave CONC open) can match: a cheap prefilter.
        shortlist = by_conc.get(str(p.conc), []) + by_conc.get(None, [])
        matches = [v for v in shortlist if not mismatches(v, p, families)]
        names = [v.selector or v.name for v in matches]
        chosen = matches[0] if len(matches) == 1 else None
        out.by_point[p.point_id] = Binding(point_id=p.point_id, recipe=recipe.path,
                                           variant=(chosen.selector or chosen.name) if chosen else None, candidates=names)
        used.setdefault(recipe.path, set()).update(names)
        if not matches:
            near = min(pool, key=lambda v: len(mismatches(v, p, families)))
            why = "; ".join(mismatches(near, p, families))
            out.findings.append(Finding(path=p.source_path, line=p.source_line, code="no-variant",
                                        message=MSG_NO_MATCH.format(recipe=recipe.path, point=p.point_id,
                                                                    why=f"closest {near.selector or near.name}: {why}")))
        elif len(matches) > 1:
            out.findings.append(Finding(path=p.source_path, line=p.source_line, code="several-variants",
                                        message=MSG_SEVERAL.format(n=len(matches), recipe=recipe.path,
                                                                   point=p.point_id, names=", ".join(names))))
        for v in matches or pool[:1]:
            if v.container and p.image and not images_match(v.container, p.image):
                line = v.line_of("model", "container")
                key = (v.path, line, v.container, p.image)
                if key not in container_seen:
                    container_seen.add(key)
                    out.findings.append(Finding(path=v.path, line=line, code="container-mismatch",
                                                message=MSG_CONTAINER.format(container=v.container, image=p.image,
                                                                             key=p.config_key)))
    for path, pool in offered.items():
        # Variants that no selector offered serve no point either (spec: a variant with no point).
        every = {v.selector or v.name: v for v in recipes[path].select(None)}
        every.update(pool)
        for name, v in every.items():
            if name not in used.get(path, set()):
                out.findings.append(Finding(path=v.path, line=v.line, code="unused-variant", severity="warning",
                                            message=MSG_UNUSED.format(name=v.selector or v.name, recipe=v.path)))
    return out
