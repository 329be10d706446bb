"""Neutral defaults (issue 30): the package's default configuration names no person, team or
account of a real repository; InferenceX's own settings ship as an example config
(examples/inferencex/infx-review.yml) that validates, and the bundled world modelled on an
InferenceX PR with a Check 14 warning carries a copy of it."""
from __future__ import annotations

import json
import re
from pathlib import Path

from recipes.config import RepoConfig, load_repo_config
from tests.builders import INFERENCEX_CONFIG_FILE, inferencex_config

PROJECT = Path(__file__).resolve().parents[2]
HANDLE = re.compile(r"(?<![\w.])@[A-Za-z0-9][A-Za-z0-9-]*")


def _inferencex_accounts() -> set[str]:
    """The accounts, teams' organisations and fork owners InferenceX's example config adds."""
    defaults = RepoConfig().policy.model_dump()
    return {value.lstrip("@").split("/")[0].lower()
            for key, values in inferencex_config()["policy"].items()
            for value in set(values) - set(defaults[key])}


def test_the_defaults_name_nobody():
    defaults = json.dumps(RepoConfig().model_dump(mode="json")).lower()
    accounts = _inferencex_accounts()
    assert {"functionstackx", "inferencex", "klaud-cold", "ishandhanani"} <= accounts
    assert [a for a in accounts if re.search(rf"(?<![\w-]){re.escape(a)}(?![\w-])", defaults)] == []
    assert HANDLE.findall(defaults) == []
    policy = RepoConfig().policy
    assert policy.pareto_escalation == [] and policy.core_teams == []
    assert policy.recipe_repositories == ["NVIDIA/srt-slurm"]


def test_the_example_config_holds_inferencex_settings_and_validates():
    config, findings = load_repo_config(INFERENCEX_CONFIG_FILE.read_bytes(), str(INFERENCEX_CONFIG_FILE))
    assert findings == []
    assert config.policy.pareto_escalation == ["@functionstackx", "@cquil11", "@Oseltamivir", "@adibarra"]
    assert "@InferenceX/core" in config.policy.core_teams and "Klaud-Cold" in config.policy.bot_logins
    assert set(RepoConfig().policy.bot_logins) <= set(config.policy.bot_logins)  # it adds, never drops
    assert "NVIDIA/srt-slurm" in config.policy.recipe_repositories


def test_the_inferencex_world_carries_the_example_config():
    world_config = PROJECT / "ghsim" / "worlds" / "rejected" / "base" / ".github" / "infx-review.yml"
    assert world_config.read_bytes() == INFERENCEX_CONFIG_FILE.read_bytes()
