"""Check 13 helpers: exclude_layer coverage and the Additional-detail evidence topics."""
from __future__ import annotations

import pytest

from checks.check_13_draft_runs_as_shipped import covers, missing_topics

LAYER = "model.layers.37"


@pytest.mark.parametrize("pattern, expected", [
    ("model.layers.37", True),           # substring (ATOM's plain exclude semantics)
    ("layers.37", True),
    ("model.layers.37.*", True),         # glob over the module's children
    ("model.layers.3[7-9]*", True),
    ("re:model\\.layers\\.3[7-9](\\..*)?", True),
    ("*experts*", False),                # target experts only: the tricky case
    ("model.layers.38", False),
    ("model.layers.370", False),
    ("re:(", False),                     # a broken regex covers nothing
    ("", False),
])
def test_covers(pattern, expected):
    assert covers(pattern, LAYER) is expected


def test_missing_topics_names_each_gap():
    full = ("Draft: the inline DSpark head of the checkpoint.\nStored precision: FP8 e4m3.\n"
            "Default handling: the image's default path.\nEffective precision: served at FP8.")
    assert missing_topics(full) == []
    assert missing_topics("Draft: the inline DSpark head.") == ["stored precision", "default handling", "effective precision"]
    assert missing_topics("") == ["draft identity", "stored precision", "default handling", "effective precision"]
