"""The GitHub snapshot builder and its client: what it fetches (and how often) from the emulator,
lazy file reads, bounded retries, and failures that become Unavailable with a reason."""
from __future__ import annotations

import threading
from collections import Counter
from datetime import date
from pathlib import Path

import pytest
from github import Auth, GithubException

from bot import github_client, snapshot_builder
from bot.github_client import ClientError, GitHubApi, auth_from_env, fetch
from bot.remote_source import RemoteReadError, apply_patch, candidates, git_blob_sha
from ghsim import Emulator
from bot.snapshot_builder import SnapshotError, archive_cap_from_env, build_snapshot, find_signoff, parse_signoff_ref
from checks.engine import evaluate
from checks.context import ReviewContext
from checks.snapshot import Comment, Unavailable
from checks.sweep_runs import reuse_source
from tests.builders import PushOnce, emulator_api, hooked_api

WORLDS = Path(__file__).resolve().parents[2] / "ghsim" / "worlds"
SEED = WORLDS / "seed"
REVIEW_DATE = date(2026, 11, 29)
SEED_RUN = 37597985033
GATE_RUN = 37630112458
SIGNOFF_KEY = "issuecomment-4401"
PHRASE = "As a PR reviewer and CODEOWNER"
BLOBS = "GET /repos/{owner}/{repo}/git/blobs/{sha}"
TREES = "GET /repos/{owner}/{repo}/git/trees/{ref}"
TARBALL = "GET /repos/{owner}/{repo}/tarball/{ref}"
CODELOAD = "GET /_sandbox/codeload/{owner}/{repo}/{sha}/{signature}"
MEMBERSHIP = "GET /orgs/{org}/teams/{slug}/memberships/{user}"
DOWNLOAD = "GET /_sandbox/artifacts/{artifact_id}/{signature}"
# Issue 5: a seed verdict costs at most this many requests.
SEED_READ_BUDGET = 20


@pytest.fixture(scope="module")
def seed_emu():
    with Emulator(SEED, strict=True) as emu:
        yield emu


def build(emu: Emulator, **kw):
    return build_snapshot(emulator_api(emu), emu.world.repo, emu.world.pr.number, review_date=REVIEW_DATE, **kw)


@pytest.fixture(scope="module")
def seed_snapshot(seed_emu):
    seed_emu.reset_counters()
    snap = build(seed_emu)
    built = Counter(seed_emu.requests)
    verdict = evaluate(snap)  # the checks ask the accessors for what they need
    counts = Counter(seed_emu.requests)
    log = list(seed_emu.request_log)
    seed_emu.assert_clean()
    return snap, counts, log, built, verdict


# ----- patches and blob identity ------------------------------------------------------------------


def test_apply_patch_rebuilds_added_and_modified_files():
    assert apply_patch("", "@@ -0,0 +1,2 @@\n+a\n+b") == ["a", "b"]
    before = "one\ntwo\nthree\nfour\n"
    patch = "@@ -1,4 +1,4 @@\n one\n-two\n+TWO\n three\n four"
    assert apply_patch(before, patch) == ["one", "TWO", "three", "four"]
    assert apply_patch(before, "@@ -2,0 +3,1 @@\n+new") == ["one", "two", "new", "three", "four"]


def test_apply_patch_refuses_a_patch_that_does_not_match():
    assert apply_patch("one\ntwo\n", "@@ -1,2 +1,2 @@\n one\n-zwei\n+TWO") is None
    assert apply_patch("x\n", "not a hunk") is None


