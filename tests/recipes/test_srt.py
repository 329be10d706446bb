"""srt-slurm recipes: merge semantics, zip expansion, selectors, per-engine readings (spec 3)."""
from __future__ import annotations

import pytest

from recipes.srt import deep_merge, parse_recipe, zip_length, zip_slice

BUNDLE = """\
schema: 2
base:
  name: demo
  model: {path: hf:org/m, container: img:1, precision: fp4}
  engine: atom
  roles:
    agg:
      gpus: 2
      args:
        sizes: [1, 2, 4]
        keep: 1
        drop: x
      env: {A: '1'}
  benchmark:
    env: {MODEL: org/m}
override_b:
  roles:
    agg:
      args:
        sizes: [8]
        drop: null
  benchmark:
    env: {CONC: '8'}
override_a:
  name: custom-name
  roles: {agg: {gpus: 4}}
zip_override_z:
  roles:
    agg:
      args:
        mode: [fast]
        bs: [1, 2, 3]
  benchmark:
    env:
      CONC: ['1', '2', '3']
"""


def test_deep_merge_mappings_merge_lists_replace_null_deletes():
    base = {"a": {"x": 1, "y": [1, 2]}, "b": 2, "c": 3}
    out = deep_merge(base, {"a": {"y": [9], "z": 0}, "c": None})
    assert out == {"a": {"x": 1, "y": [9], "z": 0}, "b": 2}
    assert base == {"a": {"x": 1, "y": [1, 2]}, "b": 2, "c": 3}  # input untouched


def test_bundle_variants_order_names_and_merge():
    r = parse_recipe(BUNDLE, "r.yaml")
    assert r.findings == []
    assert [v.selector for v in r.select(None)] == [
        "override_a", "override_b", "zip_override_z[0]", "zip_override_z[1]", "zip_override_z[2]",
    ]
    a = r.variant("override_a")
    assert a.name == "custom-name" and a.gpus() == 4 and a.tp() == 4
    b = r.variant("override_b")
    assert b.name == "demo_b"
    assert b.args()["sizes"] == [8]
    assert "drop" not in b.args() and b.args()["keep"] == 1
    assert b.conc == "8" and b.benchmark_env["MODEL"] == "org/m"
    assert b.data["schema"] == 2  # top-level schema is inherited


def test_origins_point_at_the_block_that_wrote_the_value():
    r = parse_recipe(BUNDLE, "r.yaml")
    b = r.variant("override_b")
    assert b.line_of("roles", "agg", "args", "sizes") == 20
    assert b.line_of("roles", "agg", "args", "keep") == 11
    assert b.line_of("model", "container") == 4
    assert b.line_of("benchmark", "env", "CONC") == 23
    z1 = r.variant("zip_override_z[1]")
    assert z1.line_of("roles", "agg", "args", "bs") == 32  # the list line (flow style)


def test_zip_broadcast_and_names():
    r = parse_recipe(BUNDLE, "r.yaml")
    zs = r.select("zip_override_z")
    assert [z.name for z in zs] == ["demo_z_0", "demo_z_1", "demo_z_2"]
    assert [z.args()["bs"] for z in zs] == [1, 2, 3]
    assert [z.args()["mode"] for z in zs] == ["fast"] * 3
    assert [z.conc for z in zs] == ["1", "2", "3"]


def test_zip_name_list_names_each_variant():
    r = parse_recipe("base: {name: b}\nzip_override_g:\n  name: [one, two]\n  x: [1, 2]\n", "n.yaml")
    assert [v.name for v in r.select(None)] == ["one", "two"]


def test_incompatible_zip_lengths_is_a_finding_and_other_variants_survive():
    text = "base: {name: b}\noverride_ok: {x: 1}\nzip_override_bad:\n  x: [1, 2]\n  y: [1, 2, 3]\n"
    r = parse_recipe(text, "bad.yaml")
    assert [v.selector for v in r.select(None)] == ["override_ok"]
    (f,) = r.findings
    assert "Incompatible zip lengths" in f.message and f.line == 3 and f.path == "bad.yaml"


def test_zip_helpers():
    assert zip_length({"a": [1], "b": {"c": [1, 2]}}) == 2
    assert zip_slice({"a": [1], "b": {"c": [1, 2]}}, 1) == {"a": 1, "b": {"c": 2}}
    with pytest.raises(ValueError, match="empty list"):
        zip_length({"a": []})


ZIP_NULLS = """\
base:
  name: n
  model: {path: hf:org/m}
  roles:
    agg:
      args: {keep: 1, gone: null}
      env: {A: '1'}
zip_override_z:
  roles:
    agg:
      env: [{A: '2', B: null}, {A: '3'}]
      args:
        bs: [1, 2]
      labels: [{team: a, drop: null}]  # a new key: merged whole, its null kept until dropped
"""


