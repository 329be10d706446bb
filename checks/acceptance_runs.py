"""Check 11's reading of an old-layout launcher: the point interpreted as the sweep runs it
(recipes.launch), once for the benchmark run and once for the eval-only run, and the settings its
servers start with (command-line flags, environment, the `--speculative-config` JSON, a TRT-LLM
config file the launch names)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, fields
from typing import Any

import yaml

from checks.result import Evidence
from recipes.launch.path.serving import ServingView
from recipes.launch.compare import NO_SERVER_MARK, opaque
from recipes.launch.point import LAUNCHER_ROOT
from recipes.launch import knobs
from recipes.launch.chars import yaml_fill
from recipes.launch.knobs import Knob
from recipes.launch.state import SYMBOL
from recipes.launch.trace import SERVER, WRITE, show
from recipes.launch.words import Unknown
from recipes.values import flag_name as norm_name
from recipes import engines

MSG_GAP_BUDGET = "the review's interpreter steps were spent before its trace was made"
MSG_GAP_NO_SERVER = "its trace from {runner} stops before any server starts (at {where})"
MSG_GAP_HIDDEN = "its trace from {runner} starts no server the bot can read ({why} at {where})"


# An old-layout launcher (or a runner-chosen chain) is judged by what its servers run: the
# point is interpreted as the sweep runs it (recipes.launch), once for the benchmark run and
# once for the eval-only run, and the servers' command lines and environments are read.
BENCH_RUN = {"EVAL_ONLY": "false", "RUN_EVAL": "false"}
EVAL_RUN = {"EVAL_ONLY": "true", "RUN_EVAL": "true"}
# Where TRT-LLM takes its speculative config from: a YAML file named by one of these flags.
TRT_CONFIG_FLAGS = ("config", "extra-llm-api-options")
MAX_CONFIG_CHARS = 200_000


@dataclass(frozen=True)
class Setting(Knob):
    """One value a traced server carries, as recipes.launch.knobs reads it (an environment
    variable, a flag, or a key of a JSON-valued flag: `parent`), with where it is cited: its
    value is text or the interpreter's Unknown."""

    @classmethod
    def of(cls, knob: Knob) -> "Setting":
        return cls(**{f.name: getattr(knob, f.name) for f in fields(Knob)})

    @property
    def where(self) -> str:
        ev = _site_evidence(self.effect)
        return f"{ev.path}:{ev.line}"

    @property
    def chain(self) -> str:
        return self.effect.where()

    def evidence(self) -> Evidence:
        return _site_evidence(self.effect)


@dataclass
class Served:
    """What one traced server runs, as Check 11 reads it."""

    effect: Any
    settings: list[Knob]  # in force (`knobs.settings_in_force`): what the engine reads of its command line and environment
    method: Any = None
    k: Any = None
    draft: Any = None
    sample: str | None = None
    # Why the command line cannot be read whole (an unknown word, a config file the trace
    # does not hold): a knob or a speculative flag could hide there.
    opaque: str | None = None

    def may_hide(self, names) -> bool:
        """Whether what it cannot read (`opaque`) may hold one of `names`: a word of its command
        line or its config file may hold a flag or a key, never an environment variable."""
        p = engines.profile(self.effect.how)
        env = {norm_name(n) for n in (p.synthetic_env if p is not None else ())}
        return self.opaque is not None and any(norm_name(n) not in env for n in names)

    def knob(self, names, kinds=None) -> Setting | None:
        """The last setting in force named one of `names` (any spelling), of `kinds`."""
        found = knobs.find(self.settings, *names, kinds=kinds)
        return Setting.of(found[-1]) if found else None


def _word(x: Any) -> Any:
    """A parsed value as text (`3`, `2.49`, `true`); the interpreter's Unknown stays as it is."""
    if x is None or isinstance(x, (str, Unknown)):
        return x
    if isinstance(x, bool):
        return str(x).lower()
    return str(x) if isinstance(x, (int, float)) else json.dumps(x)


