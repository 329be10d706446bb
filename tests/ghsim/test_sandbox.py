"""The GitHub emulator, driven over real HTTP through PyGithub and raw urllib."""
from __future__ import annotations

import argparse
import base64
import http.client
import io
import json
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

import github
import pytest
from urllib3.util.retry import Retry

from bot.commands import sandbox as sandbox_cmd
from ghsim import Emulator, build_world_repo, load_world
from ghsim import effects as fx
from ghsim.auth import APP_ID, INSTALLATION_ID, MSG_BAD_CREDENTIALS, MSG_NO_AUTH, RATE_LIMIT
from ghsim.faults import FAULT_DROP
from ghsim.issues import MAX_COMMENT_BODY
from recipes.errors import RecipeError

WORLD = Path(__file__).parent / "sandbox_world"
REPO = "SemiAnalysisAI/InferenceX"
PR = 3603
TOKEN = "ghs_sandbox"
BOT = "infx-review[bot]"
RUN_ID = 37597985033
BIG_PATH = "data/big.txt"
BIG = ("0123456789abcdef" * 64 + "\n").encode() * 1100  # about 1.1 MB


@pytest.fixture(scope="session")
def world_dir(tmp_path_factory) -> Path:
    """The test world plus a file over the contents API's 1 MB inline limit (too big to commit)."""
    dest = tmp_path_factory.mktemp("world") / "w"
    shutil.copytree(WORLD, dest)
    (dest / "base" / BIG_PATH).parent.mkdir(parents=True)
    (dest / "base" / BIG_PATH).write_bytes(BIG)
    return dest


@pytest.fixture
def emu(world_dir):
    with Emulator(world_dir, strict=True) as e:
        yield e


# PyGithub throttles itself (0.25 s between requests, 1 s between writes) unless told not to.
NO_THROTTLE = {"seconds_between_requests": None, "seconds_between_writes": None}


def gh(emu: Emulator, token: str = TOKEN, **kw) -> github.Github:
    kw.setdefault("retry", None)
    kw.update(NO_THROTTLE)
    return github.Github(base_url=emu.url, auth=github.Auth.Token(token), **kw)


def raw(emu: Emulator, path: str, *, token: str | None = TOKEN, method: str = "GET", body: dict | None = None,
        headers: dict | None = None):
    """(status, headers, body bytes) of one request, following redirects like urllib does."""
    h = dict(headers or {})
    if token:
        h["Authorization"] = f"token {token}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(emu.url + path, data=data, method=method, headers=h)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, dict(r.headers), r.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


# ----- world and repo -------------------------------------------------------------------------


def test_world_repo_is_deterministic_and_checks_out_the_head_branch(tmp_path):
    a = build_world_repo(WORLD, tmp_path / "a")
    b = build_world_repo(WORLD, tmp_path / "b")
    assert (a.base_sha, a.shas, a.head_sha) == (b.base_sha, b.shas, b.head_sha)
    assert list(a.shas) == ["c1", "c2"] and a.head_sha == a.shas["c2"]
    branch = subprocess.run(["git", "-C", str(a.path), "branch", "--show-current"], capture_output=True, text=True)
    assert branch.stdout.strip() == "feat/restore-dsv41flash-atom"
    assert not (a.path / "old" / "removed.yaml").exists()
    assert "nightly_202610070333" in (a.path / "recipes" / "agentic.yaml").read_text()
    assert a.resolve("base") == a.base_sha and a.resolve("c1") == a.shas["c1"]


def test_world_typo_is_a_finding_with_a_line(tmp_path):
    dest = tmp_path / "w"
    shutil.copytree(WORLD, dest)
    text = (dest / "world.yaml").read_text().replace("head_branch:", "head_brnach:")
    (dest / "world.yaml").write_text(text)
    with pytest.raises(RecipeError) as ei:
        load_world(dest)
    expected = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("head_brnach"))
    assert ei.value.finding.line == expected
    assert "head_brnach" in ei.value.finding.message


# ----- reads through PyGithub -----------------------------------------------------------------


