"""recipes.launch.path.launch_path.evaluate_condition: a runner's branch conditions over a point's variables,
in three-valued logic (a test the bot cannot evaluate is unknown, never guessed)."""
from __future__ import annotations

from recipes.launch.path.conditions import evaluate_condition

ENV = {"FRAMEWORK": "dynamo-trt", "MODEL_PREFIX": "dsr1", "PRECISION": "fp4", "IS_AGENTIC": "0"}


def test_an_unknown_test_decides_only_when_the_known_ones_do_not():
    assert evaluate_condition('[[ -f "$HOME/x" ]] && [[ $FRAMEWORK == "dynamo-trt" ]]', ENV) is None
    assert evaluate_condition('[[ -f "$HOME/x" ]] && [[ $FRAMEWORK == "dynamo-vllm" ]]', ENV) is False
    assert evaluate_condition('[[ -f "$HOME/x" ]] || [[ $FRAMEWORK == "dynamo-trt" ]]', ENV) is True
    assert evaluate_condition('! ( [[ -f "$HOME/x" ]] )', ENV) is None


def test_a_long_elif_chain_with_many_unknown_tests_is_still_decided_by_the_points_values():
    # `elif` N holds when every earlier test failed and its own holds: an earlier test on a
    # file the bot cannot see stays unknown, but a false test of the point's own values decides.
    earlier = " && ".join(f'! ( [[ -d "/opt/cache{i}" ]] )' for i in range(12))
    assert evaluate_condition(earlier + ' && [[ $MODEL_PREFIX == "kimik3" ]]', ENV) is False
    assert evaluate_condition(earlier + ' && [[ $MODEL_PREFIX == "dsr1" ]]', ENV) is None
    chain = ('! ( [[ "$IS_AGENTIC" == "1" && $MODEL_PREFIX == "kimik3" ]] ) && '
             '! ( [[ $FRAMEWORK == "dynamo-vllm" && $MODEL_PREFIX == "dsv4" ]] ) && '
             '[[ $FRAMEWORK == "dynamo-trt" && $MODEL_PREFIX == "dsr1" ]]')
    assert evaluate_condition(chain, ENV) is True
    assert evaluate_condition(chain, {**ENV, "MODEL_PREFIX": "glm5"}) is False


def test_grouping_inside_one_double_bracket_test_is_kept():
    # Shaped like launch_gb200-nv.sh's AgentX branch (PR 2619): `[[ a && (( b ) || ( c )) ]]`.
    # Dropping the parentheses once read `"dynamo-sglang" )` as the value, so the branch looked
    # false for the dsv4 point and the runner's next branch (another repository) was taken.
    cond = ('[[ "$IS_AGENTIC" == "1" && (( "$MODEL_PREFIX" == "qwen3.5" && "$FRAMEWORK" == "dynamo-sglang" ) || '
            '( "$MODEL_PREFIX" == "dsv4" && "$FRAMEWORK" == "dynamo-vllm" )) ]]')
    agentic = {**ENV, "IS_AGENTIC": "1"}
    assert evaluate_condition(cond, {**agentic, "MODEL_PREFIX": "dsv4", "FRAMEWORK": "dynamo-vllm"}) is True
    assert evaluate_condition(cond, {**agentic, "MODEL_PREFIX": "qwen3.5", "FRAMEWORK": "dynamo-sglang"}) is True
    assert evaluate_condition(cond, {**agentic, "MODEL_PREFIX": "qwen3.5", "FRAMEWORK": "dynamo-vllm"}) is False
    assert evaluate_condition(cond, {**ENV, "MODEL_PREFIX": "dsv4", "FRAMEWORK": "dynamo-vllm"}) is False
    assert evaluate_condition('[[ ! ( $MODEL_PREFIX == dsr1 || $PRECISION == fp8 ) ]]', ENV) is False
    assert evaluate_condition('[[ $MODEL_PREFIX == "dsr1)" ]]', {**ENV, "MODEL_PREFIX": "dsr1)"}) is True
    # Unbalanced grouping is unknown, never a guess.
    assert evaluate_condition('[[ ( $MODEL_PREFIX == dsr1 ]]', ENV) is None


def test_a_condition_reads_only_the_variables_it_names_and_each_one_it_does():
    # Evaluations are shared between points whose other variables differ; a variable whose
    # name is part of another's must still be read, and one set to another value must count.
    cond = '[[ "$MODEL_PREFIX" == "dsv4" && $PREFIX == x ]]'
    shared = {"MODEL_PREFIX": "dsv4", "PREFIX": "x"}
    assert evaluate_condition(cond, {**shared, "EXP_NAME": "dsv4_1k1k"}) is True
    assert evaluate_condition(cond, {**shared, "EXP_NAME": "dsv4_8k1k"}) is True
    assert evaluate_condition(cond, {**shared, "PREFIX": "y"}) is False
    assert evaluate_condition(cond, {"MODEL_PREFIX": "dsv4"}) is None
    assert evaluate_condition("X matches dsv4*", {"X": "dsv4-pro", "Y": "1"}) is None  # not a variable
    assert evaluate_condition("$X matches dsv4*", {"X": "dsv4-pro", "Y": "1"}) is True


