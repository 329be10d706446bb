"""Multi-node CONFIG_FILE recipes read from the srt-slurm checkout the point's runner makes.

A multi-node arm names its recipe by its path inside that checkout (`recipes/trtllm/...`).
A recipe committed here (under benchmarks/multi_node/srt-slurm-recipes/) is read; one that
is not is read where the runner's commands for this point put it (recipes.launch.path.srt_checkout): a
folder of this repository the runner copies in, or the cloned repository at the ref the
runner pins, when the bot has that repository. Otherwise Checks 8-10 stay "could not verify"
and say which repository, ref and runner line decide it.
"""
from __future__ import annotations

from checks.engine import evaluate
from checks.render import render_markdown
from checks.result import split_external
from checks.snapshot import ExternalTree, Unavailable
from recipes.source import MemorySource
from tests.builders import build_snapshot

CONFIG = "recipes/trtllm/gb200-fp4/1k1k/mtp/ctx1_gen1_dep32_batch4_eplb0_mtp3.yaml"
IN_REPO = "benchmarks/multi_node/srt-slurm-recipes/trtllm/gb200-fp4/1k1k/mtp/ctx1_gen1_dep32_batch4_eplb0_mtp3.yaml"
SHA = "ab" * 20
MASTER = f"""dsr1-fp4-gb200-dynamo-trt-mtp:
  image: nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc5
  model: nvidia/DeepSeek-R1-0528-FP4
  model-prefix: dsr1
  runner: gb200
  precision: fp4
  framework: dynamo-trt
  multinode: true
  disagg: true
  scenarios:
    fixed-seq-len:
    - isl: 1024
      osl: 1024
      search-space:
      - conc-list: [4]
        spec-decoding: mtp
        prefill:
          num-worker: 1
          tp: 4
          ep: 4
          dp-attn: true
          additional-settings:
          - "CONFIG_FILE={CONFIG}"
        decode: {{num-worker: 1, tp: 32, ep: 32, dp-attn: true}}
"""
# Shaped like runners/launch_gb200-nv.sh: one clone per framework/model branch, a pinned ref,
# and a folder of this repository copied over the checkout for some of them.
RUNNER = """#!/usr/bin/env bash
set -x
if [[ $FRAMEWORK == "dynamo-vllm" ]]; then
    git clone --branch cam/sa-submission-q2-2026 --single-branch https://github.com/cquil11/srt-slurm-nv.git "$SRT_REPO_DIR"
    cd "$SRT_REPO_DIR"
elif [[ $FRAMEWORK == "dynamo-trt" && $MODEL_PREFIX == "dsr1" ]]; then
    git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"
    cd "$SRT_REPO_DIR" || exit 1
    git checkout sa-submission-q2-2026
else
    git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"
    cd "$SRT_REPO_DIR"
    git checkout v1.0.26
fi
srtctl apply -f "$CONFIG_FILE"
"""
RUNNERS = "labels:\n  gb200: [gb200-nv_0, gb200-nv_1]\n"
RECIPE = """name: ctx1_gen1
model: {path: dsr1-fp4, container: nvcr.io/nvidia/tensorrt-llm/release:1.3.0rc5, precision: fp4}
resources: {gpu_type: gb200, gpus_per_node: 4, prefill_nodes: 1, decode_nodes: 8, prefill_workers: 1, decode_workers: 1}
backend:
  type: trtllm
  trtllm_config:
    prefill: {tensor_parallel_size: 4, moe_expert_parallel_size: 4, enable_attention_dp: true}
    decode: {tensor_parallel_size: 32, moe_expert_parallel_size: 32, enable_attention_dp: true}
benchmark: {type: sa-bench, isl: 1024, osl: 1024, concurrencies: '4'}
"""


class Reader:
    """An ExternalReader over in-memory trees, recording what was asked."""

    def __init__(self, trees: dict[tuple[str, str], dict[str, str] | Unavailable]):
        self.trees, self.asked = trees, []

    def __call__(self, repo: str, ref: str):
        self.asked.append((repo, ref))
        tree = self.trees.get((repo, ref))
        if tree is None or isinstance(tree, Unavailable):
            return tree
        return ExternalTree(repo=repo, ref=ref, sha=SHA, source=MemorySource(tree))


