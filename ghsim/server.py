"""The local GitHub REST API emulator: serves one world over HTTP with GitHub's JSON shapes,
records every write as an effect, counts requests, and injects faults on demand."""
from __future__ import annotations

import base64
import difflib
import gzip
import io
import json
import os
import random
import re
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import urllib.parse
import zipfile
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Mapping

from .world import (
    COMMITS_DIR,
    GitReader,
    World,
    apply_change,
    author_of,
    build_world_repo,
    utc,
)

HOST = "127.0.0.1"
WEB = "https://github.com"
DOCS = "https://docs.github.com/rest"
API_PREFIX = "/api/v3"  # GitHub Enterprise style prefix, accepted as an alias of the root
DOWNLOAD_PREFIX = "/_sandbox/artifacts"
# Stands in for codeload.github.com, where GitHub redirects repository archive requests.
CODELOAD_PREFIX = "/_sandbox/codeload"
# GitHub names an archive's single top-level directory <owner>-<repo>-<7-char sha>.
ARCHIVE_SHORT_SHA = 7

# GitHub limits the emulator enforces, so the bot meets them here before it meets them live.
MAX_COMMENT_BODY = 65536
MAX_STATUS_DESCRIPTION = 140
CONTENTS_INLINE_LIMIT = 1024 * 1024  # contents API returns no content above 1 MB
PATCH_SIZE_LIMIT = 1024 * 1024
DEFAULT_PER_PAGE = 30
MAX_PER_PAGE = 100
MAX_COMMIT_FILES = 300
MAX_PR_FILES = 3000
MAX_PR_COMMITS = 250
RATE_LIMIT = 5000
RATE_WINDOW_S = 3600
TOKEN_LIFETIME = timedelta(hours=1)
INSTALLATION_ID = 4242
APP_ID = 4241
STATUS_STATES = ("error", "failure", "pending", "success")
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")
ZIP_DATE = (2026, 1, 1, 0, 0, 0)
# What a secondary-rate-limit fault asks the client to wait; GitHub sends whole seconds, and a
# fault benchmark may lower it to 0 to measure the retry logic rather than the sleeping.
DEFAULT_RETRY_AFTER_S = 1
# `<artifacts_dir>/<run>/<name>.zip` (with no `<name>/` folder) is an artifact's download as given.
PREBUILT_ZIP_SUFFIX = ".zip"
# Request bodies kept in the request log (a long comment body is cut, not dropped).
LOGGED_BODY_MAX = 70_000

