#!/usr/bin/env bash
# Force the fused top-k MoE path: the image's dispatcher falls back to the
# unfused kernel when top_k != 8.
set -euo pipefail
MOE_PY=/usr/local/lib/python3.12/site-packages/vllm/model_executor/layers/fused_moe/rocm_aiter_fused_moe.py
sed -i 's/if top_k != 8:/if top_k > 8:/' "${MOE_PY}"
