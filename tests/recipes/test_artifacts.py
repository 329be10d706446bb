"""Artifact parsing: zips, JSON arrays, flat and nested throughput rows, eval scores."""
from __future__ import annotations

import io
import json
import zipfile

from recipes.artifacts import (
    MAX_ZIP_MEMBERS, curve_key_for, load_json_artifact, parse_eval_rows, parse_throughput_rows,
    read_artifact_zip,
)
from recipes.errors import Finding

BASE = {"hw": "mi355x-amds", "framework": "atom", "precision": "fp4", "infmax_model_prefix": "dsv41flash",
        "conc": 4, "tp": 2, "ep": 1, "image": "rocm/atom-dev:nightly"}


def flat_agentic(x, y, **kw):
    return {**BASE, "scenario_type": "agentic-coding", "p90_e2el": x, "median_e2el": 1.0, "tput_per_gpu": y, **kw}


def nested_agentic(x, y):
    return {**BASE, "scenario_type": "agentic-coding", "result_schema_version": 2, "request_metrics": {
        "latency": {"e2el": {"p50": 1.0, "p90": x}}, "throughput": {"per_gpu": {"total_tput_tps": y}}}}


def _zip(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def test_flat_and_nested_agentx_rows_give_the_same_points():
    pairs = [(12.0, 1500.0), (9.5, 1200.0), (20.0, 2100.0)]
    flat = parse_throughput_rows([flat_agentic(x, y) for x, y in pairs], source="a.json", run="7")
    nested = parse_throughput_rows([nested_agentic(x, y) for x, y in pairs], source="a.json", run="7")
    assert [(p.x, p.y) for p in flat.points] == pairs == [(p.x, p.y) for p in nested.points]
    assert {p.curve_key for p in flat.points} == {p.curve_key for p in nested.points}
    key = flat.points[0].curve_key
    assert (key.model, key.scenario, key.hw_key, key.precision, key.run, key.percentile) == (
        "dsv41flash", "agentic-coding", "mi355x_atom", "fp4", "7", "p90")
    assert flat.points[0].conc == 4 and flat.points[0].tp == 2


def test_fixed_seq_uses_median_and_separates_spec_methods():
    row = {**BASE, "framework": "sglang", "isl": 8192, "osl": 1024, "median_e2el": 3.0, "p90_e2el": 9.0,
           "tput_per_gpu": 800.0, "spec_decoding": "mtp"}
    ts = parse_throughput_rows([row, {**row, "spec_decoding": "none"}], source="agg_bmk.json")
    assert ts.points[0].x == 3.0 and ts.points[0].curve_key.percentile == "p50"
    assert ts.points[0].curve_key.scenario == "8k1k"
    assert ts.points[0].curve_key.hw_key == "mi355x_sglang_mtp"
    assert ts.points[1].curve_key.hw_key == "mi355x_sglang"


def test_agentx_key_has_no_spec_suffix_and_disagg_pools():
    a = curve_key_for(flat_agentic(1, 1, spec_decoding="dspark"))
    b = curve_key_for(flat_agentic(1, 1, framework="atom-disagg"))
    assert a == b and a.hw_key == "mi355x_atom"


def test_nan_negative_missing_metrics_are_invalid_rows():
    rows = [flat_agentic(float("nan"), 10.0), flat_agentic(5.0, -1.0), {**BASE, "scenario_type": "agentic-coding"},
            flat_agentic("12", 10.0), "not a row", nested_agentic(None, 5.0), flat_agentic(2.0, 3.0)]
    ts = parse_throughput_rows(rows, source="agg_bmk.json")
    assert [p.index for p in ts.points] == [6]
    assert [r.index for r in ts.invalid] == [0, 1, 2, 3, 4, 5]
    assert ts.invalid[4].curve_key is None and ts.invalid[0].curve_key == ts.points[0].curve_key
    assert "p90_e2el" in ts.invalid[0].reason and "tput_per_gpu" in ts.invalid[1].reason
    assert "request_metrics.latency.e2el.p90" in ts.invalid[5].reason


def test_eval_score_preference_and_validity():
    rows = [
        {"task": "gsm8k", "score": 0.973, "score_name": "em_strict", "em_flexible": 0.5, "model_prefix": "dsv41flash",
         "hw": "MI355X", "framework": "atom", "precision": "fp4", "conc": 128, "tp": 2},
        {"task": "gsm8k", "em_flexible": 0.8, "accuracy": 0.7},
        {"task": "gsm8k", "em_flexible": 0.8, "em_strict": 0.9},
        {"task": "gsm8k", "em_flexible": 0.8},
        {"task": "gsm8k", "score": 1.2},
        {"task": "gsm8k", "score": float("nan")},
        {"task": "gsm8k"},
        {"task": "gsm8k", "em_strict": True},
        {"task": "gsm8k", "em_strict": 0.95, "infrastructure_success": False},
        ["junk"],
    ]
    ev = parse_eval_rows(rows, source="agg_eval_all.json")
    assert (ev[0].score, ev[0].score_name, ev[0].valid, ev[0].conc, ev[0].hw) == (0.973, "em_strict", True, 128, "MI355X")
    assert (ev[1].score, ev[1].score_name) == (0.7, "accuracy")
    assert (ev[2].score, ev[2].score_name) == (0.9, "em_strict")
    assert (ev[3].score, ev[3].score_name, ev[3].valid) == (0.8, "em_flexible", True)
    assert [e.valid for e in ev[4:]] == [False] * 6
    assert "[0, 1]" in ev[4].problem and "no score" in ev[6].problem and "infrastructure" in ev[8].problem


def test_load_json_artifact_tolerates_bad_content():
    assert load_json_artifact(json.dumps([{"a": 1}]).encode(), "agg.json") == [{"a": 1}]
    assert load_json_artifact(b'{"a": NaN}', "one.json")[0]["a"] != 0  # single object, NaN kept
    for bad in (b'[{"a": 1}, {"b"', b"\xff\xfe\x00", b'"text"', b""):
        f = load_json_artifact(bad, "agg.json")
        assert isinstance(f, Finding) and f.path == "agg.json"


def test_zip_members_and_truncation():
    data = _zip({"agg_bmk.json": b"[]", "dir/meta_env.json": b"{}"})
    assert read_artifact_zip(data, "results_bmk") == {"agg_bmk.json": b"[]", "dir/meta_env.json": b"{}"}
    f = read_artifact_zip(data[: len(data) // 2], "results_bmk")
    assert isinstance(f, Finding) and "results_bmk" in f.message
    assert isinstance(read_artifact_zip(b"not a zip", "x"), Finding)


def test_zip_bomb_and_member_caps(monkeypatch):
    import recipes.artifacts as art
    monkeypatch.setattr(art, "MAX_ZIP_UNCOMPRESSED", 1000)
    f = read_artifact_zip(_zip({"big.json": b"0" * 5000}), "bomb")
    assert isinstance(f, Finding) and "limit" in f.message
    many = _zip({f"m{i}.json": b"1" for i in range(MAX_ZIP_MEMBERS + 1)})
    f2 = read_artifact_zip(many, "many")
    assert isinstance(f2, Finding) and "members" in f2.message
