"""Reproducible installs: the lower bounds in pyproject.toml are the versions CI installs in its
lowest-versions job (requirements-lowest.txt), and the hash-pinned lock the reusable workflow
installs with `--require-hashes` pins every runtime dependency, each with its hashes."""
from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

PROJECT = Path(__file__).resolve().parents[2]
LOCK = PROJECT / "requirements.lock"
LOWEST = PROJECT / "requirements-lowest.txt"
ROUTE_LOCK = PROJECT / "requirements-route.lock"
UV_LOCK = PROJECT / "requirements-uv.lock"
CI = PROJECT / ".github" / "workflows" / "ci.yml"
REVIEW = PROJECT / ".github" / "workflows" / "review.yml"
PIN = re.compile(r"^([A-Za-z0-9_.\-]+)==([^\s\\;]+)")


def _project() -> dict:
    return tomllib.loads((PROJECT / "pyproject.toml").read_text(encoding="utf-8"))["project"]


def _direct(extras: bool = False) -> list[Requirement]:
    project = _project()
    reqs = [Requirement(r) for r in project["dependencies"]]
    if extras:
        reqs += [Requirement(r) for r in project["optional-dependencies"]["test"]]
    return reqs


def _lower_bound(req: Requirement) -> Version:
    bounds = [Version(s.version) for s in req.specifier if s.operator == ">="]
    assert len(bounds) == 1, f"{req}: one >= lower bound"
    return bounds[0]


def _pins(path: Path) -> dict[str, tuple[str, list[str]]]:
    """name -> (version, hashes) from a pip requirements file (continuation lines joined)."""
    text = re.sub(r"\\\n", " ", path.read_text(encoding="utf-8"))
    out = {}
    for line in text.splitlines():
        line = line.split(" #", 1)[0].strip()
        m = PIN.match(line)
        if m:
            out[canonicalize_name(m.group(1))] = (m.group(2), re.findall(r"--hash=sha256:([0-9a-f]{64})", line))
    return out


def test_every_direct_dependency_has_a_tested_lower_bound():
    lowest = _pins(LOWEST)
    for req in _direct(extras=True):
        name = canonicalize_name(req.name)
        assert name in lowest, f"{req.name} is not in requirements-lowest.txt"
        assert Version(lowest[name][0]) == _lower_bound(req), f"{req}: requirements-lowest.txt pins {lowest[name][0]}"
    assert len(lowest) == len(_direct(extras=True))


def test_the_lock_pins_every_runtime_dependency_with_hashes():
    pins = _pins(LOCK)
    for req in _direct():
        name = canonicalize_name(req.name)
        assert name in pins, f"{req.name} is not locked"
        assert req.specifier.contains(pins[name][0]), f"{req}: locked at {pins[name][0]}"
    for name, (version, hashes) in pins.items():
        assert hashes, f"{name}=={version} has no --hash"
    assert "pygithub" in pins and "urllib3" in pins, "transitive dependencies are locked too"


def _install_lines(job: dict) -> list[str]:
    return [line.strip() for s in job["steps"] for line in s.get("run", "").splitlines()
            if re.match(r"python -m (pip|uv pip) install", line.strip())]


def test_the_reusable_workflow_installs_uv_then_the_lock_with_hashes_required():
    wf = yaml.safe_load(REVIEW.read_text(encoding="utf-8"))
    for name, job in wf["jobs"].items():
        lock = "requirements-route.lock" if name == "route" else "requirements.lock"
        # pip installs uv from its own hash-pinned lock, and nothing else; uv then installs the
        # bot's lock, every hash required, with no uv.toml of the runner's taken into account.
        assert _install_lines(job) == [
            "python -m pip install --disable-pip-version-check --no-input --require-hashes --no-deps"
            " -r .infx-review/requirements-uv.lock",
            'python -m uv pip install --python "$(command -v python)" --no-config --compile-bytecode'
            f" --require-hashes --no-deps -r .infx-review/{lock}"], name


def test_uv_is_pinned_to_one_version_with_every_hash():
    pins = _pins(UV_LOCK)
    assert list(pins) == ["uv"]
    version, hashes = pins["uv"]
    assert re.fullmatch(r"\d+\.\d+\.\d+", version)
    # Wheels for Linux, macOS and Windows runners on x86-64 and arm64 (PyPI holds 18 and the sdist).
    assert len(set(hashes)) == len(hashes) >= 10


def test_the_route_lock_is_a_part_of_the_lock_as_it_stands():
    route, full = _pins(ROUTE_LOCK), _pins(LOCK)
    assert route and set(route) < set(full)
    for name, (version, hashes) in route.items():
        assert (version, sorted(hashes)) == (full[name][0], sorted(full[name][1])), name


def test_routing_imports_nothing_outside_the_route_lock():
    """Every recorded payload routed in one process: the distributions it imported are all in
    requirements-route.lock (else the route job would fail with a ModuleNotFoundError)."""
    probe = (
        "import json, sys, importlib.metadata as md\n"
        "from pathlib import Path\n"
        "from bot.cli import main\n"
        "for p in sorted(Path('tests/payloads').glob('*.json')):\n"
        "    main(['route-event', '--event-name', p.name.split('.')[0], '--event-path', str(p)])\n"
        "dists = md.packages_distributions()\n"
        "top = {m.split('.')[0] for m in list(sys.modules)} - {'_distutils_hack'}\n"
        "print(json.dumps(sorted({d for m in top for d in dists.get(m, [])})))\n")
    env = {k: v for k, v in os.environ.items() if k not in ("GITHUB_OUTPUT", "GITHUB_EVENT_NAME", "GITHUB_EVENT_PATH")}
    proc = subprocess.run([sys.executable, "-c", probe], cwd=PROJECT, env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    assert proc.stdout.count("job=") == len(list((PROJECT / "tests" / "payloads").glob("*.json")))
    imported = {canonicalize_name(d) for d in json.loads(proc.stdout.splitlines()[-1])} - {"infx-review"}
    assert "pydantic" in imported, proc.stdout
    assert imported <= set(_pins(ROUTE_LOCK)), imported - set(_pins(ROUTE_LOCK))


def test_ci_tests_the_lowest_versions_and_lints_the_workflows():
    ci = yaml.safe_load(CI.read_text(encoding="utf-8"))
    text = CI.read_text(encoding="utf-8")
    assert "requirements-lowest.txt" in text and "--require-hashes" in text
    assert "actionlint" in text and "zizmor" in text
    for job in ci["jobs"].values():
        for step in job["steps"]:
            if "uses" in step:
                assert re.fullmatch(r"actions/[a-z-]+@[0-9a-f]{40}", step["uses"]), step["uses"]


def test_the_documented_caller_is_the_linted_file_and_puts_permissions_on_its_job():
    caller = (PROJECT / "docs" / "caller-workflow.yml").read_text(encoding="utf-8")
    assert "```yaml\n" + caller + "```" in (PROJECT / "docs" / "install.md").read_text(encoding="utf-8")
    wf = yaml.safe_load(caller)
    assert wf["permissions"] == {} and wf["cache-mode"] == "none"
    (job,) = wf["jobs"].values()
    assert job["permissions"]["actions"] == "write" and job["permissions"]["checks"] == "write"
