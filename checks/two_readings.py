"""One reading or none: where a PR gives two readings of one thing, the bot does not pick one.

Two readings:
- a config key defined in more than one master config, one of which the PR touches (which
  definition runs is ambiguous, and the second one would never be read);
- a symbolic link the PR adds or re-points (its merge base has no link there, or one with
  another target) on a path the checks read: the path CODEOWNERS and the diff name is not the
  file whose bytes the checks read, so an edit can sit in a file nobody owning the path saw.

Every row that depends on such a thing FAILs naming both places (checks.serving_rows
`affected_unknown` for the serving checks, and Checks 2, 6 and 12 for the master entries they
read); Check 0 asks for the owners of both the link and its target (`link_targets`). A link
already on the target branch with the same target (the real history has runners that are links
to others) is the repository's, not the PR's, and is read through as before.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import Any

from checks.result import CheckResult, Evidence
from checks.snapshot import Unavailable
from checks.text import join
from recipes.source import link_resolution, links_of

MEMO = "two_readings"
MSG_DUPLICATE_KEY = ("could not verify: config key {key} is defined in more than one master config ({where}), "
                     "so which definition runs is ambiguous; define each config key once.")
MSG_LINK = ("could not verify: this PR {how}, so the path CODEOWNERS and the diff name ({link}) is not the "
            "file the checks read ({target}); the bot reads neither as the answer: make {link} a regular "
            "file{back}.")
MSG_LINK_MADE = "makes {link} a symbolic link to {target}"
MSG_LINK_REPOINTED = "re-points the symbolic link {link} to {target} (it pointed to {old})"
MSG_LINK_BACK = " or point it back to {old}"
# What the checks read: configs, recipes, scripts and programs, and the folders of the benchmark
# tree (a linked folder has no suffix). Documentation, images and tool folders such as
# `.claude/skills/` have one reading for the bot, so a link among them is not two.
READ_SUFFIXES = (".yaml", ".yml", ".sh", ".bash", ".py", ".json", ".toml", ".patch", ".diff", ".env", ".cfg",
                 ".ini", ".j2", ".jinja")
READ_DIRS = ("runners", "utils", "benchmarks", "configs", "infx")


@dataclass(frozen=True)
class Reading:
    """One thing the PR gives two readings of: the sentence naming both places and the
    evidence at each."""

    message: str
    evidence: tuple[Evidence, ...]
    link: str | None = None  # for a link: the link's path and the path it resolves to
    target: str | None = None
    masters: bool = True  # whether it is about the master configs (a key, or a link at one)


def _read_by_checks(path: str, layout: Any) -> bool:
    """Whether a check may read the bytes at (or below) `path`: the files the repository model
    parses, anything in the benchmark tree's folders, and configs, scripts and programs."""
    if path in (layout.models_md, layout.checklist, layout.codeowners, layout.thresholds, layout.changelog):
        return True
    dirs = {layout.configs_dir, layout.scripts_dir, layout.golden_dir, layout.waiver_dir,
            *(layout.rel(d) for d in READ_DIRS), *READ_DIRS}
    return _under_any(dirs, path) or path.lower().endswith(READ_SUFFIXES)


def _under(directory: str, *paths: str) -> bool:
    return any(p == directory or p.startswith(directory + "/") for p in paths)


def _under_any(directories: set[str], path: str) -> bool:
    return any(_under(d, path) for d in directories if d)


def _links(tree: Any) -> dict[str, str]:
    try:
        return links_of(tree)
    except OSError:  # an unlistable side: its links are unknown, and its reads fail on their own
        return {}


def _link_readings(ctx: Any) -> list[Reading]:
    snap = ctx.snapshot
    head = _links(snap.head)
    if not head:
        return []
    base = _links(snap.merge_base_tree)
    target = _links(snap.target_tree) if snap.target is not None else base
    layout = ctx.head_repo.layout
    masters = ctx.head_repo.master_files
    out: list[Reading] = []
    for link, text in sorted(head.items()):
        if base.get(link) == text or target.get(link) == text:
            continue  # the repository's link, read through as before
        resolved, problem = link_resolution(link, head)
        if resolved is None:
            continue  # a link out of the tree or a loop: unreadable, reported as such (snapshot.unreadable)
        if not (_read_by_checks(link, layout) or _read_by_checks(resolved, layout)):
            continue
        old = base.get(link)
        if old is None:
            how, back = MSG_LINK_MADE.format(link=link, target=resolved), ""
        else:
            was = posixpath.normpath(posixpath.join(posixpath.dirname(link), old))
            how = MSG_LINK_REPOINTED.format(link=link, target=resolved, old=was)
            back = MSG_LINK_BACK.format(old=was)
        message = MSG_LINK.format(how=how, link=link, target=resolved, back=back)
        out.append(Reading(message, (Evidence(path=link, note=f"symbolic link to {text}", unavailable=True),
                                     Evidence(path=resolved, note=f"read through {link}", unavailable=True)),
                           link=link, target=resolved,
                           masters=bool({link, resolved} & set(masters) or _under(layout.configs_dir, link, resolved))))
    return out


def _key_readings(ctx: Any) -> list[Reading]:
    head = ctx.head_repo
    paths = ctx.changed_paths
    changed = frozenset() if isinstance(paths, Unavailable) else paths
    out: list[Reading] = []
    for key, defs in sorted(head.duplicate_keys.items()):
        if any(d.path in changed for d in defs):
            where = join((f"{d.path}:{d.line}" for d in defs), None)
            out.append(Reading(MSG_DUPLICATE_KEY.format(key=key, where=where),
                               tuple(Evidence(path=d.path, line=d.line, note=f"{key} defined here", unavailable=True)
                                     for d in defs)))
    return out


def two_readings(ctx: Any) -> list[Reading]:
    """Everything the PR gives two readings of (duplicate config keys first, then links)."""
    return ctx.memo(MEMO, lambda: _key_readings(ctx) + _link_readings(ctx))


def two_readings_result(ctx: Any, *, masters_only: bool = False) -> CheckResult | None:
    """The FAIL of a row that depends on a thing read two ways: every such thing named, with
    both places; None when there is none. `masters_only`: only those about the master configs
    (for the rows that read master entries, not recipes or scripts)."""
    found = [r for r in two_readings(ctx) if r.masters or not masters_only]
    if not found:
        return None
    return CheckResult.failed(" ".join(r.message for r in found), *(e for r in found for e in r.evidence))


def link_targets(ctx: Any) -> dict[str, str]:
    """The paths the PR's own links read through: link path -> resolved target (Check 0 asks
    for the owners of both)."""
    return {r.link: r.target for r in two_readings(ctx) if r.link and r.target}
