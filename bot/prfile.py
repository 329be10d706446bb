"""The YAML schema for "what only GitHub knows" about a PR: local mode's `--pr FILE` and the
`pr:` part of an emulator world (`world.yaml`). Every key is optional.

Commit references (`check_runs` keys, `runs[].head`) may be a full SHA, anything `git
rev-parse` understands in local mode, or a commit id declared in a world's `commits:` list.
"""
from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import ConfigDict, Field

from recipes.model import Model


class _Strict(Model):
    model_config = ConfigDict(extra="forbid")


class PRComment(_Strict):
    id: int | None = None
    author: str = "someone"
    association: str = "NONE"
    kind: Literal["issue_comment", "review", "review_comment"] = "issue_comment"
    body: str = ""
    created_at: datetime | None = None
    updated_at: datetime | None = None
    # GitHub user type: "User" or "Bot".
    user_type: Literal["User", "Bot"] = "User"


class PRSignoff(PRComment):
    pass


class PRCheckRun(_Strict):
    name: str
    status: str = "completed"
    conclusion: str | None = "success"
    details_url: str = ""
    # Shortcut for details_url: the Actions run the job belongs to.
    run_id: int | None = None


class PRArtifact(_Strict):
    name: str
    expired: bool = False


class PRRun(_Strict):
    """An Actions run of the sweep workflow. Artifact files live in
    `<artifacts_dir>/<id>/<artifact name>/` (a folder per artifact)."""

    id: int
    head: str = "head"
    workflow: str = ".github/workflows/run-sweep.yml"
    name: str = "Run Sweep"
    event: str = "pull_request"
    status: str = "completed"
    conclusion: str | None = "success"
    created_at: datetime | None = None
    head_branch: str | None = None
    artifacts: list[PRArtifact] = Field(default_factory=list)


class PRFile(_Strict):
    number: int = 1
    title: str = ""
    body: str = ""
    author: str = "author"
    draft: bool = False
    state: Literal["open", "closed"] = "open"
    labels: list[str] = Field(default_factory=list)
    signoff: PRSignoff | None = None
    comments: list[PRComment] = Field(default_factory=list)
    check_runs: dict[str, list[PRCheckRun]] = Field(default_factory=dict)
    runs: list[PRRun] = Field(default_factory=list)
    artifacts_dir: str | None = None
    # Users' repository permission and role (collaborator permission API).
    users: dict[str, dict[str, str]] = Field(default_factory=dict)
    # Members of the teams CODEOWNERS names ("org/team-slug" -> logins); a team not listed is
    # unreadable, as it is when GitHub answers 403/404 for a membership.
    teams: dict[str, list[str]] = Field(default_factory=dict)
    # Upstream references the Additional detail section may link, as GitHub would report them.
    upstream: list[dict] = Field(default_factory=list)
