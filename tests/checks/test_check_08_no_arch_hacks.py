"""Check 8 and the shared serving helpers (recipes/launch/path/serving.py): spellings, switches, runtime-only flags."""
from __future__ import annotations

import pytest

from recipes.values import flag_name as norm_name, is_disabled, is_enabled
from tests.builders import RUNNERS, check_row, single_node_entry


@pytest.mark.parametrize("value, on, off", [
    ("1", True, False), ("true", True, False), (True, True, False), ("'True'", True, False), (2, True, False),
    ("0", False, True), ("false", False, True), (False, False, True), (0, False, True), ("off", False, True),
    ("", False, False), ("maybe", False, False),
])
def test_switch_values(value, on, off):
    assert is_enabled(value) is on
    assert is_disabled(value) is off


def test_norm_name_unifies_spellings():
    assert norm_name("--Hf_Overrides") == norm_name("hf-overrides") == norm_name("HF_OVERRIDES")


MASTER = single_node_entry("dsr1-fp4-mi355x-vllm", image="vllm/vllm-openai-rocm:v0.11.2", model="amd/DeepSeek-R1-0528-MXFP4-Preview",
                           runner="mi355x", precision="fp4", framework="vllm")
SCRIPT = "benchmarks/single_node/fixed_seq_len/dsr1_fp4_mi355x_vllm.sh"


def _row(script: str):
    return check_row(8, {"base": {**RUNNERS},
                         "head": {"configs/amd-master.yaml": MASTER, SCRIPT: script}})


def test_old_layout_launcher_flag_fails_with_line():
    row = _row("#!/usr/bin/env bash\nvllm serve $MODEL --tensor-parallel-size 8 \\\n  --hf-overrides '{\"num_experts_per_tok\": 6}'\n")
    assert row.status.value == "FAIL"
    assert f"{SCRIPT}:" in row.reason and "hf-overrides" in row.reason


def test_old_layout_jq_edit_of_config_json_fails():
    row = _row("#!/usr/bin/env bash\njq '.num_hidden_layers = 40' /models/dsr1/config.json > /models/dsr1/config.json.new\n"
               "vllm serve $MODEL --tensor-parallel-size 8\n")
    assert row.status.value == "FAIL"
    assert "config.json" in row.reason


def test_old_layout_plain_launcher_passes_and_names_vllm_exempt():
    row = _row("#!/usr/bin/env bash\nvllm serve $MODEL --tensor-parallel-size 8 --kv-cache-dtype fp8\n")
    assert row.status.value == "PASS", row.reason
    assert "vLLM does not support" in row.reason


def test_a_model_file_written_by_any_command_is_read_from_the_trace():
    # No `sed -i`/`jq` names the file: the path is built by printf -v and the write is a copy
    # and a here-document, which only interpreting the launch shows.
    row = _row('#!/usr/bin/env bash\nprintf -v CFG "%s/%s" "$MODEL" "config.json"\n'
               'cat > /tmp/cfg.json <<EOF\n{"num_hidden_layers": 40}\nEOF\ncp /tmp/cfg.json "$CFG"\n'
               "vllm serve $MODEL --tensor-parallel-size 8\n")
    assert row.status.value == "FAIL", row.reason
    assert "config.json" in row.reason and f"{SCRIPT}:6" in row.reason and "cp /tmp/cfg.json" in row.reason


def test_a_point_past_the_step_budget_is_read_from_its_script(monkeypatch):
    # Untraced (the review's interpreter budget spent): the script reading still sees the edit.
    import recipes.launch.path.trace_affected as ta

    monkeypatch.setattr(ta, "TRACE_BUDGET_STEPS", 0)
    row = _row("#!/usr/bin/env bash\njq '.num_hidden_layers = 40' /models/dsr1/config.json > /models/dsr1/config.json.new\n"
               "vllm serve $MODEL --tensor-parallel-size 8\n")
    assert row.status.value == "FAIL" and f"{SCRIPT}:2 edits model file" in row.reason, row.reason


def test_a_launch_the_trace_does_not_follow_to_its_server_is_read_from_its_script():
    # The interpretation stops before the server (endless recursion hits its depth cap): the
    # model-file edit after it is still seen, never passed because the trace held nothing.
    row = _row("#!/usr/bin/env bash\nf() { f; }\nf\n"
               "jq '.num_hidden_layers = 40' /models/dsr1/config.json > /models/dsr1/config.json.new\n"
               "vllm serve $MODEL --tensor-parallel-size 8\n")
    assert row.status.value == "FAIL" and "config.json" in row.reason, row.reason
