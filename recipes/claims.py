"""Explicit technical claims in a PR description: images, points per TP, settings, flags, AL values.

The extractor is pure and lenient: it reads untrusted Markdown and returns what the text
asserts, never acting on it. Claims inside code blocks count (a pasted command still states
what the PR runs). What a claim says about a *previous* state is marked `before=True`:

- `X → Y`, `X -> Y`, `X => Y`: everything left of the arrow (within the same clause) is the
  old state; only the right side is a claim about the head;
- `from X to Y`: X is the old state.

Spec 12 (Check 15): compare explicit claims with the code at the assessed SHA.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Literal

ClaimKind = Literal["image", "points", "range", "setting", "flag", "al"]

KIND_IMAGE: ClaimKind = "image"
KIND_POINTS: ClaimKind = "points"
KIND_RANGE: ClaimKind = "range"
KIND_SETTING: ClaimKind = "setting"
KIND_FLAG: ClaimKind = "flag"
KIND_AL: ClaimKind = "al"

# Fragments that mark a file path rather than an image tag (`recipe.yaml:override_x`).
_FILE_SUFFIXES = (".yaml", ".yml", ".py", ".sh", ".md", ".json", ".txt", ".j2", ".cjs", ".js")
# Words that follow a flag in prose ("--online_quant_config is not passed"); never a value.
_PROSE_WORDS = frozenset({
    "is", "was", "are", "were", "be", "and", "or", "to", "the", "a", "an", "with", "in", "of",
    "for", "flag", "flags", "option", "not", "no", "from", "as", "which", "that", "set", "sets",
    "now", "still", "also", "only", "here", "there", "it", "this", "so", "but", "by", "on",
})

# A bare value ends at whitespace, list/clause punctuation, a quote, or CJK punctuation
# (bilingual bodies write `=16。` with no space).
_STOP = "\\s,;)`'\"\u3000-\u303f\uff00-\uffef"
_BARE = rf"[^{_STOP}]+"
# The arrow alone: a leading `\s*` made each blank of a long run start a try that read the whole
# run (quadratic); the blanks before an arrow are stepped over by `_before_spans`.
_ARROW_RE = re.compile(r"(?:→|->|=>|⟶)")
_FENCE_RE = re.compile(r"^\s*(```|~~~)")
_SENTENCE_RE = re.compile(r"(?<=[.;!?])\s+(?=[A-Z`*(\[-])")
_INLINE_CODE_RE = re.compile(r"`([^`\n]+)`")

_IMAGE_RE = re.compile(
    r"(?<![\w/.:@#-])"
    r"(?P<repo>[A-Za-z0-9][\w.-]*(?:[/#][\w.-]+)+?)"
    r"(?::(?P<tag>\w[\w.-]{0,127}))?"
    r"(?:@(?P<digest>sha256:[0-9a-f]{64}))?"
    r"(?![\w/@#-])"
)
_DIGEST_RE = re.compile(r"(?<![\w@:])(sha256:[0-9a-f]{64})\b")
_POINTS_RE = re.compile(r"\bTP\s?(\d+)\s*[:=]?\s*\[([\d,\s]+)\]")
_RANGE_RE = re.compile(
    r"\bTP\s?(\d+)\b[^\n.;\[\]]{0,30}?\b(?:concurrenc(?:y|ies)|conc|c)\s*(\d+)\s*(?:-|–|—|to|\.\.)\s*(\d+)\b"
)
_SCOPED_RE = re.compile(r"\bTP\s?(\d+)\s+c(?:onc)?\s?(\d+)\s*(?:=|:)\s*(?P<value>'[^']*'|\"[^\"]*\"|[\w.+-]+)")
_SCOPE_ONLY_RE = re.compile(r"\bTP\s?(\d+)\s+c(?:onc)?\s?(\d+)\b")
_ENV_NAME = r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
_ENV_MENTION_RE = re.compile(rf"(?<![\w-])({_ENV_NAME})\b")
_SETTING_RE = re.compile(rf"(?<![\w-])(?P<name>{_ENV_NAME})\s?=\s?(?P<value>'[^']*'|\"[^\"]*\"|{_BARE})")
_FLAG_RE = re.compile(
    rf"(?<![\w-])--(?P<name>[A-Za-z][\w-]*)(?:=|[ \t]+)(?P<value>'[^']*'|\"[^\"]*\"|{_BARE})"
)
_FLAG_MENTION_RE = re.compile(r"(?<![\w-])--([A-Za-z][\w-]*)")
_KEY_VALUE_RE = re.compile(rf"(?<![\w-])(?P<name>[a-z][a-z0-9]*(?:[-_][a-z0-9]+)+):\s+(?P<value>'[^']*'|\"[^\"]*\"|{_BARE})")
_AL_RE = re.compile(
    r"(?:acceptance[- _]length|\bAL\b)(?:\s+(?:of|is|value))?\s*[=:]?\s*(?P<value>\d+(?:\.\d+)?)\b(?!\.\d)"
)
_AL_FLAG_MARK = "acceptance-length"
# Where the old side of `X → Y` can start at the earliest: a clause break or a conjunction.
_CLAUSE_BREAKS = (". ", "; ", ": ", ", ", "(", "- ", " and ", " to ", " with ", " then ")
_FROM_TO_RE = re.compile(r"\bfrom\s+(\S+)\s+to\s+", re.IGNORECASE)


@dataclass(frozen=True)
class Claim:
    """One assertion of the PR body, with where it was written (1-based body line)."""

    kind: ClaimKind
    text: str  # the snippet as written, for quoting
    line: int
    context: str  # the whole body line, for scoping by config key
    name: str | None = None  # env var or flag name (flags without leading dashes)
    value: str | None = None
    tp: int | None = None
    conc: int | None = None
    concs: tuple[int, ...] = ()
    conc_range: tuple[int, int] | None = None
    image: str | None = None
    before: bool = False


def clean_value(value: str) -> str:
    """A value as written, without surrounding quotes/backticks or a sentence's final dot."""
    v = value.strip().strip("`")
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    return v.rstrip(".:")


