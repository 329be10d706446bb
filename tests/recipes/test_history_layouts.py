"""Shapes of the repository's history the readers must follow: the oldest layout's flat
single-node launcher folder, and srtctl's `configs/` folder for recipe setup scripts."""
from __future__ import annotations

from recipes.layout import detect_layout
from recipes.master import parse_master
from recipes.points import expand_entry
from recipes.source import MemorySource
from tests.builders import RUNNERS, check_row, single_node_entry

MASTER = single_node_entry("dsv4-fp4-b300-vllm", image="vllm/vllm-openai:v0.10", model="deepseek-ai/DeepSeek-V4-Pro",
                           runner="b300", precision="fp4", framework="vllm", isl=1024, arm="tp: 4, ep: 1, conc-start: 1, conc-end: 1")


def _launcher(files: dict[str, str]) -> tuple[str, bool]:
    src = MemorySource({".github/configs/nvidia-master.yaml": MASTER, **files})
    layout = detect_layout(src)
    entry = parse_master(MASTER, ".github/configs/nvidia-master.yaml").entries["dsv4-fp4-b300-vllm"]
    (point,), findings = expand_entry(entry, layout, lambda p: p in files)
    return point.launcher.path, point.launcher.exists


def test_oldest_layout_keeps_fixed_seq_launchers_directly_in_single_node():
    path, exists = _launcher({"benchmarks/single_node/dsv4_fp4_b300_vllm.sh": "#!/bin/bash\n"})
    assert (path, exists) == ("benchmarks/single_node/dsv4_fp4_b300_vllm.sh", True)


def test_the_scenario_folder_wins_when_both_exist():
    path, _ = _launcher({"benchmarks/single_node/dsv4_fp4_b300_vllm.sh": "x\n",
                         "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b300_vllm.sh": "y\n"})
    assert path == "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b300_vllm.sh"


def test_neither_folder_is_still_a_missing_launcher():
    path, exists = _launcher({})
    assert exists is False and path == "benchmarks/single_node/fixed_seq_len/dsv4_fp4_b300_vllm.sh"


RECIPE = "benchmarks/multi_node/srt-slurm-recipes/vllm/kimi-k3/agentic/agg-h200-tp8.yaml"
MN_MASTER = """kimik3-fp4-h200-dynamo-vllm:
  image: vllm/vllm-openai:v0.11
  model: moonshotai/Kimi-K3
  model-prefix: kimik3
  runner: cluster:h200-dgxc
  precision: fp4
  framework: dynamo-vllm
  multinode: true
  disagg: false
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - conc-list: [4]
        prefill:
          num-worker: 1
          tp: 8
          ep: 1
          dp-attn: false
          additional-settings:
          - "CONFIG_FILE=recipes/vllm/kimi-k3/agentic/agg-h200-tp8.yaml"
        decode: {num-worker: 0, tp: 8, ep: 1, dp-attn: false}
"""
MN_RECIPE = """name: agg-h200-tp8
model: {path: kimi-k3, container: vllm/vllm-openai:v0.11, precision: fp4}
setup_script: kimik3-config-compat.sh
resources: {gpu_type: h200, gpus_per_node: 8, agg_nodes: 1, agg_workers: 1, gpus_per_agg: 8}
backend:
  type: vllm
  aggregated_environment: {VLLM_USE_V2: '1'}
  vllm_config:
    aggregated: {tensor-parallel-size: 8}
benchmark: {type: sa-bench}
"""


def _row10(setup: str | None):
    head = {"configs/nvidia-master.yaml": MN_MASTER, RECIPE: MN_RECIPE}
    if setup is not None:
        head["benchmarks/multi_node/srt-slurm-recipes/configs/kimik3-config-compat.sh"] = setup
    return check_row(10, {"base": {**RUNNERS}, "head": head})


def test_a_setup_script_is_read_from_the_srt_configs_folder():
    row = _row10("#!/bin/bash\nsed -i 's/a/b/' /usr/local/lib/python3.12/site-packages/vllm/config.py\n")
    assert row.status.value == "FAIL", row.reason
    assert "srt-slurm-recipes/configs/kimik3-config-compat.sh:2" in row.reason


def test_a_clean_setup_script_in_the_configs_folder_passes():
    row = _row10("#!/bin/bash\necho ready\n")
    assert row.status.value == "PASS", row.reason


def test_a_setup_script_found_nowhere_is_a_could_not_verify():
    row = _row10(None)
    assert row.status.value == "FAIL" and "could not verify" in row.reason and "kimik3-config-compat.sh" in row.reason


HELPER_LIB = "benchmarks/benchmark_lib.sh"
SN_MASTER = single_node_entry("dsv4-fp8-mi300x-sglang", image="lmsysorg/sglang:v0.5.12-rocm700-mi30x", model="deepseek-ai/DeepSeek-V4-Pro",
                              runner="mi300x", precision="fp8", framework="sglang")
SN_SCRIPT = "benchmarks/single_node/fixed_seq_len/dsv4_fp8_mi300x_sglang.sh"


def _row10_helper(body: str):
    helper = ("_patch_lm_eval() {\n    local patch_dir\n    patch_dir=\"$(mktemp -d)\"\n"
              "    cat > \"$patch_dir/sitecustomize.py\" <<'PY'\n" + body + "PY\n"
              "    export PYTHONPATH=\"${patch_dir}${PYTHONPATH:+:${PYTHONPATH}}\"\n}\n")
    # The launcher calls the helper: only a called function is on the executed launch path.
    launcher = ("#!/usr/bin/env bash\nsource \"$(dirname \"$0\")/../../benchmark_lib.sh\"\n"
                "_patch_lm_eval\npython3 -m sglang.launch_server --model-path $MODEL --tp 8 &\n")
    return check_row(10, {"base": {**RUNNERS, HELPER_LIB: helper},
                          "head": {"configs/amd-master.yaml": SN_MASTER, SN_SCRIPT: launcher}})


def test_a_heredoc_sitecustomize_that_patches_lm_eval_is_not_an_engine_patch():
    row = _row10_helper("from lm_eval.models.openai_completions import LocalChatCompletion as _LCC\n")
    assert row.status.value == "PASS", row.reason


def test_a_heredoc_sitecustomize_that_patches_the_engine_is():
    row = _row10_helper("import sglang.srt.server_args as sa\nsa.ServerArgs.enable_x = True\n")
    assert row.status.value == "FAIL" and f"{HELPER_LIB}:4" in row.reason, row.reason
