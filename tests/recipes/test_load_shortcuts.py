"""The YAML builder working from parser events, the recipe line look-ups and DirSource's os.path
reads give the answers of the plain definitions they replace (bench/core.py)."""
from __future__ import annotations

import os
from pathlib import Path

import pytest
import yaml

from recipes import yamlio
from recipes.source import DirSource
from recipes.srt import BASE, parse_recipe
from tests.builders import REPO_FIXTURES as FIXTURES


def _yaml_files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.y*ml") if ".git" not in p.parts)


def _reference(text: str) -> tuple[object, dict]:
    """What load_yaml must give, by the plain definitions: SafeLoader's value, and the line of
    every key path (a mapping value's path takes its key's line) kept where it differs from the
    line its parent path resolves to, read off PyYAML's own node tree."""
    ctor = yaml.constructor.SafeConstructor()
    lines: dict = {}

    def walk(node, kp: tuple, line: int, parent_line) -> None:
        if line != parent_line:
            lines[kp] = line
        if isinstance(node, yaml.SequenceNode):
            for i, child in enumerate(node.value):
                walk(child, kp + (i,), child.start_mark.line + 1, line)
        elif isinstance(node, yaml.MappingNode):
            for knode, vnode in node.value:
                walk(vnode, kp + (ctor.construct_object(knode),), knode.start_mark.line + 1, line)

    node = yaml.compose(text, Loader=yaml.CSafeLoader)
    walk(node, (), node.start_mark.line + 1, None)
    return yaml.load(text, Loader=yaml.CSafeLoader), lines


def _assert_same_as_reference(paths: list[Path]) -> int:
    checked = 0
    for path in paths:
        text = path.read_text()
        if "&" in text or "<<" in text:  # aliases and merges: the tests below
            continue
        try:
            doc = yamlio.load_yaml(text, str(path))
        except yamlio.RecipeError:
            continue
        assert (doc.data, doc.lines) == _reference(text), path
        checked += 1
    return checked


def test_building_from_parser_events_gives_safe_loaders_values_and_the_nodes_lines():
    assert _assert_same_as_reference(_yaml_files(FIXTURES)) > 10


def test_building_from_parser_events_gives_safe_loaders_values_and_the_nodes_lines_on_real_data(inferencex_dir):
    assert _assert_same_as_reference(_yaml_files(inferencex_dir)) > 100


def test_a_document_with_aliases_still_shares_and_bounds_them():
    doc = yamlio.load_yaml("a: &x {k: [1, 2]}\nb: *x\nc:\n  - *x\n  - 3\n", "x.yaml")
    assert doc.data["a"] is doc.data["b"] is doc.data["c"][0]
    assert doc.line("c", 1) == 5 and doc.line("b") == 2
    leaves = yamlio.load_yaml("a: &s text\nb: [*s, *s]\n", "x.yaml")
    assert leaves.data == {"a": "text", "b": ["text", "text"]} and leaves.line("b", 1) == 2


RECIPE = """\
base:
  name: r
  model: {path: "hf:m", precision: fp4}
  roles:
    agg:
      gpus: 8
      args:
        tensor-parallel-size: 8
        speculative: {method: mtp,
                      k: 3}
      env: {A: "1"}
override_two:
  roles:
    agg: {args: {tensor-parallel-size: 4}}
"""


def _naive_origins(doc: yamlio.YamlDoc, value: object, kp: tuple, src: tuple, out: dict) -> dict:
    line = doc.line(*src)
    if line is not None:
        out[kp] = line
    if isinstance(value, dict):
        for k, v in value.items():
            _naive_origins(doc, v, kp + (k,), src + (k,), out)
    return out


PLAIN = """\
name: p
engine: vllm
roles:
  agg: {gpus: 4,
        args: {tensor-parallel-size: 4}}
benchmark:
  env:
    CONC: 8
"""


@pytest.mark.parametrize("text", [RECIPE, PLAIN])
def test_recipe_origins_equal_the_documents_own_lines(text):
    doc = yamlio.load_yaml(text, "r.yaml")
    recipe = parse_recipe(text, "r.yaml")
    first = recipe.variants[0]
    if BASE in doc.data:
        want = {}
        for k, v in doc.data[BASE].items():
            _naive_origins(doc, v, (k,), (BASE, k), want)
    else:
        want = {}
        for k, v in doc.data.items():
            _naive_origins(doc, v, (k,), (k,), want)
    assert first.origins == want


