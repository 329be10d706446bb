"""Check 11 beyond the case files: the injector reproduction and old-layout launchers."""
from __future__ import annotations

from checks.golden_al import injected_acceptance
from recipes.launch.trace import SERVER
from checks.context import ReviewContext
from tests.builders import RUNNERS, agentic_entry, build_snapshot, check_row

GOLDEN = "golden_al_distribution/dsv4_mtp.yaml"
GOLDEN_TEXT = "deepseek-v4-pro:\n  thinking_on:\n    3: 2.49\n  thinking_off:\n    3: 2.97\n"
MASTER = agentic_entry("dsv4-fp4-mi355x-sglang-agentic-mtp", image="lmsysorg/sglang-rocm:v0.5.21",
                       model="deepseek-ai/DeepSeek-V4-Pro", framework="sglang",
                       arm="tp: 8, ep: 1, spec-decoding: mtp, conc-list: [4]")
SCRIPT = "benchmarks/single_node/agentic/dsv4_fp4_mi355x_sglang_mtp.sh"
LAUNCH = ("python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4-Pro --tp 8 "
          "--speculative-algorithm NEXTN --speculative-num-steps 3\n")
GUARDED = ('#!/usr/bin/env bash\nDSV4_GOLDEN_AL=2.49\nif [[ "${EVAL_ONLY}" != "true" ]]; then\n'
           '  export SGLANG_SIMULATE_ACC_LEN=$DSV4_GOLDEN_AL\nfi\n' + LAUNCH)
UNGUARDED = "#!/usr/bin/env bash\nexport SGLANG_SIMULATE_ACC_LEN=2.49\n" + LAUNCH
NONE = "#!/usr/bin/env bash\n# export SGLANG_SIMULATE_ACC_LEN=2.49\n" + LAUNCH


def _row(script: str, golden: str = GOLDEN_TEXT):
    return check_row(11, {"base": {GOLDEN: golden, **RUNNERS},
                          "head": {"configs/amd-master.yaml": MASTER, SCRIPT: script}})


def test_old_layout_guarded_export_at_golden_passes():
    row = _row(GUARDED)
    assert row.status.value == "PASS", row.reason
    assert "SGLANG_SIMULATE_ACC_LEN=2.49" in row.reason and "dsv4_mtp.yaml" in row.reason


def test_old_layout_unguarded_export_fails_for_evals():
    row = _row(UNGUARDED)
    assert row.status.value == "FAIL"
    # The server's line, with the chain that starts it: the trace's eval-only run has the knob.
    assert "EVAL_ONLY" in row.reason and f"{SCRIPT}:3" in row.reason


def test_old_layout_commented_export_is_not_pinning():
    row = _row(NONE)
    assert row.status.value == "FAIL"
    assert "not pinned" in row.reason and "2.49" in row.reason


def test_old_layout_wrong_value_fails():
    row = _row(GUARDED.replace("2.49", "2.97"))
    assert row.status.value == "FAIL"
    assert "2.97" in row.reason and "2.49" in row.reason


def _seedlike_ctx(args: str, *, scenario: str = "agentic-coding", spec: str = "draft_model") -> ReviewContext:
    master = agentic_entry("dsv41flash-fp4-mi355x-atom-agentic-dspark", scenario=scenario,
                           arm=f"tp: 2, ep: 1, spec-decoding: {spec}, conc-list: [1], srt-recipe: benchmarks/r.yaml")
    recipe = ("model: {path: 'hf:deepseek-ai/DeepSeek-V4.1-Flash', container: 'rocm/atom-dev:n1', precision: fp4}\n"
              "engine: atom\nroles:\n  agg:\n    nodes: 1\n    workers: 1\n    gpus: 2\n    args:\n" + args +
              "benchmark:\n  type: custom\n  command: bash /infmax-workspace/benchmarks/srt_agentic.sh\n  env: {CONC: '1'}\n")
    golden = "deepseek-v4.1-flash:\n  thinking_on:\n    5: 3.51\n  thinking_off:\n    5: 3.2\n"
    snap = build_snapshot({"head": {"inferencex-e2e/configs/amd-master.yaml": master, "inferencex-e2e/benchmarks/r.yaml": recipe,
                                    "inferencex-e2e/infx/golden_al_distribution/dsv41flash_dspark.yaml": golden}})
    return ReviewContext(snap)