def test_zip_variants_hold_no_null_from_the_base_or_the_slice_and_never_edit_the_base():
    r = parse_recipe(ZIP_NULLS, "z.yaml")
    base, z0, z1 = r.variants
    assert base.data["roles"]["agg"]["args"] == {"keep": 1, "gone": None}  # the base variant keeps it
    assert z0.data["roles"]["agg"] == {"args": {"keep": 1, "bs": 1}, "env": {"A": "2"}, "labels": {"team": "a"}}
    assert z1.data["roles"]["agg"] == {"args": {"keep": 1, "bs": 2}, "env": {"A": "3"}, "labels": {"team": "a"}}
    only_slice = parse_recipe(ZIP_NULLS.replace(", gone: null", ""), "z.yaml")  # a null in the slice alone
    assert [v.data["roles"]["agg"]["labels"] for v in only_slice.variants[1:]] == [{"team": "a"}] * 2
    # Without a null anywhere, a slice shares the base's untouched mappings (copy on write).
    clean = parse_recipe(ZIP_NULLS.replace(", gone: null", "").replace(", drop: null", ""), "z.yaml")
    cbase, c0, c1 = clean.variants
    assert c0.data["model"] is cbase.data["model"] and c1.data["model"] is cbase.data["model"]
    assert c0.data["roles"]["agg"]["env"] == {"A": "2"} and cbase.data["roles"]["agg"]["env"] == {"A": "1"}
    # What a slice brings is copied: a one-element list gives every slice the same element, yet
    # no two variants share it.
    assert c0.data["roles"]["agg"]["labels"] == c1.data["roles"]["agg"]["labels"] == {"team": "a"}
    assert c0.data["roles"]["agg"]["labels"] is not c1.data["roles"]["agg"]["labels"]


def test_selectors_base_and_unknown():
    r = parse_recipe(BUNDLE, "r.yaml")
    assert [v.selector for v in r.select("base")] == ["base"]
    assert r.select("override_nope") == []
    assert r.variant("zip_override_z[2]").conc == "3"


def test_plain_recipe_is_one_variant():
    r = parse_recipe("name: flat\nengine: sglang\nroles:\n  agg:\n    args: {tensor-parallel-size: 4}\n", "p.yaml")
    assert not r.is_bundle
    (v,) = r.select(None)
    assert v.selector is None and v.name == "flat" and v.tp() == 4
    assert v.line_of("roles", "agg", "args", "tensor-parallel-size") == 5


def test_malformed_recipe_is_a_finding_not_a_crash():
    r = parse_recipe("base: [1, 2\n", "broken.yaml")
    assert r.variants == [] and r.findings[0].path == "broken.yaml" and r.findings[0].line


@pytest.mark.parametrize("engine,args,gpus,tp,method,k", [
    ("atom", {"method": "dspark", "num-speculative-tokens": 5}, 4, 4, "dspark", 5),
    ({"type": "vllm"}, {"tensor-parallel-size": 1, "data-parallel-size": 2,
                        "speculative-config": '{"method":"dspark","num_speculative_tokens":5}'}, 2, 2, "dspark", 5),
    ("sglang", {"tensor-parallel-size": 8, "speculative-algorithm": "DSPARK", "speculative-dspark-block-size": 5}, 8, 8, "dspark", 5),
    ("sglang", {"tensor-parallel-size": 8, "speculative-algorithm": "EAGLE", "speculative-num-steps": 3}, 8, 8, "eagle", 3),
    ("trtllm", {"tensor_parallel_size": 4, "speculative_config": {"decoding_type": "MTP", "max_draft_len": 3}}, 4, 4, "mtp", 3),
    ("sglang", {"tensor-parallel-size": 2}, 2, 2, None, None),
])
def test_engine_readings(engine, args, gpus, tp, method, k):
    import yaml

    data = {"name": "x", "engine": engine, "roles": {"agg": {"gpus": gpus, "args": args}}}
    (v,) = parse_recipe(yaml.safe_dump(data), "e.yaml").variants
    assert v.tp() == tp
    spec = v.spec_decode()
    assert (spec.method, spec.draft_length) == (method, k)
    assert v.speculates == (method is not None)


def test_recipe_wide_environment_overrides_role_env():
    text = "name: e\nengine: atom\nroles: {agg: {env: {A: '1', B: '1'}}}\nenvironment: {B: '2'}\n"
    (v,) = parse_recipe(text, "e.yaml").variants
    assert v.server_env() == {"A": "1", "B": "2"}


def test_real_atom_recipe_override_tp4_c32(inferencex_dir):
    path = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom/mi355x-fp4-mtp/agentic.yaml"
    r = parse_recipe((inferencex_dir / path).read_bytes(), path)
    assert r.findings == []
    v = r.variant("override_tp4_c32")
    base = r.variant("base")
    assert v.gpus() == 4 and v.tp() == 4 and v.conc == "32"
    sizes = v.args()["cudagraph-capture-sizes"]
    assert sizes != base.args()["cudagraph-capture-sizes"]
    assert sizes.startswith("[1,2,3,4,5,6,7,8,9,10,") and sizes.endswith("32,48,64,128]")
    assert v.line_of("roles", "agg", "args", "cudagraph-capture-sizes") == 152
    assert v.line_of("model", "container") == 10
    assert (v.engine, v.spec_decode().method, v.spec_decode().draft_length) == ("atom", "dspark", 5)
    assert len(r.select(None)) == 11


