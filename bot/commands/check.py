"""`python -m bot check`: evaluate one PR and print the verdict, from a local checkout or from GitHub
(`check PR# --repo OWNER/NAME [--post]`: build snapshot -> evaluate -> render -> publish)."""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Callable

from bot.cli import EXIT_ERROR, EXIT_OK, EXIT_REJECTED
from checks.engine import Verdict, VerdictStatus, evaluate
from checks.snapshot import Unavailable
from bot.dates import day_arg

if TYPE_CHECKING:  # GitHub mode only: PyGithub and the publisher load when a PR# is checked
    from bot.github_client import GitHubApi
    from bot.publisher import Published, Publisher


# Start-up: local mode and `--help` never import PyGithub, the publisher or jinja2; these
# stand-ins import their module on first call (and stay patchable as module attributes).
def build_snapshot(*args, **kwargs):
    from bot.snapshot_builder import build_snapshot as impl

    return impl(*args, **kwargs)


def build_local_snapshot(*args, **kwargs):
    from bot.local import build_local_snapshot as impl

    return impl(*args, **kwargs)


def render_markdown(verdict):
    from checks.render import render_markdown as impl

    return impl(verdict)


def render_comment(verdict, key):
    from checks.render import render_comment as impl

    return impl(verdict, key)

NAME = "check"
HELP = "evaluate a PR and print its verdict (GitHub: PR# --repo OWNER/NAME; local: --local PATH --base REF --head REF)"
REPO_ENV = "GITHUB_REPOSITORY"
MSG_NEED_PR = "give a PR number (GitHub mode) or --local PATH --base REF --head REF (local mode)"
MSG_NEED_REPO = f"GitHub mode needs --repo OWNER/NAME (or {REPO_ENV})"
MSG_PARTIAL_POST = "--only gives a partial verdict, which is never posted; drop --post or --only"
MSG_INTERNAL = "internal error while {stage} (traceback logged above)"
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
    except ValueError as e:
        return _fail(str(e))
    review_date = args.review_date
    try:
        from bot.local import LocalModeError

        snapshot = build_local_snapshot(
            args.local, args.base, args.head, pr_file=args.pr, review_date=review_date, repo=args.repo
        )
    except LocalModeError as e:
        return _fail(str(e))
    except Exception:  # a bug reading the inputs is exit 2, never a verdict (issue 12)
        log.exception("building the local snapshot of %s failed", args.local)
        return _fail("internal error while reading the repository (traceback logged above)")
    try:
        verdict = evaluate(snapshot, only=only)
        out = json.dumps(verdict.to_json(), indent=2, ensure_ascii=False) if args.format == "json" else render_markdown(verdict)
    except Exception:  # an internal error is exit 2, never a verdict
        log.exception("evaluating %s failed", snapshot.repo)
        return _fail("internal error while evaluating (traceback logged above)")
    print(out)
    if getattr(args, "fix", False):
        _apply_local_fixes(Path(args.local), verdict)
    return exit_code(verdict.status)


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


@dataclass
class Review:
    """The outcome of one pipeline run: the verdict (None when it could not be produced), what
    was published, and the exit code."""

    verdict: Verdict | None
    published: Published | None
    code: int
    error: str | None = None


