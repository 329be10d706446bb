"""Check 7 (Deprecated models): no added, changed or re-enabled benchmark runs a deprecated model or scenario.

What it checks:
    Every (model prefix, scenario, precision) the PR submits: each benchmark point whose
    master-config entry is added, changed or re-enabled, or whose own recipe/launcher changed
    (a point reached only through a changed shared script is not resubmitted), and
    each added or modified srt-slurm / llm-d recipe file no point references (prefix, scenario
    and precision read from its path). Each one is looked up in MODELS.md of the target branch
    (never the PR's own copy, so a PR cannot un-deprecate what it runs) on the snapshot's review
    date (UTC) with recipes.models_md: dated notices take effect after their last day, a
    row's "(removed YYYY-MM-DD)" from that day, a retirement from its date; a deprecation that
    is only scheduled is not yet in force. A model or scenario the target copy does not list
    at all passes only when the PR's MODELS.md adds it as active (onboarding a new model: listed
    at the head, not at the PR's merge base);
    otherwise it is a FAIL, since an unlisted combination cannot be shown to be supported.
Why it matters:
    Deprecated scenarios cost fixed GPU hours and are no longer published; re-running them
    wastes the pool and can resurrect stale results.
Evidence it cites:
    The MODELS.md row or notice line (path:line) that decides each combination, and the
    master-config arm or recipe that submits it.
Not applicable when:
    No benchmark config or recipe is affected by the PR; or the target branch has no MODELS.md
    (the rule's policy file does not exist there, so it was not in force; checks.policy), or
    the review date precedes the rule (2026-08-03). A MODELS.md GitHub failed to return is a
    FAIL ("could not verify").
How to fix:
    Drop the deprecated config, scenario or precision from the PR, or get the deprecation
    reversed on the default branch first.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from checks.result import CheckResult, Evidence
from checks.serving_rows import affected_unknown
from checks.snapshot import Unavailable
from recipes.models_md import AGENTIC, ModelsDoc, scenario_name
from checks.text import join

MSG_NA = "No benchmark config or recipe is affected."
MSG_NO_MODELS = "could not verify: {path} was not found on the target branch; restore MODELS.md on the default branch."
MSG_BAD_MODELS = "could not verify: {finding}; fix MODELS.md on the default branch."
MSG_FILES_UNAVAILABLE = "could not verify: the changed-file list is unavailable ({reason}), so changed recipes are unknown."
MSG_DEPRECATED = "{subject} submits a deprecated combination ({reason}); remove it from this PR or reverse the deprecation on the default branch first."
MSG_UNLISTED = (
    "could not verify {what}: {reason}; list it as active in MODELS.md on the default branch "
    "or drop it from this PR."
)
MSG_ACTIVE = "In MODELS.md, {prefix} lists {scenario} as active and {deprecated}."
MSG_NONE_DEPRECATED = "no deprecated scenarios"
MSG_OTHERS_DEPRECATED = "its deprecated scenarios ({items}) are not among the affected ones"
MSG_SCHEDULED = "{what} is still active ({reason})."
MSG_NEW_ROW = "{what} is not in the target MODELS.md but this PR lists it as active ({where})."

RECIPE_NOTE = "changed recipe"
RECIPE_DIRS = ("srt-slurm-recipes", "llm-d-recipes")
RECIPE_EXTS = (".yaml", ".yml")
_SEQ = re.compile(r"^\d+k\d+k$")


@dataclass
class Unit:
    """One (prefix, scenario key, precision) combination and where the PR submits it."""

    prefix: str
    scenario: str
    precision: str | None
    method: str | None = None  # speculative method of the points ("none"), None when unknown
    sources: list[Evidence] = field(default_factory=list)

    def subject(self) -> str:
        """The config keys or recipe paths that submit this combination."""
        return join(dict.fromkeys(e.note if e.note != RECIPE_NOTE else (e.path or "") for e in self.sources), None)

    def what(self) -> str:
        scen = "Agentic coding" if self.scenario == AGENTIC else f"Single-turn {self.scenario}"
        prec = f" {self.precision}" if self.precision else ""
        return f"{self.prefix}{prec} {scen}"


def recipe_unit(path: str) -> tuple[str, str, str | None] | None:
    """(prefix, scenario key, precision) from a recipe path
    `.../<recipe dir>/<prefix>/<engine>/<sku>-<prec>[-mtp]/[<seq>/|agentx/]<file>.yaml`."""
    if not path.endswith(RECIPE_EXTS):
        return None
    parts = path.split("/")
    idx = next((i for i, p in enumerate(parts) if p in RECIPE_DIRS), None)
    if idx is None or len(parts) < idx + 4:
        return None
    rest = parts[idx + 1:]
    prefix = rest[0]
    hw = rest[2].split("-") if len(rest) > 3 else []
    precision = hw[1].lower() if len(hw) > 1 else None
    stem = rest[-1].rsplit(".", 1)[0]
    scenario = None
    for part in rest[3:-1] + [stem]:
        low = part.lower()
        if low in ("agentx", "agentic") or low.startswith("agentic"):
            scenario = AGENTIC
            break
        if _SEQ.match(low):
            scenario = low
            break
    if scenario is None:
        return None
    return prefix, scenario, precision


def _method(ctx, point) -> str | None:
    """The point's speculative method as its serving config states it ("none" without
    speculation), for MODELS.md items that deprecate one arm of a scenario."""
    if (point.spec_decoding or "none") == "none":
        return "none"
    try:
        value = ctx.head_repo.effective(point).value("spec_method")
    except Exception:  # an unreadable launch path leaves the method unknown (arm items apply)
        return None
    return str(value).lower() if value else None


def _scenario_text(key: str) -> str:
    return "agentic coding" if key == AGENTIC else f"single-turn {key}"


class DeprecatedModelsCheck:
    def _units(self, ctx) -> list[Unit]:
        units: dict[tuple, Unit] = {}

        def add(prefix: str | None, scenario: str, precision: str | None, ev: Evidence, method: str | None = None) -> None:
            if not prefix:
                return
            key = (prefix, scenario, precision.lower() if precision else None, method)
            unit = units.setdefault(key, Unit(*key))
            if ev not in unit.sources:
                unit.sources.append(ev)

        launchers: set[str] = set()
        for p in ctx.head_repo.points:
            for launcher in (p.launcher, p.eval_launcher):
                if launcher is not None:
                    launchers.add(launcher.path)
        # Only points the PR submits: entry added/changed/re-enabled or recipe changed. A point
        # touched only through a shared script is not resubmitted (the changelog drives runs).
        changed_keys = set(ctx.affected.changed_keys)
        paths = ctx.changed_paths
        changed_files = set() if isinstance(paths, Unavailable) else set(paths)
        for ap in ctx.affected.points:
            p = ap.point
            own = {l.path for l in (p.launcher, p.eval_launcher) if l is not None}
            if p.config_key not in changed_keys and not own & changed_files:
                continue
            scen = scenario_name(p.scenario, p.isl, p.osl)
            add(p.model_prefix, scen, p.precision,
                Evidence(path=p.source_path, line=p.source_line, note=p.config_key), _method(ctx, p))
        files = ctx.snapshot.files
        if not isinstance(files, Unavailable):
            for f in files:
                if f.status == "removed" or f.path in launchers:
                    continue
                found = recipe_unit(f.path)
                if found:
                    add(found[0], found[1], found[2], Evidence(path=f.path, note=RECIPE_NOTE))
        return list(units.values())

    def applies(self, ctx) -> str | None:
        if isinstance(ctx.changed_paths, Unavailable) or affected_unknown(ctx) or self._units(ctx):
            return None
        return MSG_NA

    def evaluate(self, ctx) -> CheckResult:
        unknown = affected_unknown(ctx)
        if unknown is not None:  # the submitted (model, scenario, precision) set is unknown
            return CheckResult.failed(unknown[0], unknown[1])
        paths = ctx.changed_paths
        target = ctx.target_repo
        path = target.layout.models_md
        if path in ctx.snapshot.unreadable:
            return CheckResult.failed(MSG_NO_MODELS.format(path=path), Evidence(path=path, unavailable=True))
        doc: ModelsDoc | None = target.models
        if doc is None:
            return CheckResult.failed(MSG_NO_MODELS.format(path=path), Evidence(path=path, note="target branch", unavailable=True))
        if not doc.rows:
            finding = next(iter(doc.findings), None)
            return CheckResult.failed(MSG_BAD_MODELS.format(finding=finding or f"{path} has no support matrix"),
                                      Evidence(path=path, line=finding.line if finding else None, unavailable=True))
        head_doc: ModelsDoc | None = ctx.head_repo.models
        # What the PR adds is its head against its merge base (checks.snapshot), not the target.
        base_doc: ModelsDoc | None = ctx.base_repo.models
        on = ctx.snapshot.review_date

        failures: list[str] = []
        fail_ev: list[Evidence] = []
        passes: list[str] = []
        pass_ev: list[Evidence] = []
        if isinstance(paths, Unavailable):
            failures.append(MSG_FILES_UNAVAILABLE.format(reason=paths.reason))
            fail_ev.append(Evidence(note="changed files", unavailable=True))

        by_prefix_active: dict[str, list[str]] = {}
        for unit in self._units(ctx):
            dep = doc.is_deprecated(unit.prefix, unit.scenario, on=on, precision=unit.precision, method=unit.method)
            row_ev = Evidence(path=doc.path, line=dep.line, note=f"MODELS.md {unit.prefix}")
            if dep.deprecated:
                failures.append(MSG_DEPRECATED.format(subject=unit.subject(), reason=dep.reason))
                fail_ev.extend([row_ev, *unit.sources])
            elif dep.status in ("unlisted-model", "unlisted-scenario"):
                head_dep = head_doc.is_deprecated(unit.prefix, unit.scenario, on=on, precision=unit.precision,
                                                  method=unit.method) if head_doc else None
                had = base_doc.is_deprecated(unit.prefix, unit.scenario, on=on, precision=unit.precision,
                                             method=unit.method) if base_doc and base_doc is not doc else None
                added = had is None or had.status in ("unlisted-model", "unlisted-scenario")
                if added and head_dep is not None and head_dep.status == "active" and not head_dep.deprecated:
                    passes.append(MSG_NEW_ROW.format(what=unit.what(), where=f"{head_doc.path}:{head_dep.line}"))
                    pass_ev.append(Evidence(path=head_doc.path, line=head_dep.line, note="PR's MODELS.md"))
                else:
                    failures.append(MSG_UNLISTED.format(what=unit.what(), reason=dep.reason))
                    fail_ev.extend([Evidence(path=doc.path, line=dep.line, note=f"MODELS.md {unit.prefix}"), *unit.sources])
            elif dep.status == "scheduled":
                passes.append(MSG_SCHEDULED.format(what=unit.what(), reason=dep.reason))
                pass_ev.append(row_ev)
            else:
                by_prefix_active.setdefault(unit.prefix, [])
                if unit.scenario not in by_prefix_active[unit.prefix]:
                    by_prefix_active[unit.prefix].append(unit.scenario)
                if row_ev not in pass_ev:
                    pass_ev.append(row_ev)

        if failures:
            return CheckResult.failed(" ".join(failures), *fail_ev)
        sentences = []
        for prefix, scenarios in by_prefix_active.items():
            row = doc.rows_for(prefix)[0]
            items = [i.text for i in row.deprecated_items]
            deprecated = MSG_NONE_DEPRECATED if not items else MSG_OTHERS_DEPRECATED.format(items=join(items, None))
            sentences.append(MSG_ACTIVE.format(prefix=prefix, scenario=join((_scenario_text(s) for s in scenarios), sep=" and "),
                                               deprecated=deprecated))
        return CheckResult.passed(" ".join(sentences + passes), *pass_ev)
