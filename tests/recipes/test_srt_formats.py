"""Both srt-slurm recipe formats read into one serving view (spec 3.4).

Schema 2 writes `roles.<role>.{args,env}`; the older multi-node format writes
`backend.<engine>_config.{aggregated,prefill,decode}` and `backend.<role>_environment`. The
fixtures are small hand-written recipes shaped like the real ones.
"""
from __future__ import annotations

from recipes.srt import keypath_kind, parse_recipe

LEGACY_DISAGG = """\
name: "disagg-b200-1p1d-tp8-tp8-mtp"
model:
  path: "deepseek-v4-pro"
  container: "lmsysorg/sglang:nightly-dev-cu13"
  precision: "fp4"
resources:
  gpu_type: "b200"
  gpus_per_node: 8
  prefill_nodes: 1
  gpus_per_prefill: 8
  decode_nodes: 1
  gpus_per_decode: 8
backend:
  type: sglang
  prefill_environment:
    SGLANG_RADIX_FORCE_MISS: "1"
  decode_environment:
    SGLANG_DEFAULT_THINKING: "1"
    SGLANG_SIMULATE_ACC_LEN: "2.49"
  sglang_config:
    prefill:
      tensor-parallel-size: 8
      disaggregation-mode: "prefill"
    decode:
      tensor-parallel-size: 8
      disaggregation-mode: "decode"
      speculative-algo: "EAGLE"
      speculative-num-steps: 3
benchmark:
  type: "sa-bench"
  isl: 8192
  osl: 1024
  concurrencies: "1"
"""

LEGACY_AGG_TRT = """\
name: agg-gb300-tp4-mtp
model: {path: "dsr1", container: "dynamo-trt", precision: "fp4"}
resources: {gpu_type: gb300, gpus_per_node: 4, agg_nodes: 1, agg_workers: 1, gpus_per_agg: 4}
backend:
  type: trtllm
  publish_events_and_metrics: true
  aggregated_environment:
    TRTLLM_ENABLE_PDL: "1"
  trtllm_config:
    aggregated:
      tensor_parallel_size: 4
      speculative_config:
        decoding_type: MTP
        num_nextn_predict_layers: 3
        max_draft_len: 3
benchmark:
  type: sa-bench
  use_chat_template: false
"""

SCHEMA2 = """\
schema: 2
name: sg
engine: sglang
roles:
  agg:
    gpus: 4
    args: {tensor-parallel-size: 4, speculative-algorithm: DSPARK, speculative-dspark-block-size: 5}
    env: {SGLANG_USE_AITER: '1'}
benchmark:
  type: custom
  env: {USE_CHAT_TEMPLATE: 'true'}
"""


def _only(text: str, path: str = "r.yaml"):
    recipe = parse_recipe(text, path)
    assert not recipe.findings
    (v,) = recipe.variants
    return v


def test_legacy_disagg_roles_args_env_and_spec_decode():
    v = _only(LEGACY_DISAGG)
    assert v.legacy
    assert v.engine == "sglang"
    assert v.roles == ["prefill", "decode"]
    assert v.generation_role == "decode"
    assert v.args("decode")["speculative-num-steps"] == 3
    assert v.env("decode") == {"SGLANG_DEFAULT_THINKING": "1", "SGLANG_SIMULATE_ACC_LEN": "2.49"}
    assert v.env("prefill") == {"SGLANG_RADIX_FORCE_MISS": "1"}
    assert v.gpus("decode") == 8
    assert v.tp("decode") == 8
    spec = v.spec_decode()
    assert (spec.method, spec.draft_length) == ("eagle", 3)
    # The line of the speculative flag, in the file as written.
    assert spec.line == LEGACY_DISAGG.splitlines().index('      speculative-algo: "EAGLE"') + 1
    assert v.role_path("decode", "env") == ("backend", "decode_environment")
    assert v.line_of(*v.role_path("decode", "env"), "SGLANG_SIMULATE_ACC_LEN") == \
        LEGACY_DISAGG.splitlines().index('    SGLANG_SIMULATE_ACC_LEN: "2.49"') + 1


def test_legacy_sa_bench_chat_template_defaults_to_true():
    v = _only(LEGACY_DISAGG)
    value, kp, written = v.chat_template()
    assert value is True and written is False and kp == ("benchmark", "type")


