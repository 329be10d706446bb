"""The serving engines the benchmark repository knows: one profile per engine, the only list.

Everything engine-specific that the recipe model and the checks need lives in an
`EngineProfile`: the master-config frameworks that run it, its Python distributions, the
Docker Hub orgs its upstream images come from, where its upstream recipes are published, how
people write its name, and its speculative-decoding knobs (spec 5.3). The repository
configuration's engine policy (`recipes.config.Policy`: `framework_family`,
`upstream_image_orgs`, `engine_packages`, `engine_display_names`, ...) defaults to what these
profiles say; a repository override of those keys reaches every use, because callers ask
`engine_of(framework, policy)` and the policy instead of reading the profiles directly.

Adding an engine is one profile here (and its tests): `register` exists so a test can prove it.
"""
from __future__ import annotations

import re
from collections.abc import Set
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator, Mapping

# How a hand-written simulated-acceptance value maps to an acceptance length (spec 5.3).
AL_AS_IS = "al"
AL_MINUS_ONE = "al-1"  # TRT-LLM counts accepted draft tokens, one fewer than the AL
AL_RATE = "rate"  # a rate, not a length: never equal to a golden AL


@dataclass(frozen=True)
class SpecFields:
    """Where a role's engine args state speculative decoding (spec 3.4, 5.4)."""

    method: tuple[str, ...]  # the first spelling present names the method
    draft_length: str
    draft_model: str
    # A flag holding the whole speculative config (`speculative-config`); None: flat flags.
    block: str | None = None
    block_is_json: bool = False  # a JSON string (vLLM) rather than a YAML mapping (TRT-LLM)
    # Methods whose draft length has its own flag (SGLang DSpark's block size).
    draft_length_by_method: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class EngineProfile:
    """One serving engine, as the benchmark repository uses it."""

    name: str  # the srt-slurm engine id (`backend.type`), also the policy's framework family
    display: str  # how people write it: `vLLM`, `TRT-LLM`
    # Master-config `framework` values that run this engine, with the name each is written as
    # when it is not just the engine's (`dynamo-trt` -> `Dynamo TRT-LLM`).
    frameworks: tuple[str, ...]
    framework_display: Mapping[str, str] = field(default_factory=dict)
    open_source: bool = False  # vendor engines are ordered after open-source ones (Check 6)
    # Other spellings of the engine id seen in recipes (`backend.type: tensorrt-llm`).
    aliases: tuple[str, ...] = ()
    # Python distributions that make up the engine's serving stack (Check 10).
    packages: tuple[str, ...] = ()
    # Docker Hub orgs its upstream images come from (Check 6); empty: no upstream-image rule.
    image_orgs: tuple[str, ...] = ()
    # Upstream repositories and sites that publish its recipes (Check 3).
    recipe_repos: tuple[str, ...] = ()
    recipe_sites: tuple[str, ...] = ()
    # srt-slurm pre-schema-2 engine-args block (`backend.vllm_config`).
    legacy_config_key: str | None = None
    # Decode context parallelism multiplies the GPU count (`decode-context-parallel-size`).
    context_parallel: bool = False
    # Tensor parallelism as the engine derives it (spec 3.3): the first flag present (else
    # `tp_default`), times `tp_times` when set; or the role's GPU count (`tp_is_gpus`).
    tp_flags: tuple[str, ...] = ()
    tp_is_gpus: bool = False
    tp_default: int | None = None
    tp_times: str | None = None
    # A switch that makes attention data-parallel across the TP ranks (DP = TP), when the
    # engine states DP that way rather than with a DP size (TRT-LLM `enable_attention_dp`).
    attention_dp_switch: str | None = None
    spec: SpecFields | None = None
    # The serving stack has `publish_events_and_metrics` (Check 8).
    publishes_events: bool = False
    # Simulated acceptance (spec 5.3, Check 11): the knob an old-layout launcher sets, how the
    # row names the mechanism, and every knob of the engine with how its value maps to an AL.
    acceptance_knob: str | None = None
    acceptance_mechanism: str | None = None
    acceptance_knobs: Mapping[str, str] = field(default_factory=dict)
    synthetic_env: tuple[str, ...] = ()  # every simulated-acceptance env var of the engine
    synthetic_flags: tuple[str, ...] = ()  # server flags
    synthetic_json_keys: tuple[str, ...] = ()  # keys inside --speculative-config JSON
    # How a launcher starts its server (script analysis, Checks 8-10): `python -m MODULE`, and
    # commands written as an executable with its subcommand (`vllm serve`) or alone (`trtllm-serve`).
    launch_modules: tuple[str, ...] = ()
    launch_commands: tuple[str, ...] = ()

    def name_of(self, framework: str) -> str:
        """How a framework of this engine is written in a row."""
        return self.framework_display.get(framework, self.display)


