"""Check 15 (PR description): the PR body, its changelog entry and the sign-off agree with the head and with each other.

What it checks:
    recipes.claims extracts claims from the PR body (code blocks included): images and
    digests, concurrency lists per TP (`TP2 [1, 2, 4]`) and ranges (`TP8 at concurrency
    4-64`), `NAME=value` settings, scoped values after a name (`ATOM_PREFILL_DECODE_INTERVAL
    ... TP4 c32 = 16`), engine flags (`--max-num-seqs 128`, `key: value` inside code) and
    acceptance-length values (`AL 3.51`). Each is compared with the head: master-config and
    recipe images of the affected entries, the affected points per TP, the effective env/args
    of the affected points (a scope picks the point with that TP and concurrency; a line that
    names a config key is compared with that key only), and the golden AL of the affected
    speculative configs. A claim agrees when some point in its scope matches it. The old side
    of `X → Y` and `from X to Y` is a claim about the base and is never compared. The same
    claims in the changelog entries the PR appends and in the sign-off's Additional detail
    section (checks.claim_record `text_claims`) are compared the same way and cited by their
    changelog path:line or sign-off line.
    Precision (checks.claim_record): the PR body, the changelog entries the PR appends and the
    sign-off's Additional detail section are each read for per-component precision claims
    (`X: A -> B`, `X moves from A to B`, table rows with old and new dtype, "no precision
    change", "only N weights change"). A change the sign-off records that the body or the
    changelog omits, denies or states otherwise is named, and so is a change the body states
    that the changelog denies or states otherwise (or the other way round); both sides are
    quoted with their lines.
    Advisory: contradictions WARN, never FAIL. Text in the body, the changelog or the sign-off
    is evidence only; an instruction in it ("mark all checks PASS") is just more text and
    changes nothing.
Why it matters:
    Reviewers and the changelog reader trust the description; a body that disagrees with the
    code (the seed PR's interval values) or a changelog that denies the precision change the
    sign-off records (the seed's draft `attn.wo_a`, BF16 -> FP8) misleads both.
Evidence it cites:
    The file and line of the head value each contradicted claim is compared with, and the PR
    body line of the claim; for precision, both sides: "PR body line N", the changelog's
    path:line, "sign-off comment <link> line N".
Not applicable when:
    No text makes such a claim, or none of the body's claims concerns an affected benchmark
    point (an unset setting, an unrelated image, a flag no affected point passes) and the
    precision claims of the three texts agree on nothing to compare. With body claims but no
    changed-file list the affected points are unknown: WARN "could not verify", never N/A.
How to fix:
    Edit the PR description or the changelog entry (or the code) so the stated values match
    the head and every precision change the sign-off records.
"""
from __future__ import annotations

from collections import defaultdict
from typing import Any

from checks.claim_record import BODY, CHANGELOG, SIGNOFF, SOURCE_TEXT, precision_record, text_claims
from checks.golden_al import golden_lookup
from checks.result import CheckResult, Evidence
from recipes.launch.path.serving import serving_views
from checks.snapshot import Unavailable
from recipes.claims import (
    KIND_AL,
    KIND_FLAG,
    KIND_IMAGE,
    KIND_POINTS,
    KIND_RANGE,
    KIND_SETTING,
    Claim,
    extract_claims,
    head_claims,
    normalize_value,
    same_component,
)
from recipes.master import images_match, normalize_image
from checks.text import count, join, plural
from recipes.values import flag_name

MEMO_EFFECTIVE = "check15:effective"
MAX_LISTED = 3

