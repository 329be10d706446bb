"""Turning sweep artifacts (a folder in local mode, a zip from GitHub) into the rows checks read,
shared by both snapshot builders so they agree on what an artifact means."""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path
from typing import Iterable

from checks.snapshot import Unavailable

META_FILE = "meta_env.json"
MSG_BAD_ZIP = "artifact {name} of run {run} is not a readable zip: {error}"


def json_rows(files: Iterable[tuple[str, bytes]]) -> tuple[list[dict], dict[str, dict], list[str]]:
    """Rows from every JSON file holding a list of objects; single objects (`meta_env.json`)
    by file name; and problems (unparseable files) as messages naming the file."""
    rows: list[dict] = []
    objects: dict[str, dict] = {}
    problems: list[str] = []
    for name, data in sorted(files, key=lambda f: f[0]):
        if not name.endswith(".json"):
            continue
        try:
            value = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            problems.append(f"{name}: {e}")
            continue
        if isinstance(value, list) and all(isinstance(r, dict) for r in value):
            rows.extend(value)
        elif isinstance(value, dict):
            objects[name.rsplit("/", 1)[-1]] = value
    return rows, objects, problems


def folder_files(folder: Path) -> list[tuple[str, bytes]]:
    out = []
    for f in sorted(folder.rglob("*.json")):
        try:
            out.append((str(f), f.read_bytes()))
        except OSError as e:
            out.append((str(f), str(e).encode()))  # reported as unparseable, naming the file
    return out


def zip_files(data: bytes, name: str, run_id: int) -> list[tuple[str, bytes]]:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            return [(f"{name}/{i.filename}", zf.read(i)) for i in zf.infolist() if not i.is_dir()]
    except (zipfile.BadZipFile, OSError, ValueError) as e:
        raise ValueError(MSG_BAD_ZIP.format(name=name, run=run_id, error=e)) from None


def rows_from(
    per_artifact: dict[str, list[dict] | Unavailable], aggregate: str, prefix: str
) -> list[dict] | Unavailable | None:
    """The aggregate artifact is authoritative; per-job artifacts (`prefix*`) stand in only
    without it. None when the run has neither."""
    if aggregate in per_artifact:
        return per_artifact[aggregate]
    parts = [v for k, v in sorted(per_artifact.items()) if k.startswith(prefix)]
    if not parts:
        return None
    for part in parts:
        if isinstance(part, Unavailable):
            return part
    return [row for part in parts for row in part]
