"""Benchmark: time the Pareto frontier counter on N random points (target: 10^6 in < 1 s)."""
from __future__ import annotations

import argparse
import json
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from recipes.pareto import frontier  # noqa: E402

TARGET_SECONDS = 1.0
DEFAULT_POINTS = 1_000_000
DEFAULT_RUNS = 5


def make_points(n: int, seed: int = 1) -> list[tuple[float, float]]:
    """Latency/throughput-like cloud: throughput grows with latency, with noise and a few bad rows."""
    rng = random.Random(seed)
    pts = []
    for _ in range(n):
        x = rng.uniform(0.5, 120.0)
        y = 3000.0 * (1.0 - 1.0 / (1.0 + x / 10.0)) * rng.uniform(0.6, 1.0)
        pts.append((x, y))
    for i in range(0, n, 100_000):  # sprinkle invalid evidence so the filter path is exercised
        pts[i] = (float("nan"), 1.0)
    return pts


def run(n: int, runs: int) -> dict:
    pts = make_points(n)
    times = []
    result = None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = frontier(pts)
        times.append(time.perf_counter() - t0)
    assert result is not None
    median = statistics.median(times)
    return {
        "points": n,
        "runs": runs,
        "median_seconds": round(median, 4),
        "min_seconds": round(min(times), 4),
        "max_seconds": round(max(times), 4),
        "frontier_points": result.frontier_points,
        "invalid_points": result.invalid,
        "target_seconds": TARGET_SECONDS,
        "within_target": median < TARGET_SECONDS or n > DEFAULT_POINTS,
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--points", type=int, default=DEFAULT_POINTS)
    ap.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    ap.add_argument("--json", action="store_true", help="print one JSON object of figures")
    args = ap.parse_args(argv)
    figures = run(args.points, max(1, args.runs))
    if args.json:
        print(json.dumps(figures, sort_keys=True))
    else:
        print(
            f"pareto: {figures['points']} points, median {figures['median_seconds']:.3f} s "
            f"(min {figures['min_seconds']:.3f}, max {figures['max_seconds']:.3f}) over {figures['runs']} runs; "
            f"{figures['frontier_points']} frontier, {figures['invalid_points']} invalid; "
            f"target < {TARGET_SECONDS:.1f} s: {'ok' if figures['within_target'] else 'MISSED'}"
        )
    return 0 if figures["within_target"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
