"""The checks' documentation, read from the registry and each module's docstring (as ruff reads
its rule docs): the five docstring sections, the one-line summary, the statuses a check gives,
one page per check (docs/checks/check_NN.md, generated: `python -m checks.docs`, or `make docs`)
and the README check table, which must agree with them."""
from __future__ import annotations

import argparse
import importlib
import re
import sys
import textwrap
from pathlib import Path
from typing import Iterable, Sequence

from .base import Check
from .policy import rules_of
from .registry import module_of

DOC_HEADINGS = ("What it checks:", "Why it matters:", "Evidence it cites:", "Not applicable when:", "How to fix:")
# The README's check table starts after this heading; its rows are `| N | Name | ... | Gives |`.
README_TABLE_HEADING = re.compile(r"^## The \w+ checks$", re.M)
_ROW = re.compile(r"^\|\s*(\d+)\s*\|\s*(.+?)\s*\|(.*)\|\s*([A-Z/ ]+?)\s*\|\s*$")
# A row's name cell links the check's page: `[Name](docs/checks/check_NN.md)`.
_LINKED_NAME = re.compile(r"^\[(.+)\]\(([^)\s]+)\)$")
# Where the pages live, relative to the repository root (the README links them from there).
PAGES_DIR = "docs/checks"
GENERATED_BY = "python -m checks.docs"
_SUMMARY = re.compile(r"^Check (\d+) \((.+?)\): (.+)$")
NEVER = "Never"
_ADVISORY_SENTENCE = re.compile(r"Checks? ((?:\d+(?:, | and )?)+) (?:is|are) advisory")


def docstring(check: Check) -> str:
    return importlib.import_module(module_of(check)).__doc__ or ""


def _raw_section(check: Check, heading: str) -> str:
    """The docstring's text under one of the five headings, as written ("" when absent)."""
    doc = docstring(check)
    start = doc.find(heading)
    if start < 0:
        return ""
    rest = doc[start + len(heading):]
    ends = [i for i in (rest.find(h) for h in DOC_HEADINGS) if i >= 0]
    return rest[: min(ends)] if ends else rest


def section(check: Check, heading: str) -> str:
    """The text under one of the five headings, on one line ("" when absent)."""
    return " ".join(_raw_section(check, heading).split())


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


def sentence(check: Check) -> str:
    """The summary as a sentence of its own: a first word in lower case is capitalised, one
    spelled otherwise (`vLLM/SGLang`) is kept."""
    text = summary(check)
    first = text.split(" ", 1)[0]
    return text[:1].upper() + text[1:] if first.islower() else text


def gives(check: Check) -> str:
    """The statuses a check can give: PASS and FAIL (WARN when advisory), and N/A unless its
    "Not applicable when" section says Never."""
    statuses = ["PASS", "WARN" if check.advisory else "FAIL"]
    if not section(check, "Not applicable when:").startswith(NEVER):
        statuses.append("N/A")
    return " / ".join(statuses)


def section_markdown(check: Check, heading: str) -> str:
    """The text under one heading as the docstring lays it out (paragraphs, `-` lists and their
    indented continuation lines kept), for a page."""
    return textwrap.dedent(_raw_section(check, heading)).strip()


def page_name(check: Check) -> str:
    return f"check_{check.number:02d}.md"


def page_link(check: Check) -> str:
    """Where the README links a check's page, relative to the repository root."""
    return f"{PAGES_DIR}/{page_name(check)}"


def kind(check: Check) -> str:
    if check.advisory:
        escalation = "; a WARN mentions the repository's escalation handles" if check.escalates else ""
        return f"advisory: it may WARN, never FAIL{escalation}"
    return "blocking: a FAIL makes the verdict REJECTED"


def page(check: Check) -> str:
    """A check's page, every word of it from the registry, the policy table and the module's
    docstring: edit those, then regenerate (`make docs`)."""
    source = module_of(check).replace(".", "/") + ".py"
    rules = rules_of(check.number)
    lines = [
        f"# Check {check.number}: {check.name}",
        "",
        f"<!-- Generated by `{GENERATED_BY}` from {source}; edit the docstring there and run `make docs`. -->",
        "",
        sentence(check),
        "",
        f"- Gives: {gives(check)}",
        f"- Kind: {kind(check)}",
    ]
    if rules:
        lines.append("- Rules (the check is N/A before the first is in force; `checks/policy.py`):")
        lines += [f"  - {r.text}, in force since {r.since.isoformat()} ({r.source})" for r in rules]
    lines.append(f"- Source: [{source}](../../{source})")
    for heading in DOC_HEADINGS:
        lines += ["", f"## {heading.rstrip(':')}", "", section_markdown(check, heading)]
    return "\n".join(lines) + "\n"


