"""Sweep artifacts as evidence: zip members, JSON arrays, throughput points and eval rows.

Everything here turns untrusted CI output into values or findings; nothing raises on bad
input. Field names follow spec section 9.2; the curve key follows spec section 10.1.
"""
from __future__ import annotations

import io
import json
import math
import os
import stat
import struct
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

from .errors import Finding

# The one guarded reader of sweep artifacts, for GitHub (a zip) and local mode (a folder).
# Real artifacts are a few MB (an aggregate of 15,000 AgentX rows is 16 MB and parses in 0.5 s
# into about 100 MB); the caps keep every hostile artifact under a second and 300 MB peak RSS.
MAX_ARTIFACT_DOWNLOAD = 32 * 1024 * 1024  # compressed zip bytes read from the download URL
MAX_ZIP_MEMBERS = 2_000
MAX_ZIP_UNCOMPRESSED = 32 * 1024 * 1024  # inflated bytes of the JSON members, all together
MAX_JSON_BYTES = 16 * 1024 * 1024  # one JSON file
MAX_JSON_OBJECTS = 200_000  # `{` in one JSON file, counted before parsing (memory scales with it)
META_FILE = "meta_env.json"
JSON_SUFFIX = ".json"
_EOCD = b"PK\x05\x06"

FIXED_PERCENTILE = "p50"  # fixed-seq curves use median E2EL (spec 10.1)
AGENTIC_PERCENTILE = "p90"  # AgentX default reviewed percentile (spec 10.1)
AGENTIC_SCENARIO = "agentic-coding"
INTERACTIVITY_FLAG = "isOnNormalizedInteractivityFrontier"
NO_SPEC = ("", "none", "null", "false", "0")
# Eval primary-score preference when a row carries no `score` (spec 9.2).
SCORE_PREFERENCE = ("em_strict", "accuracy", "em_flexible")

MSG_NOT_ZIP = "artifact {name} is not a readable zip archive ({error})"
MSG_ZIP_MEMBERS = "artifact {name} has {count} members, over the {limit}-member limit"
MSG_ZIP_SIZE = "artifact {name} expands beyond the {limit}-byte limit (zip bomb?)"
MSG_ZIP_MEMBER = "artifact {name}: member {member} cannot be read ({error})"
MSG_JSON_SIZE = "{path} is {size} bytes, over the {limit}-byte limit"
MSG_JSON_BAD = "{path} is not valid JSON ({error}); the file may be truncated"
MSG_JSON_DEEP = "{path} nests too deeply to read"
MSG_JSON_OBJECTS = "{path} holds over {limit} JSON objects"
MSG_ZIP64 = "artifact {name} is a zip64 archive or declares {count} members; sweep artifacts never are"
MSG_LINK = "{path} is a symbolic link; artifact files are read only as regular files inside {root}"
MSG_NOT_FILE = "{path} is not a regular file"
MSG_FILE_ERROR = "{path} cannot be read ({error})"
MSG_JSON_SHAPE = "{path} holds a JSON {kind}, expected an array of rows"
MSG_NOT_OBJECT = "row is not a JSON object"
MSG_MISSING = "missing or non-numeric {field}"
MSG_NOT_FINITE = "{field} is {value!r}, not a finite number > 0"
MSG_SCORE_MISSING = "no score, em_strict, accuracy or em_flexible value"
MSG_SCORE_RANGE = "score {value!r} is not a finite number in [0, 1]"
MSG_EVAL_INFRA = "eval job reported infrastructure_success = false"
MSG_EVAL_INFRA_VALUE = "eval job reported infrastructure_success = {value!r}, not the boolean true"
MSG_EVAL_INTEGRATION = "eval job reported an integration error: {error}"


@dataclass(frozen=True, slots=True, order=True)
class CurveKey:
    """One app series (spec 10.1): points sharing a key are pooled into one frontier."""

    model: str
    scenario: str
    hw_key: str
    precision: str
    run: str
    percentile: str

    def __str__(self) -> str:
        return "/".join((self.model, self.scenario, self.hw_key, self.precision, self.run, self.percentile))


