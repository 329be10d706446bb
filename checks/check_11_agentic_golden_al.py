"""Check 11 (Agentic golden AL): agentic speculative runs use simulated acceptance at the golden acceptance length.

What it checks:
    For every affected agentic point that speculates, on its effective config at the head:
    (a) simulated acceptance is pinned. For srt-slurm recipes the harness injects it
    (spec 5.4): `injected_acceptance` reproduces the injector's decision (engine known, an
    AgentX throughput run, `spec-decoding` not none, speculative args on the generation role)
    and its golden lookup. Older-format recipes (`backend.<role>_environment`, pre-schema-2)
    predate the srt-slurm injector: the recipe itself must pin the engine's knob, or the master
    config opts in with `SYNTHETIC_ACCEPTANCE=true` for the runner-side injector
    (`runners/inject_synthetic_acceptance.py`, July 2026); the value written (recipe knob or
    `SYNTHETIC_ACCEPTANCE_LENGTH`) is judged. For old-layout launchers the script itself must set the engine's
    knob (spec 5.3: SGLang `SGLANG_SIMULATE_ACC_LEN`, vLLM `synthetic_acceptance_length` in
    `--speculative-config`, TRT-LLM `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS` = AL - 1, ATOM
    `--spec-decode-acceptance-length` or `--spec-decode-acceptance-rate`, TileRT
    `TILERT_SIMULATE_ACC_LEN`), and only when `EVAL_ONLY` is not true: an unguarded setting
    would put evals on simulated acceptance, and one set only when `EVAL_ONLY` is true leaves
    the benchmark run unpinned (recipes.scripts.eval_branch reads which run a branch serves).
    "Only outside eval runs" is a later sub-rule (checks.policy `eval-real-acceptance`, spec
    12): before its date an unguarded setting pins the benchmark run and passes, and the row
    says that evals ran on it too.
    The launcher's method and draft length come from its server command wherever it builds
    them (recipes.effective: the vLLM `--speculative-config` JSON as a literal, a variable set
    per branch, an array element or printf; a TRT-LLM `speculative_config` block written by a
    heredoc); a draft length that differs per run-time branch is "could not verify". On a chain
    the runner picks (AMD disagg), the method is the engine's flag wherever the chain sets it,
    the draft length the value a function writes from its call's parameters, and a knob
    written `KNOB=$VAR` takes VAR's value on the branch the point's values decide
    (checks.chain_reads); one the bot cannot decide for the point is "could not verify".
    (b) The value equals the golden curve (recipes.golden, read from the TARGET branch: a PR
    cannot lower its own reference; a curve the PR adds for a new model is used and the row
    says so; a PR that changes or removes an existing curve FAILs with the change cited) for the
    model prefix, speculative method, thinking mode (`THINKING_MODE` from the env when set,
    else `thinking_on`) and draft length, within policy `golden_al_tolerance`; the curve must
    have been measured on the served model (recipes.golden `same_model`: a K2.5 curve is not
    K2.6's even under a shared `kimik2.5` prefix), else the model has no curve of its own. Any AL written
    by hand (recipe flag/env/JSON, master-config `SYNTHETIC_ACCEPTANCE_LENGTH`) is compared too.
    With no committed curve the Additional detail section must name the AL source: a line
    mentioning the acceptance length (`AL`, `acceptance length`, `golden`) together with a
    URL or a run id (6+ digits) or the word `pending`; otherwise FAIL.
    Synthetic-acceptance knobs on a non-agentic config FAIL as a hack (fixed-sequence runs
    use real acceptance).
Why it matters:
    AgentX throughput with speculative decoding is only comparable when every submission
    accepts draft tokens at the same measured rate for its model and draft length.
Evidence it cites:
    The recipe line of the speculative method, the golden curve file and line, and the
    line of any hand-written AL or synthetic knob.
Not applicable when:
    No affected agentic point speculates and no non-agentic point sets a synthetic knob.
How to fix:
    Remove hand-written AL values (the injector sets the golden one), or set the engine's
    knob to the golden value under an `EVAL_ONLY` guard; for a model without a curve, name
    the AL source in the Additional detail section.
"""
from __future__ import annotations

import re

