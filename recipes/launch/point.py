"""The trace of one benchmark point: the sweep's job, interpreted from the runner down.

The sweep's job (InferenceX `benchmark-tmpl.yml` / `benchmark-multinode-tmpl.yml`) exports the
point's values and runs `bash ./runners/launch_${RUNNER_NAME%%_*}.sh` from the checkout. The
runner allocates nodes, starts a container (`srun --container-image`, `docker run`) or submits
an srt-slurm recipe (`srtctl apply -f`), and the launcher script it picks starts the server and
the benchmark client. `trace_point` interprets exactly that, one trace per runner script the
point's label can land on, with the engine server and the benchmark client named
(`classify`), and `srtctl` modelled from the recipe variant the point binds to.

Traces are shared: a trace depends on the point's values only through the variables it read
(`Interpreter.read`) and the recipe variant a hook read, so `Tracer` keeps one trace per
(runner, values read) and hands it to every point that gives those variables the same values.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Optional

from .fs import WORKSPACE, Files
from .shell import Interpreter
from .state import Ctx, State, symbol
from .trace import CLIENT, READ, SERVER, Effect, Site, Trace
from .words import Word

# What the job exports that no point field gives: fixed, so that traces compare and share.
JOB_CONSTANTS = {
    "GITHUB_WORKSPACE": WORKSPACE, "HF_TOKEN": "<secret HF_TOKEN>", "HF_HUB_CACHE": "/mnt/hf_hub_cache/",
    "RANDOM_RANGE_RATIO": "0.8", "GITHUB_ACTIONS": "true", "CI": "true", "HOME": "/home/runner",
    "USER": "runner", "PATH": "/usr/local/bin:/usr/bin:/bin", "SHELL": "/bin/bash",
}
_PY_OPTS_WITH_VALUE = {"-W", "-X", "-Q"}
# How a trace names where it starts: the sweep's job step, or (without a runner script) the
# runner that starts the launcher.
JOB_LABEL = "sweep job"
RUNNER_LABEL = "runner"
# The root of a point traced without a runner script: its launcher, started as a runner would.
LAUNCHER_ROOT = "<launcher>"


def launcher_command(point: Any) -> Optional[str]:
    """How a runner starts the point's launcher: `bash SCRIPT` or `srtctl apply -f RECIPE`."""
    launcher = getattr(point, "launcher", None)
    if launcher is None:
        return None
    if launcher.kind == "script":
        return f"bash ./{launcher.path}\n"
    return f"srtctl apply -f ./{launcher.path}\n"


def job_env(point: Any, node: str) -> dict[str, str]:
    """The variables the sweep's job exports before it runs the runner (benchmark-tmpl.yml).
    `RUN_EVAL`/`EVAL_ONLY` are left unset: a point is run both ways, so both arms are traced."""
    from recipes.launch.env import point_env

    env = dict(JOB_CONSTANTS)
    env.update(point_env(point))
    fields = {
        "MODEL": point.model, "MODEL_PREFIX": point.model_prefix, "IMAGE": point.image, "FRAMEWORK": point.framework,
        "PRECISION": point.precision, "TP": point.tp, "PP_SIZE": point.pp, "DCP_SIZE": point.dcp_size,
        "PCP_SIZE": point.pcp_size, "EP_SIZE": point.ep, "DP_ATTENTION": str(point.dp_attn).lower(),
        "CONC": point.conc, "ISL": point.isl, "OSL": point.osl, "SPEC_DECODING": point.spec_decoding,
        "DISAGG": str(point.disagg).lower(), "KV_OFFLOADING": point.kv_offloading,
        "KV_OFFLOAD_BACKEND": point.kv_offload_backend,
        "SCENARIO_TYPE": "agentic-coding" if point.is_agentic else "fixed-seq-len",
        "RUNNER_TYPE": point.runner, "RUNNER_NAME": f"{node}_0",
    }
    for k, v in fields.items():
        if v is not None:
            env[k] = str(v)
    if point.conc_list:
        env["CONC_LIST"] = " ".join(str(c) for c in point.conc_list)
    if point.tp:
        env["GPU_COUNT"] = str(point.tp * point.pp * point.pcp_size)
    env["RESULT_FILENAME"] = f"{env.get('EXP_NAME', 'exp')}_{point.precision}_{point.framework}_result"
    return env


