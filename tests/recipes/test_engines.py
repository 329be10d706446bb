"""One engine vocabulary (recipes/engines.py): a new engine is one profile, and a repository's
engine policy reaches every use."""
from __future__ import annotations

import textwrap

import pytest

from checks.context import ReviewContext
from checks.engine import evaluate
from recipes.launch.path.serving import engine_display, engine_name, serving_views
from recipes import engines
from recipes.config import RepoConfig
from recipes.engines import AL_AS_IS, EngineProfile, SpecFields, display_name, engine_of
from recipes.scripts import ENGINE_PACKAGES, analyze_script
from recipes.srt import parse_recipe
from tests.builders import build_snapshot

TOY = EngineProfile(
    name="toyllm", display="ToyLLM", frameworks=("toy", "toy-disagg"),
    framework_display={"toy-disagg": "ToyLLM disagg"}, aliases=("toy-llm",), open_source=True,
    packages=("toyllm-core",), image_orgs=("toyorg",),
    recipe_repos=("toy-project/recipes",), recipe_sites=("recipes.toy.ai",),
    tp_flags=("toy-tp",),
    spec=SpecFields(method=("toy-spec",), draft_length="toy-k", draft_model="toy-draft"),
    acceptance_knob="TOY_SIM_ACC", acceptance_mechanism="TOY_SIM_ACC={al}",
    acceptance_knobs={"TOY_SIM_ACC": AL_AS_IS}, synthetic_env=("TOY_SIM_ACC",),
    launch_modules=("toyllm.entrypoints.server",), launch_commands=("toyllm up", "toy-serve"),
)

E2E = "inferencex-e2e"
RECIPE = "benchmarks/single_node/srt-slurm-recipes/dsv41flash/toy/mi355x-fp4-mtp/agentic.yaml"
KEY = "dsv41flash-fp4-mi355x-toy-agentic-dspark"


@pytest.fixture
def toy():
    engines.register(TOY)
    yield TOY
    engines.unregister(TOY.name)


def _tree(framework: str = "toy", engine: str = "toyllm", image: str = "toyorg/toy:1",
          args: str = "toy-tp: 2\ntoy-spec: DSPARK\ntoy-k: 5") -> dict[str, dict[str, str]]:
    """A one-entry PR: an agentic DSpark point served by an srt recipe of `engine`."""
    base = {
        f"{E2E}/perf-changelog.yaml": "- config-keys:\n    - old\n  description:\n    - old\n"
                                      "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/1\n",
        f"{E2E}/docs/ci-procedures.md": "# CI\n",
        f"{E2E}/infx/golden_al_distribution/dsv41flash_dspark.yaml":
            "deepseek-v4.1-flash:\n  thinking_on:\n    5: 3.51\n  thinking_off:\n    5: 3.20\n",
        f"{E2E}/benchmarks/srt_agentic.sh": "#!/usr/bin/env bash\nexec python3 -m aiperf profile --model \"${MODEL}\"\n",
    }
    master = textwrap.dedent(f"""\
        {KEY}:
          image: {image}
          model: deepseek-ai/DeepSeek-V4.1-Flash
          model-prefix: dsv41flash
          runner: cluster:mi355x-amds
          precision: fp4
          framework: {framework}
          multinode: false
          scenarios:
            agentic-coding:
            - search-space:
              - {{ tp: 2, ep: 1, spec-decoding: draft_model, conc-list: [1], srt-recipe: {RECIPE} }}
        """)
    recipe = textwrap.dedent(f"""\
        name: toy
        model:
          path: hf:deepseek-ai/DeepSeek-V4.1-Flash
          container: {image}
          precision: fp4
        engine: {engine}
        roles:
          agg:
            nodes: 1
            workers: 1
            gpus: 2
            args: {{ARGS}}
        benchmark:
          type: custom
          command: bash /infmax-workspace/benchmarks/srt_agentic.sh
          env:
            MODEL: deepseek-ai/DeepSeek-V4.1-Flash
            CONC: '1'
        """).replace("{ARGS}", "{" + ", ".join(args.splitlines()) + "}")
    return {"base": base, "head": {f"{E2E}/configs/amd-master.yaml": master, f"{E2E}/{RECIPE}": recipe}}


