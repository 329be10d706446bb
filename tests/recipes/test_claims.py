"""recipes.claims: what the extractor reads out of real-looking PR bodies."""
from __future__ import annotations

import pytest

from recipes.claims import (
    KIND_AL,
    KIND_COUNT,
    KIND_FLAG,
    KIND_IMAGE,
    KIND_NO_CHANGE,
    KIND_POINTS,
    KIND_PRECISION,
    KIND_RANGE,
    KIND_SETTING,
    extract_claims,
    extract_precision_claims,
    head_claims,
    normalize_value,
    same_component,
    values_equal,
)
from tests.conftest import SHARED

SEED_THREAD = SHARED / "seed" / "pr-thread-dsv41flash-atom.txt"


def _of(claims, kind):
    return [c for c in claims if c.kind == kind]


def test_empty_and_prose_bodies_have_no_claims():
    assert extract_claims("") == []
    assert extract_claims(None) == []
    assert extract_claims("Restore the ATOM arm. See docs/ci-procedures.md and ROCm/ATOM#2419.") == []


def test_arrow_and_from_to_mark_the_old_side():
    body = (
        "- Image rocm/atom-dev:nightly_202609250902 → rocm/atom-dev:nightly_202610070333.\n"
        "- Moved from lmsysorg/sglang:v0.5.11 to lmsysorg/sglang:v0.5.12 and vllm/vllm-openai:v1 -> vllm/vllm-openai:v2\n"
    )
    images = _of(extract_claims(body), KIND_IMAGE)
    old = {c.image for c in images if c.before}
    new = {c.image for c in head_claims(images)}
    assert old == {"rocm/atom-dev:nightly_202609250902", "lmsysorg/sglang:v0.5.11", "vllm/vllm-openai:v1"}
    assert new == {"rocm/atom-dev:nightly_202610070333", "lmsysorg/sglang:v0.5.12", "vllm/vllm-openai:v2"}


def test_images_exclude_paths_urls_and_selectors():
    body = (
        "Recipe benchmarks/x/agentic.yaml:override_tp2_c1, link https://github.com/a/b:c, "
        "hf:deepseek-ai/DeepSeek-V4.1-Flash, nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24, "
        "frontend rocm/atom-dev@sha256:" + "f" * 64
    )
    images = {c.image for c in _of(extract_claims(body), KIND_IMAGE)}
    assert images == {"nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24", "rocm/atom-dev@sha256:" + "f" * 64}


def test_a_digest_after_an_image_pins_it():
    body = "Pin: rocm/atom-dev:nightly_202610070333, digest sha256:" + "2f" * 32 + ", ATOM 0.1.7."
    (claim,) = _of(extract_claims(body), KIND_IMAGE)
    assert claim.image == "rocm/atom-dev:nightly_202610070333@sha256:" + "2f" * 32
    assert claim.text == "rocm/atom-dev:nightly_202610070333"


def test_points_ranges_and_scoped_settings():
    body = (
        "- Points: TP2 [1, 2, 4, 5], TP4 [1, 4] (drops 2).\n"
        "- Add `dsr1-fp4-mi355x-vllm`: TP8 at concurrency 4-64.\n"
        "- Two points set ATOM_PREFILL_DECODE_INTERVAL: TP4 c32 = 16, TP2 c64 = 4.\n"
        "- TP4 c32 sets ATOM_PREFILL_DECODE_INTERVAL=16.\n"
    )
    claims = extract_claims(body)
    assert [(c.tp, c.concs) for c in _of(claims, KIND_POINTS)] == [(2, (1, 2, 4, 5)), (4, (1, 4))]
    (rng,) = _of(claims, KIND_RANGE)
    assert (rng.tp, rng.conc_range, rng.line) == (8, (4, 64), 2)
    assert "dsr1-fp4-mi355x-vllm" in rng.context
    settings = [(c.name, c.tp, c.conc, c.value) for c in _of(claims, KIND_SETTING)]
    assert settings == [
        ("ATOM_PREFILL_DECODE_INTERVAL", 4, 32, "16"),
        ("ATOM_PREFILL_DECODE_INTERVAL", 2, 64, "4"),
        ("ATOM_PREFILL_DECODE_INTERVAL", 4, 32, "16"),
    ]


