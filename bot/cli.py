"""`python -m bot ...`: the command-line entry point. Exit codes: 0 ok/PASS/WARN, 1 REJECTED or
errors found, 2 usage or internal error, 141 when the reader of standard output went away.

A user error (a bad argument, repository, PR, token, network or folder) is one line on standard
error, `error: ...` or `PROG COMMAND: error: ...` for a bad argument, naming what to fix; never a
traceback. A command raises `UserError` for one."""
from __future__ import annotations

import argparse
import importlib
import logging
import os
import sys

from bot import __version__

# Sub-commands in the order `--help` lists them: (name, module, help). Only the module of the
# command being run is imported, so `--help` and local mode stay fast (tests check that each
# help text here is its module's HELP).
COMMANDS = (
    ("check", "bot.commands.check",
     "evaluate a PR and print its verdict (GitHub: PR# --repo OWNER/NAME; local: --local PATH --base REF --head REF)"),
    ("inspect", "bot.commands.inspect",
     "parse a benchmark repository (working tree or git ref), expand every entry and recipe, report findings"),
    ("demo", "bot.commands.demo",
     "run the full GitHub pipeline against a bundled sandbox world (no network needed)"),
    ("handle-event", "bot.commands.handle_event",
     "handle one GitHub webhook event (default: $GITHUB_EVENT_NAME and $GITHUB_EVENT_PATH)"),
    ("route-event", "bot.commands.route_event",
     "print which workflow job handles one GitHub event (review, sweep or skip)"),
    ("config-schema", "bot.commands.config_schema",
     "print the JSON Schema of .github/infx-review.yml, or --check a file against it"),
    ("sandbox", "bot.commands.sandbox",
     "serve a world directory as a local GitHub REST API emulator"),
)

# The program's name in usage lines and `--version`: the console script's own name when run as
# `infx-review`, the module's otherwise.
SCRIPT_NAME = "infx-review"
MODULE_PROG = "python -m bot"

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_ERROR = 2
# What a shell reports for a program ended by SIGPIPE (128 + 13): `check | head` stopped reading.
EXIT_PIPE_CLOSED = 141
MSG_ERROR = "error: {message}"
MSG_USAGE_ERROR = "{prog}: error: {message} (see {prog} --help)"


class UserError(Exception):
    """Something the user must fix (its message says what): one line on stderr, exit 2."""


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line naming the command and where its help is
    (argparse prints the whole usage first); sub-command parsers are made of the same class."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(EXIT_ERROR, MSG_USAGE_ERROR.format(prog=self.prog, message=message) + "\n")


def _stdout_closed() -> int:
    """The reader of standard output went away (`config-schema | head`): end quietly, as a program
    killed by SIGPIPE would, without Python reporting the unflushable stream at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file descriptor (a test's capture)
        pass
    return EXIT_PIPE_CLOSED


def _selected(argv: list[str]) -> str | None:
    """The sub-command named on the command line (the first word that is not an option)."""
    names = {name for name, _, _ in COMMANDS}
    for word in argv:
        if not word.startswith("-"):
            return word if word in names else None
    return None


def program_name(argv0: str | None = None) -> str:
    """`infx-review` when the process was started by that console script, else `python -m bot`."""
    argv0 = sys.argv[0] if argv0 is None else argv0
    stem = os.path.splitext(os.path.basename(argv0 or ""))[0]  # `infx-review.exe` on Windows
    return SCRIPT_NAME if stem == SCRIPT_NAME else MODULE_PROG


def build_parser(argv: list[str] | None = None) -> tuple[argparse.ArgumentParser, dict]:
    """The parser; with `argv`, only the named sub-command's module is imported and given its
    arguments (the others are listed by name and help only)."""
    parser = _Parser(prog=program_name(),
                                     description="infx-review: verify CODEOWNER sign-offs on benchmark PRs")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}",
                        help="print the version and exit")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug output to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    selected = _selected(argv) if argv is not None else None
    runners = {}
    for name, modname, help_text in COMMANDS:
        p = sub.add_parser(name, help=help_text, description=help_text)
        if argv is not None and name != selected:
            continue
        mod = importlib.import_module(modname)
        mod.add_arguments(p)
        runners[mod.NAME] = mod.run
    return parser, runners


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser, runners = build_parser(argv)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # argparse exits 2 on usage errors, 0 on --help
        return int(e.code or 0)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(levelname)s %(name)s: %(message)s",
        stream=sys.stderr,
    )
    if not args.command:
        parser.print_help()
        return EXIT_ERROR
    try:
        code = runners[args.command](args)
        sys.stdout.flush()  # a closed pipe shows here, not in Python's exit
        return code
    except UserError as e:
        print(MSG_ERROR.format(message=e), file=sys.stderr)
        return EXIT_ERROR
    except BrokenPipeError:
        return _stdout_closed()
    except KeyboardInterrupt:
        return EXIT_ERROR
    except Exception:  # a bug is exit 2 with its traceback, never 1 (REJECTED) from Python's default
        logging.getLogger("bot").exception("internal error in `%s`", args.command)
        return EXIT_ERROR
