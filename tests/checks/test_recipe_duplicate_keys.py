"""A recipe that writes a key twice is read as srtctl reads it (PyYAML keeps the later value)
and the serving checks judge that, naming the line in the row (a PASS says so; the blocking
checks have no WARN), instead of "could not verify" (real: #2700's
kimi-k3 recipe writes `compilation-config` at lines 101 and 111, #2462 an env key twice).
A master config stays strict: a duplicate key there is still an error."""
from __future__ import annotations

import pytest

from recipes.errors import RecipeError
from recipes.srt import parse_recipe
from recipes.yamlio import load_yaml
from tests.checks.test_external_srt_recipe import IN_REPO, RECIPE, _rows

TWICE = RECIPE.replace("decode: {tensor_parallel_size: 32,",
                       "decode: {tensor_parallel_size: 16, tensor_parallel_size: 32,")


def test_the_later_value_is_kept_and_recorded():
    recipe = parse_recipe(TWICE, IN_REPO)
    (variant,) = recipe.variants
    assert variant.get("backend", "trtllm_config", "decode", "tensor_parallel_size") == 32
    (doubt,) = variant.doubts
    assert doubt.line == 8 and doubt.severity == "warning" and "twice (first at line 8)" in doubt.message


def test_serving_checks_judge_what_runs_and_name_the_line():
    rows = _rows({IN_REPO: TWICE})
    for n in (9, 10):
        assert rows[n].status.value == "PASS", (n, rows[n].reason)
        assert f"{IN_REPO}:8 writes backend.trtllm_config.decode.tensor_parallel_size twice" in rows[n].reason
        assert any(e.path == IN_REPO and e.line == 8 for e in rows[n].evidence)
    clean = _rows({IN_REPO: RECIPE})
    assert clean[10].status.value == "PASS" and "twice" not in clean[10].reason, clean[10].reason
    # A FAIL is not softened or reworded by it.
    assert not rows[8].reason.startswith("could not verify") and "twice" not in rows[8].reason, rows[8].reason


def test_a_master_config_duplicate_is_still_an_error():
    with pytest.raises(RecipeError) as err:
        load_yaml("a: 1\na: 2\n", "configs/nvidia-master.yaml")
    assert err.value.finding.code == "duplicate-key" and err.value.finding.line == 2