def classify(argv: tuple[Word, ...], it: Interpreter, state: State, ctx: Ctx,
             client_paths: tuple[str, ...] = ("utils/",)) -> Optional[tuple[str, str]]:
    """(SERVER, engine) for an engine's server, (CLIENT, what) for the benchmark client."""
    from recipes import engines

    words = [w for w in argv]
    head = words[0] if words else None
    if not isinstance(head, str):
        return None
    base = posixpath.basename(head)
    rest = words[1:]
    if re.fullmatch(r"python(\d+(\.\d+)?)?", base):
        i = 0
        while i < len(rest) and isinstance(rest[i], str) and rest[i].startswith("-") and rest[i] not in ("-m", "-c"):
            i += 2 if rest[i] in _PY_OPTS_WITH_VALUE else 1
        if i < len(rest) and rest[i] == "-m" and i + 1 < len(rest) and isinstance(rest[i + 1], str):
            module = rest[i + 1]
            engine = engines.launch_modules().get(module)
            if engine:
                return SERVER, engine
            if module in _CLIENT_MODULES or module.split(".")[0] in _CLIENT_MODULES:
                return CLIENT, module
            return None
        if i < len(rest) and isinstance(rest[i], str) and rest[i].endswith(".py"):
            host = it.host_path(rest[i], state)
            rel = it.files.repo_path(host) if isinstance(host, str) else None
            if rel and any(rel.startswith(p) or f"/{p}" in f"/{rel}" for p in client_paths):
                return CLIENT, rel
        return None
    sub = rest[0] if rest and isinstance(rest[0], str) else None
    if sub is not None and (base, sub) in engines.launch_subcommands():
        return SERVER, engines.launch_subcommands()[(base, sub)]
    if base in engines.launch_executables():
        return SERVER, engines.launch_executables()[base]
    if base in _CLIENT_PROGRAMS or (sub is not None and (base, sub) in _CLIENT_SUBCOMMANDS):
        return CLIENT, base if sub is None else f"{base} {sub}"
    return None


# The benchmark clients and eval harnesses: what they run measures, it does not serve.
_CLIENT_MODULES = frozenset({"lm_eval", "aiperf", "genai_perf", "sglang.bench_serving", "sglang.bench_one_batch_server",
                             "vllm.benchmarks.serve", "evalscope", "lighteval", "swebench"})
_CLIENT_PROGRAMS = frozenset({"lm_eval", "lm-eval", "aiperf", "genai-perf", "evalscope", "sa-bench", "guidellm"})
_CLIENT_SUBCOMMANDS = frozenset({("vllm", "bench"), ("sglang", "bench"), ("trtllm-bench", "serve")})


@dataclass
class PointTrace:
    """A point's trace at one tree: one `Trace` per runner script its label can run on."""

    runners: dict[str, Trace] = field(default_factory=dict)
    symbolic: bool = True  # the point's concurrency is a symbol in it (shared by its arm)
    # The repository files the launch depends on (`Files.depends`: every file read, sourced or
    # run, each path found absent, the recipe and setup script the hook read) and the runner
    # scripts: a PR that changes none of them cannot change this trace.
    files: set[str] = field(default_factory=set)

    def effects(self) -> list[Effect]:
        return [e for t in self.runners.values() for e in t.effects]

    def serving_effects(self) -> list[Effect]:
        """The effects that decide what is served (recipes.launch.compare.serving_part)."""
        from .compare import serving_part

        return serving_part(self.effects())

    def before_serving(self) -> list[Effect]:
        """The effects up to the last server each runner's launch starts (all of them when it
        starts none): what can change the code a server runs. After that come the client, the
        evals and the cleanup."""
        out: list[Effect] = []
        for t in self.runners.values():
            last = max((i for i, e in enumerate(t.effects) if e.kind == SERVER), default=len(t.effects) - 1)
            out += t.effects[:last + 1]
        return out


# The point's values that differ between the points of one arm and that launch scripts pass
# along rather than decide on: traced as symbols (recipes.launch.state.SYMBOL).
SYMBOLIC = ("CONC", "CONC_LIST", "RESULT_FILENAME")


@dataclass
class _Cached:
    read: dict[str, Optional[str]]  # name -> the value it had (None: not set)
    deps: tuple
    trace: Trace


# What starting one interpretation costs, in interpreter steps (its files, its parse lookups):
# measured on the InferenceX history, a run of few steps costs about 200 steps' time.
RUN_COST = 200


class Budget:
    """Interpreter steps a review may spend, shared by its tracers (steps, not seconds: the same
    review decides the same on any machine). Spent, a trace that is not already made is not
    made (`Tracer.trace` answers None): the caller falls back to what it decided without traces,
    never to a pass."""

    def __init__(self, steps: int):
        self.steps = steps
        self.spent = 0

    @property
    def exhausted(self) -> bool:
        return self.spent >= self.steps


