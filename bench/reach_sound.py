"""Benchmark: is the textual reach rule a superset of what the traces depend on?

For a repository tree, every benchmark point is traced the way a review traces it
(`recipes.launch.path.trace_affected.tracer`, with the review's srt-slurm hook; the points of one arm share a
trace) and the repository files each trace depends on are collected
(`recipes.launch.point.PointTrace.files`: the runner scripts, every file read, sourced or run,
the files effects name with a digest, the recipe and its setup script, each path found absent).
Those are compared with the files the reach rule (`recipes.launch.path.launch_path`) puts on the point's
launch path. A (point, file) pair the trace depends on but the rule does not list is a miss: a
PR changing only that file would leave the point out of the candidates `Context.affected`
traces. It prints the points, the distinct traces, the CPU per trace (median, p95, max) and
the misses grouped by class (how the trace reaches the file).

    python bench/reach_sound.py [--shared DIR] [--ix PATH [--sample N] [--commits SHA,...]]
                                [--external-repo OWNER/NAME=DIR] [--json]

`--shared` is the data snapshot (../shared/inferencex, MANIFEST.md); `--ix` a work tree of the
benchmark repository's history, whose perf-changelog commits are sampled across its eras.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import defaultdict
from datetime import date
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from checks.context import ReviewContext, _launcher_path  # noqa: E402
from checks.snapshot import PRSnapshot  # noqa: E402
from recipes.launch.fs import WORKSPACE  # noqa: E402
from recipes.launch.point import Budget  # noqa: E402

EXAMPLE_CONFIG = PROJECT / "examples" / "inferencex" / "infx-review.yml"
# Classes of a miss, by how the trace reaches the file.
CLASS_ABSENT = "absent at this tree (probed by a test or a source)"
# A path under a folder the launch itself makes (a clone, a venv): not this repository's file.
CLASS_CREATED = "under a folder the launch creates (a clone, a venv)"
# The policy's `benchmark_client_paths` change what is measured, not what is served: no point's
# serving depends on them (docs/architecture.md), so they are listed, never a miss.
CLASS_CLIENT = "a benchmark client file (benchmark_client_paths)"
# A path found absent is a dependency only of a PR that adds it: the reach rule reads the head,
# where an added file exists, so these are listed for reading, a few of them.
SHOWN_ABSENT = 8
CLASS_READ = "read by the interpreter without an effect naming it (a test, cat, a lookup)"


def dir_snapshot(root: Path, config: Any) -> PRSnapshot:
    """A snapshot whose base and head are the folder `root` (no change)."""
    from recipes.source import DirSource

    src = DirSource(root)
    return PRSnapshot(repo="owner/repo", number=1, base=src, head=src, review_date=date.today(), config=config)


def example_config() -> Any:
    from recipes.config import RepoConfig
    from recipes.yamlio import load_yaml

    data = load_yaml(EXAMPLE_CONFIG.read_bytes(), str(EXAMPLE_CONFIG)).data
    return RepoConfig.model_validate(data)


def reach_files(ctx: ReviewContext, point: Any) -> set[str]:
    """The repository files the reach rule puts on a point's launch path at this tree: a PR that
    changes one of them makes the point a candidate (its own launcher, entry files, the launch
    path from its roots with no name filter, the runner-chosen chain and its settings files)."""
    from recipes.launch.path import launch_path as lp
    from recipes.launch.path.runner_launch import chain_path, runner_chain
    from recipes.launch.path.srt_checkout import copied_recipe

    out: set[str] = set()
    for attr in ("launcher", "eval_launcher"):
        p = _launcher_path(point, attr)
        if p:
            out.add(p)
    out.update(getattr(point, "referenced_paths", ()) or ())
    copied = copied_recipe(ctx, point)  # the file a runner copies in at a cloned CONFIG_FILE path
    if copied:
        out.add(copied)
    roots = lp.point_roots(ctx, point, runners=True)
    out.update(lp.launch_path(ctx, roots).files)
    if getattr(point, "launcher", None) is None:
        chain = runner_chain(ctx, point)
        if chain is not None:
            out.update(chain_path(ctx, chain).files)
            out.update(entry.path for _, _, entry in chain.entries)
    return out


def probed(ctx: ReviewContext, point: Any, path: str, memo: dict) -> bool:
    """Whether `Context.affected` would trace the point if a PR changed only `path`: one of its
    roots (launcher, recipe scripts, runner scripts) can lead to the file's name, or to a file
    that runs a word built from expansions that can name it (recipes.launch.path.reach.blind_files)."""
    from recipes.launch.path import launch_path as lp
    from recipes.launch.path.reach import blind_files, reach_names

    repo, src = ctx.head_repo, ctx.snapshot.head
    if ("names", path) not in memo:
        memo[("names", path)] = reach_names(repo, src, [path]) | reach_names(repo, src, blind_files(repo, src, [path]))
    key = ("roots", getattr(point, "launcher", None) and point.launcher.path, point.runner, point.config_key)
    if key not in memo:
        roots = lp.point_roots(ctx, point, runners=True)
        memo[key] = {p.rsplit("/", 1)[-1] for p, _ in roots.files}, [a for _, a in roots.commands]
    names, commands = memo[key]
    wanted = memo[("names", path)]
    return bool(names & wanted) or any(n in c.text for a in commands for c in a.commands for n in wanted)


def classify(ctx: ReviewContext, trace: Any, path: str) -> str:
    """How a trace reaches a repository file: the kind of the first effect that names it."""
    client = tuple(ctx.head_repo.layout.rel(d) for d in ctx.config.policy.benchmark_client_paths)
    if path.startswith(client):
        return CLASS_CLIENT
    try:
        classified = CLASS_ABSENT if ctx.snapshot.head.read(path) is None else ""
    except OSError:
        classified = CLASS_ABSENT
    host = f"{WORKSPACE}/{path}"
    if classified == CLASS_ABSENT and any(
            e.kind == "write" and isinstance(e.path, str) and host.startswith(e.path.rstrip("/") + "/")
            for e in trace.effects()):
        return CLASS_CREATED
    for e in trace.effects():
        named = isinstance(e.path, str) and (e.path == host or e.path.endswith(":" + host))
        if named or any(p == path for p, _ in e.files):
            how = f" ({e.how})" if e.how and e.kind != "server" else ""
            if e.kind == "exec" and e.argv and isinstance(e.argv[0], str):
                how = f" `{e.argv[0].rsplit('/', 1)[-1]}`"
            return f"{e.kind}{how}{' [client]' if e.client else ''}" + ("" if named else " names it (files digest)")
    return classified or CLASS_READ


def measure(ctx: ReviewContext, label: str) -> dict:
    """Trace every point of the tree; the misses of the reach rule."""
    from recipes.launch.path import trace_affected as ta

    ctx._memo[ta.MEMO_BUDGET] = Budget(10 ** 12)  # every point, whatever it costs
    tracer = ta.tracer(ctx, "head")
    times: list[float] = []
    interpret = tracer._interpret

    def timed(*a: Any, **k: Any) -> Any:
        t = time.process_time()
        try:
            return interpret(*a, **k)
        finally:
            times.append(time.process_time() - t)

    tracer._interpret = timed  # type: ignore[method-assign]
    points = list(ctx.head_repo.points)
    start = time.process_time()
    misses: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    text_only: dict[str, int] = defaultdict(int)
    root_names: dict = {}
    traces: dict[int, Any] = {}
    untraced = 0
    for point in points:
        pt = ta.head_trace(ctx, point)
        if pt is None:
            untraced += 1
            continue
        traces[id(tuple(id(t) for t in pt.runners.values()))] = pt
        reach = reach_files(ctx, point)
        for path in sorted(pt.files - reach):
            cls = classify(ctx, pt, path)
            text_only[cls] += 1
            if cls not in (CLASS_CREATED, CLASS_CLIENT) and not probed(ctx, point, path, root_names):
                misses[cls][path].append(getattr(point, "config_key", "?"))
    total = time.process_time() - start
    out = {
        "tree": label, "points": len(points), "untraced": untraced, "runner_traces": len(times),
        "cpu_all_s": round(total, 2),
        "cpu_per_trace_s": {"median": round(statistics.median(times), 4) if times else 0,
                            "p95": round(sorted(times)[int(0.95 * (len(times) - 1))], 4) if times else 0,
                            "max": round(max(times, default=0), 4), "total": round(sum(times), 2)},
        "outside_text_path": dict(text_only),
        "misses": {cls: {p: sorted(set(keys)) for p, keys in files.items()} for cls, files in misses.items()},
    }
    return out


def show(result: dict) -> None:
    c = result["cpu_per_trace_s"]
    print(f"{result['tree']}: {result['points']} points, {result['runner_traces']} distinct runner traces, "
          f"CPU per trace median {c['median']} s, p95 {c['p95']} s, max {c['max']} s; "
          f"tracing every point {c['total']} s, with the reach rule {result['cpu_all_s']} s")
    outside = result["outside_text_path"]
    if outside:
        print("  outside the textual launch path, traced by the probe: "
              + ", ".join(f"{n} ({cls})" for cls, n in sorted(outside.items())))
    if not result["misses"]:
        print("  no miss: every file a trace depends on is on the point's launch path or probed")
    for cls, files in sorted(result["misses"].items()):
        pairs = sum(len(k) for k in files.values())
        print(f"  miss class: {cls}: {len(files)} files, {pairs} (point, file) pairs")
        listed = sorted(files.items())
        for path, keys in listed[:SHOWN_ABSENT] if cls == CLASS_ABSENT else listed:
            print(f"    {path}: {len(keys)} config keys, e.g. {', '.join(keys[:3])}")
        if cls == CLASS_ABSENT and len(listed) > SHOWN_ABSENT:
            print(f"    ... ({len(listed) - SHOWN_ABSENT} more)")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shared", help="the data snapshot folder (../shared/inferencex)")
    ap.add_argument("--ix", help="a git work tree of the benchmark repository's history")
    ap.add_argument("--sample", type=int, default=0, help="this many perf-changelog commits across the history")
    ap.add_argument("--commits", default="", help="these commits (comma-separated) of --ix")
    ap.add_argument("--external-repo", action="append", default=[], metavar="OWNER/NAME=DIR")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    results = []
    if args.shared:
        results.append(measure(ReviewContext(dir_snapshot(Path(args.shared), example_config())), "shared snapshot"))
    if args.ix:
        from bench.replay import pr_commits
        from bot.local import build_local_snapshot, external_repos

        commits = [c for c in args.commits.split(",") if c]
        if args.sample:
            history = pr_commits(args.ix, None, None)
            step = len(history) / args.sample
            commits += [history[int(i * step)][0] for i in range(args.sample)]
        external = external_repos(args.external_repo) if args.external_repo else None
        for sha in commits:
            snap = build_local_snapshot(args.ix, sha, sha, external=external, config_file=str(EXAMPLE_CONFIG))
            results.append(measure(ReviewContext(snap), sha[:10]))
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        for r in results:
            show(r)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
