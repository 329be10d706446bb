"""`python -m bot inspect PATH`: parse every file kind of a benchmark repository and list findings."""
from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from recipes.errors import Finding, RecipeError
from recipes.layout import benchmark_markers, is_benchmark_repository
from recipes.repository import Repository
from recipes.source import DirSource, GitSource

NAME = "inspect"
HELP = "parse a benchmark repository (working tree or git ref), expand every entry and recipe, report findings"

EXIT_CLEAN = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2

MSG_BAD_REF = "error: cannot read {ref} in {path}: {error}; give a branch, tag or commit of that repository"
MSG_NO_DIR = "error: not a directory: {path}"
MSG_NOT_BENCHMARK = ("error: {path} is not an InferenceX-style benchmark repository: it has no {markers}; "
                     "give the root of a benchmark checkout (or set paths: in .github/infx-review.yml)")


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("path", help="benchmark repository checkout")
    p.add_argument("--format", choices=("text", "json"), default="text")
    p.add_argument("--ref", help="read this git ref instead of the working tree")
    p.add_argument("--trace", metavar="POINT",
                   help="print what a benchmark point runs, interpreted from its runner down: a config key "
                        "(its first point) or a point id")
    from bot.local import add_review_inputs

    add_review_inputs(p, "with --trace")


def _count(obj: Any, *attrs: str) -> int:
    for attr in attrs:
        value = getattr(obj, attr, None)
        if value is not None:
            return len(value)
    return 0


def _finding_json(f: Finding) -> dict:
    return {"path": f.path, "line": f.line, "message": f.message, "code": f.code}


def inspect_repository(repo: Repository) -> dict:
    """Everything `inspect` reports, as the JSON contract's dict."""
    # Touch every recipe variant and every point's effective config so expansion bugs surface.
    recipes = {**repo.recipes, **repo.unreferenced_recipes}
    for recipe in recipes.values():
        for variant in recipe.variants:
            variant.spec_decode()
            variant.tp()
    for point in repo.points:
        repo.effective(point)
    findings = repo.findings
    errors = [f for f in findings if f.severity == "error"]
    warnings = [f for f in findings if f.severity != "error"]
    return {
        "layout": repo.layout.name,
        "configs": len(repo.entries),
        "recipes": len(recipes),
        "points": len(repo.points),
        "changelog_entries": _count(repo.changelog, "entries"),
        "golden_curves": _count(repo.golden, "curves"),
        "errors": [_finding_json(f) for f in errors],
        "warnings": [_finding_json(f) for f in warnings],
    }


def trace_context(src: Any, external: list[str], config_file: str | None) -> Any:
    """A review context of one tree (base and head the same), without the review's step budget,
    so `trace_point` builds the tracer a review builds (recipes.launch.path.trace_affected
    `tracer`): the policy of `config_file` or the tree, and the srt-slurm recipes and setup
    scripts of the checkouts its runners clone, read from `external` (`OWNER/NAME=DIR`).
    LocalModeError for a bad `--external-repo` or `--config`."""
    from bot.local import external_repos, tree_snapshot
    from checks.context import ReviewContext
    from recipes.launch.path.trace_affected import without_budget

    ctx = ReviewContext(tree_snapshot(src, external=external_repos(external) if external else None,
                                      config_file=config_file))
    without_budget(ctx)
    return ctx


def trace_point(ctx: Any, point: Any) -> Any:
    """A point's trace at the context's tree with its own values, as the review traces it."""
    from recipes.launch.path.trace_affected import own_trace

    return own_trace(ctx, point)


def print_trace(ctx: Any, which: str, fmt: str, out: Any) -> int:
    from recipes.launch.trace import show

    points = [p for p in ctx.head_repo.points if which in (p.point_id, p.config_key)]
    if not points:
        print(f"no benchmark point or config key {which!r} in this repository", file=sys.stderr)
        return EXIT_USAGE
    point = points[0]
    trace = trace_point(ctx, point)
    effects = [{"kind": e.kind, "where": e.where(), "what": e.describe(), "container": e.container,
                "under": list(e.under), "client": e.client, "argv": [show(w) for w in e.argv],
                "env": {k: show(v) for k, v in e.env}} for e in trace.effects()]
    if fmt == "json":
        print(json.dumps({"point": point.point_id, "config_key": point.config_key, "effects": effects}, indent=2),
              file=out)
    else:
        print(f"point {point.point_id} ({point.config_key}): {len(effects)} effects, "
              f"{sum(e['kind'] == 'unknown' for e in effects)} unknown", file=out)
        for e in effects:
            flags = (" [client]" if e["client"] else "") + (f" [under {len(e['under'])} undecided]" if e["under"] else "")
            inside = f" in {e['container']}" if e["container"] else ""
            print(f"  {e['kind']:11} {e['what']}{inside}{flags}\n              at {e['where']}", file=out)
    return EXIT_CLEAN


def _text(report: dict, out: Any) -> None:
    print(f"layout: {report['layout']}", file=out)
    for key in ("configs", "recipes", "points", "changelog_entries", "golden_curves"):
        print(f"{key.replace('_', ' ')}: {report[key]}", file=out)
    for label in ("errors", "warnings"):
        items = report[label]
        print(f"{label}: {len(items)}", file=out)
        for f in items:
            where = f"{f['path']}:{f['line']}" if f["line"] else f["path"]
            print(f"  {where}: {f['message']}", file=out)


def run(args: argparse.Namespace) -> int:
    if args.ref:
        try:
            src: Any = GitSource(args.path, args.ref)
        except Exception as e:  # git missing, not a repository, unknown ref
            detail = getattr(e, "stderr", None)
            detail = detail.decode("utf-8", "replace").strip() if isinstance(detail, bytes) and detail else str(e)
            detail = (detail.splitlines() or [type(e).__name__])[0]  # one line: git's first says what
            print(MSG_BAD_REF.format(ref=args.ref, path=args.path, error=detail), file=sys.stderr)
            return EXIT_USAGE
    else:
        src = DirSource(args.path)
        if not src.root.is_dir():
            print(MSG_NO_DIR.format(path=args.path), file=sys.stderr)
            return EXIT_USAGE
    repo = Repository(src)
    if not is_benchmark_repository(src, repo.layout):
        where = f"{args.path} at {args.ref}" if args.ref else args.path
        print(MSG_NOT_BENCHMARK.format(path=where, markers=benchmark_markers(repo.layout)), file=sys.stderr)
        return EXIT_USAGE
    if args.trace:
        from bot.local import LocalModeError

        try:
            ctx = trace_context(src, args.external_repo, args.config)
        except LocalModeError as e:
            print(f"error: {e}", file=sys.stderr)
            return EXIT_USAGE
        return print_trace(ctx, args.trace, args.format, sys.stdout)
    try:
        report = inspect_repository(repo)
    except RecipeError as e:  # parsers return findings; this is the last line of defence
        report = {"layout": "", "configs": 0, "recipes": 0, "points": 0, "changelog_entries": 0,
                  "golden_curves": 0, "errors": [_finding_json(e.finding)], "warnings": []}
    if args.format == "json":
        print(json.dumps(report, indent=2))
    else:
        _text(report, sys.stdout)
    return EXIT_FINDINGS if report["errors"] else EXIT_CLEAN
