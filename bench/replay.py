"""Benchmark: the local verdict on every real PR commit of a benchmark repository's history.

Every first-parent commit of main that touches the perf-changelog is replayed as the PR it
merged: base = its first parent, head = the commit, review date = the commit date, and a
synthesized PR file (the sign-off by a named owner of the changed master config, the target
branch's checklist with every item checked, the core team's membership). Each verdict is a
whole `python -m bot check --local` process, timed from outside, importing the bot's packages
from bytecode as a deployed bot does (they are byte-compiled first; `--no-compile` to not).

It prints the commits run, the exit codes, the rows per check and status, every row that says
"could not be evaluated" (an exception inside a check) and every "could not verify" row whose
reason names a file the commit contains (the bot failed to find or read it), then the wall-time
distribution and the slowest commits. `--json` prints the same as one JSON document.

    python bench/replay.py --ix PATH [--since DATE] [--until DATE] [--limit N] [--jobs N]
                           [--sample N] [--json] [--out DIR]
    python bench/replay.py --compare BEFORE_DIR AFTER_DIR     # two --out folders

`--compare` reads two `--out` folders and prints, per check, the status counts before and after
on the commits both hold, and the rows whose status changed.

The history is not part of this repository (see DEVELOPERS.md for how to get it); nothing here
runs in CI.
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

PROJECT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(PROJECT))

from recipes.checklist import SIGNOFF_PHRASE, parse_template  # noqa: E402

CHANGELOG_PATHS = ("perf-changelog.yaml", "inferencex-e2e/perf-changelog.yaml")
CHECKLIST_PATHS = ("docs/PR_REVIEW_CHECKLIST.md", "inferencex-e2e/docs/PR_REVIEW_CHECKLIST.md")
CODEOWNERS_PATHS = (".github/CODEOWNERS", "CODEOWNERS", "docs/CODEOWNERS")
CORE_TEAM = "InferenceX/core"
FALLBACK_SIGNER = "replay-core-reviewer"
PR_NUMBER_RE = re.compile(r"\(#(\d+)\)\s*$")
EVALUATION_FAILED = "could not be evaluated"
COULD_NOT_VERIFY = "could not verify"
# Reasons that are about evidence only GitHub has; local mode reports them unavailable by design.
GITHUB_ONLY_RE = re.compile(r"not provided in local mode|sweep run|check run|artifact|upstream", re.I)
PATH_IN_REASON_RE = re.compile(r"[\w./-]+\.(?:sh|slurm|ya?ml|md|py|json|patch|diff)\b")
NOT_FOUND_RE = re.compile(r"could not verify: (\S+) named at \S+ (?:was not found|is not in this repository)"
                          r"|could not verify: \S+ named at \S+ is copied into the srt-slurm checkout from (\S+) ")
# Code a script downloads or pipes in at run time: not a file of the commit the bot missed.
OPAQUE_RE = re.compile(r"could not read what line \d+ of \S+ runs: a script it downloads")
# The review's interpreter budget was spent before the point was traced: the bot's own limit.
BUDGET_RE = re.compile(r"interpreter steps were spent")
# A script sourcing a path the bot resolved as bash does (`$(dirname "$0")/../lib.sh`) that is
# not in the commit: only that exact path counts (a file of that name elsewhere is not the one
# bash would read).
RESOLVED_MISSING_RE = re.compile(r"which is (\S+), not a file of the repository")
# A YAML file that sets one key twice: the bot read it and refuses it by design (issue 29: YAML
# is read with YAML's own rules, duplicate keys refused), so the row reports the file's defect.
DUPLICATE_KEY_RE = re.compile(r"duplicate key '[^']*' \(first at line \d+\)")
TIMEOUT_S = 600
SLOWEST = 5


@dataclass
class Replayed:
    sha: str
    date: str
    pr: int | None
    code: int
    wall: float
    rows: list[dict] = field(default_factory=list)
    error: str = ""
    # CPU seconds (user + system) of the verdict process and the git processes it waited for:
    # unlike wall time, barely moved by other work sharing the machine.
    cpu: float | None = None
    # The benchmark points the verdict's JSON lists as affected (None: a bot that lists none).
    affected: int | None = None


def git(repo: str, *args: str, check: bool = True) -> str:
    proc = subprocess.run(["git", "-C", repo, "-c", "core.quotepath=off", *args],
                          capture_output=True, check=check)
    return proc.stdout.decode("utf-8", "replace")


def commit_of(repo: str, ref: str) -> tuple[str, str, str]:
    """(full sha, ISO commit date, subject) of a commit (a sha, a unique prefix)."""
    sha, date, subject = git(repo, "log", "-1", "--format=%H%x00%cI%x00%s", ref).strip().split("\0", 2)
    return sha, date, subject


def show(repo: str, sha: str, path: str) -> str | None:
    proc = subprocess.run(["git", "-C", repo, "show", f"{sha}:{path}"], capture_output=True)
    return proc.stdout.decode("utf-8", "replace") if proc.returncode == 0 else None


def pr_commits(repo: str, since: str | None, until: str | None) -> list[tuple[str, str, str]]:
    """(sha, ISO commit date, subject) of first-parent main commits touching a changelog, oldest first."""
    args = ["log", "--first-parent", "--reverse", "--format=%H%x00%cI%x00%s", "main"]
    if since:
        args.append(f"--since={since}")
    if until:
        args.append(f"--until={until}")
    out = git(repo, *args, "--", *CHANGELOG_PATHS)
    return [tuple(line.split("\0", 2)) for line in out.splitlines() if line.count("\0") == 2]


def owners_of(codeowners: str, path: str) -> list[str]:
    """Owners of `path` by the last matching line (a rough matcher: enough to pick a signer)."""
    found: list[str] = []
    for line in codeowners.splitlines():
        parts = line.split("#", 1)[0].split()
        if len(parts) < 2:
            continue
        pattern, owners = parts[0], [o for o in parts[1:] if o.startswith("@")]
        p = pattern.strip("/")
        if pattern == "*" or path == p or path.startswith(p.rstrip("*").rstrip("/") + "/"):
            found = owners
    return found


def choose_signer(repo: str, base: str, changed: list[str]) -> str:
    """A named (non-team) owner of the changed master config, else of any changed file."""
    text = next((t for p in CODEOWNERS_PATHS if (t := show(repo, base, p)) is not None), "")
    masters = [p for p in changed if p.endswith("-master.yaml")]
    for path in masters + changed:
        for owner in owners_of(text, path):
            if "/" not in owner:
                return owner.lstrip("@")
    return FALLBACK_SIGNER


def signoff_body(repo: str, base: str) -> str:
    """The target branch's checklist with every item checked (the phrase alone when it has none)."""
    for path in CHECKLIST_PATHS:
        text = show(repo, base, path)
        if text is None:
            continue
        tpl = parse_template(text, path)
        if tpl.items:
            lines = [f"{SIGNOFF_PHRASE}, I have verified:"]
            lines += [f"{'  ' * item.depth}- [x] {item.text}" for item in tpl.items]
            return "\n".join(lines)
    return f"{SIGNOFF_PHRASE}, I have reviewed this PR and it follows the checklist."


