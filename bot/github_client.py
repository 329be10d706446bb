"""The one place that builds a PyGithub client: base URL, token or GitHub App auth, bounded retries
(never a blind repeat of a POST), and a thin JSON API over it whose still-failing calls become
`Unavailable(reason)`."""
from __future__ import annotations

import logging
import os
import threading
import time
import urllib.parse
from pathlib import Path
from datetime import datetime
from typing import Any, Callable, Mapping, TypeVar

import github
import requests
from github import Auth, GithubException, GithubRetry, RateLimitExceededException
from urllib3.exceptions import HTTPError, MaxRetryError, ResponseError

from checks.snapshot import Unavailable

log = logging.getLogger(__name__)
T = TypeVar("T")

API_URL_ENV = "GITHUB_API_URL"
TOKEN_ENV = "GITHUB_TOKEN"
APP_ID_ENV = "INFX_APP_ID"
APP_KEY_ENV = "INFX_APP_PRIVATE_KEY"
APP_KEY_PATH_ENV = "INFX_APP_PRIVATE_KEY_PATH"
APP_INSTALLATION_ENV = "INFX_APP_INSTALLATION_ID"
DEFAULT_API_URL = "https://api.github.com"
USER_AGENT = "infx-review"

# Every call (its retries included) gives up after this long, so one slow endpoint cannot
# stall a verdict; what still fails becomes unavailable evidence.
RETRY_BUDGET_S = 10.0
MAX_RETRIES = 4
BACKOFF_FACTOR = 0.25
# GitHub asks for a wait after a secondary rate limit; a longer request than this is not honoured
# by waiting, the call gives up instead (PyGithub's default waits 60 s).
RETRY_AFTER_MAX_S = 5.0
TIMEOUT_S = 10
PER_PAGE = 100
POOL_SIZE = 8
# Methods the transport repeats after a 5xx or a dropped connection. Edits are idempotent, so PATCH
# is retried too (urllib3 leaves it out by default). POST is not: GitHub may apply a POST and then
# answer 5xx or drop the connection, and a blind repeat would create a second comment or dispatch.
# Callers choose per POST instead: `GitHubApi.post_idempotent` for writes whose repeat is harmless,
# `create_once` for creations that must be checked before they are repeated.
RETRY_METHODS = frozenset({"GET", "HEAD", "PATCH", "PUT", "DELETE"})
# A rate-limit refusal is answered before anything is applied, so even a POST may be repeated on it.
REFUSED_UNAPPLIED = frozenset({403, 429})
# A creation is tried at most this often; each failure that may have landed is looked up first.
CREATE_ATTEMPTS = MAX_RETRIES + 1

MSG_NO_AUTH = (
    f"no GitHub credentials: set {TOKEN_ENV}, or {APP_ID_ENV} with {APP_KEY_ENV} (or {APP_KEY_PATH_ENV}) "
    f"and {APP_INSTALLATION_ENV}"
)
MSG_APP_INCOMPLETE = f"GitHub App auth needs {APP_ID_ENV}, {APP_KEY_ENV} or {APP_KEY_PATH_ENV}, and {APP_INSTALLATION_ENV}"
MSG_APP_KEY_UNREADABLE = "cannot read the GitHub App private key {path}: {error}"
MSG_BAD_APP_NUMBER = "{name} must be a number, not {value!r}"
MSG_HTTP = "GitHub answered {status} for {what}{detail}"
MSG_FAILED = "could not fetch {what} from GitHub: {error}"
MSG_TOO_LARGE = "the download is {size} bytes, over the {limit}-byte cap"
MSG_WRITE_RETRY = "%s failed (%s); trying again in %.1f s"
MSG_WRITE_ADOPTED = "%s failed (%s) but had landed; adopting it"
MSG_WRITE_UNKNOWN = "%s failed (%s) and whether it landed is unknown (%s); not repeating it"
DOWNLOAD_CHUNK = 1 << 16


