"""Check 13 (Draft runs as shipped): drafts run as they ship, and the sign-off records draft precision.

What it checks:
    For every affected speculative point, on its effective config at the head (checks.serving):
    - no draft-precision knob: a flag from policy `draft_precision_flags`
      (`--speculative-draft-model-quantization`, draft dtype / KV-cache dtype) or a key from
      policy `draft_config_precision_keys` inside `--speculative-config`/`speculative_config`;
    - no substituted or converted draft: a draft-model path must be the served model (or a
      path inside its repository) or an agreed draft (policy `agreed_drafts`);
    - an ATOM `--online_quant_config` must exclude every draft module (policy `draft_modules`,
      longest matching model prefix) in its `exclude_layer` patterns (substring, glob or
      `re:` regex); excluding target experts but not the draft FAILs;
    - no draft-lowering env enabled (policy `draft_lowering_env`, e.g.
      `SGLANG_GLM_NEXTN_MOE_PTPC=1`);
    - `SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE` (policy `prohibited_env`) enabled anywhere in the
      effective recipe of any affected point FAILs; `=0`/`false` is not enablement.
    The sign-off's Additional detail section must carry the draft evidence, four topics
    found by keyword rules (case-insensitive): draft identity (`draft` near `head`,
    `model`, `checkpoint`, `weights`, `layers`, `mtp`, `dspark`, `eagle` or `nextn`); stored
    precision (`stored`/`shipped`/`checkpoint` near a dtype word or `precision`); default
    handling (`default`); effective precision (`effective`/`served`/`runs` near a dtype word
    or `precision`). Absent -> FAIL "Draft precision could not be verified". The PASS row
    cites the sign-off's part of the precision record (checks.claim_record, the record Check 15
    compares): each component whose dtype it records as changed (`attn.wo_a BF16 -> FP8`) with
    its line, and how many it records as unchanged.
Why it matters:
    A quantized or substituted draft accepts differently and runs faster than the draft the
    model ships with; results would not reproduce the shipped deployment.
Evidence it cites:
    The line of each offending knob, the draft-model path, and the sign-off (on PASS, the
    sign-off lines that record the effective draft precision).
Not applicable when:
    No affected point speculates and no prohibited env var is enabled.
How to fix:
    Remove the draft quantization/dtype knob or substituted draft, exclude the draft modules
    from online quantization, and record the draft, its stored precision, the default
    handling and the effective precision in the Additional detail section.
"""
from __future__ import annotations

import fnmatch
import re

from checks.claim_record import precision_record
from checks.result import CheckResult, Evidence
from checks.serving import json_object, resolve_reference, serving_views, ServingView
from checks.serving_rows import changed_files_unavailable, dedupe, first_unavailable, launch_evidence
from checks.text import items_text, keys_text
from recipes.values import flag_name as norm_name, is_enabled

SPEC_CONFIG_FLAGS = ("speculative-config", "speculative_config")
EXCLUDE_KEYS = ("exclude_layer", "exclude_layers", "exclude")
HF_PREFIX = "hf:"
REGEX_PREFIX = "re:"
DTYPE_WORDS = r"(precision|dtype|fp4|fp8|fp16|bf16|fp32|mxfp4|mxfp8|nvfp4|int4|int8|e4m3|e5m2)"
EVIDENCE_TOPICS = (
    ("draft identity", re.compile(r"\bdraft\b[^\n]{0,80}\b(head|model|checkpoint|weights|layers?|mtp|dspark|eagle3?|nextn)\b"
                                  r"|\b(head|mtp|dspark|eagle3?|nextn)\b[^\n]{0,40}\bdraft\b", re.I)),
    ("stored precision", re.compile(r"\b(stored|shipped|ships|checkpoint)\b[^\n]{0,80}\b" + DTYPE_WORDS + r"\b", re.I)),
    ("default handling", re.compile(r"\bdefault\b", re.I)),
    ("effective precision", re.compile(r"\b(effective|served|serves|runs?|runtime)\b[^\n]{0,80}\b" + DTYPE_WORDS + r"\b", re.I)),
)

