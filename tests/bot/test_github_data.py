"""bot/github_data.py: the snapshot's accessors over the API, each resource read once."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

from github import GithubException

from bot.github_data import GitHubData, MSG_NOT_SWEEP_RUN
from checks.snapshot import Unavailable
from recipes.config import RepoConfig

REPO = "o/r"
RUN = 42


class FakeApi:
    """Answers by path; records every request."""

    def __init__(self, answers: dict[str, object]):
        self.answers, self.calls = answers, []
        self._lock = threading.Lock()

    def _answer(self, path: str):
        with self._lock:
            self.calls.append(path)
        value = self.answers[path]
        if isinstance(value, Exception):
            raise value
        return value

    def get(self, path, params=None):
        return self._answer(path)

    def list(self, path, params=None, key=None):
        return self._answer(path)


def _data(api: FakeApi, config: RepoConfig | None = None) -> GitHubData:
    return GitHubData(api, REPO, config or RepoConfig(), head_ref="feature", pool=ThreadPoolExecutor(4))


def test_a_404_membership_is_settled_only_when_asked_to_and_then_once():
    api = FakeApi({"/orgs/org/teams/t/memberships/alice": GithubException(404, {"message": "Not Found"}),
                   "/orgs/org/teams/t": {"slug": "t"}})
    data = _data(api)
    assert isinstance(data.is_team_member("org/t", "alice"), Unavailable)
    assert api.calls == ["/orgs/org/teams/t/memberships/alice"]
    assert data.is_team_member("org/t", "alice", settle=True) is False  # a visible team: "not a member"
    assert data.is_team_member("org/t", "alice", settle=True) is False
    assert api.calls == ["/orgs/org/teams/t/memberships/alice", "/orgs/org/teams/t"]


def test_an_invisible_team_stays_unknown():
    api = FakeApi({"/orgs/org/teams/t/memberships/alice": GithubException(404, {"message": "Not Found"}),
                   "/orgs/org/teams/t": GithubException(404, {"message": "Not Found"})})
    answer = _data(api).is_team_member("org/t", "alice", settle=True)
    assert isinstance(answer, Unavailable) and "org/t" in answer.reason


def test_a_run_of_another_workflow_is_read_without_its_artifacts_and_once_across_policies():
    run = {"id": RUN, "head_sha": "a" * 40, "event": "pull_request", "status": "completed", "conclusion": "success",
           "path": ".github/workflows/other.yml", "created_at": "2026-10-08T09:00:00Z"}
    api = FakeApi({f"/repos/{REPO}/actions/runs/{RUN}": run,
                   f"/repos/{REPO}/actions/runs/{RUN}/artifacts": [{"name": "results_bmk", "id": 7}]})
    data = _data(api)
    got = data.sweep_run(RUN)
    assert got.workflow_path == ".github/workflows/other.yml" and [a.name for a in got.artifacts] == ["results_bmk"]
    assert got.throughput == Unavailable(reason=MSG_NOT_SWEEP_RUN.format(run=RUN))
    # Under another policy (the real one after a provisional one) the run is judged again, from
    # the reads already made.
    other = RepoConfig.model_validate({"sweep": {"workflow": ".github/workflows/other.yml"}})
    again = data.for_config(other).sweep_run(RUN)
    assert again.throughput != got.throughput  # a sweep run there: its artifact is downloaded (here it fails)
    assert sorted(api.calls) == sorted([f"/repos/{REPO}/actions/runs/{RUN}", f"/repos/{REPO}/actions/runs/{RUN}/artifacts"])


def test_concurrent_askers_of_one_resource_cause_one_request():
    api = FakeApi({f"/repos/{REPO}/collaborators/bob/permission": {"permission": "admin", "role_name": "admin"}})
    data = _data(api)
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: data.user_access("bob"), range(12)))
    assert all(a.permission == "admin" for a in answers)
    assert api.calls == [f"/repos/{REPO}/collaborators/bob/permission"]


def test_a_page_link_is_never_fetched():
    api = FakeApi({})
    ref = _data(api).upstream_ref("https://docs.sglang.io/x")
    assert ref.kind == "page" and ref.unavailable and api.calls == []


def test_a_cloned_repository_is_read_at_the_commit_github_names_for_the_ref_and_only_when_the_policy_names_it():
    import base64

    sha, blob = "c" * 40, "d" * 40
    ext = "/repos/NVIDIA/srt-slurm"
    api = FakeApi({f"{ext}/commits/sa-submission-q2-2026": {"sha": sha},
                   f"{ext}/git/trees/{sha}": {"tree": [{"path": "recipes/a.yaml", "type": "blob", "sha": blob,
                                                        "size": 9, "mode": "100644"}]},
                   f"{ext}/git/blobs/{blob}": {"content": base64.b64encode(b"name: a\n").decode(), "encoding": "base64"},
                   "/repos/NVIDIA/srt-slurm/commits/gone": GithubException(404, {"message": "No commit found"})})
    data = _data(api)
    tree = data.external_tree("NVIDIA/srt-slurm", "sa-submission-q2-2026")
    assert tree.sha == sha and tree.source.read("recipes/a.yaml") == b"name: a\n"
    assert tree.source.read("recipes/missing.yaml") is None
    assert data.external_tree("nvidia/srt-slurm", "sa-submission-q2-2026") is tree  # asked once
    assert isinstance(data.external_tree("NVIDIA/srt-slurm", "gone"), Unavailable)
    assert data.external_tree("someone/srt-slurm", "main") is None
    assert isinstance(data.external_tree("NVIDIA/srt-slurm", "../../orgs/x"), Unavailable)
    assert not any(c.startswith("/repos/someone") for c in api.calls)
