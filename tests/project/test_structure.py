"""Structure rules that keep one place per rule (issue 14): the I/O boundary, module sizes, the
builder that reads without predicting the checks, the accessors, and the one pipeline."""
from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from bot.github_data import GitHubData
from checks.engine import evaluate
from checks.snapshot import PRData, SnapshotData
from tests.builders import build_snapshot, statuses, world_snapshot

PROJECT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "checks", "recipes")
MAX_MODULE_LINES = 700
MAX_PYGITHUB_MODULES = 2
# What only a check decides (which owners, bypass comments, upstream links and runs matter):
# names the bot package must not use, so it cannot re-implement the decision to fetch ahead.
CHECK_DECISIONS = ("parse_codeowners", "pareto_bypass_phrase", "upstream_recipe_repos", "upstream_recipe_sites",
                   "group_runs", "find_section", "find_reuse_command")


def _modules(*packages: str) -> list[Path]:
    return sorted(p for pkg in packages for p in (PROJECT / pkg).rglob("*.py") if "worlds" not in p.parts)


@functools.lru_cache(maxsize=None)
def _tree(path: Path) -> ast.Module:
    """One parse per module for every rule of this file."""
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _imports(path: Path) -> set[str]:
    tree = _tree(path)
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
    return out


def _rel(path: Path) -> str:
    return path.relative_to(PROJECT).as_posix()


def test_pygithub_is_imported_by_at_most_two_bot_modules():
    users = [_rel(p) for p in _modules("bot") if any(m == "github" or m.startswith("github.") for m in _imports(p))]
    assert len(users) <= MAX_PYGITHUB_MODULES, users


def test_no_module_is_over_the_size_limit():
    sizes = {_rel(p): len(p.read_text(encoding="utf-8").splitlines()) for p in _modules(*PACKAGES)}
    over = {path: n for path, n in sizes.items() if n > MAX_MODULE_LINES}
    assert not over, over
    assert sizes["bot/snapshot_builder.py"] <= MAX_MODULE_LINES


def test_the_bot_package_does_not_decide_what_checks_decide():
    found = {_rel(p): [n for n in CHECK_DECISIONS if n in p.read_text(encoding="utf-8")] for p in _modules("bot")}
    assert not {path: names for path, names in found.items() if names}


def _attribute_reads(path: Path, owner: str, name: str) -> list[int]:
    """Lines of `<...>.owner.name` reads in a module (e.g. `ctx.snapshot.base`)."""
    return [node.lineno for node in ast.walk(_tree(path)) if isinstance(node, ast.Attribute) and node.attr == name
            and isinstance(node.value, ast.Attribute) and node.value.attr == owner]


def test_checks_name_the_baseline_they_compare_with():
    """Issue 31: "what did this PR change?" reads `merge_base_tree` (or `base_repo`), "what is the
    rule?" `target_tree` (or `target_repo`); no check reads the raw field `snapshot.base`, so each
    comparison says which question it asks."""
    found = {_rel(p): _attribute_reads(p, "snapshot", "base") for p in _modules("checks")}
    assert not {path: lines for path, lines in found.items() if lines}


def test_handlers_do_not_import_the_cli():
    offenders = [_rel(p) for p in _modules("bot") if p.parent.name != "commands" and p.name != "cli.py"
                 and any(m.startswith("bot.commands") for m in _imports(p))]
    # bot/cli.py is the one place that knows the commands.
    assert not offenders, offenders


@pytest.mark.parametrize("implementation", [SnapshotData, GitHubData])
def test_every_accessor_is_implemented(implementation):
    assert issubclass(implementation, PRData)
    assert not getattr(implementation, "__abstractmethods__", None)


def test_the_accessor_interface_is_pure():
    assert not {m for m in _imports(PROJECT / "checks" / "snapshot.py") if m.split(".")[0] in ("bot", "github", "requests")}


def test_concurrent_evaluation_gives_the_rows_of_sequential_evaluation(tmp_path):
    """A lazy snapshot's checks run in a thread pool: same rows, registry order."""
    snap = world_snapshot("seed", tmp_path / "seed")
    assert not snap.is_lazy
    sequential = evaluate(snap)
    lazy = snap.model_copy().with_data(SnapshotData(snap))
    assert lazy.is_lazy
    concurrent = evaluate(lazy)
    assert [r.model_dump() for r in concurrent.rows] == [r.model_dump() for r in sequential.rows]
    assert [r.number for r in concurrent.rows] == sorted(r.number for r in concurrent.rows)