def _snapshot(config: dict | None = None, **tree) -> object:
    spec = {"number": 3603, **_tree(**tree)}
    if config:
        spec["config"] = config
    return build_snapshot(spec)


def _binding_findings(ctx) -> list:
    return [f for f in ctx.head_repo.bindings.findings if f.code == "no-variant"]


def test_builtin_profiles_are_the_config_defaults():
    policy = RepoConfig().policy
    assert policy.framework_family == {f: p.name for p in engines.engines() for f in p.frameworks}
    assert set(policy.open_source_frameworks) == {"vllm", "vllm-disagg", "dynamo-vllm", "sglang", "sglang-disagg",
                                                  "dynamo-sglang"}
    assert set(policy.vendor_frameworks) == {"trt", "dynamo-trt", "atom", "atom-disagg", "tilert"}
    assert policy.upstream_image_orgs == {"vllm": ["vllm"], "sglang": ["lmsysorg"]}
    assert policy.event_publication_frameworks == ["trt", "dynamo-trt"]
    assert display_name("dynamo-trt") == "Dynamo TRT-LLM" and display_name("trtllm") == "TRT-LLM"
    assert display_name("nonesuch") == "NONESUCH"


def test_engine_packages_match_any_pep503_spelling():
    # The scripts list and the policy list were two lists; now one, compared normalised.
    for spelling in ("sgl_kernel", "SGL-Kernel", "tensorrt_llm", "deep_gemm", "deep.ep", "mori"):
        assert spelling in ENGINE_PACKAGES, spelling
    assert "transformers" not in ENGINE_PACKAGES and "lm-eval" not in ENGINE_PACKAGES


def test_a_new_engine_is_one_profile_config_and_scripts(toy):
    policy = RepoConfig().policy
    assert policy.framework_family["toy-disagg"] == "toyllm"
    assert "toy" in policy.open_source_frameworks and policy.upstream_image_orgs["toyllm"] == ["toyorg"]
    assert policy.upstream_recipe_family_sources["toyllm"] == ["toy-project/recipes", "recipes.toy.ai"]
    assert "TOY_SIM_ACC" in policy.synthetic_acceptance_env
    assert engine_name("toy-disagg", policy) == "ToyLLM disagg" and engine_display("toy", policy) == "ToyLLM"
    analysis = analyze_script("pip install git+https://github.com/me/toyllm_core.git\n", "s.sh")
    (pip,) = analysis.pip_installs
    assert pip.engine_targets == ["git+https://github.com/me/toyllm_core.git"]
    # Its server starts, in each of the three ways a profile can spell, are launches of it.
    script = ("python3 -m toyllm.entrypoints.server --toy-tp 8 &\n"
              "toyllm up --model \"$MODEL\" &\n"
              "nohup toy-serve --port 8000 &\n")
    launches = analyze_script(script, "launch.sh").server_launches
    assert [(s.engine, s.entry) for s in launches] == [
        ("toyllm", "toyllm.entrypoints.server"), ("toyllm", "toyllm up"), ("toyllm", "toy-serve")]
    assert launches[0].flag("toy-tp").value == "8"


def test_a_new_engine_is_one_profile_srt_recipe(toy):
    recipe = parse_recipe(_tree()["head"][f"{E2E}/{RECIPE}"], RECIPE)
    (v,) = recipe.variants
    assert v.engine == "toyllm" and v.tp() == 2
    spec = v.spec_decode()
    assert (spec.method, spec.draft_length) == ("dspark", 5)
    assert engines.canonical_engine("Toy-LLM") == "toyllm"


def test_a_new_engine_is_one_profile_end_to_end(toy):
    """A toy engine binds its srt recipe, has its upstream-image rule (Check 6) and gets the
    golden AL injected through its own mechanism (Check 11), with no other change."""
    snap = _snapshot()
    ctx = ReviewContext(snap)
    (view,) = serving_views(ctx)
    assert view.variant is not None and view.engine == "toyllm" and view.engine_name == "ToyLLM"
    verdict = evaluate(snap, only={6, 11})
    assert verdict.row(11).status.value == "PASS" and "TOY_SIM_ACC=3.51" in verdict.row(11).reason
    assert verdict.row(6).status.value == "PASS"
    forked = evaluate(_snapshot(image="fork/toy:1"), only={6}).row(6)
    assert forked.status.value == "FAIL" and "toyorg/" in forked.reason


