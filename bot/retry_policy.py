"""GitHub's rate-limit and retry rules, in one place: when a request may be sent again and after how
long, for the transport (every request PyGithub makes) and for the one loop that must look before
it repeats a creation (`create_once`).

The rules (GitHub, "Rate limits for the REST API" and "Best practices for using the REST API"):
- Primary rate limit: a 403 or 429 with `x-ratelimit-remaining: 0`. Nothing is sent again before
  `x-ratelimit-reset` (epoch seconds), reads and writes alike; and once a response said the
  remaining budget is 0, no request at all is sent before that reset.
- Secondary rate limit: a 403 or 429 with `Retry-After` (wait that many seconds), or one whose
  message says so without it (wait at least one minute, then exponentially longer).
- A rate-limit refusal was not applied, so even a POST may be repeated after it.
- 5xx and dropped connections: a short exponential backoff, only for requests whose repeat is
  harmless (GET, PATCH, PUT, DELETE, and POSTs the caller declares idempotent). Other POSTs may
  have landed; `create_once` looks for what they would have created before posting again.
- Everything within the job's time budget: a wait that would end past it is not made, and the
  request's last answer is what the caller gets (it becomes unavailable evidence).

Time comes from an injectable clock, so tests and benchmarks use a virtual one that never sleeps.
"""
from __future__ import annotations

import json
import logging
import math
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping, Protocol, TypeVar

from github import GithubException, GithubRetry, RateLimitExceededException
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    MaxRetryError,
    NewConnectionError,
    ResponseError,
)
from urllib3.util.retry import RequestHistory, Retry

log = logging.getLogger(__name__)
T = TypeVar("T")

JOB_BUDGET_ENV = "INFX_JOB_BUDGET_S"
# The review workflow's jobs time out after 15 minutes; installing and publishing need a margin.
JOB_BUDGET_S = 12 * 60.0
# GitHub: "wait for at least one minute before retrying" a secondary limit without Retry-After.
SECONDARY_MIN_WAIT_S = 60.0
# GitHub: the reset instant is a whole second; the reset may happen anywhere in it.
RESET_MARGIN_S = 1.0
# Transient failures (5xx, no answer): this many repeats, waiting 0, 0.5, 1, 2 s, and no more than
# this long per call, so one broken endpoint cannot eat the job's budget.
TRANSIENT_RETRIES = 4
TRANSIENT_BUDGET_S = 10.0
BACKOFF_FACTOR = 0.25
BACKOFF_MAX_S = 5.0
# Rate-limit refusals of one call: this many waits at most.
RATE_LIMIT_RETRIES = 4
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PATCH", "PUT", "DELETE", "OPTIONS"})
LIMIT_STATUSES = frozenset({403, 429})
# Before a burst of this many requests, the remaining budget is checked (`reserve`).
CREATE_ATTEMPTS = TRANSIENT_RETRIES + 1

PRIMARY = "primary rate limit"
SECONDARY = "secondary rate limit"
TRANSIENT = "transient failure"

MSG_WAIT = "%s on %s %s: waiting %.1f s before sending it again (attempt %d)"
MSG_GIVE_UP = "%s: a wait of %.1f s would pass the job's time budget; giving up"
MSG_RESERVE = "%d requests ahead and GitHub reports %d left until %s; waiting %.0f s for the reset"
MSG_EXHAUSTED = ("GitHub's primary rate limit is spent until {reset} (epoch s), past the job's time budget; "
                 "not sending {what}")
MSG_WRITE_ADOPTED = "%s failed (%s) but had landed; adopting it"
MSG_WRITE_UNKNOWN = "%s failed (%s) and whether it landed is unknown (%s); not repeating it"


class Clock(Protocol):
    def monotonic(self) -> float: ...
    def time(self) -> float: ...
    def sleep(self, seconds: float) -> None: ...


