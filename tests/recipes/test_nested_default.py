"""`${A:-${B}/x}`: a default that names another variable is expanded like any word.

benchmark_lib.sh sets `AGENTIC_DIR="${AGENTIC_DIR:-${INFMAX_CONTAINER_WORKSPACE}/utils/agentic-benchmark}"`;
the default once stopped at its first `}` and the path became
`${INFMAX_CONTAINER_WORKSPACE/utils/agentic-benchmark}`, which names no file."""
from __future__ import annotations

from recipes.scripts import analyze_script

TEXT = """\
ROOT="${ROOT:-/workspace}"
AGENTIC_DIR="${AGENTIC_DIR:-${ROOT}/utils/agentic-benchmark}"
PLAIN="${PLAIN:-$ROOT/plain}"
UNKNOWN_DEFAULT="${UNKNOWN_DEFAULT:-${NOT_SET_HERE}/x}"
python3 "$AGENTIC_DIR/scripts/analyze.py"
"""


def test_nested_defaults_resolve_through_known_variables_only():
    a = analyze_script(TEXT, "benchmarks/benchmark_lib.sh")
    got = {name: loc.resolved for name, loc, _ in a.assignments}
    assert got["AGENTIC_DIR"] == "/workspace/utils/agentic-benchmark"
    assert got["PLAIN"] == "/workspace/plain"
    assert got["UNKNOWN_DEFAULT"] == "${NOT_SET_HERE}/x"
    assert a.commands[-1].expanded[1] == "/workspace/utils/agentic-benchmark/scripts/analyze.py"
