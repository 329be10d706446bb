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

import functools
import posixpath
import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Optional

from recipes import engines

from .fs import WORKSPACE, Files
from .knobs import python_options_end
from .shell import Interpreter
from .state import Ctx, State, symbol
from .trace import CLIENT, READ, SERVER, Effect, Site, Trace
from .words import Unknown, Word

# What the job exports that no point field gives: fixed, so that traces compare and share.
JOB_CONSTANTS = {
    "GITHUB_WORKSPACE": WORKSPACE, "HF_TOKEN": "<secret:HF_TOKEN>", "HF_HUB_CACHE": "/mnt/hf_hub_cache/",
    "RANDOM_RANGE_RATIO": "0.8", "GITHUB_ACTIONS": "true", "CI": "true", "HOME": "/home/runner",
    "USER": "runner", "PATH": "/usr/local/bin:/usr/bin:/bin", "SHELL": "/bin/bash",
    "RESULT_DIR": "/workspace/results",
}
# Inputs the sweep's job sets for an agentic point from values the bot does not model (the
# workflow's `total-cpu-dram-gb`, `duration`): set, with a value the trace carries as a symbol,
# so that a launcher's `check_env_vars` does not read them as missing and end the trace.
AGENTIC_INPUTS = ("TOTAL_CPU_DRAM_GB", "DURATION")
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


# What the workflow templates (`benchmark-tmpl.yml`, `benchmark-multinode-tmpl.yml`) export as
# fixed text, beside the point's values.
_TEMPLATE_CONSTANTS = {
    "AIPERF_FAILED_REQUEST_THRESHOLD": "0.10", "RESULT_DIR": "/workspace/results", "PYTHONDONTWRITEBYTECODE": "1",
    "PYTHONPYCACHEPREFIX": "/tmp/inferencex-pycache", "SWEBENCH_USE_MODAL": "true",
    "MODAL_TOKEN_ID": "<secret:MODAL_TOKEN_ID>", "MODAL_TOKEN_SECRET": "<secret:MODAL_TOKEN_SECRET>",
}
# What they export from a sweep input no point field gives (the sweep's generator, the run's
# options): set, with a value the bot does not know, so a test on one is undecided.
_UNKNOWN_INPUTS = {
    "RECIPE_FINGERPRINT": "recipe-fingerprint", "MAX_MODEL_LEN": "max-model-len", "RUN_EVAL": "run-eval",
    "EVAL_ONLY": "eval-only", "KV_OFFLOAD_BACKEND_METADATA": "kv-offload-backend-metadata",
    "ROUTER_METADATA": "router", "KV_P2P_TRANSFER": "kv-p2p-transfer", "TOTAL_CPU_DRAM_GB": "total-cpu-dram-gb",
    "DURATION": "duration", "REQUIRE_POWER": "require-power", "AIPERF_EXPERIMENTAL_FAST": "agentx-fast",
    "EVAL_LIMIT": "eval-limit", "SWEBENCH_GEN_MODE": "swebench-gen-mode",
}
_UNKNOWN_MULTINODE_INPUTS = {
    "PREFILL_HARDWARE": "prefill-hardware", "DECODE_HARDWARE": "decode-hardware", "EVAL_CONC": "eval-conc",
    "POWER_PRODUCER_SHA": "power-producer-sha",
}
# The multi-node template's per-role variables: name suffix -> the key of the point's role block.
_ROLE_FIELDS = {"NUM_WORKERS": "num-worker", "TP": "tp", "PP_SIZE": "pp", "DCP_SIZE": "dcp-size",
                "PCP_SIZE": "pcp-size", "EP": "ep", "DP_ATTN": "dp-attn"}
# The single-node template's topology variables (the multi-node one exports per-role ones).
_SINGLE_NODE_ONLY = ("TP", "PP_SIZE", "DCP_SIZE", "PCP_SIZE", "EP_SIZE", "DP_ATTENTION", "GPU_COUNT")


