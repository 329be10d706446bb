"""Mechanical fixes a check can offer with a finding: one YAML scalar at a known file and line set
to the one value that makes the finding go away (`value_fix`), or one entry added to a block
mapping that lacks it (`add_fix`). Checks put them in a result's details under FIXES_KEY; the
bot turns them into GitHub suggestions and `check --local --fix` edits (bot/fixes.py)."""
from __future__ import annotations

FIXES_KEY = "fixes"
YAML_SUFFIXES = (".yaml", ".yml")


def value_fix(path: str, line: int | None, key: str, value: str, why: str) -> list[dict]:
    """`[fix]` setting the mapping entry `key`, whose value is on `line` of the YAML file `path`,
    to the string `value`; `[]` when the place is not a YAML file line (no mechanical fix)."""
    if not path or not line or not path.endswith(YAML_SUFFIXES):
        return []
    return [{"path": path, "line": int(line), "key": key, "value": value, "why": why}]


OP_SET = "set"
OP_ADD = "add"


def add_fix(path: str, line: int | None, parent: str | None, key: str, value: str, why: str) -> list[dict]:
    """`[fix]` adding the entry `key: value` to the block mapping that lacks it: the value of the
    mapping entry `parent` whose key is on `line` (e.g. a recipe's `env:`), or with `parent`
    None the mapping whose first key is on `line` (a list item such as a changelog entry);
    `[]` when the place is not a YAML file line."""
    if not path or not line or not path.endswith(YAML_SUFFIXES):
        return []
    return [{"op": OP_ADD, "path": path, "line": int(line), "parent": parent, "key": key, "value": value, "why": why}]