def test_recipe_origins_equal_the_documents_own_lines_on_real_data(inferencex_dir):
    checked = 0
    for path in _yaml_files(inferencex_dir / "inferencex-e2e" / "benchmarks"):
        text = path.read_text()
        recipe = parse_recipe(text, str(path))
        if not recipe.variants:
            continue
        doc = yamlio.load_yaml(text, str(path))
        block, src = (doc.data[BASE], (BASE,)) if BASE in doc.data else (doc.data, ())
        want: dict = {}
        for k, v in block.items():
            _naive_origins(doc, v, (k,), src + (k,), want)
        got = dict(recipe.variants[0].origins)
        if src and ("schema",) not in want:  # a bundle's top-level schema is copied into its base
            got.pop(("schema",), None)
        assert got == want, path
        checked += 1
    assert checked > 50


def test_dir_source_reads_files_only_and_treats_a_link_loop_as_unreadable(tmp_path):
    root = tmp_path / "repo"
    (root / "d").mkdir(parents=True)
    (root / "d" / "f.yaml").write_bytes(b"a: 1\n")
    (root / "loop1").symlink_to("loop2")
    (root / "loop2").symlink_to("loop1")
    (root / "dangling").symlink_to("nowhere")
    os.mkfifo(root / "pipe")
    (tmp_path / "outside.yaml").write_text("x: 1\n")
    (root / "d" / "out").symlink_to("../../outside.yaml")
    src = DirSource(root)
    assert src.read("d/f.yaml") == b"a: 1\n" and src.read("/d/./f.yaml") == b"a: 1\n"
    for unreadable in ("d", "", "loop1", "dangling", "pipe", "missing.yaml", "d/f.yaml/x"):
        assert src.read(unreadable) is None, unreadable
    assert src.failures == {}
    assert src.read("d/out") is None
    assert set(src.failures) == {"d/out"} and "leaves the repository" in src.failures["d/out"]


def test_dir_source_refuses_file_and_folder_links_out_and_reads_links_inside(tmp_path):
    root = tmp_path / "repo"
    (root / "d").mkdir(parents=True)
    (root / "d" / "a.yaml").write_bytes(b"a: 1\n")
    (tmp_path / "away").mkdir()
    (tmp_path / "away" / "x.yaml").write_bytes(b"x: 1\n")
    (root / "d" / "link.yaml").symlink_to("../../away/x.yaml")  # a file link out, beside a plain file
    (root / "d" / "inner.yaml").symlink_to("a.yaml")  # a file link that stays inside
    (root / "out").symlink_to("../away")  # a folder link out
    (root / "in").symlink_to("d")  # a folder link that stays inside
    src = DirSource(root)
    assert src.read("d/a.yaml") == b"a: 1\n" and src.read("d/inner.yaml") == b"a: 1\n"
    assert src.read("d/link.yaml") is None and src.read("out/x.yaml") is None
    assert src.read("in/a.yaml") == b"a: 1\n"
    assert set(src.failures) == {"d/link.yaml", "out/x.yaml"}
    assert src.read("d/a.yaml") == b"a: 1\n" and src.read("d/link.yaml") is None  # asked again


def test_dir_source_resolves_a_folder_from_its_parent_as_realpath_does(tmp_path):
    # Each folder's realpath is its parent's joined with its name, the name resolved when it is a
    # link: folder links inside, out, out and back in, and links through linked folders.
    root = tmp_path / "repo"
    (root / "a" / "b" / "c").mkdir(parents=True)
    (root / "a" / "b" / "c" / "f.yaml").write_bytes(b"f: 1\n")
    (tmp_path / "away").mkdir()
    (tmp_path / "away" / "g.yaml").write_bytes(b"g: 1\n")
    (root / "l1").symlink_to("a/b")
    (root / "a" / "l2").symlink_to("../a/b/c")
    (root / "a" / "b" / "l3").symlink_to("../../../away")
    (tmp_path / "away" / "back").symlink_to("../repo/a")
    src = DirSource(root)
    paths = ["a/b/c/f.yaml", "l1/c/f.yaml", "a/l2/f.yaml", "a/b/l3/g.yaml", "a/b/l3/back/b/c/f.yaml",
             "l1/l3/back/l2/f.yaml", "missing/x.yaml", "a/missing/y", "l1/c", "l1"]
    for rel in paths + paths:  # the second round answers from the folders already resolved
        assert src._realpath(rel) == os.path.realpath(root / rel), rel
    for rel in ("a/b/c/f.yaml", "l1/c/f.yaml", "a/l2/f.yaml", "a/b/l3/back/b/c/f.yaml", "l1/l3/back/l2/f.yaml"):
        assert src.read(rel) == b"f: 1\n", rel
    assert src.read("a/b/l3/g.yaml") is None and set(src.failures) == {"a/b/l3/g.yaml"}