@dataclass(frozen=True, slots=True)
class PerfPoint:
    curve_key: CurveKey
    x: float  # E2EL seconds at the curve's percentile
    y: float  # total tokens/s per GPU
    conc: int | None = None
    tp: int | None = None
    ep: int | None = None
    index: int = 0  # position of the row in its source array
    flags: dict[str, bool] = field(default_factory=dict)
    image: str | None = None


@dataclass(frozen=True, slots=True)
class InvalidRow:
    index: int
    reason: str
    curve_key: CurveKey | None = None


@dataclass
class ThroughputSet:
    source: str
    points: list[PerfPoint] = field(default_factory=list)
    invalid: list[InvalidRow] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class EvalRow:
    task: str
    score: float | None
    score_name: str | None
    model_prefix: str | None
    hw: str | None
    framework: str | None
    precision: str | None
    conc: int | None
    tp: int | None
    valid: bool
    problem: str | None
    index: int
    spec_decoding: str | None = None
    score_se: float | None = None
    n_eff: int | None = None


# --------------------------------------------------------------------------- containers


def _declared_members(data: bytes) -> int | None:
    """The member count the end-of-central-directory record declares (None: no record), read
    before `zipfile` builds an object per member."""
    at = data.rfind(_EOCD, max(0, len(data) - 65_557))
    if at < 0 or at + 22 > len(data):
        return None
    return struct.unpack_from("<H", data, at + 10)[0]


def read_artifact_zip(data: bytes, name: str) -> dict[str, bytes] | Finding:
    """The JSON members of a downloaded artifact zip by name (others are never inflated);
    truncation, too many members or a bomb is a finding."""
    declared = _declared_members(data)
    if declared is not None and (declared > MAX_ZIP_MEMBERS):
        if declared == 0xFFFF:
            return Finding(path=name, message=MSG_ZIP64.format(name=name, count=declared), code="artifact")
        return Finding(path=name, message=MSG_ZIP_MEMBERS.format(name=name, count=declared, limit=MAX_ZIP_MEMBERS),
                       code="artifact")
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError, RecursionError, MemoryError) as e:
        return Finding(path=name, message=MSG_NOT_ZIP.format(name=name, error=e), code="artifact")
    infos = [i for i in zf.infolist() if not i.is_dir()]
    if len(infos) > MAX_ZIP_MEMBERS:
        return Finding(
            path=name,
            message=MSG_ZIP_MEMBERS.format(name=name, count=len(infos), limit=MAX_ZIP_MEMBERS),
            code="artifact",
        )
    out: dict[str, bytes] = {}
    budget = MAX_ZIP_UNCOMPRESSED
    for info in infos:
        if not info.filename.endswith(JSON_SUFFIX):
            continue  # logs and traces are never read, so never inflated
        # Declared sizes can lie; read at most what is left of the budget plus one byte.
        if info.file_size > budget:
            return Finding(path=name, message=MSG_ZIP_SIZE.format(name=name, limit=MAX_ZIP_UNCOMPRESSED), code="artifact")
        try:
            with zf.open(info) as fh:
                blob = fh.read(budget + 1)
        except Exception as e:  # zlib.error, BadZipFile (CRC), EOFError, NotImplementedError...
            return Finding(
                path=name,
                message=MSG_ZIP_MEMBER.format(name=name, member=info.filename, error=e),
                code="artifact",
            )
        if len(blob) > budget:
            return Finding(path=name, message=MSG_ZIP_SIZE.format(name=name, limit=MAX_ZIP_UNCOMPRESSED), code="artifact")
        budget -= len(blob)
        out[info.filename] = blob
    return out


def parse_json(data: bytes, path: str) -> Any:
    """One JSON document, or a Finding: over the size or object cap (checked before parsing),
    not UTF-8, malformed, nested too deeply (RecursionError) or holding an integer too long to
    convert (ValueError past 4,300 digits). Never raises."""
    if len(data) > MAX_JSON_BYTES:
        return Finding(path=path, message=MSG_JSON_SIZE.format(path=path, size=len(data), limit=MAX_JSON_BYTES), code="artifact")
    if data.count(b"{") > MAX_JSON_OBJECTS:
        return Finding(path=path, message=MSG_JSON_OBJECTS.format(path=path, limit=MAX_JSON_OBJECTS), code="artifact")
    try:
        return json.loads(data.decode("utf-8-sig"))
    except RecursionError:
        return Finding(path=path, message=MSG_JSON_DEEP.format(path=path), code="artifact")
    except (UnicodeDecodeError, ValueError, MemoryError) as e:
        return Finding(path=path, message=MSG_JSON_BAD.format(path=path, error=str(e)[:200]), code="artifact")


