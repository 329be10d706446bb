"""What an affected benchmark point actually serves: its effective knobs across recipe args, env, JSON and scripts.

Checks 8-13 judge runtime behaviour, not diff lines. For every affected point this module builds
one `ServingView`: the effective configuration at the pinned head (`Repository.effective`), the
bound srt variant, and every bash text that runs for it (launcher, `setup_script`,
`benchmark.command`, the helpers they run), each analysed once (`recipes.scripts`).

`view.hits(name)` finds every place a knob is set, whatever its spelling: a server flag
(`--hf-overrides`, `hf_overrides`), an environment variable, a key inside a JSON-valued
flag (`--speculative-config '{"quantization": ...}'`), a key anywhere in the variant, a
script export or launch flag, or a master-config `additional-settings` item. Quoted text and
comments never count (the script analyser only reports runtime words).
"""
from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from recipes.evidence import Evidence
from recipes.launch.path.launch_path import (
    PYTHON_SUFFIX, PointRoots, launch_path, point_roots, read_analysis, resolve_ref, trusted_download,
)
from recipes.launch.path.branch_words import chain_words
from recipes.launch.path.hits import (
    Hit, ScriptUse, effective_hits, entry_hits, json_object, setting_hits, shared_once, shared_script_hits,
    shared_variant_hits,
)
from recipes.launch.path.runner_launch import chain_path, runner_chain
from recipes.launch.path.trace_affected import traced_speculation
from recipes.launch.path.srt_checkout import is_cloned, point_recipe
from recipes.effective import MSG_SCRIPT_TOO_LARGE
from recipes.scripts import (
    MAX_SCRIPT_CHARS, UNREADABLE_CODES, ScriptAnalysis, analyze_python_file, analyze_script,
)
from recipes.engines import display_name, engine_of
from recipes.values import flag_name as norm_name

MSG_FILE_UNREADABLE = "could not verify: {path} could not be read ({reason}); re-run the review."
MSG_NO_VARIANT = (
    "could not verify: no single recipe variant of {path} serves {point}, so its effective serving "
    "config is unknown; make exactly one variant match the point."
)
MSG_RECIPE_UNREADABLE = (
    "could not verify: the recipe {finding}, so the effective serving config of {point} is unknown; "
    "fix the recipe."
)
MSG_MISSING_SCRIPT = (
    "could not verify: {ref} named at {where} was not found in the repository; commit the script "
    "or fix the reference."
)

MSG_CLONED_SETUP = ("could not verify: {ref} named at {where} is not in this repository, and {why}; commit the "
                    "script to have it verified.")
MSG_EXTERNAL_RECIPE = (
    "could not verify: {ref} named at {where} is not in this repository: CONFIG_FILE {written} is read by "
    "srtctl from an srt-slurm checkout, and no runner script of this point makes one the bot can read; "
    "commit the recipe under {folder} to have it verified."
)

MSG_UNRESOLVED_SCRIPT = ("could not verify: {where} runs {ref}, a script whose name is built from a variable the "
                         "bot cannot resolve or that lives in a git submodule, so its code is unknown; name a script "
                         "committed in the repository.")
MSG_SCRIPT_UNREADABLE = "could not verify: {message}; fix the script so bash reads it plainly."

MEMO_VIEWS = "serving.views"
MEMO_HITS = "serving.hits"
MEMO_SCRIPT = "serving.script:{path}"


def engine_display(framework: str, policy=None) -> str:
    """`dynamo-trt` -> `TRT-LLM`: the engine a master-config framework runs, as people write it."""
    return display_name(engine_of(framework, policy) or framework, policy)


def engine_name(framework: str, policy) -> str:
    """A framework as the repository config names it (`atom` -> `ATOM`, `dynamo-trt` -> `Dynamo TRT-LLM`)."""
    return display_name(framework, policy)


