"""Benchmark: where the CPU of a replayed verdict goes, function by function, by sampling.

cProfile charges each call it times with its own cost (about a microsecond), so a function that
makes many small calls looks several times dearer than it is: on the slow verdicts of the
history it gave the affected rule's loop (checks.context `affected`) 0.15 s of its own and
`affected_roots` 0.12 s, where samples give them about 0.01 s and 0.03 s (mostly the first
reading of the runner scripts, which the rule asks for first). py-spy hangs on this machine.

Each commit is replayed as bench/replay.py replays it (the same `check --local` command and PR
file), in a process of its own that a CPU timer (SIGPROF, every `--interval` ms of the process's
CPU, rounded up by the kernel's tick) interrupts to record the main thread's Python stack (a
local verdict runs its checks there). A sample in the launch interpreter (`Tracer._interpret`)
or an import counts in those two parts only; the others are "outside". Printed over all the
commits: the parts' shares, then for the samples of one part (`--part`: outside by default; or
only those under `--under`, a function's `file:line(name)` or part of it) each function's share
inclusive (on the stack) and its own (the innermost frame of this project's code: time in C or
the standard library counts for the project function that called it).

    python bench/cpu_sample.py --ix PATH SHA [SHA ...] [--bot DIR] [--part PART] [--under TEXT] [--top N]
                               [--external-repo OWNER/NAME=DIR] [--config FILE]

Needs the history (DEVELOPERS.md); nothing here runs in CI.
"""
from __future__ import annotations

import argparse
import os
import pickle
import sys
from collections import Counter
from pathlib import Path

PROJECT = Path(__file__).resolve().parent.parent
CHILD = "--child"
INTERPRETER = "(_interpret)"  # recipes.launch.point.Tracer._interpret
IMPORT_MARK = "<frozen importlib._bootstrap>"
OWN_PACKAGES = ("recipes/", "checks/", "bot/")
COUNT = ""  # a tree node's sample count, beside its callees (no frame is named "")


def frame_name(code: object, root: str) -> str:
    """`file:line(function)` of a code object, the file relative to the bot checkout."""
    filename = code.co_filename  # type: ignore[attr-defined]
    if filename.startswith(root):
        filename = filename[len(root):]
    return f"{filename}:{code.co_firstlineno}({code.co_name})"  # type: ignore[attr-defined]


def child(out: str, interval_ms: float, argv: list[str]) -> None:
    """Run `python -m bot ARGV` here (the bot checkout is the working directory) under the CPU
    timer; write the stacks it sampled (innermost frame first) and their counts to `out`."""
    import signal

    sys.path[0] = os.getcwd()  # the bot checkout measured, in place of bench/
    root = os.getcwd().rstrip("/") + "/"
    stacks: Counter = Counter()

    def sample(_signum: int, frame: object) -> None:
        names = []
        while frame is not None:
            names.append(frame_name(frame.f_code, root))  # type: ignore[attr-defined]
            frame = frame.f_back  # type: ignore[attr-defined]
        stacks[tuple(names)] += 1

    def save() -> None:
        signal.setitimer(signal.ITIMER_PROF, 0, 0)
        with open(out, "wb") as f:
            pickle.dump(dict(stacks), f)

    real_exit = os._exit  # `python -m bot` leaves through os._exit (bot/__main__.py)

    def leave(code: int) -> None:
        save()
        real_exit(code)

    os._exit = leave
    signal.signal(signal.SIGPROF, sample)
    signal.setitimer(signal.ITIMER_PROF, interval_ms / 1000, interval_ms / 1000)
    sys.argv = ["bot", *argv]
    from bot.__main__ import main

    code = main()
    save()
    real_exit(code or 0)


def part_of(stack: tuple[str, ...]) -> str:
    """"interpreter", "imports" or "outside" for one sampled stack (innermost frame first)."""
    if any(INTERPRETER in name and "launch/point.py" in name for name in stack):
        return "interpreter"
    if any(name.startswith(IMPORT_MARK) for name in stack):
        return "imports"
    return "outside"


