"""Engine-patch waivers: the four required parts and their accepted spellings (Check 10)."""
from __future__ import annotations

from pathlib import Path

import pytest

from recipes.waivers import (
    PART_REMOVAL,
    PART_UPSTREAM,
    PART_WHAT,
    PART_WHY,
    REQUIRED_PARTS,
    classify_label,
    parse_waiver,
    waiver_path,
)

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "parsers"


def test_waiver_path():
    assert waiver_path("inferencex-e2e/docs/waiver/", 3088) == "inferencex-e2e/docs/waiver/3088.md"
    assert waiver_path("docs/waiver", 7) == "docs/waiver/7.md"


def test_heading_waiver_is_complete():
    w = parse_waiver((FIX / "waiver_headings.md").read_text(), "docs/waiver/4242.md")
    assert w.pr_number == 4242 and w.missing == [] and w.is_complete
    assert "EFA build" in w.what and "InfiniBand" in w.why
    assert w.upstream_links == ["https://github.com/sgl-project/sglang/pull/12345"]  # own-repo run dropped
    assert w.removal_plan.startswith("Drop the script")
    assert w.part_lines == {PART_WHAT: 7, PART_WHY: 11, PART_UPSTREAM: 15, PART_REMOVAL: 20}


def test_labelled_paragraphs_and_prose_removal():
    w = parse_waiver((FIX / "waiver_labels.md").read_text(), "docs/waiver/5.md")
    assert w.missing == []
    assert "conn.py" in w.what and "crashes" in w.why
    assert w.upstream_links == ["https://github.com/ai-dynamo/nixl/issues/1"]
    assert "when an upstream image" in w.removal_plan


def test_missing_parts_are_listed_in_order():
    text = "# Waiver\n\n## What is patched\n\nTBD\n\n## Why\n\nThe image crashes.\n\nSee https://github.com/SemiAnalysisAI/InferenceX/pull/1\n"
    w = parse_waiver(text, "docs/waiver/notanumber.md")
    assert w.pr_number is None
    assert w.missing == [PART_WHAT, PART_UPSTREAM, PART_REMOVAL]


def test_upstream_fallback_to_any_external_link():
    text = "## Exact patch and limits\nBackports a fix.\n## Why the image needs it\nIt hangs.\n" \
           "## Validation and removal\nRetire after [vLLM #9](https://github.com/vllm-project/vllm/pull/9) ships.\n"
    w = parse_waiver(text, "docs/waiver/9.md")
    assert w.missing == []
    assert w.upstream_links == ["https://github.com/vllm-project/vllm/pull/9"]


def test_empty_and_binary_waivers():
    assert parse_waiver("", "docs/waiver/1.md").missing == list(REQUIRED_PARTS)
    assert parse_waiver("\0\0", "docs/waiver/1.md").missing == list(REQUIRED_PARTS)


@pytest.mark.parametrize(
    "label, part",
    [
        ("What is changed", PART_WHAT),
        ("**What is patched:**", PART_WHAT),
        ("Exact patch and limits", PART_WHAT),
        ("Why the unmodified upstream image cannot run this benchmark", PART_WHY),
        ("Rationale", PART_WHY),
        ("Upstream PR / issue links", PART_UPSTREAM),
        ("Upstream references", PART_UPSTREAM),
        ("Removal plan", PART_REMOVAL),
        ("Validation and removal", PART_REMOVAL),
        ("Config covered", None),
        ("Status", None),
    ],
)
def test_label_spellings(label, part):
    assert classify_label(label) == part
