"""Values a runner-chosen chain's scripts compute for one point (recipes.launch.path.runner_launch), where
the static reading of each script (recipes.bash) gives one value for every point or none.

AMD's disaggregated SGLang server script builds each role's flags in a function and keeps what
it prints, and picks the simulated acceptance length by the draft length:

    build_server_config() {
        local decode_mtp_size="$6"
        if [ "$decode_mtp_size" -gt 0 ]; then
            mtp_config="${MODEL_MTP_FLAGS} --speculative-num-steps ${decode_mtp_size} ..."
        fi
        ...
        echo "$full_config"
    }
    DECODE_SERVER_CONFIG=$(build_server_config "decode" ... "$DECODE_MTP_SIZE")
    ...
    case "${MODEL_NAME}:${DECODE_MTP_SIZE}" in
        *DeepSeek-V4*:1) DSV4_GOLDEN_AL=1.79 ;;
        *DeepSeek-V4*:3) DSV4_GOLDEN_AL=2.49 ;;
    esac
    DECODE_SIM_ACC_ENV="SGLANG_SIMULATE_ACC_LEN=${DSV4_GOLDEN_AL} ..."

The static walk reads a function's body once, where `$6` is nobody's value, and substitutes a
variable's last assignment whatever branch it is on. Here the texts are read in the chain's
scope for the point (recipes.launch.path.shell_scope, with `Scope.call` for a function's parameters, and
`recipes.launch.path.branch_words.read_for_point`): the flag a function writes takes the value of each
top-level call. A value the bot cannot know stays None, never a guess. (Check 11 reads the
point's interpreted trace instead; this reading remains for Check 15's record and the
script fallback of a point the review's step budget leaves untraced.)
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from recipes.launch.path.branch_words import read_for_point
from recipes.launch.path.runner_launch import runner_chain
from recipes.launch.path.shell_scope import Scope, Stop, try_expand
from recipes import engines
from recipes.scripts import eval_branch, flag_words
from recipes.values import as_int


# (call, flag) pairs one text is read for; a real server script has two (prefill and decode).
MAX_READS = 64


@dataclass(frozen=True)
class FlagRead:
    """One value for the point (None: not known), the file and line that write it, and the line
    of the call that runs it (the same line for a top-level assignment)."""

    value: str | None
    path: str
    line: int | None
    call_line: int | None


def _flag_value(text: str, flag: str) -> str | None:
    """The word `flag` takes in a flag string as written (`... --speculative-num-steps ${k} ...`),
    read as the server's option parser reads a command (recipes.scripts.flag_words)."""
    return next((value for _, name, value in flag_words(text.split()) if name == flag and value), None)


def function_flag(scope: Scope, flag: str) -> list[FlagRead]:
    """The values `flag` (`--speculative-num-steps`) takes in the top-level calls of the
    functions of this text that write it into a value, for the point the scope reads. A call
    whose branch does not run, or on which the function's branch around the flag does not hold,
    gives nothing; one the bot cannot decide gives None. Past MAX_READS (call, flag) pairs
    the text is not read further: one unknown value stands for the rest."""
    if scope.function is not None or not scope.analysis.functions:
        return []
    a = scope.analysis
    out: list[FlagRead] = []
    budget = MAX_READS
    for _, loc, _ in a.assignments:
        if loc.function is None or flag not in (loc.value or ""):
            continue
        word = _flag_value(loc.value, flag)
        if word is None:
            continue
        calls = [c for c in a.commands if c.function is None and c.argv and c.argv[0] == loc.function]
        for call in calls:
            budget -= 1
            if budget < 0:
                out.append(FlagRead(value=None, path=scope.path, line=loc.line, call_line=call.line))
                return out
            runs = _holds(scope, call.condition, call.line)
            if runs is False:
                continue
            inner = scope.call(loc.function, list(call.argv[1:]), call.line)
            written = _holds(inner, loc.condition, loc.line)
            if written is False:
                continue
            value = try_expand(inner, word, loc.line) if written and runs else None
            out.append(FlagRead(value=value, path=scope.path, line=loc.line, call_line=call.line))
    return out


def _holds(scope: Scope, condition: str | None, line: int) -> bool | None:
    try:
        return scope.holds(condition, line)
    except Stop:
        return None


def chain_flag(ctx: Any, chain: Any, point: Any, flag: str) -> list[FlagRead]:
    """`function_flag` over every text of a runner-chosen chain (recipes.launch.path.runner_launch), read with
    this point's values; each (file, line, call) once."""
    if chain is None or chain.root is None or not any(sc.analysis.functions for sc in chain.scopes):
        return []

    def read() -> list[FlagRead]:
        found: dict[tuple[str, int, int], FlagRead] = {}
        for sc in chain.scopes:
            for r in function_flag(sc, flag):
                found.setdefault((r.path, r.line, r.call_line), r)
        return list(found.values())

    return read_for_point(ctx, chain, point, chain.flag_sets.setdefault(flag, []), read, [])


@dataclass(frozen=True)
class ChainSpec:
    """The speculative method and draft length a runner-chosen chain serves a point with, from
    the engine's flat flags (SGLang's `--speculative-algorithm`, `--speculative-num-steps`):
    the method wherever the chain's texts set it (a models file's entry included), the draft
    length from the function that writes it, read with the point's values, else from the
    server command that writes it."""

    method: str | None = None
    method_evidence: tuple[str, int | None] | None = None
    draft_length: int | None = None
    draft_reads: tuple[FlagRead, ...] = ()


def chain_spec(ctx: Any, view: Any) -> ChainSpec:
    """`ChainSpec` of a serving view with no launcher file and no recipe variant; empty for an
    engine whose speculative settings are one JSON or YAML block (vLLM, TRT-LLM)."""
    profile = engines.profile(view.engine)
    spec = profile.spec if profile is not None else None
    if spec is None or spec.block is not None or view.launcher_path is not None or view.variant is not None:
        return ChainSpec()
    hits = [h for h in view.hits(*spec.method, kinds=("script-flag",)) if eval_branch(h.condition) is not True]
    if not hits or not str(hits[-1].value).strip():
        return ChainSpec()
    method = str(hits[-1].value).strip().lower()
    flag = "--" + spec.draft_length_by_method.get(method, spec.draft_length)
    reads = tuple(chain_flag(ctx, runner_chain(ctx, view.point), view.point, flag))
    if not reads:
        # Written where the static reading sees it (the server command itself).
        reads = tuple(FlagRead(value=str(h.value), path=h.path, line=h.line, call_line=h.line)
                      for h in view.hits(flag.lstrip("-"), kinds=("script-flag",))
                      if eval_branch(h.condition) is not True)
    values = {r.value for r in reads}
    k = as_int(next(iter(values))) if len(values) == 1 and None not in values else None
    return ChainSpec(method=method, method_evidence=(hits[-1].path, hits[-1].line), draft_length=k, draft_reads=reads)