def test_legacy_aggregated_trtllm_and_explicit_chat_template_false():
    v = _only(LEGACY_AGG_TRT)
    assert v.legacy and v.engine == "trtllm"
    assert v.roles == ["agg"]
    assert v.gpus() == 4 and v.tp() == 4
    assert v.env()["TRTLLM_ENABLE_PDL"] == "1"
    spec = v.spec_decode()
    assert (spec.method, spec.draft_length) == ("mtp", 3)
    assert v.chat_template()[:3] == (False, ("benchmark", "use_chat_template"), True)


def test_legacy_engine_from_config_block_when_type_is_absent():
    text = LEGACY_DISAGG.replace("  type: sglang\n", "")
    v = _only(text)
    assert v.engine == "sglang" and v.args("decode")["tensor-parallel-size"] == 8


def test_schema2_reads_as_before():
    v = _only(SCHEMA2)
    assert not v.legacy
    assert v.roles == ["agg"] and v.args()["tensor-parallel-size"] == 4
    assert v.spec_decode().method == "dspark"
    assert v.chat_template()[:3] == ("true", ("benchmark", "env", "USE_CHAT_TEMPLATE"), True)


def test_keypath_kind_in_both_formats():
    assert keypath_kind(("roles", "agg", "args", "x")) == "arg"
    assert keypath_kind(("roles", "decode", "env", "X")) == "env"
    assert keypath_kind(("backend", "sglang_config", "decode", "x")) == "arg"
    assert keypath_kind(("backend", "trtllm_config", "aggregated", "speculative_config", "max_draft_len")) == "arg"
    assert keypath_kind(("backend", "decode_environment", "X")) == "env"
    assert keypath_kind(("backend", "aggregated_environment", "X")) == "env"
    assert keypath_kind(("backend", "kv_events_config", "decode", "x")) == "recipe"
    assert keypath_kind(("backend", "publish_events_and_metrics")) == "recipe"
    assert keypath_kind(("benchmark", "env", "CONC")) == "client-env"


def test_legacy_format_inside_a_bundle_merges_per_override():
    text = """\
base:
  name: mn
  backend:
    type: vllm
    decode_environment: {A: '1'}
    vllm_config:
      decode: {tensor-parallel-size: 8}
  resources: {gpus_per_decode: 8}
  benchmark: {type: sa-bench}
override_mtp:
  backend:
    vllm_config:
      decode:
        speculative-config: '{"method": "mtp", "num_speculative_tokens": 2}'
"""
    recipe = parse_recipe(text, "b.yaml")
    v = recipe.variant("override_mtp")
    assert v.legacy and v.roles == ["decode"]
    assert v.args("decode")["tensor-parallel-size"] == 8
    assert (v.spec_decode().method, v.spec_decode().draft_length) == ("mtp", 2)
    assert v.spec_decode().line == 14


ATOM_DCP = """\
schema: 2
name: kimik3-fp4-mi355x-atom-agentic
model: {path: hf:moonshotai/Kimi-K3, container: rocm/atom-dev:1, precision: fp4}
engine: atom
roles:
  agg:
    nodes: 1
    workers: 1
    gpus: 8
    args: {decode-context-parallel-size: 8, method: dspark, num-speculative-tokens: 3}
benchmark:
  type: custom
  command: bash /infmax-workspace/benchmarks/srt_agentic.sh
  env: {CONC: '14', KV_OFFLOADING: dram}
"""


def _atom_point(**over):
    from recipes.points import BenchmarkPoint

    fields = dict(config_key="kimik3-fp4-mi355x-atom-agentic-mtp", scenario="agentic-coding", tp=8, conc=14,
                  spec_decoding="mtp", framework="atom", precision="fp4", model="moonshotai/Kimi-K3",
                  image="rocm/atom-dev:1", kv_offloading="dram")
    fields.update(over)
    return BenchmarkPoint(**fields)


def test_atom_decode_context_parallel_binds_like_vllm():
    """ATOM spells DCP `decode-context-parallel-size` like vLLM: a DCP 8 point binds the DCP 8
    variant, and a DCP 1 point does not."""
    from recipes.binding import mismatches

    (v,) = parse_recipe(ATOM_DCP, "a.yaml").variants
    assert mismatches(v, _atom_point(dcp_size=8)) == []
    assert "DCP 1 != 8" in mismatches(v, _atom_point(dcp_size=1))


def test_sglang_ignores_a_dcp_flag_it_does_not_have():
    from recipes.binding import mismatches

    text = SCHEMA2.replace("tensor-parallel-size: 4,", "tensor-parallel-size: 4, decode-context-parallel-size: 4,")
    (v,) = parse_recipe(text, "s.yaml").variants
    assert not any(w.startswith("DCP") for w in mismatches(v, _atom_point(framework="sglang", dcp_size=1)))
