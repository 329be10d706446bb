"""`python -m bot sandbox serve`: run the GitHub emulator on a world until interrupted."""
from __future__ import annotations

import argparse
import signal
import sys
import threading

NAME = "sandbox"
HELP = "serve a world directory as a local GitHub REST API emulator"
SERVE = "serve"
SERVING = "GitHub emulator for {repo} (PR #{number}) at {url}  bot token: {token}"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="sandbox_command", metavar="ACTION", required=True)
    serve = sub.add_parser(SERVE, help="serve a world until Ctrl-C", description="serve a world until Ctrl-C")
    serve.add_argument("--world", required=True, help="world directory (holds world.yaml)")
    serve.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any free port)")
    serve.add_argument("--strict", action="store_true", help="record requests to unknown routes as violations")
    serve.add_argument("--fail-rate", type=float, default=0.0, help="fraction of requests answered 500/502/503")
    serve.add_argument("--rate-limit-rate", type=float, default=0.0, help="fraction answered 403 secondary rate limit")
    serve.add_argument("--drop-rate", type=float, default=0.0, help="fraction of connections closed without a reply")
    serve.add_argument("--latency-ms", type=int, default=0, help="delay added to every request")
    serve.add_argument("--seed", type=int, default=0, help="seed for the fault knobs")


def run(args: argparse.Namespace, *, stop: threading.Event | None = None) -> int:
    # Imported here so `python -m bot --help` does not pay for the emulator.
    from bot.sandbox import Emulator
    from recipes.errors import RecipeError

    try:
        emu = Emulator(
            args.world, strict=args.strict, fail_rate=args.fail_rate, rate_limit_rate=args.rate_limit_rate,
            drop_rate=args.drop_rate, latency_ms=args.latency_ms, seed=args.seed, port=args.port,
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
