"""ghsim: a local GitHub REST API emulator that serves a world directory to the bot over real HTTP.

A separate distribution from infx-review (ghsim/pyproject.toml): the demo, the sandbox command, the
tests and the benchmarks use it; the production install never ships it."""
from pathlib import Path

from .server import Emulator
from .world import BuiltWorld, World, build_world_repo, load_world

# The bundled worlds (format: docs/world-format.md; expected rows: worlds/README.md).
WORLDS_DIR = Path(__file__).resolve().parent / "worlds"

__all__ = ["WORLDS_DIR", "BuiltWorld", "Emulator", "World", "build_world_repo", "load_world"]