# Serving-stack libraries shared by several engines (Check 10): kernels, communication, runtime.
SHARED_PACKAGES = ("flashinfer", "flashinfer-python", "torch", "triton", "deep-gemm", "deepep", "deep-ep")
# The runner-side injector's opt-in and value, for every engine (spec 5.4, July 2026).
RUNNER_SYNTHETIC_ENV = ("SYNTHETIC_ACCEPTANCE", "SYNTHETIC_ACCEPTANCE_LENGTH")
RUNNER_ACCEPTANCE_KNOBS = {"SYNTHETIC_ACCEPTANCE_LENGTH": AL_AS_IS}

_BUILTIN: tuple[EngineProfile, ...] = (
    EngineProfile(
        name="vllm", display="vLLM", frameworks=("vllm", "vllm-disagg", "dynamo-vllm"), open_source=True,
        packages=("vllm",), image_orgs=("vllm",),
        recipe_repos=("vllm-project/recipes",), recipe_sites=("recipes.vllm.ai",),
        legacy_config_key="vllm_config", context_parallel=True,
        tp_flags=("tensor-parallel-size",), tp_default=1, tp_times="data-parallel-size",
        spec=SpecFields(block="speculative-config", block_is_json=True, method=("method",),
                        draft_length="num_speculative_tokens", draft_model="model"),
        acceptance_knob="synthetic_acceptance_length",
        acceptance_mechanism="speculative-config synthetic_acceptance_length {al}",
        acceptance_knobs={"synthetic_acceptance_length": AL_AS_IS},
        synthetic_json_keys=("synthetic_acceptance_length", "rejection_sample_method"),
        launch_modules=("vllm.entrypoints.openai.api_server", "vllm.entrypoints.api_server"),
        launch_commands=("vllm serve",),
    ),
    EngineProfile(
        name="sglang", display="SGLang", frameworks=("sglang", "sglang-disagg", "dynamo-sglang"), open_source=True,
        packages=("sglang", "sgl-kernel"), image_orgs=("lmsysorg",),
        recipe_repos=("sgl-project/sglang",), recipe_sites=("docs.sglang.io/cookbook", "docs.sglang.ai/cookbook"),
        legacy_config_key="sglang_config", tp_flags=("tensor-parallel-size", "tp-size"),
        spec=SpecFields(method=("speculative-algorithm", "speculative-algo"), draft_length="speculative-num-steps",
                        draft_length_by_method={"dspark": "speculative-dspark-block-size"},
                        draft_model="speculative-draft-model-path"),
        acceptance_knob="SGLANG_SIMULATE_ACC_LEN", acceptance_mechanism="SGLANG_SIMULATE_ACC_LEN={al}",
        acceptance_knobs={"SGLANG_SIMULATE_ACC_LEN": AL_AS_IS},
        synthetic_env=("SGLANG_SIMULATE_ACC_LEN", "SGLANG_SIMULATE_ACC_METHOD", "SGLANG_SIMULATE_ACC_TOKEN_MODE"),
        launch_modules=("sglang.launch_server", "sglang_router.launch_server", "sglang.srt.entrypoints.http_server"),
        launch_commands=("sglang serve",),
    ),
    EngineProfile(
        name="trtllm", display="TRT-LLM", frameworks=("trt", "dynamo-trt"),
        framework_display={"dynamo-trt": "Dynamo TRT-LLM"}, aliases=("trt", "tensorrt-llm", "tensorrt_llm"),
        packages=("tensorrt-llm",), legacy_config_key="trtllm_config", publishes_events=True,
        tp_flags=("tensor_parallel_size",), attention_dp_switch="enable_attention_dp",
        spec=SpecFields(block="speculative_config", method=("decoding_type",), draft_length="max_draft_len",
                        draft_model="speculative_model"),
        acceptance_knob="TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS",
        acceptance_mechanism="TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS={al_minus_one}",
        acceptance_knobs={"TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS": AL_MINUS_ONE},
        synthetic_env=("TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS",),
        launch_modules=("tensorrt_llm.commands.serve", "tensorrt_llm.serve"), launch_commands=("trtllm-serve",),
    ),
    EngineProfile(
        name="atom", display="ATOM", frameworks=("atom", "atom-disagg"), framework_display={"atom-disagg": "ATOM disagg"},
        packages=("atom", "aiter", "mori"), context_parallel=True, tp_is_gpus=True,
        spec=SpecFields(method=("method",), draft_length="num-speculative-tokens", draft_model="draft-model"),
        acceptance_knob="spec-decode-acceptance-length",
        acceptance_mechanism="--spec-decode-acceptance-length {al}",
        acceptance_knobs={"spec-decode-acceptance-length": AL_AS_IS, "spec-decode-acceptance-rate": AL_RATE},
        synthetic_flags=("spec-decode-acceptance-length", "spec-decode-acceptance-rate"),
        launch_modules=("atom.entrypoints.openai_server",), launch_commands=("atom serve",),
    ),
    EngineProfile(
        name="tilert", display="TileRT", frameworks=("tilert",), packages=("tilert",),
        acceptance_knob="TILERT_SIMULATE_ACC_LEN", acceptance_mechanism="TILERT_SIMULATE_ACC_LEN={al}",
        acceptance_knobs={"TILERT_SIMULATE_ACC_LEN": AL_AS_IS},
        synthetic_env=("TILERT_SIMULATE_ACC_LEN", "TILERT_SIMULATE_ACC_METHOD"),
    ),
)