def pr_file(repo: str, sha: str, subject: str, date: str) -> dict:
    base = f"{sha}^1"
    changed = git(repo, "diff", "--name-only", base, sha).splitlines()
    signer = choose_signer(repo, base, changed)
    message = git(repo, "log", "-1", "--format=%B", sha)
    m = PR_NUMBER_RE.search(subject)
    return {
        "number": int(m.group(1)) if m else 1,
        "title": subject,
        "body": message.split("\n", 1)[1].strip() if "\n" in message else "",
        "author": "replay-author",
        "signoff": {"author": signer, "association": "MEMBER", "kind": "issue_comment",
                    "body": signoff_body(repo, base), "created_at": date},
        "comments": [],
        "check_runs": {},
        "runs": [],
        "users": {signer: {"permission": "write", "role_name": "write"}},
        "teams": {CORE_TEAM: [signer]},
        "upstream": [],
    }


def verdict_command(repo: str, sha: str, date: str, subject: str, workdir: str,
                    external: list[str] = (), config: str | None = None) -> tuple[list[str], dict]:
    """The `check --local` command that replays one commit, and the PR file it reads (written
    into `workdir`)."""
    pr = pr_file(repo, sha, subject, date)
    path = os.path.join(workdir, f"{sha}.pr.yaml")
    Path(path).write_text(yaml.safe_dump(pr, sort_keys=False))
    cmd = [sys.executable, "-m", "bot", "check", "--local", repo, "--base", f"{sha}^1", "--head", sha,
           "--pr", path, "--review-date", date[:10], "--format", "json"]
    for spec in external:
        cmd += ["--external-repo", spec]
    if config:
        cmd += ["--config", config]
    return cmd, pr


