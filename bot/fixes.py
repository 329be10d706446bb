"""Mechanical fixes (checks/fixes.py) made concrete: the new text of the one YAML line a fix changes
(or the one line it adds to a block mapping), computed with ruamel.yaml's round-trip loader and
dumper (so the value keeps its quoting style), spliced into the file so every other byte stays as it was; applied to a working tree for
`check --local --fix`, or offered on GitHub as a ```suggestion review comment on that line."""
from __future__ import annotations

import io
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from checks.engine import Verdict
from checks.fixes import FIXES_KEY, OP_ADD, OP_SET

log = logging.getLogger(__name__)

SUGGESTION_MARKER = "<!-- infx-review suggestion check={check} path={path} line={line} -->"
SUGGESTION_BODY = "{marker}\n**Check {check}**: {why}.\n\n```suggestion\n{line}\n```\n"
MSG_NOT_FOUND = "{path}:{line}: no mapping entry {key!r} on that line"
MSG_UNSAFE = "{path}:{line}: the edit would change more than that line"
MSG_UNREADABLE = "{path}: {error}"
MSG_NO_MAPPING = "{path}:{line}: no block mapping {parent} there to add {key!r} to"
MSG_PRESENT = "{path}:{line}: {key!r} is already set there"


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
    op: str = OP_SET  # OP_SET: the value of `key` on `line`; OP_ADD: a new entry `key` (see checks/fixes.py)
    parent: str | None = None  # OP_ADD: the mapping entry on `line` whose block gets the entry


def fixes_of(verdict: Verdict) -> list[Fix]:
    """Every mechanical fix the verdict's failing rows offer, in row order, one per file line."""
    out, seen = [], set()
    for row in verdict.rows:
        for f in row.details.get(FIXES_KEY) or []:
            key = (f["path"], int(f["line"]))
            if key in seen:
                continue
            seen.add(key)
            parent = f.get("parent")
            out.append(Fix(row.number, f["path"], int(f["line"]), str(f["key"]), str(f["value"]), str(f.get("why", "")),
                           op=str(f.get("op", OP_SET)), parent=str(parent) if parent is not None else None))
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


def _target_mapping(doc: Any, fix: Fix) -> Any:
    """The block mapping an OP_ADD fix adds to, or None: the value of the entry `fix.parent`
    whose key is on `fix.line`, or (no parent) the mapping whose first key is on that line."""
    from ruamel.yaml.comments import CommentedMap, CommentedSeq

    line0 = fix.line - 1
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, CommentedMap):
            if fix.parent is None and node and _key_line(node, next(iter(node))) == line0:
                return node
            for k in node:
                if fix.parent is not None and str(k) == fix.parent and _key_line(node, k) == line0:
                    value = node[k]
                    return value if isinstance(value, CommentedMap) else None
                stack.append(node[k])
        elif isinstance(node, CommentedSeq):
            stack.extend(node)
    return None


def _key_line(mapping: Any, key: Any) -> int | None:
    try:
        return mapping.lc.key(key)[0]
    except (KeyError, TypeError, AttributeError):
        return None


