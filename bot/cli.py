"""`python -m bot ...`: the command-line entry point. Exit codes: 0 ok/PASS/WARN, 1 REJECTED or
errors found, 2 usage or internal error."""
from __future__ import annotations

import argparse
import importlib
import logging
import sys

# Sub-command modules, in the order `--help` lists them.
COMMAND_MODULES = (
    "bot.commands.check",
    "bot.commands.inspect",
    "bot.commands.demo",
    "bot.commands.handle_event",
    "bot.commands.route_event",
    "bot.commands.config_schema",
    "bot.commands.sandbox",
)

EXIT_OK = 0
EXIT_REJECTED = 1
EXIT_ERROR = 2


def build_parser() -> tuple[argparse.ArgumentParser, dict]:
    parser = argparse.ArgumentParser(prog="python -m bot", description="infx-review: verify CODEOWNER sign-offs on benchmark PRs")
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug output to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    runners = {}
    for modname in COMMAND_MODULES:
        try:
            mod = importlib.import_module(modname)
        except ModuleNotFoundError as e:
            if e.name == modname:
                continue  # not built yet
            raise
        p = sub.add_parser(mod.NAME, help=mod.HELP, description=mod.HELP)
        mod.add_arguments(p)
        runners[mod.NAME] = mod.run
    return parser, runners


def main(argv: list[str] | None = None) -> int:
    parser, runners = build_parser()
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
        return runners[args.command](args)
    except KeyboardInterrupt:
        return EXIT_ERROR
