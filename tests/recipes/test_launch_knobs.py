"""recipes.launch.knobs: the settings of a trace's servers and clients, as their parsers read them."""
from __future__ import annotations

from recipes.launch import knobs
from recipes.launch.knobs import (
    CLIENT_ENV, CLIENT_FLAG, JSON_KEY, SERVER_ENV, SERVER_FLAG, effect_knobs, find, opaque, reached,
)
from recipes.launch.trace import CLIENT, EXEC, SERVER, Effect, Site, Trace
from recipes.launch.words import Rest, Unknown

SITE = Site("benchmarks/x.sh", 7)


def server(*argv, env=(), under=(), how="sglang", chain=()) -> Effect:
    return Effect(kind=SERVER, site=SITE, argv=("python3", "-m", "sglang.launch_server") + argv, env=tuple(env),
                  under=tuple(under), how=how, chain=tuple(chain))


def values(found, name, kind=SERVER_FLAG):
    return [(k.value, k.wins) for k in find(found, name, kinds=(kind,))]


def test_python_s_own_options_are_not_the_program_s():
    e = Effect(kind=SERVER, site=SITE, argv=("python3", "-u", "-m", "sglang.launch_server", "--tp", "8"))
    assert [k.name for k in effect_knobs(e)] == ["--tp"]
    e = Effect(kind=CLIENT, site=SITE, argv=("/usr/bin/python3.12", "bench.py", "--use-chat-template"))
    assert [k.name for k in effect_knobs(e)] == ["--use-chat-template"]
    e = Effect(kind=SERVER, site=SITE, argv=("vllm", "serve", "m", "--tp", "8"))
    assert [k.name for k in effect_knobs(e)] == ["--tp"]
    # `-X dev` and `-W ignore` take a value: the module after them is not a flag's value.
    e = Effect(kind=SERVER, site=SITE, argv=("python3", "-X", "dev", "-W", "ignore", "-m", "sglang.launch_server", "--tp", "8"))
    assert [(k.name, k.value) for k in effect_knobs(e)] == [("--tp", "8")]


def test_the_three_argv_forms_and_a_boolean():
    found = effect_knobs(server("--tp=8", "--model-path", "/m", "--enable-dp-attention", "--port", "8888"))
    assert values(found, "tp") == [("8", True)]
    assert values(found, "model_path") == [("/m", True)]   # any spelling finds it
    k = find(found, "--enable-dp-attention")[0]
    assert k.value == "true" and k.bare and k.name == "--enable-dp-attention"
    assert values(found, "port") == [("8888", True)]


def test_a_negative_number_is_a_value_and_a_flag_before_another_is_boolean():
    found = effect_knobs(server("--draft-offset", "-1", "--trust-remote-code", "--x"))
    assert values(found, "draft-offset") == [("-1", True)]
    assert values(found, "trust-remote-code") == [("true", True)] and values(found, "x") == [("true", True)]


def test_the_last_occurrence_wins_and_every_one_is_kept():
    found = effect_knobs(server("--speculative-draft-model-quantization", "fp8",
                                "--speculative-draft-model-quantization=unquant"))
    assert values(found, "speculative-draft-model-quantization") == [("fp8", False), ("unquant", True)]


def test_json_keys_carry_their_parent_and_lose_with_it():
    spec = '{"method": "mtp", "quantization": "fp8", "draft": {"kv_cache_dtype": "fp8"}}'
    found = effect_knobs(server("--speculative-config", spec, "--tp", "4"))
    keys = {k.name: (k.value, k.parent, k.wins) for k in found if k.kind == JSON_KEY}
    assert keys["quantization"] == ("fp8", "--speculative-config", True)
    assert keys["kv_cache_dtype"] == ("fp8", "--speculative-config", True)  # nested keys too
    assert keys["draft"][0] == '{"kv_cache_dtype":"fp8"}'
    assert find(found, "quantization", parents=("speculative_config",))
    assert not find(found, "quantization", parents=("hf-overrides",))
    # A later --speculative-config replaces the whole object: the first one's keys are not in force.
    found = effect_knobs(server("--speculative-config", spec, "--speculative-config={\"method\": \"mtp\"}"))
    assert [k.wins for k in find(found, "quantization")] == [False]
    assert [k.wins for k in find(found, "method")] == [False, True]


