"""recipes.launch.path.shell_scope.Scope.expand: one shell word as the shell hands it over (quote removal,
variables of the scope substituted). Literal runs are copied at once; these cases pin what the
character-by-character reading gave."""
from __future__ import annotations

import pytest

from recipes.launch.path.shell_scope import Scope
from recipes.scripts import analyze_script

TEXT = "A=1\nB='x y'\n"


@pytest.fixture
def scope() -> Scope:
    return Scope("t.sh", analyze_script(TEXT, "t.sh"), "/w", lambda n: {"OUT": "o"}.get(n), lines=TEXT.splitlines())


@pytest.mark.parametrize("word, kw, expected", [
    ("plain-word/with:chars", {}, "plain-word/with:chars"),
    ("'single $A \\\" kept'", {}, 'single $A \\" kept'),
    ("'unterminated $A", {}, "unterminated $A"),
    ('"dq $A and \'sq\'"', {}, "dq 1 and 'sq'"),
    ('"a\\$b \\x"', {}, "a$b \\x"),
    ("x${B}y$OUT", {}, "xx yyo"),
    ("$(date)", {}, None),
    ("pre $(date) post", {"keep": True}, "pre $(date) post"),
    ("run $A 'q' \"$B\"", {"defer": True}, "run $A q $B"),
    ("`cmd`", {}, None),
])
def test_expand(scope, word, kw, expected):
    assert scope.expand(word, 3, **kw) == expected


def test_a_backslash_in_double_quotes_before_an_ordinary_character_stays_with_it(scope):
    # bash: echo "C:\dir s/a\.b/" prints C:\dir s/a\.b/ (the character after it was dropped before).
    assert scope.expand('"C:\\dir s/a\\.b/"', 3) == "C:\\dir s/a\\.b/"


def test_file_lines_are_decoded_once_per_source_view():
    from recipes.launch.path.shell_scope import file_lines
    from recipes.source import MemorySource

    head, other = MemorySource({"r.sh": "a\nb\n"}), MemorySource({"r.sh": "c\n"})
    first = file_lines(head, "r.sh")
    assert first == ("a", "b") and file_lines(head, "r.sh") is first
    assert file_lines(other, "r.sh") == ("c",)
    assert file_lines(head, "missing.sh") == ()


# server_sglang.sh's shape: IS_MTP is set on a branch of an `if` whose test reads a variable the
# bot cannot know (each node's rank), and read only inside that same `if`.
SERVER = """NODE_RANK="${NODE_RANK:-0}"
DECODE_MTP_SIZE="${DECODE_MTP_SIZE:-0}"
if [ "$NODE_RANK" -eq 0 ]; then
    if [ "$DECODE_MTP_SIZE" -gt 0 ]; then
        export IS_MTP=true
    else
        export IS_MTP=false
    fi
    {between}
    eval "$BENCH_CMD"
fi
eval "$AFTER_CMD"
"""


def _server(outer: dict[str, str | None], between: str = ":") -> Scope:
    from recipes.launch.path.shell_scope import Unknown

    def lookup(name: str) -> str | None:
        if name in outer:
            return outer[name]
        raise Unknown(name)

    text = SERVER.replace("{between}", between)
    return Scope("server.sh", analyze_script(text, "server.sh"), "/w", lookup, lines=text.splitlines())


def test_a_branch_the_use_shares_with_the_assignment_is_taken_as_holding_there():
    use = 10  # eval "$BENCH_CMD", inside `if [ "$NODE_RANK" -eq 0 ]`
    assert _server({"DECODE_MTP_SIZE": "3"}).value("IS_MTP", use) == "true"
    assert _server({"DECODE_MTP_SIZE": "0"}).value("IS_MTP", use) == "false"
    assert _server({"DECODE_MTP_SIZE": None}).value("IS_MTP", use) == "false"  # unset: the default 0
    with pytest.raises(Exception, match="cannot decide"):
        _server({}).value("IS_MTP", use)  # not known (not unset): the default is not taken


def test_outside_the_shared_branch_or_after_a_change_of_its_variables_it_stays_undecided():
    from recipes.launch.path.shell_scope import Stop

    with pytest.raises(Stop, match="cannot decide"):
        _server({"DECODE_MTP_SIZE": "3"}).value("IS_MTP", 12)  # eval "$AFTER_CMD", after the `fi`
    with pytest.raises(Stop, match="cannot decide"):
        _server({"DECODE_MTP_SIZE": "3"}, between="NODE_RANK=1").value("IS_MTP", 10)
    with pytest.raises(Stop, match="cannot decide"):
        _server({"DECODE_MTP_SIZE": "3"}, between="source ./rank.sh").value("IS_MTP", 10)
    # The rest of the assignment's condition must still be decided by the point's values.
    with pytest.raises(Stop):
        _server({"DECODE_MTP_SIZE": "many"}).value("IS_MTP", 10)


