"""Fault benchmark: the real GitHub pipeline (posting included) against the emulator with 20% of
requests failing, counted against each world's fault-free verdict.

    python bench/faults.py [--runs N] [--json] [--jobs J] [--retry-after S] [--ghost-write-rate R]

Each run serves a bundled world (`seed`, `rejected`) on a fresh emulator whose fault draw uses a
different seed, and runs `bot.pipeline.review_pr(post=True)` over HTTP. Of the requests,
10% answer 500/502/503, 5% a secondary-rate-limit 403 with `Retry-After`, and 5% drop the
connection without an answer. With `--ghost-write-rate R`, a further fraction R of the writes
that do get applied are answered 502 or with a dropped connection afterwards (a "ghost write":
GitHub applied it, the bot saw a failure), drawn with the same seed. The figures, per world and
in total:

- equal: the verdict and every row's status equal the fault-free run's.
- unavailable: a row names evidence it could not read (an evidence item marked unavailable)
  where the fault-free row does not, or no verdict could be produced and a failure status
  says why.
- unexplained: a row whose status differs from the fault-free run without naming unavailable
  evidence or saying it could not verify (must be 0: missing evidence is reported, not hidden).
- wrong PASS (must be 0): the published status is `success` while the fault-free verdict is
  REJECTED; or the verdict is better than the fault-free one (PASS > WARN > REJECTED); or a
  row is PASS/N/A where the fault-free row FAILs or WARNs, or PASS where it is N/A.
- duplicate comments (must be 0): more than one bot comment carries the sign-off's marker, or
  the bot created more than one comment with it (a ghost write repeated blindly).
- no status (must be 0): the run ended without the bot's commit status on the PR head.

- past timeout (must be 0): the run's time, its real seconds plus every wait the retry policy
  made on the virtual clock, passed the review job's timeout (15 minutes).

Waits: the client follows GitHub's rules (`bot/retry_policy.py`): it waits Retry-After, at least a
minute without it, and until x-ratelimit-reset on a primary limit, within the job's budget. Every
run uses a virtual clock shared by the emulator and the client, so those waits cost no real time:
`--retry-after 60` (GitHub's worst usual answer) runs as fast as `--retry-after 0`, and the
"virtual s" columns say how long the job would really have taken.
"""
from __future__ import annotations

import argparse
import json
import logging
import multiprocessing
import os
import statistics
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import date
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
if str(PROJECT) not in sys.path:
    sys.path.insert(0, str(PROJECT))

WORLDS_DIR = PROJECT / "ghsim" / "worlds"
WORLDS = ("seed", "rejected")
DEFAULT_RUNS = 100
REVIEW_DATE = date(2026, 11, 29)
# 20% of requests fail, split over the three kinds the issue names.
FAULT_KNOBS = {"fail_rate": 0.10, "rate_limit_rate": 0.05, "drop_rate": 0.05}
DEFAULT_RETRY_AFTER_S = 0
DEFAULT_JOBS = 4
# Seeds are world-specific so the two worlds never replay the same fault sequence.
SEED_STRIDE = 100_000

ORDER = {"PASS": 2, "WARN": 1, "REJECTED": 0}
PASSING_ROWS = {"PASS", "N/A"}
STATE_SUCCESS = "success"
EXPLAINED_WORDS = ("could not", "unverifiable", "unavailable", "not verified")
COUNTERS = ("runs", "equal", "unavailable", "unexplained", "wrong_pass", "duplicate_comments", "no_status",
            "past_timeout")
MUST_BE_ZERO = ("unexplained", "wrong_pass", "duplicate_comments", "no_status", "past_timeout")
TABLE_HEADER = ("world", "runs", "equal", "unavailable", "unexplained", "wrong PASS", "dup comments",
                "no status", "past timeout", "median s", "max s", "median virtual s", "max virtual s")
# The review job's `timeout-minutes` in .github/workflows/review.yml.
JOB_TIMEOUT_S = 15 * 60
MSG_FAILED = "FAILED: {names} must be 0"


@dataclass
class Outcome:
    """What one pipeline run produced and published."""

    world: str
    seed: int | None
    verdict: str | None
    rows: dict[int, str]
    unavailable_rows: list[int]
    reasons: dict[int, str]
    statuses: list[dict]
    marker_comments: int
    error: str | None
    seconds: float
    requests: int
    head_sha: str = ""
    ghost_writes: int = 0
    created_marker_comments: int = 0
    # Seconds the job would have taken: real time plus the policy's waits on the virtual clock.
    virtual_seconds: float = 0.0


@dataclass
class Judged:
    """One run against the fault-free run of its world."""

    equal: bool
    unavailable: bool
    unexplained: list[str] = field(default_factory=list)
    wrong_pass: list[str] = field(default_factory=list)
    duplicate_comments: bool = False
    no_status: bool = False