_registry: list[EngineProfile] = list(_BUILTIN)
_generation = [0]  # bumped on every change, so caches of derived defaults can tell


def generation() -> int:
    return _generation[0]


_derived: dict[str, tuple[int, Any]] = {}


def _cached(name: str, build):
    """An immutable value derived from the registry, rebuilt when the registry changes (binding
    and key-path reading ask these for every variant and key)."""
    hit = _derived.get(name)
    if hit is None or hit[0] != _generation[0]:
        hit = _derived[name] = (_generation[0], build())
    return hit[1]


def engines() -> tuple[EngineProfile, ...]:
    """Every known engine, in registration order."""
    return tuple(_registry)


def register(profile: EngineProfile) -> None:
    """Add an engine (tests use this to prove a new engine is one profile)."""
    if any(p.name == profile.name for p in _registry):
        raise ValueError(f"engine {profile.name!r} is already registered")
    taken = {f for p in _registry for f in p.frameworks}
    if taken & set(profile.frameworks):
        raise ValueError(f"frameworks {sorted(taken & set(profile.frameworks))} already belong to an engine")
    _registry.append(profile)
    _generation[0] += 1


def unregister(name: str) -> None:
    _registry[:] = [p for p in _registry if p.name != name or p in _BUILTIN]
    _generation[0] += 1


def profile(engine: str | None) -> EngineProfile | None:
    """The profile of an engine id (or one of its aliases). Binding asks it twice per variant
    for a handful of distinct ids: the answers are kept per id until the registry changes."""
    answers = _cached("profile_of", dict)
    known = isinstance(engine, str) or engine is None  # an id, not whatever else a file wrote
    if known and engine in answers:
        return answers[engine]
    by_name = _cached("by_name", lambda: {p.name: p for p in _registry})
    found = by_name.get(canonical_engine(engine) or "")
    if known:
        answers[engine] = found
    return found


def primary_framework(engine: str) -> str:
    """The master-config framework an engine is named by when nothing else says (`trtllm` -> `trt`)."""
    p = profile(engine)
    return p.frameworks[0] if p is not None and p.frameworks else engine


def canonical_engine(name: Any) -> str | None:
    """`tensorrt-llm`, `TRT` -> `trtllm`: an engine id as srt-slurm recipes spell it."""
    if not isinstance(name, str):
        return None
    n = name.strip().lower()
    return _cached("aliases", lambda: {a: p.name for p in _registry for a in p.aliases}).get(n, n)


def default_framework_family() -> dict[str, str]:
    """Framework -> engine, from the profiles (the default of policy `framework_family`)."""
    return {f: p.name for p in _registry for f in p.frameworks}


def engine_of(framework: str | None, policy: Any = None) -> str | None:
    """The engine a master-config framework runs: the repository's `framework_family` when a
    policy is given (so an override reaches every use), else the profiles'; None when unknown."""
    table = policy.framework_family if policy is not None else default_framework_family()
    return table.get(framework or "")