def summarize(stacks: dict[tuple[str, ...], int], under: str | None = None, part: str = "outside") -> dict:
    """The parts' sample counts and, for the samples of `part` (from the outermost frame naming
    `under`, when given), the tree of their calls (outermost first: each node a dict of its
    callees, with its sample count under `COUNT`) and each function's own count."""
    parts: Counter = Counter()
    own: Counter = Counter()
    root: dict = {COUNT: 0}
    for stack, n in stacks.items():
        parts[part_of(stack)] += n
        if part_of(stack) != part:
            continue
        if under is not None:
            at = [i for i, name in enumerate(stack) if under in name]
            if not at:
                continue
            stack = stack[:at[-1] + 1]
        root[COUNT] += n
        node = root
        for name in reversed(stack):
            node = node.setdefault(name, {COUNT: 0})
            node[COUNT] += n
        own[next((name for name in stack if name.startswith(OWN_PACKAGES)), stack[0])] += n
    return {"samples": sum(parts.values()), "parts": dict(parts), "tree": root, "own": own}


def tree_lines(node: dict, total: int, least: float, depth: int, indent: str = "") -> list[str]:
    """The callees of `node` holding at least `least` of all samples, dearest first, `depth`
    levels down; a callee that holds all its caller's samples is written on its caller's line
    (`a > b`)."""
    lines = []
    callees = sorted(((k, v) for k, v in node.items() if k != COUNT), key=lambda kv: -kv[1][COUNT])
    for name, sub in callees:
        if sub[COUNT] / total < least or depth <= 0:
            break
        names = [name]
        while len(sub) == 2 and next(v for k, v in sub.items() if k != COUNT)[COUNT] == sub[COUNT]:
            name, sub = next((k, v) for k, v in sub.items() if k != COUNT)
            names.append(name)
        lines.append(f"{indent}{100 * sub[COUNT] / total:6.2f}%  {' > '.join(names)}")
        lines += tree_lines(sub, total, least, depth - 1, indent + "  ")
    return lines


def print_summary(s: dict, top: int, under: str | None, least: float, depth: int, part: str = "outside") -> None:
    total = s["samples"] or 1
    print(f"{s['samples']} samples: " + "  ".join(f"{k} {100 * v / total:.1f}%" for k, v in sorted(s["parts"].items())))
    what = f"under {under}" if under else ("outside the interpreter and the imports" if part == "outside" else f"in the {part}")
    print(f"{100 * s['tree'][COUNT] / total:.1f}% {what}, as shares of all samples; the calls:")
    print("\n".join(tree_lines(s["tree"], total, least, depth)))
    print("their own time (in this project's innermost function):")
    for name, n in s["own"].most_common(top):
        print(f"  {100 * n / total:6.2f}%  {name}")


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, str(PROJECT))
    from bench.verdict_parts import add_sha_arguments, replay_in_children

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_sha_arguments(ap)
    ap.add_argument("--interval", type=float, default=1.0, help="ms of CPU between samples (default 1)")
    ap.add_argument("--under", help="only the samples under this function (text of its file:line(name))")
    ap.add_argument("--part", choices=("outside", "interpreter", "imports"), default="outside",
                    help="the part whose samples are listed (default: outside the other two)")
    ap.add_argument("--top", type=int, default=30, help="functions listed by their own time (default 30)")
    ap.add_argument("--min", type=float, default=0.5, help="calls listed: at least this %% of the samples (default 0.5)")
    ap.add_argument("--depth", type=int, default=8, help="levels of calls listed (default 8)")
    args = ap.parse_args(argv)
    stacks: Counter = Counter()
    files: dict[str, str] = {}  # sha -> where its child writes its stacks

    def child_args(sha: str, workdir: str) -> list[str]:
        files[sha] = os.path.join(workdir, f"{sha}.stacks")
        return [files[sha], str(args.interval)]

    for sha, pr, proc in replay_in_children(args, __file__, child_args):
        if not os.path.exists(files[sha]):
            print(f"{sha[:10]} #{pr['number']}: no samples (exit {proc.returncode}): {proc.stderr[-400:]}")
            continue
        with open(files[sha], "rb") as f:
            mine = pickle.load(f)
        print(f"{sha[:10]} #{pr['number']}: {sum(mine.values())} samples")
        stacks.update(mine)
    print_summary(summarize(stacks, args.under, args.part), args.top, args.under, args.min / 100, args.depth,
                  args.part)
    return 0

if __name__ == "__main__":
    if sys.argv[1:2] == [CHILD]:
        child(sys.argv[2], float(sys.argv[3]), sys.argv[4:])
    else:
        sys.exit(main())
