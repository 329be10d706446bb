"""The effective serving configuration of one benchmark point, every value with where it was written."""
from __future__ import annotations

import re
from typing import Any, Literal, Mapping

from pydantic import ConfigDict, Field

from .errors import Finding
from .master import MasterEntry
from .points import BenchmarkPoint
from .scripts import MAX_SCRIPT_CHARS, analyze_script, eval_branch, point_branch
from .engines import default_framework_family, profile
from .identity import by_identity
from .srt import Variant
from .values import as_int, is_enabled
from .model import Model

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


class Origin(Model):
    """A value and the file and line it came from."""

    model_config = ConfigDict(frozen=True)

    value: Any
    path: str
    line: int | None = None

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{self.value} ({where})"


class EffectiveConfig(Model):
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
    # Set when the launcher's values differ per branch and this point's matrix values chose
    # them: the script is read as this point runs it (recipes.scripts.analyze_script env=).
    point_env: dict[str, int] | None = None
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


@by_identity(8192)
def _variant_origins(v: Variant) -> tuple[dict[str, Origin], dict[str, Origin], dict[str, Origin]]:
    """A variant's args, env and client env Origins: the same for every point it serves
    (Origins are frozen, so shared; the caller copies the dicts)."""
    def o(value: Any, *keys: Any) -> Origin:
        return Origin(value=value, path=v.path, line=v.line_of(*keys))

    args: dict[str, Origin] = {}
    env: dict[str, Origin] = {}
    client: dict[str, Origin] = {}
    role = v.generation_role
    roles = [role] + [r for r in v.roles if r != role]
    for r in reversed(roles):  # the generation role's values win
        for k, val in v.args(r).items():
            args[str(k)] = o(val, *v.role_path(r, "args"), k)
        for k, val in v.env(r).items():
            env[str(k)] = o(val, *v.role_path(r, "env"), k)
    for k, val in v.environment.items():
        env[str(k)] = o(val, "environment", k)
    for k, val in v.benchmark_env.items():
        client[str(k)] = o(val, "benchmark", "env", k)
    return args, env, client


def _from_variant(out: EffectiveConfig, point: BenchmarkPoint, v: Variant) -> None:
    out.source = "multinode-recipe" if point.multinode else "srt-recipe"
    out.launcher = v.path
    out.variant = v.selector
    role = v.generation_role

    def o(value: Any, *keys: Any) -> Origin:
        return Origin(value=value, path=v.path, line=v.line_of(*keys))

    args, env, client = _variant_origins(v)
    out.args.update(args)
    out.env.update(env)
    out.client_env.update(client)
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
               for k, loc in (getattr(analysis, "exports", None) or {}).items()
               if eval_branch(loc.condition) is not True}
        launch = getattr(analysis, "server_launch", None)
        # A flag only an eval-only branch passes is not the benchmark run's served config.
        args = {str(k).lstrip("-"): Origin(value=loc.value, path=path, line=loc.line)
                for k, loc in (getattr(launch, "flags", None) or {}).items()
                if eval_branch(loc.condition) is not True}
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
        draft = _first(out.args, ("speculative-draft-model-path", "draft-model"))
        if draft is not None:
            out.draft_model = draft
        return
    launch = analysis.server_launch
    spec = _script_spec_config(analysis, launch) if launch is not None else None
    if spec is not None:
        (m, m_line), (k, k_line), (draft, d_line) = spec
        if m:
            out.spec_method = Origin(value=str(m).lower(), path=path, line=m_line)
            alternatives = _branch_values(analysis, VLLM_K_VARIABLE)
            if not alternatives and as_int(k) is not None:
                out.draft_length = Origin(value=as_int(k), path=path, line=k_line)
            elif alternatives and _per_point_draft(out, point, path, text, analysis):
                return  # this point's branch does not speculate
            if draft:
                # Kept even when part of it is only known at run time: the draft's name (e.g. a
                # GQA marker) is what picks the golden curve.
                out.draft_model = Origin(value=draft, path=path, line=d_line)


# The JSON / YAML that carries a launch's speculative settings (spec 3.4), per engine:
# vLLM `--speculative-config '{"method", "num_speculative_tokens", "model"}'`; TRT-LLM a
# `speculative_config:` block of the `--config` / `--extra_llm_api_options` YAML.
VLLM_SPEC_FLAG = "speculative-config"
VLLM_SPEC_KEYS = ("method", "num_speculative_tokens", "model")
TRT_CONFIG_FLAGS = ("config", "extra-llm-api-options")
TRT_SPEC_BLOCK = "speculative_config"
TRT_SPEC_KEYS = ("decoding_type", "max_draft_len", "speculative_model")
_YAML_KEY = re.compile(r"^(?P<indent>\s*)(?P<key>[A-Za-z_][\w-]*):\s*(?P<value>[^#]*?)\s*(?:#.*)?$")

# `"num_speculative_tokens": $NUM_SPEC_TOKENS` in the text that builds the JSON.
VLLM_K_VARIABLE = re.compile(r"""num_speculative_tokens\W{0,6}\$\{?([A-Za-z_][A-Za-z0-9_]*)""")


def _branch_name(analysis: Any, pattern: re.Pattern) -> str | None:
    """The variable a speculative JSON takes its draft length from, when there is one."""
    texts = [loc.value for _, loc, _ in analysis.assignments]
    texts += [item.value for items in analysis.arrays.values() for item in items]
    return next((m.group(1) for t in texts if "num_speculative_tokens" in t for m in pattern.finditer(t)), None)


