"""Benchmark: the CPU of chosen commits' verdicts, each replayed alone several times, under one
or more checkouts of the bot; and whether their verdicts are the same.

Each commit is replayed as `bench/replay.py` replays it (the same `check --local` process and PR
file), `--runs` times per bot, the bots taking turns so that the machine's drift falls on each
alike. It prints, per commit, the median CPU seconds (user + system of the process and the git
processes it waited for) under each bot, and whether the verdict's JSON (every row's status,
reason and evidence, the affected points) is the same under each bot as under the first.

    python bench/commit_cpu.py --ix PATH --commits FILE [--bot DIR ...] [--runs N] [--budget STEPS]
                               [--external-repo NVIDIA/srt-slurm=DIR] [--config FILE] [--json]

`--commits` is a file of SHAs (full or a unique prefix), one a line; `#` starts a comment.
`--bot` defaults to this checkout; give a frozen copy of another version first to compare
against it (e.g. `git archive main | tar -x -C /tmp/base`). `--budget` runs every verdict with
that many interpreter steps for the review instead of TRACE_BUDGET_STEPS (set in the process
before the bot runs; the bot has no such option) and counts the rows that say the budget was
spent. The history is not part of this repository; nothing here runs in CI.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from bench.replay import BUDGET_RE, TIMEOUT_S, commit_of, compile_bot, run_measured, verdict_command  # noqa: E402
from bot.local import add_review_inputs  # noqa: E402

# `python -m bot ...` with the review's step budget replaced first.
WITH_BUDGET = ("import runpy, recipes.launch.path.trace_affected as t; t.TRACE_BUDGET_STEPS = {steps}; "
               "runpy.run_module('bot', run_name='__main__', alter_sys=True)")


def budget_rows(stdout: str) -> int | None:
    """The rows of a verdict's JSON whose reason says the review's step budget was spent."""
    try:
        return sum(1 for row in json.loads(stdout)["checks"] if BUDGET_RE.search(row.get("reason", "")))
    except (ValueError, KeyError, TypeError):
        return None


def read_commits(repo: str, path: str) -> list[tuple[str, str, str]]:
    """`replay.commit_of` each commit the file names, in its order."""
    refs = (line.split("#", 1)[0].strip() for line in Path(path).read_text().splitlines())
    return [commit_of(repo, ref) for ref in refs if ref]


def measure(repo: str, commits: list[tuple[str, str, str]], bots: list[Path], runs: int,
            external: list[str], config: str | None, budget: int | None = None) -> list[dict]:
    """Per commit: the CPU seconds of every run under each bot and whether each bot's verdict
    equals the first bot's."""
    results = []
    with tempfile.TemporaryDirectory(prefix="infx-cpu-") as workdir:
        for bot in bots:
            compile_bot(bot)
        for sha, date, subject in commits:
            cmd, pr = verdict_command(repo, sha, date, subject, workdir, external, config)
            if budget is not None:
                assert cmd[1:3] == ["-m", "bot"], cmd
                cmd = [cmd[0], "-c", WITH_BUDGET.format(steps=int(budget)), *cmd[3:]]
            cpus: dict[str, list[float]] = {str(b): [] for b in bots}
            outputs: dict[str, set[str]] = {str(b): set() for b in bots}
            spent: dict[str, int | None] = {}
            for _ in range(runs):
                for bot in bots:
                    code, stdout, stderr, cpu = run_measured(cmd, bot, TIMEOUT_S)
                    cpus[str(bot)].append(cpu)
                    spent[str(bot)] = budget_rows(stdout) if code in (0, 1) else None
                    outputs[str(bot)].add(f"exit {code}\n{stdout}" if code in (0, 1) else f"exit {code}\n{stderr[-800:]}")
            first = outputs[str(bots[0])]
            results.append({
                "sha": sha[:10], "pr": pr["number"],
                "cpu_s": {b: round(statistics.median(v), 2) for b, v in cpus.items()},
                "runs_s": {b: [round(x, 2) for x in v] for b, v in cpus.items()},
                # A verdict that differs between runs of one bot is as much a finding as one
                # that differs between bots.
                "same_verdict": {b: len(o) == 1 and o == first for b, o in outputs.items()},
                "budget_rows": spent,
            })
    return results


def add_commit_arguments(ap: argparse.ArgumentParser) -> None:
    """The arguments of a bench that replays chosen commits under one or more checkouts."""
    ap.add_argument("--ix", required=True, help="a git work tree of the benchmark repository's history")
    ap.add_argument("--commits", required=True, metavar="FILE", help="the commits, one SHA a line")
    ap.add_argument("--bot", action="append", default=[],
                    help="an infx-review checkout (repeatable; the first is the reference; default: this one)")
    ap.add_argument("--runs", type=int, default=3, help="runs per commit and bot (default 3; the median is shown)")
    add_review_inputs(ap, "every verdict")
    ap.add_argument("--json", action="store_true", help="print one JSON document")


def commit_inputs(args: argparse.Namespace) -> tuple[str, list[tuple[str, str, str]], list[Path], str | None]:
    """(the history's path, its commits to replay, the checkouts, the config file) of those arguments."""
    repo = str(Path(args.ix).resolve())
    bots = [Path(b).resolve() for b in args.bot] or [PROJECT]
    config = str(Path(args.config).resolve()) if args.config else None
    return repo, read_commits(repo, args.commits), bots, config


def legend(bots: list[Path]) -> list[str]:
    """Print which checkout each `bot N` column is; their names, in that order."""
    names = [str(b) for b in bots]
    for i, name in enumerate(names):
        print(f"bot {i}: {name}")
    return names


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_commit_arguments(ap)
    ap.add_argument("--budget", type=int, metavar="STEPS", help="the review's interpreter steps (TRACE_BUDGET_STEPS)")
    args = ap.parse_args(argv)
    repo, commits, bots, config = commit_inputs(args)
    results = measure(repo, commits, bots, max(1, args.runs), args.external_repo, config, args.budget)
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    names = legend(bots)
    print("sha        PR     " + "  ".join(f"bot {i} CPU s" for i in range(len(names))) + "  same verdict"
          "  rows past the budget")
    for r in results:
        cells = "  ".join(f"{r['cpu_s'][n]:>11.2f}" for n in names)
        same = ", ".join("yes" if r["same_verdict"][n] else "NO" for n in names)
        spent = ", ".join("-" if r["budget_rows"][n] is None else str(r["budget_rows"][n]) for n in names)
        print(f"{r['sha']} #{r['pr']:<5} {cells}  {same:<12}  {spent}")
    for n in names:
        values = [r["cpu_s"][n] for r in results]
        rows = sum(r["budget_rows"][n] or 0 for r in results)
        print(f"bot {names.index(n)}: median {statistics.median(values):.2f} s, max {max(values):.2f} s, "
              f"total {sum(values):.2f} s; {rows} rows past the budget")
    return 0


if __name__ == "__main__":
    sys.exit(main())
