"""Sweep artifacts as evidence: zip members, JSON arrays, throughput points and eval rows.

Everything here turns untrusted CI output into values or findings; nothing raises on bad
input. Field names follow spec section 9.2; the curve key follows spec section 10.1.
"""
from __future__ import annotations

import io
import json
import math
import zipfile
from dataclasses import dataclass, field
from typing import Any, Sequence

from .errors import Finding

# Zip-bomb and oversize guards: sweep artifacts are a few MB; these leave ample headroom.
MAX_ZIP_MEMBERS = 2_000
MAX_ZIP_UNCOMPRESSED = 256 * 1024 * 1024
MAX_JSON_BYTES = 64 * 1024 * 1024

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


def read_artifact_zip(data: bytes, name: str) -> dict[str, bytes] | Finding:
    """Members of a downloaded artifact zip by name; truncation or a bomb is a finding."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as e:
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


def load_json_artifact(data: bytes, path: str) -> list[dict] | Finding:
    """A JSON array of rows. A single object (one per-job point) becomes a one-row list.

    Elements are returned as found; the row parsers treat non-objects as invalid rows.
    """
    if len(data) > MAX_JSON_BYTES:
        return Finding(path=path, message=MSG_JSON_SIZE.format(path=path, size=len(data), limit=MAX_JSON_BYTES), code="artifact")
    try:
        value = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        return Finding(path=path, message=MSG_JSON_BAD.format(path=path, error=e), code="artifact")
    if isinstance(value, dict):
        return [value]
    if not isinstance(value, list):
        return Finding(path=path, message=MSG_JSON_SHAPE.format(path=path, kind=type(value).__name__), code="artifact")
    return value


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