def _injected(ctx: ReviewContext, mode: str = "thinking_on"):
    point = ctx.head_repo.points[0]
    return injected_acceptance(point, ctx.head_repo.variant_for(point), ctx.head_repo.golden, mode)


def test_injected_acceptance_reproduces_the_injector():
    ctx = _seedlike_ctx("      method: dspark\n      num-speculative-tokens: 5\n")
    al, why = _injected(ctx)
    assert al == 3.51 and "dsv41flash_dspark.yaml" in why
    assert _injected(ctx, "thinking_off")[0] == 3.2


def test_injected_acceptance_needs_a_committed_k():
    al, why = _injected(_seedlike_ctx("      method: dspark\n      num-speculative-tokens: 4\n"))
    assert al is None and "K=4" in why


def test_injected_acceptance_off_for_fixed_sequence_points():
    ctx = _seedlike_ctx("      method: dspark\n      num-speculative-tokens: 5\n", scenario="fixed-seq-len")
    point = ctx.head_repo.points[0]
    al, why = injected_acceptance(point, None, ctx.head_repo.golden, "thinking_on")
    assert al is None and "real acceptance" in why


# The knob as the trace has it: both runs of the point interpreted (EVAL_ONLY=false, then
# EVAL_ONLY=true RUN_EVAL=true), whatever shell builds the value or the name.
def test_old_layout_set_only_in_the_eval_only_run_fails():
    script = GUARDED.replace('!= "true"', '== "true"')
    row = _row(script)
    assert row.status.value == "FAIL" and not row.reason.startswith("could not verify"), row.reason
    assert "only when EVAL_ONLY is true" in row.reason and f"{SCRIPT}:6" in row.reason, row.reason


def test_a_guard_the_script_defeats_is_read_as_run():
    # The `if` reads like a guard, but EVAL_ONLY is overwritten first: the eval-only run's
    # server gets the knob too (a reading of the `if` text passed this).
    script = GUARDED.replace("DSV4_GOLDEN_AL=2.49\n", "DSV4_GOLDEN_AL=2.49\nEVAL_ONLY=false\n")
    row = _row(script)
    assert row.status.value == "FAIL" and "without an EVAL_ONLY guard" in row.reason, row.reason
    assert f"{SCRIPT}:7" in row.reason, row.reason


def test_a_value_built_by_printf_v_is_judged():
    script = GUARDED.replace("DSV4_GOLDEN_AL=2.49\n", "printf -v DSV4_GOLDEN_AL '%.2f' 2.49\n")
    row = _row(script)
    assert row.status.value == "PASS", row.reason
    assert "SGLANG_SIMULATE_ACC_LEN=2.49 only outside eval runs" in row.reason, row.reason
    row = _row(script.replace("2.49\n", "2.7\n"))
    assert row.status.value == "FAIL" and "writes AL 2.7" in row.reason and "2.49" in row.reason, row.reason


def test_a_knob_named_by_a_variable_and_passed_through_an_array_is_seen():
    # The knob's name is in a variable and reaches the server through `env "${ENVS[@]}"`, in
    # every run: no text says SGLANG_SIMULATE_ACC_LEN= where a pattern would look.
    script = ('#!/usr/bin/env bash\nKNOB=SGLANG_SIMULATE_\nKNOB+=ACC_LEN\nENVS=("$KNOB=2.49")\n'
              'env "${ENVS[@]}" ' + LAUNCH)
    row = _row(script)
    assert row.status.value == "FAIL" and "without an EVAL_ONLY guard" in row.reason, row.reason
    assert "SGLANG_SIMULATE_ACC_LEN=2.49" in row.reason and f"{SCRIPT}:5" in row.reason, row.reason
    guarded = script.replace('ENVS=("$KNOB=2.49")\n',
                             'ENVS=()\n[[ "${EVAL_ONLY:-false}" == "true" ]] || ENVS+=("$KNOB=2.49")\n')
    row = _row(guarded)
    assert row.status.value == "PASS", row.reason


