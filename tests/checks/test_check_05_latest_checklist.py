"""Check 5 against the real PR_REVIEW_CHECKLIST.md template from the shared InferenceX snapshot."""
from __future__ import annotations

import re

import pytest

from checks.check_05_latest_checklist import excerpt
from checks.result import Status
from recipes.checklist import parse_template
from tests.builders import check_row

TEMPLATE = "inferencex-e2e/docs/PR_REVIEW_CHECKLIST.md"


@pytest.fixture
def template_text(inferencex_dir) -> str:
    return (inferencex_dir / TEMPLATE).read_text(encoding="utf-8")


def _signed(template_text: str, drop: set[int] = frozenset(), uncheck: set[int] = frozenset(), detail: str = "") -> str:
    """A sign-off made from the template itself: every item checked except `uncheck`, minus `drop`."""
    tpl = parse_template(template_text, TEMPLATE)
    lines = template_text.split("\n")
    out = [lines[tpl.line - 1].strip()]
    for item in tpl.items:
        if item.number in drop:
            continue
        raw = lines[item.line - 1]
        out.append(raw if item.number in uncheck else re.sub(r"\[ \]", "[x]", raw, count=1))
    out += ["", "### Additional detail section:", detail or "- nothing to add", "", "Signed: seungrokj"]
    return "\n".join(out)


def _row(template_text: str, body: str):
    return check_row(5, {"base": {TEMPLATE: template_text, "inferencex-e2e/perf-changelog.yaml": "[]\n"},
                         "signoff": {"author": "seungrokj", "body": body}})


def test_template_copied_and_fully_checked_passes(template_text):
    n = len(parse_template(template_text, TEMPLATE).items)
    row = _row(template_text, _signed(template_text))
    assert row.status is Status.PASS
    assert row.reason == f"All {n} items of the current template are present and checked."


def test_missing_evals_item_is_not_covered_by_its_near_twin_validation_item(template_text):
    tpl = parse_template(template_text, TEMPLATE)
    evals = next(i for i in tpl.items if "passes evals" in i.text)
    row = _row(template_text, _signed(template_text, drop={evals.number}))
    assert row.status is Status.FAIL
    assert f"item {evals.number} (\"{excerpt(evals.text)}\")" in row.reason
    assert row.details["missing"] == [evals.number]


def test_unchecked_item_cited_by_number_is_explained(template_text):
    tpl = parse_template(template_text, TEMPLATE)
    last = tpl.items[-1]
    detail = f"- Item {last.number}: not applicable because this PR affects no curve."
    row = _row(template_text, _signed(template_text, uncheck={last.number}, detail=detail))
    assert row.status is Status.PASS
    assert f"item {last.number}" in row.reason and "explained in the Additional detail section" in row.reason


def test_excerpt_drops_link_targets_and_markup():
    assert excerpt("Confirmed the [MODELS.md](https://x/y) `rule` **now** a b c d e f") == \
        "Confirmed the MODELS.md rule now a b c…"
