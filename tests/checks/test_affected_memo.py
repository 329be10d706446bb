"""What the affected rule computes once per point and shares (recipes.launch.path.launch_path.point_memo):
a point's srt-slurm checkout, and its roots under each set of names, must stay the point's own
and must not be shared between answers that differ (a memo key too coarse would)."""
from __future__ import annotations

from checks.context import ReviewContext
from recipes.launch.path import launch_path as lp
from recipes.launch.path.srt_checkout import point_checkout
from tests.builders import RUNNERS, build_snapshot
from tests.checks import test_external_srt_recipe as srt
from tests.checks.test_affected_setup_script import MN_MASTER, MN_RECIPE, READY, RECIPE, SETUP


def _two_prefix_ctx() -> ReviewContext:
    # Two points of one runner label whose clone conditions differ (model prefix dsr1 or not).
    other = srt.MASTER.replace("dsr1-fp4-gb200-dynamo-trt-mtp:", "kimi-fp4-gb200-dynamo-trt-mtp:").replace(
        "model-prefix: dsr1", "model-prefix: kimik2.5")
    head = {"configs/nvidia-master.yaml": srt.MASTER + other, "configs/runners.yaml": srt.RUNNERS,
            "runners/launch_gb200-nv.sh": srt.RUNNER}
    return ReviewContext(build_snapshot({"base": {"configs/runners.yaml": srt.RUNNERS}, "head": head}))


def test_each_point_keeps_its_own_checkout_when_asked_again():
    ctx = _two_prefix_ctx()
    by_key = {p.config_key: p for p in ctx.head_repo.points}
    dsr1, kimi = by_key["dsr1-fp4-gb200-dynamo-trt-mtp"], by_key["kimi-fp4-gb200-dynamo-trt-mtp"]
    first = [point_checkout(ctx, p).checkout.ref for p in (dsr1, kimi, dsr1, kimi)]
    assert first == ["sa-submission-q2-2026", "v1.0.26", "sa-submission-q2-2026", "v1.0.26"]


def test_point_memo_tells_points_apart_by_identity_and_key():
    ctx = _two_prefix_ctx()
    a, b = ctx.head_repo.points[:2]
    calls = []
    for point, key in ((a, "k1"), (b, "k1"), (a, "k2"), (a, "k1"), (b, "k1")):
        lp.point_memo(ctx, key, point, lambda point=point, key=key: calls.append((point.config_key, key)) or len(calls))
    assert calls == [(a.config_key, "k1"), (b.config_key, "k1"), (a.config_key, "k2")]
    assert lp.point_memo(ctx, "k2", a, lambda: "again") == 3


def test_a_points_roots_follow_the_names_asked_even_after_other_names():
    # The roots of a recipe-launched point are shared across the rule's sets of names, but
    # whether the recipe is read depends on the names: asked first with a name the recipe
    # does not hold (the recipe is not read: no setup script), then with the setup script's.
    base = {**RUNNERS, "configs/nvidia-master.yaml": MN_MASTER, RECIPE: MN_RECIPE, SETUP: READY}
    ctx = ReviewContext(build_snapshot(base=base, head={SETUP: READY + "echo edited\n"}))
    point = next(p for p in ctx.head_repo.points if p.launcher is not None and p.launcher.kind != "script")
    setup = SETUP.rsplit("/", 1)[-1]
    shared: dict = {}
    assert lp.affected_roots(ctx, point, {"unrelated.sh"}, shared).files == []
    assert [p for p, _ in lp.affected_roots(ctx, point, {setup}, shared).files] == [SETUP]
    assert lp.affected_roots(ctx, point, {"unrelated.sh"}, shared).files == []


def test_a_files_analysis_is_kept_per_source_view_and_per_text():
    # read_analysis keeps what it read per source view and path: another view, or other bytes
    # at that path in the same view, is read again.
    from recipes.source import MemorySource

    base, head = MemorySource({"x.sh": "echo a\n"}), MemorySource({"x.sh": "echo b\n"})
    a, b = lp.read_analysis(base, "x.sh"), lp.read_analysis(head, "x.sh")
    assert [c.argv for c in a.commands] == [["echo", "a"]] and [c.argv for c in b.commands] == [["echo", "b"]]
    assert lp.read_analysis(base, "x.sh") is a
    base._files["x.sh"] = b"echo c\n"
    assert [c.argv for c in lp.read_analysis(base, "x.sh").commands] == [["echo", "c"]]
    assert lp.read_analysis(base, "missing.sh") is None


GB300_RUNNER = """#!/usr/bin/env bash
if [[ $PRECISION == "fp8" ]]; then
    git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"
    cd "$SRT_REPO_DIR"
    git checkout v1.0.30
else
    git clone https://github.com/NVIDIA/srt-slurm.git "$SRT_REPO_DIR"
    cd "$SRT_REPO_DIR"
    git checkout v1.0.31
fi
srtctl apply -f "$CONFIG_FILE"
"""


def test_each_runner_label_reads_its_own_scripts_conditions(monkeypatch):
    # A label's runner scripts and the variables their conditions read are kept once per label
    # (srt_checkout `_point_checkout`): a point of gb300 must not be asked about gb200's
    # FRAMEWORK and MODEL_PREFIX, nor take gb200's checkout, whichever label is asked first.
    import recipes.launch.path.srt_checkout as sc

    calls = []
    real = sc.runner_checkout
    monkeypatch.setattr(sc, "runner_checkout", lambda a, runner, env: calls.append((runner, env)) or real(a, runner, env))
    other = srt.MASTER.replace("dsr1-fp4-gb200-dynamo-trt-mtp:", "dsr1-fp4-gb300-dynamo-trt-mtp:").replace(
        "runner: gb200", "runner: gb300")
    runners = srt.RUNNERS + "  gb300: [gb300-nv_0]\n"
    head = {"configs/nvidia-master.yaml": srt.MASTER + other, "configs/runners.yaml": runners,
            "runners/launch_gb200-nv.sh": srt.RUNNER, "runners/launch_gb300-nv.sh": GB300_RUNNER}
    ctx = ReviewContext(build_snapshot({"base": {"configs/runners.yaml": runners}, "head": head}))
    by_key = {p.config_key: p for p in ctx.head_repo.points}
    gb200, gb300 = by_key["dsr1-fp4-gb200-dynamo-trt-mtp"], by_key["dsr1-fp4-gb300-dynamo-trt-mtp"]
    assert [point_checkout(ctx, p).checkout.ref for p in (gb300, gb200)] == ["v1.0.31", "sa-submission-q2-2026"]
    assert calls == [("runners/launch_gb300-nv.sh", {"PRECISION": "fp4"}),
                     ("runners/launch_gb200-nv.sh", {"FRAMEWORK": "dynamo-trt", "MODEL_PREFIX": "dsr1"})]
