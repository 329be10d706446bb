"""The review date: the one place the bot reads the clock, the one parser of `--review-date`,
and the parser of GitHub's timestamps (`parse_time`).

The pure core (checks/, recipes/) never reads the clock: a snapshot always carries the review
date it is judged on (spec 12, Check 7 compares MODELS.md dates with it in UTC).
"""
from __future__ import annotations

import argparse
from datetime import date, datetime, timezone
from typing import Any

MSG_BAD_DAY = "must be YYYY-MM-DD, not {value!r}"


def utc_today() -> date:
    return datetime.now(timezone.utc).date()


def review_day(given: date | None) -> date:
    """The day a review is judged on: the one given, else today in UTC."""
    return given if given is not None else utc_today()


def day_arg(value: str) -> date:
    """argparse `type=` for `--review-date`: a bad value is a usage error (exit 2) naming it."""
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise argparse.ArgumentTypeError(MSG_BAD_DAY.format(value=value)) from None


def parse_time(value: Any) -> datetime | None:
    """A GitHub ISO-8601 timestamp (`...Z`) as an aware datetime; None when absent or malformed.
    Here, not beside the GitHub client: reading an event payload must not import PyGithub."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