def test_a_knob_on_a_branch_the_point_does_not_decide_is_could_not_verify():
    script = GUARDED.replace('if [[ "${EVAL_ONLY}" != "true" ]]', 'if [[ "${GPU_ARCH}" == "mi355x" ]]')
    row = _row(script)
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert "GPU_ARCH" in row.reason and f"{SCRIPT}:6" in row.reason, row.reason
    assert all(e.unavailable for e in row.evidence)


def test_a_trace_that_stops_before_the_server_is_could_not_verify_never_a_missing_knob():
    script = NONE.replace("# export SGLANG_SIMULATE_ACC_LEN=2.49\n", "exit 1\n")
    row = _row(script)
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert "before any server starts" in row.reason and "not pinned" not in row.reason, row.reason
    hidden = NONE.replace("# export SGLANG_SIMULATE_ACC_LEN=2.49\n", '"$(which launcher)" --serve\nexit 0\n')
    row = _row(hidden)
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert "no server the bot can read" in row.reason and f"{SCRIPT}:2" in row.reason, row.reason


def test_the_runs_export_what_the_agentic_workflow_exports():
    # InferenceX's agentic launchers stop unless the job exports these (benchmark_lib.sh
    # `check_env_vars`): the runs Check 11 traces export them as the workflow does.
    lib = ('check_env_vars() { local v; for v in "$@"; do if [[ -z "${!v:-}" ]]; then echo "$v not set" >&2; '
           'exit 1; fi; done; }\ncheck_env_vars MODEL TP CONC TOTAL_CPU_DRAM_GB RESULT_DIR DURATION\n')
    row = _row(GUARDED.replace("#!/usr/bin/env bash\n", "#!/usr/bin/env bash\n" + lib))
    assert row.status.value == "PASS", row.reason
    row = _row(GUARDED.replace("#!/usr/bin/env bash\n", "#!/usr/bin/env bash\n" + lib.replace("TP CONC", "TP CONC NOT_EXPORTED")))
    assert row.status.value == "FAIL" and "before any server starts" in row.reason, row.reason


def test_a_definite_finding_on_one_point_is_not_hidden_by_a_doubt_on_another():
    other = "benchmarks/single_node/agentic/dsv4_fp8_mi355x_sglang_mtp.sh"
    master = MASTER + MASTER.replace("dsv4-fp4-", "dsv4-fp8-").replace("precision: fp4", "precision: fp8")
    assert "precision: fp8" in master
    doubtful = GUARDED.replace('if [[ "${EVAL_ONLY}" != "true" ]]', 'if [[ "${GPU_ARCH}" == "mi355x" ]]')
    for first, second in ((doubtful, GUARDED.replace("2.49", "2.97")), (GUARDED.replace("2.49", "2.97"), doubtful)):
        row = check_row(11, {"base": {GOLDEN: GOLDEN_TEXT, **RUNNERS},
                             "head": {"configs/amd-master.yaml": master, SCRIPT: first, other: second}})
        assert row.status.value == "FAIL" and not row.reason.startswith("could not verify"), row.reason
        assert "writes AL 2.97" in row.reason, row.reason


# The servers' settings are read by recipes.launch.knobs, as Checks 8, 9 and 13 read them.
def test_an_array_tail_the_branches_leave_unknown_may_hold_the_speculation():
    # `--trust-remote-code` is a boolean: the array after it is not its value. One arm of an
    # undecided branch adds the speculative flags there, so whether the server speculates is not
    # known (a reader that took the array for the flag's value passed "runs without speculation").
    script = ('#!/usr/bin/env bash\nEXTRA=()\nif [[ "${GPU_ARCH}" == "mi355x" ]]; then\n'
              '  EXTRA+=(--speculative-algorithm NEXTN --speculative-num-steps 3)\nfi\n'
              'python3 -m sglang.launch_server --model-path m --tp 8 --trust-remote-code "${EXTRA[@]}"\n')
    row = _row(script)
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    # The server runs once per value the branch left: one of them speculates, unpinned.
    assert "one of 2 values of EXTRA" in row.reason and "GPU_ARCH" in row.reason and f"{SCRIPT}:6" in row.reason, row.reason


