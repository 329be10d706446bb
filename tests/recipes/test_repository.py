"""The Repository facade: layouts, laziness, bindings, consistency findings, effective configs."""
from __future__ import annotations

from recipes.repository import Repository, clear_parse_cache
from recipes.source import DirSource, MemorySource
from tests.builders import REPO_FIXTURES as FIXTURES, fixture_files

ATOM_RECIPE = "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom/mi355x-fp4-mtp/agentic.yaml"
MASTER = "inferencex-e2e/configs/amd-master.yaml"


def test_layouts_of_the_three_spellings():
    new = Repository(DirSource(FIXTURES / "new-layout"))
    old = Repository(DirSource(FIXTURES / "root-layout"))
    oldest = Repository(DirSource(FIXTURES / "github-configs"))
    assert (new.layout.name, new.master_files) == ("inferencex-e2e", [MASTER])
    assert (old.layout.name, old.master_files) == ("root", ["configs/amd-master.yaml", "configs/nvidia-master.yaml"])
    assert (oldest.layout.name, oldest.master_files) == ("root", [".github/configs/amd-master.yaml"])
    assert [p.conc for p in oldest.points] == [4, 8, 16, 32, 64]


def test_nothing_is_parsed_until_asked():
    repo = Repository(DirSource(FIXTURES / "new-layout"))
    assert len(repo.points) == 8
    assert "changelog" not in repo.__dict__ and "golden" not in repo.__dict__
    assert repo.recipe("no/such.yaml") is None


def test_clean_fixture_binds_every_point_once():
    repo = Repository(DirSource(FIXTURES / "new-layout"))
    assert repo.model_findings == []
    bound = {pid: b.variant for pid, b in repo.bindings.by_point.items()}
    assert bound["dsv41flash-fp4-mi355x-atom-agentic-dspark:agentic:tp4-ep1:draft_model:c32"] == "override_tp4_c32"
    assert bound["dsr1-fp8-mi355x-sglang-mtp:8k1k:tp8-ep1:mtp:c20"] == "zip_override_concurrency[3]"
    assert len(bound) == 7  # the multi-node point names its variant by selector instead
    assert set(repo.recipes) == {
        ATOM_RECIPE,
        "inferencex-e2e/benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/mi355x-fp8-mtp/8k1k.yaml",
        "inferencex-e2e/benchmarks/multi_node/srt-slurm-recipes/qwen3.5/sglang/mi355x-fp8/8k1k/disagg-variants.yaml",
    }


def test_consistency_findings_name_file_and_line():
    files = fixture_files("new-layout")
    # A stale container, a point with no variant (c64), and a variant nobody runs (c8 dropped).
    files[ATOM_RECIPE] = files[ATOM_RECIPE].replace("nightly_202610070333", "nightly_202609291501")
    files[MASTER] = files[MASTER].replace("conc-list: [1, 8]", "conc-list: [1, 64]")
    repo = Repository(MemorySource(files))
    by_code = {}
    for f in repo.model_findings:
        by_code.setdefault(f.code, []).append(f)
    (container,) = by_code["container-mismatch"]
    assert (container.path, container.line) == (ATOM_RECIPE, 7)
    assert "nightly_202609291501" in container.message and "nightly_202610070333" in container.message
    (nv,) = by_code["no-variant"]
    assert (nv.path, nv.line) == (MASTER, 13) and "c64" in nv.message
    (unused,) = by_code["unused-variant"]
    assert "override_tp2_c8" in unused.message and unused.line == 44 and unused.severity == "warning"


def test_several_matching_variants_is_a_finding():
    files = fixture_files("new-layout")
    files[ATOM_RECIPE] += "\noverride_tp2_c1_again:\n  roles: {agg: {gpus: 2}}\n  benchmark: {env: {CONC: '1'}}\n"
    repo = Repository(MemorySource(files))
    (f,) = [f for f in repo.model_findings if f.code == "several-variants"]
    assert "override_tp2_c1, override_tp2_c1_again" in f.message and f.line == 13


