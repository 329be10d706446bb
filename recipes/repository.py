"""The Repository facade: one lazily parsed, cached view of a benchmark repository tree."""
from __future__ import annotations

import gc
import hashlib
import threading
import importlib
import os
from collections import OrderedDict
from contextlib import contextmanager
from functools import cached_property
from typing import Any, Iterator

from .config import RepoConfig, read_repo_config
from .effective import EffectiveConfig, effective_config
from .errors import Finding
from .layout import Layout, detect_layout
from .master import MasterEntry, MasterFile, clear_entry_cache, images_match, parse_master
from .points import BenchmarkPoint, expand_entry
from .source import DirSource, FileSource, GitSource
from .binding import Bindings, bind_points
from .srt import Recipe, Variant, parse_recipe
from .yamlio import clear_caches

# Parsed files by (kind, path, content digest), shared by every Repository in the process: a
# review builds base, head and target views whose master configs and recipes are mostly the
# same bytes. Cached objects are shared, so callers must treat them as read-only.
_PARSE_CACHE: "OrderedDict[tuple[str, str, str], Any]" = OrderedDict()
PARSE_CACHE_SIZE = 512
# The caches are shared by checks evaluated in several threads (checks/engine.py).
_CACHE_LOCK = threading.Lock()


def _touch(cache: OrderedDict, key: Any) -> None:
    with _CACHE_LOCK:
        if key in cache:
            cache.move_to_end(key)


def _put(cache: OrderedDict, key: Any, value: Any, size: int) -> None:
    with _CACHE_LOCK:
        cache[key] = value
        while len(cache) > size:
            cache.popitem(last=False)


