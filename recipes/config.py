"""Repository policy: everything policy-like the checks need, with defaults, overridable by
an optional `.github/infx-review.yml` in the benchmark repository."""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal, get_args

from pydantic import ConfigDict, Field, ValidationError

from . import engines
from .errors import Finding, RecipeError
from .model import Model
from .yamlio import load_yaml

CONFIG_PATH = ".github/infx-review.yml"
MSG_CONFIG_UNREADABLE = "could not be read ({error}); the default policy applies"
SCHEMA_ID = "https://github.com/SemiAnalysisAI/infx-review/blob/main/docs/infx-review.schema.json"

# Enumerations are Literals, so a typo (`mode: dispach`) is an error naming its line instead of
# silently meaning something else.
SweepMode = Literal["label", "dispatch"]
SWEEP_MODES: tuple[str, ...] = get_args(SweepMode)
# GitHub's `author_association` values (REST API, "issue comment" schema).
AuthorAssociation = Literal["COLLABORATOR", "CONTRIBUTOR", "FIRST_TIMER", "FIRST_TIME_CONTRIBUTOR",
                            "MANNEQUIN", "MEMBER", "NONE", "OWNER"]
# E2EL percentiles the throughput artifacts carry for AgentX curves (spec 10.1).
AgenticPercentile = Literal["p50", "p75", "p90", "p95", "p99"]


class Paths(Model):
    """Where things live. Empty values are filled in by layout detection (recipes.layout)."""

    model_config = ConfigDict(extra="forbid")

    root: str | None = None  # "" for the root layout, "inferencex-e2e" for the new one
    configs_dir: str | None = None
    changelog: str | None = None
    golden_dir: str | None = None
    models_md: str | None = None
    checklist: str | None = None
    waiver_dir: str | None = None
    thresholds: str | None = None
    scripts_dir: str | None = None
    codeowners: str = ".github/CODEOWNERS"


class SweepPolicy(Model):
    model_config = ConfigDict(extra="forbid")

    workflow: str = ".github/workflows/run-sweep.yml"
    # "label": the sweep workflow starts itself on labels (InferenceX run-sweep.yml);
    # "dispatch": the bot calls workflow_dispatch on `workflow`.
    mode: SweepMode = "label"
    primary_labels: list[str] = [
        "full-sweep-fail-fast",
        "full-sweep-enabled",
        "full-sweep-fail-fast-no-canary",
        "non-canary-full-sweep-enabled",
        "sweep-enabled",
    ]
    default_label: str = "full-sweep-fail-fast"
    fail_fast_label: str = "full-sweep-fail-fast"
    not_reusable_labels: list[str] = ["evals-only", "agentx-fast"]
    dispatch_inputs: dict[str, str] = {}
    reusable_artifacts: list[str] = ["results_bmk", "eval_results_all"]
    reusable_artifact_prefixes: list[str] = ["bmk_agentic_"]
    throughput_artifact: str = "results_bmk"
    eval_artifact: str = "eval_results_all"
    # Check-run display names (the part before " / ") that execute benchmarks (Check 1).
    # A name matches a prefix exactly or as "<prefix> <more>", e.g. "single-node 8k1k".
    # Eval names are tested first, since "agentic eval" also starts with "agentic".
    benchmark_job_prefixes: list[str] = ["single-node", "multi-node", "agentic", "canary"]
    eval_job_names: list[str] = ["eval", "agentic eval", "multi-node eval", "multi-node agentic eval"]
    # meta_env.json keys that may carry the image an eval ran on (Check 2; spec 9.2 leaves the
    # field name unconfirmed, so every spelling seen in collectors is accepted).
    eval_image_keys: list[str] = ["image", "IMAGE", "container_image"]


