"""`python -m bot route-event`: which job of the reusable workflow handles this event (`review`,
`sweep` or `skip`), written to $GITHUB_OUTPUT as `job=...`. Reads only the payload: no token."""
from __future__ import annotations

import argparse
import os
import sys

from bot.cli import EXIT_ERROR, EXIT_OK

NAME = "route-event"
HELP = "print which workflow job handles one GitHub event (review, sweep or skip)"
OUTPUT_ENV = "GITHUB_OUTPUT"
PHRASE_ENV = "INFX_SIGNOFF_PHRASE"


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--event-name", metavar="NAME", help="the GitHub event name (default: $GITHUB_EVENT_NAME)")
    p.add_argument("--event-path", metavar="FILE", help="the event payload JSON (default: $GITHUB_EVENT_PATH)")
    p.add_argument("--phrase", help=f"the sign-off phrase (default: ${PHRASE_ENV}, else the policy default)")


def run(args: argparse.Namespace) -> int:
    from bot.commands.handle_event import event_source
    from bot.events import EventError, load_payload
    from bot.routing import github_output, route_event

    source = event_source(args)
    if source is None:
        return EXIT_ERROR
    name, path = source
    try:
        payload = load_payload(path)
    except EventError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    route = route_event(name, payload, phrase=args.phrase or os.environ.get(PHRASE_ENV) or None)
    print(f"{name}: {route.job} ({route.reason})", file=sys.stderr)
    out = os.environ.get(OUTPUT_ENV)
    if out:
        with open(out, "a", encoding="utf-8") as fh:
            fh.write(github_output(route))
    else:
        sys.stdout.write(github_output(route))
    return EXIT_OK
