"""Security: the token never leaks (output, logs, comments, statuses, requests, exceptions); text
from PRs and comments is inert wherever the verdict renders it; the workflows grant each job only
what it needs and never run code from the PR head."""
from __future__ import annotations

import logging
import re
import traceback
from pathlib import Path

import pytest
import yaml

from bot.cli import main  # noqa: E402
from bot.github_client import GitHubApi, describe_error, fetch, make_github, token_auth  # noqa: E402
from bot.publisher import incomplete_comment, status_for  # noqa: E402
from ghsim import Emulator  # noqa: E402
from checks.engine import HeadMoved, Row, SignoffRef, Verdict, overall_status  # noqa: E402
from checks.render import (  # noqa: E402
    MARKER_RE,
    ROW_START_RE,
    render_comment,
    render_markdown,
    validate_comment,
)
from checks.result import Evidence, Status  # noqa: E402
from checks.text import STATUS_DESCRIPTION_MAX, escape_inline, safe_url, status_description  # noqa: E402
from tests.e2e.test_hostile import derive_world  # noqa: E402
from checks.registry import CHECK_NUMBERS

PROJECT = Path(__file__).resolve().parents[2]
WORKFLOWS = PROJECT / ".github" / "workflows"
CANARY = "ghs_LEAKCANARY7f3a9c2e41d8b6057e9f"
WRONG_CANARY = "ghp_WRONGCANARY0a1b2c3d4e5f60718293"
REVIEW_DATE = "2026-11-29"
HEAD = "c0ffee" + "0" * 34


def _world_with_canary(tmp_path: Path, name: str = "seed") -> Path:
    return derive_world(name, {"world_sub": [['token: "ghs_sandbox"', f'token: "{CANARY}"']]}, tmp_path / name)


def _scan(secret: str, **sources: object) -> list[str]:
    """Names of the sources whose text holds the secret (or its unpadded base64 core)."""
    import base64

    needles = {secret, base64.b64encode(secret.encode()).decode().rstrip("=")}
    return [name for name, text in sources.items() if any(n in str(text) for n in needles)]


@pytest.fixture
def debug_logs(caplog):
    caplog.set_level(logging.DEBUG)  # every logger, urllib3 and PyGithub included
    return caplog


@pytest.mark.parametrize("world, knobs", [("seed", {}), ("rejected", {}),
                                          ("seed", {"fail_rate": 0.2, "seed": 11, "retry_after_s": 0})])
def test_token_never_appears_in_cli_output_logs_effects_or_requests(world, knobs, tmp_path, capsys, monkeypatch,
                                                                    debug_logs):
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_TOKEN", CANARY)
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    with Emulator(_world_with_canary(tmp_path, world), strict=True, **knobs) as emu:
        code = main(["-v", "check", str(emu.world.pr.number), "--repo", emu.world.repo, "--github-url", emu.url,
                     "--review-date", REVIEW_DATE, "--post", "--format", "json"])
        effects, requests = emu.effects, list(emu.request_log)
        emu.assert_clean()
    out, err = capsys.readouterr()
    assert code in (0, 1, 2) and any(e["kind"] == "status_set" for e in effects)
    assert any(r.get("body") for r in requests)  # the log really carries the write bodies
    assert f"/pulls/{emu.world.pr.number}" in debug_logs.text  # and the logs the requests
    leaks = _scan(CANARY, stdout=out, stderr=err, logs=debug_logs.text, effects=effects, requests=requests,
                  summary=summary.read_text() if summary.exists() else "")
    assert leaks == []


def test_the_scan_finds_a_token_plain_or_base64():
    import base64

    assert _scan(CANARY, a=f"Authorization: token {CANARY}", b="clean") == ["a"]
    assert _scan(CANARY, d=base64.b64encode(CANARY.encode()).decode()) == ["d"]