# The workflow templates, by the kind of point they run; their `env:` block is what the job
# exports at that tree (it changed over the history: `SCENARIO_SUBDIR` was `''` for fixed-length
# points before June 2026, `fixed_seq_len/` after).
TEMPLATES = {False: ".github/workflows/benchmark-tmpl.yml", True: ".github/workflows/benchmark-multinode-tmpl.yml"}
MAX_TEMPLATE_BYTES = 200_000
# Every name the templates' `env:` blocks have set: one a tree's template does not set is not
# exported at that tree.
_TEMPLATE_NAMES = frozenset({
    *_TEMPLATE_CONSTANTS, *_UNKNOWN_INPUTS, *_UNKNOWN_MULTINODE_INPUTS, "RANDOM_RANGE_RATIO", "HF_TOKEN",
    "HF_HUB_CACHE", "EXP_NAME", "MODEL", "MODEL_PREFIX", "ISL", "OSL", "IMAGE", "FRAMEWORK", "PRECISION", "TP",
    "PP_SIZE", "DCP_SIZE", "PCP_SIZE", "EP_SIZE", "DP_ATTENTION", "CONC", "CONC_LIST", "SPEC_DECODING", "DISAGG",
    "SCENARIO_TYPE", "SCENARIO_SUBDIR", "IS_AGENTIC", "KV_OFFLOADING", "KV_OFFLOAD_BACKEND", "SALLOC_EXCLUDE",
    *(f"{role}_{suffix}" for role in ("PREFILL", "DECODE") for suffix in ("NUM_WORKERS", "TP", "PP_SIZE", "DCP_SIZE",
                                                                          "PCP_SIZE", "EP", "DP_ATTN")),
})
_EXPR = re.compile(r"\$\{\{\s*(.*?)\s*\}\}\Z", re.S)
_INPUT = re.compile(r"inputs\.([\w-]+)\Z")
_SECRET = re.compile(r"secrets\.(\w+)\Z")
# `inputs.x == 'a' && 'b' || 'c'`: the one conditional form the templates use for a value.
_CHOICE = re.compile(r"inputs\.([\w-]+)\s*==\s*'([^']*)'\s*&&\s*'([^']*)'\s*\|\|\s*'([^']*)'\Z")


def read_template(src: Any, multinode: bool) -> Optional[dict[str, str]]:
    """The `env:` block of the tree's workflow template for the kind of point, as written
    (None without one: a repository that is not laid out like InferenceX)."""
    import yaml

    try:
        data = src.read(TEMPLATES[multinode])
    except Exception:
        return None
    if data is None or len(data) > MAX_TEMPLATE_BYTES:
        return None
    try:
        # libyaml's reader when there is one (a tenth of the pure-Python one's CPU on a template,
        # read at each tree for each kind of point); the same safe constructors either way.
        doc = yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError:
        return None
    env = doc.get("env") if isinstance(doc, dict) else None
    if not isinstance(env, dict):
        return None
    return {str(k): "" if v is None else str(v).lower() if isinstance(v, bool) else str(v) for k, v in env.items()}


def _template_value(name: str, text: str, env: dict[str, Word], inputs: dict[str, str]) -> Optional[Word]:
    """One `env:` value of the template: its text, the point's value of the input it names, or
    unknown (an input or an expression the bot cannot evaluate). None: keep `env`'s value."""
    m = _EXPR.match(text.strip())
    if m is None:
        return text if "${{" not in text else Unknown(f"the workflow's value of {name}: {text.strip()[:80]}")
    expr = m.group(1)
    if _INPUT.match(expr):
        key = _INPUT.match(expr).group(1)
        return None if name in env else inputs.get(key, sweep_input(key))
    if _SECRET.match(expr):
        return f"<secret:{_SECRET.match(expr).group(1)}>"  # one word, as a token is
    c = _CHOICE.match(expr)
    if c and c.group(1) in inputs:
        return c.group(3) if inputs[c.group(1)] == c.group(2) and c.group(3) else c.group(4)
    if name in env:
        return None  # worked out from the point (`CONC_LIST` joins its conc-list)
    return Unknown(f"the workflow's value of {name}: {expr[:80]}")


@functools.lru_cache(maxsize=1024)
def _template_word(name: str, text: str, in_env: bool, scenario: str) -> Optional[Word]:
    """`_template_value` of a job whose environment has `name` set or not, with the one input
    the templates test (`scenario-type`): it reads no more of either, and each point of a
    review asks the same few questions (the value, a frozen Unknown, is shared)."""
    return _template_value(name, text, {name: ""} if in_env else {}, {"scenario-type": scenario})


