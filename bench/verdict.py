"""Benchmark: one GitHub-mode verdict (`python -m bot check PR#`) against the local emulator serving
the seed world: whole-process wall time, requests per verdict (by endpoint), the round trips that
100 ms of latency per request adds, and how requests grow on a generated world with 300 changed
files and 300 comments."""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from ghsim import Emulator  # noqa: E402

SEED = PROJECT / "ghsim" / "worlds" / "seed"
REVIEW_DATE = "2026-11-29"
DEFAULT_RUNS = 5
LATENCY_MS = 100
LATENCY_RUNS = 3
GENERATED_FILES = 300
GENERATED_COMMENTS = 300
TARGET_WALL_S = 1.5
TARGET_REQUESTS = 20
TARGET_ROUND_TRIPS = 8
TARGET_LATENCY_S = TARGET_ROUND_TRIPS * LATENCY_MS / 1000
TARGET_GROWN_REQUESTS = 40
TOP_ENDPOINTS = 8


def run_check(emu: Emulator, *, post: bool = False) -> tuple[float, int, Counter]:
    """(wall seconds, exit code, requests served by endpoint) for one `python -m bot check` process."""
    emu.reset_counters()
    env = dict(os.environ, GITHUB_TOKEN=emu.world.bot.token)
    env.pop("GITHUB_STEP_SUMMARY", None)
    cmd = [sys.executable, "-m", "bot", "check", str(emu.world.pr.number), "--repo", emu.world.repo,
           "--github-url", emu.url, "--review-date", REVIEW_DATE, "--format", "json"]
    if post:
        cmd.append("--post")
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=PROJECT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"check failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    return wall, proc.returncode, Counter(emu.requests)


def generate_world(dest: Path, files: int, comments: int) -> Path:
    """The seed world plus `files` added files in its first commit and `comments` more comments."""
    shutil.copytree(SEED, dest)
    overlay = dest / "commits" / "c1" / "inferencex-e2e" / "docs" / "generated"
    overlay.mkdir(parents=True)
    for i in range(files):
        (overlay / f"note_{i:03d}.md").write_text(f"# Generated note {i}\n\nLine {i}.\n", encoding="utf-8")
    world_file = dest / "world.yaml"
    world = yaml.safe_load(world_file.read_text(encoding="utf-8"))
    extra = [{"author": f"user{i % 7}", "association": "NONE", "body": f"comment {i}",
              "created_at": f"2026-10-08T{10 + i // 60:02d}:{i % 60:02d}:00Z"} for i in range(comments)]
    world["pr"]["comments"] = extra + world["pr"]["comments"]
    world_file.write_text(yaml.safe_dump(world, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--runs", type=int, default=DEFAULT_RUNS, help="runs per timing (median reported)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    n = max(1, args.runs)

    with Emulator(SEED, strict=True) as emu:
        walls, counts = [], []
        for _ in range(n):
            wall, _, count = run_check(emu)
            walls.append(wall)
            counts.append(count)
        _, _, posted = run_check(emu, post=True)
        emu.assert_clean()
    with Emulator(SEED, strict=True, latency_ms=LATENCY_MS) as emu:
        slow = [run_check(emu)[0] for _ in range(min(n, LATENCY_RUNS))]
        emu.assert_clean()
    with tempfile.TemporaryDirectory(prefix="infx-bench-") as tmp:
        big = generate_world(Path(tmp) / "world", GENERATED_FILES, GENERATED_COMMENTS)
        with Emulator(big, strict=True) as emu:
            _, _, grown_count = run_check(emu)
            emu.assert_clean()

    reads = max(counts, key=lambda c: sum(c.values()))
    requests, grown = sum(reads.values()), sum(grown_count.values())
    wall, wall_slow = statistics.median(walls), statistics.median(slow)
    round_trips = (wall_slow - wall) / (LATENCY_MS / 1000)
    figures = {
        "runs": n,
        "wall_s_median": round(wall, 3),
        "wall_s_target": TARGET_WALL_S,
        "requests_per_verdict": requests,
        "requests_per_verdict_with_post": sum(posted.values()),
        "requests_target": TARGET_REQUESTS,
        "requests_by_endpoint": dict(reads.most_common()),
        "latency_ms_per_request": LATENCY_MS,
        "wall_s_with_latency_median": round(wall_slow, 3),
        "latency_added_s": round(wall_slow - wall, 3),
        "latency_round_trips": round(round_trips, 1),
        "latency_round_trips_target": TARGET_ROUND_TRIPS,
        "latency_added_s_target": TARGET_LATENCY_S,
        "generated_world": {"changed_files_added": GENERATED_FILES, "comments_added": GENERATED_COMMENTS},
        "requests_generated_world": grown,
        "requests_growth": grown - requests,
        "requests_generated_target": TARGET_GROWN_REQUESTS,
        "requests_generated_by_endpoint": dict((grown_count - reads).most_common()),
    }
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"whole-process wall time (median of {n}): {wall:.3f} s (target <= {TARGET_WALL_S} s)")
        print(f"requests per verdict: {requests} reads, {figures['requests_per_verdict_with_post']} with --post "
              f"(target <= {TARGET_REQUESTS} reads)")
        print("requests by endpoint:")
        for route, count in reads.most_common(TOP_ENDPOINTS):
            print(f"  {count:3d}  {route}")
        rest = reads.most_common()[TOP_ENDPOINTS:]
        if rest:
            print(f"  {sum(c for _, c in rest):3d}  ({len(rest)} other endpoints)")
        print(f"wall time with {LATENCY_MS} ms per request: {wall_slow:.3f} s, {wall_slow - wall:.3f} s added = "
              f"{round_trips:.1f} round trips (target <= {TARGET_ROUND_TRIPS})")
        extra = ", ".join(f"+{c} {r.split(' ', 1)[1]}" for r, c in (grown_count - reads).most_common())
        print(f"requests with +{GENERATED_FILES} changed files and +{GENERATED_COMMENTS} comments: {grown} "
              f"(+{figures['requests_growth']}: {extra or 'none'}; target <= {TARGET_GROWN_REQUESTS})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
