"""Check 0 behaviour that case files cannot express: unreadable team membership."""
from __future__ import annotations

from checks.result import Status
from checks.snapshot import Unavailable
from tests.builders import build_snapshot, check_row

CODEOWNERS = (
    "* @InferenceX/core\n"
    "inferencex-e2e/docs/MODELS.md @ankur-singh @InferenceX/vendor-3 @InferenceX/vendor-4\n"
)


def _row(team_members, signer="seungrokj"):
    snap = build_snapshot({
        "base": {".github/CODEOWNERS": CODEOWNERS, "inferencex-e2e/docs/MODELS.md": "a\n"},
        "head": {"inferencex-e2e/docs/MODELS.md": "b\n"},
        "signoff": {"author": signer, "body": "As a PR reviewer and CODEOWNER, I have reviewed this and have:"},
    })
    snap = snap.model_copy(update={"team_members": team_members})
    return check_row(0, snap)


def test_unreadable_team_is_not_a_failure_when_another_team_on_the_line_shows_membership():
    row = _row({"InferenceX/vendor-3": ["seungrokj"], "InferenceX/vendor-4": Unavailable(reason="403 Forbidden")})
    assert row.status is Status.PASS
    assert "a member of @InferenceX/vendor-3" in row.reason


def test_named_signer_passes_even_when_every_team_is_unreadable():
    row = _row({"InferenceX/vendor-3": Unavailable(reason="403"), "InferenceX/vendor-4": Unavailable(reason="403")},
               signer="ankur-singh")
    assert row.status is Status.PASS and "named owner" in row.reason


def test_unreadable_team_as_the_only_route_passes_saying_membership_is_unconfirmed():
    # Spec 12: unreadable team membership is never a failure by itself.
    row = _row({"InferenceX/vendor-3": [], "InferenceX/vendor-4": Unavailable(reason="404 Not Found")})
    assert row.status is Status.PASS
    assert "could not be confirmed" in row.reason and "not a failure by itself" in row.reason
    assert "@InferenceX/vendor-4" in row.reason and "404 Not Found" in row.reason
    assert any(e.unavailable and "vendor-4" in (e.note or "") for e in row.evidence)


def test_readable_teams_without_the_signer_are_a_genuine_mismatch():
    row = _row({"InferenceX/vendor-3": ["x"], "InferenceX/vendor-4": ["y"]})
    assert row.status is Status.FAIL
    assert "is not an owner of the changed inferencex-e2e/docs/MODELS.md" in row.reason
