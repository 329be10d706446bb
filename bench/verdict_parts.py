"""Benchmark: where the CPU of one replayed verdict goes: the launch interpreter, the bash
analyses, the tree-sitter parses, the YAML documents, the imports, and the rest.

Each commit is replayed as bench/replay.py replays it (the same `check --local` command and PR
file), in a process of its own whose CPU is split by timers put around a few functions of the
bot: `Tracer._interpret` (the interpreter), `recipes.scripts._analyze` (a bash analysis),
`recipes.bash.parse._parse` and `_repair_run_ons` (a parse the process had not made yet),
`recipes.yamlio._compose` (a YAML document) and the import machinery's `_find_and_load` (a
module imported after start-up). A part's figure is its own CPU, without the other parts it
calls (a parse made for an analysis counts as a parse), per thread (the checks run in a pool).
Start-up is the process's CPU until the imports of `check --local` (bench/startup.py) are made;
the rest is everything else (the affected rule's walks and loops, the master configs'
expansion, the serving views, the checks). The timers add a little to the total.

    python bench/verdict_parts.py --ix PATH SHA [SHA ...] [--bot DIR]
                                  [--external-repo OWNER/NAME=DIR] [--config FILE]

Needs the history (DEVELOPERS.md); nothing here runs in CI.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Callable

PROJECT = Path(__file__).resolve().parent.parent

# (label, module, class or None, function): the parts timed, innermost first when they nest.
PARTS = (
    ("interpreter", "recipes.launch.point", "Tracer", "_interpret"),
    ("bash analyses", "recipes.scripts", None, "_analyze"),
    ("bash parses", "recipes.bash.parse", None, "_parse"),
    ("bash parses", "recipes.bash.parse", None, "_repair_run_ons"),
    ("YAML", "recipes.yamlio", None, "_compose"),
    # A module imported on the way (the checks' and the interpreter's, imported when first needed).
    ("later imports", "_frozen_importlib", None, "_find_and_load"),
)
CHILD = "--child"


def child(imports: list[str], argv: list[str]) -> None:
    """Run `python -m bot ARGV` in this process (the bot checkout is the working directory) with
    the parts timed, once `imports` are made; print the figures as JSON on stderr."""
    import importlib

    sys.path[0] = os.getcwd()  # the bot checkout measured, in place of bench/
    for module in imports:
        importlib.import_module(module)
    from bot.__main__ import main

    startup = time.process_time()  # Python's own start, this file's and the bot's imports
    spent: Counter = Counter()
    local = threading.local()

    def timed(label: str, fn):
        def run(*a, **k):
            stack = local.__dict__.setdefault("stack", [])
            stack.append(0.0)  # the CPU of the parts this one calls
            began = time.thread_time()
            try:
                return fn(*a, **k)
            finally:
                took = time.thread_time() - began
                inner = stack.pop()
                spent[label] += took - inner
                if stack:
                    stack[-1] += took
        return run

    timing: set[str] = set()
    for label, module, cls, name in PARTS:
        owner = importlib.import_module(module)
        owner = getattr(owner, cls) if cls else owner
        if hasattr(owner, name):  # an older checkout may not have it: its part is not told apart
            setattr(owner, name, timed(label, getattr(owner, name)))
            timing.add(label)

    def report(code: int) -> None:
        total = time.process_time()
        parts = {"start-up imports": startup, **{k: spent[k] if k in timing else None
                                                 for k in dict.fromkeys(p[0] for p in PARTS)}}
        parts["rest"] = total - sum(v for v in parts.values() if v is not None)
        print("VERDICT-PARTS " + json.dumps({"total": total, "exit": code, "parts": parts}), file=sys.stderr, flush=True)

    real_exit = os._exit  # `python -m bot` leaves through os._exit (bot/__main__.py)

    def leave(code: int) -> None:
        report(code)
        real_exit(code)

    os._exit = leave
    sys.argv = ["bot", *argv]
    code = main()
    report(code or 0)


def add_sha_arguments(ap: argparse.ArgumentParser) -> None:
    """The commits a bench that replays each in a child process takes, named on the command line
    (commit_cpu.add_commit_arguments takes a file of them): --ix, SHA..., --bot and the review's
    inputs."""
    from bot.local import add_review_inputs

    ap.add_argument("--ix", required=True, help="a git work tree of the benchmark repository's history")
    ap.add_argument("shas", nargs="+", metavar="SHA", help="commits of the history (full or a unique prefix)")
    ap.add_argument("--bot", default=str(PROJECT), help="the infx-review checkout to run (default: this one)")
    add_review_inputs(ap, "every verdict")


def replay_in_children(args: argparse.Namespace, script: str, extra: Callable[[str, str], list[str]]):
    """Each commit of `args` (`add_sha_arguments`) replayed as bench/replay.py replays it, by
    `python SCRIPT --child EXTRA... CHECK-ARGS` run in the bot checkout (`extra(sha, workdir)`
    gives the child's own arguments): (sha, PR file, finished process) per commit."""
    from bench.replay import commit_of, compile_bot, verdict_command

    repo, bot = str(Path(args.ix).resolve()), Path(args.bot).resolve()
    config = str(Path(args.config).resolve()) if args.config else None
    compile_bot(bot)
    with tempfile.TemporaryDirectory() as workdir:
        for sha, date, subject in (commit_of(repo, ref) for ref in args.shas):
            cmd, pr = verdict_command(repo, sha, date, subject, workdir, args.external_repo, config)
            assert cmd[1:3] == ["-m", "bot"], cmd
            proc = subprocess.run([cmd[0], str(Path(script).resolve()), CHILD, *extra(sha, workdir), *cmd[3:]],
                                  cwd=bot, capture_output=True, text=True)
            yield sha, pr, proc


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(PROJECT))
    from bench.startup import IMPORTS

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_sha_arguments(ap)
    args = ap.parse_args(argv)
    for sha, pr, proc in replay_in_children(args, __file__, lambda sha, workdir: [",".join(IMPORTS)]):
        line = next((ln for ln in proc.stderr.splitlines() if ln.startswith("VERDICT-PARTS ")), None)
        if line is None:
            print(f"{sha[:10]} #{pr['number']}: no figures (exit {proc.returncode}): {proc.stderr[-400:]}")
            continue
        doc = json.loads(line.split(" ", 1)[1])
        parts = "  ".join(f"{k} {'-' if v is None else f'{v:.2f}'}" for k, v in doc["parts"].items())
        print(f"{sha[:10]} #{pr['number']}: {doc['total']:.2f} s CPU: {parts}")
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == [CHILD]:
        child(sys.argv[2].split(","), sys.argv[3:])
    else:
        sys.exit(main())
