"""Loops that reach a fixed point (recipes.launch.control `ControlFlow._widened`): a `for` loop
over many known words whose passes start from the same state, but for the loop's variable, runs
one more pass standing for all the remaining ones. What the launch does and the values after
the loop must be what bash could do."""
from __future__ import annotations

from recipes.launch.trace import EXEC
from recipes.launch.words import OneOf, Unknown
from tests.recipes.test_launch_leaving import run_real

# benchmarks/benchmark_lib.sh `wait_for_amd_gpu_clean` (2026), with `curl` for rocm-smi.
POLL = """\
wait_clean() {
    local gpu_clean=false vram_max i
    for i in $(seq 1 90); do
        vram_max=$(curl --silent http://127.0.0.1/vram)
        if [ "${vram_max:-0}" -le 10 ]; then
            echo "GPUs clean (vram%max=$vram_max after $((i * 10))s)"
            gpu_clean=true
            break
        fi
        if [ "$i" -eq 50 ]; then
            run halfway
        fi
        echo "waiting: vram%max=$vram_max"
        sleep 10
    done
    LAST_I=$i
    CLEAN=$gpu_clean
    if [ "$gpu_clean" != "true" ]; then
        return 1
    fi
}
wait_clean
serve --port 8000
"""


def _runs(it, name):
    return [e for e in it.trace.of(EXEC) if e.argv and e.argv[0] == name]


def test_a_poll_loop_at_its_fixed_point_runs_a_few_passes_not_ninety():
    it, state = run_real(POLL)
    assert it.steps < 600  # 90 passes cost about 2,900 steps
    assert len(_runs(it, "sleep")) < 5
    # What a later pass does that earlier ones do not is still there, under the loop's value.
    halfway = _runs(it, "run")
    assert halfway and all(e.under for e in halfway)
    assert any("-eq 50" in u for e in halfway for u in e.under)
    # After the loop: the variable is any pass's value, the flag either; the server is reached.
    assert isinstance(state.get("LAST_I"), Unknown)
    assert isinstance(state.get("CLEAN"), OneOf) and set(state.get("CLEAN").values) == {"true", "false"}
    assert [e.argv for e in _runs(it, "serve")] == [("serve", "--port", "8000")]


def test_a_loop_that_runs_to_its_end_leaves_the_last_word():
    _, state = run_real("for i in $(seq 1 20); do sleep 1; done\nLAST=$i\n")
    assert state.get("LAST") == "20"


def test_a_loop_whose_passes_change_the_state_is_run_pass_by_pass():
    _, state = run_real("n=0\nfor i in $(seq 1 20); do n=$((n + 2)); sleep 1; done\n")
    assert state.get("n") == "40"


def test_what_the_remaining_passes_print_is_not_taken_for_one_pass():
    _, state = run_real('OUT=$(for i in $(seq 1 12); do echo x; done)\n')
    out = state.get("OUT")
    assert out == "x\n" * 11 + "x" or (isinstance(out, Unknown) and out.prefix.startswith("x\nx"))


def test_a_pass_that_changes_a_file_the_next_reads_is_no_fixed_point():
    # No variable changes from pass to pass, but the file does: every pass is run.
    _, state = run_real('echo 1 > count\nfor i in $(seq 1 12); do echo "x$(cat count)" > count; done\n'
                        'FINAL=$(cat count)\n')
    assert state.get("FINAL") == "x" * 12 + "1"


def test_eight_servers_on_eight_ports_keep_each_port():
    it, _ = run_real("for p in $(seq 8000 8007); do serve --port $p & done\n")
    assert [e.argv[2] for e in _runs(it, "serve")] == [str(p) for p in range(8000, 8008)]


def test_few_remaining_values_are_alternatives():
    # Nine words: the fixed point is seen at the third pass (the first starts before `v` is set).
    it, _ = run_real("for w in a b c d e f g h i; do v=$(curl -s x); serve --name \"$w\"; done\n")
    names = [e.argv[2] for e in _runs(it, "serve")]
    assert names[:2] == ["a", "b"]
    assert set(names[2:]) >= {"c", "i"} or any(isinstance(n, Unknown) for n in names[2:])
    assert len(names) < 9