class DownloadTooLarge(Exception):
    """A download that would exceed the size its caller accepts (it is abandoned, not truncated)."""


class ClientError(Exception):
    """A configuration problem (no credentials, unreadable key): the CLI reports it, exit 2."""


class BoundedRetry(GithubRetry):
    """PyGithub's retry (5xx, and 403 only when GitHub signals a rate limit) with one wall-clock
    budget per call: a retry whose wait (backoff or `Retry-After`) would end past the budget is
    not made, and the last answer is returned so the caller sees GitHub's own error."""

    def __init__(self, *, budget_s: float = RETRY_BUDGET_S, deadline: float | None = None, **kwargs: Any):
        self.budget_s = budget_s
        self.deadline = deadline
        super().__init__(**kwargs)

    def new(self, **kw: Any) -> "BoundedRetry":
        kw.update(budget_s=self.budget_s, deadline=self.deadline)
        return super().new(**kw)  # type: ignore[return-value]

    def is_retry(self, method: str, status_code: int, has_retry_after: bool = False) -> bool:
        """Also a POST when GitHub refused it for a rate limit (PyGithub's `increment` then checks
        that the 403 really is one); other POST failures are left to the caller."""
        if not self._is_method_retryable(method):
            return status_code in REFUSED_UNAPPLIED and bool(self.total)
        return super().is_retry(method, status_code, has_retry_after)

    def increment(self, method=None, url=None, response=None, error=None, _pool=None, _stacktrace=None):  # type: ignore[override]
        deadline = self.deadline if self.deadline is not None else time.monotonic() + self.budget_s
        retry = super().increment(method, url, response, error, _pool, _stacktrace)
        retry.deadline = deadline
        wait = retry.get_backoff_time()
        after = response.headers.get("Retry-After") if response is not None else None
        if after:
            try:
                asked = float(after.strip())
            except ValueError:
                asked = RETRY_AFTER_MAX_S + 1
            if asked > RETRY_AFTER_MAX_S:
                raise MaxRetryError(_pool, url, ResponseError(f"Retry-After {after} s exceeds {RETRY_AFTER_MAX_S} s"))
            wait = max(wait, asked)
        if time.monotonic() + wait > deadline:
            raise MaxRetryError(_pool, url, error or ResponseError(f"retry budget of {self.budget_s} s spent"))
        return retry


def make_retry(budget_s: float = RETRY_BUDGET_S) -> BoundedRetry:
    return BoundedRetry(
        budget_s=budget_s,
        total=MAX_RETRIES,
        backoff_factor=BACKOFF_FACTOR,
        backoff_max=RETRY_AFTER_MAX_S,
        secondary_rate_wait=1.0,
        max_rate_limit_wait=RETRY_AFTER_MAX_S,
        allowed_methods=RETRY_METHODS,
        # After the last retry, hand GitHub's answer to PyGithub so the error names the status.
        raise_on_status=False,
        respect_retry_after_header=True,
    )


def api_url(explicit: str | None = None, env: Mapping[str, str] = os.environ) -> str:
    """--github-url, else GITHUB_API_URL (set in GitHub Actions), else api.github.com."""
    return (explicit or env.get(API_URL_ENV) or DEFAULT_API_URL).rstrip("/")


def _app_number(env: Mapping[str, str], name: str) -> int:
    value = env.get(name, "").strip()
    if not value.isdigit():
        raise ClientError(MSG_BAD_APP_NUMBER.format(name=name, value=value))
    return int(value)


def token_auth(token: str) -> Auth.Token:
    return Auth.Token(token)


