"""Pareto counter: spec 10.3 worked examples, curve pooling, flags, speed and the chart."""
from __future__ import annotations

import math
import random

from recipes.artifacts import CurveKey, InvalidRow, PerfPoint, ThroughputSet, parse_throughput_rows
import pytest

from recipes.pareto import (CHART_MAX_OTHER, CHART_MAX_POINTS, _upper_right_exact, chart_position, count_curves, frontier,
                            mermaid_chart, nice_ceiling)
from tests.builders import quadrant_points

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


def _proportional(values: list[float], placed: list[float]) -> None:
    """Chart positions are an affine image of the values: equal steps read as equal distances."""
    (v0, p0), (v1, p1) = min(zip(values, placed)), max(zip(values, placed))
    scale = (p1 - p0) / (v1 - v0)
    assert scale > 0
    for v, p in zip(values, placed):
        assert p == pytest.approx(p0 + (v - v0) * scale, abs=2e-4), (v, p)


SEED_CURVE = [(33.6, 2240), (37.9, 8300), (39.4, 9950), (41.1, 9900), (41.8, 4150), (44.2, 14900), (44.6, 7920),
              (49.3, 14350), (51.2, 14700), (53.9, 14820), (58.7, 24800), (69.8, 53800), (74.4, 41200),
              (103.5, 68900), (161.0, 113800), (288.0, 131500)]


def test_mermaid_chart_places_every_measured_point_on_linear_axes():
    r = frontier(SEED_CURVE)
    chart = mermaid_chart("dsv41flash", r, SEED_CURVE)
    assert chart.startswith("```mermaid\n%%{init: ") and "\nquadrantChart\n" in chart
    pts = quadrant_points(chart)
    # Every frontier point and every measured point off it, nothing twice.
    assert sorted((x, y) for _, x, y in pts["f"]) == sorted((chart_position(x, 300), chart_position(y, 150_000))
                                                           for x, y in r.frontier)
    assert len(pts["f"]) == 9 and len(pts["o"]) == 16 - 9
    # One scale per axis for both kinds: 33.6 s and 288 s lie 254.4 s apart, 37.9 s and 39.4 s 1.5 s.
    on = dict(r.frontier)
    off = sorted(p for p in SEED_CURVE if p not in r.frontier)
    xs = [x for x, _ in r.frontier] + [x for x, _ in off]
    placed = sorted(pts["f"], key=lambda t: t[1]) + sorted(pts["o"], key=lambda t: t[1])
    _proportional(xs, [x for _, x, _ in placed])
    _proportional([on[x] for x, _ in r.frontier] + [y for _, y in off], [y for _, _, y in placed])
    far = chart_position(288, 300) - chart_position(33.6, 300)
    near = chart_position(39.4, 300) - chart_position(37.9, 300)
    assert far / near == pytest.approx(254.4 / 1.5, rel=0.01)
    # The middle lines are half of each axis, and the axis texts say so.
    assert 'x-axis "E2EL below 150 s" --> "above 150 s"' in chart
    assert 'y-axis "tok/s/GPU below 75k" --> "above 75k"' in chart
    assert '"blue: the frontier (9), orange: measured, off it (7)"' in chart
    # The lowest and the highest frontier points carry their figures.
    labels = {label for label, _, _ in pts["f"]}
    assert {"33.6 s, 2.24k", "288 s, 131.5k"} <= labels


def test_mermaid_chart_labels_only_where_they_cover_nothing():
    crowded = [(10.0 + i * 0.1, 1000.0 + i) for i in range(8)] + [(100.0, 5000.0)]
    r = frontier(crowded)
    pts = quadrant_points(mermaid_chart("c", r, crowded))
    labels = [label for label, _, _ in pts["f"]]
    assert labels.count(" ") == 7 and "10 s, 1k" in labels and "100 s, 5k" in labels


def test_mermaid_chart_skips_invalid_points_samples_large_curves_and_quotes_names():
    r = frontier(EXAMPLE_A)
    chart = mermaid_chart('dsv41flash "agentic"', r, EXAMPLE_A + [(NAN, 5.0), (0.0, 10.0), (3.0, math.inf)])
    assert '"agentic"' not in chart and "dsv41flash 'agentic'" in chart  # quotes would end the string
    pts = quadrant_points(chart)
    assert len(pts["f"]) == 5 and len(pts["o"]) == 3  # (15, 1400), (45, 2500), (60, 2550)
    assert all(0 < v < 1 for _, x, y in pts["f"] + pts["o"] for v in (x, y))
    many = [(float(i), float(i % 7 + 1)) for i in range(1, 500)]
    big = mermaid_chart("big", frontier(many), many)
    pts = quadrant_points(big)
    on = len(frontier(many).frontier)  # plateaus count: 76 points
    assert len(pts["o"]) == CHART_MAX_OTHER and len(pts["f"]) == CHART_MAX_POINTS < on
    assert f"{CHART_MAX_POINTS} of {on} frontier and {CHART_MAX_OTHER} of {len(many) - on} other points shown" in big
    assert mermaid_chart("empty", frontier([])) == ""
    # Without the measured points, only the frontier is drawn.
    assert quadrant_points(mermaid_chart("a", r))["o"] == []


@pytest.mark.parametrize("v,top", [(288, 300), (131_500, 150_000), (33.8, 40), (3120, 4000), (1, 1),
                                   (0.73, 0.8), (101, 120), (9.2, 10)])
def test_axis_ends_are_round_with_round_halves(v, top):
    assert nice_ceiling(v) == top


def test_mermaid_chart_of_a_huge_curve_draws_a_stride_and_counts_every_point():
    huge = [(1.0 + (i * 7919) % 100_000 / 100, 1.0 + (i * 104_729) % 50_000) for i in range(60_000)]
    r = frontier(huge)
    chart = mermaid_chart("huge", r, huge)
    pts = quadrant_points(chart)
    assert len(pts["o"]) == CHART_MAX_OTHER
    assert f"off it ({len(huge) - len(r.frontier)})" in chart
    assert f"{CHART_MAX_OTHER} of {len(huge) - len(r.frontier)} other points shown" in chart
