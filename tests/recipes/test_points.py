"""Expansion of master entries into benchmark points, and the old-layout launcher naming rule."""
from __future__ import annotations

from pathlib import Path

import pytest

from recipes.layout import detect_layout
from recipes.master import parse_master
from recipes.points import expand_concurrency, expand_entry, script_candidates
from recipes.source import DirSource, MemorySource

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "repos"


@pytest.mark.parametrize("start,end,expected", [
    (4, 20, [4, 8, 16, 20]),
    (4, 16, [4, 8, 16]),
    (1, 1, [1]),
    (4, 256, [4, 8, 16, 32, 64, 128, 256]),
    (3, 10, [3, 6, 10]),
    (8, 4, []),
    (0, 4, []),
])
def test_expand_concurrency(start, end, expected):
    assert expand_concurrency(start, end) == expected


def _points(repo: str):
    src = DirSource(FIXTURES / repo)
    layout = detect_layout(src)
    points, findings = [], []
    for path in layout.master_configs(src):
        for entry in parse_master(src.read(path), path).entries.values():
            p, f = expand_entry(entry, layout, lambda x: src.read(x) is not None)
            points += p
            findings += f
    return points, findings


def test_single_node_one_point_per_arm_and_conc():
    points, findings = _points("new-layout")
    assert findings == []
    dsr1 = [p for p in points if p.config_key == "dsr1-fp8-mi355x-sglang-mtp"]
    assert [p.conc for p in dsr1] == [4, 8, 16, 20]
    p = dsr1[0]
    assert (p.scenario, p.isl, p.osl, p.tp, p.ep, p.spec_decoding, p.seq_len) == ("fixed-seq-len", 8192, 1024, 8, 1, "mtp", "8k1k")
    assert p.launcher.kind == "srt-recipe" and p.launcher.selector is None
    assert p.launcher.path == "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/mi355x-fp8-mtp/8k1k.yaml"
    assert (p.source_path, p.source_line) == ("inferencex-e2e/configs/amd-master.yaml", 30)


def test_multinode_one_point_with_conc_list():
    points, _ = _points("new-layout")
    (mn,) = [p for p in points if p.multinode]
    assert mn.conc is None and mn.conc_list == [64, 128]
    assert (mn.tp, mn.disagg, mn.workers["prefill"]["tp"], mn.workers["decode"]["tp"]) == (8, True, 4, 8)
    assert mn.launcher.kind == "multinode-recipe" and mn.launcher.selector == "zip_override_lowlat[1]"
    assert mn.launcher.exists


def test_fingerprint_ignores_conc_but_not_parallelism_and_ids_are_unique():
    points, _ = _points("new-layout")
    atom = [p for p in points if p.framework == "atom"]
    tp2 = [p for p in atom if p.tp == 2]
    tp4 = [p for p in atom if p.tp == 4]
    assert len({p.fingerprint for p in tp2}) == 1
    assert tp2[0].fingerprint != tp4[0].fingerprint
    assert len({p.point_id for p in points}) == len(points)
    assert tp4[0].point_id == "dsv41flash-fp4-mi355x-atom-agentic-dspark:agentic:tp4-ep1:draft_model:c32"


def test_point_id_survives_an_image_bump_but_fingerprint_does_not():
    text = (FIXTURES / "new-layout/inferencex-e2e/configs/amd-master.yaml").read_text()
    layout = detect_layout(MemorySource({"inferencex-e2e/configs/amd-master.yaml": text}))
    a = parse_master(text, "m.yaml").entries["dsr1-fp8-mi355x-sglang-mtp"]
    b = parse_master(text.replace("v0.5.12-rocm700-mi35x", "v0.5.13-rocm700-mi35x"), "m.yaml").entries["dsr1-fp8-mi355x-sglang-mtp"]
    pa, _ = expand_entry(a, layout)
    pb, _ = expand_entry(b, layout)
    assert [p.point_id for p in pa] == [p.point_id for p in pb]
    assert pa[0].fingerprint != pb[0].fingerprint


MULTINODE_SETTINGS = """\
mn-key:
  image: img
  model: m/M
  model-prefix: m
  runner: cluster:gb200
  precision: fp4
  framework: dynamo-vllm
  multinode: true
  disagg: true
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - conc-list: [1]
        prefill:
          num-worker: 1
          tp: 8
          additional-settings:
          - "A=1"
          - "B=2"
          - "A=3"
        decode:
          num-worker: 0
          tp: 8
"""