def test_a_check_asks_only_for_the_facts_it_needs():
    """Check 0 asks the membership of the signer only in the teams of the lines that decide."""
    asked: list[tuple[str, str]] = []

    class Recording(SnapshotData):
        def is_team_member(self, team, login, *, settle=False):
            asked.append((team, login))
            return super().is_team_member(team, login, settle=settle)

    snap = build_snapshot(
        target={".github/CODEOWNERS": "* @org/core\n/a.txt @org/one @org/two @org/three\n"},
        base={"a.txt": "x\n"}, head={"a.txt": "y\n"},
        signoff={"author": "alice", "body": "As a PR reviewer and CODEOWNER, I have reviewed this."},
        team_members={"org/one": [], "org/two": ["alice"], "org/three": []},
    )
    snap = snap.with_data(Recording(snap))
    verdict = evaluate(snap, only={0})
    assert statuses(verdict) == {0: "PASS"}
    # (asked again is free: an implementation answers each question once)
    assert list(dict.fromkeys(asked)) == [("org/one", "alice"), ("org/two", "alice")]


# A class statement and its bases (read as text: parsing every module costs a second).
_CLASS = re.compile(r"^[ \t]*class[ \t]+(\w+)[ \t]*\(([^)]*)\)", re.M)


def _class_bases(path: Path) -> list[tuple[str, list[str]]]:
    return [(m.group(1), [b.strip() for b in m.group(2).split(",")])
            for m in _CLASS.finditer(path.read_text(encoding="utf-8"))]


def test_every_model_builds_its_schema_on_first_use():
    """One base (recipes.model.Model) defers pydantic's schema building for every model; a class
    deriving BaseModel directly would build its schema in every process's start-up again."""
    direct = [f"{_rel(p)}:{name}" for p in _modules(*PACKAGES) for name, bases in _class_bases(p)
              if any(b in ("BaseModel", "pydantic.BaseModel") for b in bases) and _rel(p) != "recipes/model.py"]
    assert not direct, direct


def test_a_deferred_model_still_validates_on_first_use():
    import importlib

    from recipes.model import DEFER_BUILD, Model

    classes = [obj for mod in ("recipes.errors", "checks.result", "recipes.points", "checks.engine")
               for obj in vars(importlib.import_module(mod)).values()
               if isinstance(obj, type) and issubclass(obj, Model) and obj is not Model]
    assert classes and all(c.model_config.get("defer_build") is DEFER_BUILD for c in classes)
    from recipes.errors import Finding

    with pytest.raises(ValueError):
        Finding(path="a.yaml", line="not a line", message="m")
    assert Finding(path="a.yaml", line="3", message="m").line == 3


def test_models_defer_their_schemas_only_under_a_pydantic_that_locks_the_build():
    # pydantic 2.14 (PR 13438) builds a deferred schema under a lock; the GitHub mode first uses
    # models from thread pools, so an older pydantic (the tested lower bound is 2.10) builds at
    # import as before. 2.13.4's main.py has no `_rebuild_lock`; 2.14.0's has.
    from recipes.model import defers

    assert not defers("2.10.0") and not defers("2.13.4") and not defers("1.10.26")
    assert defers("2.14.0") and defers("2.15.0b1") and defers("3.0")
    assert not defers("unknown")


def test_the_checks_that_share_the_trace_budget_run_in_one_thread_in_budget_order(tmp_path):
    """They share the review's interpreter budget: which of them a spent budget starves must
    not depend on thread timing (checks.engine.BUDGET_ORDER)."""
    import threading

    from checks.context import ReviewContext
    from checks.engine import BUDGET_ORDER, evaluate_context
    from checks.registry import CHECK_NUMBERS
    from checks.result import CheckResult

    seen: list[tuple[int, str]] = []

    class Stub:
        def __init__(self, number):
            self.number, self.name = number, f"stub {number}"

        def applies(self, ctx):
            return None

        def evaluate(self, ctx):
            seen.append((self.number, threading.current_thread().name))
            return CheckResult.passed("ok")

    snap = world_snapshot("seed", tmp_path / "seed")
    for data in (snap, snap.model_copy().with_data(SnapshotData(snap))):
        seen.clear()
        stubs = [Stub(n) for n in CHECK_NUMBERS]
        rows = evaluate_context(ReviewContext(data), checks=stubs).rows
        assert [r.number for r in rows] == sorted(CHECK_NUMBERS)
        traced = [(n, t) for n, t in seen if n in BUDGET_ORDER]
        assert [n for n, _ in traced] == list(BUDGET_ORDER) and len({t for _, t in traced}) == 1
