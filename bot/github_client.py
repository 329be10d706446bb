"""The one place that builds a PyGithub client: base URL, token or GitHub App auth, bounded retries
(never a blind repeat of a POST), and a thin JSON API over it whose still-failing calls become
`Unavailable(reason)`."""
from __future__ import annotations

import logging
import os
import threading
import urllib.parse
from pathlib import Path
from typing import Any, Callable, Mapping, TypeVar

import github
import requests
from github import Auth, GithubException  # re-exported: the error every GitHubApi call raises

from bot.retry_policy import (
    CREATE_ATTEMPTS,
    TRANSIENT_BUDGET_S,
    TRANSIENT_RETRIES,
    Clock,
    PolicyRetry,
    RetryPolicy,
)
from checks.snapshot import Unavailable

log = logging.getLogger(__name__)
T = TypeVar("T")

API_URL_ENV = "GITHUB_API_URL"
TOKEN_ENV = "GITHUB_TOKEN"
APP_ID_ENV = "INFX_APP_ID"
APP_KEY_ENV = "INFX_APP_PRIVATE_KEY"
APP_KEY_PATH_ENV = "INFX_APP_PRIVATE_KEY_PATH"
APP_INSTALLATION_ENV = "INFX_APP_INSTALLATION_ID"
# Which job of the reusable workflow runs (review.yml sets it): an App token is minted with only
# that job's permissions, so "only the sweep job can dispatch" holds with App credentials too.
JOB_ENV = "INFX_JOB"
JOB_REVIEW = "review"
JOB_SWEEP = "sweep"
_REVIEW_PERMISSIONS = {"contents": "read", "pull_requests": "write", "issues": "write", "statuses": "write",
                       "actions": "read", "checks": "write", "members": "read"}
JOB_PERMISSIONS: dict[str, dict[str, str]] = {
    JOB_REVIEW: _REVIEW_PERMISSIONS,
    JOB_SWEEP: {**_REVIEW_PERMISSIONS, "actions": "write"},
}
DEFAULT_API_URL = "https://api.github.com"
USER_AGENT = "infx-review"

# Per-call limit on repeats after transient failures (the policy's default); rate limits may wait
# longer, within the job's budget (bot/retry_policy.py).
RETRY_BUDGET_S = TRANSIENT_BUDGET_S
MAX_RETRIES = TRANSIENT_RETRIES
TIMEOUT_S = 10
PER_PAGE = 100
POOL_SIZE = 8

MSG_NO_AUTH = (
    f"no GitHub credentials: set {TOKEN_ENV}, or {APP_ID_ENV} with {APP_KEY_ENV} (or {APP_KEY_PATH_ENV}) "
    f"and {APP_INSTALLATION_ENV}"
)
MSG_APP_INCOMPLETE = f"GitHub App auth needs {APP_ID_ENV}, {APP_KEY_ENV} or {APP_KEY_PATH_ENV}, and {APP_INSTALLATION_ENV}"
MSG_APP_KEY_UNREADABLE = "cannot read the GitHub App private key {path}: {error}"
MSG_BAD_APP_NUMBER = "{name} must be a number, not {value!r}"
MSG_FAILED = "could not fetch {what} from GitHub: {error}"
MSG_TOO_LARGE = "the download is {size} bytes, over the {limit}-byte cap"
MSG_BAD_JOB = "{name} must be one of {jobs}, not {value!r}"
DOWNLOAD_CHUNK = 1 << 16


class DownloadTooLarge(Exception):
    """A download that would exceed the size its caller accepts (it is abandoned, not truncated)."""


class ClientError(Exception):
    """A configuration problem (no credentials, unreadable key): the CLI reports it, exit 2."""


def make_retry(budget_s: float = RETRY_BUDGET_S, *, policy: RetryPolicy | None = None) -> PolicyRetry:
    """The transport retry for one request chain, by the policy's rules."""
    return (policy or RetryPolicy(transient_budget_s=budget_s)).transport()


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


