"""perf-changelog.yaml: entries, the append-only byte contract and config-key selection (spec 4)."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from pydantic import ConfigDict, Field

from .errors import Finding, RecipeError
from .model import Model
from .yamlio import MAX_YAML_VALUES, YamlDoc, decode_text, load_chunk, load_yaml, top_level_chunks

KEY_CONFIG_KEYS = "config-keys"
KEY_DESCRIPTION = "description"
KEY_PR_LINK = "pr-link"
KEY_SCENARIO_TYPE = "scenario-type"
KEY_EVALS_ONLY = "evals-only"
KEY_ALL_EVALS = "all-evals"
KEY_APPEND_ONLY = "append-only"
KEY_EVAL_MIN_PREFILL_EP = "eval-min-prefill-ep"
KNOWN_KEYS = (
    KEY_CONFIG_KEYS, KEY_DESCRIPTION, KEY_PR_LINK, KEY_SCENARIO_TYPE,
    KEY_EVALS_ONLY, KEY_ALL_EVALS, KEY_APPEND_ONLY, KEY_EVAL_MIN_PREFILL_EP,
)
SCENARIO_TYPES = ("fixed-seq-len", "agentic-coding")
ENTRY_START = b"- config-keys:"
# New entries may carry the `XXX` placeholder; the merge helper canonicalises it (spec 4.1).
PR_LINK_RE = re.compile(r"^https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/pull/(\d+|XXX)/?$")
_FORBIDDEN_BYTES = ((b"\r", "CR"), (b"\t", "TAB"), (b"\0", "NUL"))


class ChangelogEntry(Model):
    """One changelog item; `line` is the 1-based line of its `- config-keys:` in the file."""

    model_config = ConfigDict(frozen=True)

    config_keys: list[str]
    description: list[str]
    pr_link: str | None = None
    scenario_type: list[str] = Field(default_factory=list)
    evals_only: bool = False
    all_evals: bool = False
    append_only: bool = False
    eval_min_prefill_ep: int | None = None
    extra: dict[str, Any] = Field(default_factory=dict)
    path: str
    line: int
    key_lines: dict[str, int] = Field(default_factory=dict)
    description_lines: list[int] = Field(default_factory=list)  # the line of each description item

    def line_of(self, key: str) -> int:
        """Line of `key` (e.g. "pr-link") in this entry, else the entry's first line."""
        return self.key_lines.get(key, self.line)

    @property
    def pr_number(self) -> int | None:
        m = PR_LINK_RE.match(self.pr_link or "")
        return int(m.group(1)) if m and m.group(1).isdigit() else None


@dataclass
class Changelog:
    path: str
    entries: list[ChangelogEntry] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


@dataclass
class ChangelogDiff:
    """What a PR did to the changelog. `added` are the entries of the appended suffix, with
    line numbers of the head file; `format_findings` are the byte rules of spec 4.2."""

    path: str
    added: list[ChangelogEntry] = field(default_factory=list)
    prefix_ok: bool = True
    first_diff_line: int | None = None
    format_findings: list[Finding] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    changed: bool = False

    @property
    def all_findings(self) -> list[Finding]:
        return [*self.findings, *self.format_findings]


def _finding(path: str, line: int | None, message: str, code: str, severity: str = "error") -> Finding:
    return Finding(path=path, line=line, message=message, code=code, severity=severity)  # type: ignore[arg-type]


def _str_list(value: Any, key: str, path: str, line: int, out: list[Finding]) -> list[str]:
    if isinstance(value, str):
        out.append(_finding(path, line, f"`{key}` must be a list, not a single string", "changelog-type"))
        value = [value]
    if not isinstance(value, list):
        out.append(_finding(path, line, f"`{key}` must be a list of strings", "changelog-type"))
        return []
    items: list[str] = []
    for item in value:
        if isinstance(item, str):
            items.append(item)
        elif isinstance(item, (int, float)) and not isinstance(item, bool):
            out.append(_finding(path, line, f"`{key}` item {item!r} is not a string", "changelog-type", "warning"))
            items.append(str(item))
        else:
            out.append(_finding(path, line, f"`{key}` item {item!r} is not a string", "changelog-type"))
    if not items:
        out.append(_finding(path, line, f"`{key}` needs at least one item", "changelog-empty"))
    return items


