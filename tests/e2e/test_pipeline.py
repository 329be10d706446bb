"""bot/pipeline.py: one chain for every entry point, the verdict rendered once."""
from __future__ import annotations

from datetime import date

from github import Auth

import checks.render
from bot import pipeline
from bot.github_client import GitHubApi, make_github
from bot.local import LocalModeError
from ghsim import WORLDS_DIR, Emulator

WORLDS = WORLDS_DIR
REVIEW_DATE = date(2026, 11, 29)


def _counting(monkeypatch, name: str) -> list[int]:
    calls: list[int] = []
    real = getattr(checks.render, name)

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(checks.render, name, counted)
    return calls


def test_a_posted_verdict_is_rendered_once_for_every_output(monkeypatch, tmp_path):
    comments, texts = _counting(monkeypatch, "render_comment"), _counting(monkeypatch, "render_markdown")
    summary = tmp_path / "summary.md"
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    with Emulator(WORLDS / "seed", strict=True) as emu:
        api = GitHubApi(make_github(emu.url, auth=Auth.Token(emu.world.bot.token), env={}))
        try:
            review = pipeline.review_pr(api, emu.world.repo, emu.world.pr.number, post=True, review_date=REVIEW_DATE)
        finally:
            api.close()
        emu.assert_clean()
    assert review.published is not None and "check run" in review.published.extras
    # One comment body; one verdict text for the job summary, the check run and the caller.
    assert len(comments) == 1 and len(texts) == 1
    assert review.rendered.markdown in summary.read_text(encoding="utf-8")
    assert len(texts) == 1  # reading it again renders nothing


def test_the_review_date_is_read_once_and_passed_down(monkeypatch):
    days: list[object] = []
    real = pipeline.review_day

    def recorded(given):
        days.append(given)
        return real(given)

    monkeypatch.setattr(pipeline, "review_day", recorded)
    seen = {}

    def fake_local(*args, review_date=None, **kwargs):
        seen["date"] = review_date
        raise LocalModeError("stop")

    monkeypatch.setattr(pipeline, "build_local_snapshot", fake_local)
    review = pipeline.review_local("/nowhere", "a", "b", review_date=None)
    assert review.verdict is None and review.error == "stop"
    assert days == [None] and isinstance(seen["date"], date)
