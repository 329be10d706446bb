"""Regenerate `github-rest-subset.json`: the response schemas of every REST operation the emulator
serves, cut from GitHub's published OpenAPI description (npm package @octokit/openapi, MIT) and
turned into JSON Schema (OpenAPI 3.0 `nullable` becomes a `null` type; component refs become
`$defs`), so the contract tests need neither the 13 MB description nor a network.

    npm pack @octokit/openapi@23.0.2 && tar xzf octokit-openapi-23.0.2.tgz
    python tests/contract/extract_openapi.py package/generated/api.github.com.json
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "github-rest-subset.json"
SOURCE = "@octokit/openapi 23.0.2, generated/api.github.com.json"
METHODS = ("get", "post", "patch", "put", "delete")
REF = "#/components/schemas/"


def normalize(path: str) -> str:
    """A path with every parameter written `{}`: the emulator's and GitHub's names differ."""
    return re.sub(r"\{[^}]*\}", "{}", path)


def to_json_schema(node):
    if isinstance(node, list):
        return [to_json_schema(n) for n in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return {"$ref": node["$ref"].replace(REF, "#/$defs/")}
    out = {k: to_json_schema(v) for k, v in node.items() if k not in ("nullable", "example", "examples", "discriminator",
                                                                        "xml", "externalDocs", "deprecated")}
    if node.get("nullable"):
        if "type" in out and isinstance(out["type"], str):
            out["type"] = [out["type"], "null"]
            if "enum" in out:
                out["enum"] = [*out["enum"], None]
        else:
            out = {"anyOf": [out, {"type": "null"}]}
    return out


def refs(node, found: set[str]) -> None:
    if isinstance(node, dict):
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith(REF):
            found.add(ref[len(REF):])
        for v in node.values():
            refs(v, found)
    elif isinstance(node, list):
        for v in node:
            refs(v, found)


def extract(spec: dict, wanted: set[str]) -> dict:
    components = spec["components"]
    operations: dict[str, dict[str, dict]] = {}
    described: set[str] = set()
    names: set[str] = set()
    for path, item in spec["paths"].items():
        for method in METHODS:
            op = item.get(method)
            key = f"{method.upper()} {normalize(path)}"
            if op is None or key not in wanted:
                continue
            described.add(key)
            for status, resp in (op.get("responses") or {}).items():
                if "$ref" in resp:
                    resp = components["responses"][resp["$ref"].rsplit("/", 1)[-1]]
                schema = ((resp.get("content") or {}).get("application/json") or {}).get("schema")
                if status.startswith("2") and schema is not None:
                    operations.setdefault(key, {})[status] = to_json_schema(schema)
                    refs(schema, names)
    todo = list(names)
    while todo:
        name = todo.pop()
        more: set[str] = set()
        refs(components["schemas"][name], more)
        for m in more - names:
            names.add(m)
            todo.append(m)
    defs = {n: to_json_schema(components["schemas"][n]) for n in sorted(names)}
    # `described`: every served operation GitHub's description has, with a JSON body or not.
    return {"source": SOURCE, "described": sorted(described), "operations": dict(sorted(operations.items())),
            "$defs": defs}


# Emulator-only routes (stand-ins for other hosts) and GitHub's legacy aliases that the
# description no longer lists, with why they have no schema to meet.
NOT_IN_DESCRIPTION = {
    "GET /_sandbox/artifacts/{}/{}": "stands in for the pre-signed artifact host (a zip, no JSON)",
    "GET /_sandbox/codeload/{}/{}/{}/{}": "stands in for codeload.github.com (a tarball, no JSON)",
    "GET /repos/{}/{}/actions/artifacts/{}/zip": "a 302 to the download host (no body)",
    "GET /orgs/{}/teams/{}/members/{}": "the legacy team-member check (204/404, no body)",
    "GET /repos/{}/{}/statuses/{}": "the legacy alias of GET /repos/{owner}/{repo}/commits/{ref}/statuses",
}


def operation_key(route_template: str) -> str:
    """'GET /repos/{owner}/{repo}/contents{path}' -> 'GET /repos/{}/{}/contents/{}'."""
    method, path = route_template.split(" ", 1)
    path = path.replace("/contents{path}", "/contents/{path}")
    return f"{method} {re.sub(r'{[^}]*}', '{}', path)}"


def served_operations() -> list[str]:
    from ghsim.server import Emulator

    return sorted({operation_key(f"{r.method} {r.template}") for r in Emulator._routes(_Routes())})


class _Routes:
    """Just enough of an Emulator for `_routes` to list its table (handlers are not called)."""

    def __getattr__(self, name: str):
        return lambda *a, **k: None


def main(argv: list[str]) -> int:
    sys.path.insert(0, str(HERE.parent.parent))
    spec = json.loads(Path(argv[0]).read_text(encoding="utf-8"))
    subset = extract(spec, set(served_operations()))
    OUT.write_text(json.dumps(subset, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{OUT}: {len(subset['operations'])} operations, {len(subset['$defs'])} schemas")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
