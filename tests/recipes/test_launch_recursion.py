"""A function that calls itself from the very state its active call started from, under a branch
that call did not decide (recipes.launch.shell `Interpreter._not_again`): the call is not
interpreted again, what it can assign is unknown after it, and nothing the recursion runs is
hidden: a call that starts from another state is still followed."""
from __future__ import annotations

import pytest

from recipes.launch.compare import opaque
from recipes.launch.recursion import assigned_names
from recipes.launch.trace import UNKNOWN, WRITE
from recipes.launch.words import Unknown
from tests.recipes.test_launch_leaving import run_real

# benchmarks/benchmark_lib.sh `_background_process_descendants` (2026), with `ls` for pgrep.
DESCENDANTS = """\
_background_process_descendants() {
    local parent_pid="$1"
    local child_pid
    while read -r child_pid; do
        [[ -n "$child_pid" ]] || continue
        echo "$child_pid"
        _background_process_descendants "$child_pid"
    done < <(curl -s "http://127.0.0.1/$parent_pid" 2>/dev/null || true)
}
sleep 100 &
descendants=$(_background_process_descendants "$!")
serve --port 8000
"""


def test_a_recursion_over_unknown_output_ends_and_the_launch_goes_on():
    it, state = run_real(DESCENDANTS)
    assert not any("the interpretation stopped" in e.detail for e in it.trace.of(UNKNOWN))
    assert [e.argv for e in it.trace.effects if e.argv[:1] == ("serve",)] == [("serve", "--port", "8000")]
    assert isinstance(state.get("descendants"), Unknown)
    assert it.steps < 300  # to the depth cap: about 1,300


def test_a_recursive_call_from_another_state_is_followed():
    # The first call writes nothing; the second starts with DEST set to an engine's package
    # folder: it is interpreted, and its write is in the trace (Check 10's material).
    it, _ = run_real("""\
patch_tree() {
    if [[ -n "$DEST" ]]; then
        cp fix.py "$DEST/fix.py"
    fi
    DEST=/usr/local/lib/python3.12/dist-packages/vllm
    while read -r sub; do
        patch_tree "$sub"
    done < <(curl -s "$1")
}
DEST=""
patch_tree /opt/patches
serve --port 8000
""")
    writes = [e.path for e in it.trace.of(WRITE)]
    assert writes and set(writes) == {"/usr/local/lib/python3.12/dist-packages/vllm/fix.py"}
    assert not any(opaque(e) for e in it.trace.effects)


def test_what_the_call_not_followed_assigns_is_unknown_after_it():
    # Bash leaves LEVEL=out after every call of walk; the call not followed must not leave "in".
    it, _ = run_real("""\
walk() {
    LEVEL=in
    while read -r s; do
        walk "$s"
        run "$LEVEL"
        LEVEL=in
    done < <(curl -s "$1")
    LEVEL=out
}
walk /opt
""")
    seen = [e.argv[1] for e in it.trace.effects if e.argv[:1] == ("run",)]
    assert "out" in seen and "in" not in seen
    assert any(isinstance(v, Unknown) for v in seen)


def test_a_call_not_followed_that_may_write_files_is_not_understood():
    it, _ = run_real("""\
walk() {
    while read -r s; do
        walk "$s"
    done < <(curl -s "$1")
    echo done > /tmp/walked
}
walk /opt
""")
    assert any(opaque(e) and "recursive call" in e.detail for e in it.trace.of(UNKNOWN))


@pytest.mark.parametrize("body", [
    'eval "$1=x"', 'printf -v "$1" %s x', 'declare -n ref=$1; ref=x', 'read -r "$1"', '"$1" x',
    'cd "$1"', 'trap "run" EXIT', 'export X=1', '(( $1 = 2 ))', 'g() { :; }', 'unset X',
])
def test_text_that_may_assign_a_name_it_does_not_spell_is_not_read(body):
    _, state = run_real(f"f() {{\n    {body}\n    f y\n}}\n")
    assert assigned_names("f", state.functions) is None


def test_the_names_a_function_assigns_outside_its_locals():
    _, state = run_real("""\
g() { G_SET=1; }
f() {
    local a="$1" b
    read -r b c
    x[1]=2
    printf -v w %s 1
    echo "${q:=3}" $((k++))
    for j in 1 2; do :; done
    mapfile -t arr < /dev/null
    g
    f "$b"
}
""")
    assert assigned_names("f", state.functions) == {"c", "REPLY", "x", "w", "q", "k", "j", "arr", "MAPFILE",
                                                   "G_SET"}
