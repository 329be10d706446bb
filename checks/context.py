"""What all checks share for one evaluation: the snapshot plus lazily derived, cached facts."""
from __future__ import annotations

import functools
import logging
import threading
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from recipes.config import RepoConfig, read_repo_config
from recipes.errors import Finding
from recipes.model import Model

from .snapshot import PRSnapshot, Unavailable

if TYPE_CHECKING:  # written concurrently; imported lazily so this module always imports
    from recipes.repository import Repository

log = logging.getLogger(__name__)
T = TypeVar("T")
# How long a check waits for a shared fact another thread is computing before computing it too.
LOCK_WAIT_S = 120.0


class cached_property(functools.cached_property):  # noqa: N801 - a drop-in for functools'
    """functools.cached_property computed at most once even when checks run in several threads
    (the engine evaluates them concurrently when the snapshot reads lazily)."""

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        cache = instance.__dict__
        name = self.attrname
        if name in cache:
            return cache[name]
        return instance._once(name, cache, name, lambda: self.func(instance))

# Keys that record where a value was written, not what it is: they shift when an unrelated
# entry above is edited, so they must not make an entry look changed.
_POSITION_KEYS = frozenset({"line", "lines", "source_line", "origin", "origins", "source", "span"})
REASON_MODELS_ENTRY = "{path}: entry {key} changed (read by {where})"
MSG_SIGNOFF_UNREADABLE = (
    "could not verify: no sign-off was found, but the PR's comments could not all be read ({reason}); "
    "re-run the verification once GitHub answers."
)


class AffectedPoint(Model):
    """A head-side benchmark point the PR can change, and why."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    point: Any
    reasons: list[str]
    # "serving": what it serves may change (every check that judges points reads it);
    # "client": only what its benchmark client runs changed (recipes.launch.path.trace_affected): only the
    # client's check (Check 9) reads it.
    scope: str = "serving"

    @property
    def config_key(self) -> str:
        return getattr(self.point, "config_key", "")


class Affected(Model):
    """The benchmark points a PR affects (head side), with the config keys involved."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    points: list[AffectedPoint] = Field(default_factory=list)
    # Config keys whose master-config entry was added or changed (head side).
    changed_keys: list[str] = Field(default_factory=list)
    added_keys: list[str] = Field(default_factory=list)
    removed_keys: list[str] = Field(default_factory=list)
    # Base points with no identical point at head (removed or altered).
    removed_points: list[Any] = Field(default_factory=list)
    # Set when the changed-file list was unavailable, so only master-config edits were seen.
    unavailable: str | None = None
    # Added or changed entries too large to expand (recipes.points.MAX_ENTRY_POINTS): their
    # points are unknown, so the checks that judge points cannot verify them.
    unverifiable: list[Finding] = Field(default_factory=list)

    @property
    def serving_points(self) -> list[AffectedPoint]:
        """The affected points whose serving may change (not the client-only ones)."""
        return [p for p in self.points if p.scope == "serving"]

    @property
    def config_keys(self) -> list[str]:
        """Every head config key with at least one affected point, sorted."""
        return sorted({p.config_key for p in self.points})

    @property
    def is_empty(self) -> bool:
        return not self.points and not self.removed_keys and not self.removed_points and not self.unverifiable


def _comparable(value: Any) -> Any:
    """A plain, position-free form of a parsed entry, for base-vs-head equality."""
    if hasattr(value, "raw") and isinstance(getattr(value, "raw"), dict):
        value = value.raw
    elif isinstance(value, BaseModel):
        value = value.model_dump()
    if isinstance(value, dict):
        return {k: _comparable(v) for k, v in value.items() if str(k) not in _POSITION_KEYS}
    if isinstance(value, (list, tuple)):
        return [_comparable(v) for v in value]
    if isinstance(value, BaseModel):
        return _comparable(value.model_dump())
    return value


def _entry_changed(head: Any, base: Any) -> bool:
    """Whether a master entry changed. Entries carry the YAML mapping they were read from
    (`_raw`, plain data without positions): equal mappings are equal entries, compared at C
    speed; only entries without one fall back to the position-free model form."""
    a, b = getattr(head, "_raw", None), getattr(base, "_raw", None)
    if isinstance(a, dict) and isinstance(b, dict):
        return a != b
    return _comparable(head) != _comparable(base)


def _read(src: Any, path: str) -> bytes | None:
    try:
        return src.read(path)
    except OSError:
        return None