@dataclass
class ServingView:
    """The effective serving setup of one affected point at the pinned head."""

    point: Any
    effective: Any
    variant: Any | None
    reasons: list[str]
    scripts: list[ScriptUse] = field(default_factory=list)
    # Set when the point's serving config could not be established (a "could not verify").
    unavailable: str | None = None
    unavailable_evidence: Evidence | None = None
    # Set when a referenced setup script is not in the repository: only checks that read
    # script bodies (8, 10, 13) are blind then.
    script_gap: str | None = None
    script_gap_evidence: Evidence | None = None
    # The hop of a runner-chosen launch chain the bot could not follow (recipes.launch.path.runner_launch.Gap).
    runner_gap: Any = None
    # The models-file entries that chain read ((holder, line, recipes.models_yaml.ModelsEntry)).
    entries: list = field(default_factory=list)
    # The words that chain's commands pass with variables a branch set, as this point runs them
    # ((holder, line) -> words, None for words the bot cannot know; recipes.launch.path.branch_words.chain_words).
    chain_words: dict = field(default_factory=dict)
    # Per-review cache shared by views (ctx.memo), so identical views build their hits once.
    shared: dict | None = field(default=None, repr=False, compare=False)
    # The repository policy in force (its engine vocabulary: `framework_family`, display names).
    policy: Any = field(default=None, repr=False, compare=False)
    traced_speculation: Any = field(default=None, repr=False, compare=False)  # is_speculative, a launcher's point

    @property
    def config_key(self) -> str:
        return self.point.config_key

    @property
    def framework(self) -> str:
        return self.point.framework or ""

    @property
    def engine(self) -> str:
        eff = self.effective.engine
        if eff is not None and eff.value:
            return str(eff.value)
        return engine_of(self.framework, self.policy) or self.framework

    @property
    def engine_name(self) -> str:
        return display_name(self.engine, self.policy) if self.engine else "the engine"

    @property
    def launcher_path(self) -> str | None:
        """The file serving the point: its recipe as read (a cloned one cites its repository,
        recipes.launch.path.srt_checkout), else its launcher."""
        if self.variant is not None and getattr(self.variant, "path", None):
            return self.variant.path
        launcher = self.point.launcher
        return launcher.path if launcher is not None else None

    @property
    def is_agentic(self) -> bool:
        return bool(self.point.is_agentic)

    @property
    def is_speculative(self) -> bool:
        """spec-decoding, else its traced servers; the script reading where none tells (launch.md)."""
        if (self.point.spec_decoding or "none") != "none":
            return True
        if self.traced_speculation is not None and not hasattr(self, "_traced"):
            self._traced = self.traced_speculation()
        traced = getattr(self, "_traced", None)
        return traced if traced is not None else self.effective.spec_method is not None

    @property
    def spec_method(self) -> str | None:
        o = self.effective.spec_method
        return str(o.value).lower() if o is not None and o.value else None

    @property
    def draft_length(self) -> int | None:
        o = self.effective.draft_length
        return o.value if o is not None else None

    @property
    def file_evidence(self) -> Evidence:
        path = self.launcher_path or self.point.source_path
        line = self.variant.line if self.variant is not None else (1 if self.launcher_path else self.point.source_line)
        return Evidence(path=path, line=line)

    # --- knob lookup --------------------------------------------------------------------------
    def _share_key(self) -> tuple | None:
        """Views with the same variant, scripts and worker settings have the same hits."""
        if self.shared is None or (self.variant is None and not self.scripts):
            return None
        workers = self.point.workers
        return (id(self.variant), tuple((u.path, id(u.analysis), u.executed) for u in self.scripts),
                json.dumps(workers, sort_keys=True, default=str) if workers else None,
                tuple((h, ln, id(e)) for h, ln, e in self.entries))

    def all_hits(self) -> list[Hit]:
        """Every setting of this point, from the variant, the scripts and the master config."""
        cached = getattr(self, "_hits", None)
        if cached is None:
            key = self._share_key()
            if key is not None and key in self.shared:
                self._hits, self._hit_index, _ = self.shared[key]
                return self._hits
            if self.variant is not None:
                variant_hits, self._variant_index = shared_variant_hits(self.variant, self.shared)
                cached = list(variant_hits)
            elif self.scripts:
                cached = []  # the launcher's own analysis below has resolved values and conditions
            else:
                cached = list(effective_hits(self.effective))
            for use in self.scripts:
                cached.extend(shared_script_hits(use))
            for holder, line, entry in self.entries:
                cached.extend(shared_once(self.shared, ("entry", holder, line, id(entry)), entry,
                                      lambda h=holder, ln=line, e=entry: entry_hits(h, ln, e)))
            cached.extend(setting_hits(self.point))
            self._hits = cached
            if key is not None:
                # The key holds ids: the entry keeps the objects they are of alive for as long
                # as the review shares it, so no other object can take one of those ids.
                kept = (self.variant, [u.analysis for u in self.scripts], [e for _, _, e in self.entries])
                self.shared[key] = (cached, self._index(), kept)
        return cached

    def _index(self) -> dict[str, list[tuple[int, Hit]]]:
        index = getattr(self, "_hit_index", None)
        if index is None:
            hits = self.all_hits()
            # The variant's hits come first and their index is shared: index the rest only.
            shared = getattr(self, "_variant_index", None) or {}
            start = sum(len(v) for v in shared.values())
            rest: dict[str, list[tuple[int, Hit]]] = {}
            for pos in range(start, len(hits)):
                rest.setdefault(hits[pos].key, []).append((pos, hits[pos]))
            index = dict(shared)
            for k, found in rest.items():
                index[k] = index[k] + found if k in index else found
            self._hit_index = index
        return index

    def hits(self, *names: str, kinds: Iterable[str] | None = None) -> list[Hit]:
        """Every place one of `names` is set (any spelling), optionally only of some kinds."""
        self.all_hits()
        index = self._index()
        wanted = {norm_name(n) for n in names}
        allowed = set(kinds) if kinds is not None else None
        found = sorted((x for n in wanted for x in index.get(n, ())), key=lambda x: x[0])
        return [h for _, h in found if allowed is None or h.kind in allowed]

    def json_flags(self) -> list[tuple[Hit, dict]]:
        """Every JSON-valued flag or key (e.g. --speculative-config) with its parsed object."""
        out = []
        for h in self.all_hits():
            if h.kind in ("arg", "script-flag", "recipe"):
                obj = json_object(h.value)
                if obj is not None:
                    out.append((h, obj))
        return out


