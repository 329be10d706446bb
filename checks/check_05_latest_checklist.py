"""Check 5 (Latest checklist): the sign-off carries every item of the current template, checked.

What it checks:
    The template is `PR_REVIEW_CHECKLIST.md` at the tip of the target branch (the fenced block
    that starts with "As a PR reviewer and CODEOWNER"). Each template item must have a matching
    checked `[x]` item in the sign-off. Matching is recipes.checklist.match_checklist: both
    texts are reduced to lower-case word tokens (link targets, URLs and markup removed) and
    scored with the Dice coefficient of their token sets; pairs scoring >= 0.6 are assigned
    one-to-one, best score first. So wording drift is fine, a missing or rescoped item is not,
    and one sign-off item cannot stand in for two template items. Quoted (`>`) lines are not
    part of the sign-off. An unchecked item counts when the Additional detail section explains
    it (recipes.checklist.unchecked_explained: it cites the item by number, or shares two
    distinctive words with it and reads as an explanation such as "N/A", "because", "cannot").
    Bullets copied from the rendered comment (no boxes) are read as checked, as the seed
    verdict did, and the row says so.
Why it matters:
    Reviewers must attest to the current rules; an old checklist silently skips newer ones
    (e.g. the draft-precision and Pareto items).
Evidence it cites:
    The template path and the line of each missing or unchecked item, the sign-off comment.
Not applicable when:
    The target branch has no checklist template (the rule's policy file does not exist there,
    so it was not in force; checks.policy), or the review date precedes the rule. A missing
    sign-off or a template GitHub failed to return is a FAIL ("could not verify").
How to fix:
    Copy the current template from the default branch into the sign-off, check every item, and
    explain any item you cannot check in the Additional detail section.
"""
from __future__ import annotations

import re

from checks.result import CheckResult, Evidence
from recipes.checklist import match_checklist, unchecked_explained
from checks.text import join, plural

EXCERPT_WORDS = 8
LIST_MAX = 4

MSG_NO_SIGNOFF = "No sign-off to compare: post the latest {path} checklist as a CODEOWNER."
MSG_NO_TEMPLATE = (
    "could not verify: the checklist template {path} was not found on the target branch; "
    "restore it on the default branch."
)
MSG_BAD_TEMPLATE = "could not verify: {finding}; fix the template on the default branch."
MSG_PASS = "All {n} items of the current template are present and checked."
MSG_PASS_EXPLAINED = (
    "All {n} items of the current template are present; {checked} are checked and {items} "
    "{verb} explained in the Additional detail section."
)
MSG_RENDERED = " The sign-off is a rendered copy without checkboxes, read as checked."
MSG_MISSING = "{n} template {items} missing from the sign-off: {which}"
MSG_UNCHECKED = "{n} {items} unchecked without an explanation in the Additional detail section: {which}"
MSG_FIX = "copy the current {path} into the sign-off and check every item (explain any you cannot)"

_LINK = re.compile(r"\[([^\[\]]*)\]\([^)]*\)")  # no `[` in the text: linear on `[[[...`
_MARKUP = re.compile(r"[`*_]")


def excerpt(text: str, words: int = EXCERPT_WORDS) -> str:
    """The first few words of an item, without link targets or markup."""
    plain = _MARKUP.sub("", _LINK.sub(r"\1", text)).split()
    short = " ".join(plain[:words])
    return f"{short}…" if len(plain) > words else short


def _named(items) -> str:
    return join((f'item {i.number} ("{excerpt(i.text)}")' for i in items), None, limit=LIST_MAX)


class LatestChecklistCheck:
    def applies(self, ctx) -> str | None:
        return None

    def evaluate(self, ctx) -> CheckResult:
        repo = ctx.target_repo
        path = repo.layout.checklist
        template = repo.checklist_template
        if template is None:
            return CheckResult.failed(MSG_NO_TEMPLATE.format(path=path),
                                      Evidence(path=path, note="target branch", unavailable=True))
        if not template.items:
            finding = next((f for f in template.findings if f.severity == "error"), None)
            text = str(finding) if finding else f"{path} has no checklist items"
            return CheckResult.failed(MSG_BAD_TEMPLATE.format(finding=text),
                                      Evidence(path=path, line=finding.line if finding else None, unavailable=True))
        doc = ctx.signoff_doc
        signoff = ctx.snapshot.signoff
        if ctx.signoff_unreadable:
            return ctx.signoff_unreadable_result()
        if doc is None or signoff is None:
            return CheckResult.failed(MSG_NO_SIGNOFF.format(path=path), Evidence(path=path))

        matches = match_checklist(template, doc)
        detail = ctx.additional_detail
        missing, unchecked, explained = [], [], []
        for m in matches:
            if m.signoff_item is None:
                missing.append(m.template_item)
            elif not m.checked:
                if unchecked_explained(m.template_item, detail) or unchecked_explained(m.signoff_item, detail):
                    explained.append(m.template_item)
                else:
                    unchecked.append(m.template_item)
        sign_ev = Evidence(url=signoff.url or None, note=f"sign-off by {signoff.author}")
        n = len(template.items)
        if missing or unchecked:
            parts = []
            if missing:
                parts.append(MSG_MISSING.format(n=len(missing), items=plural(len(missing), "item is", "items are"),
                                                which=_named(missing)))
            if unchecked:
                parts.append(MSG_UNCHECKED.format(n=len(unchecked), items=plural(len(unchecked), "item is", "items are"),
                                                  which=_named(unchecked)))
            evidence = [Evidence(path=template.path, line=i.line, note=f"item {i.number}") for i in missing + unchecked]
            return CheckResult.failed("; ".join(parts) + "; " + MSG_FIX.format(path=template.path) + ".",
                                      *evidence, sign_ev, missing=[i.number for i in missing],
                                      unchecked=[i.number for i in unchecked])
        if explained:
            reason = MSG_PASS_EXPLAINED.format(n=n, checked=n - len(explained), items=_named(explained),
                                               verb=plural(len(explained), "is", "are"))
        else:
            reason = MSG_PASS.format(n=n)
        if any(m.signoff_item is not None and m.signoff_item.rendered for m in matches):
            reason += MSG_RENDERED
        evidence = [Evidence(path=template.path, line=template.line, note=f"{n} template items"), sign_ev]
        evidence += [Evidence(path=template.path, line=i.line, note=f"item {i.number} explained") for i in explained]
        return CheckResult.passed(reason, *evidence, items=n, explained=[i.number for i in explained])
