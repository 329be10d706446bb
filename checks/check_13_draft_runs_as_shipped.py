"""Check 13 (Draft runs as shipped): drafts run as they ship, and the sign-off records draft precision.

What it checks:
    For every affected speculative point, on what its servers run with at the head: a recipe
    point's parsed recipe and master-config settings (its `setup_script` runs as a separate
    `bash`, so its exports never reach the servers); a point its scripts launch, the server
    processes of its interpreted trace (recipes.launch.knobs: the words and environment each
    server really gets, however built: `printf -v`, `read`, arrays, `eval`, a helper; the
    last occurrence of a flag is the one in force) plus its master-config settings:
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
    A knob the bot could not resolve on a serving path (the value of one of these flags or
    env vars, the text of `--speculative-config`, a server word where any flag may stand) is
    "could not verify" naming it, never a PASS; so is a launched point whose trace reaches
    no server (it stops first) or was not traced within the review's interpreter budget.
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
    The line of each offending knob (for a launched server, the server's file:line with the
    chain that led there), the draft-model path, and the sign-off (on PASS, the sign-off
    lines that record the effective draft precision).
Not applicable when:
    No affected point speculates and no prohibited env var is enabled.
How to fix:
    Remove the draft quantization/dtype knob or substituted draft, exclude the draft modules
    from online quantization, and record the draft, its stored precision, the default
    handling and the effective precision in the Additional detail section.
"""
from __future__ import annotations

import fnmatch
import json
import re
from dataclasses import dataclass
from typing import Any

from checks.claim_record import precision_record
from checks.result import CheckResult, Evidence
from recipes.launch.path.serving import json_object, resolve_reference, serving_views, ServingView
from checks.serving_rows import changed_files_unavailable, dedupe, first_unavailable, launch_evidence
from checks.text import items_text, keys_text
from recipes.launch.path.trace_affected import head_trace
from recipes.launch import knobs
from recipes.launch.words import Unknown
from recipes.values import flag_name as norm_name, is_enabled

SPEC_CONFIG_FLAGS = ("speculative-config", "speculative_config")
# Where a script-launched server is given its draft checkpoint: SGLang's and vLLM's flags, and
# the `model` of vLLM's --speculative-config.
DRAFT_MODEL_FLAGS = ("speculative-draft-model-path", "speculative-draft-model", "speculative-model", "draft-model")
DRAFT_MODEL_KEYS = ("model", "speculative_model")
MEMO_SERVED = "check13.served"
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
MSG_UNKNOWN = "{where} gives {name} for {key} a value the bot could not resolve ({why})"
MSG_OPAQUE = ("{where} gives the server of {key} a word the bot could not resolve ({why}), where a draft-precision "
              "flag may stand")
MSG_NOT_REACHED = ("could not verify {key}: its interpreted launch reaches no server (it stops after {where}: {what}), "
                   "so what its servers run with is unknown")
MSG_UNVERIFIED = ("could not verify that the draft runs as shipped: {items}; make the value plain in the launch so "
                  "the bot can read it.")
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
    if v.variant is None:
        return _strip_hf(str(v.point.model or ""))
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


