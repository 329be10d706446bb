"""Contract test for webhook payloads: every field the bot reads from a payload (traced while
bot.events.parse_event and bot.routing.route_event read each recorded payload) exists in GitHub's
published webhook schema for that event and action, and the recorded payloads hold a type the
schema allows there (tests/contract/github-webhook-paths.json, cut from @octokit/openapi-webhooks
by tests/contract/extract_webhooks.py)."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bot.events import event_name_from_filename, load_payload, parse_event
from bot.routing import route_event

HERE = Path(__file__).resolve().parents[1]  # tests/
WORLDS = HERE.parent / "ghsim" / "worlds"
CONTRACT = json.loads((HERE / "contract" / "github-webhook-paths.json").read_text(encoding="utf-8"))
PAYLOADS = sorted((HERE / "payloads").glob("*.json")) + sorted(WORLDS.glob("*/events/*.json"))
# The reusable workflow's callers may subscribe to pull_request_target instead (same payload).
SAME_PAYLOAD = {"pull_request_target": "pull_request"}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


class Traced(dict):
    """A payload object that records the path of every key read from it: `reads` for keys the
    payload has, `probes` for keys looked up and absent (optional fields of other actions)."""

    def __init__(self, data: dict, path: str, reads: set[str], probes: set[str]):
        super().__init__(data)
        self._path, self._reads, self._probes = path, reads, probes

    def _wrap(self, key: str, value: Any) -> Any:
        path = f"{self._path}.{key}" if self._path else str(key)
        (self._reads if dict.__contains__(self, key) else self._probes).add(path)
        if isinstance(value, dict):
            return Traced(value, path, self._reads, self._probes)
        if isinstance(value, list):
            return [Traced(v, f"{path}[]", self._reads, self._probes) if isinstance(v, dict) else v for v in value]
        return value

    def get(self, key, default=None):
        return self._wrap(key, super().get(key, default))

    def __getitem__(self, key):
        return self._wrap(key, super().__getitem__(key))


def _webhook(name: str, payload: dict) -> str:
    name = SAME_PAYLOAD.get(name, name)
    action = payload.get("action")
    return name.replace("_", "-") + (f"-{action}" if action else "")


def _value_at(payload: Any, path: str) -> list[Any]:
    values = [payload]
    for part in path.split("."):
        nxt = []
        many = part.endswith("[]")
        key = part[:-2] if many else part
        for v in values:
            if isinstance(v, dict) and key in v:
                item = v[key]
                if many and isinstance(item, list):
                    nxt.extend(item)
                elif not many:
                    nxt.append(item)
        values = nxt
    return values


@pytest.mark.parametrize("path", PAYLOADS, ids=lambda p: f"{p.parent.parent.name}/{p.name}" if p.parent.name == "events" else p.name)
def test_every_field_the_bot_reads_is_in_githubs_webhook_schema(path):
    name = event_name_from_filename(path)
    payload = load_payload(path)
    hook = _webhook(name, payload)
    assert hook in CONTRACT["webhooks"], f"{hook}: not a webhook the workflow subscribes to"
    schema_paths = CONTRACT["webhooks"][hook]
    reads: set[str] = set()
    probes: set[str] = set()
    parse_event(name, Traced(payload, "", reads, probes), delivery="t")
    route_event(name, Traced(payload, "", reads, probes))
    assert reads, "the bot reads something"
    shallow = lambda paths: sorted(p for p in paths if p.count(".") < CONTRACT["max_depth"])  # noqa: E731
    missing = [p for p in shallow(reads) if p not in schema_paths]
    assert missing == [], f"{hook}: the bot reads fields GitHub does not send: {missing}"
    anywhere = set().union(*CONTRACT["webhooks"].values())
    invented = [p for p in shallow(probes) if p not in anywhere]
    assert invented == [], f"{hook}: the bot looks for fields no subscribed webhook has: {invented}"
    wrong = []
    for p in sorted(reads & set(schema_paths)):
        for value in _value_at(payload, p):
            if _json_type(value) not in schema_paths[p] and not (_json_type(value) == "integer" and "number" in schema_paths[p]):
                wrong.append(f"{p}: {_json_type(value)} not in {schema_paths[p]}")
    assert wrong == [], f"{path.name}: {wrong}"


def test_the_contract_catches_a_wrong_type_and_an_invented_field():
    payload = load_payload(HERE / "payloads" / "issue_comment.plain-comment.json")
    paths = CONTRACT["webhooks"]["issue-comment-created"]
    assert "integer" in paths["comment.id"] and "comment.author" not in paths
    payload["comment"]["id"] = str(payload["comment"]["id"])
    assert _json_type(_value_at(payload, "comment.id")[0]) not in paths["comment.id"]
    reads: set[str] = set()
    traced = Traced({"comment": {"author": "x"}}, "", reads, set())
    traced["comment"]["author"]
    assert "comment.author" in reads and "comment.author" not in paths
