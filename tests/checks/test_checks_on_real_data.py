"""All sixteen checks on realistic PRs built at test time from the real InferenceX data in ../shared."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from checks.engine import evaluate
from tests.builders import build_snapshot

AMD = "inferencex-e2e/configs/amd-master.yaml"
CHANGELOG = "inferencex-e2e/perf-changelog.yaml"
CHECKLIST = "inferencex-e2e/docs/PR_REVIEW_CHECKLIST.md"
GOLDEN_DIR = "inferencex-e2e/infx/golden_al_distribution"
ATOM_KEY = "dsv41flash-fp4-mi355x-atom-agentic-dspark"
ATOM_RECIPE = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom/mi355x-fp4-mtp/agentic.yaml"
VLLM_KEY = "dsv41flash-fp4-mi355x-vllm-agentic-dspark"
SGLANG_KEY = "dsv41flash-fp4-mi355x-sglang-agentic-dspark"
# The merged revision of the seed PR pins this image (spec 13); the stored recipe is an earlier one.
MERGED_IMAGE = "rocm/atom-dev:nightly_202610070333"
RUN_ID = 37597985033
SERVING = (8, 9, 10, 11, 13)

DRAFT_EVIDENCE = """\
- Draft: the inline DSpark head of deepseek-ai/DeepSeek-V4.1-Flash (layers 37-39), loaded from the served checkpoint.
- Stored precision: attention linears FP8 e4m3 with E8M0 scales, routed experts MXFP4.
- Default handling: no --online_quant_config and no draft dtype override; the image loads the draft through its default path.
- Effective precision: the draft is served at its stored FP8/MXFP4 precision.
"""


def real_tree(root: Path) -> dict[str, str]:
    """Every data file of the snapshot by repository path. The golden curves exist there only in
    the old root layout; they are read into the new layout's directory, where the tree looks."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if not p.is_file() or rel == "MANIFEST.md":
            continue
        if rel.startswith("golden_al_distribution/"):
            rel = f"{GOLDEN_DIR}/{p.name}"
        out[rel] = p.read_text(encoding="utf-8")
    return out


