"""bench/reach_sound.py over the real data snapshot (../shared): every repository file a point's
trace depends on is on its textual launch path or probed by `Context.affected` (a PR changing it
would not leave the point out). Skips when the snapshot is absent."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("reach_sound", PROJECT / "bench" / "reach_sound.py")
reach_sound = importlib.util.module_from_spec(spec)
spec.loader.exec_module(reach_sound)


def test_no_file_a_trace_depends_on_is_missed_on_the_shared_snapshot():
    from tests.conftest import INFERENCEX
    from checks.context import ReviewContext

    if not (INFERENCEX / "inferencex-e2e").is_dir():
        pytest.skip("../shared/inferencex is not present")
    ctx = ReviewContext(reach_sound.dir_snapshot(INFERENCEX, reach_sound.example_config()))
    result = reach_sound.measure(ctx, "shared snapshot")
    assert result["points"] > 1000 and result["untraced"] == 0
    assert result["misses"] == {}


def test_a_file_only_a_trace_reads_is_a_miss_when_nothing_probes_it():
    # The measurement itself, on a launcher reading a file through a built name with `cat` (a
    # class neither the textual path nor the probes see): the pair is reported, by class.
    from tests.builders import build_snapshot, single_node_entry
    from checks.context import ReviewContext

    launcher = "benchmarks/single_node/fixed_seq_len/dsr1_fp8_mi355x_sglang.sh"
    entry = single_node_entry("dsr1-fp8-mi355x-sglang", image="lmsysorg/sglang:v0.5.12-rocm700-mi35x", model="org/dsr1",
                              prefix="dsr1", runner="mi355x", precision="fp8", framework="sglang", isl=1024, osl=1024,
                              arm="tp: 8, conc-start: 4, conc-end: 8")
    args = "benchmarks/single_node/fixed_seq_len/sglang_args.txt"
    text = 'ARGS=$(cat "$(dirname "$0")/${FRAMEWORK}_args.txt")\npython3 -m sglang.launch_server --model-path $MODEL $ARGS\n'
    tree = {"configs/amd-master.yaml": entry, launcher: text, args: "--tp 8\n"}
    result = reach_sound.measure(ReviewContext(build_snapshot(base=tree, head={})), "fixture")
    assert result["misses"] == {"exec `cat` names it (files digest)": {args: ["dsr1-fp8-mi355x-sglang"]}}
    # Sourced instead, the probe sees the built word: no miss.
    tree[launcher] = 'source "$(dirname "$0")/${FRAMEWORK}_args.txt"\npython3 -m sglang.launch_server --model-path $MODEL\n'
    result = reach_sound.measure(ReviewContext(build_snapshot(base=tree, head={})), "fixture")
    assert result["misses"] == {} and result["outside_text_path"] == {"source (sources)": 2}  # conc 4 and 8
