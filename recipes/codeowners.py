"""CODEOWNERS: who owns a path (spec section 7, last matching line wins)."""
from __future__ import annotations

import re
import warnings
from dataclasses import dataclass, field
from typing import Pattern

# GitHub's pattern semantics (gitignore-like, anchoring, `**`, trailing `/`) come from the
# `codeowners` package's translator rather than a home-grown glob, so edge cases match GitHub.
from codeowners import path_to_regex

from .errors import Finding

CATCH_ALL_PATTERNS = frozenset({"*", "**", "/**"})
_USER = re.compile(r"^@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})$")
_TEAM = re.compile(r"^@[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9_.-]+$")
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")
_ESCAPED_SPACE = "\0"


@dataclass(frozen=True)
class OwnerRule:
    pattern: str
    owners: list[str]
    line: int

    @property
    def is_catch_all(self) -> bool:
        return self.pattern in CATCH_ALL_PATTERNS


@dataclass(frozen=True)
class OwnerMatch:
    """The rule that decides a path's owners (owners of earlier matching lines do not add up)."""

    rule: OwnerRule

    @property
    def owners(self) -> list[str]:
        return self.rule.owners

    @property
    def is_catch_all(self) -> bool:
        return self.rule.is_catch_all

    def users(self) -> list[str]:
        """Individual owners as GitHub logins (no `@`)."""
        return [o[1:] for o in self.rule.owners if is_user(o)]

    def teams(self) -> list[str]:
        """Team owners as `org/team` (no `@`)."""
        return [o[1:] for o in self.rule.owners if is_team(o)]

    def names_user(self, login: str) -> bool:
        """True when `login` is listed by name on this rule (GitHub logins ignore case)."""
        return login.lower().lstrip("@") in {u.lower() for u in self.users()}


def is_user(owner: str) -> bool:
    return bool(_USER.match(owner))


def is_team(owner: str) -> bool:
    return bool(_TEAM.match(owner))


def is_email(owner: str) -> bool:
    return bool(_EMAIL.match(owner))


@dataclass
class CodeOwners:
    path: str
    rules: list[OwnerRule] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    _compiled: list[tuple[Pattern[str], OwnerRule]] = field(default_factory=list, repr=False)

    def owners_of(self, path: str) -> OwnerMatch | None:
        """The last rule whose pattern matches `path` (repository-relative), or None."""
        path = path.lstrip("/")
        for rx, rule in reversed(self._compiled):
            if rx.search(path):
                return OwnerMatch(rule)
        return None

    def everyone(self) -> set[str]:
        """Every owner token listed anywhere in the file, as written (`@user`, `@org/team`, email)."""
        return {o for r in self.rules for o in r.owners}

    def everyone_users(self) -> set[str]:
        """Every individual login listed anywhere, lower-cased and without `@`."""
        return {o[1:].lower() for o in self.everyone() if is_user(o)}

    def everyone_teams(self) -> set[str]:
        """Every team listed anywhere, as `org/team` (lower-cased)."""
        return {o[1:].lower() for o in self.everyone() if is_team(o)}


def _split_line(line: str) -> list[str]:
    """Tokens of one rule line: `\\ ` keeps a space inside the pattern; `#` starts a comment."""
    tokens = line.replace("\\ ", _ESCAPED_SPACE).split()
    out: list[str] = []
    for i, tok in enumerate(tokens):
        if tok.startswith("#") and i > 0:
            break
        out.append(tok.replace(_ESCAPED_SPACE, " "))
    return out


def _unsupported(pattern: str) -> tuple[str, str] | None:
    """(code, why) for a pattern GitHub documents as not working in CODEOWNERS: `!` negation,
    `[ ]` character ranges, a `\\#` escape; and `/`, which GitHub reports "will never match
    anything" (its CODEOWNERS errors API suggests `*` instead)."""
    if pattern.startswith("!"):
        return "codeowners-negation", f"negated pattern {pattern!r} is not supported by GitHub"
    if pattern.startswith("\\#"):
        return "codeowners-escape", f"escaped pattern {pattern!r} (`\\#`) is not supported by GitHub"
    if "[" in pattern or "]" in pattern:
        return "codeowners-range", f"pattern {pattern!r} uses a `[ ]` character range, which GitHub does not support"
    if pattern == "/":
        return "codeowners-root", "pattern '/' never matches anything on GitHub (use `*` for every file)"
    return None


def parse_codeowners(text: str, path: str) -> CodeOwners:
    """Parse a CODEOWNERS file. Lines GitHub would ignore or reject become findings."""
    co = CodeOwners(path=path)
    if "\0" in text:
        co.findings.append(Finding(path=path, message="binary file (contains NUL bytes)", code="binary"))
        return co
    for n, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        tokens = _split_line(line)
        pattern, owner_tokens = tokens[0], tokens[1:]
        # GitHub skips a line with invalid syntax (docs, "CODEOWNERS syntax"): it does not
        # apply at all, so an earlier matching line still decides. Keeping such a line as an
        # owner-less rule would let anyone sign for its paths and turn the real owner away.
        skip = _unsupported(pattern)
        if skip is not None:
            code, why = skip
            co.findings.append(Finding(path=path, line=n, severity="warning", code=code,
                                       message=f"{why}; GitHub skips the line, so it does not apply"))
            continue
        bad = [tok for tok in owner_tokens if not (is_user(tok) or is_team(tok) or is_email(tok))]
        if bad:
            co.findings.append(Finding(
                path=path, line=n, severity="warning", code="codeowners-owner",
                message=(f"{', '.join(repr(b) for b in bad[:3])} {'is' if len(bad) == 1 else 'are'} not a @user, "
                         "@org/team or email owner; GitHub skips the line, so it does not apply"),
            ))
            continue
        owners = list(owner_tokens)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # re's FutureWarning on odd sets in user patterns
                rx = path_to_regex(pattern)
        except (ValueError, re.error) as e:
            co.findings.append(Finding(
                path=path, line=n, code="codeowners-pattern",
                message=f"pattern {pattern!r} cannot be used: {e}",
            ))
            continue
        rule = OwnerRule(pattern=pattern, owners=owners, line=n)
        co.rules.append(rule)
        co._compiled.append((rx, rule))
    return co