def test_integer_tests_of_a_variable_are_decided_when_it_holds_an_integer():
    # server_sglang.sh: `if [ "$DECODE_MTP_SIZE" -gt 0 ]; then export IS_MTP=true; else ... fi`.
    cond = '[ "$DECODE_MTP_SIZE" -gt 0 ]'
    assert evaluate_condition(cond, {"DECODE_MTP_SIZE": "1"}) is True
    assert evaluate_condition(cond, {"DECODE_MTP_SIZE": "0"}) is False
    assert evaluate_condition("! ( " + cond + " )", {"DECODE_MTP_SIZE": "3"}) is False
    assert evaluate_condition('[[ ${N:-0} -ne "3" ]]', {"N": "3"}) is False
    for op, want in (("eq", False), ("ne", True), ("ge", True), ("lt", False), ("le", False)):
        assert evaluate_condition(f"[[ $N -{op} 2 ]]", {"N": "5"}) is want, op
    # Unknown: an unset variable, a value that is no integer (bash reads it as arithmetic), a
    # comparison of two variables.
    assert evaluate_condition(cond, {}) is None
    assert evaluate_condition(cond, {"DECODE_MTP_SIZE": "x"}) is None
    assert evaluate_condition('[ "$A" -gt "$B" ]', {"A": "1", "B": "0"}) is None


def test_a_case_on_a_word_made_of_several_variables_is_decided_when_each_is_known():
    # server_sglang.sh: `case "${MODEL_NAME}:${DECODE_MTP_SIZE}" in *DeepSeek-V4*:3) ...`
    arm = '"${MODEL_NAME}:${DECODE_MTP_SIZE}" matches *DeepSeek-V4*:3'
    assert evaluate_condition(arm, {"MODEL_NAME": "DeepSeek-V4-Pro", "DECODE_MTP_SIZE": "3"}) is True
    assert evaluate_condition(arm, {"MODEL_NAME": "DeepSeek-V4-Pro", "DECODE_MTP_SIZE": "1"}) is False
    assert evaluate_condition(arm, {"DECODE_MTP_SIZE": "3"}) is None  # the model is not known
    # Another expansion in the word (a default) is not substituted: unknown.
    assert evaluate_condition('"${MODEL_NAME:-x}:$K" matches x:3', {"MODEL_NAME": "x", "K": "3"}) is None


def test_brace_groups_and_tests_of_two_variables_read_only_variables():
    from recipes.launch.path.conditions import reads_only_variables

    assert reads_only_variables('{ [[ "${IS_AGENTIC:-0}" == "1" ]] || [[ "${IS_AGENTIC:-}" == "true" ]]; }')
    assert reads_only_variables('! ( [ "$NODE_RANK" -gt 0 ] && [ "$NODE_RANK" -lt "$NODE_OFFSET" ] )')
    assert not reads_only_variables('[ -f "$X" ]')
    assert not reads_only_variables('[ "$N" -lt "$(nproc)" ]')


def test_answers_are_kept_per_condition_and_per_variables():
    # evaluate_condition keeps its answers (every point of a path asks about the same lines):
    # by the condition and every variable's value, in whatever order the variables come.
    cond = '[[ "$FRAMEWORK" == "sglang" ]] && [[ "$PRECISION" == fp8 ]]'
    asked = [({"FRAMEWORK": "sglang", "PRECISION": "fp8"}, True), ({"FRAMEWORK": "vllm", "PRECISION": "fp8"}, False),
             ({"PRECISION": "fp8", "FRAMEWORK": "sglang"}, True), ({"FRAMEWORK": "sglang"}, None),
             ({"FRAMEWORK": "sglang", "PRECISION": "fp4"}, False), ({"FRAMEWORK": "sglang", "PRECISION": "fp8"}, True)]
    assert [evaluate_condition(cond, env) for env, _ in asked] == [want for _, want in asked]
    assert evaluate_condition('[[ "$FRAMEWORK" == "vllm" ]]', {"FRAMEWORK": "sglang", "PRECISION": "fp8"}) is False


def test_the_variables_a_condition_reads_are_those_it_refers_to():
    # variables_read keys a runner's checkout answer: a variable the conditions refer to in any
    # spelling the evaluation reads (`$X`, `${X}`, `${X:-d}`, a case subject) is kept; one whose
    # name only occurs inside another's (MODEL in MODEL_PREFIX) or not at all is not.
    from recipes.launch.path.conditions import variables_read

    env = {"MODEL": "m", "MODEL_PREFIX": "dsr1", "FRAMEWORK": "sglang", "CONC": "4", "PRECISION": "fp8", "SPEC": "mtp"}
    assert variables_read('[[ $MODEL_PREFIX == dsr1 ]] && [[ "${FRAMEWORK}" == sglang ]]', env) == {
        "MODEL_PREFIX": "dsr1", "FRAMEWORK": "sglang"}
    assert set(variables_read('[[ "${MODEL:-x}" == m ]]\n"${PRECISION}:${SPEC}" matches fp8:*', env)) == {
        "MODEL", "PRECISION", "SPEC"}
    for cond in ('[[ "${MODEL:-x}" == m ]]', '"${PRECISION}:${SPEC}" matches fp8:*', '[ "$CONC" -gt 2 ]'):
        assert evaluate_condition(cond, variables_read(cond, env)) == evaluate_condition(cond, env) is True, cond
