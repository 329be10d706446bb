"""perf-changelog.yaml: entries, the append-only byte contract, config-key selection (spec 4)."""
from __future__ import annotations

from pathlib import Path

import pytest

from recipes.changelog import diff_changelog, parse_changelog, resolve_config_keys

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "parsers" / "perf-changelog.yaml"
PATH = "perf-changelog.yaml"
NEW_ENTRY = (
    b"\n- config-keys:\n    - gamma-fp4-b200-sglang\n  description:\n    - \"Add gamma\"\n"
    b"  pr-link: https://github.com/Example/Bench/pull/20\n"
)


@pytest.fixture
def base() -> bytes:
    return FIXTURE.read_bytes()


def test_parse_entries_with_lines_and_flags(base):
    log = parse_changelog(base, PATH)
    assert log.findings == []
    assert [e.line for e in log.entries] == [1, 7, 17]
    first, second, third = log.entries
    assert first.config_keys == ["alpha-fp8-h100-vllm"] and first.pr_number == 10
    assert second.scenario_type == ["agentic-coding"] and second.evals_only
    assert second.description == ["Bump beta images", "second line"]
    assert second.line_of("evals-only") == 15 and second.line_of("nope") == 7
    assert third.append_only and third.pr_number is None and third.pr_link.endswith("/XXX")


@pytest.mark.parametrize(
    "text, code, line",
    [
        (b"- config-keys: [a]\n  description: [d]\n  pr-link: https://github.com/o/r/pull/1\n  colour: red\n", "changelog-unknown-key", 4),
        (b"- config-keys: a\n  description: [d]\n  pr-link: https://github.com/o/r/pull/1\n", "changelog-type", 1),
        (b"- config-keys: []\n  description: [d]\n  pr-link: https://github.com/o/r/pull/1\n", "changelog-empty", 1),
        (b"- description: [d]\n  pr-link: https://github.com/o/r/pull/1\n", "changelog-missing", 1),
        (b"- config-keys: [a]\n  description: [d]\n  pr-link: https://github.com/o/r/pull/1\n  scenario-type: [1k1k]\n", "changelog-scenario", 4),
        (b"- config-keys: [a]\n  description: [d]\n  pr-link: https://github.com/o/r/pull/1\n  evals-only: maybe\n", "changelog-type", 4),
        (b"- config-keys: [a]\n  description: [d]\n  pr-link: https://github.com/o/r/pull/1\n  append-only: true\n  all-evals: true\n", "changelog-append-only", 4),
        (b"- config-keys: [a]\n  description: [d]\n  pr-link: https://github.com/o/r/pull/1\n  eval-min-prefill-ep: 0\n", "changelog-type", 4),
        (b"- config-keys: [a]\n  description: [d]\n  pr-link: not a link\n", "changelog-pr-link", 3),
        (b"- just a string\n", "changelog-entry", 1),
        (b"config-keys: [a]\n", "changelog-shape", 1),
        (b"- config-keys: [a\n  description: [d]\n", "yaml", 2),
        (b"- config-keys: [a]\n\0\n", "binary", None),
        (b"- config-keys: [a]\n  description: [2026-13-45]\n", "yaml", 2),  # invalid date scalar
    ],
)
def test_bad_entries_become_findings(text, code, line):
    log = parse_changelog(text, PATH)
    hits = [f for f in log.findings if f.code == code]
    assert hits, log.findings
    assert hits[0].line == line and hits[0].path == PATH


def test_append_keeps_prefix_and_numbers_lines_in_head(base):
    head = base + NEW_ENTRY
    d = diff_changelog(base, head, PATH)
    assert d.prefix_ok and d.first_diff_line is None
    assert d.format_findings == [] and d.findings == []
    assert [e.config_keys for e in d.added] == [["gamma-fp4-b200-sglang"]]
    added = d.added[0]
    assert head.split(b"\n")[added.line - 1] == b"- config-keys:"
    assert added.line == base.count(b"\n") + 2
    assert head.split(b"\n")[added.line_of("pr-link") - 1].startswith(b"  pr-link:")


