"""A local GitHub REST API emulator that serves a world directory to the bot over real HTTP."""
from .server import Emulator
from .world import BuiltWorld, World, build_world_repo, load_world

__all__ = ["BuiltWorld", "Emulator", "World", "build_world_repo", "load_world"]