def auth_from_env(env: Mapping[str, str] = os.environ) -> Auth.Auth:
    """A token (GITHUB_TOKEN) wins; otherwise GitHub App installation auth from INFX_APP_*."""
    token = env.get(TOKEN_ENV, "").strip()
    if token:
        return Auth.Token(token)
    app_vars = (APP_ID_ENV, APP_KEY_ENV, APP_KEY_PATH_ENV, APP_INSTALLATION_ENV)
    if not any(env.get(v) for v in app_vars):
        raise ClientError(MSG_NO_AUTH)
    key = env.get(APP_KEY_ENV, "")
    if not key and env.get(APP_KEY_PATH_ENV):
        path = Path(env[APP_KEY_PATH_ENV])
        try:
            key = path.read_text(encoding="utf-8")
        except OSError as e:
            raise ClientError(MSG_APP_KEY_UNREADABLE.format(path=path, error=e.strerror or e)) from None
    if not key or not env.get(APP_ID_ENV) or not env.get(APP_INSTALLATION_ENV):
        raise ClientError(MSG_APP_INCOMPLETE)
    app = Auth.AppAuth(_app_number(env, APP_ID_ENV), key)
    return app.get_installation_auth(_app_number(env, APP_INSTALLATION_ENV))


def make_github(base_url: str | None = None, *, auth: Auth.Auth | None = None,
                env: Mapping[str, str] = os.environ, budget_s: float = RETRY_BUDGET_S) -> github.Github:
    """A PyGithub client for `base_url` (or GITHUB_API_URL) with our retry and no client-side
    throttling (PyGithub otherwise sleeps 0.25 s per request and 1 s per write)."""
    return github.Github(
        base_url=api_url(base_url, env),
        auth=auth if auth is not None else auth_from_env(env),
        retry=make_retry(budget_s),
        timeout=TIMEOUT_S,
        per_page=PER_PAGE,
        pool_size=POOL_SIZE,
        user_agent=USER_AGENT,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )


def describe_error(exc: BaseException) -> str:
    """One line naming what went wrong, for an `Unavailable` reason or a log line."""
    if isinstance(exc, GithubException):
        message = ""
        if isinstance(exc.data, dict):
            message = str(exc.data.get("message") or "")
        elif exc.data:
            message = str(exc.data)[:200]
        return f"HTTP {exc.status}" + (f" {message}" if message else "")
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def fetch(what: str, call: Callable[[], T]) -> T | Unavailable:
    """`call()`, or `Unavailable` naming `what` and GitHub's answer once retries are spent."""
    try:
        return call()
    except Exception as exc:  # any transport or HTTP failure is missing evidence, never data
        log.warning("could not fetch %s: %s", what, describe_error(exc))
        return Unavailable(reason=MSG_FAILED.format(what=what, error=describe_error(exc)))


def is_transient(exc: BaseException) -> bool:
    """A failure worth another try: GitHub's 5xx, a rate limit, or no answer at all. For a write it
    also means the write may or may not have been applied."""
    if isinstance(exc, GithubException):
        # A 403 is a rate limit only when GitHub says so; other 403s are refusals to respect.
        limited = isinstance(exc, RateLimitExceededException) or exc.status == 429 \
            or bool((exc.headers or {}).get("Retry-After"))
        return exc.status >= 500 or limited
    return isinstance(exc, (requests.exceptions.RequestException, HTTPError, OSError))


def _backoff_s(attempt: int, exc: BaseException) -> float:
    """urllib3's schedule (none before the first repeat, then doubling), or GitHub's Retry-After."""
    wait = 0.0 if attempt <= 1 else min(BACKOFF_FACTOR * 2 ** (attempt - 1), RETRY_AFTER_MAX_S)
    headers = getattr(exc, "headers", None) or {}
    after = headers.get("Retry-After") or headers.get("retry-after")
    if after:
        try:
            wait = max(wait, min(float(after), RETRY_AFTER_MAX_S))
        except ValueError:
            pass
    return wait


