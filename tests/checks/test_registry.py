"""The registry is the one explicit list of checks, and the package import boundaries hold."""
from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
from pathlib import Path

import pytest

from checks.base import Check
from checks.base import Implementation
from checks.registry import CHECKS, Registered, check_by_number, module_of

PROJECT = Path(__file__).resolve().parents[2]
# Spec 11.1 short names, as used in the seed verdict.
SPEC_NAMES = {
    0: "CODEOWNER", 1: "Sweep on in-PR commit", 2: "Evals", 3: "Upstream recipe", 4: "Reuse command",
    5: "Latest checklist", 6: "Upstream images / ordering", 7: "Deprecated models", 8: "No arch hacks",
    9: "Spec-decode chat template", 10: "No engine patches", 11: "Agentic golden AL", 12: "Append-only",
    13: "Draft runs as shipped", 14: "Pareto coverage", 15: "PR description",
}
ADVISORY = {4, 14, 15}
DOC_HEADINGS = ("What it checks:", "Why it matters:", "Evidence it cites:", "Not applicable when:", "How to fix:")
# Modules the pure core must never import (STYLE.md section 3).
FORBIDDEN = ("github", "bot", "requests", "urllib", "urllib3", "http", "socket", "httpx", "aiohttp")


def test_numbers_are_0_to_15_each_once_in_order():
    assert [c.number for c in CHECKS] == sorted(SPEC_NAMES)


def test_names_are_unique_and_equal_spec_short_names():
    assert {c.number: c.name for c in CHECKS} == SPEC_NAMES
    assert len({c.name for c in CHECKS}) == len(CHECKS)


def test_advisory_flags_match_spec():
    assert {c.number for c in CHECKS if c.advisory} == ADVISORY


def test_every_check_has_the_protocol_shape():
    for c in CHECKS:
        assert isinstance(c, Check), c
        assert isinstance(c.retired, bool)


def test_every_check_module_is_listed_once_and_its_number_matches():
    files = sorted((PROJECT / "checks").glob("check_*.py"))
    assert len(files) == len(CHECKS)
    modules = [module_of(c) for c in CHECKS]
    assert len(set(modules)) == len(CHECKS)
    for f in files:
        m = re.fullmatch(r"check_(\d\d)_[a-z0-9_]+\.py", f.name)
        assert m, f"bad check module name {f.name}"
        modname = f"checks.{f.stem}"
        assert modules.count(modname) == 1, f"{modname} is not listed exactly once in the registry"
        check = CHECKS[modules.index(modname)]
        assert check.number == int(m.group(1)), f"{f.name} holds check {check.number}"


@pytest.mark.parametrize("check", CHECKS, ids=lambda c: f"check_{c.number:02d}")
def test_docstring_has_the_five_headings_in_order(check):
    doc = importlib.import_module(module_of(check)).__doc__ or ""
    positions = [doc.find(h) for h in DOC_HEADINGS]
    assert all(p >= 0 for p in positions), f"missing headings: {[h for h, p in zip(DOC_HEADINGS, positions) if p < 0]}"
    assert positions == sorted(positions), "headings out of order"
    for heading, start in zip(DOC_HEADINGS, positions):
        body = doc[start + len(heading):].lstrip().split("\n", 1)[0]
        assert body.strip(), f"{heading} has no text"


def test_every_row_names_a_class_with_the_implementation_shape():
    for c in CHECKS:
        assert isinstance(c, Registered), c
        impl = c.implementation()
        assert isinstance(impl, Implementation), c.impl
        assert c.implementation() is impl, "an implementation is built once and shared"
        # Its number, name and kind are the registry row's alone (one place per fact).
        assert not {"number", "name", "advisory", "escalates", "retired"} & set(vars(type(impl))), c.impl


def test_the_registry_imports_no_check_module_until_a_check_runs():
    code = ("import sys, checks.registry as r; loaded = lambda: sorted(m for m in sys.modules if m.startswith('checks.check_'));"
            " print(loaded()); r.check_by_number(7).implementation(); print(loaded())")
    out = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["[]", "['checks.check_07_deprecated_models']"]


