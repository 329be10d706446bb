import pytest

from recipes.errors import RecipeError
from recipes.yamlio import load_yaml

BOMB = b"""a: &a ["x","x","x","x","x","x","x","x","x"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
"""


def test_lines_follow_key_paths():
    doc = load_yaml(b"top:\n  list:\n  - {a: 1}\n  - b: 2\n    c: [1, 2]\n", "f.yaml")
    assert doc.data == {"top": {"list": [{"a": 1}, {"b": 2, "c": [1, 2]}]}}
    assert doc.line("top") == 1
    assert doc.line("top", "list", 1, "c") == 5
    assert doc.line("top", "list", 1, "c", 7) == 5  # unknown child falls back to parent


@pytest.mark.parametrize(
    "data, code, line",
    [
        (b"a: 1\nb: 2\na: 3\n", "duplicate-key", 3),
        (b"a: [1\nb: 2\n", "yaml", 2),
        (BOMB, "alias-bomb", None),
        (b"a: 1\n\xff\n", "encoding", 2),
        (b"a: 1\x00", "binary", None),
    ],
)
def test_hostile_yaml_is_a_finding(data, code, line):
    with pytest.raises(RecipeError) as e:
        load_yaml(data, "bad.yaml")
    assert e.value.finding.code == code
    assert e.value.finding.path == "bad.yaml"
    assert e.value.finding.line == line


def test_size_cap():
    with pytest.raises(RecipeError) as e:
        load_yaml(b"a: 1\n" * 100, "big.yaml", max_bytes=100)
    assert e.value.finding.code == "too-large"


def test_merge_keys_and_shared_aliases():
    doc = load_yaml(b"base: &b {x: 1, y: 2}\nchild:\n  <<: *b\n  y: 3\n", "m.yaml")
    assert doc.data["child"] == {"x": 1, "y": 3}
