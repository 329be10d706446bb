"""The bundled sandbox worlds (ghsim/worlds): valid, internally consistent, and carrying the
facts their README promises (the seed's 9-point frontier, its complete sign-off, the rejected
world's deliberate failures)."""
from __future__ import annotations

import difflib
import json
import math
import re
import shutil
from datetime import date
from pathlib import Path

import pytest
import yaml

from bot.prfile import PRFile
from recipes.yamlio import load_yaml

PROJECT = Path(__file__).resolve().parents[2]
WORLDS_DIR = PROJECT / "ghsim" / "worlds"
WORLD_NAMES = ("seed", "rejected", "reuse", "sweep")
# Worlds that carry a sign-off and a sweep with artifacts (the event worlds start before that).
SIGNED_WORLDS = ("seed", "rejected")
# The top-level keys of the world format (ghsim.world.World forbids any other).
WORLD_KEYS = {"repo", "default_branch", "head_branch", "bot", "tokens", "commits", "pr", "teams"}
COMMIT_KEYS = {"id", "message", "delete", "date", "overlay"}
SPECIAL_REFS = {"head", "base"}
SHA_RE = re.compile(r"^[0-9a-f]{40}$")
NEW_ROOT = "inferencex-e2e"
CHECKLIST = f"{NEW_ROOT}/docs/PR_REVIEW_CHECKLIST.md"
CHANGELOG = f"{NEW_ROOT}/perf-changelog.yaml"
AMD_MASTER = f"{NEW_ROOT}/configs/amd-master.yaml"
THRESHOLDS = f"{NEW_ROOT}/infx/evals/thresholds.yaml"
ATOM_KEY = "dsv41flash-fp4-mi355x-atom-agentic-dspark"
ATOM_RECIPE = f"{NEW_ROOT}/benchmarks/single_node/srt-slurm-recipes/dsv41flash/atom/mi355x-fp4-mtp/agentic.yaml"
SEED_RUN = 37597985033
REJECTED_RUN = 38114205531
SIGNOFF_PHRASE = "As a PR reviewer and CODEOWNER, I have reviewed this and have:"
CHECKBOX_RE = re.compile(r"^\s*[-*+] \[( |x|X)\] (.+)$")
# Wording may drift between the template and a sign-off; below this similarity an item is missing.
ITEM_MATCH_RATIO = 0.8


# ---------------------------------------------------------------------------- helpers

def world_dir(name: str) -> Path:
    return WORLDS_DIR / name


def load_world(name: str) -> dict:
    return yaml.safe_load((world_dir(name) / "world.yaml").read_text(encoding="utf-8"))


def overlay_dir(name: str, commit: dict) -> Path:
    return world_dir(name) / commit.get("overlay", f"commits/{commit['id']}")


def tree_files(root: Path) -> dict[str, Path]:
    return {p.relative_to(root).as_posix(): p for p in sorted(root.rglob("*")) if p.is_file()}


def materialize(name: str, dest: Path, upto: str | None = None) -> Path:
    """The world's tree at `base` (upto="base"), after commit `upto`, or at the head."""
    shutil.copytree(world_dir(name) / "base", dest)
    if upto == "base":
        return dest
    for commit in load_world(name)["commits"]:
        src = overlay_dir(name, commit)
        if src.is_dir():
            shutil.copytree(src, dest, dirs_exist_ok=True)
        for path in commit.get("delete", []):
            (dest / path).unlink()
        if commit["id"] == upto:
            break
    return dest