def _verdict(head_extra: dict[str, str] | None = None, runner: str = RUNNER, reader: Reader | None = None,
             master: str = MASTER):
    head = {"configs/nvidia-master.yaml": master, "configs/runners.yaml": RUNNERS, "runners/launch_gb200-nv.sh": runner}
    head.update(head_extra or {})
    snap = build_snapshot({"base": {"configs/runners.yaml": RUNNERS}, "head": head})
    if reader is not None:
        snap = snap.model_copy(update={"external": reader})
    return evaluate(snap, only={8, 9, 10})


def _rows(*args, **kwargs):
    verdict = _verdict(*args, **kwargs)
    return {n: verdict.row(n) for n in (8, 9, 10)}


def test_without_the_cloned_repository_it_is_could_not_verify_naming_repository_ref_and_runner_line():
    rows = _rows()
    for n in (8, 9, 10):
        row = rows[n]
        assert row.status.value == "FAIL", (n, row.reason)
        assert row.reason.startswith("could not verify"), row.reason
        # The branch this point takes (dynamo-trt, dsr1), not the others.
        assert "NVIDIA/srt-slurm at sa-submission-q2-2026 (runners/launch_gb200-nv.sh:9)" in row.reason, row.reason
        assert "v1.0.26" not in row.reason and "cquil11" not in row.reason
        assert "--external-repo NVIDIA/srt-slurm=DIR" in row.reason and CONFIG in row.reason
        assert any(e.unavailable for e in row.evidence)


def test_the_recipe_is_read_from_the_cloned_repository_at_the_ref_this_point_takes():
    reader = Reader({("NVIDIA/srt-slurm", "sa-submission-q2-2026"): {CONFIG: RECIPE}})
    rows = _rows(reader=reader)
    assert reader.asked == [("NVIDIA/srt-slurm", "sa-submission-q2-2026")]
    assert rows[9].status.value == "PASS", rows[9].reason
    assert "sa-bench without benchmark.use_chat_template" in rows[9].reason
    assert rows[10].status.value == "PASS", rows[10].reason
    cited = [split_external(e.path) for e in rows[9].evidence if split_external(e.path)]
    assert cited and cited[0] == ("NVIDIA/srt-slurm", SHA, CONFIG)


def test_a_violation_in_the_cloned_recipe_fails_and_links_to_that_repository():
    bad = RECIPE.replace("concurrencies: '4'}", "concurrencies: '4', use_chat_template: false}")
    verdict = _verdict(reader=Reader({("NVIDIA/srt-slurm", "sa-submission-q2-2026"): {CONFIG: bad}}))
    row = verdict.row(9)
    assert row.status.value == "FAIL" and not row.reason.startswith("could not verify"), row.reason
    assert f"https://github.com/NVIDIA/srt-slurm/blob/{SHA}/{CONFIG}" in render_markdown(verdict)


def test_a_ref_without_the_file_or_an_unreadable_clone_is_could_not_verify():
    rows = _rows(reader=Reader({("NVIDIA/srt-slurm", "sa-submission-q2-2026"): {"recipes/other.yaml": RECIPE}}))
    assert rows[8].reason.startswith("could not verify") and f"commit {SHA[:12]}), which has no {CONFIG}" in rows[8].reason
    down = Reader({("NVIDIA/srt-slurm", "sa-submission-q2-2026"): Unavailable(reason="HTTP 502")})
    rows = _rows(reader=down)
    assert rows[9].status.value == "FAIL" and "could not be read: HTTP 502" in rows[9].reason


def test_a_clone_under_a_condition_the_bot_cannot_evaluate_is_could_not_verify_naming_it():
    runner = RUNNER.replace('if [[ $FRAMEWORK == "dynamo-vllm" ]]', 'if [[ -f "$HOME/.use-fork" ]]')
    rows = _rows(runner=runner, reader=Reader({}))
    assert rows[8].reason.startswith("could not verify") and "runners/launch_gb200-nv.sh:4 decides" in rows[8].reason


def test_a_repository_outside_the_policy_is_not_read():
    runner = RUNNER.replace("https://github.com/NVIDIA/srt-slurm.git \"$SRT_REPO_DIR\"\n    cd \"$SRT_REPO_DIR\" || exit 1",
                            "https://github.com/someone/srt-slurm.git \"$SRT_REPO_DIR\"\n    cd \"$SRT_REPO_DIR\" || exit 1")
    reader = Reader({("someone/srt-slurm", "sa-submission-q2-2026"): {CONFIG: RECIPE}})
    rows = _rows(runner=runner, reader=reader)
    assert reader.asked == []
    assert rows[9].status.value == "FAIL" and "not a recipe repository the bot reads" in rows[9].reason


