"""A PR whose only changed files are other nodes' runner entry scripts walks no runner-chosen
chain (the sweep runs `runners/launch_<node>.sh` only on its own nodes): #2099 edited
launch_gb300-nv.sh, and every AMD disagg point's chain was walked to learn it was not affected
(0.7 s of a 2 s verdict). A change any chain can reach is still followed."""
from __future__ import annotations

import checks.context as context_module
from checks.context import ReviewContext
from tests.builders import build_snapshot
from tests.checks.test_runner_launch import SGLANG, U, _files

OTHER = "runners/launch_gb300-nv.sh"


def _walks(monkeypatch, base: dict[str, str], head: dict[str, str]) -> tuple[int, list]:
    import recipes.launch.path.runner_launch as rl

    calls = []
    real = rl.runner_chain

    def counting(ctx, point):
        calls.append(point.point_id)
        return real(ctx, point)

    monkeypatch.setattr(rl, "runner_chain", counting)
    points = ReviewContext(build_snapshot({"base": base, "head": head})).affected.points
    return len(calls), points


def test_another_nodes_runner_script_alone_walks_no_chain(monkeypatch):
    base = {**_files(), OTHER: "#!/usr/bin/env bash\necho gb300\n"}
    walks, points = _walks(monkeypatch, base, {**base, OTHER: "#!/usr/bin/env bash\necho gb300 v2\n"})
    assert walks == 0 and points == []


def test_a_launcher_that_names_the_runner_script_in_a_comment_does_not_force_the_walk(monkeypatch):
    # Real shape: benchmarks/multi_node/dsv4_fp4_gb200_llmd-vllm-disagg.sh names launch_gb200-nv.sh.
    base = {**_files(), OTHER: "#!/usr/bin/env bash\necho gb300\n",
            "benchmarks/multi_node/x_gb300.sh": "#!/usr/bin/env bash\n# started by runners/launch_gb300-nv.sh\n"}
    walks, points = _walks(monkeypatch, base, {**base, OTHER: "#!/usr/bin/env bash\necho gb300 v2\n"})
    assert walks == 0 and points == []


def test_a_change_a_chain_can_reach_is_still_walked(monkeypatch):
    base = {**_files(), OTHER: "#!/usr/bin/env bash\necho gb300\n"}
    head = {**base, OTHER: "#!/usr/bin/env bash\necho gb300 v2\n",
            f"{U}/server_sglang.sh": SGLANG.format(patch="export SGLANG_X=1")}
    walks, points = _walks(monkeypatch, base, head)
    assert walks >= 1 and {p.config_key for p in points} == {"dsr1-fp8-mi355x-sglang-disagg-mtp"}
    # The point's own runner script changing is walked too; its trace decides: a message it
    # prints changes nothing the point runs, an install on the runner does.
    own = {**base, "runners/launch_mi355x-amds.sh": base["runners/launch_mi355x-amds.sh"] + "echo done\n"}
    walks, points = _walks(monkeypatch, base, own)
    assert walks >= 1 and points == []
    own = {**base, "runners/launch_mi355x-amds.sh": base["runners/launch_mi355x-amds.sh"] + "pip install pyyaml\n"}
    walks, points = _walks(monkeypatch, base, own)
    assert walks >= 1 and points


def test_the_module_imports_runner_chain_where_the_patch_lands():
    # The counting patch above works only if the affected rule looks the function up at call time.
    assert "runner_chain" not in vars(context_module)