def test_a_recipe_of_another_engine_does_not_bind_a_new_engines_point(toy):
    snap = _snapshot(engine="sglang", args="tensor-parallel-size: 2\nspeculative-algorithm: DSPARK\n"
                                            "speculative-dspark-block-size: 5")
    ctx = ReviewContext(snap)
    (view,) = serving_views(ctx)
    assert view.variant is None and view.unavailable
    assert any("engine sglang != toyllm" in f.message for f in _binding_findings(ctx))


def test_a_repository_framework_family_override_reaches_binding_effective_and_injector():
    """`framework_family` in the repository config names a framework the code does not know
    (`sglang-exp`): binding compares its engine, the effective config and the view name it, and
    the golden-AL injector (Check 11) treats it as SGLang."""
    args = "tensor-parallel-size: 2\nspeculative-algorithm: DSPARK\nspeculative-dspark-block-size: 5"
    override = {"policy": {"framework_family": {**RepoConfig().policy.framework_family, "sglang-exp": "sglang"}}}
    plain = _snapshot(framework="sglang-exp", engine="sglang", image="lmsysorg/sglang:1", args=args)
    row = evaluate(plain, only={11}).row(11)
    assert row.status.value == "FAIL" and "no engine mapping" in row.reason

    snap = _snapshot(override, framework="sglang-exp", engine="sglang", image="lmsysorg/sglang:1", args=args)
    ctx = ReviewContext(snap)
    assert engine_of("sglang-exp", ctx.config.policy) == "sglang"
    (view,) = serving_views(ctx)
    assert view.variant is not None and view.engine == "sglang" and view.engine_name == "SGLang"
    row = evaluate(snap, only={11}).row(11)
    assert row.status.value == "PASS" and "SGLANG_SIMULATE_ACC_LEN=3.51" in row.reason

    # The same override pointing at the wrong engine stops the recipe from binding.
    wrong = {"policy": {"framework_family": {"sglang-exp": "vllm"}}}
    ctx = ReviewContext(_snapshot(wrong, framework="sglang-exp", engine="sglang", image="lmsysorg/sglang:1", args=args))
    (view,) = serving_views(ctx)
    assert view.variant is None and view.unavailable
    assert any("engine sglang != vllm" in f.message for f in _binding_findings(ctx))


def test_registering_twice_or_a_taken_framework_is_refused(toy):
    with pytest.raises(ValueError):
        engines.register(TOY)
    with pytest.raises(ValueError):
        engines.register(EngineProfile(name="other", display="Other", frameworks=("vllm",)))


def test_display_name_and_image_org_overrides_reach_the_rows():
    """`engine_display_names` and `upstream_image_orgs` from the repository config are what the
    serving views and Check 6 use."""
    names = {**RepoConfig().policy.engine_display_names, "sglang": "SGLang (upstream)"}
    orgs = {"sglang": ["lmsysorg", "sgl-fork"]}
    args = "tensor-parallel-size: 2\nspeculative-algorithm: DSPARK\nspeculative-dspark-block-size: 5"
    snap = _snapshot({"policy": {"engine_display_names": names, "upstream_image_orgs": orgs}},
                     framework="sglang", engine="sglang", image="sgl-fork/sglang:1", args=args)
    (view,) = serving_views(ReviewContext(snap))
    assert view.engine_name == "SGLang (upstream)"
    row = evaluate(snap, only={6}).row(6)
    assert row.status.value == "PASS" and row.details["entries"][KEY]["image_rule"] == "upstream"
    default = evaluate(_snapshot(framework="sglang", engine="sglang", image="sgl-fork/sglang:1", args=args),
                       only={6}).row(6)
    assert default.status.value == "FAIL" and default.details["entries"][KEY]["image_rule"] == "fork"


def test_an_engines_profile_is_answered_again_after_the_registry_changes():
    name = TOY.name
    assert engines.profile(name) is None  # asked, and the answer kept, before it is registered
    engines.register(TOY)
    try:
        assert engines.profile(name) is TOY and engines.profile(name.upper()) is TOY
    finally:
        engines.unregister(name)
    assert engines.profile(name) is None
    assert engines.profile({"type": name}) is None and engines.profile("SGLang").name == "sglang"
