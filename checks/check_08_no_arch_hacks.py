"""Check 8 (No arch hacks): no affected point changes the model architecture or switches off event publication.

What it checks:
    For every affected point, its effective serving config at the pinned head
    (recipes.launch.path.serving: recipe args/env at any role, JSON-valued flags, old-layout launchers,
    srt `setup_script`s, `benchmark.command` strings and the helpers they source):
    (a) no architecture-override knob from policy `arch_hack_flags` (`--hf-overrides`,
    `hf_overrides`, `--json-model-override-args`) is set, read also on the servers' command
    lines of the point's interpreted trace (recipes.launch), however the words were built; (b) no override trims layers,
    experts or heads (a key from policy `arch_trim_keys`, e.g. `num_hidden_layers`, inside any
    JSON-valued flag); (c) nothing on the serving path of the point's trace writes a model file
    (policy `model_file_patterns`, e.g. `config.json`), whatever the command (`sed -i`, `jq ... >`,
    `cp`, `perl -pi`, a here-document) and however its path was built; (d) `publish_events_and_metrics` (policy
    `event_publication_key`) is not disabled anywhere (`false`/`0` in YAML, JSON, CLI or a
    script). For frameworks that have the setting (policy `event_publication_frameworks`) it
    must be effectively enabled; an absent key means srtctl's default, false in the pinned
    srt-slurm, so it is a definite FAIL citing the default. Both parts are in the newest
    verifier prompt only (spec 12), each its own rule in checks.policy: "never explicitly
    false" (`event-publication-not-disabled`) and "effectively enabled" (`event-publication`);
    each applies only to reviews on or after its date. Frameworks without the setting are
    exempt from the second, and the reason says so.
    Lower-precision target compute (quantization, KV dtype) is not an architecture change.
Why it matters:
    Removing model FLOPs (fewer experts per token, skipped layers) makes throughput
    incomparable with every other submission; hidden metrics make runs unauditable.
Evidence it cites:
    The file and line of each offending setting, or the affected recipe/launcher for a pass.
Not applicable when:
    No serving config, image or launch path of any benchmark point is affected.
How to fix:
    Remove the override or model edit and serve the checkpoint's architecture as shipped;
    leave `publish_events_and_metrics` enabled (set it to `true` where the framework has it).
"""
from __future__ import annotations

from checks.policy import BY_KEY, why_not
from checks.result import CheckResult, Evidence
from recipes.launch.path.serving import engine_display, serving_views, ServingView
from checks.serving_rows import (
    changed_files_unavailable,
    dedupe,
    first_unavailable,
    launch_evidence,
    model_file_regex,
)
from checks.text import items_text, join, keys_text
from recipes.values import flag_name as norm_name, is_disabled, is_enabled

EVENT_RULE = "event-publication"
EVENT_DISABLED_RULE = "event-publication-not-disabled"
MSG_NA = "No serving config, image or launch path of any benchmark point is affected."
MSG_HACK_FLAG = "{where} sets {setting}"
MSG_TRIM = "{where} overrides {key} inside {parent}"
MSG_MODEL_EDIT = "{where} edits model file {target} ({command})"
MSG_FAIL = (
    "Architecture hack in {keys}: {items}; remove it and serve the model architecture as shipped "
    "(lower target precision is allowed, removing FLOPs is not)."
)
MSG_PUB_DISABLED = (
    "Event/metric publication is disabled for {keys}: {where} sets {setting}; remove it or set "
    "{key}: true."
)
MSG_PUB_DEFAULT_OFF = (
    "Event/metric publication is off for {keys} ({engine}): {where} does not set {key}, and srtctl's default "
    "in the pinned srt-slurm is false; set {key}: true. Rule: {rule}."
)
MSG_PUB_NOT_IN_FORCE = "The {key} requirement does not apply: {why}"
MSG_PASS = "No {flags}, layer/expert/head trimming or model-file edits in the serving config of {keys}. {publication}"
MSG_PUB_ENABLED = "{key} is enabled for {keys} ({where})."
MSG_PUB_EXEMPT = "{key} is a {owners} srtctl key that {engines} does not support."