def test_repo_pr_files_and_commits(emu):
    g = gh(emu)
    repo = g.get_repo(REPO)
    assert repo.default_branch == "main"
    pr = repo.get_pull(PR)
    assert pr.head.sha == emu.head_sha and pr.base.sha == emu.base_sha
    assert pr.user.login == "yhl-amd" and pr.title.startswith("feat(amd)")
    assert [lb.name for lb in pr.get_labels()] == ["full-sweep-fail-fast"]
    files = {f.filename: f for f in pr.get_files()}
    assert {k: f.status for k, f in files.items()} == {
        "old/removed.yaml": "removed", "recipes/agentic.yaml": "modified", "recipes/new.yaml": "added"}
    assert "+image: rocm/atom-dev:nightly_202610070333" in files["recipes/agentic.yaml"].patch
    assert files["recipes/agentic.yaml"].additions == 2 and files["recipes/agentic.yaml"].deletions == 2
    assert [c.sha for c in pr.get_commits()] == [emu.shas["c1"], emu.shas["c2"]]
    commit = repo.get_commit(emu.shas["c1"])
    assert commit.commit.message == "Restore dsv41flash ATOM recipe"
    assert commit.author.login == "yhl-amd"
    assert commit.commit.author.date.isoformat() == "2026-10-08T10:00:00+00:00"
    cmp = repo.compare(emu.base_sha, emu.head_sha)
    assert (cmp.status, cmp.ahead_by, len(cmp.files)) == ("ahead", 2, 3)
    emu.assert_clean()


def test_comments_reviews_and_html_urls(emu):
    pr = gh(emu).get_repo(REPO).get_pull(PR)
    comments = list(pr.get_issue_comments())
    assert [c.id for c in comments] == [4400, 4401]
    assert comments[1].user.login == "seungrokj" and comments[1].body == "LGTM, signing off"
    assert comments[1].html_url == f"https://github.com/{REPO}/pull/{PR}#issuecomment-4401"
    review = pr.get_reviews()[0]
    assert (review.id, review.user.login) == (5500, "alice")
    assert review.html_url.endswith("#pullrequestreview-5500")
    inline = list(pr.get_review_comments())
    assert [c.html_url for c in inline] == [f"https://github.com/{REPO}/pull/{PR}#discussion_r6600"]
    assert pr.get_review_comment(6600).body == "nit: sort points"


def test_150_comments_paginate_with_link_headers(emu):
    pr = gh(emu).get_repo(REPO).get_pull(PR)
    for i in range(150):
        pr.create_issue_comment(f"comment {i}")
    emu.reset_counters()
    listed = list(gh(emu, per_page=50).get_repo(REPO).get_pull(PR).get_issue_comments())
    assert len(listed) == 152
    assert [c.body for c in listed[2:]] == [f"comment {i}" for i in range(150)]
    assert emu.requests["GET /repos/{owner}/{repo}/issues/{number}/comments"] == 4
    status, headers, _ = raw(emu, f"/repos/{REPO}/issues/{PR}/comments?per_page=50&page=2")
    assert status == 200
    assert 'rel="next"' in headers["Link"] and 'rel="prev"' in headers["Link"] and "page=4" in headers["Link"]
    status, headers, body = raw(emu, f"/repos/{REPO}/issues/{PR}/comments?per_page=50&page=4")
    assert len(json.loads(body)) == 2 and 'rel="next"' not in headers["Link"]
    assert int(headers["X-RateLimit-Remaining"]) < RATE_LIMIT


def test_create_edit_delete_comment_are_effects_and_visible(emu):
    pr = gh(emu).get_repo(REPO).get_pull(PR)
    created = pr.create_issue_comment("verdict v1")
    assert created.user.login == BOT and created.user.type == "Bot"
    assert created.html_url == f"https://github.com/{REPO}/pull/{PR}#issuecomment-{created.id}"
    created.edit("verdict v2")
    again = gh(emu).get_repo(REPO).get_pull(PR)
    bodies = [c.body for c in again.get_issue_comments()]
    assert bodies[-1] == "verdict v2" and "verdict v1" not in bodies
    assert again.get_issue_comment(created.id).body == "verdict v2"
    kinds = [(e["kind"], e["actor"]) for e in emu.effects]
    assert kinds == [(fx.EFFECT_COMMENT_CREATED, BOT), (fx.EFFECT_COMMENT_EDITED, BOT)]
    assert emu.effects[1]["previous_body"] == "verdict v1"
    created.delete()
    assert created.id not in [c.id for c in again.get_issue_comments()]
    assert emu.effects[-1]["kind"] == fx.EFFECT_COMMENT_DELETED


def test_comment_body_limit_is_enforced(emu):
    pr = gh(emu).get_repo(REPO).get_pull(PR)
    with pytest.raises(github.GithubException) as ei:
        pr.create_issue_comment("x" * (MAX_COMMENT_BODY + 1))
    assert ei.value.status == 422 and emu.effects == []


