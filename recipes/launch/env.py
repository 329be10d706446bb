"""The variables the sweep sets for a benchmark point's job, as the runner scripts test them.

One definition, read by the launch interpreter (`recipes.launch.point.job_env`) and by the checks.
"""
from __future__ import annotations

import re
from typing import Any


def point_env(point: Any) -> dict[str, str]:
    """The variables the sweep sets for a point's job, as the runner scripts test them."""
    spec = getattr(point, "spec_decoding", None) or "none"
    agentic = bool(getattr(point, "is_agentic", False))
    prefix = getattr(point, "model_prefix", None)
    env = {
        # The sweep generator names every job `<model prefix>_<seq len or topology>`; the
        # workflow's SCENARIO_SUBDIR is `agentic/` for agentic-coding, else `fixed_seq_len/`.
        "EXP_NAME": f"{prefix}_{_exp_tail(point)}" if prefix else None,
        "SCENARIO_SUBDIR": "agentic/" if agentic else "fixed_seq_len/",
        "FRAMEWORK": getattr(point, "framework", None), "PRECISION": getattr(point, "precision", None),
        "MODEL": getattr(point, "model", None), "MODEL_PREFIX": getattr(point, "model_prefix", None),
        "SPEC_DECODING": spec, "IS_MULTINODE": "true" if getattr(point, "multinode", False) else "false",
        "IS_AGENTIC": "1" if agentic else "0",
    }
    out = {k: str(v) for k, v in env.items() if v is not None}
    # The multi-node workflow then exports the arm's prefill, then decode `additional-settings`
    # (benchmark-multinode-tmpl.yml: `export ${prefill...} ${decode...}`) and runs the runner.
    # The list is joined into the line unquoted, so only a plain word is taken as the value the
    # shell sees; another (spaces, `$`, quotes) stays unknown. A `worker` block's settings are not
    # among those inputs.
    workers = getattr(point, "workers", None) or {}
    for role in ("prefill", "decode"):
        for name, value in ((workers.get(role) or {}).get("settings") or {}).items():
            if _ENV_NAME.fullmatch(name) and _PLAIN_VALUE.fullmatch(value):
                out[name] = value
    return out


_ENV_NAME = re.compile(r"[A-Za-z_]\w*")
_PLAIN_VALUE = re.compile(r"""[^\s$`'"\\;&|<>()*?\[\]{}#~]*""")


def _exp_tail(point: Any) -> str:
    """What the sweep generator (utils/matrix_logic/generate_sweep_configs.py) puts after the
    model prefix in `exp-name`: `1k1k`-style sequence lengths (`ISL_OSL` when unnamed), or for
    agentic jobs the topology; runners read only the prefix (`${EXP_NAME%%_*}`)."""
    isl, osl = getattr(point, "isl", None), getattr(point, "osl", None)
    if isl and osl:
        named = {(1024, 1024): "1k1k", (8192, 1024): "8k1k"}
        return named.get((isl, osl), f"{isl}_{osl}")
    return "agentic"