def test_what_a_collector_pause_keeps_is_old_yet_its_cycles_are_still_collected():
    import gc
    import weakref

    from recipes.repository import gc_paused

    class Node:
        pass

    with gc_paused():
        kept = [{"k": [i]} for i in range(100)]
        cyclic = Node()
        cyclic.self = cyclic
        gone = weakref.ref(cyclic)
        del cyclic
    oldest = {id(o) for o in gc.get_objects(generation=2)}
    assert id(kept) in oldest and all(id(d) in oldest for d in kept[:3])
    assert gc.isenabled() and gone() is not None  # reference counting cannot free a cycle
    gc.collect()
    assert gone() is None


def test_the_anchor_search_finds_what_the_plain_pattern_finds():
    import random
    import re

    plain = re.compile(r"(?:^|[\s\[\{,:-])&[0-9A-Za-z_-]")
    alphabet = [" ", "\t", "\n", "\r", "\x0b", "\x85", "\u3000", "[", "{", ",", ":", "-", "&", "*", "a", "_", ".", "\u2192"]
    rng = random.Random(7)
    for _ in range(20_000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 8)))
        assert bool(yamlio.ANCHOR_RE.search(text)) == bool(plain.search(text)), repr(text)
    for text in ("&a x", "k: &a 1", "[&a 1]", "- &a", "a&b", "k: & x", "x\n&a", "k: a && b", "- &-x 1"):
        assert bool(yamlio.ANCHOR_RE.search(text)) == bool(plain.search(text)), text


def test_an_ampersand_libyaml_cannot_start_an_anchor_with_is_no_anchor():
    # libyaml's anchor names are [0-9A-Za-z_-]: `&&`, `&.` and `&é` at a node's start are scanner
    # errors, never anchors, so a shell `&&` in a plain scalar does not make a file "anchored".
    for text in ("k: &&x 1", "k: &.x 1", "k: &\u00e9 1"):
        with pytest.raises(yaml.YAMLError):
            yaml.compose(text, Loader=yaml.CSafeLoader)
    assert yamlio.ANCHOR_RE.search("cmd: make && make install") is None
    assert yamlio.ANCHOR_RE.search("k: &a-b_9 1") is not None


def _chunks_line_by_line(text: str, starts) -> list[tuple[int, str]] | None:
    """`yamlio.top_level_chunks` as first written: a walk over every line of the file."""
    if text.startswith("\ufeff") or "\r" in text or yamlio.ANCHOR_RE.search(text):
        return None
    lines = text.split("\n")
    firsts = []
    for i, line in enumerate(lines):
        if not line or line[0] in " #":
            continue
        if not starts(line):
            return None
        firsts.append(i)
    if not firsts or any(ln.strip() and not ln.lstrip().startswith("#") for ln in lines[:firsts[0]]):
        return None
    offsets, at = [], 0
    for line in lines:
        offsets.append(at)
        at += len(line) + 1
    cuts = [offsets[i] for i in firsts] + [len(text)]
    return [(i + 1, text[a:b]) for i, a, b in zip(firsts, cuts, cuts[1:])]


def test_top_level_chunks_found_by_a_regex_scan_are_the_line_walks():
    import random

    from recipes.master import _TOP_KEY_RE

    pieces = ["a: 1", "b:", "- x", "-", "  c: 2", "  - y", "# note", " # note", "", " ", "\t", "\tk: v",
              "---", "k: |", "  text", "  ", "z", "x.y-1: 2 # c", "&a 1", "\ufeffa: 1", "a: 1\r"]
    rng = random.Random(11)
    for starts in (_TOP_KEY_RE.fullmatch, lambda line: line.startswith("- ")):
        for _ in range(20_000):
            text = "\n".join(rng.choice(pieces) for _ in range(rng.randint(0, 7))) + rng.choice(["", "\n", "\n\n"])
            assert yamlio.top_level_chunks(text, starts) == _chunks_line_by_line(text, starts), repr(text)
