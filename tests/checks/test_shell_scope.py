"""checks.shell_scope.Scope.expand: one shell word as the shell hands it over (quote removal,
variables of the scope substituted). Literal runs are copied at once; these cases pin what the
character-by-character reading gave."""
from __future__ import annotations

import pytest

from checks.shell_scope import Scope
from recipes.scripts import analyze_script

TEXT = "A=1\nB='x y'\n"


@pytest.fixture
def scope() -> Scope:
    return Scope("t.sh", analyze_script(TEXT, "t.sh"), "/w", lambda n: {"OUT": "o"}.get(n), lines=TEXT.splitlines())


@pytest.mark.parametrize("word, kw, expected", [
    ("plain-word/with:chars", {}, "plain-word/with:chars"),
    ("'single $A \\\" kept'", {}, 'single $A \\" kept'),
    ("'unterminated $A", {}, "unterminated $A"),
    ('"dq $A and \'sq\'"', {}, "dq 1 and 'sq'"),
    ('"a\\$b \\x"', {}, "a$b \\x"),
    ("x${B}y$OUT", {}, "xx yyo"),
    ("$(date)", {}, None),
    ("pre $(date) post", {"keep": True}, "pre $(date) post"),
    ("run $A 'q' \"$B\"", {"defer": True}, "run $A q $B"),
    ("`cmd`", {}, None),
])
def test_expand(scope, word, kw, expected):
    assert scope.expand(word, 3, **kw) == expected


def test_a_backslash_in_double_quotes_before_an_ordinary_character_stays_with_it(scope):
    # bash: echo "C:\dir s/a\.b/" prints C:\dir s/a\.b/ (the character after it was dropped before).
    assert scope.expand('"C:\\dir s/a\\.b/"', 3) == "C:\\dir s/a\\.b/"


def test_file_lines_are_decoded_once_per_source_view():
    from checks.shell_scope import file_lines
    from recipes.source import MemorySource

    head, other = MemorySource({"r.sh": "a\nb\n"}), MemorySource({"r.sh": "c\n"})
    first = file_lines(head, "r.sh")
    assert first == ("a", "b") and file_lines(head, "r.sh") is first
    assert file_lines(other, "r.sh") == ("c",)
    assert file_lines(head, "missing.sh") == ()
