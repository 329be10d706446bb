"""`python -m bot` and the `infx-review` script: the CLI, then a quick exit.

A large verdict leaves hundreds of thousands of small objects behind (parsed YAML, bash syntax trees, points,
rows). Python's own shutdown frees them one by one and collects garbage over the modules again:
0.2-0.3 s of CPU after the verdict of a large PR, 0.04 s after one that only imports. Once the
command has returned, the exit hooks (`atexit`: the demo's temporary world, the `git cat-file`
helpers, logging) have run and standard output and error are flushed, the operating system's
cleanup is all that is left, so the process then ends with `os._exit`. The normal shutdown is
kept when another thread is still running (its owner expects it to be joined) or when the hooks
or a flush fail.

While it runs, the process makes garbage collections rare (`fewer_collections`). A review builds
up to millions of objects that stay alive to its end (traces, syntax trees, parsed YAML), and
Python walks all of them in each full collection: 4 of them took 0.6 s of a 3.7 s verdict of the
InferenceX history, for 30 MB of cyclic garbage at most; the peak memory of those verdicts grew
by 2-5 MB. What survives a young collection mostly survives to the end too, so the young ones
mostly walk objects that are kept: one per 50,000 allocations kept instead of Python's 700 takes
1.5% off the instructions of a verdict that spends the interpreter budget (#1856, #2113; 1.3% of
#1914's, whose peak memory grew by 1 MB), and leaves at most that many objects of cyclic garbage
waiting (a few MB).

The command runs in one large chunk of frame memory (`recipes.stack.on_one_chunk`): on CPython
3.11 and 3.12 the launch walkers' recursion otherwise maps and unmaps a 16 KiB chunk thousands of
times a verdict.
"""
from __future__ import annotations

import atexit
import gc
import os
import sys
import threading

from bot.cli import main as cli_main
from recipes.stack import on_one_chunk


def exit_status(code: object) -> int:
    """The process status `SystemExit(code)` gives: None is 0, an int itself, anything else is
    printed to standard error and gives 1."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _alone() -> bool:
    main_thread = threading.main_thread()
    return all(t is main_thread or t.daemon for t in threading.enumerate())


def leave(code: object) -> int:
    """End the process with `code` without tearing the interpreter down, when that is safe;
    otherwise return the status for a normal exit."""
    status = exit_status(code)
    run_hooks = getattr(atexit, "_run_exitfuncs", None)
    if run_hooks is None or not _alone():
        return status
    try:
        run_hooks()
        sys.stdout.flush()
        sys.stderr.flush()
    except Exception:  # a closed pipe, say: Python's own exit reports it
        return status
    os._exit(status)


# Allocations kept (net of those freed) between two young collections (Python's default: 700).
YOUNG_COLLECTION_AFTER = 50_000
# Middle collections between two full collections (Python's default: 10): at this many, a full
# collection comes after hundreds of millions of allocations that stayed alive, past any review.
FULL_COLLECTION_AFTER = 1000


def fewer_collections() -> None:
    """A young garbage collection only after YOUNG_COLLECTION_AFTER allocations kept, a full one
    only after FULL_COLLECTION_AFTER collections of the middle generation (see the module); the
    middle generation's threshold stays. A threshold already higher is kept."""
    young, middle, full = gc.get_threshold()
    gc.set_threshold(max(young, YOUNG_COLLECTION_AFTER), middle, max(full, FULL_COLLECTION_AFTER))


def main() -> int:
    """The CLI (`bot.cli.main`) as a program: run it, then leave quickly (see the module)."""
    fewer_collections()
    try:
        code: object = on_one_chunk(cli_main)
    except SystemExit as e:
        code = e.code
    return leave(code)


if __name__ == "__main__":
    raise SystemExit(main())
