"""Check 12 (Append-only): an `append-only: true` changelog entry only adds points and changes nothing that exists.

What it checks:
    The new changelog entries are recipes.changelog.diff_changelog(base, head).added. When one
    of them has `append-only: true`:
    1. It must not be mixed with regular new entries, nor combined with `evals-only` /
       `all-evals` (the sweep planner rejects both, spec 4.3), and must have the fields the
       changelog validator requires (`config-keys`, `description`, `pr-link`; spec 4.1). A
       missing `pr-link` has one value, this PR's URL, offered as a fix that adds the line.
    2. Its `config-keys` (recipes.changelog.resolve_config_keys) must select configs that
       already exist at the merge base: no new config key.
    3. Matrix comparison, computed from base_repo/head_repo.points and effective(), never read
       from the description. Points are matched by point identity (everything but the
       concurrency: config key, scenario, parallelism, spec decoding, KV offload, plus the
       concurrency itself). Every base point of a selected config must still exist at head
       (no point removed), with equal point fields (image, model, precision, runner, launcher
       and selector, dram-utilization, ...), an equal effective serving config (values only;
       line numbers may shift) and, for srt-slurm recipes, an identical resolved variant. The
       same comparison covers every existing point of any other config whose entry or recipe
       the PR changes.
    4. New points must stay inside an existing config and scenario (and the changelog
       entry's `scenario-type`, when given) and join an existing visual curve of that config
       (same scenario and sequence lengths, KV offload on/off, and for fixed-seq the same spec
       decoding), with a non-null image. An entry that adds no point fails.
    5. Isolation: every other changed file must be provably unreachable from existing points.
       Markdown (policy `append_only_inert_globs`) is inert. A recipe is fine when every
       existing point it serves resolves to an unchanged variant (so an added override block
       serves only new points). Another file under the benchmarks directory fails "cannot
       prove isolation" when an existing point's launch path reads it: its name appears in an
       existing point's resolved variant (setup script, benchmark command such as
       `srt_agentic.sh`) or in a launcher script, followed transitively through changed files.
       A changed file outside the benchmarks directory (harness code, golden curves,
       runners.yaml, workflows) cannot be proven isolated and fails.
    Multi-node points carry their whole concurrency list, so changing it changes an existing
    point (the upstream matrix has one row per multi-node arm).
Why it matters:
    Append-only sweeps run only the new points and keep the old results; that is only honest
    when nothing the old points ran has changed.
Evidence it cites:
    The changelog entry line, the master-config or recipe line of each changed field, and each
    changed file that existing points read.
Not applicable when:
    No new changelog entry has `append-only: true`.
How to fix:
    Keep existing points byte-for-byte identical (image, recipe, scripts), add only new
    concurrencies or new override blocks for new points, or drop `append-only: true` so the
    whole config is re-run.
"""
from __future__ import annotations

import fnmatch
import json
from dataclasses import dataclass, field
from typing import Any

from checks.fixes import FIXES_KEY, add_fix
from checks.result import CheckResult, Evidence
from checks.snapshot import Unavailable
from recipes.changelog import (
    KEY_CONFIG_KEYS, KEY_DESCRIPTION, KEY_PR_LINK, ChangelogDiff, ChangelogEntry, resolve_config_keys,
)
from recipes.master import SCENARIO_FIXED
from checks.text import join, plural
from checks.two_readings import two_readings_result

LIST_MAX = 3
REQUIRED_KEYS = (KEY_CONFIG_KEYS, KEY_DESCRIPTION, KEY_PR_LINK)  # spec 4.1: the validator requires them

MSG_NA_NONE = "No new changelog entry has append-only: true."
MSG_NA_ONE = "The new changelog entry has no append-only: true."
MSG_NA_MANY = "None of the {n} new changelog entries has append-only: true."
MSG_UNREADABLE = "could not verify: {path} could not be read ({reason}); re-run when the changelog is readable."
MSG_FILES_UNAVAILABLE = "could not verify: the changed-file list is unavailable ({reason}), so isolation cannot be shown."
MSG_HEAD_UNREADABLE = ("could not verify: the head changelog cannot be read ({finding}), so whether the PR adds an "
                       "append-only entry is unknown; save it as UTF-8 text within the size limit.")
