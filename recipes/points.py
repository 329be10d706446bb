"""Expansion of master-config entries into benchmark points (spec 2.2) and how each finds its launcher."""
from __future__ import annotations

import hashlib
import json
from functools import cached_property
from typing import Any, Callable, Literal

from pydantic import ConfigDict, Field

from .errors import Finding
from .layout import Layout
from .master import (
    CONFIG_FILE_KEY, EVAL_CONFIG_FILE_KEY, SCENARIO_AGENTIC, SCENARIO_FIXED, Arm, MasterEntry, ScenarioItem, WorkerBlock,
    config_file_ref,
)
from .model import Model

LauncherKind = Literal["srt-recipe", "script", "multinode-recipe"]

SPEC_NONE = "none"
SPEC_MTP = "mtp"
# Old-layout launcher folders per scenario (spec 1.2).
SCRIPT_SUBDIRS = {SCENARIO_FIXED: "fixed_seq_len", SCENARIO_AGENTIC: "agentic"}
SINGLE_NODE_DIR = "single_node"
CLUSTER_PREFIX = "cluster:"
TRT_FRAMEWORK = "trt"

MSG_BAD_RANGE = "conc-start {start} / conc-end {end} is not an increasing positive range"
MSG_NO_TP = "single-node arm has no tp"
MSG_RECIPE_MISSING = "srt-recipe {path} does not exist"
MSG_MN_RECIPE_MISSING = "CONFIG_FILE {path} does not exist in this repository"
MSG_NO_MN_RECIPE = "multi-node arm names no CONFIG_FILE recipe"
MSG_NO_SCRIPT = "no launcher script: neither {primary} nor {fallback} exists"
MSG_DRAM_NEEDED = "kv-offloading: dram needs dram-utilization on its agentic-coding item"
MSG_ROUTER_TWICE = "router is set on both the entry and this arm"
MSG_DISAGG_SINGLE = "disagg: true needs multinode: true"
MAX_ENTRY_POINTS = 10_000
MSG_POINTS_CAP = (
    "entry {key} expands to {n:,} benchmark points, over the {cap:,}-point cap; it was not expanded, "
    "so nothing about its points can be verified"
)


class Launcher(Model):
    """What a point runs: an srt-slurm recipe (+ selector) or an old-layout bash script."""

    model_config = ConfigDict(frozen=True)

    kind: LauncherKind
    path: str  # repository-relative
    selector: str | None = None
    written: str = ""  # as written in the master config (srt-recipe value / CONFIG_FILE value)
    exists: bool | None = None

    @property
    def ref(self) -> str:
        return f"{self.path}:{self.selector}" if self.selector else self.path


class BenchmarkPoint(Model):
    """One matrix row: a single-node (arm, concurrency) or a multi-node arm with its conc list."""

    model_config = ConfigDict(frozen=True)

    config_key: str
    scenario: str
    isl: int | None = None
    osl: int | None = None
    dram_utilization: float | None = None
    tp: int | None = None
    ep: int = 1
    pp: int = 1
    dcp_size: int = 1
    pcp_size: int = 1
    dp_attn: bool = False
    conc: int | None = None
    conc_list: list[int] | None = None
    spec_decoding: str = SPEC_NONE
    kv_offloading: str = SPEC_NONE
    kv_offload_backend: str | None = None
    image: str | None = None
    runner: str | None = None
    framework: str | None = None
    precision: str | None = None
    model: str | None = None
    model_prefix: str | None = None
    multinode: bool = False
    disagg: bool = False
    num_nodes: int | None = None
    # Multi-node role blocks: role -> {num-worker, tp, ep, dp-attn, pp, ...}.
    workers: dict[str, dict[str, Any]] = Field(default_factory=dict)
    # Where each role's settings are written: role -> {KEY: line of its `additional-settings`
    # item}, for evidence. Not what is served: out of the fingerprint and of dumps.
    setting_lines: dict[str, dict[str, int]] = Field(default_factory=dict, exclude=True, repr=False)
    launcher: Launcher | None = None
    eval_launcher: Launcher | None = None
    source_path: str = ""
    source_line: int | None = None
    arm_index: int = 0
    point_id: str = ""

    @cached_property
    def fingerprint(self) -> str:
        """What this point serves, without its concurrency or position (`point_fingerprint`):
        the points of one arm share it. Worked out when first asked for: a review compares it
        only for the points whose entry's expansion differs between base and head
        (checks.context), and loading a repository never needs it (bench/core.py)."""
        return point_fingerprint({k: getattr(self, k) for k in type(self).model_fields})

    @property
    def is_agentic(self) -> bool:
        return self.scenario == SCENARIO_AGENTIC

    @property
    def gpu_count(self) -> int | None:
        return self.tp * self.pp * self.pcp_size if self.tp else None

    @property
    def referenced_paths(self) -> tuple[str, ...]:
        """Files besides the launcher that decide what this point runs (the eval recipe)."""
        return tuple(l.path for l in (self.eval_launcher,) if l is not None and l.path != getattr(self.launcher, "path", None))

    @property
    def seq_len(self) -> str | None:
        """`8k1k`-style name of a fixed-seq point."""
        if self.isl is None or self.osl is None:
            return None
        return f"{_k(self.isl)}{_k(self.osl)}"