def test_an_environment_variable_spelled_like_a_speculative_flag_is_not_the_flag():
    # SGLang reads its speculative settings from its command line: exported variables that
    # merely share the flags' names leave the server without speculation (nothing to pin).
    script = ("#!/usr/bin/env bash\nexport SPECULATIVE_ALGORITHM=NEXTN\nexport SPECULATIVE_NUM_STEPS=3\n"
              "python3 -m sglang.launch_server --model-path m --tp 8\n")
    row = _row(script)
    assert row.status.value == "PASS", row.reason
    assert "runs without speculative decoding" in row.reason and f"{SCRIPT}:4" in row.reason, row.reason


def test_only_the_json_flag_s_own_keys_are_in_force():
    from recipes.launch.knobs import settings_in_force
    from recipes.launch.trace import Effect, Site

    spec = '{"method": "eagle", "draft": {"synthetic_acceptance_length": 2.5}, "num_speculative_tokens": 3}'
    e = Effect(kind=SERVER, site=Site("b.sh", 3), how="vllm",
               argv=("vllm", "serve", "m", "--speculative-config", spec, "--speculative-config", '{"method": "mtp"}'))
    found, why = settings_in_force(e)
    assert why is None
    assert [(k.name, k.value) for k in found if k.parent] == [("method", "mtp")]  # the last flag wins whole
    found, _ = settings_in_force(Effect(kind=SERVER, site=Site("b.sh", 3), how="vllm",
                               argv=("vllm", "serve", "m", "--speculative-config", spec)))
    assert {k.name: k.depth for k in found if k.parent} == {"method": 1, "draft": 1, "num_speculative_tokens": 1}


def _counting_runs(monkeypatch) -> list:
    import checks.acceptance_runs as runs

    calls: list = []
    real = runs._run

    def counting(ctx, v, inputs, symbolic):
        calls.append((inputs.get("EVAL_ONLY"), symbolic))
        return real(ctx, v, inputs, symbolic)

    monkeypatch.setattr(runs, "_run", counting)
    return calls


# More values than a merge keeps (recipes.launch.words.MAX_ALTERNATIVES): words it cannot count.
EXTRA = ('case "${GPU_ARCH}" in a) EXTRA=(-a);; b) EXTRA=(-a -b);; c) EXTRA=(-a -b -c);; d) EXTRA=(-d);; '
         '*) EXTRA=(--x -y -z -w);; esac\n')
VLLM_MASTER = MASTER.replace("framework: sglang", "framework: vllm").replace("sglang-agentic", "vllm-agentic")
VLLM_SCRIPT = ('#!/usr/bin/env bash\nSPEC=\'{"method": "mtp", "num_speculative_tokens": 3}\'\n'
               'if [[ "${EVAL_ONLY}" != "true" ]]; then\n'
               '  SPEC=\'{"method": "mtp", "num_speculative_tokens": 3, "synthetic_acceptance_length": 2.49}\'\nfi\n' + EXTRA +
               'vllm serve deepseek-ai/DeepSeek-V4-Pro --tp 8 --max-num-seqs "$CONC" --speculative-config "$SPEC" '
               '--trust-remote-code "${EXTRA[@]}"\n')


