"""Benchmark: the start-up of the CLI, in fresh processes.

- `imports`: the CPU time of the imports `python -m bot check --local` does before it reads the
  repository (`bot.cli`, `bot.pipeline`, `bot.local`), measured inside a fresh interpreter;
- `help`: the whole `python -m bot --help` process (CPU, from outside);
- `python`: a bare `python -c pass`, the floor both include.

The packages are byte-compiled first, as a deployed bot has them (this machine's shell sets
PYTHONDONTWRITEBYTECODE). Each figure is the median, p95 and minimum over `--runs` processes;
the runs of the three kinds alternate, so a slow spell of a shared machine touches all three.
"""
from __future__ import annotations

import argparse
import compileall
import json
import statistics
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT / "bench"))

from replay import pct, run_measured  # noqa: E402  (one child-CPU measure, one percentile)

TARGETS_S = {"imports": 0.3, "help": 0.15}
IMPORTS = ("bot.cli", "bot.pipeline", "bot.local")
PROBE = ("import time\nc = time.process_time()\nimport " + ", ".join(IMPORTS)
         + "\nprint(time.process_time() - c)")


TIMEOUT_S = 120.0


def _cpu_of(cmd: list[str]) -> tuple[float, str]:
    """(CPU seconds of the child and what it waited for, its standard output)."""
    code, stdout, stderr, cpu = run_measured(cmd, PROJECT, TIMEOUT_S)
    if code != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({code}): {stderr.strip()[-300:]}")
    return cpu, stdout


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 4), "p95": round(pct(values, 0.95), 4),
            "min": round(min(values), 4)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--no-compile", action="store_true", help="do not byte-compile the packages first")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if not args.no_compile:
        for pkg in ("bot", "checks", "recipes"):
            compileall.compile_dir(str(PROJECT / pkg), quiet=1)
    env_python = sys.executable
    runs: dict[str, list[float]] = {"imports": [], "help": [], "python": []}
    for _ in range(max(1, args.runs)):
        _, out = _cpu_of([env_python, "-c", PROBE])
        runs["imports"].append(float(out.strip().splitlines()[-1]))
        runs["help"].append(_cpu_of([env_python, "-m", "bot", "--help"])[0])
        runs["python"].append(_cpu_of([env_python, "-c", "pass"])[0])
    figures = {k: _spread(v) for k, v in runs.items()}
    if args.json:
        print(json.dumps({"runs": args.runs, "targets_s": TARGETS_S, **figures}, sort_keys=True))
        return 0
    print(f"start-up over {args.runs} fresh processes each (CPU seconds):")
    for k, f in figures.items():
        target = f"  target {TARGETS_S[k]:.2f}" if k in TARGETS_S else ""
        print(f"  {k:<8} median {f['median']:.3f}  p95 {f['p95']:.3f}  min {f['min']:.3f}{target}")
    print(f"  imports = {', '.join(IMPORTS)} inside the process; help and python = the whole process")
    return 0


if __name__ == "__main__":
    sys.exit(main())