# --- script discovery ---------------------------------------------------------------------


def resolve_reference(ctx: Any, ref: str, referrer: str) -> str | None:
    """The repository path a script reference names, or None when it is not in the repository
    (a container path, or a reference built from variables); see recipes.launch.path.launch_path."""
    return resolve_ref(ctx.head_repo, ctx.config.policy.workspace_mounts, ref, referrer)



def _analysis(ctx: Any, path: str) -> ScriptAnalysis | None:
    """The launch path's reader (recipes.launch.path.launch_path), except that a script over the cap is
    None here: `_check_readable` names it as too large for the point."""
    def build() -> ScriptAnalysis | None:
        data = ctx.snapshot.head.read(path)
        if data is None or len(data) > MAX_SCRIPT_CHARS:
            return None
        return read_analysis(ctx.snapshot.head, path)

    return ctx.memo(MEMO_SCRIPT.format(path=path), build)


def _add_use(view: ServingView, use: ScriptUse, trusted: Iterable[str] = (), read: Iterable = ()) -> None:
    """`read`: (path, line) of unreadable lines the launch chain read (recipes.launch.path.runner_launch)."""
    view.scripts.append(use)
    read = set(read)
    bad = next((f for f in use.analysis.findings if f.code in UNREADABLE_CODES and use.line_runs(f.line)
                and (f.path or use.path, f.line) not in read and (use.path, f.line) not in read
                and not trusted_download(use.analysis, f.line, trusted)), None)
    if bad is not None and view.script_gap is None:
        # Only this script is blind: the checks that read script bodies say so for this point.
        view.script_gap = MSG_SCRIPT_UNREADABLE.format(message=bad.message)
        view.script_gap_evidence = Evidence(path=bad.path or use.path, line=bad.line, unavailable=True)


MEMO_UNREADABLE = "serving.unreadable"


