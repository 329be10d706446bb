"""Verdict to Markdown (spec 11.1) and to the published comment body (spec 11.2), plus the
validator that mirrors the upstream publisher's rules."""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

import jinja2

from .engine import Row, Verdict, VerdictStatus
from .signoff_keys import KEY_PATTERN
from .result import Evidence, Status, split_external
from .text import (
    COMMENT_MAX,
    cap_comment,
    escape_inline,
    escape_link_text,
    join,
    plural,
    quote_path,
    safe_url,
    truncate,
)

TEMPLATES_DIR = Path(__file__).resolve().parent / "templates"
VERDICT_TEMPLATE = "verdict.md.j2"

HEADERS = {
    VerdictStatus.PASS: "## ✅✅✅ **Verdict: PASS** ✅✅✅",
    VerdictStatus.REJECTED: "## ❌❌❌ **REJECTED** ❌❌❌",
    VerdictStatus.WARN: "## ⚠️ **Verdict: WARN** ⚠️",
}
EMOJI = {Status.PASS: "✅", Status.FAIL: "❌", Status.NA: "➖", Status.WARN: "⚠️"}
GROUP_SUMMARY = "Passed and not applicable checks"
BLOCKING_LINE = "{who} this sign-off is blocked by {checks}. Address the findings below, then edit the sign-off to verify again."
# Spec 11.2: a WARN of an escalating check (the registry's `escalates`) mentions the handles.
ESCALATION_LINE = (
    "{handles} {checks} {verb} on this PR: please review {whose} evidence. "
    "This advisory comment does not grant or enforce a bypass."
)
# A configuration file that could not be applied (issue 30): said once, short, above the rows.
CONFIGURATION_LINE = ("**Configuration:** {problems}; the default policy applied instead. "
                      "Fix the file on the default branch (`infx-review config-schema --check FILE` names every problem).")
MAX_CONFIGURATION_PROBLEMS = 3
HEAD_MOVED_LINE = "Note: the PR head moved to `{sha}` during this review; that newer commit was not assessed."
DETAILS_SUMMARY = "Check {number} ({name}) details"
RULES_SUMMARY = "Rules applied ({n})"
RULE_LINE = "{checks}: {text}, in force since {since} ({source})"
MORE_EVIDENCE = "and {n} more"

MARKER = "<!-- codeowner-signoff-verify signoff={key} -->"
FOOTER = "Assessed commit: `{sha}`."
SIGNOFF_KEY_RE = re.compile(KEY_PATTERN)
MARKER_RE = re.compile(rf"<!-- codeowner-signoff-verify signoff=({KEY_PATTERN}) -->")
FOOTER_RE = re.compile(r"Assessed commit: `([0-9a-f]{40})`\.")
# Spec 11.2, verbatim: a row, and anything that merely looks like the start of one.
ROW_RE = re.compile(r"(?:[-*+] )?(✅|❌|➖|⚠️) Check ([0-9]+) \([^\r\n]+\): (PASS|FAIL|N/A|WARN) — \S.*")
ROW_START_RE = re.compile(r"[-*+ ]?(?:✅|❌|➖|⚠️)\s*Check")

_LOGIN_RE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:\[bot\])?$")
_HANDLE_RE = re.compile(r"^@[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})(?:/[A-Za-z0-9_.-]+)?$")
_REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SHA_RE = re.compile(r"^[0-9a-f]{7,40}$")
MAX_EVIDENCE_ITEMS = 6
MAX_MERMAID_CHARS = 20000

# Progressively terser renders until the comment fits GitHub's size limit:
# (characters of reason per row, whether per-row details such as charts are kept).
_FIT_LEVELS = ((2000, True), (1000, False), (300, False), (120, False))


def _mention(login: str) -> str:
    return f"@{login}" if _LOGIN_RE.match(login or "") else escape_inline(login or "", 60)


def _blob_url(repo: str, sha: str, path: str, line: int | None) -> str | None:
    ext = split_external(path)
    if ext is not None:  # a file of the repository a runner clones, at the commit read
        repo, sha, path = ext
    if not _REPO_RE.match(repo) or not _SHA_RE.match(sha or ""):
        return None
    url = f"https://github.com/{repo}/blob/{sha}/{quote_path(path.lstrip('/'))}"
    return f"{url}#L{line}" if line else url


def _run_url(repo: str, run_id: int) -> str | None:
    return f"https://github.com/{repo}/actions/runs/{int(run_id)}" if _REPO_RE.match(repo) else None


def _evidence_view(e: Evidence, verdict: Verdict) -> dict[str, Any]:
    label = e.label() or (e.url or "")
    if e.unavailable:
        label = f"unavailable: {label}" if label else "unavailable"
    url = safe_url(e.url) if e.url else None
    if url is None and e.path:
        url = _blob_url(verdict.repo, verdict.head_sha, e.path, e.line)
    if url is None and e.run_id:
        url = _run_url(verdict.repo, e.run_id)
    return {"label": label, "url": url}


