"""The verdict engine: run the registered checks over one snapshot and combine their rows (spec 11.1)."""
from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from enum import Enum
from typing import Any, Iterable

from pydantic import ConfigDict, Field

from recipes.model import Model
from recipes.stack import on_one_chunk

from .base import Check
from .context import ReviewContext
from . import registry
from .policy import cite, gate as policy_gate
from .registry import Registered
from .result import CheckResult, Evidence, Status
from .snapshot import PRSnapshot
from .text import join

log = logging.getLogger(__name__)

UNEVALUATED_REASON = "could not be evaluated: {exc_type}: {message}"
RETIRED_REASON = "retired check; kept so its number is never reused"
EMPTY_REASON = "the check gave no reason"
# Checks evaluated at once when the snapshot reads lazily: their reads (team memberships, runs,
# artifacts, upstream PRs) then overlap instead of queueing behind each other.
LAZY_WORKERS = 8
# The checks that trace launches (recipes.launch) share the review's interpreter budget, so they
# run one after another in this order: which of them a spent budget leaves without traces then
# never depends on thread timing. Checks 13, 9, 8 and 10 read the points' head traces, which the
# points of an arm share; Check 11 goes last, as it traces each agentic point's runs again, with
# the point's own values where a shared trace leaves its settings open (one trace per point).
BUDGET_ORDER = (13, 9, 8, 10, 11)


class VerdictStatus(str, Enum):
    PASS = "PASS"
    WARN = "WARN"
    REJECTED = "REJECTED"


class Row(Model):
    """One verdict row: a check's outcome after the engine's advisory/blocking rules."""

    model_config = ConfigDict(frozen=True)

    number: int
    name: str
    status: Status
    reason: str
    evidence: list[Evidence] = Field(default_factory=list)
    details: dict[str, Any] = Field(default_factory=dict)
    advisory: bool = False
    escalates: bool = False

    def to_json(self) -> dict:
        return {
            "number": self.number,
            "name": self.name,
            "status": self.status.value,
            "reason": self.reason,
            "evidence": [evidence_json(e) for e in self.evidence],
            **({"rules": self.details["rules"]} if self.details.get("rules") else {}),
        }


class SignoffRef(Model):
    model_config = ConfigDict(frozen=True)

    author: str
    key: str
    url: str = ""


class HeadMoved(Model):
    """The PR head moved while we evaluated: `current_head_sha` was not assessed."""

    model_config = ConfigDict(frozen=True)

    current_head_sha: str


class Verdict(Model):
    model_config = ConfigDict(frozen=True)

    status: VerdictStatus
    rows: list[Row]
    repo: str
    pr: int
    head_sha: str
    signoff: SignoffRef | None = None
    head_moved: HeadMoved | None = None
    # True when only some checks ran (`only=`); such a verdict is never published.
    partial: bool = False
    # Handles the verdict mentions when an escalating check (`escalates`) warns (spec 11.2).
    escalation: list[str] = Field(default_factory=list)
    # Problems of the repository's configuration file ("path:line: message"): the file was not
    # applied, the default policy was (issue 30: never silently).
    configuration: list[str] = Field(default_factory=list)
    # The benchmark points the PR affects, each with its scope and reasons (the first
    # difference of its trace among them), when a check worked them out.
    affected: list[dict] = Field(default_factory=list)

    def row(self, number: int) -> Row:
        for r in self.rows:
            if r.number == number:
                return r
        raise KeyError(f"verdict has no row for check {number}")

    @property
    def failed(self) -> list[Row]:
        return [r for r in self.rows if r.status is Status.FAIL]

    @property
    def warned(self) -> list[Row]:
        return [r for r in self.rows if r.status is Status.WARN]

    def to_json(self) -> dict:
        """The machine contract. Evidence items always carry path/line/url; run_id, artifact,
        note and unavailable are additive keys present only when set. `partial` appears only
        on a partial verdict."""
        out: dict[str, Any] = {
            "verdict": self.status.value,
            "repo": self.repo,
            "pr": self.pr,
            "head_sha": self.head_sha,
            "checks": [r.to_json() for r in self.rows],
        }
        if self.partial:
            out["partial"] = True
        if self.configuration:
            out["configuration"] = list(self.configuration)
        if self.affected:
            out["affected"] = self.affected
        return out


def evidence_json(e: Evidence) -> dict:
    item: dict[str, Any] = {"path": e.path, "line": e.line, "url": e.url}
    for key in ("run_id", "artifact", "note"):
        value = getattr(e, key)
        if value is not None:
            item[key] = value
    if e.unavailable:
        item["unavailable"] = True
    return item


def overall_status(rows: Iterable[Row]) -> VerdictStatus:
    """Spec 11.1: any FAIL rejects (even with warnings); else any WARN warns; N/A counts as pass."""
    statuses = {r.status for r in rows}
    if Status.FAIL in statuses:
        return VerdictStatus.REJECTED
    if Status.WARN in statuses:
        return VerdictStatus.WARN
    return VerdictStatus.PASS


def _enforce_kind(check: Check, result: CheckResult) -> CheckResult:
    """Advisory checks (the registry's `advisory`) may only PASS/N/A/WARN; all others only PASS/N/A/FAIL."""
    advisory = bool(getattr(check, "advisory", False))
    if advisory and result.status is Status.FAIL:
        log.warning("check %s is advisory but returned FAIL; recording WARN", check.number)
        return result.model_copy(update={"status": Status.WARN})
    if not advisory and result.status is Status.WARN:
        log.warning("check %s is blocking but returned WARN; recording FAIL", check.number)
        return result.model_copy(update={"status": Status.FAIL})
    return result


