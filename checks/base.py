"""The shape every numbered check has (STYLE.md section 1).

`Check` is what the engine runs: a registry row (checks.registry.Registered) or a test's stand-in.
`Implementation` is what a check module's class provides; its number, name and kind are its
registry row, not attributes of its own."""
from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from .result import CheckResult

if TYPE_CHECKING:
    from .context import ReviewContext


@runtime_checkable
class Implementation(Protocol):
    def applies(self, ctx: "ReviewContext") -> str | None:
        """The reason the check does not apply (an N/A row), or None when it applies."""

    def evaluate(self, ctx: "ReviewContext") -> CheckResult: ...


@runtime_checkable
class Check(Implementation, Protocol):
    number: int
    name: str
    # Advisory checks may WARN but never FAIL (the registry lists which).
    advisory: bool
    retired: bool
    # A WARN of this check mentions the repository's escalation handles (spec 11.2).
    escalates: bool
