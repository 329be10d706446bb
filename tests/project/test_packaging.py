"""Packaging: the production wheel carries the bot and nothing of the GitHub emulator; the emulator
(ghsim) is its own distribution with its worlds, split by resource into short files; the demo and
sandbox commands say how to install it when it is absent."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bot.cli import main
from bot.commands.sandbox import MSG_NO_GHSIM

PROJECT = Path(__file__).resolve().parents[2]
GHSIM = PROJECT / "ghsim"
MAX_GHSIM_LINES = 400
EMULATOR_MARKS = ("ghsim", "sandbox", "worlds")
# setuptools 65-69 warn that `[tool.setuptools]` in pyproject.toml is beta.
pytestmark = pytest.mark.filterwarnings("ignore:Support for `\\[tool.setuptools\\]`")


def built_files(project: Path, tmp: Path, monkeypatch) -> list[str]:
    """What a wheel of `project` installs, built in-process by setuptools' `build_py`: the command
    bdist_wheel runs to lay out the packages and their data (no bdist_wheel needed, no network)."""
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    monkeypatch.chdir(project)
    dist = Distribution({"script_name": "setup.py", "script_args": []})
    apply_configuration(dist, project / "pyproject.toml")
    dist.get_command_obj("egg_info").egg_base = str(tmp)  # keep the source tree clean
    build = dist.get_command_obj("build_py")
    build.build_lib = str(tmp / "lib")
    build.compile = False
    dist.run_command("build_py")
    root = tmp / "lib"
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_the_production_wheel_holds_no_emulator_and_no_worlds(tmp_path, monkeypatch):
    files = built_files(PROJECT, tmp_path, monkeypatch)
    assert "bot/cli.py" in files and "checks/registry.py" in files and "recipes/config.py" in files
    assert any(f.startswith("checks/templates/") and f.endswith(".j2") for f in files), "templates are package data"
    offenders = [f for f in files if any(mark in f.split("/") or f.startswith(mark) for mark in EMULATOR_MARKS)
                 and f != "bot/commands/sandbox.py"]
    assert offenders == []
    # The product's own modules number about 155 (the launch interpreter and its path package);
    # a world or a fixture set would add hundreds.
    assert len(files) < 200, f"{len(files)} files: worlds or fixtures crept into the wheel"


def test_the_emulator_distribution_carries_its_worlds(tmp_path, monkeypatch):
    files = built_files(GHSIM, tmp_path, monkeypatch)
    assert "ghsim/server.py" in files and "ghsim/worlds/seed/world.yaml" in files
    # Dot-files of a world (its .github/ folder) are part of it.
    assert any(f.startswith("ghsim/worlds/") and "/.github/" in f for f in files)
    assert not any(f.startswith(("bot/", "checks/", "recipes/")) for f in files)


def test_no_emulator_file_is_longer_than_its_cap():
    long = {p.relative_to(PROJECT).as_posix(): n for p in sorted(GHSIM.glob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_GHSIM_LINES}
    assert long == {}
    assert len(list(GHSIM.glob("*.py"))) >= 10, "split by resource"


@pytest.mark.parametrize("argv", [["demo"], ["sandbox", "serve", "--world", "x"], ["sandbox", "checkout", "--world", "x", "y"]])
def test_without_the_emulator_the_commands_say_how_to_install_it(argv, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ghsim", None)  # what `import ghsim` meets when it is not installed
    assert main(argv) == 2
    out = capsys.readouterr()
    assert out.out == "" and out.err == MSG_NO_GHSIM + "\n"
    assert "make install" in MSG_NO_GHSIM