def _cached_parse(kind: str, path: str, data: bytes, parse: Any) -> Any:
    key = (kind, path, hashlib.blake2b(data, digest_size=16).hexdigest())
    hit = _PARSE_CACHE.get(key)
    if hit is not None:
        _touch(_PARSE_CACHE, key)
        return hit
    value = parse(data, path)
    _put(_PARSE_CACHE, key, value, PARSE_CACHE_SIZE)
    return value


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block (unless it was off already).

    Parsing allocates hundreds of thousands of acyclic containers that all stay alive, and each
    allocation burst makes the collector walk the young heap again for nothing: that was a fifth
    of a cold load. Reference counting still frees everything that is dropped. What the block
    left alive is moved to the oldest generation at once (freeze, then unfreeze), so the young
    collections after it do not walk it all again (a further 7% of a cold load); full
    collections still examine it, so a cycle in it is still collected. Nested or concurrent use
    is harmless: only the outermost block that turned the collector off turns it back on.
    """
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        gc.enable()


# Expanded points by master entry and layout: an entry's points depend only on the entry, the
# layout and which launcher files exist, so a view whose master configs are cached and whose
# launchers exist alike reuses them. Entries are cached objects, hence the identity key; the
# value holds the entry, so its id cannot be reused while the slot lives.
_EXPANSION_CACHE: "OrderedDict[tuple[int, Layout], tuple[MasterEntry, dict[str, bool], list[BenchmarkPoint], list[Finding]]]" = OrderedDict()
EXPANSION_CACHE_SIZE = 4096


def clear_parse_cache() -> None:
    _PARSE_CACHE.clear()
    _EXPANSION_CACHE.clear()
    clear_entry_cache()
    clear_caches()
    images_match.cache_clear()


MSG_DUPLICATE_KEY = "config key {key} is also defined in {other}"
MSG_UNAVAILABLE = "{what} could not be parsed: module {module} is not available"
MSG_UNREFERENCED_RECIPE = "recipe {path} serves no benchmark point (no master-config arm names it)"
# Where srt-slurm recipes live below the layout's benchmarks directory (spec 1.1).
SRT_RECIPE_DIRS = ("single_node/srt-slurm-recipes", "multi_node/srt-slurm-recipes")
_RECIPE_SUFFIXES = (".yaml", ".yml")


class Repository:
    """Nothing is read until asked; every property is computed at most once.

    A PR review builds two or three of these (base, head, target), so keep properties lazy and
    independent: asking for `.points` must not parse the changelog.
    """

    def __init__(self, src: FileSource, config: RepoConfig | None = None):
        self.src = src
        self._given_config = config

    # --- configuration and layout -----------------------------------------------------------
    @cached_property
    def _config_pair(self) -> tuple[RepoConfig, list[Finding]]:
        if self._given_config is not None:
            return self._given_config, []
        return read_repo_config(self.src)

    @cached_property
    def config(self) -> RepoConfig:
        return self._config_pair[0]

    @cached_property
    def layout(self) -> Layout:
        return detect_layout(self.src, self.config.paths)

    def exists(self, path: str) -> bool:
        """Whether a file exists, asked as cheaply as the source allows (cached)."""
        path = path.strip("/")
        cache = self._exists
        if path not in cache:
            if isinstance(self.src, DirSource):
                cache[path] = os.path.isfile(os.path.join(self.src.root, path))
            elif isinstance(self.src, GitSource) or callable(getattr(self.src, "blob_sha", None)):
                # Sources that know their tree (git, the GitHub tree listing) answer without a read.
                cache[path] = self.src.blob_sha(path) is not None
            else:
                cache[path] = self.src.read(path) is not None
        return cache[path]

    @cached_property
    def _exists(self) -> dict[str, bool]:
        return {}

    # --- master configs and points ------------------------------------------------------------
    @cached_property
    def master_files(self) -> list[str]:
        return self.layout.master_configs(self.src)

    @cached_property
    def masters(self) -> dict[str, MasterFile]:
        out = {}
        with gc_paused():
            for path in self.master_files:
                data = self.src.read(path)
                if data is not None:
                    out[path] = _cached_parse("master", path, data, parse_master)
        return out

    @cached_property
    def _entries_and_findings(self) -> tuple[dict[str, MasterEntry], list[Finding]]:
        entries: dict[str, MasterEntry] = {}
        findings: list[Finding] = []
        for path, mf in self.masters.items():
            findings.extend(mf.findings)
            for key, entry in mf.entries.items():
                if key in entries:
                    findings.append(Finding(path=path, line=entry.line, code="duplicate-key",
                                            message=MSG_DUPLICATE_KEY.format(key=key, other=entries[key].path)))
                    continue
                entries[key] = entry
        return entries, findings

    @cached_property
    def entries(self) -> dict[str, MasterEntry]:
        return self._entries_and_findings[0]

    @cached_property
    def duplicate_keys(self) -> dict[str, list[MasterEntry]]:
        """Config keys defined more than once across the master files: key -> every definition
        (the first is the one `entries` keeps)."""
        seen: dict[str, list[MasterEntry]] = {}
        for mf in self.masters.values():
            for key, entry in mf.entries.items():
                seen.setdefault(key, []).append(entry)
        return {k: v for k, v in seen.items() if len(v) > 1}

    @cached_property
    def _points_and_findings(self) -> tuple[list[BenchmarkPoint], list[Finding]]:
        points: list[BenchmarkPoint] = []
        findings: list[Finding] = []
        entries = self.entries
        with gc_paused():
            for entry in entries.values():
                p, f = self._expand(entry)
                points.extend(p)
                findings.extend(f)
        return points, findings

    def _expand(self, entry: MasterEntry) -> tuple[list[BenchmarkPoint], list[Finding]]:
        """`expand_entry`, reusing another view's expansion when every file it asked about
        exists here alike. The lists returned are shared: extend from them, never edit them."""
        key = (id(entry), self.layout)
        hit = _EXPANSION_CACHE.get(key)
        if hit is not None and hit[0] is entry and all(self.exists(p) == ok for p, ok in hit[1].items()):
            _touch(_EXPANSION_CACHE, key)
            return hit[2], hit[3]
        asked: dict[str, bool] = {}

        def exists(path: str) -> bool:
            ok = asked[path] = self.exists(path)
            return ok

        points, findings = expand_entry(entry, self.layout, exists)
        _put(_EXPANSION_CACHE, key, (entry, asked, points, findings), EXPANSION_CACHE_SIZE)
        return points, findings

    @cached_property
    def points(self) -> list[BenchmarkPoint]:
        return self._points_and_findings[0]

    @cached_property
    def point_findings(self) -> list[Finding]:
        """What expanding the master configs into points found (bad arms, over-long lists)."""
        return self._points_and_findings[1]

    @cached_property
    def points_by_id(self) -> dict[str, BenchmarkPoint]:
        return {p.point_id: p for p in self.points}

    # --- recipes -----------------------------------------------------------------------------
    @cached_property
    def _recipe_cache(self) -> dict[str, Recipe | None]:
        return {}

    def recipe(self, path: str) -> Recipe | None:
        """The parsed recipe at a repository path, or None when the file does not exist."""
        path = path.strip("/")
        cache = self._recipe_cache
        if path not in cache:
            # Point expansion already asked whether each launcher exists: a known-missing file
            # needs no read (most launchers of a partial checkout are missing).
            data = None if self._exists.get(path) is False else self.src.read(path)
            with gc_paused():
                cache[path] = _cached_parse("recipe", path, data, parse_recipe) if data is not None else None
        return cache[path]

    @cached_property
    def recipes(self) -> dict[str, Recipe]:
        """Every srt-slurm recipe a point references (single- and multi-node), by path."""
        out: dict[str, Recipe] = {}
        with gc_paused():  # one pause for the whole batch, not a young collection per recipe
            for p in self.points:
                for launcher in (p.launcher, p.eval_launcher):
                    if launcher is None or launcher.kind == "script" or launcher.path in out:
                        continue
                    r = self.recipe(launcher.path)
                    if r is not None:
                        out[launcher.path] = r
        return out

    @cached_property
    def recipe_files(self) -> list[str]:
        """Every srt-slurm recipe file in the tree, whether or not a point names it."""
        out: list[str] = []
        for sub in SRT_RECIPE_DIRS:
            directory = "/".join(p for p in (self.layout.scripts_dir, sub) if p)
            out.extend(p for p in self.src.list(directory) if p.endswith(_RECIPE_SUFFIXES))
        return out

    @cached_property
    def unreferenced_recipes(self) -> dict[str, Recipe]:
        """Recipe files no point references, parsed so that their errors still surface."""
        out: dict[str, Recipe] = {}
        for path in self.recipe_files:
            if path not in self.recipes:
                r = self.recipe(path)
                if r is not None:
                    out[path] = r
        return out

    @cached_property
    def bindings(self) -> Bindings:
        points, recipes = self.points, self.recipes
        with gc_paused():
            return bind_points(points, recipes, self.config.policy.framework_family)

    def _binding_of(self, point: BenchmarkPoint, recipe: Recipe):
        """One point's binding. It depends only on the point and its own recipe (spec 2.3), so a
        review binds the points it reads instead of parsing every recipe of the repository; the
        whole table is used when something already built it."""
        if "bindings" in self.__dict__:
            return self.bindings.by_point.get(point.point_id)
        cache = self.__dict__.setdefault("_point_bindings", {})
        if point.point_id not in cache:
            with gc_paused():
                cache[point.point_id] = bind_points([point], {point.launcher.path: recipe},
                                                    self.config.policy.framework_family).by_point.get(point.point_id)
        return cache[point.point_id]

    def variant_for(self, point: BenchmarkPoint) -> Variant | None:
        """The srt variant serving a point: the bound one (single node) or the selected one."""
        launcher = point.launcher
        if launcher is None or launcher.kind == "script":
            return None
        recipe = self.recipe(launcher.path)
        if recipe is None:
            return None
        if not point.multinode:
            b = self._binding_of(point, recipe)
            if b is not None and b.variant is not None:
                return next((v for v in recipe.variants if (v.selector or v.name) == b.variant), None)
            return None
        found = recipe.select(launcher.selector)
        return found[0] if len(found) == 1 else None

    def _script_text(self, path: str) -> str | None:
        """A launcher's text, decoded once: the one string every point it serves passes to the
        script analyser, whose memo then finds it without hashing the text again."""
        cache = self.__dict__.setdefault("_script_texts", {})
        if path not in cache:
            data = self.src.read(path)
            cache[path] = data.decode("utf-8", "replace") if data is not None else None
        return cache[path]

    def effective(self, point: BenchmarkPoint, variant: Variant | None = None) -> EffectiveConfig:
        """The point's effective serving config; `variant` serves it instead of the one this
        repository holds (a recipe read from the srt-slurm checkout the runner makes)."""
        variant = variant or self.variant_for(point)
        script = None
        if variant is None and point.launcher is not None and point.launcher.kind == "script":
            text = self._script_text(point.launcher.path)
            if text is not None:
                script = (point.launcher.path, text)
        return effective_config(point, self.entries.get(point.config_key), variant, script,
                                families=self.config.policy.framework_family)

    # --- findings ----------------------------------------------------------------------------
    @cached_property
    def model_findings(self) -> list[Finding]:
        """Master-config, point, recipe and binding findings (no other file kinds)."""
        out = list(self._config_pair[1])
        out.extend(self._entries_and_findings[1])
        out.extend(self._points_and_findings[1])
        for r in self.recipes.values():
            out.extend(r.findings)
        out.extend(self.bindings.findings)
        return out

    @cached_property
    def findings(self) -> list[Finding]:
        """Every parse and consistency finding, including the other file kinds."""
        out = list(self.model_findings)
        for path, recipe in self.unreferenced_recipes.items():
            out.extend(recipe.findings)
            out.append(Finding(path=path, line=1, code="unused-recipe", severity="warning",
                               message=MSG_UNREFERENCED_RECIPE.format(path=path)))
        for name in ("changelog", "golden", "models", "checklist_template", "codeowners", "thresholds"):
            doc = getattr(self, name)
            out.extend(getattr(doc, "findings", None) or [])
        out.extend(self.unavailable)
        return out

    # --- other file kinds (parsers owned by their own modules) -------------------------------
    @cached_property
    def unavailable(self) -> list[Finding]:
        """Findings for file kinds whose parser module is missing."""
        return []

    def _parser(self, module: str, func: str, what: str, path: str) -> Any:
        try:
            return getattr(importlib.import_module(f"recipes.{module}"), func)
        except (ImportError, AttributeError):
            self.unavailable.append(Finding(path=path, severity="warning", code="parser-unavailable",
                                            message=MSG_UNAVAILABLE.format(what=what, module=f"recipes.{module}")))
            return None

    def _text(self, path: str) -> str | None:
        data = self.src.read(path)
        return data.decode("utf-8", "replace") if data is not None else None

    @cached_property
    def changelog(self) -> Any:
        path = self.layout.changelog
        data = self.src.read(path)
        fn = self._parser("changelog", "parse_changelog", "the changelog", path) if data is not None else None
        return fn(data, path) if fn else None

    @cached_property
    def golden(self) -> Any:
        fn = self._parser("golden", "load_golden", "golden curves", self.layout.golden_dir)
        return fn(self.src, self.layout.golden_dir) if fn else None

    @cached_property
    def models(self) -> Any:
        path = self.layout.models_md
        text = self._text(path)
        fn = self._parser("models_md", "parse_models", "MODELS.md", path) if text is not None else None
        return fn(text, path) if fn else None

    @cached_property
    def checklist_template(self) -> Any:
        path = self.layout.checklist
        text = self._text(path)
        fn = self._parser("checklist", "parse_template", "the checklist template", path) if text is not None else None
        return fn(text, path) if fn else None

    @cached_property
    def codeowners(self) -> Any:
        path = self.layout.codeowners
        text = self._text(path)
        fn = self._parser("codeowners", "parse_codeowners", "CODEOWNERS", path) if text is not None else None
        return fn(text, path) if fn else None

    @cached_property
    def thresholds(self) -> Any:
        path = self.layout.thresholds
        data = self.src.read(path)
        fn = self._parser("thresholds", "parse_thresholds", "eval thresholds", path) if data is not None else None
        return fn(data, path) if fn else None
