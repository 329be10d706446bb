"""CODEOWNERS parsing and last-match-wins ownership (spec section 7)."""
from __future__ import annotations

from pathlib import Path

import pytest

from recipes.codeowners import parse_codeowners

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "parsers" / "CODEOWNERS"


@pytest.fixture
def owners():
    return parse_codeowners(FIXTURE.read_text(), ".github/CODEOWNERS")


def test_specific_rule_beats_catch_all(owners):
    m = owners.owners_of("configs/vendor-a.yaml")
    assert m is not None and not m.is_catch_all
    assert m.owners == ["@alice", "@Bob-A", "@acme/vendor-a"]
    assert m.rule.line == 5
    assert m.users() == ["alice", "Bob-A"] and m.teams() == ["acme/vendor-a"]
    assert m.names_user("bob-a") and not m.names_user("carol")


def test_unlisted_path_falls_to_catch_all(owners):
    m = owners.owners_of("perf-changelog.yaml")
    assert m is not None and m.is_catch_all and m.owners == ["@acme/core"]
    # Anchored pattern: the same file name elsewhere is not the vendor's.
    assert owners.owners_of("other/configs/vendor-a.yaml").is_catch_all


def test_last_matching_line_wins(owners):
    assert owners.owners_of("docs/guide.txt").owners == ["@doc-writer"]
    assert owners.owners_of("docs/guide.md").owners == ["@md-owner"]  # *.md is later
    assert owners.owners_of("docs/internal/deep/x.txt").owners == ["@acme/core"]
    assert owners.owners_of("build/out.bin").owners == ["@builder"]
    assert owners.owners_of("src/build/out.bin").is_catch_all  # `/build/` is anchored


def test_escaped_space_and_everyone(owners):
    assert owners.owners_of("weird path with space.txt").owners == ["@spacey"]
    assert owners.everyone_users() == {"alice", "bob-a", "doc-writer", "md-owner", "builder", "spacey"}  # carol: skipped line
    assert "@acme/vendor-a" in owners.everyone() and "acme/core" in owners.everyone_teams()


def test_bad_lines_are_findings_not_crashes(owners):
    by_line = {f.line: f for f in owners.findings}
    assert by_line[11].code == "codeowners-negation"
    assert by_line[12].code == "codeowners-range"  # GitHub does not support `[ ]`
    assert by_line[14].code == "codeowners-owner" and "not-an-owner" in by_line[14].message
    # GitHub skips a line with an invalid owner: the catch-all decides, not a half-read line.
    assert owners.owners_of("notes.txt").is_catch_all
    assert owners.owners_of("negated.txt").is_catch_all


def test_no_rules_and_binary():
    assert parse_codeowners("# only comments\n", "C").owners_of("a") is None
    bad = parse_codeowners("* @a\0\n", "C")
    assert bad.rules == [] and bad.findings[0].code == "binary"


def test_root_slash_matches_nothing_on_github():
    # GitHub's CODEOWNERS errors API: "The pattern `/` will never match anything, did you mean `*`?"
    co = parse_codeowners("/ @root-owner\nsrc/ @dev\n", "C")
    assert co.owners_of("README.md") is None
    assert co.findings[0].code == "codeowners-root" and co.findings[0].line == 1
    assert not co.owners_of("src/a.py").is_catch_all


@pytest.mark.parametrize("line, code", [
    ("docs/ user-without-at", "codeowners-owner"),
    ("docs/ @ok not-an-owner", "codeowners-owner"),
    ("docs/ @alice,", "codeowners-owner"),
    ("docs/[ab]/ @alice", "codeowners-range"),
    ("\\#docs @alice", "codeowners-escape"),
    ("!docs/ @alice", "codeowners-negation"),
])
def test_lines_github_skips_do_not_apply(line, code):
    co = parse_codeowners(f"* @core\n{line}\n", "C")
    assert [f.code for f in co.findings] == [code] and co.findings[0].line == 2
    assert co.owners_of("docs/a.md").owners == ["@core"]  # the earlier line still decides


def test_a_pattern_without_owners_is_still_an_unowned_rule():
    co = parse_codeowners("* @core\ndocs/\n", "C")
    assert co.findings == [] and co.owners_of("docs/a.md").owners == []


def test_real_codeowners(inferencex_dir):
    co = parse_codeowners((inferencex_dir / ".github/CODEOWNERS").read_text(), ".github/CODEOWNERS")
    assert co.findings == []
    amd = co.owners_of("configs/amd-master.yaml")
    assert not amd.is_catch_all
    assert set(amd.users()) == {"billishyahao", "chunfangamd", "seungrokj", "yctseng0211", "1am9trash"}
    assert amd.names_user("seungrokj") and not amd.names_user("ankur-singh")
    log = co.owners_of("perf-changelog.yaml")
    assert log.is_catch_all and log.owners == ["@InferenceX/core"]
    # The stored file names old-layout paths, so the new-layout config is catch-all only.
    assert co.owners_of("inferencex-e2e/configs/amd-master.yaml").is_catch_all
    assert "MODELS.md" == co.owners_of("inferencex-e2e/docs/MODELS.md").rule.pattern
    assert "seungrokj" in co.everyone_users()
