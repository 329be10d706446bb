"""Check 6 and 7 helpers: image orgs and recipe paths read as model/scenario/precision."""
from __future__ import annotations

import pytest

from checks.check_06_upstream_images_ordering import image_org
from checks.check_07_deprecated_models import recipe_unit


@pytest.mark.parametrize("image, org", [
    ("vllm/vllm-openai-rocm:nightly-rocm100-ac9126e5", "vllm"),
    ("docker.io/lmsysorg/sglang:v0.5.19-cu130", "lmsysorg"),
    ("lmsysorg/sglang:nightly@sha256:35ea", "lmsysorg"),
    ("rocm/vllm-dev:nightly_20261112", "rocm"),
    ("nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24", None),
    ("ghcr.io/org/sglang:1", None),
    ("ubuntu:24.04", None),
])
def test_image_org(image, org):
    assert image_org(image) == org


@pytest.mark.parametrize("path, unit", [
    ("inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom/mi355x-fp4-mtp/agentic.yaml",
     ("dsv41flash", "agentic-coding", "fp4")),
    ("inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsr1/vllm/mi355x-fp4/8k1k.yaml", ("dsr1", "8k1k", "fp4")),
    ("inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/dsv4/atom/mi355x-fp4/agentx/disagg-lmcache.yaml",
     ("dsv4", "agentic-coding", "fp4")),
    ("inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/qwen3.5/sglang/mi355x-fp8/8k1k/disagg-1p1d.yaml",
     ("qwen3.5", "8k1k", "fp8")),
    ("inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsr1/vllm/mi355x-fp4/moe-topk-fix.sh", None),
    ("inferencex-e2e/docs/MODELS.md", None),
])
def test_recipe_unit(path, unit):
    assert recipe_unit(path) == unit
