"""MODELS.md: the model support matrix, scenarios and dated deprecations (spec section 6)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime

from .errors import Finding

AGENTIC = "agentic-coding"
EVERY_SCENARIO = "*"
_AGENTIC_SPELLINGS = frozenset({"agentic-coding", "agentic coding", "agentic", "agentx"})
_FIXED_SPELLINGS = frozenset({"fixed-seq-len", "fixed_seq_len", "fixed-sequence-length", "single-turn"})
_SEQ_KEY = re.compile(r"(?<![\w.])(\d+k\d+k)(?![\w])", re.IGNORECASE)
_AGENTIC_TEXT = re.compile(r"agentic[ -]coding", re.IGNORECASE)
_PRECISION = re.compile(r"\b(bf16|fp16|fp8|fp4|nvfp4|mxfp4|int4|int8)\b", re.IGNORECASE)
_PREFIX = re.compile(r"`([A-Za-z0-9][A-Za-z0-9._-]*)`")
_ISO_DATE = re.compile(r"\b(\d{4}-\d{2}-\d{2})\b")
_LONG_DATE = re.compile(
    r"\b(?:(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday),\s+)?"
    r"((?:January|February|March|April|May|June|July|August|September|October|November|December)\s+\d{1,2},\s+\d{4})"
)
_LAST_DAY = re.compile(r"is the last day", re.IGNORECASE)
_EFFECTIVE_WORDS = re.compile(r"\b(removed|retired|deprecated since|since)\s+(\d{4}-\d{2}-\d{2})", re.IGNORECASE)
_LIMITED_TO = re.compile(r"limited to\s+([A-Za-z0-9/ ,]+)", re.IGNORECASE)
_LINK = re.compile(r"\[([^\[\]]*)\]\([^)]*\)")  # no `[` in the text: linear on `[[[...`
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")

H2_DEPRECATION = "deprecation notice"
H2_SCENARIOS = "scenarios"
COL_PREFIX = "prefix"
COL_DEPRECATED = "deprecated"


def _k(tokens: int) -> str:
    return f"{tokens // 1024}k" if tokens % 1024 == 0 else f"{round(tokens / 1000)}k"


def scenario_name(scenario: str, isl: int | None = None, osl: int | None = None) -> str:
    """Canonical scenario key: "agentic-coding" or "<isl>k<osl>k" ("8k1k"). Accepts master-config
    spellings ("fixed-seq-len" with isl/osl) and MODELS.md spellings ("Single-turn 8k1k")."""
    s = " ".join(scenario.strip().lower().split())
    if s in _AGENTIC_SPELLINGS or _AGENTIC_TEXT.search(s):
        return AGENTIC
    m = _SEQ_KEY.search(s)
    if m:
        return m.group(1).lower()
    if s in _FIXED_SPELLINGS and isl and osl:
        return f"{_k(int(isl))}{_k(int(osl))}"
    return s


def _plain(cell: str) -> str:
    """Cell text with links reduced to their text and emphasis removed."""
    return _LINK.sub(r"\1", cell).replace("**", "").replace("__", "").strip()


def _iso(text: str) -> date | None:
    try:
        return date.fromisoformat(text)
    except ValueError:
        return None


def _parse_date(text: str) -> date | None:
    m = _ISO_DATE.search(text)
    if m:
        return _iso(m.group(1))
    m = _LONG_DATE.search(text)
    if m:
        try:
            return datetime.strptime(" ".join(m.group(1).split()), "%B %d, %Y").date()
        except ValueError:
            return None
    return None


def _scenarios_in(text: str) -> list[str]:
    found = []
    for m in _AGENTIC_TEXT.finditer(text):
        found.append((m.start(), AGENTIC))
    for m in _SEQ_KEY.finditer(text):
        found.append((m.start(), m.group(1).lower()))
    out: list[str] = []
    for _, key in sorted(found):
        if key not in out:
            out.append(key)
    return out


def _split_items(cell: str) -> list[str]:
    """Split a cell at commas and semicolons outside parentheses and brackets."""
    items, depth, cur = [], 0, []
    for ch in cell:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth = max(0, depth - 1)
        if ch in ",;" and depth == 0:
            items.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    items.append("".join(cur))
    return [i.strip() for i in items if i.strip()]


def _outside_parens(text: str) -> str:
    out, depth = [], 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


@dataclass(frozen=True)
class DeprecatedItem:
    """One entry of a row's "Deprecated scenarios" cell; `effective` is the first day it applies."""

    scenario: str
    precision: str | None
    effective: date | None
    text: str
    # "Agentic coding non-DSpark arm": the item covers only one arm of the scenario, named by
    # its speculative method (lower case); `negated` for "non-<method> arm".
    arm: str | None = None
    negated: bool = False

    def covers(self, method: str | None) -> bool:
        """Whether the item applies to a point whose speculative method is `method` ("none"
        when it does not speculate; None when unknown, which an arm item covers)."""
        if self.arm is None or method is None:
            return True
        hit = method.strip().lower() == self.arm
        return not hit if self.negated else hit


