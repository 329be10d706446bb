"""Golden AL curves: parsing, resolution (spec 5.2) and lookups."""
from __future__ import annotations

import pytest

from recipes.golden import load_golden, model_identity, same_model
from recipes.source import DirSource, MemorySource

GD = "infx/golden_al_distribution"


def curve(model: str, **modes: dict[int, float]) -> str:
    out = f"# Source run: https://example.test/runs/1\n{model}:\n"
    for mode, values in modes.items():
        out += f"  {mode}:\n" + "".join(f"    {k}: {v}\n" for k, v in values.items())
    return out


@pytest.fixture
def gs():
    files = {
        f"{GD}/m1_mtp.yaml": curve("model-one", thinking_on={1: 1.8, 2: 2.3, 3: 2.5}, thinking_off={3: 2.9}),
        f"{GD}/dsv41flash_dspark.yaml": curve("dsv41-flash", thinking_on={5: 3.51}),
        f"{GD}/dsv4-pro-0813-dspark.yaml": curve("dsv4-pro", thinking_on={3: 3.01, 6: 3.77}),
        f"{GD}/kimik3_dspark.yaml": curve("kimi", thinking_on={7: 3.78}),
        f"{GD}/kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method.yaml": curve("kimi", thinking_on={7: 3.84}),
        f"{GD}/minimaxm3_eagle3.yaml": curve("mm", thinking_on={3: 2.7}),
        f"{GD}/minimaxm3_eagle3_gqa.yaml": curve("mm", thinking_on={3: 2.78}),
        f"{GD}/old_eagle3.yaml": curve("old", thinking_on={2: 2.1}),
        f"{GD}/bad_range.yaml": curve("x", thinking_on={2: 3.5, 3: 0.5}),
        f"{GD}/bad_shape.yaml": "- 1\n- 2\n",
        f"{GD}/bad_yaml.yaml": "x:\n  thinking_on: {1: 1.5\n",
        f"{GD}/bad_keys.yaml": "x:\n  thinking_maybe:\n    one: 1.5\n    2: fast\n",
        f"{GD}/README.md": "# not a curve\n",
        f"{GD}/nested/ignored.yaml": curve("n", thinking_on={1: 1.5}),
    }
    return load_golden(MemorySource(files), GD)


def test_curves_and_lines(gs):
    assert "m1_mtp" in gs.curves and "ignored" not in gs.curves and "README" not in gs.curves
    c = gs.curves["m1_mtp"]
    assert c.model_name == "model-one" and c.values["thinking_off"] == {3: 2.9}
    assert c.line_of("thinking_on", 3) == 6 and c.line_of("thinking_off", 3) == 8


def test_findings_for_bad_files(gs):
    got = {(f.path.rsplit("/", 1)[-1], f.code, f.line) for f in gs.findings}
    assert ("bad_range.yaml", "golden-range", 4) in got  # 3.5 > K+1 for K=2
    assert ("bad_range.yaml", "golden-range", 5) in got  # 0.5 < 1
    assert ("bad_shape.yaml", "golden-shape", 1) in got
    assert any(p == "bad_yaml.yaml" and code == "yaml" for p, code, _ in got)
    assert ("bad_keys.yaml", "golden-mode", 2) in got
    assert ("bad_keys.yaml", "golden-k", 3) in got
    assert ("bad_keys.yaml", "golden-value", 4) in got


@pytest.mark.parametrize(
    "prefix, method, kw, stem",
    [
        ("m1", "mtp", {}, "m1_mtp"),
        ("m1", "nextn", {}, "m1_mtp"),
        ("m1", "eagle", {}, "m1_mtp"),
        ("M1", "MTP", {}, "m1_mtp"),
        ("minimaxm3", "eagle3", {}, "minimaxm3_eagle3"),
        ("minimaxm3", "eagle", {"draft_model": "Org/MiniMax-M3-EAGLE3-GQA"}, "minimaxm3_eagle3_gqa"),
        ("dsv41flash", "dspark", {}, "dsv41flash_dspark"),
        ("kimik3", "dspark", {"draft_sample_method": "greedy"}, "kimik3_dspark"),
        ("kimik3", "dspark", {"draft_sample_method": "probabilistic"},
         "kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method"),
        ("kimik3", "dspark", {}, None),  # spec 5.2: the sample method is required
        ("dsv4", "dsv4dsparkprob", {}, "dsv4-pro-0813-dspark"),
        ("dsv4", "dspark", {}, "dsv4-pro-0813-dspark"),
        ("dsv4", "dspark", {"draft_sample_method": "greedy"}, None),
        ("old", "eagle3", {}, "old_eagle3"),  # generic <prefix>_<method>
        ("m2", "mtp", {}, None),
    ],
)
def test_resolve(gs, prefix, method, kw, stem):
    assert gs.resolve(prefix, method, **kw) == stem


def test_lookup_values_and_reasons(gs):
    hit = gs.lookup("m1", "mtp", "thinking_on", 3)
    assert hit.al == 2.5 and hit.curve == "m1_mtp" and hit.line == 6 and hit.path.endswith("m1_mtp.yaml")
    assert gs.lookup("dsv4", "dspark", "thinking_on", 6).al == 3.77
    assert gs.lookup("m1", "mtp", "thinking_off", 1).code == "no-k"
    assert gs.lookup("dsv41flash", "dspark", "thinking_off", 5).code == "no-thinking-mode"
    assert gs.lookup("m2", "mtp", "thinking_on", 3).code == "no-curve"
    assert "m2_mtp.yaml" in gs.lookup("m2", "mtp", "thinking_on", 3).reason
    assert gs.lookup("kimik3", "dspark", "thinking_on", 7).code == "needs-sample-method"
    for k in (0, -1):
        miss = gs.lookup("m1", "mtp", "thinking_on", k)
        assert miss.al is None and miss.code == "bad-k"


