"""The Pareto coverage counter (spec 10.2 "upper_right" frontier) and its Mermaid chart.

A sort plus one pass (after a provably safe prefilter): 10^6 points count in well under a
second without numpy.
"""
from __future__ import annotations

import math
from bisect import bisect_left
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Literal, Sequence

from .artifacts import INTERACTIVITY_FLAG, CurveKey, PerfPoint, ThroughputSet

RECOMMENDED_POINTS = 5  # spec 10.2 step 5
PASS: Literal["PASS"] = "PASS"
WARN: Literal["WARN"] = "WARN"
_INF = math.inf
_PREFILTER_MIN = 20_000
_SAMPLE_SIZE = 4_096

CHART_X_LABEL = "E2EL"
CHART_Y_LABEL = "tok/s/GPU"
CHART_MAX_POINTS = 40  # keeps the verdict comment small; the count is never sampled
CHART_MAX_OTHER = 40  # measured points off the frontier drawn at most (evenly along E2EL)
CHART_NICE_STEPS = (1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8)
CHART_MARGIN = 0.04  # of each axis on both sides, so no point's label falls off the plot
CHART_WIDTH_PX, CHART_HEIGHT_PX = 720, 440
# The plot inside the chart, and a label's measure (11 px text under its point), in pixels: a
# frontier point's figures are written only where they cover no other point or label.
CHART_PLOT_PX = (685, 370)
CHART_LABEL_CHAR_PX, CHART_LABEL_HEIGHT_PX, CHART_LABEL_OFFSET_PX = 6.2, 13, 5
CHART_POINT_RADIUS_PX = 6
CHART_FRONTIER_COLOUR = "#0969da"  # GitHub's blue
CHART_OTHER_COLOUR = "#bc4c00"  # GitHub's orange: apart from the blue for every common colour vision
MSG_CHART_LEGEND = "blue: the frontier ({n}), orange: measured, off it ({other})"
# Point classes (`classDef`, `:::f`) need Mermaid 11 (10.9 refuses them); GitHub runs 11.
# GitHub renders Mermaid with its own theme per page (light or dark) but honours a chart's init
# directive: the plot is a light card with dark point labels on both pages; the title and axis
# texts lie on the page itself, so they take a middle grey that reads on white and on #0d1117.
_CHART_PLOT = "#f6f8fa"
_CHART_TEXT = "#818b98"
CHART_INIT = ("%%{init: {\"theme\": \"base\", \"themeVariables\": {"
              + ", ".join(f'"quadrant{i}Fill": "{_CHART_PLOT}"' for i in range(1, 5))
              + f', "quadrant2TextFill": "#59636e", "quadrantPointTextFill": "#1f2328"'
              f', "quadrantInternalBorderStrokeFill": "#d1d9e0", "quadrantExternalBorderStrokeFill": "{_CHART_TEXT}"'
              f', "quadrantTitleFill": "{_CHART_TEXT}", "quadrantXAxisTextFill": "{_CHART_TEXT}"'
              f', "quadrantYAxisTextFill": "{_CHART_TEXT}"}}, "quadrantChart": {{"chartWidth": {CHART_WIDTH_PX}'
              f', "chartHeight": {CHART_HEIGHT_PX}, "titleFontSize": 14, "pointLabelFontSize": 11'
              ', "quadrantLabelFontSize": 12, "xAxisLabelFontSize": 13, "yAxisLabelFontSize": 13}}}%%')
MSG_SUMMARY = "{n}/{min} frontier points"
MSG_INVALID = "{n} invalid point{s}"


@dataclass(frozen=True)
class FrontierResult:
    frontier: list[tuple[float, float]]
    measured: int  # every input point, valid or not (spec output `measuredPoints`)
    invalid: int  # non-finite or non-positive x or y (`invalidPoints`)
    status: Literal["PASS", "WARN"]
    min_points: int = RECOMMENDED_POINTS
    # True when the interactivity-frontier flag restricted the frontier (`canonicalRestriction`).
    restricted: bool = False
    indices: list[int] = field(default_factory=list, repr=False)  # input positions of frontier points

    @property
    def frontier_points(self) -> int:
        return len(self.frontier)

    def summary(self) -> str:
        """`4/5 frontier points, 2 invalid points` - the figure a verdict row quotes."""
        text = MSG_SUMMARY.format(n=len(self.frontier), min=self.min_points)
        if self.invalid:
            text += ", " + MSG_INVALID.format(n=self.invalid, s="" if self.invalid == 1 else "s")
        return text