def replay_one(repo: str, sha: str, date: str, subject: str, workdir: str, bot: Path = PROJECT,
               external: list[str] = (), config: str | None = None) -> Replayed:
    cmd, pr = verdict_command(repo, sha, date, subject, workdir, external, config)
    start = time.perf_counter()
    code, stdout, stderr, cpu = run_measured(cmd, bot, TIMEOUT_S)
    wall = time.perf_counter() - start
    if code is None:
        return Replayed(sha, date, pr["number"], -1, wall, error="timeout", cpu=cpu)
    rows: list[dict] = []
    error = ""
    affected = None
    if code in (0, 1):
        try:
            doc = json.loads(stdout)
            rows = doc["checks"]
            affected = len(doc["affected"]) if "affected" in doc else None
        except (ValueError, KeyError) as e:
            error = f"unreadable output: {e}"
    else:
        error = stderr.strip()[-800:]
    return Replayed(sha, date, pr["number"], code, wall, rows, error, cpu, affected)


# The packages a verdict imports. A deployed bot imports them from bytecode (pip compiles what
# it installs; a checkout writes __pycache__ on its first run); a shell with
# PYTHONDONTWRITEBYTECODE=1 (this machine's) never writes it, so each verdict would also compile
# ~70 modules from source, about 0.2 s of every process.
BOT_PACKAGES = ("bot", "checks", "recipes")


def compile_bot(bot: Path) -> None:
    """Write the bytecode of the bot's packages once, before any verdict is timed."""
    for pkg in BOT_PACKAGES:
        if (bot / pkg).is_dir():
            compileall.compile_dir(str(bot / pkg), quiet=1)


def run_measured(cmd: list[str], cwd: Path, timeout: float) -> tuple[int | None, str, str, float]:
    """(exit code or None on timeout, stdout, stderr, CPU seconds) of one process. The child is
    reaped with `os.wait4`, whose resource usage is that child's own (with the processes it
    waited for), so parallel jobs do not mix their figures."""
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    killed = threading.Event()

    def kill() -> None:
        killed.set()
        proc.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    err: list[bytes] = []
    reader = threading.Thread(target=lambda: err.append(proc.stderr.read()))
    reader.start()
    try:
        out = proc.stdout.read()
        reader.join()
        _, status, usage = os.wait4(proc.pid, 0)
    finally:
        timer.cancel()
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    proc.stdout.close()
    proc.stderr.close()
    cpu = usage.ru_utime + usage.ru_stime
    stdout, stderr = out.decode("utf-8", "replace"), (err[0] if err else b"").decode("utf-8", "replace")
    return (None if killed.is_set() else code), stdout, stderr, cpu


_TREES: dict[str, set[str]] = {}


def tree_names(repo: str, sha: str) -> set[str]:
    """Every path of the commit's tree and every file's base name (memoized per commit)."""
    if sha not in _TREES:
        paths = git(repo, "ls-tree", "-r", "--name-only", sha).splitlines()
        _TREES[sha] = set(paths) | {p.rsplit("/", 1)[-1] for p in paths}
    return _TREES[sha]


def bot_caused(repo: str, sha: str, reason: str) -> bool:
    """A "could not verify" row the bot caused: the review's interpreter budget ran out, or it
    names a file the commit contains, at that path or (for "not found") under another folder of
    the commit's own layout, except for a file refused for a duplicate key."""
    if BUDGET_RE.search(reason):
        return True
    if GITHUB_ONLY_RE.search(reason) or OPAQUE_RE.search(reason) or DUPLICATE_KEY_RE.search(reason):
        return False
    names = tree_names(repo, sha)
    resolved = RESOLVED_MISSING_RE.search(reason)
    if resolved:
        return resolved.group(1) in names
    missing = NOT_FOUND_RE.search(reason)
    # "X named at Y was not found": only X is what the bot failed to find (Y is the referrer).
    for path in [missing.group(1) or missing.group(2)] if missing else PATH_IN_REASON_RE.findall(reason):
        path = path.lstrip("./")
        if path in names or path.rsplit("/", 1)[-1] in names:
            return True
    return False