class Tracer:
    """Traces points at one tree, sharing a trace between points that read the same values.

    `hooks` model commands of the runner's own tooling (see `srt_hook`): each is called as
    `hook(interpreter, argv, state, ctx, node)` with the point in `interpreter.point`."""

    def __init__(self, src: Any, *, vocabulary: Callable[..., Any] | None = None,
                 hooks: dict[str, Callable[..., Optional[int]]] | None = None,
                 client_paths: tuple[str, ...] = ("utils/",),
                 point_deps: Callable[[Any], tuple] | None = None,
                 mounts: tuple[str, ...] = ("/workspace",), budget: Budget | None = None):
        self.src = src
        self.mounts = mounts
        self.budget = budget
        self.vocabulary = vocabulary
        self.hooks = hooks or {}
        self.client_paths = client_paths
        self.point_deps = point_deps or (lambda point: ())
        self._cache: dict[str, list[_Cached]] = {}
        self._files: dict[int, frozenset[str]] = {}  # id(trace) -> the files it depends on
        self.runs = 0   # traces interpreted (the rest were shared)

    def trace(self, point: Any, runner_paths: Iterable[str], *, symbolic: bool = True) -> Optional[PointTrace]:
        """The point's trace from each runner script; with none (a repository without
        runners.yaml, a label no node serves) from its launcher, as a runner would start it.
        None when the review's budget is spent and a trace it needs is not made yet."""
        out = PointTrace(symbolic=symbolic)
        runner_paths = list(runner_paths) or [LAUNCHER_ROOT]
        for path in runner_paths:
            node = posixpath.basename(path).removeprefix("launch_").removesuffix(".sh")
            trace = self.runner_trace(point, path, node, symbolic)
            if trace is None:
                return None
            out.runners[path] = trace
            out.files |= self._files.get(id(trace), frozenset())
            if path != LAUNCHER_ROOT:
                out.files.add(path)
        return out

    def files(self, trace: Trace) -> frozenset[str]:
        """The repository files one runner's trace depends on (`Files.depends`)."""
        return self._files.get(id(trace), frozenset())

    def runner_trace(self, point: Any, path: str, node: str, symbolic: bool = True) -> Optional[Trace]:
        env = job_env(point, node)
        if symbolic:
            env.update({k: symbol(k) for k in SYMBOLIC if k in env})
        deps = self.point_deps(point)
        for cached in self._cache.get(path, ()):
            if cached.deps == deps and all(env.get(k) == v for k, v in cached.read.items()):
                return cached.trace
        if self.budget is not None and self.budget.exhausted:
            return None
        trace, read, steps, files = self._interpret(point, path, env)
        self._files[id(trace)] = files
        if self.budget is not None:
            self.budget.spent += steps + RUN_COST
        self._cache.setdefault(path, []).append(_Cached({k: env.get(k) for k in read}, deps, trace))
        return trace

    def _interpret(self, point: Any, path: str, env: dict[str, str]) -> tuple[Trace, set[str], int, frozenset[str]]:
        self.runs += 1
        files = Files(self.src)
        it = Interpreter(files, vocabulary=self.vocabulary, inputs=env, hooks=self.hooks,
                         classify=lambda argv, i, s, c: classify(argv, i, s, c, self.client_paths))
        it.point = point  # type: ignore[attr-defined]
        state = it.initial_state()
        state.cwd = WORKSPACE
        site = Site(JOB_LABEL, 1)
        if path == LAUNCHER_ROOT:
            text = launcher_command(point)
            if text is None:
                return it.trace, set(), 0, frozenset()
            state.argv0 = "bash"
            launcher = getattr(point, "launcher", None)
            if launcher is not None and launcher.kind == "script":
                # A runner starts a launcher script inside the point's image with the checkout
                # mounted (`srun --container-image ... --container-mounts=$GITHUB_WORKSPACE:/workspace`).
                state.container = getattr(point, "image", None) or "<the point's image>"
                state.mounts = tuple((m.rstrip("/") or "/", WORKSPACE) for m in self.mounts)
                state.cwd = (self.mounts[0].rstrip("/") or "/") if self.mounts else WORKSPACE
            ctx = Ctx(path=site.path, src=b"")
            it.run_top(text, RUNNER_LABEL, state, ctx)
        else:
            host = f"{WORKSPACE}/{path}"
            state.argv0 = host
            ctx = Ctx(path=site.path, src=b"")
            text = files.read(host)
            if text is None:
                it.unknown(ctx, site, state, f"the runner script {path} is not in the repository")
            else:
                it.run_top(text, path, state, ctx.deeper(site, f"bash {path}"))
        return it.trace, set(it.read), it.steps, files.depends()

