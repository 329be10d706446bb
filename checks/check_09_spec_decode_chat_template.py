"""Check 9 (Spec-decode chat template): every changed speculative config benchmarks through a chat template.

What it checks:
    Every affected point that speculates (master `spec-decoding` other than `none`, or
    speculative args in its recipe: MTP, EAGLE, DSpark, draft models) must drive the
    benchmark client through the chat template, judged on the effective config at the head:
    - AgentX points (scenario `agentic-coding`) replay through `srt_agentic.sh`, the chat
      scenario, so they use it by construction. An agentic recipe whose `benchmark.command`
      names another client must enable the template like a fixed-sequence one.
    - Fixed-sequence srt recipes must set `benchmark.env.USE_CHAT_TEMPLATE: "true"`.
    - sa-bench recipes (`benchmark: {type: sa-bench}`, mostly the older multi-node format)
      carry `benchmark.use_chat_template`; absent means true (the srtctl schema default), so
      only an explicit false fails. The field, or the benchmark block for the default, is the
      evidence.
    - A point its scripts launch (old-layout `*_mtp.sh` launchers, a runner that picks the
      script, a recipe's `benchmark.command`) is judged on its interpreted launch
      (recipes.launch): the benchmark client processes of its trace at the head (eval
      harnesses aside), each with the words and environment it really gets
      (recipes.launch.knobs). A client uses the template when its last `--use-chat-template`
      is bare or enabled, or it sees `USE_CHAT_TEMPLATE` enabled (exported on the way, or the
      master config's setting). A helper's option handling is seen because the interpreter ran
      it (benchmark_lib.sh's `run_benchmark_serving` turning `--dsv4` into the flag), as are
      arrays, `printf -v`, `read` and the branches the point's values decide (bench.sh's
      `$extra_flags` when IS_MTP is true); text printed to a log is no client. PASS when
      every client uses it; FAIL when one runs without it whatever the branches.
    - "could not verify", never a PASS and never a FAIL on a missing flag: the trace reaches
      neither servers nor client (it stops at an `exit`, a script not in the repository),
      reaches no client it recognises (naming the first thing it could not interpret), a
      client gets a word the bot could not resolve (a flag set on a branch the point's
      values do not decide), clients of undecided branches differ, or the review's
      interpreter budget was spent before the point was traced.
Why it matters:
    Acceptance length depends on the prompt format; raw completions give an acceptance
    distribution no real chat user sees, which inflates speculative throughput.
Evidence it cites:
    The recipe `USE_CHAT_TEMPLATE` line for a recipe; for a launched client, its file:line
    with the chain that led there (runner line -> script line -> fn helper -> command).
Not applicable when:
    No affected point speculates.
How to fix:
    Set `USE_CHAT_TEMPLATE: "true"` in the recipe's `benchmark.env`, or pass
    `--use-chat-template` to the benchmark client in the launcher.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Optional

from checks.fixes import FIXES_KEY, add_fix, value_fix
from checks.result import CheckResult, Evidence
from recipes.launch.path.serving import serving_views, ServingView
from recipes.launch.path.serving_unlisted import unlisted_agentic_views
from recipes.launch.path.launch_path import VIA_RUN_BY
from recipes.launch.path.branch_words import PRINT_COMMANDS
from recipes.identity import by_identity
from checks.serving_rows import (
    changed_files_unavailable,
    dedupe,
    first_unavailable,
    launch_evidence,
    launch_unknown,
    runner_chosen,
)
from checks.text import items_text, keys_text
from recipes.launch.path.trace_affected import head_trace
from recipes.launch import knobs
from recipes.launch.trace import SERVER, UNKNOWN, Effect
from recipes.values import flag_name as norm_name, is_enabled
from recipes.srt import AGENTIC_CLIENT

CHAT_ENV = "USE_CHAT_TEMPLATE"
# The one value a mechanical fix writes, and the kinds of hits that are YAML mapping entries.
CHAT_ON = "true"
YAML_KINDS = ("client-env", "setting", "env")
FIX_WHY = "speculative points use the chat template: {env} must be \"true\" (Check 9)"
# The AgentX replay clients: single-node srt (`srt_agentic.sh`) and multi-node (`agentic_srt.sh`).
AGENTIC_CLIENTS = (AGENTIC_CLIENT, "agentic_srt.sh")
CHAT_FLAG = "--use-chat-template"
_ECHO_IF_ARRAY = re.compile(
    r"""\$\(\s*\[\[?\s*\$\{#(\w+)\[@\]\}\s+-gt\s+0\s*\]\]?\s*&&\s*echo\s+["']?(--[\w-]+)["']?\s*\)""")
_CASE_ARM = re.compile(r"""^["']?\$\{?1\}?["']? matches (.+)$""")  # `case $1 in` or `case "$1" in`
WHAT_CLIENT = "the client command"
MSG_IMPLIED = "{flag}, which {helper} turns into --use-chat-template"
MSG_HELPER_MISSING = (
    "could not verify {key}: {where} sources {ref}, which is {path}, not a file of the repository, so the "
    "client helper the launcher calls is unknown (and the run would fail); fix the path."
)
# Eval harnesses run beside the benchmark client (accuracy, not the served benchmark): their
# template use is not the benchmark's.
EVAL_CLIENTS = frozenset({"lm_eval", "lm-eval", "evalscope", "lighteval", "swebench"})

MSG_NA = "No affected benchmark point uses speculative decoding."
MSG_ENV_OFF = "{where} sets {env}: {value!r} for speculative {key}"
MSG_ENV_MISSING = "{where} ({variant}) has no benchmark.env {env} for speculative {key}"
MSG_FLAG_MISSING = "{where} runs the client for speculative {key} without {flag}"
MSG_NOT_REACHED = ("could not verify {key}: its interpreted launch reaches neither its servers nor its client "
                   "({gap}), so the client's template use is unknown")
MSG_EMPTY = "no runner script or launcher of the point to start from"
MSG_NO_CLIENT = ("could not verify {key}: its interpreted launch starts its servers but no benchmark client the bot "
                 "recognises{gap}, so the client's template use is unknown")
MSG_GAP = "{where}: {what}"
MSG_LAST = "it stops after {where}: {what}"
MSG_CLIENT_UNKNOWN = ("could not verify {key}: {where} runs the client with {what}, so whether it gets {flag} is "
                      "unknown; pass {flag} to the client plainly")
MSG_CLIENT_SPLIT = ("could not verify {key}: {on} passes {flag} but {off} runs the client without it, on branches "
                    "the bot does not decide for this point ({under}); pass {flag} to the client plainly")
MSG_FAIL = (
    "Speculative configs benchmark without the chat template: {items}; set {env}: \"true\" in the "
    "recipe's benchmark.env (or pass {flag} to the client in the launcher)."
)
MSG_PASS_AGENTIC = "the AgentX replay of {keys} goes through {client}, the chat scenario, so it uses the chat template by construction"
MSG_PASS_ENV = "{keys} set {env}: \"true\" ({where})"
MSG_PASS_FLAG = "{keys} pass {flag} to the client ({where})"
MSG_PASS_FIELD = "{keys} set benchmark.use_chat_template: {value} ({where})"
MSG_PASS_DEFAULT = (
    "{keys} run sa-bench without benchmark.use_chat_template ({where}), which srtctl defaults to true"
)
MSG_FIELD_OFF = (
    "{where} sets benchmark.use_chat_template: {value} for speculative {key} (set it to true or drop it: "
    "srtctl's sa-bench default is true)"
)
MSG_PASS = "Every affected speculative config uses the chat template: {parts}."


def _uses_agentic_client(v: ServingView) -> bool:
    if not v.is_agentic:
        return False
    cmd = v.variant.benchmark_command if v.variant is not None else None
    if isinstance(cmd, str) and cmd.strip():
        return cmd.strip().split()[-1].rsplit("/", 1)[-1] in AGENTIC_CLIENTS
    # Old launchers and recipes that leave the command to the harness: AgentX points always
    # run the shared AgentX client (spec 2.3: the client is chosen by the scenario).
    return True


@dataclass(frozen=True)
class ClientUse:
    """Whether a point's benchmark client runs with the chat template, as its trace has it:
    `state` is "on", "off" or "unknown"; `text` says why (a "could not verify" sentence when
    unknown); `evidence` cites the client's line with the chain that led there."""

    state: str
    where: str = ""
    text: str = ""
    evidence: Optional[Evidence] = None


def _client_evidence(e: Effect, unavailable: bool = False) -> Evidence:
    note = knobs.chain_note(e)
    return Evidence(path=e.site.path, line=e.site.line, note=note, unavailable=unavailable)


def _is_benchmark_client(e: Effect) -> bool:
    name = e.how.split()[0] if e.how else ""
    return name not in EVAL_CLIENTS and name.split(".")[0] not in EVAL_CLIENTS and "/evals/" not in f"/{e.how}"


def _one_client(e: Effect, inherited: Any) -> tuple[str, str]:
    """("on" | "off" | "unknown", what decides it) for one client process: its last
    --use-chat-template (a bare flag, or `=value`), else the USE_CHAT_TEMPLATE it sees (set on
    the way, or inherited from the master config's settings), else off, unless an unresolved
    word may hold the flag."""
    found = knobs.effect_knobs(e)
    flag = [k for k in knobs.find(found, CHAT_FLAG, kinds=(knobs.CLIENT_FLAG,)) if k.wins]
    if flag:
        k = flag[-1]
        if not k.known:
            return "unknown", f"{CHAT_FLAG} set to a value the bot could not resolve ({k.value.why})"
        return ("on" if is_enabled(k.value) else "off"), (CHAT_FLAG if k.bare else k.shown)
    env = knobs.find(found, CHAT_ENV, kinds=(knobs.CLIENT_ENV,))
    value = env[-1].value if env else inherited
    if env and not env[-1].known:
        return "unknown", f"{CHAT_ENV} set to a value the bot could not resolve ({value.why})"
    if value is not None and is_enabled(value):
        return "on", f"{CHAT_ENV}={value}"
    hidden = knobs.opaque(found, knobs.CLIENT_FLAG)
    if hidden:
        return "unknown", f"a word the bot could not resolve ({hidden[0].value.why})"
    return "off", ""


def client_use(ctx, v: ServingView, inherited: Any = None) -> ClientUse:
    """The template use of the point's benchmark client, read from the CLIENT effects of its
    trace at the head (recipes.launch.knobs): the helper functions' option handling, arrays,
    `printf -v`, a flag on a branch are the interpreter's to resolve, not a pattern's."""
    trace = head_trace(ctx, v.point)
    here = Evidence(path=v.point.source_path, line=v.point.source_line, unavailable=True)
    if trace is None:
        return _script_use(ctx, v)
    effects = trace.effects()
    clients = [e for e in knobs.clients(effects) if _is_benchmark_client(e)]
    if not clients:
        # What the interpreter could not follow: the first unknown, and the first after the last
        # server (where the client should start) when that is another.
        served = max((i for i, e in enumerate(effects) if e.kind == SERVER), default=0)
        gaps = list(dict.fromkeys(g for g in (next((e for e in effects if e.kind == UNKNOWN), None),
                                              next((e for e in effects[served:] if e.kind == UNKNOWN), None)) if g))
        said = "; ".join(MSG_GAP.format(where=knobs.brief(g), what=g.describe()) for g in gaps)
        evidence = _client_evidence(gaps[0], True) if gaps else here
        if not knobs.reached(effects):
            last = effects[-1] if effects else None
            said = said or (MSG_LAST.format(where=knobs.brief(last), what=last.describe()) if last else MSG_EMPTY)
            return ClientUse("unknown", text=MSG_NOT_REACHED.format(key=v.config_key, gap=said), evidence=evidence)
        return ClientUse("unknown", text=MSG_NO_CLIENT.format(key=v.config_key, gap=f" ({said})" if said else ""),
                         evidence=evidence)
    states = [(e, *_one_client(e, inherited)) for e in clients]
    unknown = next((x for x in states if x[1] == "unknown"), None)
    on = next((x for x in states if x[1] == "on"), None)
    off = [x for x in states if x[1] == "off"]
    if unknown is not None and (off or on is None):
        e, _, what = unknown
        return ClientUse("unknown", where=knobs.brief(e), evidence=_client_evidence(e, True),
                         text=MSG_CLIENT_UNKNOWN.format(key=v.config_key, where=knobs.brief(e), what=what, flag=CHAT_FLAG))
    if off and on is not None:
        sure = next((x for x in off if not x[0].under), None)
        if sure is not None:  # it runs whatever the branches: a run without the template
            return ClientUse("off", where=knobs.brief(sure[0]), evidence=_client_evidence(sure[0]))
        e = off[0][0]
        under = "; ".join(dict.fromkeys(u for x in (on, off[0]) for u in x[0].under)) or "none"
        return ClientUse("unknown", where=knobs.brief(e), evidence=_client_evidence(e, True),
                         text=MSG_CLIENT_SPLIT.format(key=v.config_key, on=knobs.brief(on[0]), off=knobs.brief(e), flag=CHAT_FLAG,
                                                      under=under))
    if off:
        return ClientUse("off", where=knobs.brief(off[0][0]), evidence=_client_evidence(off[0][0]))
    e, _, what = on
    return ClientUse("on", where=knobs.brief(e), text=what, evidence=_client_evidence(e))


def _setting(v: ServingView) -> Any:
    """USE_CHAT_TEMPLATE from the point's master-config settings (parsed; the job exports it)."""
    hits = [h for h in v.hits(CHAT_ENV, kinds=("setting",)) if h.path == v.point.source_path]
    return hits[-1].value if hits else None


# --- untraced points -----------------------------------------------------------------------
# A point the review's interpreter budget leaves untraced (recipes.launch.path.trace_affected) is judged by
# the launch scripts' reading, as Check 10 and the affected rule judge it then: a PR that
# reaches thousands of points still gets a reading of each, and never a pass without one.

MSG_CHAIN_CLIENT = (
    "could not verify {key}: the runner-chosen launch chain was followed, but no client command on it passes "
    "{flag} unconditionally (a flag set on a branch of a client script is not decided), so the client's "
    "template use is unknown; pass {flag} to the client plainly"
)
MSG_CHAIN_WORDS = (
    "could not verify {key}: the runner-chosen launch chain was followed, and {where} runs {command} without {flag} "
    "for this point ({words}), but no client command on it passes {flag} unconditionally; pass {flag} to the client "
    "plainly"
)


def _missing_helper(ctx, v: ServingView) -> tuple[str, Evidence] | None:
    """A helper the launcher sources relative to its own folder that is not in the repository
    (recipes.launch.path.launch_path.missing_self_relative), with the line that sources it."""
    from recipes.launch.path.launch_path import missing_self_relative

    for use in v.scripts:
        if use.path != v.launcher_path:
            continue
        for src in use.analysis.sources:
            path = missing_self_relative(ctx.head_repo, src.value, use.path)
            if path is not None and use.line_runs(src.line):
                return (MSG_HELPER_MISSING.format(key=v.config_key, where=f"{use.path}:{src.line}", ref=src.value, path=path),
                        Evidence(path=use.path, line=src.line, unavailable=True))
    return None


def _implied_flags(v: ServingView) -> dict[str, str]:
    """Client-helper flags that turn the chat template on, read from the helpers' option
    handling: a `case "$1"` arm `--dsv4)` that sets `use_chat_template=true` (benchmark_lib.sh's
    `run_benchmark_serving`) makes `--dsv4` imply it. Flag -> where the helper says so."""
    out: dict[str, str] = {}
    for use in v.scripts:
        for flag, line in _arm_flags(use.analysis):
            out.setdefault(flag, f"{use.path}:{line}")
    return out


@by_identity(1024)  # every view of a script's points asks the same
def _arm_flags(analysis: Any) -> list[tuple[str, int]]:
    """(flag, line) of each case arm of the script that sets the chat-template variable."""
    wanted = norm_name(CHAT_ENV)
    found: list[tuple[str, int]] = []
    for name, loc, _exported in analysis.assignments:
        if norm_name(name) != wanted or not loc.condition:
            continue
        if not is_enabled(loc.resolved if loc.resolved is not None else loc.value):
            continue
        for part in loc.condition.split(" && "):
            m = _CASE_ARM.match(part.strip())
            if m:
                for flag in m.group(1).split("|"):
                    flag = flag.strip().strip("'\"")
                    if flag.startswith("--"):
                        found.append((norm_name(flag), loc.line))
    return found


def _passed_flag(word: str | None, wanted: dict[str, str | None]) -> str | None:
    """The flag as written when a client word passes one of `wanted` (`--x`, or `--x=v` with v
    enabled); None for another word or one the bot cannot know."""
    name = (word or "").split("=", 1)[0]
    if not name.startswith("--") or norm_name(name) not in wanted:
        return None
    return name if "=" not in word or is_enabled(word.split("=", 1)[1]) else None


def _chat_flag_line(v: ServingView) -> tuple[str, int, str, str | None] | None:
    """(path, line, flag as written, where the helper maps it to the template) of the first
    client command passing the template flag or a flag that implies it."""
    # The template flag itself stays direct when a helper also has an arm for it.
    wanted = {**_implied_flags(v), norm_name(CHAT_FLAG): None}
    for use in v.scripts:
        helper = use.via.startswith(VIA_RUN_BY)
        # A script run by another (TileRT's `run_node.sh`, started by its submit script) calls
        # the functions its own top level runs with the words written in it; a sourced
        # library's other functions wait for their caller's options.
        own = use.analysis.own_calls() if helper else frozenset()
        for cmd in use.analysis.commands:
            # A helper's own flags inside a library function depend on the caller's options, so
            # they prove nothing about what this point passes (recipes.launch.path.launch_path: executed code);
            # a function the helper's own top level calls is run with the words written there.
            if not use.runs(cmd.function) or (cmd.function is not None and helper and cmd.function not in own):
                continue
            argv = cmd.expanded or cmd.argv
            if not argv or argv[0].rsplit("/", 1)[-1] in PRINT_COMMANDS:
                continue  # text printed to a log never reaches the client
            decided = v.chain_words.get((use.path, cmd.line))
            if decided is not None:
                # The runner-chosen chain read the words a branch chose as this point's run sets
                # them (bench.sh's `$extra_flags`, `--use-chat-template` when IS_MTP is true).
                for word in decided:
                    name = _passed_flag(word, wanted)
                    if name is not None:
                        return use.path, cmd.line, name, wanted[norm_name(name)]
                continue
            if helper and cmd.condition:
                continue  # a helper's conditional word runs only when its caller asks for it
            if not helper:
                for m in _ECHO_IF_ARRAY.finditer(cmd.text or ""):
                    # `$( [[ ${#SPEC_ARGS[@]} -gt 0 ]] && echo "--use-chat-template" )`: the flag is
                    # passed exactly when the named array is non-empty in this script.
                    if norm_name(m.group(2)) in wanted and use.analysis.arrays.get(m.group(1)):
                        return use.path, cmd.line, m.group(2), wanted[norm_name(m.group(2))]
            conds = cmd.arg_conditions if cmd.expanded and len(cmd.arg_conditions) == len(argv) else [None] * len(argv)
            for word, cond in zip(argv, conds):
                if helper and cond:
                    continue
                name = _passed_flag(word, wanted)
                if name is not None:
                    return use.path, cmd.line, name, wanted[norm_name(name)]
    return None


def _script_use(ctx, v: ServingView) -> ClientUse:
    """The template use of an untraced point's client, read from its launch scripts."""
    env_hits = v.hits(CHAT_ENV, kinds=("client-env", "script-env", "setting"))
    if env_hits:
        h = env_hits[-1]
        return ClientUse("on" if is_enabled(h.value) else "off", where=h.where, text=f"{CHAT_ENV}={h.value}",
                         evidence=h.evidence())
    flag = _chat_flag_line(v)
    if flag is not None:
        where = f"{flag[0]}:{flag[1]}"
        text = CHAT_FLAG if flag[3] is None else MSG_IMPLIED.format(flag=flag[2], helper=flag[3])
        return ClientUse("on", where=where, text=text, evidence=Evidence(path=flag[0], line=flag[1]))
    here = Evidence(path=v.point.source_path, line=v.point.source_line, unavailable=True)
    if v.variant is None and v.launcher_path is None and v.scripts:
        decided = next(((where, words) for where, words in v.chain_words.items() if None not in words), None)
        text = MSG_CHAIN_CLIENT.format(key=v.config_key, flag=CHAT_FLAG) if decided is None else \
            MSG_CHAIN_WORDS.format(key=v.config_key, flag=CHAT_FLAG, where=f"{decided[0][0]}:{decided[0][1]}",
                                   command=decided[1][0], words=" ".join(decided[1][1:]) or "no arguments")
        return ClientUse("unknown", text=text, evidence=here)
    if launch_unknown(v):
        return ClientUse("unknown", text=runner_chosen(ctx, v, WHAT_CLIENT), evidence=here)
    gap = _missing_helper(ctx, v)
    if gap is not None:
        return ClientUse("unknown", text=gap[0], evidence=gap[1])
    path = v.launcher_path or v.point.source_path
    return ClientUse("off", where=path, evidence=Evidence(path=path, line=1 if v.launcher_path else v.point.source_line))


class SpecDecodeChatTemplateCheck:
    def applies(self, ctx) -> str | None:
        if changed_files_unavailable(ctx) is not None:
            return None
        views = serving_views(ctx) + serving_views(ctx, "client") + unlisted_agentic_views(ctx)
        if not views:
            return MSG_NA
        return None if any(v.is_speculative for v in views) else MSG_NA

    def evaluate(self, ctx) -> CheckResult:
        unavailable = changed_files_unavailable(ctx)
        if unavailable is not None:
            return unavailable
        views = [v for v in serving_views(ctx) + serving_views(ctx, "client") + unlisted_agentic_views(ctx) if v.is_speculative]
        missing = first_unavailable(views)
        if missing is not None:
            return missing
        problems: list[tuple[str, Evidence]] = []
        fixes: list[dict] = []
        agentic: list[ServingView] = []
        by_env: list[tuple[ServingView, str]] = []
        by_flag: list[tuple[ServingView, str]] = []
        by_field: list[tuple[ServingView, str]] = []
        by_default: list[tuple[ServingView, str]] = []
        unknown: list[tuple[str, Evidence]] = []
        for v in views:
            if _uses_agentic_client(v):
                agentic.append(v)
                continue
            if v.variant is not None:
                value, kp, written = v.variant.chat_template()
                if kp is not None and kp[-1] == "use_chat_template":
                    where = f"{v.variant.path}:{v.variant.line_of(*kp)}"
                    if is_enabled(value):
                        by_field.append((v, where))
                    else:
                        problems.append((MSG_FIELD_OFF.format(where=where, value=value, key=v.config_key),
                                         Evidence(path=v.variant.path, line=v.variant.line_of(*kp))))
                    continue
                if kp is not None and not written:
                    by_default.append((v, f"{v.variant.path}:{v.variant.line_of(*kp)}"))
                    continue
            if v.variant is not None:
                # The recipe's benchmark.env (parsed) and the master config's settings.
                env_hits = [h for h in v.hits(CHAT_ENV, kinds=("client-env", "setting"))
                            if h.path in (v.variant.path, v.point.source_path)]
                if env_hits:
                    h = env_hits[-1]
                    if is_enabled(h.value):
                        by_env.append((v, h.where))
                    else:
                        problems.append((MSG_ENV_OFF.format(where=h.where, env=CHAT_ENV, value=h.value, key=v.config_key),
                                         h.evidence()))
                        if h.kind in YAML_KINDS:
                            fixes += value_fix(h.path, h.line, h.name, CHAT_ON, FIX_WHY.format(env=CHAT_ENV))
                    continue
                # No env: a client its benchmark.command runs may still pass the flag.
                command = v.variant.benchmark_command
                use = client_use(ctx, v) if isinstance(command, str) and command.strip() else None
                if use is not None and use.state == "on":
                    by_flag.append((v, use))
                    continue
                env_line = v.variant.line_of("benchmark", "env")
                line = env_line or v.variant.line
                problems.append((MSG_ENV_MISSING.format(where=f"{v.variant.path}:{line}", variant=v.variant.selector or v.variant.name,
                                                        env=CHAT_ENV, key=v.config_key),
                                 Evidence(path=v.variant.path, line=line)))
                if env_line:
                    # One mechanical fix: the missing entry added to the recipe's benchmark.env block.
                    fixes += add_fix(v.variant.path, env_line, "env", CHAT_ENV, CHAT_ON, FIX_WHY.format(env=CHAT_ENV))
                continue
            # A script-launched point: what its client is run with, as the trace has it.
            use = client_use(ctx, v, _setting(v))
            if use.state == "on":
                (by_env if use.text.startswith(CHAT_ENV) else by_flag).append(
                    (v, use.where) if use.text.startswith(CHAT_ENV) else (v, use))
            elif use.state == "unknown":
                unknown.append((use.text, use.evidence))
            else:
                problems.append((MSG_FLAG_MISSING.format(where=use.where, key=v.config_key, flag=CHAT_FLAG),
                                 use.evidence))
        problems = dedupe(problems)
        if not problems and unknown:
            unknown = dedupe(unknown)
            return CheckResult.failed(items_text(t.rstrip(".") for t, _ in unknown) + ".",
                                      *dict.fromkeys(e for _, e in unknown))
        if problems:
            shown = items_text(t for t, _ in problems)
            extra = {FIXES_KEY: fixes} if fixes else {}
            return CheckResult.failed(MSG_FAIL.format(items=shown, env=CHAT_ENV, flag=CHAT_FLAG), *[e for _, e in problems],
                                      **extra)
        parts = []
        if agentic:
            parts.append(MSG_PASS_AGENTIC.format(keys=keys_text(v.config_key for v in agentic), client=AGENTIC_CLIENT))
        if by_env:
            parts.append(MSG_PASS_ENV.format(keys=keys_text(v.config_key for v, _ in by_env), env=CHAT_ENV, where=by_env[0][1]))
        if by_field:
            parts.append(MSG_PASS_FIELD.format(keys=keys_text(v.config_key for v, _ in by_field), value="true",
                                               where=by_field[0][1]))
        if by_default:
            parts.append(MSG_PASS_DEFAULT.format(keys=keys_text(v.config_key for v, _ in by_default),
                                                 where=by_default[0][1]))
        if by_flag:
            parts.append(MSG_PASS_FLAG.format(keys=keys_text(v.config_key for v, _ in by_flag),
                                              flag=by_flag[0][1].text or CHAT_FLAG, where=by_flag[0][1].where))
        clients = dict.fromkeys(u.evidence for _, u in by_flag if u.evidence is not None)
        return CheckResult.passed(MSG_PASS.format(parts="; ".join(parts)), *launch_evidence(views), *clients)