def pct(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def summarize(repo: str, results: list[Replayed]) -> dict:
    codes = Counter(r.code for r in results)
    per_check: dict[int, Counter] = defaultdict(Counter)
    crashed, caused = [], []
    total_rows = 0
    for r in results:
        for row in r.rows:
            total_rows += 1
            per_check[row["number"]][row["status"]] += 1
            reason = row.get("reason", "")
            if EVALUATION_FAILED in reason:
                crashed.append({"sha": r.sha[:10], "pr": r.pr, "check": row["number"], "reason": reason})
            elif COULD_NOT_VERIFY in reason.lower() and bot_caused(repo, r.sha, reason):
                caused.append({"sha": r.sha[:10], "pr": r.pr, "check": row["number"], "reason": reason})
    walls = [r.wall for r in results]
    cpus = [r.cpu for r in results if r.cpu is not None]
    slowest = sorted(results, key=lambda r: -r.wall)[:SLOWEST]
    return {
        "commits": len(results),
        "exit_codes": dict(sorted(codes.items())),
        "rows": total_rows,
        "rows_per_check": {n: dict(per_check[n]) for n in sorted(per_check)},
        "could_not_be_evaluated": crashed,
        "bot_caused_could_not_verify": caused,
        "bot_caused_rate": (len(caused) / total_rows) if total_rows else 0.0,
        "errors": [{"sha": r.sha[:10], "pr": r.pr, "code": r.code, "error": r.error[-300:]}
                   for r in results if r.code not in (0, 1)],
        "wall_s": _spread(walls),
        "cpu_s": _spread(cpus),
        "affected_points": _spread([float(r.affected) for r in results if r.affected is not None]),
        "slowest": [{"sha": r.sha[:10], "pr": r.pr, "wall_s": round(r.wall, 2),
                     "cpu_s": round(r.cpu, 2) if r.cpu is not None else None} for r in slowest],
    }


def _spread(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values) if values else 0.0, "p95": pct(values, 0.95),
            "max": max(values, default=0.0)}