def pages(checks: Iterable[Check]) -> dict[str, str]:
    """file name -> text of every check's page."""
    return {page_name(c): page(c) for c in checks}


def stale_pages(directory: Path, checks: Iterable[Check]) -> list[str]:
    """What differs between `directory` and the pages the docstrings give: missing, out of date
    or left over (a page no check has)."""
    want = pages(checks)
    have = {p.name for p in directory.glob("check_*.md")} if directory.is_dir() else set()
    out = [f"{directory / n}: missing" for n in sorted(want) if n not in have]
    out += [f"{directory / n}: out of date with its docstring" for n in sorted(want)
            if n in have and (directory / n).read_text(encoding="utf-8") != want[n]]
    out += [f"{directory / n}: no check has this page" for n in sorted(have - set(want))]
    return out


def write_pages(directory: Path, checks: Iterable[Check]) -> list[str]:
    """Write every page, remove pages of no check; returns the names written or removed."""
    want = pages(checks)
    directory.mkdir(parents=True, exist_ok=True)
    changed = []
    for name, text in want.items():
        path = directory / name
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(name)
    for path in sorted(directory.glob("check_*.md")):
        if path.name not in want:
            path.unlink()
            changed.append(path.name)
    return changed


def readme_row(check: Check) -> str:
    """A new README table row for a check: its linked name, its summary and what it gives."""
    return f"| {check.number} | [{check.name}]({page_link(check)}) | {sentence(check)} | {gives(check)} |"


def _readme_rows(readme: str) -> list[tuple[int, str, str | None, str]]:
    """(number, name, linked page or None, gives) of each row of the README check table."""
    m = README_TABLE_HEADING.search(readme)
    if m is None:
        return []
    rows = []
    for line in readme[m.end():].split("\n## ", 1)[0].splitlines():
        r = _ROW.match(line.strip())
        if r:
            linked = _LINKED_NAME.match(r.group(2))
            name, link = (linked.group(1), linked.group(2)) if linked else (r.group(2), None)
            rows.append((int(r.group(1)), name, link, r.group(4)))
    return rows


def readme_table(readme: str) -> list[tuple[int, str, str]]:
    """(number, name, gives) of each row of the README check table."""
    return [(n, name, g) for n, name, _, g in _readme_rows(readme)]


def readme_table_problems(readme: str, checks: Iterable[Check]) -> list[str]:
    """Where the README check table disagrees with the registry and the docstrings: one row per
    check in number order, with the check's name linking its page and the statuses it gives."""
    checks = list(checks)
    rows = _readme_rows(readme)
    out = []
    if [n for n, _, _, _ in rows] != [c.number for c in checks]:
        out.append(f"README rows {[n for n, _, _, _ in rows]} are not the registry's checks {[c.number for c in checks]}")
    by_number = {n: (name, link, g) for n, name, link, g in rows}
    for c in checks:
        if c.number not in by_number:
            out.append(f"check {c.number} ({c.name}) has no README row; add: {readme_row(c)}")
            continue
        name, link, g = by_number[c.number]
        if name != c.name:
            out.append(f"README row {c.number} names {name!r}, the check is {c.name!r}")
        if link != page_link(c):
            out.append(f"README row {c.number} links {link!r}, not its page {page_link(c)!r}")
        if g != gives(c):
            out.append(f"README row {c.number} says it gives {g!r}, its docstring and registry say {gives(c)!r}")
    m = _ADVISORY_SENTENCE.search(readme)
    advisory = sorted(c.number for c in checks if c.advisory)
    if m and sorted(int(n) for n in re.findall(r"\d+", m.group(1))) != advisory:
        out.append(f"the README calls checks {m.group(1)} advisory; the registry's advisory checks are {advisory}")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m checks.docs [--check] [--out DIR]`: write the check pages, or with --check
    only say which are out of date (exit 1)."""
    from .registry import CHECKS

    parser = argparse.ArgumentParser(prog=f"python -m {__name__}", description=main.__doc__.split(":", 1)[1].strip())
    parser.add_argument("--out", default=PAGES_DIR, metavar="DIR", help=f"where the pages go (default: {PAGES_DIR})")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each stale page")
    args = parser.parse_args(argv)
    live = [c for c in CHECKS if not getattr(c, "retired", False)]
    if args.check:
        problems = stale_pages(Path(args.out), live)
        for p in problems:
            print(f"{p} (run `make docs`)", file=sys.stderr)
        return 1 if problems else 0
    for name in write_pages(Path(args.out), live):
        print(f"{args.out}/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
