"""How many benchmark points' launches the interpreter follows to a server, at one tree.

Traces one point per master-config key with the review's tracer (as `inspect --trace` does:
recipes.launch.path.trace_affected `tracer`, with the srt-slurm recipes and setup scripts of
the checkout a runner clones when `--external-repo` gives it, and the policy of `--config`,
by default examples/inferencex/infx-review.yml as the replay uses it) and counts
the traces that start a server and those that do not; a trace that starts none carries an
UNKNOWN effect saying where the launch ended (recipes.launch.point.no_server), and those are
grouped by that place. The sweep's job always starts a server, so every trace without one is a
launch the interpreter did not follow.

    python bench/trace_coverage.py PATH [--list] [--external-repo NVIDIA/srt-slurm=DIR] [--config FILE]

PATH is a work tree of a benchmark repository (an InferenceX checkout at some commit).
"""
from __future__ import annotations

import argparse
import collections
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bot.local import add_review_inputs  # noqa: E402
from bot.commands.inspect import trace_context, trace_point  # noqa: E402
from recipes.launch.compare import NO_SERVER_MARK  # noqa: E402
from recipes.launch.trace import SERVER, UNKNOWN  # noqa: E402
from recipes.source import DirSource  # noqa: E402

EXAMPLE_CONFIG = Path(__file__).resolve().parents[1] / "examples" / "inferencex" / "infx-review.yml"

_WHERE = re.compile(r"(?:ends at|to the end of) (\S+?)(?::\d+)? ")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path")
    parser.add_argument("--list", action="store_true", help="print every config key without a server")
    add_review_inputs(parser, config_default=str(EXAMPLE_CONFIG))
    args = parser.parse_args(argv)
    ctx = trace_context(DirSource(args.path), args.external_repo, args.config)
    first: dict[str, object] = {}
    for p in ctx.head_repo.points:
        first.setdefault(p.config_key, p)
    counts: collections.Counter = collections.Counter()
    ends: collections.Counter = collections.Counter()
    t0 = time.process_time()
    for key, point in first.items():
        try:
            effects = trace_point(ctx, point).effects()
        except Exception as e:  # a crash is a figure too
            counts["crash"] += 1
            print(f"CRASH {key}: {type(e).__name__}: {e}")
            continue
        if any(e.kind == SERVER for e in effects):
            counts["server"] += 1
            continue
        counts["no server"] += 1
        named = [e for e in effects if e.kind == UNKNOWN and NO_SERVER_MARK in e.detail]
        if named:
            m = _WHERE.search(named[0].detail)
            ends[m.group(1) if m else named[0].detail] += 1
            detail = named[0].detail
        else:
            last = [e for e in effects if e.kind == UNKNOWN]
            ends["(not named: " + (last[-1].detail[:60] if last else "no unknown") + ")"] += 1
            detail = last[-1].detail if last else "no unknown"
        if args.list:
            print(f"  {key}: {detail}")
    cpu = time.process_time() - t0
    total = sum(counts.values())
    print(f"{args.path}: {total} config keys, {counts['server']} reach a server, "
          f"{counts['no server']} do not, {counts['crash']} crash; {cpu:.1f} s CPU")
    for where, n in ends.most_common():
        print(f"  {n:4d}  end in {where}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
