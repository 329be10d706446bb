"""The per-script and per-variant shortcuts of recipes.launch.path.serving give what the plain code gives."""
from __future__ import annotations

from recipes.launch.path.hits import Hit, hit, variant_hits
from recipes.scripts import analyze_script, python_file_run, python_file_runs
from recipes.srt import parse_recipe

SCRIPT = """#!/usr/bin/env bash
python3 -u fix_top.py --a
patch_engine() {
  python3 /w/fix_fn.py
  echo "python3 not_run.py"
}
python3 -m aiperf profile
"""

RECIPE = """name: r
model: {path: "hf:org/m", container: img:1, precision: fp8}
backend:
  type: sglang
resources: {gpu_type: b200, gpus_per_node: 8}
roles:
  agg:
    args:
      tensor-parallel-size: 8
      speculative-config: '{"method": "mtp", "num_speculative_tokens": 3}'
    env: {SGLANG_X: "1"}
benchmark:
  env: {CONC: "4"}
"""


def test_python_file_runs_lists_each_run_in_order_with_its_function():
    analysis = analyze_script(SCRIPT, "launch.sh")
    expected = tuple((ref, cmd.function, cmd.line) for cmd in analysis.commands
                     if (ref := python_file_run([str(a) for a in (cmd.expanded or cmd.argv)])) is not None)
    assert python_file_runs(analysis) == expected
    assert [(ref, fn) for ref, fn, _ in expected] == [("fix_top.py", None), ("/w/fix_fn.py", "patch_engine")]
    assert python_file_runs(analysis) is python_file_runs(analysis)  # computed once per analysis


def test_the_fast_hit_equals_the_dataclass_hit():
    args = dict(name="--Tensor_Parallel-Size", value=8, path="r.yaml", line=3, kind="arg", condition="x", parent="p")
    fast, plain = hit(**args), Hit(**args)
    assert fast == plain and repr(fast) == repr(plain) and hash(fast) == hash(plain)
    assert fast.__dict__ == plain.__dict__ and fast.key == "tensor-parallel-size"
    # A non-string setting name (a YAML key such as `1` or `true`) is normalised as the dataclass does.
    assert hit(True, 1, "m.yaml", 1, "setting").key == Hit(True, 1, "m.yaml", 1, "setting").key == "true"
    assert hit(1, 1, "m.yaml", 1, "setting").key == "1"


def test_variant_hits_carry_each_keys_line_as_line_of_gives_it():
    (variant,) = parse_recipe(RECIPE, "r.yaml").variants
    hits = list(variant_hits(variant))
    assert hits, "the recipe has settings"
    by_name = {h.name: h for h in hits if h.kind != "json"}
    assert by_name["tensor-parallel-size"].line == variant.line_of("roles", "agg", "args", "tensor-parallel-size") == 9
    assert by_name["CONC"].line == variant.line_of("benchmark", "env", "CONC") == 13
    assert by_name["CONC"].kind == "client-env" and by_name["SGLANG_X"].kind == "env"
    spec = [h for h in hits if h.kind == "json"]
    assert {h.name for h in spec} == {"method", "num_speculative_tokens"}
    assert all(h.line == 10 and h.parent == "speculative-config" for h in spec)
