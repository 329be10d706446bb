"""The precision record of a PR: what its three texts say about component precisions, line by line.

The three texts are the PR body, the changelog entries the PR appends (their `description`
items) and the sign-off's Additional detail section. recipes.claims.extract_precision_claims
reads each (quoted `>` lines skipped); every claim keeps where it was written, cited as "PR body
line N", "<changelog path>:LINE" or "sign-off comment <link> line N" (the line in the comment).

Check 15 compares the three (`findings`): a change the sign-off records that the body or the
changelog omits or denies, and a body claim the changelog contradicts (or the other way round).
Check 13 cites the sign-off's part as its evidence of effective draft precision. The record is
read once per review (memoised) and never acts on the text it reads.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any

from checks.result import Evidence
from checks.text import join, truncate
from recipes.claims import (
    KIND_COUNT,
    KIND_NO_CHANGE,
    KIND_PRECISION,
    Claim,
    component_tokens,
    extract_claims,
    extract_precision_claims,
    head_claims,
    same_component,
)
from recipes.markdown import classify_lines

BODY, CHANGELOG, SIGNOFF = "body", "changelog", "signoff"
MEMO = "precision_record"
QUOTE_MAX = 110
# Words of a denial's scope that do not narrow it ("no precision change to the DSpark draft"
# denies every change the record is about).
_GENERIC_SCOPE = frozenset({"draft", "dspark", "mtp", "eagle", "eagle3", "nextn", "model", "head", "any", "all"})

MSG_CHANGE = "{name} {old} -> {new}"
MSG_SIGNOFF_CHANGE = "the sign-off records {change} ({ref}), which {problems}"
MSG_OMITS = "{text} omits{why}"
MSG_OMITS_COUNT = ' (it says "{quote}", {ref})'
MSG_OMITS_NAMES = " (it names only {names}, {ref})"
MSG_DENIES = '{ref} denies ("{quote}")'
MSG_SAYS_OTHER = "{text} says {change} ({ref})"
MSG_DENIED_BY = '{text} names {changes} ({ref}), but {other} says "{quote}"'
MSG_DISAGREE = "{text} says {change} ({ref}), but {other} says {other_change} ({other_ref})"
SOURCE_TEXT = {BODY: "the PR body", CHANGELOG: "the changelog entry", SIGNOFF: "the sign-off"}


@dataclass(frozen=True)
class Stated:
    """One claim of one of the three texts, with how to cite it."""

    claim: Claim
    source: str
    path: str | None = None  # the changelog's path
    url: str | None = None  # the PR (body) or the sign-off comment

    @property
    def line(self) -> int:
        return self.claim.line

    def ref(self) -> str:
        if self.source == CHANGELOG:
            return f"{self.path}:{self.line}"
        if self.source == SIGNOFF:
            return f"sign-off comment {self.url} line {self.line}" if self.url else f"sign-off comment line {self.line}"
        return f"PR body line {self.line}"

    def evidence(self) -> Evidence:
        if self.source == CHANGELOG:
            return Evidence(path=self.path, line=self.line)
        note = f"{'sign-off' if self.source == SIGNOFF else 'PR body'} line {self.line}"
        return Evidence(url=self.url or None, note=note)

    def change(self) -> str:
        return MSG_CHANGE.format(name=self.claim.name, old=self.claim.old, new=self.claim.value)

    def quote(self) -> str:
        text = self.claim.text
        if self.claim.kind == KIND_COUNT:
            text = re.split(r"[:;]", text, maxsplit=1)[0]  # "Two compute precisions change with the image bump"
        return truncate(text, QUOTE_MAX).rstrip(" .")

    def to_json(self) -> dict:
        c = self.claim
        out: dict[str, Any] = {"source": self.source, "kind": c.kind, "ref": self.ref(), "text": c.text}
        if c.kind == KIND_PRECISION:
            out.update(component=c.name, old=c.old, new=c.value)
        elif c.kind == KIND_COUNT:
            out.update(count=int(c.value or 0), of=c.name)
        else:
            out.update(scope=c.name)
        return out


@dataclass
class PrecisionRecord:
    body: list[Stated] = field(default_factory=list)
    changelog: list[Stated] = field(default_factory=list)
    signoff: list[Stated] = field(default_factory=list)
    has_changelog_entry: bool = False

    def all(self) -> list[Stated]:
        return [*self.body, *self.changelog, *self.signoff]

    def of(self, source: str) -> list[Stated]:
        return {BODY: self.body, CHANGELOG: self.changelog, SIGNOFF: self.signoff}[source]

    def changes(self, source: str) -> list[Stated]:
        return [s for s in self.of(source) if s.claim.kind == KIND_PRECISION and s.claim.old != s.claim.value]

    def precisions(self, source: str) -> list[Stated]:
        return [s for s in self.of(source) if s.claim.kind == KIND_PRECISION]

    def recorded_changes(self) -> list[Stated]:
        """The changes the sign-off records, each once (prose and a table row may both state it)."""
        out: list[Stated] = []
        for s in self.changes(SIGNOFF):
            if not any(_same_change(r, s) for r in out):
                out.append(s)
        return out

    def recorded_unchanged(self) -> list[Stated]:
        """The components the sign-off records as keeping their dtype."""
        return [s for s in self.precisions(SIGNOFF) if s.claim.old == s.claim.value]

    def to_json(self) -> list[dict]:
        return [s.to_json() for s in self.all()]

    # --- comparing the three texts ---------------------------------------------------------
    def _denial(self, source: str, component: str) -> Stated | None:
        """The first denial in `source` that covers `component`. A text that denies any change
        in general and still lists changes of its own is not read as denying (its scope is
        unclear)."""
        own = self.changes(source)
        for s in self.of(source):
            if s.claim.kind != KIND_NO_CHANGE:
                continue
            scope = component_tokens(s.claim.name or "") - _GENERIC_SCOPE
            if not scope:
                if not own:
                    return s
            elif scope & component_tokens(component):
                return s
        return None

    def _omission(self, source: str) -> str:
        counts = [s for s in self.of(source) if s.claim.kind == KIND_COUNT]
        if counts:
            return MSG_OMITS_COUNT.format(quote=counts[0].quote(), ref=counts[0].ref())
        named = self.changes(source)
        if named:
            return MSG_OMITS_NAMES.format(names=join(dict.fromkeys(s.claim.name for s in named)), ref=named[0].ref())
        return ""

    def _against(self, s: Stated, source: str) -> str | None:
        """What `source` does with the change `s` records: None when it states the same change."""
        same = [o for o in self.precisions(source) if same_component(o.claim.name or "", s.claim.name or "")]
        if any(o.claim.value == s.claim.value for o in same):
            return None
        if same:
            o = same[0]
            return MSG_SAYS_OTHER.format(text=SOURCE_TEXT[source], change=o.change(), ref=o.ref())
        denial = self._denial(source, s.claim.name or "")
        if denial is not None:
            return MSG_DENIES.format(ref=denial.ref(), quote=denial.quote())
        return MSG_OMITS.format(text=SOURCE_TEXT[source], why=self._omission(source))

    def findings(self) -> list[tuple[str, list[Evidence]]]:
        """Each disagreement, as (sentence, evidence of both sides)."""
        out: list[tuple[str, list[Evidence]]] = []
        compared = [BODY] + ([CHANGELOG] if self.has_changelog_entry else [])
        for s in self.recorded_changes():
            problems = [(src, p) for src in compared if (p := self._against(s, src)) is not None]
            if problems:
                evidence = [s.evidence()] + [e for src, _ in problems for e in self._cited(src, s)]
                out.append((MSG_SIGNOFF_CHANGE.format(change=s.change(), ref=s.ref(),
                                                      problems=join(p for _, p in problems)), evidence))
        if self.has_changelog_entry:
            out.extend(self._between(BODY, CHANGELOG))
            out.extend(self._between(CHANGELOG, BODY, denials_only=True))
        return out

    def _cited(self, source: str, s: Stated) -> list[Evidence]:
        """The evidence for what `source` says about the change `s`: its claim on that component,
        its denial, else its count or first precision claim (or nothing: an omission)."""
        same = [o for o in self.precisions(source) if same_component(o.claim.name or "", s.claim.name or "")]
        if same:
            return [same[0].evidence()]
        denial = self._denial(source, s.claim.name or "")
        if denial is not None:
            return [denial.evidence()]
        rest = [o for o in self.of(source) if o.claim.kind in (KIND_COUNT, KIND_PRECISION)]
        return [rest[0].evidence()] if rest else []

    def _between(self, a: str, b: str, denials_only: bool = False) -> list[tuple[str, list[Evidence]]]:
        """`a`'s changes that `b` denies (grouped by the denial) or states otherwise."""
        out: list[tuple[str, list[Evidence]]] = []
        denied: dict[Stated, list[Stated]] = {}
        for s in self.changes(a):
            same = [o for o in self.precisions(b) if same_component(o.claim.name or "", s.claim.name or "")]
            if same:
                o = same[0]
                if not denials_only and all(x.claim.value != s.claim.value for x in same):
                    out.append((MSG_DISAGREE.format(text=SOURCE_TEXT[a], change=s.change(), ref=s.ref(),
                                                    other=SOURCE_TEXT[b], other_change=o.change(), other_ref=o.ref()),
                                [s.evidence(), o.evidence()]))
                continue
            denial = self._denial(b, s.claim.name or "")
            if denial is not None:
                denied.setdefault(denial, []).append(s)
        for denial, changes in denied.items():
            refs = join(dict.fromkeys(c.ref() for c in changes))
            out.append((MSG_DENIED_BY.format(text=SOURCE_TEXT[a], changes=join(c.change() for c in changes), ref=refs,
                                             other=denial.ref(), quote=denial.quote()),
                        [*dict.fromkeys(c.evidence() for c in changes), denial.evidence()]))
        return out