UNREADABLE_CODES = frozenset({"too-large", "binary", "encoding"})
MSG_PARSE = "could not verify the append-only entry: {finding}; fix the changelog entry."
MSG_MIXED = (
    "append-only entry at {ao} is mixed with regular new {entries} at {regular}; put regular changes "
    "in a separate PR or make every new entry append-only."
)
MSG_MISSING_FIELD = "append-only entry at {where} has no `{key}`; the changelog validator rejects an entry without it."
FIX_WHY_PR_LINK = "a changelog entry needs `pr-link`, this PR's URL (Check 12)"
PR_URL = "https://github.com/{repo}/pull/{number}"
MSG_MODIFIER = "append-only entry at {where} also sets {flags}; append-only cannot be combined with eval modifiers."
MSG_UNMATCHED = "append-only entry at {where}: config-keys {patterns} {verb} no config; fix the config keys."
MSG_NEW_KEY = (
    "append-only entry at {where} selects {keys}, which {verb} not exist at the merge base; new "
    "configs need a regular changelog entry."
)
MSG_NO_NEW_POINTS = "append-only entry at {where} adds no new point to {keys}; add the new points or drop the entry."
MSG_REMOVED = "existing point {point} was removed; append-only may only add points."
MSG_CHANGED = "existing {points} {names}: {field} changed from {old} to {new}{where}; keep existing points identical or drop append-only."
MSG_UNRESOLVED_VARIANT = (
    "cannot prove isolation: {recipe} changed and existing point {point} does not resolve to one "
    "variant on {side}; keep its variant unambiguous."
)
MSG_OUTSIDE_SCENARIO = (
    "new point {point} is outside the existing scenarios of {key} (or the entry's scenario-type); "
    "append-only additions must stay inside an existing config and scenario."
)
MSG_NEW_CURVE = (
    "new point {point} starts a new curve ({curve}); append-only additions must join an existing "
    "curve of {key}."
)
MSG_NO_IMAGE = "new point {point} has no image; append-only points need the config's unchanged image."
MSG_ISOLATION = "cannot prove isolation: {path} ({why}); revert it or drop append-only so every point re-runs."
WHY_READ = "read by existing point {point}"
WHY_HARNESS = "outside the benchmark recipes and scripts, so it can reach every point"
WHY_OTHER_KEY = "master-config entry {key} changed outside the append-only selection"
MSG_PASS = (
    "Append-only entry at {where} adds {n} new {points} to {keys} ({sample}); all {m} existing "
    "{epoints} keep identical images and effective configs{recipes}."
)
MSG_PASS_RECIPES = ", and {paths} only {verb} variants for new points"

# Point fields that say where a point was written or name it, not what it runs.
_POSITION_FIELDS = {"source_path", "source_line", "arm_index", "point_id", "fingerprint", "launcher", "eval_launcher"}
# EffectiveConfig fields compared by value; the rest are bookkeeping.
_EFFECTIVE_SKIP = {"point_id", "findings", "variant"}


@dataclass
class Problems:
    texts: list[str] = field(default_factory=list)
    evidence: list[Evidence] = field(default_factory=list)

    def add(self, text: str, *evidence: Evidence) -> None:
        if text not in self.texts:
            self.texts.append(text)
        for e in evidence:
            if e not in self.evidence:
                self.evidence.append(e)


def _where(e: ChangelogEntry, key: str | None = None) -> str:
    return f"{e.path}:{e.line_of(key) if key else e.line}"