def is_client_install(effect: Effect, client_packages: Iterable[str]) -> bool:
    """An install of the benchmark client's or eval tooling's packages only."""
    from recipes.scripts import package_name

    if effect.kind != "install":
        return False
    names = [package_name(w) for w in effect.argv if isinstance(w, str) and not w.startswith("-")]
    wanted = {n.lower().replace("_", "-") for n in client_packages}
    return bool(names) and all(n.lower().replace("_", "-") in wanted for n in names)


# ---------------------------------------------------------------------------- srt-slurm

MAX_RECIPE_ITEMS = 5_000
# How a file of another repository is cited (`owner/name@sha:path`, checks.result.split_external).
_EXTERNAL = re.compile(r"[^/\s]+/[^/@\s]+@[^:\s]+:")
SRT_CLIENT_KEY = "benchmark"
SRT_SETUP_KEY = "setup_script"


def recipe_items(data: Any, prefix: str = "", out: list[str] | None = None) -> list[str]:
    """A recipe's values as `a.b.c=value` lines, in the recipe's own order (capped)."""
    out = [] if out is None else out
    if len(out) > MAX_RECIPE_ITEMS:
        return out
    if isinstance(data, dict):
        for k, v in data.items():
            recipe_items(v, f"{prefix}.{k}" if prefix else str(k), out)
    elif isinstance(data, list):
        for i, v in enumerate(data):
            recipe_items(v, f"{prefix}[{i}]", out)
    else:
        out.append(f"{prefix}={data!r}")
    return out


def srt_hook(variant_for: Callable[[Any], Any], setup_text: Callable[[Any, Any, str], Optional[tuple[str, str]]]):
    """`srtctl apply -f RECIPE`: what srt-slurm runs for the point's bound recipe variant.

    The recipe's values (all but its `benchmark` block) are the servers' configuration: one
    SERVER effect at the recipe's line carries them, so a changed value is a changed serving
    trace. Its `setup_script` runs inside the recipe's container before the servers (it is
    interpreted like any script); its `benchmark` block is the client (CLIENT effect), and a
    `benchmark.command` is interpreted as client code."""

    def hook(it: Interpreter, argv: list[Word], state: State, ctx: Ctx, node: Any) -> Optional[int]:
        sub = argv[1] if len(argv) > 1 else None
        if sub not in ("apply", "submit", "dry-run", "run"):
            return 0  # `srtctl --help`, `srtctl version`, ...: no job
        point = getattr(it, "point", None)
        variant = variant_for(point) if point is not None else None
        if variant is None:
            it.unknown(ctx, node, state, "srtctl runs a recipe the bot cannot bind to this point")
            return None
        data = variant.data if isinstance(variant.data, dict) else {}
        site = Site(variant.path, variant.line or 1)
        if not _EXTERNAL.match(variant.path):  # a recipe of the srt-slurm checkout is not this repository's
            it.files.note(variant.path)
        it.emit(READ, ctx, node, state, path=f"{WORKSPACE}/{variant.path}", how="recipe")
        model = data.get("model") if isinstance(data.get("model"), dict) else {}
        image = str(model.get("container", "")) if model else ""
        serving = {k: v for k, v in data.items() if k != SRT_CLIENT_KEY}
        backend = data.get("backend", {}).get("type") if isinstance(data.get("backend"), dict) else None
        refs = data.get(SRT_SETUP_KEY)
        for ref in ([refs] if isinstance(refs, str) else refs if isinstance(refs, list) else []):
            found = setup_text(point, variant, str(ref))
            if found is None:
                it.unknown(ctx, site, state, f"the recipe's setup_script {ref} is not in the repository "
                                             "nor the srt-slurm checkout given")
                continue
            path, text = found
            if not _EXTERNAL.match(path):
                it.files.note(path)
            child = state.child()
            child.container, child.cwd, child.mounts = image or "<the recipe's container>", "/", ()
            it.run_script(text, path, child, ctx.deeper(site, f"setup_script {ref}"))
        # The servers start after the setup script, with the recipe's values.
        it.emit(SERVER, ctx, site, state, argv=tuple(recipe_items(serving)),
                how=f"srt-slurm recipe{f' ({backend})' if backend else ''}", path=variant.path)
        bench = data.get(SRT_CLIENT_KEY)
        if isinstance(bench, dict):
            bsite = Site(variant.path, variant.line_of(SRT_CLIENT_KEY) or site.line)
            it.emit(CLIENT, ctx, bsite, state, argv=tuple(recipe_items(bench)), how="srt-slurm benchmark",
                    client=True)
            command = bench.get("command")
            if isinstance(command, str) and command.strip():
                child = state.child()
                child.container = image
                it.run_script(command, f"{variant.path}:{bsite.line} (benchmark.command)", child,
                              replace(ctx.deeper(bsite, "benchmark.command"), client=True))
        return None

    return hook
