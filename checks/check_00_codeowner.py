"""Check 0 (CODEOWNER): the sign-off author owns every changed path that has a specific owner.

What it checks:
    CODEOWNERS is read from the tip of the target branch (never the PR head). Every changed
    path, both sides of a rename, and the file a symbolic link the PR adds or re-points reads
    (checks.two_readings: the owners of both the link and its target), is resolved to its
    deciding line (the last matching one;
    owners of earlier lines do not add up). A path decided by a specific line needs the
    sign-off author listed on that line by name or as a member of a team on it. A path decided
    only by the catch-all (`*`) is satisfied by anyone listed anywhere in the file, by name or
    through a team whose membership is readable. Paths no line matches have no owner.
    Team membership is often unreadable (403/404, or not fetched): that is not a failure when
    the signer is otherwise an owner (named, or in another readable team of the same line).
    The signer is the author of the sign-off comment; its `Signed:` line is text, not identity.
    Unreadable team membership is never a failure by itself (spec 12, the verifier prompt):
    when the signer is not named and the only route to ownership is a team the bot cannot read
    (an Actions GITHUB_TOKEN cannot read org teams; a GitHub App with `members: read` can), the
    row PASSes and says the membership could not be confirmed, naming the teams and the reason
    (for a catch-all-only path: that any recognized CODEOWNER satisfies it). A FAIL needs a
    path whose owners provably do not include the signer: a specific line naming others and
    teams whose membership was read, or a catch-all path when the signer is provably listed
    nowhere in the file.
    Scope (spec 7): when no changed file has an owner other than a repository admin
    (`permission: admin` and `role_name: admin`; missing data never exempts) or a core team
    (policy `core_teams`), sign-off verification is not required and the row PASSes saying so.
Why it matters:
    The sign-off is only meaningful from someone accountable for the files it covers; an AMD
    owner cannot vouch for an NVIDIA config.
Evidence it cites:
    `.github/CODEOWNERS:<line>` of each deciding line, the sign-off comment, unreadable teams.
Not applicable when:
    Never: an unreadable diff or CODEOWNERS file is a FAIL ("could not verify").
How to fix:
    Ask an owner named on the path's CODEOWNERS line to post the sign-off, or split the PR so
    each part is signed by its owners.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from checks.result import CheckResult, Evidence
from checks.snapshot import Unavailable, UserAccess
from recipes.codeowners import OwnerRule, is_user
from checks.text import join, plural
from checks.two_readings import link_targets

ADMIN = "admin"
LIST_MAX = 3

MSG_NO_DIFF = "could not verify: the changed files could not be listed ({reason}); re-run once GitHub answers."
MSG_NO_CODEOWNERS = (
    "could not verify: {path} was not found on the target branch, so no owner can be resolved; "
    "restore the CODEOWNERS file on the default branch."
)
MSG_UNREADABLE_CODEOWNERS = (
    "could not verify: {finding}, so no owner can be resolved; fix the CODEOWNERS file on the default branch."
)
MSG_NOT_REQUIRED = (
    "Sign-off verification is not required: no changed file has an owner other than a repository "
    "admin or the core team ({path})."
)
MSG_NO_SIGNOFF = (
    "No sign-off: nobody posted the review checklist; ask an owner of the changed files "
    "({owners}) to post the latest PR_REVIEW_CHECKLIST.md."
)
MSG_LINK_TARGET = "{target} (read through the symbolic link {link} this PR adds or re-points)"
MSG_MISMATCH = (
    "@{signer} is not an owner of the changed {path} (owners {owners}, {co}:{line}){more}; "
    "ask one of those owners to sign off."
)
MSG_UNCONFIRMED = (
    "@{signer} is not named for the changed {path} ({co}:{line}), and membership of {teams} could not be "
    "confirmed ({reason}){more}."
)
MSG_UNCONFIRMED_CATCH_ALL = (
    "The changed {paths} {verb} to the catch-all line ({co}:{line}), which any recognized CODEOWNER satisfies; "
    "@{signer} is not named in CODEOWNERS and membership of {teams} could not be confirmed ({reason})."
)
MSG_UNCONFIRMED_TAIL = (
    "Unreadable team membership is not a failure by itself; no changed path's owners provably exclude the signer."
)
MSG_NAMED = "@{signer} is a named owner of the changed {paths}"
MSG_TEAM = "a member of @{team}, which owns the changed {paths}"
MSG_CATCH_ALL = "{subject} ({paths}) {verb} to the catch-all line ({co}:{line}) and {be} covered as a recognized CODEOWNER"
MSG_RECOGNIZED = "@{signer} is a recognized CODEOWNER ({how})"
MSG_UNOWNED = "{n} changed {files} match no CODEOWNERS line"
MSG_TEAM_NOT_FETCHED = "membership of @{team} was not fetched"


def _plural(n: int, word: str = "file") -> str:
    return plural(n, word)


def _list(items: list[str]) -> str:
    return join(items, limit=LIST_MAX)


@dataclass
class _Outcome:
    named: list[str] = field(default_factory=list)
    by_team: dict[str, list[str]] = field(default_factory=dict)
    catch_all: list[str] = field(default_factory=list)
    unowned: list[str] = field(default_factory=list)
    mismatch: list[tuple[str, OwnerRule]] = field(default_factory=list)
    unverified: list[tuple[str, OwnerRule, list[str], str]] = field(default_factory=list)
    rules: dict[int, OwnerRule] = field(default_factory=dict)


class _Membership:
    """Team membership answers for one signer, asked of the snapshot as the rules need them:
    True, False, or the reason it is unknown."""

    def __init__(self, snapshot, signer: str):
        self._snapshot = snapshot
        self._signer = signer

    def of(self, team: str, settle: bool = False) -> bool | str:
        """`settle`: the answer decides the row, so an unknown one is worth one more read."""
        answer = self._snapshot.is_team_member(team.lstrip("@"), self._signer, settle=settle)
        if answer is None:
            return MSG_TEAM_NOT_FETCHED.format(team=team)
        if isinstance(answer, Unavailable):
            return answer.reason
        return bool(answer)

    def settled(self, unknown: list[str], reason: str) -> tuple[str | None, list[str], str]:
        """When no team answered yes: the unknown teams asked again with `settle` (a source may
        turn "unknown" into a definite answer). (the team that counts the signer in, the teams
        still unknown, the first reason)."""
        still, first = [], ""
        for team in unknown:
            answer = self.of(team, settle=True)
            if answer is True:
                return team, [], ""
            if isinstance(answer, str):
                still.append(team)
                first = first or answer
        return None, still, first if still else reason


# At most this many owners' repository access is asked to decide exemptions (each is a request).
MAX_EXEMPTION_LOOKUPS = 10


class _Exemptions:
    """Whether an owner token exempts a path from sign-off (core team or a verified admin);
    a user's access is asked only when the line's other owners do not already decide."""

    def __init__(self, snapshot, core: set[str]):
        self._snapshot, self._core = snapshot, core
        self._asked: dict[str, bool] = {}

    def _is_admin(self, login: str) -> bool:
        key = login.lower()
        if key not in self._asked:
            if len(self._asked) >= MAX_EXEMPTION_LOOKUPS:
                return False  # unknown access never exempts
            access = self._snapshot.user_access(login)
            self._asked[key] = isinstance(access, UserAccess) and access.permission == ADMIN \
                and access.role_name == ADMIN
        return self._asked[key]

    def first_lookup(self, owners: list[str]) -> str | None:
        """The user `needs_signoff` asks first for this line, or None when it asks nobody."""
        if any(o.lower() not in self._core and not is_user(o) for o in owners):
            return None
        return next((o[1:] for o in owners if is_user(o) and o.lower() not in self._core), None)

    def needs_signoff(self, owners: list[str]) -> bool:
        """Some owner on the line is neither the core team nor a verified admin. Teams and e-mail
        owners decide without a lookup, so users are asked only when nothing else does."""
        if any(o.lower() not in self._core and not is_user(o) for o in owners):
            return True
        return any(not self._is_admin(o[1:]) for o in owners if is_user(o) and o.lower() not in self._core)


class CodeownerCheck:
    def applies(self, ctx) -> str | None:
        return None

    def evaluate(self, ctx) -> CheckResult:
        paths = ctx.changed_paths
        if isinstance(paths, Unavailable):
            return CheckResult.failed(MSG_NO_DIFF.format(reason=paths.reason),
                                      Evidence(note="changed files", unavailable=True))
        repo = ctx.target_repo
        co = repo.codeowners
        co_path = repo.layout.codeowners
        if co is None:
            return CheckResult.failed(MSG_NO_CODEOWNERS.format(path=co_path),
                                      Evidence(path=co_path, note="target branch", unavailable=True))
        unreadable = next((f for f in co.findings if f.code in ("binary", "encoding")), None)
        if unreadable is not None or (not co.rules and co.findings):
            # A file with no readable rule must not read as "nobody owns anything".
            finding = unreadable or co.findings[0]
            return CheckResult.failed(MSG_UNREADABLE_CODEOWNERS.format(finding=finding),
                                      Evidence(path=co_path, line=finding.line, unavailable=True))
        matches = {p: co.owners_of(p) for p in sorted(paths)}
        # A symbolic link the PR adds or re-points: the file read through it needs its owners too
        # (checks.two_readings), named as what it is, not as a changed file.
        for link, target in sorted(link_targets(ctx).items()):
            if target not in matches:
                matches[MSG_LINK_TARGET.format(target=target, link=link)] = co.owners_of(target)

        core = {t.lower() if t.startswith("@") else "@" + t.lower() for t in ctx.config.policy.core_teams}
        exemptions = _Exemptions(ctx.snapshot, core)
        self._ask_first_round(ctx.snapshot, co, matches, exemptions)
        needing = [p for p, m in matches.items() if m is not None and exemptions.needs_signoff(m.owners)]
        if not needing:
            return CheckResult.passed(MSG_NOT_REQUIRED.format(path=co.path), Evidence(path=co.path),
                                      required=False)

        signoff = ctx.snapshot.signoff
        if ctx.signoff_unreadable:
            return ctx.signoff_unreadable_result()
        if signoff is None:
            owners = sorted({o for p in needing for o in matches[p].owners})
            return CheckResult.failed(MSG_NO_SIGNOFF.format(owners=" ".join(owners)), Evidence(path=co.path))

        signer = signoff.author.lstrip("@")
        member = _Membership(ctx.snapshot, signer)
        out = self._resolve(matches, co, signer, member)
        evidence = [Evidence(path=co.path, line=r.line, note=f"{r.pattern} {' '.join(r.owners)}")
                    for r in sorted(out.rules.values(), key=lambda r: r.line)]
        evidence.append(Evidence(url=signoff.url or None, note=f"sign-off by {signer}"))

        if out.mismatch:
            path, rule = out.mismatch[0]
            more = f"; {len(out.mismatch) - 1} more changed {_plural(len(out.mismatch) - 1)} with other owners" \
                if len(out.mismatch) > 1 else ""
            for p, r in out.mismatch[1:]:
                evidence.insert(0, Evidence(path=co.path, line=r.line, note=f"owners of {p}"))
            return CheckResult.failed(
                MSG_MISMATCH.format(signer=signer, path=path, owners=" ".join(rule.owners), co=co.path,
                                    line=rule.line, more=more),
                *evidence,
            )
        reason = self._pass_reason(out, co, signer)
        if out.unverified:
            teams = sorted({t for _, _, ts, _ in out.unverified for t in ts})
            evidence.extend(Evidence(note=f"membership of @{t} not confirmed", unavailable=True) for t in teams)
            reason = " ".join(p for p in (reason if out.named or out.by_team or out.catch_all or out.unowned else "",
                                          self._unconfirmed_reason(out, co, signer)) if p)
        return CheckResult.passed(reason, *evidence, required=True)

    @staticmethod
    def _ask_first_round(snapshot, co, matches: dict, exemptions: "_Exemptions") -> None:
        """One round of reads for what the rules below will certainly ask first: the first user
        of each all-user line (an admin there exempts it) and the signer's membership in the
        first team of each line that does not name them."""
        signoff = snapshot.signoff
        signer = signoff.author.lstrip("@") if signoff is not None else None
        questions: dict[tuple, Any] = {}
        for m in matches.values():
            if m is None:
                continue
            user = exemptions.first_lookup(m.owners)
            if user:
                questions.setdefault(("user", user.lower()), lambda u=user: snapshot.user_access(u))
            if signer is None:
                continue
            if m.is_catch_all:
                teams = [] if signer.lower() in co.everyone_users() else sorted(co.everyone_teams())
            else:
                teams = [] if m.names_user(signer) else m.teams()
            if teams:
                questions.setdefault(("team", teams[0].lower()),
                                     lambda t=teams[0]: snapshot.is_team_member(t.lstrip("@"), signer))
        snapshot.ask_together(list(questions.values()))

    @staticmethod
    def _unconfirmed_reason(out: _Outcome, co, signer: str) -> str:
        specific = [(p, r, ts, why) for p, r, ts, why in out.unverified if not r.is_catch_all]
        catch_all = [(p, r, ts, why) for p, r, ts, why in out.unverified if r.is_catch_all]
        sentences = []
        if specific:
            path, rule, teams, why = specific[0]
            more = f"; likewise {len(specific) - 1} more changed {_plural(len(specific) - 1)}" if len(specific) > 1 else ""
            sentences.append(MSG_UNCONFIRMED.format(signer=signer, path=path, co=co.path, line=rule.line,
                                                    teams=" ".join("@" + t for t in teams), reason=why, more=more))
        if catch_all:
            paths = [p for p, _, _, _ in catch_all]
            _, rule, teams, why = catch_all[0]
            sentences.append(MSG_UNCONFIRMED_CATCH_ALL.format(
                paths=_list(paths), verb=plural(len(paths), "falls", "fall"), co=co.path, line=rule.line, signer=signer,
                teams=" ".join("@" + t for t in teams), reason=why))
        return " ".join(sentences) + " " + MSG_UNCONFIRMED_TAIL

    @staticmethod
    def _resolve(matches: dict, co, signer: str, member: _Membership) -> _Outcome:
        out = _Outcome()
        recognized: tuple[bool, str, list[str]] | None = None

        def recognize() -> tuple[bool, str, list[str]]:
            # (is an owner, unknown reason, unreadable teams) for "listed anywhere in the file".
            if signer.lower() in co.everyone_users():
                return True, "", []
            unknown: list[str] = []
            reason = ""
            for team in sorted(co.everyone_teams()):
                answer = member.of(team)
                if answer is True:
                    return True, "", []
                if isinstance(answer, str):
                    unknown.append(team)
                    reason = reason or answer
            via, unknown, reason = member.settled(unknown, reason)
            if via is not None:
                return True, "", []
            return False, reason, unknown

        for path, match in matches.items():
            if match is None:
                out.unowned.append(path)
                continue
            rule = match.rule
            out.rules[rule.line] = rule
            if match.is_catch_all:
                if recognized is None:
                    recognized = recognize()
                ok, reason, unknown = recognized
                if ok:
                    out.catch_all.append(path)
                elif unknown:
                    out.unverified.append((path, rule, unknown, reason))
                else:
                    out.mismatch.append((path, rule))
                continue
            if match.names_user(signer):
                out.named.append(path)
                continue
            unknown, reason, via = [], "", None
            for team in match.teams():
                answer = member.of(team)
                if answer is True:
                    via = team
                    break
                if isinstance(answer, str):
                    unknown.append(team)
                    reason = reason or answer
            if via is None and unknown:
                via, unknown, reason = member.settled(unknown, reason)
            if via is not None:
                out.by_team.setdefault(via, []).append(path)
            elif unknown:
                out.unverified.append((path, rule, unknown, reason))
            else:
                out.mismatch.append((path, rule))
        return out

    @staticmethod
    def _pass_reason(out: _Outcome, co, signer: str) -> str:
        parts: list[str] = []
        if out.named:
            parts.append(MSG_NAMED.format(signer=signer, paths=_list(out.named)))
        for team, paths in out.by_team.items():
            text = MSG_TEAM.format(team=team, paths=_list(paths))
            parts.append(text if parts else f"@{signer} is " + text)
        sentences = [join(parts, sep=" and ")] if parts else []
        if out.catch_all:
            rule_line = next(r.line for r in out.rules.values() if r.is_catch_all)
            n = len(out.catch_all)
            if n == 1:
                subject, verb, be = ("The other changed file" if parts else "The one changed file"), "falls", "is"
            else:
                subject, verb, be = (f"The other {n} changed files" if parts else f"All {n} changed files"), "fall", "are"
            text = MSG_CATCH_ALL.format(subject=subject, paths=_list(out.catch_all), verb=verb, be=be,
                                        co=co.path, line=rule_line)
            if not parts:
                how = "named in " + co.path if signer.lower() in co.everyone_users() else "through a team in " + co.path
                text = MSG_RECOGNIZED.format(signer=signer, how=how) + "; " + text[0].lower() + text[1:]
            sentences.append(text)
        if out.unowned:
            sentences.append(MSG_UNOWNED.format(n=len(out.unowned), files=_plural(len(out.unowned))))
        return ". ".join(sentences) + "."
