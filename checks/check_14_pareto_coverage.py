"""Check 14 (Pareto coverage): every curve the PR affects has enough measured frontier points.

What it checks:
    From the sweep run Check 1 chose (`chosen_sweep_run`), the throughput artifact's rows (flat
    or nested AgentX) are grouped into curves (spec 10.1: model, scenario, base GPU +
    framework, precision, run, percentile; fixed-seq uses median E2EL, AgentX the policy
    percentile, P90 by default) and counted with the "upper_right" frontier of spec 10.2. Only
    curves touched by the affected points count: a curve is touched when an affected point
    has its model prefix, scenario, base GPU, framework and precision (and, for fixed-seq,
    speculative method). PASS when every affected curve has at least `pareto_min_frontier`
    frontier points and no invalid rows; otherwise WARN with `n/5` or "unverifiable".
    Advisory: never FAIL.
    Admin bypass: a human comment (not a bot; quoted lines and code never count) by a user
    whose repository `permission` AND `role_name` are both `admin`, holding the phrase
    `pareto bypass` (policy `pareto_bypass_phrase`, any letter case) and the assessed head SHA
    (7+ hex characters or in full). It does not turn the WARN into a PASS; the row says
    "admin bypass recorded by @x" instead of "admin bypass not verified".
Why it matters:
    A curve with fewer than five frontier points cannot show the throughput/latency trade-off
    the dashboard claims; reviewers must see the count before merge.
Evidence it cites:
    The run id and throughput artifact, per-curve counts (details["curves"]), a Mermaid chart
    per curve (details["mermaid"]: every measured point on linear E2EL and throughput axes,
    the frontier's points marked) and the bypass comment when there is one.
Not applicable when:
    The PR affects no benchmark point (docs-only, verifier-only, or only removes curves). An
    unreadable changed-file list is "unverifiable" (WARN), never N/A.
How to fix:
    Add concurrencies that extend the frontier of the short curve and re-run the sweep, or
    ask a repository admin to post `pareto bypass <head sha>` with the reason.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from checks.sweep_runs import chosen_sweep_run, sweep_choice
from checks.result import CheckResult, Evidence
from checks.serving_rows import affected_unknown
from checks.snapshot import Comment, SweepRun, Unavailable, UserAccess
from recipes.artifacts import (
    AGENTIC_SCENARIO,
    FIXED_PERCENTILE,
    NO_SPEC,
    CurveKey,
    base_gpu,
    parse_throughput_rows,
)
from recipes.pareto import FrontierResult, count_curves, frontier, mermaid_chart
from recipes.markdown import strip_quotes_and_code
from checks.text import plural

ADMIN = "admin"
MIN_SHA_CHARS = 7

MSG_NA = "the PR affects no benchmark point, so no Pareto curve can change"
MSG_FILES_UNAVAILABLE = "the PR's changed-file list was unavailable ({reason}), so the affected curves are unknown"
NOTE_FILES = "changed files"
MSG_NO_RUN = "no sweep run of this PR qualified (Check 1){why}"
MSG_NO_ARTIFACT = "run {run} has no {artifact} artifact"
MSG_EXPIRED = "artifact {artifact} of run {run} has expired"
MSG_ARTIFACTS_UNAVAILABLE = "the artifacts of run {run} could not be listed: {reason}"
MSG_ROWS_UNAVAILABLE = "artifact {artifact} of run {run} could not be read: {reason}"
MSG_NO_ROWS = "artifact {artifact} of run {run} holds no throughput rows"
MSG_UNVERIFIABLE = "Pareto coverage is unverifiable: {why}; {bypass}."
MSG_PASS_ONE = "One curve, {curves}, from run {run} artifact {artifact}: {counts}."
MSG_PASS_MANY = "{n} curves from run {run} artifact {artifact}: {curves}."
MSG_WARN = "{lead} in run {run} artifact {artifact}: {curves}; {bypass}."
MSG_LEAD_ONE = "One curve has fewer than {min} verified frontier points"
MSG_LEAD_SOME = "{n} of {total} curves {verb} below {min} verified frontier points"
MSG_LEAD_INVALID = "Some throughput rows are invalid, so coverage is not fully verified"
MSG_CURVE_COUNT = "{measured} measured point{s}, {frontier} on the frontier ({frontier}/{min}){invalid}"
MSG_INVALID = ", {n} invalid"
MSG_UNKEYED = "{n} unreadable row{s} with no curve"
MSG_BYPASS_OK = "admin bypass recorded by @{login}"
MSG_BYPASS_NONE = "admin bypass not verified"
MSG_BYPASS_COMMENTS = "admin bypass not verified (comments unavailable: {reason})"
MSG_FIX = "add concurrencies that extend the frontier and re-run the sweep, or have an admin post `{phrase} {sha}`"

NOTE_BYPASS = "bypass by @{login}"
NOTE_NO_RUN = "no qualifying sweep run"

_INLINE_CODE_RE = re.compile(r"`[^`\n]*`")
_HEX_RE = re.compile(r"\b[0-9a-fA-F]{7,40}\b")


@dataclass(frozen=True)
class CurveSig:
    """What an affected point says about the curve it lands on."""

    model: str
    scenario: str
    gpu: str
    framework: str
    precision: str
    spec: str  # "" for AgentX (its curves mix speculative methods) and for no speculation


def _framework(name: str | None) -> str:
    text = (name or "").lower()
    return text[: -len("-disagg")] if text.endswith("-disagg") else text


def _spec(value: str | None) -> str:
    text = (value or "").lower()
    return "" if text in NO_SPEC else text


def point_signature(point) -> CurveSig:
    scenario = AGENTIC_SCENARIO if point.is_agentic else (point.seq_len or "?")
    return CurveSig(
        model=str(point.model_prefix or "?"),
        scenario=scenario,
        gpu=base_gpu(point.runner),
        framework=_framework(point.framework),
        precision=str(point.precision or "?"),
        spec="" if point.is_agentic else _spec(point.spec_decoding),
    )


def curve_signature(key: CurveKey) -> CurveSig:
    gpu, _, rest = key.hw_key.partition("_")
    framework, _, spec = rest.partition("_")
    return CurveSig(key.model, key.scenario, gpu, framework, key.precision, spec)


def curve_name(key: CurveKey) -> str:
    sig = curve_signature(key)
    hw = f"{sig.gpu} {sig.framework}" + (f" {sig.spec}" if sig.spec else "")
    pct = "median" if key.percentile == FIXED_PERCENTILE else key.percentile
    return f"{key.model} / {key.scenario} / {hw} / {key.precision} / {pct} E2EL"


def _sig_name(sig: CurveSig, percentile: str) -> str:
    hw = f"{sig.gpu} {sig.framework}" + (f" {sig.spec}" if sig.spec else "")
    pct = "median" if sig.scenario != AGENTIC_SCENARIO else percentile
    return f"{sig.model} / {sig.scenario} / {hw} / {sig.precision} / {pct} E2EL"


def _chart_body(chart: str) -> str:
    """The verdict template adds the ```mermaid fence itself."""
    lines = [ln for ln in chart.splitlines() if not ln.strip().startswith("```")]
    return "\n".join(lines)


