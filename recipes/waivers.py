"""Engine-patch waivers `docs/waiver/<PR>.md`: the four parts a waiver must state (Check 10).

A part is found under a heading, or a labelled paragraph (`**Label:** text`, `Label: text`,
`- Label: text`), whose label is classified by its leading words, in this order:

- why:      starts with "why", "reason", "rationale", "justification", "motivation"
            ("Why the unmodified upstream image cannot run this benchmark")
- removal:  contains "removal", "remove", "retire", "exit plan", "sunset", "expiry"
            ("Removal plan", "Validation and removal")
- upstream: contains "upstream", "reference", "tracking", "link", "backport"
            ("Upstream PR / issue links", "Upstream references")
- what:     contains "what", "patch", "change", "scope", "summary"
            ("What is changed", "What is patched", "Exact patch and limits")

Upstream links are the http(s) URLs of the upstream part; without one, any URL in the
waiver that does not point at the benchmark repository itself counts. A removal plan may
also be a prose sentence that says to remove/retire/delete something once/when/after
something happens. A part whose text is empty or a placeholder (TBD, TODO, N/A) is missing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .markdown import heading_title, links

PART_WHAT = "what is patched"
PART_WHY = "why"
PART_UPSTREAM = "upstream link"
PART_REMOVAL = "removal plan"
REQUIRED_PARTS = (PART_WHAT, PART_WHY, PART_UPSTREAM, PART_REMOVAL)

_WHY = re.compile(r"^(why|reasons?|rationale|justification|motivation)\b")
_REMOVAL = re.compile(r"\b(removal|remove|retire|retirement|exit plan|sunset|expiry|expiration)\b")
_UPSTREAM = re.compile(r"\b(upstream|references?|tracking|links?|backport)\b")
_WHAT = re.compile(r"\b(what|patch(es|ed)?|changes?|changed|scope|summary)\b")
_LABEL = re.compile(
    r"^\s*(?:[-*+]\s+)?(?:\*\*|__)?([A-Za-z][A-Za-z0-9 /'’()&-]{1,80}?)\s*(?::\s*(?:\*\*|__)|(?:\*\*|__)\s*:|:)\s*(.*)$"
)
_PLACEHOLDER = re.compile(r"^(tbd|todo|n/?a|none|-+|\.\.\.|fill[ _]in.*)$", re.IGNORECASE)
# A sentence that says when the patch goes: a removal word, then a time word (`_prose_removal`;
# one regex `[^.]*\b(remove..)\b[^.]*\b(once..)\b[^.]*` took minutes on a long text without `.`).
_REMOVAL_WORD = re.compile(r"\b(remove|retire|delete|drop)\b", re.IGNORECASE)
_REMOVAL_TIME = re.compile(r"\b(once|when|after|until)\b", re.IGNORECASE)
_PR_NUMBER = re.compile(r"(\d+)\.md$")
# The benchmark repository's own links (runs, files) are evidence, not upstream references.
_OWN_REPO = re.compile(r"https?://github\.com/SemiAnalysisAI/InferenceX(?:[/#?]|$)", re.IGNORECASE)


@dataclass
class Waiver:
    path: str
    pr_number: int | None
    what: str = ""
    why: str = ""
    upstream_links: list[str] = field(default_factory=list)
    removal_plan: str = ""
    missing: list[str] = field(default_factory=list)
    part_lines: dict[str, int] = field(default_factory=dict)

    @property
    def is_complete(self) -> bool:
        return not self.missing



def _prose_removal(text: str) -> str | None:
    """The first sentence (text between periods, its period kept) holding a removal word and,
    after it, a time word ("remove this once upstream merges X."), stripped; None if none."""
    start = 0
    while start <= len(text):
        end = text.find(".", start)
        stop = len(text) if end < 0 else end
        word = _REMOVAL_WORD.search(text, start, stop)
        if word and _REMOVAL_TIME.search(text, word.end(), stop):
            return text[start:stop + (end >= 0)].strip()
        if end < 0:
            return None
        start = end + 1
    return None

def waiver_path(waiver_dir: str, pr_number: int) -> str:
    """Where the waiver for the PR that introduces a patch lives: `<waiver_dir>/<PR>.md`."""
    return f"{waiver_dir.rstrip('/')}/{int(pr_number)}.md"


def classify_label(label: str) -> str | None:
    """Which required part a heading or paragraph label names, or None."""
    s = " ".join(label.replace("*", "").replace("_", " ").strip().rstrip(":").lower().split())
    if _WHY.search(s):
        return PART_WHY
    if _REMOVAL.search(s):
        return PART_REMOVAL
    if _UPSTREAM.search(s):
        return PART_UPSTREAM
    if _WHAT.search(s):
        return PART_WHAT
    return None


def _is_filled(text: str) -> bool:
    body = " ".join(text.split()).strip()
    return bool(body) and not _PLACEHOLDER.match(body)


def parse_waiver(text: str, path: str) -> Waiver:
    """Read a waiver and list the required parts it does not state."""
    m = _PR_NUMBER.search(path.rsplit("/", 1)[-1])
    w = Waiver(path=path, pr_number=int(m.group(1)) if m else None)
    if "\0" in text:
        w.missing = list(REQUIRED_PARTS)
        return w
    parts: dict[str, list[str]] = {p: [] for p in REQUIRED_PARTS}
    current: str | None = None
    in_fence = False
    for n, line in enumerate(text.replace("\r\n", "\n").split("\n"), start=1):
        if line.lstrip().startswith(("```", "~~~")):
            in_fence = not in_fence
        if not in_fence:
            head = heading_title(line)
            if head is not None and head[0] <= 6:
                current = classify_label(head[1])
                if current:
                    w.part_lines.setdefault(current, n)
                continue
            lab = _LABEL.match(line)
            if lab:
                part = classify_label(lab.group(1))
                if part:
                    current = part
                    w.part_lines.setdefault(part, n)
                    parts[part].append(lab.group(2))
                    continue
        if current:
            parts[current].append(line)
    w.what = "\n".join(parts[PART_WHAT]).strip()
    w.why = "\n".join(parts[PART_WHY]).strip()
    w.removal_plan = "\n".join(parts[PART_REMOVAL]).strip()
    upstream_text = "\n".join(parts[PART_UPSTREAM])
    w.upstream_links = [u for u in links(upstream_text) if not _OWN_REPO.match(u)]
    if not w.upstream_links:
        w.upstream_links = [u for u in links(text) if not _OWN_REPO.match(u)]
    if not _is_filled(w.removal_plan):
        prose = _prose_removal(text)
        if prose:
            w.removal_plan = prose
    if not _is_filled(w.what):
        w.missing.append(PART_WHAT)
    if not _is_filled(w.why):
        w.missing.append(PART_WHY)
    if not w.upstream_links:
        w.missing.append(PART_UPSTREAM)
    if not _is_filled(w.removal_plan):
        w.missing.append(PART_REMOVAL)
    return w