def _entry(raw: Any, index: int, doc: YamlDoc, path: str, out: list[Finding]) -> ChangelogEntry | None:
    line = doc.line(index) or 1
    if not isinstance(raw, dict):
        out.append(_finding(path, line, "changelog entry must be a mapping", "changelog-entry"))
        return None
    key_lines = {str(k): doc.line(index, k) or line for k in raw}

    def kl(key: str) -> int:
        return key_lines.get(key, line)

    for key in (KEY_CONFIG_KEYS, KEY_DESCRIPTION, KEY_PR_LINK):
        if key not in raw:
            out.append(_finding(path, line, f"entry is missing `{key}`", "changelog-missing"))
    config_keys = _str_list(raw.get(KEY_CONFIG_KEYS, []), KEY_CONFIG_KEYS, path, kl(KEY_CONFIG_KEYS), out) if KEY_CONFIG_KEYS in raw else []
    description = _str_list(raw.get(KEY_DESCRIPTION, []), KEY_DESCRIPTION, path, kl(KEY_DESCRIPTION), out) if KEY_DESCRIPTION in raw else []
    pr_link = raw.get(KEY_PR_LINK)
    if pr_link is not None and not isinstance(pr_link, str):
        out.append(_finding(path, kl(KEY_PR_LINK), "`pr-link` must be a string", "changelog-type"))
        pr_link = str(pr_link)
    if isinstance(pr_link, str) and not PR_LINK_RE.match(pr_link):
        out.append(_finding(path, kl(KEY_PR_LINK), f"`pr-link` {pr_link!r} is not a GitHub pull-request URL", "changelog-pr-link", "warning"))
    scenario_type: list[str] = []
    if KEY_SCENARIO_TYPE in raw:
        scenario_type = _str_list(raw[KEY_SCENARIO_TYPE], KEY_SCENARIO_TYPE, path, kl(KEY_SCENARIO_TYPE), out)
        for s in scenario_type:
            if s not in SCENARIO_TYPES:
                out.append(_finding(path, kl(KEY_SCENARIO_TYPE), f"unknown scenario-type {s!r} (expected one of {', '.join(SCENARIO_TYPES)})", "changelog-scenario"))
    flags: dict[str, bool] = {}
    for key in (KEY_EVALS_ONLY, KEY_ALL_EVALS, KEY_APPEND_ONLY):
        value = raw.get(key, False)
        if not isinstance(value, bool):
            out.append(_finding(path, kl(key), f"`{key}` must be true or false, not {value!r}", "changelog-type"))
            value = False
        flags[key] = value
    min_ep = raw.get(KEY_EVAL_MIN_PREFILL_EP)
    if min_ep is not None and (isinstance(min_ep, bool) or not isinstance(min_ep, int) or min_ep < 1):
        out.append(_finding(path, kl(KEY_EVAL_MIN_PREFILL_EP), f"`{KEY_EVAL_MIN_PREFILL_EP}` must be an integer >= 1, not {min_ep!r}", "changelog-type"))
        min_ep = None
    if flags[KEY_APPEND_ONLY] and (flags[KEY_EVALS_ONLY] or flags[KEY_ALL_EVALS]):
        out.append(_finding(path, kl(KEY_APPEND_ONLY), "`append-only` cannot be combined with `evals-only` or `all-evals`", "changelog-append-only"))
    extra = {str(k): v for k, v in raw.items() if k not in KNOWN_KEYS}
    for k in extra:
        out.append(_finding(path, kl(k), f"unknown key `{k}` in changelog entry", "changelog-unknown-key"))
    return ChangelogEntry(
        config_keys=config_keys,
        description=description,
        pr_link=pr_link,
        scenario_type=scenario_type,
        evals_only=flags[KEY_EVALS_ONLY],
        all_evals=flags[KEY_ALL_EVALS],
        append_only=flags[KEY_APPEND_ONLY],
        eval_min_prefill_ep=min_ep,
        extra=extra,
        path=path,
        line=line,
        key_lines=key_lines,
        description_lines=[doc.line(index, KEY_DESCRIPTION, i) or kl(KEY_DESCRIPTION) for i in range(len(description))],
    )