# runners/launch_b200-dgxc.sh copies trtllm/kimi-k2.5/disagg/... over recipes/trtllm/kimi-k25-nvfp4/...
KIMI_CONFIG = "recipes/trtllm/kimi-k25-nvfp4/b200-fp4/1k1k.yaml"
KIMI_SOURCE = "benchmarks/multi_node/srt-slurm-recipes/trtllm/kimi-k2.5/disagg/trtllm_dynamo/b200-fp4/1k1k.yaml"
KIMI_RUNNER = RUNNER.replace("    git checkout v1.0.26\n", "    git checkout v1.0.26\n    mkdir -p recipes/trtllm/kimi-k25-nvfp4\n"
                             "    cp -rT \"$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/trtllm/kimi-k2.5/disagg/"
                             "trtllm_dynamo/b200-fp4\" recipes/trtllm/kimi-k25-nvfp4/b200-fp4\n")
KIMI_MASTER = MASTER.replace(CONFIG, KIMI_CONFIG).replace("model-prefix: dsr1", "model-prefix: kimik2.5")


def test_a_folder_the_runner_copies_into_the_checkout_is_read_from_this_repository():
    source, runner, master = KIMI_SOURCE, KIMI_RUNNER, KIMI_MASTER
    reader = Reader({})
    rows = _rows({source: RECIPE}, runner=runner, reader=reader, master=master)
    assert reader.asked == []  # the copy provides it: no clone is read
    assert rows[9].status.value == "PASS", rows[9].reason
    assert any(e.path == source for e in rows[9].evidence), rows[9].evidence
    missing = _rows(runner=runner, reader=reader, master=master)
    assert "copied into the srt-slurm checkout from" in missing[8].reason and source in missing[8].reason


def test_recipe_committed_here_is_read():
    rows = _rows({IN_REPO: RECIPE})
    for n in (8, 9, 10):
        assert "srt-slurm checkout" not in rows[n].reason, (n, rows[n].reason)
    assert rows[9].status.value == "PASS" and "sa-bench without benchmark.use_chat_template" in rows[9].reason
    assert rows[10].status.value == "PASS"


def test_no_runner_clone_keeps_the_not_in_this_repository_reason():
    rows = _rows(runner="#!/usr/bin/env bash\nsrtctl apply -f \"$CONFIG_FILE\"\n")
    assert "no runner script of this point makes one the bot can read" in rows[8].reason


def test_an_edit_of_a_copied_folder_affects_the_points_whose_recipe_it_is():
    source, runner, master = KIMI_SOURCE, KIMI_RUNNER, KIMI_MASTER
    tree = {"configs/nvidia-master.yaml": master, "configs/runners.yaml": RUNNERS, "runners/launch_gb200-nv.sh": runner}
    edited = RECIPE.replace("concurrencies: '4'}", "concurrencies: '4', use_chat_template: false}")
    snap = build_snapshot({"base": {**tree, source: RECIPE}, "head": {source: edited}})
    verdict = evaluate(snap, only={9})
    row = verdict.row(9)
    assert row.status.value == "FAIL" and "use_chat_template" in row.reason, row.reason
    assert any(e.path == source for e in row.evidence)
    # The same edit under a runner that copies nothing there affects no point.
    plain = build_snapshot({"base": {**tree, "runners/launch_gb200-nv.sh": RUNNER, source: RECIPE},
                            "head": {source: edited}})
    assert evaluate(plain, only={9}).row(9).status.value == "N/A"


