"""`python -m bot config-schema [--check FILE]`: the JSON Schema of `.github/infx-review.yml`
(for editors and CI validators), or a check of one file with every problem named by its line."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bot.cli import EXIT_ERROR, EXIT_OK, EXIT_REJECTED

NAME = "config-schema"
HELP = "print the JSON Schema of .github/infx-review.yml, or --check a file against it"
MSG_VALID = "{path}: valid"
MSG_UNREADABLE = "error: cannot read {path}: {error}"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--check", metavar="FILE", help="validate FILE instead; exit 1 naming each problem's line")


def run(args: argparse.Namespace) -> int:
    from recipes.config import config_json_schema, load_config_file

    if not args.check:
        print(json.dumps(config_json_schema(), indent=2, sort_keys=True))
        return EXIT_OK
    path = Path(args.check)
    try:
        _, findings = load_config_file(path)
    except OSError as exc:
        print(MSG_UNREADABLE.format(path=path, error=exc.strerror or exc), file=sys.stderr)
        return EXIT_ERROR
    for f in findings:
        print(str(f), file=sys.stderr)
    if findings:
        return EXIT_REJECTED
    print(MSG_VALID.format(path=path))
    return EXIT_OK
