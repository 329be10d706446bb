"""Repository policy: everything policy-like the checks need, with defaults, overridable by
an optional `.github/infx-review.yml` in the benchmark repository."""
from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, get_args

from pydantic import ConfigDict, Field, ValidationError, field_validator

from . import engines
from .errors import Finding, RecipeError
from .model import Model
from .yamlio import load_yaml

CONFIG_PATH = ".github/infx-review.yml"
MSG_CONFIG_UNREADABLE = "could not be read ({error}); the default policy applies"
# The JSON Schema is published where its `$id` says: docs/infx-review.schema.json in this project's
# repository, as raw JSON (editors fetch it there; tests/bot/test_config_schema.py keeps the
# committed file equal to `config-schema`).
SCHEMA_FILE = "docs/infx-review.schema.json"
SCHEMA_ID = f"https://raw.githubusercontent.com/SemiAnalysisAI/infx-review/main/{SCHEMA_FILE}"

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

    root: str | None = Field(None, description=(
        "Folder that holds the benchmark tree: \"\" for the root layout, \"inferencex-e2e\" for the newer one. "
        "Unset: detected (inferencex-e2e/ when it holds configs or a changelog)."))
    configs_dir: str | None = Field(None, description="Folder of the master configs (*-master.yaml). Unset: <root>/configs.")
    changelog: str | None = Field(None, description="The perf changelog. Unset: <root>/perf-changelog.yaml.")
    golden_dir: str | None = Field(None, description="Folder of the golden acceptance-length curves (Check 11).")
    models_md: str | None = Field(None, description="MODELS.md, the list of supported and deprecated models (Check 7).")
    checklist: str | None = Field(None, description="The review checklist template a sign-off follows (Check 5).")
    waiver_dir: str | None = Field(None, description="Folder of engine-patch waivers, <PR number>.md (Check 10).")
    thresholds: str | None = Field(None, description="The eval thresholds file (Check 2).")
    scripts_dir: str | None = Field(None, description="Folder of the benchmark launch scripts and srt-slurm recipes.")
    codeowners: str = Field(".github/CODEOWNERS", description="The CODEOWNERS file that decides who may sign off (Check 0).")


# `workflow_dispatch` takes at most 25 inputs, each declared by the workflow (REST "Create a
# workflow dispatch event", https://docs.github.com/en/rest/actions/workflows#create-a-workflow-dispatch-event;
# https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#onworkflow_dispatchinputs).
# The bot sends these four itself (bot/handlers/sweep.py), so `dispatch_inputs` adds at most 21.
DISPATCH_INPUTS_MAX = 25
BOT_DISPATCH_INPUTS = ("ref", "pr-number", "config-keys", "fail-fast")
MSG_TOO_MANY_INPUTS = ("sweep.dispatch_inputs: workflow_dispatch takes at most {max} inputs; the bot sends {own} "
                       "({names}) and these {n} add {extra}, {total} in all")
# A commit status context longer than this is refused (https://docs.github.com/en/rest/commits/statuses).
STATUS_CONTEXT_MAX = 255


class SweepPolicy(Model):
    """How benchmark sweeps are started and recognised."""

    model_config = ConfigDict(extra="forbid")

    workflow: str = Field(".github/workflows/run-sweep.yml", description=(
        "Path of the sweep workflow in the benchmark repository: its runs are the sweeps Check 1 reads, "
        "and in dispatch mode the workflow the bot starts."))
    mode: SweepMode = Field("label", description=(
        "\"label\": the sweep workflow starts itself when a sweep label is added; "
        "\"dispatch\": the bot starts `workflow` with workflow_dispatch."))
    primary_labels: list[str] = Field([
        "full-sweep-fail-fast",
        "full-sweep-enabled",
        "full-sweep-fail-fast-no-canary",
        "non-canary-full-sweep-enabled",
        "sweep-enabled",
    ], description="PR labels that start a full benchmark sweep.")
    default_label: str = Field("full-sweep-fail-fast", description="The label `/sweep` adds when it names none.")
    fail_fast_label: str = Field("full-sweep-fail-fast", description="The label of a sweep that stops at its first failure.")
    not_reusable_labels: list[str] = Field(["evals-only", "agentx-fast"], description=(
        "Labels of partial sweeps whose runs `/reuse-sweep-run` may not reuse (Check 4)."))
    dispatch_inputs: dict[str, str] = Field({}, description=(
        "Extra inputs sent with workflow_dispatch in dispatch mode (names the sweep workflow declares; "
        "with the bot's own four, at most 25)."))

    @field_validator("dispatch_inputs")
    @classmethod
    def _bounded_inputs(cls, value: dict[str, str]) -> dict[str, str]:
        total = len(set(value) | set(BOT_DISPATCH_INPUTS))
        if total > DISPATCH_INPUTS_MAX:
            raise ValueError(MSG_TOO_MANY_INPUTS.format(
                max=DISPATCH_INPUTS_MAX, own=len(BOT_DISPATCH_INPUTS), names=", ".join(BOT_DISPATCH_INPUTS),
                n=len(value), extra=total - len(BOT_DISPATCH_INPUTS), total=total))
        return value
    reusable_artifacts: list[str] = Field(["results_bmk", "eval_results_all"], description=(
        "Artifacts a reused run must still hold (Check 4)."))
    reusable_artifact_prefixes: list[str] = Field(["bmk_agentic_"], description=(
        "Name prefixes of further artifacts a reused run must still hold (Check 4)."))
    throughput_artifact: str = Field("results_bmk", description="The artifact holding the throughput results (Check 14).")
    eval_artifact: str = Field("eval_results_all", description="The artifact holding the eval results (Check 2).")
    benchmark_job_prefixes: list[str] = Field(["single-node", "multi-node", "agentic", "canary"], description=(
        "Check-run display names (before \" / \") of jobs that run benchmarks (Check 1). A name matches a prefix "
        "exactly or as \"<prefix> <more>\"; eval names are tested first."))
    eval_job_names: list[str] = Field(["eval", "agentic eval", "multi-node eval", "multi-node agentic eval"], description=(
        "Check-run display names of the eval jobs (Check 2)."))
    eval_image_keys: list[str] = Field(["image", "IMAGE", "container_image"], description=(
        "meta_env.json keys that may carry the image an eval ran on (Check 2)."))