def _hack_items(ctx, v: ServingView) -> list[tuple[str, Evidence]]:
    policy = ctx.config.policy
    out: list[tuple[str, Evidence]] = []
    for h in v.hits(*policy.arch_hack_flags):
        if h.parent is None:
            out.append((MSG_HACK_FLAG.format(where=h.where, setting=h.shown), h.evidence()))
    for h in v.hits(*policy.arch_trim_keys):
        if h.parent is not None:
            out.append((MSG_TRIM.format(where=h.where, key=h.name, parent=h.parent), h.evidence()))
    return out


def _trace_items(ctx, v: ServingView) -> list[tuple[str, Evidence]]:
    """What the point's interpreted trace (recipes.launch) shows, however the words were built
    (`printf -v`, arrays, `eval`, a variable set on the way into a container): architecture-override
    flags on a server's command line, and any write to a model file (policy `model_file_patterns`)
    on the serving path, whatever command does it (`sed -i`, `jq ... >`, `cp`, `perl -pi`, a heredoc)."""
    from recipes.launch.path.trace_affected import head_trace
    from recipes.launch.knobs import reached

    trace = head_trace(ctx, v.point)
    if trace is None or not reached(trace.effects()):
        # Past the review's step budget, or a launch the interpreter did not follow to its servers:
        # what it would have run is not in the trace, so the script reading, as before traces.
        model_files = model_file_regex(ctx)
        return [item for use in v.scripts for item in _script_items(use, model_files)]
    # The items are the trace's alone: computed once per trace, however many points share it
    # (`PointTrace.identity`: its runner traces, which the review's tracer keeps alive).
    memo = ctx.memo(MEMO_TRACE_ITEMS, dict)
    if trace.identity not in memo:
        memo[trace.identity] = _traced_items(ctx, trace)
    return memo[trace.identity]


MEMO_TRACE_ITEMS = "check08:trace-items"


def _traced_items(ctx, trace) -> list[tuple[str, Evidence]]:
    from recipes.launch.knobs import SERVER_FLAG, effect_knobs, may_set
    from recipes.launch.trace import EXEC, PYTHON, SERVER, WRITE, show

    wanted = {norm_name(f) for f in ctx.config.policy.arch_hack_flags}
    model_files = model_file_regex(ctx)
    out: list[tuple[str, Evidence]] = []
    effects = trace.serving_effects()
    for k, e in enumerate(effects):
        if e.kind == WRITE and e.how != "delete":
            target = e.shown_path()
            if isinstance(e.path, str) and model_files.search(target):
                # The command that wrote it is the effect just before, at the same site.
                by = next((p for p in reversed(effects[:k]) if p.site == e.site and p.kind in (EXEC, PYTHON)), None)
                command = " ".join(show(w) for w in by.argv)[:80] if by is not None else e.how
                out.append((MSG_MODEL_EDIT.format(where=e.where(), target=target, command=command),
                            Evidence(path=e.site.path, line=e.site.line, note=e.where())))
            continue
        if e.kind not in (SERVER, PYTHON, EXEC) or e.client or not may_set(e, wanted):
            continue
        for kn in effect_knobs(e):  # the command's flags as its parser reads them (recipes.launch.knobs)
            if kn.kind == SERVER_FLAG and not kn.opaque and kn.key in wanted:
                out.append((MSG_HACK_FLAG.format(where=f"{e.site}", setting=kn.shown),
                            Evidence(path=e.site.path, line=e.site.line, note=e.where())))
    return out


def _script_items(use, model_files) -> list[tuple[str, Evidence]]:
    """Model-file edits in one script's executed code, read from the script analysis: only for a
    point the review's step budget leaves untraced (as Checks 9 and 13 fall back); computed once
    per (script, path, executed functions) and shared by every point that runs it."""
    memo = use.analysis.__dict__.setdefault("_check08_items", {})
    key = (use.path, use.executed, model_files.pattern)
    if key in memo:
        return memo[key]
    out: list[tuple[str, Evidence]] = []
    for p in use.patches:
        if p.target and model_files.search(p.target):
            out.append((MSG_MODEL_EDIT.format(where=f"{use.path}:{p.line}", target=p.target,
                                              command=p.text.strip().split("\n")[0][:80]),
                        Evidence(path=use.path, line=p.line)))
    for cmd in use.analysis.commands:
        if not use.runs(cmd.function):
            continue
        argv = cmd.expanded or cmd.argv
        if argv and argv[0].rsplit("/", 1)[-1] == "jq":
            targets = [t for _, t in cmd.redirects] + [a for a in argv[1:] if model_files.search(a)]
            hit = next((t for t in targets if model_files.search(t)), None)
            if hit:
                out.append((MSG_MODEL_EDIT.format(where=f"{use.path}:{cmd.line}", target=hit,
                                                  command=cmd.text.strip()[:80]),
                            Evidence(path=use.path, line=cmd.line)))
    memo[key] = out
    return out