@pytest.mark.parametrize(
    "suffix, code",
    [
        (NEW_ENTRY[1:], "changelog-separator"),  # no empty line before the entry
        (b"\n" + NEW_ENTRY, "changelog-separator"),  # two empty lines
        (NEW_ENTRY + b"\n", "changelog-final-newline"),
        (NEW_ENTRY.rstrip(b"\n"), "changelog-final-newline"),
        (NEW_ENTRY.replace(b"Add gamma", b"Add\tgamma"), "changelog-bytes"),
        (NEW_ENTRY.replace(b"\n", b"\r\n"), "changelog-bytes"),
        (NEW_ENTRY + NEW_ENTRY[1:], "changelog-separator"),  # second entry glued on
    ],
)
def test_format_rules_of_the_suffix(base, suffix, code):
    d = diff_changelog(base, base + suffix, PATH)
    assert d.prefix_ok
    assert code in {f.code for f in d.format_findings}, d.format_findings


def test_edit_in_the_middle_breaks_the_prefix(base):
    head = base.replace(b"Bump beta images", b"Bump beta image", 1) + NEW_ENTRY
    d = diff_changelog(base, head, PATH)
    assert not d.prefix_ok
    assert d.first_diff_line == 12
    assert {f.code for f in d.findings} == {"changelog-prefix"}
    # Still report what is new by content: the edited entry and the appended one.
    assert [e.line for e in d.added] == [7, 24]


def test_new_deleted_and_unchanged_files(base):
    created = diff_changelog(None, base, PATH)
    assert created.prefix_ok and len(created.added) == 3
    # A brand-new file is checked whole: the fixture's historical "  " separator line shows.
    assert [(f.code, f.line) for f in created.format_findings] == [("changelog-separator", 17)]
    deleted = diff_changelog(base, None, PATH)
    assert not deleted.prefix_ok and deleted.findings[0].code == "changelog-deleted"
    same = diff_changelog(base, base, PATH)
    assert not same.changed and same.added == [] and same.prefix_ok


def test_malformed_appended_yaml_is_a_finding_with_head_line(base):
    head = base + b"\n- config-keys: [oops\n  description: [x]\n"
    d = diff_changelog(base, head, PATH)
    assert d.prefix_ok and d.added == []
    assert d.findings[0].code == "yaml" and d.findings[0].line > base.count(b"\n")


def test_resolve_config_keys():
    known = ["alpha-fp8-h100-vllm", "beta-fp4-b200-sglang", "beta-fp8-h200-vllm", "gamma"]
    keys, unmatched = resolve_config_keys(["beta-*-vllm", "gamma", "alpha-*", "nope-*", "beta"], known)
    assert keys == ["alpha-fp8-h100-vllm", "beta-fp8-h200-vllm", "gamma"]
    assert unmatched == ["nope-*", "beta"]
    assert resolve_config_keys(["*"], known) == (known, [])
    assert resolve_config_keys(["alpha.fp8*"], known) == ([], ["alpha.fp8*"])  # `.` is literal


def test_real_changelog(inferencex_dir):
    data = (inferencex_dir / "inferencex-e2e/perf-changelog.yaml").read_bytes()
    log = parse_changelog(data, PATH)
    assert len(log.entries) == 1101
    assert [f.severity for f in log.findings] == ["warning"]  # one `/pull/2305/changes` link
    seed = [e for e in log.entries if e.pr_number == 3603]
    assert len(seed) == 1 and seed[0].config_keys == ["dsv41flash-fp4-mi355x-atom-agentic-dspark"]
    assert seed[0].scenario_type == ["agentic-coding"] and seed[0].line == 9401
    # The snapshot's physical last entry is a later #3088 entry, not the seed's (merge order).
    assert log.entries[-1].pr_number == 3088 and log.entries[-1].line == 9590
    assert sum(e.evals_only for e in log.entries) == 6 and sum(e.append_only for e in log.entries) == 2