# --------------------------------------------------------------------------- admin bypass


def _human_text(body: str) -> str:
    """A comment without quoted lines, code blocks or inline code (none of them count)."""
    return "\n".join(_INLINE_CODE_RE.sub(" ", line) for _, line in strip_quotes_and_code(body))


def _names_sha(text: str, sha: str) -> bool:
    sha = sha.lower()
    return bool(sha) and any(sha.startswith(m.group(0).lower()) for m in _HEX_RE.finditer(text))


def _is_admin(access) -> bool:
    return isinstance(access, UserAccess) and access.permission == ADMIN and access.role_name == ADMIN


# At most this many commenters' repository access is asked for bypass comments.
MAX_BYPASS_USERS = 10


def find_bypass(ctx) -> tuple[Comment | None, str]:
    """The admin comment recording a bypass for the assessed SHA, and the row's bypass phrase."""
    snap = ctx.snapshot
    policy = ctx.config.policy
    comments = snap.comments
    if isinstance(comments, Unavailable):
        return None, MSG_BYPASS_COMMENTS.format(reason=comments.reason)
    pool = list(comments)
    if snap.signoff is not None and all(c.id != snap.signoff.id for c in pool):
        pool.append(snap.signoff)
    bots = {b.lower() for b in policy.bot_logins}
    phrase = policy.pareto_bypass_phrase.lower()
    asked: set[str] = set()
    for c in sorted(pool, key=lambda c: (c.created_at is None, c.created_at), reverse=True):
        if c.is_bot or c.author.lower() in bots or c.author.lower().endswith("[bot]"):
            continue
        text = _human_text(c.body)
        if phrase not in " ".join(text.lower().split()):
            continue
        if not _names_sha(text, snap.head_sha):
            continue
        # Each author's access is one request: a thread of bypass comments asks a bounded few.
        if c.author.lower() not in asked and len(asked) >= MAX_BYPASS_USERS:
            break
        asked.add(c.author.lower())
        if _is_admin(snap.user_access(c.author)):
            return c, MSG_BYPASS_OK.format(login=c.author)
    return None, MSG_BYPASS_NONE