def _registered(check: Check) -> bool:
    """A row of the registry (`checks/check_NN_<slug>.py`), not a stand-in."""
    return isinstance(check, Registered)


def run_check(check: Check, ctx: ReviewContext) -> Row:
    """One row. Never raises: a crashing check becomes a non-passing row and a logged traceback.

    A check none of whose rules was in force on the review date (checks.policy) is N/A; the
    rules it applied are recorded in the row (`details["rules"]`)."""
    rules: list = []
    if getattr(check, "retired", False):
        result = CheckResult.not_applicable(RETIRED_REASON)
    else:
        try:
            # The policy in force gates the registered checks (a stand-in check of a test is
            # not a rule of the repository).
            if _registered(check):
                na_reason, rules = policy_gate(ctx, check.number)
            else:
                na_reason = None
            if na_reason is None:
                na_reason = check.applies(ctx)
            if na_reason is not None:
                result = CheckResult.not_applicable(str(na_reason) or EMPTY_REASON)
            else:
                result = check.evaluate(ctx)
                if not isinstance(result, CheckResult):
                    raise TypeError(f"evaluate() returned {type(result).__name__}, not CheckResult")
        except Exception as exc:  # one broken check must not hide the other fifteen (STYLE 7)
            log.exception("check %s (%s) raised while evaluating %s#%s", check.number, check.name,
                          ctx.snapshot.repo, ctx.snapshot.number)
            message = str(exc).strip() or "no message"
            result = CheckResult.failed(UNEVALUATED_REASON.format(exc_type=type(exc).__name__, message=message))
        result = _enforce_kind(check, result)
        if rules and result.status is not Status.NA and "rules" not in result.details:
            result = result.model_copy(update={"details": {**result.details, "rules": cite(rules)}})
    return Row(
        number=check.number,
        name=check.name,
        status=result.status,
        reason=result.reason.strip() or EMPTY_REASON,
        evidence=list(result.evidence),
        details=dict(result.details),
        advisory=bool(getattr(check, "advisory", False)),
        escalates=bool(getattr(check, "escalates", False)),
    )


def evaluate_context(
    ctx: ReviewContext, *, only: set[int] | None = None, checks: Iterable[Check] | None = None
) -> Verdict:
    if checks is None:
        checks = registry.CHECKS
    checks = list(checks)
    known = {c.number for c in checks}
    if only is not None:
        unknown = set(only) - known
        if unknown:
            raise ValueError(f"no check numbered {join(sorted(unknown), None)}")
    selected = [c for c in checks if only is None or c.number in only]
    tracing = sorted((c for c in selected if c.number in BUDGET_ORDER), key=lambda c: BUDGET_ORDER.index(c.number))
    others = [c for c in selected if c.number not in BUDGET_ORDER]
    if ctx.snapshot.is_lazy and len(selected) > 1:
        # Checks are pure functions of the context (its shared facts are computed once under a
        # lock), so their order of evaluation cannot change a row, except for the budget they
        # share: those run in one task, in BUDGET_ORDER. The rows keep registry order.
        with ThreadPoolExecutor(min(LAZY_WORKERS, len(others) + 1), thread_name_prefix="infx-check") as pool:
            # Each task in one chunk of frame memory (recipes.stack): the pool's threads would
            # otherwise map and unmap frame memory as the launch walkers recurse.
            traced = pool.submit(on_one_chunk, lambda: [run_check(c, ctx) for c in tracing])
            rows = list(pool.map(lambda c: on_one_chunk(run_check, c, ctx), others)) + traced.result()
    else:
        rows = [run_check(c, ctx) for c in others + tracing]
    rows.sort(key=lambda r: r.number)
    snap = ctx.snapshot
    signoff = None
    if snap.signoff is not None:
        signoff = SignoffRef(author=snap.signoff.author, key=snap.signoff.key, url=snap.signoff.url)
    return Verdict(
        status=overall_status(rows),
        rows=rows,
        repo=snap.repo,
        pr=snap.number,
        head_sha=snap.head_sha,
        signoff=signoff,
        head_moved=HeadMoved(current_head_sha=snap.current_head_sha) if snap.head_moved else None,
        partial=only is not None and set(only) != known,
        escalation=list(ctx.config.policy.pareto_escalation),
        configuration=[str(f) for f in ctx.config_findings],
        affected=affected_json(ctx),
    )


def affected_json(ctx: ReviewContext) -> list[dict]:
    """The affected points as the JSON verdict shows them ([] when no check needed them)."""
    if "affected" not in ctx.__dict__:
        return []
    return [{"config_key": ap.config_key, "point": getattr(ap.point, "point_id", ""), "scope": ap.scope,
             "reasons": list(ap.reasons)} for ap in ctx.affected.points]


def evaluate(
    snapshot: PRSnapshot, *, only: set[int] | None = None, checks: Iterable[Check] | None = None
) -> Verdict:
    """Run every check (or just `only`) in number order. `checks` replaces the registry in tests."""
    return evaluate_context(ReviewContext(snapshot), only=only, checks=checks)
