"""Benchmark: instructions per verdict, for comparing versions of the bot on a noisy machine.

CPU time on a shared VM drifts by 10-20% from one minute to the next, more than most changes
move it. The number of instructions a process executes does not drift: this script runs
chosen replayed verdicts (bench/replay.py's commits and PR files) under valgrind's cachegrind
(`--cache-sim=no`: instruction counts only, about 50x slower than a plain run) once per bot
checkout, and prints each verdict's instructions, the ratio of every checkout to the first,
and whether their JSON verdicts are identical.

    python bench/instructions.py --ix PATH --bot BEFORE --bot AFTER SHA [SHA ...] [--jobs N]
                                 [--external-repo OWNER/NAME=DIR] [--config FILE] [--imports] [--json]

`--imports` adds the imports of `check --local` (`bot.cli`, `bot.pipeline`, `bot.local`) as
one more row. Each checkout's packages are byte-compiled first, as bench/replay.py does.
Needs valgrind and the history (DEVELOPERS.md); nothing here runs in CI.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from replay import commit_of, compile_bot, verdict_command  # noqa: E402
from startup import IMPORTS  # noqa: E402  (the imports bench/startup.py times)

VALGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
IMPORTS_COMMAND = [sys.executable, "-c", "import " + ", ".join(IMPORTS)]
# cachegrind's summary line: `==123== I   refs:      11,708,406,621`
_REFS = re.compile(r"^==\d+==\s+I\s+refs:\s+([\d,]+)\s*$", re.M)
TIMEOUT_S = 3600


def instructions_of(stderr: str) -> int | None:
    """The instruction count cachegrind reports at the end of its output (None without one)."""
    found = _REFS.findall(stderr)
    return int(found[-1].replace(",", "")) if found else None


def measure(cmd: list[str], bot: Path) -> tuple[int | None, str]:
    """(instructions, standard output) of one command run under cachegrind from `bot`."""
    # A fixed hash seed: with a random one, set and dict orders (and so the work done) vary a
    # little from run to run (0.2% on d85fa13fc0).
    env = {**os.environ, "PYTHONHASHSEED": "0"}
    proc = subprocess.run(VALGRIND + cmd, cwd=bot, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
    return instructions_of(proc.stderr), proc.stdout


def summarize(rows: list[dict], bots: list[str]) -> dict:
    """Per row the ratio of each checkout to the first; over the rows the median and total ratio."""
    for row in rows:
        first = row["instructions"][0]
        row["ratios"] = [round(n / first, 4) if n and first else None for n in row["instructions"]]
    totals = {}
    for i, bot in enumerate(bots[1:], start=1):
        pairs = [(r["instructions"][0], r["instructions"][i]) for r in rows
                 if r["instructions"][0] and r["instructions"][i]]
        if pairs:
            totals[bot] = {"median_ratio": round(statistics.median(b / a for a, b in pairs), 4),
                           "total_ratio": round(sum(b for _, b in pairs) / sum(a for a, _ in pairs), 4)}
    return {"bots": bots, "rows": rows, "against_first": totals}


def print_text(s: dict) -> None:
    print("instructions per verdict (cachegrind), M = 10^6:")
    for i, bot in enumerate(s["bots"]):
        print(f"  [{i}] {bot}")
    for row in s["rows"]:
        counts = "  ".join(f"{n / 1e6:,.0f} M" if n else "-" for n in row["instructions"])
        ratios = "  ".join(f"x{r:.3f}" for r in row["ratios"][1:] if r is not None)
        same = "" if row.get("same_output") in (None, True) else "  OUTPUT DIFFERS"
        print(f"  {row['what']:<48} {counts}  {ratios}{same}")
    for bot, t in s["against_first"].items():
        print(f"  {bot} against [0]: median ratio {t['median_ratio']:.3f}, total ratio {t['total_ratio']:.3f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("shas", nargs="*", help="commits of the history to replay")
    ap.add_argument("--ix", required=True, help="a git work tree of the benchmark repository's history")
    ap.add_argument("--bot", action="append", required=True, help="an infx-review checkout (give two or more)")
    ap.add_argument("--external-repo", metavar="OWNER/NAME=DIR", action="append", default=[])
    ap.add_argument("--config", metavar="FILE",
                    help="every verdict: apply this configuration instead of the target branch's "
                         ".github/infx-review.yml, as bench/replay.py's --config does")
    ap.add_argument("--imports", action="store_true", help="also count the imports of check --local")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not installed (apt install valgrind)", file=sys.stderr)
        return 2
    if not args.shas and not args.imports:
        ap.error("name at least one commit, or --imports")
    repo = str(Path(args.ix).resolve())
    bots = [Path(b).resolve() for b in args.bot]
    for bot in bots:
        compile_bot(bot)
    with tempfile.TemporaryDirectory(prefix="infx-instr-") as workdir:
        jobs: list[tuple[str, list[str]]] = []
        for sha in args.shas:
            full, date, subject = commit_of(repo, sha)
            cmd, _ = verdict_command(repo, full, date, subject, workdir, args.external_repo,
                                     str(Path(args.config).resolve()) if args.config else None)
            jobs.append((f"{full[:10]} {subject[:36]}", cmd))
        if args.imports:
            jobs.append(("imports of check --local", IMPORTS_COMMAND))
        tasks = [(what, cmd, bot) for what, cmd in jobs for bot in bots]
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            results = list(pool.map(lambda t: measure(t[1], t[2]), tasks))
    rows = []
    for j, (what, _) in enumerate(jobs):
        mine = results[j * len(bots):(j + 1) * len(bots)]
        outputs = {out for _, out in mine}
        rows.append({"what": what, "instructions": [n for n, _ in mine],
                     "same_output": None if what.startswith("imports") else len(outputs) == 1})
    s = summarize(rows, [str(b) for b in bots])
    print(json.dumps(s, indent=2)) if args.json else print_text(s)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