class JobInstallationAuth(Auth.AppInstallationAuth):
    """GitHub App installation auth whose tokens carry only one job's permissions, and which keeps
    the App's own auth where the bot can use it (GET /app for the login) without PyGithub's
    private fields."""

    def __init__(self, app: Auth.AppAuth, installation_id: int, permissions: dict[str, str]):
        super().__init__(app, installation_id, token_permissions=dict(permissions))
        self.app = app


def job_permissions(env: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The installation-token permissions of the job named by INFX_JOB (default: review)."""
    job = (env.get(JOB_ENV) or JOB_REVIEW).strip()
    if job not in JOB_PERMISSIONS:
        raise ClientError(MSG_BAD_JOB.format(name=JOB_ENV, jobs=", ".join(JOB_PERMISSIONS), value=job))
    return JOB_PERMISSIONS[job]


def auth_from_env(env: Mapping[str, str] = os.environ, *, policy: RetryPolicy | None = None) -> Auth.Auth:
    """A token (GITHUB_TOKEN) wins; otherwise GitHub App installation auth from INFX_APP_*, its
    tokens minted with only this job's permissions (INFX_JOB)."""
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
    # The App id as a string: PyJWT >= 2.10 refuses a numeric `iss` claim, and PyGithub passes it through.
    app = Auth.AppAuth(str(_app_number(env, APP_ID_ENV)), key)
    return JobInstallationAuth(app, _app_number(env, APP_INSTALLATION_ENV), job_permissions(env))


def make_github(base_url: str | None = None, *, auth: Auth.Auth | None = None,
                env: Mapping[str, str] = os.environ, budget_s: float | None = None,
                policy: RetryPolicy | None = None, clock: Clock | None = None) -> github.Github:
    """A PyGithub client for `base_url` (or GITHUB_API_URL) whose every request follows `policy`
    (bot/retry_policy.py; by default one for this job, its budget from INFX_JOB_BUDGET_S), with no
    client-side throttling (PyGithub otherwise sleeps 0.25 s per request and 1 s per write).
    `budget_s` caps each call's repeats after transient failures."""
    if policy is None:
        extra: dict[str, Any] = {"clock": clock} if clock is not None else {}
        if budget_s is not None:
            extra["transient_budget_s"] = budget_s
        policy = RetryPolicy.from_env(env, **extra)
    gh = github.Github(
        base_url=api_url(base_url, env),
        auth=auth if auth is not None else auth_from_env(env, policy=policy),
        retry=policy.transport(),
        timeout=TIMEOUT_S,
        per_page=PER_PAGE,
        pool_size=POOL_SIZE,
        user_agent=USER_AGENT,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )
    gh.infx_policy = policy  # type: ignore[attr-defined] - read back by GitHubApi
    return gh


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


def create_once(what: str, post: Callable[[], T], find: Callable[[], T | None], *,
                attempts: int = CREATE_ATTEMPTS, policy: RetryPolicy | None = None) -> T:
    """A creation that must not happen twice (RetryPolicy.create_once): post, and after a failure
    that may have landed, look before posting again."""
    return (policy or RetryPolicy()).create_once(what, post, find, attempts=attempts)


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

    def __init__(self, gh: github.Github, *, download_budget_s: float = RETRY_BUDGET_S,
                 policy: RetryPolicy | None = None):
        self.gh = gh
        # The client's retry policy (make_github attaches it); its clock, budget and rate state.
        self.policy: RetryPolicy = policy or getattr(gh, "infx_policy", None) or RetryPolicy()
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

    def _request(self, method: str, path: str, **kwargs: Any) -> tuple[Mapping[str, str], Any]:
        """One request by the policy: never sent while GitHub said the primary limit is spent
        (until its reset, within the budget), and its rate-limit headers recorded."""
        self.policy.reserve(1, f"{method} {path}")
        headers, data = self._requester().requestJsonAndCheck(method, path, **kwargs)
        self.policy.observe(headers)
        return headers, data

    def reserve(self, requests_ahead: int, what: str = "the next requests") -> float:
        """Before a burst: wait for the primary limit's reset when fewer requests remain than
        the burst needs (RetryPolicy.reserve). Returns the seconds waited."""
        return self.policy.reserve(requests_ahead, what)

    def get(self, path: str, params: dict[str, Any] | None = None) -> Any:
        _, data = self._request("GET", path, parameters=params)
        return data

    def list(self, path: str, params: dict[str, Any] | None = None, key: str | None = None) -> list:
        """Every page of a list endpoint, following GitHub's `Link: rel="next"`."""
        query: dict[str, Any] | None = {"per_page": PER_PAGE, **(params or {})}
        out: list = []
        url: str | None = path
        while url:
            headers, data = self._request("GET", url, parameters=query)
            items = (data or {}).get(key, []) if key else (data or [])
            out.extend(items)
            url, query = _next_link(headers), None
        return out

    def post(self, path: str, body: dict[str, Any]) -> Any:
        """One POST, not repeated after a 5xx or a dropped connection (only after a rate-limit
        refusal): when it raises, the write may still have been applied. Creations go through
        `create_once`; writes whose repeat is harmless through `post_idempotent`."""
        _, data = self._request("POST", path, input=body)
        return data

    def post_idempotent(self, path: str, body: dict[str, Any]) -> Any:
        """A POST whose repeat has the same effect as one (a commit status with the same context,
        state and description; a reaction, which GitHub answers 200 when it exists; labels), so it
        is retried like a GET."""
        with self.policy.idempotent():
            return self.post(path, body)

    def create_once(self, what: str, post: Callable[[], T], find: Callable[[], T | None], *,
                    attempts: int = CREATE_ATTEMPTS) -> T:
        """A creation that must not happen twice, by this client's policy (RetryPolicy.create_once)."""
        return self.policy.create_once(what, post, find, attempts=attempts)

    def patch(self, path: str, body: dict[str, Any]) -> Any:
        _, data = self._request("PATCH", path, input=body)
        return data

    def delete(self, path: str, *, missing_ok: bool = False) -> None:
        """With `missing_ok`, a 404 counts as done: a retried DELETE whose first try was applied
        finds nothing left to delete."""
        try:
            self._request("DELETE", path)
        except GithubException as exc:
            if not (missing_ok and exc.status == 404):
                raise

    def set_login(self, login: str) -> None:
        """Declare the bot's identity when it cannot be asked (the Actions `GITHUB_TOKEN` gets 403
        on GET /user)."""
        self._login = login

    def redirect_target(self, path: str) -> str:
        """Where an API URL redirects (artifact zips answer 302 to a short-lived download URL)."""
        headers, _ = self._request("GET", path)
        location = headers.get("location")
        if not location:
            raise GithubException(502, {"message": f"no redirect from {path}"}, headers)
        return urllib.parse.urljoin(self.base_url + "/", location)

    def download(self, url: str, max_bytes: int | None = None) -> bytes:
        """A pre-signed download URL: no token is sent (it may be another host), same retries.
        With `max_bytes`, a larger body is not read to the end: DownloadTooLarge is raised."""
        with requests.Session() as session:
            adapter = requests.adapters.HTTPAdapter(max_retries=RetryPolicy(
                clock=self.policy.clock, job_budget_s=max(0.0, self.policy.deadline - self.policy.clock.monotonic()),
                transient_budget_s=self._download_budget_s).transport())
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
            if isinstance(auth, JobInstallationAuth):
                integration = github.GithubIntegration(
                    base_url=self.base_url, auth=auth.app, retry=self.policy.transport(), timeout=TIMEOUT_S,
                    seconds_between_requests=None, seconds_between_writes=None,
                )
                self._login = f"{integration.get_app().slug}[bot]"
            else:
                self._login = str(self.get("/user")["login"])
        return self._login