class Policy(Model):
    model_config = ConfigDict(extra="forbid")

    established_skus: list[str] = [
        "h100", "h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x", "mi355x",
    ]
    # The engine policy defaults to the engine profiles (recipes.engines, the one list of
    # engines); a repository override of any of these keys reaches every use.
    open_source_frameworks: list[str] = Field(default_factory=engines.default_open_source_frameworks)
    vendor_frameworks: list[str] = Field(default_factory=engines.default_vendor_frameworks)
    # Framework family -> Docker Hub orgs its images must come from (Check 6).
    upstream_image_orgs: dict[str, list[str]] = Field(default_factory=engines.default_image_orgs)
    # Framework -> family (the srt-slurm engine it runs): the image rule, the upstream-recipe
    # rule, srt recipe binding, the effective engine and the golden-AL injector all read it.
    framework_family: dict[str, str] = Field(default_factory=engines.default_framework_family)
    authorized_associations: list[AuthorAssociation] = ["OWNER", "MEMBER", "COLLABORATOR"]
    bot_logins: list[str] = ["github-actions[bot]", "infx-review[bot]", "Klaud-Cold"]
    core_teams: list[str] = ["@InferenceX/core", "@SemiAnalysisAI/core", "@InferenceMAX/Core"]
    # Knobs that change model architecture (Check 8).
    arch_hack_flags: list[str] = ["hf-overrides", "hf_overrides", "json-model-override-args"]
    # Frameworks whose serving stack has publish_events_and_metrics; others are exempt (Check 8).
    event_publication_frameworks: list[str] = Field(default_factory=engines.default_event_frameworks)
    event_publication_key: str = "publish_events_and_metrics"
    # Python distributions that make up the serving engine (Check 10).
    # Matched PEP 503-normalised (`sgl_kernel` is `sgl-kernel`).
    engine_packages: list[str] = Field(default_factory=engines.default_engine_packages)
    # The benchmark client and eval tooling (Check 10): patching or monkey-patching these is not
    # an engine patch, the rule covers the serving stack only.
    benchmark_client_packages: list[str] = [
        "lm_eval", "lm-eval", "lm_evaluation_harness", "lm-evaluation-harness", "aiperf", "sa_bench",
        "sa-bench", "bench_serving", "benchmark_serving", "swebench", "mini-swe-agent", "genai-perf",
        "evalplus", "evals/patches",
    ]
    # Folders (relative to the layout root) of the benchmark client and its post-processing: a
    # Python file there that the launch path runs changes what is measured, not what is served,
    # so editing it affects no point (checks.launch_path rule 3). Its shell files still count.
    benchmark_client_paths: list[str] = ["utils/"]
    # Every draft module of a model prefix (longest matching prefix wins); an ATOM
    # --online_quant_config `exclude_layer` list must cover each one (Check 13). The
    # dsv41flash DSpark draft is decoder layers 37-39 of the checkpoint (spec, seed PR).
    draft_modules: dict[str, list[str]] = {
        "dsv41flash": ["model.layers.37", "model.layers.38", "model.layers.39"],
        "dsv4": ["mtp"],
        "kimik3": ["draft"],
        "glm5.2": ["mtp"],
        "glm5.3": ["mtp"],
        "qwen3.5": ["mtp"],
        "qwen3.8next": ["mtp"],
    }
    prohibited_env: list[str] = ["SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"]
    draft_lowering_env: list[str] = ["SGLANG_GLM_NEXTN_MOE_PTPC"]
    # Model-config keys whose override trims layers, experts or heads (Check 8).
    arch_trim_keys: list[str] = [
        "num_hidden_layers", "num_experts", "num_attention_heads", "num_experts_per_tok",
        "n_routed_experts", "num_local_experts", "num_key_value_heads",
    ]
    # Where model files live: a sed/jq edit of one of these is an architecture hack (Check 8).
    model_file_patterns: list[str] = [
        r"(?:^|/)(?:generation_)?config\.json\b", r"(?:^|/)tokenizer_config\.json\b", r"\bhf_config\b",
    ]
    # srt `setup_script`s that srtctl itself ships (not in the benchmark repository): a missing
    # file matching one of these is not a blind spot (Checks 8, 10, 13).
    # Downloads piped to a shell that only install benchmark tooling (URL prefixes): uv's own
    # installer, which benchmark_lib.sh pipes to `sh` for the AgentX client. Any other download
    # run by the launch path stays "could not verify".
    trusted_installers: list[str] = ["https://astral.sh/uv/"]
    harness_setup_scripts: list[str] = [r"vllm-router(?:-[0-9.]+)?\.sh", r"sglang-router(?:-[0-9.]+)?\.sh"]
    # Repositories a runner clones whose recipes the bot reads (a multi-node CONFIG_FILE the
    # benchmark repository does not hold is read from the srt-slurm checkout the point's runner
    # makes). A runner cloning any other repository leaves its recipes unverified.
    recipe_repositories: list[str] = [
        "NVIDIA/srt-slurm", "functionstackx/srt-slurm-nv", "cquil11/srt-slurm-nv", "ishandhanani/srt-slurm",
    ]
    # Container paths of the benchmark checkout; `<mount>/x` is `<layout root>/x` (Checks 8-13).
    workspace_mounts: list[str] = ["/infmax-workspace", "/workspace"]
    # Environment hooks that load code into the server process (Check 10). PYTHONPATH counts
    # when it points at a repository directory holding sitecustomize/usercustomize/.pth files.
    patch_env_hooks: list[str] = ["PYTHONSTARTUP", "LD_PRELOAD"]
    # Draft-precision knobs (Check 13): server flags, and keys inside --speculative-config JSON.
    draft_precision_flags: list[str] = [
        "speculative-draft-model-quantization", "speculative-draft-quantization", "speculative-draft-dtype",
        "speculative-draft-kv-cache-dtype", "draft-quantization", "draft-dtype", "draft-kv-cache-dtype",
    ]
    draft_config_precision_keys: list[str] = ["quantization", "dtype", "kv_cache_dtype", "draft_quantization"]
    # Values of those knobs that keep the draft as it ships (SGLang's `unquant` leaves the draft
    # unquantized; `auto` follows the checkpoint).
    draft_precision_keep_values: list[str] = ["unquant", "none", "auto", "null"]
    online_quant_flags: list[str] = ["online_quant_config", "online-quant-config"]
    # Drafts agreed per model prefix besides the served checkpoint's own head (MODELS.md).
    agreed_drafts: dict[str, list[str]] = {
        "dsv4": ["deepseek-ai/DeepSeek-V4-Pro-0813"],
        "kimik3": ["Inferact/Kimi-K3-DSpark"],
        "minimaxm3": ["Inferact/MiniMax-M3-EAGLE3", "Inferact/MiniMax-M3-EAGLE3-GQA"],
    }
    # Simulated-acceptance knobs per engine (spec 5.3, Check 11). Env vars, server flags, and
    # keys inside --speculative-config JSON; master-config additional-settings keys too.
    synthetic_acceptance_env: list[str] = Field(default_factory=engines.default_synthetic_env)
    synthetic_acceptance_flags: list[str] = Field(default_factory=engines.default_synthetic_flags)
    synthetic_acceptance_json_keys: list[str] = Field(default_factory=engines.default_synthetic_json_keys)
    # Two AL values closer than this are equal (goldens carry two decimals; Check 11).
    golden_al_tolerance: float = 0.005
    # Documented exceptions to Check 6 that a reviewer may invoke in the Additional detail section.
    image_exception_hardware: list[str] = ["mi455x", "vr200", "rubin", "ualoe72", "nvl72"]
    eval_default_min_score: float = 0.85
    pareto_min_frontier: int = 5
    pareto_escalation: list[str] = ["@functionstackx", "@cquil11", "@Oseltamivir", "@adibarra"]
    # AgentX curves are judged at this E2EL percentile (spec 10.1; fixed-seq always uses p50).
    pareto_agentic_percentile: AgenticPercentile = "p90"
    # An admin records a Check 14 bypass with a comment holding this phrase and the assessed SHA.
    pareto_bypass_phrase: str = "pareto bypass"
    # Two AL values closer than this are the same claim (goldens carry two decimals; Check 15).
    claims_al_tolerance: float = 0.005
    upstream_recipe_repos: list[str] = Field(default_factory=engines.default_recipe_repos)
    upstream_recipe_sites: list[str] = Field(default_factory=engines.default_recipe_sites)
    # Framework family -> the upstream repos and sites that document it (Check 3): a vLLM config
    # needs a vLLM recipe, an SGLang config an SGLang cookbook entry.
    upstream_recipe_family_sources: dict[str, list[str]] = Field(default_factory=engines.default_recipe_sources)
    # Engine flags (fnmatch patterns, `_` and `-` equal) that a production recipe must match
    # besides model, SKU and TP/EP/DP/PP (spec 12 Check 3: quantization, KV dtype, kernel backends).
    upstream_recipe_args: list[str] = [
        "quantization", "kv-cache-dtype", "enable-dp-attention", "enable-expert-parallel", "*-backend",
    ]
    # Server environment variables that select kernel backends, compared like flags (Check 3).
    upstream_recipe_env: list[str] = ["*_USE_AITER", "VLLM_ATTENTION_BACKEND", "SGLANG_ATTENTION_BACKEND"]
    # Harness tuning knobs never compared against the upstream recipe (Check 3).
    upstream_recipe_harness_knobs: list[str] = [
        "chunked-prefill-size", "scheduler-recv-interval", "max-running-requests", "max-num-seqs",
        "cuda-graph-max-bs", "port", "host", "SGLANG_RADIX_FORCE_MISS",
    ]
    upstream_recipe_match_sku: bool = True
    # Words in an Additional detail line that, next to the config key or image, claim the
    # "new architecture upstream cannot serve" exception to the upstream-image rule (Check 6).
    image_exception_phrases: list[str] = [
        "new architecture", "new model architecture", "cannot serve", "cannot yet serve",
        "not supported upstream", "unsupported upstream", "upstream cannot support",
    ]
    # How row text names an engine or framework (recipes.engines.display_name); names not
    # listed and of no known engine are upper-cased.
    engine_display_names: dict[str, str] = Field(default_factory=engines.default_display_names)
    # Changed files that cannot alter any benchmark point (Check 12 isolation), fnmatch patterns.
    append_only_inert_globs: list[str] = ["*.md"]
    signoff_phrase: str = "As a PR reviewer and CODEOWNER"
    status_context: str = "codeowner-signoff-verify"


