"""What the serving-config checks (7-13) report about the views of recipes/launch/path/serving.py: the
"could not verify" rows when the changed files, the affected points or a point's launch path
cannot be known, the evidence of a pass, and the lists in a reason."""
from __future__ import annotations

import re
from typing import Any, Iterable

from recipes.launch.path.launch_path import launch_path, point_roots
from checks.result import CheckResult, Evidence
from recipes.launch.path.serving import ServingView
from checks.snapshot import Unavailable
from checks.two_readings import two_readings
from recipes.points import TOO_MANY_POINTS

MSG_CHANGED_FILES_UNAVAILABLE = (
    "could not verify: the PR's changed-file list was unavailable ({reason}), so changed recipes and "
    "scripts are unknown; re-run the review once GitHub returns the file list."
)
MSG_MASTER_UNREADABLE = ("could not verify: the head master config {path} cannot be read ({why}), so the PR's "
                         "benchmark points are unknown; fix the file.")
AFFECTED_UNKNOWN_MEMO = "affected_unknown"
MSG_UNVERIFIABLE_ENTRY = "could not verify: {message}; split the entry or shorten its concurrency lists."
MSG_POINTS_CAPPED = "could not verify: {finding}, so the PR's benchmark points are unknown; list real concurrencies."


def affected_unknown(ctx: Any) -> tuple[str, Evidence] | None:
    """Why the affected points cannot be known although the file list is in: a head master
    config that could not be read or parsed at all (its points would silently vanish), or a
    config key defined in two master files the PR touches, or a symbolic link the PR adds or
    re-points (checks.two_readings: the bot picks neither reading). None when the points are known."""
    def compute() -> tuple[str, Evidence] | None:
        head = ctx.head_repo
        unreadable = ctx.snapshot.unreadable
        for path in head.master_files:
            if path in unreadable:
                return (MSG_MASTER_UNREADABLE.format(path=path, why=unreadable[path]), Evidence(path=path, unavailable=True))
        for path, mf in head.masters.items():
            bad = next((f for f in mf.findings if f.severity == "error"), None)
            if bad is not None and not mf.entries:
                return (MSG_MASTER_UNREADABLE.format(path=path, why=str(bad)),
                        Evidence(path=bad.path, line=bad.line, unavailable=True))
        capped = next((f for f in head.point_findings if f.code == TOO_MANY_POINTS), None)
        if capped is not None:
            return (MSG_POINTS_CAPPED.format(finding=str(capped)), Evidence(path=capped.path, line=capped.line, unavailable=True))
        found = two_readings(ctx)
        if found:
            return (" ".join(r.message for r in found), found[0].evidence[-1])
        return None
    return ctx.memo(AFFECTED_UNKNOWN_MEMO, compute)


def changed_files_unavailable(ctx: Any) -> CheckResult | None:
    """The FAIL a blocking check gives when the changed-file list could not be read, or the
    affected points cannot be known (`affected_unknown`)."""
    paths = ctx.changed_paths
    reason = paths.reason if isinstance(paths, Unavailable) else ctx.affected.unavailable
    if reason:
        return CheckResult.failed(MSG_CHANGED_FILES_UNAVAILABLE.format(reason=reason),
                                  Evidence(note="changed files", unavailable=True))
    unknown = affected_unknown(ctx)
    if unknown is not None:
        return CheckResult.failed(unknown[0], unknown[1])
    capped = ctx.affected.unverifiable
    if capped:
        f = capped[0]
        return CheckResult.failed(MSG_UNVERIFIABLE_ENTRY.format(message=f.message),
                                  Evidence(path=f.path, line=f.line, unavailable=True))
    return None


MSG_RUNNER_CHOSEN = (
    "could not verify {key}: it names no recipe or launcher file; the runner picks its script at run time "
    "({how}), a path the bot does not follow, so {what} is unknown; name the launcher in the "
    "master config (CONFIG_FILE or a launcher the bot can read)."
)
MSG_RUNNER_REF = "{holder}:{line} runs {ref}"
MSG_RUNNER_HOP = (
    "could not verify {key}: it names no recipe or launcher file; the runner picks its script at run time and "
    "the bot followed the chain to a hop it cannot follow ({hop}), so {what} is unknown; make that hop plain "
    "(a script committed in the repository, named by values the sweep sets)."
)
MSG_NO_RUNNER = "no runner script of {runner} was found"
WHAT_SERVER = "what the server runs"


def launch_unknown(v: ServingView) -> bool:
    """No recipe, launcher or script the bot can read serves the point: the runner picks one
    at run time (AMD disagg, TileRT), so nothing of its launch path is evidence."""
    return v.variant is None and v.launcher_path is None and not v.scripts


def runner_chosen(ctx: Any, v: ServingView, what: str = WHAT_SERVER) -> str:
    """Why a point with no launcher file cannot be verified: the runner's reference the bot
    cannot resolve (recipes.launch.path.launch_path), the hop of its chain it could not follow
    (recipes.launch.path.runner_launch), or that no runner script exists."""
    if v.runner_gap is not None:
        return MSG_RUNNER_HOP.format(key=v.config_key, hop=v.runner_gap.why, what=what)
    roots = point_roots(ctx, v.point, runners=True)
    unresolved = launch_path(ctx, roots).unresolved if roots.files else []
    how = (MSG_RUNNER_REF.format(holder=unresolved[0][0], line=unresolved[0][1], ref=unresolved[0][2]) if unresolved
           else MSG_NO_RUNNER.format(runner=v.point.runner))
    return MSG_RUNNER_CHOSEN.format(key=v.config_key, how=how, what=what)


def first_unavailable(views: Iterable[ServingView], *, launch: Any = None) -> CheckResult | None:
    """A "could not verify" FAIL for the first view whose serving config is unknown. A check
    that reads the launch path passes its review context as `launch`: then also for a view
    whose setup script is missing from the repository or whose launcher the runner picks at
    run time (the row names the runner's line)."""
    for v in views:
        if v.unavailable:
            return CheckResult.failed(v.unavailable, v.unavailable_evidence or Evidence(unavailable=True))
        if launch is None:
            continue
        if v.script_gap:
            return CheckResult.failed(v.script_gap, v.script_gap_evidence or Evidence(unavailable=True))
        if launch_unknown(v):
            gap = v.runner_gap
            return CheckResult.failed(runner_chosen(launch, v),
                                      Evidence(path=gap.path if gap else v.point.source_path,
                                               line=gap.line if gap else v.point.source_line, unavailable=True))
    return None


def launch_evidence(views: Iterable[ServingView]) -> list[Evidence]:
    """Each distinct recipe or launcher file the views run, once (the evidence of a pass)."""
    paths = dict.fromkeys(v.launcher_path or v.point.source_path for v in views)
    return [Evidence(path=p) for p in paths if p]


def dedupe(items: Iterable[tuple[str, Evidence]]) -> list[tuple[str, Evidence]]:
    """Problems repeated across points that share one recipe line, reported once."""
    seen: dict[tuple, tuple[str, Evidence]] = {}
    for text, ev in items:
        seen.setdefault((text, ev.path, ev.line), (text, ev))
    return list(seen.values())


def model_file_regex(ctx: Any) -> re.Pattern:
    return re.compile("|".join(f"(?:{p})" for p in ctx.config.policy.model_file_patterns) or r"(?!x)x")