def _parse(data: bytes | str, path: str, line_offset: int = 0) -> Changelog:
    log = Changelog(path=path)
    try:
        doc = load_yaml(data, path, line_offset=line_offset)
    except RecipeError as e:
        log.findings.append(e.finding)
        return log
    if doc.data is None:
        return log
    if not isinstance(doc.data, list):
        log.findings.append(_finding(path, doc.line() or 1 + line_offset, "changelog must be a YAML list of entries", "changelog-shape"))
        return log
    for i, raw in enumerate(doc.data):
        entry = _entry(raw, i, doc, path, log.findings)
        if entry is not None:
            log.entries.append(entry)
    return log


def parse_changelog(data: bytes, path: str) -> Changelog:
    """Parse the whole changelog. Malformed YAML or entries become findings, never exceptions."""
    return _parse(data, path)


# --- parsing item by item --------------------------------------------------------------------
# A PR whose head does not keep the base's bytes as a prefix (a quarter of the real history:
# an entry inserted above others, an old one reworded) makes both whole files be parsed, 750 KB
# each. A plain changelog is a block sequence of independent items, so each top-level item is
# parsed on its own and kept by its text: an item base and head share is parsed once, wherever
# it sits. Anything but that plain shape, or an item that does not parse on its own, is parsed
# whole (the whole parse then reports), so the result is always the whole parse's.
def _top_level_items(text: str) -> list[tuple[int, str]] | None:
    """(first line, text) of each top-level item of a plain block sequence (yamlio.top_level_chunks)."""
    return top_level_chunks(text, lambda line: line.startswith("- "))


def _item(text: str, path: str) -> tuple[Any, dict] | None:
    """One item's value and its key-path lines (relative to the item's first line), or None
    when it does not parse on its own as exactly one sequence item (yamlio.load_chunk keeps it)."""
    try:
        doc = load_chunk(text, path)
    except RecipeError:
        return None
    if not isinstance(doc.data, list) or len(doc.data) != 1:
        return None
    return doc.data[0], doc.lines


def _parse_by_item(data: bytes, path: str) -> Changelog | None:
    """`_parse`, item by item (see above); None when the file is not of the plain shape."""
    try:
        text = decode_text(data, path)
    except RecipeError:
        return None
    items = _top_level_items(text)
    if items is None:
        return None
    parsed = [_item(chunk, path) for _, chunk in items]
    if any(p is None for p in parsed):
        return None
    log = Changelog(path=path)
    for i, ((first, _), (raw, rel)) in enumerate(zip(items, parsed)):
        # The item's lines as the whole parse gives them: index i, shifted to the file's line.
        lines = {(i, *k[1:]): v + first - 1 for k, v in rel.items() if k}
        lines.setdefault((i,), rel.get((), 1) + first - 1)
        entry = _entry(raw, i, YamlDoc(path=path, data=None, lines=lines), path, log.findings)
        if entry is not None:
            log.entries.append(entry)
    return log