# The names point_env gives from the point's own fields (the rest are its `additional-settings`).
_POINT_ENV_NAMES = frozenset({"EXP_NAME", "SCENARIO_SUBDIR", "FRAMEWORK", "PRECISION", "MODEL", "MODEL_PREFIX",
                              "SPEC_DECODING", "IS_MULTINODE", "IS_AGENTIC"})


def sweep_input(name: str) -> Unknown:
    """A variable the workflow sets from a sweep input the bot does not know."""
    return Unknown(f"the sweep's input `{name}`, which the bot does not know")


_UNKNOWN_INPUT_WORDS = {k: sweep_input(v) for k, v in _UNKNOWN_INPUTS.items()}
_UNKNOWN_MULTINODE_INPUT_WORDS = {k: sweep_input(v) for k, v in _UNKNOWN_MULTINODE_INPUTS.items()}


def job_env(point: Any, node: str, template: Optional[dict[str, str]] = None,
            inputs: Optional[Mapping[str, str]] = None) -> dict[str, Word]:
    """The variables the sweep's job exports before it runs the runner (`benchmark-tmpl.yml`,
    `benchmark-multinode-tmpl.yml` for a multi-node point): the point's values where the point
    has them; a variable set from an input the point does not give (`DURATION`, `MAX_MODEL_LEN`,
    `RUN_EVAL`, `EVAL_ONLY`, ...) is set to an unknown value, never left unset, so a test on it
    is undecided and both arms are traced (a point is run with and without evals). `inputs` sets
    more (or other) values, last: one run of the point as the sweep starts it, e.g. the eval-only
    run (`EVAL_ONLY=true RUN_EVAL=true`)."""
    from recipes.launch.env import point_env

    multinode = bool(getattr(point, "multinode", False))
    own = point_env(point)
    settings = {k: v for k, v in own.items() if k not in _POINT_ENV_NAMES}
    env: dict[str, Word] = dict(JOB_CONSTANTS)
    env.update(_TEMPLATE_CONSTANTS)
    env.update(_UNKNOWN_INPUT_WORDS)
    env.update(own)
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
        env[k] = str(v) if v is not None else sweep_input(k.lower().replace("_", "-"))
    if point.conc_list:
        env["CONC_LIST"] = " ".join(str(c) for c in point.conc_list)
    if point.tp:
        env["GPU_COUNT"] = str(point.tp * point.pp * point.pcp_size)
    if multinode:
        # The multi-node template exports each role's topology, not the single-node one.
        for k in _SINGLE_NODE_ONLY:
            env.pop(k, None)
        env.pop("HF_HUB_CACHE", None)
        env.pop("RESULT_DIR", None)
        env.pop("AIPERF_FAILED_REQUEST_THRESHOLD", None)
        env.update(_UNKNOWN_MULTINODE_INPUT_WORDS)
        workers = getattr(point, "workers", None) or {}
        for role in ("prefill", "decode"):
            block = workers.get(role) or {}
            for suffix, key in _ROLE_FIELDS.items():
                value = block.get(key)
                name = f"{role.upper()}_{suffix}"
                env[name] = (str(value).lower() if isinstance(value, bool) else str(value)) if value is not None \
                    else sweep_input(f"{role}-{key}")
        # The role's additional-settings come last (`export ...` in the job's step).
        env.update(settings)
    if template is not None:
        # The tree's own template: what it sets, as it sets it; a name it does not set is not
        # exported at this tree.
        scenario = str(fields["SCENARIO_TYPE"])
        for name in [n for n in env if n in _TEMPLATE_NAMES and n not in template and n not in settings]:
            del env[name]
        for name, text in template.items():
            value = _template_word(name, text, name in env, scenario)
            if value is not None and name not in settings:
                env[name] = value
    name = env.get("EXP_NAME")
    env["RESULT_FILENAME"] = f"{name if isinstance(name, str) else 'exp'}_{point.precision}_{point.framework}_result"
    env.update(inputs or {})
    return env


_PYTHON = re.compile(r"python(\d+(\.\d+)?)?")


