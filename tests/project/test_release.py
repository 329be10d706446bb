"""Releases: one version, written in bot/__init__.py and read by pyproject.toml; `--version` from
`python -m bot` and the `infx-review` script, each naming itself; a Keep a Changelog CHANGELOG.md
with the version's section; a release workflow pinned like the others (actions by full SHA,
build tools by hash) that builds the wheel and the sdist on a `v*` tag."""
from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

from bot import __version__
from bot.cli import main, program_name

PROJECT = Path(__file__).resolve().parents[2]
WORKFLOWS = PROJECT / ".github" / "workflows"
RELEASE = WORKFLOWS / "release.yml"
CHANGELOG = PROJECT / "CHANGELOG.md"
USES = re.compile(r"uses:\s*(\S+)@(\S+)\s*#\s*(\S+)")
pytestmark = pytest.mark.filterwarnings("ignore:Support for `\\[tool.setuptools\\]`")


def test_the_version_is_written_once_and_pyproject_reads_it(monkeypatch):
    pyproject = tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in pyproject["project"] and pyproject["project"]["dynamic"] == ["version"]
    assert pyproject["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "bot.__version__"}
    from setuptools.config.pyprojecttoml import apply_configuration
    from setuptools.dist import Distribution

    monkeypatch.chdir(PROJECT)
    dist = apply_configuration(Distribution({"script_name": "setup.py", "script_args": []}), PROJECT / "pyproject.toml")
    assert dist.get_version() == __version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", __version__)


def test_version_prints_the_program_and_its_version(capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", [str(PROJECT / "bot" / "__main__.py")])
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"python -m bot {__version__}\n"
    monkeypatch.setattr(sys, "argv", ["/opt/venv/bin/infx-review"])
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"infx-review {__version__}\n"


def test_the_program_is_named_as_it_was_run():
    assert program_name("/home/u/.venv/bin/infx-review") == "infx-review"
    assert program_name(r"infx-review.exe") == "infx-review"
    assert program_name("/src/infx-review/bot/__main__.py") == "python -m bot"
    assert program_name("-c") == "python -m bot"


def test_the_installed_script_names_itself():
    script = Path(sys.executable).with_name("infx-review")
    if not script.exists():
        pytest.skip("the infx-review console script is not installed next to this Python")
    version = subprocess.run([str(script), "--version"], capture_output=True, text=True, timeout=60)
    assert (version.returncode, version.stdout) == (0, f"infx-review {__version__}\n")
    usage = subprocess.run([str(script), "check", "--help"], capture_output=True, text=True, timeout=60)
    assert usage.returncode == 0 and usage.stdout.startswith("usage: infx-review check ")
    wrong = subprocess.run([str(script), "check", "--only"], capture_output=True, text=True, timeout=60)
    assert wrong.returncode == 2 and wrong.stderr.startswith("infx-review check: error: argument --only")


def test_the_changelog_keeps_an_unreleased_section_and_the_current_version():
    text = CHANGELOG.read_text(encoding="utf-8")
    headings = re.findall(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$", text, re.MULTILINE)
    assert headings[0] == ("Unreleased", "")
    versions = [v for v, _ in headings[1:]]
    assert __version__ in versions, f"CHANGELOG.md has no section ## [{__version__}]"
    assert all(day for _, day in headings[1:]), "every released section has its date"
    for v, _ in headings:  # the link references Keep a Changelog ends with
        assert re.search(rf"^\[{re.escape(v)}\]: https://", text, re.MULTILINE), v


def _pinned_actions(path: Path) -> dict[str, tuple[str, str]]:
    return {f"{name}@{sha}": (sha, tag) for name, sha, tag in USES.findall(path.read_text(encoding="utf-8"))}


def test_the_release_workflow_builds_both_artifacts_on_a_version_tag():
    wf = yaml.safe_load(RELEASE.read_text(encoding="utf-8"))
    on = wf.get("on", wf.get(True))  # YAML 1.1 reads the key `on` as true
    assert on == {"push": {"tags": ["v*"]}}
    assert wf["permissions"] == {} and wf["cache-mode"] == "none"
    (job,) = wf["jobs"].values()
    assert job["permissions"] == {"contents": "write"}
    runs = "\n".join(s.get("run", "") for s in job["steps"])
    assert "--require-hashes --no-deps -r requirements-release.txt" in runs
    assert "python -m build --no-isolation --wheel --sdist" in runs
    assert "bot.__version__" in runs and "CHANGELOG.md" in runs  # the tag is checked against both
    assert "${{" not in runs, "workflow expressions reach shell steps through env only"


def test_the_release_workflow_pins_actions_as_the_other_workflows_do():
    used_elsewhere = {}
    for other in WORKFLOWS.glob("*.yml"):
        if other != RELEASE:
            used_elsewhere.update(_pinned_actions(other))
    release_uses = re.findall(r"uses:\s*(\S+)", RELEASE.read_text(encoding="utf-8"))
    assert release_uses
    for use in release_uses:
        assert re.fullmatch(r"[\w.-]+/[\w.-]+@[0-9a-f]{40}", use), f"{use} is not pinned by a full commit SHA"
        assert use in used_elsewhere, f"{use}: a SHA the other workflows do not already use"


def test_the_build_tools_are_pinned_with_hashes():
    text = re.sub(r"\\\n", " ", (PROJECT / "requirements-release.txt").read_text(encoding="utf-8"))
    pins = [line for line in text.splitlines() if line.strip() and not line.startswith("#")]
    names = {re.match(r"([\w.-]+)==", line).group(1).lower() for line in pins}
    assert {"build", "setuptools", "packaging", "pyproject-hooks"} <= names
    for line in pins:
        assert re.search(r"==[\w.]+\s", line) and re.search(r"--hash=sha256:[0-9a-f]{64}", line), line