def test_flags_settings_and_al_values():
    body = (
        "Server: `--kv_cache_dtype bf16`, `--index-cache-dtype fp4` (FP8 before), --max-num-seqs=128; "
        "no `--online_quant_config` is passed and --enforce-eager is not set.\n"
        "The recipe passes `--hf-overrides '{\"num_experts_per_tok\": 6}'`. VLLM_ROCM_USE_AITER=1, OMP_NUM_THREADS = 4.\n"
        "Injected: `--spec-decode-acceptance-length 3.51` (golden AL 3.51); acceptance-length 2.5 for K3.\n"
    )
    claims = extract_claims(body)
    flags = {c.name: c.value for c in _of(claims, KIND_FLAG)}
    assert flags == {"kv_cache_dtype": "bf16", "index-cache-dtype": "fp4", "max-num-seqs": "128",
                     "hf-overrides": '{"num_experts_per_tok": 6}'}
    assert {c.name: c.value for c in _of(claims, KIND_SETTING)} == {"VLLM_ROCM_USE_AITER": "1", "OMP_NUM_THREADS": "4"}
    assert sorted(c.value for c in _of(claims, KIND_AL)) == ["2.5", "3.51"]  # one 3.51 per line


def test_code_blocks_count_and_key_value_only_in_code():
    body = "Engine: atom\n\n```yaml\nmax-num-seqs: 256\nkv_cache_dtype: fp8\n```\nprose-key: value outside code\n"
    flags = {c.name: c.value for c in _of(extract_claims(body), KIND_FLAG)}
    assert flags == {"max-num-seqs": "256", "kv_cache_dtype": "fp8"}


def test_bilingual_punctuation_ends_values():
    body = "TP4 c32 设置 ATOM_PREFILL_DECODE_INTERVAL=16。ATOM 默认关闭；--spec-decode-acceptance-length 3.51（thinking_on）"
    claims = extract_claims(body)
    assert [c.value for c in _of(claims, KIND_SETTING)] == ["16"]
    assert [c.value for c in _of(claims, KIND_AL)] == ["3.51"]


def test_normalize_value():
    assert values_equal("'16'", 16)
    assert values_equal("true", True)
    assert values_equal('{"a": 1, "b": 2}', '{"b":2,"a":1}')
    assert values_equal("3.50", "3.5")
    assert not values_equal("8", "4")
    assert normalize_value("BF16") == "bf16"


def test_real_seed_thread_body():
    if not SEED_THREAD.is_file():
        pytest.skip("../shared/seed is not present")
    text = SEED_THREAD.read_text(encoding="utf-8")
    body = text.split("\n[github-actions]\n", 1)[0]  # the PR body ends where the first comment starts
    claims = extract_claims(body)
    heads = head_claims(claims)
    images = {c.image for c in heads if c.kind == KIND_IMAGE}
    assert "rocm/atom-dev:nightly_202610070333" in {i.split("@")[0] for i in images}
    assert "rocm/atom-dev:nightly_202609250902" in {c.image for c in claims if c.kind == KIND_IMAGE and c.before}
    points = {(c.tp, c.concs) for c in heads if c.kind == KIND_POINTS}
    assert points >= {(2, (1, 2, 4, 5, 6, 8, 16, 32, 64, 128)), (4, (1, 4, 5, 6, 8, 32))}
    scoped = {(c.name, c.tp, c.conc, c.value) for c in heads if c.kind == KIND_SETTING and c.tp}
    assert ("ATOM_PREFILL_DECODE_INTERVAL", 4, 32, "16") in scoped
    assert ("ATOM_PREFILL_DECODE_INTERVAL", 2, 64, "4") in scoped
    assert "3.51" in {c.value for c in heads if c.kind == KIND_AL}
    assert {"kv_cache_dtype", "index-cache-dtype"} <= {c.name for c in heads if c.kind == KIND_FLAG}
    # The digest line pins the image it follows.
    assert any(i.endswith("@sha256:2f605a3e8b459a0385f784edb0335c11892277fee650fe42044e4af39e36dd01") for i in images)


