"""The golden AL a speculative point is judged against (spec 5): which curves are in force (the
target branch's, plus curves the PR adds for new models), the injector's own lookup, and what a
PR changes in existing curves. Shared by Check 11 (the value pinned) and Check 15 (AL claims).
Every lookup names the served model, so a curve measured on another model (recipes.golden
`same_model`) is not taken for this one.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from recipes.launch.path.chain_reads import chain_spec
from checks.result import Evidence
from recipes.launch.path.serving import json_object, ServingView
from recipes.golden import DEFAULT_THINKING_MODE, DSPARK, SAMPLE_PROBABILISTIC, GoldenSet
from recipes.engines import engine_of
from recipes.scripts import eval_branch

INJECTOR = "infx/srt_slurm/synthetic_acceptance.py"
THINKING_ENV = "THINKING_MODE"
MSG_NOT_INJECTED_FRAMEWORK = "framework {framework} has no engine mapping in {injector}, so no acceptance is injected"
MSG_NOT_INJECTED_SCENARIO = "fixed-sequence runs keep real acceptance"
MSG_NOT_INJECTED_SPEC = "spec-decoding is none"
MSG_NOT_INJECTED_ARGS = "the {role} role of {variant} has no speculative args"
MSG_NO_K = "no draft length is set for the {method} config"
MSG_CURVE_DIFF = "{stem}.yaml {mode} K={k} {old} -> {new}"
MSG_CURVE_REMOVED = "{stem}.yaml removed"
MSG_CURVE_UNREADABLE = "{stem}.yaml cannot be read at the head ({why})"

GOLDEN_MEMO = "golden_in_force"
DRAFT_SAMPLE_KEY = "draft_sample_method"


@dataclass
class GoldenInForce:
    """The curves a verdict checks against: the target branch's (the rule), plus the curves the
    PR adds for new models (`new`), and what the PR changes in existing ones (`changes`, its
    merge base against its head: a curve added or edited on the target branch after the PR
    branched is not the PR's change)."""

    golden: Any
    new: list[str]
    changes: list[tuple[str, Evidence]]


def _curve_changes(base: Any, head: Any) -> list[tuple[str, Evidence]]:
    """What the PR does to the curves it branched with (`base`: the merge base's; None: none)."""
    out: list[tuple[str, Evidence]] = []
    for stem, old in sorted(base.curves.items() if base is not None else ()):
        new = head.curves.get(stem) if head is not None else None
        if new is None:
            bad = head.broken.get(stem) if head is not None else None
            if bad is not None:
                out.append((MSG_CURVE_UNREADABLE.format(stem=stem, why=str(bad)), Evidence(path=bad.path, line=bad.line)))
            else:
                out.append((MSG_CURVE_REMOVED.format(stem=stem), Evidence(path=old.path, note="removed at head")))
            continue
        for mode in sorted(set(old.values) | set(new.values)):
            a, b = old.values.get(mode, {}), new.values.get(mode, {})
            for k in sorted(set(a) | set(b)):
                if a.get(k) != b.get(k):
                    text = MSG_CURVE_DIFF.format(stem=stem, mode=mode, k=k,
                                                 old=fmt_number(a[k]) if k in a else "none", new=fmt_number(b[k]) if k in b else "none")
                    out.append((text, Evidence(path=new.path, line=new.line_of(mode, k) or old.line_of(mode, k),
                                               note=text)))
    return out


def golden_in_force(ctx) -> GoldenInForce | None:
    """The target branch's golden curves (the head's only for models the target has none for);
    None when neither side has readable curves. What the PR changes is its merge base against
    its head (checks.snapshot: the two baselines)."""
    def compute() -> GoldenInForce | None:
        target, head, base = ctx.target_repo.golden, ctx.head_repo.golden, ctx.base_repo.golden
        changes = _curve_changes(base, head)
        if target is None:
            if head is None:
                return None
            return GoldenInForce(head, sorted(head.curves), changes)
        # The PR's own new curves; one it branched with that the target has since dropped is not.
        had = base.curves if base is not None and base is not target else {}
        new = sorted(s for s in (head.curves if head is not None else {}) if s not in target.curves
                     and s not in target.broken and s not in had)
        if not new:
            return GoldenInForce(target, [], changes)
        merged = GoldenSet(directory=target.directory, curves={**{s: head.curves[s] for s in new}, **target.curves},
                           findings=list(target.findings), broken=dict(target.broken))
        return GoldenInForce(merged, new, changes)
    return ctx.memo(GOLDEN_MEMO, compute)


def fmt_number(x: float) -> str:
    return f"{x:g}"


def _generation_spec(variant: Any) -> Any:
    return variant.spec_decode(variant.generation_role)


def _sample_method(engine: str, method: str | None, variant: Any, view: ServingView | None = None) -> str | None:
    """DSpark on ATOM implies probabilistic drafting; vLLM states it in --speculative-config
    (a recipe arg, or the JSON a launcher builds: the benchmark run's branch, not an eval-only one)."""
    if engine == "atom" and method == DSPARK:
        return SAMPLE_PROBABILISTIC
    if variant is not None and engine == "vllm":
        cfg = json_object(variant.args(variant.generation_role).get("speculative-config"))
        if cfg and cfg.get("draft_sample_method"):
            return str(cfg["draft_sample_method"])
    if variant is None and view is not None and engine == "vllm":
        hits = [h for h in view.hits(DRAFT_SAMPLE_KEY, kinds=("json",)) if eval_branch(h.condition) is not True]
        if hits and str(hits[-1].value).strip():
            return str(hits[-1].value)
    return None


def injected_acceptance(point: Any, variant: Any, golden: Any, thinking_mode: str,
                        policy: Any = None) -> tuple[float | None, str]:
    """The AL the harness injector (spec 5.4) gives an AgentX throughput run of this point, or
    None and why not. The injector recomputes the AL; a value in the recipe is never trusted.
    `policy` is the repository's (its `framework_family` names the engine)."""
    engine = engine_of(point.framework, policy)
    if engine is None:
        return None, MSG_NOT_INJECTED_FRAMEWORK.format(framework=point.framework, injector=INJECTOR)
    if not point.is_agentic:
        return None, MSG_NOT_INJECTED_SCENARIO
    if (point.spec_decoding or "none") == "none":
        return None, MSG_NOT_INJECTED_SPEC
    spec = _generation_spec(variant)
    if not spec.method:
        return None, MSG_NOT_INJECTED_ARGS.format(role=variant.generation_role, variant=variant.selector or variant.name)
    if spec.draft_length is None:
        return None, MSG_NO_K.format(method=spec.method)
    found = golden.lookup(point.model_prefix or "", spec.method, thinking_mode, spec.draft_length,
                          draft_model=spec.draft_model, draft_sample_method=_sample_method(engine, spec.method, variant),
                          served_model=point.model)
    return found.al, found.reason


def golden_lookup(ctx, v: ServingView, golden: Any) -> tuple[Any, tuple[str | None, Any, Any]]:
    """The golden-curve lookup for one speculative view, as the injector would do it (spec 5.2):
    method, draft length and draft from the generation role of the bound variant (else the
    effective config), the thinking mode from the env, and the sample method DSpark implies.
    Returns (GoldenLookup or None when no method is known, (method, K, draft model)). Check 15
    compares AL claims through this same lookup."""
    mode = thinking_mode(v)
    if v.variant is not None:
        spec = _generation_spec(v.variant)
        method, k, draft = spec.method, spec.draft_length, spec.draft_model
    else:
        method, k, draft = v.spec_method, v.draft_length, v.effective.value("draft_model")
        if (not method or k is None) and v.launcher_path is None:
            # A runner-chosen chain: the flags its scripts build, read for this point.
            chained = chain_spec(ctx, v)
            if chained.method:
                method, k = method or chained.method, k if k is not None else chained.draft_length
    if not method:
        return None, (method, k, draft)
    found = golden.lookup(v.point.model_prefix or "", method, mode, k if isinstance(k, int) else 0, draft_model=draft,
                          draft_sample_method=_sample_method(v.engine, method, v.variant, v),
                          served_model=served_model(v))
    return found, (method, k, draft)


def served_model(v: ServingView) -> str | None:
    """The model a point serves (its master-config `model`, else the effective config's), whose
    own golden curve is looked up: a curve measured on another model is not its curve."""
    model = v.point.model or v.effective.value("model")
    return str(model) if model else None


def thinking_mode(v: ServingView) -> str:
    hits = v.hits(THINKING_ENV, kinds=("env", "client-env", "script-env", "setting"))
    return str(hits[-1].value).strip() if hits and str(hits[-1].value).strip() else DEFAULT_THINKING_MODE