def retry_transient(what: str, call: Callable[[], T], *, attempts: int = MAX_RETRIES + 1,
                    budget_s: float = RETRY_BUDGET_S) -> T:
    """`call()`, repeated on transient failures within `attempts` and the wall-clock budget. Only
    for calls whose repeat is harmless even when an earlier try was applied."""
    deadline = time.monotonic() + budget_s
    for attempt in range(1, attempts + 1):
        try:
            return call()
        except Exception as exc:
            wait = _backoff_s(attempt, exc)
            if attempt == attempts or not is_transient(exc) or time.monotonic() + wait > deadline:
                raise
            log.info(MSG_WRITE_RETRY, what, describe_error(exc), wait)
            time.sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def create_once(what: str, post: Callable[[], T], find: Callable[[], T | None], *,
                attempts: int = CREATE_ATTEMPTS, budget_s: float = RETRY_BUDGET_S) -> T:
    """A creation that must not happen twice: `post()` once; when it fails in a way that may
    have landed (a 5xx or no answer), `find()` looks for what it would have created and that is
    adopted; only when `find()` says there is none is it posted again (at most `attempts` posts,
    within the budget). If `find()` itself fails the original error is raised, as repeating could
    duplicate. Refusals (4xx) are raised at once."""
    deadline = time.monotonic() + budget_s
    for attempt in range(1, attempts + 1):
        try:
            return post()
        except Exception as exc:
            if not is_transient(exc):
                raise
            try:
                found = find()
            except Exception as lookup:
                log.warning(MSG_WRITE_UNKNOWN, what, describe_error(exc), describe_error(lookup))
                raise exc from lookup
            if found is not None:
                log.info(MSG_WRITE_ADOPTED, what, describe_error(exc))
                return found
            wait = _backoff_s(attempt, exc)
            if attempt == attempts or time.monotonic() + wait > deadline:
                raise
            log.info(MSG_WRITE_RETRY, what, describe_error(exc), wait)
            time.sleep(wait)
    raise AssertionError("unreachable")  # pragma: no cover - the loop returns or raises


def _next_link(headers: Mapping[str, str]) -> str | None:
    link = headers.get("link") or headers.get("Link") or ""
    for part in link.split(","):
        url, _, rel = part.partition(";")
        if 'rel="next"' in rel:
            return url.strip().strip("<>")
    return None


