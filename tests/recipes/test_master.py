"""Master-config parsing: typed fields with lines, unknown fields kept, wrong types as findings."""
from __future__ import annotations

from pathlib import Path

import pytest

from recipes.master import images_match, normalize_image, parse_master

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "repos"
NEW_MASTER = FIXTURES / "new-layout/inferencex-e2e/configs/amd-master.yaml"


def test_fixture_entries_fields_and_lines():
    mf = parse_master(NEW_MASTER.read_bytes(), "amd-master.yaml")
    assert mf.findings == []
    assert list(mf.entries) == [
        "dsv41flash-fp4-mi355x-atom-agentic-dspark", "dsr1-fp8-mi355x-sglang-mtp", "qwen3.5-fp8-mi355x-sglang-disagg",
    ]
    e = mf.entries["dsr1-fp8-mi355x-sglang-mtp"]
    assert (e.image, e.model_prefix, e.framework, e.multinode) == (
        "lmsysorg/sglang:v0.5.12-rocm700-mi35x", "dsr1", "sglang", False)
    assert e.line == 16 and e.line_of("image") == 17
    assert e.extra == {"review-note": "an unknown field the parser keeps"}
    (item,) = e.scenarios
    assert (item.scenario, item.isl, item.osl) == ("fixed-seq-len", 8192, 1024)
    (arm,) = item.arms
    assert (arm.tp, arm.conc_start, arm.conc_end, arm.spec_decoding) == (8, 4, 20, "mtp")
    assert arm.line_of("srt-recipe") == 35


def test_multinode_blocks_and_config_file_selector():
    mf = parse_master(NEW_MASTER.read_bytes(), "amd-master.yaml")
    e = mf.entries["qwen3.5-fp8-mi355x-sglang-disagg"]
    (arm,) = e.scenarios[0].arms
    assert arm.is_multinode and arm.prefill.tp == 4 and arm.decode.tp == 8
    assert arm.prefill.settings["DECODE_NODES"] == "1"
    assert arm.prefill.config_file() == (
        "benchmarks/multi_node/srt-slurm-recipes/qwen3.5/sglang/mi355x-fp8/8k1k/disagg-variants.yaml",
        "zip_override_lowlat[1]",
    )
    assert arm.prefill.setting_line("CONFIG_FILE") == 60


def test_wrong_types_are_findings_and_the_entry_still_loads():
    text = (
        "k1:\n  image: img:1\n  model: m\n  model-prefix: p\n  runner: r\n  precision: fp8\n"
        "  framework: vllm\n  multinode: maybe\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n"
        "      osl: 1024\n      search-space:\n      - { tp: four, conc-list: [1, 2] }\n"
        "k2: not-a-mapping\n"
    )
    mf = parse_master(text, "m.yaml")
    e = mf.entries["k1"]
    assert e.image == "img:1" and e.multinode is None
    assert e.scenarios[0].arms[0].tp is None and e.scenarios[0].arms[0].conc_list == [1, 2]
    by_line = {f.line: f.message for f in mf.findings}
    assert "multinode" in by_line[8] and "tp" in by_line[14] and "k2" in by_line[15]
    assert all(f.path == "m.yaml" for f in mf.findings)


def test_missing_required_field_and_unknown_scenario():
    mf = parse_master("k:\n  image: i\n  scenarios:\n    one-shot: []\n", "m.yaml")
    msgs = [f.message for f in mf.findings]
    assert any("'model'" in m for m in msgs) and any("one-shot" in m for m in msgs)


def test_malformed_yaml_is_one_finding():
    mf = parse_master("a: [\n", "m.yaml")
    assert mf.entries == {} and len(mf.findings) == 1 and mf.findings[0].line


@pytest.mark.parametrize("image,repo,tag,digest", [
    ("nvcr.io#nvidia/tensorrt-llm/release:1.3.0rc24", "nvcr.io/nvidia/tensorrt-llm/release", "1.3.0rc24", None),
    ("lmsysorg/sglang:nightly-x@sha256:35ea", "lmsysorg/sglang", "nightly-x", "sha256:35ea"),
    ("rocm/atom-dev@sha256:f00a", "rocm/atom-dev", None, "sha256:f00a"),
    ("docker.io/vllm/vllm-openai:v1", "vllm/vllm-openai", "v1", None),
    ("localhost:5000/x/y:2", "localhost:5000/x/y", "2", None),
])
def test_normalize_image(image, repo, tag, digest):
    ref = normalize_image(image)
    assert (ref.repository, ref.tag, ref.digest) == (repo, tag, digest)


