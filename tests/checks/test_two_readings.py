"""One reading or none (checks.two_readings): which links and config keys count as two readings,
and the link sources every tree kind offers (recipes.source.links_of)."""
from __future__ import annotations

import subprocess

from checks.context import ReviewContext
from checks.engine import evaluate
from checks.two_readings import link_targets, two_readings
from recipes.source import GitSource, MemorySource, links_of
from tests.builders import build_snapshot

CONFIGS = "inferencex-e2e/configs"
AMD = f"{CONFIGS}/amd-master.yaml"
NVIDIA = f"{CONFIGS}/nvidia-master.yaml"
RUNNERS = "inferencex-e2e/runners"
CODEOWNERS = (
    "* @InferenceX/core\n"
    f"{AMD} @seungrokj\n"
    f"{NVIDIA} @ankur-singh\n"
)
BASE = {".github/CODEOWNERS": CODEOWNERS, AMD: "a: 1\n", NVIDIA: "b: 1\n",
        f"{RUNNERS}/launch_a.sh": "echo a\n", f"{RUNNERS}/launch_b.sh": "echo b\n",
        "inferencex-e2e/docs/guide.md": "# guide\n"}


def readings(**spec) -> list:
    return two_readings(ReviewContext(build_snapshot({"base": BASE, **spec})))


def test_memory_source_follows_links_inside_the_tree_only():
    src = MemorySource({"a/x.sh": "x"}, {"a/y.sh": "x.sh", "b": "a", "out": "../etc/passwd"})
    assert src.read("a/y.sh") == b"x" and src.read("b/x.sh") == b"x"
    assert src.read("out") is None
    assert "a/y.sh" in src.list("a")
    assert links_of(src) == {"a/y.sh": "x.sh", "b": "a", "out": "../etc/passwd"}
    assert links_of(object()) == {}


def test_git_source_lists_its_links(tmp_path):
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(tmp_path), *args], check=True, capture_output=True, text=True,
                              env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                                   "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}).stdout.strip()
    git("init", "-q")
    (tmp_path / "x.sh").write_text("x\n")
    (tmp_path / "y.sh").symlink_to("x.sh")
    git("add", "-A")
    git("commit", "-qm", "c")
    src = GitSource(str(tmp_path), git("rev-parse", "HEAD"), resolved=True)
    assert links_of(src) == {"y.sh": "x.sh"}
    assert src.read("y.sh") == b"x\n"


def test_a_link_the_pr_adds_on_a_read_path_is_two_readings_and_names_both():
    found = readings(head={f"{RUNNERS}/launch_c.sh": {"link": "launch_b.sh"}})
    assert [(r.link, r.target) for r in found] == [(f"{RUNNERS}/launch_c.sh", f"{RUNNERS}/launch_b.sh")]
    assert "makes inferencex-e2e/runners/launch_c.sh a symbolic link to inferencex-e2e/runners/launch_b.sh" in found[0].message
    assert not found[0].masters


def test_links_between_documents_and_links_out_of_the_tree_are_not_two_readings():
    # Documentation has one reading for the bot; a link out of the tree is unreadable, reported as such.
    assert readings(head={"inferencex-e2e/docs/howto.md": {"link": "guide.md"}}) == []
    # As in the real history (#2546): tool folders linked to each other are not read by the checks.
    assert readings(head={".claude/skills/debug-runs": {"link": "../../.agents/skills/debug-runs"},
                          ".agents/skills/debug-runs/SKILL.md": "# skill\n"}) == []
    assert readings(head={f"{RUNNERS}/launch_c.sh": {"link": "../../../etc/passwd"}}) == []


def test_a_link_already_at_the_merge_base_or_on_the_target_is_read_through():
    link = {f"{RUNNERS}/launch_c.sh": {"link": "launch_a.sh"}}
    assert readings(base={**BASE, **link}, head={AMD: "a: 2\n"}) == []
    # Landed on the target branch after the PR branched, and the PR carries the same link.
    assert readings(target_changes=link, head=link) == []


def test_a_re_pointed_link_names_its_old_target():
    base = {**BASE, f"{RUNNERS}/launch_c.sh": {"link": "launch_a.sh"}}
    found = two_readings(ReviewContext(build_snapshot(base=base, head={f"{RUNNERS}/launch_c.sh": {"link": "launch_b.sh"}})))
    assert len(found) == 1
    assert "(it pointed to inferencex-e2e/runners/launch_a.sh)" in found[0].message
    assert "or point it back to inferencex-e2e/runners/launch_a.sh" in found[0].message


def test_a_duplicate_key_counts_only_when_the_pr_touches_a_file_defining_it():
    entry = "k:\n  image: x\n"
    base = {**BASE, AMD: entry, NVIDIA: entry}
    assert two_readings(ReviewContext(build_snapshot(base=base, head={"inferencex-e2e/docs/guide.md": "# new\n"}))) == []
    found = two_readings(ReviewContext(build_snapshot(base=base, head={NVIDIA: entry + "# touched\n"})))
    assert len(found) == 1 and found[0].masters
    assert f"{AMD}:1" in found[0].message and f"{NVIDIA}:1" in found[0].message


def test_check_0_asks_for_the_owners_of_the_link_and_of_its_target():
    ctx = ReviewContext(build_snapshot(base=BASE, head={AMD: {"link": "nvidia-master.yaml"}}))
    assert link_targets(ctx) == {AMD: NVIDIA}
    row = evaluate(ctx.snapshot, only={0}).row(0)
    assert row.status.value == "FAIL"
    assert "No sign-off" in row.reason and "@seungrokj" in row.reason and "@ankur-singh" in row.reason