def test_check_by_number():
    assert check_by_number(12).name == "Append-only"
    with pytest.raises(KeyError):
        check_by_number(max(c.number for c in CHECKS) + 1)


def _imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.append((node.module, node.lineno))
        elif isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) in ("import_module", "__import__"):
            if node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
                out.append((node.args[0].value, node.lineno))
    return out


@pytest.mark.parametrize("package", ["checks", "recipes"])
def test_pure_core_never_imports_network_or_bot(package):
    offenders = []
    for path in sorted((PROJECT / package).rglob("*.py")):
        for name, line in _imports(path):
            top = name.split(".")[0]
            if top in FORBIDDEN:
                offenders.append(f"{path.relative_to(PROJECT)}:{line} imports {name}")
    assert offenders == []


def test_recipes_never_imports_checks():
    offenders = [
        f"{p.relative_to(PROJECT)}:{line}"
        for p in sorted((PROJECT / "recipes").rglob("*.py"))
        for name, line in _imports(p)
        if name.split(".")[0] == "checks"
    ]
    assert offenders == []


def test_import_scanner_sees_imports():
    # Guards the guard: the scanner must report the forms it claims to catch.
    sample = Path(__file__).resolve()
    names = {n for n, _ in _imports(sample)}
    assert {"ast", "importlib", "checks.base", "pytest"} <= names


# How a count of the checks gets spelled out; only the registry may know how many there are.
CHECK_COUNT_SPELLINGS = re.compile(r"range\(16\)|\b0-15\b|<=\s*15\b|\b(?:sixteen|Sixteen)\b|\{4, 14, 15\}|row\(14\)")


def test_only_the_registry_spells_out_the_check_numbers():
    offenders = []
    for package in ("bot", "checks", "recipes"):
        for path in sorted((PROJECT / package).rglob("*.py")):
            if path.name == "registry.py":
                continue
            for n, line in enumerate(path.read_text().splitlines(), 1):
                if CHECK_COUNT_SPELLINGS.search(line):
                    offenders.append(f"{path.relative_to(PROJECT)}:{n}: {line.strip()}")
    assert offenders == []


def test_only_one_registered_check_escalates_and_it_is_advisory():
    escalating = [c for c in CHECKS if c.escalates]
    assert [c.number for c in escalating] == [14] and all(c.advisory for c in escalating)


def test_no_check_module_imports_another():
    """Every check is a leaf: shared policy lives in named modules beside them (sweep_runs,
    golden_al, serving, launch_path), so changing one check never changes another."""
    offenders = []
    for path in sorted((PROJECT / "checks").glob("check_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and re.search(r"(^|\.)check_\d\d_", node.module):
                offenders.append(f"{path.name} imports {node.module}")
    assert offenders == []


def test_the_pure_core_never_reads_the_clock():
    clock = re.compile(r"\b(?:date\.today|datetime\.(?:now|utcnow|today)|time\.time)\(")
    offenders = [f"{p.relative_to(PROJECT)}:{n}" for package in ("checks", "recipes")
                 for p in sorted((PROJECT / package).rglob("*.py"))
                 for n, line in enumerate(p.read_text().splitlines(), 1) if clock.search(line)]
    assert offenders == []


def test_a_verdict_before_the_first_rule_loads_no_check_code_and_reads_no_repository():
    # Every check is N/A by date there (checks.policy), so nothing of the checks' own code runs.
    code = ("import sys; from tests.builders import build_snapshot; from checks.engine import evaluate;"
            " v = evaluate(build_snapshot({'review_date': '2026-03-02', 'head': {'README.md': 'x'}}));"
            " print(sorted({r.status.value for r in v.rows}));"
            " print(sorted(m for m in sys.modules if m.startswith('checks.check_') or m == 'recipes.repository'))")
    out = subprocess.run([sys.executable, "-c", code], cwd=PROJECT, capture_output=True, text=True, check=True)
    assert out.stdout.splitlines() == ["['N/A']", "[]"]
