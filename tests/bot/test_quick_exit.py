"""`python -m bot` ends without Python's shutdown once the command returned: the exit hooks run,
the output is flushed, the status is the command's; with another thread alive it exits normally."""
from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from bot.__main__ import exit_status, leave

PROJECT = Path(__file__).resolve().parents[2]

# A global whose __del__ runs only when Python tears the interpreter down.
PROBE = """
import atexit, sys, threading
class Teardown:
    def __del__(self):
        sys.__stdout__.write("teardown ran\\n")
keep = Teardown()
atexit.register(lambda: print("hook ran"))
{extra}
sys.argv = ["bot", *{argv!r}]
import bot.__main__ as m
raise SystemExit(m.main())
"""


def _run(argv: list[str], extra: str = "") -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", PROBE.format(argv=argv, extra=extra)], cwd=PROJECT,
                          capture_output=True, text=True, timeout=60)


def test_exit_status_follows_system_exit():
    assert [exit_status(c) for c in (None, 0, 1, 2, 256 + 3)] == [0, 0, 1, 2, 3]


def test_exit_status_of_a_message_is_one_and_prints_it(capsys):
    assert exit_status("no such PR") == 1
    assert capsys.readouterr().err == "no such PR\n"


def test_help_skips_the_teardown_but_runs_the_hooks_and_flushes():
    proc = _run(["--help"])
    assert proc.returncode == 0
    assert proc.stdout.startswith("usage: python -m bot")
    assert "hook ran" in proc.stdout
    assert "teardown ran" not in proc.stdout


def test_a_usage_error_keeps_its_status():
    proc = _run(["no-such-command"])
    assert proc.returncode == 2
    assert "invalid choice" in proc.stderr and "teardown ran" not in proc.stdout


def test_a_running_thread_gets_the_normal_shutdown():
    extra = "t = threading.Thread(target=lambda: __import__('time').sleep(0.2)); t.start()"
    proc = _run(["--help"], extra)
    assert proc.returncode == 0
    assert "hook ran" in proc.stdout and "teardown ran" in proc.stdout


def test_leave_returns_the_status_while_another_thread_runs():
    stop = threading.Event()
    t = threading.Thread(target=stop.wait)
    t.start()
    try:
        assert leave(3) == 3
    finally:
        stop.set()
        t.join()


def test_a_local_check_keeps_its_usage_error_status(tmp_path):
    proc = _run(["check", "--local", str(tmp_path), "--base", "a", "--head", "b"])
    assert proc.returncode == 2 and "is not a git" in proc.stderr + proc.stdout
    assert "teardown ran" not in proc.stdout


def test_the_program_makes_collections_rare():
    probe = ("import atexit, gc, sys\nsys.argv = ['bot', '--help']\nbefore = gc.get_threshold()\n"
             "import bot.__main__ as m\n"
             "atexit.register(lambda: print('thresholds', before, gc.get_threshold()))\n"
             "raise SystemExit(m.main())\n")
    proc = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0
    before, after = proc.stdout.rsplit("thresholds", 1)[1].strip().split(") (")
    before, after = eval(before + ")"), eval("(" + after)
    # A young collection waits for 50,000 allocations kept, a full one for 1,000 middle
    # collections; the middle generation keeps Python's threshold.
    assert after == (max(before[0], 50_000), before[1], max(before[2], 1000))
    assert after[0] >= 50_000 and after[2] >= 1000