def _k(n: int) -> str:
    return f"{n // 1024}k" if n % 1024 == 0 else str(n)


# Fields that do not describe what is served, so they stay out of the fingerprint.
_NOT_RECIPE = {"conc", "conc_list", "source_path", "source_line", "arm_index", "point_id", "setting_lines"}


def _launcher_key(launcher: Any) -> Any:
    if isinstance(launcher, Launcher):
        return [launcher.kind, launcher.path, launcher.selector]
    if isinstance(launcher, dict):
        return [launcher.get("kind"), launcher.get("path"), launcher.get("selector")]
    return None


# What `json.dumps(data, sort_keys=True, separators=(",", ":"))` builds on every call, built once.
_CANONICAL_JSON = json.JSONEncoder(sort_keys=True, separators=(",", ":"))


def point_fingerprint(fields: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of a point without its concurrency (spec 2.2)."""
    data = {k: v for k, v in fields.items() if k not in _NOT_RECIPE}
    for key in ("launcher", "eval_launcher"):
        if key in data:
            data[key] = _launcher_key(data[key])
    return hashlib.sha256(_CANONICAL_JSON.encode(data).encode()).hexdigest()


MAX_CONC_VALUES = 512
TOO_MANY_POINTS = "too-many-points"
MSG_TOO_MANY_CONC = "conc-list has {n} values, over the {limit}-value limit; its points are not expanded"


def expand_concurrency(start: int, end: int) -> list[int]:
    """Doubling from `start` while <= `end`, then `end` itself if the doubling overshot it."""
    if start < 1 or end < start:
        return []
    out = []
    c = start
    while c <= end:
        out.append(c)
        c *= 2
    if out[-1] != end:
        out.append(end)
    return out


def sku_of(entry: MasterEntry) -> str | None:
    """The GPU SKU a runner label serves: `mi355x`, `cluster:mi355x-amds` -> `mi355x`."""
    runner = entry.runner or ""
    if runner.startswith(CLUSTER_PREFIX):
        runner = runner[len(CLUSTER_PREFIX):]
    sku = runner.split("-", 1)[0]
    if sku:
        return sku
    parts = entry.key.split("-")
    return parts[2] if len(parts) > 2 else None


def script_candidates(entry: MasterEntry, scenario: str, spec_decoding: str, scripts_dir: str) -> tuple[str, str]:
    """(primary, fallback) launcher paths by the old-layout naming rule (spec 1.2)."""
    spec = f"_{SPEC_MTP}" if spec_decoding == SPEC_MTP else ""
    base = f"{entry.model_prefix}_{entry.precision}_{sku_of(entry)}"
    folder = "/".join(p for p in (scripts_dir, SINGLE_NODE_DIR, SCRIPT_SUBDIRS[scenario]) if p)
    primary = f"{folder}/{base}_{entry.framework}{spec}.sh"
    trt = f"_{TRT_FRAMEWORK}" if entry.framework == TRT_FRAMEWORK else ""
    fallback = f"{folder}/{base}{trt}{spec}.sh"
    return primary, fallback


FRAMEWORK_SUFFIXES = {TRT_FRAMEWORK: "_trt", "atom": "_atom"}


def launcher_candidates(entry: MasterEntry, scenario: str, spec_decoding: str, scripts_dir: str) -> list[str]:
    """Every launcher path a runner of some layout era would run for this point, newest era first.

    The runners derived the file name from the point (runners/launch_<node>.sh in the history):
    - since 2026-06: `benchmarks/single_node/{fixed_seq_len,agentic}/<base>_<framework><spec>.sh`,
      falling back to `<base><fw-suffix><spec>.sh` (`_trt` on NVIDIA runners, `_atom` on AMD);
    - 2026-02 to 2026-06: the same names directly under `benchmarks/single_node/`, where some
      runners (h100, mi300x, mi325x) ran plain `<base>.sh` whatever the framework;
    - before 2026-02: the same names directly under `benchmarks/`.
    Only one era's folder exists in any commit, so the first existing candidate is the one run."""
    spec = f"_{SPEC_MTP}" if spec_decoding == SPEC_MTP else ""
    base = f"{entry.model_prefix}_{entry.precision}_{sku_of(entry)}"
    suffix = FRAMEWORK_SUFFIXES.get(entry.framework or "", "")
    names = [f"{base}_{entry.framework}{spec}", f"{base}{suffix}{spec}"]
    era_dirs = [
        "/".join(p for p in (scripts_dir, SINGLE_NODE_DIR, SCRIPT_SUBDIRS[scenario]) if p),
        "/".join(p for p in (scripts_dir, SINGLE_NODE_DIR) if p),
        scripts_dir,
    ]
    out: list[str] = []
    for k, folder in enumerate(era_dirs):
        for name in names + ([base] if k else []):
            path = f"{folder}/{name}.sh" if folder else f"{name}.sh"
            if path not in out:
                out.append(path)
    return out


def _name(value: Any) -> str | None:
    if isinstance(value, dict):
        return value.get("name")
    return value


def _block_summary(block: WorkerBlock, settings: dict[str, str]) -> dict[str, Any]:
    d: dict[str, Any] = {
        "num-worker": block.num_worker, "tp": block.tp, "ep": block.ep, "dp-attn": block.dp_attn,
        "pp": block.pp, "dcp-size": block.dcp_size, "pcp-size": block.pcp_size,
    }
    if settings:
        d["settings"] = settings
    return {k: v for k, v in d.items() if v is not None}


def expand_entry(
    entry: MasterEntry, layout: Layout, exists: Callable[[str], bool] | None = None
) -> tuple[list[BenchmarkPoint], list[Finding]]:
    """All points of one entry, in file order, plus findings about the arms."""
    exists = exists or (lambda _p: True)
    points: list[BenchmarkPoint] = []
    findings: list[Finding] = []
    seen_ids: dict[str, int] = {}
    n = _count_points(entry)
    if n > MAX_ENTRY_POINTS:
        # Counted before building anything: a hostile conc-list is refused in constant time.
        findings.append(Finding(path=entry.path, line=entry.line, code=POINTS_CAP_CODE,
                                message=MSG_POINTS_CAP.format(key=entry.key, n=n, cap=MAX_ENTRY_POINTS)))
        return points, findings
    if entry.disagg and not entry.multinode:
        findings.append(Finding(path=entry.path, line=entry.line_of("disagg"), code="schema", message=MSG_DISAGG_SINGLE))
    for item, arm in entry.arms:
        for p in _expand_arm(entry, item, arm, layout, exists, findings):
            n = seen_ids.get(p["point_id"], 0) + 1
            seen_ids[p["point_id"]] = n
            if n > 1:
                p["point_id"] = f"{p['point_id']}#{n}"
            points.append(BenchmarkPoint.model_validate(p))
    return points, findings


POINTS_CAP_CODE = "points-cap"


def _count_points(entry: MasterEntry) -> int:
    """How many points `expand_entry` would build (one per concurrency, one per multi-node arm)."""
    n = 0
    for _item, arm in entry.arms:
        if bool(entry.multinode) or arm.is_multinode:
            n += 1
        elif arm.conc_list is not None:
            n += len(arm.conc_list)
        elif arm.conc_start is not None:
            start, end = arm.conc_start, arm.conc_end if arm.conc_end is not None else arm.conc_start
            n += len(expand_concurrency(start, end)) if start >= 1 else 0
    return n


def _expand_arm(entry, item: ScenarioItem, arm: Arm, layout: Layout, exists, findings: list[Finding]) -> list[dict]:
    path = arm.path
    if arm.conc_list is not None and len(arm.conc_list) > MAX_CONC_VALUES:
        # Each value is a benchmark point every check analyses; a list this long is not a real
        # sweep, and its points are unknown rather than silently dropped (affected_unknown).
        findings.append(Finding(path=path, line=arm.line_of("conc-list"), code=TOO_MANY_POINTS,
                                message=MSG_TOO_MANY_CONC.format(n=len(arm.conc_list), limit=MAX_CONC_VALUES)))
        concs = []
    elif arm.conc_list is not None:
        concs = list(arm.conc_list)
    elif arm.conc_start is not None:
        end = arm.conc_end if arm.conc_end is not None else arm.conc_start
        concs = expand_concurrency(arm.conc_start, end)
        if not concs:
            findings.append(Finding(path=path, line=arm.line_of("conc-start"), code="schema",
                                    message=MSG_BAD_RANGE.format(start=arm.conc_start, end=end)))
    else:
        concs = []
    if arm.kv_offloading == "dram" and item.scenario == SCENARIO_AGENTIC and item.dram_utilization is None:
        findings.append(Finding(path=path, line=arm.line_of("kv-offloading"), code="schema", message=MSG_DRAM_NEEDED))
    if arm.router is not None and entry.router is not None:
        findings.append(Finding(path=path, line=arm.line_of("router"), code="schema", message=MSG_ROUTER_TWICE))

    multinode = bool(entry.multinode) or arm.is_multinode
    base: dict[str, Any] = dict(
        config_key=entry.key, scenario=item.scenario, isl=item.isl, osl=item.osl,
        dram_utilization=item.dram_utilization,
        spec_decoding=arm.spec_decoding or SPEC_NONE, kv_offloading=arm.kv_offloading or SPEC_NONE,
        kv_offload_backend=_name(arm.kv_offload_backend),
        image=entry.image, runner=entry.runner, framework=entry.framework, precision=entry.precision,
        model=entry.model, model_prefix=entry.model_prefix, multinode=multinode, disagg=bool(entry.disagg),
        num_nodes=arm.num_nodes, source_path=path, source_line=arm.line, arm_index=arm.index,
    )
    if multinode:
        # Parsed once per block: the summary and both launcher look-ups read them.
        settings = {id(b): b.settings for b in arm.blocks}
        gen = arm.decode or arm.worker or arm.prefill
        base.update(
            tp=gen.tp if gen else arm.tp, ep=(gen.ep if gen else arm.ep) or 1, pp=(gen.pp if gen else arm.pp) or 1,
            dcp_size=(gen.dcp_size if gen else arm.dcp_size) or 1, pcp_size=(gen.pcp_size if gen else arm.pcp_size) or 1,
            dp_attn=bool(gen.dp_attn if gen else arm.dp_attn),
            workers={b.role: _block_summary(b, settings[id(b)]) for b in arm.blocks},
            setting_lines={b.role: b.setting_lines() for b in arm.blocks if settings[id(b)]},
        )
        base["launcher"], base["eval_launcher"] = _multinode_launchers(arm, layout, exists, findings, settings)
        base["point_id"] = _point_id(base, None)
        return [dict(base, conc_list=concs)]
    if arm.tp is None:
        findings.append(Finding(path=path, line=arm.line, code="schema", message=MSG_NO_TP))
    base.update(
        tp=arm.tp, ep=arm.ep or 1, pp=arm.pp or 1, dcp_size=arm.dcp_size or 1, pcp_size=arm.pcp_size or 1,
        dp_attn=bool(arm.dp_attn),
    )
    base["launcher"] = _single_launcher(entry, item, arm, layout, exists, findings, base["spec_decoding"])
    stem = _point_id_stem(base)  # shared by the arm's concurrencies
    return [dict(base, conc=c, point_id=f"{stem}:c{c}") for c in concs]


def _point_id(p: dict, conc: int | None) -> str:
    """Readable and stable across image or launcher changes, so base and head points line up."""
    return f"{_point_id_stem(p)}:" + (f"c{conc}" if conc is not None else "mn")


def _point_id_stem(p: dict) -> str:
    """A point id without its concurrency part."""
    scen = "agentic" if p["scenario"] == SCENARIO_AGENTIC else f"{_k(p['isl'] or 0)}{_k(p['osl'] or 0)}"
    par = f"tp{p['tp']}-ep{p['ep']}"
    if p["pp"] != 1:
        par += f"-pp{p['pp']}"
    if p["dcp_size"] != 1:
        par += f"-dcp{p['dcp_size']}"
    if p["pcp_size"] != 1:
        par += f"-pcp{p['pcp_size']}"
    if p["dp_attn"]:
        par += "-dpa"
    parts = [p["config_key"], scen, par]
    if p.get("workers"):
        topo = "+".join(
            f"{role}{w.get('num-worker', 1)}x{w.get('tp')}/{w.get('ep', 1)}{'d' if w.get('dp-attn') else ''}"
            for role, w in sorted(p["workers"].items())
        )
        parts.append(topo)
    if p["spec_decoding"] != SPEC_NONE:
        parts.append(p["spec_decoding"])
    if p["kv_offloading"] != SPEC_NONE:
        parts.append(f"kv-{p['kv_offloading']}" + (f"-{p['kv_offload_backend']}" if p["kv_offload_backend"] else ""))
    return ":".join(parts)


def _single_launcher(entry, item, arm: Arm, layout: Layout, exists, findings, spec: str) -> Launcher | None:
    ref = arm.recipe_ref
    if ref is not None:
        path = layout.rel(ref[0])
        ok = exists(path)
        if not ok:
            findings.append(Finding(path=arm.path, line=arm.line_of("srt-recipe"), code="missing-recipe",
                                    message=MSG_RECIPE_MISSING.format(path=path)))
        return Launcher(kind="srt-recipe", path=path, selector=ref[1], written=arm.srt_recipe or "", exists=ok)
    if not entry.model_prefix or not entry.precision or not entry.framework:
        return None
    primary, fallback = script_candidates(entry, item.scenario, spec, layout.scripts_dir)
    for candidate in launcher_candidates(entry, item.scenario, spec, layout.scripts_dir):
        if exists(candidate):
            return Launcher(kind="script", path=candidate, exists=True)
    findings.append(Finding(path=arm.path, line=arm.line, code="missing-launcher",
                            message=MSG_NO_SCRIPT.format(primary=primary, fallback=fallback)))
    return Launcher(kind="script", path=primary, exists=False)


def _multinode_launchers(arm: Arm, layout: Layout, exists, findings,
                         settings: dict[int, dict[str, str]]) -> tuple[Launcher | None, Launcher | None]:
    """`settings` holds each block's parsed settings by `id(block)`."""
    out: list[Launcher | None] = []
    for key in (CONFIG_FILE_KEY, EVAL_CONFIG_FILE_KEY):
        found = None
        for block in (arm.prefill, arm.worker, arm.decode):
            if block is None:
                continue
            written = settings[id(block)].get(key)
            ref = config_file_ref(written)
            if ref is None:
                continue
            path = layout.rel(ref[0])
            ok = exists(path)
            if not ok:
                findings.append(Finding(path=arm.path, line=block.setting_line(key), code="missing-recipe",
                                        severity="warning", message=MSG_MN_RECIPE_MISSING.format(path=path)))
            found = Launcher(kind="multinode-recipe", path=path, selector=ref[1], written=written, exists=ok)
            break
        out.append(found)
    if out[0] is None:
        findings.append(Finding(path=arm.path, line=arm.line, code="missing-recipe", severity="warning", message=MSG_NO_MN_RECIPE))
    return out[0], out[1]