def normalize_value(value: object) -> str:
    """A comparable form: JSON re-serialised, numbers canonical, booleans and words lower-case."""
    if isinstance(value, bool):
        return "true" if value else "false"
    text = clean_value(str(value)) if isinstance(value, str) else str(value)
    if text[:1] in "{[":
        try:
            return json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
        except ValueError:
            pass
    try:
        number = float(text)
    except ValueError:
        return text.lower()
    return repr(int(number)) if number.is_integer() else repr(number)


def values_equal(a: object, b: object) -> bool:
    return normalize_value(a) == normalize_value(b)


def _before_spans(line: str) -> list[tuple[int, int]]:
    """Character spans of a line that describe an old state (left of an arrow, `from X`)."""
    spans = []
    start, searched, done = -1, 0, 0  # the last clause break before `searched`; end of the last arrow
    for m in _ARROW_RE.finditer(line):
        at = m.start()
        while at > done and line[at - 1].isspace():
            at -= 1  # the blanks before the arrow are part of it
        # The old side starts after the last clause break before the arrow (each part of the
        # line is searched once: a break found before an earlier arrow stays the last one).
        start = max([start] + [line.rfind(sep, max(0, searched - len(sep)), at) for sep in _CLAUSE_BREAKS])
        searched, done = at, m.end()
        while done < len(line) and line[done].isspace():
            done += 1  # and the blanks after it
        spans.append((max(start, 0), at))
    for m in _FROM_TO_RE.finditer(line):
        spans.append((m.start(1), m.end(1)))
    return spans


def _in(spans: list[tuple[int, int]], start: int, end: int) -> bool:
    return any(s <= start and end <= e for s, e in spans)


def _image_claims(line: str, lineno: int, before: list[tuple[int, int]]) -> list[Claim]:
    out: list[Claim] = []
    for m in _IMAGE_RE.finditer(line):
        repo, tag, digest = m.group("repo"), m.group("tag"), m.group("digest")
        if not (tag or digest) or "/" not in repo and "#" not in repo:
            continue
        if repo.lower().endswith(_FILE_SUFFIXES) or any(s + "/" in repo.lower() for s in _FILE_SUFFIXES):
            continue
        if m.start() >= 3 and line[m.start() - 3:m.start()] == "://":
            continue
        text = m.group(0).rstrip(".-")
        image = text
        if not digest:
            # `Pin: repo:tag, digest sha256:...` pins the image named just before it.
            d = _DIGEST_RE.search(line, m.end())
            nxt = _IMAGE_RE.search(line, m.end())
            if d and (nxt is None or nxt.start() > d.start() or nxt.group(0) == d.group(1)):
                if not _ARROW_RE.search(line[m.end():d.start()]):
                    image = f"{image}@{d.group(1)}"
        out.append(Claim(KIND_IMAGE, text, lineno, line, image=image, before=_in(before, m.start(), m.end())))
    return out


def _ints(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in re.findall(r"\d+", text))


def _sentences(line: str) -> list[tuple[int, str]]:
    """(offset, text) of each sentence of a line."""
    out = []
    pos = 0
    for part in _SENTENCE_RE.split(line):
        start = line.find(part, pos)
        out.append((start, part))
        pos = start + len(part)
    return out