def frontier_upper_right(points: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Spec 10.2: x ascending (ties y descending); keep a new max y, or an equal-y plateau at a
    larger x; exact duplicates once. Non-finite or non-positive points are dropped."""
    valid = [(x, y) for x, y in points if math.isfinite(x) and math.isfinite(y) and x > 0 and y > 0]
    kept: list[tuple[float, float]] = []
    max_y = -math.inf
    for x, y in sorted(valid, key=lambda p: (p[0], -p[1])):
        if kept and (x, y) == kept[-1]:
            continue
        if y > max_y or (y == max_y and kept and x > kept[-1][0]):
            kept.append((x, y))
            max_y = y
    return kept


def agentic_xy(row: dict) -> tuple[float, float]:
    metrics = row["request_metrics"]
    return metrics["latency"]["e2el"]["p90"], metrics["throughput"]["per_gpu"]["total_tput_tps"]


def template_items(checklist_md: str) -> list[str]:
    block = checklist_md.split("```\n")[1]
    assert block.startswith(SIGNOFF_PHRASE)
    return [m.group(2) for m in map(CHECKBOX_RE.match, block.splitlines()) if m]


def signoff_items(body: str) -> list[tuple[bool, str]]:
    return [(m.group(1) in "xX", m.group(2)) for m in map(CHECKBOX_RE.match, body.splitlines()) if m]


def _norm(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


def missing_items(template: list[str], signed: list[tuple[bool, str]]) -> list[str]:
    """Template items with no checked sign-off item of similar wording."""
    checked = [_norm(t) for ok, t in signed if ok]
    return [
        item for item in template
        if not any(difflib.SequenceMatcher(None, _norm(item), c).ratio() >= ITEM_MATCH_RATIO for c in checked)
    ]


def recipe_points(bundle: dict) -> dict[tuple[int, int], dict]:
    """(tp, conc) -> override block, for an ATOM bundle with one override_* variant per point."""
    out = {}
    for key, block in bundle.items():
        if key.startswith("override_"):
            out[(block["roles"]["agg"]["gpus"], int(block["benchmark"]["env"]["CONC"]))] = block
    return out


def master_points(entry: dict) -> set[tuple[int, int]]:
    return {
        (arm["tp"], conc)
        for item in entry["scenarios"]["agentic-coding"]
        for arm in item["search-space"]
        for conc in arm["conc-list"]
    }


# ---------------------------------------------------------------------------- every world

@pytest.fixture(params=WORLD_NAMES)
def name(request) -> str:
    return request.param


def test_world_has_only_known_keys(name):
    world = load_world(name)
    assert set(world) <= WORLD_KEYS
    for commit in world["commits"]:
        assert set(commit) <= COMMIT_KEYS, commit["id"]


def test_pr_part_validates_against_prfile(name):
    pr = PRFile.model_validate(load_world(name)["pr"])
    if name in SIGNED_WORLDS:
        assert pr.signoff is not None and SIGNOFF_PHRASE in pr.signoff.body
    if pr.runs and any(r.artifacts for r in pr.runs):
        assert pr.artifacts_dir == "artifacts"


def test_world_validates_against_emulator_model(name):
    from ghsim import world as world_mod
    world_mod.World.model_validate(load_world(name))


def test_world_builds_into_a_git_repository(name, tmp_path):
    from ghsim import world as world_mod
    built = world_mod.build_world_repo(world_dir(name), tmp_path / "repo")
    ids = [c["id"] for c in load_world(name)["commits"]]
    assert list(built.shas) == ids and built.head_sha == built.shas[ids[-1]]
    assert len(set(built.shas.values()) | {built.base_sha}) == len(ids) + 1
    # The checked-out head tree is exactly base + overlays - deletions.
    expected = tree_files(materialize(name, tmp_path / "expected"))
    actual = {k: v for k, v in tree_files(tmp_path / "repo").items() if not k.startswith(".git/")}
    assert set(actual) == set(expected)
    assert all(actual[k].read_bytes() == expected[k].read_bytes() for k in expected)


def test_commit_overlays_exist_and_are_declared(name):
    world = load_world(name)
    ids = [c["id"] for c in world["commits"]]
    assert len(ids) == len(set(ids)), "commit ids must be unique"
    for commit in world["commits"]:
        overlay = overlay_dir(name, commit)
        # A commit carries files, deletions, or both; an empty commit would change nothing.
        assert overlay.is_dir() or commit.get("delete"), f"commit {commit['id']} has no overlay and no deletions"
        if overlay.is_dir():
            assert tree_files(overlay), f"{overlay} is empty"
    declared = {overlay_dir(name, c).name for c in world["commits"]}
    on_disk = {p.name for p in (world_dir(name) / "commits").iterdir()}
    assert on_disk <= declared, f"undeclared overlay dirs: {on_disk - declared}"


def test_every_commit_changes_the_tree(name, tmp_path):
    world = load_world(name)
    before = materialize(name, tmp_path / "base", upto="base")
    for commit in world["commits"]:
        after = materialize(name, tmp_path / commit["id"], upto=commit["id"])
        old, new = tree_files(before), tree_files(after)
        changed = {p for p in set(old) | set(new) if p not in old or p not in new or old[p].read_bytes() != new[p].read_bytes()}
        assert changed, f"commit {commit['id']} is a no-op"
        for path in commit.get("delete", []):
            assert path in old and path not in new
        before = after


def test_commit_references_name_commits(name):
    world = load_world(name)
    pr = world["pr"]
    refs = {c["id"] for c in world["commits"]} | SPECIAL_REFS
    for key in pr.get("check_runs", {}):
        assert key in refs or SHA_RE.match(key), f"check_runs key {key!r}"
    for run in pr.get("runs", []):
        assert run["head"] in refs or SHA_RE.match(run["head"]), f"run {run['id']} head {run['head']!r}"


def test_check_runs_point_at_declared_runs(name):
    pr = PRFile.model_validate(load_world(name)["pr"])
    run_ids = {r.id for r in pr.runs}
    for ref, check_runs in pr.check_runs.items():
        for cr in check_runs:
            assert cr.run_id in run_ids, f"{ref}: {cr.name} -> run {cr.run_id}"


def test_artifact_dirs_match_declared_artifacts(name):
    pr = PRFile.model_validate(load_world(name)["pr"])
    if pr.artifacts_dir is None:
        assert not any(r.artifacts for r in pr.runs), "artifacts declared but no artifacts_dir"
        return
    root = world_dir(name) / pr.artifacts_dir
    declared: dict[str, set[str]] = {str(r.id): {a.name for a in r.artifacts} for r in pr.runs}
    for run_id, names in declared.items():
        for artifact in names:
            folder = root / run_id / artifact
            assert folder.is_dir() and tree_files(folder), f"artifact {run_id}/{artifact} missing or empty"
    for run_dir in root.iterdir():
        assert run_dir.name in declared, f"artifacts for undeclared run {run_dir.name}"
        assert {p.name for p in run_dir.iterdir()} <= declared[run_dir.name]


def test_json_artifacts_parse(name):
    files = sorted((world_dir(name) / "artifacts").rglob("*.json"))
    assert files or name not in SIGNED_WORLDS
    for path in files:
        json.loads(path.read_text(encoding="utf-8"))


def test_yaml_files_parse_with_the_project_loader(name):
    roots = [world_dir(name) / "base", *sorted((world_dir(name) / "commits").iterdir())]
    count = 0
    for root in roots:
        for rel, path in tree_files(root).items():
            if rel.endswith((".yaml", ".yml")):
                load_yaml(path.read_bytes(), rel)  # raises RecipeError naming file and line
                count += 1
    assert count >= 10


def test_changelog_keeps_the_byte_contract(name, tmp_path):
    base = (world_dir(name) / "base" / CHANGELOG).read_bytes()
    head = (materialize(name, tmp_path / "head") / CHANGELOG).read_bytes()
    for data in (base, head):
        assert data.endswith(b"\n") and not data.endswith(b"\n\n")
        assert not set(data) & {ord("\r"), ord("\t"), 0}
        # Entries are separated by exactly one blank line.
        assert data.count(b"\n\n- config-keys:") == data.count(b"- config-keys:") - 1
        assert b"\n\n\n" not in data
    assert head.startswith(base)
    assert head[len(base):].startswith(b"\n- config-keys:")


def test_codeowners_uses_new_layout_paths(name):
    text = (world_dir(name) / "base/.github/CODEOWNERS").read_text(encoding="utf-8")
    lines = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    assert lines[0] == "* @InferenceX/core"
    assert any(ln.startswith(f"{AMD_MASTER} ") and "@seungrokj" in ln for ln in lines)
    assert all(ln.split()[0] in ("*", "experimental/operatorx/") or ln.startswith(NEW_ROOT) for ln in lines)


@pytest.mark.parametrize("side", ["base", "head"])
def test_repository_loads_without_error_findings(name, side, tmp_path):
    from recipes import repository
    from recipes.source import DirSource

    tree = materialize(name, tmp_path / side, upto="base" if side == "base" else None)
    repo = repository.Repository(DirSource(tree))
    errors = [str(f) for f in repo.findings if f.severity == "error"]
    assert errors == []
    assert repo.points, "the world's master configs expand to no points"


# ---------------------------------------------------------------------------- seed facts

def test_seed_frontier_has_exactly_nine_points():
    rows = json.loads((world_dir("seed") / f"artifacts/{SEED_RUN}/results_bmk/agg_bmk.json").read_text())
    assert len(rows) == 16
    assert {(r["hw"], r["framework"], r["precision"], r["scenario_type"]) for r in rows} == {
        ("mi355x", "atom", "fp4", "agentic-coding")
    }
    assert len(frontier_upper_right([agentic_xy(r) for r in rows])) == 9


def test_frontier_helper_matches_spec_examples():
    # Spec 10.3 examples A and C, so the seed assertion above rests on a correct counter.
    a = [(12.0, 1500), (9.5, 1200), (20.0, 2100), (15.0, 1400), (30.0, 2100), (45.0, 2600), (45.0, 2500), (60.0, 2550)]
    c = [(3.1, 400), (4.0, 390), (4.5, 410), (6.2, 415), (8.0, 500), (8.0, 520), (12.0, 515)]
    assert len(frontier_upper_right(a)) == 5
    assert frontier_upper_right(c) == [(3.1, 400), (4.5, 410), (6.2, 415), (8.0, 520)]


def test_seed_signoff_checks_every_template_item():
    template = template_items((world_dir("seed") / "base" / CHECKLIST).read_text(encoding="utf-8"))
    assert len(template) == 17
    signed = signoff_items(load_world("seed")["pr"]["signoff"]["body"])
    assert all(ok for ok, _ in signed)
    assert missing_items(template, signed) == []
    # The wording drifts in places, so exact matching alone would not be enough.
    assert {t for _, t in signed} != set(template)


def test_seed_results_rows_match_the_master_entry(tmp_path):
    head = materialize("seed", tmp_path / "head")
    entry = yaml.safe_load((head / AMD_MASTER).read_text())[ATOM_KEY]
    rows = json.loads((world_dir("seed") / f"artifacts/{SEED_RUN}/results_bmk/agg_bmk.json").read_text())
    assert {(r["tp"], r["conc"]) for r in rows} == master_points(entry)
    assert {r["image"] for r in rows} == {entry["image"]}


def test_seed_recipe_has_one_variant_per_master_point(tmp_path):
    head = materialize("seed", tmp_path / "head")
    entry = yaml.safe_load((head / AMD_MASTER).read_text())[ATOM_KEY]
    bundle = yaml.safe_load((head / ATOM_RECIPE).read_text())
    variants = recipe_points(bundle)
    assert set(variants) == master_points(entry)
    assert len(variants) == 16
    assert bundle["base"]["model"]["container"] == entry["image"] == "rocm/atom-dev:nightly_202610070333"
    args = bundle["base"]["roles"]["agg"]["args"]
    assert (args["method"], args["num-speculative-tokens"], args["index-cache-dtype"], args["kv_cache_dtype"]) == (
        "dspark", 5, "fp4", "bf16",
    )
    assert "spec-decode-acceptance-length" not in args and "online_quant_config" not in args
    intervals = {k: b["roles"]["agg"]["env"]["ATOM_PREFILL_DECODE_INTERVAL"] for k, b in variants.items() if "env" in b["roles"]["agg"]}
    assert intervals == {(4, 32): "16", (2, 64): "8"}


def test_seed_body_contradicts_the_recipe_on_one_interval():
    body = load_world("seed")["pr"]["body"]
    # Check 15 must WARN on this: the body says 4 where the recipe (above) says 8.
    assert "TP4 c32 = 16, TP2 c64 = 4" in body
    for claim in ("TP2 [1, 2, 4, 5, 6, 8, 16, 32, 64, 128]", "TP4 [1, 4, 5, 6, 8, 32]",
                  "rocm/atom-dev:nightly_202610070333", "--spec-decode-acceptance-length 3.51"):
        assert claim in body


def test_seed_eval_passes_its_bar_on_the_config_image(tmp_path):
    head = materialize("seed", tmp_path / "head")
    evals = world_dir("seed") / f"artifacts/{SEED_RUN}/eval_results_all"
    (row,) = json.loads((evals / "agg_eval_all.json").read_text())
    bar = json.loads((head / THRESHOLDS).read_text())["default"]["gsm8k"]
    assert (row["task"], row["em_strict"], row["tp"], row["conc"]) == ("gsm8k", 0.973, 2, 128)
    assert row["em_strict"] >= bar == 0.90
    image = yaml.safe_load((head / AMD_MASTER).read_text())[ATOM_KEY]["image"]
    assert json.loads((evals / "meta_env.json").read_text())["image"] == image


def test_seed_golden_curve_gives_3_51_at_k5():
    curve = yaml.safe_load((world_dir("seed") / f"base/{NEW_ROOT}/infx/golden_al_distribution/dsv41flash_dspark.yaml").read_text())
    (values,) = curve.values()
    assert values["thinking_on"][5] == 3.51
    assert all(1 <= al <= k + 1 for k, al in values["thinking_on"].items())


def test_seed_sweep_ran_on_an_in_pr_commit_that_is_not_the_head():
    world = load_world("seed")
    pr = PRFile.model_validate(world["pr"])
    (sweep,) = [r for r in pr.runs if r.id == SEED_RUN]
    assert sweep.head == "c1" != world["commits"][-1]["id"]
    c1 = pr.check_runs["c1"]
    assert sum(cr.name.startswith("agentic / ") for cr in c1) == 15
    assert all(cr.conclusion == "success" for cr in c1)
    assert all(cr.conclusion == "skipped" for cr in pr.check_runs["c2"] if "benchmark" in cr.name)


# ---------------------------------------------------------------------------- rejected facts

def test_rejected_signoff_misses_two_template_items():
    template = template_items((world_dir("rejected") / "base" / CHECKLIST).read_text(encoding="utf-8"))
    signed = signoff_items(load_world("rejected")["pr"]["signoff"]["body"])
    missing = missing_items(template, signed)
    assert len(missing) == 2
    assert "draft model" in missing[0] and "Pareto" in missing[1]


def test_rejected_curves_have_fewer_than_five_frontier_points():
    rows = json.loads((world_dir("rejected") / f"artifacts/{REJECTED_RUN}/results_bmk/agg_bmk.json").read_text())
    sizes = {
        prefix: len(frontier_upper_right([(r["median_e2el"], r["tput_per_gpu"]) for r in rows if r["infmax_model_prefix"] == prefix]))
        for prefix in {r["infmax_model_prefix"] for r in rows}
    }
    assert sizes == {"dsr1": 3, "dsv4": 4}


def test_rejected_dsr1_eval_is_below_its_bar():
    base = world_dir("rejected") / "base"
    bar = json.loads((base / THRESHOLDS).read_text())["models"]["dsr1"]["gsm8k"]
    rows = json.loads((world_dir("rejected") / f"artifacts/{REJECTED_RUN}/eval_results_all/agg_eval_all.json").read_text())
    assert min(r["em_strict"] for r in rows if r["model_prefix"] == "dsr1") < bar
    assert min(r["em_strict"] for r in rows if r["model_prefix"] == "dsv4") >= bar


def test_rejected_diff_touches_the_nvidia_master_config(tmp_path):
    base = tree_files(world_dir("rejected") / "base")
    head = tree_files(materialize("rejected", tmp_path / "head"))
    path = f"{NEW_ROOT}/configs/nvidia-master.yaml"
    assert base[path].read_bytes() != head[path].read_bytes()
    assert not any(p.endswith(".orig") for p in head), "the stray backup must be gone at the head"


# ---------------------------------------------------------------------------- the project's parsers
# The same facts as read by the recipes/ parsers the checks use (skipped while a parser is absent),
# so a world edit that would silently change a verdict row fails here first.

REVIEW_DAY = date(2026, 11, 29)


def test_project_checklist_matcher_reads_both_signoffs():
    from recipes import checklist
    for name, expected_missing in (("seed", 0), ("rejected", 2)):
        md = (world_dir(name) / "base" / CHECKLIST).read_text(encoding="utf-8")
        template = checklist.parse_template(md, CHECKLIST)
        assert len(template.items) == 17 and not template.findings
        matches = checklist.match_checklist(template, checklist.parse_signoff(load_world(name)["pr"]["signoff"]["body"]))
        assert sum(not m.checked for m in matches) == expected_missing, name


def test_project_models_parser_sees_the_deprecations():
    from recipes import models_md
    path = f"{NEW_ROOT}/docs/MODELS.md"
    doc = models_md.parse_models((world_dir("seed") / "base" / path).read_text(encoding="utf-8"), path)
    assert not doc.findings
    assert doc.is_deprecated("dsv4", "fixed-seq-len", on=REVIEW_DAY, isl=8192, osl=1024).deprecated
    assert not doc.is_deprecated("dsv4", "fixed-seq-len", on=date(2026, 9, 8), isl=8192, osl=1024).deprecated
    assert not doc.is_deprecated("dsv41flash", "agentic-coding", on=REVIEW_DAY).deprecated
    assert not doc.is_deprecated("dsr1", "fixed-seq-len", on=REVIEW_DAY, isl=8192, osl=1024).deprecated


def test_project_golden_lookup_gives_3_51():
    from recipes import golden
    from recipes.source import DirSource

    curves = golden.load_golden(DirSource(world_dir("seed") / "base"), f"{NEW_ROOT}/infx/golden_al_distribution")
    assert curves.lookup("dsv41flash", "dspark", "thinking_on", 5).al == 3.51


def test_project_pareto_counter_agrees_on_every_curve():
    from recipes import artifacts
    from recipes import pareto
    expected = {("seed", SEED_RUN): [9], ("rejected", REJECTED_RUN): [3, 4]}
    for (name, run), counts in expected.items():
        path = world_dir(name) / f"artifacts/{run}/results_bmk/agg_bmk.json"
        rows = artifacts.parse_throughput_rows(json.loads(path.read_text()), source=str(path), run=str(run))
        assert not rows.invalid
        curves = pareto.count_curves(rows)
        assert sorted(r.frontier_points for r in curves.values()) == counts, name
