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
    `SYNTHETIC_ACCEPTANCE_LENGTH`) is judged. A point whose servers a launcher script starts
    (an old-layout launcher, or the chain a runner picks, e.g. AMD disagg) is judged on its
    servers as the point runs them: the launch is interpreted (recipes.launch) twice, as the
    sweep runs it, once for the benchmark run (`EVAL_ONLY=false RUN_EVAL=false`) and once for
    the eval-only run (`EVAL_ONLY=true RUN_EVAL=true`), and the servers' environment and
    command lines are read, however the shell built them (`printf -v`, arrays, a name in a
    variable, `bash -c`, a container's `-e`). Every speculating server of the benchmark run must
    carry the engine's knob (spec 5.3: SGLang `SGLANG_SIMULATE_ACC_LEN`, vLLM
    `synthetic_acceptance_length` in `--speculative-config`, TRT-LLM
    `TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS` = AL - 1, ATOM `--spec-decode-acceptance-length`
    or `--spec-decode-acceptance-rate`, TileRT `TILERT_SIMULATE_ACC_LEN`), and no server of the
    eval-only run may: one the eval-only run has too would put evals on simulated acceptance,
    one only the eval-only run has leaves the benchmark run unpinned. A guard the eval-only
    run does not honour (EVAL_ONLY overwritten, or not passed into the container that tests
    it) is no guard. "Only outside eval runs" is a later sub-rule (checks.policy
    `eval-real-acceptance`, spec 12): before its date a setting both runs carry pins the
    benchmark run and passes, and the row says that evals ran on it too.
    The method and draft length are the benchmark run's server flags (the vLLM
    `--speculative-config` JSON, SGLang `--speculative-algorithm`/`--speculative-num-steps`,
    ATOM `--method`/`--num-speculative-tokens`, the `speculative_config` block of a TRT-LLM
    config file of the repository); a server that starts no speculation has nothing to pin.
    "Could not verify", naming the server's file:line and chain, when: the trace starts no
    server the bot can read (it stops before one, or a command it cannot read may be it); a
    knob or a speculative value is set on a branch the point's values do not decide, or is
    otherwise unknown; a word of a server's command line is unknown where the knob or the
    speculative config is missing (it may hide there); a TRT-LLM config file is one the launch
    writes (the trace holds the write, not the text); the eval-only run cannot be read after
    the sub-rule's date. The point's concurrency is a symbol first (one trace per arm); a value
    it leaves open is traced again with the point's own values.
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
    use real acceptance): in its parsed data, or on a server of its trace (a value the trace
    cannot know there is "could not verify").
Why it matters:
    AgentX throughput with speculative decoding is only comparable when every submission
    accepts draft tokens at the same measured rate for its model and draft length.
Evidence it cites:
    The recipe line of the speculative method, the golden curve file and line, and the
    line of any hand-written AL or synthetic knob; for a launcher, the line that starts the
    server (a `bash -c` or `eval` text cites the line that runs it), with the chain that led
    there (`sweep job:1 -> runner:line -> launcher:line -> fn ... -> server line`).
Not applicable when:
    No affected agentic point speculates and no non-agentic point sets a synthetic knob.
How to fix:
    Remove hand-written AL values (the injector sets the golden one), or set the engine's
    knob to the golden value under an `EVAL_ONLY` guard; for a model without a curve, name
    the AL source in the Additional detail section.
