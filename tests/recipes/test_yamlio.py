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


@pytest.mark.parametrize("depth", [199, 999])
def test_deep_nesting_is_a_finding_not_a_recursion_crash(depth):
    # libyaml accepts up to 1000 levels, deeper than Python's recursion limit for the builder.
    nested = b"a: &x " + b"[" * depth + b"]" * depth + b"\nb: *x\n"
    lines = b"".join(b"  " * i + b"k:\n" for i in range(depth)) + b"  " * depth + b"v\n"
    for data in (nested, lines, b"[" * depth + b"]" * depth):
        if depth < 200:
            load_yaml(data, "deep.yaml")
            continue
        with pytest.raises(RecipeError) as e:
            load_yaml(data, "deep.yaml")
        assert e.value.finding.code == "too-deep" and e.value.finding.path == "deep.yaml"
        assert e.value.finding.line is not None


# Plain scalars of every implicit YAML 1.1 type, plus explicit tags and quoted look-alikes.
SCALARS = b"""\
ints: [0, -1, +1, 1_000, 0x1F, 0b101, 010, 0o17, 190:20:30]
floats: [1.5, -2.0, 1.5e3, .inf, -.Inf, .NaN, 0., 1e3, 6.8523015e+5]
bools: [yes, No, TRUE, off, On, y, n]
nulls: [~, null, Null, NULL, nUll, '']
empty:
dates: [2026-01-01, 2026-01-01 10:00:00, 2026-01-01T10:00:00Z]
quoted: ["8192", 'true', "~"]
tagged: [!!str 12, !!int '12', !!float '1.5']
merge: {<<: {a: 1}, b: 2}
"""


def test_scalars_resolve_exactly_as_safe_loader():
    import math

    import yaml

    got = load_yaml(SCALARS, "s.yaml").data
    want = yaml.load(SCALARS, Loader=yaml.SafeLoader)
    nan = got["floats"].pop(5)
    assert math.isnan(nan) and math.isnan(want["floats"].pop(5))
    assert got == want
    assert [type(v) for v in got["ints"]] == [type(v) for v in want["ints"]]
    assert type(got["bools"][0]) is bool and got["quoted"] == ["8192", "true", "~"]
    # The resolved-scalar cache must not leak a value across types or files.
    again = load_yaml(b"a: '1'\nb: 1\nc: !!str 1\n", "t.yaml").data
    assert again == {"a": "1", "b": 1, "c": "1"}
    # A second read answers every plain scalar from the cache: the same values, of the same types.
    cached = load_yaml(SCALARS, "s.yaml").data
    assert math.isnan(cached["floats"].pop(5)) and cached == want
    assert all([type(v) for v in cached[k]] == [type(v) for v in want[k]] for k in want if isinstance(want[k], list))
    assert load_yaml(b"true: 1.0\nk: [true, 1.0, '1.0']\n", "u.yaml").data == {True: 1.0, "k": [True, 1.0, "1.0"]}


def test_bad_implicit_scalar_names_its_line():
    with pytest.raises(RecipeError) as e:
        load_yaml(b"a: 1\nb: 2026-13-45\n", "d.yaml")
    assert (e.value.finding.code, e.value.finding.line) == ("yaml", 2)


def test_every_real_yaml_file_loads_with_lines(inferencex_dir):
    paths = sorted(p for p in inferencex_dir.rglob("*") if p.suffix in (".yaml", ".yml"))
    assert len(paths) >= 40  # masters, runners, changelog, thresholds, 19 golden curves, 21 recipes
    for p in paths:
        doc = load_yaml(p.read_bytes(), str(p))
        assert doc.data is not None and doc.lines, p
    log = load_yaml((inferencex_dir / "inferencex-e2e/perf-changelog.yaml").read_bytes(), "log.yaml")
    assert len(log.data) == 1101 and log.data[0]["config-keys"] and log.line(1100) == 9590


def test_lines_resolve_through_flow_style_block_style_and_aliases():
    text = (
        b"top:\n"                      # 1
        b"  arms:\n"                   # 2
        b"  - {tp: 2, conc: [1, 2,\n"  # 3
        b"      4]}\n"                 # 4
        b"  - tp: 4\n"                 # 5
        b"    conc: [8]\n"             # 6
        b"shared: &s [9]\n"            # 7
        b"uses:\n"                     # 8
        b"- *s\n"                      # 9
        b"-\n"                         # 10
        b"  *s\n"                      # 11
    )
    doc = load_yaml(text, "f.yaml")
    assert doc.line("top", "arms", 0) == 3
    assert doc.line("top", "arms", 0, "conc", 2) == 4
    assert doc.line("top", "arms", 0, "tp") == 3
    assert doc.line("top", "arms", 1) == 5
    assert doc.line("top", "arms", 1, "conc") == 6
    # An alias shares the anchored value and does not take the anchor's line.
    assert doc.data["uses"] == [[9], [9]]
    assert doc.line("uses", 0) == 8 and doc.line("uses", 1) == 8


def test_tags_on_collections_are_reported_not_dropped():
    # issue 12: `!!set {a}` / `!custom [..]` were read as plain collections.
    import pytest as _pytest

    from recipes.errors import RecipeError
    from recipes.yamlio import load_yaml

    for text, kind in (("a: !!set {x, y}\n", "mapping"), ("a: !custom [1, 2]\n", "sequence"),
                       ("a: !!omap\n  - b: 1\n", "sequence"), ("a:\n  b: !x\n    c: 1\n", "mapping")):
        with _pytest.raises(RecipeError) as e:
            load_yaml(text, "f.yaml")
        assert e.value.finding.code == "yaml-tag" and f"on a {kind}" in e.value.finding.message
    assert load_yaml("a: !!map {b: 1}\nc: !!seq [1]\nd: !!str 5\n", "f.yaml").data == {"a": {"b": 1}, "c": [1], "d": "5"}


def test_the_first_problem_in_file_order_is_the_one_reported():
    # Built from the parser's events, a duplicate key is found before a syntax error further
    # down (a real changelog blob of the history had both); either way the file is a finding.
    with pytest.raises(RecipeError) as e:
        load_yaml(b"a: 1\na: 2\nb: [1\nc: 3\n", "both.yaml")
    assert (e.value.finding.code, e.value.finding.line) == ("duplicate-key", 2)
    with pytest.raises(RecipeError) as e:
        load_yaml(b"a: [1\nb: 2\nb: 3\n", "both.yaml")
    assert e.value.finding.code == "yaml"


def test_alias_errors_name_the_anchor_and_its_line():
    for text, code, line, words in (
        (b"a: &x 1\nb: &x 2\n", "yaml", 2, "second occurrence"),
        (b"a: 1\nb: *nowhere\n", "yaml", 2, "undefined alias 'nowhere'"),
        (b"a: &m [1]\nb: {<<: *m}\n", "yaml", 2, "merge key needs a mapping"),
        (b"a: &m {k: 1}\n? *m\n: 2\n", "yaml", 2, "mapping keys must be scalars"),
    ):
        with pytest.raises(RecipeError) as e:
            load_yaml(text, "a.yaml")
        got = e.value.finding
        assert (got.code, got.line) == (code, line) and words in got.message, (text, got)
    doc = load_yaml(b"a: &m {k: 1, j: 2}\nb: {<<: [*m, {z: 3}], k: 9}\nc: &s v\nd: {*s : 1}\n", "a.yaml")
    assert doc.data["b"] == {"k": 9, "j": 2, "z": 3} and doc.data["d"] == {"v": 1}
