"""What a check returns: a status, one sentence, and the evidence behind it."""
from __future__ import annotations

from enum import Enum

from pydantic import ConfigDict, Field

from recipes.model import Model
from recipes.evidence import SHORT_SHA, Evidence, external_path, split_external  # noqa: F401 (re-exported)


class Status(str, Enum):
    PASS = "PASS"
    FAIL = "FAIL"
    WARN = "WARN"
    NA = "N/A"


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