def _config_file(ctx, e: Any, path: Any, written: set) -> tuple[dict | None, str | None]:
    """A server's YAML config file (TRT-LLM `--config`): one the launch wrote is read from the
    text the trace holds for it (`Effect.wrote`: a here-document with its expansions done), a
    repository file the effect names from the head. Text with a value the bot cannot know is
    not read at all: that value could stand anywhere in the file."""
    if not isinstance(path, str):
        return None, f"its config file is not known ({show(path)})"
    text = dict(e.wrote).get(path)
    if isinstance(text, Unknown):
        # Holes that hold only numbers in a value (`batch_sizes: [$(seq 1 $CONC)]`) leave the
        # rest of the file as written: read with a placeholder there (chars.yaml_fill).
        text = yaml_fill(text, OPEN_VALUE) or text
    if isinstance(text, Unknown):
        # Not read around the unknown part (`words.Holed`): text it could hold (a newline and a
        # key) may change what the rest of the file means.
        return None, f"its config file {path}, which the launch writes, holds a value not known ({text.why})"
    if isinstance(text, str):
        # A value the trace leaves open (the point's concurrency, the user id) is read as a
        # placeholder: a setting that holds one is unknown (`_open_values`), the others are read.
        return _parse_config(SYMBOL_TEXT.sub(OPEN_VALUE, text), path)
    for rel, _ in e.files if path not in written else ():
        if rel and (path == rel or path.endswith("/" + rel)):
            data = ctx.snapshot.head.read(rel)
            if data is None or len(data) > MAX_CONFIG_CHARS:
                break
            return _parse_config(data.decode("utf-8", "replace"), rel)
    return None, f"its config file {path} is written by the launch, and the trace does not hold its text"


# A value of the point's own the trace carries as a symbol (recipes.launch.state.symbol), as it
# is written into a config file's text before that text is parsed.
SYMBOL_TEXT = re.compile(re.escape(SYMBOL) + r"[^\x01]*\x01")
OPEN_VALUE = "__infx_open_value__"
OPEN_WHY = "a value each point has its own of (its concurrency, the user id)"


def _parse_config(text: str, name: str) -> tuple[dict | None, str | None]:
    if len(text) > MAX_CONFIG_CHARS:
        return None, f"its config file {name} is over {MAX_CONFIG_CHARS:,} characters"
    try:
        parsed = yaml.safe_load(text)
    except yaml.YAMLError as err:
        return None, f"its config file {name} is not valid YAML ({str(err).splitlines()[0]})"
    return (parsed if isinstance(parsed, dict) else {}), None


def _served(ctx, e: Any, written: set) -> Served:
    settings, opaque = knobs.settings_in_force(e)
    out = Served(effect=e, settings=settings, opaque=opaque)
    p = engines.profile(e.how)
    fields = p.spec if p is not None else None
    if fields is None:
        return out
    read = knobs.spec_values(settings, fields)  # flags of their own (SGLang, ATOM), a JSON block (vLLM)
    if read is not None:
        cfg, why = read
        if why is not None:
            out.opaque = out.opaque or why
            return out
    else:  # TRT-LLM: a `speculative_config` block of the YAML file the server loads
        flag = knobs.find(settings, *TRT_CONFIG_FLAGS, kinds=(knobs.SERVER_FLAG,))
        if not flag:
            return out
        data, why = _config_file(ctx, e, flag[-1].value, written)
        if data is None:
            out.opaque = out.opaque or why
            return out
        block = data.get(fields.block)
        if OPEN_VALUE in repr(block):
            if not isinstance(block, dict):
                out.opaque = out.opaque or f"its config file's {fields.block} is a value the trace leaves open"
                return out
        cfg = {norm_name(k): (Unknown(OPEN_WHY) if OPEN_VALUE in repr(v) else _word(v))
               for k, v in block.items()} if isinstance(block, dict) else {}
    method = next((cfg[norm_name(m)] for m in fields.method if norm_name(m) in cfg), None)
    out.method = method.lower() if isinstance(method, str) else method
    fields_k = fields.draft_length_by_method.get(out.method if isinstance(out.method, str) else "", fields.draft_length)
    out.k, out.draft = cfg.get(norm_name(fields_k)), cfg.get(norm_name(fields.draft_model))
    sample = cfg.get(norm_name("draft_sample_method")) if fields.block_is_json else None
    out.sample = str(sample) if sample else None
    return out


