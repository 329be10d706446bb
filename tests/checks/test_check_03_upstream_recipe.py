"""Check 3 helpers: which links count, and how a flag and its value are found in upstream text."""
from __future__ import annotations

import pytest

from checks.check_03_upstream_recipe import MAX_UPSTREAM_PULLS, Link, _flag_pattern, find_links, requirements, resolve_all
from checks.snapshot import UpstreamRef
from tests.builders import build_snapshot
from recipes.config import RepoConfig
from recipes.effective import EffectiveConfig, Origin
from recipes.master import MasterEntry

POLICY = RepoConfig().policy


def test_find_links_keeps_only_allowed_upstream_sources_by_family():
    detail = "\n".join([
        "- vLLM: [recipes#131](https://github.com/vllm-project/recipes/pull/131/files).",
        "- SGLang cookbook https://github.com/sgl-project/sglang/pull/24810, merged.",
        "- page: https://docs.sglang.io/cookbook/autoregressive/DeepSeek/DeepSeek-R1;",
        "- reference only: https://github.com/ROCm/ATOM/pull/12 and https://github.com/vllm-project/vllm/pull/9",
        "- https://recipes.vllm.ai/DeepSeek/DeepSeek-R1",
    ])
    links = find_links(detail, POLICY)
    assert [(l.family, l.label) for l in links] == [
        ("vllm", "vllm-project/recipes#131"),
        ("sglang", "sgl-project/sglang#24810"),
        ("sglang", "https://docs.sglang.io/cookbook/autoregressive/DeepSeek/DeepSeek-R1"),
        ("vllm", "https://recipes.vllm.ai/DeepSeek/DeepSeek-R1"),
    ]
    assert links[0].url == "https://github.com/vllm-project/recipes/pull/131"


def test_find_links_ignores_a_site_dropped_from_policy():
    policy = POLICY.model_copy(update={"upstream_recipe_sites": ["recipes.vllm.ai"]})
    assert find_links("https://docs.sglang.io/cookbook/x", policy) == []


@pytest.mark.parametrize("text, found", [
    ("--tp 8", True),
    ("--tp-size=8", True),
    ("--tensor-parallel-size 8", True),
    ("tensor_parallel_size: 8", True),
    ('"tensor_parallel_size": 8', True),
    ("--tp 80", False),
    ("--tp 4", False),
    ("--ep 8", False),
    ("TP8 on MI355X", False),
])
def test_parallel_flag_spellings(text, found):
    pattern = _flag_pattern(("tensor-parallel-size", "tp", "tp-size"), 8)
    assert bool(pattern.search(text)) is found


def test_values_must_match_whole_tokens():
    pattern = _flag_pattern(["kv-cache-dtype"], "fp8")
    assert pattern.search("--kv-cache-dtype fp8 --block-size 1")
    assert not pattern.search("--kv-cache-dtype fp8_e4m3")
    assert not pattern.search("--kv-cache-dtype bf16")


def test_switch_flags_match_presence_not_false():
    pattern = _flag_pattern(["enable-dp-attention"], True)
    assert pattern.search("python -m sglang.launch_server --enable-dp-attention --tp 8")
    assert pattern.search("enable_dp_attention: true")
    assert not pattern.search("enable-dp-attention: false")
    assert not pattern.search("--enable-dp-attention-local")


def _origin(value, line=10):
    return Origin(value=value, path="r.yaml", line=line)


def test_requirements_cover_production_args_and_skip_harness_knobs():
    eff = EffectiveConfig(
        point_id="p",
        model=_origin("hf:org/Model"),
        tp=_origin(8),
        args={
            "tensor-parallel-size": _origin(8),
            "expert-parallel-size": _origin(1),
            "attention-backend": _origin("aiter"),
            "kv-cache-dtype": _origin("fp8_e4m3"),
            "enable-dp-attention": _origin(False),
            "chunked-prefill-size": _origin(16384),
            "mem-fraction-static": _origin(0.85),
        },
        env={"SGLANG_USE_AITER": _origin("1"), "SGLANG_RADIX_FORCE_MISS": _origin("1")},
    )
    labels = [r.label for r in requirements(eff, MasterEntry(key="k", runner="cluster:mi355x-amds"), POLICY)]
    assert labels == [
        "model org/Model", "SKU mi355x", "TP 8 (tensor-parallel-size)",
        "--attention-backend aiter", "--kv-cache-dtype fp8_e4m3", "SGLANG_USE_AITER=1",
    ]


def test_resolve_by_repo_and_number_when_the_url_differs():
    ref = UpstreamRef(url="https://github.com/SGL-Project/sglang/pull/5", repo="SGL-Project/sglang", number=5, merged=True)
    link = Link(url="https://github.com/sgl-project/sglang/pull/5", family="sglang", repo="sgl-project/sglang", number=5)
    other = Link(url="https://github.com/sgl-project/sglang/pull/6", family="sglang", repo="sgl-project/sglang", number=6)
    snapshot = build_snapshot(upstream=[ref.model_dump()])
    assert resolve_all([link, other], snapshot) == {link.url: ref, other.url: None}


def test_resolve_asks_at_most_the_cap_of_pull_requests():
    asked = []

    class Counting:
        def upstream_ref(self, url, repo=None, number=None):
            asked.append(url)
            return None

        def ask_together(self, questions):
            for q in questions:
                q()

    links = [Link(url=f"https://github.com/sgl-project/sglang/pull/{n}", family="sglang", repo="sgl-project/sglang",
                  number=n) for n in range(1, MAX_UPSTREAM_PULLS + 3)]
    page = Link(url="https://docs.sglang.io/x", family="sglang")
    resolved = resolve_all(links + [page], Counting())
    asked = list(dict.fromkeys(asked))
    assert len(asked) == MAX_UPSTREAM_PULLS + 1 and asked[-1] == page.url
    assert resolved[links[-1].url] is None
