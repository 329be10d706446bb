"""`python -m bot check`: evaluate one PR and print the verdict, from a local checkout or from GitHub
(`check PR# --repo OWNER/NAME [--post]`), through the one pipeline (bot/pipeline.py)."""
from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import Callable

from bot.cli import EXIT_ERROR
from bot.dates import day_arg
from bot.pipeline import review_local

NAME = "check"
HELP = "evaluate a PR and print its verdict (GitHub: PR# --repo OWNER/NAME; local: --local PATH --base REF --head REF)"
REPO_ENV = "GITHUB_REPOSITORY"
MSG_NEED_PR = "give a PR number (GitHub mode) or --local PATH --base REF --head REF (local mode)"
MSG_NEED_REPO = f"GitHub mode needs --repo OWNER/NAME (or {REPO_ENV})"
MSG_CONFIG_LOCAL_ONLY = ("--config applies to local mode only; in GitHub mode the bot reads .github/infx-review.yml "
                         "from the default branch")
MSG_PARTIAL_POST = "--only gives a partial verdict, which is never posted; drop --post or --only"
MSG_PUBLISHED = "published: comment {action} {url}; status {state}: {description}"
FORMATS = ("markdown", "json")

log = logging.getLogger(__name__)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--local", metavar="PATH", help="a git checkout of the benchmark repository (local mode)")
    p.add_argument("--base", metavar="REF", help="the target branch (local mode)")
    p.add_argument("--head", metavar="REF", help="the PR head commit (local mode)")
    p.add_argument("--pr", metavar="FILE", help="YAML with what only GitHub knows (schema: bot/prfile.py)")
    p.add_argument("--repo", metavar="OWNER/NAME", help="repository name for links (default: from the origin remote)")
    p.add_argument("--review-date", metavar="YYYY-MM-DD", type=day_arg, help="the review date in UTC (default: today)")
    p.add_argument("--format", choices=FORMATS, default="markdown", help="output format (default: markdown)")
    p.add_argument("--only", metavar="N,N", help="run only these check numbers (a partial verdict)")
    p.add_argument("pr_number", nargs="?", type=int, metavar="PR", help="the pull request number (GitHub mode)")
    p.add_argument("--github-url", metavar="URL", help="GitHub API base URL (default: $GITHUB_API_URL or api.github.com)")
    p.add_argument("--post", action="store_true", help="publish the verdict comment and commit status (GitHub mode)")
    p.add_argument("--signoff", metavar="URL_OR_KEY", help="the sign-off comment to verify (default: the newest one)")
    from bot.local import add_review_inputs

    add_review_inputs(p, "local mode")
    p.add_argument("--fix", action="store_true",
                   help="local mode: apply the mechanical fixes findings offer to the working tree of PATH")


def parse_only(text: str | None) -> set[int] | None:
    if text is None:
        return None
    from checks.registry import CHECK_NUMBERS

    numbers: set[int] = set()
    for part in text.split(","):
        part = part.strip()
        if not part.isdigit() or int(part) not in CHECK_NUMBERS:
            span = f"{min(CHECK_NUMBERS)}-{max(CHECK_NUMBERS)}"
            raise ValueError(f"--only takes check numbers {span} separated by commas, not {text!r}")
        numbers.add(int(part))
    if not numbers:
        raise ValueError("--only needs at least one check number")
    return numbers