def load_json_artifact(data: bytes, path: str) -> list[dict] | Finding:
    """A JSON array of rows. A single object (one per-job point) becomes a one-row list.

    Elements are returned as found; the row parsers treat non-objects as invalid rows.
    """
    value = parse_json(data, path)
    if isinstance(value, Finding):
        return value
    if isinstance(value, dict):
        return [value]
    if not isinstance(value, list):
        return Finding(path=path, message=MSG_JSON_SHAPE.format(path=path, kind=type(value).__name__), code="artifact")
    return value


def json_rows(files: Iterable[tuple[str, bytes | Finding]]) -> tuple[list[dict], dict[str, dict], list[str]]:
    """Rows from every JSON file holding a list of objects; single objects (`meta_env.json`)
    by file name; and problems (unreadable files) as messages naming the file."""
    rows: list[dict] = []
    objects: dict[str, dict] = {}
    problems: list[str] = []
    for name, data in sorted(files, key=lambda f: f[0]):
        if isinstance(data, Finding):
            problems.append(data.message)
            continue
        if not name.endswith(JSON_SUFFIX):
            continue
        value = parse_json(data, name)
        if isinstance(value, Finding):
            problems.append(value.message)
            continue
        if isinstance(value, list) and all(isinstance(r, dict) for r in value):
            rows.extend(value)
        elif isinstance(value, dict):
            objects[name.rsplit("/", 1)[-1]] = value
    return rows, objects, problems


def folder_files(folder: Path, root: Path | None = None) -> list[tuple[str, bytes | Finding]]:
    """The JSON files of one local artifact folder. A symbolic link (the folder, a directory
    in it or a file) or a path resolving outside `root` is refused and reported, never
    followed; a file over the JSON cap is reported without being read."""
    root = Path(root) if root is not None else Path(folder)
    out: list[tuple[str, bytes | Finding]] = []
    try:
        root.resolve(strict=True)
    except OSError as e:
        return [(str(folder), Finding(path=str(folder), message=MSG_FILE_ERROR.format(path=folder, error=e), code="artifact"))]

    def refuse(path: Path, message: str) -> None:
        out.append((str(path), Finding(path=str(path), message=message, code="artifact")))

    here = Path(folder)
    try:
        rel = here.relative_to(root)
    except ValueError:
        refuse(here, MSG_LINK.format(path=here, root=root))
        return out
    step = root
    for part in rel.parts:  # no link anywhere between the root and the folder
        step = step / part
        if step.is_symlink():
            refuse(here, MSG_LINK.format(path=step, root=root))
            return out
    if not here.is_dir():
        refuse(here, MSG_NOT_FILE.format(path=here))
        return out
    for dirpath, dirnames, filenames in os.walk(here, followlinks=False):
        for d in list(dirnames):
            if os.path.islink(os.path.join(dirpath, d)):
                refuse(Path(dirpath, d), MSG_LINK.format(path=Path(dirpath, d), root=root))
                dirnames.remove(d)
        dirnames.sort()
        for fname in sorted(filenames):
            if not fname.endswith(JSON_SUFFIX):
                continue
            path = Path(dirpath, fname)
            try:
                st = os.lstat(path)
            except OSError as e:
                refuse(path, MSG_FILE_ERROR.format(path=path, error=e))
                continue
            if stat.S_ISLNK(st.st_mode):
                refuse(path, MSG_LINK.format(path=path, root=root))
                continue
            if not stat.S_ISREG(st.st_mode):
                refuse(path, MSG_NOT_FILE.format(path=path))
                continue
            if st.st_size > MAX_JSON_BYTES:
                refuse(path, MSG_JSON_SIZE.format(path=path, size=st.st_size, limit=MAX_JSON_BYTES))
                continue
            try:
                with open(path, "rb") as fh:
                    out.append((str(path), fh.read(MAX_JSON_BYTES + 1)))
            except OSError as e:
                refuse(path, MSG_FILE_ERROR.format(path=path, error=e))
    return out


