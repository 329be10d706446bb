"""Repository policy: everything policy-like the checks need, with defaults, overridable by
an optional `.github/infx-review.yml` in the benchmark repository."""
from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from .errors import Finding
from .yamlio import load_yaml
from .errors import RecipeError

CONFIG_PATH = ".github/infx-review.yml"


class Paths(BaseModel):
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


class SweepPolicy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    workflow: str = ".github/workflows/run-sweep.yml"
    # "label": the sweep workflow starts itself on labels (InferenceX run-sweep.yml);
    # "dispatch": the bot calls workflow_dispatch on `workflow`.
    mode: str = "label"
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


class Policy(BaseModel):
    model_config = ConfigDict(extra="forbid")

    established_skus: list[str] = [
        "h100", "h200", "b200", "b300", "gb200", "gb300", "mi300x", "mi325x", "mi355x",
    ]
    open_source_frameworks: list[str] = [
        "vllm", "sglang", "vllm-disagg", "sglang-disagg", "dynamo-vllm", "dynamo-sglang",
    ]
    vendor_frameworks: list[str] = [
        "trt", "dynamo-trt", "atom", "atom-disagg", "tilert",
    ]
    # Framework family -> Docker Hub orgs its images must come from (Check 6).
    upstream_image_orgs: dict[str, list[str]] = {
        "vllm": ["vllm"],
        "sglang": ["lmsysorg"],
    }
    # Framework -> family, for the image rule and the upstream-recipe rule.
    framework_family: dict[str, str] = {
        "vllm": "vllm", "vllm-disagg": "vllm", "dynamo-vllm": "vllm",
        "sglang": "sglang", "sglang-disagg": "sglang", "dynamo-sglang": "sglang",
        "trt": "trtllm", "dynamo-trt": "trtllm", "atom": "atom", "atom-disagg": "atom",
        "tilert": "tilert",
    }
    authorized_associations: list[str] = ["OWNER", "MEMBER", "COLLABORATOR"]
    bot_logins: list[str] = ["github-actions[bot]", "infx-review[bot]", "Klaud-Cold"]
    core_teams: list[str] = ["@InferenceX/core", "@SemiAnalysisAI/core", "@InferenceMAX/Core"]
    # Knobs that change model architecture (Check 8).
    arch_hack_flags: list[str] = ["hf-overrides", "hf_overrides", "json-model-override-args"]
    # Frameworks whose serving stack has publish_events_and_metrics; others are exempt (Check 8).
    event_publication_frameworks: list[str] = ["trt", "dynamo-trt"]
    event_publication_key: str = "publish_events_and_metrics"
    # Python distributions that make up the serving engine (Check 10).
    engine_packages: list[str] = [
        "vllm", "sglang", "sgl-kernel", "tensorrt-llm", "tensorrt_llm", "atom", "aiter",
        "flashinfer", "flashinfer-python", "torch", "triton", "deep_gemm", "deepep", "mori",
        "tilert",
    ]
    # Draft module name patterns per model prefix, for --online_quant_config coverage (Check 13).
    draft_modules: dict[str, list[str]] = {
        "dsv41flash": ["mtp", "draft", "model.layers.37", "model.layers.38", "model.layers.39"],
        "dsv4": ["mtp", "draft"],
        "kimik3": ["draft", "dspark"],
        "glm5.2": ["mtp", "nextn"],
        "qwen3.5": ["mtp"],
    }
    prohibited_env: list[str] = ["SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE"]
    draft_lowering_env: list[str] = ["SGLANG_GLM_NEXTN_MOE_PTPC"]
    # Documented exceptions to Check 6 that a reviewer may invoke in the Additional detail section.
    image_exception_hardware: list[str] = ["mi455x", "vr200", "rubin", "ualoe72", "nvl72"]
    eval_default_min_score: float = 0.85
    pareto_min_frontier: int = 5
    pareto_escalation: list[str] = ["@functionstackx", "@cquil11", "@Oseltamivir", "@adibarra"]
    upstream_recipe_repos: list[str] = ["vllm-project/recipes", "sgl-project/sglang"]
    upstream_recipe_sites: list[str] = ["recipes.vllm.ai", "docs.sglang.io/cookbook", "docs.sglang.ai/cookbook"]
    signoff_phrase: str = "As a PR reviewer and CODEOWNER"
    status_context: str = "codeowner-signoff-verify"


class RepoConfig(BaseModel):
    """The whole repository configuration."""

    model_config = ConfigDict(extra="forbid")

    paths: Paths = Field(default_factory=Paths)
    policy: Policy = Field(default_factory=Policy)
    sweep: SweepPolicy = Field(default_factory=SweepPolicy)


def load_repo_config(data: bytes | None, path: str = CONFIG_PATH) -> tuple[RepoConfig, list[Finding]]:
    """Defaults merged with the repository's file. A bad file is a finding; defaults still apply."""
    if data is None:
        return RepoConfig(), []
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
        return RepoConfig(), findings
