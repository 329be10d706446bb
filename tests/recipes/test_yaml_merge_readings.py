"""YAML merge keys read one way or refused (recipes.yamlio): srtctl reads recipes with PyYAML, so
a file whose merges PyYAML resolves differently from YAML's rules has two readings and none is
taken, and a mapping with two `<<` keys (a duplicate key) is refused."""
from __future__ import annotations

import pytest
import yaml

from recipes.errors import RecipeError
from recipes.yamlio import load_yaml

NESTED = "b: &b {x: 2, w: 9}\na: &a {<<: *b, x: 1}\nc: {<<: *a, y: 3}\n"


def test_a_merge_of_a_merged_mapping_that_pyyaml_reads_otherwise_is_refused():
    # The two readings: YAML's rules give c.x == 1 (a's own key wins over b's), PyYAML gives 2.
    assert yaml.safe_load(NESTED)["c"]["x"] == 2
    with pytest.raises(RecipeError) as err:
        load_yaml(NESTED, "recipe.yaml")
    assert err.value.finding.line == 3 and err.value.finding.code == "merge-ambiguous"


def test_merges_both_readers_agree_on_are_read():
    text = "d: &d {x: 5, y: 5}\nb: &b {x: 2}\na: &a {<<: *b, y: 1}\nc:\n  <<: [*d, *a]\n  z: 0\n"
    assert load_yaml(text, "r.yaml").data["c"] == yaml.safe_load(text)["c"] == {"x": 5, "y": 5, "z": 0}


def test_a_second_merge_key_is_a_duplicate_key():
    with pytest.raises(RecipeError) as err:
        load_yaml("a: &a {x: 1}\nb: &b {x: 2}\nc:\n  <<: *a\n  <<: *b\n", "r.yaml")
    assert err.value.finding.line == 5 and err.value.finding.code == "duplicate-key"


def test_an_explicit_key_wins_over_a_merged_one_wherever_it_is_written():
    text = "a: &a {x: 1}\nc:\n  x: 7\n  <<: *a\nd:\n  <<: *a\n  x: 8\n"
    data = load_yaml(text, "r.yaml").data
    assert (data["c"]["x"], data["d"]["x"]) == (7, 8)
