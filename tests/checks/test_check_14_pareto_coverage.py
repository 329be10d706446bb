"""Check 14 details a case file cannot express: Unavailable rows, curve keys, the bypass rule."""
from __future__ import annotations

import math

from checks.check_14_pareto_coverage import (
    CurveSig,
    ParetoCoverageCheck,
    curve_name,
    curve_signature,
    find_bypass,
)
from checks.context import ReviewContext
from checks.snapshot import SweepRun, Unavailable
from recipes.artifacts import CurveKey
from tests.builders import HEAD_SHA, agentic_entry, build_snapshot, quadrant_points

MASTER = "inferencex-e2e/configs/amd-master.yaml"
ENTRY = agentic_entry("dsv41flash-fp4-mi355x-atom-agentic-dspark", image="rocm/atom-dev:nightly_202610070333",
                      arm="tp: 2, spec-decoding: draft_model, conc-list: [1, 2, 4, 8, 16, 32, 64, 128]")
JOBS = [{"name": "agentic / benchmark (tp2 c1)", "run_id": 7}, {"name": "agentic eval / benchmark (tp2 c128)", "run_id": 7}]


def _row(x, y, conc=1):
    return {"hw": "mi355x", "conc": conc, "infmax_model_prefix": "dsv41flash", "framework": "atom", "precision": "fp4",
            "scenario_type": "agentic-coding", "p90_e2el": x, "tput_per_gpu": y}


def _evaluate(rows=None, **spec):
    snap = build_snapshot({
        "base": {MASTER: "{}\n"}, "head": {MASTER: ENTRY}, "check_runs": {"head": JOBS},
        "runs": [{"id": 7, "artifacts": ["results_bmk"], "throughput": rows or []}], **spec,
    })
    return ParetoCoverageCheck().evaluate(ReviewContext(snap)), snap


def test_spec_example_a_passes_five_of_eight():
    pts = [(12.0, 1500), (9.5, 1200), (20.0, 2100), (15.0, 1400), (30.0, 2100), (45.0, 2600), (45.0, 2500), (60.0, 2550)]
    result, _ = _evaluate([_row(x, y) for x, y in pts])
    assert result.status.value == "PASS", result.reason
    assert "8 measured points, 5 on the frontier (5/5)" in result.reason


def test_spec_example_b_flat_rows_with_nan_and_zero_warn():
    pts = [(5, 800), (5, 800), (7, 800), (6, 750), (8, 900), (math.nan, 1000), (10, 0), (11, 950)]
    result, _ = _evaluate([_row(x, y) for x, y in pts])
    assert result.status.value == "WARN"
    assert "4 on the frontier (4/5), 2 invalid" in result.reason


def test_throughput_unavailable_is_unverifiable_and_marked():
    snap = build_snapshot({"base": {MASTER: "{}\n"}, "head": {MASTER: ENTRY}, "check_runs": {"head": JOBS}})
    run = SweepRun(run_id=7, head_sha=HEAD_SHA, conclusion="success", status="completed", event="pull_request",
                   workflow_path=".github/workflows/run-sweep.yml", throughput=Unavailable(reason="artifact download returned HTTP 410"))
    snap = snap.model_copy(update={"sweep_runs": {7: run}})
    result = ParetoCoverageCheck().evaluate(ReviewContext(snap))
    assert result.status.value == "WARN"
    assert "unverifiable" in result.reason and "HTTP 410" in result.reason
    assert any(e.unavailable for e in result.evidence)


def test_details_hold_counts_and_fence_free_charts():
    result, _ = _evaluate([_row(10.0 + i, 100.0 * (i + 1), conc=2 ** i) for i in range(6)])
    curve = "dsv41flash / agentic-coding / mi355x atom / fp4 / p90 E2EL"
    assert result.details["curves"][curve]["frontier"] == 6
    assert result.details["curves"][curve]["points"][0] == (10.0, 100.0)
    (chart,) = result.details["mermaid"]
    assert chart.startswith("%%{init: ") and "\nquadrantChart\n" in chart and "```" not in chart
    assert len(quadrant_points(chart)["f"]) == 6 and quadrant_points(chart)["o"] == []


def test_the_chart_shows_the_measured_points_off_the_frontier():
    rows = [_row(10.0 + i, 100.0 * (i + 1), conc=2 ** i) for i in range(5)] + [_row(30.0, 150.0, conc=64)]
    result, _ = _evaluate(rows)
    (chart,) = result.details["mermaid"]
    pts = quadrant_points(chart)
    assert len(pts["f"]) == 5 and len(pts["o"]) == 1
    # (30 s, 150) sits on the same scale as the frontier: further right than 14 s, lower than 500.
    (_, ox, oy), = pts["o"]
    assert ox > max(x for _, x, _ in pts["f"]) and oy < max(y for _, _, y in pts["f"])


def test_curve_key_round_trip_keeps_underscored_spec():
    key = CurveKey("dsr1", "8k1k", "b200_sglang_draft_model", "fp4", "1", "p50")
    assert curve_signature(key) == CurveSig("dsr1", "8k1k", "b200", "sglang", "fp4", "draft_model")
    assert curve_name(key) == "dsr1 / 8k1k / b200 sglang draft_model / fp4 / median E2EL"


def _bypass(comments, users):
    snap = build_snapshot({"comments": comments, "users": users})
    return find_bypass(ReviewContext(snap))


ADMIN = {"boss": {"permission": "admin", "role_name": "admin"}}


def test_bypass_accepts_short_and_full_sha_in_any_case():
    for text in (f"PARETO BYPASS {HEAD_SHA[:7]}", f"Pareto  bypass\nfor {HEAD_SHA.upper()}"):
        comment, phrase = _bypass([{"author": "boss", "body": text}], ADMIN)
        assert comment is not None and phrase == "admin bypass recorded by @boss", text


def test_bypass_refuses_six_hex_chars_unknown_users_and_unavailable_comments():
    assert _bypass([{"author": "boss", "body": f"pareto bypass {HEAD_SHA[:6]}"}], ADMIN)[0] is None
    assert _bypass([{"author": "stranger", "body": f"pareto bypass {HEAD_SHA[:8]}"}], ADMIN)[0] is None
    assert _bypass([{"author": "boss", "body": f"pareto bypass {HEAD_SHA[:8]}"}],
                   {"boss": {"unavailable": "HTTP 403"}})[0] is None
    comment, phrase = _bypass({"unavailable": "HTTP 502"}, ADMIN)
    assert comment is None and "comments unavailable: HTTP 502" in phrase


def test_bypass_phrase_comes_from_policy():
    snap = build_snapshot({"comments": [{"author": "boss", "body": f"frontier waiver {HEAD_SHA[:8]}"}], "users": ADMIN,
                           "config": {"policy": {"pareto_bypass_phrase": "frontier waiver"}}})
    assert find_bypass(ReviewContext(snap))[0] is not None