@dataclass(frozen=True)
class Setting:
    """One knob a point's servers run with: from the parsed recipe or master config (a Hit), or
    from a server's command line or environment in the point's trace (a Knob)."""

    name: str
    key: str
    value: Any               # str / YAML value, or Unknown
    parent: str | None       # the JSON-valued flag holding it
    kind: str                # "env" or "flag" (a JSON key: "flag" with a parent)
    where: str               # file:line
    evidence: Evidence
    opaque: bool = False     # an unresolved word where any flag may stand

    @property
    def known(self) -> bool:
        return not isinstance(self.value, Unknown) and not self.opaque

    @property
    def shown(self) -> str:
        if isinstance(self.value, Unknown):
            return f"{self.name}=<unknown: {self.value.why}>"
        value = json.dumps(self.value, separators=(",", ":")) if isinstance(self.value, (dict, list)) else self.value
        return f"{self.parent} {self.name}={value}" if self.parent else f"{self.name}={value}"

    @classmethod
    def of_hit(cls, h) -> "Setting":
        kind = "env" if h.kind in ("env", "client-env", "setting", "script-env") else "flag"
        return cls(name=h.name, key=h.key, value=h.value, parent=h.parent if h.kind == "json" else None, kind=kind,
                   where=h.where, evidence=h.evidence())

    @classmethod
    def of_knob(cls, k: knobs.Knob) -> "Setting":
        e = k.effect
        note = knobs.chain_note(e)
        ev = Evidence(path=e.site.path, line=e.site.line, note=note, unavailable=not k.known)
        where = knobs.brief(e)  # the chain that led there, ending at the effect's own line
        return cls(name=k.name, key=k.key, value=k.value, parent=k.parent or None,
                   kind="env" if k.kind == knobs.SERVER_ENV else "flag", where=where, evidence=ev, opaque=k.opaque)


@dataclass
class Served:
    """What a point's servers run with, or why it cannot be known."""

    settings: list[Setting]
    gap: tuple[str, Evidence] | None = None   # could not verify: the trace does not say
    traced: bool = False                      # read from the trace (a script-launched point)

    def of(self, *names: str, env: bool | None = None) -> list[Setting]:
        wanted = {norm_name(n) for n in names}
        return [s for s in self.settings if s.key in wanted and not s.opaque
                and (env is None or (s.kind == "env") == env)]


# Hit kinds read from parsed data files: a recipe's values, a master config's settings.
PARSED_KINDS = ("arg", "env", "json", "recipe", "setting")


def served(ctx, v: ServingView) -> Served:
    """The point's server settings: a recipe point's from its parsed recipe (srtctl starts the
    servers with them; its setup_script runs as a separate `bash`, so its exports never reach
    them) and its master-config settings; a script-launched point's from the servers in its
    trace at the head (recipes.launch.knobs), plus its master-config settings, which the
    trace's environments leave out as inputs passed on unchanged."""
    memo = ctx.memo(MEMO_SERVED, dict)
    key = id(v)
    if key in memo:
        return memo[key][1]
    own = {v.point.source_path} | ({v.variant.path} if v.variant is not None else set())
    parsed = [Setting.of_hit(h) for h in v.all_hits() if h.kind in PARSED_KINDS and h.path in own]
    trace = head_trace(ctx, v.point)
    out = Served(settings=parsed, traced=v.variant is None)
    if trace is None:
        if v.variant is None:
            # Untraced (the review's interpreter budget was spent): the launch scripts' reading,
            # as Check 10 and the affected rule judge such a point, with its blind spots.
            out.settings, out.traced = [Setting.of_hit(h) for h in v.all_hits()], False
            missing = first_unavailable([v], launch=ctx)
            if missing is not None:
                out.gap = (missing.reason, missing.evidence[0] if missing.evidence else
                           Evidence(path=v.point.source_path, line=v.point.source_line, unavailable=True))
    else:
        effects = trace.effects()
        found = [k for t in trace.runners.values() for k in knobs.knobs(t)
                 if k.role == "server" and (k.wins or k.kind == knobs.SERVER_ENV)]
        out.settings = parsed + [Setting.of_knob(k) for k in found]
        if v.variant is None and not knobs.servers(effects):
            last = effects[-1] if effects else None
            out.gap = (MSG_NOT_REACHED.format(key=v.config_key, where=knobs.brief(last) if last else "its start",
                                              what=last.describe() if last else "nothing"),
                       Evidence(path=last.site.path if last else v.point.source_path,
                                line=last.site.line if last else v.point.source_line, unavailable=True,
                                note="the trace reaches no server"))
    memo[key] = (v, out)
    return out


