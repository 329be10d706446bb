"""`python -m bot check`: evaluate one PR and print the verdict (local checkout now; GitHub later)."""
from __future__ import annotations

import argparse
import json
import logging
import sys
from datetime import date

from bot.cli import EXIT_ERROR, EXIT_OK, EXIT_REJECTED
from bot.local import LocalModeError, build_local_snapshot
from checks.engine import VerdictStatus, evaluate
from checks.render import render_markdown

NAME = "check"
HELP = "evaluate a PR and print its verdict (local mode: --local PATH --base REF --head REF)"
GITHUB_MODE_UNAVAILABLE = "GitHub mode not available yet; use --local PATH --base REF --head REF"
FORMATS = ("markdown", "json")

log = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--local", metavar="PATH", help="a git checkout of the benchmark repository (local mode)")
    p.add_argument("--base", metavar="REF", help="the target branch (local mode)")
    p.add_argument("--head", metavar="REF", help="the PR head commit (local mode)")
    p.add_argument("--pr", metavar="FILE", help="YAML with what only GitHub knows (schema: bot/prfile.py)")
    p.add_argument("--repo", metavar="OWNER/NAME", help="repository name for links (default: from the origin remote)")
    p.add_argument("--review-date", metavar="YYYY-MM-DD", help="the review date in UTC (default: today)")
    p.add_argument("--format", choices=FORMATS, default="markdown", help="output format (default: markdown)")
    p.add_argument("--only", metavar="N,N", help="run only these check numbers (a partial verdict)")


def parse_only(text: str | None) -> set[int] | None:
    if text is None:
        return None
    numbers: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or not 0 <= int(part) <= 15:
            raise ValueError(f"--only takes check numbers 0-15 separated by commas, not {text!r}")
        numbers.add(int(part))
    if not numbers:
        raise ValueError("--only needs at least one check number")
    return numbers


def _fail(message: str) -> int:
    print(f"error: {message}", file=sys.stderr)
    return EXIT_ERROR


def exit_code(status: VerdictStatus) -> int:
    return EXIT_REJECTED if status is VerdictStatus.REJECTED else EXIT_OK


def run_local(args: argparse.Namespace) -> int:
    if not args.base or not args.head:
        return _fail("--local needs --base REF and --head REF")
    try:
        only = parse_only(args.only)
        review_date = date.fromisoformat(args.review_date) if args.review_date else None
    except ValueError as e:
        return _fail(str(e) if "--only" in str(e) else f"--review-date must be YYYY-MM-DD, not {args.review_date!r}")
    try:
        snapshot = build_local_snapshot(
            args.local, args.base, args.head, pr_file=args.pr, review_date=review_date, repo=args.repo
        )
    except LocalModeError as e:
        return _fail(str(e))
    try:
        verdict = evaluate(snapshot, only=only)
        out = json.dumps(verdict.to_json(), indent=2, ensure_ascii=False) if args.format == "json" else render_markdown(verdict)
    except Exception:  # an internal error is exit 2, never a verdict
        log.exception("evaluating %s failed", snapshot.repo)
        return _fail("internal error while evaluating (traceback logged above)")
    print(out)
    return exit_code(verdict.status)


def run_github(args: argparse.Namespace) -> int:
    """GitHub mode (snapshot from the API) is added by the bot/ GitHub layer."""
    return _fail(GITHUB_MODE_UNAVAILABLE)


def run(args: argparse.Namespace) -> int:
    if args.local:
        return run_local(args)
    return run_github(args)