# `\b(non-)?([a-z][a-z0-9.+]*)\s+arm\b` (case-insensitive), found by `_arm`: the regex itself
# tried each position of a long run of name characters, each to the end of the run (quadratic).
_ARM_WORD = re.compile(r"(?<!\s)\s+arm\b", re.IGNORECASE)
_ARM_NAME = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.+")


def _arm(text: str) -> tuple[str | None, str] | None:
    """(`non-` or None, the name) of the first `NAME arm` in `text`, as the regex above reads it;
    each `arm` and the run of name characters before it is read once."""
    for m in _ARM_WORD.finditer(text):
        start = m.start()
        while start > 0 and text[start - 1] in _ARM_NAME:
            start -= 1
        for p in range(start, m.start()):
            # A name starts with a letter at a word boundary (after a non-word character).
            if text[p].isascii() and text[p].isalpha() and (p == 0 or not (text[p - 1].isalnum() or text[p - 1] == "_")):
                non = text[p - 4:p] if p >= 4 and text[p - 4:p].lower() == "non-" and \
                    (p == 4 or not (text[p - 5].isalnum() or text[p - 5] == "_")) else None
                return non, text[p:m.start()]
    return None


@dataclass(frozen=True)
class ModelRow:
    prefix: str
    architecture: str
    date_added: str
    active: str
    deprecated: str
    line: int
    retired: bool
    retired_on: date | None = None
    active_scenarios: tuple[str, ...] = ()
    active_precisions: tuple[str, ...] = ()
    deprecated_items: tuple[DeprecatedItem, ...] = ()


@dataclass(frozen=True)
class ScenarioRow:
    name: str
    key: str
    status: str  # "active" | "deprecated"
    since: date | None
    line: int


@dataclass(frozen=True)
class DeprecationNotice:
    """A dated deprecation: in force the day after `last_day`."""

    prefix: str
    scenario: str  # a scenario key, or "*" for every scenario
    precision: str | None
    last_day: date
    line: int
    section: str


@dataclass(frozen=True)
class Deprecation:
    deprecated: bool
    reason: str
    line: int | None
    # active | deprecated | scheduled | retired | unlisted-model | unlisted-scenario
    status: str = "active"


@dataclass
class ModelsDoc:
    path: str
    rows: list[ModelRow] = field(default_factory=list)
    scenarios: list[ScenarioRow] = field(default_factory=list)
    deprecations: list[DeprecationNotice] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    def rows_for(self, prefix: str) -> list[ModelRow]:
        p = prefix.strip().lower()
        return [r for r in self.rows if r.prefix.lower() == p]

    def is_deprecated(
        self,
        prefix: str,
        scenario: str,
        *,
        on: date,
        precision: str | None = None,
        isl: int | None = None,
        osl: int | None = None,
        method: str | None = None,
    ) -> Deprecation:
        """Whether (prefix, scenario[, precision]) is deprecated on day `on` (UTC review date).

        A dated notice takes effect after its last day; a row's "(removed YYYY-MM-DD)" from that
        day; a retired model from its retirement date. A deprecation dated in the future is
        "scheduled" and not yet in force. `scenario` may be a key ("8k1k") or a master-config
        scenario with `isl`/`osl` ("fixed-seq-len", 8192, 1024). `method` is the point's
        speculative method ("none" when it does not speculate): an item naming one arm
        ("Agentic coding non-DSpark arm") covers only the points of that arm.
        """
        key = scenario_name(scenario, isl, osl)
        prec = precision.strip().lower() if precision else None
        rows = self.rows_for(prefix)
        if not rows:
            return Deprecation(False, f"`{prefix}` is not listed in {self.path}", None, "unlisted-model")
        row = rows[0]
        where = f"{self.path}:{row.line}"
        if row.retired and (row.retired_on is None or on >= row.retired_on):
            return Deprecation(True, f"`{prefix}` is retired ({where}: {row.active})", row.line, "retired")
        for sc in self.scenarios:
            if sc.key == key and sc.status == "deprecated" and (sc.since is None or on >= sc.since):
                since = f" since {sc.since.isoformat()}" if sc.since else ""
                return Deprecation(
                    True, f"scenario {sc.name} is deprecated for all models{since} ({self.path}:{sc.line})",
                    sc.line, "deprecated",
                )
        scheduled: list[tuple[str, int]] = []
        for n in self.deprecations:
            if n.prefix.lower() != row.prefix.lower():
                continue
            if n.scenario not in (key, EVERY_SCENARIO):
                continue
            if n.precision is not None and n.precision != prec:
                continue
            what = _describe(key, n.precision)
            if on > n.last_day:
                return Deprecation(
                    True,
                    f"{what} on `{prefix}` is deprecated: {n.last_day.isoformat()} was its last day ({self.path}:{n.line})",
                    n.line, "deprecated",
                )
            scheduled.append((f"{what} on `{prefix}` is scheduled for deprecation after {n.last_day.isoformat()} ({self.path}:{n.line})", n.line))
        for item in row.deprecated_items:
            if item.scenario not in (key, EVERY_SCENARIO):
                continue
            if not item.covers(method):
                continue
            if item.precision is not None and item.precision != prec:
                continue
            what = _describe(key, item.precision)
            if item.arm is not None:
                what += f" ({'non-' if item.negated else ''}{item.arm} arm, this point: {method or 'method unknown'})"
            if item.effective is None or on >= item.effective:
                since = f" (from {item.effective.isoformat()})" if item.effective else ""
                return Deprecation(True, f"{what} is a deprecated scenario of `{prefix}`{since} ({where})", row.line, "deprecated")
            scheduled.append((f"{what} on `{prefix}` is deprecated from {item.effective.isoformat()} ({where})", row.line))
        if scheduled:
            reason, line = scheduled[0]
            return Deprecation(False, f"not yet in force: {reason}", line, "scheduled")
        if prec and row.active_precisions and prec not in row.active_precisions:
            allowed = "/".join(row.active_precisions)
            return Deprecation(True, f"`{prefix}` is active only for {allowed}, not {prec} ({where})", row.line, "deprecated")
        if key in row.active_scenarios:
            return Deprecation(False, f"{_describe(key, None)} is active for `{prefix}` ({where})", row.line, "active")
        return Deprecation(
            False, f"{_describe(key, None)} is not among `{prefix}`'s active scenarios ({where})",
            row.line, "unlisted-scenario",
        )