def test_a_setup_script_only_the_cloned_repository_holds_is_read_from_its_configs_folder():
    with_setup = RECIPE.replace("backend:\n", "setup_script: deps.sh\nbackend:\n")
    plain = Reader({("NVIDIA/srt-slurm", "sa-submission-q2-2026"): {"configs/deps.sh": "#!/bin/bash\npip install msgpack\n"}})
    rows = _rows({IN_REPO: with_setup}, reader=plain)
    assert rows[10].status.value == "PASS", rows[10].reason
    patched = Reader({("NVIDIA/srt-slurm", "sa-submission-q2-2026"): {"configs/deps.sh": (
        "#!/bin/bash\nsed -i 's/a/b/' /usr/local/lib/python3.12/dist-packages/tensorrt_llm/serve/openai_server.py\n")}})
    rows = _rows({IN_REPO: with_setup}, reader=patched)
    assert rows[10].status.value == "FAIL" and not rows[10].reason.startswith("could not verify"), rows[10].reason
    assert any(split_external(e.path) == ("NVIDIA/srt-slurm", SHA, "configs/deps.sh") for e in rows[10].evidence)
    # Without the clone (or when it lacks the file) the setup script stays unread: not a PASS.
    rows = _rows({IN_REPO: with_setup}, reader=None)
    assert rows[10].status.value == "FAIL" and ("srtctl runs it from the checkout of NVIDIA/srt-slurm at "
                                                "sa-submission-q2-2026 (runners/launch_gb200-nv.sh:9), and the bot "
                                                "was given no copy of NVIDIA/srt-slurm") in rows[10].reason, rows[10].reason
    for reader in (Reader({("NVIDIA/srt-slurm", "sa-submission-q2-2026"): {}}),):
        rows = _rows({IN_REPO: with_setup}, reader=reader)
        assert rows[10].status.value == "FAIL" and "deps.sh" in rows[10].reason, rows[10].reason
    assert ("deps.sh named at benchmarks/multi_node/srt-slurm-recipes/trtllm/gb200-fp4/1k1k/mtp/"
            "ctx1_gen1_dep32_batch4_eplb0_mtp3.yaml:4 is not in this repository, and neither is it under configs/ and "
            "configs/patches/ of NVIDIA/srt-slurm at sa-submission-q2-2026, which runners/launch_gb200-nv.sh:9 checks "
            "out") in rows[10].reason, rows[10].reason
    # A file it runs that the checkout does not hold, or one outside the /configs mount, is unread.
    runs_more = Reader({("NVIDIA/srt-slurm", "sa-submission-q2-2026"): {"configs/deps.sh": (
        "#!/bin/bash\nbash /configs/install.sh\nsource ./local.sh\n")}})
    rows = _rows({IN_REPO: with_setup}, reader=runs_more)
    assert rows[10].status.value == "FAIL" and "runs files the bot does not follow there" in rows[10].reason, rows[10].reason
    assert "line 2: /configs/install.sh, which that checkout does not hold" in rows[10].reason, rows[10].reason
    assert "line 3: ./local.sh, a path outside the checkout's /configs mount" in rows[10].reason, rows[10].reason


def test_a_setup_script_under_configs_patches_is_found_as_newer_srtctl_finds_it():
    with_setup = RECIPE.replace("backend:\n", "setup_script: deps.sh\nbackend:\n")
    reader = Reader({("NVIDIA/srt-slurm", "sa-submission-q2-2026"): {"configs/patches/deps.sh": "#!/bin/bash\npip install msgpack\n"}})
    rows = _rows({IN_REPO: with_setup}, reader=reader)
    assert rows[10].status.value == "PASS", rows[10].reason


def test_hostile_clones_and_paths_are_never_read():
    # A clone URL from a variable, another host, a ref from a variable, a CONFIG_FILE leaving the checkout.
    nvidia = 'https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"\n    cd "$SRT_REPO_DIR" || exit 1'
    cases = {
        "variable URL": (RUNNER.replace(nvidia, '"$POWER_SRT_SLURM_URL" "$SRT_REPO_DIR"\n    cd "$SRT_REPO_DIR" || exit 1'), MASTER,
                         "not a GitHub repository the bot can name"),
        "other host": (RUNNER.replace(nvidia, 'https://gitlab.example/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"\n'
                                              '    cd "$SRT_REPO_DIR" || exit 1'), MASTER, "not a GitHub repository"),
        "variable ref": (RUNNER.replace("git checkout sa-submission-q2-2026", 'git checkout "$SRT_REF"'), MASTER,
                         "a ref the bot cannot resolve"),
        "escaping path": (RUNNER, MASTER.replace(CONFIG, "recipes/../../../etc/passwd.yaml"), "leaves the srt-slurm checkout"),
        "escaping ref": (RUNNER.replace("git checkout sa-submission-q2-2026", "git checkout ../../orgs/x"), MASTER,
                         "a ref the bot cannot resolve"),
    }
    for name, (runner, master, said) in cases.items():
        reader = Reader({("NVIDIA/srt-slurm", "sa-submission-q2-2026"): {CONFIG: RECIPE}})
        rows = _rows(runner=runner, reader=reader, master=master)
        for n in (8, 9, 10):
            assert rows[n].status.value == "FAIL" and rows[n].reason.startswith("could not verify"), (name, rows[n].reason)
        assert said in rows[9].reason, (name, rows[9].reason)
        assert reader.asked == [], name