from checks.chain_reads import chain_spec, point_setting
from checks.conditions import evaluate_condition
from checks.fixes import FIXES_KEY, value_fix
from checks.golden_al import (
    INJECTOR, MSG_NO_K, fmt_number, golden_in_force, golden_lookup, injected_acceptance, thinking_mode,
)
from checks.launch_path import point_env
from checks.policy import BY_KEY, in_force
from checks.result import CheckResult, Evidence
from checks.serving import Hit, serving_views, ServingView
from checks.serving_unlisted import unlisted_agentic_views
from checks.serving_rows import changed_files_unavailable, first_unavailable
from checks.text import escape_inline, items_text, keys_text
from recipes.values import as_float, flag_name as norm_name, is_enabled
from recipes import engines
from recipes.engines import AL_MINUS_ONE, AL_RATE, acceptance_knobs
from recipes.scripts import EVAL_GUARD, eval_branch

RUNNER_INJECTOR = "runners/inject_synthetic_acceptance.py"
SYNTHETIC_METHOD = "synthetic"
# How a hand-written value maps to an AL (spec 5.3): as is, minus one (TRT), or a rate; the
# knobs, the one an old-layout launcher must set and the mechanism's wording are per engine
# (recipes.engines profiles).
# Hits that are YAML mapping entries (a mechanical fix can set their value).
AL_FIX_KINDS = ("env", "client-env", "setting", "recipe")
FIX_WHY = "simulated acceptance must pin the golden AL {al} ({golden}) (Check 11)"


def _engine_knob(engine: str) -> str | None:
    """The knob an old-layout launcher must set for this engine (spec 5.3)."""
    p = engines.profile(engine)
    return p.acceptance_knob if p is not None else None


def _engine_knobs(engine: str) -> tuple[str, ...]:
    """That knob and its other spellings (ATOM also takes the acceptance as a rate)."""
    p = engines.profile(engine)
    return tuple(p.acceptance_knobs) if p is not None and p.acceptance_knob else ()


def _mechanism(engine: str) -> str:
    p = engines.profile(engine)
    return (p.acceptance_mechanism if p is not None else None) or "{al}"


OTHER_MODEL_CODE = "other-model"
MISSING_CURVE_CODES = frozenset({"no-curve", "no-thinking-mode", "no-k", OTHER_MODEL_CODE})
BROKEN_CURVE_CODE = "bad-curve"
MSG_BROKEN_CURVE = ("could not verify the golden AL for {key}: {why}; fix the committed curve file so the "
                    "target acceptance can be read.")
_AL_WORDS = re.compile(r"\b(AL|acceptance[ -]length|golden)\b", re.IGNORECASE)
_AL_SOURCE = re.compile(r"https?://\S+|\b\d{6,}\b|\bpending\b", re.IGNORECASE)

MSG_NA = "No affected agentic benchmark point uses speculative decoding, and no synthetic-acceptance knob is set elsewhere."
MSG_NON_AGENTIC = (
    "Synthetic acceptance on non-agentic {keys}: {items}; remove it, fixed-sequence and eval runs must "
    "keep real acceptance."
)
MSG_NO_GOLDEN = "could not verify: the golden AL curves under {path} could not be read; restore them."
MSG_UNKNOWN_SPEC = (
    "could not verify the golden AL for {key}: {why}; state the speculative method and draft length in "
    "the serving config."
)
MSG_NOT_INJECTED = "Simulated acceptance is off for agentic {key}: {why}; give the generation role its speculative args."
MSG_WRONG_AL = (
    "{key} writes AL {written} ({where}: {setting}), but the golden value is {al} ({golden}); remove the "
    "hand-written value or set it to {al}."
)
MSG_UNDECIDED = ("could not verify the AL {key} sets at {where}: {setting} takes its value from a branch the bot "
                 "cannot decide for this point; write the value where the point's settings choose it.")
