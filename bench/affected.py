"""Benchmark: how many benchmark points each real PR affects, by the textual reach rule alone
and with the trace deciding (recipes.launch.path.trace_affected), on the history of a benchmark repository.

Each first-parent commit of main that touches the perf-changelog is taken as the PR it merged
(base = its first parent), as `bench/replay.py` does. For each, the affected points are worked
out twice on one snapshot: with policy `trace_affected` off (the textual rule: every point whose
launch path holds a changed file) and on (the points reached only through shared files are
traced at the base and the head; a point stays affected only when what it runs changed). It
prints the counts per commit that differ, the distribution of both (median, p95, max, total),
the client-only points, and the CPU time of each computation.

    python bench/affected.py --ix PATH [--external-repo NVIDIA/srt-slurm=DIR] [--since DATE]
                             [--until DATE] [--sample N] [--commits FILE] [--json]

The history is not part of this repository (DEVELOPERS.md says how to get it); nothing here
runs in CI.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from datetime import date
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from bench.replay import pr_commits  # noqa: E402
from bot.local import build_local_snapshot, external_repos  # noqa: E402
from checks.context import ReviewContext  # noqa: E402


def affected(snapshot, traced: bool) -> tuple[list, float]:
    """The affected points and the CPU seconds they took, with the trace deciding or not."""
    ctx = ReviewContext(snapshot)
    config = ctx.config
    ctx.__dict__["config"] = config.model_copy(
        update={"policy": config.policy.model_copy(update={"trace_affected": traced})})
    start = time.process_time()
    points = ctx.affected.points
    return points, time.process_time() - start


def check_shortcut(snapshot) -> dict:
    """The points the shortcut decided on one snapshot, each checked by the full comparison."""
    import recipes.launch.path.trace_affected as ta
    from recipes.launch.compare import compare, opaque
    from recipes.launch.point import is_client_install

    decided: list = []
    original = ta.unreached

    def spy(ctx, point, head):
        out = original(ctx, point, head)
        if out:
            decided.append(point)
        return out

    ta.unreached = spy
    try:
        ctx = ReviewContext(snapshot)
        ctx.affected  # noqa: B018 (computes the affected points, deciding by the shortcut)
    finally:
        ta.unreached = original
    if decided:  # the check traces past the review's budget
        ctx.memo(ta.MEMO_BUDGET, lambda: None).steps = 10 ** 12
    packages = ctx.config.policy.benchmark_client_packages
    agree, wrong = 0, []
    for point in decided:
        base, head = ta.point_traces(ctx, point)
        hidden = next((e for e in base.effects() if opaque(e)), None)
        diff = compare(base.effects(), head.effects(), lambda e: is_client_install(e, packages))
        if diff is None and hidden is None:
            agree += 1
        else:
            wrong.append(f"{point.config_key}: {diff.reason() if diff else hidden.describe()}"[:300])
    return {"decided": len(decided), "agree": agree, "wrong": wrong}


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ix", required=True, help="a git work tree of the benchmark repository's history")
    ap.add_argument("--external-repo", action="append", default=[], metavar="OWNER/NAME=DIR")
    ap.add_argument("--since")
    ap.add_argument("--until")
    ap.add_argument("--sample", type=int, help="this many commits spread evenly over the range")
    ap.add_argument("--commits", help="only the commits listed in this file (one SHA per line)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--check-shortcut", action="store_true",
                    help="check every point the shortcut decided against the full base-vs-head comparison")
    args = ap.parse_args(argv)
    commits = pr_commits(args.ix, args.since, args.until)
    if args.commits:
        wanted = {line.strip() for line in Path(args.commits).read_text().splitlines() if line.strip()}
        commits = [c for c in commits if c[0] in wanted or c[0][:10] in wanted]
    if args.sample and len(commits) > args.sample:
        step = len(commits) / args.sample
        commits = [commits[int(i * step)] for i in range(args.sample)]
    external = external_repos(args.external_repo) if args.external_repo else None
    rows = []
    for sha, when, subject in commits:
        try:
            snap = build_local_snapshot(args.ix, f"{sha}^1", sha, review_date=date.fromisoformat(when[:10]),
                                        external=external)
            before, t_before = affected(snap, traced=False)
            after, t_after = affected(snap, traced=True)
            checked = check_shortcut(snap) if args.check_shortcut else None
        except Exception as e:  # a commit the local mode cannot read is reported, not fatal
            rows.append({"sha": sha[:10], "error": f"{type(e).__name__}: {e}"})
            continue
        rows.append({"sha": sha[:10], "subject": subject[:70], "before": len(before), "after": len(after),
                     "client_only": sum(p.scope == "client" for p in after),
                     "textual_s": round(t_before, 3), "traced_s": round(t_after, 3),
                     "example": next((p.reasons[-1] for p in after if p.reasons), "")[:200]})
        if checked is not None:
            rows[-1]["shortcut"] = checked
        if not args.json:
            r = rows[-1]
            if r["before"] != r["after"]:
                print(f"{r['sha']} {r['before']:5} -> {r['after']:5} ({r['client_only']} client) {r['subject']}")
    ok = [r for r in rows if "error" not in r]
    before = [r["before"] for r in ok]
    after = [r["after"] for r in ok]
    summary = {
        "commits": len(rows), "errors": sum("error" in r for r in rows),
        "before": {"median": statistics.median(before) if before else 0, "p95": pct(before, 0.95),
                   "max": max(before, default=0), "total": sum(before)},
        "after": {"median": statistics.median(after) if after else 0, "p95": pct(after, 0.95),
                  "max": max(after, default=0), "total": sum(after)},
        "fewer": sum(a < b for a, b in zip(after, before)), "more": sum(a > b for a, b in zip(after, before)),
        "client_only": sum(r["client_only"] for r in ok),
        "traced_s": {"median": statistics.median([r["traced_s"] for r in ok]) if ok else 0,
                     "p95": pct([r["traced_s"] for r in ok], 0.95), "max": max((r["traced_s"] for r in ok), default=0)},
        "textual_s": {"median": statistics.median([r["textual_s"] for r in ok]) if ok else 0,
                      "p95": pct([r["textual_s"] for r in ok], 0.95)},
    }
    if args.check_shortcut:
        summary["shortcut"] = {"decided": sum(r["shortcut"]["decided"] for r in ok),
                               "agree": sum(r["shortcut"]["agree"] for r in ok),
                               "wrong": [f"{r['sha']} {w}" for r in ok for w in r["shortcut"]["wrong"]]}
    if args.json:
        print(json.dumps({"summary": summary, "rows": rows}, indent=2))
    else:
        print(json.dumps(summary, indent=2))
        for r in rows:
            if "error" in r:
                print("error", r["sha"], r["error"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
