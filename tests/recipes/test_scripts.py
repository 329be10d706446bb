"""Launch-script analysis: env exports, server flags, patches, installs, and parser fallback."""
from __future__ import annotations

from pathlib import Path

import pytest

from recipes.scripts import analyze_command_line, analyze_script, normalise_flag, package_name

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "scripts"


def load(name: str):
    path = f"benchmarks/single_node/agentic/{name}"
    return analyze_script((FIXTURES / name).read_text(), path)


def test_sglang_acc_len_exported_only_when_not_eval_only():
    a = load("dsv4_fp4_mi355x_sglang_mtp.sh")
    assert not a.partial and not a.findings
    acc = a.exports["SGLANG_SIMULATE_ACC_LEN"]
    assert (acc.value, acc.resolved, acc.line) == ("$DSV4_GOLDEN_AL", "2.49", 15)
    assert acc.conditional and "EVAL_ONLY" in acc.condition and "!=" in acc.condition
    assert not a.exports["SGLANG_USE_AITER"].conditional
    assert [s.value for s in a.sources] == ['$(dirname "$0")/../benchmark_lib.sh']


def test_sglang_launch_flags_from_array_and_conditional_append():
    sl = load("dsv4_fp4_mi355x_sglang_mtp.sh").server_launch
    assert sl is not None and sl.engine == "sglang" and sl.entry == "sglang.launch_server" and sl.line == 39
    assert sl.flags["speculative-algorithm"].value == "EAGLE"
    assert sl.flags["speculative-num-steps"].line == 29  # line of the array element, not the launch
    assert sl.flags["trust-remote-code"].value == ""
    assert sl.flags["enable-metrics"].value == "" and sl.flags["port"].value == "8888"
    graph = sl.flags["cuda-graph-max-bs"]
    assert graph.conditional and "CONC > 32" in graph.condition
    assert not sl.flags["speculative-algorithm"].conditional
    # The comment and the echo mention --hf-overrides; neither is a server flag.
    assert "hf-overrides" not in sl.flags
    assert all("hf-overrides" not in f.original for f in sl.flag_list)


def test_vllm_speculative_config_json_parsed():
    a = load("dsv4_fp4_b200_vllm_mtp.sh")
    sl = a.server_launch
    assert sl.engine == "vllm" and sl.entry == "vllm serve" and sl.positionals == ["$MODEL"]
    spec = sl.json_flags["speculative-config"]
    assert spec["rejection_sample_method"] == "synthetic" and spec["synthetic_acceptance_length"] == 2.49
    assert sl.flags["speculative-config"].line == 14
    assert sl.flags["tensor-parallel-size"].value == "$TP"  # --flag=value form
    assert sl.env["VLLM_USE_V1"].value == "1"
    assert a.exports["MAX_MODEL_LEN"].value == "$((ISL + OSL + 256))"
    assert sl.flags["max-model-len"].value == "$((ISL + OSL + 256))"
    (pip,) = a.pip_installs
    assert pip.is_benchmark_tooling and pip.packages == ["lm-eval"]
    assert a.patches == []


def test_trt_launch_through_mpirun_and_both_branches_visible():
    a = load("gptoss_fp4_b200_trt_mtp.sh")
    sl = a.server_launch
    assert sl.engine == "trtllm" and sl.positionals == ["$MODEL"]
    assert sl.flag("--tp_size").value == "$TP" and sl.flags["tp-size"].original == "--tp_size"
    values = [(loc.value, loc.condition.startswith("!")) for loc in a.assignments_of("TLLM_SPEC_DECODE_FORCE_NUM_ACCEPTED_TOKENS")]
    assert values == [("2.51", False), ("0", True)]
    (h,) = a.heredocs
    assert h.delimiter == "EOF" and h.line == 14 and h.body_line == 15 and "decoding_type: MTP" in h.body
    assert a.patches == []  # the heredoc goes to /tmp: benign


def test_atom_case_statement_read_natively():
    a = load("dsv41flash_fp4_mi355x_atom_mtp.sh")
    assert not a.partial and not a.findings  # tree-sitter reads `case`; bashlex could not
    sl = a.server_launch
    assert sl.engine == "atom" and sl.flags["spec-decode-acceptance-length"].value == "3.51"
    assert sl.flags["num-speculative-tokens"].value == "5"
    assert sl.flags["kv-cache-dtype"].value == "fp8"  # expanded from the unquoted $ATOM_ARGS
    assert sl.flags["kv-cache-dtype"].line == 11
    assert a.exports["INTERVAL"].conditional and "matches" in a.exports["INTERVAL"].condition
    assert a.exports["ATOM_PREFILL_DECODE_INTERVAL"].resolved == "4"


def test_hostile_script_reports_every_patch():
    a = load("hostile_patches.sh")
    got = {(p.kind, p.line) for p in a.patches}
    assert got == {
        ("git-apply", 6), ("patch", 7), ("sed-inplace", 10), ("heredoc-write", 15),
        ("python-c-write", 22), ("sitecustomize", 24), ("copy-overwrite", 28),
    }
    by_kind = {p.kind: p for p in a.patches}
    assert by_kind["git-apply"].target == "/sgl-workspace/sglang"  # from the preceding cd
    assert by_kind["sed-inplace"].target.endswith("dist-packages/vllm/config.py")
    assert by_kind["heredoc-write"].target == "sglang.__file__"
    assert by_kind["python-c-write"].target == "vllm.__file__"
    assert by_kind["copy-overwrite"].target == "$SGLANG_DIR/srt/model_executor/model_runner.py"
    # Benign: sed -i on /tmp, cp into /tmp, echo >> /tmp/launch.log.
    assert not any(p.target and p.target.startswith("/tmp") for p in a.patches)


