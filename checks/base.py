"""The shape every numbered check has (STYLE.md section 1)."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .result import CheckResult

if TYPE_CHECKING:
    from .context import ReviewContext


@runtime_checkable
class Check(Protocol):
    number: int
    name: str
    # Checks 4, 14 and 15 are advisory: they may WARN but never FAIL.
    advisory: bool
    retired: bool

    def applies(self, ctx: "ReviewContext") -> str | None:
        """The reason the check does not apply (an N/A row), or None when it applies."""

    def evaluate(self, ctx: "ReviewContext") -> CheckResult: ...