def display_name(framework_or_engine: str, policy: Any = None) -> str:
    """How a row names a framework or engine: policy `engine_display_names` first, then the
    profile of the framework's engine; anything unknown is upper-cased."""
    if policy is not None and framework_or_engine in policy.engine_display_names:
        return policy.engine_display_names[framework_or_engine]
    engine = engine_of(framework_or_engine, policy) or framework_or_engine
    p = profile(engine)
    if p is None:
        return framework_or_engine.upper()
    return p.name_of(framework_or_engine)


def dist_name(name: str) -> str:
    """PEP 503 normalised distribution name: `Deep_GEMM` and `deep-gemm` are one package."""
    return re.sub(r"[-_.]+", "-", name).lower()


def is_package(name: str, packages: Iterable[str]) -> bool:
    """Whether a distribution name is one of `packages`, spelled any PEP 503-equal way."""
    wanted = {dist_name(p) for p in packages}
    return dist_name(name) in wanted


class _EnginePackages(Set):
    """Every engine's serving-stack distributions, read from the registry on each use, and
    matched PEP 503-normalised (`sgl_kernel` is `sgl-kernel`)."""

    def _names(self) -> frozenset[str]:
        return _cached("packages", lambda: frozenset(dist_name(n) for n in default_engine_packages()))

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and dist_name(name) in self._names()

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._names()))

    def __len__(self) -> int:
        return len(self._names())


def default_engine_packages() -> list[str]:
    out = [pkg for p in _registry for pkg in p.packages] + list(SHARED_PACKAGES)
    return list(dict.fromkeys(out))


ENGINE_PACKAGES: Set = _EnginePackages()


def launch_modules() -> dict[str, str]:
    """`python -m MODULE` that starts a server -> its engine."""
    return _cached("launch_modules", lambda: {m: p.name for p in _registry for m in p.launch_modules})


def launch_subcommands() -> dict[tuple[str, str], str]:
    """(executable, subcommand) that starts a server -> its engine: `vllm serve`."""
    return _cached("launch_subcommands", lambda: {tuple(c.split(None, 1)): p.name for p in _registry
                                                  for c in p.launch_commands if " " in c})


def launch_executables() -> dict[str, str]:
    """An executable that starts a server by itself -> its engine: `trtllm-serve`."""
    return _cached("launch_executables", lambda: {c: p.name for p in _registry for c in p.launch_commands if " " not in c})


def default_open_source_frameworks() -> list[str]:
    return [f for p in _registry if p.open_source for f in p.frameworks]


def default_vendor_frameworks() -> list[str]:
    return [f for p in _registry if not p.open_source for f in p.frameworks]


def default_image_orgs() -> dict[str, list[str]]:
    return {p.name: list(p.image_orgs) for p in _registry if p.image_orgs}


def default_recipe_sources() -> dict[str, list[str]]:
    return {p.name: [*p.recipe_repos, *p.recipe_sites] for p in _registry if p.recipe_repos or p.recipe_sites}


def default_recipe_repos() -> list[str]:
    return [r for p in _registry for r in p.recipe_repos]


def default_recipe_sites() -> list[str]:
    return [s for p in _registry for s in p.recipe_sites]


def default_display_names() -> dict[str, str]:
    """Engine id and framework -> how a row writes it (`trtllm`, `trt` -> `TRT-LLM`)."""
    return {**{p.name: p.display for p in _registry}, **{f: p.name_of(f) for p in _registry for f in p.frameworks}}


def default_event_frameworks() -> list[str]:
    return [f for p in _registry if p.publishes_events for f in p.frameworks]


def default_synthetic_env() -> list[str]:
    return list(dict.fromkeys([e for p in _registry for e in p.synthetic_env] + list(RUNNER_SYNTHETIC_ENV)))


def default_synthetic_flags() -> list[str]:
    return list(dict.fromkeys(f for p in _registry for f in p.synthetic_flags))


def default_synthetic_json_keys() -> list[str]:
    return list(dict.fromkeys(k for p in _registry for k in p.synthetic_json_keys))


def acceptance_knobs() -> dict[str, str]:
    """Every hand-writable simulated-acceptance knob -> how its value maps to an AL."""
    out = {k: kind for p in _registry for k, kind in p.acceptance_knobs.items()}
    return {**out, **RUNNER_ACCEPTANCE_KNOBS}


def legacy_config_keys() -> tuple[str, ...]:
    return _cached("legacy", lambda: tuple(p.legacy_config_key for p in _registry if p.legacy_config_key))


def context_parallel_engines() -> frozenset[str]:
    return _cached("dcp", lambda: frozenset(p.name for p in _registry if p.context_parallel))