def test_a_value_decided_at_one_use_is_not_reused_at_another():
    # Both lines see the same assignments; only the first shares their branch.
    from recipes.launch.path.shell_scope import Stop

    scope = _server({"DECODE_MTP_SIZE": "3"})
    assert scope.value("IS_MTP", 10) == "true"
    with pytest.raises(Stop):
        scope.value("IS_MTP", 12)


FUNCTION_TEXT = """K="${K:-0}"
build() {
    local mode="$1"
    local k="${2}"
    if [ "$k" -gt 0 ]; then
        extra="--steps ${k} --mode $mode --image $IMAGE"
    fi
}
OUT=$(build "decode" "$K")
"""


def test_a_function_body_reads_its_parameters_from_the_call_and_the_rest_from_the_caller():
    from recipes.launch.path.shell_scope import Stop

    def outer(values):
        return Scope("f.sh", analyze_script(FUNCTION_TEXT, "f.sh"), "/w", lambda n: values.get(n),
                     lines=FUNCTION_TEXT.splitlines())

    top = outer({"K": "3", "IMAGE": "img"})
    body = top.call("build", ["decode", "$K"], 9)
    assert body.value("k", 6) == "3" and body.value("mode", 6) == "decode"
    assert body.holds('[ "$k" -gt 0 ]', 6) is True
    assert body.expand("${k}", 6) == "3" and body.expand("$IMAGE", 6) == "img"
    assert top.call("build", ["decode", "$K"], 9).value("2", 6) == "3"
    # K unset: the default 0 is the parameter, and the branch does not hold.
    assert outer({}).call("build", ["decode", "$K"], 9).holds('[ "$k" -gt 0 ]', 6) is False
    # A word the bot cannot know makes the parameter unknown, not empty.
    with pytest.raises(Stop):
        outer({"K": "3"}).call("build", ["decode", "$(cat f)"], 9).value("k", 6)
    # The top level does not see the function's locals.
    assert top.value("k", 9) is None


def test_a_walks_projection_over_files_reads_each_files_uses_per_name():
    # file_projection: `projection` over the texts of a walk's files, each file's uses of a
    # name found once per source view. Another name, or a file that uses the name whole, must
    # not share the first answer.
    from recipes.launch.path.shell_scope import MISSING, file_projection, projection
    from recipes.source import MemorySource

    files = {"r.sh": 'S="${EXP_NAME%%_*}_${PRECISION}.sh"\n', "s.sh": 'echo "$EXP_NAME" "${PRECISION}"\n'}
    src = MemorySource(files)
    for paths in (["r.sh"], ["r.sh", "s.sh"], ["s.sh"]):
        for name, value in (("EXP_NAME", "dsr1_1k1k"), ("PRECISION", "fp8"), ("MODEL", MISSING)):
            want = projection(name, value, [files[p] for p in paths])
            assert file_projection(src, paths, name, value) == want, (paths, name)
    assert file_projection(src, ["r.sh"], "EXP_NAME", "dsr1_1k1k") == ("_*", "dsr1")
    assert file_projection(src, ["r.sh", "s.sh"], "EXP_NAME", "dsr1_1k1k") == (None, "dsr1_1k1k")


def test_a_failure_kept_in_the_memo_carries_no_traceback_and_is_raised_afresh():
    # A kept exception's traceback holds the frames that hold the scope that holds the memo: a
    # cycle only a full collection frees, and each raise of the same object lengthened it.
    from recipes.launch.path.shell_scope import Stop, Unknown

    def lookup(name: str) -> str | None:
        raise Unknown(name)

    scope = Scope("u.sh", analyze_script("echo hi\n", "u.sh"), "/w", lookup, lines=["echo hi"])
    raised = []
    for _ in range(3):
        with pytest.raises(Unknown) as caught:
            scope.value("GONE", 1)
        raised.append(caught.value)
    kept = [hit[1] for hit in scope.memo.values() if not hit[0]]
    assert len(kept) == 1 and isinstance(kept[0], Unknown) and kept[0].name == "GONE"
    assert kept[0].__traceback__ is None and kept[0].__context__ is None
    assert all(e is not kept[0] and e.name == "GONE" and str(e) == str(kept[0]) for e in raised)
    assert isinstance(kept[0], Stop) and kept[0].gap == raised[-1].gap