class HeldWarnings(logging.Filter):
    """While active, log records wait instead of reaching standard error; on leaving they are
    written, unless `discard()` was called (later records are then dropped too: the requests a
    failed build left running fail the same way)."""

    def __init__(self) -> None:
        super().__init__()
        self.records: list[logging.LogRecord] = []
        self.dropping = False

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.dropping:
            self.records.append(record)
        return False

    def discard(self) -> None:
        self.dropping = True
        self.records.clear()

    def __enter__(self) -> "HeldWarnings":
        clear_held()
        for handler in logging.getLogger().handlers:
            handler.addFilter(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if self.dropping:
            return  # stays, dropping what the failed build's threads still log (until the next run)
        for handler in logging.getLogger().handlers:
            handler.removeFilter(self)
            for record in self.records:
                if handler.filter(record) and record.levelno >= handler.level:
                    handler.handle(record)
        self.records.clear()


def clear_held() -> None:
    """Take off the log handlers a dropping HeldWarnings an earlier run in this process left (a
    later command, or a test after it, logs as usual)."""
    for handler in logging.getLogger().handlers:
        for f in [f for f in handler.filters if isinstance(f, HeldWarnings)]:
            handler.removeFilter(f)


def _fail(message: str) -> int:
    """`error: ...` on stderr, one line per problem (a `--pr` file can have several), exit 2."""
    for line in message.splitlines() or [""]:
        print(f"error: {line}", file=sys.stderr)
    return EXIT_ERROR


def run_local(args: argparse.Namespace, only: set[int] | None) -> int:
    if not args.base or not args.head:
        return _fail("--local needs --base REF and --head REF")
    review = review_local(args.local, args.base, args.head, pr_file=args.pr, review_date=args.review_date,
                          repo=args.repo, only=only, external=args.external_repo, config_file=args.config)
    if review.verdict is None:
        return _fail(review.error or "no verdict")
    print(review.rendered.text(args.format))
    if getattr(args, "fix", False):
        _apply_local_fixes(Path(args.local), review.verdict)
    return review.code


MSG_FIXED = "fixed {path}:{line}: {key} set to {value!r} (Check {check}); review and commit it"
MSG_NOT_FIXED = "not fixed {path}:{line} (Check {check}): {why}"
MSG_NO_FIXES = "no finding offers a mechanical fix"


def _apply_local_fixes(root: Path, verdict) -> None:
    """`--fix`: the verdict's mechanical fixes edited into the working tree (one line each, every
    other byte kept); what was done goes to stderr, the verdict (of --head) is unchanged."""
    from bot.fixes import apply_to_tree, fixes_of

    fixes = fixes_of(verdict)
    if not fixes:
        print(MSG_NO_FIXES, file=sys.stderr)
    for fix, why in apply_to_tree(root, fixes):
        if why is None:
            print(MSG_FIXED.format(path=fix.path, line=fix.line, key=fix.key, value=fix.value, check=fix.check),
                  file=sys.stderr)
        else:
            print(MSG_NOT_FIXED.format(path=fix.path, line=fix.line, check=fix.check, why=why), file=sys.stderr)


def progress_printer(stream=None) -> Callable[[str], None] | None:
    """Progress lines on stderr, only when a person is watching it."""
    stream = stream or sys.stderr
    if not stream.isatty():
        return None
    return lambda message: print(f"... {message}", file=stream, flush=True)


def run_github(args: argparse.Namespace, only: set[int] | None) -> int:
    """GitHub mode: the snapshot comes from the API; `--post` publishes through bot/publisher.py."""
    from bot.pipeline import review_pr

    if args.pr_number is None:
        return _fail(MSG_NEED_PR)
    repo = args.repo or os.environ.get(REPO_ENV)
    if not repo:
        return _fail(MSG_NEED_REPO)
    review_date = args.review_date
    if only is not None and args.post:
        return _fail(MSG_PARTIAL_POST)
    from bot.diagnose import check_arguments, explain
    from bot.github_client import ClientError, GitHubApi, make_github

    wrong = check_arguments(repo, args.pr_number)
    if wrong:
        return _fail(wrong)
    try:
        api = GitHubApi(make_github(args.github_url))
    except ClientError as e:
        return _fail(str(e))
    clear_held()
    held = None if args.verbose else HeldWarnings()
    try:
        with held or contextlib.nullcontext():
            review = review_pr(api, repo, args.pr_number, post=args.post, signoff_ref=args.signoff,
                               review_date=review_date, only=only, progress=progress_printer())
            # The PR could not be read: one line saying whether the repository, the PR, the token
            # or the network is wrong, instead of a warning per request that failed the same way.
            reason = explain(api, repo, args.pr_number, review.cause) if review.verdict is None else None
            if reason and held is not None:
                held.discard()
    finally:
        api.close()
    if reason:
        return _fail(reason)
    if review.verdict is not None:
        print(review.rendered.text(args.format))
    if review.published is not None and review.published.status_state:
        p = review.published
        print(MSG_PUBLISHED.format(action=p.comment_action or "not posted", url=p.comment_url or "",
                                   state=p.status_state, description=p.status_description), file=sys.stderr)
    if review.error:
        print(f"error: {review.error}", file=sys.stderr)
    return review.code


def run(args: argparse.Namespace) -> int:
    try:
        only = parse_only(args.only)  # parsed once, for either mode
    except ValueError as e:
        return _fail(str(e))
    if args.config and not args.local:
        return _fail(MSG_CONFIG_LOCAL_ONLY)
    if args.local:
        return run_local(args, only)
    return run_github(args, only)
