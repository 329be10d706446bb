"""The effective serving configuration of one benchmark point, every value with where it was written."""
from __future__ import annotations

from typing import Any, Literal, Mapping

from pydantic import BaseModel, ConfigDict, Field

from .errors import Finding
from .master import MasterEntry
from .points import BenchmarkPoint
from .scripts import MAX_SCRIPT_CHARS, analyze_script
from .engines import default_framework_family, profile
from .srt import Variant
from .values import as_int, is_enabled

EffectiveSource = Literal["srt-recipe", "multinode-recipe", "script", "master"]

# Flag spellings per concern, across engines (spec 3.4).
# Real launch scripts are tens of KB; a bigger one is not analysed (bash parsing is superlinear
# in the worst case: a 2.6 MB launcher took 161 s) and its serving config is unknown.
# The launch-script cap is the analyser's own (recipes.scripts.MAX_SCRIPT_CHARS).
MSG_SCRIPT_TOO_LARGE = "{path} is {size} bytes, over the {limit}-byte limit for launch scripts; it was not analysed"

TP_FLAGS = ("tensor-parallel-size", "tensor_parallel_size", "tp-size", "tp")
EP_FLAGS = ("expert-parallel-size", "ep-size", "moe_expert_parallel_size", "ep")
DP_FLAGS = ("data-parallel-size", "dp-size", "dp")
PP_FLAGS = ("pipeline-parallel-size", "pipeline_parallel_size", "pp-size", "pp")
KV_DTYPE_FLAGS = ("kv_cache_dtype", "kv-cache-dtype")
QUANT_FLAGS = ("quantization", "quant")


class Origin(BaseModel):
    """A value and the file and line it came from."""

    model_config = ConfigDict(frozen=True)

    value: Any
    path: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{self.value} ({where})"


class EffectiveConfig(BaseModel):
    point_id: str
    source: EffectiveSource = "master"
    launcher: str | None = None  # repository path of the recipe or script
    variant: str | None = None  # selector of the bound srt variant
    engine: Origin | None = None
    model: Origin | None = None
    image: Origin | None = None
    tp: Origin | None = None
    ep: Origin | None = None
    dp: Origin | None = None
    pp: Origin | None = None
    precision: Origin | None = None
    quantization: Origin | None = None
    kv_dtype: Origin | None = None
    spec_method: Origin | None = None
    draft_length: Origin | None = None
    draft_model: Origin | None = None
    # Server environment: role env overlaid by the recipe-wide `environment` (spec 3.4), or
    # a script's exports.
    env: dict[str, Origin] = Field(default_factory=dict)
    # Engine flags, name without leading dashes -> value.
    args: dict[str, Origin] = Field(default_factory=dict)
    launch_command: Origin | None = None
    # Benchmark client settings (`benchmark.env`: CONC, USE_CHAT_TEMPLATE, ...).
    client_env: dict[str, Origin] = Field(default_factory=dict)
    findings: list[Finding] = Field(default_factory=list)

    def value(self, name: str) -> Any:
        o = getattr(self, name)
        return o.value if isinstance(o, Origin) else None


def _first(d: dict[str, Origin], names: tuple[str, ...]) -> Origin | None:
    for n in names:
        if n in d:
            return d[n]
    return None


def _master_origins(point: BenchmarkPoint, entry: MasterEntry | None, families: Mapping[str, str]) -> dict[str, Origin]:
    path = point.source_path
    def at(field: str, value: Any) -> Origin | None:
        if value is None:
            return None
        line = entry.line_of(field) if entry is not None else point.source_line
        return Origin(value=value, path=entry.path if entry is not None else path, line=line)
    def on_arm(value: Any) -> Origin:  # a constructor is several times cheaper than model_copy
        return Origin(value=value, path=path, line=point.source_line)

    return {
        "engine": at("framework", families.get(point.framework or "", point.framework)),
        "model": at("model", point.model),
        "image": at("image", point.image),
        "precision": at("precision", point.precision),
        "tp": on_arm(point.tp) if point.tp is not None else None,
        "ep": on_arm(point.ep),
        "pp": on_arm(point.pp),
        "dp": on_arm(point.tp if point.dp_attn else 1),
    }


def effective_config(
    point: BenchmarkPoint,
    entry: MasterEntry | None = None,
    variant: Variant | None = None,
    script: tuple[str, str] | None = None,
    families: Mapping[str, str] | None = None,
) -> EffectiveConfig:
    """Merge what the master config says with the bound recipe variant or launcher script.

    `script` is (path, text) of an old-layout bash launcher; recipe values win over master values
    where both exist, because the recipe is what the engine actually receives. `families` is the
    repository's framework -> engine table (policy `framework_family`; the profiles' by default).
    """
    base = _master_origins(point, entry, families if families is not None else default_framework_family())
    out = EffectiveConfig(point_id=point.point_id, **{k: v for k, v in base.items() if v is not None})
    if variant is not None:
        _from_variant(out, point, variant)
    elif script is not None:
        _from_script(out, point, *script)
    return out