def test_a_folder_copy_whose_landing_place_depends_on_the_disk_is_not_trusted():
    from recipes.launch.path.srt_checkout import Checkout, _copy

    folder = _copy(["cp", "-r", "$GITHUB_WORKSPACE/benchmarks/x/kimi", "recipes/kimi"], 3)
    assert folder is not None and not folder.certain  # recipes/kimi or recipes/kimi/kimi
    exact = _copy(["cp", "-rT", "$GITHUB_WORKSPACE/benchmarks/x/kimi", "recipes/kimi"], 3)
    into = _copy(["cp", "$GITHUB_WORKSPACE/benchmarks/x/a.yaml", "recipes/k/"], 4)
    assert exact.certain and into.certain
    co = Checkout(runner="r.sh", line=1, url="u", repo="NVIDIA/srt-slurm", ref="main", ref_line=1, copies=(exact, into))
    assert co.locate("recipes/kimi/1k1k.yaml")[0] == "benchmarks/x/kimi/1k1k.yaml"
    assert co.locate("recipes/k/a.yaml")[0] == "benchmarks/x/a.yaml"
    assert co.locate("recipes/other.yaml") is None
    assert _copy(["cp", "-rT", "$GITHUB_WORKSPACE/../../etc", "recipes/x"], 5) is None


def test_points_sharing_a_missing_cloned_recipe_each_cite_their_own_line():
    # Two entries name the same CONFIG_FILE; the clone lacks it: each point's reason names its
    # own entry, though the clone is read once.
    from checks.context import ReviewContext
    from recipes.launch.path.serving import serving_views

    second = MASTER.replace("dsr1-fp4-gb200-dynamo-trt-mtp:", "dsr1-fp4-gb200-dynamo-trt-mtp-b:")
    reader = Reader({("NVIDIA/srt-slurm", "sa-submission-q2-2026"): {}})
    head = {"configs/nvidia-master.yaml": MASTER + second, "configs/runners.yaml": RUNNERS,
            "runners/launch_gb200-nv.sh": RUNNER}
    snap = build_snapshot({"base": {"configs/runners.yaml": RUNNERS}, "head": head}).model_copy(
        update={"external": reader})
    views = serving_views(ReviewContext(snap))
    cited = sorted(v.unavailable.split(" is read from")[0].rsplit(":", 1)[1] for v in views)
    assert len(views) == 2 and len(set(cited)) == 2, [v.unavailable for v in views]
    assert all("which has no" in v.unavailable for v in views)
    assert reader.asked == [("NVIDIA/srt-slurm", "sa-submission-q2-2026")]


def test_points_share_a_checkout_answer_unless_a_variable_its_conditions_name_differs(monkeypatch):
    # The runner's clone conditions name FRAMEWORK and MODEL_PREFIX only: the four points (two
    # model prefixes, two concurrencies each) make two checkouts, each decided once.
    import recipes.launch.path.srt_checkout as sc

    calls = []
    real = sc.runner_checkout
    monkeypatch.setattr(sc, "runner_checkout", lambda a, runner, env: calls.append(env) or real(a, runner, env))
    other = MASTER.replace("dsr1-fp4-gb200-dynamo-trt-mtp:", "kimi-fp4-gb200-dynamo-trt-mtp:").replace(
        "model-prefix: dsr1", "model-prefix: kimik2.5")
    master = (MASTER + other).replace("conc-list: [4]", "conc-list: [4, 8]")
    reader = Reader({("NVIDIA/srt-slurm", "sa-submission-q2-2026"): {CONFIG: RECIPE},
                     ("NVIDIA/srt-slurm", "v1.0.26"): {CONFIG: RECIPE}})
    verdict = _verdict(reader=reader, master=master)
    assert sorted(reader.asked) == [("NVIDIA/srt-slurm", "sa-submission-q2-2026"), ("NVIDIA/srt-slurm", "v1.0.26")]
    assert verdict.row(9).status.value == "PASS", verdict.row(9).reason
    assert sorted(e["MODEL_PREFIX"] for e in calls) == ["dsr1", "kimik2.5"]
    # Only the variables the conditions refer to: not MODEL (`$MODEL_PREFIX` holds its name), not CONC.
    assert all(set(e) == {"FRAMEWORK", "MODEL_PREFIX"} for e in calls), calls
