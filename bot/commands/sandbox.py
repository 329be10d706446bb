"""`python -m bot sandbox serve|checkout`: serve a world with the GitHub emulator, or turn it into a
git checkout plus a `--pr` file for local mode."""
from __future__ import annotations

import argparse
import signal
import sys
import threading

NAME = "sandbox"
HELP = "serve a world directory as a local GitHub REST API emulator"
SERVE = "serve"
CHECKOUT = "checkout"
LOCAL_HINT = "python -m bot check --local {path} --base {base} --head {head} --pr {pr}"
SERVING = "GitHub emulator for {repo} (PR #{number}) at {url}  bot token: {token}"
# The emulator is its own distribution (ghsim/), not part of the production install.
MSG_NO_GHSIM = ("error: the GitHub emulator (ghsim) is not installed; in an infx-review checkout run "
                "`make install` (or `pip install -e ./ghsim`)")


def import_ghsim():
    """The emulator package, or None once the line saying how to install it is printed."""
    try:
        import ghsim
    except ModuleNotFoundError as e:
        if e.name != "ghsim":
            raise
        print(MSG_NO_GHSIM, file=sys.stderr)
        return None
    return ghsim


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="sandbox_command", metavar="ACTION", required=True)
    serve = sub.add_parser(SERVE, help="serve a world until Ctrl-C", description="serve a world until Ctrl-C")
    serve.add_argument("--world", required=True, help="world directory (holds world.yaml)")
    serve.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    serve.add_argument("--strict", action="store_true", help="record requests to unknown routes as violations")
    serve.add_argument("--fail-rate", type=float, default=0.0, help="fraction of requests answered 500/502/503")
    serve.add_argument("--rate-limit-rate", type=float, default=0.0, help="fraction answered 403 secondary rate limit")
    serve.add_argument("--drop-rate", type=float, default=0.0, help="fraction of connections closed without a reply")
    serve.add_argument("--ghost-write-rate", type=float, default=0.0,
                       help="fraction of writes applied and then answered 502 or with a dropped connection")
    serve.add_argument("--latency-ms", type=int, default=0, help="delay added to every request")
    serve.add_argument("--seed", type=int, default=0, help="seed for the fault knobs")
    co = sub.add_parser(CHECKOUT, help="build the world as a git checkout and write a --pr file for local mode",
                        description="build the world as a git checkout and write a --pr file for local mode")
    co.add_argument("--world", required=True, help="world directory (holds world.yaml)")
    co.add_argument("dest", help="new directory for the git checkout; the PR file is written beside it as DEST.pr.yaml")


def run(args: argparse.Namespace, *, stop: threading.Event | None = None) -> int:
    if import_ghsim() is None:
        return 2
    if args.sandbox_command == CHECKOUT:
        return run_checkout(args)
    return run_serve(args, stop=stop)


def run_checkout(args: argparse.Namespace) -> int:
    """The world as local mode sees it: commit ids become SHAs, the artifacts folder an absolute path."""
    from pathlib import Path

    import yaml

    from ghsim.world import build_world_repo
    from recipes.errors import RecipeError

    dest = Path(args.dest)
    if dest.exists() and any(dest.iterdir()):
        print(f"error: {dest} exists and is not empty", file=sys.stderr)
        return 2
    try:
        built = build_world_repo(args.world, dest)
    except RecipeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    pr = built.world.pr.model_dump(mode="json", exclude_none=True)
    pr["check_runs"] = {built.resolve(k): v for k, v in pr.get("check_runs", {}).items()}
    for run_ in pr.get("runs", []):
        run_["head"] = built.resolve(run_.get("head", "head"))
    pr["teams"] = {**built.world.teams, **pr.get("teams", {})}
    if built.world.pr.artifacts_dir:
        pr["artifacts_dir"] = str((Path(args.world) / built.world.pr.artifacts_dir).resolve())
    pr_file = dest.with_name(dest.name + ".pr.yaml")
    pr_file.write_text(yaml.safe_dump(pr, sort_keys=False, allow_unicode=True), encoding="utf-8")
    print(LOCAL_HINT.format(path=dest, base=built.world.default_branch, head=built.head_sha, pr=pr_file))
    return 0


def run_serve(args: argparse.Namespace, *, stop: threading.Event | None = None) -> int:
    # Imported here so `python -m bot --help` does not pay for the emulator.
    from ghsim import Emulator
    from recipes.errors import RecipeError

    try:
        emu = Emulator(
            args.world, strict=args.strict, fail_rate=args.fail_rate, rate_limit_rate=args.rate_limit_rate,
            drop_rate=args.drop_rate, latency_ms=args.latency_ms, seed=args.seed, port=args.port,
            # getattr: callers may build the Namespace themselves, without the newer knobs.
            ghost_write_rate=getattr(args, "ghost_write_rate", 0.0),
        )
    except RecipeError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"error: cannot serve: {e}", file=sys.stderr)
        return 2
    with emu:
        print(emu.url, flush=True)
        print(SERVING.format(repo=emu.world.repo, number=emu.world.pr.number, url=emu.url,
                             token=emu.world.bot.token), file=sys.stderr, flush=True)
        waiter = stop or threading.Event()
        previous = {}
        if threading.current_thread() is threading.main_thread():
            # SIGTERM too, so `kill` removes the temporary repository; SIGINT explicitly, because
            # a shell starts background jobs with SIGINT ignored.
            for sig in (signal.SIGINT, signal.SIGTERM):
                previous[sig] = signal.signal(sig, lambda *_: waiter.set())
        try:
            while not waiter.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
        if emu.violations:
            print("violations:\n  " + "\n  ".join(emu.violations), file=sys.stderr)
    return 0