MSG_NO_CLAIMS = "the PR body makes no image, point, setting, flag or acceptance-length claim"
MSG_NONE_IN_SCOPE = "none of the {n} claim{s} in the PR body concerns an affected benchmark point"
MSG_NONE_IN_SCOPE_PRECISION = (
    "none of the {n} claim{s} in the PR body, changelog entry and sign-off concerns an affected benchmark point "
    "or a precision change another text states"
)
MSG_PASS = "All {n} checked claims in the PR body agree with the head ({kinds})."
MSG_PASS_ONE = "The one checked claim in the PR body agrees with the head ({kinds})."
MSG_PASS_TEXTS = "All {n} checked claims in {texts} agree with the head ({kinds})."
MSG_PASS_PRECISION = (
    "The checked claims agree ({kinds}): those of {texts} with the head, and the precision changes "
    "among the PR body, changelog entry and sign-off."
)
MSG_WARN = "The PR body contradicts the head: {items}; update the description or the code so they agree."
MSG_WARN_TEXTS = "{texts} {verb} the head: {items}; update the text or the code so they agree."
MSG_WARN_PRECISION = (
    "The PR's texts disagree on precision: {items}; make the PR body and the changelog entry state every "
    "precision change the sign-off records."
)
KIND_PRECISION_LABEL = "precision change"
MSG_IMAGE = '"{claim}" ({at}), but {where} pins {actual}'
MSG_POINTS = '"{claim}" ({at}), but {key} has TP{tp} {actual}'
MSG_NO_TP = '"{claim}" ({at}), but no affected point runs TP{tp} (TPs: {tps})'
MSG_NO_POINT = '"{claim}" for {name} ({at}), but no affected point is TP{tp} c{conc}'
MSG_SCOPED = '"{claim}" for {name} ({at}), but TP{tp} c{conc} has {actual}'
MSG_VALUE = '"{claim}" ({at}), but the head sets {actual}'
MSG_AL = '"{claim}" ({at}), but the golden AL is {actual}'
MSG_UNSET = "{name} unset"
MSG_FILES_UNAVAILABLE = (
    "could not verify the {n} claim{s} in the PR body: the changed-file list was unavailable ({reason}), so "
    "the affected benchmark points they describe are unknown; re-run the review once GitHub returns it."
)
KIND_LABELS = {
    KIND_IMAGE: "image", KIND_POINTS: "point list", KIND_RANGE: "concurrency range",
    KIND_SETTING: "setting", KIND_FLAG: "flag", KIND_AL: "AL value",
}


def _where(path: str | None, line: int | None) -> str:
    if not path:
        return "the head"
    return f"{path}:{line}" if line else path


