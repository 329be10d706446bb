"""Checks 0, 1, 2, 4 and 5 on the bundled sandbox worlds give the rows their README expects."""
from __future__ import annotations

from datetime import date

import pytest

from checks.engine import evaluate
from tests.builders import world_snapshot

MINE = {0, 1, 2, 4, 5}
REVIEW_DATE = date(2026, 11, 29)  # the worlds README's review date


@pytest.fixture(scope="module")
def seed(tmp_path_factory):
    snap = world_snapshot("seed", tmp_path_factory.mktemp("seed"), review_date=REVIEW_DATE)
    return snap, evaluate(snap, only=MINE)


@pytest.fixture(scope="module")
def rejected(tmp_path_factory):
    snap = world_snapshot("rejected", tmp_path_factory.mktemp("rejected"), review_date=REVIEW_DATE)
    return snap, evaluate(snap, only=MINE)


def test_seed_statuses(seed):
    _, verdict = seed
    assert {r.number: r.status.value for r in verdict.rows} == {n: "PASS" for n in MINE}


def test_seed_check_0_names_the_owner_line_team_and_catch_all(seed):
    row = seed[1].row(0)
    assert row.reason.startswith(
        "@seungrokj is a named owner of the changed inferencex-e2e/configs/amd-master.yaml and a member of "
        "@InferenceX/vendor-number-3, which owns the changed inferencex-e2e/docs/MODELS.md and "
        "inferencex-e2e/docs/MODELS_zh.md."
    )
    assert "The other 3 changed files" in row.reason and "catch-all line (.github/CODEOWNERS:2)" in row.reason
    assert "vendor-number-4" not in row.reason  # unreadable (not fetched) and irrelevant


def test_seed_check_1_uses_the_in_pr_commit_not_the_skipped_head_run(seed):
    snap, verdict = seed
    row = verdict.row(1)
    c1 = snap.commits[0].sha
    assert (row.details["run_id"], row.details["sha"]) == (37597985033, c1)
    assert any(e.run_id == 37597985033 for e in row.evidence)
    assert "1 canary / job, 15 agentic / jobs and 1 agentic eval / job succeeded" in row.reason
    assert f"The head {snap.head_sha[:8]} is a later commit." in row.reason
    assert "37630112458" not in row.reason


def test_seed_check_2_cites_score_bar_and_image(seed):
    row = seed[1].row(2)
    assert (row.details["run_id"], row.details["artifact"]) == (37597985033, "eval_results_all")
    (score,) = row.details["scores"]
    assert (score["task"], score["metric"], score["score"], score["bar"], score["bar_source"], score["tp"], score["conc"]) \
        == ("gsm8k", "em_strict", 0.973, 0.90, "default.gsm8k", 2, 128)
    assert set(row.details["images"].values()) == {"rocm/atom-dev:nightly_202610070333"}
    assert any(e.label().startswith("inferencex-e2e/configs/thresholds.yaml") or "default.gsm8k" in e.label()
               for e in row.evidence)


def test_seed_check_4_and_5(seed):
    verdict = seed[1]
    assert (verdict.row(4).details["command"], verdict.row(4).details["run_id"]) == ("/reuse-sweep-run", 37597985033)
    assert (verdict.row(5).details["items"], verdict.row(5).details["explained"]) == (17, [])


def test_rejected_statuses(rejected):
    _, verdict = rejected
    assert {r.number: r.status.value for r in verdict.rows} == {0: "FAIL", 1: "PASS", 2: "FAIL", 4: "WARN", 5: "FAIL"}


def test_rejected_reasons(rejected):
    verdict = rejected[1]
    assert "@chunfangamd is not an owner of the changed inferencex-e2e/configs/nvidia-master.yaml" in verdict.row(0).reason
    assert "@ankur-singh @kedarpotdar-nv @InferenceX/core" in verdict.row(0).reason
    r2 = verdict.row(2).reason
    assert "dsr1 gsm8k em_strict 0.881 < 0.91 (models.dsr1.gsm8k)" in r2 and "0.874" in r2 and "dsv4" not in r2
    r4 = verdict.row(4).reason
    assert "mzhou-amd (CONTRIBUTOR)" in r4 and "chunfangamd" not in r4
    assert verdict.row(5).details["missing"] and "2 template items are missing" in verdict.row(5).reason