class GitHubApi:
    """JSON over PyGithub's requester (auth, base URL, retries, GitHub's exceptions), safe to use
    from several threads: each thread gets its own requester, because PyGithub's shares one
    connection object whose request and response steps are not atomic."""

    def __init__(self, gh: github.Github, *, download_budget_s: float = RETRY_BUDGET_S):
        self.gh = gh
        self._base = gh.requester
        self._local = threading.local()
        self._lock = threading.Lock()
        self._requesters: list[Any] = []
        self._login: str | None = None
        self._download_budget_s = download_budget_s

    @property
    def base_url(self) -> str:
        return self._base.base_url

    def _requester(self) -> Any:
        req = getattr(self._local, "requester", None)
        if req is None:
            req = self._base.withAuth(self._base.auth)
            self._local.requester = req
            with self._lock:
                self._requesters.append(req)
        return req

    def close(self) -> None:
        with self._lock:
            for req in self._requesters:
                req.close()
            self._requesters.clear()
        self._local = threading.local()

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        _, data = self._requester().requestJsonAndCheck("GET", path, parameters=params)
        return data

    def list(self, path: str, params: dict[str, Any] | None = None, key: str | None = None) -> list:
        """Every page of a list endpoint, following GitHub's `Link: rel="next"`."""
        query: dict[str, Any] | None = {"per_page": PER_PAGE, **(params or {})}
        out: list = []
        url: str | None = path
        while url:
            headers, data = self._requester().requestJsonAndCheck("GET", url, parameters=query)
            items = (data or {}).get(key, []) if key else (data or [])
            out.extend(items)
            url, query = _next_link(headers), None
        return out

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """One POST, not repeated after a 5xx or a dropped connection (only after a rate-limit
        refusal): when it raises, the write may still have been applied. Creations go through
        `create_once`; writes whose repeat is harmless through `post_idempotent`."""
        _, data = self._requester().requestJsonAndCheck("POST", path, input=body)
        return data

    def post_idempotent(self, path: str, body: dict[str, Any]) -> Any:
        """A POST whose repeat has the same effect as one (a commit status with the same context,
        state and description; a reaction, which GitHub answers 200 when it exists; labels), so it
        is retried like a GET."""
        return retry_transient(f"POST {path}", lambda: self.post(path, body))

    def patch(self, path: str, body: dict[str, Any]) -> Any:
        _, data = self._requester().requestJsonAndCheck("PATCH", path, input=body)
        return data

    def delete(self, path: str, *, missing_ok: bool = False) -> None:
        """With `missing_ok`, a 404 counts as done: a retried DELETE whose first try was applied
        finds nothing left to delete."""
        try:
            self._requester().requestJsonAndCheck("DELETE", path)
        except GithubException as exc:
            if not (missing_ok and exc.status == 404):
                raise

    def set_login(self, login: str) -> None:
        """Declare the bot's identity when it cannot be asked (the Actions `GITHUB_TOKEN` gets 403
        on GET /user)."""
        self._login = login

    def redirect_target(self, path: str) -> str:
        """Where an API URL redirects (artifact zips answer 302 to a short-lived download URL)."""
        headers, _ = self._requester().requestJsonAndCheck("GET", path)
        location = headers.get("location")
        if not location:
            raise GithubException(502, {"message": f"no redirect from {path}"}, headers)
        return urllib.parse.urljoin(self.base_url + "/", location)

    def download(self, url: str, max_bytes: int | None = None) -> bytes:
        """A pre-signed download URL: no token is sent (it may be another host), same retries.
        With `max_bytes`, a larger body is not read to the end: DownloadTooLarge is raised."""
        with requests.Session() as session:
            adapter = requests.adapters.HTTPAdapter(max_retries=make_retry(self._download_budget_s))
            session.mount("http://", adapter)
            session.mount("https://", adapter)
            with session.get(url, timeout=TIMEOUT_S, headers={"User-Agent": USER_AGENT}, stream=True) as resp:
                if resp.status_code >= 400:
                    raise GithubException(resp.status_code, {"message": resp.reason or "download failed"},
                                          dict(resp.headers))
                if max_bytes is None:
                    return resp.content
                declared = resp.headers.get("Content-Length")
                if declared and declared.isdigit() and int(declared) > max_bytes:
                    raise DownloadTooLarge(MSG_TOO_LARGE.format(size=int(declared), limit=max_bytes))
                chunks, total = [], 0
                for chunk in resp.iter_content(DOWNLOAD_CHUNK):
                    total += len(chunk)
                    if total > max_bytes:
                        raise DownloadTooLarge(MSG_TOO_LARGE.format(size=f"over {total}", limit=max_bytes))
                    chunks.append(chunk)
                return b"".join(chunks)

    def login(self) -> str:
        """The bot's own login: GET /user for a token; `<app slug>[bot]` for a GitHub App
        installation (GitHub answers 403 to /user for installation tokens)."""
        if self._login is None:
            auth = self._base.auth
            if isinstance(auth, Auth.AppInstallationAuth):
                integration = github.GithubIntegration(
                    base_url=self.base_url, auth=auth._app_auth, retry=make_retry(), timeout=TIMEOUT_S,
                    seconds_between_requests=None, seconds_between_writes=None,
                )
                self._login = f"{integration.get_app().slug}[bot]"
            else:
                self._login = str(self.get("/user")["login"])
        return self._login


def parse_time(value: Any) -> datetime | None:
    """A GitHub ISO-8601 timestamp (`...Z`) as an aware datetime; None when absent or malformed."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
