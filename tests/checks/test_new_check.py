"""Adding a check touches the five places STYLE.md lists (module, registry entry, case files,
README row, golden) and nothing else but `make docs` (its page is generated from the module's
docstring): a throwaway check is built from a template into a temporary directory, registered,
run from its case files, rendered, and documented."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

import checks
import checks.registry as registry
from bot.commands.check import parse_only
from checks.docs import PAGES_DIR, docstring_problems, readme_row, readme_table_problems, stale_pages, write_pages
from checks.engine import evaluate
from checks.render import ROW_RE, render_comment, validate_comment
from tests.builders import build_snapshot
from tests.checks.test_check_cases import test_case as run_case_file

PROJECT = Path(__file__).resolve().parents[2]
SLUG = "pr_title"

# 1. The module, from the shape every check has (STYLE.md section 1).
TEMPLATE = '''\
"""Check {number} (PR title): the pull request has a title.

What it checks:
    The PR title is not blank.
Why it matters:
    Reviewers and the changelog find a PR by its title.
Evidence it cites:
    The pull request.
Not applicable when:
    Never: every PR has a title field.
How to fix:
    Give the pull request a title.
"""
from __future__ import annotations

from checks.result import CheckResult, Evidence

MSG_PASS = "The PR is titled {{title}}."
MSG_FAIL = "The PR has no title; give it one."


class PrTitleCheck:
    def applies(self, ctx) -> str | None:
        return None

    def evaluate(self, ctx) -> CheckResult:
        title = (ctx.snapshot.title or "").strip()
        if not title:
            return CheckResult.failed(MSG_FAIL, Evidence(note="PR title"))
        return CheckResult.passed(MSG_PASS.format(title=title), Evidence(note="PR title"), title=title)
'''

# 3. Case files, in the format every check's cases use (tests/cases/README.md).
CASES = {
    "pass_titled": "description: A PR with a title passes and quotes it.\ncheck: {number}\n"
                   "snapshot: {{title: Add dsv4 agentic points}}\n"
                   "expect:\n  status: PASS\n  reason_contains: [Add dsv4 agentic points]\n",
    "fail_untitled": "description: A blank title fails.\ncheck: {number}\nsnapshot: {{title: '  '}}\n"
                     "expect:\n  status: FAIL\n  evidence_contains: [PR title]\n",
}


@pytest.fixture
def new_check(tmp_path, monkeypatch):
    number = max(registry.CHECK_NUMBERS) + 1  # the next free number: the registry knows how many
    module_name = f"check_{number:02d}_{SLUG}"
    package_dir = tmp_path / "checks"
    package_dir.mkdir()
    (package_dir / f"{module_name}.py").write_text(TEMPLATE.format(number=number), encoding="utf-8")
    monkeypatch.setattr(checks, "__path__", [*checks.__path__, str(package_dir)])
    # 2. The registry entry: appended to the one list; everything else asks the registry.
    check = registry.Registered(number, "PR title", f"{module_name}:PrTitleCheck")
    monkeypatch.setattr(registry, "CHECKS", (*registry.CHECKS, check))
    monkeypatch.setattr(registry, "CHECK_NUMBERS", frozenset(c.number for c in registry.CHECKS))
    monkeypatch.setattr(registry, "ADVISORY_NUMBERS", frozenset(c.number for c in registry.CHECKS if c.advisory))
    yield check, tmp_path
    sys.modules.pop(f"checks.{module_name}", None)


def test_the_new_check_has_the_documented_shape(new_check):
    check, _ = new_check
    assert docstring_problems(check) == []
    assert registry.check_by_number(check.number) is check
    assert parse_only(str(check.number)) == {check.number}


def test_the_new_checks_case_files_run_through_the_shared_runner(new_check):
    check, tmp = new_check
    folder = tmp / "cases" / f"check_{check.number:02d}"
    folder.mkdir(parents=True)
    for stem, text in CASES.items():
        path = folder / f"{stem}.yaml"
        path.write_text(text.format(number=check.number), encoding="utf-8")
        run_case_file(path)


def test_the_new_check_gets_a_row_in_every_verdict_and_the_comment_validates(new_check):
    check, _ = new_check
    snap = build_snapshot({"title": "Add dsv4 agentic points", "signoff": {"id": 4401, "author": "seungrokj"}})
    verdict = evaluate(snap)
    row = verdict.row(check.number)
    assert (row.status.value, row.details["title"]) == ("PASS", "Add dsv4 agentic points")
    assert [r.number for r in verdict.rows] == sorted(registry.CHECK_NUMBERS)
    # 5. The golden: the rendered comment carries its row and the validator (which asks the
    # registry for the expected rows) accepts it; without the row it would not.
    body = render_comment(verdict, snap.signoff.key)
    assert validate_comment(body) == []
    rows = [line.strip() for line in body.splitlines() if ROW_RE.fullmatch(line.strip())]
    assert f"✅ Check {check.number} (PR title): PASS — The PR is titled Add dsv4 agentic points. (PR title)" in rows
    dropped = "\n".join(line for line in body.splitlines() if f"Check {check.number} (" not in line) + "\n"
    assert any("missing" in e for e in validate_comment(dropped))


def test_the_new_check_needs_its_readme_row(new_check):
    check, _ = new_check
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    problems = readme_table_problems(readme, registry.CHECKS)
    assert any(f"check {check.number} (PR title) has no README row" in p for p in problems)
    # 4. The README row: appended after the last row of the table, the docs agree again.
    last = readme_row(registry.CHECKS[-2])
    table_end = readme.index("\n", readme.index(f"| {registry.CHECKS[-2].number} | [{registry.CHECKS[-2].name}]("))
    with_row = readme[:table_end] + "\n" + readme_row(check) + readme[table_end:]
    assert last and readme_row(check) == (
        f"| {check.number} | [PR title](docs/checks/check_{check.number:02d}.md) | The pull request has a title. | PASS / FAIL |")
    assert readme_table_problems(with_row, registry.CHECKS) == []


def test_the_new_checks_page_is_generated_from_its_docstring(new_check):
    check, tmp = new_check
    name = f"check_{check.number:02d}.md"
    assert f"{PROJECT / PAGES_DIR / name}: missing" in stale_pages(PROJECT / PAGES_DIR, registry.CHECKS)
    out = tmp / "pages"
    assert name in write_pages(out, registry.CHECKS)
    text = (out / name).read_text(encoding="utf-8")
    assert text.startswith(f"# Check {check.number}: PR title\n")
    assert "## How to fix\n\nGive the pull request a title.\n" in text and "- Gives: PASS / FAIL\n" in text
    assert stale_pages(out, registry.CHECKS) == []