def classify(argv: tuple[Word, ...], it: Interpreter, state: State, ctx: Ctx,
             client_paths: tuple[str, ...] = ("utils/",)) -> Optional[tuple[str, str]]:
    """(SERVER, engine) for an engine's server, (CLIENT, what) for the benchmark client."""
    head = argv[0] if argv else None
    if not isinstance(head, str):
        return None
    base = posixpath.basename(head)
    rest = list(argv[1:])
    if _PYTHON.fullmatch(base):
        i = python_options_end(rest)
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

    @property
    def identity(self) -> tuple:
        """What tells two points' traces apart: the runner traces it is made of. A `PointTrace`
        is built afresh on each `Tracer.trace` call, so its own `id()` can be reused by the next
        one once it is freed; the runner traces it holds live in their tracer's cache for the
        whole review, so theirs cannot. Two points with one identity have the same effects."""
        return (self.symbolic, *(id(t) for t in self.runners.values()))

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
SYMBOLIC = ("CONC", "CONC_LIST", "RESULT_FILENAME", *AGENTIC_INPUTS)


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

    def spent_but(self, leave: int) -> bool:
        """Whether less than `leave` steps remain: a caller whose traces only might matter (the
        affected rule's probes) leaves what the review's own points need."""
        return self.spent >= self.steps - leave


