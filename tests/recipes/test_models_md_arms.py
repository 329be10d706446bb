"""MODELS.md items that deprecate one arm of a scenario ("Agentic coding non-DSpark arm")."""
from __future__ import annotations

from datetime import date

from recipes.models_md import parse_models

MODELS = """# Models

## Model support matrix

| Model architecture class | Prefix | Date added | Active scenarios | Deprecated scenarios |
|---|---|---|---|---|
| Kimi-K3 | `kimik3` | 2026-07-27 ([#2391](https://github.com/SemiAnalysisAI/InferenceX/pull/2391)) | Agentic coding (DSpark only) | Agentic coding non-DSpark arm (deprecated from day 0) |
| DeepSeek-V4-Pro | `dsv4` | 2026-04-24 | Single-turn 8k1k, Agentic coding | Single-turn 1k1k |
"""
ON = date(2026, 8, 20)


def test_the_named_arm_is_active_and_the_others_deprecated():
    doc = parse_models(MODELS, "MODELS.md")
    assert not doc.is_deprecated("kimik3", "agentic-coding", on=ON, method="dspark").deprecated
    dep = doc.is_deprecated("kimik3", "agentic-coding", on=ON, method="none")
    assert dep.deprecated and "MODELS.md:7" in dep.reason
    assert doc.is_deprecated("kimik3", "agentic-coding", on=ON, method="mtp").deprecated


def test_an_unknown_method_is_covered_by_the_arm_item():
    assert parse_models(MODELS, "MODELS.md").is_deprecated("kimik3", "agentic-coding", on=ON).deprecated


def test_items_without_an_arm_apply_to_every_method():
    doc = parse_models(MODELS, "MODELS.md")
    for method in ("none", "mtp", None):
        assert doc.is_deprecated("dsv4", "fixed-seq-len", on=ON, isl=1024, osl=1024, method=method).deprecated
    assert not doc.is_deprecated("dsv4", "agentic-coding", on=ON, method="mtp").deprecated
