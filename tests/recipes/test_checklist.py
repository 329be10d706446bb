"""Checklist template, sign-off parsing, drift-tolerant matching and explanations (spec 8)."""
from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from recipes.checklist import (
    MATCH_THRESHOLD,
    match_checklist,
    normalize,
    parse_signoff,
    parse_template,
    similarity,
    unchecked_explained,
)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "parsers"
SEED = Path(__file__).resolve().parents[3] / "shared" / "seed" / "pr-thread-dsv41flash-atom.txt"


@pytest.fixture
def template():
    return parse_template((FIX / "checklist_template.md").read_text(), "docs/PR_REVIEW_CHECKLIST.md")


@pytest.fixture
def drift():
    return parse_signoff((FIX / "signoff_drift.md").read_text())


def test_template_items(template):
    assert template.findings == []
    assert len(template.items) == 6
    assert [i.depth for i in template.items] == [0, 0, 0, 0, 1, 0]
    assert template.items[0].line == 8 and template.line == 7
    assert not any(i.checked for i in template.items)
    assert template.items[0].key.startswith("verified that the sweep passed please link to the workflow run")
    assert "example" not in template.items[0].key  # link targets are not wording


def test_template_errors_are_findings():
    none = parse_template("# nothing\n", "c.md")
    assert none.items == [] and none.findings[0].code == "checklist-template"
    bare = parse_template("As a PR reviewer and CODEOWNER, I have:\n- [ ] one\n", "c.md")
    assert [i.text for i in bare.items] == ["one"] and bare.findings[0].severity == "warning"
    empty = parse_template("```\nAs a PR reviewer and CODEOWNER, I have:\n```\n", "c.md")
    assert empty.items == [] and empty.findings[0].code == "checklist-template"


def test_signoff_fields(drift):
    assert drift.has_phrase and drift.phrase_line == 3
    assert drift.signed == "reviewer-1" and drift.signed_line == 18
    assert [(i.checked, i.depth) for i in drift.items] == [(True, 0), (True, 0), (False, 0), (True, 1), (True, 0)]
    assert drift.items[4].text.endswith("docs/waiver/<PR_NUMBER>.md.")  # wrapped line joined
    assert drift.additional_detail_line == 11
    assert "cookbook PR is pending" in drift.additional_detail
    assert "Signed" not in drift.additional_detail


def test_match_with_drift_missing_and_unchecked(template, drift):
    matches = match_checklist(template, drift)
    by_num = {m.template_item.number: m for m in matches}
    assert by_num[1].signoff_item is drift.items[0] and by_num[1].checked
    assert by_num[1].similarity >= MATCH_THRESHOLD
    assert by_num[2].signoff_item is None and not by_num[2].checked  # evals item missing
    assert by_num[3].checked and by_num[3].similarity >= 0.9  # "organization" spelling drift
    assert by_num[4].signoff_item is drift.items[2] and not by_num[4].checked
    assert by_num[5].checked and by_num[6].checked
    assert unchecked_explained(by_num[4].template_item, drift.additional_detail)
    assert not unchecked_explained(by_num[2].template_item, drift.additional_detail)


def test_unchecked_explained_rules():
    item = parse_template(
        "```\nAs a PR reviewer and CODEOWNER, I have:\n- [ ] one\n- [ ] two\n"
        "- [ ] Verified that agentic spec-decode configs use the golden acceptance length.\n```\n", "c.md"
    ).items[2]
    assert unchecked_explained(item, "- Item 3: see the linked run.")
    assert unchecked_explained(item, "- No golden acceptance curve exists yet, so this is N/A.")
    assert not unchecked_explained(item, "- golden acceptance length is 3.51")  # no explanation cue
    assert not unchecked_explained(item, "- N/A for everything")  # not about this item
    assert not unchecked_explained(item, "- #31 was merged")
    assert not unchecked_explained(item, "")


def test_rendered_and_plain_bullets():
    body = (
        "As a PR reviewer and CODEOWNER, I have reviewed this and have:\n\n"
        "• Rendered item one\n  • nested rendered\n- plain bullet without a box\n\n"
        "Additional detail section:\n\n• detail\n\nSigned: FILL_IN_GITHUB_USERNAME\n"
    )
    doc = parse_signoff(body)
    assert [(i.checked, i.rendered, i.depth) for i in doc.items] == [(True, True, 0), (True, True, 1), (False, False, 0)]
    assert doc.additional_detail.strip() == "• detail"
    assert doc.signed is None  # the placeholder is not a signature