def test_status_set_shows_in_statuses(emu):
    commit = gh(emu).get_repo(REPO).get_commit(emu.head_sha)
    assert commit.get_combined_status().state == "pending"
    commit.create_status("success", target_url="https://example.invalid/v", description="all rows pass",
                         context="infx-review/signoff")
    combined = commit.get_combined_status()
    assert combined.state == "success" and [s.context for s in combined.statuses] == ["infx-review/signoff"]
    assert [s.description for s in commit.get_statuses()] == ["all rows pass"]
    assert emu.effects[0] | {} == {"kind": fx.EFFECT_STATUS_SET, "sha": emu.head_sha, "state": "success",
                                   "context": "infx-review/signoff", "description": "all rows pass",
                                   "target_url": "https://example.invalid/v", "actor": BOT}
    with pytest.raises(github.GithubException) as ei:
        commit.create_status("failure", description="d" * 141, context="infx-review/signoff")
    assert ei.value.status == 422 and len(emu.effects) == 1


def test_labels_and_reactions(emu):
    pr = gh(emu).get_repo(REPO).get_pull(PR)
    pr.add_to_labels("sweep-running")
    pr.remove_from_labels("full-sweep-fail-fast")
    assert [lb.name for lb in pr.get_labels()] == ["sweep-running"]
    comment = pr.get_issue_comment(4400)
    comment.create_reaction("eyes")
    comment.create_reaction("eyes")  # a repeat is not a second reaction
    assert [r.content for r in comment.get_reactions()] == ["eyes"]
    assert [e["kind"] for e in emu.effects] == [
        fx.EFFECT_LABEL_ADDED, fx.EFFECT_LABEL_REMOVED, fx.EFFECT_REACTION_ADDED]
    assert emu.effects[2]["comment_id"] == 4400


def test_contents_small_and_over_one_megabyte(emu):
    repo = gh(emu).get_repo(REPO)
    head = repo.get_contents("recipes/agentic.yaml", ref=emu.head_sha)
    base = repo.get_contents("recipes/agentic.yaml", ref="main")
    assert b"nightly_202610070333" in head.decoded_content and b"nightly_202609250902" in base.decoded_content
    big = repo.get_contents(BIG_PATH, ref="main")
    assert (big.encoding, big.content, big.size) == ("none", "", len(BIG))
    assert base64.b64decode(repo.get_git_blob(big.sha).content) == BIG
    status, headers, body = raw(emu, f"/repos/{REPO}/contents/{BIG_PATH}?ref=main",
                                headers={"Accept": "application/vnd.github.raw"})
    assert status == 200 and body == BIG
    listing = repo.get_contents("recipes", ref=emu.head_sha)
    assert sorted(c.path for c in listing) == ["recipes/agentic.yaml", "recipes/new.yaml"]
    tree = repo.get_git_tree(emu.head_sha, recursive=True)
    assert "recipes/new.yaml" in {e.path for e in tree.tree} and BIG_PATH in {e.path for e in tree.tree}
    with pytest.raises(github.UnknownObjectException):
        repo.get_contents("old/removed.yaml", ref=emu.head_sha)


def test_check_runs_runs_jobs_and_artifact_zip_via_redirect(emu):
    g = gh(emu)
    repo = g.get_repo(REPO)
    runs = {c.name: c for c in repo.get_commit(emu.head_sha).get_check_runs()}
    bench = runs["agentic / benchmark (tp2 c1)"]
    assert bench.conclusion == "success"
    assert bench.details_url == f"https://github.com/{REPO}/actions/runs/{RUN_ID}/job/{bench.id}"
    assert runs["lint"].conclusion == "failure"
    run = repo.get_workflow_run(RUN_ID)
    assert run.head_sha == emu.head_sha and run.conclusion == "success"
    assert [j.name for j in run.jobs()] == ["agentic / benchmark (tp2 c1)"]
    arts = {a.name: a for a in run.get_artifacts()}
    assert set(arts) == {"results_bmk", "eval_results_all", "old_logs"} and arts["old_logs"].expired
    status, _, stream = g.requester.getStream(arts["results_bmk"].archive_download_url)
    data = b"".join(stream)
    assert status == 200
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        assert json.loads(zf.read("tp2/result.json")) == {"throughput": 53.8}
    assert emu.requests["GET /_sandbox/artifacts/{artifact_id}/{signature}"] == 1
    status, _, _ = raw(emu, f"/repos/{REPO}/actions/artifacts/{arts['old_logs'].id}/zip")
    assert status == 410
    assert [r.id for r in repo.get_workflow_runs(head_sha=emu.head_sha)] == [RUN_ID]
    assert repo.get_workflow_runs(event="push").totalCount == 0
    emu.assert_clean()