def review_pr(
    api: GitHubApi,
    repo: str,
    number: int,
    *,
    post: bool,
    signoff_ref: str | None = None,
    review_date: date | None = None,
    only: set[int] | None = None,
    progress: Callable[[str], None] | None = None,
    pin_head: str | None = None,
) -> Review:
    """The chain of stages: build snapshot -> evaluate -> render -> publish, then best-effort
    extras. With `post`, a verdict and a status always go out: a failed stage publishes a
    failure status (and an incomplete-verification comment) naming the stage. `pin_head` is
    the head an event saw when it started; a later head is named as not assessed."""
    from bot.github_client import describe_error
    from bot.publisher import EXTRA_CHECK_RUN, EXTRA_SUGGESTIONS, Publisher
    from bot.snapshot_builder import SnapshotError

    publisher = Publisher(api, repo, number)
    snapshot = None
    stage = "building the snapshot"
    try:
        snapshot = build_snapshot(api, repo, number, signoff_ref=signoff_ref, review_date=review_date,
                                  progress=progress, pin_head=pin_head)
        publisher.context = snapshot.config.policy.status_context
        stage = "evaluating the checks"
        verdict = evaluate(snapshot, only=only)
        stage = "rendering the verdict"
        if post and verdict.signoff is not None:
            render_comment(verdict, verdict.signoff.key)  # fails here, not half-way through publishing
    except SnapshotError as exc:
        return _incomplete(api, publisher, repo, number, str(exc), snapshot, post, signoff_ref, pin_head)
    except Exception as exc:  # a bug: logged with its traceback; the PR still gets a status
        log.exception("%s failed for %s#%s", stage, repo, number)
        reason = f"{stage} failed ({type(exc).__name__})"
        return _incomplete(api, publisher, repo, number, reason, snapshot, post, signoff_ref, pin_head)
    published = None
    if post:
        if progress:
            progress("publishing the verdict")
        try:
            published = publisher.publish(verdict, signoff=snapshot.signoff)
            # Best effort, after the gate (the status): the check run with its annotations.
            if publisher.publish_check_run(verdict, published.comment_url):
                published.extras.append(EXTRA_CHECK_RUN)
            suggested = publisher.publish_suggestions(verdict, snapshot)
            if suggested:
                published.extras.append(EXTRA_SUGGESTIONS.format(n=suggested))
        except Exception as exc:
            log.exception("publishing the verdict on %s#%s failed", repo, number)
            return Review(verdict, None, EXIT_ERROR, f"publishing failed: {describe_error(exc)}")
    return Review(verdict, published, exit_code(verdict.status))


def _incomplete(api: GitHubApi, publisher: Publisher, repo: str, number: int, reason: str, snapshot,
                post: bool, signoff_ref: str | None, pin_head: str | None = None) -> Review:
    from bot.github_client import describe_error, fetch
    from checks.signoff_keys import KEY_RE

    if not post:
        return Review(None, None, EXIT_ERROR, reason)
    # The failure describes the head this run was asked to assess, not one pushed since.
    head = snapshot.head_sha if snapshot is not None else pin_head
    key = snapshot.signoff.key if snapshot is not None and snapshot.signoff is not None else None
    if head is None:
        pr = fetch(f"{repo}#{number}", lambda: api.get(f"/repos/{repo}/pulls/{number}"))
        if isinstance(pr, Unavailable):
            return Review(None, None, EXIT_ERROR, f"{reason}; no status could be set: {pr.reason}")
        head = pr["head"]["sha"]
    if key is None and signoff_ref:
        m = KEY_RE.search(signoff_ref)
        key = m.group(0) if m else None
    try:
        published = publisher.publish_incomplete(head, reason, signoff_key=key)
    except Exception as exc:
        log.exception("publishing the failure status on %s#%s failed", repo, number)
        return Review(None, None, EXIT_ERROR, f"{reason}; publishing failed: {describe_error(exc)}")
    return Review(None, published, EXIT_ERROR, reason)


def run_github(args: argparse.Namespace) -> int:
    """GitHub mode: the snapshot comes from the API; `--post` publishes through bot/publisher.py."""
    if args.pr_number is None:
        return _fail(MSG_NEED_PR)
    repo = args.repo or os.environ.get(REPO_ENV)
    if not repo:
        return _fail(MSG_NEED_REPO)
    try:
        only = parse_only(args.only)
    except ValueError as e:
        return _fail(str(e))
    review_date = args.review_date
    if only is not None and args.post:
        return _fail(MSG_PARTIAL_POST)
    from bot.github_client import ClientError, GitHubApi, make_github

    try:
        api = GitHubApi(make_github(args.github_url))
    except ClientError as e:
        return _fail(str(e))
    try:
        review = review_pr(api, repo, args.pr_number, post=args.post, signoff_ref=args.signoff,
                           review_date=review_date, only=only, progress=progress_printer())
    finally:
        api.close()
    if review.verdict is not None:
        print(format_verdict(review.verdict, args.format))
    if review.published is not None and review.published.status_state:
        p = review.published
        print(MSG_PUBLISHED.format(action=p.comment_action or "not posted", url=p.comment_url or "",
                                   state=p.status_state, description=p.status_description), file=sys.stderr)
    if review.error:
        print(f"error: {review.error}", file=sys.stderr)
    return review.code


def format_verdict(verdict: Verdict, fmt: str) -> str:
    return json.dumps(verdict.to_json(), indent=2, ensure_ascii=False) if fmt == "json" else render_markdown(verdict)


def run(args: argparse.Namespace) -> int:
    if args.local:
        return run_local(args)
    return run_github(args)