MSG_UNRESOLVED = "could not verify the AL {key} sets at {where} ({setting}); write it as a number."
MSG_NOT_PINNED = (
    "Simulated acceptance is not pinned for agentic {key}: {launcher} never sets {knob}; set it to the "
    "golden AL {al} ({golden}) for throughput runs."
)
MSG_NOT_PINNED_LEGACY = (
    "Simulated acceptance is not pinned for agentic {key}: {recipe} uses the older srt-slurm format, which "
    "predates the injector, and never sets {knob}; set it in the generation role's environment to the "
    "golden AL {al} ({golden})."
)
MSG_PASS_LEGACY = (
    "{recipe} (older srt-slurm format, no injector) sets {setting} for {key} ({where}): {curve} {mode} K={k} = {al}"
)
MSG_PASS_RUNNER = (
    "{injector} injects simulated acceptance into {key} because the master config opts in ({where}: {setting}): "
    "{curve} {mode} K={k} = {al}"
)
MSG_UNGUARDED = (
    "{key} sets {setting} at {where} without an {guard} guard, so eval runs would use simulated "
    "acceptance; set it only when {guard} is not true."
)
MSG_EVAL_BRANCH = (
    "{key} sets {setting} at {where} only when {guard} is true, so eval runs use simulated acceptance and "
    "the benchmark run does not; set it only when {guard} is not true."
)
MSG_PASS_NO_SPEC = "{key} runs without speculative decoding ({where}: its branch passes no speculative config)"
MSG_BRANCH_K = (
    "could not verify the golden AL for {key}: {launcher} sets the draft length per run-time branch ({values}), "
    "so the value a point runs with is not one the bot can read; set one draft length per config."
)
MSG_MISSING_CURVE = (
    "No golden AL for agentic {key}: {why}, and the Additional detail section names no AL source; "
    "commit the curve or cite its source (e.g. the pending collection run)."
)
MSG_PASS_INJECTED = (
    "{injector} injects {mechanism} into AgentX throughput runs of {key}: {curve} {mode} K={k} = {al} "
    "({method}, draft length {k}); eval runs keep real acceptance"
)
MSG_PASS_SCRIPT = "{launcher} sets {setting} only outside eval runs for {key}: {curve} {mode} K={k} = {al}"
MSG_PASS_SCRIPT_UNGUARDED = (
    "{launcher} sets {setting} for {key} in every run, eval runs included, which was allowed on the review "
    "date (the rule that it be set only outside eval runs is in force since {since}, {source}): "
    "{curve} {mode} K={k} = {al}"
)
EVAL_RULE = "eval-real-acceptance"
MSG_PASS_SOURCE = "{key} has no committed curve ({why}); the Additional detail section names the AL source: \"{line}\""
MSG_PASS = "{parts}."
MSG_PASS_NEW_CURVE = " The golden curve {curves} is new in this PR and was read from the head."
MSG_CURVE_CHANGED = ("The PR changes the golden AL curves the bot checks against (they are read from the target "
                     "branch): {changes}; golden curves change only in their own reviewed PR.")
def _written_al(h: Hit, k: int | None) -> float | None:
    rule = next((r for n, r in acceptance_knobs().items() if norm_name(n) == norm_name(h.name)), None)
    value = as_float(h.value)
    if rule is None or value is None:
        return None
    if rule == AL_MINUS_ONE:
        return value + 1
    if rule == AL_RATE:
        return 1 + value * k if k else None
    return value


def _al_fix(h: Hit, al: float, k: int | None, golden: str) -> list[dict]:
    """The value `h` must hold to pin the golden AL `al` (the inverse of _written_al), as a fix of
    its YAML line; none for a flag inside a command string or a value in a script."""
    rule = next((r for n, r in acceptance_knobs().items() if norm_name(n) == norm_name(h.name)), None)
    if rule is None or h.kind not in AL_FIX_KINDS or as_float(h.value) is None:
        return []
    if rule == AL_MINUS_ONE:
        value = al - 1
    elif rule == AL_RATE:
        if not k:
            return []
        value = (al - 1) / k
    else:
        value = al
    return value_fix(h.path, h.line, h.name, fmt_number(value), FIX_WHY.format(golden=golden, al=fmt_number(al)))


def _synthetic_hits(ctx, v: ServingView) -> list[Hit]:
    policy = ctx.config.policy
    out = []
    env = point_env(v.point)
    for h in v.hits(*policy.synthetic_acceptance_env, *policy.synthetic_acceptance_flags, *policy.synthetic_acceptance_json_keys):
        if h.condition and evaluate_condition(h.condition, env) is False:
            continue  # on a branch this point does not take (`IS_AGENTIC` is 0 for it)
        if norm_name(h.name) == norm_name("rejection_sample_method"):
            if str(h.value).strip().lower() == SYNTHETIC_METHOD:
                out.append(h)
        elif norm_name(h.name) == norm_name("SYNTHETIC_ACCEPTANCE"):
            if is_enabled(h.value):
                out.append(h)
        elif str(h.value).strip():
            out.append(h)
    return out