# --- precision claims ------------------------------------------------------------------------


def _prec(text: str) -> list[tuple]:
    lines = list(enumerate(text.splitlines(), start=1))
    return [(c.kind, c.line, c.name, c.old, c.value) for c in extract_precision_claims(lines)]


def test_precision_arrow_and_from_to_forms_name_their_component():
    got = _prec("Two compute precisions change: routed-expert activations MXFP4 → MXFP8 and RoPE tables FP32 -> BF16.\n"
                "- KV cache: FP8 -> bf16\n"
                "The one change: `attn.wo_a` goes from BF16 (converted at load) to FP8.\n"
                "So wo_a goes from a BF16 GEMM to an FP8 GEMM.")
    assert (KIND_COUNT, 1, "precisions", None, "2") in got
    assert (KIND_PRECISION, 1, "routed-expert activations", "MXFP4", "MXFP8") in got
    assert (KIND_PRECISION, 1, "RoPE tables", "FP32", "BF16") in got
    assert (KIND_PRECISION, 2, "KV cache", "FP8", "BF16") in got
    assert (KIND_PRECISION, 3, "attn.wo_a", "BF16", "FP8") in got
    assert (KIND_PRECISION, 4, "wo_a", "BF16", "FP8") in got


def test_an_image_bump_or_a_before_note_is_not_a_precision_claim():
    assert _prec("Image rocm/atom-dev:nightly_0925 → rocm/atom-dev:nightly_1007.\n"
                 "`--index-cache-dtype fp4` (FP8 before), --kv_cache_dtype bf16.") == []


def test_a_quoted_denial_is_someone_elses_text():
    got = _prec('The changelog still says "no data-type or precision change to the DSpark draft".\n'
                "No data-type or precision change to the DSpark draft.")
    assert got == [(KIND_NO_CHANGE, 2, "to the DSpark draft", None, None)]


def test_table_rows_read_old_and_new_columns_and_the_changed_column():
    got = _prec("| Weight | Old pin | New pin | Changed? |\n"
                "| --- | --- | --- | --- |\n"
                "| attn.wq_b | FP8 + E8M0 | Same dtype, preshuffled | Layout only |\n"
                "| attn.wo_a | BF16, converted at load | FP8 + E8M0 | Dtype changes |\n"
                "│ routed experts │ MXFP4 (fp4x2) │ MXFP4, FP8 activations │ Layout only │\n"
                "| norms | Unchanged | Unchanged | No |")
    assert got == [(KIND_PRECISION, 3, "attn.wq_b", "FP8", "FP8"),
                   (KIND_PRECISION, 4, "attn.wo_a", "BF16", "FP8"),
                   (KIND_PRECISION, 5, "routed experts", "MXFP4", "MXFP4")]


def test_components_match_across_spellings_but_not_across_kinds():
    assert same_component("wo_a", "attn.wo_a")
    assert same_component("RoPE tables", "RoPE cos/sin tables")
    assert not same_component("routed-expert activations", "ffn.experts.w13_weight (routed experts)")
    assert not same_component("KV cache", "index cache")


def test_the_real_sign_off_records_attn_wo_a_in_prose_and_in_its_box_drawn_table():
    if not SEED_THREAD.exists():
        pytest.skip("shared seed thread not present")
    text = SEED_THREAD.read_text(encoding="utf-8")
    start = text.index("Additional detail section:")
    section = text[start:text.index("Signed: seungrokj", start)]
    got = _prec(section)
    changes = {(name, old, new) for kind, _, name, old, new in got if kind == KIND_PRECISION and old != new}
    assert changes == {("wo_a", "BF16", "FP8"), ("attn.wo_a", "BF16", "FP8")}
    assert (KIND_COUNT, "weight", "1") in {(k, n, v) for k, _, n, _, v in got if k == KIND_COUNT}