def _launcher_path(point: Any, attr: str = "launcher") -> str | None:
    """The repository path of a point's recipe or launcher script, without a `:selector`."""
    launcher = getattr(point, attr, None)
    if launcher is None:
        return None
    if not isinstance(launcher, str):
        launcher = getattr(launcher, "path", None) or getattr(launcher, "repo_path", None)
        if not isinstance(launcher, str):
            return None
    head, sep, tail = launcher.rpartition(":")
    if sep and "/" not in tail and tail and not tail.endswith((".yaml", ".yml", ".sh")):
        return head
    return launcher


def _point_identity(point: Any) -> tuple:
    return (
        getattr(point, "config_key", None),
        getattr(point, "fingerprint", None),
        repr(getattr(point, "conc", None)),
        repr(getattr(point, "conc_list", None)),
    )


def _removed_points(base_points: list, head_points: list) -> list:
    """Base points that no head point matches (`_point_identity`). A point object both views
    hold (an unchanged entry is expanded once per process, recipes.repository) matches itself,
    and an identity starts with the config key, so identities, and the fingerprints in them,
    are worked out only for the other base points and the head points of their keys."""
    shared = {id(p) for p in head_points}
    others = [p for p in base_points if id(p) not in shared]
    keys = {getattr(p, "config_key", None) for p in others}
    head_ids = {_point_identity(p) for p in head_points if getattr(p, "config_key", None) in keys}
    return [p for p in others if _point_identity(p) not in head_ids]