def test_hostile_script_pip_installs_classified():
    pips = load("hostile_patches.sh").pip_installs
    assert [(p.from_vcs, p.from_wheel, p.from_path, p.is_benchmark_tooling) for p in pips] == [
        (True, False, False, False), (False, True, True, False), (False, False, True, False),
        (False, False, False, True), (False, False, False, True),
    ]
    assert pips[1].engine_targets and pips[2].packages == ["aiter"]


def test_quoted_and_commented_flags_are_not_runtime():
    a = load("quoted_flags.sh")
    sl = a.server_launch
    assert set(sl.flags) == {"model-path", "tp", "chat-template", "port"}
    assert "--hf-overrides" in sl.flags["chat-template"].value  # inside a value, never a flag
    assert not a.findings  # a Jinja template is not mistaken for JSON
    assert a.exports["SGLANG_SIMULATE_ACC_LEN"].value == "0"  # raw value exposed; meaning is the check's
    assert "SGLANG_SIMULATE_ACC_LEN" not in load("dsv4_fp4_b200_vllm_mtp.sh").exports


def test_real_hf_overrides_from_variable_and_model_config_sed():
    a = load("arch_hack_hf_overrides.sh")
    sl = a.server_launch
    assert sl.json_flags["hf-overrides"] == {"num_experts_per_tok": 4}
    assert sl.flags["hf-overrides"].line == 9 and sl.flags["enforce-eager"].value == ""
    (p,) = a.patches
    assert p.kind == "sed-inplace" and p.target.endswith("config.json") and p.sensitive
    assert [s.value for s in a.sources] == ["./benchmarks/common_env.sh", "benchmarks/agentic_lib.sh"]


@pytest.mark.parametrize("text, kind, sensitive", [
    ("sed -i 's/a/b/' recipe.yaml", "sed-inplace", False),
    ("perl -pi -e 's/a/b/' /opt/venv/lib/python3.12/site-packages/vllm/envs.py", "sed-inplace", True),
    ("echo 'import x' > /usr/lib/python3/dist-packages/foo.pth", "sitecustomize", True),
    ("wget -O /sgl-workspace/sglang/python/sglang/srt/server_args.py https://x/y.py", "copy-overwrite", True),
    ("curl -sL https://example.com/fix.patch -o fix.patch", "patch-file", True),
    ("git -C /workspace/vllm am 0001-fix.patch", "git-apply", True),
])
def test_single_command_patch_rules(text, kind, sensitive):
    (p,) = analyze_command_line(text, "recipe.yaml", 40).patches
    assert (p.kind, p.sensitive, p.line) == (kind, sensitive, 40)


@pytest.mark.parametrize("text", [
    "sed -i 's/a/b/' /tmp/x.yaml",
    "echo done > /tmp/status.txt",
    "cp results.json /workspace/results/",
    "python3 -c \"open('/tmp/out.json', 'w').write('{}')\"",
    "tee -a server.log",
])
def test_benign_writes_are_not_patches(text):
    assert analyze_command_line(text, "recipe.yaml", 1).patches == []


def test_command_line_launch_with_env_prefix_and_bash_c():
    a = analyze_command_line(
        "SGLANG_SIMULATE_ACC_LEN=3.51 bash -c 'python3 -m sglang.launch_server --speculative_algorithm=EAGLE --tp 4'",
        "recipes/x.yaml", 12)
    assert a.exports["SGLANG_SIMULATE_ACC_LEN"].line == 12
    sl = a.server_launch
    assert sl is not None and sl.line == 12 and sl.flags["speculative-algorithm"].value == "EAGLE"
    assert sl.flags["speculative-algorithm"].original == "--speculative_algorithm"


def test_unparseable_input_never_raises():
    for text in ("if then fi ((( '", "echo $((", "cat <<EOF\nno end", "\x00\x01", "", "a=(", "[[ x =~ (a|b) ]] && x"):
        a = analyze_script(text, "bad.sh")
        assert a.path == "bad.sh"
    a = analyze_script("cat <<EOF\nbody\n", "bad.sh")
    assert any(f.code == "shell-parse" for f in a.findings)


def test_helpers():
    assert normalise_flag("--Speculative_Config") == "speculative-config"
    assert package_name("lm-eval[api]==0.4.9") == "lm-eval"
    assert package_name("git+https://github.com/x/sglang-fork.git@main") == "sglang-fork"
    assert package_name("/w/vllm-0.11.0-cp312-linux_x86_64.whl") == "vllm"


def test_real_recipe_commands(inferencex_dir):
    from recipes.yamlio import load_yaml

    seen = 0
    for path in sorted((inferencex_dir / "inferencex-e2e/benchmarks").rglob("*.yaml")):
        doc = load_yaml(path.read_bytes(), str(path))
        for section in (doc.data or {}).values():
            bench = section.get("benchmark") if isinstance(section, dict) else None
            if isinstance(bench, dict) and isinstance(bench.get("command"), str):
                line = doc.line(next(k for k, v in doc.data.items() if v is section), "benchmark", "command")
                a = analyze_command_line(bench["command"], str(path), line)
                assert not a.findings and not a.patches and a.server_launch is None
                # The recipe runs one of the harness scripts the snapshot also holds.
                harness = a.sources[0].value.removeprefix("/infmax-workspace/")
                assert (inferencex_dir / "inferencex-e2e" / harness).is_file(), harness
                assert a.sources[0].line == line
                seen += 1
    assert seen >= 3