def test_a_word_it_cannot_read_is_traced_again_only_where_it_may_hide_what_is_judged(monkeypatch):
    # The server has its method, draft length and knob; an array tail the branches leave unknown
    # follows a boolean flag. SGLang's knob is an environment variable, which no word of a command
    # line can hold: neither run is traced again with the point's own values (each such trace
    # spends the review's step budget: #2647 and #2517 of the history ran out of it), and the
    # eval-only run is judged as read.
    calls = _counting_runs(monkeypatch)
    row = _row(GUARDED.replace(LAUNCH, EXTRA + LAUNCH.replace("\n", ' --max-running-requests "$CONC" '
                                                              '--trust-remote-code "${EXTRA[@]}"\n')))
    assert row.status.value == "PASS" and "only outside eval runs" in row.reason, row.reason
    assert calls == [("false", True), ("true", True)], calls
    # vLLM's knob is a key of --speculative-config, which the tail may repeat: the benchmark run,
    # which has it, is not traced again; the eval-only run, which must not have it, is, and stays
    # "could not verify" (the rule that evals keep real acceptance is in force).
    calls.clear()
    row = check_row(11, {"base": {GOLDEN: GOLDEN_TEXT, **RUNNERS},
                         "head": {"configs/amd-master.yaml": VLLM_MASTER, SCRIPT.replace("sglang", "vllm"): VLLM_SCRIPT}})
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify that"), row.reason
    assert "cannot be read whole" in row.reason and "case arm" in row.reason, row.reason
    assert ("false", False) not in calls and ("true", False) in calls, calls


def test_whether_a_launcher_s_point_speculates_is_read_from_its_traced_servers():
    # spec-decoding: none in the master config; the launcher decides. A server whose speculative
    # flag is built by `printf -v` speculates (the script reading missed it: N/A, a silent pass
    # of an unpinned AL); one whose speculative flags belong to another model's branch does not.
    master = MASTER.replace("spec-decoding: mtp", "spec-decoding: none")
    script = SCRIPT.replace("_mtp", "")
    launch = "python3 -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V4-Pro --tp 8 "

    def row(text: str):
        return check_row(11, {"base": {GOLDEN: GOLDEN_TEXT, **RUNNERS}, "head": {"configs/amd-master.yaml": master, script: text}})

    built = row("#!/usr/bin/env bash\nprintf -v ARGS '%s %s' --speculative-algorithm NEXTN\n" + launch +
                "$ARGS --speculative-num-steps 3\n")
    assert built.status.value == "FAIL" and "not pinned" in built.reason and f"{script}:3" in built.reason, built.reason
    other = row('#!/usr/bin/env bash\nSPEC=()\nif [[ "$MODEL" == "other/model" ]]; then\n'
                '  SPEC=(--speculative-algorithm NEXTN --speculative-num-steps 3)\nfi\n' + launch + '"${SPEC[@]}"\n')
    assert other.status.value == "N/A", other.reason


def test_servers_under_branches_that_agree_need_no_trace_with_the_points_own_values():
    # A server run once per value an undecided branch left (its KV-offload arguments) reads the
    # same draft length and AL under every branch: the point's own values cannot change that.
    from checks.acceptance_runs import Run, Served, _unsettled
    from recipes.launch.knobs import JSON_KEY, Knob
    from recipes.launch.words import Unknown
    from recipes.launch.trace import SERVER, Effect, Site
    from recipes.values import flag_name

    def served(under, k, al):
        e = Effect(kind=SERVER, site=Site("x.sh", 3), under=under)
        knob = Knob("synthetic_acceptance_length", flag_name("synthetic_acceptance_length"), al, JSON_KEY, e,
                    parent="--speculative-config", depth=1)
        return Served(effect=e, settings=[knob], method="mtp", k=k)
    names = ("synthetic_acceptance_length",)
    agree = Run(servers=[served(("one of 2 values of OFFLOAD_ARGS ...: no words",), "3", "2.49"),
                         served(("one of 2 values of OFFLOAD_ARGS ...: `--kv-transfer-config x`",), "3", "2.49")])
    assert not _unsettled(agree, names, False)
    differ = Run(servers=[served(("`[ \"$CONC\" -le 8 ]` at x.sh:2",), "3", "2.49"), served(("else",), "2", "2.27")])
    assert _unsettled(differ, names, False)
    assert _unsettled(Run(servers=[served((), "3", Unknown("x"))]), names, False)
