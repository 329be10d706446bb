"""Regenerate `github-webhook-paths.json`: for each webhook the bot handles, every field path (to
depth 3, `[]` for list items) of GitHub's published webhook schema with the JSON types it may
hold, cut from @octokit/openapi-webhooks (MIT), so the contract test knows what GitHub sends
without the 5 MB description.

    npm pack @octokit/openapi-webhooks@12.1.0 && tar xzf octokit-openapi-webhooks-12.1.0.tgz
    python tests/contract/extract_webhooks.py package/generated/api.github.com.json
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "github-webhook-paths.json"
SOURCE = "@octokit/openapi-webhooks 12.1.0, generated/api.github.com.json"
# The webhooks the reusable workflow subscribes to, as GitHub names them (`<event>-<action>`).
WEBHOOKS = (
    "issue-comment-created", "issue-comment-edited", "pull-request-review-submitted", "pull-request-review-edited",
    "pull-request-review-comment-created", "pull-request-review-comment-edited", "pull-request-labeled",
    "pull-request-synchronize", "workflow-run-completed", "workflow-dispatch", "ping",
)
MAX_DEPTH = 3
JSON_TYPES = {"string", "integer", "number", "boolean", "object", "array", "null"}


def _resolve(spec: dict, node: dict) -> dict:
    while isinstance(node, dict) and "$ref" in node:
        name = node["$ref"].rsplit("/", 1)[-1]
        node = spec["components"]["schemas"][name]
    return node


def _alternatives(spec: dict, node: dict) -> list[dict]:
    node = _resolve(spec, node)
    out = []
    for key in ("anyOf", "oneOf", "allOf"):
        for sub in node.get(key) or []:
            out.extend(_alternatives(spec, sub))
    if not out or "properties" in node or "type" in node:
        out.append(node)
    return out


def _types(spec: dict, node: dict) -> set[str]:
    out: set[str] = set()
    for alt in _alternatives(spec, node):
        t = alt.get("type")
        if isinstance(t, list):
            out.update(t)
        elif isinstance(t, str):
            out.add(t)
        elif "properties" in alt:
            out.add("object")
        if alt.get("nullable"):
            out.add("null")
        if alt.get("enum") is not None and None in alt["enum"]:
            out.add("null")
    if "integer" in out:
        out.add("number")  # a JSON number with no fraction is both
    return out & JSON_TYPES or set(JSON_TYPES)


def _walk(spec: dict, node: dict, prefix: str, depth: int, out: dict[str, set[str]]) -> None:
    if depth > MAX_DEPTH:
        return
    for alt in _alternatives(spec, node):
        for name, sub in (alt.get("properties") or {}).items():
            path = f"{prefix}.{name}" if prefix else name
            out.setdefault(path, set()).update(_types(spec, sub))
            _walk(spec, sub, path, depth + 1, out)
        if "items" in alt and prefix:
            path = f"{prefix}[]"
            out.setdefault(path, set()).update(_types(spec, alt["items"]))
            _walk(spec, alt["items"], path, depth, out)  # a list item is no deeper


def extract(spec: dict) -> dict:
    hooks = {}
    for name in WEBHOOKS:
        op = spec["webhooks"][name]["post"]
        schema = op["requestBody"]["content"]["application/json"]["schema"]
        paths: dict[str, set[str]] = {}
        _walk(spec, schema, "", 1, paths)
        hooks[name] = {p: sorted(t) for p, t in sorted(paths.items())}
    return {"source": SOURCE, "max_depth": MAX_DEPTH, "webhooks": hooks}


def main(argv: list[str]) -> int:
    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    data = extract(spec)
    OUT.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{OUT}: {sum(len(v) for v in data['webhooks'].values())} paths in {len(data['webhooks'])} webhooks")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