class RepoConfig(Model):
    """The whole repository configuration."""

    model_config = ConfigDict(extra="forbid")

    paths: Paths = Field(default_factory=Paths)
    policy: Policy = Field(default_factory=Policy)
    sweep: SweepPolicy = Field(default_factory=SweepPolicy)


def config_json_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of `.github/infx-review.yml`, from the models themselves."""
    schema = RepoConfig.model_json_schema()
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_ID,
            "title": "infx-review repository configuration (.github/infx-review.yml)", **schema}


def read_repo_config(source: Any, default: RepoConfig | None = None,
                     path: str = CONFIG_PATH) -> tuple[RepoConfig, list[Finding]]:
    """The repository configuration of a tree (anything with `read(path) -> bytes | None`): the
    one reader every snapshot source and the review context use. An absent file gives `default`
    (the defaults when None); an unreadable one gives `default` and a finding naming the file."""
    try:
        data = source.read(path)
    except Exception as exc:  # a tree that cannot be read leaves the default policy in force
        return default or RepoConfig(), [Finding(path=path, line=None, message=MSG_CONFIG_UNREADABLE.format(error=exc))]
    if data is None:
        return default or RepoConfig(), []
    return load_repo_config(data, path)


def load_repo_config(data: bytes | None, path: str = CONFIG_PATH) -> tuple[RepoConfig, list[Finding]]:
    """Defaults merged with the repository's file. A bad file is a finding; defaults still apply.
    The same bytes are parsed once per process (the builder and the review context both ask);
    each caller gets its own copy."""
    if data is None:
        return RepoConfig(), []
    config, findings = _parse_repo_config(bytes(data), path, engines.generation())
    return config.model_copy(deep=True), list(findings)


@lru_cache(maxsize=32)
def _parse_repo_config(data: bytes, path: str, _engines: int) -> tuple[RepoConfig, tuple[Finding, ...]]:
    config, findings = _validate_repo_config(data, path)
    return config, tuple(findings)


def _validate_repo_config(data: bytes, path: str) -> tuple[RepoConfig, list[Finding]]:
    try:
        doc = load_yaml(data, path)
    except RecipeError as e:
        return RepoConfig(), [e.finding]
    raw: Any = doc.data or {}
    if not isinstance(raw, dict):
        return RepoConfig(), [Finding(path=path, line=1, message="expected a mapping")]
    try:
        return RepoConfig.model_validate(raw), []
    except ValidationError as e:
        findings = []
        for err in e.errors():
            loc = tuple(err["loc"])
            findings.append(
                Finding(path=path, line=doc.line(*loc), message=f"{'.'.join(map(str, loc))}: {err['msg']}")
            )
        return RepoConfig(), sorted(findings, key=lambda f: f.line or 0)