def _same_change(a: Stated, b: Stated) -> bool:
    return (a.claim.old, a.claim.value) == (b.claim.old, b.claim.value) and \
        same_component(a.claim.name or "", b.claim.name or "")


def _visible(text: str) -> list[tuple[int, str]]:
    return [(n, line) for n, line, kind in classify_lines(text or "") if kind != "quote"]


def _signoff_lines(ctx) -> list[tuple[int, str]]:
    """The Additional detail section's lines, numbered as in the sign-off comment."""
    signoff, doc = ctx.snapshot.signoff, ctx.signoff_doc
    start = getattr(doc, "additional_detail_line", None) if doc is not None else None
    if signoff is None or not start:
        return []
    end = getattr(doc, "signed_line", None)
    return [(n, line) for n, line in _visible(signoff.body) if n > start and (end is None or end <= start or n < end)]


def _changelog_lines(ctx) -> tuple[str | None, list[tuple[int, str]], bool]:
    path, diff = ctx.changelog_diff
    if diff is None or not diff.added:
        return path, [], False
    lines: list[tuple[int, str]] = []
    for entry in diff.added:
        for i, item in enumerate(entry.description):
            line = entry.description_lines[i] if i < len(entry.description_lines) else entry.line_of("description")
            lines.append((line, item))
    return path, lines, True