class Tracer:
    """Traces points at one tree, sharing a trace between points that read the same values.

    `hooks` model commands of the runner's own tooling (see `srt_hook`): each is called as
    `hook(interpreter, argv, state, ctx, node)` with the point in `interpreter.point`."""

    def __init__(self, src: Any, *, vocabulary: Callable[..., Any] | None = None,
                 hooks: dict[str, Callable[..., Optional[int]]] | None = None,
                 client_paths: tuple[str, ...] = ("utils/",),
                 point_deps: Callable[[Any], tuple] | None = None,
                 mounts: tuple[str, ...] = ("/workspace",), budget: Budget | None = None, root: str = ""):
        self.src = src
        self.mounts = mounts
        # The benchmark checkout inside the repository (its layout root): what an srt-slurm
        # recipe's container sees at each of `mounts`.
        self.root = root.strip("/")
        self.budget = budget
        self.vocabulary = vocabulary
        self.hooks = hooks or {}
        self.client_paths = client_paths
        self.point_deps = point_deps or (lambda point: ())
        self._cache: dict[str, list[_Cached]] = {}
        self._by_deps: dict[tuple, list[_Cached]] = {}  # (runner path, deps) -> its entries of `_cache`
        self._templates: dict[bool, Optional[dict[str, str]]] = {}
        self._files: dict[int, frozenset[str]] = {}  # id(trace) -> the files it depends on
        # (id(point), runner, node, symbolic, run) -> (point, the trace a lookup of it found, or
        # None and how many traces of that runner the cache held then). The entry holds the
        # point, so its id() cannot be another point's while it is kept (`is` checks it anyway);
        # a trace lives in `_cache` for the tracer's life.
        self._looked: dict[tuple, tuple[Any, Optional[Trace], int]] = {}
        self.runs = 0   # traces interpreted (the rest were shared)

    def trace(self, point: Any, runner_paths: Iterable[str], *, symbolic: bool = True,
              inputs: Optional[Mapping[str, str]] = None, leave: int = 0) -> Optional[PointTrace]:
        """The point's trace from each runner script; with none (a repository without
        runners.yaml, a label no node serves) from its launcher, as a runner would start it.
        `inputs`: values of one run that the job sets beyond the point's (`job_env`); traces of
        different runs are kept apart, traces of one run shared across the points of an arm.
        None when the review's budget is spent (all but `leave` steps of it) and a trace it
        needs is not made yet."""
        out = PointTrace(symbolic=symbolic)
        runner_paths = list(runner_paths) or [LAUNCHER_ROOT]
        for path in runner_paths:
            node = posixpath.basename(path).removeprefix("launch_").removesuffix(".sh")
            trace = self.runner_trace(point, path, node, symbolic, inputs, leave)
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

    def template(self, multinode: bool) -> Optional[dict[str, str]]:
        if multinode not in self._templates:
            self._templates[multinode] = read_template(self.src, multinode)
        return self._templates[multinode]

    def runner_trace(self, point: Any, path: str, node: str, symbolic: bool = True,
                     inputs: Optional[Mapping[str, str]] = None, leave: int = 0) -> Optional[Trace]:
        # A point's values and the cache's entries do not change (the point is frozen, the cache
        # only grows at its end), so a lookup answers as the last lookup of that point did
        # without building the job's environment again: the trace it found; or, when it found
        # none and no trace of that runner was made since, none again while the budget is spent.
        run = tuple(sorted((inputs or {}).items()))
        key = (id(point), path, node, symbolic, run)
        looked = self._looked.get(key)
        if looked is not None and looked[0] is point:
            if looked[1] is not None:
                return looked[1]
            if looked[2] == len(self._cache.get(path, ())) and self.budget is not None and self.budget.spent_but(leave):
                return None
        n = len(self._cache.get(path, ()))
        trace = self._runner_trace(point, path, node, symbolic, inputs, run, leave)
        self._looked[key] = (point, trace, n)
        return trace

    def _runner_trace(self, point: Any, path: str, node: str, symbolic: bool, inputs: Optional[Mapping[str, str]],
                      run: tuple, leave: int) -> Optional[Trace]:
        # The run is part of the key: a name a run sets that another leaves unset is not among
        # the names a trace records as read (`Interpreter.note`), so it alone cannot tell them apart.
        deps = (self.point_deps(point), run)
        shared = self._same_deps(path, deps)
        spent = self.budget is not None and self.budget.spent_but(leave)
        if spent and not shared:
            return None  # no trace to share and no steps to make one: the job's values are not needed
        env = job_env(point, node, self.template(bool(getattr(point, "multinode", False))), inputs)
        if symbolic:
            env.update({k: symbol(k) for k in SYMBOLIC if k in env})
        for cached in shared:
            if all(env.get(k) == v for k, v in cached.read.items()):
                return cached.trace
        if spent:
            return None
        # What the budget has left for this caller (all but `leave`): the trace stops there.
        left = None if self.budget is None else self.budget.steps - leave - self.budget.spent
        trace, read, steps, files = self._interpret(point, path, env, left)
        if self.budget is not None:
            self.budget.spent += steps + RUN_COST
            if steps > left:
                return None  # stopped where the caller's part of the budget ends: not made
        self._files[id(trace)] = files
        made = _Cached({k: env.get(k) for k in read}, deps, trace)
        self._cache.setdefault(path, []).append(made)
        self._same_deps(path, deps).append(made)
        return trace

    def _same_deps(self, path: str, deps: tuple) -> list[_Cached]:
        """The traces of a runner script made for points with these `deps`: the only ones a point
        with them can share (a lookup compares their read values, never the rest of the cache)."""
        try:
            return self._by_deps.setdefault((path, deps), [])
        except TypeError:  # deps that do not hash: every trace of the runner, compared in full
            return [c for c in self._cache.get(path, ()) if c.deps == deps]

    def _interpret(self, point: Any, path: str, env: dict[str, str],
                   left: Optional[int] = None) -> tuple[Trace, set[str], int, frozenset[str]]:
        """One runner trace; `left`: the steps the review's budget has left for the caller, past
        which the interpretation stops (the caller then drops the trace): a review never spends
        more than its budget, nor a caller the steps it leaves to others."""
        self.runs += 1
        files = Files(self.src)
        it = Interpreter(files, vocabulary=self.vocabulary, inputs=env, hooks=self.hooks,
                         classify=lambda argv, i, s, c: classify(argv, i, s, c, self.client_paths))
        if left is not None:
            it.max_steps = min(it.max_steps, max(left, 0))
        it.point = point  # type: ignore[attr-defined]
        checkout = f"{WORKSPACE}/{self.root}" if self.root else WORKSPACE
        it.workspace_mounts = tuple((m.rstrip("/") or "/", checkout) for m in self.mounts)  # type: ignore[attr-defined]
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
            no_server(it, RUNNER_LABEL, text, ctx, state)
        else:
            host = f"{WORKSPACE}/{path}"
            state.argv0 = host
            ctx = Ctx(path=site.path, src=b"")
            text = files.read(host, run=True)
            if text is None:
                it.unknown(ctx, site, state, f"the runner script {path} is not in the repository")
            else:
                it.run_top(text, path, state, ctx.deeper(site, f"bash {path}"))
                no_server(it, path, text, ctx.deeper(site, f"bash {path}"), state)
        it.trace.executed = {p: frozenset(lines) for p, lines in it.executed.items()}
        it.trace.defined = {p: frozenset(spans) for p, spans in it.defined.items()}
        it.trace.run_reads, it.trace.data_reads = frozenset(files.run_reads), frozenset(files.data_reads)
        return it.trace, set(it.read), it.steps, files.depends()