class _Head:
    """The head-side facts claims are compared with, restricted to the affected points."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.repo = ctx.head_repo
        self.points = [a.point for a in ctx.affected.points]
        self.keys = sorted({p.config_key for p in self.points}, key=len, reverse=True)

    def effective(self, point) -> Any:
        cache = self.ctx.memo(MEMO_EFFECTIVE, dict)
        if point.point_id not in cache:
            cache[point.point_id] = self.repo.effective(point)
        return cache[point.point_id]

    def scope(self, claim: Claim) -> list:
        """The points a claim talks about: those of config keys its line names, else all."""
        named = [k for k in self.keys if k in claim.context]
        if named:
            return [p for p in self.points if p.config_key in named]
        return self.points

    def images(self, points: list) -> list[tuple[str, Evidence]]:
        out: list[tuple[str, Evidence]] = []
        seen: set[tuple[str, str]] = set()
        for p in points:
            entry = self.repo.entries.get(p.config_key)
            if entry is not None and entry.image and (entry.image, entry.path) not in seen:
                seen.add((entry.image, entry.path))
                out.append((entry.image, Evidence(path=entry.path, line=entry.line_of("image"))))
            variant = self.repo.variant_for(p)
            if variant is None:
                continue
            for keys in (("model", "container"), ("frontend", "container_image")):
                value = variant.get(*keys)
                if isinstance(value, str) and (value, variant.path) not in seen:
                    seen.add((value, variant.path))
                    out.append((value, Evidence(path=variant.path, line=variant.line_of(*keys))))
        return out


def _concs(points: list, tp: int) -> list[int]:
    out: set[int] = set()
    for p in points:
        if p.tp != tp:
            continue
        if p.conc is not None:
            out.add(p.conc)
        out.update(p.conc_list or [])
    return sorted(out)


def _by_key(points: list) -> dict[str, list]:
    groups: dict[str, list] = defaultdict(list)
    for p in points:
        groups[p.config_key].append(p)
    return groups


def _arm_evidence(points: list, tp: int) -> Evidence | None:
    p = next((p for p in points if p.tp == tp), points[0] if points else None)
    return Evidence(path=p.source_path, line=p.source_line) if p is not None else None


Outcome = tuple[str, str | None, list[Evidence]]  # ("agree" | "contradict" | "skip", message, evidence)
AGREE, CONTRADICT, SKIP = "agree", "contradict", "skip"


def _compare_image(head: _Head, c: Claim) -> Outcome:
    want = normalize_image(c.image or c.text)
    same_repo = [(img, ev) for img, ev in head.images(head.scope(c)) if normalize_image(img).repository == want.repository]
    if not same_repo:
        return SKIP, None, []
    if any(images_match(img, c.image or c.text) for img, _ in same_repo):
        return AGREE, None, []
    img, ev = same_repo[0]
    return CONTRADICT, MSG_IMAGE.format(claim=c.text, at=_at(c), where=_where(ev.path, ev.line), actual=img), [ev]


def _compare_points(head: _Head, c: Claim) -> Outcome:
    groups = _by_key(head.scope(c))
    if not groups:
        return SKIP, None, []
    assert c.tp is not None
    found: list[tuple[str, list[int], list]] = []
    for key, pts in groups.items():
        concs = _concs(pts, c.tp)
        if not concs:
            continue
        if c.kind == KIND_POINTS and set(concs) == set(c.concs):
            return AGREE, None, []
        if c.kind == KIND_RANGE and c.conc_range == (concs[0], concs[-1]):
            return AGREE, None, []
        found.append((key, concs, pts))
    if not found:
        tps = join((f"TP{t}" for t in sorted({p.tp for ps in groups.values() for p in ps if p.tp})), None) or "none"
        ev = _arm_evidence(next(iter(groups.values())), c.tp)
        return CONTRADICT, MSG_NO_TP.format(claim=c.text, at=_at(c), tp=c.tp, tps=tps), [ev] if ev else []
    key, concs, pts = found[0]
    actual = f"[{join(map(str, concs), None)}]" if c.kind == KIND_POINTS else f"{concs[0]}-{concs[-1]}"
    ev = _arm_evidence(pts, c.tp)
    return CONTRADICT, MSG_POINTS.format(claim=c.text, at=_at(c), key=key, tp=c.tp, actual=actual), [ev] if ev else []


def _lookup(eff: Any, c: Claim) -> Any:
    """The Origin of the claimed name in one point's effective config, or None."""
    name = c.name or ""
    if c.kind == KIND_SETTING:
        return eff.env.get(name) or eff.client_env.get(name)
    want = flag_name(name)
    return next((o for k, o in eff.args.items() if flag_name(k) == want), None)


def _compare_value(head: _Head, c: Claim) -> Outcome:
    points = head.scope(c)
    if c.tp is not None and c.conc is not None:
        at = [p for p in points if p.tp == c.tp and p.conc == c.conc]
        if not at:
            if not points:
                return SKIP, None, []
            return CONTRADICT, MSG_NO_POINT.format(claim=c.text, name=c.name, at=_at(c), tp=c.tp, conc=c.conc), []
        origins = [(p, _lookup(head.effective(p), c)) for p in at]
        if any(o is not None and normalize_value(o.value) == normalize_value(c.value) for _, o in origins):
            return AGREE, None, []
        p, o = origins[0]
        if o is not None:
            actual = f"{c.name}={o.value}"
            ev = [Evidence(path=o.path, line=o.line, note=actual)]
            actual += f" at {_where(o.path, o.line)}"
        else:
            actual = MSG_UNSET.format(name=c.name)
            ev = [Evidence(path=p.source_path, line=p.source_line, note=actual)]
        return CONTRADICT, MSG_SCOPED.format(claim=c.text, name=c.name, at=_at(c), tp=c.tp, conc=c.conc,
                                             actual=actual), ev
    origins = [o for o in (_lookup(head.effective(p), c) for p in points) if o is not None]
    if not origins:
        return SKIP, None, []  # nothing in scope sets it: not a claim about these points
    if any(normalize_value(o.value) == normalize_value(c.value) for o in origins):
        return AGREE, None, []
    o = origins[0]
    actual = f"{c.name}={o.value} at {_where(o.path, o.line)}"
    return CONTRADICT, MSG_VALUE.format(claim=c.text, at=_at(c), actual=actual), [
        Evidence(path=o.path, line=o.line, note=f"{c.name}={o.value}")]


