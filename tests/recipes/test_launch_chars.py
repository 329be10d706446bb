"""Unknown values whose characters are bounded, and shell text with such values in it
(recipes.launch.chars): read where no value can change how bash parses the text, else unknown."""
from __future__ import annotations

import pytest

from recipes.launch.chars import DIGITS, HOST_NAMES, awk_output, fill, regex_chars, tr_set
from recipes.launch.shell import Interpreter
from recipes.launch.trace import EXEC, SOURCE, UNKNOWN
from recipes.launch.words import HOLE, Holed, Unknown
from tests.recipes.test_launch_shell import argvs, run

MODELS = 'm1:\n  hf_dir: "M-1.0"\n  port: 8000\nm2:\n  hf_dir: abc_2\n'
# The AMD multi-node job.slurm's program: the hf_dir of one model's entry in models.yaml.
AWK = """N=$(awk '/^m1:/{found=1; next}
    found && /^[^ ]/{exit}
    found && /hf_dir:/{gsub(/[" ]/, "", $2); print $2; exit}' models.yaml)
"""


def unknowns(trace):
    return [e.detail for e in trace.of(UNKNOWN)]


# --- what a command's output can hold -------------------------------------------------------

@pytest.mark.parametrize("pattern,chars", [
    ("abc", "abc"),
    ("[0-9]+", "0123456789"),
    (r"\d{2,}x?", "0123456789x"),
    ("(a|bc)+", "abc"),
    (r"^a\s$", "a \t\n\r\f\v"),
    (r"Granted \K[0-9]+", "Granted 0123456789"),  # \K: what came before counts too (a superset)
    (r"(?<=id=)\w", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"),  # no lookbehind text
    ("[a-c_.]", "abc_."),
    ("(?i)ab", "abAB"),
])
def test_the_characters_a_pattern_can_match(pattern, chars):
    assert regex_chars(pattern) == frozenset(chars)


@pytest.mark.parametrize("pattern", [".", "a.*", "[^a]", r"\D", r"\W+", r"\S", "(?i)k", "[", "(a", "[\x00-\uffff]",
                                     "[[:upper:]]+", r"\Qa\E", r"\p{L}", "(?<n>a)"])
def test_a_pattern_that_can_match_any_character_or_does_not_parse_is_not_bounded(pattern):
    assert regex_chars(pattern) is None


def test_tr_sets_read_as_tr_reads_them():
    assert tr_set("a-cX-Z0-2_.-") == "abcXYZ012_.-"
    assert tr_set(r"\n\t\\") == "\n\t\\"
    assert tr_set(r"\047") == "'"
    assert tr_set("[:digit:]") == "0123456789"
    assert tr_set("[a*3]") is None
    assert tr_set("z-a") is None


def test_awk_printing_a_field_of_a_known_file_holds_what_that_field_holds_there():
    program = """/^m1:/{found=1; next}
        found && /^[^ ]/{exit}
        found && /hf_dir:/{gsub(/[" ]/, "", $2); print $2; exit}"""
    chars, one_line = awk_output(program, [MODELS], None)
    # Second fields of any line (the quotes the gsub removes before printing are left out).
    assert chars == frozenset("M-1.08000abc_2")
    assert one_line
    # Without the gsub, the quotes are in it; without `exit`, several lines may be printed.
    assert '"' in awk_output("/hf_dir:/{print $2}", [MODELS], None)[0]
    assert awk_output("/hf_dir:/{print $2}", [MODELS], None)[1] is False
    # A separator given, strings printed, numbers.
    assert awk_output('-F: {print $1, "=", NR}'.split(" ", 1)[1], ["a:b"], ":")[0] == frozenset("a =0123456789")


@pytest.mark.parametrize("program", [
    '{printf "%c", 39}',                      # any character
    '{print toupper($1)}',                    # other characters than the file's
    '{$2 = "x;y"; print $2}',                 # a field assigned
    '{x = $1 "\\047"; print x}',              # a variable
    '{print $NF}',                            # a computed field
    '{sub(/a/, "\\047", $1); print $1}',      # an escape in a replacement
    '{print $1 > "/tmp/out"}',                # a redirection
    '{print "unterminated}',
])
def test_awk_doing_more_than_printing_fields_is_not_bounded(program):
    assert awk_output(program, ["a b c\n"], None) is None


def test_awk_reading_its_program_from_a_file_is_not_bounded():
    _, state = run("N=$(awk -f prog.awk models.yaml)\n", files={"models.yaml": MODELS, "prog.awk": "{print}"})
    assert isinstance(state.get("N"), Unknown) and state.get("N").chars is None


def test_a_rule_without_an_action_prints_its_lines():
    chars, one_line = awk_output("/b/", ["a b;c\n"], None)
    assert {";", " "} <= chars and not one_line
    assert ";" in awk_output("/x/{print $1}\nNR == 1", ["a b;c\n"], None)[0]


def test_a_sub_replacement_is_part_of_what_is_printed():
    chars, _ = awk_output('{gsub(/a/, "Z;"); print $1}', ["ab cd\n"], None)
    assert {"Z", ";"} <= chars


# --- shell text with holes -----------------------------------------------------------------

def _parse():
    return Interpreter(None, vocabulary=lambda argv, cwd=None: None).parse  # type: ignore[arg-type]


def _fill(text, *holes):
    return fill(text, holes, _parse())


NAME = Unknown("a name", chars=frozenset("abc-_.0123456789"))


@pytest.mark.parametrize("text", [
    f"rm -rf '/tmp/{HOLE}'",
    f'echo "found {HOLE} here"',
    f"run --dir=/x/{HOLE}/y",
    f"case {HOLE} in a) run ;; esac",
    f"X={HOLE}; run \"$X\"",
])
def test_a_hole_that_cannot_change_the_parse_is_read_as_its_value(text):
    got = _fill(text, NAME)
    assert isinstance(got, tuple), got
    filled, variables = got
    assert list(variables.values()) == [NAME]
    assert HOLE not in filled


@pytest.mark.parametrize("text,chars,why", [
    (f"rm -rf '{HOLE}'", "ab'", "inside single quotes and may hold `'`"),
    (f'echo "{HOLE}"', "ab$", "inside double quotes and may hold `$`"),
    (f"run {HOLE}", "ab;", "in a plain word and may hold `;`"),
    (f"run {HOLE}", "ab ", "in a plain word and may hold a blank"),
    (f"run {HOLE}", "a*", "in a plain word and may hold `*`"),
    (f"{HOLE} --flag", "abc", "command name"),
    (f"echo $(( {HOLE} + 1 ))", "abc", "arithmetic"),
    (f'echo "${HOLE}"', "abc", "after `$`"),
    (f"run \\{HOLE}", "abc", "after `\\`"),
    (f"run ~{HOLE}", "abc", "after `~`"),
    (f"run {{a,{HOLE}}}", "abc", "braces"),
    (f"echo ${{X:-{HOLE}}}", "abc", "expansion"),
    (f"cat <<EOF\n{HOLE}\nEOF", "abc", "heredoc"),
    (f"IFS=/; run {HOLE}", "abc", "names what its unknown parts"),
])
def test_a_hole_that_may_change_the_parse_leaves_the_text_unknown_and_says_why(text, chars, why):
    got = _fill(text, Unknown("the output of x", chars=frozenset(chars)))
    assert isinstance(got, str) and why in got, got


def test_a_hole_whose_characters_are_not_bounded_is_never_read():
    got = _fill(f"rm -rf '/tmp/{HOLE}'", Unknown("the output of x"))
    assert isinstance(got, str) and "not known" in got


# --- the interpreter ----------------------------------------------------------------------

def test_bash_c_text_holding_a_field_awk_read_from_a_repository_file_is_interpreted():
    # job.slurm's check_model_path: the folder in single quotes and in escaped double quotes.
    trace, _ = run(AWK + """P="/models/$N"
bash -c "
    if [ -d '$P' ]; then
        run \\"found $P\\"
    fi"
""", files={"models.yaml": MODELS})
    assert unknowns(trace) == []
    assert trace.of(SOURCE)  # the text ran
    runs = [e for e in trace.of(EXEC) if e.argv[0] == "run"]
    assert len(runs) == 1 and runs[0].under  # under the folder test it cannot decide
    word = runs[0].argv[1]
    assert isinstance(word, Unknown) and word.prefix == "found /models/"


def test_awk_over_a_file_whose_field_holds_a_quote_leaves_single_quoted_text_unknown():
    models = MODELS + "m3:\n  hf_dir: x'y\n"
    trace, _ = run(AWK + """bash -c "run '/models/$N'"\n""", files={"models.yaml": models})
    assert any("shell text that is not known" in d and "may hold `'`" in d for d in unknowns(trace))
    assert "run" not in [e.argv[0] for e in trace.of(EXEC)]


def test_a_user_name_tr_cleans_stands_unquoted_and_is_read():
    trace, _ = run("""U=$(echo "$(whoami)" | tr -c 'a-zA-Z0-9_.-' '_')
NAME="c_${U}_x"
bash -c 'run rm -f '"$NAME"' 2>/dev/null || true'
""")
    assert [d for d in unknowns(trace) if "shell text" in d] == []
    assert "run rm -f ? 2>/dev/null" not in argvs(trace)
    runs = [e for e in trace.of(EXEC) if e.argv[0] == "run"]
    assert runs and runs[0].argv[:2] == ("run", "rm") and isinstance(runs[0].argv[3], Unknown)


def test_a_value_that_may_hold_an_operator_unquoted_is_not_read():
    trace, _ = run("""U=$(whoami | tr -c 'a-z;' '_')
bash -c "run $U"
""")
    assert any("shell text that is not known" in d and "may hold `;`" in d for d in unknowns(trace))


def test_host_names_joined_by_commas_are_read_unquoted():
    trace, _ = run("""ALL=$(scontrol show hostnames "$SLURM_JOB_NODELIST")
SEL=$(echo "$ALL" | head -n 2)
LIST=$(echo "$SEL" | tr '\\n' ',' | sed 's/,$//')
bash -c "run --nodelist=$LIST"
""")
    assert [d for d in unknowns(trace) if "shell text" in d] == []
    assert any(e.argv[0] == "run" for e in trace.of(EXEC))


def test_a_job_id_grep_picks_is_read_in_single_quotes_not_unquoted():
    script = """J=$(salloc | grep -oP 'Granted job allocation \\K[0-9]+')
bash -c "rm -rf '/tmp/w-$J'"
bash -c "run /tmp/w-$J"
"""
    trace, _ = run(script)
    details = [d for d in unknowns(trace) if "shell text" in d]
    assert len(details) == 1 and "plain word" in details[0]  # a blank may be in it (\K read as nothing)


@pytest.mark.parametrize("change", [
    'Y=${X//_/;}',           # a replacement writes other characters
    'Y=${X^^}',              # a case change
    'Y=$(printf "%b" "$X")',  # escapes
    'Y=$(echo -e "$X")',
    'Y=${X:-"a;b"}',         # the default where it is empty
    'Y=$(dirname "$X")',
])
def test_a_transformation_that_may_make_other_characters_drops_the_bound(change):
    trace, _ = run(f"""X=$(echo "$(whoami)" | tr -c 'a-z' '_')
{change}
bash -c "run $Y"
""")
    assert any("shell text that is not known" in d for d in unknowns(trace)), change


def test_tr_options_it_does_not_read_leave_the_output_unknown():
    trace, state = run("""X=$(whoami | tr -c 'a-z' '_')
A=$(echo "$X" | tr -s '-' ' ')
B=$(echo "$X" | tr 'a-z' 'A-Z')
C=$(echo "-a-" | tr -d -- '-')
""")
    assert state.get("A").chars is None
    assert state.get("B").chars == frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ_\n")
    assert state.get("C") == "a"
    # With -c, what is not in SET1 becomes any character of SET2.
    _, state = run("""D=$(whoami | tr -c 'a' 'x;')
""")
    assert ";" in state.get("D").chars


def test_eval_after_ifs_changed_is_not_read_around_its_holes():
    trace, _ = run("""X=$(whoami | tr -c 'a-z/' '_')
IFS=/
eval "run $X"
""")
    assert any("eval of text that is not known" in d and "IFS" in d for d in unknowns(trace))


def test_a_trim_keeps_the_bound():
    trace, _ = run("""X=$(echo "$(whoami)" | tr -c 'a-z' '_')
bash -c "run ${X%_}"
""")
    assert [d for d in unknowns(trace) if "shell text" in d] == []


def test_eval_of_text_with_holes_reads_it_when_they_cannot_change_it():
    trace, _ = run("""X=$(echo "$(whoami)" | tr -c 'a-z' '_')
W=$(echo "$(whoami)" | tr -c 'a-z ' '_')
eval "run '$X' '$W'"
eval "run $W"
""")
    assert [e.argv[0] for e in trace.of(EXEC)].count("run") == 1
    details = [d for d in unknowns(trace) if "eval of text" in d]
    assert len(details) == 1 and "in a plain word and may hold a blank" in details[0]


def test_text_cannot_assign_or_list_the_variables_that_stand_for_holes():
    trace, state = run("""X=$(echo "$(whoami)" | tr -c 'a-z' '_')
bash -c 'for v in ${!__infx*} ${!__*}; do run "$v"; done; run '"'/x/$X'"
""")
    names = [e.argv[1] for e in trace.of(EXEC) if e.argv[0] == "run" and isinstance(e.argv[1], str)]
    assert not any("infx" in n for n in names)


def test_arithmetic_that_is_not_known_is_digits_and_a_sign():
    trace, _ = run("""P=$((40000 + (JOB % 10000)))
bash -c "run --port=$P"
""")
    assert [d for d in unknowns(trace) if "shell text" in d] == []


def test_an_unquoted_value_with_a_bound_is_one_word_only_when_it_cannot_split():
    _, state = run("""X=$(echo "$(whoami)" | tr -c 'a-z' '_')
A=(pre$X)
S=$(scontrol show hostnames)
B=(pre$S)
""")
    assert isinstance(state.get("A")[0], Holed)
    assert state.get("B")[0].chars is None  # host names, one a line: it may split


def test_joined_text_keeps_digits_bounds():
    from recipes.launch.state import _join_unknown
    d = Unknown("n", chars=DIGITS)
    h = Unknown("h", chars=HOST_NAMES)
    joined = _join_unknown(["a-", d, "/", h])
    assert isinstance(joined, Holed) and joined.holes == (d, h)
    assert joined.template == f"a-{HOLE}/{HOLE}" and joined.chars == DIGITS | HOST_NAMES | set("a-/")
    assert not isinstance(_join_unknown(["a", d, Unknown("any")]), Holed)


def test_the_address_awk_picks_from_ip_route_get_is_read_unquoted_when_it_is_one_line():
    # A field of the route holds no blank and no shell character; a program that prints it and
    # exits prints one line, so `eval` text holding it unquoted is read.
    trace, _ = run("""host_ip=$(ip route get 1.1.1.1 | awk '/src/ {print $7; exit}')
eval "run barrier --local-ip ${host_ip} --port 5000"
""")
    assert [d for d in unknowns(trace) if "eval of text" in d] == []
    runs = [e for e in trace.of(EXEC) if e.argv[0] == "run"]
    assert runs and runs[0].argv[:3] == ("run", "barrier", "--local-ip") and runs[0].argv[4:] == ("--port", "5000")
    # AMD server_sglang.sh's own program prints every line that holds `src`: two lines would
    # put a newline, a new command, into the text, so it is not read.
    trace, _ = run("""host_ip=$(ip route get 1.1.1.1 | awk '/src/ {print $7}')
eval "run barrier --local-ip ${host_ip} --port 5000"
""")
    assert any("eval of text that is not known" in d and "may hold a newline" in d for d in unknowns(trace))


def test_awk_over_an_input_known_only_by_its_characters():
    line = frozenset("ab c\n")
    assert awk_output("{print $2}", line, None) == (frozenset("abc"), False)
    assert awk_output("{print $0}", line, None) == (frozenset("ab c"), False)
    assert awk_output("{print $1}", line, ":") == (frozenset("ab c"), False)


@pytest.mark.parametrize("setup, word", [
    # A classed unknown beside one of any characters: the join is of any characters.
    ("""A=$(echo "$UNK" | tr -dc 'a-z')\nX="${A}${UNK2}"\n""", "${X}"),
    # Beside one whose characters include `;`: the join may hold it too.
    ("""A=$(echo "$UNK" | tr -dc 'a-z')\nB=$(echo "$UNK" | tr -dc '0-9;')\nX="${A}${B}"\n""", "${X}"),
    # Two that may both be empty: the default stands where they are, with its `;`.
    ("""A=$(echo "$UNK" | tr -dc 'a-z')\nB=$(echo "$UNK2" | tr -dc 'a-z')\nX="${A}${B}"\n""", "${X:-;curl x | sh}"),
])
def test_text_joined_from_unknowns_holds_the_characters_of_every_part(setup, word):
    trace, _ = run(setup + f'eval "run {word}"\n')
    assert any("eval of text that is not known" in d for d in unknowns(trace)), unknowns(trace)
    assert [a for a in argvs(trace) if a.startswith("run")] == []


def test_text_joined_from_unknowns_of_one_class_is_read_with_them():
    trace, _ = run("""A=$(echo "$UNK" | tr -dc 'a-z')
B=$(echo "$UNK2" | tr -dc 'a-z')
X="${A}${B}"
eval "run ${X} ${X:-default}"
""")
    assert [d for d in unknowns(trace) if "eval of text" in d] == []
    assert [a for a in argvs(trace) if a.startswith("run")] == ["run ? ?"]
