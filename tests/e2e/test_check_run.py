"""The `codeowner-signoff-verify` check run on the assessed head, beside the status: the verdict as
its summary, the rows as its text, one annotation per cited file:line (GitHub takes 50 per
request, so more go out in updates of 50), written once per distinct verdict."""
from __future__ import annotations

from datetime import date
from pathlib import Path


from bot.pipeline import review_pr
from bot.publisher import ANNOTATIONS_PER_REQUEST, CHECK_RUN_NAME, Publisher, annotations_for
from ghsim import Emulator
from ghsim import effects as fx
from checks.engine import Row, SignoffRef, Verdict, VerdictStatus
from checks.render import HEADERS
from checks.result import Evidence, Status
from checks.registry import CHECK_NUMBERS
from tests.builders import emulator_api, failing_api

WORLDS = Path(__file__).resolve().parents[2] / "ghsim" / "worlds"
REVIEW_DATE = date(2026, 11, 29)


def _check_runs(emu: Emulator) -> list[dict]:
    return [e for e in emu.effects if e["kind"] in (fx.EFFECT_CHECK_RUN_CREATED, fx.EFFECT_CHECK_RUN_UPDATED)]


def test_a_rejected_verdict_annotates_every_cited_line_and_fails_the_check_run():
    with Emulator(WORLDS / "rejected", strict=True) as emu:
        api = emulator_api(emu)
        try:
            review = review_pr(api, emu.world.repo, emu.world.pr.number, post=True, review_date=REVIEW_DATE)
            again = review_pr(api, emu.world.repo, emu.world.pr.number, post=True, review_date=REVIEW_DATE)
            served = api.list(f"/repos/{emu.world.repo}/check-runs/{_check_runs(emu)[0]['id']}/annotations")
        finally:
            api.close()
        emu.assert_clean()
        runs = _check_runs(emu)
    verdict = review.verdict
    assert verdict.status is VerdictStatus.REJECTED and "check run" in review.published.extras
    assert "check run" not in again.published.extras and len(runs) == 1, "an unchanged verdict writes nothing"
    run = runs[0]
    assert (run["name"], run["sha"], run["conclusion"]) == (CHECK_RUN_NAME, verdict.head_sha, "failure")
    assert run["output"]["summary"].startswith(HEADERS[VerdictStatus.REJECTED])
    assert review.published.comment_url in run["output"]["summary"]
    for row in verdict.rows:
        assert f"Check {row.number} ({row.name})" in run["output"]["text"]
    cited = {(e.path, e.line) for row in verdict.rows for e in row.evidence if e.path and e.line and not e.unavailable}
    assert {(a["path"], a["start_line"]) for a in run["annotations"]} == cited
    failed = {(e.path, e.line) for row in verdict.rows if row.status is Status.FAIL for e in row.evidence
              if e.path and e.line and not e.unavailable}
    assert {(a["path"], a["start_line"]) for a in run["annotations"] if a["annotation_level"] == "failure"} == failed
    assert len(served) == len(run["annotations"])


def _many_citations(emu: Emulator, n: int) -> Verdict:
    evidence = [Evidence(path="inferencex-e2e/configs/amd-master.yaml", line=i + 1) for i in range(n)]
    rows = [Row(number=k, name=f"Check{k}", status=Status.FAIL if k == 8 else Status.PASS, reason=f"reason {k}",
                evidence=evidence if k == 8 else []) for k in sorted(CHECK_NUMBERS)]
    return Verdict(status=VerdictStatus.REJECTED, rows=rows, repo=emu.world.repo, pr=emu.world.pr.number,
                   head_sha=emu.head_sha, signoff=SignoffRef(author="seungrokj", key="issuecomment-4401"))


def test_more_than_fifty_annotations_go_out_in_batches_of_fifty():
    with Emulator(WORLDS / "seed", strict=True) as emu:
        api = emulator_api(emu)
        try:
            verdict = _many_citations(emu, 120)
            assert Publisher(api, emu.world.repo, emu.world.pr.number, env={}).publish_check_run(verdict, None)
            run_id = _check_runs(emu)[0]["id"]
            served = api.list(f"/repos/{emu.world.repo}/check-runs/{run_id}/annotations")
        finally:
            api.close()
        emu.assert_clean()
        batches = [len(e["annotations"]) for e in _check_runs(emu)]
        assert emu.requests["POST /repos/{owner}/{repo}/check-runs"] == 1
        assert emu.requests["PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}"] == 2
    assert batches == [ANNOTATIONS_PER_REQUEST, ANNOTATIONS_PER_REQUEST, 20]
    assert [a["start_line"] for a in served] == list(range(1, 121))
    assert len(annotations_for(verdict)) == 120


def test_a_failing_check_run_never_fails_the_publication():
    with Emulator(WORLDS / "seed", strict=True) as emu:
        api = failing_api(emu, "/check-runs", RuntimeError("checks API down"), times=None)
        try:
            review = review_pr(api, emu.world.repo, emu.world.pr.number, post=True, review_date=REVIEW_DATE)
        finally:
            api.close()
        kinds = [e["kind"] for e in emu.effects]
    assert review.error is None and review.published.status_state == "success"
    assert kinds == [fx.EFFECT_COMMENT_CREATED, fx.EFFECT_STATUS_SET]
