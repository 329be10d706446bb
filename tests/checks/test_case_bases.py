"""Case-file bases (tests/cases/_bases): every base is shared, and `extends` merges as tests/cases/README.md says."""
from __future__ import annotations

from pathlib import Path

import pytest

from tests.builders import read_yaml
from tests.checks.test_check_cases import CASES, load_case, test_case as run_case

BASES = CASES / "_bases"


def _extends(path: Path) -> list[str]:
    names = (read_yaml(path.read_text(encoding="utf-8")) or {}).get("extends", [])
    return [names] if isinstance(names, str) else list(names)


def _closure(names: list[str]) -> set[str]:
    seen: set[str] = set()
    todo = list(names)
    while todo:
        name = todo.pop()
        if name not in seen:
            seen.add(name)
            todo += _extends(BASES / f"{name}.yaml")
    return seen


def test_every_base_is_used_by_at_least_two_cases():
    users: dict[str, list[str]] = {p.stem: [] for p in BASES.glob("*.yaml")}
    assert users, f"no bases under {BASES}"
    for case in sorted(CASES.glob("check_[0-9][0-9]/*.yaml")):
        for name in _closure(_extends(case)):
            users[name].append(f"{case.parent.name}/{case.stem}")
    lonely = {name: cases for name, cases in users.items() if len(cases) < 2}
    assert lonely == {}, f"a base serves at least two cases; inline these: {lonely}"
    assert not [p.name for p in BASES.iterdir() if p.suffix != ".yaml"], "only NAME.yaml files live in _bases"


@pytest.fixture
def tree(tmp_path):
    """A throwaway tests/cases layout: write(rel, text) puts a file under it; case(snapshot
    part, extends) writes check_07/case.yaml and returns its resolved snapshot."""
    (tmp_path / "_bases").mkdir()
    (tmp_path / "check_07").mkdir()

    def write(rel: str, text: str) -> Path:
        path = tmp_path / rel
        path.write_text(text, encoding="utf-8")
        return path

    def case(extends, snapshot: str = "{}") -> dict:
        path = write("check_07/case.yaml", f"description: x\ncheck: 7\nextends: {extends}\n"
                                           f"snapshot: {snapshot}\nexpect: {{status: PASS}}\n")
        return load_case(path)["snapshot"]

    write.case = case
    return write


def test_trees_merge_path_by_path_and_null_deletes(tree):
    tree("_bases/repo.yaml", "base: {a.yaml: A, b.yaml: B}\nhead: {a.yaml: A2}\ntarget: {c.md: C}\n")
    got = tree.case("repo", "{base: {b.yaml: null, d.yaml: D}, head: {e.yaml: E}, target: {c.md: null}}")
    assert got["base"] == {"a.yaml": "A", "d.yaml": "D"}
    assert got["head"] == {"a.yaml": "A2", "e.yaml": "E"}
    assert got["target"] == {}


def test_null_in_head_stays_the_pr_deleting_the_file(tree):
    tree("_bases/repo.yaml", "base: {a.yaml: A}\nhead: {a.yaml: A2}\n")
    got = tree.case("repo", "{head: {a.yaml: null}}")
    assert got["head"] == {"a.yaml": None}
    from tests.builders import build_snapshot

    snap = build_snapshot(got)
    assert snap.head.read("a.yaml") is None and [f.status for f in snap.files] == ["removed"]


def test_lists_and_scalars_replace_and_mappings_merge(tree):
    tree("_bases/pr.yaml", "number: 5\nlabels: [a, b]\nsignoff: {id: 1, author: amd, body: signed}\n"
                           "config: {policy: {pareto_min_frontier: 3, x: 1}}\n")
    got = tree.case("pr", "{number: 6, labels: [c], signoff: {author: nv}, config: {policy: {x: 2}}}")
    assert got["number"] == 6 and got["labels"] == ["c"]
    assert got["signoff"] == {"id": 1, "author": "nv", "body": "signed"}
    assert got["config"] == {"policy": {"pareto_min_frontier": 3, "x": 2}}


def test_bases_chain_and_lists_merge_left_to_right(tree):
    tree("_bases/root.yaml", "number: 1\nbase: {a: A}\n")
    tree("_bases/mid.yaml", "extends: root\nnumber: 2\nbase: {b: B}\n")
    tree("_bases/other.yaml", "number: 3\nbase: {a: A3}\n")
    assert tree.case("mid") == {"number": 2, "base": {"a": "A", "b": "B"}}
    assert tree.case("[mid, other]") == {"number": 3, "base": {"a": "A3", "b": "B"}}
    assert tree.case("[other, mid]") == {"number": 2, "base": {"a": "A", "b": "B"}}


def test_a_base_is_not_changed_by_the_cases_that_extend_it(tree):
    tree("_bases/repo.yaml", "base: {a: A}\n")
    tree.case("repo", "{base: {a: null, b: B}}")
    assert tree.case("repo") == {"base": {"a": "A"}}


@pytest.mark.parametrize("files, extends, message", [
    ({}, "nowhere", r"case\.yaml: unknown base 'nowhere'"),
    ({"_bases/a.yaml": "extends: b\n", "_bases/b.yaml": "extends: a\n"}, "a", r"b\.yaml: `extends` cycle: a -> b -> a"),
    ({"_bases/self.yaml": "extends: [self]\n"}, "self", r"self\.yaml: `extends` cycle: self -> self"),
    ({"_bases/typo.yaml": "bsae: {a: A}\n"}, "typo", r"typo\.yaml: unknown keys \['bsae'\]"),
    ({"_bases/list.yaml": "- base\n"}, "list", r"list\.yaml: a base is a snapshot mapping"),
    ({}, "../check_07/case", r"case\.yaml: base name '\.\./check_07/case' is not a plain file stem"),
    ({}, "[]", r"case\.yaml: `extends` is a base name or a non-empty list"),
])
def test_bad_bases_fail_naming_the_file(tree, files, extends, message):
    for rel, text in files.items():
        tree(rel, text)
    with pytest.raises(AssertionError, match=message):
        tree.case(extends)


def test_unknown_snapshot_keys_fail_the_case(tree):
    path = tree("check_07/typo.yaml", "description: x\ncheck: 7\nsnapshot: {haed: {}}\nexpect: {status: PASS}\n")
    with pytest.raises(AssertionError, match=r"typo\.yaml: unknown snapshot keys \['haed'\]"):
        load_case(path)


def test_a_case_runs_on_its_resolved_snapshot(tree, monkeypatch):
    # The runner evaluates the merged snapshot: the base's PR number reaches the scripted check.
    import checks.registry
    from checks.result import CheckResult
    from tests.builders import FakeCheck, fake_checks

    class NumberCheck(FakeCheck):
        def evaluate(self, ctx):
            return CheckResult.passed(f"pr {ctx.snapshot.number}")

    monkeypatch.setattr(checks.registry, "CHECKS", tuple(fake_checks({7: NumberCheck(7)})))
    tree("_bases/pr.yaml", "number: 3603\n")
    path = tree("check_07/run.yaml", "description: x\ncheck: 7\nextends: pr\n"
                                     "expect: {status: PASS, reason_contains: ['pr 3603']}\n")
    run_case(path)
