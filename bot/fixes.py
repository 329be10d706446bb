"""Mechanical fixes (checks/fixes.py) made concrete: the new text of the one YAML line a fix changes,
computed with ruamel.yaml's round-trip loader and dumper (so the value keeps its quoting style),
spliced into the file so every other byte stays as it was; applied to a working tree for
`check --local --fix`, or offered on GitHub as a ```suggestion review comment on that line."""
from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from checks.engine import Verdict
from checks.fixes import FIXES_KEY

log = logging.getLogger(__name__)

SUGGESTION_MARKER = "<!-- infx-review suggestion check={check} path={path} line={line} -->"
SUGGESTION_BODY = "{marker}\n**Check {check}**: {why}.\n\n```suggestion\n{line}\n```\n"
MSG_NOT_FOUND = "{path}:{line}: no mapping entry {key!r} on that line"
MSG_UNSAFE = "{path}:{line}: the edit would change more than that line"
MSG_UNREADABLE = "{path}: {error}"


class FixError(ValueError):
    """A fix that cannot be made safely (the file moved on, or the edit is not one line)."""


@dataclass(frozen=True)
class Fix:
    check: int
    path: str
    line: int
    key: str
    value: str
    why: str


def fixes_of(verdict: Verdict) -> list[Fix]:
    """Every mechanical fix the verdict's failing rows offer, in row order, one per file line."""
    out, seen = [], set()
    for row in verdict.rows:
        for f in row.details.get(FIXES_KEY) or []:
            key = (f["path"], int(f["line"]))
            if key in seen:
                continue
            seen.add(key)
            out.append(Fix(row.number, f["path"], int(f["line"]), str(f["key"]), str(f["value"]), str(f.get("why", ""))))
    return out


def _yaml():
    from ruamel.yaml import YAML

    y = YAML(typ="rt")
    y.preserve_quotes = True
    y.width = 1 << 16  # never fold a long line
    return y


def _entry_on_line(node: Any, line0: int, key: str) -> tuple[Any, Any] | None:
    """(mapping, key) of the entry `key` whose value starts on 0-based `line0`."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    if isinstance(node, CommentedMap):
        for k in node:
            try:
                value_line = node.lc.value(k)[0]
            except (KeyError, TypeError, AttributeError):
                value_line = None
            if str(k) == key and value_line == line0:
                return node, k
            found = _entry_on_line(node[k], line0, key)
            if found:
                return found
    elif isinstance(node, CommentedSeq):
        for item in node:
            found = _entry_on_line(item, line0, key)
            if found:
                return found
    return None


def _token_end(line: str, col: int) -> int:
    """Where the scalar starting at `col` ends: its closing quote, or a plain scalar's last
    character before a comment."""
    quote = line[col:col + 1]
    if quote == "'":
        i = col + 1
        while i < len(line):
            if line[i] == "'":
                if line[i + 1:i + 2] == "'":
                    i += 2
                    continue
                return i + 1
            i += 1
        raise ValueError("unclosed quote")
    if quote == '"':
        i = col + 1
        while i < len(line):
            if line[i] == "\\":
                i += 2
                continue
            if line[i] == '"':
                return i + 1
            i += 1
        raise ValueError("unclosed quote")
    hash_at = line.find(" #", col)
    stop = len(line) if hash_at < 0 else hash_at
    return col + len(line[col:stop].rstrip())


def _rendered(key: str, value: Any) -> str:
    """How ruamel's round-trip dumper writes `value` as the value of `key`."""
    y = _yaml()
    buf = io.StringIO()
    y.dump({key: value}, buf)
    return buf.getvalue().split(": ", 1)[1].rstrip("\n")


def fixed_line(text: str, fix: Fix) -> str:
    """The new text of line `fix.line` (without its newline): the value token replaced by the new
    value as ruamel's round-trip dumper writes it, in the quoting style the old one had; every
    other character of the line (indentation, key, spacing, comment) as it was. Raises
    FixError when the fix does not match the file."""
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

    y = _yaml()
    try:
        doc = y.load(text)
    except Exception as exc:  # a file that no longer parses gets no fix
        raise FixError(MSG_UNREADABLE.format(path=fix.path, error=exc)) from None
    found = _entry_on_line(doc, fix.line - 1, fix.key)
    if found is None:
        raise FixError(MSG_NOT_FOUND.format(path=fix.path, line=fix.line, key=fix.key))
    mapping, key = found
    old = mapping[key]
    if isinstance(old, (SingleQuotedScalarString, DoubleQuotedScalarString)):
        new = type(old)(fix.value)
    elif isinstance(old, str):
        new = DoubleQuotedScalarString(fix.value)
    else:
        new = SingleQuotedScalarString(fix.value)  # a number becomes the string the harness reads
    line = text.splitlines()[fix.line - 1]
    col = mapping.lc.value(key)[1]
    try:
        end = _token_end(line, col)
    except ValueError:
        raise FixError(MSG_UNSAFE.format(path=fix.path, line=fix.line)) from None
    out = line[:col] + _rendered(str(key), new) + line[end:]
    # The result must parse to the intended value, on the same line, and nothing else may move.
    check = text.splitlines(keepends=True)
    check[fix.line - 1] = out + "\n"
    try:
        again = _entry_on_line(y.load("".join(check)), fix.line - 1, fix.key)
    except Exception:
        again = None
    if again is None or str(again[0][again[1]]) != fix.value:
        raise FixError(MSG_UNSAFE.format(path=fix.path, line=fix.line))
    return out


def apply_fix(text: str, fix: Fix) -> str:
    """`text` with line `fix.line` replaced by its fixed version; every other byte unchanged."""
    new = fixed_line(text, fix)
    lines = text.splitlines(keepends=True)
    ending = lines[fix.line - 1][len(lines[fix.line - 1].rstrip("\r\n")):]
    lines[fix.line - 1] = new + ending
    return "".join(lines)


def apply_suggestion(text: str, line: int, suggestion: str) -> str:
    """What GitHub does when a single-line ```suggestion is applied: that line is replaced by the
    suggestion's lines (the file's line ending kept)."""
    lines = text.splitlines(keepends=True)
    ending = lines[line - 1][len(lines[line - 1].rstrip("\r\n")):] or "\n"
    lines[line - 1:line] = [s + ending for s in suggestion.split("\n")]
    return "".join(lines)


def suggestion_comment(fix: Fix, text: str) -> tuple[str, str]:
    """(marker, body) of the review comment suggesting `fix` on its line."""
    marker = SUGGESTION_MARKER.format(check=fix.check, path=fix.path, line=fix.line)
    return marker, SUGGESTION_BODY.format(marker=marker, check=fix.check, why=fix.why.rstrip("."),
                                          line=fixed_line(text, fix))


def apply_to_tree(root: Path, fixes: Iterable[Fix]) -> list[tuple[Fix, str | None]]:
    """`check --local --fix`: each fix applied to the working tree under `root`; (fix, None) when
    applied, (fix, why not) otherwise."""
    out: list[tuple[Fix, str | None]] = []
    for fix in fixes:
        path = root / fix.path
        try:
            raw = path.read_bytes()
            text = raw.decode("utf-8")
            path.write_bytes(apply_fix(text, fix).encode("utf-8"))
            out.append((fix, None))
        except (OSError, UnicodeDecodeError, FixError) as exc:
            out.append((fix, str(exc)))
    return out