# --------------------------------------------------------------------------- the check


def _throughput(run: SweepRun, artifact: str) -> tuple[list | None, str | None]:
    """(rows, None) or (None, why the rows are unverifiable)."""
    rid = run.run_id
    if isinstance(run.artifacts, Unavailable):
        return None, MSG_ARTIFACTS_UNAVAILABLE.format(run=rid, reason=run.artifacts.reason)
    if isinstance(run.throughput, Unavailable):
        return None, MSG_ROWS_UNAVAILABLE.format(artifact=artifact, run=rid, reason=run.throughput.reason)
    listed = {a.name: a for a in run.artifacts}
    if artifact in listed and listed[artifact].expired:
        return None, MSG_EXPIRED.format(artifact=artifact, run=rid)
    if run.throughput is None:
        return None, MSG_NO_ARTIFACT.format(artifact=artifact, run=rid)
    if not run.throughput:
        return None, MSG_NO_ROWS.format(artifact=artifact, run=rid)
    return list(run.throughput), None


def _count_text(r: FrontierResult, min_points: int) -> str:
    return MSG_CURVE_COUNT.format(
        measured=r.measured, s=plural(r.measured, ""), frontier=r.frontier_points, min=min_points,
        invalid=MSG_INVALID.format(n=r.invalid) if r.invalid else "",
    )