MSG_NA = "No affected benchmark point uses speculative decoding."
MSG_PROHIBITED = "{where} enables {setting} for {key} (prohibited in the effective recipe)"
MSG_LOWERING = "{where} sets {setting} for {key}, which lowers draft precision"
MSG_DRAFT_FLAG = "{where} sets {setting} for {key}"
MSG_DRAFT_JSON = "{where} sets {name}={value} inside {parent} for {key}"
MSG_SUBSTITUTED = "{where} serves draft {draft} for {key}, which is neither {model} nor an agreed draft"
MSG_QUANT_DRAFT = "{where} --online_quant_config for {key} does not exclude draft module(s) {modules} (exclude_layer: {patterns})"
MSG_QUANT_UNKNOWN = "{where} --online_quant_config for {key} could not be read ({value})"
MSG_QUANT_NO_MODULES = "{where} --online_quant_config for {key}: no draft modules are known for model prefix {prefix}"
MSG_FAIL = "Draft does not run as shipped: {items}; remove it so the draft runs at its stored precision through the image's default handling."
MSG_NO_EVIDENCE = (
    "Draft precision could not be verified: the Additional detail section lacks {missing} for the draft of "
    "{keys}; record which draft, its stored precision, the default handling and the effective precision."
)
MSG_NO_SIGNOFF = (
    "Draft precision could not be verified: there is no sign-off whose Additional detail section records the "
    "draft of {keys}; record which draft, its stored precision, the default handling and the effective precision."
)
MSG_PASS = (
    "The draft of {keys} ({drafts}) runs as shipped: no draft quantization, dtype/KV override, substituted "
    "checkpoint or draft-lowering env{quant}; {prohibited} is not enabled; the Additional detail section "
    "records the draft, its stored precision, default handling and effective precision."
)
MSG_PASS_QUANT = ", and --online_quant_config excludes every draft module"
MSG_PASS_RECORD = " The sign-off records the effective draft precision: {items}."
MSG_RECORD_UNCHANGED = "{n} other component{s} keep{verb} {its} dtype"
MSG_RECORD_NONE_CHANGED = "no dtype change ({n} component{s} keep{verb} {its} dtype)"
MSG_DRAFT_INLINE = "{method} head of {model}"
MSG_DRAFT_MODEL = "{method} draft {draft}"


def _strip_hf(name: str) -> str:
    return name[len(HF_PREFIX):] if name.startswith(HF_PREFIX) else name


def _served_model(v: ServingView) -> str:
    return _strip_hf(str(v.effective.value("model") or v.point.model or ""))


def _draft_modules(ctx, prefix: str) -> list[str] | None:
    table = ctx.config.policy.draft_modules
    best = max((k for k in table if prefix == k or prefix.startswith(k)), key=len, default=None)
    return table[best] if best is not None else None


def covers(pattern: str, module: str) -> bool:
    """Whether one `exclude_layer` pattern excludes a module and everything under it."""
    p = str(pattern).strip()
    if not p:
        return False
    probes = (module, module + ".x")
    if p.startswith(REGEX_PREFIX):
        try:
            rx = re.compile(p[len(REGEX_PREFIX):])
        except re.error:
            return False
        return any(rx.fullmatch(m) or rx.match(m + ".") for m in probes)
    if any(c in p for c in "*?["):
        return any(fnmatch.fnmatchcase(m, p) for m in probes)
    # Plain patterns match as substrings of a module path (ATOM's exclude semantics).
    return p in module or p in module + "."


def _quant_problems(ctx, v: ServingView) -> tuple[list[tuple[str, Evidence]], bool]:
    out = []
    seen = False
    for h in v.hits(*ctx.config.policy.online_quant_flags):
        if h.parent is not None:
            continue
        seen = True
        obj = json_object(h.value)
        if obj is None and isinstance(h.value, str):
            path = resolve_reference(ctx, h.value, h.path)
            data = ctx.snapshot.head.read(path) if path else None
            obj = json_object(data.decode("utf-8", "replace")) if data else None
        if obj is None:
            out.append((MSG_QUANT_UNKNOWN.format(where=h.where, key=v.config_key, value=h.value), h.evidence()))
            continue
        patterns = next((obj[k] for k in EXCLUDE_KEYS if k in obj), [])
        patterns = [patterns] if isinstance(patterns, str) else [str(p) for p in patterns or []]
        modules = _draft_modules(ctx, v.point.model_prefix or "")
        if not modules:
            out.append((MSG_QUANT_NO_MODULES.format(where=h.where, key=v.config_key, prefix=v.point.model_prefix),
                        h.evidence()))
            continue
        uncovered = [m for m in modules if not any(covers(p, m) for p in patterns)]
        if uncovered:
            out.append((MSG_QUANT_DRAFT.format(where=h.where, key=v.config_key, modules=", ".join(uncovered),
                                               patterns=patterns or "none"), h.evidence()))
    return out, seen


def _draft_problems(ctx, v: ServingView) -> list[tuple[str, Evidence]]:
    policy = ctx.config.policy
    out = []
    keep = {x.lower() for x in policy.draft_precision_keep_values}
    for h in v.hits(*policy.draft_precision_flags):
        if h.parent is None and str(h.value).strip() and str(h.value).strip().lower() not in keep:
            out.append((MSG_DRAFT_FLAG.format(where=h.where, setting=h.shown, key=v.config_key), h.evidence()))
    keys = {norm_name(k) for k in policy.draft_config_precision_keys}
    parents = {norm_name(f) for f in SPEC_CONFIG_FLAGS}
    for h in v.all_hits():
        if h.parent and norm_name(h.parent) in parents and norm_name(h.name) in keys and h.value not in (None, "") \
                and str(h.value).strip().lower() not in keep:
            out.append((MSG_DRAFT_JSON.format(where=h.where, name=h.name, value=h.value, parent=h.parent, key=v.config_key),
                        h.evidence()))
    for h in v.hits(*policy.draft_lowering_env):
        if is_enabled(h.value):
            out.append((MSG_LOWERING.format(where=h.where, setting=h.shown, key=v.config_key), h.evidence()))
    draft = v.effective.draft_model
    if draft is not None and draft.value:
        name = _strip_hf(str(draft.value)).rstrip("/")
        model = _served_model(v)
        agreed = {d.lower() for d in policy.agreed_drafts.get(v.point.model_prefix or "", [])}
        if not (name.lower() == model.lower() or name.lower().startswith(model.lower() + "/") or name.lower() in agreed):
            out.append((MSG_SUBSTITUTED.format(where=f"{draft.path}:{draft.line}", draft=draft.value, model=model or "the served model",
                                               key=v.config_key), Evidence(path=draft.path, line=draft.line)))
    quant, _ = _quant_problems(ctx, v)
    out.extend(quant)
    return out