def _line_at(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def _common_prefix_len(a: bytes, b: bytes) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n
    # Binary search on slice equality: C-speed comparisons on a 750 KB file.
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _suffix_format(base: bytes, head: bytes, path: str) -> list[Finding]:
    """Spec 4.2: one blank line before the new entries, entries separated by one blank line,
    a single final newline, and no CR, TAB or NUL in what was added."""
    out: list[Finding] = []
    suffix = head[len(base):]
    start_line = _line_at(head, len(base))
    for byte, name in _FORBIDDEN_BYTES:
        pos = suffix.find(byte)
        if pos >= 0:
            out.append(_finding(path, _line_at(head, len(base) + pos), f"added text contains a {name} byte", "changelog-bytes"))
    if base:
        trailing = len(base) - len(base.rstrip(b"\n"))
        lead = len(suffix) - len(suffix.lstrip(b"\n"))
        rest = suffix[lead:]
        if trailing + lead != 2 or not rest.startswith(ENTRY_START):
            out.append(_finding(
                path, start_line,
                "appended text must be one empty line followed by `- config-keys:` (entries are separated by exactly one empty line)",
                "changelog-separator",
            ))
    elif not head.lstrip(b"\n").startswith(ENTRY_START):
        out.append(_finding(path, 1, "the changelog must start with `- config-keys:`", "changelog-separator"))
    # Each further top-level item in the suffix must follow exactly one empty line.
    lines = suffix.split(b"\n")
    for idx, line in enumerate(lines):
        if idx == 0 or not line.startswith(b"- "):
            continue
        before = lines[:idx]
        blanks = 0
        for prev in reversed(before):
            if prev.strip():
                break
            blanks += 1
        if blanks == len(before):
            continue  # the first entry of the suffix, checked above
        if blanks != 1 or lines[idx - 1] != b"":
            out.append(_finding(path, start_line + idx, "entries must be separated by exactly one empty line", "changelog-separator"))
    if not head.endswith(b"\n") or head.endswith(b"\n\n"):
        out.append(_finding(path, _line_at(head, len(head)), "the file must end with exactly one newline", "changelog-final-newline"))
    return out


def _entry_signature(e: ChangelogEntry) -> tuple:
    return (tuple(e.config_keys), tuple(e.description), e.pr_link, tuple(e.scenario_type),
            e.evals_only, e.all_evals, e.append_only, e.eval_min_prefill_ep)


def diff_changelog(base: bytes | None, head: bytes | None, path: str) -> ChangelogDiff:
    """Compare the base and head changelog bytes (spec 4.2/4.3).

    With the prefix rule kept, `added` is parsed from only the appended bytes. When it is
    broken, `added` falls back to head entries absent from base (by content), so later checks
    still see the new entries, and `first_diff_line` names the first head line that differs.
    """
    diff = ChangelogDiff(path=path)
    if head is None:
        if base is not None:
            diff.changed = True
            diff.prefix_ok = False
            diff.first_diff_line = 1
            diff.findings.append(_finding(path, None, "the changelog was deleted", "changelog-deleted"))
        return diff
    base_bytes = base or b""
    diff.changed = base is None or head != base_bytes
    if not diff.changed:
        return diff
    try:
        decode_text(head, path, max_values=MAX_YAML_VALUES)  # its items are parsed one by one: bound them all
    except RecipeError as e:
        diff.findings.append(e.finding)
        diff.prefix_ok = head.startswith(base_bytes)
        return diff
    if head.startswith(base_bytes):
        suffix = head[len(base_bytes):]
        offset = base_bytes.count(b"\n")
        # A suffix glued onto an unterminated last line cannot be parsed on its own.
        if base_bytes and not base_bytes.endswith(b"\n"):
            diff.format_findings.append(_finding(path, offset + 1, "the base file does not end with a newline", "changelog-final-newline"))
        parsed = _parse(suffix, path, line_offset=offset)
        diff.added = parsed.entries
        diff.findings.extend(parsed.findings)
        diff.format_findings.extend(_suffix_format(base_bytes, head, path))
        return diff
    diff.prefix_ok = False
    cut = _common_prefix_len(base_bytes, head)
    diff.first_diff_line = _line_at(head, cut)
    diff.findings.append(_finding(
        path, diff.first_diff_line,
        "existing changelog bytes were changed (the file is append-only; add new entries at the end)",
        "changelog-prefix",
    ))
    head_log = _parse_by_item(head, path) or _parse(head, path)
    base_log = _parse_by_item(base_bytes, path) or _parse(base_bytes, path)
    diff.findings.extend(head_log.findings)
    remaining: dict[tuple, int] = {}
    for e in base_log.entries:
        sig = _entry_signature(e)
        remaining[sig] = remaining.get(sig, 0) + 1
    for e in head_log.entries:
        sig = _entry_signature(e)
        if remaining.get(sig, 0):
            remaining[sig] -= 1
        else:
            diff.added.append(e)
    return diff


def _wildcard(pattern: str) -> re.Pattern[str]:
    return re.compile("".join(".*" if part == "*" else re.escape(part) for part in re.split(r"(\*)", pattern)))


def resolve_config_keys(patterns: list[str], known: Iterable[str]) -> tuple[list[str], list[str]]:
    """Config keys selected by `patterns` (exact keys or `*` wildcards, full match), in the
    order of `known`, and the patterns that selected nothing (an error per spec 4.1)."""
    known_list = list(known)
    compiled = [(p, _wildcard(p)) for p in patterns]
    hits: set[str] = set()
    unmatched: list[str] = []
    for p, rx in compiled:
        matched = [k for k in known_list if rx.fullmatch(k)]
        if not matched:
            unmatched.append(p)
        hits.update(matched)
    seen: set[str] = set()
    ordered = []
    for k in known_list:
        if k in hits and k not in seen:
            seen.add(k)
            ordered.append(k)
    return ordered, unmatched