def _from_variant(out: EffectiveConfig, point: BenchmarkPoint, v: Variant) -> None:
    out.source = "multinode-recipe" if point.multinode else "srt-recipe"
    out.launcher = v.path
    out.variant = v.selector
    role = v.generation_role

    def o(value: Any, *keys: Any) -> Origin:
        return Origin(value=value, path=v.path, line=v.line_of(*keys))

    roles = [role] + [r for r in v.roles if r != role]
    for r in reversed(roles):  # the generation role's values win
        for k, val in v.args(r).items():
            out.args[str(k)] = o(val, *v.role_path(r, "args"), k)
        for k, val in v.env(r).items():
            out.env[str(k)] = o(val, *v.role_path(r, "env"), k)
    for k, val in v.environment.items():
        out.env[str(k)] = o(val, "environment", k)
    for k, val in v.benchmark_env.items():
        out.client_env[str(k)] = o(val, "benchmark", "env", k)
    if v.engine:
        out.engine = o(v.engine, *v.engine_path)
    if v.model_path:
        out.model = o(v.model_path, "model", "path")
    if v.container:
        out.image = o(v.container, "model", "container")
    if v.precision:
        out.precision = o(v.precision, "model", "precision")
    p = profile(v.engine)
    tp = v.tp(role)
    if tp is not None:
        if p is not None and p.tp_is_gpus:
            src = v.gpus_path(role)
        else:  # the flag the engine read TP from
            flag = next((f for f in (p.tp_flags if p else ()) if f in v.args(role)), "tensor-parallel-size")
            src = (*v.role_path(role, "args"), flag)
        out.tp = o(tp, *src)
    for name, flags in (("ep", EP_FLAGS), ("dp", DP_FLAGS), ("pp", PP_FLAGS)):
        found = _first(out.args, flags)
        if found is not None and as_int(found.value) is not None:
            setattr(out, name, found.model_copy(update={"value": as_int(found.value)}))
    switch = p.attention_dp_switch if p is not None else None
    if switch and is_enabled(v.args(role).get(switch, False)) and out.tp is not None:
        out.dp = out.tp
    out.quantization = _first(out.args, QUANT_FLAGS)
    kv = _first(out.args, KV_DTYPE_FLAGS)
    if kv is None and isinstance(v.args(role).get("kv_cache_config"), dict):
        dt = v.args(role)["kv_cache_config"].get("dtype")
        if dt is not None:
            kv = o(dt, *v.role_path(role, "args"), "kv_cache_config", "dtype")
    out.kv_dtype = kv
    spec = v.spec_decode(role)
    if spec.method:
        out.spec_method = Origin(value=spec.method, path=v.path, line=spec.line)
        if spec.draft_length is not None:
            out.draft_length = Origin(value=spec.draft_length, path=v.path, line=spec.line)
        if spec.draft_model:
            out.draft_model = Origin(value=spec.draft_model, path=v.path, line=spec.line)
    cmd = v.benchmark_command
    if cmd is not None:
        out.launch_command = o(cmd, "benchmark", "command")


def _from_script(out: EffectiveConfig, point: BenchmarkPoint, path: str, text: str) -> None:
    out.source = "script"
    out.launcher = path
    out.launch_command = Origin(value=f"bash {path}", path=path, line=1)
    if len(text) > MAX_SCRIPT_CHARS:
        out.findings.append(Finding(path=path, line=None, code="too-large",
                                    message=MSG_SCRIPT_TOO_LARGE.format(path=path, size=len(text), limit=MAX_SCRIPT_CHARS)))
        return
    analysis = analyze_script(text, path)
    out.findings.extend(analysis.findings)
    # The script's Origins are the same for every point it serves (frozen, so shared).
    cached = analysis.__dict__.get("_effective_origins")
    if cached is None:
        env = {str(k): Origin(value=loc.value, path=path, line=loc.line)
               for k, loc in (getattr(analysis, "exports", None) or {}).items()}
        launch = getattr(analysis, "server_launch", None)
        args = {str(k).lstrip("-"): Origin(value=loc.value, path=path, line=loc.line)
                for k, loc in (getattr(launch, "flags", None) or {}).items()}
        cached = analysis.__dict__["_effective_origins"] = (env, args)
    out.env.update(cached[0])
    out.args.update(cached[1])
    for name, flags in (("tp", TP_FLAGS), ("ep", EP_FLAGS), ("dp", DP_FLAGS), ("pp", PP_FLAGS)):
        found = _first(out.args, flags)
        if found is not None and as_int(found.value) is not None:
            setattr(out, name, found.model_copy(update={"value": as_int(found.value)}))
    out.quantization = _first(out.args, QUANT_FLAGS)
    out.kv_dtype = _first(out.args, KV_DTYPE_FLAGS)
    method = _first(out.args, ("speculative-algorithm", "speculative-algo", "method"))
    if method is not None:
        out.spec_method = method.model_copy(update={"value": str(method.value).lower()})
        k = _first(out.args, ("speculative-dspark-block-size", "num-speculative-tokens", "speculative-num-steps"))
        if k is not None and as_int(k.value) is not None:
            out.draft_length = k.model_copy(update={"value": as_int(k.value)})
