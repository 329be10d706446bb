"""Check 12 helpers: value-only comparison of points and configs, and the curve a point joins."""
from __future__ import annotations

from checks.check_12_append_only import _first_difference, curve_of, effective_values
from recipes.effective import EffectiveConfig, Origin
from recipes.points import BenchmarkPoint


def test_first_difference_names_the_key_path():
    a = {"roles": {"agg": {"args": {"tp": 2, "mem": 0.85}}}, "name": "x"}
    b = {"roles": {"agg": {"args": {"tp": 2, "mem": 0.9}}}, "name": "x"}
    assert _first_difference(a, b) == (("roles", "agg", "args", "mem"), 0.85, 0.9)
    assert _first_difference(a, a) is None
    assert _first_difference({"a": 1}, {"a": 1, "b": 2}) == (("b",), None, 2)


def test_effective_values_ignore_where_values_were_written():
    one = EffectiveConfig(point_id="p", image=Origin(value="img:1", path="m.yaml", line=2),
                          args={"kv-cache-dtype": Origin(value="fp8", path="r.yaml", line=10)})
    moved = EffectiveConfig(point_id="p", image=Origin(value="img:1", path="m.yaml", line=40),
                            args={"kv-cache-dtype": Origin(value="fp8", path="r.yaml", line=11)})
    changed = EffectiveConfig(point_id="p", image=Origin(value="img:1", path="m.yaml", line=2),
                              args={"kv-cache-dtype": Origin(value="bf16", path="r.yaml", line=10)})
    assert effective_values(one) == effective_values(moved)
    assert _first_difference(effective_values(one), effective_values(changed)) == (("args", "kv-cache-dtype"), "fp8", "bf16")


def _point(**kw) -> BenchmarkPoint:
    return BenchmarkPoint(config_key="k", scenario=kw.pop("scenario", "agentic-coding"), **kw)


def test_curves_split_on_offload_and_fixed_seq_spec_only():
    assert curve_of(_point(tp=2, conc=1)) == curve_of(_point(tp=8, conc=64, spec_decoding="mtp"))
    assert curve_of(_point(tp=2)) != curve_of(_point(tp=2, kv_offloading="dram"))
    fixed = dict(scenario="fixed-seq-len", isl=8192, osl=1024)
    assert curve_of(_point(tp=8, **fixed)) != curve_of(_point(tp=8, spec_decoding="mtp", **fixed))
    assert curve_of(_point(tp=8, **fixed)) == curve_of(_point(tp=4, conc=16, **fixed))
