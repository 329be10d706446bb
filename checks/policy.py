"""The policy in force on the review date: every rule the checks apply, when it came into force and where it is written.

The review policy changed over time: rules were added to the checklist template
(`docs/PR_REVIEW_CHECKLIST.md`) and the verifier prompt (`.github/codeowner-signoff-verify-prompt.md`,
earlier inline in `.github/workflows/codeowner-signoff-verify.yml`), and the check numbering
itself grew between June and October 2026. `RULES` is the one table: each row is a rule, the date it came
into force (from `git log -S` on those files, or from the spec where the public history ends),
its source, the checks that use it, and, where the checklist carries the rule, the cue that finds
its item in a checklist.

A rule is in force for a review when
- the review date (UTC) is on or after `since`, and
- where the checklist carries it (`cue`), the target branch's checklist template has an item
  matching the cue (a target without any template is judged by the date alone; Check 5 itself,
  whose policy file is the template, is N/A without one), and
- where the rule lives in a policy file of the repository (`policy_file`, e.g. MODELS.md for
  Check 7), that file exists on the target branch.

A check none of whose rules is in force is N/A, and its reason names the rule, its date and its
source; a check with rules in force records them in the row's `rules` (JSON) so the verdict names
the source of each rule it applied.

Sub-rules that came later than their check have rows of their own, and the check asks
`in_force(ctx, key)` before applying one (Check 8's "never explicitly false" for
`publish_events_and_metrics`, Check 11's "only outside eval runs"). Rules known only from the
newest verifier prompt (spec section 12) date from the first day after the public history: its
last commit (843c6254f, 2026-08-21 21:59:59 -0700) is 2026-08-22 in UTC, the day review dates
are read in, so they are in force from 2026-08-23.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, Iterable

CHECKLIST = "docs/PR_REVIEW_CHECKLIST.md"
WORKFLOW = ".github/workflows/codeowner-signoff-verify.yml"
# The public history's last commit is 843c6254f at 2026-08-22 04:59:59 UTC (21:59:59 -0700 on the
# 21st): review dates are UTC, so its last day is 2026-08-22.
PUBLIC_HISTORY_END = date(2026, 8, 22)
SPEC = f"spec section 12 (the newest verifier prompt; not in the public history, which ends {PUBLIC_HISTORY_END.isoformat()} UTC)"
# The first day after the public history: rules known only from the newest prompt are in force
# from here on (their exact day is not public), never on the history's own last day.
AFTER_PUBLIC_HISTORY = PUBLIC_HISTORY_END + timedelta(days=1)

MSG_NOT_YET = "{rule} was not in force on {day}: in force since {since} ({source})."
MSG_NO_ITEM = "{rule} is not in the target branch's checklist ({path}), so it was not in force ({source})."
MSG_NO_FILE = "{rule} needs {file} on the target branch, which has none, so it was not in force ({source})."


@dataclass(frozen=True)
class Rule:
    key: str
    text: str  # the rule in a few words, as a verdict names it
    since: date
    source: str  # file @ commit (PR) that introduced it, or the spec
    checks: tuple[int, ...]
    cue: str | None = None  # regex (lower case) finding its checklist item; None: not a checklist item
    policy_file: str | None = None  # Repository attribute of a file the rule lives in ("models", "checklist_template")

    def citation(self) -> str:
        return f"{self.text} (in force since {self.since.isoformat()}, {self.source})"

    def to_json(self) -> dict:
        return {"rule": self.key, "text": self.text, "since": self.since.isoformat(), "source": self.source}


RULES: tuple[Rule, ...] = (
    Rule("codeowner-signer", "the signer is a CODEOWNER of the changed files", date(2026, 6, 23),
         f"{WORKFLOW} @ 156a1b76c (#1901)", (0,)),
    Rule("sweep-in-pr", "the PR passed PR validation", date(2026, 6, 22),
         f"{CHECKLIST} @ 9e19367cf (#1886)", (1,), cue=r"\bvalidation\b"),
    Rule("evals-pass", "the PR passes evals", date(2026, 6, 22),
         f"{CHECKLIST} @ 9e19367cf (#1886)", (2,), cue=r"\bevals?\b"),
    Rule("upstream-recipe", "vLLM/SGLang recipes follow the upstream recipes/cookbook", date(2026, 6, 22),
         f"{CHECKLIST} @ 9e19367cf (#1886)", (3,), cue=r"recipes|cookbook"),
    Rule("upstream-recipe-merged", "the linked upstream recipe PR is MERGED", date(2026, 7, 14),
         f"{CHECKLIST} @ 9aeaa75d8 (#2210)", (3,), cue=r"\bmerged\b"),
    Rule("reuse-command", "an explicit /reuse-sweep-run command is posted", date(2026, 6, 30),
         f"{WORKFLOW} @ 90e72fbd9 (#1959)", (4,)),
    Rule("latest-checklist", "the sign-off uses the latest checklist", date(2026, 6, 23),
         f"{CHECKLIST} @ e788604cb", (5,), policy_file="checklist_template"),
    Rule("engine-first-ordering", "vLLM/SGLang submissions come before additional frameworks", date(2026, 6, 22),
         f"{CHECKLIST} @ 9e19367cf (#1886)", (6,), cue=r"additional frameworks"),
    Rule("upstream-images", "vLLM/SGLang use the upstream docker images", date(2026, 7, 3),
         f"{CHECKLIST} @ 49e2c335c (#1956)", (6,), cue=r"docker"),
    Rule("deprecated-models", "no deprecated model or scenario against MODELS.md", date(2026, 8, 3),
         f"{CHECKLIST} @ b4be78a29 (#2482)", (7,), cue=r"deprecated", policy_file="models"),
    Rule("no-arch-hacks", "no benchmark hack changes the model architecture", date(2026, 7, 3),
         f"{CHECKLIST} @ cfb2bbb64 (#2011)", (8,), cue=r"hf-overrides|benchmark hacks?"),
    Rule("event-publication-not-disabled", "no affected benchmark sets publish_events_and_metrics to false",
         AFTER_PUBLIC_HISTORY, SPEC, (8,)),
    Rule("event-publication", "publish_events_and_metrics is enabled where the framework has it",
         AFTER_PUBLIC_HISTORY, SPEC, (8,)),
    Rule("spec-chat-template", "speculative decoding benchmarks through chat templates", date(2026, 6, 23),
         f"{CHECKLIST} @ f0a3ea742", (9,), cue=r"chat template"),
    Rule("no-engine-patches", "no engine patch without a waiver", date(2026, 7, 10),
         f"{CHECKLIST} @ e7d314aa5 (#2155)", (10,), cue=r"\bpatch"),
    Rule("agentic-golden-al", "agentic speculative configs use the golden simulated AL", date(2026, 7, 10),
         f"{CHECKLIST} @ 7abe6612a (#2160)", (11,), cue=r"golden"),
    Rule("eval-real-acceptance", "a launcher sets simulated acceptance only outside eval runs",
         AFTER_PUBLIC_HISTORY, SPEC, (11,)),
    Rule("append-only", "append-only changes only add points to an unchanged curve", date(2026, 8, 14),
         f"{CHECKLIST} @ 35d731a9e (#2613)", (12,), cue=r"append-only"),
    Rule("draft-as-shipped", "the draft runs as shipped", AFTER_PUBLIC_HISTORY, SPEC, (13,),
         cue=r"draft (?:model|head)"),
    Rule("pareto-coverage", "Pareto coverage is reported per affected curve", AFTER_PUBLIC_HISTORY, SPEC, (14,),
         cue=r"pareto"),
    Rule("pr-description", "the PR description agrees with the code", AFTER_PUBLIC_HISTORY, SPEC, (15,)),
)
BY_KEY = {r.key: r for r in RULES}


def rules_of(check: int) -> list[Rule]:
    return [r for r in RULES if check in r.checks]


def _items(template: Any) -> list[str] | None:
    items = getattr(template, "items", None)
    if not items:
        return None
    return [re.sub(r"\s+", " ", i.text).lower() for i in items]


def why_not(rule: Rule, review_date: date, target: Any, unreadable: Any = ()) -> str | None:
    """Why `rule` was not in force for this review (None when it was). `target` is the target
    branch's Repository (or None when it is not known); a policy file in `unreadable` (paths
    GitHub failed to return) is not absent, so the check itself reports it."""
    if review_date < rule.since:
        return MSG_NOT_YET.format(rule=_cap(rule.text), day=review_date.isoformat(), since=rule.since.isoformat(),
                                  source=rule.source)
    if target is None:
        return None
    if rule.policy_file is not None and _attr(target, rule.policy_file) is None:
        path = _policy_path(target, rule.policy_file)
        if path in unreadable:
            return None
        return MSG_NO_FILE.format(rule=_cap(rule.text), file=path, source=rule.source)
    if rule.cue is not None:
        template = _attr(target, "checklist_template")
        items = _items(template)
        if items is not None and not any(re.search(rule.cue, t) for t in items):
            return MSG_NO_ITEM.format(rule=_cap(rule.text), path=getattr(template, "path", CHECKLIST), source=rule.source)
    return None


def in_force(ctx: Any, key: str) -> bool:
    rule, day = BY_KEY[key], ctx.snapshot.review_date
    return why_not(rule, day, _target(ctx) if rule.since <= day else None, _unreadable(ctx)) is None


def gate(ctx: Any, check: int) -> tuple[str | None, list[Rule]]:
    """(N/A reason, rules in force) for one check: the reason is set when none of its rules is."""
    rules = rules_of(check)
    if not rules:
        return None, []
    day = ctx.snapshot.review_date
    # The target tree is read only when some rule's date has come: before the first rule a
    # verdict reads no repository at all.
    target = _target(ctx) if any(r.since <= day for r in rules) else None
    unreadable = _unreadable(ctx)
    reasons: list[str] = []
    applied: list[Rule] = []
    for r in rules:
        why = why_not(r, day, target, unreadable)
        if why is None:
            applied.append(r)
        else:
            reasons.append(why)
    if applied:
        return None, applied
    return " ".join(dict.fromkeys(reasons)), []


def cite(rules: Iterable[Rule]) -> list[dict]:
    return [r.to_json() for r in rules]


def _target(ctx: Any) -> Any:
    try:
        return ctx.target_repo
    except Exception:  # an unreadable target tree is judged by the date alone
        return None


def _unreadable(ctx: Any) -> Any:
    return getattr(ctx.snapshot, "unreadable", None) or {}


# A policy file that raised while being read is not an absent one: the rule stays in force and
# the check that needs the file reports it (missing evidence is never an N/A).
_UNREADABLE = object()


def _attr(repo: Any, name: str) -> Any:
    try:
        return getattr(repo, name)
    except Exception:
        return _UNREADABLE


def _policy_path(repo: Any, name: str) -> str:
    layout = _attr(repo, "layout")
    attr = {"models": "models_md", "checklist_template": "checklist"}.get(name, name)
    return str(getattr(layout, attr, name)) if layout is not None else name


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]