def _short(value: Any, limit: int = 60) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _first_difference(a: Any, b: Any, path: tuple = ()) -> tuple[tuple, Any, Any] | None:
    """The first key path where two plain values differ, with both sides (None when equal)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                return path + (k,), a.get(k), b.get(k)
            found = _first_difference(a[k], b[k], path + (k,))
            if found:
                return found
        return None
    return None if a == b else (path, a, b)


def effective_values(eff) -> dict:
    """An EffectiveConfig as plain values, without the lines they were written on."""
    out: dict[str, Any] = {}
    for name in type(eff).model_fields:
        if name in _EFFECTIVE_SKIP:
            continue
        value = getattr(eff, name)
        if isinstance(value, dict):
            out[name] = {k: getattr(v, "value", v) for k, v in value.items()}
        else:
            out[name] = getattr(value, "value", value)
    return out


def point_values(p) -> dict:
    out = {k: getattr(p, k) for k in type(p).model_fields if k not in _POSITION_FIELDS}
    for name in ("launcher", "eval_launcher"):
        launcher = getattr(p, name)
        out[name] = None if launcher is None else {"kind": launcher.kind, "path": launcher.path, "selector": launcher.selector}
    return out


def curve_of(p) -> tuple:
    """The visual series a point draws on within its config (spec 10.1, append-only key)."""
    spec = p.spec_decoding if p.scenario == SCENARIO_FIXED else None
    return (p.scenario, p.isl, p.osl, p.kv_offloading not in (None, "none"), spec)


def _curve_text(curve: tuple) -> str:
    scenario, isl, osl, offload, spec = curve
    parts = [scenario if isl is None else f"{scenario} {isl}/{osl}", "KV offload" if offload else "no KV offload"]
    if spec:
        parts.append(f"spec {spec}")
    return join(parts, None)


def _named(items: list[str]) -> str:
    return join(items, None, limit=LIST_MAX)


class AppendOnlyCheck:
    # --- the changelog -----------------------------------------------------------------------
    def _changelog(self, ctx) -> tuple[str, ChangelogDiff | None]:
        return ctx.changelog_diff

    @staticmethod
    def _head_unreadable(diff: ChangelogDiff):
        """The finding when the head changelog cannot be read at all (over the size cap, binary,
        not UTF-8): whether it adds an append-only entry is unknown, which is not "none"."""
        return next((f for f in diff.findings if f.code in UNREADABLE_CODES), None)

    def _suspect_unparsed(self, ctx, diff: ChangelogDiff) -> bool:
        """A changelog whose new bytes mention append-only but did not parse into an entry."""
        if not diff.findings or not diff.prefix_ok:
            return False
        base = ctx.snapshot.merge_base_tree.read(ctx.base_repo.layout.changelog) or b""
        head = ctx.snapshot.head.read(diff.path) or b""
        return b"append-only" in head[len(base):]

    def applies(self, ctx) -> str | None:
        path, diff = self._changelog(ctx)
        if diff is None:
            return None
        if any(e.append_only for e in diff.added) or self._suspect_unparsed(ctx, diff) or self._head_unreadable(diff):
            return None
        if not diff.added:
            return MSG_NA_NONE
        return MSG_NA_ONE if len(diff.added) == 1 else MSG_NA_MANY.format(n=len(diff.added))

    # --- evaluation ----------------------------------------------------------------------------
    def evaluate(self, ctx) -> CheckResult:
        path, diff = self._changelog(ctx)
        if diff is None:
            return CheckResult.failed(MSG_UNREADABLE.format(path=path, reason=ctx.snapshot.unreadable.get(path, "")),
                                      Evidence(path=path, unavailable=True))
        unreadable = self._head_unreadable(diff)
        if unreadable is not None:
            return CheckResult.failed(MSG_HEAD_UNREADABLE.format(finding=unreadable),
                                      Evidence(path=unreadable.path, line=unreadable.line, unavailable=True))
        ambiguous = two_readings_result(ctx, masters_only=True)
        if ambiguous is not None:  # the base and head points of a key read two ways are not known
            return ambiguous
        ao = [e for e in diff.added if e.append_only]
        regular = [e for e in diff.added if not e.append_only]
        if not ao:
            f = diff.findings[0]
            return CheckResult.failed(MSG_PARSE.format(finding=f), Evidence(path=f.path, line=f.line, unavailable=True))
        bad = Problems()
        if regular:
            bad.add(MSG_MIXED.format(ao=join((_where(e) for e in ao), None),
                                     entries=plural(len(regular), "entry", "entries"),
                                     regular=join((_where(e) for e in regular), None)),
                    *(Evidence(path=e.path, line=e.line, note="append-only entry") for e in ao),
                    *(Evidence(path=e.path, line=e.line, note="regular entry") for e in regular))
        fixes: list[dict] = []
        for e in ao:
            for key in REQUIRED_KEYS:
                if key not in e.key_lines:
                    bad.add(MSG_MISSING_FIELD.format(where=_where(e), key=key), Evidence(path=e.path, line=e.line))
                    if key == KEY_PR_LINK and ctx.snapshot.repo and ctx.snapshot.number:
                        # The one value it can take: this PR's own URL, added to the entry.
                        fixes += add_fix(e.path, e.line, None, KEY_PR_LINK,
                                         PR_URL.format(repo=ctx.snapshot.repo, number=ctx.snapshot.number), FIX_WHY_PR_LINK)
            flags = [name for name, on in (("evals-only", e.evals_only), ("all-evals", e.all_evals)) if on]
            if flags:
                bad.add(MSG_MODIFIER.format(where=_where(e), flags=join(flags, sep=" and ")),
                        Evidence(path=e.path, line=e.line_of(flags[0])))

        head, base = ctx.head_repo, ctx.base_repo
        selected: dict[str, set[str] | None] = {}  # key -> allowed scenarios (None = any)
        entry_of: dict[str, ChangelogEntry] = {}
        for e in ao:
            keys, unmatched = resolve_config_keys(e.config_keys, head.entries)
            if unmatched:
                bad.add(MSG_UNMATCHED.format(where=_where(e, "config-keys"), patterns=join(unmatched, None),
                                             verb=plural(len(unmatched), "selects", "select")),
                        Evidence(path=e.path, line=e.line_of("config-keys")))
            new_keys = [k for k in keys if k not in base.entries]
            if new_keys:
                bad.add(MSG_NEW_KEY.format(where=_where(e, "config-keys"), keys=join(new_keys, None),
                                           verb=plural(len(new_keys), "does", "do")),
                        Evidence(path=e.path, line=e.line_of("config-keys")),
                        *(Evidence(path=head.entries[k].path, line=head.entries[k].line, note=f"new {k}") for k in new_keys))
            for k in keys:
                if k in base.entries:
                    scen = set(e.scenario_type) if e.scenario_type else None
                    prev = selected.get(k, set())
                    selected[k] = None if scen is None or prev is None else (prev | scen)
                    entry_of.setdefault(k, e)

        paths = ctx.changed_paths
        if isinstance(paths, Unavailable):
            bad.add(MSG_FILES_UNAVAILABLE.format(reason=paths.reason), Evidence(note="changed files", unavailable=True))
            changed_files: set[str] = set()
        else:
            changed_files = set(paths)

        base_by_id = {p.point_id: p for p in base.points}
        head_by_id = {p.point_id: p for p in head.points}
        master_files = set(head.master_files) | set(base.master_files)

        # Existing points to compare: those of selected configs and of any config whose entry or
        # recipe the PR touches.
        touched_keys = set(selected) | set(ctx.affected.changed_keys) | set(ctx.affected.removed_keys)
        compare_ids = [
            pid for pid, p in base_by_id.items()
            if p.config_key in touched_keys
            or (p.launcher is not None and p.launcher.path in changed_files)
            or (p.eval_launcher is not None and p.eval_launcher.path in changed_files)
        ]
        for key in sorted(set(ctx.affected.changed_keys) - set(selected)):
            if key in base.entries and key in head.entries:
                entry = head.entries[key]
                bad.add(MSG_ISOLATION.format(path=f"{entry.path}", why=WHY_OTHER_KEY.format(key=key)),
                        Evidence(path=entry.path, line=entry.line, note=key))

        # One sentence per distinct change, naming the points it hits.
        changes: dict[tuple, list[str]] = {}
        change_ev: dict[tuple, Evidence] = {}
        for pid in compare_ids:
            bp = base_by_id[pid]
            hp = head_by_id.get(pid)
            if hp is None:
                bad.add(MSG_REMOVED.format(point=pid), Evidence(path=bp.source_path, line=bp.source_line, note="base"))
                continue
            problem = self._compare(ctx, bp, hp, changed_files)
            if problem is None:
                continue
            if isinstance(problem[0], str):
                bad.add(*problem)
                continue
            key, ev = problem
            changes.setdefault(key, []).append(pid)
            change_ev.setdefault(key, ev)
        for (fieldname, old, new, where), pids in changes.items():
            bad.add(MSG_CHANGED.format(points=plural(len(pids), "point"), names=_named(pids),
                                       field=fieldname, old=old, new=new, where=where), change_ev[(fieldname, old, new, where)])

        # New points of the selected configs.
        new_points: list[str] = []
        for key, scenarios in selected.items():
            base_pts = [p for p in base.points if p.config_key == key]
            curves = {curve_of(p) for p in base_pts if scenarios is None or p.scenario in scenarios}
            for hp in (p for p in head.points if p.config_key == key and p.point_id not in base_by_id):
                new_points.append(hp.point_id)
                ev = Evidence(path=hp.source_path, line=hp.source_line, note=hp.point_id)
                if scenarios is not None and hp.scenario not in scenarios or not any(
                    c[:3] == curve_of(hp)[:3] for c in curves
                ):
                    bad.add(MSG_OUTSIDE_SCENARIO.format(point=hp.point_id, key=key), ev)
                elif curve_of(hp) not in curves:
                    bad.add(MSG_NEW_CURVE.format(point=hp.point_id, curve=_curve_text(curve_of(hp)), key=key), ev)
                if not hp.image:
                    bad.add(MSG_NO_IMAGE.format(point=hp.point_id), ev)
        for e in ao:
            keys = [k for k, first in entry_of.items() if first is e]
            if keys and not any(head_by_id[pid].config_key in keys for pid in new_points):
                bad.add(MSG_NO_NEW_POINTS.format(where=_where(e), keys=join(keys, None)), Evidence(path=e.path, line=e.line))

        # Isolation of every other changed file.
        recipe_ok = self._isolation(ctx, changed_files - master_files - {diff.path}, base_by_id, head_by_id, bad)

        if bad.texts:
            return CheckResult.failed(" ".join(bad.texts), *bad.evidence, **({FIXES_KEY: fixes} if fixes else {}))
        existing = [pid for pid in compare_ids if pid in head_by_id]
        recipes_note = ""
        if recipe_ok:
            recipes_note = MSG_PASS_RECIPES.format(paths=join(recipe_ok, None), verb=plural(len(recipe_ok), "adds", "add"))
        e = ao[0]
        evidence = [Evidence(path=e.path, line=e.line, note="append-only entry")]
        evidence += [Evidence(path=head_by_id[pid].source_path, line=head_by_id[pid].source_line, note=f"new {pid}")
                     for pid in new_points[:LIST_MAX]]
        return CheckResult.passed(
            MSG_PASS.format(where=_where(e), n=len(new_points), points=plural(len(new_points), "point"),
                            keys=join(selected, None), sample=_named(new_points), m=len(existing),
                            epoints=plural(len(existing), "point"), recipes=recipes_note),
            *evidence, new_points=new_points,
        )

    def _compare(self, ctx, bp, hp, changed_files: set[str]) -> tuple | None:
        """The first difference between an existing point at base and at head: ((field, old, new,
        where), evidence) for a changed value, (text, evidence) for an unprovable recipe, or None."""
        pid = bp.point_id
        head_entry = ctx.head_repo.entries.get(hp.config_key)
        found = _first_difference(point_values(bp), point_values(hp))
        if found:
            keypath, old, new = found
            name = keypath[0]
            line = head_entry.line_of(name.replace("_", "-")) if head_entry is not None and name in (
                "image", "model", "precision", "runner", "framework", "model_prefix") else hp.source_line
            fieldname = ".".join(str(k) for k in keypath).replace("_", "-")
            where = f" ({hp.source_path}:{line})" if line else ""
            return ((fieldname, _short(old), _short(new), where),
                    Evidence(path=hp.source_path, line=line, note=f"{hp.config_key} {fieldname}"))
        bl, hl = bp.launcher, hp.launcher
        if bl is not None and bl.kind != "script":
            bv, hv = ctx.base_repo.variant_for(bp), ctx.head_repo.variant_for(hp)
            if bv is None or hv is None:
                if bl.path in changed_files:
                    side = "the base" if bv is None else "the head"
                    return (MSG_UNRESOLVED_VARIANT.format(recipe=bl.path, point=pid, side=side),
                            Evidence(path=bl.path, note=f"{pid} variant unresolved"))
            else:
                a = {k: v for k, v in bv.data.items() if k != "name"}
                b = {k: v for k, v in hv.data.items() if k != "name"}
                found = _first_difference(a, b)
                if found:
                    keypath, old, new = found
                    line = hv.line_of(*keypath) if new is not None else bv.line_of(*keypath)
                    vpath = hv.path if new is not None else bv.path
                    fieldname = ".".join(str(k) for k in keypath)
                    return ((fieldname, _short(old), _short(new), f" ({vpath}:{line})" if line else ""),
                            Evidence(path=vpath, line=line, note=fieldname))
        found = _first_difference(effective_values(ctx.base_repo.effective(bp)), effective_values(ctx.head_repo.effective(hp)))
        if found:
            keypath, old, new = found
            fieldname = ".".join(str(k) for k in keypath)
            launcher = hl.path if hl is not None else hp.source_path
            return ((f"effective {fieldname}", _short(old), _short(new), f" ({launcher})"),
                    Evidence(path=launcher, note=f"effective {fieldname}"))
        return None

    def _isolation(self, ctx, others: set[str], base_by_id: dict, head_by_id: dict, bad: Problems) -> list[str]:
        """Flag changed files existing points may read; returns recipes shown to serve new points only."""
        policy = ctx.config.policy
        scripts_dir = ctx.head_repo.layout.scripts_dir.rstrip("/") + "/"
        launchers: dict[str, list] = {}
        for pid, bp in base_by_id.items():
            for launcher in (bp.launcher, bp.eval_launcher):
                if launcher is not None:
                    launchers.setdefault(launcher.path, []).append(bp)
        head_launchers = {l.path for p in head_by_id.values() for l in (p.launcher, p.eval_launcher) if l is not None}

        texts: dict[str, str] = {}

        def read_text(path: str) -> str:
            """What an existing point's launch reads from `path`: its resolved variants, or the script text."""
            if path not in texts:
                users = launchers.get(path, [])
                parts: list[str] = []
                for user in users:
                    for repo, p in ((ctx.base_repo, user), (ctx.head_repo, head_by_id.get(user.point_id))):
                        if p is None or p.launcher is None or p.launcher.kind == "script":
                            continue
                        v = repo.variant_for(p)
                        if v is not None:
                            parts.append(json.dumps(v.data, default=str))
                if not parts:
                    for side in (ctx.snapshot.head, ctx.snapshot.merge_base_tree):
                        data = side.read(path)
                        if data is not None:
                            parts.append(data.decode("utf-8", "replace"))
                texts[path] = "\n".join(parts)
            return texts[path]

        recipes_ok: list[str] = []
        reached: dict[str, str] = {}  # changed file -> existing point that reads it
        frontier = [(path, users[0].point_id) for path, users in launchers.items()]
        seen_launch = {path for path, _ in frontier}
        while frontier:
            path, pid = frontier.pop()
            text = read_text(path)
            for other in sorted(others):
                if other in reached or other == path:
                    continue
                name = other.rsplit("/", 1)[-1]
                if name and name in text:
                    reached[other] = pid
                    if other not in seen_launch:
                        seen_launch.add(other)
                        frontier.append((other, pid))

        for path in sorted(others):
            if any(fnmatch.fnmatchcase(path, g) or fnmatch.fnmatchcase(path.rsplit("/", 1)[-1], g)
                   for g in policy.append_only_inert_globs):
                continue
            users = launchers.get(path)
            if users and all(u.launcher is not None and u.launcher.kind != "script" and u.launcher.path == path
                             or u.eval_launcher is not None and u.eval_launcher.path == path for u in users):
                # A recipe existing points use: proven by the per-point variant comparison above.
                if path not in recipes_ok:
                    recipes_ok.append(path)
                continue
            if users:
                bad.add(MSG_ISOLATION.format(path=path, why=WHY_READ.format(point=users[0].point_id)),
                        Evidence(path=path, note=f"launcher of {users[0].point_id}"))
            elif path in reached:
                bad.add(MSG_ISOLATION.format(path=path, why=WHY_READ.format(point=reached[path])),
                        Evidence(path=path, note=f"read by {reached[path]}"))
            elif not path.startswith(scripts_dir):
                bad.add(MSG_ISOLATION.format(path=path, why=WHY_HARNESS), Evidence(path=path))
            elif path in head_launchers:
                continue  # a recipe or script only new points use
        return [p for p in recipes_ok if not any(p in t for t in bad.texts)]
