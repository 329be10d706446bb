"""Local mode's clones of the repositories runners clone (`--external-repo OWNER/NAME=DIR`)."""
from __future__ import annotations

import os
import subprocess
from datetime import date

import pytest

from bot.local import LocalExternal, LocalModeError, external_repos
from checks.snapshot import Unavailable


def _git(repo, *args, when=None):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@x", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@x")
    if when:
        env.update(GIT_AUTHOR_DATE=when, GIT_COMMITTER_DATE=when)
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=env).stdout.decode().strip()


@pytest.fixture
def clone(tmp_path):
    repo = tmp_path / "srt-slurm"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    (repo / "recipes").mkdir()
    (repo / "recipes" / "a.yaml").write_text("v: 1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "one", when="2026-07-01T12:00:00Z")
    _git(repo, "tag", "v1.0.1")
    _git(repo, "branch", "sa-submission")
    (repo / "recipes" / "a.yaml").write_text("v: 2\n")
    _git(repo, "commit", "-qam", "two", when="2026-08-01T12:00:00Z")
    _git(repo, "checkout", "-q", "sa-submission")
    (repo / "recipes" / "a.yaml").write_text("v: 3\n")
    _git(repo, "commit", "-qam", "three", when="2026-08-15T12:00:00Z")
    _git(repo, "checkout", "-q", "main")
    return repo


def test_a_branch_is_read_as_it_stood_on_the_review_date_and_a_tag_as_it_is(clone):
    dirs = external_repos([f"NVIDIA/srt-slurm={clone}"])
    early = LocalExternal(dirs, date(2026, 7, 20))
    assert early("nvidia/srt-slurm", "HEAD").source.read("recipes/a.yaml") == b"v: 1\n"
    assert early("NVIDIA/srt-slurm", "sa-submission").source.read("recipes/a.yaml") == b"v: 1\n"
    late = LocalExternal(dirs, date(2026, 9, 1))
    assert late("NVIDIA/srt-slurm", "HEAD").source.read("recipes/a.yaml") == b"v: 2\n"
    assert late("NVIDIA/srt-slurm", "sa-submission").source.read("recipes/a.yaml") == b"v: 3\n"
    assert late("NVIDIA/srt-slurm", "v1.0.1").source.read("recipes/a.yaml") == b"v: 1\n"
    sha = _git(clone, "rev-parse", "v1.0.1")
    pinned = late("NVIDIA/srt-slurm", sha)
    assert pinned.sha == sha and pinned.ref == sha


def test_what_the_clone_cannot_answer_is_unavailable_and_other_repositories_are_unknown(clone):
    reader = LocalExternal(external_repos([f"NVIDIA/srt-slurm={clone}"]), date(2026, 6, 1))
    gone = reader("NVIDIA/srt-slurm", "no-such-branch")
    assert isinstance(gone, Unavailable) and "no ref 'no-such-branch'" in gone.reason
    early = reader("NVIDIA/srt-slurm", "main")
    assert isinstance(early, Unavailable) and "no commit on or before 2026-06-01" in early.reason
    assert reader("cquil11/srt-slurm-nv", "main") is None


def test_a_bad_option_names_itself(tmp_path):
    with pytest.raises(LocalModeError, match="expected OWNER/NAME=DIR"):
        external_repos(["srt-slurm"])
    with pytest.raises(LocalModeError, match="not a git repository"):
        external_repos([f"NVIDIA/srt-slurm={tmp_path}"])