def without_entry(text: str, key: str) -> str:
    """A master config with one top-level entry (and its body) removed."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{key}:"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i][:1] not in (" ", "\n", "#", "")), len(lines))
    return "".join(lines[:start] + lines[end:])


def replace_once(text: str, old: str, new: str) -> str:
    assert text.count(old) >= 1, f"the real data no longer holds {old!r}"
    return text.replace(old, new, 1)


def new_layout_codeowners(text: str) -> str:
    """The stored CODEOWNERS names old-layout paths; the live file (spec 1.2, 7) names the same
    owners under inferencex-e2e/."""
    text = re.sub(r"^configs/", "inferencex-e2e/configs/", text, flags=re.M)
    return re.sub(r"^(MODELS(?:_zh)?\.md)", r"inferencex-e2e/docs/\1", text, flags=re.M)


def signoff_from_template(template: str, author: str, detail: str) -> str:
    """The real checklist template with every box checked, the detail section and the signature."""
    block = template.split("```", 2)[1].strip("\n")
    body = block.replace("- [ ]", "- [x]").replace("FILL_IN_GITHUB_USERNAME", author)
    head, sep, tail = body.partition("### Additional detail section:")
    assert sep, "the real template lost its Additional detail heading"
    signed = tail[tail.index("Signed:"):] if "Signed:" in tail else f"Signed: `{author}`"
    return f"{head}{sep}\n{detail}\n{signed}\n"


@pytest.fixture(scope="module")
def real(request) -> dict[str, str]:
    from tests.conftest import INFERENCEX

    if not (INFERENCEX / "inferencex-e2e").is_dir():
        pytest.skip("../shared/inferencex is not present")
    return real_tree(INFERENCEX)


def rows(spec: dict, only=None) -> dict:
    verdict = evaluate(build_snapshot(spec), only=only)
    return {r.number: r for r in verdict.rows}


def labels(row) -> list[str]:
    return [e.label() for e in row.evidence]


# --- the seed PR on the stored tree: the intermediate ATOM recipe cannot serve the merged entry ----


def test_seed_pr_with_the_stored_intermediate_recipe_never_passes_serving_checks(real):
    base = dict(real, **{AMD: without_entry(real[AMD], ATOM_KEY)})
    del base[ATOM_RECIPE]
    got = rows({"number": 3603, "base": base, "head_tree": real, "review_date": "2026-10-08"})
    assert got[3].status.value == "N/A" and "atom (ATOM vendor engine)" in got[3].reason
    assert got[6].status.value == "PASS", got[6].reason
    assert VLLM_KEY in got[6].reason and SGLANG_KEY in got[6].reason
    assert got[7].status.value == "PASS", got[7].reason
    assert got[12].status.value == "N/A"
    # The stored recipe pins another image and an older point set, so no variant serves the
    # merged entry's points: every serving check says "could not verify", none passes.
    for n in SERVING:
        assert got[n].status.value == "FAIL", (n, got[n].reason)
        assert got[n].reason.startswith("could not verify"), (n, got[n].reason)
        assert any(ATOM_RECIPE in label for label in labels(got[n])), (n, labels(got[n]))
    # Without runs or a sign-off nothing that needs them passes.
    assert got[1].status.value == "FAIL" and got[2].status.value == "FAIL" and got[5].status.value == "FAIL"
    assert got[14].status.value == "WARN" and "unverifiable" in got[14].reason


# --- the seed PR on the merged revision: a complete, green submission ------------------------------


def merged_seed_spec(real: dict[str, str], *, golden_al: bool, body: str = "") -> dict:
    head = dict(real)
    head[ATOM_RECIPE] = replace_once(replace_once(real[ATOM_RECIPE], "container: rocm/atom-dev:nightly_202609291501",
                                                  f"container: {MERGED_IMAGE}"),
                                     "index-cache-dtype: fp8", "index-cache-dtype: fp4")
    # The master arms follow the stored recipe's variants (TP2 c1-c64, TP4 c2-c64).
    amd = replace_once(real[AMD], "conc-list: [1, 2, 4, 5, 6, 8, 16, 32, 64, 128], srt-recipe: benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom",
                       "conc-list: [1, 2, 8, 16, 32, 64], srt-recipe: benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom")
    head[AMD] = replace_once(amd, "conc-list: [1, 4, 5, 6, 8, 32], srt-recipe: benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom",
                             "conc-list: [2, 8, 16, 32, 64], srt-recipe: benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom")
    head[CHANGELOG] = real[CHANGELOG] + (
        "\n- config-keys:\n    - dsv41flash-fp4-mi355x-atom-agentic-dspark\n  scenario-type:\n    - agentic-coding\n"
        "  description:\n    - \"Restore DeepSeek-V4.1-Flash FP4 ATOM AgentX on MI355X\"\n"
        "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/3603\n"
    )
    if golden_al:
        # Not in the stored snapshot; the value is the spec's (5.1: dsv41flash_dspark K5 = 3.51).
        head[f"{GOLDEN_DIR}/dsv41flash_dspark.yaml"] = "deepseek-v4.1-flash:\n  thinking_on:\n    5: 3.51\n"
    base = dict(real, **{AMD: without_entry(real[AMD], ATOM_KEY)})
    del base[ATOM_RECIPE]
    target = dict(base, **{".github/CODEOWNERS": new_layout_codeowners(real[".github/CODEOWNERS"])})
    signoff = signoff_from_template(real[CHECKLIST], "seungrokj", DRAFT_EVIDENCE)
    eval_row = {"model_prefix": "dsv41flash", "model": "deepseek-ai/DeepSeek-V4.1-Flash", "hw": "MI355X",
                "framework": "atom", "precision": "fp4", "spec_decoding": "draft_model", "tp": 2, "conc": 64,
                "task": "gsm8k", "score": 0.973, "score_name": "em_strict", "score_se": 0.004, "n_eff": 1319,
                "infrastructure_success": True}
    return {
        "number": 3603, "base": base, "head_tree": head, "target": target, "review_date": "2026-10-08",
        "body": body,
        "signoff": {"id": 4401, "author": "seungrokj", "association": "COLLABORATOR", "body": signoff},
        "comments": [{"id": 4402, "author": "seungrokj", "association": "COLLABORATOR",
                      "body": f"/reuse-sweep-run {RUN_ID}"}],
        "check_runs": {"head": [
            {"name": "agentic / benchmark (dsv41flash tp2 c1)", "conclusion": "success", "run_id": RUN_ID},
            {"name": "agentic eval / benchmark (dsv41flash tp2 c64)", "conclusion": "success", "run_id": RUN_ID},
            {"name": "eval / benchmark", "conclusion": "skipped", "run_id": RUN_ID},
            {"name": "collect-evals / collect", "conclusion": "success", "run_id": RUN_ID},
        ]},
        "runs": [{"id": RUN_ID, "artifacts": ["results_bmk", "eval_results_all"], "evals": [eval_row],
                  "meta": {"eval_results_all": {"image": MERGED_IMAGE}}}],
    }


@pytest.fixture(scope="module")
def merged(real):
    return rows(merged_seed_spec(real, golden_al=True, body="TP2 [1, 2, 8, 16, 32, 64]; `--index-cache-dtype fp8`.\n"))


def test_merged_seed_pr_passes_like_the_real_verifier(merged):
    status = {n: r.status.value for n, r in merged.items()}
    assert {n: status[n] for n in (0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 13)} == {
        n: "PASS" for n in (0, 1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 13)}, {n: merged[n].reason for n in merged}
    assert status[3] == "N/A" and status[12] == "N/A"


def test_merged_seed_rows_cite_real_files(merged):
    assert "@seungrokj is a named owner of the changed inferencex-e2e/configs/amd-master.yaml" in merged[0].reason
    assert "gsm8k em_strict 0.973" in merged[2].reason and "vs bar 0.90 (default.gsm8k)" in merged[2].reason
    assert MERGED_IMAGE in merged[2].reason
    assert "All 17 items of the current template are present and checked." == merged[5].reason
    assert "ATOM does not support" in merged[8].reason
    assert "srt_agentic.sh" in merged[9].reason
    assert "--spec-decode-acceptance-length 3.51" in merged[11].reason and "K=5" in merged[11].reason
    assert "dspark head of deepseek-ai/DeepSeek-V4.1-Flash" in merged[13].reason


def test_merged_seed_advisory_rows(merged):
    # No throughput artifact rows were given: coverage is unverifiable, never a PASS.
    assert merged[14].status.value == "WARN" and "unverifiable" in merged[14].reason
    # The body's fp8 index cache contradicts the merged recipe's fp4; the point list agrees.
    row = merged[15]
    assert row.status.value == "WARN", row.reason
    assert '"--index-cache-dtype fp8"' in row.reason and "index-cache-dtype=fp4" in row.reason
    assert any(f"{ATOM_RECIPE}:" in label for label in labels(row))
    outcomes = {c["text"]: c["outcome"] for c in row.details["claims"]}
    assert outcomes["TP2 [1, 2, 8, 16, 32, 64]"] == "agree"


def test_merged_seed_without_a_committed_curve_needs_an_al_source(real):
    spec = merged_seed_spec(real, golden_al=False)
    row = rows(spec, only={11})[11]
    assert row.status.value == "FAIL" and "dsv41flash_dspark.yaml not in" in row.reason
    detail = DRAFT_EVIDENCE + "- Golden AL: the dsv41flash DSpark curve is pending collection run 37486079757.\n"
    spec["signoff"]["body"] = signoff_from_template(real[CHECKLIST], "seungrokj", detail)
    row = rows(spec, only={11})[11]
    assert row.status.value == "PASS", row.reason
    assert "37486079757" in row.reason


def test_merged_seed_without_draft_evidence_fails_check_13(real):
    spec = merged_seed_spec(real, golden_al=True)
    spec["signoff"]["body"] = signoff_from_template(real[CHECKLIST], "seungrokj", "- Runs: see the sweep.\n")
    row = rows(spec, only={13})[13]
    assert row.status.value == "FAIL" and row.reason.startswith("Draft precision could not be verified")


def test_merged_seed_signed_by_an_nvidia_owner_fails_check_0(real):
    spec = merged_seed_spec(real, golden_al=True)
    spec["signoff"]["author"] = "kedarpotdar-nv"
    row = rows(spec, only={0})[0]
    assert row.status.value == "FAIL", row.reason
    assert "@kedarpotdar-nv is not an owner of the changed inferencex-e2e/configs/amd-master.yaml" in row.reason
    assert "@seungrokj" in row.reason


# --- a vLLM entry moved to a ROCm fork image --------------------------------------------------------


def test_vllm_entry_on_a_rocm_fork_image(real):
    head = dict(real)
    head[AMD] = replace_once(real[AMD], "image: vllm/vllm-openai-rocm:nightly-rocm100-ac9126e58aa7bbab1856ba6593ba4d5003fea516",
                             "image: rocm/vllm-dev:nightly_20261112")
    got = rows({"number": 3710, "base": real, "head_tree": head, "review_date": "2026-10-08"}, only={3, 6, 7, 12})
    row6 = got[6]
    assert row6.status.value == "FAIL", row6.reason
    assert f"{VLLM_KEY} (framework vllm, SKU mi355x) uses rocm/vllm-dev:nightly_20261112" in row6.reason
    assert any(label.startswith(f"{AMD}:") and "image" in label for label in labels(row6))
    # An image-only change is still a vLLM serving change: it needs the upstream recipe link.
    assert got[3].status.value == "FAIL" and "no vLLM upstream recipe is linked" in got[3].reason
    assert got[7].status.value == "PASS"
    assert got[12].status.value == "N/A"


# --- append-only on a real SGLang entry -------------------------------------------------------------


def append_only_spec(real: dict[str, str], *, image: str | None = None) -> dict:
    head = dict(real)
    amd = replace_once(real[AMD], "conc-list: [1, 2, 4, 8, 16], srt-recipe: benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang",
                       "conc-list: [1, 2, 4, 8, 16, 32], srt-recipe: benchmarks/single_node/srt-slurm-recipes/dsv41flash/sglang")
    if image:
        amd = replace_once(amd, "image: lmsysorg/sglang-rocm:v0.5.21-rocm720-mi35x-20261006", f"image: {image}")
    head[AMD] = amd
    head[CHANGELOG] = real[CHANGELOG] + (
        f"\n- config-keys:\n    - {SGLANG_KEY}\n  description:\n    - \"Add TP4 c32 to the existing curve\"\n"
        "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n  append-only: true\n"
    )
    return {"number": 3720, "base": real, "head_tree": head, "review_date": "2026-10-08"}


def test_append_only_new_concurrency_on_a_real_entry_passes(real):
    row = rows(append_only_spec(real), only={12})[12]
    assert row.status.value == "PASS", row.reason
    assert row.details["new_points"] and all(":c32" in p and "tp4" in p for p in row.details["new_points"])
    assert SGLANG_KEY in row.reason


def test_append_only_with_an_image_bump_fails(real):
    row = rows(append_only_spec(real, image="lmsysorg/sglang-rocm:v0.5.22-rocm720-mi35x"), only={12})[12]
    assert row.status.value == "FAIL", row.reason
    assert "image changed" in row.reason and "v0.5.22" in row.reason