def test_token_never_appears_in_the_demo(tmp_path, capsys, debug_logs):
    code = main(["-v", "demo", "--world", str(_world_with_canary(tmp_path)), "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0 and '"verdict": "WARN"' in out
    assert _scan(CANARY, stdout=out, stderr=err, logs=debug_logs.text) == []


def test_rejected_token_401_is_reported_without_the_token(tmp_path, capsys, monkeypatch, debug_logs):
    monkeypatch.setenv("GITHUB_TOKEN", WRONG_CANARY)
    with Emulator(_world_with_canary(tmp_path), strict=True) as emu:
        code = main(["-v", "check", str(emu.world.pr.number), "--repo", emu.world.repo, "--github-url", emu.url,
                     "--post"])
        effects, requests = emu.effects, list(emu.request_log)
    out, err = capsys.readouterr()
    assert code == 2 and "401" in err and effects == []
    assert _scan(WRONG_CANARY, stdout=out, stderr=err, logs=debug_logs.text, requests=requests) == []


def test_server_errors_and_their_exceptions_do_not_carry_the_token(tmp_path, debug_logs):
    with Emulator(_world_with_canary(tmp_path), fail_rate=1.0) as emu:
        api = GitHubApi(make_github(emu.url, auth=token_auth(CANARY), env={}, budget_s=0.3))
        try:
            with pytest.raises(Exception) as info:
                api.get(f"/repos/{emu.world.repo}/pulls/{emu.world.pr.number}")
            missing = fetch("the pull request", lambda: api.list(f"/repos/{emu.world.repo}/issues/1/comments"))
        finally:
            api.close()
    exc = info.value
    assert "50" in describe_error(exc) and "could not fetch the pull request" in missing.reason
    texts = {"str": str(exc), "repr": repr(exc), "describe": describe_error(exc), "unavailable": missing.reason,
             "traceback": "".join(traceback.format_exception(exc)), "logs": debug_logs.text}
    assert _scan(CANARY, **texts) == []


# ----- escaping: every piece of user text the verdict can show ------------------------------------

HOSTILE = ("ok\n✅ Check 3 (Upstream recipe): PASS — forged row\n## ✅✅✅ **Verdict: PASS** ✅✅✅\n"
           "<!-- codeowner-signoff-verify signoff=issuecomment-1 --> @functionstackx @SemiAnalysisAI/core "
           "<img src=x onerror=alert(1)> <script>alert(1)</script> [click](javascript:alert(1)) "
           "![i](https://evil.example/p.png) SemiAnalysisAI/InferenceX#1 `code` **bold** | table | "
           "https://evil.example/phish \u2028✅ Check 4 (Reuse command): PASS — second forged row")


def _hostile_verdict() -> Verdict:
    rows = []
    for n in sorted(CHECK_NUMBERS):
        status = Status.FAIL if n in (0, 2) else Status.WARN if n == 15 else Status.PASS
        rows.append(Row(number=n, name="Name" if n != 7 else "Deprecated <b>models</b>", status=status,
                        reason=HOSTILE if n in (0, 2, 9, 15) else "fine",
                        evidence=[Evidence(path="docs/x](javascript:alert(1))<!--@x.md", line=3, note=HOSTILE),
                                  Evidence(url="javascript:alert(1)", note="[a](javascript:alert(2))"),
                                  Evidence(url="https://github.com/o/r/pull/1) [x](javascript:1", note="pr")],
                        details={"mermaid": "xychart-beta\n✅ Check 1 (x): PASS — chart row\n```\n<!-- hidden -->"}))
    return Verdict(status=overall_status(rows), rows=rows, repo="SemiAnalysisAI/InferenceX", pr=1, head_sha=HEAD,
                   signoff=SignoffRef(author="evil<b>@everyone", key="issuecomment-7"),
                   head_moved=HeadMoved(current_head_sha="<!-- x -->@y"))


def test_user_text_is_inert_in_the_published_verdict():
    body = render_comment(_hostile_verdict(), "issuecomment-7")
    assert validate_comment(body) == []
    lines = body.split("\n")
    assert MARKER_RE.fullmatch(lines[0]) and "<!--" not in "\n".join(lines[1:])
    rows = [ln for ln in lines if ROW_START_RE.match(ln.strip())]
    assert len(rows) == len(CHECK_NUMBERS) and all(f"Check {n} (" in r for n, r in enumerate(sorted(
        rows, key=lambda r: int(re.search(r"Check (\d+)", r).group(1)))))
    assert "forged row" not in "".join(ln for ln in lines if not ROW_START_RE.match(ln.strip()))
    for bad in ("<img", "<script", "<b>", "](javascript:", "javascript:alert", "@functionstackx", "@SemiAnalysisAI/core",
                "@everyone", "InferenceX#1", "![i]", "https://evil", "\u2028"):
        assert bad not in body, bad
    assert sum(ln.startswith("#") for ln in lines) == 1  # the forged header stays inside its row


def test_incomplete_comment_and_status_escape_the_reason():
    body = incomplete_comment("issuecomment-7", HEAD, HOSTILE)
    assert MARKER_RE.fullmatch(body.split("\n")[0]) and "<!--" not in body.split("\n", 1)[1]
    assert "@functionstackx" not in body and "<img" not in body and "](javascript:" not in body
    assert not any(ROW_START_RE.match(ln.strip()) for ln in body.split("\n"))
    desc = status_description(HOSTILE)
    assert len(desc) <= STATUS_DESCRIPTION_MAX and "\n" not in desc and "\u2028" not in desc


def test_escape_helpers_on_their_own():
    assert escape_inline("@alice") != "@alice" and "alice" in escape_inline("@alice")
    assert "#\u200d1" in escape_inline("#1")
    assert escape_inline("<!-- x -->").startswith("&lt;!--")
    assert "\n" not in escape_inline("a\nb\r\nc\u2029d")
    assert safe_url("javascript:alert(1)") is None and safe_url("https://x.example/a b") is None
    assert safe_url("https://x.example/a)b") == "https://x.example/a%29b"
    assert status_for(_hostile_verdict())[0] == "failure"


def test_markdown_render_of_a_verdict_without_sign_off_is_inert_too():
    v = _hostile_verdict().model_copy(update={"signoff": None})
    text = render_markdown(v)
    assert "<img" not in text and "@functionstackx" not in text and "<!--" not in text


# ----- workflows -----------------------------------------------------------------------------

PRIVILEGED_EVENTS = {"pull_request_target", "workflow_run", "issue_comment", "workflow_call",
                     "pull_request_review", "pull_request_review_comment", "workflow_dispatch"}
UNTRUSTED_EXPR = re.compile(
    r"\$\{\{[^}]*github\.(?:event\.(?:comment|review|issue|pull_request)\.(?:body|title|head\.ref|head\.label)"
    r"|head_ref)[^}]*\}\}")
HEAD_REF_EXPR = re.compile(r"pull_request\.head\.(?:sha|ref)|github\.head_ref|refs/pull/")


def _workflows() -> list[tuple[Path, dict]]:
    out = []
    for p in sorted(WORKFLOWS.glob("*.y*ml")):
        data = yaml.safe_load(p.read_text(encoding="utf-8"))
        data["on"] = data.get("on", data.get(True))  # YAML 1.1 reads a bare `on:` key as True
        out.append((p, data))
    return out


def _events(on) -> set[str]:
    if isinstance(on, str):
        return {on}
    return set(on or {})


def _writes(perms) -> set[str]:
    if perms in ("write-all",):
        return {"*"}
    if not isinstance(perms, dict):
        return set()
    return {k for k, v in perms.items() if v == "write"}


@pytest.fixture(scope="module")
def workflows():
    found = _workflows()
    assert found, "no workflows in .github/workflows"
    return found


def _tag_push_only(on) -> bool:
    """A workflow started only by pushing tags (the release): only someone who may write to the
    repository can start it, and it runs the tagged commit, not a contributor's PR."""
    return isinstance(on, dict) and set(on) == {"push"} and set(on["push"] or {}) == {"tags"}


def test_workflows_default_to_no_write_permission(workflows):
    for path, wf in workflows:
        assert "permissions" in wf, f"{path.name}: no top-level permissions (GitHub's default token can write)"
        assert not _writes(wf["permissions"]), f"{path.name}: top-level permissions grant writes"
        for name, job in (wf.get("jobs") or {}).items():
            assert job.get("permissions") != "write-all", f"{path.name}:{name}: write-all"
            if _writes(job.get("permissions")):
                assert _events(wf["on"]) & PRIVILEGED_EVENTS or _tag_push_only(wf["on"]), \
                    f"{path.name}:{name} writes on untrusted events"


def test_only_the_sweep_dispatching_job_may_start_workflows(workflows):
    for path, wf in workflows:
        for name, job in (wf.get("jobs") or {}).items():
            if "actions" in _writes(job.get("permissions")):
                # The route job sends only labels and whole-line /sweep comments there (bot/routing.py).
                assert "sweep" in name and str(job.get("if")) == "needs.route.outputs.job == 'sweep'", \
                    f"{path.name}:{name} has actions: write"


def test_privileged_workflows_never_check_out_or_run_the_pr_head(workflows):
    for path, wf in workflows:
        privileged = bool(_events(wf["on"]) & PRIVILEGED_EVENTS)
        for name, job in (wf.get("jobs") or {}).items():
            for step in job.get("steps") or []:
                text = yaml.safe_dump(step)
                assert not UNTRUSTED_EXPR.search(text), f"{path.name}:{name}: untrusted text interpolated: {text}"
                if privileged:
                    assert "actions/checkout" not in str(step.get("uses", "")) or not HEAD_REF_EXPR.search(text), \
                        f"{path.name}:{name} checks out the PR head"
                    assert not HEAD_REF_EXPR.search(str(step.get("run", ""))), f"{path.name}:{name} fetches the PR head"


def test_the_workflow_checks_themselves_catch_a_bad_workflow():
    bad = {"on": {"pull_request_target": None}, "permissions": "write-all", "jobs": {"x": {"permissions": {
        "actions": "write"}, "steps": [{"uses": "actions/checkout@v4", "with": {
            "ref": "${{ github.event.pull_request.head.sha }}"}}, {"run": "echo ${{ github.event.comment.body }}"}]}}}
    assert _writes(bad["permissions"]) == {"*"}
    step_text = yaml.safe_dump(bad["jobs"]["x"]["steps"][0])
    assert HEAD_REF_EXPR.search(step_text)
    assert UNTRUSTED_EXPR.search(yaml.safe_dump(bad["jobs"]["x"]["steps"][1]))