class NoArchHacksCheck:
    def applies(self, ctx) -> str | None:
        if changed_files_unavailable(ctx) is not None:
            return None
        return MSG_NA if not ctx.affected.serving_points else None

    def evaluate(self, ctx) -> CheckResult:
        unavailable = changed_files_unavailable(ctx)
        if unavailable is not None:
            return unavailable
        policy = ctx.config.policy
        views = serving_views(ctx)
        hacks: list[tuple[str, Evidence]] = []
        hack_keys: list[str] = []
        for v in views:
            items = _hack_items(ctx, v) + _trace_items(ctx, v)
            if items:
                hack_keys.append(v.config_key)
                hacks.extend(items)
        # One setting may match twice (an override flag and a trimmed key inside it): report it once.
        by_line: dict[tuple, tuple[str, Evidence]] = {}
        for text, ev in dedupe(hacks):
            by_line.setdefault((ev.path, ev.line), (text, ev))
        hacks = list(by_line.values())
        if hacks:
            shown = items_text(t for t, _ in hacks)
            return CheckResult.failed(MSG_FAIL.format(keys=keys_text(hack_keys), items=shown), *[e for _, e in hacks])

        key = policy.event_publication_key
        supported = set(policy.event_publication_frameworks)
        rule = BY_KEY[EVENT_RULE]
        not_in_force = why_not(rule, ctx.snapshot.review_date, ctx.target_repo, ctx.snapshot.unreadable)
        if not_in_force is not None:
            supported = set()  # the requirement came later: nothing to enforce or exempt
        disabled_rule = BY_KEY[EVENT_DISABLED_RULE]
        disabled_not_in_force = why_not(disabled_rule, ctx.snapshot.review_date, ctx.target_repo,
                                        ctx.snapshot.unreadable)
        for v in views if disabled_not_in_force is None else ():
            disabled = [h for h in v.hits(key) if is_disabled(h.value)]
            if disabled:
                h = disabled[0]
                return CheckResult.failed(MSG_PUB_DISABLED.format(keys=v.config_key, where=h.where, setting=h.shown, key=key),
                                          h.evidence())
        missing = first_unavailable([v for v in views if v.framework in supported], launch=ctx)
        if missing is not None:
            return missing
        enabled: list = []
        for v in views:
            if v.framework not in supported:
                continue
            on = [h for h in v.hits(key) if is_enabled(h.value)]
            if not on:
                where = v.launcher_path or v.point.source_path
                return CheckResult.failed(
                    MSG_PUB_DEFAULT_OFF.format(keys=v.config_key, engine=v.engine_name, key=key, where=where,
                                               rule=rule.citation()),
                    Evidence(path=where, line=v.variant.line if v.variant is not None else None,
                             note=f"{key} absent: srtctl default false"))
            enabled.append((v, on[0]))
        # An unreadable or unbound launch path of an unsupported framework hides hacks too.
        missing = first_unavailable(views, launch=ctx)
        if missing is not None:
            return missing

        keys = [v.config_key for v in views]
        sentences = []
        if enabled:
            sentences.append(MSG_PUB_ENABLED.format(key=key, keys=keys_text(v.config_key for v, _ in enabled),
                                                    where=enabled[0][1].where))
        exempt = sorted({v.engine_name for v in views if v.framework not in supported})
        if not_in_force is not None:
            sentences.append(MSG_PUB_NOT_IN_FORCE.format(key=key, why=not_in_force))
        elif exempt:
            owners = sorted({engine_display(f, policy) for f in supported}) or ["no"]
            sentences.append(MSG_PUB_EXEMPT.format(key=key, owners="/".join(owners), engines=join(exempt)))
        flags = join((f"--{norm_name(f)}" for f in policy.arch_hack_flags), "or", sep=" or ", unique=True)
        return CheckResult.passed(
            MSG_PASS.format(flags=flags, keys=keys_text(keys), publication=" ".join(sentences)).strip(),
            *launch_evidence(views),
        )

