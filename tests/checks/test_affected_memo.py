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