class SystemClock:
    """The real clock."""

    def monotonic(self) -> float:
        return time.monotonic()

    def time(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        if seconds > 0:
            time.sleep(seconds)


class VirtualClock:
    """A clock whose `sleep` returns at once and moves time forward: tests and benchmarks see every
    wait GitHub's rules ask for without spending it. Threads wait in parallel, as they would: each
    has its own timeline, starting where the furthest one stood when it first asked the time, and
    `slept` is the furthest timeline (how long the job would have taken in waits)."""

    def __init__(self, start: float | None = None):
        self._epoch = time.time() if start is None else start
        self._lock = threading.Lock()
        self._local = threading.local()
        self._furthest = 0.0
        self.sleeps: list[float] = []

    def _elapsed(self) -> float:
        value = getattr(self._local, "elapsed", None)
        if value is None:
            with self._lock:
                value = self._local.elapsed = self._furthest
        return value

    def monotonic(self) -> float:
        return self._elapsed()

    def time(self) -> float:
        """Wall time is one for everyone (the emulator's rate window, reset instants): the
        furthest timeline, so no thread sees GitHub's clock run backwards."""
        own = self._elapsed()
        with self._lock:
            return self._epoch + max(own, self._furthest)

    def sleep(self, seconds: float) -> None:
        seconds = max(0.0, seconds)
        self._local.elapsed = self._elapsed() + seconds
        with self._lock:
            self._furthest = max(self._furthest, self._local.elapsed)
            self.sleeps.append(seconds)

    @property
    def slept(self) -> float:
        with self._lock:
            return self._furthest


SYSTEM_CLOCK = SystemClock()


def _header(headers: Mapping[str, str] | None, name: str) -> str | None:
    if not headers:
        return None
    value = headers.get(name)
    if value is None:
        lowered = name.lower()
        value = next((v for k, v in headers.items() if k.lower() == lowered), None)
    return None if value is None else str(value).strip()


def _number(value: str | None) -> float | None:
    try:
        out = float(value) if value not in (None, "") else None
    except ValueError:
        return None
    return out if out is not None and math.isfinite(out) and out >= 0 else None


def classify(status: int | None, headers: Mapping[str, str] | None, message: str | None = None) -> str | None:
    """PRIMARY, SECONDARY, TRANSIENT, or None for an answer that is final (a plain 403 is a refusal
    to respect). `status` None means no answer at all."""
    if status is None:
        return TRANSIENT
    if status in LIMIT_STATUSES:
        if _header(headers, "x-ratelimit-remaining") == "0":
            return PRIMARY
        if _header(headers, "retry-after") is not None or status == 429:
            return SECONDARY
        text = (message or "").lower()
        if "secondary rate limit" in text or "abuse" in text:
            return SECONDARY
        if "rate limit" in text:
            return PRIMARY
        return None
    if status >= 500:
        return TRANSIENT
    return None


@dataclass
class RateState:
    """What the last response said about the primary limit (per resource, `core` by default)."""

    remaining: int | None = None
    reset: float | None = None
    resource: str = "core"


@dataclass
class RetryPolicy:
    """The rules above for one job: its clock, its time budget (one deadline for every call), and
    the primary-limit state the responses report."""

    clock: Clock = field(default_factory=lambda: SYSTEM_CLOCK)
    job_budget_s: float = JOB_BUDGET_S
    transient_retries: int = TRANSIENT_RETRIES
    transient_budget_s: float = TRANSIENT_BUDGET_S
    rate_limit_retries: int = RATE_LIMIT_RETRIES
    # None: the module's BACKOFF_FACTOR at the time of the wait (tests set it to 0).
    backoff_factor: float | None = None
    secondary_min_wait_s: float = SECONDARY_MIN_WAIT_S

    def __post_init__(self) -> None:
        self.deadline = self.clock.monotonic() + self.job_budget_s
        self.rates: dict[str, RateState] = {}
        self._lock = threading.Lock()
        self._local = threading.local()
        # (kind, seconds) of every wait decided, for tests and the benchmark.
        self.waits: list[tuple[str, float]] = []

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ, **kwargs: Any) -> "RetryPolicy":
        budget = _number(env.get(JOB_BUDGET_ENV))
        return cls(job_budget_s=budget if budget is not None else JOB_BUDGET_S, **kwargs)

    # ----- what one failure asks for -----------------------------------------------------------

    def backoff(self, attempt: int) -> float:
        """urllib3's schedule: nothing before the first repeat, then doubling, capped."""
        factor = BACKOFF_FACTOR if self.backoff_factor is None else self.backoff_factor
        return 0.0 if attempt <= 1 else min(factor * 2 ** (attempt - 1), BACKOFF_MAX_S)

    def wait_for(self, kind: str, attempt: int, headers: Mapping[str, str] | None, *,
                 transient_spent: float = 0.0, limited: int = 1) -> float | None:
        """Seconds to wait before attempt `attempt + 1` after a failure of `kind`, or None when
        it may not be sent again (attempts spent, or the wait would end past the budget).
        `limited` counts this call's rate-limit refusals so far (this one included);
        `transient_spent` the seconds it already waited after transient failures (rate-limit
        waits do not count against the per-call transient budget, only against the job's)."""
        now = self.clock.monotonic()
        if kind == PRIMARY:
            if limited > self.rate_limit_retries:
                return None
            reset = _number(_header(headers, "x-ratelimit-reset"))
            wait = max(0.0, reset - self.clock.time()) + RESET_MARGIN_S if reset is not None \
                else self.secondary_min_wait_s
        elif kind == SECONDARY:
            if limited > self.rate_limit_retries:
                return None
            after = _number(_header(headers, "retry-after"))
            wait = after if after is not None else self.secondary_min_wait_s * 2 ** (limited - 1)
        else:
            if attempt > self.transient_retries:
                return None
            wait = self.backoff(attempt)
            if transient_spent + wait > self.transient_budget_s:
                return None
        if now + wait > self.deadline:
            log.warning(MSG_GIVE_UP, kind, wait)
            return None
        with self._lock:
            self.waits.append((kind, wait))
        return wait

    # ----- the primary limit, before sending ---------------------------------------------------

    def observe(self, headers: Mapping[str, str] | None) -> None:
        """Record the primary-limit headers of any response."""
        remaining = _number(_header(headers, "x-ratelimit-remaining"))
        if remaining is None:
            return
        resource = _header(headers, "x-ratelimit-resource") or "core"
        with self._lock:
            self.rates[resource] = RateState(int(remaining), _number(_header(headers, "x-ratelimit-reset")), resource)

    def reserve(self, requests: int, what: str = "the next requests", resource: str = "core") -> float:
        """Before a burst of `requests`: when GitHub said fewer remain, wait for the reset (within
        the budget) instead of running into the limit. Returns the seconds waited. Raises
        RateLimitExceededException when the reset is past the budget and nothing remains."""
        with self._lock:
            state = self.rates.get(resource)
        if state is None or state.remaining is None or state.remaining >= requests:
            return 0.0
        wait = max(0.0, (state.reset or 0.0) - self.clock.time()) + RESET_MARGIN_S
        if state.reset is None or wait <= RESET_MARGIN_S:
            return 0.0
        if self.clock.monotonic() + wait > self.deadline:
            if state.remaining > 0:
                return 0.0  # what remains is still usable; the limit answers the rest
            raise RateLimitExceededException(403, {"message": MSG_EXHAUSTED.format(
                reset=int(state.reset), what=what)}, {})
        log.warning(MSG_RESERVE, requests, state.remaining, int(state.reset), wait)
        with self._lock:
            self.waits.append((PRIMARY, wait))
        self.clock.sleep(wait)
        with self._lock:
            self.rates.pop(resource, None)
        return wait

    # ----- POSTs whose repeat is harmless ------------------------------------------------------

    @contextmanager
    def idempotent(self) -> Iterator[None]:
        """Within it, this thread's POSTs are repeated after 5xx like a GET (a commit status with
        the same context and state; a reaction; labels)."""
        depth = getattr(self._local, "idempotent", 0)
        self._local.idempotent = depth + 1
        try:
            yield
        finally:
            self._local.idempotent = depth

    def may_repeat(self, method: str | None) -> bool:
        return (method or "").upper() in IDEMPOTENT_METHODS or getattr(self._local, "idempotent", 0) > 0

    # ----- the transport ---------------------------------------------------------------------

    def transport(self) -> "PolicyRetry":
        """The urllib3 retry PyGithub (and the download session) sends every request through."""
        return PolicyRetry(policy=self)

    # ----- creations that must not happen twice ------------------------------------------------

    def create_once(self, what: str, post: Callable[[], T], find: Callable[[], T | None], *,
                    attempts: int = CREATE_ATTEMPTS) -> T:
        """`post()` once; when it fails in a way that may have landed (a 5xx or no answer, rate
        limits being handled below it), `find()` looks for what it would have created and that is
        adopted; only when `find()` says there is none is it posted again, within `attempts` and
        the transient rules. If `find()` itself fails the original error is raised."""
        spent = 0.0
        for attempt in range(1, attempts + 1):
            try:
                return post()
            except Exception as exc:
                if not may_have_landed(exc):
                    raise
                try:
                    found = find()
                except Exception as lookup:
                    log.warning(MSG_WRITE_UNKNOWN, what, _describe(exc), _describe(lookup))
                    raise exc from lookup
                if found is not None:
                    log.info(MSG_WRITE_ADOPTED, what, _describe(exc))
                    return found
                wait = self.wait_for(TRANSIENT, attempt, getattr(exc, "headers", None), transient_spent=spent)
                if attempt == attempts or wait is None:
                    raise
                spent += wait
                log.info(MSG_WAIT, TRANSIENT, "POST", what, wait, attempt)
                self.clock.sleep(wait)
        raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def may_have_landed(exc: BaseException) -> bool:
    """A write failure after which the write may or may not have been applied: GitHub's 5xx, or no
    answer. Rate-limit refusals and other 4xx were not applied."""
    if isinstance(exc, GithubException):
        return exc.status >= 500
    import requests

    return isinstance(exc, (requests.exceptions.RequestException, HTTPError, OSError))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, GithubException):
        return f"HTTP {exc.status}"
    return type(exc).__name__