def _upper_right_exact(items: list[tuple]) -> list[tuple]:
    """Spec 10.2 steps 2-3 over (x, y, ...) tuples: sort x asc / y desc, keep rises and plateaus."""
    items = sorted(items, key=lambda t: (t[0], -t[1]))
    kept = []
    max_y = -_INF
    last_x = -_INF
    for item in items:
        x = item[0]
        y = item[1]
        if y > max_y or (y == max_y and x > last_x):
            kept.append(item)
            max_y = y
            last_x = x
    return kept


def _upper_right(items: list[tuple]) -> list[tuple]:
    """The exact frontier, after a safe prefilter so large inputs avoid a full sort.

    The frontier of an evenly spaced sample gives reference points r. A point with some
    r.x < x and r.y > y can never be kept (the walk's running maximum already exceeds y
    when it is reached), and dropping a never-kept point changes neither the running
    maximum nor the last kept x, so the exact walk over the survivors is identical.
    Adversarial input (every point on the frontier) just skips no work.
    """
    if len(items) < _PREFILTER_MIN:
        return _upper_right_exact(items)
    ref = _upper_right_exact(items[:: max(1, len(items) // _SAMPLE_SIZE)])
    # Sentinels make bisect's "no reference to the left" case read -inf without a branch.
    ref_x = [-_INF] + [r[0] for r in ref]
    ref_y = [-_INF] + [r[1] for r in ref]  # already non-decreasing along a frontier
    left = bisect_left
    survivors = [t for t in items if t[1] >= ref_y[left(ref_x, t[0]) - 1]]
    return _upper_right_exact(survivors)


def _is_valid(v: object) -> bool:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return False
    return 0.0 < v < _INF


def _result(kept_xy: list[tuple[float, float]], measured: int, invalid: int, min_points: int,
            restricted: bool, indices: list[int]) -> FrontierResult:
    ok = invalid == 0 and len(kept_xy) >= min_points
    return FrontierResult(kept_xy, measured, invalid, PASS if ok else WARN, min_points, restricted, indices)


def frontier(points: Sequence[tuple[float, float]] | Sequence[PerfPoint], *,
             flags: Sequence[bool | None] | None = None, min_points: int = RECOMMENDED_POINTS,
             extra_invalid: int = 0) -> FrontierResult:
    """Count one curve exactly as spec 10.2.

    `flags[i]` is point i's isOnNormalizedInteractivityFrontier (None = not carried); for
    PerfPoints it is read from `point.flags` unless given. If any point carries it, the
    frontier is computed over all valid points and then intersected with flagged ones.
    `extra_invalid` adds invalid rows that never became points (missing metrics).
    """
    n = len(points)
    if n and isinstance(points[0], PerfPoint):
        pairs = [(p.x, p.y) for p in points]  # type: ignore[union-attr]
        if flags is None:
            flags = [p.flags.get(INTERACTIVITY_FLAG) for p in points]  # type: ignore[union-attr]
    else:
        pairs = points  # type: ignore[assignment]
    has_flags = flags is not None and any(f is not None for f in flags)
    measured = n + extra_invalid
    if not has_flags:
        try:
            # NaN fails every comparison, so the chained test drops NaN, inf and <= 0 at once.
            valid = [p for p in pairs if 0.0 < p[0] < _INF and 0.0 < p[1] < _INF]
        except TypeError:  # None, strings: fall back to a typed check per value
            valid = [(float(x), float(y)) for x, y in pairs if _is_valid(x) and _is_valid(y)]
        invalid = n - len(valid) + extra_invalid
        kept = _upper_right(valid)
        return _result([(x, y) for x, y, *_ in kept], measured, invalid, min_points, False, [])
    assert flags is not None
    indexed = [(float(x), float(y), i) for i, (x, y) in enumerate(pairs) if _is_valid(x) and _is_valid(y)]
    invalid = n - len(indexed) + extra_invalid
    kept3 = [k for k in _upper_right(indexed) if flags[k[2]] is True]  # intersect after (step 4)
    return _result([(x, y) for x, y, _ in kept3], measured, invalid, min_points, True, [i for *_, i in kept3])


def count_curves(points: Iterable[PerfPoint] | ThroughputSet, *,
                 min_points: int = RECOMMENDED_POINTS) -> dict[CurveKey, FrontierResult]:
    """One FrontierResult per curve key, pooling every point of a key (spec 10.1).

    Given a ThroughputSet, its invalid rows that carry a curve key count against that curve.
    """
    groups: dict[CurveKey, list[PerfPoint]] = defaultdict(list)
    extra: dict[CurveKey, int] = defaultdict(int)
    if isinstance(points, ThroughputSet):
        for row in points.invalid:
            if row.curve_key is not None:
                extra[row.curve_key] += 1
                groups.setdefault(row.curve_key, [])
        points = points.points
    for p in points:
        groups[p.curve_key].append(p)
    return {
        key: frontier(groups[key], min_points=min_points, extra_invalid=extra.get(key, 0))
        for key in sorted(groups)
    }


def _fmt(v: float) -> str:
    return f"{v:.6g}"


def _sample(items: list, limit: int) -> list:
    if limit <= 0:
        return []
    if len(items) <= limit:
        return items
    if limit == 1:
        return items[:1]
    step = (len(items) - 1) / (limit - 1)
    return [items[round(i * step)] for i in range(limit)]


def _label(text: str) -> str:
    # Mermaid strings cannot contain double quotes or line breaks.
    return " ".join(str(text).replace('"', "'").split())


def nice_ceiling(v: float) -> float:
    """The smallest of 1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8 x 10^k at or above `v` (> 0): an axis
    end whose half is a round number too."""
    exp = math.floor(math.log10(v))
    for step in CHART_NICE_STEPS:
        top = step * 10.0 ** exp
        if top >= v * (1 - 1e-12):
            return float(f"{top:.12g}")
    return float(f"{10.0 ** (exp + 1):.12g}")


def _short(v: float) -> str:
    """3 400 -> 3.4k, 131 500 -> 131.5k, 2.5 -> 2.5: a point's or an axis' figure."""
    if v >= 1_000_000:
        return f"{v / 1_000_000:.4g}M"
    if v >= 1_000:
        return f"{v / 1_000:.4g}k"
    return f"{v:.4g}"


def chart_position(v: float, top: float) -> float:
    """Where `v` sits on an axis from 0 to `top` (the chart's 0..1, inside equal margins), so
    equal distances in E2EL or throughput are equal distances on the chart."""
    return round(CHART_MARGIN + (1 - 2 * CHART_MARGIN) * v / top, 4)


def _box(px: float, py: float, text: str) -> tuple[float, float, float, float]:
    """The pixels (left, top, right, bottom) a point's label covers: centred under the point."""
    x, y = px * CHART_PLOT_PX[0], (1 - py) * CHART_PLOT_PX[1]
    half = len(text) * CHART_LABEL_CHAR_PX / 2
    return x - half, y + CHART_LABEL_OFFSET_PX, x + half, y + CHART_LABEL_OFFSET_PX + CHART_LABEL_HEIGHT_PX


def _labelled(front: list[tuple[float, float]], texts: list[str], others: list[tuple[float, float]]) -> set[int]:
    """Which frontier points get their figures written under them: the first and the last, then
    each other one whose label covers neither another label nor another point."""
    boxes: list[tuple[float, float, float, float]] = []
    dots = [(x * CHART_PLOT_PX[0], (1 - y) * CHART_PLOT_PX[1]) for x, y in front + others]
    keep: set[int] = set()
    r = CHART_POINT_RADIUS_PX
    for i in [len(front) - 1, 0, *range(1, len(front) - 1)]:
        if i in keep:
            continue
        box = _box(*front[i], texts[i])
        clear = (all(box[2] < b[0] or b[2] < box[0] or box[3] < b[1] or b[3] < box[1] for b in boxes)
                 and all(not (box[0] - r < dx < box[2] + r and box[1] - r < dy < box[3] + r)
                         for j, (dx, dy) in enumerate(dots) if j != i))
        if clear or i in (0, len(front) - 1):
            keep.add(i)
            boxes.append(box)
    return keep


def mermaid_chart(curve_name: str, result: FrontierResult, measured: Sequence[tuple[float, float]] = (), *,
                  max_points: int = CHART_MAX_POINTS, max_other: int = CHART_MAX_OTHER) -> str:
    """A GitHub-rendered Mermaid `quadrantChart` of one curve: every measured point where its E2EL
    and throughput put it on linear axes from 0 (so distances read true), the frontier's points
    large and blue with their figures, the points off the frontier small and orange. The two
    middle lines split each axis at half its range; the axis texts name that value. Colours are
    set by the chart's own init directive, the same on GitHub's light and dark pages.
    "" when there is nothing to plot."""
    front = _sample(result.frontier, max_points)
    if not front:
        return ""
    # A million points need not be sorted (or even looked at) to draw forty: an even stride
    # first, then the order. The frontier is a part of the valid points, each once; the rest,
    # counted as the verdict row counts them, are the points off it.
    stride = max(1, len(measured) // _SAMPLE_SIZE)
    sample = list(measured[::stride])
    try:
        # As in frontier(): the chained test drops NaN, inf and <= 0 at once.
        valid = [(x, y) for x, y in sample if 0.0 < x < _INF and 0.0 < y < _INF]
    except TypeError:
        valid = [(float(x), float(y)) for x, y in sample if _is_valid(x) and _is_valid(y)]
    off = max(0, result.measured - result.invalid - len(result.frontier)) if measured else 0
    on_frontier = Counter(result.frontier) if stride == 1 else Counter(set(result.frontier))
    others = []
    for point in valid:
        if on_frontier[point] > 0:
            on_frontier[point] -= 1
        else:
            others.append(point)
    shown_others = _sample(sorted(others), max_other)
    x_top = nice_ceiling(max(x for x, _ in front + shown_others))
    y_top = nice_ceiling(max(y for _, y in front + shown_others))
    title = f"{_label(curve_name)} ({_label(result.summary())})"
    if len(front) < len(result.frontier) or len(shown_others) < off:
        title += f", {len(front)} of {len(result.frontier)} frontier and {len(shown_others)} of {off} other points shown"
    legend = MSG_CHART_LEGEND.format(n=len(result.frontier), other=off)
    lines = [
        "```mermaid",
        CHART_INIT,
        "quadrantChart",
        f"    title {title}",
        f'    x-axis "{CHART_X_LABEL} below {_short(x_top / 2)} s" --> "above {_short(x_top / 2)} s"',
        f'    y-axis "{CHART_Y_LABEL} below {_short(y_top / 2)}" --> "above {_short(y_top / 2)}"',
        f'    quadrant-2 "{legend}"',
        f"    classDef f color: {CHART_FRONTIER_COLOUR}, radius: 6",
        f"    classDef o color: {CHART_OTHER_COLOUR}, radius: 4",
    ]
    # Mermaid draws the points in the reverse of their order here: the labelled frontier points
    # come first so that no other point is drawn over them or their figures.
    placed = [(chart_position(x, x_top), chart_position(y, y_top)) for x, y in front]
    placed_others = [(chart_position(x, x_top), chart_position(y, y_top)) for x, y in shown_others]
    texts = [f"{_short(x)} s, {_short(y)}" for x, y in front]
    named = _labelled(placed, texts, placed_others)
    for i in sorted(range(len(front)), key=lambda i: i not in named):
        lines.append(f'    "{texts[i] if i in named else " "}":::f: [{placed[i][0]}, {placed[i][1]}]')
    for px, py in placed_others:
        lines.append(f'    " ":::o: [{px}, {py}]')
    lines.append("```")
    return "\n".join(lines)