def _prohibited(ctx, views: list[ServingView]) -> list[tuple[str, Evidence]]:
    out = []
    for v in views:
        for h in v.hits(*ctx.config.policy.prohibited_env):
            if is_enabled(h.value):
                out.append((MSG_PROHIBITED.format(where=h.where, setting=h.shown, key=v.config_key), h.evidence()))
    return out


def missing_topics(text: str) -> list[str]:
    """The draft-evidence topics the Additional detail section does not cover."""
    return [name for name, rx in EVIDENCE_TOPICS if not rx.search(text or "")]


class DraftRunsAsShippedCheck:
    def applies(self, ctx) -> str | None:
        if changed_files_unavailable(ctx) is not None:
            return None
        if not ctx.affected.serving_points:
            return MSG_NA
        views = serving_views(ctx)
        return None if any(v.is_speculative for v in views) or _prohibited(ctx, views) else MSG_NA

    def evaluate(self, ctx) -> CheckResult:
        unavailable = changed_files_unavailable(ctx)
        if unavailable is not None:
            return unavailable
        views = serving_views(ctx)
        spec = [v for v in views if v.is_speculative]
        problems = _prohibited(ctx, views)
        missing = first_unavailable(spec, launch=ctx)
        if missing is not None and not problems:
            return missing
        for v in spec:
            problems.extend(_draft_problems(ctx, v))
        problems = dedupe(problems)
        if problems:
            shown = items_text(t for t, _ in problems)
            return CheckResult.failed(MSG_FAIL.format(items=shown), *[e for _, e in problems])
        keys = keys_text(v.config_key for v in spec)
        if ctx.signoff_unreadable:
            return ctx.signoff_unreadable_result()
        if ctx.snapshot.signoff is None:
            return CheckResult.failed(MSG_NO_SIGNOFF.format(keys=keys), Evidence(note="no sign-off", unavailable=True))
        gaps = missing_topics(ctx.additional_detail)
        if gaps:
            return CheckResult.failed(MSG_NO_EVIDENCE.format(missing=", ".join(gaps), keys=keys),
                                      Evidence(url=ctx.snapshot.signoff.url, note="Additional detail section", unavailable=True))
        drafts = []
        quant = False
        for v in spec:
            d = v.effective.draft_model
            method = v.spec_method or v.point.spec_decoding
            if d is not None and d.value:
                drafts.append(MSG_DRAFT_MODEL.format(method=method, draft=_strip_hf(str(d.value))))
            else:
                drafts.append(MSG_DRAFT_INLINE.format(method=method, model=_served_model(v)))
            quant = quant or _quant_problems(ctx, v)[1]
        prohibited = " / ".join(ctx.config.policy.prohibited_env) or "no prohibited env"
        reason = MSG_PASS.format(keys=keys, drafts="; ".join(dict.fromkeys(drafts)), quant=MSG_PASS_QUANT if quant else "",
                                 prohibited=prohibited)
        record, extra = _recorded_precision(ctx)
        return CheckResult.passed(
            reason + record,
            *launch_evidence(spec), Evidence(url=ctx.snapshot.signoff.url, note="Additional detail section"), *extra,
            **({"draft_precision": [s.to_json() for s in precision_record(ctx).precisions("signoff")]} if record else {}),
        )


def _recorded_precision(ctx) -> tuple[str, list[Evidence]]:
    """The sentence and evidence citing the sign-off's precision record (empty when it records
    no component's dtype)."""
    record = precision_record(ctx)
    changed, kept = record.recorded_changes(), record.recorded_unchanged()
    if not changed and not kept:
        return "", []
    n = len(kept)
    words = {"n": n, "s": "" if n == 1 else "s", "verb": "s" if n == 1 else "", "its": "its" if n == 1 else "their"}
    items = [f"{s.change()} ({s.ref()})" for s in changed]
    if changed and kept:
        items.append(MSG_RECORD_UNCHANGED.format(**words))
    elif not changed:
        items.append(MSG_RECORD_NONE_CHANGED.format(**words))
    return MSG_PASS_RECORD.format(items="; ".join(items)), [s.evidence() for s in changed]
