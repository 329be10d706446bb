"""`python -m bot` and the `infx-review` script: the CLI, then a quick exit.

A large verdict leaves hundreds of thousands of small objects behind (parsed YAML, bash syntax trees, points,
rows). Python's own shutdown frees them one by one and collects garbage over the modules again:
0.2-0.3 s of CPU after the verdict of a large PR, 0.04 s after one that only imports. Once the
command has returned, the exit hooks (`atexit`: the demo's temporary world, the `git cat-file`
helpers, logging) have run and standard output and error are flushed, the operating system's
cleanup is all that is left, so the process then ends with `os._exit`. The normal shutdown is
kept when another thread is still running (its owner expects it to be joined) or when the hooks
or a flush fail.
"""
from __future__ import annotations

import atexit
import os
import sys
import threading

from bot.cli import main as cli_main


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


def main() -> int:
    """The CLI (`bot.cli.main`) as a program: run it, then leave quickly (see the module)."""
    try:
        code: object = cli_main()
    except SystemExit as e:
        code = e.code
    return leave(code)


if __name__ == "__main__":
    raise SystemExit(main())