class ReviewContext:
    """Everything the checks share. Each property is computed at most once per evaluation."""

    def __init__(self, snapshot: PRSnapshot):
        self.snapshot = snapshot
        self._memo: dict[str, Any] = {}
        self._locks: dict[str, threading.RLock] = {}
        self._locks_lock = threading.Lock()

    def lock(self, key: str) -> threading.RLock:
        """A reentrant lock of this evaluation by name, for a fact several checks' threads may
        update in place (recipes.launch.path.branch_words.chain_words)."""
        return self._lock_for("lock:" + key)

    def _lock_for(self, key: str) -> threading.RLock:
        with self._locks_lock:
            return self._locks.setdefault(key, threading.RLock())

    def _once(self, lock_key: str, cache: dict, key: str, fn: Callable[[], T]) -> T:
        """`cache[key] = fn()` computed by one thread while the others wait. A wait past
        LOCK_WAIT_S (two facts waiting on each other) computes it again rather than hang."""
        lock = self._lock_for(lock_key)
        if not lock.acquire(timeout=LOCK_WAIT_S):
            log.warning("waited %s s for %s; computing it again", LOCK_WAIT_S, key)
            return cache.setdefault(key, fn())
        try:
            if key not in cache:
                cache[key] = fn()
            return cache[key]
        finally:
            lock.release()

    # --- configuration -------------------------------------------------------------------
    @cached_property
    def _config_and_findings(self) -> tuple[RepoConfig, list[Finding]]:
        # An absent or unreadable file leaves the snapshot's configuration in force; its problems
        # reach the verdict (`Verdict.configuration`) and, through the pipeline, standard error.
        return read_repo_config(self.snapshot.target_tree, default=self.snapshot.config)

    @cached_property
    def config(self) -> RepoConfig:
        """Defaults merged with the target branch's `.github/infx-review.yml` (the PR cannot
        loosen its own policy); the snapshot's configuration when the file is absent."""
        return self._config_and_findings[0]

    @cached_property
    def config_findings(self) -> list[Finding]:
        return self._config_and_findings[1]

    # --- repositories --------------------------------------------------------------------
    def _repository(self, src: Any) -> "Repository":
        from recipes.repository import Repository

        return Repository(src, self.config)

    @cached_property
    def head_repo(self) -> "Repository":
        return self._repository(self.snapshot.head)

    @cached_property
    def base_repo(self) -> "Repository":
        """The repository at the PR's merge base: compare it with `head_repo` to ask "what did
        this PR change?" (checks.snapshot, docs/baselines.md). Never the rule."""
        return self._repository(self.snapshot.merge_base_tree)

    @cached_property
    def target_repo(self) -> "Repository":
        """The repository at the target branch's tip: "what is the rule?" (checks.snapshot).
        Never compared with the head to find what the PR changed."""
        if self.snapshot.target is None or self.snapshot.target is self.snapshot.merge_base_tree:
            return self.base_repo  # the PR starts on the target tip: one tree, read once
        return self._repository(self.snapshot.target)

    # --- the diff ------------------------------------------------------------------------
    @cached_property
    def changelog_diff(self) -> tuple[str, Any]:
        """(head changelog path, recipes.changelog.ChangelogDiff or None when GitHub could not
        return the file): the entries the PR appends, read by Checks 12 and 15."""
        from recipes.changelog import diff_changelog

        path = self.head_repo.layout.changelog
        if path in self.snapshot.unreadable:
            return path, None
        base = self.snapshot.merge_base_tree.read(self.base_repo.layout.changelog)
        return path, diff_changelog(base, self.snapshot.head.read(path), path)

    @cached_property
    def changed_paths(self) -> frozenset[str] | Unavailable:
        """Every changed path, with both sides of a rename or copy."""
        files = self.snapshot.files
        if isinstance(files, Unavailable):
            return files
        paths: set[str] = set()
        for f in files:
            paths.add(f.path)
            if f.previous_path:
                paths.add(f.previous_path)
        return frozenset(paths)

    # --- the sign-off --------------------------------------------------------------------
    @cached_property
    def signoff_doc(self) -> Any | None:
        """recipes.checklist.SignoffDoc of the sign-off body, or None without a sign-off."""
        if self.snapshot.signoff is None:
            return None
        from recipes.checklist import parse_signoff

        return parse_signoff(self.snapshot.signoff.body)

    @cached_property
    def signoff_unreadable(self) -> str | None:
        """When no sign-off was found and the comments could not all be read: the reason to
        report (the sign-off may exist unseen, so "no sign-off" would be a false statement)."""
        comments = self.snapshot.comments
        if self.snapshot.signoff is not None or not isinstance(comments, Unavailable):
            return None
        return MSG_SIGNOFF_UNREADABLE.format(reason=comments.reason)

    def signoff_unreadable_result(self) -> Any:
        """The FAIL result for a check that needs the sign-off when `signoff_unreadable` is set."""
        from .result import CheckResult, Evidence

        return CheckResult.failed(self.signoff_unreadable or "", Evidence(note="PR comments", unavailable=True))

    @cached_property
    def additional_detail(self) -> str:
        """The sign-off's "Additional detail section" text ("" when absent)."""
        doc = self.signoff_doc
        return (getattr(doc, "additional_detail", None) or "") if doc is not None else ""

    # --- affected benchmark points ---------------------------------------------------------
    @cached_property
    def affected(self) -> Affected:
        """Head points whose launch path the PR changes: the one rule of recipes.launch.path.launch_path
        (docs/architecture.md "What a PR affects"; spec 12 "affected" for Checks 6-15)."""
        from recipes.launch.path import launch_path as lp
        from recipes.launch.path.reach import affected_names, blind_files, reach_names
        from recipes.launch.path.runner_launch import chain_path, runner_chain
        from recipes.launch.path.srt_checkout import copied_recipe, is_cloned
        from recipes.models_yaml import entry_changed

        base_entries = self.base_repo.entries
        head_entries = self.head_repo.entries
        added = sorted(k for k in head_entries if k not in base_entries)
        removed = sorted(k for k in base_entries if k not in head_entries)
        changed = sorted(k for k in head_entries if k in base_entries and _entry_changed(head_entries[k], base_entries[k]))
        changed_set = set(changed)
        added_set = set(added)

        paths = self.changed_paths
        unavailable = paths.reason if isinstance(paths, Unavailable) else None
        changed_files = set() if isinstance(paths, Unavailable) else set(paths)
        files = [] if isinstance(self.snapshot.files, Unavailable) else list(self.snapshot.files)

        head_points = list(self.head_repo.points)
        # Each point's launcher and eval launcher paths, worked out once (read again below).
        own_paths = [(_launcher_path(p), _launcher_path(p, "eval_launcher")) for p in head_points]
        launchers = {path for pair in own_paths for path in pair} - {None}
        # Files that can be on a launch path without being a point's own launcher or recipe.
        client = tuple(self.head_repo.layout.rel(d) for d in self.config.policy.benchmark_client_paths)
        runnable = sorted(p for p in changed_files - launchers
                          if p.endswith(lp.SHELL_SUFFIXES) or "." not in p.rsplit("/", 1)[-1]
                          or (p.endswith(lp.PYTHON_SUFFIX) and not p.startswith(client)))
        changes: dict[str, lp.FileChange] = {}
        for f in files:
            for path in (f.path, f.previous_path):
                if path in runnable and path not in changes:
                    changes[path] = lp.changed_file(self, f) if path == f.path else lp.file_change(
                        self.snapshot.merge_base_tree, self.snapshot.head, path, f.status, f.previous_path)
        live = {p for p, c in changes.items() if not c.empty}
        # Only a filter (recipes.launch.path.reach): a change inside functions counts through their names.
        names = (affected_names(self.head_repo, self.snapshot.head, {p: changes[p] for p in live}) or None
                 if live else None)

        recipe_edits = tuple(p for p in changed_files if p.endswith((".yaml", ".yml")))
        # A settings file a shell script names (models.yaml, read by server_sglang.sh's program):
        # only these make the runner-chosen chains worth walking when no script changed.
        masters = set(self.head_repo.master_files)
        others = [p for p in recipe_edits if p not in masters]
        mentioned = reach_names(self.head_repo, self.snapshot.head, others) if others else set()
        settings_edits = {p for p in others if len(mentioned) > len({o.rsplit("/", 1)[-1] for o in others})}
        # Only runner entry scripts changed: the runner-chosen chain of a point of another label
        # cannot run them (recipes.launch.path.launch_path.only_runner_entries).
        entries_only = lp.only_runner_entries(self.head_repo, live)
        shared_roots: dict = {}
        # Where the text cannot see how a launch reaches a changed file, the trace decides
        # (recipes.launch.path.trace_affected.probe): shell files that run a word built from expansions that
        # can name one, and the names that lead to them (recipes.launch.path.reach.blind_files).
        tracing = self.config.policy.trace_affected
        # Other changed files a launch may read (an argument or settings file; not a master
        # config, the changelog, a launcher, a script or the benchmark client's): only a trace
        # tells, so they are probed where a script names them.
        data = {p for p in changed_files - launchers - masters - set(runnable)
                if p != self.head_repo.layout.changelog and not p.startswith(client)} if tracing else set()
        data_names = reach_names(self.head_repo, self.snapshot.head, data) if data else set()
        # A script changed only inside functions is reached through their names, which the text
        # follows (recipes.launch.path.reach.affected_names): only the other changed scripts are probed.
        whole = {p for p in live if not (changes[p].whole is None and not changes[p].top)}
        blind = reach_names(self.head_repo, self.snapshot.head, blind_files(
            self.head_repo, self.snapshot.head, whole)) if whole and tracing else set()
        blind_roots: dict = {}
        probed = whole | data  # the changed files a probe may find a point's trace reading
        data_roots: dict = {}
        probes: list[tuple[Any, set[str]]] = []  # (point, the changed files its text path does not hold)
        out: list[AffectedPoint] = []
        # Points affected through files other points share: (index in `out`, own reasons before them).
        shared_files: list[tuple[int, int]] = []
        for point, (launcher, eval_launcher) in zip(head_points, own_paths):
            key = getattr(point, "config_key", "")
            reasons: list[str] = []
            if key in added_set:
                reasons.append(f"master-config entry {key} added")
            elif key in changed_set:
                reasons.append(f"master-config entry {key} changed")

            if launcher and launcher in changed_files:
                reasons.append(f"{launcher} changed")
            elif recipe_edits and is_cloned(point.launcher):
                # The file a runner copies into its srt-slurm checkout at the CONFIG_FILE path.
                copied = copied_recipe(self, point, recipe_edits)
                if copied in changed_files:
                    launcher = copied
                    reasons.append(f"{copied} changed (copied into the srt-slurm checkout)")
            extras = [eval_launcher, *(getattr(point, "referenced_paths", ()) or ())]
            own = {launcher} | {e for e in extras if e}
            for extra in dict.fromkeys(e for e in extras if e):
                if extra in changed_files and extra != launcher:
                    reasons.append(f"referenced {extra} changed")
            # The reasons so far are the point's own (its entry, its launcher): those stand. The
            # ones below come from files a launch path may share; the trace decides them.
            n_own, models_hit = len(reasons), False
            # The changed files the point's textual path holds, of those a probe may trace (only
            # they are read below; a path holds hundreds of files, a PR changes a few).
            seen: set[str] = set()
            if live:
                roots = lp.affected_roots(self, point, names, shared_roots)
                if roots.files or roots.commands:
                    path = lp.launch_path(self, roots)
                    seen = {p for p in probed if p in path.files}
                    reasons.extend(lp.path_reasons(path, changes, skip=own, point=point))
                if tracing and len(reasons) == n_own and whole - seen - own and (roots.files or roots.commands):
                    probes.append((point, probed - seen - own))
            # The text names a changed file the path does not run (`cp lib.sh /tmp/x.sh; bash
            # /tmp/x.sh`, `cat args.txt`), or a file on its way runs a built word that can name
            # one: the trace tells whether the launch depends on it.
            if tracing and len(reasons) == n_own and (not probes or probes[-1][0] is not point) and (
                    (data - own and data_names and lp.affected_roots(self, point, data_names, data_roots).files)
                    or (whole - seen - own and blind and lp.affected_roots(self, point, blind, blind_roots).files)):
                # Only the changed files its textual path does not hold: the text judged the rest.
                probes.append((point, probed - seen - own))
            if (live or settings_edits) and getattr(point, "launcher", None) is None:
                skip = entries_only and not settings_edits and not live & set(lp.label_runner_scripts(self, point.runner))
                chain = None if skip else runner_chain(self, point)
                if chain is not None and live and (names is None or any(
                        p.rsplit("/", 1)[-1] in names for p, _ in chain.files)):
                    # The script the runner picks and what it runs (recipes.launch.path.runner_launch); of a chain
                    # followed only up to a hop, the part before it.
                    reasons.extend(lp.path_reasons(chain_path(self, chain), changes, skip=own, point=point))
                for holder, line, entry in (chain.entries if chain is not None else ()):
                    # The models-file entry the chain's server script reads (recipes.models_yaml).
                    if entry.path in settings_edits and entry_changed(_read(self.snapshot.merge_base_tree, entry.path), entry):
                        reasons.append(REASON_MODELS_ENTRY.format(path=entry.path, key=entry.key,
                                                                  where=f"{holder}:{line}"))
                        models_hit = True
            if reasons:
                out.append(AffectedPoint(point=point, reasons=reasons))
                if n_own == 0 and reasons and not models_hit:
                    shared_files.append((len(out) - 1, n_own))

        if (shared_files or probes) and self.config.policy.trace_affected:
            # The points the PR surely changes (their own entry or launcher) are traced first:
            # the checks need their traces, and the re-judging below may spend the budget.
            from recipes.launch.path.trace_affected import head_trace
            narrowed = {i for i, _ in shared_files}
            for i, ap in enumerate(out):
                if i not in narrowed:
                    head_trace(self, ap.point)
        if shared_files and self.config.policy.trace_affected:
            # Affected only through shared launch files: the point's trace at the base and at
            # the head decides (recipes.launch.path.trace_affected; README "What a PR affects").
            from recipes.launch.path.trace_affected import CHECK_RESERVE, narrow
            out = narrow(self, out, shared_files, CHECK_RESERVE)
        if probes:
            # With what the budget leaves after the candidates: a probed point whose trace reads
            # a changed file is then judged like them (recipes.launch.path.trace_affected.probe).
            from recipes.launch.path.trace_affected import narrow, probe
            listed = {id(ap.point) for ap in out}
            found = []
            for point, unseen in probes:
                why = probe(self, point, unseen) if id(point) not in listed else []
                if why:
                    found.append(AffectedPoint(point=point, reasons=why))
            if found:
                # One the budget leaves untraced at a tree is not kept: the probes only spend what
                # the candidates left (recipes.launch.path.trace_affected.probe logs what it skips).
                from recipes.launch.path.trace_affected import PROBE_RESERVE, REASON_BUDGET, TRACE_BUDGET_STEPS
                spent = REASON_BUDGET.format(steps=TRACE_BUDGET_STEPS)
                out = out + [ap for ap in narrow(self, found, [(i, 0) for i in range(len(found))], PROBE_RESERVE)
                             if ap.reasons[-1:] != [spent]]
        removed_points = _removed_points(self.base_repo.points, head_points)
        entries_at = {(e.path, e.line): k for k, e in head_entries.items() if k in changed_set | added_set}
        capped = [f for f in self.head_repo.point_findings
                  if f.code == "points-cap" and (f.path, f.line) in entries_at]
        return Affected(
            unverifiable=capped,
            points=out,
            changed_keys=sorted(changed_set | added_set),
            added_keys=added,
            removed_keys=removed,
            removed_points=removed_points,
            unavailable=unavailable,
        )

    # --- sharing between checks ------------------------------------------------------------
    def memo(self, key: str, fn: Callable[[], T]) -> T:
        """`fn()` computed once per evaluation under `key` (e.g. Check 1's chosen sweep run,
        reused by Checks 2 and 14). Exceptions are not cached. Safe across threads."""
        if key in self._memo:
            return self._memo[key]
        return self._once("memo:" + key, self._memo, key, fn)