def _unreadable(ctx: Any, path: str) -> str | None:
    """Why a file on a point's launch path cannot be read, or None; once per file and review."""
    known = ctx.memo(MEMO_UNREADABLE, dict)
    if path not in known:
        reason = ctx.snapshot.unreadable.get(path)
        if not reason and not path.endswith((".yaml", ".yml")):
            data = ctx.snapshot.head.read(path)
            if data is not None and len(data) > MAX_SCRIPT_CHARS:
                reason = MSG_SCRIPT_TOO_LARGE.format(path=path, size=len(data), limit=MAX_SCRIPT_CHARS)
        known[path] = reason
    return known[path]


def _check_readable(ctx: Any, view: ServingView, path: str) -> None:
    reason = _unreadable(ctx, path)
    if reason and view.unavailable is None:
        view.unavailable = MSG_FILE_UNREADABLE.format(path=path, reason=reason)
        view.unavailable_evidence = Evidence(path=path, unavailable=True, note=reason)


def _build_view(ctx: Any, affected_point: Any) -> ServingView:
    point = affected_point.point
    repo = ctx.head_repo
    variant = repo.variant_for(point)
    view = ServingView(point=point, effective=repo.effective(point), variant=variant,
                       reasons=list(affected_point.reasons), shared=ctx.memo(MEMO_HITS, dict),
                       policy=ctx.config.policy,
                       traced_speculation=(lambda: traced_speculation(ctx, point)) if variant is None else None)
    launcher = point.launcher
    if launcher is not None:
        _check_readable(ctx, view, launcher.path)
        if launcher.kind == "script":
            analysis = _analysis(ctx, launcher.path) if launcher.exists is not False else None
            if analysis is None and view.unavailable is None:
                view.unavailable = MSG_MISSING_SCRIPT.format(ref=launcher.path, where=f"{point.source_path}:{point.source_line}")
                view.unavailable_evidence = Evidence(path=point.source_path, line=point.source_line, unavailable=True)
        elif variant is None and view.unavailable is None:
            recipe, cloned = repo.recipe(launcher.path), None
            if recipe is None and is_cloned(launcher):
                # A CONFIG_FILE this repository does not hold is read from the srt-slurm
                # checkout the point's runner makes (recipes.launch.path.srt_checkout).
                cloned = point_recipe(ctx, point)
                recipe = cloned.recipe if cloned is not None else None
            broken = next((f for f in recipe.findings if f.severity == "error"), None) \
                if recipe is not None and not recipe.variants else None
            picked = recipe.select(launcher.selector) if recipe is not None and broken is None else []
            if cloned is not None and cloned.unavailable:
                view.unavailable, view.unavailable_evidence = cloned.unavailable, cloned.evidence
            elif recipe is None and is_cloned(launcher):
                view.unavailable = MSG_EXTERNAL_RECIPE.format(
                    ref=launcher.ref, where=f"{point.source_path}:{point.source_line}", written=launcher.written or launcher.path,
                    folder=posixpath.dirname(launcher.path) or launcher.path)
                view.unavailable_evidence = Evidence(path=point.source_path, line=point.source_line, unavailable=True,
                                                     note="external srt-slurm recipe")
            elif recipe is None:
                view.unavailable = MSG_MISSING_SCRIPT.format(ref=launcher.ref, where=f"{point.source_path}:{point.source_line}")
                view.unavailable_evidence = Evidence(path=point.source_path, line=point.source_line, unavailable=True)
            elif broken is not None:
                # Name the file and line that could not be read, not just the missing binding.
                view.unavailable = MSG_RECIPE_UNREADABLE.format(finding=broken, point=point.point_id)
                view.unavailable_evidence = Evidence(path=broken.path, line=broken.line, unavailable=True,
                                                     note=broken.message)
            elif cloned is not None and len(picked) == 1:
                view.variant = picked[0]
                view.effective = repo.effective(point, picked[0])
            else:
                view.unavailable = MSG_NO_VARIANT.format(path=launcher.ref, point=point.point_id)
                view.unavailable_evidence = Evidence(path=cloned.path if cloned is not None else launcher.path,
                                                     unavailable=True, note=f"{point.source_path}:{point.source_line}")
    # Every bash text on the point's launch path (recipes.launch.path.launch_path), with the functions it calls.
    roots = point_roots(ctx, point, runners=False)
    # No launcher file: the runner picks the script; its chain, whole or not at all (recipes.launch.path.runner_launch).
    chain = runner_chain(ctx, point) if launcher is None and variant is None else None
    view.runner_gap = chain.gap if chain is not None else None
    read: set = set()
    if chain is not None and chain.gap is None:
        roots = PointRoots(files=chain.files, commands=chain.commands)
        view.entries, read = list(chain.entries), chain.read
        view.chain_words = chain_words(ctx, chain, point)
    for ref, holder, line in roots.missing_setup:
        harness = any(re.fullmatch(rx, ref.rsplit("/", 1)[-1]) for rx in ctx.config.policy.harness_setup_scripts)
        if not harness and view.script_gap is None:
            view.script_gap = MSG_MISSING_SCRIPT.format(ref=ref, where=f"{holder}:{line}")
            view.script_gap_evidence = Evidence(path=holder, line=line, unavailable=True)
    for ref, holder, line, why in roots.cloned_gaps:
        harness = any(re.fullmatch(rx, ref.rsplit("/", 1)[-1]) for rx in ctx.config.policy.harness_setup_scripts)
        if not harness and view.script_gap is None:
            view.script_gap = MSG_CLONED_SETUP.format(ref=ref, where=f"{holder}:{line}", why=why)
            view.script_gap_evidence = Evidence(path=holder, line=line, unavailable=True)
    path = chain_path(ctx, chain) if chain is not None and chain.gap is None else launch_path(ctx, roots)
    for holder, line, ref in path.unresolved[:1]:
        if view.script_gap is None:
            view.script_gap = MSG_UNRESOLVED_SCRIPT.format(ref=ref, where=f"{holder}:{line}")
            view.script_gap_evidence = Evidence(path=holder, line=line, unavailable=True)
    for pf in path.files.values():
        _check_readable(ctx, view, pf.path)
        python = pf.analysis is None and pf.path.endswith(PYTHON_SUFFIX)
        analysis = _python_file(ctx, pf.path) if python else pf.analysis
        if analysis is not None:
            _add_use(view, ScriptUse(path=pf.path, analysis=analysis, via=pf.via,
                                     executed=frozenset(path.called.get(pf.path, ()))),
                     ctx.config.policy.trusted_installers, read)
    env = view.effective.point_env
    if env and launcher is not None and launcher.kind == "script":
        # The launcher's values differ per branch and this point's matrix values choose them
        # (recipes.effective): its settings are read from the script as this point runs it.
        for use in view.scripts:
            if use.path == launcher.path:
                data = ctx.snapshot.head.read(use.path)
                if data is not None:
                    use.analysis = analyze_script(data.decode("utf-8", "replace"), use.path, env=env)
    for holder, analysis, via in roots.cloned:
        _add_use(view, ScriptUse(path=holder, analysis=analysis, via=via, executed=frozenset()),
                 ctx.config.policy.trusted_installers)
    for holder, analysis in roots.commands:
        _add_use(view, ScriptUse(path=holder, analysis=analysis, via="benchmark.command",
                                 executed=frozenset(path.called.get(holder, ()))),
                 ctx.config.policy.trusted_installers, read)
    return view


MEMO_PYTHON = "serving.python:{path}"


def _python_file(ctx: Any, path: str) -> ScriptAnalysis | None:
    """A Python file on the launch path (`python3 fix.py`, recipes.launch.path.launch_path rule 3), read from
    the repository like a Python heredoc (recipes.scripts.analyze_python_file): a file that
    writes into the serving stack is an engine patch on the point's launch path."""
    def build() -> ScriptAnalysis | None:
        try:
            data = ctx.snapshot.head.read(path)
        except OSError:
            return None
        return None if data is None else analyze_python_file(data.decode("utf-8", "replace"), path)

    return ctx.memo(MEMO_PYTHON.format(path=path), build)



def serving_views(ctx: Any, scope: str = "serving") -> list[ServingView]:
    """One view per affected point of `scope` ("serving", or "client": only what its client runs
    changed, which Check 9 alone judges), in `ctx.affected.points` order (cached per review)."""
    return ctx.memo(f"{MEMO_VIEWS}:{scope}", lambda: [_build_view(ctx, ap) for ap in ctx.affected.points if ap.scope == scope])
