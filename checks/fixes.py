"""Mechanical fixes a check can offer with a finding: one YAML scalar at a known file and line set
to the one value that makes the finding go away. Checks put them in a result's details under
FIXES_KEY; the bot turns them into GitHub suggestions and `check --local --fix` edits (bot/fixes.py)."""
from __future__ import annotations

FIXES_KEY = "fixes"
YAML_SUFFIXES = (".yaml", ".yml")


def value_fix(path: str, line: int | None, key: str, value: str, why: str) -> list[dict]:
    """`[fix]` setting the mapping entry `key`, whose value is on `line` of the YAML file `path`,
    to the string `value`; `[]` when the place is not a YAML file line (no mechanical fix)."""
    if not path or not line or not path.endswith(YAML_SUFFIXES):
        return []
    return [{"path": path, "line": int(line), "key": key, "value": value, "why": why}]