def test_quoted_signoff_is_not_a_signoff():
    doc = parse_signoff("> As a PR reviewer and CODEOWNER, I have reviewed this and have:\n> - [x] a\n")
    assert not doc.has_phrase and doc.items == []


def test_similarity_scale():
    a = normalize("Verified that this PR passes evals. Please link to the [run](https://x.test/1).")
    assert similarity(a, a) == 1.0
    assert similarity(a, normalize("Completely different words about images")) < 0.2
    assert similarity("", a) == 0.0


def _real_template(inferencex_dir):
    return parse_template(
        (inferencex_dir / "inferencex-e2e/docs/PR_REVIEW_CHECKLIST.md").read_text(), "docs/PR_REVIEW_CHECKLIST.md"
    )


def test_real_template_has_17_items(inferencex_dir):
    tpl = _real_template(inferencex_dir)
    assert tpl.findings == []
    assert len(tpl.items) == 17
    assert [i.depth for i in tpl.items].count(1) == 1 and tpl.items[12].depth == 1


def test_real_template_threshold_evidence(inferencex_dir):
    items = _real_template(inferencex_dir).items
    scores = {(a.number, b.number): similarity(a.key, b.key) for a, b in itertools.combinations(items, 2)}
    twins = {(3, 4), (10, 11)}
    # Near-twin items are separated by the one-to-one assignment, not by the threshold.
    assert all(scores[t] > MATCH_THRESHOLD for t in twins)
    assert max(v for k, v in scores.items() if k not in twins) < 0.4 < MATCH_THRESHOLD
    # A rewrite that narrows the scope of the upstream-recipe item must not match it.
    narrowed = normalize(
        "Verified that every single-node vLLM/SGLang recipe in this PR is documented in the "
        "official vLLM recipes and/or the SGLang cookbook:"
    )
    assert similarity(narrowed, items[11].key) < MATCH_THRESHOLD


def test_real_template_against_generated_signoff(inferencex_dir):
    tpl = _real_template(inferencex_dir)
    md = (inferencex_dir / "inferencex-e2e/docs/PR_REVIEW_CHECKLIST.md").read_text()
    block = md[md.index("As a PR reviewer and CODEOWNER"):]
    block = block[: block.index("```")]
    lines = block.replace("- [ ]", "- [x]").split("\n")
    drifted = []
    for line in lines:
        if "passes evals" in line:
            continue  # a missing item
        if "chat templates" in line:
            line = line.replace("uses chat templates to align", "use a chat template so that they align")
        if "does not make the code quality any worse" in line:
            line = line.replace("[x]", "[ ]")
        drifted.append(line)
    body = "\n".join(drifted).replace("FILL_IN_GITHUB_USERNAME", "someone")
    so = parse_signoff(body)
    assert so.signed == "someone" and len(so.items) == 16
    matches = match_checklist(tpl, so)
    missing = [m.template_item.number for m in matches if m.signoff_item is None]
    unchecked = [m.template_item.number for m in matches if m.signoff_item is not None and not m.checked]
    assert missing == [4] and unchecked == [2]
    chat = next(m for m in matches if m.template_item.number == 5)
    assert chat.checked and MATCH_THRESHOLD <= chat.similarity < 1.0
    # The evals item's near-twin (validation) stays with its own sign-off line.
    assert next(m for m in matches if m.template_item.number == 3).similarity == 1.0


def test_seed_signoff_matches_every_item(inferencex_dir):
    if not SEED.is_file():
        pytest.skip("seed thread not present")
    text = SEED.read_text()
    start = text.index("As a PR reviewer and CODEOWNER, I have reviewed this and have:\n\n•")
    body = text[start: text.index("[github-actions]", start)]
    so = parse_signoff(body)
    assert so.signed == "seungrokj"
    assert len(so.items) == 17 and all(i.rendered and i.checked for i in so.items)
    assert "ROCm/ATOM" in so.additional_detail and "wo_a" in so.additional_detail
    matches = match_checklist(_real_template(inferencex_dir), so)
    assert all(m.signoff_item is not None and m.checked for m in matches)
    assert min(m.similarity for m in matches) >= 0.98
    assert [m.signoff_item.number for m in matches] == list(range(1, 18))
