"""The bounds of docs/bounds.md: each is reached as a named finding, never a hang, and the
regular expressions rewritten to read hostile text in linear time match what the old patterns
matched (compared on seeded random strings)."""
from __future__ import annotations

import fnmatch
import random
import re

import pytest

from recipes.launch.path.conditions import _MATCHES
from recipes.launch.path.launch_path import _plain_tail
from recipes import claims, waivers
from recipes.models_md import _arm
from recipes.scripts import analyze_script, trim_pattern

LAUNCH = "python3 -m sglang.launch_server --model-path m --tp 8\n"


def _bounds(text: str) -> list[str]:
    return [f.message for f in analyze_script(text, "x.sh").findings if f.code == "shell-cap"]


@pytest.mark.parametrize("name, script", [
    ("MAX_VALUE_CHARS", "x=abcdefgh\n" + 'x="$x$x"\n' * 20),
    ("MAX_ARRAY_ITEMS", "A=(a b c d)\n" + 'A=("${A[@]}" "${A[@]}")\n' * 13),
    ("MAX_PRINTF_WIDTH", "x=$(printf '%0999999999d' 1)\n"),
    ("MAX_TRIM_CHARS", "x=" + "a" * 5000 + "\ny=${x%%*a?b}\n"),
    ("MAX_CONDITION_CHARS", "if [ a ]; then :\n" + 'elif [ "$X" = some-value-of-some-length ]; then :\n' * 600 + "fi\n"),
    ("MAX_COMMANDS", "echo a\n" * 5001),
    ("MAX_SEPARATORS", "a;" * 30_001),
    ("MAX_LIST_OPERATORS", "a&&" * 20_001 + "a\n"),
    ("MAX_BRACKET_DEPTH", "x=" + "$(" * 501 + ")" * 501 + "\n"),
    ("MAX_NESTING", "e='eval \"$e\"'\neval \"$e\"\n"),
    ("MAX_NESTING", "sudo sudo sudo sudo sed -i s/a/b/ /x\n"),
])
def test_each_bound_is_a_finding_naming_it(name, script):
    found = _bounds(script + LAUNCH)
    assert found and any(f"({name})" in m for m in found), found
    assert all(m.startswith("could not verify line ") for m in found)


def test_a_bound_that_stops_the_walk_has_no_line_but_names_one():
    finding = next(f for f in analyze_script("echo a\n" * 5001, "x.sh").findings if f.code == "shell-cap")
    assert finding.line is None and "line 5001 of x.sh" in finding.message
    assert "the rest of the script was not read" in finding.message


def test_a_value_bound_keeps_the_value_as_written_and_its_line():
    a = analyze_script("x=abcdefgh\n" + 'x="$x$x"\n' * 20, "x.sh")
    first = next(f for f in a.findings if f.code == "shell-cap")
    assert first.line == 14  # line 14 doubles 2**15 characters to 2**16: over, with the text of the references
    assert a.partial and all(len(loc.resolved or "") <= 65_536 for _, loc, _ in a.assignments)


def test_the_real_history_sizes_are_far_under_the_bounds():
    # A plain script of the history's shapes reaches none (the replay over every script
    # version of the history found none: docs/bounds.md).
    text = "set -e\n" + "".join(f'if [ "$CONC" -gt {i} ]; then\n  ARGS+=(--x{i} "$V")\nfi\n' for i in range(200)) + LAUNCH
    assert _bounds(text) == []


def _slow_trim(value: str, op: str, pattern: str) -> str:
    rx = re.compile(fnmatch.translate(pattern), re.S)
    cuts = range(len(value) + 1)
    if op in ("#", "##"):
        for i in (cuts if op == "#" else reversed(cuts)):
            if rx.match(value[:i]):
                return value[i:]
    else:
        for i in (reversed(cuts) if op == "%" else cuts):
            if rx.match(value[i:]):
                return value[:i]
    return value


def _strings(rng: random.Random, alphabet: list[str], n: int, length: int) -> list[str]:
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, length))) for _ in range(n)]


def test_the_fast_trims_cut_as_the_glob_does():
    rng = random.Random(3)
    for value in _strings(rng, list("ab/_:."), 3000, 8):
        lit = "".join(rng.choice("ab/_") for _ in range(rng.randint(0, 3)))
        pattern = rng.choice([lit, "*" + lit, lit + "*", "*", lit + "?"])
        op = rng.choice(["#", "##", "%", "%%"])
        assert trim_pattern(value, op, pattern) == _slow_trim(value, op, pattern), (value, op, pattern)


def _old_spans(line: str) -> list[tuple[int, int]]:
    spans = []
    for m in re.finditer(r"\s*(?:→|->|=>|⟶)\s*", line):
        start = max(line.rfind(sep, 0, m.start()) for sep in claims._CLAUSE_BREAKS)
        spans.append((max(start, 0), m.start()))
    for m in claims._FROM_TO_RE.finditer(line):
        spans.append((m.start(1), m.end(1)))
    return spans


def _first(rx: re.Pattern, s: str, group: int | None = None):
    m = rx.search(s)
    return None if m is None else (m.groups() if group is None else m.group(group))


OLD_ARM = re.compile(r"\b(non-)?([a-z][a-z0-9.+]*)\s+arm\b", re.IGNORECASE)
OLD_TAIL = re.compile(r"""[)}`'"]?/([A-Za-z0-9_.+\-]+(?:/[A-Za-z0-9_.+\-]+)*)["']?$""")
OLD_MATCHES = re.compile(r"""(\S+) matches (\S+)""")
OLD_PROSE = re.compile(r"[^.]*\b(remove|retire|delete|drop)\b[^.]*\b(once|when|after|until)\b[^.]*\.?", re.IGNORECASE)


@pytest.mark.parametrize("name, old, new, alphabet", [
    ("arrows", _old_spans, claims._before_spans, ["a", " ", "->", "=>", ", ", ". ", " to ", "(", "from x to ", "\t"]),
    ("arm", lambda s: _first(OLD_ARM, s), _arm, ["a", "non-", " arm", " ", "x86", ".", "B", "-", "9", "_", "+"]),
    ("path tail", lambda s: _first(OLD_TAIL, s, 1), _plain_tail, list("a/._$\"{}()'")),
    ("case test", lambda s: [m.groups() for m in OLD_MATCHES.finditer(s)],
     lambda s: [m.groups() for m in _MATCHES.finditer(s)], ["a", " matches ", " ", "|", "\n"]),
    ("removal plan", lambda s: (lambda m: m.group(0).strip() if m else None)(OLD_PROSE.search(s)), waivers._prose_removal,
     ["remove", "once", ".", " ", "x", "\n", "Drop", "when"]),
])
def test_the_linear_readings_match_the_old_patterns(name, old, new, alphabet):
    for s in _strings(random.Random(name), alphabet, 4000, 12):
        assert new(s) == old(s), (name, s)
