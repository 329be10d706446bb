"""Pareto counter: spec 10.3 worked examples, curve pooling, flags, speed and the chart."""
from __future__ import annotations

import math
import random

from recipes.artifacts import CurveKey, InvalidRow, PerfPoint, ThroughputSet, parse_throughput_rows
from recipes.pareto import _upper_right_exact, count_curves, frontier, mermaid_chart

NAN = float("nan")

EXAMPLE_A = [(12.0, 1500), (9.5, 1200), (20.0, 2100), (15.0, 1400), (30.0, 2100),
             (45.0, 2600), (45.0, 2500), (60.0, 2550)]
EXAMPLE_B = [(5, 800), (5, 800), (7, 800), (6, 750), (8, 900), (NAN, 1000), (10, 0), (11, 950)]
EXAMPLE_C = [(3.1, 400), (4.0, 390), (4.5, 410), (6.2, 415), (8.0, 500), (8.0, 520), (12.0, 515)]


def test_example_a_five_points_pass():
    r = frontier(EXAMPLE_A)
    assert r.frontier == [(9.5, 1200), (12.0, 1500), (20.0, 2100), (30.0, 2100), (45.0, 2600)]
    assert (r.measured, r.invalid, r.status) == (8, 0, "PASS")


def test_example_b_duplicates_and_invalid_warn():
    r = frontier(EXAMPLE_B)
    assert r.frontier == [(5, 800), (7, 800), (8, 900), (11, 950)]
    assert (r.invalid, r.status) == (2, "WARN")
    assert r.summary() == "4/5 frontier points, 2 invalid points"


def test_example_c_tie_at_equal_x_warn():
    r = frontier(EXAMPLE_C)
    assert r.frontier == [(3.1, 400), (4.5, 410), (6.2, 415), (8.0, 520)]
    assert r.status == "WARN" and r.invalid == 0


def test_invalid_point_alone_makes_warn_even_with_enough_frontier():
    r = frontier(EXAMPLE_A + [(math.inf, 10.0)])
    assert len(r.frontier) == 5 and r.invalid == 1 and r.status == "WARN"


def test_non_numeric_values_are_invalid_not_crashes():
    r = frontier([(1.0, 2.0), (None, 3.0), ("4", 5.0), (2.0, -1.0)])
    assert r.frontier == [(1.0, 2.0)] and r.invalid == 3


def test_interactivity_flag_intersects_after_the_frontier():
    # Filtering first would make the dominated (2, 5) a frontier point; intersecting after does not.
    r0 = frontier([(1.0, 10.0), (2.0, 5.0)], flags=[False, True])
    assert r0.frontier == [] and r0.restricted
    pts = [(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)]
    r = frontier(pts, flags=[True, None, False])
    assert r.frontier == [(1.0, 10.0)] and r.indices == [0]
    # (2.5, 25) is dominated by nothing but is not flagged; it must not appear.
    r2 = frontier(pts + [(2.5, 25.0)], flags=[True, True, True, False])
    assert r2.frontier == [(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)]


def test_prefiltered_large_input_matches_the_exact_walk():
    rng = random.Random(7)
    pts = [(round(rng.uniform(1, 50), 1), round(rng.uniform(1, 500), 0)) for _ in range(60_000)]
    exact = [(x, y) for x, y in _upper_right_exact(list(pts))]
    assert frontier(pts).frontier == exact
    assert len(exact) > 3  # ties and plateaus exist at this rounding


def test_million_points_match_the_exact_walk():
    # Speed is measured by bench/pareto.py, not asserted here; this checks the fast path is exact at scale.
    rng = random.Random(3)
    pts = [(x, 3000 * (1 - 1 / (1 + x / 10)) * rng.uniform(0.6, 1.0)) for x in (rng.uniform(0.5, 120) for _ in range(200_000))]
    assert frontier(pts).frontier == [(x, y) for x, y in _upper_right_exact(list(pts))]


def _key(hw="mi355x_atom"):
    return CurveKey("dsv41flash", "agentic-coding", hw, "fp4", "123", "p90")


def test_count_curves_pools_by_key_and_counts_keyed_invalid_rows():
    a, b = _key(), _key("mi355x_sglang")
    pts = [PerfPoint(a, x, y, index=i) for i, (x, y) in enumerate(EXAMPLE_A)] + [PerfPoint(b, 1.0, 1.0)]
    ts = ThroughputSet(source="agg_bmk.json", points=pts, invalid=[InvalidRow(9, "missing", a), InvalidRow(10, "x")])
    res = count_curves(ts)
    assert list(res) == sorted([a, b])
    assert res[a].frontier_points == 5 and res[a].invalid == 1 and res[a].status == "WARN"
    assert res[a].measured == 9
    assert res[b].frontier_points == 1 and res[b].status == "WARN"


def test_count_curves_from_parsed_rows():
    rows = [{"hw": "mi355x-amds", "framework": "atom", "precision": "fp4", "infmax_model_prefix": "dsv41flash",
             "scenario_type": "agentic-coding", "p90_e2el": x, "tput_per_gpu": y} for x, y in EXAMPLE_A]
    res = count_curves(parse_throughput_rows(rows, source="agg_bmk.json", run="1"))
    (key, r), = res.items()
    assert key.hw_key == "mi355x_atom" and r.status == "PASS"


def test_mermaid_chart_plots_frontier():
    r = frontier(EXAMPLE_A)
    chart = mermaid_chart('dsv41flash "agentic"', r)
    assert chart.startswith("```mermaid\nxychart-beta")
    assert "x-axis \"E2EL (s)\" [9.5, 12, 20, 30, 45]" in chart
    assert "line [1200, 1500, 2100, 2100, 2600]" in chart
    assert '"agentic"' not in chart  # quotes would end the Mermaid string
    assert mermaid_chart("empty", frontier([])) == ""
