"""`python -m bot config-schema [--check FILE]`: the JSON Schema of `.github/infx-review.yml`
(for editors and CI validators), or a check of one file with every problem named by its line."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from bot.cli import EXIT_ERROR, EXIT_OK, EXIT_REJECTED

NAME = "config-schema"
HELP = "print the JSON Schema of .github/infx-review.yml, or --check a file against it"
MSG_VALID = "{path}: valid"
MSG_UNREADABLE = "error: cannot read {path}: {error}"


SECTIONS = (("paths", "Paths"), ("policy", "Policy"), ("sweep", "SweepPolicy"))


def add_arguments(p: argparse.ArgumentParser) -> None:
    what = p.add_mutually_exclusive_group()
    what.add_argument("--check", metavar="FILE", help="validate FILE instead; exit 1 naming each problem's line")
    what.add_argument("--markdown", action="store_true",
                      help="print every key with its type, default and description as Markdown (docs/configuration.md)")


def _cell(value: object, code: bool = False) -> str:
    """Text for a Markdown table cell (inside a code span when `code`)."""
    text = str(value).replace("|", "\\|").replace("\n", " ")
    if code:
        return f"`{text}`"
    return text.replace("<", "&lt;").replace("*", "\\*").replace("_", "\\_")


def _type(prop: dict) -> str:
    from checks.text import join

    if "enum" in prop:
        return join((json.dumps(v) for v in prop["enum"]), "or")
    if "anyOf" in prop:
        return join((_type(p) for p in prop["anyOf"]), "or")
    if prop.get("type") == "array":
        return f"list of {_type(prop.get('items', {}))}"
    if prop.get("type") == "object":
        return f"map to {_type(prop.get('additionalProperties', {}))}"
    return str(prop.get("type", "any"))


def reference_markdown(schema: dict, defaults: dict) -> str:
    """One table per section of the file: each key, its type, its default and its description."""
    out = []
    for section, definition in SECTIONS:
        out += [f"### `{section}`", "", schema["properties"][section]["description"], "",
                "| Key | Type | Default | Description |", "| --- | --- | --- | --- |"]
        for key, prop in schema["$defs"][definition]["properties"].items():
            default = json.dumps(defaults[section][key], ensure_ascii=False)
            if len(default) > 80:
                default = default[:77] + "..."
            out.append(f"| `{key}` | {_cell(_type(prop))} | {_cell(default, code=True)} | {_cell(prop['description'])} |")
        out.append("")
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    from recipes.config import config_json_schema, load_config_file

    if args.markdown:
        from recipes.config import RepoConfig

        print(reference_markdown(config_json_schema(), RepoConfig().model_dump(mode="json")), end="")
        return EXIT_OK
    if not args.check:
        print(json.dumps(config_json_schema(), indent=2, sort_keys=True))
        return EXIT_OK
    path = Path(args.check)
    try:
        _, findings = load_config_file(path)
    except OSError as exc:
        print(MSG_UNREADABLE.format(path=path, error=exc.strerror or exc), file=sys.stderr)
        return EXIT_ERROR
    for f in findings:
        print(str(f), file=sys.stderr)
    if findings:
        return EXIT_REJECTED
    print(MSG_VALID.format(path=path))
    return EXIT_OK