def no_server(it: Interpreter, path: str, text: str, ctx: Ctx, state: State) -> None:
    """Fail closed on a launch that ends before any server starts: the sweep's job always starts
    one, so a trace without one is a trace the interpreter did not follow (a value it took for
    another, a test it decided wrongly). An UNKNOWN effect names where and how the launch ended;
    it may hide code (`recipes.launch.compare.opaque`), so nothing is judged on such a trace."""
    from .compare import NO_SERVER_MARK

    effects = it.trace.effects
    if any(e.kind == SERVER for e in effects) or it.ending is None:
        return  # a server started, or the interpretation stopped (already an unknown)
    site, status = it.ending
    if site is not None:
        why = f"the launch ends at {site} ({_exit_words(status)}) {NO_SERVER_MARK}"
    else:
        site = Site(path, max(1, text.count("\n")))
        why = f"the launch runs to the end of {path} {NO_SERVER_MARK}"
        if it.last_exit is not None:
            why += f" (the last script to exit did so at {it.last_exit[0]}, {_exit_words(it.last_exit[1])})"
    it.unknown(ctx, site, state, why)


def _exit_words(status: Optional[int]) -> str:
    return "exit with a status it cannot know" if status is None else f"exit {status}"

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


def server_env(effect: Effect) -> list[tuple[str, Word]]:
    """The environment a server starts with: the process's own, and for an srt-slurm recipe's
    server the recipe's environment values (`roles.<role>.env.X`, `environment.X`,
    `backend.<role>_environment.X`), as recipe_items wrote them."""
    import ast

    from recipes.srt import keypath_kind

    out = list(effect.env)
    if effect.kind != SERVER or not str(effect.how).startswith("srt-slurm recipe"):
        return out
    for item in effect.argv:
        if not isinstance(item, str) or "=" not in item:
            continue
        key, _, shown = item.partition("=")
        kp = tuple(key.split("."))
        if len(kp) < 2 or keypath_kind(kp) != "env":
            continue
        try:
            value = ast.literal_eval(shown)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            value = shown
        out.append((kp[-1], value if isinstance(value, str) else str(value)))
    return out


def srt_hook(variant_for: Callable[[Any], Any], setup_text: Callable[[Any, Any, str], Optional[tuple]]):
    """`srtctl apply -f RECIPE`: what srt-slurm runs for the point's bound recipe variant.

    The recipe's values (all but its `benchmark` block) are the servers' configuration: one
    SERVER effect at the recipe's line carries them, so a changed value is a changed serving
    trace. Its `setup_script` runs inside the recipe's container before the servers (it is
    interpreted like any script); its `benchmark` block is the client (CLIENT effect), and a
    `benchmark.command` is interpreted as client code.

    `setup_text(point, variant, ref)` is (path, text) of the setup script (text None: one the
    harness ships, not interpreted), or (path, text, mount)
    for one of another repository's checkout, whose folder the container sees: mount is (inside,
    `repo@commit`, its FileSource, the folder of it mounted)."""

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
                inside = state.child()
                inside.container = image or "<the recipe's container>"
                it.unknown(ctx, site, inside, f"the recipe's setup_script {ref} is not in the repository "
                                              "nor the srt-slurm checkout given: a script whose text is not known runs")
                continue
            path, text = found[0], found[1]
            if path and not _EXTERNAL.match(path):
                it.files.note(path)
            if text is None:
                continue  # a setup script the harness itself ships, trusted by policy
            child = state.child()
            # srt-slurm mounts the benchmark checkout into the recipe's container (policy
            # `workspace_mounts`): `python3 /infmax-workspace/.../fix.py` runs the repository's file;
            # a script of srt-slurm's own checkout sees that checkout's folder (`/configs`).
            child.container, child.cwd = image or "<the recipe's container>", "/"
            child.mounts = getattr(it, "workspace_mounts", ())
            child.open_env = True  # the image and srtctl set environment variables the bot does not see
            if len(found) > 2 and found[2]:
                inside, key, source, folder = found[2]
                child.mounts = ((inside, f"{it.files.mount_external(key, source)}/{folder}".rstrip("/")),
                                *child.mounts)
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