def _line_claims(line: str, lineno: int, in_code: bool) -> list[Claim]:
    before = _before_spans(line)
    out = _image_claims(line, lineno, before)
    taken: list[tuple[int, int]] = []  # spans already claimed by a more specific pattern

    for m in _POINTS_RE.finditer(line):
        out.append(Claim(KIND_POINTS, m.group(0), lineno, line, tp=int(m.group(1)), concs=_ints(m.group(2)),
                         before=_in(before, m.start(), m.end())))
    for m in _RANGE_RE.finditer(line):
        lo, hi = int(m.group(2)), int(m.group(3))
        if lo < hi:
            out.append(Claim(KIND_RANGE, m.group(0), lineno, line, tp=int(m.group(1)), conc_range=(lo, hi),
                             before=_in(before, m.start(), m.end())))

    for offset, sentence in _sentences(line):
        # `NAME ... TP4 c32 = 16, TP2 c64 = 4`: each scoped value belongs to the last name
        # mentioned before it.
        for m in _SCOPED_RE.finditer(sentence):
            mentions = [n for n in _ENV_MENTION_RE.finditer(sentence, 0, m.start())]
            flags = [f for f in _FLAG_MENTION_RE.finditer(sentence, 0, m.start())]
            last = max(mentions + flags, key=lambda x: x.start(), default=None)
            if last is None:
                continue
            name = last.group(1)
            kind = KIND_SETTING if last in mentions else KIND_FLAG
            s, e = offset + m.start(), offset + m.end()
            taken.append((s, e))
            out.append(Claim(kind, m.group(0), lineno, line, name=name, value=clean_value(m.group("value")),
                             tp=int(m.group(1)), conc=int(m.group(2)), before=_in(before, s, e)))
        scopes = [s for s in _SCOPE_ONLY_RE.finditer(sentence)
                  if not any(a <= offset + s.start() < b for a, b in taken)]
        scope = (int(scopes[0].group(1)), int(scopes[0].group(2))) if len(scopes) == 1 else (None, None)
        for m in _SETTING_RE.finditer(sentence):
            s, e = offset + m.start(), offset + m.end()
            out.append(Claim(KIND_SETTING, m.group(0), lineno, line, name=m.group("name"),
                             value=clean_value(m.group("value")), tp=scope[0], conc=scope[1],
                             before=_in(before, s, e)))
        for m in _FLAG_RE.finditer(sentence):
            value = clean_value(m.group("value"))
            if not value or value.startswith("-") or value.lower() in _PROSE_WORDS:
                continue
            s, e = offset + m.start(), offset + m.end()
            name = m.group("name")
            if _AL_FLAG_MARK in name.lower():
                out.append(Claim(KIND_AL, m.group(0), lineno, line, name=name, value=value, before=_in(before, s, e)))
                continue
            out.append(Claim(KIND_FLAG, m.group(0), lineno, line, name=name, value=value,
                             tp=scope[0], conc=scope[1], before=_in(before, s, e)))

    # `key: value` reads as a setting only inside code (a pasted recipe), never in prose.
    code_spans = [(0, len(line))] if in_code else [(m.start(1), m.end(1)) for m in _INLINE_CODE_RE.finditer(line)]
    for start, end in code_spans:
        for m in _KEY_VALUE_RE.finditer(line, start, end):
            value = clean_value(m.group("value"))
            if value and value.lower() not in _PROSE_WORDS:
                out.append(Claim(KIND_FLAG, m.group(0), lineno, line, name=m.group("name"), value=value,
                                 before=_in(before, m.start(), m.end())))

    for m in _AL_RE.finditer(line):
        out.append(Claim(KIND_AL, m.group(0), lineno, line, value=m.group("value"),
                         before=_in(before, m.start(), m.end())))
    return out


def extract_claims(body: str | None) -> list[Claim]:
    """Every claim of a PR body, in body order, duplicates (same kind, line and value) once."""
    if not body:
        return []
    out: list[Claim] = []
    seen: set[tuple] = set()
    in_code = False
    for lineno, raw in enumerate(str(body).splitlines(), start=1):
        if _FENCE_RE.match(raw):
            in_code = not in_code
            continue
        for claim in _line_claims(raw, lineno, in_code):
            name = None if claim.kind == KIND_AL else claim.name  # `--x-acceptance-length 3.51` once
            key = (claim.kind, claim.line, name, normalize_value(claim.value or ""), claim.tp, claim.conc,
                   claim.concs, claim.conc_range, claim.image)
            if key in seen:
                continue
            seen.add(key)
            out.append(replace(claim, text=claim.text.rstrip(" .,;:")))
    return out


def head_claims(claims: list[Claim]) -> list[Claim]:
    """Only the claims about the head (old-state sides of `X → Y` dropped)."""
    return [c for c in claims if not c.before]
