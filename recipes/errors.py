"""The one error type of the domain model: a finding that names its file and line."""
from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict

from .model import Model

Severity = Literal["error", "warning"]


class Finding(Model):
    """A problem found in a repository file. Bad input becomes one of these, never a crash."""

    model_config = ConfigDict(frozen=True)

    path: str
    line: int | None = None
    message: str
    severity: Severity = "error"
    # A short machine-readable kind ("yaml", "duplicate-key", "missing-variant", ...).
    code: str = "invalid"

    def __str__(self) -> str:
        where = f"{self.path}:{self.line}" if self.line else self.path
        return f"{where}: {self.message}"


class RecipeError(Exception):
    """Raised by parsers for input that cannot be read at all; carries the finding."""

    def __init__(self, finding: Finding):
        super().__init__(str(finding))
        self.finding = finding

    @classmethod
    def at(cls, path: str, line: int | None, message: str, code: str = "invalid") -> "RecipeError":
        return cls(Finding(path=path, line=line, message=message, code=code))
