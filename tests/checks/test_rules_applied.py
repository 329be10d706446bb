"""The Markdown verdict names the source of each rule it applied (issue 11, "the policy in force").

The rows carry the rules in force (checks.policy, `details["rules"]`, also the JSON `rules`);
the Markdown shows them once each, in a collapsed "Rules applied" section after the rows: the
checks that used the rule, the rule, its date and its source.
"""
from __future__ import annotations

from checks.engine import Row, Verdict, VerdictStatus
from checks.render import render_comment, render_markdown, validate_comment, validate_verdict_markdown
from checks.registry import CHECK_NUMBERS, CHECKS
from checks.result import Status
from tests.builders import HEAD_SHA

RULE_8 = {"rule": "arch-hacks", "text": "no benchmark hack changes the model architecture", "since": "2026-07-03",
          "source": "docs/PR_REVIEW_CHECKLIST.md @ cfb2bbb64 (#2011)"}
RULE_SPEC = {"rule": "spec-chat", "text": "speculative decoding benchmarks through chat templates",
             "since": "2026-06-23", "source": "docs/PR_REVIEW_CHECKLIST.md @ f0a3ea742"}


def _verdict(rules: dict[int, list[dict]]) -> Verdict:
    rows = []
    for c in CHECKS:
        status = Status.WARN if c.advisory else Status.PASS
        rows.append(Row(number=c.number, name=c.name, status=status, reason="fine.", advisory=c.advisory,
                        details={"rules": rules[c.number]} if c.number in rules else {}))
    return Verdict(status=VerdictStatus.WARN, rows=rows, repo="o/r", pr=1, head_sha=HEAD_SHA)


def test_each_applied_rule_is_named_once_with_its_checks_date_and_source():
    md = render_markdown(_verdict({8: [RULE_8], 9: [RULE_SPEC], 13: [RULE_SPEC]}))
    assert validate_verdict_markdown(md, expected=CHECK_NUMBERS) == []
    section = md.split("<summary>Rules applied (2)</summary>", 1)[1]
    lines = [ln for ln in section.splitlines() if ln.startswith("- ")]
    assert lines == [
        "- Check 8: no benchmark hack changes the model architecture, in force since 2026-07-03 "
        "(docs/PR\\_REVIEW\\_CHECKLIST.md @ cfb2bbb64 (#\u200d2011))",
        "- Checks 9, 13: speculative decoding benchmarks through chat templates, in force since 2026-06-23 "
        "(docs/PR\\_REVIEW\\_CHECKLIST.md @ f0a3ea742)",
    ]


def test_no_rules_no_section():
    assert "Rules applied" not in render_markdown(_verdict({}))


def test_rule_text_is_escaped():
    hostile = dict(RULE_8, text="<img src=x> @everyone", source="[x](javascript:alert(1))")
    md = render_markdown(_verdict({8: [hostile]}))
    line = next(ln for ln in md.splitlines() if ln.startswith("- Check 8"))
    assert "<img" not in line and "](javascript:" not in line and "@everyone" not in line


def test_section_is_dropped_with_the_details_and_the_comment_stays_valid():
    v = _verdict({8: [RULE_8]})
    assert "Rules applied" not in render_markdown(v, with_details=False)
    from checks.engine import SignoffRef
    v = v.model_copy(update={"signoff": SignoffRef(author="a", key="issuecomment-1", url="https://x")})
    assert validate_comment(render_comment(v, "issuecomment-1")) == []
