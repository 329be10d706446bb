"""The Pareto coverage counter (spec 10.2 "upper_right" frontier) and its Mermaid chart.

A sort plus one pass (after a provably safe prefilter): 10^6 points count in well under a
second without numpy.
"""
from __future__ import annotations

import math
from bisect import bisect_left
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable, Literal, Sequence

from .artifacts import INTERACTIVITY_FLAG, CurveKey, PerfPoint, ThroughputSet

RECOMMENDED_POINTS = 5  # spec 10.2 step 5
PASS: Literal["PASS"] = "PASS"
WARN: Literal["WARN"] = "WARN"
_INF = math.inf
_PREFILTER_MIN = 20_000
_SAMPLE_SIZE = 4_096

CHART_X_LABEL = "E2EL (s)"
CHART_Y_LABEL = "tok/s/GPU"
CHART_MAX_POINTS = 40  # keeps the verdict comment small; the count is never sampled
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
    if len(items) <= limit:
        return items
    step = (len(items) - 1) / (limit - 1)
    return [items[round(i * step)] for i in range(limit)]


def _label(text: str) -> str:
    # Mermaid strings cannot contain double quotes or line breaks.
    return " ".join(str(text).replace('"', "'").split())


def mermaid_chart(curve_name: str, result: FrontierResult, *, max_points: int = CHART_MAX_POINTS) -> str:
    """A GitHub-rendered `xychart-beta` of the frontier; "" when there is nothing to plot."""
    pts = _sample(result.frontier, max_points)
    if not pts:
        return ""
    top = max(y for _, y in pts)
    lines = [
        "```mermaid",
        "xychart-beta",
        f'    title "{_label(curve_name)} ({_label(result.summary())})"',
        f'    x-axis "{CHART_X_LABEL}" [{", ".join(_fmt(x) for x, _ in pts)}]',
        f'    y-axis "{CHART_Y_LABEL}" 0 --> {_fmt(math.ceil(top * 1.1))}',
        f"    line [{', '.join(_fmt(y) for _, y in pts)}]",
        "```",
    ]
    return "\n".join(lines)