def run_once(world: str, seed: int | None, retry_after_s: int = DEFAULT_RETRY_AFTER_S,
             ghost_write_rate: float = 0.0) -> Outcome:
    """One review with posting; `seed=None` is the fault-free run."""
    from bot.pipeline import review_pr
    from bot.github_client import GitHubApi, make_github, token_auth
    from bot.retry_policy import VirtualClock
    from ghsim import Emulator
    from ghsim import effects as fx
    from checks.render import MARKER
    from checks.signoff_keys import signoff_key

    knobs = dict(FAULT_KNOBS, seed=seed, retry_after_s=retry_after_s, ghost_write_rate=ghost_write_rate) \
        if seed is not None else {}
    clock = VirtualClock()
    with Emulator(WORLDS_DIR / world, strict=True, clock=clock, **knobs) as emu:
        start = time.perf_counter()
        api = GitHubApi(make_github(emu.url, auth=token_auth(emu.world.bot.token), env={}, clock=clock))
        try:
            review = review_pr(api, emu.world.repo, emu.world.pr.number, post=True, review_date=REVIEW_DATE)
        finally:
            api.close()
        seconds = time.perf_counter() - start
        emu.assert_clean()
        bot = emu.world.bot.login
        effects = [e for e in emu.effects if e["actor"] == bot]
        statuses = [{"state": e["state"], "description": e.get("description"), "sha": e["sha"]}
                    for e in effects if e["kind"] == fx.EFFECT_STATUS_SET]
        # Count our comments as they stand at the end, by the marker of the world's sign-off.
        signoff = emu.world.pr.signoff
        marker_comments = created = 0
        if signoff is not None:
            key = signoff_key(signoff.kind, signoff.id)
            marker = MARKER.format(key=key)
            live: dict[int, str] = {}
            for e in effects:
                if e["kind"] in (fx.EFFECT_COMMENT_CREATED, fx.EFFECT_COMMENT_EDITED):
                    live[e["id"]] = e["body"]
                elif e["kind"] == fx.EFFECT_COMMENT_DELETED:
                    live.pop(e["id"], None)
            marker_comments = sum(body.split("\n", 1)[0] == marker for body in live.values())
            created = sum(e["kind"] == fx.EFFECT_COMMENT_CREATED and e["body"].split("\n", 1)[0] == marker
                          for e in effects)
        head_sha = emu.head_sha
        ghosts = len(emu.ghost_writes)
        requests = sum(emu.requests.values())
    verdict = review.verdict
    rows, reasons, unavailable_rows = {}, {}, []
    if verdict is not None:
        for row in verdict.rows:
            rows[row.number] = row.status.value
            reasons[row.number] = row.reason
            if any(e.unavailable for e in row.evidence):
                unavailable_rows.append(row.number)
    return Outcome(world=world, seed=seed, verdict=verdict.status.value if verdict else None, rows=rows,
                   unavailable_rows=unavailable_rows, reasons=reasons, statuses=statuses,
                   marker_comments=marker_comments, error=review.error, seconds=seconds, requests=requests,
                   head_sha=head_sha, ghost_writes=ghosts, created_marker_comments=created,
                   virtual_seconds=seconds + clock.slept)


def judge(run: Outcome, clean: Outcome) -> Judged:
    """Compare a faulty run with the fault-free run of the same world (definitions: module docstring)."""
    out = Judged(equal=run.verdict == clean.verdict and run.rows == clean.rows,
                 unavailable=run.verdict is None or bool(set(run.unavailable_rows) - set(clean.unavailable_rows)))
    on_head = [s for s in run.statuses if s["sha"] == run.head_sha]
    out.no_status = not on_head
    out.duplicate_comments = run.marker_comments > 1 or run.created_marker_comments > 1
    if on_head and on_head[-1]["state"] == STATE_SUCCESS and clean.verdict == "REJECTED":
        out.wrong_pass.append(f"status success, fault-free verdict REJECTED ({on_head[-1]['description']})")
    if run.verdict is not None and ORDER[run.verdict] > ORDER[clean.verdict]:
        out.wrong_pass.append(f"verdict {run.verdict}, fault-free {clean.verdict}")
    for number, status in run.rows.items():
        expected = clean.rows.get(number)
        if status == expected or expected is None:
            continue
        if (status in PASSING_ROWS and expected not in PASSING_ROWS) or (status == "PASS" and expected == "N/A"):
            out.wrong_pass.append(f"Check {number}: {status}, fault-free {expected}")
        explained = number in run.unavailable_rows or any(w in run.reasons[number].lower() for w in EXPLAINED_WORDS)
        if not explained:
            out.unexplained.append(f"Check {number}: {expected} -> {status}: {run.reasons[number][:160]}")
    return out


def _task(args: tuple[str, int | None, int, float]) -> Outcome:
    logging.disable(logging.CRITICAL)  # retries log every fault; the figures are the output
    return run_once(*args)


def _map(tasks: list[tuple[str, int | None, int, float]], jobs: int) -> list[Outcome]:
    if jobs <= 1:
        return [_task(t) for t in tasks]
    # fork: the workers inherit the imported modules, so a test can import this file by path.
    ctx = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(jobs, mp_context=ctx) as pool:
        return list(pool.map(_task, tasks))