def print_text(s: dict) -> None:
    print(f"commits run: {s['commits']}")
    print(f"exit codes: {s['exit_codes']}")
    print("rows per check (status: count):")
    for n, counts in s["rows_per_check"].items():
        print(f"  {n:>2}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print(f"rows 'could not be evaluated': {len(s['could_not_be_evaluated'])}")
    for row in s["could_not_be_evaluated"][:40]:
        print(f"  {row['sha']} #{row['pr']} check {row['check']}: {row['reason'][:200]}")
    print(f"rows 'could not verify' the bot caused: {len(s['bot_caused_could_not_verify'])}"
          f" of {s['rows']} rows ({100 * s['bot_caused_rate']:.2f}%)")
    for row in s["bot_caused_could_not_verify"][:40]:
        print(f"  {row['sha']} #{row['pr']} check {row['check']}: {row['reason'][:200]}")
    if s["errors"]:
        print(f"processes that did not give a verdict: {len(s['errors'])}")
        for e in s["errors"][:20]:
            print(f"  {e['sha']} #{e['pr']} exit {e['code']}: {e['error'][-200:]}")
    w = s["wall_s"]
    print(f"wall s per verdict: median {w['median']:.2f}, p95 {w['p95']:.2f}, max {w['max']:.2f}")
    c = s.get("cpu_s")
    if c and c["max"]:
        print(f"CPU s per verdict: median {c['median']:.2f}, p95 {c['p95']:.2f}, max {c['max']:.2f}")
    print("slowest: " + ", ".join(f"{x['sha']} #{x['pr']} {x['wall_s']}s" for x in s["slowest"]))


def load_out(folder: str) -> dict[str, dict]:
    """sha -> replayed record, from an `--out` folder."""
    out = {}
    for path in sorted(Path(folder).glob("*.json")):
        if path.name == "summary.json":
            continue
        record = json.loads(path.read_text())
        out[record["sha"]] = record
    return out


def compare(before_dir: str, after_dir: str) -> dict:
    before, after = load_out(before_dir), load_out(after_dir)
    common = sorted(set(before) & set(after))
    counts: dict[int, dict[str, Counter]] = defaultdict(lambda: {"before": Counter(), "after": Counter()})
    changed = []
    for sha in common:
        rows_before = {r["number"]: r for r in before[sha]["rows"]}
        rows_after = {r["number"]: r for r in after[sha]["rows"]}
        for n in sorted(set(rows_before) | set(rows_after)):
            b, a = rows_before.get(n, {}), rows_after.get(n, {})
            counts[n]["before"][b.get("status", "-")] += 1
            counts[n]["after"][a.get("status", "-")] += 1
            if b.get("status") != a.get("status"):
                changed.append({"sha": sha[:10], "pr": after[sha]["pr"], "check": n,
                                "before": b.get("status", "-"), "after": a.get("status", "-"),
                                "reason": a.get("reason", "")[:200]})
    walls = {k: [d[s]["wall"] for s in common] for k, d in (("before", before), ("after", after))}
    # Older folders have no CPU figure; compare it only where both sides have it.
    timed = [s for s in common if before[s].get("cpu") is not None and after[s].get("cpu") is not None]
    cpus = {k: [d[s]["cpu"] for s in timed] for k, d in (("before", before), ("after", after))}
    return {
        "commits": len(common),
        "per_check": {n: {k: dict(v) for k, v in c.items()} for n, c in sorted(counts.items())},
        "changed_rows": changed,
        "wall_s": {k: _spread(v) for k, v in walls.items()},
        "cpu_s": {k: _spread(v) for k, v in cpus.items()},
        "cpu_commits": len(timed),
    }


def print_compare(c: dict) -> None:
    print(f"commits in both: {c['commits']}")
    for n, sides in c["per_check"].items():
        fmt = lambda counts: ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))  # noqa: E731
        print(f"  {n:>2}: before {fmt(sides['before'])}  |  after {fmt(sides['after'])}")
    print(f"rows whose status changed: {len(c['changed_rows'])}")
    for row in c["changed_rows"][:60]:
        print(f"  {row['sha']} #{row['pr']} check {row['check']}: {row['before']} -> {row['after']}: {row['reason']}")
    for side in ("before", "after"):
        w = c["wall_s"][side]
        print(f"wall s {side}: median {w['median']:.2f}, p95 {w['p95']:.2f}, max {w['max']:.2f}")
    if c.get("cpu_commits"):
        for side in ("before", "after"):
            u = c["cpu_s"][side]
            print(f"CPU s {side} ({c['cpu_commits']} commits): median {u['median']:.2f}, p95 {u['p95']:.2f}, "
                  f"max {u['max']:.2f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two --out folders")
    ap.add_argument("--ix", help="a git work tree of the benchmark repository's history")
    ap.add_argument("--since", help="only commits on or after this date")
    ap.add_argument("--until", help="only commits on or before this date")
    ap.add_argument("--limit", type=int, help="at most this many commits (the newest ones)")
    ap.add_argument("--sample", type=int, help="this many commits spread evenly over the range")
    ap.add_argument("--jobs", type=int, default=2, help="verdicts run at once (default 2)")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    ap.add_argument("--out", help="also write every verdict's rows here, one JSON file per commit")
    ap.add_argument("--external-repo", metavar="OWNER/NAME=DIR", action="append", default=[],
                    help="a clone of a repository the runners clone (NVIDIA/srt-slurm=DIR), passed to each verdict")
    ap.add_argument("--config", metavar="FILE",
                    help="the repository config every verdict applies (check --local --config), e.g. "
                         "examples/inferencex/infx-review.yml: InferenceX's own settings, not the neutral defaults")
    ap.add_argument("--commits", metavar="FILE", help="only the commits listed in FILE (one SHA per line)")
    ap.add_argument("--no-compile", action="store_true",
                    help="do not byte-compile the bot's packages first (each verdict then compiles them)")
    ap.add_argument("--bot", default=str(PROJECT),
                    help="the infx-review checkout whose code gives the verdicts (default: this one); point it "
                         "at a frozen worktree while this one is being edited, e.g. for a baseline")
    args = ap.parse_args(argv)
    if args.compare:
        result = compare(*args.compare)
        print(json.dumps(result, indent=2)) if args.json else print_compare(result)
        return 0
    if not args.ix:
        ap.error("--ix PATH is required (or --compare BEFORE AFTER)")
    repo = str(Path(args.ix).resolve())
    commits = pr_commits(repo, args.since, args.until)
    if args.commits:
        wanted = {line.strip() for line in Path(args.commits).read_text().split() if line.strip()}
        commits = [c for c in commits if c[0] in wanted]
    if args.limit:
        commits = commits[-args.limit:]
    if args.sample and args.sample < len(commits):
        step = len(commits) / args.sample
        commits = [commits[int(i * step)] for i in range(args.sample)]
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="infx-replay-") as workdir, \
            ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        bot = Path(args.bot).resolve()
        if not args.no_compile:
            compile_bot(bot)
        config = str(Path(args.config).resolve()) if args.config else None
        out = Path(args.out) if args.out else None
        if out is not None:
            out.mkdir(parents=True, exist_ok=True)

        def one(c: tuple) -> Replayed:
            r = replay_one(repo, c[0], c[1], c[2], workdir, bot, args.external_repo, config)
            if out is not None:  # as each verdict ends: a run cut short keeps what it did
                (out / f"{r.sha}.json").write_text(json.dumps(r.__dict__, indent=1))
            return r
        results = list(pool.map(one, commits))
    summary = summarize(repo, results)
    summary["elapsed_s"] = round(time.perf_counter() - started, 1)
    if args.out:
        (Path(args.out) / "summary.json").write_text(json.dumps(summary, indent=2))
    if args.json:
        print(json.dumps(summary, indent=2))
    else:
        print_text(summary)
        print(f"elapsed: {summary['elapsed_s']} s with {args.jobs} jobs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
