"""Eval pass bars from infx/evals/thresholds.yaml (JSON syntax inside a .yaml; spec 9.2)."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from .errors import Finding, RecipeError
from .yamlio import decode_text, load_yaml

DEFAULT_KEY = "default"
MODELS_KEY = "models"
# The collector's `--min-score` CLI default, used when neither table names the task.
FALLBACK_BAR = 0.85
SOURCE_FALLBACK = "fallback"


@dataclass
class Thresholds:
    path: str
    default: dict[str, float] = field(default_factory=dict)
    models: dict[str, dict[str, float]] = field(default_factory=dict)
    lines: dict[tuple[str, ...], int] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)

    def bar(self, model_prefix: str, task: str, fallback: float = FALLBACK_BAR) -> tuple[float, str]:
        """(pass bar, where it came from): `models.<p>.<task>`, else `default.<task>`, else fallback."""
        per_model = self.models.get(model_prefix, {})
        if task in per_model:
            return per_model[task], f"{MODELS_KEY}.{model_prefix}.{task}"
        if task in self.default:
            return self.default[task], f"{DEFAULT_KEY}.{task}"
        return fallback, SOURCE_FALLBACK

    def line_of(self, source: str) -> int | None:
        """Line of a `bar()` source such as "models.dsv4.gsm8k" (None for the fallback)."""
        if source == SOURCE_FALLBACK:
            return None
        head, _, rest = source.partition(".")
        if head == MODELS_KEY:
            prefix, _, task = rest.rpartition(".")
            return self.lines.get((MODELS_KEY, prefix, task))
        return self.lines.get((head, rest))


def _bars(value: Any, where: tuple[str, ...], t: Thresholds, line_of) -> dict[str, float]:
    out: dict[str, float] = {}
    if not isinstance(value, dict):
        t.findings.append(Finding(path=t.path, line=line_of(*where), code="thresholds-shape",
                                  message=f"`{'.'.join(where)}` must map task names to scores"))
        return out
    for task, bar in value.items():
        ln = line_of(*where, task)
        if isinstance(bar, bool) or not isinstance(bar, (int, float)):
            t.findings.append(Finding(path=t.path, line=ln, code="thresholds-value",
                                      message=f"`{'.'.join((*where, str(task)))}` is {bar!r}, not a number"))
            continue
        if not 0.0 <= float(bar) <= 1.0:
            t.findings.append(Finding(path=t.path, line=ln, code="thresholds-range",
                                      message=f"`{'.'.join((*where, str(task)))}` = {bar} is outside [0, 1]"))
        out[str(task)] = float(bar)
        if ln is not None:
            t.lines[(*where, str(task))] = ln
    return out


def parse_thresholds(data: bytes, path: str) -> Thresholds:
    """Parse the bars. Syntax errors, wrong shapes and non-numeric bars are findings."""
    t = Thresholds(path=path)
    line_map: dict[tuple, int] = {}
    try:
        doc = load_yaml(data, path)
        raw, line_map = doc.data, doc.lines
    except RecipeError as yaml_error:
        if yaml_error.finding.code != "yaml":
            t.findings.append(yaml_error.finding)  # duplicate keys, binary, oversize: not syntax
            return t
        # JSON that libyaml rejects (e.g. tab indentation) is still valid for the real reader.
        try:
            raw = json.loads(decode_text(data, path))
        except RecipeError as e:
            t.findings.append(e.finding)
            return t
        except json.JSONDecodeError as e:
            t.findings.append(Finding(path=path, line=e.lineno, code="thresholds-syntax",
                                      message=f"malformed JSON: {e.msg}"))
            return t
        except (ValueError, RecursionError):
            t.findings.append(yaml_error.finding)
            return t

    def line_of(*keys: str) -> int | None:
        k = tuple(keys)
        while True:  # the nearest recorded ancestor, as YamlDoc.line resolves it
            if k in line_map:
                return line_map[k]
            if not k:
                return None
            k = k[:-1]

    if raw is None:
        t.findings.append(Finding(path=path, line=None, code="thresholds-shape", message="the file is empty"))
        return t
    if not isinstance(raw, dict):
        t.findings.append(Finding(path=path, line=1, code="thresholds-shape",
                                  message="the file must be an object with `default` and `models`"))
        return t
    if DEFAULT_KEY in raw:
        t.default = _bars(raw[DEFAULT_KEY], (DEFAULT_KEY,), t, line_of)
    else:
        t.findings.append(Finding(path=path, line=1, code="thresholds-shape", severity="warning",
                                  message=f"no `{DEFAULT_KEY}` table"))
    models = raw.get(MODELS_KEY, {})
    if not isinstance(models, dict):
        t.findings.append(Finding(path=path, line=line_of(MODELS_KEY), code="thresholds-shape",
                                  message=f"`{MODELS_KEY}` must map model prefixes to task bars"))
    else:
        for prefix, bars in models.items():
            t.models[str(prefix)] = _bars(bars, (MODELS_KEY, str(prefix)), t, line_of)
    for key in raw:
        if key not in (DEFAULT_KEY, MODELS_KEY):
            t.findings.append(Finding(path=path, line=line_of(str(key)), code="thresholds-unknown-key",
                                      severity="warning", message=f"unknown top-level key `{key}`"))
    return t
