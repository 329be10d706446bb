"""What a check returns: a status, one sentence, and the evidence behind it."""
from __future__ import annotations

import re
from enum import Enum

from pydantic import ConfigDict, Field

from recipes.model import Model


class Status(str, Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    WARN = "WARN"
    NA = "N/A"


# A file of another repository (the srt-slurm checkout a runner makes), as evidence cites it:
# `owner/name@<40-hex commit>:<path>` (checks.srt_checkout). The commit pins what was read.
_EXTERNAL = re.compile(r"^(?P<repo>[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+)@(?P<sha>[0-9a-f]{40}):(?P<path>[^/].*)$")
SHORT_SHA = 12


def external_path(repo: str, sha: str, path: str) -> str:
    return f"{repo}@{sha}:{path}"


def split_external(path: str | None) -> tuple[str, str, str] | None:
    """(repo, commit, path) of an `external_path`, else None (a benchmark-repository path)."""
    m = _EXTERNAL.match(path or "")
    return (m.group("repo"), m.group("sha"), m.group("path")) if m else None


class Evidence(Model):
    """One cited fact: a file and line, a run, an artifact, a comment, or missing evidence."""

    model_config = ConfigDict(frozen=True)

    path: str | None = None
    line: int | None = None
    url: str | None = None
    run_id: int | None = None
    artifact: str | None = None
    note: str | None = None
    # True when this item records evidence GitHub (or the checkout) could not provide.
    unavailable: bool = False

    def label(self) -> str:
        parts = []
        if self.path:
            ext = split_external(self.path)
            path = f"{ext[0]}@{ext[1][:SHORT_SHA]}:{ext[2]}" if ext else self.path
            parts.append(f"{path}:{self.line}" if self.line else path)
        if self.run_id:
            parts.append(f"run {self.run_id}")
        if self.artifact:
            parts.append(f"artifact {self.artifact}")
        if self.url and not parts:
            parts.append(self.url)
        if self.note:
            parts.append(self.note)
        return ", ".join(parts)


class CheckResult(Model):
    model_config = ConfigDict(frozen=True)

    status: Status
    reason: str
    evidence: list[Evidence] = Field(default_factory=list)
    # Optional extra Markdown-free data a template may show (e.g. Pareto frontiers).
    details: dict = Field(default_factory=dict)

    @classmethod
    def passed(cls, reason: str, *evidence: Evidence, **details) -> "CheckResult":
        return cls(status=Status.PASS, reason=reason, evidence=list(evidence), details=details)

    @classmethod
    def failed(cls, reason: str, *evidence: Evidence, **details) -> "CheckResult":
        return cls(status=Status.FAIL, reason=reason, evidence=list(evidence), details=details)

    @classmethod
    def warned(cls, reason: str, *evidence: Evidence, **details) -> "CheckResult":
        return cls(status=Status.WARN, reason=reason, evidence=list(evidence), details=details)

    @classmethod
    def not_applicable(cls, reason: str, *evidence: Evidence) -> "CheckResult":
        return cls(status=Status.NA, reason=reason, evidence=list(evidence))