def _mermaid(value: Any) -> list[str]:
    charts = [value] if isinstance(value, str) else list(value or [])
    out = []
    for chart in charts:
        lines = []
        for line in str(chart).replace("```", "'''").replace("<!--", "< !--").splitlines():
            stripped = line.strip()
            if ROW_START_RE.match(stripped) or stripped in HEADERS.values():
                continue  # a chart label must never read as a verdict row or header
            lines.append(line.rstrip())
        text = "\n".join(lines).strip("\n")
        if text:
            out.append(truncate(text, MAX_MERMAID_CHARS))
    return out


def _row_view(row: Row, verdict: Verdict, reason_max: int, with_details: bool) -> dict[str, Any]:
    evidence = [_evidence_view(e, verdict) for e in row.evidence]
    evidence = [e for e in evidence if e["label"]]
    return {
        "emoji": EMOJI[row.status],
        "number": row.number,
        "name": row.name,
        "status": row.status.value,
        "reason": row.reason,
        "reason_max": reason_max,
        "evidence": evidence[:MAX_EVIDENCE_ITEMS],
        "more": MORE_EVIDENCE.format(n=len(evidence) - MAX_EVIDENCE_ITEMS) if len(evidence) > MAX_EVIDENCE_ITEMS else "",
        "mermaid": _mermaid(row.details.get("mermaid")) if with_details else [],
        # Check names are constants, but the summary is raw HTML context: escape like the row.
        "details_summary": DETAILS_SUMMARY.format(number=row.number, name=escape_inline(row.name, 80)),
    }


def _check_label(row: Row) -> str:
    return f"Check {row.number} ({row.name})"


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # Markdown, not HTML: every user value goes through `esc` instead
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
    )
    env.filters["esc"] = lambda value, limit=600: escape_inline(value, limit)
    env.filters["esc_link"] = escape_link_text
    return env


def _render(verdict: Verdict, reason_max: int, with_details: bool) -> str:
    expanded = [r for r in verdict.rows if r.status in (Status.FAIL, Status.WARN)]
    grouped = [r for r in verdict.rows if r.status in (Status.PASS, Status.NA)]
    escalation = ""
    escalating = [r for r in verdict.rows if r.escalates and r.status is Status.WARN]
    handles = [h for h in verdict.escalation if _HANDLE_RE.match(h)]
    if escalating and handles:
        n = len(escalating)
        escalation = ESCALATION_LINE.format(handles=" ".join(handles), checks=join(_check_label(r) for r in escalating),
                                            verb=plural(n, "warns", "warn"), whose=plural(n, "its", "their"))
    blocking = ""
    if verdict.status is VerdictStatus.REJECTED:
        who = f"{_mention(verdict.signoff.author)}:" if verdict.signoff else "Blocking:"
        blocking = BLOCKING_LINE.format(who=who, checks=join(_check_label(r) for r in verdict.failed))
    configuration = ""
    if verdict.configuration:
        shown = [escape_inline(p, 200) for p in verdict.configuration[:MAX_CONFIGURATION_PROBLEMS]]
        rest = len(verdict.configuration) - len(shown)
        if rest:
            shown.append(MORE_EVIDENCE.format(n=rest))
        configuration = CONFIGURATION_LINE.format(problems="; ".join(shown))
    head_moved = ""
    if verdict.head_moved is not None:
        sha = verdict.head_moved.current_head_sha
        head_moved = HEAD_MOVED_LINE.format(sha=sha if _SHA_RE.match(sha) else escape_inline(sha, 60))
    # The sources of the rules applied; dropped with the other details when the comment must shrink.
    rules = _rules_applied(verdict) if with_details else []
    text = _environment().get_template(VERDICT_TEMPLATE).render(
        header=HEADERS[verdict.status],
        escalation=escalation,
        blocking=blocking,
        head_moved=head_moved,
        configuration=configuration,
        expanded=[_row_view(r, verdict, reason_max, with_details) for r in expanded],
        grouped=[_row_view(r, verdict, reason_max, with_details) for r in grouped],
        group_summary=GROUP_SUMMARY,
        rules=rules,
        rules_summary=RULES_SUMMARY.format(n=len(rules)),
    )
    # Templates stay readable; the exact blank-line layout of spec 11.1 is enforced here.
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


