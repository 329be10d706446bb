"""Check 9 on old-layout `*_mtp.sh` launchers: the client must get --use-chat-template as a runtime word."""
from __future__ import annotations

from tests.builders import RUNNERS, check_row

MASTER = """dsr1-fp4-mi355x-sglang-mtp:
  image: lmsysorg/sglang:v0.5.12-rocm700-mi35x
  model: deepseek-ai/DeepSeek-R1-0528
  model-prefix: dsr1
  runner: mi355x
  precision: fp4
  framework: sglang
  multinode: false
  scenarios:
    fixed-seq-len:
    - isl: 8192
      osl: 1024
      search-space:
      - { tp: 8, ep: 1, spec-decoding: mtp, conc-start: 4, conc-end: 4 }
"""
SCRIPT = "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x_sglang_mtp.sh"
SERVER = "python3 -m sglang.launch_server --model-path $MODEL --tp 8 --speculative-algorithm NEXTN --speculative-num-steps 3 &\n"


def _row(script: str):
    return check_row(9, {"base": {**RUNNERS},
                         "head": {"configs/amd-master.yaml": MASTER, SCRIPT: script}})


def test_client_flag_passes():
    row = _row("#!/usr/bin/env bash\n" + SERVER + "python3 /workspace/utils/bench_serving/benchmark_serving.py --model $MODEL --use-chat-template --num-prompts 40\n")
    assert row.status.value == "PASS", row.reason
    assert f"{SCRIPT}:3" in row.reason


def test_flag_only_in_comment_or_echo_fails():
    row = _row("#!/usr/bin/env bash\n" + SERVER + "# remember --use-chat-template\necho \"--use-chat-template\"\n"
               "python3 /workspace/utils/bench_serving/benchmark_serving.py --model $MODEL --num-prompts 40\n")
    assert row.status.value == "FAIL"
    assert SCRIPT in row.reason and "--use-chat-template" in row.reason


def test_exported_env_passes():
    row = _row("#!/usr/bin/env bash\nexport USE_CHAT_TEMPLATE=true\n" + SERVER + "python3 /workspace/utils/bench_serving/benchmark_serving.py --model $MODEL\n")
    assert row.status.value == "PASS", row.reason