def _branch_values(analysis: Any, pattern: re.Pattern) -> list[Any]:
    """The assignments of the variable a speculative JSON takes its draft length from, when
    branches the benchmark run may take (conditions that do not test EVAL_ONLY) give it
    different values; empty when it has one value."""
    texts = [loc.value for _, loc, _ in analysis.assignments]
    texts += [item.value for items in analysis.arrays.values() for item in items]
    names = dict.fromkeys(m.group(1) for t in texts if "num_speculative_tokens" in t for m in pattern.finditer(t))
    for name in names:
        locs = [loc for loc in analysis.assignments_of(name) if eval_branch(loc.condition) is not True]
        if len(locs) > 1 and any(loc.condition for loc in locs) and \
                len({loc.resolved if loc.resolved is not None else loc.value for loc in locs}) > 1:
            return locs
    return []


def _per_point_draft(out: EffectiveConfig, point: BenchmarkPoint, path: str, text: str, analysis: Any) -> bool:
    """`if [ "$CONC" -le 8 ]; then K=7; elif ...`: the draft length this point runs with, from
    the script read again as this point runs it (its matrix values set, the branches they rule
    out not walked). Sets `out.draft_length`, or clears `out.spec_method` when the point's branch
    passes no speculative config (returning True); else leaves the draft length unset: decided at
    run time by something else, not one value the bot can read."""
    env = point_env(point)
    mine = analyze_script(text, path, env=env) if env else None
    name = _branch_name(analysis, VLLM_K_VARIABLE)
    # Decided when every assignment of the draft-length variable this point walks holds for it.
    decided = mine is not None and mine.server_launch is not None and not mine.partial and bool(name) \
        and all(point_branch(loc.condition, env) is True for loc in mine.assignments_of(name or ""))
    facts = _script_spec_config(mine, mine.server_launch) if decided else None
    if facts is not None and facts[0][0] and as_int(facts[1][0]) is not None:
        out.draft_length = Origin(value=as_int(facts[1][0]), path=path, line=facts[1][1])
        out.point_env = env
        return False
    if decided and facts is None:
        out.spec_method = None
        out.point_env = env
        return True
    return False


# The matrix values the sweep workflow exports to a single-node launcher, by variable name.
POINT_ENV = {"CONC": "conc", "TP": "tp", "EP_SIZE": "ep", "PP_SIZE": "pp", "DCP_SIZE": "dcp_size", "PCP_SIZE": "pcp_size"}


def point_env(point: BenchmarkPoint) -> dict[str, int]:
    """The matrix values the workflow exports to this point's launcher, by variable name."""
    out = {}
    for name, attr in POINT_ENV.items():
        value = getattr(point, attr, None)
        if isinstance(value, int) and not isinstance(value, bool):
            out[name] = value
    return out


SpecFacts = tuple[tuple[Any, int | None], tuple[Any, int | None], tuple[Any, int | None]]


def _script_spec_config(analysis: Any, launch: Any) -> SpecFacts | None:
    """(method, draft length, draft model), each with its line, from the JSON or YAML a
    launcher's server command reads: the `--speculative-config` JSON however the script built
    it (a literal, a variable set per branch, an array element, `printf`; recipes.scripts
    resolves the value the benchmark run serves), or the `speculative_config` block of a
    TRT-LLM config file the script writes with a heredoc (`cat <<EOF > cfg.yaml`)."""
    obj = launch.json_flags.get(VLLM_SPEC_FLAG)
    if isinstance(obj, dict):
        flag = launch.flags.get(VLLM_SPEC_FLAG)
        line = flag.line if flag is not None else launch.line
        return tuple((obj.get(key), line) for key in VLLM_SPEC_KEYS)  # type: ignore[return-value]
    for name in TRT_CONFIG_FLAGS:
        flag = launch.flags.get(name)
        if flag is None or not flag.value:
            continue
        block = _heredoc_block(analysis, str(flag.value), TRT_SPEC_BLOCK)
        if block:
            return tuple(block.get(key, (None, None)) for key in TRT_SPEC_KEYS)  # type: ignore[return-value]
    return None


def _heredoc_block(analysis: Any, target: str, block: str) -> dict[str, tuple[str, int]]:
    """`key -> (value, line)` of the top-level YAML mapping `block` in the heredoc the script
    last writes to a file named like `target` (`cat <<EOF > ser.yaml`); empty when none."""
    name = target.rsplit("/", 1)[-1]
    body = None
    for cmd in analysis.commands:
        if any(op in (">", ">|") and str(t).rsplit("/", 1)[-1] == name for op, t in cmd.redirects):
            found = next((h for h in analysis.heredocs if h.line == cmd.line), None)
            if found is not None:
                body = found
    if body is None:
        return {}
    out: dict[str, tuple[str, int]] = {}
    inside: int | None = None
    for offset, text in enumerate((body.resolved or body.body).split("\n")):
        m = _YAML_KEY.match(text)
        if m is None:
            continue
        indent = len(m.group("indent"))
        if inside is None:
            if indent == 0 and m.group("key") == block and not m.group("value"):
                inside = indent
            continue
        if indent <= inside:
            break
        out.setdefault(m.group("key"), (m.group("value").strip("'\""), body.body_line + offset))
    return out
