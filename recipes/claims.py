"""Explicit technical claims in a PR description: images, points per TP, settings, flags, AL values.

The extractor is pure and lenient: it reads untrusted Markdown and returns what the text
asserts, never acting on it. Claims inside code blocks count (a pasted command still states
what the PR runs). What a claim says about a *previous* state is marked `before=True`:

- `X → Y`, `X -> Y`, `X => Y`: everything left of the arrow (within the same clause) is the
  old state; only the right side is a claim about the head;
- `from X to Y`: X is the old state.

Precision claims (`extract_precision_claims`) read any of the three texts Check 15 compares
(the PR body, the changelog entry, the sign-off's Additional detail section), line by line:

- a component's dtype before and after: `X: A -> B`, `X A → B`, `X moves/goes/changes from A
  to B`, and Markdown (or box-drawn) table rows whose header names an old and a new column
  (`| Weight | Old pin | New pin | Changed? |`); a row whose new cell says "same dtype" or whose
  changed-column says "no"/"layout only" records the component as unchanged;
- a denial: "no precision change", "no data-type or precision change to the draft", "dtype
  is unchanged" (a denial written inside quotes is someone else's text and is not read);
- a count: "only one weight changes", "Two compute precisions change".

A and B must both be dtype words (FP8, MXFP4, BF16, e4m3, ...), so an image bump `X → Y` is
never a precision claim. Nothing in the text is acted upon.

Spec 12 (Check 15): compare explicit claims with the code at the assessed SHA.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, replace
from typing import Literal

ClaimKind = Literal["image", "points", "range", "setting", "flag", "al", "precision", "no-precision-change", "change-count"]

KIND_IMAGE: ClaimKind = "image"
KIND_POINTS: ClaimKind = "points"
KIND_RANGE: ClaimKind = "range"
KIND_SETTING: ClaimKind = "setting"
KIND_FLAG: ClaimKind = "flag"
KIND_AL: ClaimKind = "al"
# Precision claims (module docstring, "Precision claims"): one component's dtype before and after,
# a sentence denying any precision change, and a count of what changes.
KIND_PRECISION: ClaimKind = "precision"
KIND_NO_CHANGE: ClaimKind = "no-precision-change"
KIND_COUNT: ClaimKind = "change-count"

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
    old: str | None = None  # a precision claim's dtype before (`value` is the dtype after)
    where: str | None = None  # where a claim not from the PR body was written (`perf-changelog.yaml:45`)


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


# --- precision claims ------------------------------------------------------------------------
_DTYPE = r"(?:mx|nv)?fp(?:4|6|8|16|32)|bf16|bfloat16|float(?:16|32)|int(?:4|8)|e4m3|e5m2"
_DTYPE_RE = re.compile(rf"(?<![\w.])(?:{_DTYPE})(?![\w])", re.IGNORECASE)
_DTYPE_SPELLINGS = {"bfloat16": "bf16", "float32": "fp32", "float16": "fp16"}
_ARTICLE = r"(?:(?:a|an|the)\s+)?"
_NOUN = r"(?:\s+[A-Za-z]\w*(?=\s+(?:to|→|->|=>)\b|\s*(?:→|->|=>)))?"  # `from a BF16 GEMM to ...`
_PAREN = r"(?:\s*\([^)\n]{0,80}\))?"
_PREC_ARROW_RE = re.compile(
    rf"(?<![\w.])(?P<old>{_DTYPE})(?![\w]){_PAREN}\s*(?:→|->|=>|⟶)\s*{_ARTICLE}(?P<new>{_DTYPE})(?![\w])", re.IGNORECASE)
_PREC_FROM_RE = re.compile(
    rf"\bfrom\s+{_ARTICLE}(?P<old>{_DTYPE})(?![\w]){_NOUN}{_PAREN}\s+to\s+{_ARTICLE}(?P<new>{_DTYPE})(?![\w])",
    re.IGNORECASE)
_DENIAL_RE = re.compile(
    r"\bno\s+(?:[\w-]+\s+(?:or|and|/)\s+)?(?:data[- ]?types?|dtypes?|precisions?)\s+changes?\b"
    r"|\b(?:data[- ]?types?|dtypes?|precisions?)\s+(?:is|are|stays?|remains?)\s+(?:the\s+same|unchanged)\b"
    r"|\b(?:does|do)\s+not\s+change\s+(?:the\s+|any\s+)?(?:data[- ]?types?|dtypes?|precisions?)\b",
    re.IGNORECASE)
_NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
_COUNT_RE = re.compile(
    r"\b(?:only\s+)?(?P<n>one|two|three|four|five|six|\d+)\s+(?:draft\s+|compute\s+|\w+\s+)?"
    r"(?P<what>weights?|tensors?|precisions?|dtypes?)\s+changes?\b", re.IGNORECASE)
_QUOTED_RE = re.compile(r"\"[^\"\n]*\"|“[^”\n]*”|「[^」\n]*」")
_COMPONENT_BREAKS = (". ", "; ", ": ", ", ", "(", " and ", "•", "|", "│", "* ", "- ")
_LEADING_VERBS = re.compile(
    r"\s+(?:now\s+)?(?:moves?|moved|goes|went|changes?|changed|switch(?:es|ed)?|is|are|was|were|runs?|ran|"
    r"turns?|becomes?|became)(?:\s+(?:the\s+)?(?:its\s+)?(?:dtype|precision|data\s*type))?\s*$",
    re.IGNORECASE)
_COMPONENT_STOP = frozenset({
    "the", "a", "an", "its", "their", "of", "so", "now", "then", "also", "draft", "draft's", "drafts", "one",
    "change", "changes", "weight's", "with", "image", "bump", "new", "old", "pin", "at", "on", "in", "to", "from",
    "compute", "precision", "precisions", "dtype", "data", "type", "and", "or", "both", "which", "that", "this",
})
_MARKUP_RE = re.compile(r"`|\*\*|(?<!\w)__|__(?!\w)")
_BOX_RULE_RE = re.compile(r"[─━═┌┐└┘├┤┬┴┼╞╡╪ ]+")
_TABLE_SPLIT_RE = re.compile(r"\s*[|│┃]\s*")
_OLD_HEADER = re.compile(r"\b(old|before|previous|base|from)\b", re.IGNORECASE)
_NEW_HEADER = re.compile(r"\b(new|after|head|now|to)\b", re.IGNORECASE)
_CHANGED_HEADER = re.compile(r"\bchang", re.IGNORECASE)
_SAME_RE = re.compile(r"\b(same|unchanged)\b", re.IGNORECASE)
_NO_CHANGE_CELL = re.compile(r"^\s*(no|none|layout only|same|unchanged)\b", re.IGNORECASE)


def dtype_word(text: str) -> str:
    """A dtype as one spelling (`BF16`, `FP8`, `MXFP4`): `bfloat16` is BF16."""
    low = text.strip().lower()
    return _DTYPE_SPELLINGS.get(low, low).upper()


def component_tokens(text: str) -> frozenset[str]:
    """The words that name a component, for matching it across texts: lower case, plurals
    folded, stop words dropped; a dotted name (`attn.wo_a`) also gives its last part."""
    out: set[str] = set()
    for word in re.findall(r"[A-Za-z0-9_.]+", text.lower().replace("-", " ").replace("/", " ")):
        word = word.strip(".")
        if not word or word in _COMPONENT_STOP or _DTYPE_RE.fullmatch(word):
            continue
        if "." in word:
            out.add(word.rsplit(".", 1)[-1])
        elif len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.add(word)
    return frozenset(out)


def same_component(a: str, b: str) -> bool:
    """Whether two component names denote the same thing (one's words include the other's)."""
    ta, tb = component_tokens(a), component_tokens(b)
    return bool(ta and tb) and (ta <= tb or tb <= ta)


def _component_before(line: str, start: int) -> str:
    left = line[:start].rstrip(" :\t")  # `X: A -> B`
    cut = max((left.rfind(sep) + len(sep) for sep in _COMPONENT_BREAKS if left.rfind(sep) >= 0), default=0)
    words = _LEADING_VERBS.sub("", left[cut:]).strip(" :-\t").split()
    while words and words[0].lower() in _COMPONENT_STOP:
        words.pop(0)
    text = " ".join(words)
    return text if component_tokens(text) else ""


def _quoted(line: str) -> list[tuple[int, int]]:
    return [(m.start(), m.end()) for m in _QUOTED_RE.finditer(line)]


def _table_cells(line: str) -> list[str] | None:
    stripped = line.strip()
    if not stripped or stripped[0] not in "|│┃":
        return None
    return [c.strip() for c in _TABLE_SPLIT_RE.split(stripped.strip("|│┃ "))]


def _table_claims(lines: list[tuple[int, str]]) -> list[Claim]:
    out: list[Claim] = []
    header: tuple[int, int, int | None] | None = None  # (old column, new column, changed column)
    for lineno, line in lines:
        cells = _table_cells(line)
        if cells is None:
            if not _BOX_RULE_RE.fullmatch(line.strip()):
                header = None  # a box-drawn rule line (`├───┼───┤`) stays inside the table
            continue
        if all(re.fullmatch(r"[:\-─━┼├┤┌┐└┘┬┴═ ]*", c) for c in cells):
            continue  # a rule line
        if header is None:
            old = next((i for i, c in enumerate(cells) if i and _OLD_HEADER.search(c)), None)
            new = next((i for i, c in enumerate(cells) if i and i != old and _NEW_HEADER.search(c)), None)
            changed = next((i for i, c in enumerate(cells) if i and _CHANGED_HEADER.search(c)), None)
            header = (old, new, changed) if old is not None and new is not None else (-1, -1, None)
            continue
        old_i, new_i, changed_i = header
        if old_i < 0 or max(old_i, new_i) >= len(cells):
            continue
        component = _MARKUP_RE.sub("", cells[0])
        old_m = _DTYPE_RE.search(cells[old_i])
        if not component_tokens(component) or old_m is None:
            continue
        new_m = _DTYPE_RE.search(cells[new_i])
        old = dtype_word(old_m.group(0))
        if new_m is None or _SAME_RE.search(cells[new_i]) and not cells[new_i].lower().startswith(new_m.group(0).lower()):
            new = old if _SAME_RE.search(cells[new_i]) else None
        else:
            new = dtype_word(new_m.group(0))
        if changed_i is not None and changed_i < len(cells) and _NO_CHANGE_CELL.match(cells[changed_i]):
            new = old
        if new is None:
            continue
        out.append(Claim(KIND_PRECISION, line.strip(), lineno, line, name=component, value=new, old=old))
    return out


def extract_precision_claims(lines: list[tuple[int, str]]) -> list[Claim]:
    """The precision claims of a text given as (line number, line), in text order (see the
    module docstring). A claim's `text` is its sentence for quoting."""
    out: list[Claim] = []
    seen: set[tuple] = set()
    for lineno, raw in lines:
        line = _MARKUP_RE.sub("", raw)
        if _table_cells(line) is not None:
            continue
        quoted = _quoted(line)
        found: list[tuple[int, Claim]] = []
        for rx in (_PREC_ARROW_RE, _PREC_FROM_RE):
            for m in rx.finditer(line):
                if _in(quoted, m.start(), m.end()):
                    continue
                component = _component_before(line, m.start())
                if not component:
                    continue
                found.append((m.start(), Claim(KIND_PRECISION, _sentence_at(line, m.start()), lineno, raw,
                                               name=component, value=dtype_word(m.group("new")),
                                               old=dtype_word(m.group("old")))))
        for m in _DENIAL_RE.finditer(line):
            if _in(quoted, m.start(), m.end()):
                continue
            found.append((m.start(), Claim(KIND_NO_CHANGE, _sentence_at(line, m.start()), lineno, raw,
                                           name=_scope_after(line, m.end()))))
        for m in _COUNT_RE.finditer(line):
            if _in(quoted, m.start(), m.end()):
                continue
            n = m.group("n").lower()
            value = str(_NUMBER_WORDS.get(n, n))
            found.append((m.start(), Claim(KIND_COUNT, _sentence_at(line, m.start()), lineno, raw,
                                           name=m.group("what").lower(), value=value)))
        for _, claim in sorted(found, key=lambda x: x[0]):
            key = (claim.kind, claim.line, claim.name, claim.old, claim.value)
            if key not in seen:
                seen.add(key)
                out.append(claim)
    for claim in _table_claims([(n, _MARKUP_RE.sub("", line)) for n, line in lines]):
        key = (claim.kind, claim.line, claim.name, claim.old, claim.value)
        if key not in seen:
            seen.add(key)
            out.append(claim)
    return out


def _sentence_at(line: str, pos: int) -> str:
    for offset, sentence in _sentences(line):
        if offset <= pos < offset + len(sentence):
            return sentence.strip().lstrip("-*•+ ").strip()
    return line.strip()


def _scope_after(line: str, end: int) -> str:
    """What a denial is about: the words after it up to the end of its clause (`to the DSpark draft`)."""
    rest = re.split(r"[.;:,()]", line[end:], maxsplit=1)[0]
    return rest.strip()
