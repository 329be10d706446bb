"""One reading of values (recipes/values.py): truthiness, numbers, flag names."""
from __future__ import annotations

import pytest

from recipes.values import as_float, as_int, flag_name, is_disabled, is_enabled, truth


@pytest.mark.parametrize("value, expected", [
    (True, True), ("true", True), ("Yes", True), ("on", True), ("1", True), (1, True), ("'true'", True),
    ("enabled", True),  # written as an on-value in the benchmark repository (NVIDIA_GDRCOPY: "enabled")
    (False, False), ("false", False), ("OFF", False), ("0", False), (0, False), ("disabled", False),
    (None, False), ("", False), ("null", False), ("none", False),  # unset: off for a switch
    ("fp8", None), ("2", None), (2, None),  # values, not switches
])
def test_truth_is_one_word_set(value, expected):
    assert truth(value) is expected


def test_enabled_counts_any_nonzero_number_and_disabled_needs_an_explicit_off():
    assert is_enabled("2") and is_enabled(0.5) and not is_enabled("fp8") and not is_enabled(None)
    assert is_disabled("0") and is_disabled("no") and is_disabled(False)
    assert not is_disabled(None) and not is_disabled("") and not is_disabled("fp8")


def test_numbers():
    assert as_int("8") == 8 and as_int(8) == 8 and as_int(True) is None and as_int("8.5") is None
    assert as_float("'0.75'") == 0.75 and as_float(True) is None and as_float("x") is None


def test_flag_name_is_one_spelling():
    assert flag_name("--Hf_Overrides") == flag_name("hf-overrides") == flag_name("HF_OVERRIDES") == "hf-overrides"
