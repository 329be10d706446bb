"""A recipe's setup_script is on its points' launch path (recipes.launch.path.launch_path rule 3), however the
recipe spells it. The affected rule skips parsing a recipe whose text names no changed file
(`point_roots(names=...)`); a name a YAML escape spells must not slip through that filter. The
script runs in the recipe's container before the servers: an edit of what it does affects the
points (recipes.launch.path.trace_affected), an edit of what it only prints does not."""
from __future__ import annotations

from checks.context import ReviewContext
from tests.builders import RUNNERS, build_snapshot
from tests.recipes.test_history_layouts import MN_MASTER, MN_RECIPE, RECIPE

SETUP = "benchmarks/multi_node/srt-slurm-recipes/configs/kimik3-config-compat.sh"
OTHER = "benchmarks/multi_node/srt-slurm-recipes/configs/unrelated.sh"
KEY = "kimik3-fp4-h200-dynamo-vllm"


READY = "#!/bin/bash\necho ready\npip install --no-deps 'transformers==4.57.1'\n"
EDITED = "#!/bin/bash\necho ready\npip install --no-deps 'transformers==4.58.0'\n"


def _affected(recipe: str, changed: str = SETUP, text: str = EDITED) -> list:
    base = {**RUNNERS, "configs/nvidia-master.yaml": MN_MASTER, RECIPE: recipe,
            SETUP: READY, OTHER: READY}
    head = {changed: text}
    return ReviewContext(build_snapshot(base=base, head=head)).affected.points


def test_editing_the_setup_script_affects_the_points_whose_recipe_runs_it():
    points = _affected(MN_RECIPE)
    assert {p.point.config_key for p in points} == {KEY}
    assert any("kimik3-config-compat.sh" in r for p in points for r in p.reasons), [p.reasons for p in points]


def test_a_setup_script_name_spelled_by_a_yaml_escape_still_counts():
    # "\x2e" is ".": the recipe's text does not hold `kimik3-config-compat.sh`, its value does.
    escaped = MN_RECIPE.replace("setup_script: kimik3-config-compat.sh", 'setup_script: "kimik3-config-compat\\x2esh"')
    assert "kimik3-config-compat.sh" not in escaped
    points = _affected(escaped)
    assert {p.point.config_key for p in points} == {KEY}, [p.reasons for p in points]


def test_a_script_the_recipe_does_not_run_affects_nothing():
    assert _affected(MN_RECIPE, changed=OTHER) == []


def test_an_edit_of_what_the_setup_script_only_prints_affects_nothing():
    assert _affected(MN_RECIPE, text=READY.replace("echo ready", "echo set up")) == []


# A cloned recipe (read from the srt-slurm checkout) whose setup_script the runner copies in
# with this repository's configs/ folder: an edit of that script affects the point; the same
# script not copied in is not the one the recipe runs.
from tests.checks import test_external_srt_recipe as srt  # noqa: E402

COPIED = "benchmarks/multi_node/srt-slurm-recipes/configs/dsr1-setup.sh"
COPY_CONFIGS = srt.RUNNER.replace(
    "    git checkout sa-submission-q2-2026\n",
    "    git checkout sa-submission-q2-2026\n"
    "    cp -rT \"$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/configs\" configs\n")
CLONED = srt.RECIPE.replace("name: ctx1_gen1\n", "name: ctx1_gen1\nsetup_script: dsr1-setup.sh\n")


def _cloned_affected(runner: str, changed: str) -> list:
    base = {"configs/nvidia-master.yaml": srt.MASTER, "configs/runners.yaml": srt.RUNNERS,
            "runners/launch_gb200-nv.sh": runner, COPIED: READY, OTHER: READY}
    snap = build_snapshot(base=base, head={changed: EDITED})
    reader = srt.Reader({("NVIDIA/srt-slurm", "sa-submission-q2-2026"): {srt.CONFIG: CLONED}})
    return ReviewContext(snap.model_copy(update={"external": reader})).affected.points


def test_a_setup_script_copied_into_the_checkout_affects_the_cloned_recipes_points():
    points = _cloned_affected(COPY_CONFIGS, COPIED)
    assert [p.point.config_key for p in points] == ["dsr1-fp4-gb200-dynamo-trt-mtp"], points
    assert any("dsr1-setup.sh" in r for p in points for r in p.reasons), [p.reasons for p in points]


def test_a_runner_that_copies_no_such_file_leaves_the_cloned_points_unaffected():
    assert _cloned_affected(COPY_CONFIGS, OTHER) == []  # copied in, but not run by the recipe
    assert _cloned_affected(srt.RUNNER, COPIED) == []  # not copied in: the recipe runs the checkout's own
