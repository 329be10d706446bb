"""Suggested fixes end to end: on GitHub the bot posts one ```suggestion review comment on the
finding's line (once, however often it runs); in local mode `check --local --fix` edits the same
line in the working tree, and the fixed commit passes the check."""
from __future__ import annotations

import subprocess
from datetime import date

from github import Auth

from bot.cli import main
from bot.pipeline import review_pr
from bot.commands.demo import derived_world
from bot.fixes import apply_suggestion
from bot.github_client import GitHubApi, make_github
from ghsim import Emulator
from ghsim import effects as fx

REVIEW_DATE = date(2026, 11, 29)
RECIPE = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom/mi355x-fp4-mtp/agentic.yaml"


def _row(review, n):
    return next(r for r in review.verdict.rows if r.number == n)


def test_the_suggestion_is_posted_once_on_the_line_and_fixes_the_check():
    world = derived_world("suggestion")
    with Emulator(world, strict=True) as emu:
        api = GitHubApi(make_github(emu.url, auth=Auth.Token(emu.world.bot.token), env={}))
        try:
            first = review_pr(api, emu.world.repo, emu.world.pr.number, post=True, review_date=REVIEW_DATE)
            second = review_pr(api, emu.world.repo, emu.world.pr.number, post=True, review_date=REVIEW_DATE)
            head_text = api.get(f"/repos/{emu.world.repo}/contents/{RECIPE}", {"ref": emu.head_sha})
        finally:
            api.close()
        emu.assert_clean()
        posted = [e for e in emu.effects if e["kind"] == fx.EFFECT_REVIEW_COMMENT_CREATED]
    assert _row(first, 11).status.value == "FAIL" and "1 suggestion(s)" in first.published.extras
    assert "1 suggestion(s)" not in second.published.extras and len(posted) == 1
    (c,) = posted
    assert (c["path"], c["commit"]) == (RECIPE, first.verdict.head_sha)
    suggestion = c["body"].split("```suggestion\n", 1)[1].rsplit("\n```", 1)[0]
    assert suggestion == "        SGLANG_SIMULATE_ACC_LEN: '3.51'"
    import base64
    text = base64.b64decode(head_text["content"]).decode()
    assert text.splitlines()[c["line"] - 1] == "        SGLANG_SIMULATE_ACC_LEN: '3.40'"
    fixed = apply_suggestion(text, c["line"], suggestion)
    assert [a for a, b in zip(text.splitlines(), fixed.splitlines()) if a != b] == [text.splitlines()[c["line"] - 1]]


def _git(cwd, *args) -> str:
    return subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True, text=True).stdout.strip()


def test_local_fix_edits_the_working_tree_and_the_fixed_commit_passes(tmp_path, capsys):
    world = derived_world("suggestion")
    dest = tmp_path / "checkout"
    assert main(["sandbox", "checkout", "--world", str(world), str(dest)]) == 0
    printed = capsys.readouterr().out
    command = next(line for line in printed.splitlines() if "check --local" in line).split("python -m bot ", 1)[1]
    argv = command.split() + ["--review-date", "2026-11-29", "--only", "11", "--format", "json"]
    _git(dest, "checkout", "-q", argv[argv.index("--head") + 1])
    assert main(argv + ["--fix"]) == 1
    err = capsys.readouterr().err
    assert f"fixed {RECIPE}:" in err and "SGLANG_SIMULATE_ACC_LEN set to '3.51'" in err
    assert _git(dest, "diff", "--stat").endswith("1 file changed, 1 insertion(+), 1 deletion(-)")
    _git(dest, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qam", "Pin the golden AL")
    fixed_head = _git(dest, "rev-parse", "HEAD")
    argv[argv.index("--head") + 1] = fixed_head
    assert main(argv) == 0
    assert '"status": "PASS"' in capsys.readouterr().out