def _runner_injection(ctx, v: ServingView) -> tuple[Hit, str] | None:
    """The master-config opt-in `SYNTHETIC_ACCEPTANCE=true` of an older-format multi-node recipe,
    with the runner-side injector that acts on it (`runners/inject_synthetic_acceptance.py`,
    from July 2026): it writes the AL (SYNTHETIC_ACCEPTANCE_LENGTH or the golden lookup) into
    the recipe at launch, so a written SYNTHETIC_ACCEPTANCE_LENGTH is what gets judged."""
    injector = ctx.head_repo.layout.rel(RUNNER_INJECTOR)
    if not ctx.head_repo.exists(injector):
        return None
    on = [h for h in v.hits("SYNTHETIC_ACCEPTANCE", kinds=("setting",)) if is_enabled(h.value)]
    return (on[-1], injector) if on else None


def _source_line(ctx) -> str | None:
    for line in ctx.additional_detail.splitlines():
        if _AL_WORDS.search(line) and _AL_SOURCE.search(line):
            return line.strip(" -*\t")
    return None


class AgenticGoldenAlCheck:
    def applies(self, ctx) -> str | None:
        if changed_files_unavailable(ctx) is not None:
            return None
        in_force = golden_in_force(ctx)
        if in_force is not None and in_force.changes:
            return None  # a PR that edits the reference values is judged whatever it affects
        views = serving_views(ctx) + unlisted_agentic_views(ctx)
        if not views:
            return MSG_NA
        if any(v.is_agentic and v.is_speculative for v in views):
            return None
        return None if any(_synthetic_hits(ctx, v) for v in views if not v.is_agentic) else MSG_NA

    def evaluate(self, ctx) -> CheckResult:
        unavailable = changed_files_unavailable(ctx)
        if unavailable is not None:
            return unavailable
        views = serving_views(ctx) + unlisted_agentic_views(ctx)
        bad = [(v, h) for v in views if not v.is_agentic for h in _synthetic_hits(ctx, v)]
        if bad:
            items = list(dict.fromkeys(f"{h.where} sets {h.shown}" for _, h in bad))
            shown = items_text(items)
            return CheckResult.failed(MSG_NON_AGENTIC.format(keys=keys_text(v.config_key for v, _ in bad), items=shown),
                                      *dict.fromkeys(h.evidence() for _, h in bad))
        targets = [v for v in views if v.is_agentic and v.is_speculative]
        missing = first_unavailable(targets)
        if missing is not None:
            return missing
        in_force = golden_in_force(ctx)
        if in_force is None:
            path = ctx.target_repo.layout.golden_dir
            return CheckResult.failed(MSG_NO_GOLDEN.format(path=path), Evidence(path=path, unavailable=True))
        if in_force.changes:
            return CheckResult.failed(MSG_CURVE_CHANGED.format(changes=items_text([t for t, _ in in_force.changes])),
                                      *dict.fromkeys(e for _, e in in_force.changes))
        if not targets:
            return CheckResult.not_applicable(MSG_NA)
        golden = in_force.golden
        parts: dict[str, Evidence | None] = {}
        evidence: list[Evidence] = []
        used: list[str] = []
        for v in targets:
            result = self._one(ctx, v, golden, parts, evidence, used)
            if result is not None:
                return result
        reason = MSG_PASS.format(parts="; ".join(parts))
        fresh = [s + ".yaml" for s in in_force.new if s in used]
        if fresh:
            reason += MSG_PASS_NEW_CURVE.format(curves=", ".join(fresh))
        return CheckResult.passed(reason, *dict.fromkeys(evidence))

    def _one(self, ctx, v: ServingView, golden, parts: dict, evidence: list, used: list) -> CheckResult | None:
        mode = thinking_mode(v)
        tolerance = ctx.config.policy.golden_al_tolerance
        chained = chain_spec(ctx, v) if v.effective.spec_method is None else None
        if v.effective.spec_method is not None:
            spec_ev = Evidence(path=v.effective.spec_method.path, line=v.effective.spec_method.line)
        elif chained is not None and chained.method_evidence is not None:
            spec_ev = Evidence(path=chained.method_evidence[0], line=chained.method_evidence[1])
        else:
            spec_ev = v.file_evidence
        found, (method, k, _) = golden_lookup(ctx, v, golden)
        off = v.effective.speculation_off if v.variant is None else None
        if off is not None:
            # This point's branch of the launcher does not speculate: no acceptance to pin.
            parts.setdefault(MSG_PASS_NO_SPEC.format(key=v.point.point_id, where=f"{off.path}:{off.line}"), None)
            evidence.append(Evidence(path=off.path, line=off.line))
            return None
        alternatives = v.effective.draft_length_alternatives if v.variant is None else []
        if v.variant is None and method and k is None and alternatives:
            shown = ", ".join(f"{o.value} at line {o.line}" for o in alternatives)
            return CheckResult.failed(MSG_BRANCH_K.format(key=v.config_key, launcher=v.launcher_path, values=shown),
                                      *[Evidence(path=o.path, line=o.line, unavailable=True) for o in alternatives])
        if v.variant is None and (not method or k is None):
            return CheckResult.failed(MSG_UNKNOWN_SPEC.format(key=v.config_key, why=MSG_NO_K.format(method=method or v.point.spec_decoding)),
                                      Evidence(path=v.launcher_path or v.point.source_path, unavailable=True))
        if v.variant is not None:
            # The injector's own decision, which also covers the cases where it injects nothing.
            al, why = injected_acceptance(v.point, v.variant, golden, mode, ctx.config.policy)
        else:
            al, why = found.al, found.reason
        if al is None:
            if found is not None and found.code == BROKEN_CURVE_CODE:
                return CheckResult.failed(MSG_BROKEN_CURVE.format(key=v.config_key, why=why),
                                          Evidence(path=found.path, line=found.line), spec_ev)
            if found is not None and found.code in MISSING_CURVE_CODES:
                line = _source_line(ctx)
                # A curve measured on another model: its model line is the evidence.
                other = [Evidence(path=found.path, line=found.line)] if found.code == OTHER_MODEL_CODE and found.path else []
                if line is None:
                    return CheckResult.failed(MSG_MISSING_CURVE.format(key=v.config_key, why=why), spec_ev, *other)
                parts.setdefault(MSG_PASS_SOURCE.format(key=v.config_key, why=why, line=escape_inline(line, 160)), None)
                evidence.append(spec_ev)
                return None
            if v.variant is not None and method is None:
                return CheckResult.failed(MSG_NOT_INJECTED.format(key=v.config_key, why=why), spec_ev)
            return CheckResult.failed(MSG_UNKNOWN_SPEC.format(key=v.config_key, why=why), spec_ev)
        golden_ev = Evidence(path=found.path, line=found.line) if found is not None and found.path else None
        if found is not None and found.curve:
            used.append(found.curve)
        golden_text = f"{found.curve}.yaml {mode} K={k}" if found is not None else why
        al_names = {norm_name(n) for n in acceptance_knobs()}
        for h in _synthetic_hits(ctx, v):
            if norm_name(h.name) not in al_names or eval_branch(h.condition) is True:
                continue  # an eval-only setting is not what the benchmark run serves (judged below)
            read = point_setting(ctx, v, h)
            if read is None:
                return CheckResult.failed(MSG_UNDECIDED.format(key=v.config_key, where=h.where, setting=h.name),
                                          h.evidence())
            h = read
            written = _written_al(h, k)
            if written is None:
                return CheckResult.failed(MSG_UNRESOLVED.format(key=v.config_key, where=h.where, setting=h.shown),
                                          h.evidence())
            if abs(written - al) > tolerance:
                fix = _al_fix(h, al, k, golden_text)
                return CheckResult.failed(MSG_WRONG_AL.format(key=v.config_key, written=fmt_number(written), where=h.where,
                                                              setting=h.shown, al=fmt_number(al), golden=golden_text),
                                          h.evidence(), *([golden_ev] if golden_ev else []),
                                          **({FIXES_KEY: fix} if fix else {}))
        if v.variant is not None and v.variant.legacy:
            # The older srt-slurm format predates the injector: the recipe pins the value itself
            # (`backend.<role>_environment`, or the engine's JSON/flag), so the value written is judged.
            knob = _engine_knob(v.engine)
            hits = [h for h in v.hits(knob) if h.kind in ("env", "arg", "json")] if knob else []
            runner = _runner_injection(ctx, v)
            if not hits and runner is not None:
                h, injector = runner
                parts.setdefault(MSG_PASS_RUNNER.format(injector=injector, setting=h.shown, where=h.where, key=v.config_key,
                                                        curve=found.curve + ".yaml" if found else "", mode=mode, k=k,
                                                        al=fmt_number(al)), None)
                evidence.extend([h.evidence(), Evidence(path=injector)] + ([golden_ev] if golden_ev else []))
                return None
            if not hits:
                return CheckResult.failed(MSG_NOT_PINNED_LEGACY.format(key=v.config_key, recipe=v.variant.path,
                                                                       knob=knob or "a simulated-acceptance knob",
                                                                       al=fmt_number(al), golden=golden_text),
                                          Evidence(path=v.variant.path, line=v.variant.line_of(
                                              *v.variant.role_path(v.variant.generation_role, "env"))),
                                          *([golden_ev] if golden_ev else []))
            h = hits[-1]
            parts.setdefault(MSG_PASS_LEGACY.format(recipe=v.variant.path, setting=h.shown, where=h.where, key=v.config_key,
                                                    curve=found.curve + ".yaml" if found else "", mode=mode, k=k,
                                                    al=fmt_number(al)), None)
            evidence.extend([h.evidence()] + ([golden_ev] if golden_ev else []))
            return None
        if v.variant is None:
            knob = _engine_knob(v.engine)
            hits = [h for h in v.hits(*_engine_knobs(v.engine)) if h.kind in ("script-env", "script-flag", "json")]
            if not hits:
                return CheckResult.failed(MSG_NOT_PINNED.format(key=v.config_key, launcher=v.launcher_path, knob=knob or "a simulated-acceptance knob",
                                                                al=fmt_number(al), golden=golden_text),
                                          Evidence(path=v.launcher_path, line=1), *([golden_ev] if golden_ev else []))
            # Which run each setting serves, read from the EVAL_ONLY test around it
            # (recipes.scripts.eval_branch): only the benchmark run's branch pins the AL.
            guard_rule = in_force(ctx, EVAL_RULE)
            unguarded = False
            for h in hits:
                branch = eval_branch(h.condition)
                if branch is True:
                    return CheckResult.failed(MSG_EVAL_BRANCH.format(key=v.config_key, setting=h.shown, where=h.where,
                                                                     guard=EVAL_GUARD), h.evidence())
                if branch is None and guard_rule:
                    return CheckResult.failed(MSG_UNGUARDED.format(key=v.config_key, setting=h.shown, where=h.where, guard=EVAL_GUARD),
                                              h.evidence())
                unguarded = unguarded or branch is None
            h = point_setting(ctx, v, hits[0]) or hits[0]
            rule = BY_KEY[EVAL_RULE]
            template = MSG_PASS_SCRIPT_UNGUARDED if unguarded else MSG_PASS_SCRIPT
            parts.setdefault(template.format(launcher=v.launcher_path or h.path, setting=h.shown, key=v.config_key,
                                             curve=found.curve + ".yaml" if found else "", mode=mode, k=k, al=fmt_number(al),
                                             since=rule.since.isoformat(), source=rule.source), None)
            evidence.extend([h.evidence()] + ([golden_ev] if golden_ev else []))
            if chained is not None and chained.draft_length is not None:
                # Where the chain writes the draft length it was read from (checks.chain_reads).
                evidence.extend(Evidence(path=r.path, line=r.line) for r in chained.draft_reads[:1])
            return None
        mechanism = _mechanism(v.engine).format(al=fmt_number(al), al_minus_one=fmt_number(al - 1))
        parts.setdefault(MSG_PASS_INJECTED.format(injector=INJECTOR, mechanism=mechanism, key=v.config_key,
                                                  curve=f"{found.curve}.yaml" if found else "", mode=mode, k=k,
                                                  al=fmt_number(al), method=method), None)
        evidence.extend([spec_ev] + ([golden_ev] if golden_ev else []))
        return None