def test_selector_narrows_and_unknown_selector_is_reported():
    files = fixture_files("new-layout")
    files[MASTER] = files[MASTER].replace("agentic.yaml }\n      - { tp: 4", "agentic.yaml:override_nope }\n      - { tp: 4")
    repo = Repository(MemorySource(files))
    (f,) = [f for f in repo.model_findings if f.code == "unknown-selector"]
    assert "override_nope" in f.message and f.line == 13


def test_effective_config_of_a_recipe_point():
    repo = Repository(DirSource(FIXTURES / "new-layout"))
    p = repo.points_by_id["dsv41flash-fp4-mi355x-atom-agentic-dspark:agentic:tp4-ep1:draft_model:c32"]
    eff = repo.effective(p)
    assert (eff.source, eff.variant, eff.value("engine"), eff.value("tp")) == ("srt-recipe", "override_tp4_c32", "atom", 4)
    assert (eff.value("spec_method"), eff.value("draft_length"), eff.value("kv_dtype")) == ("dspark", 5, "bf16")
    assert eff.image.value == "rocm/atom-dev:nightly_202610070333" and eff.image.line == 7
    assert eff.env["ATOM_PREFILL_DECODE_INTERVAL"].value == "16" and eff.env["ATOM_PREFILL_DECODE_INTERVAL"].line == 60
    assert eff.env["ATOM_DISABLE_MMAP"].line == 28  # recipe-wide environment
    assert "block-size" not in eff.args  # deleted by null in the override
    assert eff.client_env["USE_CHAT_TEMPLATE"].value == "true"
    assert eff.launch_command.value.endswith("srt_agentic.sh")


def test_effective_config_of_a_script_point_uses_master_values():
    repo = Repository(DirSource(FIXTURES / "root-layout"))
    p = next(p for p in repo.points if p.config_key == "dsr1-fp4-b200-trt")
    eff = repo.effective(p)
    assert eff.source == "script" and eff.launcher == "benchmarks/single_node/fixed_seq_len/dsr1_fp4_b200_trt.sh"
    assert (eff.value("engine"), eff.value("tp"), eff.value("ep")) == ("trtllm", 8, 8)
    assert eff.image.path == "configs/nvidia-master.yaml" and eff.image.line == 3


def test_parse_cache_is_shared_between_views():
    clear_parse_cache()
    a = Repository(DirSource(FIXTURES / "new-layout"))
    b = Repository(DirSource(FIXTURES / "new-layout"))
    assert a.masters[MASTER] is b.masters[MASTER]
    assert a.recipe(ATOM_RECIPE) is b.recipe(ATOM_RECIPE)


def test_other_file_kinds_are_reachable():
    repo = Repository(DirSource(FIXTURES / "new-layout"))
    assert repo.changelog is not None and len(repo.changelog.entries) == 2
    assert repo.codeowners is not None
    assert repo.models is None and repo.checklist_template is None  # files absent in this fixture


def test_real_snapshot(inferencex_dir):
    repo = Repository(DirSource(inferencex_dir))
    assert repo.layout.name == "inferencex-e2e"
    assert len(repo.entries) == 53 + 163
    mism = [f for f in repo.model_findings if f.code == "container-mismatch" and f.path == ATOM_RECIPE]
    (f,) = mism
    assert f.line == 10 and "nightly_202609291501" in f.message and "nightly_202610070333" in f.message
    p = repo.points_by_id["dsv41flash-fp4-mi355x-atom-agentic-dspark:agentic:tp4-ep1:draft_model:c32"]
    v = repo.variant_for(p)
    assert v.selector == "override_tp4_c32" and v.gpus() == 4 and v.conc == "32"
    missing = {f.message for f in repo.model_findings if f.code == "no-variant" and f.path == MASTER and f.line == 1637}
    assert any(":tp2-ep1:draft_model:c128 " in m for m in missing)


