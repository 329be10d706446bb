"""Benchmark: time to load and fully expand a benchmark repository (masters, points, recipes, bindings).

Wall time per stage, and the CPU time of the whole load (`cpu`), which other work on a shared
machine disturbs far less than wall time."""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from recipes.repository import Repository, clear_parse_cache  # noqa: E402
from recipes.source import DirSource  # noqa: E402

DEFAULT_REPO = PROJECT.parent / "shared" / "inferencex"
DEFAULT_RUNS = 7
TARGET_MS = 200.0


def _ms(seconds: float) -> float:
    return round(seconds * 1000.0, 1)


def measure_once(root: Path, cold: bool) -> dict[str, float]:
    """One run with a fresh Repository. Cold clears the process-wide parse cache first (a first
    review); warm keeps it (the head view of a PR after the base view was built)."""
    if cold:
        clear_parse_cache()
    c0 = time.process_time()
    t0 = time.perf_counter()
    repo = Repository(DirSource(root))
    _ = repo.entries
    t1 = time.perf_counter()
    _ = repo.points
    t2 = time.perf_counter()
    _ = repo.recipes
    t3 = time.perf_counter()
    _ = repo.bindings
    _ = repo.model_findings
    t4 = time.perf_counter()
    c4 = time.process_time()
    return {
        "masters_ms": _ms(t1 - t0), "points_ms": _ms(t2 - t1), "recipes_ms": _ms(t3 - t2),
        "bindings_ms": _ms(t4 - t3), "total_ms": _ms(t4 - t0), "cpu_ms": _ms(c4 - c0),
        "entries": len(repo.entries), "points": len(repo.points), "recipes": len(repo.recipes),
        "findings": len(repo.model_findings),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repo", default=str(DEFAULT_REPO), help="benchmark repository checkout")
    ap.add_argument("--runs", type=int, default=DEFAULT_RUNS)
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    root = Path(args.repo)
    if not root.is_dir():
        print(f"no repository at {root}", file=sys.stderr)
        return 2
    n = max(1, args.runs)
    figures: dict[str, object] = {"runs": n, "repo": str(root), "target_ms": TARGET_MS}
    for mode in ("cold", "warm"):
        runs = [measure_once(root, cold=mode == "cold") for _ in range(n)]
        figures[mode] = {k: statistics.median(r[k] for r in runs) for k in runs[0] if k.endswith("_ms")}
        figures.update({k: runs[0][k] for k in ("entries", "points", "recipes", "findings")})
    if args.json:
        print(json.dumps(figures, sort_keys=True))
        return 0
    print(f"core load+expand of {root} (median of {n} runs, fresh Repository each):")
    print(f"  {'stage':<9} {'cold':>8} {'warm':>8}")
    for k in ("masters_ms", "points_ms", "recipes_ms", "bindings_ms", "total_ms", "cpu_ms"):
        print(f"  {k[:-3]:<9} {figures['cold'][k]:>8.1f} {figures['warm'][k]:>8.1f} ms")
    print(f"  {figures['entries']} entries, {figures['points']} points, {figures['recipes']} recipes, "
          f"{figures['findings']} findings; target {TARGET_MS:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
