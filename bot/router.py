"""The event router: handlers registered per (event, action) by concern modules, run in a fixed
order and isolated from each other, and the per-event context they share (STYLE 4)."""
from __future__ import annotations

import base64
import logging
import os
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import Any, Callable, Mapping

from bot.github_client import GithubException

from bot.events import CommentEvent, Event
from bot.github_client import GitHubApi, describe_error
from bot.publisher import own_marked, upsert_marked
from recipes.config import CONFIG_PATH, RepoConfig, load_repo_config

log = logging.getLogger(__name__)

# GitHub answers 403 to GET /user for the Actions GITHUB_TOKEN; its comments are by this login.
ACTIONS_BOT_LOGIN = "github-actions[bot]"
BOT_LOGIN_ENV = "INFX_BOT_LOGIN"

AUTHOR_CHECK = "router.author_check"
MSG_HANDLER_FAILED = "handler %s failed for %s"
MSG_IGNORED_AUTHOR = "ignoring %s: comment %s is by %s (a bot or the bot itself)"
MSG_NO_HANDLER = "no handler for %s"
MSG_CONFIG_UNREADABLE = "could not read %s from %s@%s (%s); using the default policy"

Handler = Callable[[Event, "Context"], None]


@dataclass(frozen=True)
class Registration:
    event: str
    action: str
    name: str
    handler: Handler


@dataclass(frozen=True)
class Outcome:
    """What one handler did with one event: `error` is None when it returned normally."""

    handler: str
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class Router:
    """Registrations keep the order they were added in; concern modules are added in a fixed
    order by `bot.handlers.build_router`, so the same event always runs the same sequence."""

    def __init__(self) -> None:
        self._registrations: list[Registration] = []

    def add(self, event: str, action: str, handler: Handler, *, name: str | None = None) -> None:
        label = name or f"{handler.__module__}.{handler.__qualname__}"
        self._registrations.append(Registration(event, action, label, handler))

    @property
    def registrations(self) -> list[Registration]:
        return list(self._registrations)

    def handlers_for(self, event: Event) -> list[Registration]:
        return [r for r in self._registrations if (r.event, r.action) == event.key]

    def dispatch(self, event: Event, ctx: "Context") -> list[Outcome]:
        """Run every handler for the event; one failing is logged with its name and the
        delivery id, and the others still run. The bot's own and other bots' comments are
        dropped here, before any handler sees them."""
        regs = self.handlers_for(event)
        if not regs:
            log.info(MSG_NO_HANDLER, event.describe())
            return []
        if isinstance(event, CommentEvent) and event.comment is not None:
            try:
                ignored = ctx.is_ignored_author(event.comment.author, event.comment.is_bot)
            except Exception as exc:  # unknown whether the bot wrote it: acting could loop on itself
                log.exception(MSG_HANDLER_FAILED, AUTHOR_CHECK, event.describe())
                return [Outcome(AUTHOR_CHECK, f"{type(exc).__name__}: {describe_error(exc)}")]
            if ignored:
                log.info(MSG_IGNORED_AUTHOR, event.describe(), event.comment.id, event.comment.author)
                return []
        outcomes = []
        for reg in regs:
            try:
                reg.handler(event, ctx)
                outcomes.append(Outcome(reg.name))
            except Exception as exc:  # isolation: one concern's bug never silences another
                log.exception(MSG_HANDLER_FAILED, reg.name, event.describe())
                outcomes.append(Outcome(reg.name, f"{type(exc).__name__}: {describe_error(exc)}"))
        return outcomes


Review = Callable[..., Any]


@dataclass
class Context:
    """What handlers share for one event: the API client, the repository, its policy (read once
    from the default branch) and a few cached reads. The bot keeps no state of its own: what it
    knows of earlier events it reads back from comments, reactions and statuses on GitHub."""

    api: GitHubApi
    repo: str
    delivery: str = "unknown"
    default_branch: str = "main"
    review_date: date | None = None
    env: Mapping[str, str] = field(default_factory=lambda: os.environ)
    # The verification pipeline (bot.pipeline.review_pr); tests may wrap it.
    review: Review | None = None
    _pulls: dict[int, dict] = field(default_factory=dict)
    # PRs this job has verified a sign-off of (the catch-up handler leaves them alone).
    verified: set[int] = field(default_factory=set)
    _config_problems: list[str] = field(default_factory=list)

    @property
    def r(self) -> str:
        return f"/repos/{self.repo}"

    @property
    def config_problems(self) -> list[str]:
        """`file:line: message` for every problem of the repository's config file (the defaults
        apply meanwhile); writes that depend on it (starting a sweep) refuse to act on it."""
        self.config  # noqa: B018 - loads it
        return list(self._config_problems)

    @cached_property
    def config(self) -> RepoConfig:
        try:
            item = self.api.get(f"{self.r}/contents/{CONFIG_PATH}", {"ref": self.default_branch})
        except GithubException as exc:
            if exc.status != 404:
                log.warning(MSG_CONFIG_UNREADABLE, CONFIG_PATH, self.repo, self.default_branch, describe_error(exc))
            return RepoConfig()
        except Exception as exc:  # transport failure after retries: defaults, loudly
            log.warning(MSG_CONFIG_UNREADABLE, CONFIG_PATH, self.repo, self.default_branch, describe_error(exc))
            return RepoConfig()
        data = base64.b64decode(item.get("content") or "") if isinstance(item, dict) else None
        config, findings = load_repo_config(data, CONFIG_PATH)
        for f in findings:
            log.warning("%s", f)
        self._config_problems = [str(f) for f in findings]
        return config

    @cached_property
    def own_login(self) -> str:
        """The bot's login; GitHub refuses GET /user to the Actions token, whose login is
        github-actions[bot], so that (or INFX_BOT_LOGIN) is the answer then."""
        if self.env.get(BOT_LOGIN_ENV):
            login = self.env[BOT_LOGIN_ENV]
        else:
            try:
                return self.api.login()
            except GithubException as exc:
                if exc.status not in (401, 403):
                    raise
                login = ACTIONS_BOT_LOGIN
        # The publisher asks the client for the login too; answer it the same way.
        self.api.set_login(login)
        return login

    def is_ignored_author(self, login: str, is_bot: bool) -> bool:
        """Bots (by type or `[bot]` suffix), the policy's bot logins and the bot itself."""
        if is_bot:
            return True
        lowered = login.lower()
        if lowered in {b.lower() for b in self.config.policy.bot_logins}:
            return True
        return lowered == self.own_login.lower()

    def pull(self, number: int, *, fresh: bool = False) -> dict:
        if fresh or number not in self._pulls:
            self._pulls[number] = self.api.get(f"{self.r}/pulls/{number}")
        return self._pulls[number]

    # ----- the bot's own marked comments --------------------------------------------------

    def own_comments(self, number: int, marker_prefix: str) -> list[dict]:
        """The bot's conversation comments on `number` whose first line starts with the
        marker prefix, oldest first (humans copying a marker are never matched)."""
        return own_marked(self.api, self.repo, number, self.own_login, marker_prefix, prefix=True)

    def upsert_marked(self, number: int, marker: str, body: str) -> tuple[dict, str]:
        """(comment, action): the bot's one comment carrying `marker` as its first line, by the
        publisher's one upsert rule (bot/publisher.py)."""
        return upsert_marked(self.api, self.repo, number, self.own_login, marker, marker + "\n" + body)
