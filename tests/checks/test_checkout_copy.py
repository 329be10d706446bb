"""A runner that stages the checkout in another folder and runs it from there
(`runners/launch_mi300x-amds.sh`: `tar -c` of the checkout, `sbcast` of the archive, `tar -x` into
`/tmp/inferencex-$JOB_ID`, mounted at /workspace): the copy is the checkout, so what runs from it
is the repository's scripts (recipes.launch.fs.Files.copy), and an engine patch applied in the
copy is still one (Check 10)."""
from __future__ import annotations

from checks.engine import evaluate
from recipes.launch.path.trace_affected import head_trace
from recipes.launch.trace import SERVER, UNKNOWN
from tests.builders import build_snapshot
from tests.checks.test_affected import A, A_TEXT, base_tree

SERVER_LINE = "python3 -m sglang.launch_server"
RUNNER = "runners/launch_mi355x-amds.sh"
STAGE = """#!/usr/bin/env bash
JOB_ID=12345
LOCAL_TAR=$(mktemp "/tmp/inferencex-${JOB_ID}.XXXXXX.tar.gz")
REMOTE_TAR="/tmp/inferencex-${JOB_ID}.tar.gz"
REMOTE_WORKSPACE="/tmp/inferencex-${JOB_ID}"
tar -C "$GITHUB_WORKSPACE" --exclude=.git --exclude='*/.git' -czf "$LOCAL_TAR" .
sbcast --jobid="$JOB_ID" --force "$LOCAL_TAR" "$REMOTE_TAR"
srun --jobid="$JOB_ID" bash -c "
    rm -rf '$REMOTE_WORKSPACE'
    mkdir -p '$REMOTE_WORKSPACE'
    tar -C '$REMOTE_WORKSPACE' -xzf '$REMOTE_TAR'
"
{between}srun --jobid="$JOB_ID" --container-image=$IMAGE \\
    --container-mounts=$REMOTE_WORKSPACE:/workspace/ --container-workdir=/workspace/ \\
    --no-container-entrypoint --export=ALL \\
    bash benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x_sglang.sh
"""


def _tree(between: str = "", stage: str = STAGE) -> dict[str, str]:
    tree = base_tree()
    tree["configs/runners.yaml"] = "labels:\n  mi355x:\n    - mi355x-amds_0\n"
    tree[RUNNER] = stage.replace("{between}", between)
    return tree


def _row(head: dict[str, str], between: str = "", stage: str = STAGE):
    return evaluate(build_snapshot(base=_tree(between, stage), head=head), only={10}).row(10)


def test_a_script_run_from_a_staged_copy_is_the_repository_s_and_reaches_its_server():
    from checks.context import ReviewContext

    snap = build_snapshot(base=_tree(), head={A: A_TEXT + "echo touched\n"})
    ctx = ReviewContext(snap)
    point = next(p for p in ctx.head_repo.points if p.config_key == "dsr1-fp8-mi355x-sglang")
    trace = head_trace(ctx, point)
    assert trace is not None
    effects = list(trace.effects())
    assert [e for e in effects if e.kind == SERVER], [e.describe() for e in effects]
    assert not [e for e in effects if e.kind == UNKNOWN], [e.describe() for e in effects if e.kind == UNKNOWN]
    assert A in trace.files


def test_a_clean_change_run_from_the_copy_passes():
    row = _row({A: A_TEXT + "echo touched\n"})
    assert row.status.value == "PASS", row.reason


def test_an_engine_patch_in_the_benchmark_script_run_from_the_copy_fails():
    patch = "sed -i 's/a/b/' /usr/local/lib/python3.12/dist-packages/sglang/srt/x.py\n"
    row = _row({A: A_TEXT.replace(SERVER_LINE, patch + SERVER_LINE)})
    assert row.status.value == "FAIL" and not row.reason.startswith("could not verify"), row.reason
    assert f"{A}:3 in-place edit /usr/local/lib/python3.12/dist-packages/sglang/srt/x.py" in row.reason, row.reason


def test_an_engine_tree_edited_inside_the_copy_is_found():
    # The benchmark script rewrites the engine tree the checkout ships, through the container's
    # mount of the copy: a write into the repository's copy, named as the checkout's file (the
    # copy is in /tmp, which a write in the image would count as scratch).
    edit = "sed -i 's/a/b/' /workspace/sglang/srt/server.py\n"
    row = _row({A: A_TEXT.replace(SERVER_LINE, edit + SERVER_LINE)})
    assert row.status.value == "FAIL" and not row.reason.startswith("could not verify"), row.reason
    assert "in-place edit /github/workspace/sglang/srt/server.py, a folder mounted into" in row.reason, row.reason


def test_a_patch_applied_inside_the_copy_is_found():
    apply = "patch -p1 -d /workspace/vendor < /workspace/fix.diff\n"
    row = _row({A: A_TEXT.replace(SERVER_LINE, apply + SERVER_LINE)})
    assert row.status.value == "FAIL" and not row.reason.startswith("could not verify"), row.reason
    assert "in-place edit (applying a patch) /github/workspace/vendor" in row.reason, row.reason
