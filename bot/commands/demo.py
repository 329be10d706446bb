"""`python -m bot demo`: serve a bundled world on the local GitHub emulator and run the real pipeline
against it over HTTP (PyGithub, posting included), then show the verdict, the writes and the
request count. A world with recorded webhook payloads (`events/*.json`) replays them through
`handle-event` instead."""
from __future__ import annotations

import argparse
import json
import sys
from datetime import date
from pathlib import Path

from bot.cli import EXIT_ERROR, EXIT_OK
from bot.dates import day_arg

NAME = "demo"
HELP = "run the full GitHub pipeline against a bundled sandbox world (no network needed)"
DEFAULT_SCENARIO = "seed"
# The bundled worlds' expected rows assume a review on this date (ghsim/worlds/README.md).
DEMO_REVIEW_DATE = date(2026, 11, 29)
FORMATS = ("markdown", "json")
MSG_UNKNOWN = "unknown scenario {name!r}; bundled: {names}"
MSG_NO_WORLD = "{path} is not a world directory (no world.yaml)"
TITLE_EFFECTS = "Effects (writes the bot made on the emulator):"
TITLE_REQUESTS = "Requests served: {n}"
EFFECT_LINE = "- {kind} by {actor}: {detail}"
EVENTS_DIR = "events"
TITLE_EVENTS = "Events replayed through handle-event:"
EVENT_LINE = "- {file}: {event} -> {handlers}"
TITLE_REPLIES = "Comments the bot wrote (hidden marker line left out):"
REPLY_LINE = "--- comment {id} ({kind})"


# Worlds derived from a bundled one by a one-line edit: (base world, file, line after which, line).
# `suggestion`: the seed PR with a hand-written simulated-acceptance knob off the golden AL 3.51,
# so Check 11 fails with a mechanical fix the bot offers as a GitHub suggestion.
SEED_RECIPE = "commits/c1/inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom/mi355x-fp4-mtp/agentic.yaml"
DERIVED = {
    "suggestion": ("seed", SEED_RECIPE, "        ATOM_DISABLE_MMAP: 'true'\n", "        SGLANG_SIMULATE_ACC_LEN: '3.40'\n"),
}


def scenarios() -> dict[str, Path]:
    """Every bundled world, by folder name."""
    from ghsim import WORLDS_DIR

    return {p.name: p for p in sorted(WORLDS_DIR.iterdir()) if (p / "world.yaml").is_file()}


def derived_world(name: str) -> Path:
    """A temporary copy of a bundled world with its one-line edit (removed when the process ends)."""
    import atexit
    import shutil
    import tempfile

    base, rel, after, line = DERIVED[name]
    tmp = Path(tempfile.mkdtemp(prefix=f"infx-demo-{name}-"))
    atexit.register(shutil.rmtree, tmp, True)
    dest = tmp / name
    shutil.copytree(scenarios()[base], dest)
    target = dest / rel
    text = target.read_text(encoding="utf-8")
    if after not in text:
        raise ValueError(f"{rel}: the line to edit after is gone")
    target.write_text(text.replace(after, after + line, 1), encoding="utf-8")
    return dest


def add_arguments(p: argparse.ArgumentParser) -> None:
    where = p.add_mutually_exclusive_group()
    where.add_argument("--world", metavar="DIR", help="a world directory (format: docs/world-format.md)")
    where.add_argument("--scenario", metavar="NAME", help=f"a bundled world (default: {DEFAULT_SCENARIO})")
    p.add_argument("--format", choices=FORMATS, default="markdown", help="output format (default: markdown)")
    p.add_argument("--review-date", metavar="YYYY-MM-DD", type=day_arg, help=f"the review date (default: {DEMO_REVIEW_DATE})")


ANNOTATION_LINE = "    - {path}:{start_line} {annotation_level}: {title}"
CHECK_RUN_DETAIL = "name={name}, sha={sha}, conclusion={conclusion}, title={title!r}, annotations={count}"


def describe_effect(effect: dict) -> str:
    """One line per write, without the (long) comment bodies; a check run with its annotations."""
    if effect.get("kind") == "review_comment_created":
        suggestion = (effect.get("body") or "").split("```suggestion\n", 1)[-1].split("\n```", 1)[0]
        return EFFECT_LINE.format(kind=effect["kind"], actor=effect.get("actor"),
                                  detail=f"{effect.get('path')}:{effect.get('line')} suggests `{suggestion.strip()}`")
    if "output" in effect and "annotations" in effect:
        head = EFFECT_LINE.format(kind=effect["kind"], actor=effect.get("actor"), detail=CHECK_RUN_DETAIL.format(
            name=effect.get("name", effect.get("id")), sha=effect.get("sha", ""), conclusion=effect.get("conclusion"),
            title=(effect.get("output") or {}).get("title"), count=len(effect["annotations"])))
        return "\n".join([head, *(ANNOTATION_LINE.format(**{"title": "", **a}) for a in effect["annotations"])])
    detail = {k: v for k, v in effect.items() if k not in ("kind", "actor", "body", "previous_body")}
    if "body" in effect:
        detail["chars"] = len(effect["body"])
    text = ", ".join(f"{k}={v}" for k, v in detail.items())
    return EFFECT_LINE.format(kind=effect["kind"], actor=effect.get("actor"), detail=text)


