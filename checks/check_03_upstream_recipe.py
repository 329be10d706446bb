"""Check 3 (Upstream recipe): not implemented yet.

What it checks:
    Not implemented yet.
Why it matters:
    See spec section 12.
Evidence it cites:
    None yet.
Not applicable when:
    Never; an unimplemented check is a FAIL row.
How to fix:
    Implement the check.
"""
from __future__ import annotations

from checks.result import CheckResult


class UpstreamRecipeCheck:
    number = 3
    name = "Upstream recipe"
    advisory = False
    retired = False

    def applies(self, ctx) -> str | None:
        return None

    def evaluate(self, ctx) -> CheckResult:
        return CheckResult.failed("not implemented: this check has no evaluator yet, so it cannot pass")
