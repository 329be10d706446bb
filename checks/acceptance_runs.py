"""Check 11's reading of an old-layout launcher: the point interpreted as the sweep runs it
(recipes.launch), once for the benchmark run and once for the eval-only run, and the settings its
servers start with (command-line flags, environment, the `--speculative-config` JSON, a TRT-LLM
config file the launch names)."""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from checks.result import Evidence
from recipes.launch.path.serving import ServingView
from recipes.launch.compare import NO_SERVER_MARK, opaque
from recipes.launch.point import LAUNCHER_ROOT
from recipes.launch.knobs import json_object
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
class Setting:
    """One value a traced server carries: an environment variable, a flag, or a key of a JSON
    flag (`parent`); `value` is text or the interpreter's Unknown."""

    name: str
    value: Any
    effect: Any
    parent: str | None = None

    @property
    def known(self) -> bool:
        return isinstance(self.value, str)

    @property
    def where(self) -> str:
        ev = _site_evidence(self.effect)
        return f"{ev.path}:{ev.line}"

    @property
    def chain(self) -> str:
        return self.effect.where()

    @property
    def shown(self) -> str:
        inner = f"{self.parent} {self.name}" if self.parent else self.name
        return f"{inner}={show(self.value)}"

    @property
    def kind(self) -> str:
        return "trace"

    def evidence(self, note: str | None = None) -> Evidence:
        return _site_evidence(self.effect)


@dataclass
class Served:
    """What one traced server runs, as Check 11 reads it."""

    effect: Any
    settings: dict[str, Setting]  # norm_name -> the last setting of that name (argparse: last wins)
    method: Any = None
    k: Any = None
    draft: Any = None
    sample: str | None = None
    # Why the command line cannot be read whole (an unknown word, a config file the trace
    # does not hold): a knob or a speculative flag could hide there.
    opaque: str | None = None

    def knob(self, names) -> Setting | None:
        found = [self.settings[norm_name(n)] for n in names if norm_name(n) in self.settings]
        return found[-1] if found else None


def _word(x: Any) -> Any:
    """A parsed value as text (`3`, `2.49`, `true`); the interpreter's Unknown stays as it is."""
    if x is None or isinstance(x, (str, Unknown)):
        return x
    if isinstance(x, bool):
        return str(x).lower()
    return str(x) if isinstance(x, (int, float)) else json.dumps(x)


def _settings(e: Any) -> tuple[dict[str, Setting], str | None]:
    """A server's environment, flags and JSON-flag keys; and the first word it cannot read."""
    out: dict[str, Setting] = {}
    opaque = None
    for name, value in e.env:
        out[norm_name(name)] = Setting(name, value, e)
    words = list(e.argv)
    i = 0
    while i < len(words):
        w = words[i]
        i += 1
        if not isinstance(w, str):
            opaque = opaque or f"a word of its command line is not known ({w.why})"
            continue
        if not w.startswith("--") or len(w) == 2:
            continue
        name, eq, value = w[2:].partition("=")
        if not eq:
            nxt = words[i] if i < len(words) else None
            if nxt is not None and not (isinstance(nxt, str) and nxt.startswith("-")):
                value, i = nxt, i + 1
            else:
                value = "true"
        out[norm_name(name)] = Setting(name, value, e)
        obj = json_object(value)
        for key, inner in (obj or {}).items():
            out[norm_name(key)] = Setting(str(key), _word(inner), e, parent=name)
    return out, opaque


def _config_file(ctx, e: Any, path: Any, written: set) -> tuple[dict | None, str | None]:
    """A server's YAML config file (TRT-LLM `--config`): a repository file the effect names is
    read at the head; one the launch writes is not held by the trace."""
    if not isinstance(path, str):
        return None, f"its config file is not known ({show(path)})"
    for rel, _ in e.files if path not in written else ():
        if rel and (path == rel or path.endswith("/" + rel)):
            data = ctx.snapshot.head.read(rel)
            if data is None or len(data) > MAX_CONFIG_CHARS:
                break
            try:
                parsed = yaml.safe_load(data.decode("utf-8", "replace"))
            except yaml.YAMLError as err:
                return None, f"its config file {rel} is not valid YAML ({str(err).splitlines()[0]})"
            return (parsed if isinstance(parsed, dict) else {}), None
    return None, f"its config file {path} is written by the launch, and the trace does not hold its text"


def _served(ctx, e: Any, written: set) -> Served:
    settings, opaque = _settings(e)
    out = Served(effect=e, settings=settings, opaque=opaque)
    p = engines.profile(e.how)
    fields = p.spec if p is not None else None
    if fields is None:
        return out
    if fields.block is not None:
        if fields.block_is_json:
            raw = settings.get(norm_name(fields.block))
            cfg = json_object(raw.value) if raw is not None else {}
            if raw is not None and cfg is None:
                out.opaque = out.opaque or f"--{fields.block} is not a JSON object ({raw.shown})"
                return out
            cfg = {k: v for k, v in (cfg or {}).items()}
            out.sample = str(cfg["draft_sample_method"]) if cfg.get("draft_sample_method") else None
        else:  # TRT-LLM: a `speculative_config` block of the YAML file the server loads
            flag = next((settings[norm_name(f)] for f in TRT_CONFIG_FLAGS if norm_name(f) in settings), None)
            if flag is None:
                return out
            data, why = _config_file(ctx, e, flag.value, written)
            if data is None:
                out.opaque = out.opaque or why
                return out
            block = data.get(fields.block)
            cfg = block if isinstance(block, dict) else {}
        method = _word(cfg.get(fields.method[0]))
    else:
        cfg = {k: s.value for k, s in settings.items()}
        method = next((cfg[norm_name(m)] for m in fields.method if norm_name(m) in cfg), None)
        fields_k = fields.draft_length_by_method.get(str(method).lower() if isinstance(method, str) else "",
                                                     fields.draft_length)
        out.method = method.lower() if isinstance(method, str) else method
        out.k = cfg.get(norm_name(fields_k))
        out.draft = cfg.get(norm_name(fields.draft_model))
        return out
    out.method = method.lower() if isinstance(method, str) else method
    fields_k = fields.draft_length_by_method.get(out.method if isinstance(out.method, str) else "", fields.draft_length)
    out.k, out.draft = _word(cfg.get(fields_k)), _word(cfg.get(fields.draft_model))
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
    run_inputs = dict(inputs)
    pt = tracer(ctx, "head").trace(v.point, runners(ctx, "head", v.point.runner), symbolic=symbolic,
                                   inputs=run_inputs)
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


def _unsettled(run: Run, knobs) -> bool:
    """Whether a concrete trace (the point's own concurrency) could settle what this one leaves open.
    Servers under undecided branches (or run once per value a branch left) leave it open only when
    they disagree on what is read: the point's values can drop some of them, not change the rest."""
    readings = set()
    for s in run.servers:
        k = s.knob(knobs)
        if s.opaque or (k is not None and not k.known) or \
                (s.method is not None and not isinstance(s.method, str)) or (s.k is not None and not isinstance(s.k, str)):
            return True
        readings.add((s.method, s.k, None if k is None else (k.name, k.value)))
    return any(s.effect.under for s in run.servers) and len(readings) > 1


def _point_run(ctx, v: ServingView, inputs: dict[str, str], knobs) -> Run:
    """One run of the point: traced with its concurrency a symbol (shared by its arm), then with
    its own values when that leaves a speculative value or the knob open."""
    run = _run(ctx, v, inputs, symbolic=True)
    if run.gap is None and _unsettled(run, knobs):
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
