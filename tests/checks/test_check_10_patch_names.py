"""The words a waiver may use to name a patch (Check 10): the patching file and the patched
target's file name; a target known only at run time (`sed -i ... $(python3 -c "...__file__")`,
real at AMD server_vllm.sh:98) names nothing, so the row does not ask for a waiver naming `null)`."""
from __future__ import annotations

from checks.check_10_no_engine_patches import Patch, _names


def test_a_run_time_target_adds_no_name():
    target = '$(python3 -c "import rixl._api; print(rixl._api.__file__)" 2>/dev/null)'
    assert _names(Patch("sed", "benchmarks/multi_node/amd_utils/server_vllm.sh", 98, target)) == {"server_vllm.sh"}


def test_a_literal_target_adds_its_file_name():
    target = "/usr/local/lib/python3.12/site-packages/vllm/model_executor/layers/fused_moe/rocm_aiter_fused_moe.py"
    assert _names(Patch("sed", "x/moe-topk-fix.sh", 4, target)) == {"moe-topk-fix.sh", "rocm_aiter_fused_moe.py"}
