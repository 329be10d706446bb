"""Check 13 reads a launched point's servers from its trace (recipes.launch.knobs): what the
server really gets, however the words were built; what it cannot resolve is "could not verify"."""
from __future__ import annotations

from tests.builders import RUNNERS, check_row, single_node_entry

MASTER = single_node_entry("dsr1-fp8-mi300x-sglang-mtp", image="lmsysorg/sglang:v0.5.12-rocm700-mi30x",
                           model="deepseek-ai/DeepSeek-R1-0528", runner="mi300x", precision="fp8", framework="sglang",
                           arm="tp: 8, ep: 1, spec-decoding: mtp, conc-start: 4, conc-end: 4")
SCRIPT = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi300x_sglang_mtp.sh"
SERVE = "python3 -m sglang.launch_server --model-path $MODEL --tp 8 --speculative-algorithm NEXTN"
SIGNOFF = {"id": 4401, "author": "seungrokj", "association": "COLLABORATOR", "body": (
    "As a PR reviewer and CODEOWNER, I have reviewed this and have:\n- [x] ok\n### Additional detail section:\n"
    "- Draft: the inline MTP head of the checkpoint.\n- Stored precision: FP8 in the checkpoint.\n"
    "- Default handling: the image's default path.\n- Effective precision: served at FP8.\nSigned: `seungrokj`\n")}


def _row(body: str):
    return check_row(13, {"base": {**RUNNERS}, "signoff": SIGNOFF,
                          "head": {"configs/amd-master.yaml": MASTER, SCRIPT: "#!/usr/bin/env bash\n" + body}})


def test_a_plain_launch_passes():
    row = _row(SERVE + " &\n")
    assert row.status.value == "PASS", row.reason


def test_a_flag_built_in_an_array_fails_citing_the_chain():
    row = _row(f"Q=fp8\nARGS=(--speculative-draft-model-quantization \"$Q\")\n{SERVE} \"${{ARGS[@]}}\" &\n")
    assert row.status.value == "FAIL" and "--speculative-draft-model-quantization=fp8" in row.reason, row.reason
    assert f"runner:1 -> {SCRIPT}:4" in row.reason
    assert any(e.path == SCRIPT and e.line == 4 and (e.note or "").startswith("via runner:1") for e in row.evidence)


def test_a_draft_key_inside_speculative_config_built_by_printf_fails():
    row = check_row(13, {"base": {**RUNNERS}, "signoff": SIGNOFF, "head": {
        "configs/amd-master.yaml": MASTER.replace("framework: sglang", "framework: vllm"),
        SCRIPT.replace("sglang", "vllm"): "#!/usr/bin/env bash\nprintf -v SPEC '{\"method\":\"mtp\",\"quantization\":\"%s\"}' fp8\n"
                "vllm serve $MODEL --speculative-config \"$SPEC\" &\n"}})
    assert row.status.value == "FAIL" and "quantization=fp8 inside --speculative-config" in row.reason, row.reason


def test_a_word_the_bot_cannot_resolve_is_could_not_verify():
    row = _row(f"{SERVE} $(cat /etc/extra-args) &\n")
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert "a word the bot could not resolve" in row.reason and all(e.unavailable for e in row.evidence)


def test_an_unknown_prohibited_env_value_is_could_not_verify():
    row = _row(f"export SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE=$(cat /etc/flag)\n{SERVE} &\n")
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE" in row.reason


def test_a_trace_that_reaches_no_server_is_could_not_verify_never_a_missing_flag_fail():
    row = _row(f"exit 0\n{SERVE} --speculative-draft-model-quantization fp8 &\n")
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify dsr1-fp8-mi300x-sglang-mtp"), row.reason
    assert "reaches no server" in row.reason and "--speculative-draft" not in row.reason


def test_a_substituted_draft_path_from_a_variable_fails():
    row = _row(f"D=someone/other-draft\n{SERVE} --speculative-draft-model-path \"$D\" &\n")
    assert row.status.value == "FAIL" and "serves draft someone/other-draft" in row.reason, row.reason


def test_an_untraced_point_is_judged_by_the_script_reading(monkeypatch):
    import recipes.launch.path.trace_affected as ta

    monkeypatch.setattr(ta, "TRACE_BUDGET_STEPS", 0)
    row = _row(f"{SERVE} --speculative-draft-model-quantization fp8 &\n")
    assert row.status.value == "FAIL" and f"{SCRIPT}:2 sets --speculative-draft-model-quantization=fp8" in row.reason, \
        row.reason