def test_effective_config_reads_the_launcher_script():
    repo = Repository(DirSource(FIXTURES / "root-layout"))
    p = repo.points_by_id["dsv4-fp4-mi355x-sglang-agentic-mtp:agentic:tp8-ep1:mtp:c4"]
    eff = repo.effective(p)
    script = "benchmarks/single_node/agentic/dsv4_fp4_mi355x_sglang_mtp.sh"
    assert (eff.env["SGLANG_USE_AITER"].value, eff.env["SGLANG_USE_AITER"].path, eff.env["SGLANG_USE_AITER"].line) == ("1", script, 3)
    assert (eff.value("spec_method"), eff.value("draft_length"), eff.spec_method.line) == ("eagle", 3, 5)
    assert eff.value("tp") == 8  # "$TP" in the script is not a number; the master config's value stands


def test_sandbox_repository_is_consistent():
    repo = Repository(DirSource(FIXTURES.parent.parent.parent / "examples" / "sandbox-repo"))
    assert repo.findings == []
    assert len(repo.entries) == 3 and len(repo.points) == 13
    assert repo.golden.curves["dsv41flash_dspark"].values["thinking_on"][5] == 3.51
    p = repo.points_by_id["dsv41flash-fp4-mi355x-atom-agentic-dspark:agentic:tp2-ep1:draft_model:c64"]
    assert repo.effective(p).env["ATOM_PREFILL_DECODE_INTERVAL"].value == "4"


def test_repository_config_file_overrides_the_detected_layout():
    files = fixture_files("new-layout")
    moved = {k.replace("inferencex-e2e/configs/", "bench/masters/"): v for k, v in files.items()}
    assert Repository(MemorySource(moved)).master_files == []  # not where detection looks
    moved[".github/infx-review.yml"] = "paths:\n  configs_dir: bench/masters\n  changelog: bench/log.yaml\n"
    repo = Repository(MemorySource(moved))
    assert repo.layout.name == "inferencex-e2e" and repo.master_files == ["bench/masters/amd-master.yaml"]
    assert repo.layout.changelog == "bench/log.yaml" and len(repo.points) == 8
    # `root: ""` forces the root layout even though inferencex-e2e/ exists.
    files[".github/infx-review.yml"] = "paths: {root: ''}\n"
    forced = Repository(MemorySource(files))
    assert (forced.layout.name, forced.layout.changelog, forced.master_files) == ("root", "perf-changelog.yaml", [])


def test_a_broken_repository_config_is_a_finding_and_defaults_apply():
    files = fixture_files("new-layout")
    files[".github/infx-review.yml"] = "paths:\n  configs_dir: x\npolicy:\n  no_such_knob: 1\n"
    repo = Repository(MemorySource(files))
    (f,) = [f for f in repo.model_findings if f.path == ".github/infx-review.yml"]
    assert f.line == 4 and "no_such_knob" in f.message
    assert repo.master_files == [MASTER]  # the whole file is ignored, not half-applied


def test_variants_a_selector_leaves_out_serve_no_point():
    files = fixture_files("new-layout")
    recipe = "benchmarks/single_node/srt-slurm-recipes/dsr1/sglang/mi355x-fp8-mtp/8k1k.yaml"
    files[MASTER] = files[MASTER].replace(f"srt-recipe: {recipe}\n", f"srt-recipe: {recipe}:zip_override_concurrency[0]\n")
    files[MASTER] = files[MASTER].replace("conc-end: 20", "conc-end: 4")
    repo = Repository(MemorySource(files))
    unused = sorted(f.message.split()[1] for f in repo.model_findings if f.code == "unused-variant")
    assert unused == [f"zip_override_concurrency[{i}]" for i in (1, 2, 3)]
    assert not [f for f in repo.model_findings if f.severity == "error"]