def rows_from(per_artifact: dict[str, Any], aggregate: str, prefix: str) -> Any:
    """The aggregate artifact is authoritative; per-job artifacts (`prefix*`) stand in only
    without it. None when the run has neither. A value that is not a list of rows (the
    caller's "unavailable" marker) is returned as is."""
    if aggregate in per_artifact:
        return per_artifact[aggregate]
    parts = [v for k, v in sorted(per_artifact.items()) if k.startswith(prefix)]
    if not parts:
        return None
    for part in parts:
        if not isinstance(part, list):
            return part
    return [row for part in parts for row in part]


# --------------------------------------------------------------------------- throughput


def _number(value: Any) -> float | None:
    """A JSON number as float; booleans, strings and None are not numbers."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _int(value: Any) -> int | None:
    n = _number(value)
    if n is None or not math.isfinite(n):
        return None
    return int(n)


def _dig(row: dict, *keys: str) -> Any:
    cur: Any = row
    for k in keys:
        if not isinstance(cur, dict):
            return None
        cur = cur.get(k)
    return cur


def _seq_label(n: Any) -> str:
    v = _int(n)
    if v is None:
        return "?"
    if v % 1024 == 0:
        return f"{v // 1024}k"
    if v % 1000 == 0:
        return f"{v // 1000}k"
    return str(v)


def base_gpu(hw: Any) -> str:
    """`cluster:mi355x-amds` / `b200-nv_0` -> `mi355x` / `b200` (the app's base GPU)."""
    text = str(hw or "?").lower().strip()
    if ":" in text:
        text = text.rsplit(":", 1)[1]
    for sep in ("-", "_"):
        text = text.split(sep, 1)[0]
    return text or "?"


def is_agentic_row(row: dict) -> bool:
    """Nested AgentX schema, an agentic scenario_type, or a flat row with no isl/osl."""
    if isinstance(row.get("request_metrics"), dict):
        return True
    scenario = str(row.get("scenario_type") or row.get("scenario") or "")
    if "agentic" in scenario:
        return True
    return "isl" not in row and "osl" not in row and "p90_e2el" in row


def curve_key_for(row: dict, *, run: str = "", agentic: bool | None = None,
                  agentic_percentile: str = AGENTIC_PERCENTILE) -> CurveKey:
    """Spec 10.1 key. Assumption: a `-disagg` framework suffix is a topology, not a series."""
    agentic = is_agentic_row(row) if agentic is None else agentic
    model = str(row.get("infmax_model_prefix") or row.get("model_prefix") or row.get("model") or "?")
    framework = str(row.get("framework") or "?").lower()
    if framework.endswith("-disagg"):
        framework = framework[: -len("-disagg")]
    hw_key = f"{base_gpu(row.get('hw'))}_{framework}"
    if agentic:
        scenario = str(row.get("scenario_type") or AGENTIC_SCENARIO)
        percentile = agentic_percentile
    else:
        scenario = f"{_seq_label(row.get('isl'))}{_seq_label(row.get('osl'))}"
        percentile = FIXED_PERCENTILE
        spec = str(row.get("spec_decoding") or "").lower()
        if spec not in NO_SPEC:
            hw_key = f"{hw_key}_{spec}"  # fixed-seq curves separate speculative methods
    return CurveKey(model, scenario, hw_key, str(row.get("precision") or "?"), run, percentile)


def _metrics(row: dict, agentic: bool, percentile: str) -> tuple[Any, str, Any, str]:
    """(x raw, x field name, y raw, y field name) for either schema."""
    if isinstance(row.get("request_metrics"), dict):
        return (
            _dig(row, "request_metrics", "latency", "e2el", percentile),
            f"request_metrics.latency.e2el.{percentile}",
            _dig(row, "request_metrics", "throughput", "per_gpu", "total_tput_tps"),
            "request_metrics.throughput.per_gpu.total_tput_tps",
        )
    x_field = f"{percentile}_e2el" if agentic else "median_e2el"
    return row.get(x_field), x_field, row.get("tput_per_gpu"), "tput_per_gpu"


def parse_throughput_rows(rows: Sequence[Any], *, source: str, run: str = "",
                          agentic: bool | None = None,
                          agentic_percentile: str = AGENTIC_PERCENTILE) -> ThroughputSet:
    """Points for the Pareto counter from `agg_bmk.json`-style rows (flat or nested AgentX).

    A row whose metric is missing, non-numeric, non-finite or <= 0 is an `InvalidRow`
    (still keyed to its curve when the row is an object), never an exception.
    """
    out = ThroughputSet(source=source)
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            out.invalid.append(InvalidRow(i, MSG_NOT_OBJECT))
            continue
        is_agentic = is_agentic_row(row) if agentic is None else agentic
        key = curve_key_for(row, run=run, agentic=is_agentic, agentic_percentile=agentic_percentile)
        x_raw, x_name, y_raw, y_name = _metrics(row, is_agentic, agentic_percentile)
        x, y = _number(x_raw), _number(y_raw)
        problem = None
        if x is None:
            problem = MSG_MISSING.format(field=x_name)
        elif y is None:
            problem = MSG_MISSING.format(field=y_name)
        elif not (0.0 < x < math.inf):
            problem = MSG_NOT_FINITE.format(field=x_name, value=x)
        elif not (0.0 < y < math.inf):
            problem = MSG_NOT_FINITE.format(field=y_name, value=y)
        if problem:
            out.invalid.append(InvalidRow(i, problem, key))
            continue
        flags = {}
        if INTERACTIVITY_FLAG in row:
            flags[INTERACTIVITY_FLAG] = bool(row[INTERACTIVITY_FLAG])
        out.points.append(PerfPoint(
            curve_key=key, x=x, y=y, conc=_int(row.get("conc")), tp=_int(row.get("tp")),
            ep=_int(row.get("ep")), index=i, flags=flags,
            image=row.get("image") if isinstance(row.get("image"), str) else None,
        ))
    return out


# --------------------------------------------------------------------------- evals


def _pick_score(row: dict) -> tuple[Any, str | None]:
    if "score" in row:
        return row["score"], row.get("score_name") if isinstance(row.get("score_name"), str) else "score"
    declared = row.get("score_name")
    if isinstance(declared, str) and declared:
        # The row names its primary metric: when that value is missing the score is missing,
        # never silently replaced by a more lenient one (em_flexible for em_strict).
        return (row[declared], declared) if row.get(declared) is not None else (None, None)
    for name in SCORE_PREFERENCE:
        if name in row and row[name] is not None:
            return row[name], name
    return None, None


def parse_eval_rows(rows: Sequence[Any], *, source: str) -> list[EvalRow]:
    """Eval rows with their primary score; `valid` means finite, in [0, 1] and no job error."""
    del source  # kept for symmetry with parse_throughput_rows; rows carry their own context
    out: list[EvalRow] = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            out.append(EvalRow("", None, None, None, None, None, None, None, None, False, MSG_NOT_OBJECT, i))
            continue
        raw, name = _pick_score(row)
        score = _number(raw)
        problem = None
        if raw is None or name is None:
            problem = MSG_SCORE_MISSING
        elif score is None or not math.isfinite(score) or not 0.0 <= score <= 1.0:
            problem = MSG_SCORE_RANGE.format(value=raw)
        elif row.get("infrastructure_success") is False:
            problem = MSG_EVAL_INFRA
        elif row.get("infrastructure_success") is not True and row.get("infrastructure_success") is not None:
            # Only JSON `true` is success: "false" (a string) is truthy, 0/1 and "yes" are guesses.
            problem = MSG_EVAL_INFRA_VALUE.format(value=row.get("infrastructure_success"))
        elif row.get("integration_error"):
            problem = MSG_EVAL_INTEGRATION.format(error=row.get("integration_error"))
        se = _number(row.get("score_se", row.get(f"{name}_se") if name else None))
        out.append(EvalRow(
            task=str(row.get("task") or ""),
            score=score,
            score_name=name,
            model_prefix=row.get("model_prefix") or row.get("infmax_model_prefix"),
            hw=row.get("hw"),
            framework=row.get("framework"),
            precision=row.get("precision"),
            conc=_int(row.get("conc")),
            tp=_int(row.get("tp")),
            valid=problem is None,
            problem=problem,
            index=i,
            spec_decoding=row.get("spec_decoding") if isinstance(row.get("spec_decoding"), str) else None,
            score_se=se,
            n_eff=_int(row.get("n_eff")),
        ))
    return out
