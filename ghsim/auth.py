"""Authentication and limits: tokens, the GitHub App and its installation tokens (with scopes), and
the primary rate limit per token."""
from __future__ import annotations

import re
import time
from datetime import datetime, timedelta, timezone
from typing import Mapping

from .common import WEB, iso, node_id, user_id
from .http import WRITE_METHODS, HttpError, Request, Response, invalid, not_found
from .routes import Route

RATE_LIMIT = 5000
RATE_WINDOW_S = 3600
TOKEN_LIFETIME = timedelta(hours=1)
INSTALLATION_ID = 4242
APP_ID = 4241
MSG_NO_AUTH = "Requires authentication"
MSG_BAD_CREDENTIALS = "Bad credentials"
MSG_JWT_REQUIRED = "A JSON web token could not be decoded"
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
_JWT = re.compile(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$")


class Auth:
    """Who a request is, what its token may do, and how much of its hourly limit is left."""

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

    def h_rate_limit(self, req: Request) -> Response:
        used = self._rate_used[req.actor or ""]
        core = {"limit": self.rate_limit, "remaining": max(0, self.rate_limit - used), "reset": self._rate_reset,
                "used": used,
                "resource": "core"}
        other = {"limit": RATE_LIMIT, "remaining": RATE_LIMIT, "reset": self._rate_reset, "used": 0}
        return Response(200, {"resources": {"core": core, "search": {**other, "limit": 30, "remaining": 30},
                                            "graphql": other}, "rate": core})

    # What GitHub's integration (App) objects carry besides id, slug, name and owner.
    def app_json(self, app_id: int, slug: str, name: str, owner: dict, permissions: dict | None = None) -> dict:
        return {"id": app_id, "slug": slug, "node_id": node_id("App", app_id), "name": name, "owner": owner,
                "description": "", "external_url": WEB, "html_url": f"{WEB}/apps/{slug}",
                "created_at": iso(self.pr_created - timedelta(days=700)), "updated_at": iso(self.pr_created),
                "permissions": permissions or {"checks": "write", "metadata": "read"}, "events": []}

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