def test_real_changelog_prefix_rule_on_tmp_copies(inferencex_dir, tmp_path):
    base = (inferencex_dir / "inferencex-e2e/perf-changelog.yaml").read_bytes()
    appended = tmp_path / "appended.yaml"
    appended.write_bytes(base + NEW_ENTRY)
    d = diff_changelog(base, appended.read_bytes(), PATH)
    assert d.prefix_ok and d.format_findings == [] and len(d.added) == 1
    assert d.added[0].line == base.count(b"\n") + 2
    lines = base.split(b"\n")
    lines[4999] = lines[4999] + b" (edited)"
    edited = tmp_path / "edited.yaml"
    edited.write_bytes(b"\n".join(lines))
    e = diff_changelog(base, edited.read_bytes(), PATH)
    assert not e.prefix_ok and e.first_diff_line == 5000


# Shapes from the history the item-by-item reading must give exactly as the whole parse does:
# a `|` scalar with no blank line after it (its last newline is the item's), a `|+` scalar
# keeping its blank lines, a comment at column 0 between items, an entry with a finding.
ITEMS = (
    b"# perf changelog\n"
    b"- config-keys:\n    - a-fp8-mi355x-vllm\n  description: |\n    one\n    two\n"
    b"- config-keys:\n    - b-fp8-mi355x-vllm\n  description: |+\n    kept\n\n\n"
    b"# about the next one\n"
    b"- config-keys: [c-fp4-b200-sglang]\n  description:\n    - \"c\"\n  pr-link: https://github.com/Example/Bench/pull/7\n"
    b"\n- config-keys:\n    - d-fp4-b200-sglang\n  description:\n    - d\n  append-only: maybe\n"
)


def _whole_and_by_item(data: bytes):
    from recipes.changelog import _parse, _parse_by_item

    return _parse(data, PATH), _parse_by_item(data, PATH)


def test_reading_item_by_item_gives_the_whole_parse(base):
    for data in (ITEMS, base, base + NEW_ENTRY):
        whole, by_item = _whole_and_by_item(data)
        assert by_item is not None
        assert by_item.entries == whole.entries and by_item.findings == whole.findings
    whole, _ = _whole_and_by_item(ITEMS)
    assert whole.entries[0].description == ["one\ntwo\n"] and whole.entries[1].description == ["kept\n\n\n"]
    assert [(f.line, f.code) for f in whole.findings] == [
        (2, "changelog-missing"), (4, "changelog-type"), (7, "changelog-missing"), (9, "changelog-type"),
        (19, "changelog-missing"), (23, "changelog-type")]


def test_a_shell_and_in_a_description_is_no_anchor_the_changelog_is_still_read_item_by_item():
    # Real shape (3d5581562f): "gate the fast path to the tail (isl>=8192 && conc>=64)".
    data = ITEMS.replace(b"    one\n", b"    gate to the tail (isl>=8192 && conc>=64)\n")
    whole, by_item = _whole_and_by_item(data)
    assert by_item is not None
    assert by_item.entries == whole.entries and by_item.findings == whole.findings
    assert whole.entries[0].description == ["gate to the tail (isl>=8192 && conc>=64)\ntwo\n"]


def test_a_changelog_not_of_the_plain_shape_is_parsed_whole():
    from recipes.changelog import _parse_by_item

    anchored = ITEMS.replace(b"- a-fp8-mi355x-vllm", b"- &k a-fp8-mi355x-vllm")
    for data in (b"---\n" + ITEMS, anchored, ITEMS + b"key: value\n", b"- a: 'open\n- b'\n"):
        assert _parse_by_item(data, PATH) is None, data


def test_an_entry_inserted_above_others_is_the_one_added(base):
    # The common real case of a broken prefix: a PR's entry lands above entries merged before it.
    cut = base.index(b"\n- config-keys:", 10) + 1
    head = base[:cut] + NEW_ENTRY.lstrip(b"\n") + b"\n" + base[cut:]
    d = diff_changelog(base, head, PATH)
    assert not d.prefix_ok
    assert [e.config_keys for e in d.added] == [["gamma-fp4-b200-sglang"]]
    assert d.added[0].line == base[:cut].count(b"\n") + 1