def test_images_match():
    assert images_match("nvcr.io#nvidia/trt:1", "nvcr.io/nvidia/trt:1")
    assert images_match("lmsysorg/sglang:t@sha256:aa", "lmsysorg/sglang:t")
    assert not images_match("rocm/atom-dev:nightly_202609291501", "rocm/atom-dev:nightly_202610070333")
    assert not images_match("lmsysorg/sglang:t@sha256:aa", "lmsysorg/sglang:t@sha256:bb")
    assert not images_match("a/b:1", "a/c:1")


def test_real_master_configs_parse(inferencex_dir):
    counts = {}
    for name in ("amd-master.yaml", "nvidia-master.yaml"):
        path = f"inferencex-e2e/configs/{name}"
        mf = parse_master((inferencex_dir / path).read_bytes(), path)
        assert mf.findings == [], mf.findings[:3]
        counts[name] = len(mf.entries)
    assert counts == {"amd-master.yaml": 53, "nvidia-master.yaml": 163}


def test_real_zip_selector_and_image_spellings(inferencex_dir):
    path = "inferencex-e2e/configs/nvidia-master.yaml"
    mf = parse_master((inferencex_dir / path).read_bytes(), path)
    refs = [b.config_file() for e in mf.entries.values() for _, a in e.arms for b in a.blocks if b.config_file()]
    assert any(sel == "zip_override_stp_lowlat[0]" for _, sel in refs)
    hashed = [e.image for e in mf.entries.values() if "#" in (e.image or "")]
    assert hashed and all("#" not in normalize_image(i).canonical for i in hashed)


def _models(mf):
    for e in mf.entries.values():
        yield e
        for item in e.scenarios:
            yield item
            for arm in item.arms:
                yield arm
                yield from arm.blocks


KEYS = ["image", "model", "tp", "conc-list", "conc-start", "srt-recipe", "isl", "search-space",
        "additional-settings", "review-note", "no-such-field", "1"]


def _written(m) -> list[str]:
    """Fields the model's own mapping writes (typed, or kept as extra)."""
    names = [k.replace("_", "-") for k in type(m).model_fields if getattr(m, k, None) not in (None, [], {})]
    return [k for k in names if k not in ("path", "line", "extra", "key", "scenario", "index", "role", "arms")] + list(m.extra)


def _settings(m) -> list:
    return [m.setting_line(item.partition("=")[0].strip()) for item in getattr(m, "additional_settings", [])]


def _check_lines_are_lazy_and_agree(mf) -> int:
    models = list(_models(mf))
    assert models and not any("lines" in m.__dict__ for m in models)  # nothing built yet
    alone = [([m.line_of(k) for k in _written(m)], _settings(m)) for m in models]
    assert not any("lines" in m.__dict__ for m in models)  # answered one field at a time
    for m, (fields, settings) in zip(models, alone):
        whole = m.lines  # the whole table, built now
        assert m.__dict__["lines"] is whole
        assert fields == [whole.get(k, m.line) for k in _written(m)], (m.path, m.line)
        assert settings == _settings(m)
        assert [m.line_of(k) for k in KEYS] == [whole.get(k, m.line) for k in KEYS]
    return len(models)


def test_field_lines_are_worked_out_when_asked_and_one_field_answers_as_all_do():
    text = NEW_MASTER.read_text() + (
        "k1:\n  image: img:1\n  scenarios:\n    fixed-seq-len:\n    - isl: 8192\n"
        "      search-space:\n      - tp: 4\n        decode:\n          additional-settings:\n"
        "          - CONFIG_FILE=recipes/x.yaml\n          - no-equals\n")
    mf = parse_master(text, "m.yaml")
    assert _check_lines_are_lazy_and_agree(mf) > 10
    block = mf.entries["k1"].scenarios[0].arms[0].decode
    assert (block.setting_line("CONFIG_FILE"), block.line_of("additional-settings")) == (76, 75)
    assert [f.line for f in mf.findings if "no-equals" in f.message] == [77]
    # A key YAML reads as a number is kept by its text, and found by it.
    odd = parse_master("k2:\n  image: img:1\n  1: one\n", "m.yaml").entries["k2"]
    assert odd.extra == {"1": "one"} and (odd.line_of("1"), odd.line_of("image"), odd.line_of("2")) == (3, 2, 1)


def test_real_field_lines_are_lazy_and_one_field_answers_as_all_do(inferencex_dir):
    for name in ("amd-master.yaml", "nvidia-master.yaml"):
        path = f"inferencex-e2e/configs/{name}"
        assert _check_lines_are_lazy_and_agree(parse_master((inferencex_dir / path).read_bytes(), path)) > 200
