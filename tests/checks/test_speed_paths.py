"""The fast paths the history replay asked for keep the answers of the slow ones.

- Directory listings come from a sorted index (a check lists directories once per point and
  setting: a scan of every path per call cost a second on a large commit).
- A file's changed lines are matched only between the common head and tail.
- A shell condition's value is memoized per (condition, variables).
- The points a PR removes are found by identity, fingerprinting only the points the two views
  do not share.
"""
from __future__ import annotations

import difflib
import random
import subprocess
from pathlib import Path

import pytest

from recipes.launch.path.conditions import evaluate_condition
from checks.context import _point_identity, _removed_points
from recipes.launch.path.launch_path import _changed_lines
from recipes.repository import Repository
from recipes.source import GitSource, MemorySource, PathIndex

MASTER = "inferencex-e2e/configs/amd-master.yaml"
MASTER_TEXT = (Path(__file__).resolve().parents[1] / "fixtures/repos/new-layout" / MASTER).read_text()

PATHS = ["a/b/x.sh", "a/bc/y.sh", "a/b", "a/b/c/z.sh", "b.yaml", "a/b-c/w.sh"]


def _scan(paths: list[str], directory: str) -> list[str]:
    """The old listing: every path under `directory`, sorted, not `directory` itself."""
    d = directory.strip("/")
    return sorted(p for p in paths if (not d or p.startswith(d + "/")) and p != d)


def test_index_lists_like_a_scan():
    index = PathIndex(PATHS)
    for directory in ("", "a", "a/b", "/a/b/", "a/bc", "a/b/c", "b.yaml", "missing", "a/b/c/z.sh"):
        assert index.under(directory) == _scan(PATHS, directory), directory
    # A sibling that shares the prefix text ("a/bc", "a/b-c") is not inside "a/b".
    assert index.under("a/b") == ["a/b/c/z.sh", "a/b/x.sh"]


