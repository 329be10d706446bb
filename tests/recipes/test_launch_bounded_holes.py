"""Values known only by their characters, through a TRT-LLM launch's config: `seq` of a bound the
point gives, an array the arms of a branch fill differently, a trim, and a YAML here-document that
Check 11 reads around such holes (recipes.launch.chars.yaml_fill)."""
from __future__ import annotations

import yaml

from recipes.launch.chars import INTEGER_LINES, YAML_VALUE_HOLE, words_chars, yaml_fill
from recipes.launch.fs import WORKSPACE, Files
from recipes.launch.shell import Interpreter
from recipes.launch.state import symbol
from recipes.launch.words import HOLE, Holed, Rest, Split, Unknown
from recipes.source import MemorySource

DIGITS = frozenset("0123456789")


def run(text, env=None):
    it = Interpreter(Files(MemorySource({"launch.sh": text})), inputs=env or {})
    state = it.initial_state()
    state.argv0 = f"{WORKSPACE}/launch.sh"
    it.run_top(text, "launch.sh", state)
    return it, state


# The shape of InferenceX's agentic TRT-LLM scripts (minimaxm3_fp4_b200_trt_mtp.sh): CUDA graph
# batch sizes chosen by the concurrency, written into the server's YAML config.
TRT = """\
MAX_BATCH=$CONC
if (( MAX_BATCH <= 20 )); then
    CAPTURE_BATCH_LIST=( $(seq 1 $MAX_BATCH) )
elif (( MAX_BATCH == 25 )); then
    CAPTURE_BATCH_LIST=( $(seq 1 15) 17 19 21 23 25 )
elif (( MAX_BATCH == 40 )); then
    CAPTURE_BATCH_LIST=( $(seq 2 2 40) )
fi
CAPTURE_BATCH_LIST=$(printf "%s, " "${CAPTURE_BATCH_LIST[@]}")
cat << EOF > /tmp/ser.yaml
max_batch_size: $MAX_BATCH
cuda_graph_config:
    batch_sizes: [${CAPTURE_BATCH_LIST%, }]
speculative_config:
    decoding_type: Eagle3
    max_draft_len: 3
EOF
"""


def test_a_trt_config_written_from_the_concurrency_is_read_around_its_numbers():
    it, state = run(TRT, {"CONC": symbol("CONC")})
    text = it.files.written("/tmp/ser.yaml").text
    assert isinstance(text, Holed) and len(text.holes) == 1
    assert text.holes[0].chars <= DIGITS | set("-, ")
    data = yaml.safe_load(yaml_fill(text, "OPEN").replace(symbol("CONC"), "8"))
    assert data["speculative_config"] == {"decoding_type": "Eagle3", "max_draft_len": 3}
    assert data["cuda_graph_config"]["batch_sizes"] == ["OPEN"]
    # The same file with the list from a command the interpreter cannot bound is not read.
    it, _ = run(TRT.replace("$(seq 1 $MAX_BATCH)", "$(python3 pick.py)"), {"CONC": symbol("CONC")})
    assert yaml_fill(it.files.written("/tmp/ser.yaml").text, "OPEN") is None


def test_seq_of_an_integer_it_does_not_know_prints_digits_a_line():
    _, state = run('A=$(seq 1 "$CONC")\nB=$(seq 1 "$X")\nC=$(seq 1 $((N + 1)))\nD=$(seq 3)\n',
                   {"CONC": symbol("CONC"), "X": Unknown("X"), "N": Unknown("N")})
    assert state.get("A").chars <= INTEGER_LINES and state.get("C").chars <= INTEGER_LINES
    assert state.get("B").chars is None  # `-f FORMAT` may print anything
    assert state.get("D") == "1\n2\n3"


def test_an_unquoted_value_of_known_characters_splits_into_words_of_them():
    _, state = run('L=( $(seq 1 "$CONC") )\nM=( $(cat f) )\n', {"CONC": symbol("CONC")})
    (words,) = [state.get("L")]
    assert len(words) == 1 and isinstance(words[0], Split) and words[0].chars == DIGITS | {"-"}
    assert state.get("M")[0].chars is None


def test_arrays_the_arms_fill_differently_keep_their_characters():
    assert words_chars([["1", "2"], None, [Unknown("n", chars=DIGITS)]]) == DIGITS
    assert words_chars([["a"], [Unknown("any")]]) is None
    _, state = run('if [[ $X == 1 ]]; then L=(1 2); elif [[ $X == 2 ]]; then L=(3 4 5); '
                   'elif [[ $X == 3 ]]; then L=(6); elif [[ $X == 4 ]]; then L=(7 8 9 10); '
                   'else L=(11 12 13 14 15); fi\n', {"X": Unknown("X")})
    merged = state.get("L")
    assert isinstance(merged[-1], Rest) and merged[-1].chars <= DIGITS


def test_yaml_holes_are_read_only_in_a_value_and_only_of_numbers():
    def holed(template, chars=DIGITS | {","}):
        n = template.count(HOLE)
        return Holed("h", template=template, holes=tuple(Unknown("h", chars=chars) for _ in range(n)))

    assert yaml_fill(holed(f"a: [{HOLE}]\nb: 1\n"), "P") == "a: [P]\nb: 1\n"
    assert yaml_fill(holed(f"a:\n  - x: {HOLE}\n"), "P") == "a:\n  - x: P\n"
    for template in (f"{HOLE}a: 1\n", f"a:\n{HOLE}b: 1\n", f"a: 1\n{HOLE}\n", f"a{HOLE}: 1\n", f"a: [\n  {HOLE}]\n"):
        assert yaml_fill(holed(template), "P") is None, template  # a key, an indentation, a line
    for bad in ("\n", ":", "#", "]", "'", "a"):
        assert yaml_fill(holed(f"a: [{HOLE}]\n", DIGITS | {bad}), "P") is None, bad
    assert yaml_fill(holed(f"a: [{HOLE}]\n", None), "P") is None
    assert not YAML_VALUE_HOLE & set("\n:#[]{}'\"&*!|>%@`")
