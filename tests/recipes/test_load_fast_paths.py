"""The cold-load fast paths give the answers of the plain definitions they replace (bench/core.py)."""
from __future__ import annotations

import gc
import hashlib
import json
import math
from pathlib import Path

import pytest
import yaml

from recipes.master import parse_master
from recipes.points import point_fingerprint
from recipes.repository import Repository, clear_parse_cache, gc_paused
from recipes.source import DirSource, MemorySource
from tests.builders import REPO_FIXTURES as FIXTURES, fixture_files
from recipes.srt import parse_recipe
from recipes.yamlio import load_yaml

MASTER = "inferencex-e2e/configs/amd-master.yaml"
ATOM_RECIPE = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom/mi355x-fp4-mtp/agentic.yaml"


# --- the collector pause ---------------------------------------------------------------------

def test_gc_paused_turns_the_collector_back_on_even_after_an_error():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested: the inner block must not turn it back on
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        with gc_paused():
            raise RuntimeError("boom")
    assert gc.isenabled()


def test_gc_paused_leaves_a_collector_that_was_off_off():
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


# --- master configs: lines from the parent's line ---------------------------------------------

def _master_paths(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*-master.yaml") if ".git" not in p.parts)


@pytest.mark.parametrize("root", [FIXTURES / "new-layout", FIXTURES / "root-layout", FIXTURES / "github-configs"])
def test_every_line_equals_the_documents_own_answer(root):
    _assert_lines_match(_master_paths(root))


def test_every_line_equals_the_documents_own_answer_on_real_data(inferencex_dir):
    paths = _master_paths(inferencex_dir / "inferencex-e2e" / "configs")
    assert paths
    _assert_lines_match(paths)


def _assert_lines_match(paths: list[Path]) -> None:
    checked = 0
    for path in paths:
        data = path.read_bytes()
        doc = load_yaml(data, str(path))
        mf = parse_master(data, str(path))
        for key, entry in mf.entries.items():
            assert entry.line == doc.line(key)
            assert entry.lines == {k: doc.line(key, k) for k in doc.data[key]}
            for item in entry.scenarios:
                ikp = (key, "scenarios", item.scenario, item.index)
                assert item.line == doc.line(*ikp)
                for arm in item.arms:
                    akp = (*ikp, "search-space", arm.index)
                    assert arm.line == doc.line(*akp)
                    assert arm.lines == {k: doc.line(*akp, k) for k in doc.data[key]["scenarios"][item.scenario][item.index]["search-space"][arm.index]}
                    for block in arm.blocks:
                        assert block.line == doc.line(*akp, block.role)
                        for i, _ in enumerate(block.additional_settings):
                            assert block.lines[f"additional-settings[{i}]"] == doc.line(*akp, block.role, "additional-settings", i)
                    checked += 1
    assert checked


def test_a_wrong_type_is_still_a_finding_with_its_line():
    text = (
        "k:\n  image: img:1\n  model: m\n  model-prefix: p\n  runner: mi355x\n  precision: fp4\n"
        "  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n"
        "    - isl: 1024\n      osl: 1024\n      search-space:\n      - {tp: 'eight', conc-list: [1, x]}\n"
        "      - tp: true\n        conc-start: 4\n"
    )
    mf = parse_master(text, "m.yaml")
    assert [(f.line, f.message) for f in mf.findings] == [
        (14, "tp: expected an integer, got 'eight'"),
        (14, "conc-list: expected a list of integers, got [1, 'x']"),
        (14, "arm has neither conc-start/conc-end nor conc-list"),
        (15, "tp: expected an integer, got True"),
    ]
    arms = mf.entries["k"].scenarios[0].arms
    assert [(a.tp, a.conc_list, a.conc_start) for a in arms] == [(None, None, None), (None, None, 4)]


# --- points ------------------------------------------------------------------------------------

@pytest.mark.parametrize("fields", [
    {"config_key": "k", "tp": 8, "dp_attn": True, "image": None, "conc": 4, "point_id": "x"},
    {"model": "org/Modèle-ß", "dram_utilization": 0.95, "launcher": {"kind": "script", "path": "a.sh", "selector": None}},
    {"dram_utilization": math.nan, "workers": {"decode": {"tp": 8, "settings": {"CONFIG_FILE": "recipes/x.yaml"}}}},
    {"isl": 8192, "source_line": 3, "kv_offload_backend": "native", "eval_launcher": None},
])
def test_fingerprint_is_the_sha256_of_the_sorted_compact_json(fields):
    data = {k: v for k, v in fields.items() if k not in ("conc", "point_id", "source_line")}
    if "launcher" in data:
        data["launcher"] = ["script", "a.sh", None]
    blob = json.dumps(data, sort_keys=True, separators=(",", ":"))
    assert point_fingerprint(fields) == hashlib.sha256(blob.encode()).hexdigest()


def test_every_concurrency_of_an_arm_gets_its_own_id():
    repo = Repository(DirSource(FIXTURES / "new-layout"))
    ids = [p.point_id for p in repo.points if p.config_key == "dsv41flash-fp4-mi355x-atom-agentic-dspark"]
    assert ids[:3] == [
        "dsv41flash-fp4-mi355x-atom-agentic-dspark:agentic:tp2-ep1:draft_model:c1",
        "dsv41flash-fp4-mi355x-atom-agentic-dspark:agentic:tp2-ep1:draft_model:c8",
        "dsv41flash-fp4-mi355x-atom-agentic-dspark:agentic:tp4-ep1:draft_model:c32",
    ]
    assert all(p.point_id.endswith(":mn") for p in repo.points if p.multinode)


class _TreeSource(MemorySource):
    """A source that knows its tree (like git or the GitHub listing) and counts reads."""

    def __init__(self, files):
        super().__init__(files)
        self.reads: list[str] = []

    def read(self, path):
        self.reads.append(path.strip("/"))
        return super().read(path)

    def blob_sha(self, path):
        return "sha" if super().read(path) is not None else None


def test_a_missing_launcher_recipe_is_never_read():
    files = fixture_files("new-layout")
    files[MASTER] = files[MASTER].replace("mi355x-fp4-mtp/agentic.yaml", "mi355x-fp4-mtp/gone.yaml")
    src = _TreeSource(files)
    repo = Repository(src)
    gone = ATOM_RECIPE.replace("agentic.yaml", "gone.yaml")
    assert any(p.launcher.path == gone and p.launcher.exists is False for p in repo.points)
    assert gone not in repo.recipes and repo.recipe(gone) is None
    assert gone not in src.reads


def test_a_second_view_reuses_points_only_while_launchers_exist_alike():
    clear_parse_cache()
    files = fixture_files("new-layout")
    base = Repository(MemorySource(files))
    head = Repository(MemorySource(files))
    assert all(a is b for a, b in zip(base.points, head.points, strict=True))
    # Same master config, but a launcher recipe is gone: the points must say so.
    without = dict(files)
    del without[ATOM_RECIPE]
    gone = Repository(MemorySource(without))
    atom = [p for p in gone.points if p.launcher.path == ATOM_RECIPE]
    assert atom and all(p.launcher.exists is False for p in atom)
    assert any(f.code == "missing-recipe" for f in gone.model_findings)
    clear_parse_cache()
    fresh = Repository(MemorySource(without))
    assert [p.model_dump() for p in fresh.points] == [p.model_dump() for p in gone.points]
    assert [str(f) for f in fresh.model_findings] == [str(f) for f in gone.model_findings]


# --- recipes: copy on write ----------------------------------------------------------------------

BUNDLE = """\
base:
  name: demo
  engine: sglang
  keep: null
  roles:
    agg:
      args: {a: 1, b: 2, c: {d: 1, e: 2}}
      env: {A: '1'}
  benchmark: {env: {X: 1}}
override_one:
  roles: {agg: {args: {a: 10, c: {d: null}}}}
override_two:
  roles:
    agg:
      env: {B: '2'}
      args: null
  benchmark: {env: 5}
zip_override_z:
  roles: {agg: {args: {b: [20, 30]}}}
"""


def test_variants_never_edit_the_base_or_each_other():
    raw = yaml.safe_load(BUNDLE)
    r = parse_recipe(BUNDLE, "r.yaml")
    by = {v.selector: v for v in r.variants}
    assert by["base"].data == raw["base"]
    one, two = by["override_one"].data, by["override_two"].data
    assert one["roles"]["agg"]["args"] == {"a": 10, "b": 2, "c": {"e": 2}}
    assert one["roles"]["agg"]["env"] == {"A": "1"} and "keep" in one
    assert two["roles"]["agg"] == {"env": {"A": "1", "B": "2"}}
    assert two["benchmark"] == {"env": 5}
    z0, z1 = by["zip_override_z[0]"].data, by["zip_override_z[1]"].data
    assert [z0["roles"]["agg"]["args"]["b"], z1["roles"]["agg"]["args"]["b"]] == [20, 30]
    assert "keep" not in z0  # zip slices drop nulls, and only in their own copy
    assert by["base"].data == raw["base"] and "keep" in by["base"].data
    assert one["roles"]["agg"]["args"]["c"] is not by["base"].data["roles"]["agg"]["args"]["c"]


def test_origins_follow_merges_and_nulls():
    r = parse_recipe(BUNDLE, "r.yaml")
    by = {v.selector: v for v in r.variants}
    one, two = by["override_one"], by["override_two"]
    assert one.line_of("roles", "agg", "args", "a") == 11
    assert one.line_of("roles", "agg", "args", "b") == 7
    assert ("roles", "agg", "args", "c", "d") not in one.origins  # deleted with its line
    assert one.line_of("roles", "agg", "args", "c", "e") == 7
    assert two.line_of("roles", "agg", "args", "a") == 6  # args deleted: falls back to agg
    assert two.line_of("roles", "agg", "env", "B") == 15
    assert two.line_of("roles", "agg", "env", "A") == 8
    assert by["zip_override_z[1]"].line_of("roles", "agg", "args", "b") == 19


def test_odd_names_and_keys_are_read_not_a_crash():
    r = parse_recipe("name: 2\nengine: vllm\n", "r.yaml")
    assert (r.base_name, r.variants[0].name) == ("2", "2")
    odd = parse_recipe("true: 1\nengine: vllm\n", "r.yaml")
    assert odd.findings == [] and odd.variants[0].engine == "vllm"


def test_a_variants_lines_are_worked_out_only_when_asked_for():
    r = parse_recipe(BUNDLE, "r.yaml")
    for v in r.variants:
        v._binding_facts  # what binding reads of every variant
        assert "origins" not in v.__dict__, v.selector
    by = {v.selector: v for v in r.variants}
    assert by["override_one"].line_of("roles", "agg", "args", "a") == 11
    # One line is worked out from its top-level key's block alone; the whole table on request.
    assert "origins" not in by["override_one"].__dict__
    assert by["override_one"].origins[("roles", "agg", "args", "a")] == 11


def _recipe_texts(inferencex_dir: Path | None) -> dict[str, str]:
    texts = {"bundle.yaml": BUNDLE}
    texts.update({str(p): p.read_text() for p in sorted(FIXTURES.rglob("*.yaml")) if "recipe" in str(p)})
    if inferencex_dir is not None:
        texts.update({str(p): p.read_text() for p in sorted(inferencex_dir.rglob("srt-slurm-recipes/**/*.yaml"))})
    return texts


def _check_lines_of(texts: dict[str, str]) -> None:
    """Each variant's `line_of` for every path its whole origins table holds, one key below it and
    its top-level key alone, asked of a fresh parse one top-level key at a time, equals the whole
    table's answer. A bundle variant's table is built only when a second top-level key is asked,
    a plain recipe's (one walk of its document) at the first."""
    for path, text in texts.items():
        whole = parse_recipe(text, path).variants
        tops = {kp[0] for v in whole for kp in v.origins}
        for top in tops:
            for w, asked in zip(whole, parse_recipe(text, path).variants):
                paths = [p for kp in w.origins if kp[0] == top for p in (kp, kp + ("not-written",), kp[:1])]
                if not paths:
                    continue
                assert [asked.line_of(*kp) for kp in paths] == [w.line_of(*kp) for kp in paths], (path, top)
                assert ("origins" in asked.__dict__) == (asked.selector is None)
                assert asked.line_of("nowhere", "x") == w.line_of("nowhere", "x") == w.line
                assert "origins" in asked.__dict__ and asked.origins == w.origins


def test_a_line_from_its_top_level_block_alone_is_the_whole_tables_line():
    _check_lines_of(_recipe_texts(None))


def test_a_line_from_its_top_level_block_alone_is_the_whole_tables_line_on_the_snapshot(inferencex_dir):
    _check_lines_of(_recipe_texts(inferencex_dir))