def _rules_applied(verdict: Verdict) -> list[str]:
    """One line per rule the checks applied (issue 11, "the policy in force"): the checks that
    used it, the rule, the date it came into force and where it is written (checks.policy),
    in the order of the checks' numbers."""
    seen: dict[str, tuple[dict, list[int]]] = {}
    for r in verdict.rows:
        for rule in r.details.get("rules") or []:
            if not isinstance(rule, dict) or not rule.get("rule"):
                continue
            entry = seen.setdefault(str(rule["rule"]), (rule, []))
            if r.number not in entry[1]:
                entry[1].append(r.number)
    lines = []
    for rule, numbers in seen.values():
        label = plural(len(numbers), "Check ", "Checks ") + join(numbers, None)
        lines.append(RULE_LINE.format(checks=label, text=escape_inline(str(rule.get("text", "")), 160),
                                      since=escape_inline(str(rule.get("since", "")), 20),
                                      source=escape_inline(str(rule.get("source", "")), 200)))
    return lines


def render_markdown(verdict: Verdict, *, reason_max: int = _FIT_LEVELS[0][0], with_details: bool = True) -> str:
    """The verdict text the model would produce (no marker, no footer)."""
    return _render(verdict, reason_max, with_details)


def render_comment(verdict: Verdict, signoff_key: str) -> str:
    """The published body: marker line, verdict, blank line, assessed-commit footer (spec 11.2),
    shortened step by step until it fits GitHub's comment limit."""
    if not SIGNOFF_KEY_RE.fullmatch(signoff_key or ""):
        raise ValueError(f"not a sign-off key: {signoff_key!r}")
    if not re.fullmatch(r"[0-9a-f]{40}", verdict.head_sha or ""):
        raise ValueError(f"assessed commit is not a 40-hex SHA: {verdict.head_sha!r}")
    body = ""
    for reason_max, with_details in _FIT_LEVELS:
        body = (
            MARKER.format(key=signoff_key) + "\n"
            + _render(verdict, reason_max, with_details) + "\n\n"
            + FOOTER.format(sha=verdict.head_sha) + "\n"
        )
        if len(body) <= COMMENT_MAX:
            return body
    return cap_comment(body)


def expected_header(statuses: dict[int, str]) -> str:
    values = set(statuses.values())
    if "FAIL" in values:
        return HEADERS[VerdictStatus.REJECTED]
    if "WARN" in values:
        return HEADERS[VerdictStatus.WARN]
    return HEADERS[VerdictStatus.PASS]


def validate_verdict_markdown(text: str, *, expected: frozenset[int] | set[int] | None = None) -> list[str]:
    """Problems the upstream publisher would reject the verdict for (spec 11.2); [] when valid.
    `expected` defaults to every registered check."""
    from .registry import ADVISORY_NUMBERS, CHECK_NUMBERS

    expected = CHECK_NUMBERS if expected is None else expected
    errors: list[str] = []
    lines = text.splitlines()
    header_values = set(HEADERS.values())
    headers = [i for i, line in enumerate(lines) if line.strip() in header_values]
    if len(headers) != 1:
        errors.append(f"expected exactly one header line, found {len(headers)}")
    if not lines or lines[0].strip() not in header_values:
        errors.append("the first line is not a verdict header")
    status_for_emoji = {v: k.value for k, v in EMOJI.items()}
    statuses: dict[int, str] = {}
    for lineno, raw in enumerate(lines, 1):
        line = raw.strip()
        if not ROW_START_RE.match(line):
            continue
        m = ROW_RE.fullmatch(line)
        if not m:
            errors.append(f"line {lineno}: looks like a check row but does not match the row format")
            continue
        emoji, number, status = m.group(1), int(m.group(2)), m.group(3)
        if number in statuses:
            errors.append(f"line {lineno}: duplicate row for check {number}")
        statuses[number] = status
        if status_for_emoji[emoji] != status:
            errors.append(f"line {lineno}: emoji {emoji} does not match status {status}")
        if number in ADVISORY_NUMBERS and status == "FAIL":
            errors.append(f"line {lineno}: advisory check {number} cannot FAIL")
        if number not in ADVISORY_NUMBERS and status == "WARN":
            errors.append(f"line {lineno}: check {number} cannot WARN")
    if set(statuses) != set(expected):
        missing = sorted(set(expected) - set(statuses))
        extra = sorted(set(statuses) - set(expected))
        errors.append(f"check set differs from expected: missing {missing}, unexpected {extra}")
    if lines and lines[0].strip() in header_values and statuses and lines[0].strip() != expected_header(statuses):
        errors.append("the header does not match the rows")
    return errors


def validate_comment(body: str) -> list[str]:
    """Spec 11.2 framing of a published body, plus the verdict rules."""
    lines = body.split("\n")
    errors = []
    if not lines or not MARKER_RE.fullmatch(lines[0]):
        errors.append("the first line is not the sign-off marker")
    if not body.endswith("\n") or len(lines) < 3 or not FOOTER_RE.fullmatch(lines[-2]) or lines[-3] != "":
        errors.append("the body does not end with a blank line and the assessed-commit footer")
    if len(body) > COMMENT_MAX:
        errors.append(f"the body is {len(body)} characters, over GitHub's {COMMENT_MAX}")
    errors.extend(validate_verdict_markdown("\n".join(lines[1:-3])))
    return errors