def _describe(key: str, precision: str | None) -> str:
    name = "Agentic coding" if key == AGENTIC else ("every scenario" if key == EVERY_SCENARIO else f"Single-turn {key}")
    return f"{precision} {name}" if precision else name


def _cells(line: str) -> list[str]:
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|") and not body.endswith("\\|"):
        body = body[:-1]
    return [c.strip() for c in re.split(r"(?<!\\)\|", body)]


def _is_separator(line: str) -> bool:
    cells = _cells(line)
    return bool(cells) and all(re.fullmatch(r":?-{1,}:?", c) for c in cells if c) and any(cells)


def _deprecated_items(cell: str) -> tuple[DeprecatedItem, ...]:
    out: list[DeprecatedItem] = []
    for item in _split_items(_plain(cell)):
        head = _outside_parens(item)
        eff = None
        m = _EFFECTIVE_WORDS.search(item)
        if m:
            eff = _iso(m.group(2))
        precisions = [p.lower() for p in _PRECISION.findall(head)]
        scenarios = _scenarios_in(head)
        if precisions and (not scenarios or re.search(r"\b(all|every)\b", head, re.IGNORECASE)):
            for p in precisions:
                out.append(DeprecatedItem(EVERY_SCENARIO, p, eff, item))
            continue
        arm = _arm(head)
        for s in scenarios:
            out.append(DeprecatedItem(s, None, eff, item, arm=arm[1].lower() if arm else None,
                                      negated=bool(arm and arm[0])))
    return tuple(out)


def _notice_items(prefix_cell: str, deprecated_cell: str) -> list[tuple[str, str, str | None]]:
    prefixes = _PREFIX.findall(prefix_cell)
    items = _deprecated_items(deprecated_cell)
    return [(p, i.scenario, i.precision) for p in prefixes for i in items]


