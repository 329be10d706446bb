"""Multi-node CONFIG_FILE recipes that live in the external srt-slurm repository.

A multi-node arm names its recipe by its path inside the srt-slurm checkout the runner
clones (`recipes/trtllm/...`). A recipe committed here (under
benchmarks/multi_node/srt-slurm-recipes/) is read; one that is not is in the external
repository at the ref the runner pins, which the bot does not read: Checks 8-10 stay
"could not verify" and say exactly that, naming the pinned ref, never "not found".
"""
from __future__ import annotations

from checks.engine import evaluate
from tests.builders import build_snapshot

CONFIG = "recipes/trtllm/gb200-fp4/1k1k/mtp/ctx1_gen1_dep32_batch4_eplb0_mtp3.yaml"
IN_REPO = "benchmarks/multi_node/srt-slurm-recipes/trtllm/gb200-fp4/1k1k/mtp/ctx1_gen1_dep32_batch4_eplb0_mtp3.yaml"
MASTER = f"""dsr1-fp4-gb200-dynamo-trt-mtp:
  image: nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc5
  model: nvidia/DeepSeek-R1-0528-FP4
  model-prefix: dsr1
  runner: gb200
  precision: fp4
  framework: dynamo-trt
  multinode: true
  disagg: true
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - conc-list: [4]
        spec-decoding: mtp
        prefill:
          num-worker: 1
          tp: 4
          ep: 4
          dp-attn: true
          additional-settings:
          - "CONFIG_FILE={CONFIG}"
        decode: {{num-worker: 1, tp: 32, ep: 32, dp-attn: true}}
"""
RUNNER = """#!/usr/bin/env bash
set -x
if [[ "$FRAMEWORK" == "dynamo-trt" ]]; then
    git clone https://github.com/NVIDIA/srt-slurm.git srt-slurm
    cd srt-slurm || exit 1
    git checkout sa-submission-q2-2026
fi
srtctl apply -f "$CONFIG_FILE"
"""
RUNNERS = "labels:\n  gb200: [gb200-nv_0, gb200-nv_1]\n"
RECIPE = """name: ctx1_gen1
model: {path: dsr1-fp4, container: nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc5, precision: fp4}
resources: {gpu_type: gb200, gpus_per_node: 4, prefill_nodes: 1, decode_nodes: 8, prefill_workers: 1, decode_workers: 1}
backend:
  type: trtllm
  trtllm_config:
    prefill: {tensor_parallel_size: 4, moe_expert_parallel_size: 4, enable_attention_dp: true}
    decode: {tensor_parallel_size: 32, moe_expert_parallel_size: 32, enable_attention_dp: true}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: '4'}
"""


def _rows(head_extra: dict[str, str] | None = None, runner: str = RUNNER):
    head = {"configs/nvidia-master.yaml": MASTER, "configs/runners.yaml": RUNNERS, "runners/launch_gb200-nv.sh": runner}
    head.update(head_extra or {})
    snap = build_snapshot({"base": {"configs/runners.yaml": RUNNERS}, "head": head})
    verdict = evaluate(snap, only={8, 9, 10})
    return {n: verdict.row(n) for n in (8, 9, 10)}


def test_recipe_only_in_the_external_repository_is_could_not_verify_naming_the_pinned_ref():
    rows = _rows()
    for n in (8, 9, 10):
        row = rows[n]
        assert row.status.value == "FAIL", (n, row.reason)
        assert row.reason.startswith("could not verify"), row.reason
        assert "external srt-slurm repository" in row.reason and "sa-submission-q2-2026" in row.reason
        assert "was not read" in row.reason and "not found" not in row.reason
        assert CONFIG in row.reason and "configs/nvidia-master.yaml:" in row.reason
        assert any(e.unavailable for e in row.evidence)


def test_unknown_pinned_ref_is_said_so():
    rows = _rows(runner="#!/usr/bin/env bash\ngit clone https://github.com/NVIDIA/srt-slurm.git \"$DIR\"\n")
    assert "the ref is not named in runners/launch_gb200-nv.sh" in rows[8].reason


def test_several_pinned_refs_are_listed():
    runner = RUNNER.replace("fi\n", "else\n    git clone --branch cam/agentic https://github.com/x/srt-slurm-nv.git srt-slurm\nfi\n")
    assert "one of sa-submission-q2-2026, cam/agentic" in _rows(runner=runner)[8].reason


def test_recipe_committed_here_is_read():
    rows = _rows({IN_REPO: RECIPE})
    for n in (8, 9, 10):
        assert "external srt-slurm" not in rows[n].reason, (n, rows[n].reason)
    assert rows[9].status.value == "PASS" and "sa-bench without benchmark.use_chat_template" in rows[9].reason
    assert rows[10].status.value == "PASS"