"""
from __future__ import annotations

import re
from typing import Any


from checks.acceptance_runs import (
    _site_evidence, _point_run, BENCH_RUN, EVAL_RUN, Run, Served, Setting,
)
from checks.fixes import FIXES_KEY, value_fix
from checks.golden_al import (
    INJECTOR, MSG_NO_K, THINKING_ENV, _sample_method, fmt_number, golden_in_force, golden_lookup, injected_acceptance,
    served_model,
)
from checks.policy import BY_KEY, in_force
from checks.result import CheckResult, Evidence
from recipes.launch.path.serving import Hit, serving_views, ServingView
from recipes.launch.path.serving_unlisted import unlisted_agentic_views
from checks.serving_rows import changed_files_unavailable, first_unavailable
from checks.text import escape_inline, items_text, keys_text
from recipes.golden import DEFAULT_THINKING_MODE
from recipes.launch import knobs
from recipes.launch.trace import SERVER
from recipes.values import as_float, as_int, flag_name as norm_name, is_enabled
from recipes import engines
from recipes.engines import AL_MINUS_ONE, AL_RATE, acceptance_knobs

RUNNER_INJECTOR = "runners/inject_synthetic_acceptance.py"
EVAL_GUARD = "EVAL_ONLY"
CNV = "could not verify"
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
MSG_NON_AGENTIC_UNKNOWN = (
    "could not verify that non-agentic {key} keeps real acceptance: the server at {chain} may get {setting}; "
    "set simulated acceptance only on agentic configs, where the point's settings decide it."
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
MSG_KNOB_UNKNOWN = ("could not verify the AL {key} sets at {chain}: {setting} is not known for this point ({why}); "
                    "write the value where the point's settings choose it.")
MSG_UNDER = ("could not verify simulated acceptance for agentic {key}: the server at {chain} starts under {branch}, "
             "which the point's values do not decide, and {what}; decide the branch from the point's settings.")
MSG_NOT_TRACED = ("could not verify simulated acceptance for agentic {key}: in its {run} run {why}, so the servers' "
                  "settings are not known.")
MSG_OPAQUE = ("could not verify simulated acceptance for agentic {key}: the server at {chain} cannot be read whole "
              "({why}), so its speculative settings and {knob} are not known.")
MSG_SPEC_UNKNOWN = ("could not verify the golden AL for {key}: the speculative settings of the server at {chain} are "
                    "not known for this point ({why}); set them where the point's settings choose them.")
MSG_SPEC_SPLIT = ("could not verify the golden AL for {key}: its servers run different speculative settings ({values}); "
                  "set one method and draft length per config.")
MSG_EVAL_UNKNOWN = ("could not verify that {key} runs evals on real acceptance: the benchmark run sets {setting}, and "
                    "for the eval-only run ({guard}=true) {why}; set it only when {guard} is not true.")
MSG_UNRESOLVED = "could not verify the AL {key} sets at {where} ({setting}); write it as a number."
MSG_NOT_PINNED = (
    "Simulated acceptance is not pinned for agentic {key}: the benchmark run's server at {chain} has no {knob}; "
    "set it to the golden AL {al} ({golden}) for throughput runs."
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
    "{key} sets {setting} at {where} without an {guard} guard (its eval-only run's server has it too), so eval "
    "runs would use simulated acceptance; set it only when {guard} is not true."
)
MSG_EVAL_BRANCH = (
    "{key} sets {setting} at {where} only when {guard} is true, so eval runs use simulated acceptance and "
    "the benchmark run does not; set it only when {guard} is not true."
)
MSG_PASS_NO_SPEC = "{key} runs without speculative decoding ({where}: its branch passes no speculative config)"
MSG_MISSING_CURVE = (
    "No golden AL for agentic {key}: {why}, and the Additional detail section names no AL source; "
    "commit the curve or cite its source (e.g. the pending collection run)."
)
MSG_PASS_INJECTED = (
    "{injector} injects {mechanism} into AgentX throughput runs of {key}: {curve} {mode} K={k} = {al} "
    "({method}, draft length {k}); eval runs keep real acceptance"
)
MSG_PASS_SCRIPT = "{launcher} sets {setting} only outside eval runs for {key}: {curve} {mode} K={k} = {al}"
MSG_PASS_SCRIPT_BENCH = (
    "{launcher} sets {setting} in the benchmark run of {key} (whether eval runs get it too is judged only from "
    "{since}, {source}): {curve} {mode} K={k} = {al}"
)
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


def _is_synthetic(h: Any) -> bool:
    """Whether a setting turns simulated acceptance on (a method named `synthetic`, the opt-in
    enabled, a knob with a value)."""
    if norm_name(h.name) == norm_name("rejection_sample_method"):
        return str(h.value).strip().lower() == SYNTHETIC_METHOD if isinstance(h.value, str) else True
    if norm_name(h.name) == norm_name("SYNTHETIC_ACCEPTANCE"):
        return is_enabled(h.value) if isinstance(h.value, str) else True
    return bool(str(h.value).strip()) if isinstance(h.value, str) else True


def _synthetic_hits(ctx, v: ServingView) -> list[Any]:
    """The simulated-acceptance settings of a view: what its parsed data sets (the master config,
    a recipe's YAML), and for a launcher script what its servers carry in the point's trace (both
    arms of an eval test; a value the trace cannot know is kept, as an Unknown)."""
    policy = ctx.config.policy
    names = (*policy.synthetic_acceptance_env, *policy.synthetic_acceptance_flags, *policy.synthetic_acceptance_json_keys)
    found: list[Any] = [h for h in v.hits(*names) if _is_data(h)]
    if v.variant is None:
        from recipes.launch.path.trace_affected import head_trace

        trace = head_trace(ctx, v.point)
        for e in trace.effects() if trace is not None else ():
            if e.kind == SERVER and not e.client:
                found.extend(Setting.of(k) for k in knobs.find(knobs.settings_in_force(e)[0], *names))
    return [h for h in found if _is_synthetic(h)]


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
        found = [(v, h) for v in views if not v.is_agentic for h in _synthetic_hits(ctx, v)]
        bad = [(v, h) for v, h in found if isinstance(h.value, str)]
        doubt = [(v, h) for v, h in found if not isinstance(h.value, str)]
        if doubt and not bad:
            v, h = doubt[0]
            return CheckResult.failed(MSG_NON_AGENTIC_UNKNOWN.format(key=v.config_key, setting=h.shown, chain=h.chain),
                                      _site_evidence(h.effect, unavailable=True))
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
        doubt: CheckResult | None = None
        for v in targets:
            result = self._one(ctx, v, golden, parts, evidence, used)
            if result is None:
                continue
            if not result.reason.startswith(CNV):
                return result  # a definite finding on one point is not hidden by a doubt on another
            doubt = doubt or result
        if doubt is not None:
            return doubt
        reason = MSG_PASS.format(parts="; ".join(parts))
        fresh = [s + ".yaml" for s in in_force.new if s in used]
        if fresh:
            reason += MSG_PASS_NEW_CURVE.format(curves=", ".join(fresh))
        return CheckResult.passed(reason, *dict.fromkeys(evidence))

    def _one(self, ctx, v: ServingView, golden, parts: dict, evidence: list, used: list) -> CheckResult | None:
        if v.variant is None:
            # A launcher script (or a chain the runner picks): judged on its servers as traced.
            return _from_trace(ctx, v, golden, parts, evidence, used)
        mode = _data_thinking(v)
        tolerance = ctx.config.policy.golden_al_tolerance
        if v.effective.spec_method is not None:
            spec_ev = Evidence(path=v.effective.spec_method.path, line=v.effective.spec_method.line)
        else:
            spec_ev = v.file_evidence
        found, (method, k, _) = golden_lookup(ctx, v, golden)
        # The injector's own decision, which also covers the cases where it injects nothing.
        al, why = injected_acceptance(v.point, v.variant, golden, mode, ctx.config.policy)
        if al is None:
            return _no_golden(ctx, v, found, why, spec_ev, parts, evidence, method)
        golden_ev = Evidence(path=found.path, line=found.line) if found is not None and found.path else None
        if found is not None and found.curve:
            used.append(found.curve)
        golden_text = f"{found.curve}.yaml {mode} K={k}" if found is not None else why
        al_names = {norm_name(n) for n in acceptance_knobs()}
        for h in _synthetic_hits(ctx, v):
            if norm_name(h.name) not in al_names:
                continue
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
        if v.variant.legacy:
            # The older srt-slurm format predates the injector: the recipe pins the value itself
            # (`backend.<role>_environment`, or the engine's JSON/flag), so the value written is judged.
            knob = _engine_knob(v.engine)
            hits = [h for h in v.hits(knob) if h.kind in ("env", "arg", "json") and _is_data(h)] if knob else []
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
        mechanism = _mechanism(v.engine).format(al=fmt_number(al), al_minus_one=fmt_number(al - 1))
        parts.setdefault(MSG_PASS_INJECTED.format(injector=INJECTOR, mechanism=mechanism, key=v.config_key,
                                                  curve=f"{found.curve}.yaml" if found else "", mode=mode, k=k,
                                                  al=fmt_number(al), method=method), None)
        evidence.extend([spec_ev] + ([golden_ev] if golden_ev else []))
        return None


def _no_golden(ctx, v: ServingView, found: Any, why: str, spec_ev: Evidence, parts: dict, evidence: list,
               method: Any) -> CheckResult | None:
    """No golden AL for the point: a broken curve, a missing one (the Additional detail section
    may name the AL source instead), or no speculative config the injector acts on."""
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


def _data_thinking(v: ServingView) -> str:
    """THINKING_MODE as the parsed data sets it (the recipe's or benchmark's env, the master
    config's settings), else the default."""
    hits = [h for h in v.hits(THINKING_ENV, kinds=("setting", "env", "client-env")) if _is_data(h)]
    return str(hits[-1].value).strip() if hits and str(hits[-1].value).strip() else DEFAULT_THINKING_MODE


def _cnv(message: str, *effects: Any) -> CheckResult:
    return CheckResult.failed(message, *[_site_evidence(e, unavailable=True) for e in effects if e is not None]
                              or [Evidence(unavailable=True)])


def _trace_thinking(run: Run, v: ServingView) -> str:
    """THINKING_MODE as the traced run exports it (to the client or a server), else the master
    config's setting, else the default."""
    found = [w for e in (run.trace.effects() if run.trace is not None else ()) for n, w in e.env
             if n == THINKING_ENV and isinstance(w, str) and w.strip()]
    if found:
        return found[-1].strip()
    return _data_thinking(v)


def _is_data(h: Hit) -> bool:
    """A hit read from parsed data (the master config, a recipe's YAML), not from a script."""
    return h.kind == "setting" or str(h.path).endswith((".yaml", ".yml"))


def _from_trace(ctx, v: ServingView, golden, parts: dict, evidence: list, used: list) -> CheckResult | None:
    """Check 11 for a point whose servers a launcher script starts: the benchmark run's servers
    must carry the engine's knob at the golden AL, the eval-only run's must not (spec 5.3)."""
    names = _engine_knobs(v.engine)
    knob_name = _engine_knob(v.engine) or "a simulated-acceptance knob"
    bench = _point_run(ctx, v, BENCH_RUN, names)
    if bench.gap is not None:
        return _cnv(MSG_NOT_TRACED.format(key=v.config_key, run="benchmark", why=bench.gap), bench.gap_effect)
    mode = _trace_thinking(bench, v)
    hidden = next((s for s in bench.servers if s.opaque), None)
    spec = [s for s in bench.servers if s.method]
    if hidden is not None and (not spec or hidden.method is None or (hidden.knob(names) is None and hidden.may_hide(names))):
        return _cnv(MSG_OPAQUE.format(key=v.config_key, chain=hidden.effect.where(), why=hidden.opaque, knob=knob_name),
                    hidden.effect)
    if not spec:
        s = bench.servers[0]
        ev = _site_evidence(s.effect)
        parts.setdefault(MSG_PASS_NO_SPEC.format(key=v.point.point_id, where=f"{ev.path}:{ev.line}"), None)
        evidence.append(ev)
        return None
    for s in spec:
        bad = next((w for w in (s.method, s.k, s.draft) if w is not None and not isinstance(w, str)), None)
        if bad is not None:
            return _cnv(MSG_SPEC_UNKNOWN.format(key=v.config_key, chain=s.effect.where(), why=bad.why), s.effect)
    shapes = {(s.method, s.k, s.draft) for s in spec}
    if len(shapes) > 1:
        shown = "; ".join(f"{m} K={k} at {s.effect.site}" for s in spec for (m, k) in [(s.method, s.k)])
        return _cnv(MSG_SPEC_SPLIT.format(key=v.config_key, values=shown), *[s.effect for s in spec])
    first = spec[0]
    method, k_text, draft = first.method, first.k, first.draft
    spec_ev = _site_evidence(first.effect)
    k = as_int(k_text)
    if k is None:
        return _cnv(MSG_UNKNOWN_SPEC.format(key=v.config_key, why=MSG_NO_K.format(method=method)) +
                    f" (the server at {first.effect.where()})", first.effect)
    found = golden.lookup(v.point.model_prefix or "", method, mode, k, draft_model=draft,
                          draft_sample_method=first.sample or _sample_method(v.engine, method, None),
                          served_model=served_model(v))
    if found.al is None:
        return _no_golden(ctx, v, found, found.reason, spec_ev, parts, evidence, method)
    al = found.al
    tolerance = ctx.config.policy.golden_al_tolerance
    golden_ev = Evidence(path=found.path, line=found.line) if found.path else None
    if found.curve:
        used.append(found.curve)
    golden_text = f"{found.curve}.yaml {mode} K={k}"
    # The benchmark run: every speculating server carries the knob at the golden AL.
    pinned: list[Setting] = []
    missing: list[Served] = []
    for s in spec:
        setting = s.knob(names)
        if setting is None:
            if s.effect.under:
                return _cnv(MSG_UNDER.format(key=v.config_key, chain=s.effect.where(), branch=s.effect.under[-1],
                                             what=f"it does not set {knob_name}"), s.effect)
            missing.append(s)
            continue
        if not setting.known:
            return _cnv(MSG_KNOB_UNKNOWN.format(key=v.config_key, chain=setting.chain, setting=setting.name,
                                                why=setting.value.why), setting.effect)
        written = _written_al(setting, k)
        if written is None:
            return CheckResult.failed(MSG_UNRESOLVED.format(key=v.config_key, where=setting.where, setting=setting.shown),
                                      setting.evidence())
        if abs(written - al) > tolerance:
            if s.effect.under:
                return _cnv(MSG_UNDER.format(key=v.config_key, chain=s.effect.where(), branch=s.effect.under[-1],
                                             what=f"it sets {setting.shown}"), s.effect)
            return CheckResult.failed(MSG_WRONG_AL.format(key=v.config_key, written=fmt_number(written),
                                                          where=setting.chain, setting=setting.shown,
                                                          al=fmt_number(al), golden=golden_text),
                                      setting.evidence(), *([golden_ev] if golden_ev else []))
        pinned.append(setting)
    # The eval-only run: no server may carry it (spec 12, `eval-real-acceptance`).
    # A word of an eval-only server's command line it cannot read only changes the verdict where
    # the rule that evals keep real acceptance is in force (before it, it changes the wording).
    guard_rule = in_force(ctx, EVAL_RULE)
    evals = _point_run(ctx, v, EVAL_RUN, names, read_whole=bool(guard_rule))
    eval_set = [(s, s.knob(names)) for s in evals.servers if s.knob(names) is not None]
    if missing:
        s = missing[0]
        if eval_set:
            e_s, e_k = eval_set[0]
            return CheckResult.failed(MSG_EVAL_BRANCH.format(key=v.config_key, setting=e_k.shown, where=e_k.chain,
                                                             guard=EVAL_GUARD), e_k.evidence(), _site_evidence(s.effect))
        return CheckResult.failed(MSG_NOT_PINNED.format(key=v.config_key, chain=s.effect.where(), knob=knob_name,
                                                        al=fmt_number(al), golden=golden_text),
                                  _site_evidence(s.effect), *([golden_ev] if golden_ev else []))
    known = [(s, kn) for s, kn in eval_set if kn.known and str(kn.value).strip() and not s.effect.under]
    doubt = evals.gap or next((f"{kn.shown} at {kn.chain}" + (f", under {s.effect.under[-1]}" if s.effect.under else "")
                               for s, kn in eval_set if (s, kn) not in known and str(kn.value).strip()), None) or \
        next((f"the server at {s.effect.where()} cannot be read whole ({s.opaque})" for s in evals.servers
              if s.may_hide(names)), None)
    setting = pinned[0]
    launcher = v.launcher_path or setting.evidence().path
    rule = BY_KEY[EVAL_RULE]
    fmt = dict(launcher=launcher, setting=setting.shown, key=v.config_key, curve=f"{found.curve}.yaml", mode=mode, k=k,
               al=fmt_number(al), since=rule.since.isoformat(), source=rule.source)
    if known:
        _, e_k = known[0]
        if guard_rule:
            return CheckResult.failed(MSG_UNGUARDED.format(key=v.config_key, setting=e_k.shown, where=e_k.chain,
                                                           guard=EVAL_GUARD), e_k.evidence())
        template = MSG_PASS_SCRIPT_UNGUARDED
    elif doubt is not None:
        if guard_rule:
            return _cnv(MSG_EVAL_UNKNOWN.format(key=v.config_key, setting=setting.shown, why=doubt, guard=EVAL_GUARD),
                        *([evals.gap_effect] if evals.gap else [s.effect for s, _ in eval_set] or
                          [s.effect for s in evals.servers if s.may_hide(names)]))
        template = MSG_PASS_SCRIPT_BENCH
    else:
        template = MSG_PASS_SCRIPT
    parts.setdefault(template.format(**fmt), None)
    evidence.extend([setting.evidence(), spec_ev] + ([golden_ev] if golden_ev else []))
    return None