def test_sources_list_through_the_index(tmp_path):
    mem = MemorySource({p: "x" for p in PATHS})
    assert mem.list("a/b") == ["a/b/c/z.sh", "a/b/x.sh"] and mem.list("") == sorted(PATHS)
    repo = tmp_path / "r"
    repo.mkdir()
    for p in ("a/b/x.sh", "a/bc/y.sh", "a/b/c/z.sh"):
        (repo / p).parent.mkdir(parents=True, exist_ok=True)
        (repo / p).write_text("echo\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    src = GitSource(repo, "HEAD")
    assert src.list("a/b") == ["a/b/c/z.sh", "a/b/x.sh"] and src.list("a/bc") == ["a/bc/y.sh"]


def test_a_resolved_git_source_asks_git_no_rev_parse(tmp_path, monkeypatch):
    repo = tmp_path / "r"
    repo.mkdir()
    (repo / "x.sh").write_text("echo\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "x"], check=True)
    sha = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True, text=True).stdout.strip()
    asked: list[tuple[str, ...]] = []
    real = GitSource._git
    monkeypatch.setattr(GitSource, "_git", lambda self, *args: asked.append(args) or real(self, *args))
    assert GitSource(repo, sha, resolved=True).sha == sha
    assert [a[0] for a in asked] == ["ls-tree"]
    assert GitSource(repo, "HEAD").sha == sha and [a[0] for a in asked[1:]] == ["rev-parse", "ls-tree"]
    with pytest.raises(ValueError):
        GitSource(repo, "HEAD", resolved=True)


def _full_match(old: tuple[str, ...], new: tuple[str, ...]) -> frozenset[int]:
    """The same rule as `_changed_lines`, matching the whole files (the code before trimming)."""
    out: set[int] = set()
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes():
        if op in ("replace", "insert"):
            out.update(j + 1 for j in range(j1, j2) if new[j])
        if op == "delete" and any(old[i] for i in range(i1, i2)):
            out.update(x for x in (j1, j1 + 1) if 1 <= x <= len(new))
    return frozenset(out)


def test_changed_lines_cases():
    base = tuple(f"line {i}" for i in range(1, 11))
    assert _changed_lines(base, base) == frozenset()
    assert _changed_lines(base, base + ("added",)) == {11}
    assert _changed_lines(base, ("first",) + base) == {1}
    edited = base[:4] + ("changed",) + base[5:]
    assert _changed_lines(base, edited) == {5}
    # A deletion marks the lines around the gap on the head side.
    assert _changed_lines(base, base[:3] + base[4:]) == {3, 4}
    # A blank line added is not code.
    assert _changed_lines(base, base[:2] + ("",) + base[2:]) == frozenset()


def test_changed_lines_agree_with_a_whole_file_match_on_random_edits():
    rng = random.Random(7)
    words = ["fi", "done", "echo x", "", "run_benchmark_serving", "}", "set -e"]
    for _ in range(300):
        old = tuple(rng.choice(words) for _ in range(rng.randint(0, 30)))
        new = list(old)
        for _ in range(rng.randint(1, 3)):
            at = rng.randint(0, len(new))
            if new and rng.random() < 0.4:
                del new[min(at, len(new) - 1)]
            else:
                new.insert(at, rng.choice(words + ["new code"]))
        new_t = tuple(new)
        got, whole = _changed_lines(old, new_t), _full_match(old, new_t)
        # Repeated lines can align differently, but both must name the same number of changed
        # lines when the edit is unambiguous, and the trimmed match never reports an unchanged
        # common head or tail.
        lead = next((i for i, (a, b) in enumerate(zip(old, new_t)) if a != b), min(len(old), len(new_t)))
        assert all(n > lead - 1 for n in got), (old, new_t, got)
        if len(set(old)) == len(old) and len(set(new_t)) == len(new_t):
            assert got == whole


def test_condition_memo_answers_per_variables():
    cond = '[[ "$SPEC_DECODING" == "mtp" ]]'
    assert evaluate_condition(cond, {"SPEC_DECODING": "mtp"}) is True
    assert evaluate_condition(cond, {"SPEC_DECODING": "none"}) is False
    assert evaluate_condition(cond, {}) is None
    # Same condition, same variables in another order: the same answer.
    both = '[[ "$SPEC_DECODING" == "mtp" && "$FRAMEWORK" == "sglang" ]]'
    assert evaluate_condition(both, {"SPEC_DECODING": "mtp", "FRAMEWORK": "sglang"}) is True
    assert evaluate_condition(both, {"FRAMEWORK": "sglang", "SPEC_DECODING": "mtp"}) is True
    # Parentheses nested past the compiler's limit are unknown, not a crash.
    deep = "[[ " + "(" * 300 + '"$X" == "1"' + ")" * 300 + " ]]"
    assert evaluate_condition(deep, {"X": "1"}) is None


def test_removed_points_are_every_unmatched_identity_and_only_unshared_points_are_fingerprinted():
    # The head narrows one arm from TP 8 to TP 4 on the same line: every other entry is the same
    # object in both views, and so are its points.
    head_text = MASTER_TEXT.replace("      - tp: 8\n        ep: 1\n        spec-decoding: mtp", "      - tp: 4\n        ep: 1\n        spec-decoding: mtp", 1)
    assert head_text != MASTER_TEXT
    base = Repository(MemorySource({MASTER: MASTER_TEXT})).points
    head = Repository(MemorySource({MASTER: head_text})).points
    removed = _removed_points(base, head)
    fingerprinted = [p for p in base if "fingerprint" in p.__dict__]
    assert removed and {p.tp for p in removed} == {8} and {p.config_key for p in removed} == {"dsr1-fp8-mi355x-sglang-mtp"}
    # Only the changed entry's base points were fingerprinted; the shared ones were not.
    assert {p.config_key for p in fingerprinted} == {"dsr1-fp8-mi355x-sglang-mtp"}
    assert len(fingerprinted) < len(base)
    head_ids = {_point_identity(p) for p in head}
    assert removed == [p for p in base if _point_identity(p) not in head_ids]