def _unknown(s: Setting, key: str) -> tuple[str, Evidence]:
    if s.opaque:
        return (MSG_OPAQUE.format(where=s.where, key=key, why=s.value.why), s.evidence)
    return (MSG_UNKNOWN.format(where=s.where, name=s.name if not s.parent else f"{s.parent} {s.name}", key=key,
                               why=s.value.why), s.evidence)


def _quant_problems(ctx, v: ServingView, sv: Served) -> tuple[list[tuple[str, Evidence]], list[tuple[str, Evidence]], bool]:
    out, unknown = [], []
    seen = False
    for s in sv.of(*ctx.config.policy.online_quant_flags, env=False):
        if s.parent is not None:
            continue
        seen = True
        if not s.known:
            unknown.append(_unknown(s, v.config_key))
            continue
        obj = json_object(s.value)
        if obj is None and isinstance(s.value, str):
            path = resolve_reference(ctx, s.value, s.evidence.path or "")
            data = ctx.snapshot.head.read(path) if path else None
            obj = json_object(data.decode("utf-8", "replace")) if data else None
        if obj is None:
            out.append((MSG_QUANT_UNKNOWN.format(where=s.where, key=v.config_key, value=s.value), s.evidence))
            continue
        patterns = next((obj[k] for k in EXCLUDE_KEYS if k in obj), [])
        patterns = [patterns] if isinstance(patterns, str) else [str(p) for p in patterns or []]
        modules = _draft_modules(ctx, v.point.model_prefix or "")
        if not modules:
            out.append((MSG_QUANT_NO_MODULES.format(where=s.where, key=v.config_key, prefix=v.point.model_prefix),
                        s.evidence))
            continue
        uncovered = [m for m in modules if not any(covers(p, m) for p in patterns)]
        if uncovered:
            out.append((MSG_QUANT_DRAFT.format(where=s.where, key=v.config_key, modules=", ".join(uncovered),
                                               patterns=patterns or "none"), s.evidence))
    return out, unknown, seen


def _draft_model(v: ServingView, sv: Served) -> Setting | None:
    """The draft checkpoint the point serves: a recipe point's from its parsed recipe, a
    script-launched one's from its servers' flags or --speculative-config in the trace."""
    if not sv.traced:
        d = v.effective.draft_model
        if d is None or not d.value:
            return None
        return Setting(name="draft", key="draft", value=d.value, parent=None, kind="flag",
                       where=f"{d.path}:{d.line}", evidence=Evidence(path=d.path, line=d.line))
    parents = {norm_name(f) for f in SPEC_CONFIG_FLAGS}
    found = sv.of(*DRAFT_MODEL_FLAGS, env=False)
    found = [s for s in found if s.parent is None] + \
        [s for s in sv.of(*DRAFT_MODEL_KEYS, env=False) if s.parent and norm_name(s.parent) in parents]
    return found[-1] if found else None