def run_bench(runs: int = DEFAULT_RUNS, *, jobs: int = DEFAULT_JOBS, retry_after_s: int = DEFAULT_RETRY_AFTER_S,
              worlds: tuple[str, ...] = WORLDS, ghost_write_rate: float = 0.0) -> dict:
    """Every world's fault-free run, then `runs` faulty runs each; the summary as a JSON-able dict."""
    clean = {w: o for w, o in zip(worlds, _map([(w, None, retry_after_s, 0.0) for w in worlds], jobs))}
    tasks = [(w, wi * SEED_STRIDE + i + 1, retry_after_s, ghost_write_rate)
             for wi, w in enumerate(worlds) for i in range(runs)]
    outcomes = _map(tasks, jobs)
    per_world: dict[str, dict] = {}
    problems: list[dict] = []
    for w in worlds:
        counts = dict.fromkeys(COUNTERS, 0)
        seconds, virtual, ghosts = [], [], 0
        for o in (o for o in outcomes if o.world == w):
            j = judge(o, clean[w])
            counts["runs"] += 1
            counts["equal"] += j.equal
            counts["unavailable"] += j.unavailable
            counts["unexplained"] += bool(j.unexplained)
            counts["wrong_pass"] += bool(j.wrong_pass)
            counts["duplicate_comments"] += j.duplicate_comments
            counts["no_status"] += j.no_status
            counts["past_timeout"] += o.virtual_seconds > JOB_TIMEOUT_S
            seconds.append(o.seconds)
            virtual.append(o.virtual_seconds)
            ghosts += o.ghost_writes
            if j.unexplained or j.wrong_pass or j.duplicate_comments or j.no_status:
                problems.append({"world": w, "seed": o.seed, **asdict(j), "error": o.error})
        per_world[w] = {**counts, "fault_free_verdict": clean[w].verdict, "ghost_writes": ghosts,
                        "median_s": round(statistics.median(seconds), 3) if seconds else 0.0,
                        "max_s": round(max(seconds), 3) if seconds else 0.0,
                        "median_virtual_s": round(statistics.median(virtual), 1) if virtual else 0.0,
                        "max_virtual_s": round(max(virtual), 1) if virtual else 0.0}
    total = {k: sum(per_world[w][k] for w in worlds) for k in COUNTERS}
    return {"runs_per_world": runs, "fault_knobs": FAULT_KNOBS, "retry_after_s": retry_after_s,
            "ghost_write_rate": ghost_write_rate, "ghost_writes": sum(c["ghost_writes"] for c in per_world.values()),
            "worlds": per_world, "total": total, "problems": problems}


def format_table(summary: dict) -> str:
    lines = ["| " + " | ".join(TABLE_HEADER) + " |", "|" + "---|" * len(TABLE_HEADER)]
    for w, c in summary["worlds"].items():
        cells = [f"{w} ({c['fault_free_verdict']})", c["runs"], c["equal"], c["unavailable"], c["unexplained"],
                 c["wrong_pass"], c["duplicate_comments"], c["no_status"], c["past_timeout"], c["median_s"],
                 c["max_s"], c["median_virtual_s"], c["max_virtual_s"]]
        lines.append("| " + " | ".join(str(x) for x in cells) + " |")
    t = summary["total"]
    lines.append("| " + " | ".join(str(x) for x in ["total", t["runs"], t["equal"], t["unavailable"], t["unexplained"],
                                                       t["wrong_pass"], t["duplicate_comments"], t["no_status"],
                                                       t["past_timeout"], "", "", "", ""])
                 + " |")
    return "\n".join(lines)


def failures(summary: dict) -> list[str]:
    return [k for k in MUST_BE_ZERO if summary["total"][k]]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=DEFAULT_RUNS, help=f"faulty runs per world (default {DEFAULT_RUNS})")
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    p.add_argument("--jobs", type=int, default=min(DEFAULT_JOBS, (os.cpu_count() or 1) * 2),
                   help="runs in parallel (processes)")
    p.add_argument("--retry-after", type=int, default=DEFAULT_RETRY_AFTER_S,
                   help="seconds the emulator's rate-limit faults ask to wait (GitHub: 1 or more)")
    p.add_argument("--ghost-write-rate", type=float, default=0.0,
                   help="fraction of applied writes then answered 502 or a dropped connection (default 0)")
    args = p.parse_args(argv)
    start = time.perf_counter()
    summary = run_bench(args.runs, jobs=args.jobs, retry_after_s=args.retry_after,
                        ghost_write_rate=args.ghost_write_rate)
    summary["wall_s"] = round(time.perf_counter() - start, 1)
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print(format_table(summary))
        print(f"\n{args.runs} runs per world, faults {FAULT_KNOBS}, Retry-After {args.retry_after} s, "
              f"ghost writes {args.ghost_write_rate} ({summary['ghost_writes']} happened), "
              f"{args.jobs} jobs, {summary['wall_s']} s")
        for prob in summary["problems"][:20]:
            print(json.dumps(prob))
    bad = failures(summary)
    if bad:
        print(MSG_FAILED.format(names=", ".join(bad)), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