class ParetoCoverageCheck:
    def applies(self, ctx) -> str | None:
        # Without the file list a recipe-only change is invisible: "nothing affected" is unproven.
        if isinstance(ctx.changed_paths, Unavailable) or affected_unknown(ctx):
            return None
        if not ctx.affected.points:
            return MSG_NA
        return None

    def evaluate(self, ctx) -> CheckResult:
        policy = ctx.config.policy
        min_points = policy.pareto_min_frontier
        artifact = ctx.config.sweep.throughput_artifact
        percentile = policy.pareto_agentic_percentile
        sigs = sorted({point_signature(a.point) for a in ctx.affected.points},
                      key=lambda s: (s.model, s.scenario, s.gpu, s.framework, s.precision, s.spec))
        bypass_comment, bypass = find_bypass(ctx)
        bypass_ev = [Evidence(url=bypass_comment.url, note=NOTE_BYPASS.format(login=bypass_comment.author))] if bypass_comment else []

        paths = ctx.changed_paths
        if isinstance(paths, Unavailable):
            reason = MSG_UNVERIFIABLE.format(why=MSG_FILES_UNAVAILABLE.format(reason=paths.reason), bypass=bypass)
            return CheckResult.warned(reason, Evidence(note=NOTE_FILES, unavailable=True), *bypass_ev,
                                      curves={_sig_name(s, percentile): None for s in sigs})

        unknown = affected_unknown(ctx)
        if unknown is not None:
            reason = MSG_UNVERIFIABLE.format(why=unknown[0].removeprefix("could not verify: ").split(";")[0], bypass=bypass)
            return CheckResult.warned(reason, unknown[1], *bypass_ev, curves={})

        run = chosen_sweep_run(ctx)
        if run is None:
            choice = sweep_choice(ctx)
            problems = choice.unavailable + choice.problems
            why = f": {problems[0]}" if problems else ""
            reason = MSG_UNVERIFIABLE.format(why=MSG_NO_RUN.format(why=why), bypass=bypass)
            return CheckResult.warned(reason, Evidence(note=NOTE_NO_RUN, unavailable=True), *bypass_ev,
                                      curves={_sig_name(s, percentile): None for s in sigs})
        rows, problem = _throughput(run, artifact)
        if rows is None:
            reason = MSG_UNVERIFIABLE.format(why=problem, bypass=bypass)
            return CheckResult.warned(reason, Evidence(run_id=run.run_id, artifact=artifact, note=problem, unavailable=True),
                                      *bypass_ev, curves={_sig_name(s, percentile): None for s in sigs})

        parsed = parse_throughput_rows(rows, source=artifact, run=str(run.run_id), agentic_percentile=percentile)
        counted = count_curves(parsed, min_points=min_points)
        by_sig: dict[CurveSig, list[CurveKey]] = {}
        for key in counted:
            by_sig.setdefault(curve_signature(key), []).append(key)

        measured: dict[CurveKey, list[tuple[float, float]]] = {}
        for p in parsed.points:
            measured.setdefault(p.curve_key, []).append((p.x, p.y))

        results: list[tuple[str, FrontierResult]] = []
        drawn: list[list[tuple[float, float]]] = []  # each result's measured points, for its chart
        for sig in sigs:
            keys = by_sig.get(sig, [])
            if not keys:
                # An affected curve the run never measured: zero points, the evidence is missing.
                results.append((_sig_name(sig, percentile), frontier([], min_points=min_points)))
                drawn.append([])
            for key in keys:
                results.append((curve_name(key), counted[key]))
                drawn.append(measured.get(key, []))
        unkeyed = sum(1 for row in parsed.invalid if row.curve_key is None)

        curves = {
            name: {"measured": r.measured, "invalid": r.invalid, "frontier": r.frontier_points,
                   "min": min_points, "status": r.status, "points": r.frontier}
            for name, r in results
        }
        charts = [_chart_body(c) for c in (mermaid_chart(name, r, pts) for (name, r), pts in zip(results, drawn)) if c]
        described = [f"{name}: {_count_text(r, min_points)}" for name, r in results]
        if unkeyed:
            described.append(MSG_UNKEYED.format(n=unkeyed, s=plural(unkeyed, "")))
        evidence = [Evidence(run_id=run.run_id, artifact=artifact), *bypass_ev]
        short = [r for _, r in results if r.status != "PASS"]

        if not short and not unkeyed:
            if len(results) == 1:
                name, r = results[0]
                reason = MSG_PASS_ONE.format(curves=name, run=run.run_id, artifact=artifact,
                                             counts=_count_text(r, min_points))
            else:
                reason = MSG_PASS_MANY.format(n=len(results), run=run.run_id, artifact=artifact,
                                              curves="; ".join(described))
            return CheckResult.passed(reason, *evidence, curves=curves, mermaid=charts)

        if not short or all(r.frontier_points >= min_points for r in short):
            lead = MSG_LEAD_INVALID
        elif len(results) == 1:
            lead = MSG_LEAD_ONE.format(min=min_points)
        else:
            lead = MSG_LEAD_SOME.format(n=len(short), total=len(results), verb=plural(len(short), "is", "are"),
                                        min=min_points)
        fix = MSG_FIX.format(phrase=policy.pareto_bypass_phrase, sha=ctx.snapshot.head_sha[:MIN_SHA_CHARS + 1])
        bypass_text = bypass if bypass_comment else f"{bypass}; {fix}"
        reason = MSG_WARN.format(lead=lead, run=run.run_id, artifact=artifact,
                                 curves="; ".join(described), bypass=bypass_text)
        return CheckResult.warned(reason, *evidence, curves=curves, mermaid=charts)
