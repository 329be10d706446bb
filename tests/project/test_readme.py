"""The README's check table agrees with the registry and the check docstrings (checks/docs.py),
as ruff's rule docs come from the rules: one row per check in number order, its name, and the
statuses it gives (advisory -> WARN, "Not applicable when: Never" -> no N/A), the name linking
the check's generated page (docs/checks/check_NN.md)."""
from __future__ import annotations

from pathlib import Path

import pytest

from checks.docs import docstring_problems, gives, page_link, readme_table, readme_table_problems
from checks.registry import CHECKS

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def test_the_readme_check_table_agrees_with_the_docstrings():
    assert readme_table_problems(README, CHECKS) == []


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: f"check_{c.number:02d}")
def test_every_docstring_has_its_summary_line_and_five_sections(check):
    assert docstring_problems(check) == []


def test_a_disagreeing_row_is_named():
    first = CHECKS[0]
    row = next(r for r in README.splitlines() if r.startswith(f"| {first.number} | [{first.name}]("))
    wrong = README.replace(row, row.replace(f"| {gives(first)} |", "| PASS / WARN / N/A |"))
    assert readme_table_problems(wrong, CHECKS) == [
        f"README row {first.number} says it gives 'PASS / WARN / N/A', its docstring and registry say {gives(first)!r}"]
    assert len(readme_table(README)) == len(CHECKS)


def test_a_row_that_does_not_link_its_page_is_named():
    first = CHECKS[0]
    row = next(r for r in README.splitlines() if r.startswith(f"| {first.number} | [{first.name}]("))
    unlinked = README.replace(row, row.replace(f"[{first.name}]({page_link(first)})", first.name))
    assert readme_table_problems(unlinked, CHECKS) == [
        f"README row {first.number} links None, not its page {page_link(first)!r}"]