def resolve_world(args: argparse.Namespace) -> Path:
    if args.world:
        path = Path(args.world)
        if not (path / "world.yaml").is_file():
            raise ValueError(MSG_NO_WORLD.format(path=path))
        return path
    name = args.scenario or DEFAULT_SCENARIO
    known = scenarios()
    if name in DERIVED:
        return derived_world(name)
    if name not in known:
        raise ValueError(MSG_UNKNOWN.format(name=name, names=", ".join([*known, *DERIVED])))
    return known[name]


def event_files(world: Path) -> list[Path]:
    """The world's recorded webhook payloads, in file-name order (`NN.<event>.<case>.json`)."""
    return sorted((world / EVENTS_DIR).glob("*.json"))


def replay(api, world: Path, review_date: date) -> list[dict]:
    """Each payload through the real event entry point, as one Actions job per event."""
    from bot.commands.handle_event import handle_event
    from bot.events import event_name_from_filename, load_payload

    out = []
    for path in event_files(world):
        handled = handle_event(api, event_name_from_filename(path), load_payload(path), env={},
                               review_date=review_date)
        out.append({"file": path.name, "event": handled.event.describe(),
                    "handlers": [o.handler + ("" if o.ok else f" FAILED: {o.error}") for o in handled.outcomes],
                    "ok": handled.ok})
    return out


def run(args: argparse.Namespace) -> int:
    # Imported here so `python -m bot --help` does not pay for the emulator and PyGithub.
    from bot.commands.sandbox import import_ghsim

    ghsim = import_ghsim()
    if ghsim is None:
        return EXIT_ERROR
    from bot.commands.check import progress_printer
    from bot.pipeline import review_pr
    from bot.github_client import GitHubApi, make_github, token_auth
    from recipes.errors import RecipeError

    try:
        world = resolve_world(args)
        review_date = args.review_date or DEMO_REVIEW_DATE
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_ERROR
    try:
        emu = ghsim.Emulator(world, strict=True)
    except (RecipeError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_ERROR
    events = event_files(world)
    with emu:
        api = GitHubApi(make_github(emu.url, auth=token_auth(emu.world.bot.token)))
        if events:
            try:
                replayed = replay(api, world, review_date)
            finally:
                api.close()
            return _print_replay(replayed, emu, args.format)
        try:
            review = review_pr(api, emu.world.repo, emu.world.pr.number, post=True, review_date=review_date,
                               progress=progress_printer())
        finally:
            api.close()
        effects = emu.effects
        requests = sum(emu.requests.values())
        emu.assert_clean()
    if review.error:
        print(f"error: {review.error}", file=sys.stderr)
    if args.format == "json":
        verdict = review.verdict.to_json() if review.verdict else None
        print(json.dumps({
            "verdict": verdict["verdict"] if verdict else None,
            "checks": verdict["checks"] if verdict else [],
            "effects": effects,
            "requests": requests,
        }, indent=2, ensure_ascii=False, default=str))
    else:
        if review.verdict is not None:
            print(review.rendered.markdown)
            print()
        print(TITLE_EFFECTS)
        for e in effects:
            print(describe_effect(e))
        print(TITLE_REQUESTS.format(n=requests))
    return review.code


def _print_replay(replayed: list[dict], emu, fmt: str) -> int:
    effects, requests = emu.effects, sum(emu.requests.values())
    emu.assert_clean()
    if fmt == "json":
        print(json.dumps({"events": replayed, "effects": effects, "requests": requests},
                         indent=2, ensure_ascii=False, default=str))
    else:
        print(TITLE_EVENTS)
        for r in replayed:
            print(EVENT_LINE.format(file=r["file"], event=r["event"], handlers=", ".join(r["handlers"]) or "no handler"))
        print()
        print(TITLE_EFFECTS)
        for e in effects:
            print(describe_effect(e))
        print(TITLE_REQUESTS.format(n=requests))
        replies = [e for e in effects if "body" in e]
        if replies:
            print()
            print(TITLE_REPLIES)
            for e in replies:
                print(REPLY_LINE.format(id=e.get("id"), kind=e["kind"]))
                print(e["body"].split("\n", 1)[-1].rstrip("\n"))
    return EXIT_OK if all(r["ok"] for r in replayed) else EXIT_ERROR
