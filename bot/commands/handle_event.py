"""`python -m bot handle-event`: one GitHub event (in Actions, GITHUB_EVENT_NAME and
GITHUB_EVENT_PATH) through the router. It answers ping, logs the delivery and routes; every
decision lives in the handlers (bot/handlers/)."""
from __future__ import annotations

import argparse
import logging
import os
import sys
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Mapping

from bot.cli import EXIT_ERROR, EXIT_OK
from bot.dates import day_arg

NAME = "handle-event"
HELP = "handle one GitHub webhook event (default: $GITHUB_EVENT_NAME and $GITHUB_EVENT_PATH)"
EVENT_NAME_ENV = "GITHUB_EVENT_NAME"
EVENT_PATH_ENV = "GITHUB_EVENT_PATH"
REPO_ENV = "GITHUB_REPOSITORY"
MSG_NEED_EVENT = f"give --event-name and --event-path (or set {EVENT_NAME_ENV} and {EVENT_PATH_ENV})"
MSG_NEED_REPO = f"the repository is unknown: give --repo OWNER/NAME (or set {REPO_ENV})"
MSG_PONG = "ping ({delivery}): nothing to do"
MSG_HANDLED = "{event}: {handlers}"
MSG_FAILED = "{event}: handler {handler} failed: {error}"

log = logging.getLogger(__name__)


@dataclass
class Handled:
    """One event's trip through the router: the normalised event and each handler's outcome."""

    event: Any
    outcomes: list = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return all(o.ok for o in self.outcomes)


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--event-name", metavar="NAME", help=f"the GitHub event name (default: ${EVENT_NAME_ENV})")
    p.add_argument("--event-path", metavar="FILE", help=f"the event payload JSON (default: ${EVENT_PATH_ENV})")
    p.add_argument("--repo", metavar="OWNER/NAME", help=f"the repository (default: ${REPO_ENV}, else the payload's)")
    p.add_argument("--github-url", metavar="URL", help="GitHub API base URL (default: $GITHUB_API_URL or api.github.com)")
    p.add_argument("--delivery", metavar="ID", help="the delivery id to log (default: the Actions run id)")
    p.add_argument("--review-date", metavar="YYYY-MM-DD", type=day_arg, help="the review date for verdicts (default: today, UTC)")


def handle_event(api, name: str, payload: Any, *, delivery: str | None = None, repo: str | None = None,
                 router=None, review_date: date | None = None, env: Mapping[str, str] | None = None,
                 review=None) -> Handled:
    """Parse, answer ping, and route one event with `api` (a bot.github_client.GitHubApi).
    Raises bot.events.EventError for a payload that cannot be understood."""
    from bot.events import EVENT_PING, delivery_id, parse_event
    from bot.handlers import build_router
    from bot.router import Context

    env = os.environ if env is None else env
    delivery = delivery or delivery_id(payload if isinstance(payload, dict) else {}, env)
    event = parse_event(name, payload, delivery=delivery, repo=repo)
    log.info("delivery %s: %s", delivery, event.describe())
    if name == EVENT_PING:
        log.info(MSG_PONG.format(delivery=delivery))
        return Handled(event)
    if not event.repo:
        from bot.events import EventError
        raise EventError(MSG_NEED_REPO)
    ctx = Context(api=api, repo=event.repo, delivery=delivery, default_branch=event.default_branch,
                  review_date=review_date, env=env, review=review)
    return Handled(event, (router or build_router()).dispatch(event, ctx))


def event_source(args: argparse.Namespace) -> tuple[str, str] | None:
    """(event name, payload path) from the flags or the Actions environment; None (and the
    usage error printed) when either is missing. Shared by handle-event and route-event."""
    name = args.event_name or os.environ.get(EVENT_NAME_ENV)
    path = args.event_path or os.environ.get(EVENT_PATH_ENV)
    if not name or not path:
        print(f"error: {MSG_NEED_EVENT}", file=sys.stderr)
        return None
    return name, path


def run(args: argparse.Namespace) -> int:
    from bot.events import EventError, load_payload
    from bot.github_client import ClientError, GitHubApi, make_github

    source = event_source(args)
    if source is None:
        return EXIT_ERROR
    name, path = source
    review_date = args.review_date
    try:
        payload = load_payload(path)
        api = GitHubApi(make_github(args.github_url))
    except (EventError, ClientError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    try:
        handled = handle_event(api, name, payload, delivery=args.delivery,
                               repo=args.repo or os.environ.get(REPO_ENV), review_date=review_date)
    except EventError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    finally:
        api.close()
    names = ", ".join(o.handler for o in handled.outcomes) or "no handler"
    print(MSG_HANDLED.format(event=handled.event.describe(), handlers=names), file=sys.stderr)
    for o in handled.outcomes:
        if not o.ok:
            print(MSG_FAILED.format(event=handled.event.describe(), handler=o.handler, error=o.error), file=sys.stderr)
    return EXIT_OK if handled.ok else EXIT_ERROR