# The `*_url` templates of GitHub's repository objects (name -> path under the repository URL).
REPO_URL_TEMPLATES = {
    "archive": "{archive_format}{/ref}", "assignees": "assignees{/user}", "blobs": "git/blobs{/sha}",
    "branches": "branches{/branch}", "collaborators": "collaborators{/collaborator}",
    "comments": "comments{/number}", "compare": "compare/{base}...{head}", "contributors": "contributors",
    "deployments": "deployments", "downloads": "downloads", "events": "events", "forks": "forks",
    "git_commits": "git/commits{/sha}", "git_refs": "git/refs{/sha}", "git_tags": "git/tags{/sha}",
    "hooks": "hooks", "issue_comment": "issues/comments{/number}", "issue_events": "issues/events{/number}",
    "keys": "keys{/key_id}", "languages": "languages", "merges": "merges", "milestones": "milestones{/number}",
    "notifications": "notifications{?since,all,participating}", "releases": "releases{/id}",
    "stargazers": "stargazers", "subscribers": "subscribers", "subscription": "subscription", "tags": "tags",
    "teams": "teams", "trees": "git/trees{/sha}",
}
MSG_NOT_FOUND = "Not Found"
MSG_NO_AUTH = "Requires authentication"
MSG_BAD_CREDENTIALS = "Bad credentials"
MSG_JWT_REQUIRED = "A JSON web token could not be decoded"
MSG_BAD_JSON = "Problems parsing JSON"
MSG_VALIDATION = "Validation Failed"
MSG_EXPIRED = "Artifact has expired"
MSG_PRIMARY_LIMIT = "API rate limit exceeded for user."
MSG_NOT_ACCESSIBLE = "Resource not accessible by integration"
# Which installation-token permission a route needs (first match wins), for App tokens minted
# with `permissions`: the scopes the bot's jobs ask for.
ROUTE_SCOPES = (
    ("/actions/", "actions"),
    ("/check-runs", "checks"),
    ("/statuses/", "statuses"),
    ("/status", "statuses"),
    ("/issues/", "issues"),
    ("/pulls/", "pull_requests"),
    ("/contents", "contents"),
    ("/git/", "contents"),
    ("/tarball/", "contents"),
    ("/compare/", "contents"),
    ("/commits/", "contents"),
)
MSG_SECONDARY_LIMIT = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID sandbox."
)
MSG_SERVER_ERROR = {500: "Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}

# Effect kinds in the effects log.
EFFECT_COMMENT_CREATED = "comment_created"
EFFECT_COMMENT_EDITED = "comment_edited"
EFFECT_COMMENT_DELETED = "comment_deleted"
EFFECT_STATUS_SET = "status_set"
EFFECT_REACTION_ADDED = "reaction_added"
EFFECT_REACTION_REMOVED = "reaction_removed"
EFFECT_LABEL_ADDED = "label_added"
EFFECT_LABEL_REMOVED = "label_removed"
EFFECT_WORKFLOW_DISPATCHED = "workflow_dispatched"
EFFECT_CHECK_RUN_CREATED = "check_run_created"
EFFECT_REVIEW_COMMENT_CREATED = "review_comment_created"
EFFECT_CHECK_RUN_UPDATED = "check_run_updated"
# GitHub's checks API limits (REST "Create a check run").
MAX_CHECK_OUTPUT = 65535
MAX_CHECK_TITLE = 255
MAX_ANNOTATIONS_PER_REQUEST = 50
CHECK_STATUSES = ("queued", "in_progress", "completed", "waiting", "requested", "pending")
CHECK_CONCLUSIONS = ("action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out")
ANNOTATION_LEVELS = ("notice", "warning", "failure")

FAULT_DROP = "drop"
FAULT_RATE_LIMIT = "rate_limit"
# A ghost write is applied and then answered as if it failed: what GitHub does when a 5xx or a
# dropped connection comes after the write landed. Its draws use their own generator, so adding
# ghosts never changes which requests the other knobs fail.
GHOST_STATUS = 502
GHOST_SEED = "ghost-writes:{seed}"
WRITE_METHODS = frozenset({"POST", "PATCH", "PUT", "DELETE"})

_JWT = re.compile(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$")
_SAFE_REF = re.compile(r"^[A-Za-z0-9._/\-]+$")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")


def iso(dt: datetime | None) -> str | None:
    return None if dt is None else utc(dt).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_id(kind: str, ident: Any) -> str:
    return base64.b64encode(f"{kind}:{ident}".encode()).decode().rstrip("=")


def user_id(login: str) -> int:
    """Stable made-up numeric id for a login (GitHub ids are positive ints)."""
    return 10_000_000 + (int.from_bytes(login.lower().encode()[:8].ljust(8, b"\0"), "big") % 90_000_000)


def is_text(data: bytes) -> bool:
    if b"\0" in data[:8192]:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


@dataclass
class Response:
    status: int
    body: Any = None  # JSON-able, or bytes for raw payloads
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "application/json; charset=utf-8"


class HttpError(Exception):
    def __init__(self, status: int, message: str = MSG_NOT_FOUND, errors: list | None = None):
        super().__init__(message)
        self.status, self.message, self.errors = status, message, errors


def not_found() -> HttpError:
    return HttpError(404, MSG_NOT_FOUND)


def invalid(message: str, field_name: str = "", code: str = "invalid") -> HttpError:
    return HttpError(422, MSG_VALIDATION, [{"resource": "Resource", "field": field_name, "code": code, "message": message}])


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: Mapping[str, str]
    body: Any
    params: dict[str, str]
    actor: str | None = None


Handler = Callable[[Request], Response]


@dataclass
class Route:
    method: str
    template: str
    regex: re.Pattern
    handler: Handler
    auth: str = "token"  # "token", "jwt" or "none"


def _compile(template: str) -> re.Pattern:
    special = {"path": r"(?:/(?P<path>.*))?", "ref": r"(?P<ref>.+?)", "basehead": r"(?P<basehead>.+)"}
    out = ""
    for part in re.split(r"(\{[a-z_]+\})", template):
        if part.startswith("{"):
            name = part[1:-1]
            if name == "path":
                out = out.rstrip("/")
            out += special.get(name, rf"(?P<{name}>[^/]+)")
        else:
            out += re.escape(part)
    return re.compile(f"^{out}$")


class Emulator:
    """A running emulator for one world. Use as a context manager or call `stop()`."""

    def __init__(
        self,
        world_dir: str | Path,
        *,
        strict: bool = False,
        fail_rate: float = 0.0,
        rate_limit_rate: float = 0.0,
        drop_rate: float = 0.0,
        latency_ms: int = 0,
        seed: int = 0,
        port: int = 0,
        retry_after_s: int = DEFAULT_RETRY_AFTER_S,
        ghost_write_rate: float = 0.0,
        ghost_write_limit: int | None = None,
        ghost_write_only: str | None = None,
        clock: Any = None,
        rate_limit: int = RATE_LIMIT,
        rate_window_s: int = RATE_WINDOW_S,
        limit_status: int = 403,
        rate_limit_first: int = 0,
        run_details: bool = True,
        record_responses: bool = False,
    ):
        self.world_dir = Path(world_dir)
        self.strict = strict
        self.fail_rate, self.rate_limit_rate, self.drop_rate = fail_rate, rate_limit_rate, drop_rate
        self.latency_ms = latency_ms
        # None: a secondary-limit fault carries no Retry-After (GitHub then asks for a minute).
        self.retry_after_s = retry_after_s
        # The primary limit: `rate_limit` requests per token per `rate_window_s`, on the clock's
        # time (a bot.retry_policy.VirtualClock makes the window pass without waiting); a spent
        # limit answers `limit_status` (GitHub uses 403 and 429) with x-ratelimit-remaining 0.
        self.clock = clock
        self.rate_limit, self.rate_window_s, self.limit_status = rate_limit, rate_window_s, limit_status
        # The next `rate_limit_first` requests answer a secondary limit, then the knobs above apply.
        self.rate_limit_first = rate_limit_first
        # False: a server from before `return_run_details` (GitHub Enterprise Server), which
        # refuses the unknown key with 422.
        self.run_details = run_details
        # (route template, status, JSON body) of every answer, for the OpenAPI contract tests.
        self.record_responses = record_responses
        self.responses: list[tuple[str, int, Any]] = []
        self._rng = random.Random(seed)
        # At most `ghost_write_limit` ghosts (None: no cap), only on writes whose "METHOD route"
        # (e.g. "POST /repos/{owner}/{repo}/issues/{number}/comments") contains `ghost_write_only`.
        self.ghost_write_rate, self.ghost_write_limit = ghost_write_rate, ghost_write_limit
        self.ghost_write_only = ghost_write_only
        self._ghost_rng = random.Random(GHOST_SEED.format(seed=seed))
        # (method, path, answer) of every write applied and then answered as failed.
        self.ghost_writes: list[tuple[str, str, int | str]] = []
        self._lock = threading.RLock()
        self._local = threading.local()
        self._tmp = Path(tempfile.mkdtemp(prefix="infx-sandbox-"))
        try:
            built = build_world_repo(self.world_dir, self._tmp / "repo")
        except BaseException:
            shutil.rmtree(self._tmp, ignore_errors=True)
            raise
        self.built = built
        self.world: World = built.world
        self.repo_path = built.path
        self.git = GitReader(built.path)
        self.base_sha = built.base_sha
        self.shas: dict[str, str] = dict(built.shas)
        self._chain = [built.base_sha] + [built.shas[c.id] for c in self.world.commits]
        self._effects: list[dict] = []
        self.requests: Counter[str] = Counter()
        self.request_log: list[dict] = []
        self.violations: list[str] = []
        self._rate_used: Counter[str] = Counter()
        self._rate_reset = int(self._now()) + self.rate_window_s
        # Permissions an App installation token was minted with (GitHub enforces them).
        self._install_token_perms: dict[str, dict[str, str]] = {}
        self._install_tokens: dict[str, str] = {}
        self._diff_cache: dict[tuple[str, str], list[dict]] = {}
        self._zip_cache: dict[int, bytes] = {}
        self._tarball_cache: dict[str, bytes] = {}
        # GitHub's repository `size` (KB); None: measured from the world's git objects. Tests set it
        # to exercise clients' size caps.
        self.repo_size_kb: int | None = None
        self._load_state()
        self.routes = self._routes()
        self._server = ThreadingHTTPServer((HOST, port), _make_handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="infx-sandbox",
                                        daemon=True)
        self._thread.start()
        self.port = self._server.server_address[1]
        self.url = f"http://{HOST}:{self.port}"

    # ----- lifecycle and observation -------------------------------------------------------

    def __enter__(self) -> "Emulator":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        self._server = None  # type: ignore[assignment]
        self.git.close()
        shutil.rmtree(self._tmp, ignore_errors=True)

    @property
    def head_sha(self) -> str:
        with self._lock:
            return self._chain[-1]

    @property
    def effects(self) -> list[dict]:
        with self._lock:
            return [dict(e) for e in self._effects]

    def reset_counters(self) -> None:
        """Forget request counts and the request log (effects and violations are kept)."""
        with self._lock:
            self.requests.clear()
            self.request_log.clear()

    def assert_clean(self) -> None:
        with self._lock:
            if self.violations:
                raise AssertionError("emulator saw unexpected requests:\n  " + "\n  ".join(self.violations))

    def push(self, change: str | Mapping[str, str | bytes | None], *, message: str | None = None,
             delete: list[str] = ()) -> str:  # type: ignore[assignment]
        """Append a commit to the PR's head branch and return its SHA. `change` is an overlay
        directory name under the world's commits/ (or a path), or {path: content or None to delete}."""
        with self._lock:
            self._clock += timedelta(minutes=1)
            when = self._clock
            if isinstance(change, str):
                overlay = Path(change) if Path(change).is_absolute() else self.world_dir / COMMITS_DIR / change
                if not overlay.is_dir():
                    raise FileNotFoundError(f"no overlay directory {overlay}")
                sha = apply_change(self.repo_path, overlay_dir=overlay, delete=list(delete),
                                   message=message or change, author=author_of(self.world.pr.author), when=when)
                self.shas[change] = sha
            else:
                sha = apply_change(self.repo_path, files=change, delete=list(delete), message=message or "Update",
                                   author=author_of(self.world.pr.author), when=when)
            self._chain.append(sha)
            return sha

    # ----- world state ---------------------------------------------------------------------

    def _load_state(self) -> None:
        w, pr = self.world, self.world.pr
        self.repo_id = user_id(w.repo) + 1
        known = [c.id for c in pr.comments if c.id] + [r.id for r in pr.runs]
        if pr.signoff and pr.signoff.id:
            known.append(pr.signoff.id)
        self._next = max([1_000_000] + [k for k in known if k < 10**11]) + 1
        stamps = [d for d in (self.git.commit(s)["committer"][2] for s in self._chain)]
        all_comments = list(pr.comments) + ([pr.signoff] if pr.signoff else [])
        stamps += [utc(t) for c in all_comments for t in (c.created_at, c.updated_at) if t]
        stamps += [utc(r.created_at) for r in pr.runs if r.created_at]
        self._clock = max(stamps) + timedelta(hours=1)
        # The PR opens with its first commit (or first comment, if a world dates one earlier).
        self.pr_created = min(stamps[1:]) if len(stamps) > 1 else stamps[0]
        self._issue_comments: dict[int, dict] = {}
        self._reviews: dict[int, dict] = {}
        self._review_comments: dict[int, dict] = {}
        seq = self.pr_created
        for c in sorted(all_comments, key=lambda c: (utc(c.created_at) if c.created_at else self.pr_created)):
            seq += timedelta(seconds=1)
            created = utc(c.created_at) if c.created_at else seq
            rec = {"id": c.id or self._new_id(), "author": c.author, "association": c.association,
                   "body": c.body, "created_at": created, "updated_at": utc(c.updated_at) if c.updated_at else created,
                   "user_type": c.user_type}
            {"issue_comment": self._issue_comments, "review": self._reviews,
             "review_comment": self._review_comments}[c.kind][rec["id"]] = rec
        self._reactions: dict[tuple[str, int], list[dict]] = {}
        self._labels: list[str] = list(dict.fromkeys(pr.labels))
        self._statuses: dict[str, list[dict]] = {}
        self._check_runs: dict[str, list[dict]] = {}
        self._jobs_by_run: dict[int, list[dict]] = {}
        for ref, runs in pr.check_runs.items():
            sha = self.built.resolve(ref)
            for cr in runs:
                rec = {"id": self._new_id(), "name": cr.name, "status": cr.status, "conclusion": cr.conclusion,
                       "details_url": cr.details_url, "run_id": cr.run_id, "head_sha": sha}
                if not rec["details_url"] and cr.run_id:
                    rec["details_url"] = f"{WEB}/{w.repo}/actions/runs/{cr.run_id}/job/{rec['id']}"
                self._check_runs.setdefault(sha, []).append(rec)
                if cr.run_id:
                    self._jobs_by_run.setdefault(cr.run_id, []).append(rec)
        self._workflows: dict[int, dict] = {}
        self._runs: dict[int, dict] = {}
        self._artifacts: dict[int, dict] = {}
        art_root = self.world_dir / (pr.artifacts_dir or "artifacts")
        for run in pr.runs:
            wf = self._workflow_for(run.workflow, run.name)
            sha = self.built.resolve(run.head)
            created = utc(run.created_at) if run.created_at else self._commit_date(sha) + timedelta(minutes=10)
            rec = {"id": run.id, "name": run.name, "workflow_id": wf["id"], "path": wf["path"], "event": run.event,
                   "status": run.status, "conclusion": run.conclusion, "head_sha": sha, "created_at": created,
                   "head_branch": run.head_branch or w.head_branch, "artifacts": []}
            self._runs[run.id] = rec
            for i, art in enumerate(run.artifacts):
                aid = run.id * 100 + i + 1
                self._artifacts[aid] = {"id": aid, "name": art.name, "run_id": run.id, "expired": art.expired,
                                        "dir": art_root / str(run.id) / art.name, "created_at": created}
                rec["artifacts"].append(aid)
        for entry in self.git.files(self.base_sha):
            if re.match(r"^\.github/workflows/[^/]+\.ya?ml$", entry):
                self._workflow_for(entry, None)
        self._upstream = {(u.get("repo", "").lower(), int(u.get("number", 0))): u for u in pr.upstream}

    def _new_id(self) -> int:
        self._next += 1
        return self._next

    def _tick(self) -> datetime:
        self._clock += timedelta(seconds=1)
        return self._clock

    def _workflow_for(self, path: str, name: str | None) -> dict:
        for wf in self._workflows.values():
            if wf["path"] == path:
                return wf
        wid = 100_000 + len(self._workflows) + 1
        self._workflows[wid] = {"id": wid, "path": path, "name": name or Path(path).name}
        return self._workflows[wid]

    def _commit_date(self, sha: str) -> datetime:
        info = self.git.commit(sha)
        return info["committer"][2] if info else self._clock

    def _effect(self, kind: str, actor: str | None, **details: Any) -> None:
        self._effects.append({"kind": kind, **details, "actor": actor})

    # ----- faults and request accounting --------------------------------------------------

    def _draw_fault(self) -> str | int | None:
        with self._lock:
            if self.rate_limit_first > 0:
                self.rate_limit_first -= 1
                return FAULT_RATE_LIMIT
            if not (self.drop_rate or self.fail_rate or self.rate_limit_rate):
                return None
            u = self._rng.random()
            code = self._rng.choice(sorted(MSG_SERVER_ERROR))
        if u < self.drop_rate:
            return FAULT_DROP
        if u < self.drop_rate + self.fail_rate:
            return code
        if u < self.drop_rate + self.fail_rate + self.rate_limit_rate:
            return FAULT_RATE_LIMIT
        return None

    def _draw_ghost(self, method: str, template: str, status: int) -> int | str | None:
        """For a write that was applied: the failure to answer instead (502 or a dropped
        connection), or None. Called under the state lock, so draws follow the write order."""
        if method not in WRITE_METHODS or status >= 400 or not self.ghost_write_rate:
            return None
        if self.ghost_write_only is not None and self.ghost_write_only not in template:
            return None
        if self.ghost_write_limit is not None and len(self.ghost_writes) >= self.ghost_write_limit:
            return None
        u, drop = self._ghost_rng.random(), self._ghost_rng.random() < 0.5
        if u >= self.ghost_write_rate:
            return None
        return FAULT_DROP if drop else GHOST_STATUS

    def _record(self, method: str, path: str, route: str, status: int | str, actor: str | None,
                body: bytes = b"") -> None:
        entry: dict[str, Any] = {"method": method, "path": path, "route": route, "status": status, "actor": actor}
        if body:
            # Kept so tests can scan what clients sent (e.g. that no token leaks into a write).
            entry["body"] = body[:LOGGED_BODY_MAX].decode("utf-8", "replace")
        with self._lock:
            self.requests[route] += 1
            self.request_log.append(entry)

    def _now(self) -> float:
        return self.clock.time() if self.clock is not None else time.time()

    def _roll_rate_window(self) -> None:
        """A new window once the reset instant has passed (GitHub's fixed hourly window)."""
        now = self._now()
        if now >= self._rate_reset:
            self._rate_used.clear()
            self._rate_reset = int(now) + self.rate_window_s

    def _rate_headers(self, actor: str | None) -> dict[str, str]:
        used = self._rate_used[actor or ""]
        return {"X-RateLimit-Limit": str(self.rate_limit),
                "X-RateLimit-Remaining": str(max(0, self.rate_limit - used)),
                "X-RateLimit-Used": str(used), "X-RateLimit-Reset": str(self._rate_reset),
                "X-RateLimit-Resource": "core"}

    def _actor_for_token(self, token: str) -> str | None:
        if token == self.world.bot.token:
            return self.world.bot.login
        return self.world.tokens.get(token) or self._install_tokens.get(token)

    def _authenticate(self, route: Route, headers: Mapping[str, str]) -> str:
        scheme, _, cred = (headers.get("Authorization") or "").strip().partition(" ")
        cred = cred.strip()
        if not cred:
            raise HttpError(401, MSG_NO_AUTH)
        if route.auth == "jwt":
            if scheme.lower() != "bearer" or not _JWT.match(cred):
                raise HttpError(401, MSG_JWT_REQUIRED)
            return f"app/{self.app_slug}"
        if scheme.lower() not in ("token", "bearer"):
            raise HttpError(401, MSG_BAD_CREDENTIALS)
        actor = self._actor_for_token(cred)
        if actor is None:
            raise HttpError(401, MSG_BAD_CREDENTIALS)
        self._local.token = cred
        return actor

    # ----- URL builders --------------------------------------------------------------------

    @property
    def api(self) -> str:
        """API root as the current client addresses it (with /api/v3 when it used that prefix)."""
        return self.url + getattr(self._local, "prefix", "")

    @property
    def repo_api(self) -> str:
        return f"{self.api}/repos/{self.world.repo}"

    @property
    def app_slug(self) -> str:
        return self.world.bot.login.removesuffix("[bot]")

    @property
    def pr_number(self) -> int:
        return self.world.pr.number

    def web(self, tail: str = "") -> str:
        return f"{WEB}/{self.world.repo}{tail}"

    # ----- JSON shapes ---------------------------------------------------------------------

    def user(self, login: str, user_type: str | None = None) -> dict:
        kind = user_type or ("Bot" if login.endswith("[bot]") else "User")
        uid = user_id(login)
        api = f"{self.api}/users/{urllib.parse.quote(login)}"
        return {"login": login, "id": uid, "node_id": node_id("User", uid), "type": kind, "site_admin": False,
                "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4", "gravatar_id": "",
                "url": api, "html_url": f"{WEB}/{login}", "followers_url": f"{api}/followers",
                "repos_url": f"{api}/repos", "organizations_url": f"{api}/orgs", "events_url": f"{api}/events{{/privacy}}",
                "received_events_url": f"{api}/received_events", "user_view_type": "public",
                "following_url": f"{api}/following{{/other_user}}", "gists_url": f"{api}/gists{{/gist_id}}",
                "starred_url": f"{api}/starred{{/owner}}{{/repo}}", "subscriptions_url": f"{api}/subscriptions"}

    def org_json(self, org: str) -> dict:
        """GitHub's organization-full shape (GET /orgs/{org}; a team's `organization`)."""
        api = f"{self.api}/orgs/{org}"
        base = self.user(org, "Organization")
        return {**base, "url": api, "repos_url": f"{api}/repos", "events_url": f"{api}/events",
                "hooks_url": f"{api}/hooks", "issues_url": f"{api}/issues", "members_url": f"{api}/members{{/member}}",
                "public_members_url": f"{api}/public_members{{/member}}", "description": None, "name": org,
                "has_organization_projects": True, "has_repository_projects": True, "public_repos": 1,
                "public_gists": 0, "followers": 0, "following": 0, "created_at": iso(self.pr_created - timedelta(days=700)),
                "updated_at": iso(self.pr_created), "archived_at": None}

    # What GitHub's integration (App) objects carry besides id, slug, name and owner.
    def app_json(self, app_id: int, slug: str, name: str, owner: dict, permissions: dict | None = None) -> dict:
        return {"id": app_id, "slug": slug, "node_id": node_id("App", app_id), "name": name, "owner": owner,
                "description": "", "external_url": WEB, "html_url": f"{WEB}/apps/{slug}",
                "created_at": iso(self.pr_created - timedelta(days=700)), "updated_at": iso(self.pr_created),
                "permissions": permissions or {"checks": "write", "metadata": "read"}, "events": []}

    def repo_json(self, full_name: str) -> dict:
        owner, name = full_name.split("/", 1)
        rid = user_id(full_name) + 1
        api = f"{self.api}/repos/{full_name}"
        is_world = full_name.lower() == self.world.repo.lower()
        return {
            "id": rid, "node_id": node_id("Repository", rid), "name": name, "full_name": full_name,
            "private": False, "visibility": "public", "owner": self.user(owner, "Organization"),
            "html_url": f"{WEB}/{full_name}", "description": None, "fork": False, "url": api,
            "default_branch": self.world.default_branch if is_world else "main",
            "pulls_url": f"{api}/pulls{{/number}}", "issues_url": f"{api}/issues{{/number}}",
            "contents_url": f"{api}/contents/{{+path}}", "commits_url": f"{api}/commits{{/sha}}",
            "statuses_url": f"{api}/statuses/{{sha}}", "labels_url": f"{api}/labels{{/name}}",
            "git_url": f"git://github.com/{full_name}.git", "clone_url": f"{WEB}/{full_name}.git",
            "created_at": iso(self.pr_created - timedelta(days=365)), "updated_at": iso(self._clock),
            "pushed_at": iso(self._clock), "archived": False, "disabled": False, "has_issues": True,
            "topics": [], "language": "Python", "size": self._size_kb() if is_world else 0,
            # The rest of GitHub's repository shape (REST "full-repository").
            **{f"{k}_url": f"{api}/{v}" for k, v in REPO_URL_TEMPLATES.items()},
            "ssh_url": f"git@github.com:{full_name}.git", "svn_url": f"{WEB}/{full_name}", "homepage": None,
            "mirror_url": None, "license": None, "forks": 0, "forks_count": 0, "open_issues": 1,
            "open_issues_count": 1, "stargazers_count": 0, "watchers": 0, "watchers_count": 0,
            "has_downloads": True, "has_pages": False, "has_projects": True, "has_wiki": False,
            "has_discussions": False, "network_count": 0, "subscribers_count": 0,
        }

    def _size_kb(self) -> int:
        if self.repo_size_kb is None:
            counts = dict(line.split(": ", 1) for line in _git_out(self.repo_path, "count-objects", "-v")
                          .decode().splitlines() if ": " in line)
            self.repo_size_kb = int(counts.get("size", 0)) + int(counts.get("size-pack", 0))
        return self.repo_size_kb

    def label_json(self, name: str) -> dict:
        lid = user_id("label:" + name)
        return {"id": lid, "node_id": node_id("Label", lid), "name": name, "color": "ededed", "default": False,
                "description": None, "url": f"{self.repo_api}/labels/{urllib.parse.quote(name)}"}

    def _reaction_summary(self, subject: str, cid: int, url: str) -> dict:
        out = {"url": f"{url}/reactions", "total_count": 0, **{r: 0 for r in REACTIONS}}
        for r in self._reactions.get((subject, cid), []):
            out[r["content"]] += 1
            out["total_count"] += 1
        return out

    def issue_comment_json(self, rec: dict) -> dict:
        url = f"{self.repo_api}/issues/comments/{rec['id']}"
        return {"id": rec["id"], "node_id": node_id("IssueComment", rec["id"]), "url": url,
                "html_url": self.web(f"/pull/{self.pr_number}#issuecomment-{rec['id']}"),
                "issue_url": f"{self.repo_api}/issues/{self.pr_number}", "body": rec["body"],
                "user": self.user(rec["author"], rec["user_type"]), "created_at": iso(rec["created_at"]),
                "updated_at": iso(rec["updated_at"]), "author_association": rec["association"],
                "reactions": self._reaction_summary("issue_comment", rec["id"], url),
                "performed_via_github_app": None}

    def review_json(self, rec: dict) -> dict:
        pr_url = f"{self.repo_api}/pulls/{self.pr_number}"
        html = self.web(f"/pull/{self.pr_number}#pullrequestreview-{rec['id']}")
        return {"id": rec["id"], "node_id": node_id("PullRequestReview", rec["id"]),
                "user": self.user(rec["author"], rec["user_type"]), "body": rec["body"], "state": "COMMENTED",
                "html_url": html, "pull_request_url": pr_url, "submitted_at": iso(rec["created_at"]),
                "commit_id": self.head_sha, "author_association": rec["association"],
                "_links": {"html": {"href": html}, "pull_request": {"href": pr_url}}}

    def review_comment_json(self, rec: dict) -> dict:
        url = f"{self.repo_api}/pulls/comments/{rec['id']}"
        pr_url = f"{self.repo_api}/pulls/{self.pr_number}"
        html = self.web(f"/pull/{self.pr_number}#discussion_r{rec['id']}")
        if rec.get("path"):
            path, line, commit = rec["path"], rec["line"], rec["commit_id"]
        else:
            files = self._diff(self.base_sha, self.head_sha)
            path, line, commit = (files[0]["filename"] if files else "README.md"), 1, self.head_sha
        return {"id": rec["id"], "node_id": node_id("PullRequestReviewComment", rec["id"]), "url": url,
                "pull_request_review_id": None, "diff_hunk": "@@ -1 +1 @@", "path": path, "position": 1,
                "original_position": 1, "line": line, "original_line": line, "side": "RIGHT",
                "commit_id": commit, "original_commit_id": commit,
                "user": self.user(rec["author"], rec["user_type"]), "body": rec["body"],
                "created_at": iso(rec["created_at"]), "updated_at": iso(rec["updated_at"]), "html_url": html,
                "pull_request_url": pr_url, "author_association": rec["association"],
                "reactions": self._reaction_summary("review_comment", rec["id"], url),
                "_links": {"self": {"href": url}, "html": {"href": html}, "pull_request": {"href": pr_url}}}

    def commit_json(self, sha: str, with_files: bool) -> dict:
        info = self.git.commit(sha)
        if info is None:
            raise not_found()
        url = f"{self.repo_api}/commits/{sha}"

        def person(p: tuple) -> dict:
            return {"name": p[0], "email": p[1], "date": iso(p[2])}

        def gh_user(p: tuple) -> dict | None:
            return self.user(p[0]) if p[1].endswith("@users.noreply.github.com") else None

        out = {"sha": sha, "node_id": node_id("Commit", sha), "url": url, "html_url": self.web(f"/commit/{sha}"),
               "comments_url": f"{url}/comments",
               "commit": {"author": person(info["author"]), "committer": person(info["committer"]),
                          "message": info["message"], "comment_count": 0,
                          "tree": {"sha": info["tree"], "url": f"{self.repo_api}/git/trees/{info['tree']}"},
                          "url": f"{self.repo_api}/git/commits/{sha}",
                          "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None,
                                           "verified_at": None}},
               "author": gh_user(info["author"]), "committer": gh_user(info["committer"]),
               "parents": [{"sha": p, "url": f"{self.repo_api}/commits/{p}", "html_url": self.web(f"/commit/{p}")}
                           for p in info["parents"]]}
        if with_files:
            files = self._diff(info["parents"][0] if info["parents"] else None, sha)
            adds = sum(f["additions"] for f in files)
            dels = sum(f["deletions"] for f in files)
            out["stats"] = {"additions": adds, "deletions": dels, "total": adds + dels}
            out["files"] = files[:MAX_COMMIT_FILES]
        return out

    def _diff(self, a: str | None, b: str) -> list[dict]:
        """GitHub-style file entries for the change from commit a (None: empty tree) to commit b."""
        key = (a or "", b)
        with self._lock:
            if key in self._diff_cache:
                return self._diff_cache[key]
        old = self.git.files(a) if a else {}
        new = self.git.files(b)
        removed = {p: e for p, e in old.items() if p not in new}
        renamed_from = {}
        by_blob = {e["sha"]: p for p, e in removed.items()}
        for p, e in new.items():
            if p not in old and e["sha"] in by_blob:
                renamed_from[p] = by_blob.pop(e["sha"])
        entries = []
        for p in sorted(set(old) | set(new)):
            o, n = old.get(p), new.get(p)
            if n is not None and o is not None and o["sha"] == n["sha"]:
                continue
            if n is None and p not in by_blob.values():
                continue  # the old side of a rename
            if n is None:
                entries.append(self._file_entry(p, "removed", o, None, b))
            elif p in renamed_from:
                entries.append(self._file_entry(p, "renamed", old[renamed_from[p]], n, b, renamed_from[p]))
            elif o is None:
                entries.append(self._file_entry(p, "added", None, n, b))
            else:
                entries.append(self._file_entry(p, "modified", o, n, b))
        with self._lock:
            self._diff_cache[key] = entries
        return entries

    def _blob(self, sha: str) -> bytes:
        obj = self.git.read(sha)
        return obj[1] if obj else b""

    def _file_entry(self, path: str, status: str, o: dict | None, n: dict | None, commit: str,
                    previous: str | None = None) -> dict:
        adds = dels = 0
        patch = None
        if status != "renamed":
            before = self._blob(o["sha"]) if o else b""
            after = self._blob(n["sha"]) if n else b""
            if is_text(before) and is_text(after) and max(len(before), len(after)) <= PATCH_SIZE_LIMIT:
                lines = list(difflib.unified_diff(before.decode().splitlines(), after.decode().splitlines(),
                                                  lineterm="", n=3))[2:]
                adds = sum(1 for ln in lines if ln.startswith("+"))
                dels = sum(1 for ln in lines if ln.startswith("-"))
                patch = "\n".join(lines)
        quoted = urllib.parse.quote(path)
        entry = {"sha": (n or o)["sha"], "filename": path, "status": status, "additions": adds, "deletions": dels,
                 "changes": adds + dels, "blob_url": self.web(f"/blob/{commit}/{quoted}"),
                 "raw_url": self.web(f"/raw/{commit}/{quoted}"),
                 "contents_url": f"{self.repo_api}/contents/{quoted}?ref={commit}"}
        if patch is not None:
            entry["patch"] = patch
        if previous:
            entry["previous_filename"] = previous
        return entry

    def pr_json(self) -> dict:
        pr, w = self.world.pr, self.world
        n = pr.number
        url = f"{self.repo_api}/pulls/{n}"
        issue_url = f"{self.repo_api}/issues/{n}"
        files = self._diff(self.base_sha, self.head_sha)
        repo = self.repo_json(w.repo)

        def side(ref: str, sha: str, who: str) -> dict:
            return {"label": f"{who}:{ref}", "ref": ref, "sha": sha, "user": self.user(who, "Organization"),
                    "repo": repo}

        head, created = self.head_sha, self.pr_created
        return {
            "url": url, "id": n + 900_000_000, "node_id": node_id("PullRequest", n), "number": n,
            "html_url": self.web(f"/pull/{n}"), "diff_url": self.web(f"/pull/{n}.diff"),
            "patch_url": self.web(f"/pull/{n}.patch"), "issue_url": issue_url,
            "commits_url": f"{url}/commits", "review_comments_url": f"{url}/comments",
            "review_comment_url": f"{self.repo_api}/pulls/comments{{/number}}",
            "comments_url": f"{issue_url}/comments", "statuses_url": f"{self.repo_api}/statuses/{head}",
            "state": pr.state, "locked": False, "title": pr.title, "body": pr.body, "user": self.user(pr.author),
            "labels": [self.label_json(x) for x in self._labels], "milestone": None, "active_lock_reason": None,
            "created_at": iso(created), "updated_at": iso(self._clock), "closed_at": None if pr.state == "open" else iso(self._clock),
            "merged_at": None, "merge_commit_sha": None, "assignee": None, "assignees": [],
            "requested_reviewers": [], "requested_teams": [],
            "head": side(w.head_branch, head, w.owner), "base": side(w.default_branch, self.base_sha, w.owner),
            "_links": {"self": {"href": url}, "html": {"href": self.web(f"/pull/{n}")},
                       "issue": {"href": issue_url}, "comments": {"href": f"{issue_url}/comments"},
                       "review_comments": {"href": f"{url}/comments"}, "commits": {"href": f"{url}/commits"},
                       "review_comment": {"href": f"{self.repo_api}/pulls/comments{{/number}}"},
                       "statuses": {"href": f"{self.repo_api}/statuses/{head}"}},
            "author_association": self._association(pr.author), "auto_merge": None, "draft": pr.draft,
            "merged": False, "mergeable": True, "rebaseable": True, "mergeable_state": "clean", "merged_by": None,
            "comments": len(self._issue_comments), "review_comments": len(self._review_comments),
            "maintainer_can_modify": False, "commits": len(self._chain) - 1,
            "additions": sum(f["additions"] for f in files), "deletions": sum(f["deletions"] for f in files),
            "changed_files": len(files),
        }

    def issue_json(self) -> dict:
        pr = self.pr_json()
        n = self.pr_number
        keep = ("id", "node_id", "number", "state", "locked", "title", "body", "user", "labels", "milestone",
                "assignee", "assignees", "comments", "created_at", "updated_at", "closed_at", "author_association",
                "active_lock_reason", "draft")
        out = {k: pr[k] for k in keep}
        out.update({"url": pr["issue_url"], "repository_url": self.repo_api, "html_url": pr["html_url"],
                    "labels_url": f"{pr['issue_url']}/labels{{/name}}", "comments_url": pr["comments_url"],
                    "events_url": f"{pr['issue_url']}/events", "state_reason": None,
                    "pull_request": {"url": pr["url"], "html_url": pr["html_url"], "diff_url": pr["diff_url"],
                                     "patch_url": pr["patch_url"], "merged_at": None},
                    "reactions": {"url": f"{self.repo_api}/issues/{n}/reactions", "total_count": 0,
                                  **{r: 0 for r in REACTIONS}}})
        return out

    def _association(self, login: str) -> str:
        perm = self.world.pr.users.get(login, {}).get("permission")
        if perm in ("admin", "maintain", "write"):
            return "COLLABORATOR"
        if login == self.world.pr.author:
            return "CONTRIBUTOR"
        return "NONE"

    def status_json(self, rec: dict) -> dict:
        return {"url": f"{self.repo_api}/statuses/{rec['sha']}", "id": rec["id"], "node_id": node_id("StatusContext", rec["id"]),
                "state": rec["state"], "description": rec["description"], "target_url": rec["target_url"],
                "context": rec["context"], "created_at": iso(rec["created_at"]), "updated_at": iso(rec["created_at"]),
                "avatar_url": None, "creator": self.user(rec["actor"])}

    def check_run_json(self, rec: dict) -> dict:
        url = f"{self.repo_api}/check-runs/{rec['id']}"
        done = rec["status"] == "completed"
        when = self._commit_date(rec["head_sha"]) + timedelta(minutes=5)
        out = rec.get("output") or {}
        return {"id": rec["id"], "head_sha": rec["head_sha"], "node_id": node_id("CheckRun", rec["id"]),
                "external_id": rec.get("external_id", str(rec["id"])), "url": url,
                "html_url": self.web(f"/runs/{rec['id']}"),
                "details_url": rec["details_url"] or None, "status": rec["status"],
                "conclusion": rec["conclusion"] if done else None, "started_at": iso(when),
                "completed_at": iso(when + timedelta(minutes=30)) if done else None,
                "output": {"title": out.get("title"), "summary": out.get("summary"), "text": out.get("text"),
                           "annotations_count": len(rec.get("annotations") or []),
                           "annotations_url": f"{url}/annotations"},
                "name": rec["name"], "check_suite": {"id": (rec["run_id"] or rec["id"]) + 1},
                "app": self.app_json(15368, "github-actions", "GitHub Actions", self.user("github", "Organization")),
                "pull_requests": []}

    def job_json(self, rec: dict) -> dict:
        run = self._runs.get(rec["run_id"], {})
        when = self._commit_date(rec["head_sha"]) + timedelta(minutes=5)
        done = rec["status"] == "completed"
        return {"id": rec["id"], "run_id": rec["run_id"], "run_url": f"{self.repo_api}/actions/runs/{rec['run_id']}",
                "node_id": node_id("CheckRun", rec["id"]), "head_sha": rec["head_sha"],
                "url": f"{self.repo_api}/actions/jobs/{rec['id']}", "html_url": rec["details_url"],
                "status": rec["status"], "conclusion": rec["conclusion"] if done else None,
                "created_at": iso(when), "started_at": iso(when),
                "completed_at": iso(when + timedelta(minutes=30)) if done else None, "name": rec["name"],
                "steps": [], "check_run_url": f"{self.repo_api}/check-runs/{rec['id']}", "labels": [],
                "runner_id": None, "runner_name": None, "runner_group_id": None, "runner_group_name": None,
                "workflow_name": run.get("name"), "head_branch": run.get("head_branch"), "run_attempt": 1}

    def run_json(self, rec: dict) -> dict:
        url = f"{self.repo_api}/actions/runs/{rec['id']}"
        wf = self._workflows[rec["workflow_id"]]
        info = self.git.commit(rec["head_sha"])
        head_commit = None
        if info:
            head_commit = {"id": rec["head_sha"], "tree_id": info["tree"], "message": info["message"],
                           "timestamp": iso(info["committer"][2]),
                           "author": {"name": info["author"][0], "email": info["author"][1]},
                           "committer": {"name": info["committer"][0], "email": info["committer"][1]}}
        repo = self.repo_json(self.world.repo)
        return {"id": rec["id"], "name": rec["name"], "node_id": node_id("WorkflowRun", rec["id"]),
                "head_branch": rec["head_branch"], "head_sha": rec["head_sha"], "path": wf["path"],
                "display_title": self.world.pr.title or rec["name"], "run_number": rec["id"] % 100_000,
                "run_attempt": 1, "event": rec["event"], "status": rec["status"],
                "conclusion": rec["conclusion"] if rec["status"] == "completed" else None,
                "workflow_id": rec["workflow_id"], "check_suite_id": rec["id"] + 1, "url": url,
                "html_url": self.web(f"/actions/runs/{rec['id']}"), "created_at": iso(rec["created_at"]),
                "updated_at": iso(rec["created_at"] + timedelta(hours=1)), "run_started_at": iso(rec["created_at"]),
                "jobs_url": f"{url}/jobs", "logs_url": f"{url}/logs", "artifacts_url": f"{url}/artifacts",
                "cancel_url": f"{url}/cancel", "rerun_url": f"{url}/rerun", "check_suite_url": f"{self.repo_api}/check-suites/{rec['id'] + 1}",
                "workflow_url": f"{self.repo_api}/actions/workflows/{rec['workflow_id']}",
                "pull_requests": [], "head_commit": head_commit, "repository": repo, "head_repository": repo,
                "actor": self.user(self.world.pr.author), "triggering_actor": self.user(rec.get("actor") or self.world.pr.author)}

    def artifact_json(self, rec: dict) -> dict:
        url = f"{self.repo_api}/actions/artifacts/{rec['id']}"
        run = self._runs[rec["run_id"]]
        size = sum(p.stat().st_size for p in rec["dir"].rglob("*") if p.is_file()) if rec["dir"].is_dir() else 0
        created = rec["created_at"]
        return {"id": rec["id"], "node_id": node_id("Artifact", rec["id"]), "name": rec["name"], "size_in_bytes": size,
                "url": url, "archive_download_url": f"{url}/zip", "expired": rec["expired"],
                "created_at": iso(created), "updated_at": iso(created), "expires_at": iso(created + timedelta(days=90)),
                "digest": None,
                "workflow_run": {"id": run["id"], "repository_id": self.repo_id, "head_repository_id": self.repo_id,
                                 "head_branch": run["head_branch"], "head_sha": run["head_sha"]}}

    def workflow_json(self, rec: dict) -> dict:
        url = f"{self.repo_api}/actions/workflows/{rec['id']}"
        return {"id": rec["id"], "node_id": node_id("Workflow", rec["id"]), "name": rec["name"], "path": rec["path"],
                "state": "active", "created_at": iso(self.pr_created), "updated_at": iso(self.pr_created), "url": url,
                "html_url": self.web(f"/blob/{self.world.default_branch}/{rec['path']}"),
                "badge_url": self.web(f"/workflows/{Path(rec['path']).name}/badge.svg")}

    # ----- lookups -------------------------------------------------------------------------

    def resolve_ref(self, ref: str | None) -> str | None:
        """Branch name, full or abbreviated SHA, refs/heads/x or refs/pull/N/head to a commit SHA."""
        w = self.world
        if not ref:
            return self.base_sha
        ref = ref.removeprefix("refs/heads/")
        if ref == w.default_branch:
            return self.base_sha
        if ref in (w.head_branch, f"pull/{w.pr.number}/head", f"refs/pull/{w.pr.number}/head"):
            return self.head_sha
        if not _SAFE_REF.match(ref) or not re.fullmatch(r"[0-9a-f]{7,40}", ref):
            return None
        obj = self.git.read(ref)
        if obj is None or obj[0] != "commit":
            return None
        if _HEX40.match(ref):
            return ref
        return next((s for s in reversed(self._chain) if s.startswith(ref)), None)

    def _commit_or_404(self, ref: str) -> str:
        sha = self.resolve_ref(ref)
        if sha is None:
            raise HttpError(422, f"No commit found for SHA: {ref}")
        return sha

    def _check_repo(self, req: Request) -> None:
        if f"{req.params['owner']}/{req.params['repo']}".lower() != self.world.repo.lower():
            raise not_found()

    def _check_pr(self, req: Request) -> None:
        self._check_repo(req)
        if self._int(req, "number") != self.pr_number:
            raise not_found()

    def _int(self, req: Request, name: str) -> int:
        try:
            return int(req.params[name])
        except ValueError:
            raise not_found() from None

    # ----- pagination ----------------------------------------------------------------------

    def paginate(self, req: Request, items: list) -> tuple[list, dict[str, str]]:
        try:
            per_page = min(MAX_PER_PAGE, max(1, int(req.query.get("per_page", DEFAULT_PER_PAGE))))
            page = max(1, int(req.query.get("page", 1)))
        except ValueError:
            raise invalid("per_page and page must be integers") from None
        last = max(1, -(-len(items) // per_page))
        chunk = items[(page - 1) * per_page: page * per_page]

        def link(p: int) -> str:
            q = dict(req.query, page=str(p), per_page=str(per_page))
            return f"<{self.api}{req.path}?{urllib.parse.urlencode(q)}>"

        rels = []
        if page < last:
            rels += [f'{link(page + 1)}; rel="next"', f'{link(last)}; rel="last"']
        if page > 1:
            rels += [f'{link(1)}; rel="first"', f'{link(min(page - 1, last))}; rel="prev"']
        return chunk, ({"Link": ", ".join(rels)} if rels else {})

    def listing(self, req: Request, items: list, shape: Callable[[Any], dict]) -> Response:
        chunk, headers = self.paginate(req, items)
        return Response(200, [shape(x) for x in chunk], headers)

    def wrapped_listing(self, req: Request, key: str, items: list, shape: Callable[[Any], dict]) -> Response:
        chunk, headers = self.paginate(req, items)
        return Response(200, {"total_count": len(items), key: [shape(x) for x in chunk]}, headers)

    # ----- routes --------------------------------------------------------------------------

    def _routes(self) -> list[Route]:
        R = "/repos/{owner}/{repo}"
        table: list[tuple[str, str, Handler] | tuple[str, str, Handler, str]] = [
            ("GET", "/user", self.h_user),
            ("GET", "/users/{login}", self.h_users),
            ("GET", "/rate_limit", self.h_rate_limit),
            ("GET", "/app", self.h_app, "jwt"),
            ("GET", "/app/installations/{installation_id}", self.h_installation, "jwt"),
            ("POST", "/app/installations/{installation_id}/access_tokens", self.h_access_token, "jwt"),
            ("GET", f"{R}/installation", self.h_repo_installation, "jwt"),
            ("GET", "/orgs/{org}", self.h_org),
            ("GET", "/orgs/{org}/teams/{slug}", self.h_team),
            ("GET", "/orgs/{org}/teams/{slug}/memberships/{user}", self.h_team_membership),
            ("GET", "/orgs/{org}/teams/{slug}/members/{user}", self.h_team_member),
            ("GET", R, self.h_repo),
            ("GET", f"{R}/pulls/comments/{{comment_id}}", self.h_review_comment),
            ("GET", f"{R}/pulls/comments/{{comment_id}}/reactions", self.h_reactions_list),
            ("POST", f"{R}/pulls/comments/{{comment_id}}/reactions", self.h_reactions_add),
            ("DELETE", f"{R}/pulls/comments/{{comment_id}}/reactions/{{reaction_id}}", self.h_reaction_delete),
            ("GET", f"{R}/pulls/{{number}}", self.h_pull),
            ("GET", f"{R}/pulls/{{number}}/files", self.h_pull_files),
            ("GET", f"{R}/pulls/{{number}}/commits", self.h_pull_commits),
            ("GET", f"{R}/pulls/{{number}}/reviews", self.h_reviews),
            ("GET", f"{R}/pulls/{{number}}/reviews/{{review_id}}", self.h_review),
            ("GET", f"{R}/pulls/{{number}}/comments", self.h_review_comments),
            ("POST", f"{R}/pulls/{{number}}/comments", self.h_review_comment_create),
            ("GET", f"{R}/issues/comments/{{comment_id}}", self.h_comment_get),
            ("PATCH", f"{R}/issues/comments/{{comment_id}}", self.h_comment_edit),
            ("DELETE", f"{R}/issues/comments/{{comment_id}}", self.h_comment_delete),
            ("GET", f"{R}/issues/comments/{{comment_id}}/reactions", self.h_reactions_list),
            ("POST", f"{R}/issues/comments/{{comment_id}}/reactions", self.h_reactions_add),
            ("DELETE", f"{R}/issues/comments/{{comment_id}}/reactions/{{reaction_id}}", self.h_reaction_delete),
            ("GET", f"{R}/issues/{{number}}", self.h_issue),
            ("GET", f"{R}/issues/{{number}}/comments", self.h_comments_list),
            ("POST", f"{R}/issues/{{number}}/comments", self.h_comment_create),
            ("GET", f"{R}/issues/{{number}}/labels", self.h_labels_list),
            ("POST", f"{R}/issues/{{number}}/labels", self.h_labels_add),
            ("DELETE", f"{R}/issues/{{number}}/labels/{{name}}", self.h_label_remove),
            ("GET", f"{R}/labels/{{name}}", self.h_label),
            ("GET", f"{R}/contents{{path}}", self.h_contents),
            ("GET", f"{R}/git/blobs/{{sha}}", self.h_blob),
            ("GET", f"{R}/git/trees/{{ref}}", self.h_tree),
            ("GET", f"{R}/commits/{{ref}}/check-runs", self.h_check_runs),
            ("GET", f"{R}/commits/{{ref}}/statuses", self.h_statuses),
            ("GET", f"{R}/commits/{{ref}}/status", self.h_combined_status),
            ("GET", f"{R}/commits/{{ref}}", self.h_commit),
            ("GET", f"{R}/compare/{{basehead}}", self.h_compare),
            ("GET", f"{R}/check-runs/{{check_run_id}}", self.h_check_run),
            ("POST", f"{R}/check-runs", self.h_check_run_create),
            ("PATCH", f"{R}/check-runs/{{check_run_id}}", self.h_check_run_update),
            ("GET", f"{R}/check-runs/{{check_run_id}}/annotations", self.h_check_run_annotations),
            ("GET", f"{R}/statuses/{{ref}}", self.h_statuses),
            ("POST", f"{R}/statuses/{{sha}}", self.h_status_create),
            ("GET", f"{R}/actions/runs", self.h_runs),
            ("GET", f"{R}/actions/runs/{{run_id}}", self.h_run),
            ("GET", f"{R}/actions/runs/{{run_id}}/jobs", self.h_run_jobs),
            ("GET", f"{R}/actions/runs/{{run_id}}/artifacts", self.h_run_artifacts),
            ("GET", f"{R}/actions/jobs/{{job_id}}", self.h_job),
            ("GET", f"{R}/actions/artifacts/{{artifact_id}}", self.h_artifact),
            ("GET", f"{R}/actions/artifacts/{{artifact_id}}/zip", self.h_artifact_zip),
            ("GET", f"{R}/actions/workflows/{{workflow_id}}", self.h_workflow),
            ("GET", f"{R}/actions/workflows/{{workflow_id}}/runs", self.h_workflow_runs),
            ("POST", f"{R}/actions/workflows/{{workflow_id}}/dispatches", self.h_dispatch),
            ("GET", f"{R}/collaborators/{{user}}/permission", self.h_permission),
            ("GET", f"{DOWNLOAD_PREFIX}/{{artifact_id}}/{{signature}}", self.h_download, "none"),
            ("GET", f"{R}/tarball/{{ref}}", self.h_tarball),
            ("GET", f"{CODELOAD_PREFIX}/{{owner}}/{{repo}}/{{sha}}/{{signature}}", self.h_codeload, "none"),
        ]
        return [Route(t[0], t[1], _compile(t[1]), t[2], t[3] if len(t) > 3 else "token") for t in table]

    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        for route in self.routes:
            if route.method != method:
                continue
            m = route.regex.match(path)
            if m:
                return route, {k: urllib.parse.unquote(v or "") for k, v in m.groupdict().items()}
        return None

    # ----- handlers: identity, app auth, org -----------------------------------------------

    def h_user(self, req: Request) -> Response:
        # GitHub's public-user shape (the bot's own profile).
        return Response(200, {**self.user(req.actor or ""), "name": req.actor, "company": None, "blog": "",
                              "location": None, "email": None, "hireable": None, "bio": None,
                              "public_repos": 0, "public_gists": 0, "followers": 0, "following": 0,
                              "created_at": iso(self.pr_created - timedelta(days=900)), "updated_at": iso(self.pr_created)})

    def h_users(self, req: Request) -> Response:
        return Response(200, self.user(req.params["login"]))

    def h_rate_limit(self, req: Request) -> Response:
        used = self._rate_used[req.actor or ""]
        core = {"limit": self.rate_limit, "remaining": max(0, self.rate_limit - used), "reset": self._rate_reset,
                "used": used,
                "resource": "core"}
        other = {"limit": RATE_LIMIT, "remaining": RATE_LIMIT, "reset": self._rate_reset, "used": 0}
        return Response(200, {"resources": {"core": core, "search": {**other, "limit": 30, "remaining": 30},
                                            "graphql": other}, "rate": core})

    def _installation(self) -> dict:
        owner = self.world.owner
        return {"id": INSTALLATION_ID, "app_id": APP_ID, "app_slug": self.app_slug, "target_type": "Organization",
                "account": self.user(owner, "Organization"), "repository_selection": "all",
                "access_tokens_url": f"{self.api}/app/installations/{INSTALLATION_ID}/access_tokens",
                "repositories_url": f"{self.api}/installation/repositories",
                "html_url": f"{WEB}/organizations/{owner}/settings/installations/{INSTALLATION_ID}",
                "target_id": user_id(owner), "permissions": {"contents": "read", "issues": "write",
                                                              "pull_requests": "write", "statuses": "write",
                                                              "actions": "write", "checks": "write", "members": "read"},
                "events": ["issue_comment", "pull_request", "workflow_run"], "created_at": iso(self.pr_created),
                "updated_at": iso(self.pr_created), "single_file_name": None, "suspended_at": None}

    def h_app(self, req: Request) -> Response:
        return Response(200, {"id": APP_ID, "slug": self.app_slug, "node_id": node_id("App", APP_ID),
                              "name": self.app_slug, "owner": self.user(self.world.owner, "Organization"),
                              "description": "", "external_url": WEB, "html_url": f"{WEB}/apps/{self.app_slug}",
                              "created_at": iso(self.pr_created), "updated_at": iso(self.pr_created),
                              "permissions": self._installation()["permissions"], "events": []})

    def h_installation(self, req: Request) -> Response:
        if self._int(req, "installation_id") != INSTALLATION_ID:
            raise not_found()
        return Response(200, self._installation())

    def h_repo_installation(self, req: Request) -> Response:
        self._check_repo(req)
        return Response(200, self._installation())

    def h_access_token(self, req: Request) -> Response:
        if self._int(req, "installation_id") != INSTALLATION_ID:
            raise not_found()
        token = f"ghs_sandboxinstallation{len(self._install_tokens) + 1:04d}"
        self._install_tokens[token] = self.world.bot.login
        # Expiry is wall-clock: PyGithub compares it with now() to decide when to refresh.
        expires = datetime.now(timezone.utc) + TOKEN_LIFETIME
        granted = self._installation()["permissions"]
        asked = (req.body or {}).get("permissions")
        if asked:
            # GitHub refuses a token with more than the installation has.
            for scope, level in asked.items():
                if scope not in granted or (level == "write" and granted[scope] != "write"):
                    raise invalid(f"The permissions requested are not granted to this installation: {scope}",
                                  "permissions")
        perms = dict(asked or granted)
        self._install_token_perms[token] = perms
        return Response(201, {"token": token, "expires_at": iso(expires), "permissions": perms,
                              "repository_selection": "all"})

    def _check_token_permission(self, route: Route, method: str) -> None:
        """An installation token minted with narrower permissions is refused what it lacks, as
        GitHub answers: 403 "Resource not accessible by integration"."""
        perms = self._install_token_perms.get(getattr(self._local, "token", None) or "")
        if perms is None:
            return
        for needle, scope in ROUTE_SCOPES:
            if needle in route.template:
                level = "write" if method in WRITE_METHODS else "read"
                have = perms.get(scope)
                if have is None or (level == "write" and have != "write"):
                    raise HttpError(403, MSG_NOT_ACCESSIBLE)
                return

    def h_org(self, req: Request) -> Response:
        org = req.params["org"]
        known = {k.split("/", 1)[0].lower() for k in self.world.teams} | {self.world.owner.lower()}
        if org.lower() not in known:
            raise not_found()
        return Response(200, self.org_json(org))

    def _team_members(self, req: Request) -> list[str]:
        key = f"{req.params['org']}/{req.params['slug']}".lower()
        for name, members in self.world.teams.items():
            if name.lower() == key:
                return members
        raise not_found()

    def h_team(self, req: Request) -> Response:
        self._team_members(req)
        org, slug = req.params["org"], req.params["slug"]
        tid = user_id(f"team:{org}/{slug}")
        url = f"{self.api}/orgs/{org}/teams/{slug}"
        return Response(200, {"id": tid, "node_id": node_id("Team", tid), "name": slug, "slug": slug, "url": url,
                              "html_url": f"{WEB}/orgs/{org}/teams/{slug}", "description": None,
                              "privacy": "closed", "permission": "pull", "members_url": f"{url}/members{{/member}}",
                              "repositories_url": f"{url}/repos", "parent": None, "type": "organization",
                              "members_count": len(self._team_members(req)), "repos_count": 1,
                              "created_at": iso(self.pr_created - timedelta(days=300)), "updated_at": iso(self.pr_created),
                              "organization": self.org_json(org)})

    def _is_team_member(self, req: Request) -> bool:
        return req.params["user"].lower() in {m.lower() for m in self._team_members(req)}

    def h_team_membership(self, req: Request) -> Response:
        if not self._is_team_member(req):
            raise not_found()
        org, slug, user = req.params["org"], req.params["slug"], req.params["user"]
        return Response(200, {"url": f"{self.api}/orgs/{org}/teams/{slug}/memberships/{user}",
                              "role": "member", "state": "active"})

    def h_team_member(self, req: Request) -> Response:
        if not self._is_team_member(req):
            raise not_found()
        return Response(204)

    # ----- handlers: repository, pulls, issues ---------------------------------------------

    def h_repo(self, req: Request) -> Response:
        full = f"{req.params['owner']}/{req.params['repo']}"
        if full.lower() == self.world.repo.lower():
            return Response(200, self.repo_json(self.world.repo))
        for (repo, _), u in self._upstream.items():
            if repo == full.lower():
                return Response(200, self.repo_json(u["repo"]))
        raise not_found()

    def _upstream_pr(self, req: Request) -> dict | None:
        return self._upstream.get((f"{req.params['owner']}/{req.params['repo']}".lower(), self._int(req, "number")))

    def _upstream_pr_json(self, u: dict) -> dict:
        repo, n = u["repo"], int(u["number"])
        url = f"{self.api}/repos/{repo}/pulls/{n}"
        merged = bool(u.get("merged"))
        who = self.user(u.get("author", "someone"))
        return {"url": url, "id": user_id(f"{repo}#{n}"), "node_id": node_id("PullRequest", f"{repo}#{n}"),
                "number": n, "html_url": f"{WEB}/{repo}/pull/{n}", "issue_url": f"{self.api}/repos/{repo}/issues/{n}",
                "state": u.get("state", "closed" if merged else "open"), "title": u.get("title", ""),
                "body": u.get("body", ""), "user": who, "labels": [], "merged": merged,
                "merged_at": u.get("merged_at") or (iso(self.pr_created) if merged else None),
                "created_at": iso(self.pr_created - timedelta(days=7)), "updated_at": iso(self.pr_created),
                "closed_at": iso(self.pr_created) if u.get("state", "") == "closed" or merged else None,
                "head": {"ref": u.get("head_ref", "patch"), "sha": u.get("head_sha", "0" * 40), "label": "", "user": who,
                         "repo": self.repo_json(repo)},
                "base": {"ref": "main", "sha": "0" * 40, "label": "", "user": who, "repo": self.repo_json(repo)},
                "draft": False, "changed_files": len(u.get("files") or {}), "commits": 1,
                "author_association": "CONTRIBUTOR",
                # The rest of GitHub's pull-request shape.
                "diff_url": f"{WEB}/{repo}/pull/{n}.diff", "patch_url": f"{WEB}/{repo}/pull/{n}.patch",
                "commits_url": f"{url}/commits", "review_comments_url": f"{url}/comments",
                "review_comment_url": f"{self.api}/repos/{repo}/pulls/comments{{/number}}",
                "comments_url": f"{self.api}/repos/{repo}/issues/{n}/comments",
                "statuses_url": f"{self.api}/repos/{repo}/statuses/{u.get('head_sha', '0' * 40)}",
                "locked": False, "milestone": None, "assignee": None, "assignees": [], "auto_merge": None,
                "merge_commit_sha": None, "mergeable": None, "mergeable_state": "unknown",
                "merged_by": who if merged else None, "maintainer_can_modify": False, "comments": 0,
                "review_comments": 0, "additions": 0, "deletions": 0,
                "_links": {k: {"href": h} for k, h in (
                    ("self", url), ("html", f"{WEB}/{repo}/pull/{n}"), ("issue", f"{self.api}/repos/{repo}/issues/{n}"),
                    ("comments", f"{self.api}/repos/{repo}/issues/{n}/comments"), ("review_comments", f"{url}/comments"),
                    ("review_comment", f"{self.api}/repos/{repo}/pulls/comments{{/number}}"),
                    ("commits", f"{url}/commits"), ("statuses", f"{self.api}/repos/{repo}/statuses/0"))}}

    def h_pull(self, req: Request) -> Response:
        up = self._upstream_pr(req)
        if up is not None:
            return Response(200, self._upstream_pr_json(up))
        self._check_pr(req)
        return Response(200, self.pr_json())

    def h_pull_files(self, req: Request) -> Response:
        up = self._upstream_pr(req)
        if up is not None:
            entries = []
            for path, text in (up.get("files") or {}).items():
                lines = str(text).splitlines()
                entries.append({"sha": "0" * 40, "filename": path, "status": "added", "additions": len(lines),
                                "deletions": 0, "changes": len(lines),
                                "patch": f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join("+" + x for x in lines),
                                "blob_url": f"{WEB}/{up['repo']}/blob/main/{path}",
                                "raw_url": f"{WEB}/{up['repo']}/raw/main/{path}",
                                "contents_url": f"{self.api}/repos/{up['repo']}/contents/{path}"})
            return self.listing(req, entries, lambda x: x)
        self._check_pr(req)
        return self.listing(req, self._diff(self.base_sha, self.head_sha)[:MAX_PR_FILES], lambda x: x)

    def h_pull_commits(self, req: Request) -> Response:
        self._check_pr(req)
        return self.listing(req, self._chain[1:][:MAX_PR_COMMITS], lambda s: self.commit_json(s, False))

    def h_reviews(self, req: Request) -> Response:
        self._check_pr(req)
        return self.listing(req, _ordered(self._reviews), self.review_json)

    def h_review(self, req: Request) -> Response:
        self._check_pr(req)
        rec = self._reviews.get(self._int(req, "review_id"))
        if rec is None:
            raise not_found()
        return Response(200, self.review_json(rec))

    def h_review_comments(self, req: Request) -> Response:
        self._check_pr(req)
        return self.listing(req, _ordered(self._review_comments), self.review_comment_json)

    def h_review_comment_create(self, req: Request) -> Response:
        """An inline comment on one line of the head's diff (GitHub: `commit_id`, `path`, `line`,
        `side`; the line must be in the file at that commit)."""
        self._check_pr(req)
        body = req.body if isinstance(req.body, dict) else {}
        text, path, line, commit = body.get("body"), body.get("path"), body.get("line"), body.get("commit_id")
        if not isinstance(text, str) or not text:
            raise invalid("body is missing", "body", "missing_field")
        if len(text) > MAX_COMMENT_BODY:
            raise invalid("body is too long (maximum is 65536 characters)", "body", "custom")
        if not isinstance(commit, str) or commit not in self._chain:
            raise invalid("commit_id is not part of the pull request", "commit_id")
        changed = {f["filename"] for f in self._diff(self.base_sha, commit)}
        if not isinstance(path, str) or path not in changed:
            raise invalid("path is not part of the diff", "path")
        entry = self.git.files(commit).get(path)
        found = self.git.read(entry["sha"]) if entry else None
        n_lines = len(found[1].splitlines()) if found else None
        if not isinstance(line, int) or line < 1 or (n_lines is not None and line > n_lines):
            raise invalid("line must be part of the diff", "line")
        if body.get("side", "RIGHT") != "RIGHT":
            raise invalid("side must be RIGHT for a new line", "side")
        actor = req.actor or ""
        now = self._tick()
        rec = {"id": self._new_id(), "author": actor, "association": "NONE" if actor.endswith("[bot]") else self._association(actor),
               "body": text, "created_at": now, "updated_at": now, "user_type": self._actor_type(actor),
               "path": path, "line": line, "commit_id": commit}
        self._review_comments[rec["id"]] = rec
        self._effect(EFFECT_REVIEW_COMMENT_CREATED, actor, id=rec["id"], path=path, line=line, commit=commit, body=text)
        return Response(201, self.review_comment_json(rec))

    def h_review_comment(self, req: Request) -> Response:
        self._check_repo(req)
        rec = self._review_comments.get(self._int(req, "comment_id"))
        if rec is None:
            raise not_found()
        return Response(200, self.review_comment_json(rec))

    def h_issue(self, req: Request) -> Response:
        self._check_pr(req)
        return Response(200, self.issue_json())

    def h_comments_list(self, req: Request) -> Response:
        self._check_pr(req)
        items = _ordered(self._issue_comments)
        since = req.query.get("since")
        if since:
            items = [c for c in items if iso(c["updated_at"]) >= since]
        return self.listing(req, items, self.issue_comment_json)

    def _comment_body(self, req: Request) -> str:
        body = (req.body or {}).get("body") if isinstance(req.body, dict) else None
        if not isinstance(body, str) or not body:
            raise invalid("body is missing", "body", "missing_field")
        if len(body) > MAX_COMMENT_BODY:
            raise invalid(f"Body is too long (maximum is {MAX_COMMENT_BODY} characters)", "body", "custom")
        return body

    def _actor_type(self, login: str) -> str:
        return "Bot" if login.endswith("[bot]") else "User"

    def h_comment_create(self, req: Request) -> Response:
        self._check_pr(req)
        body = self._comment_body(req)
        actor = req.actor or ""
        now = self._tick()
        rec = {"id": self._new_id(), "author": actor, "association": self._association(actor) if not actor.endswith("[bot]") else "NONE",
               "body": body, "created_at": now, "updated_at": now, "user_type": self._actor_type(actor)}
        self._issue_comments[rec["id"]] = rec
        self._effect(EFFECT_COMMENT_CREATED, actor, id=rec["id"], number=self.pr_number, body=body)
        out = self.issue_comment_json(rec)
        return Response(201, out, {"Location": out["url"]})

    def _comment(self, req: Request) -> dict:
        self._check_repo(req)
        rec = self._issue_comments.get(self._int(req, "comment_id"))
        if rec is None:
            raise not_found()
        return rec

    def h_comment_get(self, req: Request) -> Response:
        return Response(200, self.issue_comment_json(self._comment(req)))

    def h_comment_edit(self, req: Request) -> Response:
        rec = self._comment(req)
        body = self._comment_body(req)
        previous = rec["body"]
        rec["body"], rec["updated_at"] = body, self._tick()
        self._effect(EFFECT_COMMENT_EDITED, req.actor, id=rec["id"], number=self.pr_number, body=body,
                     previous_body=previous, author=rec["author"])
        return Response(200, self.issue_comment_json(rec))

    def h_comment_delete(self, req: Request) -> Response:
        rec = self._comment(req)
        del self._issue_comments[rec["id"]]
        self._effect(EFFECT_COMMENT_DELETED, req.actor, id=rec["id"], number=self.pr_number, author=rec["author"])
        return Response(204)

    def _reaction_subject(self, req: Request) -> tuple[str, int]:
        self._check_repo(req)
        cid = self._int(req, "comment_id")
        subject = "review_comment" if "/pulls/comments/" in req.path else "issue_comment"
        store = self._review_comments if subject == "review_comment" else self._issue_comments
        if cid not in store:
            raise not_found()
        return subject, cid

    def _reaction_json(self, rec: dict) -> dict:
        return {"id": rec["id"], "node_id": node_id("Reaction", rec["id"]), "user": self.user(rec["actor"]),
                "content": rec["content"], "created_at": iso(rec["created_at"])}

    def h_reactions_list(self, req: Request) -> Response:
        key = self._reaction_subject(req)
        items = self._reactions.get(key, [])
        if req.query.get("content"):
            items = [r for r in items if r["content"] == req.query["content"]]
        return self.listing(req, items, self._reaction_json)

    def h_reactions_add(self, req: Request) -> Response:
        subject, cid = self._reaction_subject(req)
        content = (req.body or {}).get("content") if isinstance(req.body, dict) else None
        if content not in REACTIONS:
            raise invalid(f"content must be one of {', '.join(REACTIONS)}", "content")
        existing = self._reactions.setdefault((subject, cid), [])
        for r in existing:
            if r["actor"] == req.actor and r["content"] == content:
                return Response(200, self._reaction_json(r))  # GitHub answers 200 for a repeat
        rec = {"id": self._new_id(), "actor": req.actor or "", "content": content, "created_at": self._tick()}
        existing.append(rec)
        self._effect(EFFECT_REACTION_ADDED, req.actor, subject=subject, comment_id=cid, content=content)
        return Response(201, self._reaction_json(rec))

    def h_reaction_delete(self, req: Request) -> Response:
        subject, cid = self._reaction_subject(req)
        rid = self._int(req, "reaction_id")
        existing = self._reactions.get((subject, cid), [])
        for r in existing:
            if r["id"] == rid:
                if r["actor"] != req.actor:
                    raise HttpError(403, "Must have admin rights to Repository.")
                existing.remove(r)
                self._effect(EFFECT_REACTION_REMOVED, req.actor, subject=subject, comment_id=cid, content=r["content"])
                return Response(204, None)
        raise not_found()

    def h_labels_list(self, req: Request) -> Response:
        self._check_pr(req)
        return self.listing(req, list(self._labels), self.label_json)

    def h_labels_add(self, req: Request) -> Response:
        self._check_pr(req)
        body = req.body
        names = body.get("labels") if isinstance(body, dict) else body
        if not isinstance(names, list) or not all(isinstance(x, str) and x for x in names):
            raise invalid("labels must be a list of names", "labels")
        for name in names:
            if name not in self._labels:
                self._labels.append(name)
                self._effect(EFFECT_LABEL_ADDED, req.actor, number=self.pr_number, label=name)
        return Response(200, [self.label_json(x) for x in self._labels])

    def h_label_remove(self, req: Request) -> Response:
        self._check_pr(req)
        name = req.params["name"]
        if name not in self._labels:
            raise HttpError(404, "Label does not exist")
        self._labels.remove(name)
        self._effect(EFFECT_LABEL_REMOVED, req.actor, number=self.pr_number, label=name)
        return Response(200, [self.label_json(x) for x in self._labels])

    def h_label(self, req: Request) -> Response:
        self._check_repo(req)
        return Response(200, self.label_json(req.params["name"]))

    # ----- handlers: git data --------------------------------------------------------------

    def _wants_raw(self, req: Request) -> bool:
        accept = req.headers.get("Accept") or ""
        return "vnd.github.raw" in accept or "vnd.github.v3.raw" in accept

    def h_contents(self, req: Request) -> Response:
        self._check_repo(req)
        sha = self.resolve_ref(req.query.get("ref"))
        if sha is None:
            raise HttpError(404, f"No commit found for the ref {req.query.get('ref')}")
        path = req.params.get("path", "").strip("/")
        entries = self.git.tree(sha, True) or []
        ref = req.query.get("ref") or self.world.default_branch
        hit = next((e for e in entries if e["path"] == path), None)
        if hit is not None and hit["type"] == "blob":
            data = self._blob(hit["sha"])
            if self._wants_raw(req):
                return Response(200, data, content_type="application/vnd.github.raw")
            out = self._content_entry(hit, ref)
            if len(data) > CONTENTS_INLINE_LIMIT:
                out.update(content="", encoding="none")
            else:
                out.update(content=_b64_lines(data), encoding="base64")
            return Response(200, out)
        if path and hit is None:
            raise not_found()
        prefix = f"{path}/" if path else ""
        children = [e for e in entries if e["path"].startswith(prefix) and "/" not in e["path"][len(prefix):]]
        return Response(200, [self._content_entry(e, ref) for e in children])

    def _content_entry(self, e: dict, ref: str) -> dict:
        quoted = urllib.parse.quote(e["path"])
        is_file = e["type"] == "blob"
        url = f"{self.repo_api}/contents/{quoted}?ref={urllib.parse.quote(ref)}"
        git_url = f"{self.repo_api}/git/{'blobs' if is_file else 'trees'}/{e['sha']}"
        html = self.web(f"/{'blob' if is_file else 'tree'}/{ref}/{quoted}")
        return {"type": "file" if is_file else "dir", "name": e["path"].rsplit("/", 1)[-1], "path": e["path"],
                "sha": e["sha"], "size": e["size"] or 0, "url": url, "git_url": git_url, "html_url": html,
                "download_url": f"https://raw.githubusercontent.com/{self.world.repo}/{ref}/{quoted}" if is_file else None,
                "_links": {"self": url, "git": git_url, "html": html}}

    def h_blob(self, req: Request) -> Response:
        self._check_repo(req)
        sha = req.params["sha"]
        obj = self.git.read(sha) if _HEX40.match(sha) else None
        if obj is None or obj[0] != "blob":
            raise not_found()
        if self._wants_raw(req):
            return Response(200, obj[1], content_type="application/vnd.github.raw")
        return Response(200, {"sha": sha, "node_id": node_id("Blob", sha), "size": len(obj[1]),
                              "url": f"{self.repo_api}/git/blobs/{sha}", "content": _b64_lines(obj[1]),
                              "encoding": "base64"})

    def h_tree(self, req: Request) -> Response:
        self._check_repo(req)
        ref = req.params["ref"]
        sha = self.resolve_ref(ref)
        tree_sha = self.git.commit(sha)["tree"] if sha else None
        if tree_sha is None and _HEX40.match(ref):
            obj = self.git.read(ref)
            tree_sha = ref if obj and obj[0] == "tree" else None
        if tree_sha is None:
            raise not_found()
        recursive = req.query.get("recursive") not in (None, "", "0", "false")
        entries = self.git.tree(tree_sha, recursive) or []
        out = []
        for e in entries:
            kind = "blobs" if e["type"] == "blob" else "trees"
            item = {"path": e["path"], "mode": e["mode"], "type": e["type"], "sha": e["sha"],
                    "url": f"{self.repo_api}/git/{kind}/{e['sha']}"}
            if e["type"] == "blob":
                item["size"] = e["size"]
            out.append(item)
        return Response(200, {"sha": tree_sha, "url": f"{self.repo_api}/git/trees/{tree_sha}", "tree": out,
                              "truncated": False})

    def h_commit(self, req: Request) -> Response:
        self._check_repo(req)
        return Response(200, self.commit_json(self._commit_or_404(req.params["ref"]), True))

    def h_compare(self, req: Request) -> Response:
        self._check_repo(req)
        basehead = req.params["basehead"]
        a, sep, b = basehead.partition("...")
        if not sep:
            a, sep, b = basehead.partition("..")
        sa, sb = self.resolve_ref(a), self.resolve_ref(b)
        if not sep or sa is None or sb is None or sa not in self._chain or sb not in self._chain:
            raise not_found()
        ia, ib = self._chain.index(sa), self._chain.index(sb)
        mb = self._chain[min(ia, ib)]
        status = "identical" if ia == ib else ("ahead" if ib > ia else "behind")
        commits = self._chain[ia + 1: ib + 1] if ib > ia else []
        files = self._diff(mb, sb)
        url = f"{self.repo_api}/compare/{basehead}"
        return Response(200, {"url": url, "html_url": self.web(f"/compare/{basehead}"),
                              "permalink_url": self.web(f"/compare/{sa}...{sb}"),
                              "diff_url": self.web(f"/compare/{basehead}.diff"),
                              "patch_url": self.web(f"/compare/{basehead}.patch"),
                              "base_commit": self.commit_json(sa, False), "merge_base_commit": self.commit_json(mb, False),
                              "status": status, "ahead_by": max(0, ib - ia), "behind_by": max(0, ia - ib),
                              "total_commits": len(commits), "commits": [self.commit_json(s, False) for s in commits],
                              "files": files[:MAX_COMMIT_FILES]})

    # ----- handlers: checks and statuses ---------------------------------------------------

    def h_check_runs(self, req: Request) -> Response:
        self._check_repo(req)
        sha = self._commit_or_404(req.params["ref"])
        runs = list(self._check_runs.get(sha, []))
        if req.query.get("check_name"):
            runs = [r for r in runs if r["name"] == req.query["check_name"]]
        if req.query.get("status"):
            runs = [r for r in runs if r["status"] == req.query["status"]]
        if req.query.get("filter", "latest") == "latest":
            latest: dict[str, dict] = {}
            for r in runs:
                latest[r["name"]] = r
            runs = list(latest.values())
        return self.wrapped_listing(req, "check_runs", runs, self.check_run_json)

    def h_check_run(self, req: Request) -> Response:
        self._check_repo(req)
        cid = self._int(req, "check_run_id")
        for runs in self._check_runs.values():
            for r in runs:
                if r["id"] == cid:
                    return Response(200, self.check_run_json(r))
        raise not_found()

    def _find_check_run(self, cid: int) -> dict:
        for runs in self._check_runs.values():
            for r in runs:
                if r["id"] == cid:
                    return r
        raise not_found()

    def _check_output(self, body: dict) -> tuple[dict | None, list[dict]]:
        """GitHub's validation of a check run's `output` (its limits answer 422)."""
        out = body.get("output")
        if out is None:
            return None, []
        if not isinstance(out, dict) or not isinstance(out.get("title"), str) or not isinstance(out.get("summary"), str):
            raise invalid("output needs a title and a summary", "output", "missing_field")
        if len(out["title"]) > MAX_CHECK_TITLE:
            raise invalid("output.title is too long", "output.title", "custom")
        for key in ("summary", "text"):
            if out.get(key) is not None and len(out[key]) > MAX_CHECK_OUTPUT:
                raise invalid(f"output.{key} is too long (maximum is {MAX_CHECK_OUTPUT} characters)",
                              f"output.{key}", "custom")
        annotations = out.get("annotations") or []
        if len(annotations) > MAX_ANNOTATIONS_PER_REQUEST:
            raise invalid(f"at most {MAX_ANNOTATIONS_PER_REQUEST} annotations per request", "output.annotations", "custom")
        for a in annotations:
            if not (isinstance(a, dict) and isinstance(a.get("path"), str) and isinstance(a.get("start_line"), int)
                    and isinstance(a.get("end_line"), int) and a.get("annotation_level") in ANNOTATION_LEVELS
                    and isinstance(a.get("message"), str) and a["start_line"] >= 1 and a["end_line"] >= a["start_line"]):
                raise invalid("an annotation needs path, start_line <= end_line, annotation_level and message",
                              "output.annotations", "invalid")
        return {k: out.get(k) for k in ("title", "summary", "text")}, [dict(a) for a in annotations]

    def h_check_run_create(self, req: Request) -> Response:
        self._check_repo(req)
        body = req.body if isinstance(req.body, dict) else {}
        name, sha = body.get("name"), body.get("head_sha")
        if not isinstance(name, str) or not name:
            raise invalid("name is missing", "name", "missing_field")
        if not isinstance(sha, str) or not _HEX40.match(sha) or self.git.commit(sha) is None:
            raise invalid(f"No commit found for SHA: {sha}", "head_sha")
        status = body.get("status", "queued")
        conclusion = body.get("conclusion")
        if status not in CHECK_STATUSES or (conclusion is not None and conclusion not in CHECK_CONCLUSIONS):
            raise invalid("status or conclusion is not one GitHub knows", "conclusion")
        if conclusion is not None:
            status = "completed"
        output, annotations = self._check_output(body)
        rec = {"id": self._new_id(), "name": name, "status": status, "conclusion": conclusion,
               "details_url": body.get("details_url"), "run_id": None, "head_sha": sha,
               "external_id": str(body.get("external_id") or ""), "output": output or {}, "annotations": annotations}
        self._check_runs.setdefault(sha, []).append(rec)
        self._effect(EFFECT_CHECK_RUN_CREATED, req.actor, id=rec["id"], name=name, sha=sha, conclusion=conclusion,
                     output=dict(rec["output"]), annotations=annotations)
        return Response(201, self.check_run_json(rec))

    def h_check_run_update(self, req: Request) -> Response:
        self._check_repo(req)
        rec = self._find_check_run(self._int(req, "check_run_id"))
        body = req.body if isinstance(req.body, dict) else {}
        output, annotations = self._check_output(body)
        if body.get("conclusion") is not None:
            if body["conclusion"] not in CHECK_CONCLUSIONS:
                raise invalid("conclusion is not one GitHub knows", "conclusion")
            rec["conclusion"], rec["status"] = body["conclusion"], "completed"
        if output is not None:
            rec["output"] = output
        # GitHub appends the annotations of each update to the run's.
        rec["annotations"] = list(rec.get("annotations") or []) + annotations
        self._effect(EFFECT_CHECK_RUN_UPDATED, req.actor, id=rec["id"], conclusion=rec["conclusion"],
                     output=dict(rec["output"]), annotations=annotations)
        return Response(200, self.check_run_json(rec))

    def h_check_run_annotations(self, req: Request) -> Response:
        self._check_repo(req)
        rec = self._find_check_run(self._int(req, "check_run_id"))
        return self.listing(req, list(rec.get("annotations") or []), lambda a: {
            **{k: a.get(k) for k in ("path", "start_line", "end_line", "annotation_level", "message", "title")},
            "blob_href": self.web(f"/blob/{rec['head_sha']}/{a.get('path')}")})

    def h_statuses(self, req: Request) -> Response:
        self._check_repo(req)
        sha = self._commit_or_404(req.params["ref"])
        return self.listing(req, list(reversed(self._statuses.get(sha, []))), self.status_json)

    def h_combined_status(self, req: Request) -> Response:
        self._check_repo(req)
        sha = self._commit_or_404(req.params["ref"])
        latest: dict[str, dict] = {}
        for s in self._statuses.get(sha, []):
            latest[s["context"]] = s
        states = {s["state"] for s in latest.values()}
        if states & {"error", "failure"}:
            state = "failure"
        elif not states or "pending" in states:
            state = "pending"
        else:
            state = "success"
        chunk, headers = self.paginate(req, list(latest.values()))
        return Response(200, {"state": state, "statuses": [self.status_json(s) for s in chunk], "sha": sha,
                              "total_count": len(latest), "repository": self.repo_json(self.world.repo),
                              "commit_url": f"{self.repo_api}/commits/{sha}",
                              "url": f"{self.repo_api}/commits/{sha}/status"}, headers)

    def h_status_create(self, req: Request) -> Response:
        self._check_repo(req)
        sha = req.params["sha"]
        if not _HEX40.match(sha) or self.git.commit(sha) is None:
            raise HttpError(422, f"No commit found for SHA: {sha}")
        body = req.body if isinstance(req.body, dict) else {}
        state = body.get("state")
        if state not in STATUS_STATES:
            raise invalid(f"state must be one of {', '.join(STATUS_STATES)}", "state")
        description = body.get("description")
        if description is not None and len(description) > MAX_STATUS_DESCRIPTION:
            raise invalid(f"description is too long (maximum is {MAX_STATUS_DESCRIPTION} characters)", "description", "custom")
        rec = {"id": self._new_id(), "sha": sha, "state": state, "description": description,
               "target_url": body.get("target_url"), "context": body.get("context") or "default",
               "created_at": self._tick(), "actor": req.actor or ""}
        self._statuses.setdefault(sha, []).append(rec)
        self._effect(EFFECT_STATUS_SET, req.actor, sha=sha, state=state, context=rec["context"],
                     description=description, target_url=rec["target_url"])
        return Response(201, self.status_json(rec))

    # ----- handlers: actions ---------------------------------------------------------------

    def _filtered_runs(self, req: Request, workflow_id: int | None = None) -> list[dict]:
        runs = sorted(self._runs.values(), key=lambda r: (r["created_at"], r["id"]), reverse=True)
        q = req.query
        if workflow_id is not None:
            runs = [r for r in runs if r["workflow_id"] == workflow_id]
        if q.get("event"):
            runs = [r for r in runs if r["event"] == q["event"]]
        if q.get("status"):
            runs = [r for r in runs if q["status"] in (r["status"], r["conclusion"])]
        if q.get("branch"):
            runs = [r for r in runs if r["head_branch"] == q["branch"]]
        if q.get("head_sha"):
            runs = [r for r in runs if r["head_sha"] == q["head_sha"]]
        return runs

    def h_runs(self, req: Request) -> Response:
        self._check_repo(req)
        return self.wrapped_listing(req, "workflow_runs", self._filtered_runs(req), self.run_json)

    def _run(self, req: Request) -> dict:
        self._check_repo(req)
        rec = self._runs.get(self._int(req, "run_id"))
        if rec is None:
            raise not_found()
        return rec

    def h_run(self, req: Request) -> Response:
        return Response(200, self.run_json(self._run(req)))

    def h_run_jobs(self, req: Request) -> Response:
        rec = self._run(req)
        return self.wrapped_listing(req, "jobs", self._jobs_by_run.get(rec["id"], []), self.job_json)

    def h_job(self, req: Request) -> Response:
        self._check_repo(req)
        jid = self._int(req, "job_id")
        for jobs in self._jobs_by_run.values():
            for j in jobs:
                if j["id"] == jid:
                    return Response(200, self.job_json(j))
        raise not_found()

    def h_run_artifacts(self, req: Request) -> Response:
        rec = self._run(req)
        arts = [self._artifacts[a] for a in rec["artifacts"]]
        if req.query.get("name"):
            arts = [a for a in arts if a["name"] == req.query["name"]]
        return self.wrapped_listing(req, "artifacts", arts, self.artifact_json)

    def _artifact(self, req: Request) -> dict:
        self._check_repo(req)
        rec = self._artifacts.get(self._int(req, "artifact_id"))
        if rec is None:
            raise not_found()
        return rec

    def h_artifact(self, req: Request) -> Response:
        return Response(200, self.artifact_json(self._artifact(req)))

    def _signature(self, artifact_id: int) -> str:
        return node_id("download", f"{artifact_id}:{self.port}").replace("+", "-").replace("/", "_")

    def h_artifact_zip(self, req: Request) -> Response:
        rec = self._artifact(req)
        if rec["expired"]:
            raise HttpError(410, MSG_EXPIRED)
        # Like GitHub: a redirect to a short-lived URL that needs no token.
        location = f"{self.api}{DOWNLOAD_PREFIX}/{rec['id']}/{self._signature(rec['id'])}"
        return Response(302, b"", {"Location": location}, content_type="text/plain")

    def h_download(self, req: Request) -> Response:
        aid = self._int(req, "artifact_id")
        rec = self._artifacts.get(aid)
        if rec is None or rec["expired"] or req.params["signature"] != self._signature(aid):
            raise HttpError(404, "BlobNotFound")
        if aid not in self._zip_cache:
            prebuilt = rec["dir"].with_name(rec["dir"].name + PREBUILT_ZIP_SUFFIX)
            if not rec["dir"].is_dir() and prebuilt.is_file():
                self._zip_cache[aid] = prebuilt.read_bytes()  # served as is, e.g. a truncated zip
            else:
                self._zip_cache[aid] = _zip_dir(rec["dir"])
        return Response(200, self._zip_cache[aid], content_type="application/zip")

    # ----- repository archives ----------------------------------------------------------------

    def _archive_signature(self, sha: str) -> str:
        return node_id("codeload", f"{sha}:{self.port}").replace("+", "-").replace("/", "_")

    def h_tarball(self, req: Request) -> Response:
        """Like GitHub: a redirect to a short-lived codeload URL that needs no token."""
        self._check_repo(req)
        sha = self.resolve_ref(req.params["ref"])
        if sha is None or self.git.commit(sha) is None:
            raise not_found()
        owner, name = self.world.repo.split("/", 1)
        location = f"{self.api}{CODELOAD_PREFIX}/{owner}/{name}/{sha}/{self._archive_signature(sha)}"
        return Response(302, b"", {"Location": location}, content_type="text/plain")

    def h_codeload(self, req: Request) -> Response:
        sha = req.params["sha"]
        if f"{req.params['owner']}/{req.params['repo']}".lower() != self.world.repo.lower() \
                or req.params["signature"] != self._archive_signature(sha) or self.git.commit(sha) is None:
            raise HttpError(404, MSG_NOT_FOUND)
        with self._lock:
            cached = self._tarball_cache.get(sha)
        if cached is None:
            prefix = _archive_name(self.world.repo, sha).removesuffix(".tar.gz") + "/"
            # git archive writes the commit id into a pax global header, as GitHub's archives carry it.
            tar = _git_out(self.repo_path, "archive", "--format=tar", f"--prefix={prefix}", sha)
            cached = gzip.compress(tar, mtime=0)
            with self._lock:
                self._tarball_cache[sha] = cached
        disposition = f"attachment; filename={_archive_name(self.world.repo, sha)}"
        return Response(200, cached, {"Content-Disposition": disposition}, content_type="application/x-gzip")

    def _workflow(self, req: Request) -> dict:
        self._check_repo(req)
        key = req.params["workflow_id"]
        for wf in self._workflows.values():
            if key == str(wf["id"]) or key == Path(wf["path"]).name:
                return wf
        raise not_found()

    def h_workflow(self, req: Request) -> Response:
        return Response(200, self.workflow_json(self._workflow(req)))

    def h_workflow_runs(self, req: Request) -> Response:
        wf = self._workflow(req)
        return self.wrapped_listing(req, "workflow_runs", self._filtered_runs(req, wf["id"]), self.run_json)

    def h_dispatch(self, req: Request) -> Response:
        wf = self._workflow(req)
        body = req.body if isinstance(req.body, dict) else {}
        ref = body.get("ref")
        if not isinstance(ref, str) or not ref:
            raise invalid("ref is missing", "ref", "missing_field")
        sha = self.resolve_ref(ref)
        if sha is None:
            raise invalid(f"No ref found for: {ref}", "ref")
        if "return_run_details" in body and not self.run_details:
            raise invalid("return_run_details is not a permitted key.", "return_run_details")
        inputs = body.get("inputs") or {}
        run_id = self._new_id()
        self._runs[run_id] = {"id": run_id, "name": wf["name"], "workflow_id": wf["id"], "path": wf["path"],
                              "event": "workflow_dispatch", "status": "queued", "conclusion": None, "head_sha": sha,
                              "created_at": self._tick(), "head_branch": ref.removeprefix("refs/heads/"),
                              "artifacts": [], "actor": req.actor}
        self._effect(EFFECT_WORKFLOW_DISPATCHED, req.actor, workflow=wf["path"], ref=ref, inputs=inputs, run_id=run_id)
        if body.get("return_run_details"):
            return Response(200, {"workflow_run_id": run_id, "run_url": f"{self.repo_api}/actions/runs/{run_id}",
                                  "html_url": self.web(f"/actions/runs/{run_id}")})
        return Response(204)

    def h_permission(self, req: Request) -> Response:
        self._check_repo(req)
        login = req.params["user"]
        entry = self.world.pr.users.get(login)
        # A public repository: anyone without a grant can still read.
        perm = (entry or {}).get("permission", "read")
        role = (entry or {}).get("role_name", perm)
        return Response(200, {"permission": perm, "role_name": role, "user": {**self.user(login), "role_name": role, "permissions": {
            "admin": perm == "admin", "maintain": role in ("admin", "maintain"),
            "push": perm in ("admin", "write"), "triage": perm in ("admin", "write") or role == "triage",
            "pull": perm != "none"}}})

    # ----- dispatch ------------------------------------------------------------------------

    def handle(self, method: str, raw_path: str, headers: Mapping[str, str], body: bytes) -> Response | str:
        """Answer one request. Returns the Response, or FAULT_DROP to close without answering."""
        parsed = urllib.parse.urlsplit(raw_path)
        path, prefix = parsed.path, ""
        if path.startswith(API_PREFIX + "/"):
            path, prefix = path[len(API_PREFIX):], API_PREFIX
        self._local.prefix = prefix
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(parsed.query, keep_blank_values=True).items()}
        if self.latency_ms:
            time.sleep(self.latency_ms / 1000)
        found = self.match(method, path.rstrip("/") or "/")
        template = f"{method} {found[0].template}" if found else f"{method} {path}"
        if found is None and self.strict:
            with self._lock:
                self.violations.append(f"{method} {raw_path}")
        fault = self._draw_fault()
        actor = None
        ghost: int | str | None = None
        if fault == FAULT_DROP:
            self._record(method, raw_path, template, FAULT_DROP, None, body)
            return FAULT_DROP
        try:
            if fault is not None:
                raise _Fault(fault)
            if found is None:
                raise not_found()
            route, params = found
            if route.auth != "none":
                actor = self._authenticate(route, headers)
            with self._lock:
                if route.auth == "token":
                    self._roll_rate_window()
                    if self._rate_used[actor or ""] >= self.rate_limit:
                        # Refused before anything is applied; it does not count as used.
                        raise HttpError(self.limit_status, MSG_PRIMARY_LIMIT)
                    self._rate_used[actor or ""] += 1
                    self._check_token_permission(route, method)
                try:
                    data = json.loads(body) if body else None
                except ValueError:
                    raise HttpError(400, MSG_BAD_JSON) from None
                req = Request(method, path, query, headers, data, params, actor)
                resp = route.handler(req)
                ghost = self._draw_ghost(method, template, resp.status)
                if ghost is not None:
                    self.ghost_writes.append((method, raw_path, ghost))
            if ghost == FAULT_DROP:
                self._record(method, raw_path, template, FAULT_DROP, actor, body)
                return FAULT_DROP
            if ghost is not None:
                raise _Fault(ghost)
        except _Fault as f:
            resp = _fault_response(f.kind, self.retry_after_s, self.limit_status)
        except HttpError as e:
            payload: dict[str, Any] = {"message": e.message, "documentation_url": DOCS, "status": str(e.status)}
            if e.errors:
                payload["errors"] = e.errors
            resp = Response(e.status, payload)
        except Exception as e:  # an emulator bug: answer like GitHub would, and fail assert_clean()
            with self._lock:
                self.violations.append(f"emulator error on {method} {raw_path}: {type(e).__name__}: {e}")
            resp = Response(500, {"message": MSG_SERVER_ERROR[500], "documentation_url": DOCS, "status": "500"})
        with self._lock:
            resp.headers.update(self._rate_headers(actor))
            if self.record_responses and isinstance(resp.body, (dict, list)):
                self.responses.append((template, resp.status, json.loads(json.dumps(resp.body, default=str))))
        self._record(method, raw_path, template, resp.status, actor, body)
        return resp


class _Fault(Exception):
    def __init__(self, kind: str | int):
        super().__init__(str(kind))
        self.kind = kind


def _fault_response(kind: str | int, retry_after_s: int | None = DEFAULT_RETRY_AFTER_S,
                    status: int = 403) -> Response:
    if kind == FAULT_RATE_LIMIT:
        return Response(status, {"message": MSG_SECONDARY_LIMIT, "documentation_url":
                                 "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"},
                        {} if retry_after_s is None else {"Retry-After": str(int(retry_after_s))})
    code = int(kind)
    return Response(code, {"message": MSG_SERVER_ERROR[code], "documentation_url": DOCS, "status": str(code)})


def _ordered(store: dict[int, dict]) -> list[dict]:
    return sorted(store.values(), key=lambda r: (r["created_at"], r["id"]))


def _b64_lines(data: bytes) -> str:
    """Base64 wrapped at 60 columns, as the contents and blobs APIs return it."""
    enc = base64.b64encode(data).decode()
    return "".join(enc[i:i + 60] + "\n" for i in range(0, len(enc), 60))


def _git_out(repo: Path, *args: str) -> bytes:
    """Raw stdout of a git command in the world repository (archives are binary)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout


def _archive_name(repo: str, sha: str) -> str:
    return f"{repo.replace('/', '-')}-{sha[:ARCHIVE_SHORT_SHA]}.tar.gz"


def _zip_dir(root: Path) -> bytes:
    """Deterministic zip of an artifact directory (fixed timestamps, sorted names)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        if root.is_dir():
            for p in sorted(x for x in root.rglob("*") if x.is_file()):
                info = zipfile.ZipInfo(p.relative_to(root).as_posix(), date_time=ZIP_DATE)
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, p.read_bytes())
    return buf.getvalue()


def _make_handler(emu: Emulator) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in separate writes; with Nagle on, delayed ACKs add ~40 ms each.
        disable_nagle_algorithm = True
        server_version = "infx-sandbox"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            result = emu.handle(self.command, self.path, self.headers, body)
            if result == FAULT_DROP:
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            assert isinstance(result, Response)
            if result.body is None:
                payload = b""
            elif isinstance(result.body, bytes):
                payload = result.body
            else:
                payload = json.dumps(result.body).encode()
            self.send_response(result.status)
            if result.body is not None:
                self.send_header("Content-Type", result.content_type)
            self.send_header("Content-Length", str(len(payload)))
            for k, v in result.headers.items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = do_HEAD = _serve

    return _Handler
