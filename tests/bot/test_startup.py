"""Start-up: `--help` and local mode import neither PyGithub, the emulator, jinja2, the bash grammar nor the artifact reader."""
from __future__ import annotations

import importlib
import subprocess
import sys

from bot import cli

PROBE = """
import sys
from bot import cli
parser, runners = cli.build_parser({argv!r})
{extra}
heavy = [m for m in ("github", "ghsim", "bot.github_client", "bot.publisher", "bot.snapshot_builder",
                     "jinja2", "tree_sitter", "recipes.artifacts") if m in sys.modules]
print(",".join(heavy))
"""


def _heavy(argv: list[str], extra: str = "") -> str:
    code = PROBE.format(argv=argv, extra=extra)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_help_imports_no_command_module():
    assert _heavy(["--help"], "assert not [m for m in sys.modules if m.startswith('bot.commands.')]") == ""


def test_local_check_start_up_imports_only_what_local_mode_uses():
    extra = "import bot.local, checks.engine"
    assert _heavy(["check", "--local", ".", "--base", "a", "--head", "b"], extra) == ""


def test_command_table_matches_each_module():
    for name, modname, help_text in cli.COMMANDS:
        mod = importlib.import_module(modname)
        assert (mod.NAME, mod.HELP) == (name, help_text)


def test_only_the_named_command_gets_arguments():
    parser, runners = cli.build_parser(["-v", "inspect", "."])
    assert set(runners) == {"inspect"}
    assert parser.parse_args(["-v", "inspect", "."]).command == "inspect"


def test_routing_an_event_imports_no_github_client():
    # `route-event` runs for every comment of the repository (the installed workflow's first
    # step); it reads only the payload. Through bot.events' timestamp parser and the handlers'
    # command parsers it used to import PyGithub: 1.90 G -> 0.93 G instructions.
    extra = "import bot.commands.route_event, bot.routing, bot.events"
    assert _heavy(["route-event"], extra) == ""
