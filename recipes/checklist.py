"""The review checklist template and a sign-off body: items, matching and explanations (spec 8).

Checked state. A raw body (what the GitHub API returns) carries `- [x]` / `- [ ]`; a plain
`- text` bullet without a box is unchecked, because nothing was ticked. A copy of the
*rendered* comment (`•` bullets, as in the seed thread) has lost the boxes and cannot show
their state; such bullets are read as checked (the seed verdict did the same) but flagged
`rendered=True`, so a check can say its evidence is a rendered copy, not the raw body.

Matching. Wording drifts between template versions, so items match by token-set
similarity: both texts are reduced to lower-case word tokens after removing Markdown links'
URLs, bare URLs, code ticks and emphasis, then scored with the Dice coefficient
2|A∩B|/(|A|+|B|). Pairs at or above MATCH_THRESHOLD (0.6) are assigned one-to-one, best
score first. The tests pin the numbers on the real template: the seed sign-off scores
>= 0.98 on every item; edits of a few words stay >= 0.75; unrelated items score <= 0.37;
a rewrite that changes an item's scope (single-node-only wording of the upstream-recipe
item) scores about 0.49 and does not match. Two pairs of distinct items are near-twins
(PR validation vs evals: 0.82; the two "vLLM/SGLang first class" items: 0.87), so no
threshold could tell them apart; the one-to-one assignment does, because each sign-off item
goes to its best template item first and cannot then cover a missing neighbour.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .errors import Finding
from .markdown import classify_lines, find_section

SIGNOFF_PHRASE = "As a PR reviewer and CODEOWNER"
ADDITIONAL_DETAIL_TITLE = r"^additional details?(?: section)?\b"
SIGNED_PLACEHOLDER = "FILL_IN_GITHUB_USERNAME"
DETAIL_PLACEHOLDER = "insert any additional info here"
MATCH_THRESHOLD = 0.6

_BOX_ITEM = re.compile(r"^(\s*)[-*+]\s+\[([ xX])\]\s?(.*)$")
_RENDERED_ITEM = re.compile(r"^(\s*)[•◦▪‣∙●○]\s*(.*)$")
_PLAIN_ITEM = re.compile(r"^(\s*)[-*+]\s+(.*)$")
_SIGNED = re.compile(r"^\s*(?:\*\*|__)?Signed(?:\*\*|__)?\s*:\s*(?:\*\*|__)?\s*(.*?)\s*$", re.IGNORECASE)
_MD_LINK = re.compile(r"\[([^\[\]]*)\]\([^)]*\)")  # no `[` in the text: linear on `[[[...`
_URL = re.compile(r"https?://\S+")
_TOKEN = re.compile(r"[a-z0-9]+")
_FENCE = re.compile(r"^\s*(```|~~~)")
_LOGIN = re.compile(r"@?([A-Za-z0-9](?:[A-Za-z0-9-]{0,38}))")
# Words that say nothing about which item an explanation is about.
_GENERIC = frozenset(
    "a an and any are as at be been by can cannot do does for from has have i if in is it its "
    "made make my no not of on or our over that the their them then there these this those to "
    "under was we were what when where which while who will with within without you your "
    "verified verify pr prs submission respective company claims claim".split()
)
_CUES = re.compile(
    r"\b(n/?a|not applicable|does(?:n'?t| not) apply|cannot|can'?t|could not|unable|because|"
    r"since|exception|waiver|unchecked|not checked|left unchecked|skipped|no (?:curve|upstream|waiver)|"
    r"pending|not yet|instead)\b",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class ChecklistItem:
    text: str
    checked: bool
    depth: int
    line: int
    key: str
    number: int = 0  # 1-based position among the items
    rendered: bool = False


@dataclass
class ChecklistTemplate:
    path: str
    items: list[ChecklistItem] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    line: int | None = None


@dataclass
class SignoffDoc:
    items: list[ChecklistItem] = field(default_factory=list)
    additional_detail: str = ""
    additional_detail_line: int | None = None
    signed: str | None = None
    has_phrase: bool = False
    phrase_line: int | None = None
    signed_line: int | None = None


@dataclass(frozen=True)
class ItemMatch:
    template_item: ChecklistItem
    signoff_item: ChecklistItem | None
    checked: bool
    similarity: float


def normalize(text: str) -> str:
    """The matching key: lower-case word tokens with link targets, URLs and markup removed."""
    text = _MD_LINK.sub(r"\1", text)
    text = _URL.sub(" ", text)
    return " ".join(_TOKEN.findall(text.lower()))


def similarity(a: str, b: str) -> float:
    """Dice coefficient of the token sets of two normalised keys."""
    sa, sb = set(a.split()), set(b.split())
    if not sa or not sb:
        return 0.0
    return 2 * len(sa & sb) / (len(sa) + len(sb))


def _item_lines(lines: list[tuple[int, str]]) -> list[ChecklistItem]:
    """Checklist items of a run of lines; wrapped continuation lines join their item."""
    items: list[dict] = []
    indents: list[int] = []
    prev_blank = True
    for n, line in lines:
        if not line.strip():
            prev_blank = True
            continue
        m = _BOX_ITEM.match(line)
        rendered = False
        if m:
            indent, checked, text = len(m.group(1).expandtabs(4)), m.group(2) in "xX", m.group(3)
        elif (m := _RENDERED_ITEM.match(line)):
            indent, checked, text, rendered = len(m.group(1).expandtabs(4)), True, m.group(2), True
        elif (m := _PLAIN_ITEM.match(line)):
            indent, checked, text = len(m.group(1).expandtabs(4)), False, m.group(2)
        else:
            if items and not prev_blank:
                items[-1]["text"] += " " + line.strip()
            prev_blank = False
            continue
        while indents and indents[-1] > indent:
            indents.pop()
        if not indents or indents[-1] < indent:
            indents.append(indent)
        depth = len(indents) - 1
        items.append(dict(text=text.strip(), checked=checked, depth=depth, line=n, rendered=rendered))
        prev_blank = False
    return [
        ChecklistItem(text=i["text"], checked=i["checked"], depth=i["depth"], line=i["line"],
                      key=normalize(i["text"]), number=k, rendered=i["rendered"])
        for k, i in enumerate(items, start=1)
    ]


def parse_template(md: str, path: str) -> ChecklistTemplate:
    """Items of the template: the fenced block whose first line starts with the sign-off phrase."""
    tpl = ChecklistTemplate(path=path)
    lines = md.replace("\r\n", "\n").split("\n")
    start = end = None
    in_fence = False
    for idx, line in enumerate(lines):
        if _FENCE.match(line):
            if not in_fence:
                in_fence = True
                nxt = next((j for j in range(idx + 1, len(lines)) if lines[j].strip()), None)
                if nxt is not None and lines[nxt].strip().startswith(SIGNOFF_PHRASE):
                    start = nxt
            else:
                in_fence = False
                if start is not None and end is None and idx > start:
                    end = idx
                    break
    if start is None:
        # An unfenced template still counts, but say so: the published one is fenced.
        start = next((i for i, l in enumerate(lines) if l.strip().startswith(SIGNOFF_PHRASE)), None)
        if start is None:
            tpl.findings.append(Finding(path=path, code="checklist-template",
                                        message=f"no template starting with {SIGNOFF_PHRASE!r} found"))
            return tpl
        tpl.findings.append(Finding(path=path, line=start + 1, code="checklist-template", severity="warning",
                                    message="the checklist template is not in a fenced code block"))
    if end is None:
        end = len(lines)
    tpl.line = start + 1
    region: list[tuple[int, str]] = []
    for idx in range(start + 1, end):
        if re.match(r"^\s*#{1,6}\s", lines[idx]) or _SIGNED.match(lines[idx]):
            break
        region.append((idx + 1, lines[idx]))
    tpl.items = [i for i in _item_lines(region) if not i.rendered]
    if not tpl.items:
        tpl.findings.append(Finding(path=path, line=start + 1, code="checklist-template",
                                    message="the checklist template has no `- [ ]` items"))
    return tpl


def parse_signoff(body: str) -> SignoffDoc:
    """Read a sign-off comment. Quoted lines (`>`) are ignored: quoting someone else's
    checklist is not signing it. Code blocks are kept, since a pasted template stays legible."""
    doc = SignoffDoc()
    visible = [(n, line) for n, line, kind in classify_lines(body) if kind != "quote"]
    phrase_idx = next((k for k, (_, line) in enumerate(visible) if SIGNOFF_PHRASE in line), None)
    if phrase_idx is None:
        return doc
    doc.has_phrase = True
    doc.phrase_line = visible[phrase_idx][0]
    kept_text = "\n".join(line if kind != "quote" else "" for _, line, kind in classify_lines(body))
    section = find_section(kept_text, ADDITIONAL_DETAIL_TITLE)
    signed_lines = [(n, m.group(1)) for n, line in visible if (m := _SIGNED.match(line))]
    ends = (section.line if section else None, signed_lines[-1][0] if signed_lines else None)
    stop = min([x for x in ends if x and x > doc.phrase_line] or [visible[-1][0] + 1])
    region = [(n, line) for n, line in visible[phrase_idx + 1:] if n < stop and not _FENCE.match(line)]
    doc.items = _item_lines(region)
    if section is not None and section.line > doc.phrase_line:
        detail_lines = section.text.split("\n")
        if signed_lines:
            cut = signed_lines[-1][0] - section.body_line
            if 0 <= cut < len(detail_lines):
                detail_lines = detail_lines[:cut]
        doc.additional_detail = "\n".join(detail_lines).strip("\n")
        doc.additional_detail_line = section.line
    if signed_lines:
        n, value = signed_lines[-1]
        doc.signed_line = n
        m = _LOGIN.match(value.strip().strip("`*_ ").strip())
        login = m.group(1) if m else None
        doc.signed = None if not login or login == SIGNED_PLACEHOLDER or SIGNED_PLACEHOLDER in value else login
    return doc


def match_checklist(template: ChecklistTemplate, signoff: SignoffDoc) -> list[ItemMatch]:
    """Pair each template item with its sign-off item (one-to-one, best similarity first).
    Unpaired template items come back with `signoff_item=None` and `checked=False`."""
    pairs = []
    for ti, t in enumerate(template.items):
        for si, s in enumerate(signoff.items):
            score = similarity(t.key, s.key)
            if score >= MATCH_THRESHOLD:
                pairs.append((score, ti, si))
    pairs.sort(key=lambda p: (-p[0], p[1], p[2]))
    used_t: dict[int, tuple[int, float]] = {}
    used_s: set[int] = set()
    for score, ti, si in pairs:
        if ti in used_t or si in used_s:
            continue
        used_t[ti] = (si, score)
        used_s.add(si)
    out = []
    for ti, t in enumerate(template.items):
        if ti in used_t:
            si, score = used_t[ti]
            s = signoff.items[si]
            out.append(ItemMatch(t, s, s.checked, round(score, 4)))
        else:
            best = max((similarity(t.key, s.key) for s in signoff.items), default=0.0)
            out.append(ItemMatch(t, None, False, round(best, 4)))
    return out


def _distinctive(key: str) -> set[str]:
    return {w for w in key.split() if w not in _GENERIC and len(w) > 2}


def unchecked_explained(item: ChecklistItem, additional_detail: str) -> bool:
    """Whether the additional detail section explains why `item` is not checked: some line or
    paragraph cites it by number ("item 12") or shares at least two distinctive words with it
    and reads as an explanation (N/A, cannot, because, exception, waiver, ...)."""
    if not additional_detail.strip():
        return False
    words = _distinctive(item.key)
    chunks: list[str] = []
    cur: list[str] = []
    for line in additional_detail.split("\n"):
        if not line.strip() or re.match(r"^\s*([-*+•]|\d+[.)])\s", line):
            if cur:
                chunks.append(" ".join(cur))
            cur = [line] if line.strip() else []
        else:
            cur.append(line)
    if cur:
        chunks.append(" ".join(cur))
    for chunk in chunks:
        if DETAIL_PLACEHOLDER in chunk.lower() and len(normalize(chunk).split()) <= 6:
            continue
        if item.number and re.search(rf"(?:\bitem|\bno\.?|#)\s*{item.number}\b", chunk, re.IGNORECASE):
            return True
        overlap = words & set(normalize(chunk).split())
        if len(overlap) >= 2 and _CUES.search(chunk):
            return True
    return False