def test_a_json_value_that_is_not_an_object_has_no_keys():
    found = effect_knobs(server("--speculative-config", "[1, 2]", "--hf-overrides", "{broken"))
    assert not [k for k in found if k.kind == JSON_KEY]


def test_env_and_client_kinds():
    client = Effect(kind=CLIENT, site=SITE, argv=("python3", "utils/bench_serving/benchmark_serving.py",
                                                  "--use-chat-template", "--model", "m"),
                    env=(("USE_CHAT_TEMPLATE", "true"),), client=True, how="utils/bench_serving/benchmark_serving.py")
    found = effect_knobs(client)
    assert values(found, "use-chat-template", CLIENT_FLAG) == [("true", True)]
    assert values(found, "USE_CHAT_TEMPLATE", CLIENT_ENV) == [("true", True)]
    assert all(k.role == "client" for k in found)
    found = effect_knobs(server(env=(("SGLANG_GLM_NEXTN_MOE_PTPC", "1"),)))
    assert values(found, "sglang-glm-nextn-moe-ptpc", SERVER_ENV) == [("1", True)]
    assert all(k.role == "server" for k in found)


def test_unknown_values_and_unknown_words():
    why = Unknown("the text of /etc/q")
    found = effect_knobs(server("--speculative-draft-model-quantization", why, Unknown("set by eval", prefix="--draft-dtype="), Unknown("a word"),
                                Rest("an array an undecided branch grew")))
    k = find(found, "speculative-draft-model-quantization")[0]
    assert not k.known and k.value.why == "the text of /etc/q"
    k = find(found, "draft-dtype")[0]
    assert not k.known and k.value.why == "set by eval"   # `--x=` known, its value not
    hidden = opaque(found, SERVER_FLAG)
    assert [h.value.why for h in hidden] == ["a word", "an array an undecided branch grew"]
    assert "could not resolve" in hidden[0].shown
    # A flag whose own name is unknown hides any flag.
    assert opaque(effect_knobs(server(Unknown("x", prefix="--speculative-"))))
    # An unknown env value is kept as unknown.
    found = effect_knobs(server(env=(("SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE", Unknown("read from a file")),)))
    assert not find(found, "SGLANG_NVFP4_CKPT_FP8_NEXTN_MOE")[0].known


def test_a_knob_keeps_its_effect_for_evidence_and_branches():
    e = server("--speculative-draft-model-quantization", "fp8", under=("if [[ $X == 1 ]] at a.sh:3",),
               chain=(Site("sweep job", 1), Site("runners/launch_b200.sh", 12)))
    k = find(effect_knobs(e), "speculative-draft-model-quantization")[0]
    assert k.effect.site == SITE and k.effect.under == ("if [[ $X == 1 ]] at a.sh:3",)
    assert knobs.chain_note(e) == ("via sweep job:1 -> runners/launch_b200.sh:12 -> benchmarks/x.sh:7; "
                                   "under if [[ $X == 1 ]] at a.sh:3")
    long = server(chain=tuple(Site(f"s{i}.sh", i) for i in range(1, 8)))
    assert knobs.brief(long) == "s1.sh:1 -> ... -> s6.sh:6 -> s7.sh:7 -> benchmarks/x.sh:7"