def _not_sent(error: BaseException | None) -> bool:
    """The request never reached GitHub (no connection), so even a POST may be sent again."""
    return isinstance(error, (ConnectTimeoutError, NewConnectionError))


class PolicyRetry(GithubRetry):
    """PyGithub's retry class driven by RetryPolicy: every decision (whether, how long) is the
    policy's; this class only carries the per-request state urllib3 needs between attempts and
    sleeps on the policy's clock."""

    def __init__(self, *, policy: RetryPolicy, attempt: int = 0, limited: int = 0,
                 spent: float = 0.0, wait: float = 0.0, **kwargs: Any):
        self.policy = policy
        self.attempt, self.limited, self.wait = attempt, limited, wait
        self.spent = spent  # seconds waited after transient failures in this request chain
        kwargs.setdefault("total", policy.transient_retries + policy.rate_limit_retries)
        kwargs.setdefault("raise_on_status", False)
        kwargs.setdefault("respect_retry_after_header", False)
        kwargs.setdefault("status_forcelist", [*range(500, 600), *LIMIT_STATUSES])
        kwargs.setdefault("allowed_methods", None)  # every method; is_retry decides
        Retry.__init__(self, **kwargs)
        self.secondary_rate_wait = policy.secondary_min_wait_s

    def new(self, **kw: Any) -> "PolicyRetry":
        for name in ("attempt", "limited", "spent", "wait"):
            kw.setdefault(name, getattr(self, name))
        kw["policy"] = self.policy
        return Retry.new(self, **kw)  # type: ignore[return-value] - GithubRetry.new adds its own knobs

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        if status_code in LIMIT_STATUSES:
            return True  # a refusal, not applied: increment tells a limit from a permission 403
        return status_code >= 500 and self.policy.may_repeat(method)

    def _message(self, response: Any, url: str | None) -> str:
        try:
            content = GithubRetry.get_content(response, url or "")
            data = json.loads(content) if content else {}
            return str(data.get("message") or "") if isinstance(data, dict) else ""
        except Exception:  # an unreadable body says nothing about a limit
            return ""

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):  # type: ignore[override]
        headers = dict(response.headers) if response is not None else {}
        if response is not None:
            self.policy.observe(headers)
            message = ""
            if response.status in LIMIT_STATUSES and _header(headers, "x-ratelimit-remaining") != "0" \
                    and _header(headers, "retry-after") is None and response.status != 429:
                message = self._message(response, url)
                kind = classify(response.status, headers, message)
                if kind is None:
                    # A permission refusal whose body this class had to read: raise it as PyGithub would.
                    from github.Requester import Requester
                    raise Requester.createException(response.status, headers, {"message": message})
            else:
                kind = classify(response.status, headers)
        else:
            if not self.policy.may_repeat(method) and not _not_sent(error):
                raise MaxRetryError(_pool, url, error)  # the POST may have landed: the caller decides
            kind = TRANSIENT
        if kind is None:
            raise MaxRetryError(_pool, url, error or ResponseError("not retried"))
        attempt = self.attempt + 1
        limited = self.limited + (kind != TRANSIENT)
        # Transient failures are counted apart from rate-limit refusals: each has its own bound.
        wait = self.policy.wait_for(kind, attempt - limited, headers, transient_spent=self.spent, limited=limited)
        if wait is None:
            raise MaxRetryError(_pool, url, error or ResponseError(f"{kind}: not sent again"))
        log.info(MSG_WAIT, kind, method, url, wait, attempt)
        history = self.history + (RequestHistory(method, url, error, response.status if response is not None else None, None),)
        spent = self.spent + (wait if kind == TRANSIENT else 0.0)
        return self.new(attempt=attempt, limited=limited, wait=wait, spent=spent, history=history)

    def sleep(self, response: Any = None) -> None:
        self.policy.clock.sleep(self.wait)
