"""Eval pass bars: lookup order and bad input (spec 9.2)."""
from __future__ import annotations

import pytest

from recipes.thresholds import parse_thresholds

GOOD = b"""{
  "default": {
    "gsm8k": 0.90,
    "swebench_lite": 0.50
  },
  "models": {
    "dsv4": {
      "gsm8k": 0.91
    }
  }
}
"""


def test_bar_resolution_order():
    t = parse_thresholds(GOOD, "thresholds.yaml")
    assert t.findings == []
    assert t.bar("dsv4", "gsm8k") == (0.91, "models.dsv4.gsm8k")
    assert t.bar("dsv4", "swebench_lite") == (0.50, "default.swebench_lite")
    assert t.bar("qwen3.5", "gsm8k") == (0.90, "default.gsm8k")
    assert t.bar("qwen3.5", "unknown_task") == (0.85, "fallback")
    assert t.bar("qwen3.5", "unknown_task", fallback=0.7) == (0.7, "fallback")
    assert t.line_of("models.dsv4.gsm8k") == 8 and t.line_of("default.gsm8k") == 3
    assert t.line_of("fallback") is None


def test_tab_indented_json_still_parses():
    t = parse_thresholds(b'{\n\t"default": {"gsm8k": 0.9},\n\t"models": {}\n}\n', "t.yaml")
    assert t.findings == [] and t.bar("x", "gsm8k") == (0.9, "default.gsm8k")


@pytest.mark.parametrize(
    "data, code, line",
    [
        (b'{"default": {"gsm8k": "high"}}', "thresholds-value", 1),
        (b'{\n"default": {\n"gsm8k": 1.5}}', "thresholds-range", 3),
        (b'{"default": [1, 2]}', "thresholds-shape", 1),
        (b'{"default": {}, "models": {"dsv4": 0.9}}', "thresholds-shape", 1),
        (b'{"default": {}, "extra": 1}', "thresholds-unknown-key", 1),
        (b'[1, 2]', "thresholds-shape", 1),
        (b'{\n"default": {"gsm8k": 0.9}\n"models": {}\n}', "thresholds-syntax", 3),
        (b'', "thresholds-shape", None),
        (b'\0\0', "binary", None),
        (b'{"default": {"a": 0.1}, "default": {}}', "duplicate-key", 1),
    ],
)
def test_bad_input_is_a_finding(data, code, line):
    t = parse_thresholds(data, "thresholds.yaml")
    hits = [f for f in t.findings if f.code == code]
    assert hits, t.findings
    assert hits[0].line == line and hits[0].path == "thresholds.yaml"


def test_real_thresholds(inferencex_dir):
    t = parse_thresholds((inferencex_dir / "inferencex-e2e/infx/evals/thresholds.yaml").read_bytes(), "th.yaml")
    assert t.findings == []
    assert t.bar("dsv4", "gsm8k") == (0.91, "models.dsv4.gsm8k")
    assert t.bar("qwen3.5", "gsm8k") == (0.94, "models.qwen3.5.gsm8k")
    assert t.bar("dsv41flash", "gsm8k") == (0.90, "default.gsm8k")
    assert t.bar("dsv4", "gpqa_diamond_cot_n_shot") == (0.30, "default.gpqa_diamond_cot_n_shot")
    assert t.bar("dsv4", "bfcl_smoke") == (0.0, "default.bfcl_smoke")
