"""Golden renders of real verdicts: the bundled worlds through every real check, pinned as the
Markdown a PR would show (regenerate with `make goldens` after an intended wording change)."""
from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest

from checks.engine import evaluate
from checks.render import render_comment, validate_comment
from tests.builders import fixed_seed, world_snapshot

GOLDEN = Path(__file__).resolve().parents[1] / "golden"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"
REVIEW_DATE = date(2026, 10, 20)
# The seed's Check 15 findings (the body's interval value; the draft precision the body omits
# and the changelog denies): fixing both texts makes the same PR a clean PASS.


def _snapshot(world: str, tmp_path: Path, fix_body: bool = False):
    snap = world_snapshot(world, tmp_path / world, review_date=REVIEW_DATE)
    return fixed_seed(snap) if fix_body else snap


@pytest.mark.golden
@pytest.mark.parametrize(
    "world, fix_body, golden, header",
    [
        ("seed", True, "world_seed_pass.md", "## ✅✅✅ **Verdict: PASS** ✅✅✅"),
        ("seed", False, "world_seed_warn.md", "## ⚠️ **Verdict: WARN** ⚠️"),
        ("rejected", False, "world_rejected.md", "## ❌❌❌ **REJECTED** ❌❌❌"),
    ],
)
def test_world_verdict_matches_golden(world, fix_body, golden, header, tmp_path):
    snap = _snapshot(world, tmp_path, fix_body)
    verdict = evaluate(snap)
    body = render_comment(verdict, snap.signoff.key)
    assert validate_comment(body) == []
    assert body.splitlines()[1] == header
    path = GOLDEN / golden
    if UPDATE:
        path.write_text(body, encoding="utf-8")
    assert path.exists(), f"{path} is missing; run with UPDATE_GOLDEN=1 to create it"
    assert body == path.read_text(encoding="utf-8")
