"""MODELS.md: support matrix, scenarios, dated deprecations and their effective dates (spec 6)."""
from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from recipes.models_md import parse_models, scenario_name

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "parsers" / "MODELS.md"


@pytest.fixture
def doc():
    return parse_models(FIXTURE.read_text(), "docs/MODELS.md")


@pytest.mark.parametrize(
    "args, key",
    [
        (("agentic-coding",), "agentic-coding"),
        (("Agentic coding",), "agentic-coding"),
        (("fixed-seq-len", 8192, 1024), "8k1k"),
        (("fixed-seq-len", 1024, 8192), "1k8k"),
        (("8k1k",), "8k1k"),
        (("Single-turn 1k1k",), "1k1k"),
    ],
)
def test_scenario_name(args, key):
    assert scenario_name(*args) == key


def test_rows_scenarios_and_notices(doc):
    rows = {r.prefix: r for r in doc.rows}
    assert set(rows) == {"alpha", "beta", "gamma", "gammapro", "delta"}
    assert rows["gamma"].retired and rows["gamma"].retired_on == date(2026, 6, 16)
    assert rows["gammapro"].line == rows["gamma"].line == 36
    assert rows["beta"].active_precisions == ("fp8", "fp4")
    assert rows["alpha"].active_scenarios == ("agentic-coding",)
    assert [(s.key, s.status) for s in doc.scenarios] == [
        ("agentic-coding", "active"), ("8k1k", "active"), ("1k1k", "deprecated")]
    assert doc.scenarios[2].since == date(2026, 3, 1)
    notices = {(n.prefix, n.scenario, n.precision): (n.last_day, n.line) for n in doc.deprecations}
    assert notices == {
        ("alpha", "8k1k", None): (date(2026, 5, 1), 11),
        ("beta", "*", "bf16"): (date(2026, 5, 1), 12),
        ("gamma", "agentic-coding", None): (date(2026, 6, 15), 20),
    }  # the A/B-baseline table is not a deprecation
    codes = sorted((f.line, f.code) for f in doc.findings)
    assert codes == [(38, "models-row"), (39, "models-row")]


@pytest.mark.parametrize(
    "prefix, scenario, on, precision, deprecated, status, line",
    [
        ("alpha", "agentic-coding", date(2026, 7, 1), None, False, "active", 34),
        ("alpha", "8k1k", date(2026, 5, 1), None, False, "scheduled", 11),  # last day itself
        ("alpha", "8k1k", date(2026, 5, 2), None, True, "deprecated", 11),
        ("alpha", "1k1k", date(2026, 7, 1), None, True, "deprecated", 28),  # scenario-wide
        ("beta", "agentic-coding", date(2026, 5, 2), "bf16", True, "deprecated", 12),
        ("beta", "agentic-coding", date(2026, 4, 30), "bf16", False, "scheduled", 12),
        ("beta", "agentic-coding", date(2026, 7, 1), "fp8", False, "active", 35),
        ("beta", "8k1k", date(2026, 7, 1), "int4", True, "deprecated", 35),  # limited to fp8/fp4
        ("beta", "agentic-coding", date(2026, 7, 1), None, False, "active", 35),
        ("gamma", "agentic-coding", date(2026, 6, 15), None, False, "scheduled", 20),
        ("gamma", "8k1k", date(2026, 6, 16), None, True, "retired", 36),
        ("gammapro", "agentic-coding", date(2026, 7, 1), None, True, "retired", 36),
        ("delta", "agentic-coding", date(2026, 7, 1), None, False, "unlisted-scenario", 37),
        ("omega", "8k1k", date(2026, 7, 1), None, False, "unlisted-model", None),
    ],
)
def test_is_deprecated(doc, prefix, scenario, on, precision, deprecated, status, line):
    d = doc.is_deprecated(prefix, scenario, on=on, precision=precision)
    assert (d.deprecated, d.status, d.line) == (deprecated, status, line), d.reason
    assert d.reason
    if status == "unlisted-model":
        assert "not listed" in d.reason


def test_master_config_spelling(doc):
    d = doc.is_deprecated("alpha", "fixed-seq-len", isl=8192, osl=1024, on=date(2026, 5, 3))
    assert d.deprecated


def test_garbage_is_findings_not_crashes():
    assert parse_models("no tables at all\n", "M.md").findings[0].code == "models-no-matrix"
    assert parse_models("\0\0", "M.md").findings[0].code == "binary"
    odd = parse_models("## Deprecation Notice\n| Model | Deprecated |\n|---|---|\n| `x` | 8k1k |\n", "M.md")
    assert "models-notice" in {f.code for f in odd.findings}  # no dated section: last day unknown


def test_real_models_md(inferencex_dir):
    doc = parse_models((inferencex_dir / "inferencex-e2e/docs/MODELS.md").read_text(), "docs/MODELS.md")
    assert doc.findings == []
    assert len(doc.rows) == 15  # 14 table rows; `glm5`, `glm5.1` share one
    # Line 161: "| DeepSeek-V4.1-Flash | `dsv41flash` | 2026-09-10 | Agentic coding (...) | |"
    d = doc.is_deprecated("dsv41flash", "agentic-coding", on=date.today())
    assert not d.deprecated and d.status == "active" and d.line == 161
    # Line 49: "**Tuesday, September 8, 2026** is the last day for the **Single-turn 8k1k**
    # scenario on **DeepSeek-V4-Pro 1.6T** (`dsv4`)."; line 167 says "removed 2026-09-09".
    assert doc.is_deprecated("dsv4", "8k1k", on=date(2026, 9, 10)).deprecated
    assert doc.is_deprecated("dsv4", "fixed-seq-len", isl=8192, osl=1024, on=date(2026, 9, 9)).deprecated
    early = doc.is_deprecated("dsv4", "8k1k", on=date(2026, 9, 8))
    assert not early.deprecated and early.status == "scheduled" and early.line == 49
    assert not doc.is_deprecated("dsv4", "agentic-coding", on=date(2026, 10, 1)).deprecated
    # Line 23: qwen3.5 "All **bf16** recipes, in every scenario" (last day 2026-08-03).
    assert doc.is_deprecated("qwen3.5", "8k1k", on=date(2026, 8, 4), precision="bf16").deprecated
    assert not doc.is_deprecated("qwen3.5", "8k1k", on=date(2026, 8, 4), precision="fp8").deprecated
    # Line 43: kimik2.5 8k1k last day 2026-08-06; line 170 "fully retired 2026-08-07".
    assert not doc.is_deprecated("kimik2.5", "8k1k", on=date(2026, 8, 6)).deprecated
    assert doc.is_deprecated("kimik2.5", "8k1k", on=date(2026, 8, 7)).status == "retired"
    assert doc.is_deprecated("glm5.1", "agentic-coding", on=date(2026, 10, 2)).status == "retired"
    assert doc.is_deprecated("minimaxm3", "8k1k", on=date(2026, 8, 4)).deprecated
    assert doc.is_deprecated("dsr1", "1k1k", on=date(2026, 10, 1)).deprecated  # line 71
    assert doc.is_deprecated("dsr1", "8k1k", on=date(2026, 10, 1)).status == "active"