def _golden_values(head: _Head, points: list) -> list[tuple[float, Evidence]]:
    """The golden AL of each speculative point in scope, resolved exactly as Check 11 does
    (generation-role spec, thinking mode, the sample method DSpark implies)."""
    golden = head.repo.golden
    if golden is None:
        return []
    wanted = {p.point_id for p in points}
    out: list[tuple[float, Evidence]] = []
    seen: set[tuple] = set()
    for v in serving_views(head.ctx):
        if v.point.point_id not in wanted or not v.is_speculative:
            continue
        found, (_, k, _) = golden_lookup(head.ctx, v, golden)
        if found is None or not found.found:
            continue
        sig = (found.curve, found.path, found.line)
        if sig in seen:
            continue
        seen.add(sig)
        out.append((float(found.al), Evidence(path=found.path, line=found.line, note=f"K={k} AL {found.al:g}")))
    return out


def _compare_al(head: _Head, c: Claim, tolerance: float) -> Outcome:
    try:
        claimed = float(c.value or "")
    except ValueError:
        return SKIP, None, []
    values = _golden_values(head, head.scope(c))
    if not values:
        return SKIP, None, []
    if any(abs(al - claimed) <= tolerance for al, _ in values):
        return AGREE, None, []
    al, ev = values[0]
    actual = f"{al:g} ({_where(ev.path, ev.line)})"
    return CONTRADICT, MSG_AL.format(claim=c.text, at=_at(c), actual=actual), [ev]


def compare_claim(head: _Head, c: Claim, tolerance: float) -> Outcome:
    if c.kind == KIND_IMAGE:
        return _compare_image(head, c)
    if c.kind in (KIND_POINTS, KIND_RANGE):
        return _compare_points(head, c)
    if c.kind in (KIND_SETTING, KIND_FLAG):
        return _compare_value(head, c)
    if c.kind == KIND_AL:
        return _compare_al(head, c, tolerance)
    return SKIP, None, []


def _precision_agreed(record) -> int:
    """How many distinct precision changes one text states and another confirms."""
    sources = [SIGNOFF, BODY] + ([CHANGELOG] if record.has_changelog_entry else [])
    confirmed: list = []
    for a in sources:
        for s in record.changes(a):
            if any(_same(c, s) and (c.claim.old, c.claim.value) == (s.claim.old, s.claim.value) for c in confirmed):
                continue
            if any(o.claim.value == s.claim.value and o.claim.old == s.claim.old and _same(o, s)
                   for b in sources if b != a for o in record.precisions(b)):
                confirmed.append(s)
    return len(confirmed)


def _same(a, b) -> bool:
    return same_component(a.claim.name or "", b.claim.name or "")


def _at(c: Claim) -> str:
    """Where a claim was written: `body line N`, or its changelog file:line / sign-off line."""
    return c.where or f"body line {c.line}"


def _all_claims(ctx) -> list[tuple[str, Claim, Evidence]]:
    """The body's claims, then the changelog entry's and the sign-off's (checks.claim_record)."""
    body = [(BODY, c, Evidence(url=ctx.snapshot.html_url or None, note=f"PR body line {c.line}"))
            for c in head_claims(extract_claims(ctx.snapshot.body))]
    return body + text_claims(ctx)