def _plain(node: Any) -> Any:
    """A round-trip node as plain Python data (comments and styles dropped), for comparing."""
    if isinstance(node, dict):
        return {str(k): _plain(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_plain(v) for v in node]
    return node if node is None or isinstance(node, (bool, int, float)) else str(node)


def added_line(text: str, fix: Fix) -> tuple[int, str]:
    """(anchor, new line) of an OP_ADD fix: the new entry goes right after line `anchor`, the last
    line of the target mapping's block, indented like its entries and quoted like them (double
    quotes when they are not quoted: the harness reads strings); every existing line stays as it
    is. Raises FixError when the mapping is not a block mapping, already has the key, or the
    result would not parse to the same document plus that one entry."""
    from ruamel.yaml.scalarstring import DoubleQuotedScalarString, SingleQuotedScalarString

    y = _yaml()
    try:
        doc = y.load(text)
    except Exception as exc:  # a file that no longer parses gets no fix
        raise FixError(MSG_UNREADABLE.format(path=fix.path, error=exc)) from None
    mapping = _target_mapping(doc, fix)
    parent = f"{fix.parent!r}" if fix.parent else "entry"
    if mapping is None or not mapping or mapping.fa.flow_style():
        raise FixError(MSG_NO_MAPPING.format(path=fix.path, line=fix.line, parent=parent, key=fix.key))
    if any(str(k) == fix.key for k in mapping):
        raise FixError(MSG_PRESENT.format(path=fix.path, line=fix.line, key=fix.key))
    indent = mapping.lc.key(next(iter(mapping)))[1]
    lines = text.splitlines()
    # The block ends before the first later line that is indented less than its entries (blank
    # and comment-only lines do not end it; trailing ones belong to what follows).
    last_key = max(mapping, key=lambda k: _key_line(mapping, k) or 0)
    last = _key_line(mapping, last_key) or 0
    seq_value = isinstance(mapping[last_key], list)
    end = last
    for i in range(last + 1, len(lines)):
        stripped = lines[i].strip()
        if not stripped or stripped.startswith("#"):
            continue
        ind = len(lines[i]) - len(lines[i].lstrip(" "))
        if ind > indent or (ind == indent and seq_value and stripped.startswith("- ")):
            end = i  # the last entry's value goes on (a nested block, or `key:` then `- item` lines)
            continue
        break
    quoted = [type(v) for v in mapping.values() if isinstance(v, (SingleQuotedScalarString, DoubleQuotedScalarString))]
    if quoted:
        value: Any = quoted[-1](fix.value)
    elif ": " not in fix.value and " #" not in fix.value and _reads_back(y, fix.value):
        value = fix.value  # plain, like its unquoted siblings (a URL), when it reads back as that string
    else:
        value = DoubleQuotedScalarString(fix.value)  # `true` would read as a boolean
    new = " " * indent + f"{fix.key}: " + _rendered(fix.key, value)
    out = lines[:end + 1] + [new] + lines[end + 1:]
    try:
        again = _target_mapping(y.load("\n".join(out) + "\n"), fix)
        before = _plain(y.load(text))
        after_doc = y.load("\n".join(out) + "\n")
    except Exception:
        again = None
    if again is None or str(again.get(fix.key)) != fix.value:
        raise FixError(MSG_UNSAFE.format(path=fix.path, line=fix.line))
    target_after = _target_mapping(after_doc, fix)
    del target_after[fix.key]
    if _plain(after_doc) != before:
        raise FixError(MSG_UNSAFE.format(path=fix.path, line=fix.line))
    return end + 1, new


def _reads_back(y: Any, value: str) -> bool:
    """Whether `value` written plain reads back as that same string."""
    try:
        return _plain(y.load(f"k: {value}\n")["k"]) == value
    except Exception:  # noqa: BLE001 - not a plain scalar
        return False


def suggestion_line(text: str, fix: Fix) -> int:
    """The line a fix's review comment goes on: the changed line, or the one an added line follows."""
    return added_line(text, fix)[0] if fix.op == OP_ADD else fix.line


def suggested_text(text: str, fix: Fix) -> str:
    """What the ```suggestion block holds: the fixed line, or the anchor line followed by the new one
    (GitHub replaces the commented line by the suggestion's lines)."""
    if fix.op == OP_ADD:
        anchor, new = added_line(text, fix)
        return text.splitlines()[anchor - 1] + "\n" + new
    return fixed_line(text, fix)


def apply_fix(text: str, fix: Fix) -> str:
    """`text` with line `fix.line` replaced by its fixed version (or the new entry's line added);
    every other byte unchanged."""
    lines = text.splitlines(keepends=True)
    if fix.op == OP_ADD:
        anchor, new = added_line(text, fix)
        ending = lines[anchor - 1][len(lines[anchor - 1].rstrip("\r\n")):]
        if not ending:  # the file's last line had no newline: the added line keeps that shape
            lines[anchor - 1] += "\r\n" if "\r\n" in text else "\n"
            return "".join(lines[:anchor]) + new + "".join(lines[anchor:])
        return "".join(lines[:anchor]) + new + ending + "".join(lines[anchor:])
    new = fixed_line(text, fix)
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
                                          line=suggested_text(text, fix))


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