def test_workflow_dispatch_is_an_effect_and_a_queued_run(emu):
    repo = gh(emu).get_repo(REPO)
    wf = repo.get_workflow("run-sweep.yml")
    assert wf.path == ".github/workflows/run-sweep.yml"
    assert wf.create_dispatch("feat/restore-dsv41flash-atom", {"reuse": str(RUN_ID)}) is True
    effect = emu.effects[-1]
    assert (effect["kind"], effect["inputs"], effect["actor"]) == (fx.EFFECT_WORKFLOW_DISPATCHED, {"reuse": str(RUN_ID)}, BOT)
    queued = list(repo.get_workflow_runs(event="workflow_dispatch"))
    assert [(r.status, r.head_sha) for r in queued] == [("queued", emu.head_sha)]


def test_permissions_teams_and_upstream(emu):
    g = gh(emu)
    repo = g.get_repo(REPO)
    assert repo.get_collaborator_permission("seungrokj") == "write"
    assert repo.get_collaborator_permission("stranger") == "read"
    team = g.get_organization("SemiAnalysisAI").get_team_by_slug("core")
    assert team.get_team_membership("alice").state == "active"
    with pytest.raises(github.UnknownObjectException):
        team.get_team_membership("yhl-amd")
    up = g.get_repo("vllm-project/recipes").get_pull(120)
    assert up.merged and up.state == "closed"
    assert [f.filename for f in up.get_files()] == ["DeepSeek/DeepSeek-V4.1.md"]
    with pytest.raises(github.UnknownObjectException):
        g.get_repo("vllm-project/recipes").get_pull(999)


def test_push_moves_the_pr_head(emu):
    old_head = emu.head_sha
    new = emu.push("c3-late")
    assert emu.head_sha == new != old_head and emu.shas["c3-late"] == new
    pr = gh(emu).get_repo(REPO).get_pull(PR)
    assert pr.head.sha == new and pr.commits == 3
    assert "NOTES.md" in {f.filename for f in pr.get_files()}
    second = emu.push({"recipes/new.yaml": None}, message="drop it")
    assert "recipes/new.yaml" not in {f.filename for f in gh(emu).get_repo(REPO).get_pull(PR).get_files()}
    assert gh(emu).get_repo(REPO).get_commit(second).commit.message == "drop it"


def test_enterprise_style_api_prefix(emu):
    g = github.Github(base_url=emu.url + "/api/v3", auth=github.Auth.Token(TOKEN), retry=None, **NO_THROTTLE)
    pr = g.get_repo(REPO).get_pull(PR)
    assert pr.url.startswith(emu.url + "/api/v3/")
    assert len(list(pr.get_issue_comments())) == 2
    art = next(a for a in g.get_repo(REPO).get_workflow_run(RUN_ID).get_artifacts() if a.name == "eval_results_all")
    _, _, stream = g.requester.getStream(art.archive_download_url)
    with zipfile.ZipFile(io.BytesIO(b"".join(stream))) as zf:
        assert zf.namelist() == ["eval.json"]


# ----- auth --------------------------------------------------------------------------------


def test_401_without_a_valid_token(emu):
    status, _, body = raw(emu, f"/repos/{REPO}", token=None)
    assert status == 401 and json.loads(body)["message"] == MSG_NO_AUTH
    status, _, body = raw(emu, f"/repos/{REPO}", token="nope")
    assert status == 401 and json.loads(body)["message"] == MSG_BAD_CREDENTIALS
    with pytest.raises(github.BadCredentialsException):
        gh(emu, token="nope").get_repo(REPO)
    assert gh(emu, token="tok-alice").get_user().login == "alice"
    assert gh(emu, token="tok-alice").get_user().type == "User"


def test_github_app_installation_token_flow(emu):
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                            serialization.NoEncryption()).decode()
    app_auth = github.Auth.AppAuth(str(APP_ID), pem)  # PyJWT >= 2.10 wants a string issuer
    integration = github.GithubIntegration(base_url=emu.url, auth=app_auth, retry=None, **NO_THROTTLE)
    installation = integration.get_repo_installation("SemiAnalysisAI", "InferenceX")
    assert installation.id == INSTALLATION_ID
    g = github.Github(base_url=emu.url, auth=app_auth.get_installation_auth(installation.id), retry=None,
                      **NO_THROTTLE)
    g.get_repo(REPO).get_pull(PR).create_issue_comment("from the app")
    assert emu.effects[-1]["actor"] == BOT
    status, _, _ = raw(emu, f"/app/installations/{INSTALLATION_ID}/access_tokens", token=TOKEN, method="POST",
                       body={})
    assert status == 401  # installation tokens are minted only for a JWT


# ----- strictness, faults, network ------------------------------------------------------------


