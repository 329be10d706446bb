"""The policy in force on the review date (checks.policy): dates, the target checklist, policy files."""
from __future__ import annotations

import json
from datetime import date

import pytest

from checks.engine import evaluate
from checks.policy import RULES, BY_KEY, rules_of, why_not
from tests.builders import build_snapshot
from checks.registry import CHECK_NUMBERS

CHECKLIST = "inferencex-e2e/docs/PR_REVIEW_CHECKLIST.md"
TEMPLATE = """\
# PR Review Checklist
## Template
```
As a PR reviewer and CODEOWNER, I have reviewed this and have:
- [ ] Verified that this is the latest version of PR_REVIEW_CHECKLIST.md
- [ ] Verified that this PR has passed PR validation.
- [ ] Verified that this PR passes evals.
- [ ] Verified that speculative decoding PRs uses chat templates to align the AL distribution to real world
{extra}- [ ] If any of the above criteria cannot reasonably be satisfied, I have provided additional reasoning below.

### Additional detail section:
- insert any additional info here

Signed: `FILL_IN_GITHUB_USERNAME`
```
"""


def test_every_check_has_a_rule_and_every_rule_a_dated_source():
    assert {n for r in RULES for n in r.checks} == set(CHECK_NUMBERS)
    for r in RULES:
        assert r.source and isinstance(r.since, date)
        assert r.source.startswith(("docs/", ".github/", "spec section"))
    assert len({r.key for r in RULES}) == len(RULES)


def test_a_rule_is_not_in_force_before_its_date():
    rule = BY_KEY["agentic-golden-al"]
    why = why_not(rule, date(2026, 7, 9), None)
    assert why is not None and "2026-07-10" in why and "7abe6612a" in why
    assert why_not(rule, date(2026, 7, 10), None) is None


def _snap(review_date: str, extra: str = "", with_template: bool = True, **more):
    base = {"inferencex-e2e/perf-changelog.yaml": "[]\n"}
    if with_template:
        base[CHECKLIST] = TEMPLATE.replace("{extra}", extra)
    return build_snapshot({"base": base, "review_date": review_date, **more})


def test_check_before_its_rule_is_na_naming_date_and_source():
    row = evaluate(_snap("2026-07-01"), only={11}).row(11)
    assert row.status.value == "N/A"
    assert "not in force on 2026-07-01" in row.reason and "since 2026-07-10" in row.reason
    assert "docs/PR_REVIEW_CHECKLIST.md @ 7abe6612a (#2160)" in row.reason


def test_a_rule_the_target_checklist_lacks_is_not_in_force():
    # Append-only is dated 2026-08-14, but this target's checklist has no append-only item.
    row = evaluate(_snap("2026-10-08"), only={12}).row(12)
    assert row.status.value == "N/A"
    assert "not in the target branch's checklist" in row.reason and CHECKLIST in row.reason


def test_the_item_on_the_target_checklist_puts_the_rule_in_force():
    extra = "- [ ] If this PR uses `append-only: true`, verified that it only adds generated points.\n"
    row = evaluate(_snap("2026-10-08", extra), only={12}).row(12)
    assert "not in the target branch's checklist" not in row.reason


def test_without_any_template_the_date_alone_decides():
    row = evaluate(_snap("2026-10-08", with_template=False), only={12}).row(12)
    assert "not in force" not in row.reason
    assert "not in force on 2026-08-13" in evaluate(_snap("2026-08-13", with_template=False), only={12}).row(12).reason


def test_the_rules_applied_are_named_in_the_json_row():
    verdict = evaluate(_snap("2026-10-08", signoff={"author": "a", "body": "x"}), only={5})
    data = verdict.to_json()["checks"][0]
    assert data["status"] == "FAIL"
    (rule,) = data["rules"]
    assert rule == {"rule": "latest-checklist", "text": "the sign-off uses the latest checklist",
                    "since": "2026-06-23", "source": "docs/PR_REVIEW_CHECKLIST.md @ e788604cb"}
    json.dumps(data)


@pytest.mark.parametrize("check", sorted(CHECK_NUMBERS))
def test_each_check_is_na_before_any_of_its_rules(check):
    first = min(r.since for r in rules_of(check))
    day = date.fromordinal(first.toordinal() - 1).isoformat()
    row = evaluate(_snap(day), only={check}).row(check)
    assert row.status.value == "N/A", row.reason
    assert "not in force" in row.reason


def test_a_policy_file_that_raises_is_not_an_absent_one():
    class Target:
        checklist_template = None

        @property
        def models(self):
            raise OSError("GitHub answered 502 for MODELS.md")

    class Missing:
        checklist_template = None
        models = None

    rule = BY_KEY["deprecated-models"]
    day = date(2026, 9, 1)
    assert why_not(rule, day, Target()) is None  # in force: Check 7 itself reports the read failure
    assert "which has none" in why_not(rule, day, Missing())


def test_rules_newer_than_the_public_history_start_the_day_after_it_ends():
    """The history's last commit is 2026-08-22 04:59:59 UTC (the 21st in -0700): its last day is
    the 22nd, and a spec-only rule is not in force on it, only from the 23rd."""
    from checks.policy import AFTER_PUBLIC_HISTORY, PUBLIC_HISTORY_END, SPEC

    assert PUBLIC_HISTORY_END == date(2026, 8, 22) and AFTER_PUBLIC_HISTORY == date(2026, 8, 23)
    assert "2026-08-22 UTC" in SPEC
    for r in RULES:
        if r.source == SPEC:
            assert r.since == AFTER_PUBLIC_HISTORY, r.key
            assert why_not(r, PUBLIC_HISTORY_END, None) is not None
            assert why_not(r, AFTER_PUBLIC_HISTORY, None) is None


@pytest.mark.parametrize("key, check, main", [
    ("event-publication-not-disabled", 8, "no-arch-hacks"),
    ("eval-real-acceptance", 11, "agentic-golden-al"),
])
def test_sub_rules_have_their_own_later_dates(key, check, main):
    sub, parent = BY_KEY[key], BY_KEY[main]
    assert sub.checks == (check,) and check in parent.checks
    assert sub.since > parent.since and sub.source