def parse_models(text: str, path: str) -> ModelsDoc:
    """Parse MODELS.md. Tables are recognised by their header cells; unexpected shapes are
    findings (a missing support matrix is one), never exceptions."""
    doc = ModelsDoc(path=path)
    if "\0" in text:
        doc.findings.append(Finding(path=path, message="binary file (contains NUL bytes)", code="binary"))
        return doc
    lines = text.replace("\r\n", "\n").split("\n")
    h2 = h3 = ""
    h3_date: date | None = None
    section_last_day: date | None = None
    in_fence = False
    seen_notices: set[tuple[str, str, str | None, date]] = set()

    def add_notice(prefix: str, scen: str, prec: str | None, last: date, line: int) -> None:
        sig = (prefix.lower(), scen, prec, last)
        if sig in seen_notices:
            return
        seen_notices.add(sig)
        doc.deprecations.append(DeprecationNotice(prefix, scen, prec, last, line, h3))

    i = 0
    while i < len(lines):
        line = lines[i]
        n = i + 1
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
            i += 1
            continue
        if in_fence:
            i += 1
            continue
        m = _HEADING.match(line)
        if m:
            level, title = len(m.group(1)), m.group(2)
            if level <= 2:
                h2, h3, h3_date, section_last_day = title.strip().lower(), "", None, None
            elif level == 3:
                h3 = title.strip()
                h3_date = _parse_date(title) if h2 == H2_DEPRECATION else None
                section_last_day = h3_date
            i += 1
            continue
        if h2 == H2_DEPRECATION and h3_date and _LAST_DAY.search(line):
            before = line[: _LAST_DAY.search(line).start()]
            section_last_day = _parse_date(before) or h3_date
            sentence = _plain(line[_LAST_DAY.search(line).end():].split(". ")[0])
            for p in _PREFIX.findall(sentence):
                for s in _scenarios_in(sentence):
                    add_notice(p, s, None, section_last_day, n)
        if line.lstrip().startswith("|") and i + 1 < len(lines) and _is_separator(lines[i + 1]):
            header = [_plain(c).lower() for c in _cells(line)]
            j = i + 2
            body: list[tuple[int, list[str]]] = []
            while j < len(lines) and lines[j].lstrip().startswith("|"):
                body.append((j + 1, _cells(lines[j])))
                j += 1
            _table(doc, header, body, h2, section_last_day, add_notice, n)
            i = j
            continue
        i += 1
    if not doc.rows:
        doc.findings.append(Finding(path=path, code="models-no-matrix",
                                    message="no model support matrix table (a `Prefix` column) found"))
    return doc


def _table(doc, header, body, h2, last_day, add_notice, header_line) -> None:
    path = doc.path
    if COL_PREFIX in header and len(header) >= 5:
        ip = header.index(COL_PREFIX)
        for line, cells in body:
            if len(cells) < len(header):
                doc.findings.append(Finding(path=path, line=line, code="models-row",
                                            message=f"support-matrix row has {len(cells)} cells, expected {len(header)}"))
                continue
            prefixes = _PREFIX.findall(cells[ip])
            if not prefixes:
                doc.findings.append(Finding(path=path, line=line, code="models-row",
                                            message="support-matrix row has no backticked prefix"))
                continue
            arch = _plain(cells[0])
            added = _plain(cells[ip + 1])
            active = _plain(cells[ip + 2])
            deprecated = _plain(cells[ip + 3]) if len(cells) > ip + 3 else ""
            retired = active.lower().startswith("none")
            retired_on = None
            if retired:
                m = re.search(r"retired\s+(\d{4}-\d{2}-\d{2})", active)
                retired_on = _iso(m.group(1)) if m else None
            lim = _LIMITED_TO.search(active)
            precisions = tuple(p.lower() for p in _PRECISION.findall(lim.group(1))) if lim else ()
            for p in prefixes:
                doc.rows.append(ModelRow(
                    prefix=p, architecture=arch, date_added=added, active=active,
                    deprecated=deprecated, line=line, retired=retired, retired_on=retired_on,
                    active_scenarios=tuple(_scenarios_in(_outside_parens(active))) if not retired else (),
                    active_precisions=precisions,
                    deprecated_items=_deprecated_items(cells[ip + 3]) if len(cells) > ip + 3 else (),
                ))
        return
    if h2 == H2_SCENARIOS and header and header[0] == "scenario" and "status" in header:
        ist = header.index("status")
        for line, cells in body:
            if len(cells) <= ist:
                doc.findings.append(Finding(path=path, line=line, code="models-row",
                                            message="scenario row is missing its status"))
                continue
            name = _plain(cells[0])
            status_text = _plain(cells[ist])
            status = "deprecated" if status_text.lower().startswith("deprecated") else "active"
            since = None
            m = re.search(r"since\s+(\d{4}-\d{2}-\d{2})", status_text)
            if m:
                since = _iso(m.group(1))
            doc.scenarios.append(ScenarioRow(name=name, key=scenario_name(name), status=status, since=since, line=line))
        return
    if h2 == H2_DEPRECATION and len(header) >= 2 and header[1] == COL_DEPRECATED:
        if last_day is None:
            doc.findings.append(Finding(path=path, line=header_line, code="models-notice", severity="warning",
                                        message="deprecation table outside a dated section; its last day is unknown"))
            return
        for line, cells in body:
            if len(cells) < 2:
                continue
            items = _notice_items(cells[0], cells[1])
            if not items:
                doc.findings.append(Finding(path=path, line=line, code="models-notice", severity="warning",
                                            message="deprecation row names no backticked prefix and scenario/precision"))
            for prefix, scen, prec in items:
                add_notice(prefix, scen, prec, last_day, line)