def test_strict_mode_records_unknown_routes(emu):
    repo = gh(emu).get_repo(REPO)
    with pytest.raises(github.UnknownObjectException):
        repo.get_pull(PR).get_issue_comment(123456)  # a known route: a plain 404, not a violation
    emu.assert_clean()
    with pytest.raises(github.UnknownObjectException):
        repo.get_branch("main")
    assert emu.violations == [f"GET /repos/{REPO}/branches/main"]
    with pytest.raises(AssertionError, match="branches/main"):
        emu.assert_clean()


def _statuses(url_emu: Emulator, n: int) -> list[int]:
    return [raw(url_emu, f"/repos/{REPO}/pulls/{PR}")[0] for _ in range(n)]


def test_injected_5xx_are_deterministic_and_writes_are_not_applied(world_dir):
    with Emulator(world_dir, fail_rate=0.5, seed=7) as a:
        first = _statuses(a, 20)
    with Emulator(world_dir, fail_rate=0.5, seed=7) as b:
        second = _statuses(b, 20)
    assert first == second
    assert set(first) - {200} <= {500, 502, 503} and 200 in first and set(first) != {200}
    with Emulator(world_dir, fail_rate=1.0) as e:
        status, _, _ = raw(e, f"/repos/{REPO}/issues/{PR}/comments", method="POST", body={"body": "x"})
        assert status in (500, 502, 503) and e.effects == []
        e.fail_rate = 0.0
        assert len(json.loads(raw(e, f"/repos/{REPO}/issues/{PR}/comments")[2])) == 2
    with Emulator(world_dir, fail_rate=0.5, seed=3) as e:
        retry = Retry(total=20, backoff_factor=0, status_forcelist=[500, 502, 503])
        g = gh(e, retry=retry)
        assert len(list(g.get_repo(REPO).get_pull(PR).get_files())) == 3


def test_secondary_rate_limit_and_dropped_connections(world_dir):
    with Emulator(world_dir, rate_limit_rate=1.0) as e:
        status, headers, body = raw(e, f"/repos/{REPO}")
        assert status == 403 and headers["Retry-After"] == "1"
        assert json.loads(body)["message"].startswith("You have exceeded a secondary rate limit")
    with Emulator(world_dir, drop_rate=1.0) as e:
        with pytest.raises((urllib.error.URLError, http.client.RemoteDisconnected, ConnectionError)):
            urllib.request.urlopen(e.url + f"/repos/{REPO}", timeout=5)
        assert e.request_log[-1]["status"] == FAULT_DROP


def test_latency_is_added(world_dir):
    with Emulator(world_dir, latency_ms=150) as e:
        t0 = time.monotonic()
        raw(e, "/rate_limit")
        assert time.monotonic() - t0 >= 0.15


def test_listens_only_on_loopback(emu):
    assert emu.url.startswith("http://127.0.0.1:")
    assert emu._server.server_address[0] == "127.0.0.1"
    # 127.0.0.2 is loopback too, so a refusal there proves the bind is to 127.0.0.1 only, not 0.0.0.0.
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.2", emu.port), timeout=2).close()


def test_cli_serve_prints_the_url_and_stops(world_dir, capsys):
    args = argparse.Namespace(sandbox_command="serve", world=str(world_dir), port=0, strict=True, fail_rate=0.0, rate_limit_rate=0.0,
                              drop_rate=0.0, latency_ms=0, seed=0)
    stop = threading.Event()
    result: list[int] = []
    t = threading.Thread(target=lambda: result.append(sandbox_cmd.run(args, stop=stop)), daemon=True)
    t.start()
    url = ""
    for _ in range(100):
        url = capsys.readouterr().out.strip() or url
        if url:
            break
        time.sleep(0.05)
    assert url.startswith("http://127.0.0.1:")
    req = urllib.request.Request(url + "/user", headers={"Authorization": f"token {TOKEN}"})
    assert json.load(urllib.request.urlopen(req, timeout=5))["login"] == BOT
    stop.set()
    t.join(timeout=10)
    assert result == [0]


def test_concurrent_writes_are_all_applied_once(emu):
    def writer(k: int) -> None:
        pr = gh(emu).get_repo(REPO).get_pull(PR)
        for i in range(10):
            pr.create_issue_comment(f"t{k}-{i}")

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    created = [e for e in emu.effects if e["kind"] == fx.EFFECT_COMMENT_CREATED]
    assert len(created) == 60 and len({e["id"] for e in created}) == 60
    bodies = {c.body for c in gh(emu, per_page=100).get_repo(REPO).get_pull(PR).get_issue_comments()}
    assert {f"t{k}-{i}" for k in range(6) for i in range(10)} <= bodies
    emu.assert_clean()