def test_real_golden_curves(inferencex_dir):
    gs = load_golden(DirSource(inferencex_dir), "inferencex-e2e/infx/golden_al_distribution")
    assert gs.findings == []
    assert gs.lookup("dsv4", "mtp", "thinking_on", 3).al == 2.49
    assert gs.lookup("dsv4", "mtp", "thinking_off", 3).al == 2.97
    assert gs.lookup("qwen3.5", "mtp", "thinking_on", 3).al == 3.39
    assert gs.lookup("qwen3.5", "mtp", "thinking_off", 3).al == 3.33
    assert gs.lookup("dsv4", "dspark", "thinking_on", 3).al == 3.01
    assert gs.lookup("kimik3", "dspark", "thinking_on", 3, draft_sample_method="probabilistic").al == 3.00
    assert gs.lookup("minimaxm3", "eagle3", "thinking_on", 3, draft_model="Inferact/MiniMax-M3-EAGLE3-GQA").al == 2.78
    assert gs.lookup("glm5.2", "mtp", "thinking_on", 3).al == 2.99
    line = gs.lookup("dsv4", "mtp", "thinking_on", 3).line
    text = (inferencex_dir / "inferencex-e2e/infx/golden_al_distribution/dsv4_mtp.yaml").read_text().splitlines()
    assert text[line - 1].strip() == "3: 2.49"
    # The snapshot lacks dsv41flash_dspark.yaml (spec 5.1), so the lookup says so.
    assert gs.lookup("dsv41flash", "dspark", "thinking_on", 5).code == "no-curve"


def test_a_malformed_curve_is_named_not_called_uncommitted():
    from recipes.golden import load_golden

    gs = load_golden(MemorySource({"g/dsv41flash_dspark.yaml": "m:\n  thinking_on: {1: [\n"}), "g")
    found = gs.lookup("dsv41flash", "dspark", "thinking_on", 5)
    assert found.al is None and found.code == "bad-curve"
    assert "g/dsv41flash_dspark.yaml" in found.reason and "cannot be read" in found.reason


def test_a_missing_variant_curve_is_not_replaced_by_its_sibling():
    from recipes.golden import load_golden

    gs = load_golden(MemorySource({
        "g/kimik3_dspark.yaml": "kimi-k3:\n  thinking_on: {3: 2.5}\n",
        "g/minimaxm3_eagle3.yaml": "minimax-m3:\n  thinking_on: {3: 2.6}\n",
    }), "g")
    assert gs.lookup("kimik3", "dspark", "thinking_on", 3, draft_sample_method="greedy").al == 2.5
    prob = gs.lookup("kimik3", "dspark", "thinking_on", 3, draft_sample_method="probabilistic")
    assert prob.al is None and prob.code == "no-curve"
    assert "kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method.yaml" in prob.reason
    assert gs.lookup("minimaxm3", "eagle3", "thinking_on", 3, draft_model="Inferact/MiniMax-M3-EAGLE3").al == 2.6
    gqa = gs.lookup("minimaxm3", "eagle3", "thinking_on", 3, draft_model="Inferact/MiniMax-M3-EAGLE3-GQA")
    assert gqa.al is None and gqa.code == "no-curve" and "minimaxm3_eagle3_gqa.yaml" in gqa.reason


def test_model_identity_sets_aside_organisation_precision_and_checkpoint_date():
    assert model_identity("nvidia/Qwen3.5-397B-A17B-NVFP4-V2") == ("qwen3.5", "397b", "a17b")
    assert same_model("qwen3.5-397b-a17b-nvfp4", "amd/Qwen3.5-397B-A17B-MXFP4-AttnFP8-V2")
    assert same_model("glm-5.2-fp8", "nvidia/GLM-5.2-NVFP4")
    assert same_model("deepseek-v4-pro", "hf:deepseek-ai/DeepSeek-V4-Pro-0813")
    assert same_model("kimi-k3", "moonshotai/Kimi-K3")
    assert not same_model("kimi-k2.5-nvfp4", "nvidia/Kimi-K2.6-NVFP4")
    assert not same_model("deepseek-v4-pro", "deepseek-ai/DeepSeek-V4.1-Flash")
    assert not same_model("", "anything")


def test_a_curve_measured_on_another_model_is_not_the_served_models():
    gs = load_golden(MemorySource({"g/kimik2.5_eagle3.yaml": "# run\nkimi-k2.5-nvfp4:\n  thinking_on:\n    3: 2.88\n"}), "g")
    assert gs.lookup("kimik2.5", "eagle3", "thinking_on", 3, served_model="nvidia/Kimi-K2.5-NVFP4").al == 2.88
    miss = gs.lookup("kimik2.5", "eagle3", "thinking_on", 3, served_model="Kimi-K2.6-NVFP4")
    assert miss.al is None and miss.code == "other-model" and miss.line == 2
    assert "measured on kimi-k2.5-nvfp4, not on the served Kimi-K2.6-NVFP4" in miss.reason
    # Without a served model the harness's own lookup (by prefix) is reproduced.
    assert gs.lookup("kimik2.5", "eagle3", "thinking_on", 3).al == 2.88