@dataclass
class Run:
    """The servers of one run of a point, or why they are not known (`gap`: the trace was not
    made, or it stops before a server starts; `gap_effect` where it stops)."""

    servers: list[Served] = field(default_factory=list)
    gap: str | None = None
    gap_effect: Any = None
    trace: Any = None


def _run(ctx, v: ServingView, inputs: dict[str, str], symbolic: bool) -> Run:
    from recipes.launch.path.trace_affected import runners, tracer

    # The job's own variables (TOTAL_CPU_DRAM_GB, DURATION, RESULT_DIR, ...) are the workflow
    # template's (recipes.launch.point.job_env); a run adds only its eval switches.
    pt = tracer(ctx, "head").trace(v.point, runners(ctx, "head", v.point.runner), symbolic=symbolic,
                                   inputs=inputs)
    if pt is None:
        return Run(gap=MSG_GAP_BUDGET)
    out = Run(trace=pt)
    for path, t in pt.runners.items():
        written = {e.shown_path() for e in t.effects if e.kind == WRITE} | {e.path for e in t.effects if e.kind == WRITE}
        servers = [e for e in t.effects if e.kind == SERVER and not e.client and engines.profile(e.how) is not None]
        if not servers:
            runner = path if path != LAUNCHER_ROOT else "its launcher"
            # A command the bot cannot read may be the server (the last one is named); else where
            # the launch stops: its last step inside the image (the runner's cleanup after it is
            # not where a server starts).
            # (the trace's own "ends before any server starts" unknown only when nothing else is).
            hidden = next((e for e in reversed(t.effects) if opaque(e) and NO_SERVER_MARK not in e.detail), None) \
                or next((e for e in reversed(t.effects) if opaque(e)), None)
            inside = [e for e in t.effects if e.container]
            last = inside[-1] if inside else t.effects[-1] if t.effects else None
            if hidden is not None:
                out.gap = MSG_GAP_HIDDEN.format(runner=runner, why=hidden.detail, where=hidden.where())
            else:
                out.gap = MSG_GAP_NO_SERVER.format(runner=runner, where=last.where() if last is not None else path)
            out.gap_effect = hidden or last
            return out
        out.servers.extend(_served(ctx, e, written) for e in servers)
    return out


def _unsettled(run: Run, names, read_whole: bool) -> bool:
    """Whether a concrete trace (the point's own concurrency) could settle what this one leaves
    open that the verdict reads: a word of a server's command line it cannot read counts where
    the method is missing, or where the knob is (or, `read_whole`, is not) and may hide there.
    Servers under undecided branches (or run once per value a branch left) leave it open only when
    they disagree on what is read: the point's values can drop some of them, not change the rest."""
    readings = set()
    for s in run.servers:
        k = s.knob(names)
        hidden = s.opaque and (s.method is None or (s.may_hide(names) and (read_whole or k is None)))
        if hidden or (k is not None and not k.known) or \
                (s.method is not None and not isinstance(s.method, str)) or (s.k is not None and not isinstance(s.k, str)):
            return True
        readings.add((s.method, s.k, None if k is None else (k.name, k.value)))
    return any(s.effect.under for s in run.servers) and len(readings) > 1


def _point_run(ctx, v: ServingView, inputs: dict[str, str], names, read_whole: bool = False) -> Run:
    """One run of the point: traced with its concurrency a symbol (shared by its arm), then with
    its own values when that leaves a speculative value or the knob open (`_unsettled`)."""
    run = _run(ctx, v, inputs, symbolic=True)
    if run.gap is None and _unsettled(run, names, read_whole):
        concrete = _run(ctx, v, inputs, symbolic=False)
        if concrete.gap is None:
            return concrete
    return run


_TEXT_SITE = re.compile(r"^(?P<path>[^\s:]+):(?P<line>\d+) \(")


def _site_evidence(e: Any, *, unavailable: bool = False) -> Evidence:
    """An effect's file and line as evidence, with its chain: shell text a file runs (`bash -c
    "$CMD"`, a recipe's `benchmark.command`) cites the file's line that runs it."""
    path, line = e.site.path, e.site.line
    m = _TEXT_SITE.match(path)
    if m:
        path, line = m["path"], int(m["line"])
    return Evidence(path=path, line=line, note=e.where(), unavailable=unavailable)