def test_every_real_recipe_parses(inferencex_dir):
    root = inferencex_dir
    files = sorted((root / "inferencex-e2e/benchmarks").rglob("*.yaml"))
    assert len(files) >= 20
    for f in files:
        rel = str(f.relative_to(root))
        r = parse_recipe(f.read_bytes(), rel)
        assert [x for x in r.findings if x.severity == "error"] == [], rel
        assert r.variants, rel


SGLANG_8K1K = """\
name: dsr1-8k1k
engine: sglang
model: {path: hf:deepseek-ai/DeepSeek-R1-0528, container: lmsysorg/sglang:v1, precision: fp8}
roles:
  agg:
    nodes: 1
    workers: 1
    gpus: 8
    args: {tensor-parallel-size: 8, speculative-algorithm: EAGLE, speculative-num-steps: 3}
benchmark:
  type: custom
  command: bash /infmax-workspace/benchmarks/single_node/bench.sh
  env: {MODEL: deepseek-ai/DeepSeek-R1-0528, CONC: '16', USE_CHAT_TEMPLATE: 'true', ISL: '8192', OSL: '1024'}
"""


def _sglang_point(**over):
    from recipes.points import BenchmarkPoint

    fields = dict(config_key="dsr1-fp8-mi355x-sglang-mtp", scenario="fixed-seq-len", isl=8192, osl=1024, tp=8,
                  conc=16, spec_decoding="mtp", framework="sglang", precision="fp8",
                  model="deepseek-ai/DeepSeek-R1-0528", image="lmsysorg/sglang:v1")
    fields.update(over)
    return BenchmarkPoint(**fields)


@pytest.mark.parametrize(
    "edit, point, reason",
    [
        (("nodes: 1", "nodes: 2"), {}, "roles.agg.nodes 2 != 1"),
        (("workers: 1", "workers: 2"), {}, "roles.agg.workers 2 != 1"),
        (("roles:\n", "roles:\n  decode: {gpus: 8}\n"), {}, "roles ['agg', 'decode'] != ['agg']"),
        (("type: custom", "type: sa-bench"), {}, "benchmark.type sa-bench != custom"),
        (("MODEL: deepseek-ai/DeepSeek-R1-0528", "MODEL: other/model"), {}, "benchmark.env.MODEL other/model"),
        (("ISL: '8192'", "ISL: '1024'"), {}, "ISL 1024 != 8192"),
        (("tensor-parallel-size: 8,", "tensor-parallel-size: 8, data-parallel-size: 8,"), {}, "data-parallel-size 8 != 1"),
        ((), {"pp": 2}, "PP 2 != 1"),
        ((), {"dcp_size": 2}, "DCP 2 != 1"),
    ],
)
def test_single_node_binding_rules_of_spec_2_3(edit, point, reason):
    from recipes.binding import mismatches

    (good,) = parse_recipe(SGLANG_8K1K, "r.yaml").variants
    assert mismatches(good, _sglang_point()) == []
    text = SGLANG_8K1K.replace(*edit) if edit else SGLANG_8K1K
    (variant,) = parse_recipe(text, "r.yaml").variants
    why = mismatches(variant, _sglang_point(**point))
    assert any(reason in w for w in why), why


def test_sglang_dp_attention_needs_data_parallel_equal_to_tp():
    from recipes.binding import mismatches

    text = SGLANG_8K1K.replace("tensor-parallel-size: 8,", "tensor-parallel-size: 8, enable-dp-attention: true, dp-size: 8,")
    (variant,) = parse_recipe(text, "r.yaml").variants
    assert mismatches(variant, _sglang_point(dp_attn=True)) == []
    (half,) = parse_recipe(text.replace("dp-size: 8", "dp-size: 4"), "r.yaml").variants
    assert "data-parallel-size 4 != 8" in mismatches(half, _sglang_point(dp_attn=True))


def test_a_non_string_container_is_a_finding_not_a_binding_crash():
    from recipes.repository import Repository
    from recipes.source import MemorySource

    src = MemorySource({
        "inferencex-e2e/configs/amd-master.yaml": (
            "k:\n  image: lmsysorg/sglang:v1\n  model: x/y\n  model-prefix: dsr1\n  runner: mi355x\n"
            "  precision: fp4\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n"
            "    - isl: 8192\n      osl: 1024\n      search-space:\n"
            "      - {tp: 8, conc-list: [4], srt-recipe: benchmarks/single_node/srt-slurm-recipes/r.yaml}\n"
        ),
        "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/r.yaml": (
            "name: r\nmodel:\n  path: hf:x/y\n  container: [not, a, string]\n  precision: fp4\nengine: sglang\n"
            "roles:\n  agg: {nodes: 1, workers: 1, gpus: 8, args: {tensor-parallel-size: 8}}\n"
            "benchmark: {type: custom, env: {CONC: '4'}}\n"
        ),
    })
    repo = Repository(src)
    repo.bindings  # must not raise
    found = [f for f in repo.findings if f.code == "wrong-type"]
    assert found and found[0].line == 4 and "model.container" in found[0].message