def _draft_problems(ctx, v: ServingView, sv: Served) -> tuple[list[tuple[str, Evidence]], list[tuple[str, Evidence]]]:
    """(problems, what could not be verified) of one speculative point."""
    policy = ctx.config.policy
    out: list[tuple[str, Evidence]] = []
    unknown: list[tuple[str, Evidence]] = []
    keep = {x.lower() for x in policy.draft_precision_keep_values}
    if sv.traced:
        unknown += [_unknown(s, v.config_key) for s in sv.settings if s.opaque]
    for s in sv.of(*policy.draft_precision_flags, env=False):
        if s.parent is not None:
            continue
        if not s.known:
            unknown.append(_unknown(s, v.config_key))
        elif str(s.value).strip() and str(s.value).strip().lower() not in keep:
            out.append((MSG_DRAFT_FLAG.format(where=s.where, setting=s.shown, key=v.config_key), s.evidence))
    keys = {norm_name(k) for k in policy.draft_config_precision_keys}
    parents = {norm_name(f) for f in SPEC_CONFIG_FLAGS}
    for s in sv.of(*SPEC_CONFIG_FLAGS, env=False):
        if s.parent is None and not s.known:
            unknown.append(_unknown(s, v.config_key))  # its keys cannot be read
    for s in sv.settings:
        if s.parent and norm_name(s.parent) in parents and s.key in keys and s.value not in (None, "") \
                and str(s.value).strip().lower() not in keep:
            out.append((MSG_DRAFT_JSON.format(where=s.where, name=s.name, value=s.value, parent=s.parent,
                                              key=v.config_key), s.evidence))
    for s in sv.of(*policy.draft_lowering_env, env=True):
        if not s.known:
            unknown.append(_unknown(s, v.config_key))
        elif is_enabled(s.value):
            out.append((MSG_LOWERING.format(where=s.where, setting=s.shown, key=v.config_key), s.evidence))
    draft = _draft_model(v, sv)
    if draft is not None and not draft.known:
        unknown.append(_unknown(draft, v.config_key))
    elif draft is not None and draft.value:
        name = _strip_hf(str(draft.value)).rstrip("/")
        model = _served_model(v)
        agreed = {d.lower() for d in policy.agreed_drafts.get(v.point.model_prefix or "", [])}
        if not (name.lower() == model.lower() or name.lower().startswith(model.lower() + "/") or name.lower() in agreed):
            out.append((MSG_SUBSTITUTED.format(where=draft.where, draft=draft.value, model=model or "the served model",
                                               key=v.config_key), draft.evidence))
    quant, quant_unknown, _ = _quant_problems(ctx, v, sv)
    return out + quant, unknown + quant_unknown


def _prohibited(ctx, views: list[ServingView]) -> tuple[list[tuple[str, Evidence]], list[tuple[str, Evidence]]]:
    out, unknown = [], []
    for v in views:
        for s in served(ctx, v).of(*ctx.config.policy.prohibited_env, env=True):
            if not s.known:
                unknown.append(_unknown(s, v.config_key))
            elif is_enabled(s.value):
                out.append((MSG_PROHIBITED.format(where=s.where, setting=s.shown, key=v.config_key), s.evidence))
    return out, unknown


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
        if any(v.is_speculative for v in views):
            return None
        problems, unknown = _prohibited(ctx, views)
        return None if problems or unknown else MSG_NA

    def evaluate(self, ctx) -> CheckResult:
        unavailable = changed_files_unavailable(ctx)
        if unavailable is not None:
            return unavailable
        views = serving_views(ctx)
        spec = [v for v in views if v.is_speculative]
        problems, unknown = _prohibited(ctx, views)
        # What the parsed recipe and master config cannot give (a recipe that does not read, no
        # variant binding the point); a script's launch is the trace's to say.
        missing = first_unavailable(spec)
        if missing is not None and not problems:
            return missing
        for v in spec:
            sv = served(ctx, v)
            found, unsure = _draft_problems(ctx, v, sv)
            problems += found
            unknown += ([sv.gap] if sv.gap is not None else []) + unsure
        problems = dedupe(problems)
        if problems:
            shown = items_text(t for t, _ in problems)
            return CheckResult.failed(MSG_FAIL.format(items=shown), *[e for _, e in problems])
        unknown = dedupe(unknown)
        if unknown:
            gaps = [t for t, _ in unknown if t.startswith("could not verify")]
            items = [t for t, _ in unknown if not t.startswith("could not verify")]
            text = "; ".join([g.rstrip(".") for g in gaps] + ([MSG_UNVERIFIED.format(items=items_text(items)).rstrip(".")]
                                                              if items else [])) + "."
            return CheckResult.failed(text, *dict.fromkeys(e for _, e in unknown))
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
            sv = served(ctx, v)
            d = _draft_model(v, sv)
            method = v.spec_method or v.point.spec_decoding
            if d is not None and d.value:
                drafts.append(MSG_DRAFT_MODEL.format(method=method, draft=_strip_hf(str(d.value))))
            else:
                drafts.append(MSG_DRAFT_INLINE.format(method=method, model=_served_model(v)))
            quant = quant or _quant_problems(ctx, v, sv)[2]
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