def text_claims(ctx) -> list[tuple[str, Claim, Evidence]]:
    """The value, point, image, flag and AL claims (recipes.claims.extract_claims) of the
    changelog entries the PR appends and of the sign-off's Additional detail section, each
    with its source, its `where` set to its file:line or sign-off line, and its evidence. The
    PR body's own claims are read by Check 15 directly."""
    def compute() -> list[tuple[str, Claim, Evidence]]:
        snap = ctx.snapshot
        path, changelog, _ = _changelog_lines(ctx)
        signoff_url = snap.signoff.url if snap.signoff is not None else None
        out: list[tuple[str, Claim, Evidence]] = []
        for source, lines in ((CHANGELOG, changelog), (SIGNOFF, _signoff_lines(ctx))):
            if not lines:
                continue
            text = "\n".join(line.replace("\n", " ") for _, line in lines)
            for c in head_claims(extract_claims(text)):
                n = lines[c.line - 1][0]
                stated = Stated(c, source, path=path, url=signoff_url or None)
                where = f"{path}:{n}" if source == CHANGELOG else f"sign-off line {n}"
                out.append((source, replace(c, line=n, where=where), replace(stated, claim=replace(c, line=n)).evidence()))
        return out
    return ctx.memo(MEMO + ":values", compute)


def precision_record(ctx) -> PrecisionRecord:
    """The PR's precision record (memoised per review)."""
    def compute() -> PrecisionRecord:
        snap = ctx.snapshot
        body_url = snap.html_url or None
        signoff_url = snap.signoff.url if snap.signoff is not None else None
        path, changelog, has_entry = _changelog_lines(ctx)
        return PrecisionRecord(
            body=[Stated(c, BODY, url=body_url) for c in extract_precision_claims(_visible(snap.body or ""))],
            changelog=[Stated(c, CHANGELOG, path=path) for c in extract_precision_claims(changelog)],
            signoff=[Stated(c, SIGNOFF, url=signoff_url or None) for c in extract_precision_claims(_signoff_lines(ctx))],
            has_changelog_entry=has_entry,
        )
    return ctx.memo(MEMO, compute)