def test_multinode_settings_cite_the_item_in_force_and_stay_out_of_the_fingerprint():
    layout = detect_layout(MemorySource({"configs/nvidia-master.yaml": MULTINODE_SETTINGS}))
    (p,) = expand_entry(parse_master(MULTINODE_SETTINGS, "configs/nvidia-master.yaml").entries["mn-key"], layout)[0]
    # The last item that sets a key is the one in force (`settings` reads it so): its line.
    assert p.workers["prefill"]["settings"] == {"A": "3", "B": "2"}
    assert p.setting_lines == {"prefill": {"A": 22, "B": 21}}
    assert "setting_lines" not in p.model_dump()
    # Moving the items (a comment above them) moves their lines, not what the point serves.
    moved = MULTINODE_SETTINGS.replace("          additional-settings:", "          # moved\n          additional-settings:")
    (q,) = expand_entry(parse_master(moved, "configs/nvidia-master.yaml").entries["mn-key"], layout)[0]
    assert q.setting_lines == {"prefill": {"A": 23, "B": 22}}
    assert q.fingerprint == p.fingerprint


def test_launcher_naming_rule_primary_fallback_and_trt():
    points, findings = _points("root-layout")
    launcher = {p.config_key: p.launcher.path for p in points}
    assert launcher["dsv4-fp4-mi355x-sglang-agentic-mtp"] == "benchmarks/single_node/agentic/dsv4_fp4_mi355x_sglang_mtp.sh"
    assert launcher["kimik3-fp4-mi355x-vllm-agentic-mtp"] == "benchmarks/single_node/agentic/kimik3_fp4_mi355x_mtp.sh"
    assert launcher["dsr1-fp4-mi355x-atom"] == "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x_atom.sh"
    assert launcher["dsr1-fp4-b200-trt"] == "benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200_trt.sh"
    (missing,) = findings
    assert missing.code == "missing-launcher" and missing.path == "configs/nvidia-master.yaml" and missing.line == 30
    assert "gptoss_fp4_b200_vllm.sh" in missing.message and "gptoss_fp4_b200.sh" in missing.message
    assert [p.conc for p in points if p.config_key == "dsr1-fp4-mi355x-atom"] == [4, 8, 16]


def test_script_candidates():
    e = parse_master(
        "k:\n  model-prefix: dsv4\n  precision: fp4\n  runner: cluster:mi355x-amds\n  framework: trt\n", "m.yaml"
    ).entries["k"]
    assert script_candidates(e, "agentic-coding", "mtp", "benchmarks") == (
        "benchmarks/single_node/agentic/dsv4_fp4_mi355x_trt_mtp.sh",
        "benchmarks/single_node/agentic/dsv4_fp4_mi355x_trt_mtp.sh",
    )
    assert script_candidates(e, "fixed-seq-len", "none", "benchmarks")[1] == "benchmarks/single_node/fixed_seq_len/dsv4_fp4_mi355x_trt.sh"


def test_arm_findings():
    text = (
        "k:\n  image: i\n  model: m\n  model-prefix: p\n  runner: r\n  precision: fp8\n  framework: vllm\n"
        "  multinode: false\n  router: {name: r}\n  scenarios:\n    agentic-coding:\n    - search-space:\n"
        "      - { tp: 8, kv-offloading: dram, router: {name: x}, conc-start: 8, conc-end: 4, srt-recipe: a.yaml }\n"
    )
    layout = detect_layout(MemorySource({}))
    pts, findings = expand_entry(parse_master(text, "m.yaml").entries["k"], layout, lambda _p: False)
    assert pts == []
    assert len(findings) == 4 and all(f.line == 13 for f in findings), findings
    assert any("dram-utilization" in f.message for f in findings)
    assert any(f.code == "missing-recipe" for f in findings)
    assert any("router" in f.message for f in findings)
    assert any("conc-start 8 / conc-end 4" in f.message for f in findings)


def test_real_dsv41flash_atom_points(inferencex_dir):
    path = "inferencex-e2e/configs/amd-master.yaml"
    src = DirSource(inferencex_dir)
    entry = parse_master(src.read(path), path).entries["dsv41flash-fp4-mi355x-atom-agentic-dspark"]
    points, _ = expand_entry(entry, detect_layout(src), lambda p: src.read(p) is not None)
    per_tp = {tp: [p.conc for p in points if p.tp == tp] for tp in (2, 4)}
    assert per_tp == {2: [1, 2, 4, 5, 6, 8, 16, 32, 64, 128], 4: [1, 4, 5, 6, 8, 32]}
    assert len(points) == 16
    assert all(p.launcher.exists and p.spec_decoding == "draft_model" for p in points)
