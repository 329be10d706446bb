"""Check 9 (Spec-decode chat template): every changed speculative config benchmarks through a chat template.

What it checks:
    Every affected point that speculates (master `spec-decoding` other than `none`, or
    speculative args in its recipe: MTP, EAGLE, DSpark, draft models) must drive the
    benchmark client through the chat template, judged on the effective config at the head:
    - AgentX points (scenario `agentic-coding`) replay through `srt_agentic.sh`, the chat
      scenario, so they use it by construction. An agentic recipe whose `benchmark.command`
      names another client must enable the template like a fixed-sequence one.
    - Fixed-sequence srt recipes must set `benchmark.env.USE_CHAT_TEMPLATE: "true"`.
    - Old-layout bash launchers (`*_mtp.sh`) must pass `--use-chat-template` to the client
      (a runtime word of a command; quoted text and comments do not count), or export
      `USE_CHAT_TEMPLATE=true`.
Why it matters:
    Acceptance length depends on the prompt format; raw completions give an acceptance
    distribution no real chat user sees, which inflates speculative throughput.
Evidence it cites:
    The recipe `USE_CHAT_TEMPLATE` line or launcher line for a failure; the client command
    for a pass.
Not applicable when:
    No affected point speculates.
How to fix:
    Set `USE_CHAT_TEMPLATE: "true"` in the recipe's `benchmark.env`, or pass
    `--use-chat-template` to the benchmark client in the launcher.
"""
from __future__ import annotations

from checks.fixes import FIXES_KEY, value_fix
from checks.result import CheckResult, Evidence
from checks.serving import (
    ServingView,
    changed_files_unavailable,
    dedupe,
    first_unavailable,
    is_enabled,
    items_text,
    keys_text,
    launch_evidence,
    norm_name,
    serving_views,
)
from recipes.srt import AGENTIC_CLIENT

CHAT_ENV = "USE_CHAT_TEMPLATE"
# The one value a mechanical fix writes, and the kinds of hits that are YAML mapping entries.
CHAT_ON = "true"
YAML_KINDS = ("client-env", "setting", "env")
FIX_WHY = "speculative points use the chat template: {env} must be \"true\" (Check 9)"
CHAT_FLAG = "--use-chat-template"
PRINT_COMMANDS = frozenset({"echo", "printf", ":", "true", "logger"})

MSG_NA = "No affected benchmark point uses speculative decoding."
MSG_ENV_OFF = "{where} sets {env}: {value!r} for speculative {key}"
MSG_ENV_MISSING = "{where} ({variant}) has no benchmark.env {env} for speculative {key}"
MSG_FLAG_MISSING = "{where} runs the client for speculative {key} without {flag}"
MSG_FAIL = (
    "Speculative configs benchmark without the chat template: {items}; set {env}: \"true\" in the "
    "recipe's benchmark.env (or pass {flag} to the client in the launcher)."
)
MSG_PASS_AGENTIC = "the AgentX replay of {keys} goes through {client}, the chat scenario, so it uses the chat template by construction"
MSG_PASS_ENV = "{keys} set {env}: \"true\" ({where})"
MSG_PASS_FLAG = "{keys} pass {flag} to the client ({where})"
MSG_PASS = "Every affected speculative config uses the chat template: {parts}."


def _uses_agentic_client(v: ServingView) -> bool:
    if not v.is_agentic:
        return False
    cmd = v.variant.benchmark_command if v.variant is not None else None
    if isinstance(cmd, str) and cmd.strip():
        return cmd.strip().split()[-1].endswith(AGENTIC_CLIENT)
    # Old launchers and recipes that leave the command to the harness: AgentX points always
    # run the shared AgentX client (spec 2.3: the client is chosen by the scenario).
    return True


def _chat_flag_line(v: ServingView) -> tuple[str, int] | None:
    wanted = norm_name(CHAT_FLAG)
    for use in v.scripts:
        for cmd in use.analysis.commands:
            argv = cmd.expanded or cmd.argv
            if not argv or argv[0].rsplit("/", 1)[-1] in PRINT_COMMANDS:
                continue  # text printed to a log never reaches the client
            for word in argv:
                name = word.split("=", 1)[0]
                if word.startswith("--") and norm_name(name) == wanted:
                    if "=" in word and not is_enabled(word.split("=", 1)[1]):
                        continue
                    return use.path, cmd.line
    return None


class SpecDecodeChatTemplateCheck:
    number = 9
    name = "Spec-decode chat template"
    advisory = False
    retired = False

    def applies(self, ctx) -> str | None:
        if changed_files_unavailable(ctx) is not None:
            return None
        if not ctx.affected.points:
            return MSG_NA
        return None if any(v.is_speculative for v in serving_views(ctx)) else MSG_NA

    def evaluate(self, ctx) -> CheckResult:
        unavailable = changed_files_unavailable(ctx)
        if unavailable is not None:
            return unavailable
        views = [v for v in serving_views(ctx) if v.is_speculative]
        missing = first_unavailable(views)
        if missing is not None:
            return missing
        problems: list[tuple[str, Evidence]] = []
        fixes: list[dict] = []
        agentic: list[ServingView] = []
        by_env: list[tuple[ServingView, str]] = []
        by_flag: list[tuple[ServingView, str]] = []
        for v in views:
            if _uses_agentic_client(v):
                agentic.append(v)
                continue
            env_hits = v.hits(CHAT_ENV, kinds=("client-env", "script-env", "setting"))
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
            flag = _chat_flag_line(v)
            if flag is not None:
                by_flag.append((v, f"{flag[0]}:{flag[1]}"))
                continue
            if v.variant is not None:
                line = v.variant.line_of("benchmark", "env") or v.variant.line
                problems.append((MSG_ENV_MISSING.format(where=f"{v.variant.path}:{line}", variant=v.variant.selector or v.variant.name,
                                                        env=CHAT_ENV, key=v.config_key),
                                 Evidence(path=v.variant.path, line=line)))
            else:
                path = v.launcher_path or v.point.source_path
                problems.append((MSG_FLAG_MISSING.format(where=path, key=v.config_key, flag=CHAT_FLAG),
                                 Evidence(path=path, line=1 if v.launcher_path else v.point.source_line)))
        problems = dedupe(problems)
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
        if by_flag:
            parts.append(MSG_PASS_FLAG.format(keys=keys_text(v.config_key for v, _ in by_flag), flag=CHAT_FLAG,
                                              where=by_flag[0][1]))
        return CheckResult.passed(MSG_PASS.format(parts="; ".join(parts)), *launch_evidence(views))
