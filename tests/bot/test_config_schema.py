"""The repository config's enumerations are Literals: a typo is an error naming its line (and a
sweep is not started in the mode the typo fell back to); `python -m bot config-schema` exports the
JSON Schema, which accepts the defaults and rejects the typo too."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bot.cli import main
from ghsim import Emulator
from ghsim import effects as fx
from recipes.config import SWEEP_MODES, RepoConfig, config_json_schema, load_repo_config

PROJECT = Path(__file__).resolve().parents[2]
WORLDS = PROJECT / "ghsim" / "worlds"
PAYLOADS = Path(__file__).resolve().parents[1] / "payloads"
TYPO = b"""# repository policy
sweep:
  workflow: .github/workflows/run-sweep.yml
  mode: dispach
"""


def test_a_typo_in_an_enumeration_is_a_finding_naming_its_line():
    config, findings = load_repo_config(TYPO, ".github/infx-review.yml")
    assert [(f.line, f.message) for f in findings] == [(4, "sweep.mode: Input should be 'label' or 'dispatch'")]
    assert config == RepoConfig()
    _, findings = load_repo_config(b"policy:\n  authorized_associations: [OWNER, member]\n")
    assert findings[0].line == 2 and "authorized_associations.1" in findings[0].message
    assert SWEEP_MODES == ("label", "dispatch")


def test_config_schema_is_exported_and_agrees_with_the_models(capsys):
    assert main(["config-schema"]) == 0
    schema = json.loads(capsys.readouterr().out)
    assert schema == json.loads(json.dumps(config_json_schema()))
    assert schema["$schema"].endswith("2020-12/schema") and schema["additionalProperties"] is False
    assert schema["$defs"]["SweepPolicy"]["properties"]["mode"]["enum"] == ["label", "dispatch"]
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(RepoConfig().model_dump(mode="json"), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"sweep": {"mode": "dispach"}}, schema)


def test_config_schema_check_names_each_problem_by_line(tmp_path, capsys):
    bad = tmp_path / "infx-review.yml"
    bad.write_bytes(TYPO)
    assert main(["config-schema", "--check", str(bad)]) == 1
    assert f"{bad}:4: sweep.mode: Input should be 'label' or 'dispatch'" in capsys.readouterr().err
    good = tmp_path / "good.yml"
    good.write_text("sweep:\n  mode: dispatch\n", encoding="utf-8")
    assert main(["config-schema", "--check", str(good)]) == 0
    assert main(["config-schema", "--check", str(tmp_path / "missing.yml")]) == 2


def test_a_label_with_a_mistyped_mode_starts_nothing_and_says_why(tmp_path, monkeypatch):
    """Before: `mode: dispach` silently meant label mode, so the label added by a person did nothing."""
    world = tmp_path / "sweep"
    shutil.copytree(WORLDS / "sweep", world)
    (world / "base" / ".github").mkdir(parents=True, exist_ok=True)
    (world / "base" / ".github" / "infx-review.yml").write_bytes(TYPO)
    with Emulator(world, strict=True) as emu:
        monkeypatch.setenv("GITHUB_TOKEN", emu.world.bot.token)
        code = main(["handle-event", "--event-name", "pull_request", "--event-path",
                     str(PAYLOADS / "pull_request.labeled-full-sweep-enabled.json"), "--github-url", emu.url])
        emu.assert_clean()
        effects = [e for e in emu.effects if e["actor"] == emu.world.bot.login]
    assert code == 0
    assert [e["kind"] for e in effects] == [fx.EFFECT_COMMENT_CREATED]
    body = effects[0]["body"]
    assert body.startswith("<!-- infx-review config-error head=") and "No sweep was started" in body
    assert ".github/infx-review.yml:4: sweep.mode: Input should be 'label' or 'dispatch'" in body


# --- the published schema and its descriptions (issue 30) ---------------------------------------
def _properties(schema: dict):
    """(where, name, property) of every property of the schema and of each of its definitions."""
    for name, prop in schema.get("properties", {}).items():
        yield "(root)", name, prop
    for def_name, definition in schema.get("$defs", {}).items():
        for name, prop in definition.get("properties", {}).items():
            yield def_name, name, prop


def test_the_schema_is_committed_at_the_path_its_id_names():
    from recipes.config import SCHEMA_FILE, SCHEMA_ID

    schema = config_json_schema()
    assert schema["$id"] == SCHEMA_ID and SCHEMA_ID.endswith("/" + SCHEMA_FILE)
    committed = (PROJECT / SCHEMA_FILE).read_text(encoding="utf-8")
    # Byte for byte what `config-schema` prints: regenerate with
    # `python -m bot config-schema > docs/infx-review.schema.json` after changing the models.
    assert committed == json.dumps(schema, indent=2, sort_keys=True) + "\n", \
        f"{SCHEMA_FILE} is stale: run `python -m bot config-schema > {SCHEMA_FILE}`"


def test_every_field_of_the_schema_has_a_description():
    schema = config_json_schema()
    props = list(_properties(schema))
    assert len(props) > 70  # paths, policy and sweep, all of them
    missing = [f"{where}.{name}" for where, name, prop in props if len(str(prop.get("description", "")).strip()) < 10]
    assert missing == []
    for definition in schema["$defs"].values():
        assert definition.get("description"), definition.get("title")


def test_the_configuration_page_lists_every_key_as_the_schema_describes_it(capsys):
    page = (PROJECT / "docs" / "configuration.md").read_text(encoding="utf-8")
    start, end = "<!-- generated: config-schema --markdown -->\n", "<!-- end generated -->"
    section = page[page.index(start) + len(start):page.index(end)]
    assert main(["config-schema", "--markdown"]) == 0
    generated = capsys.readouterr().out
    assert section == generated, "docs/configuration.md is stale: paste `infx-review config-schema --markdown`"
    schema = config_json_schema()
    for _, name, prop in _properties(schema):
        if "$ref" not in prop:
            assert f"| `{name}` |" in generated
    assert generated.count("\n| `") == sum(1 for _, _, p in _properties(schema) if "$ref" not in p)
    from recipes.config import SCHEMA_ID

    assert "examples/inferencex/infx-review.yml" in page and SCHEMA_ID in page
