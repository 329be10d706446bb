"""Benchmark: one event of the reusable workflow (.github/workflows/review.yml) as Actions runs it.

An event is two jobs, one after the other: `route` (install what routing imports, then
`python -m bot route-event`) and `review` (install the lock, then `python -m bot handle-event`
until the verdict is posted). Each job here starts as a runner does:

- a fresh virtual environment with pip, made before the clock starts (setup-python's interpreter
  is there before a job's own steps run; making the environment is printed apart as `venv`);
- a fresh copy of the bot's source without bytecode (the checkout), and empty pip and uv caches;
- the installs read a local wheelhouse, never the network, so the figure is the installer and not
  the index (the wheelhouse is built once with `pip download` of the locks, into --wheelhouse);
- the review job answers a recorded sign-off comment (tests/payloads) on the local GitHub emulator
  (ghsim, the seed world) and the run counts only if the verdict comment was posted.

The ways to install, timed in turn run by run (`--ways`; default uv,pip):

- `uv` (what review.yml does): pip installs uv from requirements-uv.lock, hash-checked; uv installs
  requirements.lock with `--require-hashes` and `--compile-bytecode` (the route job:
  requirements-route.lock only);
- `uv-lazy` (on request): the same without `--compile-bytecode` (Python compiles what the bot
  imports when it first imports it);
- `pip` (what it did before): pip installs requirements.lock with `--require-hashes` in both jobs.

`job` is the review job (install + handle-event); `event` adds the route job before it.
`--from-index` installs from the package index instead, network included (what a runner does),
for comparison. `--no-install` is a reduced mode (the current interpreter, nothing installed, the
bot's two steps only) for a quick look and for the test of this script.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))
sys.path.insert(0, str(PROJECT / "bench"))

from replay import pct  # noqa: E402  (the percentile the other benches use)

LOCK = PROJECT / "requirements.lock"
ROUTE_LOCK = PROJECT / "requirements-route.lock"
UV_LOCK = PROJECT / "requirements-uv.lock"
WORLD = PROJECT / "ghsim" / "worlds" / "seed"
PAYLOAD = PROJECT / "tests" / "payloads" / "issue_comment.signoff-created.json"
EVENT_NAME = "issue_comment"
REVIEW_DATE = "2026-11-29"
# What a checkout of infx-review holds that the bot reads at run time.
SOURCE = ("bot", "checks", "recipes")
DEFAULT_WHEELHOUSE = Path(tempfile.gettempdir()) / "infx-job-wheelhouse"
FROM_INDEX = "the package index"
DEFAULT_RUNS = 5
TARGET_JOB_S = 10.0
WAYS = ("uv", "uv-lazy", "pip")
DEFAULT_WAYS = ("uv", "pip")
NO_INSTALL = "none"
STEP_TIMEOUT_S = 600
# The machine's own pip and Python settings are not a runner's.
DROPPED_ENV = ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH", "VIRTUAL_ENV", "GITHUB_STEP_SUMMARY", "GITHUB_OUTPUT",
               "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH", "GITHUB_REPOSITORY", "GITHUB_RUN_ID", "INFX_BOT_LOGIN")


class JobError(RuntimeError):
    """A step of a job failed, or the job did not do what it should (no verdict posted)."""


def source_flags(wheelhouse: Path | str) -> list[str]:
    """Where an install reads its packages: the wheelhouse, or (--from-index) the package index
    as a runner does, network included."""
    return [] if wheelhouse == FROM_INDEX else ["--no-index", "--find-links", str(wheelhouse)]


def pip_flags(wheelhouse: Path | str) -> list[str]:
    return ["--disable-pip-version-check", "--no-input", *source_flags(wheelhouse)]


def build_wheelhouse(dest: Path) -> Path:
    """The wheels of every lock, downloaded once (hash-checked) into `dest`; kept between runs."""
    stamp = dest / ".complete"
    inputs = "\n".join(p.read_text(encoding="utf-8") for p in (LOCK, UV_LOCK))
    if stamp.exists() and stamp.read_text(encoding="utf-8") == inputs:
        return dest
    dest.mkdir(parents=True, exist_ok=True)
    for lock in (LOCK, UV_LOCK):
        cmd = [sys.executable, "-m", "pip", "download", "--disable-pip-version-check", "--no-input", "--no-deps",
               "--require-hashes", "--only-binary", ":all:", "-r", str(lock), "-d", str(dest)]
        proc = subprocess.run(cmd, capture_output=True, text=True, env=_runner_env())
        if proc.returncode != 0:
            raise SystemExit(f"could not build the wheelhouse {dest} from {lock.name} (pip download needs PyPI "
                             f"once; or pass --wheelhouse DIR holding its wheels):\n{proc.stderr.strip()[-800:]}")
    stamp.write_text(inputs, encoding="utf-8")
    return dest


def _runner_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PIP_", "UV_")) and k not in DROPPED_ENV}
    env["PIP_CONFIG_FILE"] = os.devnull
    env.update(extra)
    return env


@dataclass
class Job:
    """One job's timings: each step's wall seconds, in order, and the CPU seconds (user + system)
    of the processes it ran, the figure a busy shared machine disturbs least."""
    steps: dict[str, float] = field(default_factory=dict)
    cpu: float = 0.0

    @property
    def total(self) -> float:
        return sum(self.steps.values())


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Runner:
    """A fresh runner: a virtual environment, a copy of the bot, empty caches, under `root`."""

    def __init__(self, root: Path, *, install: bool):
        self.root = root
        self.source = root / "infx-review"
        for pkg in SOURCE:
            shutil.copytree(PROJECT / pkg, self.source / pkg, ignore=shutil.ignore_patterns("__pycache__"))
        self.venv_s = 0.0
        if install:
            start = time.perf_counter()
            subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True, capture_output=True)
            self.venv_s = time.perf_counter() - start
            self.python = str(root / "venv" / "bin" / "python")
            path = f"{root / 'venv' / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"
        else:
            self.python = sys.executable
            path = os.environ.get("PATH", "")
        self.env = _runner_env(PATH=path, PIP_CACHE_DIR=str(root / "pip-cache"), UV_CACHE_DIR=str(root / "uv-cache"),
                               PYTHONPATH=str(self.source))

    def step(self, job: Job, name: str, args: list[str], **env: str) -> subprocess.CompletedProcess:
        start, cpu = time.perf_counter(), _children_cpu()
        proc = subprocess.run([self.python, *args], cwd=self.root, env=dict(self.env, **env), capture_output=True,
                              text=True, timeout=STEP_TIMEOUT_S)
        job.steps[name] = job.steps.get(name, 0.0) + time.perf_counter() - start
        job.cpu += _children_cpu() - cpu
        if proc.returncode != 0:
            raise JobError(f"{name}: {' '.join(args[:6])} ... exit {proc.returncode}: {proc.stderr.strip()[-800:]}")
        return proc

    def install(self, job: Job, way: str, lock: Path, wheelhouse: Path | str) -> None:
        """The install step of review.yml (way `uv`) or the pip install it replaced (way `pip`)."""
        flags = pip_flags(wheelhouse)
        if way == "pip":
            self.step(job, "install", ["-m", "pip", "install", *flags, "--require-hashes", "--no-deps", "-r", str(lock)])
            return
        self.step(job, "uv", ["-m", "pip", "install", *flags, "--require-hashes", "--no-deps", "-r", str(UV_LOCK)])
        compiled = ["--compile-bytecode"] if way == "uv" else []
        self.step(job, "install", ["-m", "uv", "pip", "install", "--python", self.python, "--no-config", *compiled,
                                   *source_flags(wheelhouse), "--require-hashes", "--no-deps", "-r", str(lock)])


def route_job(root: Path, way: str, wheelhouse: Path | str | None) -> tuple[Job, float]:
    runner = Runner(root, install=wheelhouse is not None)
    job = Job()
    if wheelhouse is not None:
        runner.install(job, way, ROUTE_LOCK if way == "uv" else LOCK, wheelhouse)
    output = root / "github-output"
    runner.step(job, "run", ["-m", "bot", "route-event"], GITHUB_EVENT_NAME=EVENT_NAME,
                GITHUB_EVENT_PATH=str(PAYLOAD), GITHUB_OUTPUT=str(output))
    routed = output.read_text(encoding="utf-8") if output.exists() else ""
    if "job=review" not in routed:
        raise JobError(f"route-event did not route the sign-off to the review job: {routed!r}")
    return job, runner.venv_s


def review_job(root: Path, way: str, wheelhouse: Path | str | None) -> tuple[Job, float]:
    from checks.render import MARKER
    from ghsim import Emulator
    from ghsim import effects as fx

    runner = Runner(root, install=wheelhouse is not None)
    job = Job()
    with Emulator(WORLD, strict=True) as emu:
        if wheelhouse is not None:
            runner.install(job, way, LOCK, wheelhouse)
        runner.step(job, "run", ["-m", "bot", "handle-event", "--github-url", emu.url, "--review-date", REVIEW_DATE],
                    GITHUB_EVENT_NAME=EVENT_NAME, GITHUB_EVENT_PATH=str(PAYLOAD), GITHUB_TOKEN=emu.world.bot.token)
        emu.assert_clean()
        prefix = MARKER.split("{", 1)[0]
        posted = [e for e in emu.effects if e["kind"] == fx.EFFECT_COMMENT_CREATED
                  and e["actor"] == emu.world.bot.login and e["body"].startswith(prefix)]
    if not posted:
        raise JobError("handle-event ended without posting a verdict comment on the emulator")
    return job, runner.venv_s


def spread(values: list[float]) -> dict[str, float]:
    return {"median": round(statistics.median(values), 3), "p95": round(pct(values, 0.95), 3),
            "min": round(min(values), 3)}


def measure(ways: list[str], runs: int, wheelhouse: Path | str | None) -> dict[str, dict]:
    """Per way: the spread of the route job, the review job, the event, each step, and venv."""
    samples: dict[str, dict[str, list[float]]] = {w: {} for w in ways}
    for i in range(runs):
        order = ways if i % 2 == 0 else list(reversed(ways))
        for way in order:
            with tempfile.TemporaryDirectory(prefix=f"infx-job-{way}-") as tmp:
                route, venv_r = route_job(Path(tmp) / "route", way, wheelhouse)
                review, venv_j = review_job(Path(tmp) / "review", way, wheelhouse)
            s = samples[way]
            for key, value in (("route", route.total), ("job", review.total), ("event", route.total + review.total),
                               ("venv", max(venv_r, venv_j)), ("job_cpu", review.cpu), ("event_cpu", route.cpu + review.cpu),
                               *((f"route_{k}", v) for k, v in route.steps.items()),
                               *((f"job_{k}", v) for k, v in review.steps.items())):
                s.setdefault(key, []).append(value)
    return {way: {k: spread(v) for k, v in s.items()} for way, s in samples.items()}


def figures(ways: list[str], runs: int, wheelhouse: Path | str | None) -> dict:
    per_way = measure(ways, runs, wheelhouse)
    main_way = ways[0]
    out: dict = {"runs": runs, "target_job_s": TARGET_JOB_S, "installs_from": str(wheelhouse) if wheelhouse else None,
                 "ways": per_way, "way": main_way,
                 "job_s_median": per_way[main_way]["job"]["median"], "job_s_p95": per_way[main_way]["job"]["p95"],
                 "event_s_median": per_way[main_way]["event"]["median"],
                 "job_cpu_s_median": per_way[main_way]["job_cpu"]["median"], "load_average": _load()}
    if "pip" in per_way and main_way != "pip":
        out["pip_job_s_median"] = per_way["pip"]["job"]["median"]
        out["pip_job_s_p95"] = per_way["pip"]["job"]["p95"]
        out["pip_event_s_median"] = per_way["pip"]["event"]["median"]
        out["pip_job_cpu_s_median"] = per_way["pip"]["job_cpu"]["median"]
    return out


def _load() -> float | None:
    """The machine's 1-minute load average when the runs ended (a figure taken on a busy
    machine says so)."""
    try:
        return round(os.getloadavg()[0], 1)
    except OSError:
        return None


def print_figures(f: dict) -> None:
    src = ("nothing installed" if not f["installs_from"] else "installs from the package index, network included"
           if f["installs_from"] == FROM_INDEX else f"installs from the local wheelhouse {f['installs_from']}")
    print(f"one event of review.yml, {f['runs']} runs per way ({src}); wall seconds, median / p95:")
    for way, s in f["ways"].items():
        steps = "  ".join(f"{k} {v['median']:.2f}" for k, v in s.items()
                          if k.startswith(("route_", "job_")) and not k.endswith("_cpu"))
        print(f"  {way:<7} job {s['job']['median']:6.2f} / {s['job']['p95']:6.2f}   route {s['route']['median']:5.2f}"
              f"   event {s['event']['median']:6.2f} / {s['event']['p95']:6.2f}   CPU: job {s['job_cpu']['median']:.2f}"
              f", event {s['event_cpu']['median']:.2f}")
        print(f"          steps: {steps}; venv {s['venv']['median']:.2f} (not counted)")
    verdict = "within" if f["job_s_median"] <= f["target_job_s"] else "OVER"
    line = f"job ({f['way']}): median {f['job_s_median']:.2f} s, p95 {f['job_s_p95']:.2f} s, {verdict} the {f['target_job_s']:.0f} s target"
    if "pip_job_s_median" in f:
        line += f"; pip: median {f['pip_job_s_median']:.2f} s, p95 {f['pip_job_s_p95']:.2f} s"
    print(line)
    if f["load_average"] is not None:
        print(f"load average (1 min) at the end: {f['load_average']} on {os.cpu_count()} CPUs")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=DEFAULT_RUNS, help=f"events per way (default {DEFAULT_RUNS})")
    ap.add_argument("--ways", default=",".join(DEFAULT_WAYS),
                    help="comma-separated install ways to time, the first is the reported job (default: uv,pip)")
    ap.add_argument("--wheelhouse", type=Path, default=DEFAULT_WHEELHOUSE,
                    help="where the locks' wheels are (downloaded there once when missing)")
    ap.add_argument("--from-index", action="store_true",
                    help="install from the package index (PyPI, network included) instead of the wheelhouse")
    ap.add_argument("--no-install", action="store_true",
                    help="reduced mode: the current interpreter, nothing installed, only the bot's two steps")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    args = ap.parse_args(argv)
    args.ways = [w for w in args.ways.split(",") if w]
    unknown = [w for w in args.ways if w not in WAYS]
    if unknown or not args.ways:
        ap.error(f"--ways takes {', '.join(WAYS)}, not {', '.join(unknown) or 'nothing'}")
    if args.runs < 1:
        ap.error("--runs must be at least 1")
    if args.no_install:
        args.ways = [NO_INSTALL]
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    wheelhouse = None if args.no_install else FROM_INDEX if args.from_index else build_wheelhouse(args.wheelhouse)
    try:
        f = figures(args.ways, args.runs, wheelhouse)
    except JobError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(f, sort_keys=True))
    else:
        print_figures(f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