def test_patch_candidates_are_verified_by_git_blob_sha():
    lines = apply_patch("", "@@ -0,0 +1,1 @@\n+hello\n\\ No newline at end of file")
    shas = {git_blob_sha(c): c for c in candidates(lines)}
    assert git_blob_sha(b"hello") in shas and git_blob_sha(b"hello\n") in shas
    # The SHA git prints for "hello\n" (git hash-object).
    assert git_blob_sha(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"


# ----- sign-off selection -------------------------------------------------------------------------


def _c(cid: int, body: str, *, author: str = "alice", kind: str = "issue_comment", bot: bool = False, minute: int = 0):
    from datetime import datetime, timezone
    return Comment(id=cid, kind=kind, author=author, is_bot=bot, body=body,
                   created_at=datetime(2026, 1, 1, 0, minute, tzinfo=timezone.utc))


def test_signoff_is_the_newest_live_phrase_from_a_human():
    comments = [
        _c(1, f"{PHRASE}, I have reviewed this and have:", minute=1),
        _c(2, f"> {PHRASE}, quoted", minute=2),
        _c(3, f"```\n{PHRASE}\n```", minute=3),
        _c(4, f"{PHRASE} bot text", author="github-actions[bot]", bot=True, minute=4),
        _c(5, f"{PHRASE} as a review", kind="review", minute=5),
    ]
    assert find_signoff(comments, PHRASE, ["github-actions[bot]"]).id == 5
    assert find_signoff(comments[:4], PHRASE, []).id == 1
    assert find_signoff(comments[1:4], PHRASE, []) is None


def test_signoff_refs_are_urls_or_keys():
    assert parse_signoff_ref("https://github.com/o/r/pull/1#issuecomment-42") == ("issue_comment", 42)
    assert parse_signoff_ref("pullrequestreview-7") == ("review", 7)
    assert parse_signoff_ref("discussion_r9") == ("review_comment", 9)
    with pytest.raises(SnapshotError):
        parse_signoff_ref("https://github.com/o/r/pull/1")


# ----- the seed world over HTTP -------------------------------------------------------------------


def test_seed_snapshot_has_what_the_checks_need(seed_snapshot, seed_emu):
    snap, _, _, _, _ = seed_snapshot
    assert snap.head_sha == seed_emu.head_sha and snap.current_head_sha == snap.head_sha
    assert snap.base_sha == seed_emu.base_sha
    assert [c.sha for c in snap.commits] == [seed_emu.shas["c1"], seed_emu.shas["c2"]]
    assert snap.signoff is not None and snap.signoff.key == SIGNOFF_KEY and snap.signoff.author == "seungrokj"
    reuse = reuse_source(ReviewContext(snap))
    assert reuse is not None and reuse.run_id == SEED_RUN and reuse.command == "/reuse-sweep-run"
    run = snap.sweep_run(SEED_RUN)
    assert run.head_sha == seed_emu.shas["c1"] and run.event == "pull_request" and run.conclusion == "success"
    assert [r["score"] if "score" in r else r.get("em_strict") for r in run.evals] == [0.973]
    assert len(run.throughput) == 16
    assert "eval_results_all" in run.meta
    assert snap.is_team_member("InferenceX/vendor-number-3", "seungrokj") is True
    assert snap.user_access("seungrokj").permission == "write"
    assert snap.labels == ["full-sweep-fail-fast"]
    assert {f.path.rsplit("/", 1)[-1] for f in snap.files} >= {"agentic.yaml", "amd-master.yaml", "ci-procedures.md"}


def test_the_builder_reads_no_fact_a_check_decides(seed_snapshot):
    """Teams, users and upstream PRs are read only when a check asks for them (the sweep run is
    started early by Check 1's own choice over a provisional snapshot, see _warm_sweep_choice)."""
    _, _, _, built, _ = seed_snapshot
    lazy = ("/orgs/", "/collaborators/")
    assert not [route for route in built if any(part in route for part in lazy)], built


def test_each_resource_is_fetched_once(seed_snapshot):
    snap, counts, log, _, _ = seed_snapshot
    for route in ("pulls/{number}", "pulls/{number}/files", "pulls/{number}/commits", "pulls/{number}/reviews",
                  "pulls/{number}/comments", "issues/{number}/comments"):
        assert counts[f"GET /repos/{{owner}}/{{repo}}/{route}"] == 1, route
    assert counts["GET /repos/{owner}/{repo}/commits/{ref}/check-runs"] == 2  # one per in-PR commit
    # The target (= merge base) is one tarball whose file list the head tree vouches for; the
    # head's changed files come from their patches, its other files are the target's.
    assert counts[TARBALL] == 1 and counts[CODELOAD] == 1
    assert [e["path"].split("?")[0].rsplit("/", 1)[1] for e in log if e["route"] == TREES] == [snap.head_sha]
    assert counts[BLOBS] == 0
    # Only the run Check 1 reads (the reuse gate's run is never asked for), and of it only the
    # aggregate artifacts (no per-job bmk_agentic_*).
    assert counts["GET /repos/{owner}/{repo}/actions/runs/{run_id}"] == 1
    assert not any(str(GATE_RUN) in e["path"] for e in log)
    assert counts[DOWNLOAD] == 2
    # Check 0 asks the access of the first owner of amd-master.yaml's all-user line (an admin
    # there would exempt the path); Check 14 asks nobody, as no comment records a bypass.
    assert [e["path"].split("/")[5] for e in log if e["route"].endswith("/permission")] == ["billishyahao"]


def test_teams_are_asked_in_line_order_until_one_counts_the_signer_in(seed_snapshot):
    snap, _, log, _, verdict = seed_snapshot
    asked = [e["path"].split("/")[4] for e in log if e["route"] == MEMBERSHIP]
    # MODELS.md lines name @InferenceX/core, vendor-number-3, vendor-number-4: the signer is in
    # vendor-number-3, so vendor-number-4 is never asked; amd-master.yaml names the signer.
    # core's 404 is not settled (GET /orgs/{org}/teams/{slug}), as vendor-number-3 decides.
    assert asked == ["core", "vendor-number-3"]
    assert not [e for e in log if e["route"] == "GET /orgs/{org}/teams/{slug}"]
    assert verdict.row(0).status.value == "PASS"


def test_seed_verdict_reads_within_the_budget(seed_emu):
    seed_emu.reset_counters()
    evaluate(build(seed_emu))
    assert sum(seed_emu.requests.values()) <= SEED_READ_BUDGET, dict(seed_emu.requests)
    seed_emu.assert_clean()


def _same_files(a, b, paths) -> None:
    for path in paths:
        assert a.read(path) == b.read(path), path


PROBE_PATHS = ("inferencex-e2e/configs/amd-master.yaml", "inferencex-e2e/perf-changelog.yaml", ".github/CODEOWNERS",
               "inferencex-e2e/docs/MODELS.md", "no/such/file")


def test_a_repository_over_the_size_cap_is_read_file_by_file(seed_emu, seed_snapshot):
    archived, *_ = seed_snapshot
    seed_emu.reset_counters()
    seed_emu.repo_size_kb = 10**6
    try:
        snap = build(seed_emu, archive_max_kb=1000)
    finally:
        seed_emu.repo_size_kb = None
    assert seed_emu.requests[TARBALL] == 0 and seed_emu.requests[TREES] == 2
    assert evaluate(snap).to_json()["checks"] == evaluate(archived).to_json()["checks"]
    _same_files(snap.target, archived.target, PROBE_PATHS)


def test_a_failing_archive_falls_back_to_file_by_file_reads(seed_emu, seed_snapshot, monkeypatch):
    archived, *_ = seed_snapshot
    real = GitHubApi.redirect_target

    def broken(self, path):
        if "/tarball/" in path:
            raise GithubException(502, {"message": "Bad Gateway"}, {})
        return real(self, path)

    monkeypatch.setattr(GitHubApi, "redirect_target", broken)
    seed_emu.reset_counters()
    snap = build(seed_emu)
    assert seed_emu.requests[TREES] == 2 and seed_emu.requests[CODELOAD] == 0
    assert evaluate(snap).to_json()["checks"] == evaluate(archived).to_json()["checks"]
    _same_files(snap.target, archived.target, PROBE_PATHS)


def test_no_archive_and_no_tree_listing_is_unavailable_evidence(seed_emu, monkeypatch):
    real_redirect, real_get = GitHubApi.redirect_target, GitHubApi.get

    def no_archive(self, path):
        if "/tarball/" in path:
            raise GithubException(502, {"message": "Bad Gateway"}, {})
        return real_redirect(self, path)

    def no_target_tree(self, path, params=None):
        if f"/git/trees/{seed_emu.base_sha}" in path:
            raise GithubException(502, {"message": "Bad Gateway"}, {})
        return real_get(self, path, params)

    monkeypatch.setattr(GitHubApi, "redirect_target", no_archive)
    monkeypatch.setattr(GitHubApi, "get", no_target_tree)
    snap = build(seed_emu)
    with pytest.raises(RemoteReadError, match="HTTP 502"):
        snap.target.read(".github/CODEOWNERS")
    verdict = evaluate(snap)
    assert verdict.status.value == "REJECTED"
    assert next(c for c in verdict.to_json()["checks"] if c["number"] == 0)["status"] == "FAIL"


def test_an_archive_the_head_tree_contradicts_is_not_trusted(seed_emu, seed_snapshot, monkeypatch):
    """An archive missing a file (as export-ignore would make it): its list is dropped for a tree
    listing, and the missing file is still read, from the blobs API."""
    archived, *_ = seed_snapshot
    real = snapshot_builder.fetch_archive
    dropped = "inferencex-e2e/configs/runners.yaml"

    def doctored(api, repo, sha, blobs, max_bytes):
        archive = real(api, repo, sha, blobs, max_bytes)
        archive.entries.pop(dropped)
        return archive

    monkeypatch.setattr(snapshot_builder, "fetch_archive", doctored)
    seed_emu.reset_counters()
    snap = build(seed_emu)
    assert seed_emu.requests[TREES] == 2 and seed_emu.requests[TARBALL] == 1
    assert snap.target.read(dropped) == archived.target.read(dropped) is not None
    assert seed_emu.requests[BLOBS] == 0  # the archive's bytes still serve reads: they are keyed by blob SHA


def test_archive_cap_from_env():
    assert archive_cap_from_env({}) == snapshot_builder.DEFAULT_ARCHIVE_MAX_KB
    assert archive_cap_from_env({"INFX_ARCHIVE_MAX_KB": "0"}) == 0
    assert archive_cap_from_env({"INFX_ARCHIVE_MAX_KB": "2048"}) == 2048
    assert archive_cap_from_env({"INFX_ARCHIVE_MAX_KB": "lots"}) == snapshot_builder.DEFAULT_ARCHIVE_MAX_KB


def test_file_contents_are_fetched_lazily_and_once(seed_emu):
    seed_emu.reset_counters()
    snap = build(seed_emu, archive_max_kb=0)  # file by file
    assert seed_emu.requests[TARBALL] == 0
    assert dict(snap.unreadable) == {}  # complete once the background prefetch is over
    before = seed_emu.requests[BLOBS]
    assert snap.head.read("inferencex-e2e/configs/runners.yaml") is not None
    assert seed_emu.requests[BLOBS] == before + 1
    snap.head.read("inferencex-e2e/configs/runners.yaml")
    snap.base.read("inferencex-e2e/configs/runners.yaml")  # same blob on the other side
    assert seed_emu.requests[BLOBS] == before + 1
    assert snap.head.read("no/such/file.yaml") is None
    assert seed_emu.requests[BLOBS] == before + 1


def test_changed_files_at_head_come_from_the_patch(seed_snapshot, seed_emu):
    snap, _, log, *_ = seed_snapshot
    recipe = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom/mi355x-fp4-mtp/agentic.yaml"
    blob = snap.head.blob_sha(recipe)
    data = snap.head.read(recipe)
    assert git_blob_sha(data) == blob
    assert not any(blob in e["path"] for e in log if e["route"] == BLOBS)


def test_explicit_signoff_and_pinned_head(seed_emu):
    snap = build(seed_emu, signoff_ref=f"https://github.com/x/y/pull/3603#{SIGNOFF_KEY}", pin_head=seed_emu.shas["c1"])
    assert snap.signoff.key == SIGNOFF_KEY
    assert snap.head_sha == seed_emu.shas["c1"] and snap.current_head_sha == seed_emu.head_sha and snap.head_moved
    assert [c.sha for c in snap.commits] == [seed_emu.shas["c1"]]
    with pytest.raises(SnapshotError, match="not a comment"):
        build(seed_emu, signoff_ref="issuecomment-999")
    with pytest.raises(SnapshotError, match="not a commit"):
        build(seed_emu, pin_head="0" * 40)


def test_a_failing_endpoint_becomes_unavailable_with_the_reason(seed_emu, monkeypatch):
    real = GitHubApi.list

    def flaky(self, path, params=None, key=None):
        if path.endswith("/check-runs") or path.endswith("/reviews"):
            raise GithubException(502, {"message": "Bad Gateway"}, {})
        return real(self, path, params, key)

    monkeypatch.setattr(GitHubApi, "list", flaky)
    snap = build(seed_emu)
    assert all(isinstance(v, Unavailable) and "HTTP 502" in v.reason for v in snap.check_runs.values())
    assert isinstance(snap.comments, Unavailable) and "reviews" in snap.comments.reason
    assert snap.signoff is not None  # still found among the lists that answered


def test_missing_pr_is_a_snapshot_error(seed_emu):
    with pytest.raises(SnapshotError, match="404"):
        build_snapshot(emulator_api(seed_emu), seed_emu.world.repo, 1)


# ----- the client: auth and bounded retries ---------------------------------------------------------


def test_5xx_are_retried_then_reported(tmp_path):
    with Emulator(SEED, strict=True, fail_rate=1.0) as emu:
        api = emulator_api(emu)
        got = fetch("the PR", lambda: api.get(f"/repos/{emu.world.repo}/pulls/3603"))
        assert isinstance(got, Unavailable) and "HTTP 5" in got.reason
        assert sum(emu.requests.values()) == github_client.MAX_RETRIES + 1


def test_secondary_rate_limit_waits_retry_after_within_the_budget():
    from bot.retry_policy import RATE_LIMIT_RETRIES, VirtualClock

    clock = VirtualClock()
    with Emulator(SEED, strict=True, rate_limit_rate=1.0, clock=clock) as emu:
        api = emulator_api(emu, clock=clock)
        got = fetch("the PR", lambda: api.get(f"/repos/{emu.world.repo}/pulls/3603"))
        assert isinstance(got, Unavailable) and "HTTP 403" in got.reason
        # Each refusal waited its Retry-After (1 s), a bounded number of times (bot/retry_policy.py).
        assert clock.sleeps == [1.0] * RATE_LIMIT_RETRIES
        assert sum(emu.requests.values()) == RATE_LIMIT_RETRIES + 1


def test_seeded_faults_still_give_a_complete_snapshot_or_reasons():
    with Emulator(SEED, strict=True, fail_rate=0.2, seed=11) as emu:
        snap = build(emu)
        emu.assert_clean()
    # Reads run concurrently, so which request draws which seeded fault varies between runs: the
    # invariant is that a sign-off is never silently missing. Either it was found, or the
    # comment lists it comes from are Unavailable with GitHub's answer as the reason.
    assert snap.head_sha
    assert snap.signoff is not None or isinstance(snap.comments, Unavailable), snap.comments
    if isinstance(snap.comments, Unavailable):
        assert "HTTP" in snap.comments.reason or "Error" in snap.comments.reason


def test_auth_from_env():
    assert isinstance(auth_from_env({"GITHUB_TOKEN": "t"}), Auth.Token)
    with pytest.raises(ClientError, match="GITHUB_TOKEN"):
        auth_from_env({})
    with pytest.raises(ClientError, match="INFX_APP_INSTALLATION_ID"):
        auth_from_env({"INFX_APP_ID": "1", "INFX_APP_PRIVATE_KEY": "k"})
    with pytest.raises(ClientError, match="must be a number"):
        auth_from_env({"INFX_APP_ID": "x", "INFX_APP_PRIVATE_KEY": "k", "INFX_APP_INSTALLATION_ID": "2"})


def push_between_reads(emu: Emulator, push: PushOnce):
    """A client on which `push` lands after the builder read the PR (whose head is the pinned
    one) but before it listed the PR's commits and files: those lists already show the newer
    commit."""
    pr_read = threading.Event()
    pr_path = f"/pulls/{emu.world.pr.number}"

    def after(call: str, path: str) -> None:
        if call == "get" and path.endswith(pr_path):
            pr_read.set()

    def before(call: str, path: str) -> None:
        if call == "list" and path.endswith(("/commits", "/files")) and "/pulls/" in path:
            assert pr_read.wait(10)
            push()

    return hooked_api(emu, before=before, after=after)


def test_a_push_between_reads_is_named_and_not_assessed():
    with Emulator(SEED, strict=True) as emu:
        pinned = emu.head_sha
        push = PushOnce(emu, {"LATE.md": "pushed mid-read\n"})
        api = push_between_reads(emu, push)
        try:
            snap = build_snapshot(api, emu.world.repo, emu.world.pr.number, review_date=REVIEW_DATE, pin_head=pinned)
        finally:
            api.close()
        emu.assert_clean()
    assert push.sha and push.sha != pinned
    assert snap.head_sha == pinned and snap.current_head_sha == push.sha and snap.head_moved
    assert snap.commits[-1].sha == pinned, "a commit past the assessed head is not the PR assessed"
    assert "LATE.md" not in [f.path for f in snap.files], "the changes are those up to the assessed head"