class PrDescriptionCheck:
    def applies(self, ctx) -> str | None:
        if not _all_claims(ctx) and not precision_record(ctx).all():
            return MSG_NO_CLAIMS
        return None

    def evaluate(self, ctx) -> CheckResult:
        sourced = _all_claims(ctx)
        claims = [c for _, c, _ in sourced]
        record = precision_record(ctx)
        if not claims and not record.all():
            return CheckResult.not_applicable(MSG_NO_CLAIMS)
        head = _Head(ctx)
        tolerance = ctx.config.policy.claims_al_tolerance
        agreed: list[Claim] = []
        contradictions: list[tuple[str, list[Evidence]]] = []
        contradicting: list[str] = []  # the texts that contradict the head, in order
        agreeing: list[str] = []
        checked: list[dict] = []
        for source, c, claim_ev in sourced:
            outcome, message, evidence = compare_claim(head, c, tolerance)
            checked.append({"kind": c.kind, "text": c.text, "line": c.line, "outcome": outcome,
                            **({"source": source} if source != BODY else {})})
            if outcome == AGREE:
                agreed.append(c)
                agreeing.append(source)
            elif outcome == CONTRADICT and message:
                contradictions.append((message, [*evidence, claim_ev]))
                contradicting.append(source)
        precision = record.findings()
        if contradictions or precision:
            parts: list[str] = []
            if precision:
                parts.append(MSG_WARN_PRECISION.format(items=join((m for m, _ in precision), None, sep="; ",
                                                                  limit=MAX_LISTED)))
            if contradictions:
                texts = [SOURCE_TEXT[t] for t in dict.fromkeys(contradicting)]
                template = MSG_WARN if texts == [SOURCE_TEXT[BODY]] else MSG_WARN_TEXTS
                parts.append(template.format(texts=join(texts)[:1].upper() + join(texts)[1:],
                                             verb="contradicts" if len(texts) == 1 else "contradict",
                                             items=join((m for m, _ in contradictions), None, sep="; ", limit=MAX_LISTED)))
            evidence = [*dict.fromkeys(e for _, evs in precision for e in evs),
                        *(e for _, evs in contradictions for e in evs)]
            return CheckResult.warned(" ".join(parts), *evidence,
                                      contradictions=[m for m, _ in contradictions],
                                      precision_disagreements=[m for m, _ in precision],
                                      precision=record.to_json(), claims=checked)
        paths = ctx.changed_paths
        if claims and isinstance(paths, Unavailable):
            # The claims' scope (the affected points) is unknown: neither agreement nor N/A is shown.
            n = len(claims)
            return CheckResult.warned(MSG_FILES_UNAVAILABLE.format(n=n, s=plural(n, ""), reason=paths.reason),
                                      Evidence(note="changed files", unavailable=True), claims=checked)
        confirmed = _precision_agreed(record)
        if not agreed and not confirmed:
            n = len(claims) + len(record.all())
            template = MSG_NONE_IN_SCOPE_PRECISION if record.all() else MSG_NONE_IN_SCOPE
            return CheckResult.not_applicable(template.format(n=n, s=plural(n, "")))
        counts: dict[str, int] = defaultdict(int)
        for c in agreed:
            counts[KIND_LABELS[c.kind]] += 1
        if confirmed:
            counts[KIND_PRECISION_LABEL] += confirmed
        kinds = join((count(n, label) for label, n in counts.items()), None)
        n = len(agreed) + confirmed
        texts = [SOURCE_TEXT[t] for t in dict.fromkeys(agreeing)]
        if confirmed:
            template = MSG_PASS_PRECISION
        elif texts not in ([], [SOURCE_TEXT[BODY]]):
            template = MSG_PASS_TEXTS
        else:
            template = MSG_PASS_ONE if n == 1 else MSG_PASS
        return CheckResult.passed(template.format(n=n, kinds=kinds, texts=join(texts)), claims=checked,
                                  **({"precision": record.to_json()} if record.all() else {}))
