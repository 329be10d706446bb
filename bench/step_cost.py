"""Benchmark: what an interpreter step costs, in the verdicts of chosen commits, under one or more
checkouts of the bot; and whether their traces are the same.

Each commit is replayed as `bench/replay.py` replays it (the same `check --local` arguments and PR
file), in a process of its own per run and bot, with `Tracer._interpret` (one interpretation of
a runner script: recipes/launch/point.py) wrapped: the CPU seconds of every interpretation the
verdict runs and the steps each counted (`Interpreter.steps`). It prints, per commit and bot, the
interpretations' CPU (the median over `--runs`), their steps and the µs per step; the steps of
every trace and a digest of every trace (its effects, files read and lines run, in order) must
be the same under each bot, else the row says so. The interpretations are the verdict's own:
the first one of a script also parses it and reads what the others then find kept.

`--instructions` counts, instead of CPU, the instructions those interpretations execute, under
valgrind's callgrind (about 50x slower; CPU time on a shared machine drifts by more than most
changes move it, an instruction count does not): each interpretation is run from inside
`functools.reduce`, the one function callgrind is told to count in (`--toggle-collect`).

    python bench/step_cost.py --ix PATH --commits FILE [--bot DIR ...] [--runs N] [--instructions]
                              [--external-repo NVIDIA/srt-slurm=DIR] [--config FILE] [--json]

The history is not part of this repository; nothing here runs in CI.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from bench.commit_cpu import add_commit_arguments, commit_inputs, legend  # noqa: E402
from bench.replay import TIMEOUT_S, compile_bot, verdict_command  # noqa: E402

# Run in the bot's checkout: the verdict of `sys.argv[1:]` (a `python -m bot` command line) with
# each interpretation timed, its steps counted and its trace digested; one JSON line at the end.
CHILD = r"""
import functools, hashlib, json, re, sys, time
sys.path.insert(0, ".")
from recipes.launch import point
interpret, runs = point.Tracer._interpret, []
def through_reduce(self, *a):
    return functools.reduce(lambda _, __: interpret(self, *a), [0], None)
call = through_reduce if sys.argv[1] == "reduce" else interpret
def timed(self, *a):
    start = time.process_time()
    got = call(self, *a)
    trace, read, steps, files = got
    # Hole names carry a random token per process (recipes.launch.chars): not part of a trace.
    text = re.sub(r"__infx_hole_[0-9a-f]+_", "__infx_hole_", repr((trace.effects, sorted(read), steps, sorted(files),
                  sorted((k, sorted(v)) for k, v in trace.executed.items()))))
    runs.append((time.process_time() - start, steps, hashlib.sha256(text.encode()).hexdigest()[:12]))
    return got
point.Tracer._interpret = timed
import bot.__main__ as entry
sys.argv = ["bot", *sys.argv[2:]]
entry.fewer_collections()
try:
    entry.cli_main()
except SystemExit:
    pass
sys.stdout.flush()
print("\nSTEP-COST " + json.dumps({"cpu": [r[0] for r in runs], "steps": [r[1] for r in runs],
                                    "digests": [r[2] for r in runs]}))
"""

VALGRIND = ["valgrind", "--tool=callgrind", "--toggle-collect=functools_reduce", "--callgrind-out-file=/dev/null"]
_COLLECTED = re.compile(r"^==\d+==\s+Collected\s*:\s*(\d+)\s*$", re.M)


def one_run(bot: Path, cmd: list[str], instructions: bool) -> dict:
    """The interpretations of one verdict under `bot`: CPU seconds (or instructions), steps and
    trace digests, in the order they ran."""
    child = [sys.executable, "-c", CHILD, "reduce" if instructions else "plain", *cmd[3:]]
    if instructions:
        child = VALGRIND + child
    # The digests name the hole tokens away; a fixed hash seed keeps sets in one order.
    env = dict(os.environ, PYTHONHASHSEED="0")
    proc = subprocess.run(child, cwd=bot, capture_output=True, text=True, timeout=TIMEOUT_S * (60 if instructions else 1),
                          env=env)
    line = next((ln for ln in proc.stdout.splitlines() if ln.startswith("STEP-COST ")), None)
    if line is None:
        raise RuntimeError(f"{bot}: no figures ({proc.stderr.strip()[-800:]})")
    got = json.loads(line[len("STEP-COST "):])
    if instructions:
        counted = _COLLECTED.search(proc.stderr)
        if counted is None:
            raise RuntimeError(f"{bot}: valgrind printed no count ({proc.stderr.strip()[-400:]})")
        got["instructions"] = int(counted.group(1))
    return got


def measure(repo: str, commits: list[tuple[str, str, str]], bots: list[Path], runs: int, external: list[str],
            config: str | None, instructions: bool) -> list[dict]:
    results = []
    with tempfile.TemporaryDirectory(prefix="infx-steps-") as workdir:
        for bot in bots:
            compile_bot(bot)
        for sha, date, subject in commits:
            cmd, pr = verdict_command(repo, sha, date, subject, workdir, external, config)
            seen: dict[str, list[dict]] = {str(b): [] for b in bots}
            for _ in range(1 if instructions else runs):
                for bot in bots:  # in turn, so that the machine's drift falls on each alike
                    seen[str(bot)].append(one_run(bot, cmd, instructions))
            first = seen[str(bots[0])][0]
            row = {"sha": sha[:10], "pr": pr["number"], "traces": len(first["steps"]), "steps": sum(first["steps"]),
                   "same_traces": {b: all(r["steps"] == first["steps"] and r["digests"] == first["digests"] for r in v)
                                   for b, v in seen.items()}}
            if instructions:
                row["instructions"] = {b: v[0]["instructions"] for b, v in seen.items()}
            else:
                row["cpu_s"] = {b: round(statistics.median(sum(r["cpu"]) for r in v), 3) for b, v in seen.items()}
            results.append(row)
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_commit_arguments(ap)
    ap.add_argument("--instructions", action="store_true", help="count instructions under valgrind (one run)")
    args = ap.parse_args(argv)
    repo, commits, bots, config = commit_inputs(args)
    results = measure(repo, commits, bots, max(1, args.runs), args.external_repo, config, args.instructions)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    names = legend(bots)
    key, unit, scale, digits = ("instructions", "instr/step", 1, 0) if args.instructions else ("cpu_s", "µs/step", 1e6, 2)
    print("sha        PR     traces  steps   " + "  ".join(f"bot {i} {unit:>12}" for i in range(len(names)))
          + "  same traces")
    for r in results:
        cells = "  ".join(f"{r[key][n] * scale / r['steps']:>18.{digits}f}" for n in names) if r["steps"] else ""
        same = ", ".join("yes" if r["same_traces"][n] else "NO" for n in names)
        print(f"{r['sha']} #{r['pr']:<5} {r['traces']:>6} {r['steps']:>6}   {cells}  {same}")
    steps = sum(r["steps"] for r in results)
    for n in names:
        total = sum(r[key][n] for r in results)
        figure = f"{total / steps:,.0f} instructions" if args.instructions else f"{total * 1e6 / steps:.2f} µs"
        what = f"{total / 1e6:,.0f} million instructions" if args.instructions else f"{total:.2f} s of CPU"
        print(f"bot {names.index(n)}: {what} over {steps:,} steps: {figure} a step")
    return 0


if __name__ == "__main__":
    sys.exit(main())