def test_a_trace_lists_servers_and_clients_only_and_is_read_once():
    recipe = Effect(kind=SERVER, site=SITE, argv=("backend.type='sglang'",), how="srt-slurm recipe (sglang)")
    t = Trace([Effect(kind=EXEC, site=SITE, argv=("echo", "--use-chat-template")), recipe,
               server("--tp", "8")])
    found = knobs.knobs(t)
    assert [k.name for k in found] == ["--tp"]  # not python's `-m`, the echo's word, the recipe's items
    assert knobs.knobs(t) is found                    # memoised per trace
    t.effects.append(server("--tp", "4"))
    assert len(knobs.knobs(t)) == 2                   # a grown trace is read again
    assert knobs.servers(t) == t.effects[2:] and not knobs.clients(t)
    assert reached(t) and not reached(Trace([Effect(kind=EXEC, site=SITE, argv=("true",))]))


def test_json_keys_carry_their_depth():
    spec = '{"method": "mtp", "draft": {"kv_cache_dtype": "fp8", "layers": [{"dtype": "fp8"}]}}'
    found = effect_knobs(server("--speculative-config", spec))
    assert {k.name: k.depth for k in found if k.kind == JSON_KEY} == {
        "method": 1, "draft": 1, "kv_cache_dtype": 2, "layers": 2, "dtype": 3}
    assert all(k.depth == 0 for k in found if k.kind != JSON_KEY)


def test_whether_a_server_speculates_by_its_settings_in_force():
    from recipes.launch.knobs import speculates

    assert speculates(server("--speculative-algorithm", "EAGLE", "--speculative-num-steps", "3")) is True
    assert speculates(server("--tp", "8")) is False
    assert speculates(server("--tp", "8", Rest("an array the branches left different"))) is None  # a flag may hide
    assert speculates(server("--speculative-algorithm", Unknown("not known"))) is None

    def vllm(*argv):
        return Effect(kind=SERVER, site=SITE, argv=("vllm", "serve", "m") + argv, how="vllm")

    assert speculates(vllm("--speculative-config", '{"model": "d", "num_speculative_tokens": 3}')) is True
    assert speculates(vllm("--speculative-config", '{"method": "mtp"}', "--speculative-config", "{}")) is False
    assert speculates(vllm("--speculative-config", "not json")) is None
    assert speculates(vllm("--speculative-model", "d", "--num-speculative-tokens", "3")) is None  # vLLM's early form
    trt = Effect(kind=SERVER, site=SITE, argv=("trtllm-serve", "m", "--config", "c.yaml"), how="trtllm")
    assert speculates(trt) is None  # its speculative_config is in the file


def test_an_unquoted_unknown_after_a_flag_may_hold_more_flags():
    # `--trust-remote-code $(cat /flags)`: bash splits the output, so a speculative flag may be
    # among its words; `--served-model-name "$(cat /name)"` is one word, the flag's value.
    from recipes.launch.knobs import settings_in_force
    from recipes.launch.trace import SERVER, Effect, Site
    from recipes.launch.words import Split, Unknown

    def why(word):
        e = Effect(kind=SERVER, site=Site("b.sh", 3), how="vllm", argv=("vllm", "serve", "m", "--trust-remote-code", word))
        return settings_in_force(e)[1]

    assert why(Split("the output of cat")) is not None
    assert why(Unknown("the output of cat")) is None


def test_a_command_may_set_only_the_flags_its_option_words_name():
    # Every SERVER_FLAG knob's key is named by an option word (Check 8 builds no knobs otherwise).
    effects = [server("--Json_Model_Override_Args={}", "--tp", "8"),
               server("--model-path", "org/m", Unknown("x", prefix="--hf-overrides=")),
               server("--tp", "-1", "--kv-cache-dtype", "fp8")]
    for e in effects:
        keys = {k.key for k in knobs.effect_knobs(e) if k.kind == SERVER_FLAG and not k.opaque}
        assert keys and knobs.may_set(e, keys) and all(knobs.may_set(e, {key}) for key in keys)
    assert knobs.may_set(effects[0], {"json-model-override-args"}) and knobs.may_set(effects[1], {"hf-overrides"})
    # A value is no option, a number no flag: `-1` and `fp8` name nothing.
    assert not knobs.may_set(effects[2], {"1", "-1", "fp8", "hf-overrides"})
