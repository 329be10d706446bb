"""The checks' documentation, read from the registry and each module's docstring (as ruff reads
its rule docs): the five docstring sections, the one-line summary, the statuses a check gives,
and the README check table, which must agree with them."""
from __future__ import annotations

import importlib
import re
from typing import Iterable

from .base import Check
from .registry import module_of

DOC_HEADINGS = ("What it checks:", "Why it matters:", "Evidence it cites:", "Not applicable when:", "How to fix:")
# The README's check table starts after this heading; its rows are `| N | Name | ... | Gives |`.
README_TABLE_HEADING = re.compile(r"^## The \w+ checks$", re.M)
_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*(.+?)\s*\|(.*)\|\s*([A-Z/ ]+?)\s*\|\s*$")
_SUMMARY = re.compile(r"^Check (\d+) \((.+?)\): (.+)$")
NEVER = "Never"
_ADVISORY_SENTENCE = re.compile(r"Checks? ((?:\d+(?:, | and )?)+) (?:is|are) advisory")


def docstring(check: Check) -> str:
    return importlib.import_module(module_of(check)).__doc__ or ""


def section(check: Check, heading: str) -> str:
    """The text under one of the five headings ("" when absent)."""
    doc = docstring(check)
    start = doc.find(heading)
    if start < 0:
        return ""
    rest = doc[start + len(heading):]
    ends = [i for i in (rest.find(h) for h in DOC_HEADINGS) if i >= 0]
    return " ".join(rest[: min(ends)].split()) if ends else " ".join(rest.split())


def docstring_problems(check: Check) -> list[str]:
    """What is wrong with a check's documentation: the summary line, the five headings in order."""
    doc = docstring(check)
    out = []
    m = _SUMMARY.match(doc.split("\n", 1)[0])
    if not m or int(m.group(1)) != check.number or m.group(2) != check.name:
        out.append(f"check {check.number}: the first docstring line is not `Check {check.number} ({check.name}): <summary>`")
    positions = [doc.find(h) for h in DOC_HEADINGS]
    missing = [h for h, p in zip(DOC_HEADINGS, positions) if p < 0]
    if missing:
        out.append(f"check {check.number}: missing headings {missing}")
    elif positions != sorted(positions):
        out.append(f"check {check.number}: headings out of order")
    else:
        out.extend(f"check {check.number}: {h} has no text" for h in DOC_HEADINGS if not section(check, h))
    return out


def summary(check: Check) -> str:
    """The docstring's one-line summary, without the `Check N (Name): ` prefix."""
    m = _SUMMARY.match(docstring(check).split("\n", 1)[0])
    return m.group(3) if m else ""


def gives(check: Check) -> str:
    """The statuses a check can give: PASS and FAIL (WARN when advisory), and N/A unless its
    "Not applicable when" section says Never."""
    statuses = ["PASS", "WARN" if check.advisory else "FAIL"]
    if not section(check, "Not applicable when:").startswith(NEVER):
        statuses.append("N/A")
    return " / ".join(statuses)


def readme_row(check: Check) -> str:
    """A new README table row for a check (its summary as the description, to be extended)."""
    return f"| {check.number} | {check.name} | {summary(check)} | {gives(check)} |"


def readme_table(readme: str) -> list[tuple[int, str, str]]:
    """(number, name, gives) of each row of the README check table."""
    m = README_TABLE_HEADING.search(readme)
    if m is None:
        return []
    rows = []
    for line in readme[m.end():].split("\n## ", 1)[0].splitlines():
        r = _ROW.match(line.strip())
        if r:
            rows.append((int(r.group(1)), r.group(2), r.group(4)))
    return rows


def readme_table_problems(readme: str, checks: Iterable[Check]) -> list[str]:
    """Where the README check table disagrees with the registry and the docstrings: one row per
    check in number order, with the check's name and the statuses it gives."""
    checks = list(checks)
    rows = readme_table(readme)
    out = []
    if [n for n, _, _ in rows] != [c.number for c in checks]:
        out.append(f"README rows {[n for n, _, _ in rows]} are not the registry's checks {[c.number for c in checks]}")
    by_number = {n: (name, g) for n, name, g in rows}
    for c in checks:
        if c.number not in by_number:
            out.append(f"check {c.number} ({c.name}) has no README row; add: {readme_row(c)}")
            continue
        name, g = by_number[c.number]
        if name != c.name:
            out.append(f"README row {c.number} names {name!r}, the check is {c.name!r}")
        if g != gives(c):
            out.append(f"README row {c.number} says it gives {g!r}, its docstring and registry say {gives(c)!r}")
    m = _ADVISORY_SENTENCE.search(readme)
    advisory = sorted(c.number for c in checks if c.advisory)
    if m and sorted(int(n) for n in re.findall(r"\d+", m.group(1))) != advisory:
        out.append(f"the README calls checks {m.group(1)} advisory; the registry's advisory checks are {advisory}")
    return out
