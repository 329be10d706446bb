"""Check 15 details a case file cannot express compactly: listing caps and outcome details."""
from __future__ import annotations

from checks.check_15_pr_description import MAX_LISTED, PrDescriptionCheck
from checks.context import ReviewContext
from tests.builders import build_snapshot
from tests.checks.test_check_cases import CASES, load_case


def _snapshot(name: str, body: str):
    spec = load_case(CASES / "check_15" / f"{name}.yaml")["snapshot"]
    return build_snapshot(dict(spec, body=body))


def _evaluate(snap):
    check = PrDescriptionCheck()
    ctx = ReviewContext(snap)
    reason = check.applies(ctx)
    return reason, (check.evaluate(ctx) if reason is None else None)


def test_many_contradictions_are_capped_in_the_reason_but_all_kept_in_details():
    body = ("Points: TP2 [1], TP4 [2]. `--max-num-seqs 64`, `--kv_cache_dtype fp8`, OMP_NUM_THREADS=8, "
            "ATOM_DISABLE_MMAP=false.\n")
    _, result = _evaluate(_snapshot("pass-all-claims-agree", body))
    assert result.status.value == "WARN"
    assert len(result.details["contradictions"]) == 6
    assert f"and {6 - MAX_LISTED} more" in result.reason
    # Each contradiction cites the head value's file and the body line.
    assert sum(1 for e in result.evidence if e.note == "PR body line 1") == 6


def test_only_old_state_claims_are_not_applicable():
    reason, result = _evaluate(_snapshot("pass-all-claims-agree", "Image rocm/atom-dev:nightly_202609250902 → new nightly.\n"))
    assert result is None and "makes no" in reason


def test_outcomes_are_recorded_per_claim():
    body = "Points: TP2 [1, 4]. Compared with vllm/vllm-openai:v0.11.0.\n"
    _, result = _evaluate(_snapshot("pass-all-claims-agree", body))
    assert result.status.value == "PASS"
    assert [(c["kind"], c["outcome"]) for c in result.details["claims"]] == [("image", "skip"), ("points", "agree")]


def test_check_never_fails():
    body = "Points: TP16 [1]. AL 9.99. --max-num-seqs 1\n"
    _, result = _evaluate(_snapshot("pass-all-claims-agree", body))
    assert result.status.value == "WARN"