class Policy(Model):
    """What the checks enforce, and who the bot listens to."""

    model_config = ConfigDict(extra="forbid")

    established_skus: list[str] = Field([
        "h100", "h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x", "mi355x",
    ], description="Hardware SKUs that are established; a new SKU outside this list may use a vendor image (Check 6).")
    # The engine policy defaults to the engine profiles (recipes.engines, the one list of
    # engines); a repository override of any of these keys reaches every use.
    open_source_frameworks: list[str] = Field(default_factory=engines.default_open_source_frameworks, description=(
        "Open-source serving frameworks, whose submissions must come first and use upstream images (Check 6)."))
    vendor_frameworks: list[str] = Field(default_factory=engines.default_vendor_frameworks, description=(
        "Vendor frameworks, allowed after the open-source ones (Check 6)."))
    upstream_image_orgs: dict[str, list[str]] = Field(default_factory=engines.default_image_orgs, description=(
        "Framework family -> the Docker Hub organisations its images must come from (Check 6)."))
    framework_family: dict[str, str] = Field(default_factory=engines.default_framework_family, description=(
        "Framework -> family (the srt-slurm engine it runs); read by the image and upstream-recipe rules, "
        "recipe binding and the golden-AL injector."))
    authorized_associations: list[AuthorAssociation] = Field(["OWNER", "MEMBER", "COLLABORATOR"], description=(
        "GitHub author associations whose slash commands the bot obeys."))
    bot_logins: list[str] = Field(["github-actions[bot]", "infx-review[bot]"], description=(
        "Accounts whose comments are the bot's own or automation's: never a sign-off or a command. "
        "Add the login of the GitHub App or account the bot posts as."))
    core_teams: list[str] = Field([], description=(
        "Teams (@org/team) whose members' sign-off needs no CODEOWNER verification: Check 0 passes saying so. "
        "Empty: every signer is verified against CODEOWNERS."))
    arch_hack_flags: list[str] = Field(["hf-overrides", "hf_overrides", "json-model-override-args"], description=(
        "Server flags that change the model architecture (Check 8)."))
    event_publication_frameworks: list[str] = Field(default_factory=engines.default_event_frameworks, description=(
        "Frameworks whose serving stack has the event publication key; others are exempt (Check 8)."))
    event_publication_key: str = Field("publish_events_and_metrics", description=(
        "The setting that publishes engine events and metrics (Check 8)."))
    engine_packages: list[str] = Field(default_factory=engines.default_engine_packages, description=(
        "Python distributions that make up the serving engine, PEP 503-normalised (Check 10)."))
    benchmark_client_packages: list[str] = Field([
        "lm_eval", "lm-eval", "lm_evaluation_harness", "lm-evaluation-harness", "aiperf", "sa_bench",
        "sa-bench", "bench_serving", "benchmark_serving", "swebench", "mini-swe-agent", "genai-perf",
        "evalplus", "evals/patches",
    ], description="The benchmark client and eval tooling: patching these is not an engine patch (Check 10).")
    benchmark_client_paths: list[str] = Field(["utils/"], description=(
        "Folders (relative to the layout root) of the benchmark client: a Python file there changes what is "
        "measured, not what is served, so editing it affects no point (its shell files still count)."))
    trace_affected: bool = Field(True, description=(
        "Whether a point reached only through a shared launch file (a runner, a sourced library) is judged by "
        "its interpreted trace at the base against the head: affected only when what it runs changed. "
        "Off: the textual reach rule alone decides."))
    draft_modules: dict[str, list[str]] = Field({
        "dsv41flash": ["model.layers.37", "model.layers.38", "model.layers.39"],
        "dsv4": ["mtp"],
        "kimik3": ["draft"],
        "glm5.2": ["mtp"],
        "glm5.3": ["mtp"],
        "qwen3.5": ["mtp"],
        "qwen3.8next": ["mtp"],
    }, description=(
        "Model prefix -> every draft module (longest prefix wins); an ATOM --online_quant_config exclude_layer "
        "list must cover each one (Check 13)."))
    prohibited_env: list[str] = Field(["SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"], description=(
        "Environment variables that change the draft as shipped and are never allowed (Check 13)."))
    draft_lowering_env: list[str] = Field(["SGLANG_GLM_NEXTN_MOE_PTPC"], description=(
        "Environment variables that lower the draft's precision (Check 13)."))
    arch_trim_keys: list[str] = Field([
        "num_hidden_layers", "num_experts", "num_attention_heads", "num_experts_per_tok",
        "n_routed_experts", "num_local_experts", "num_key_value_heads",
    ], description="Model-config keys whose override trims layers, experts or heads (Check 8).")
    model_file_patterns: list[str] = Field([
        r"(?:^|/)(?:generation_)?config\.json\b", r"(?:^|/)tokenizer_config\.json\b", r"\bhf_config\b",
    ], description="Regular expressions of model files: a sed/jq edit of one is an architecture hack (Check 8).")
    trusted_installers: list[str] = Field(["https://astral.sh/uv/"], description=(
        "URL prefixes of downloads piped to a shell that only install benchmark tooling; any other download the "
        "launch path runs stays \"could not verify\"."))
    harness_setup_scripts: list[str] = Field(
        [r"vllm-router(?:-[0-9.]+)?\.sh", r"sglang-router(?:-[0-9.]+)?\.sh"], description=(
            "Regular expressions of srt setup_scripts that srtctl itself ships: such a file missing from the "
            "repository is not a blind spot (Checks 8, 10, 13)."))
    recipe_repositories: list[str] = Field(["NVIDIA/srt-slurm"], description=(
        "Repositories (owner/name) a runner clones whose recipes the bot reads; a runner cloning any other "
        "repository leaves its recipes unverified. Add the forks your runners clone."))
    workspace_mounts: list[str] = Field(["/infmax-workspace", "/workspace"], description=(
        "Container paths of the benchmark checkout: <mount>/x is <layout root>/x (Checks 8-13)."))
    patch_env_hooks: list[str] = Field(["PYTHONSTARTUP", "LD_PRELOAD"], description=(
        "Environment hooks that load code into the server process (Check 10)."))
    draft_precision_flags: list[str] = Field([
        "speculative-draft-model-quantization", "speculative-draft-quantization", "speculative-draft-dtype",
        "speculative-draft-kv-cache-dtype", "draft-quantization", "draft-dtype", "draft-kv-cache-dtype",
    ], description="Server flags that set the draft's precision (Check 13).")
    draft_config_precision_keys: list[str] = Field(["quantization", "dtype", "kv_cache_dtype", "draft_quantization"],
                                                   description="Keys inside --speculative-config JSON that set the draft's precision (Check 13).")
    draft_precision_keep_values: list[str] = Field(["unquant", "none", "auto", "null"], description=(
        "Values of those knobs that keep the draft as it ships (Check 13)."))
    online_quant_flags: list[str] = Field(["online_quant_config", "online-quant-config"], description=(
        "Flags of ATOM's online quantization config (Check 13)."))
    agreed_drafts: dict[str, list[str]] = Field({
        "dsv4": ["deepseek-ai/DeepSeek-V4-Pro-0813"],
        "kimik3": ["Inferact/Kimi-K3-DSpark"],
        "minimaxm3": ["Inferact/MiniMax-M3-EAGLE3", "Inferact/MiniMax-M3-EAGLE3-GQA"],
    }, description="Model prefix -> drafts agreed besides the served checkpoint's own head (Check 13).")
    synthetic_acceptance_env: list[str] = Field(default_factory=engines.default_synthetic_env, description=(
        "Environment variables that simulate a speculative-decoding acceptance length (Check 11)."))
    synthetic_acceptance_flags: list[str] = Field(default_factory=engines.default_synthetic_flags, description=(
        "Server flags that simulate an acceptance length (Check 11)."))
    synthetic_acceptance_json_keys: list[str] = Field(default_factory=engines.default_synthetic_json_keys, description=(
        "Keys inside --speculative-config JSON that simulate an acceptance length (Check 11)."))
    golden_al_tolerance: float = Field(0.005, description="Two acceptance lengths closer than this are equal (Check 11).")
    image_exception_hardware: list[str] = Field(["mi455x", "vr200", "rubin", "ualoe72", "nvl72"], description=(
        "Hardware for which a reviewer may invoke the documented exception to the upstream-image rule (Check 6)."))
    eval_default_min_score: float = Field(0.85, description="The eval score bar when the thresholds file names none (Check 2).")
    pareto_min_frontier: int = Field(5, description="The fewest points a Pareto frontier must have (Check 14).")
    pareto_escalation: list[str] = Field([], description=(
        "Handles (@user or @org/team) the verdict mentions when Check 14 warns. Empty: nobody is mentioned."))
    pareto_agentic_percentile: AgenticPercentile = Field("p90", description=(
        "The E2EL percentile AgentX curves are judged at (fixed-sequence curves always use p50; Check 14)."))
    pareto_bypass_phrase: str = Field("pareto bypass", description=(
        "The phrase of an admin comment, with the assessed SHA, that records a Check 14 bypass."))
    claims_al_tolerance: float = Field(0.005, description=(
        "Two acceptance lengths closer than this are the same claim (Check 15)."))
    upstream_recipe_repos: list[str] = Field(default_factory=engines.default_recipe_repos, description=(
        "Repositories of upstream serving recipes (Check 3)."))
    upstream_recipe_sites: list[str] = Field(default_factory=engines.default_recipe_sites, description=(
        "Web sites of upstream serving recipes (Check 3)."))
    upstream_recipe_family_sources: dict[str, list[str]] = Field(default_factory=engines.default_recipe_sources,
                                                                 description=(
        "Framework family -> the upstream repositories and sites that document it (Check 3)."))
    upstream_recipe_args: list[str] = Field([
        "quantization", "kv-cache-dtype", "enable-dp-attention", "enable-expert-parallel", "*-backend",
    ], description=(
        "Engine flags (fnmatch patterns, _ and - equal) a config must share with the upstream recipe, besides "
        "model, SKU and parallelism (Check 3)."))
    upstream_recipe_env: list[str] = Field(["*_USE_AITER", "VLLM_ATTENTION_BACKEND", "SGLANG_ATTENTION_BACKEND"],
                                           description=(
        "Server environment variables that select kernel backends, compared like flags (Check 3)."))
    upstream_recipe_harness_knobs: list[str] = Field([
        "chunked-prefill-size", "scheduler-recv-interval", "max-running-requests", "max-num-seqs",
        "cuda-graph-max-bs", "port", "host", "SGLANG_RADIX_FORCE_MISS",
    ], description="Harness tuning knobs never compared against the upstream recipe (Check 3).")
    upstream_recipe_match_sku: bool = Field(True, description="Whether the upstream recipe must name the config's SKU (Check 3).")
    image_exception_phrases: list[str] = Field([
        "new architecture", "new model architecture", "cannot serve", "cannot yet serve",
        "not supported upstream", "unsupported upstream", "upstream cannot support",
    ], description=(
        "Words in an Additional detail line that claim the \"upstream cannot serve this architecture\" "
        "exception to the upstream-image rule (Check 6)."))
    engine_display_names: dict[str, str] = Field(default_factory=engines.default_display_names, description=(
        "How verdict rows name an engine or framework; names not listed and of no known engine are upper-cased."))
    append_only_inert_globs: list[str] = Field(["*.md"], description=(
        "Changed files (fnmatch patterns) that cannot alter any benchmark point (Check 12)."))
    signoff_phrase: str = Field("As a PR reviewer and CODEOWNER", description="The phrase that makes a comment a sign-off.")
    status_context: str = Field("codeowner-signoff-verify", min_length=1, max_length=STATUS_CONTEXT_MAX, description=(
        "The commit status the bot sets (make it a required check); at most 255 characters."))


class RepoConfig(Model):
    """The whole repository configuration."""

    model_config = ConfigDict(extra="forbid")

    paths: Paths = Field(default_factory=Paths, description="Where the benchmark repository keeps each kind of file.")
    policy: Policy = Field(default_factory=Policy, description=(
        "The policy: what each check enforces, and whose comments count as sign-offs and commands."))
    sweep: SweepPolicy = Field(default_factory=SweepPolicy, description=(
        "Sweeps: the workflow and labels that run benchmarks, and how the bot starts one."))


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


def load_config_file(path: str | Path) -> tuple[bytes, list[Finding]]:
    """A configuration file the user names (`config-schema --check FILE`, `check --config FILE`):
    its bytes and its problems, each naming the file and line. OSError when it cannot be read."""
    data = Path(path).read_bytes()
    return data, load_repo_config(data, str(path))[1]


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
