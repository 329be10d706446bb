"""Golden acceptance-length curves and how a speculative config resolves to one (spec 5.1, 5.2).

A curve is named by model prefix and method (the harness's lookup), but it was measured on one
model, the file's single top-level key (`kimi-k2.5-nvfp4`). A lookup given the served model
accepts the curve only when both name the same model (`model_identity`: organisation, precision
and quantization words, a checkpoint date and a quantized checkpoint's revision set aside), so
a curve measured on Kimi K2.5 is not K2.6's even when a config reuses the `kimik2.5` prefix:
K2.6 has no curve of its own (code "other-model").
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from .errors import Finding, RecipeError
from .source import FileSource
from .yamlio import load_yaml

ThinkingMode = str
THINKING_MODES = ("thinking_on", "thinking_off")
DEFAULT_THINKING_MODE = "thinking_on"
_YAML_SUFFIXES = (".yaml", ".yml")

# Spec 5.2: method spellings that mean "the model's own MTP head".
MTP_METHODS = frozenset({"mtp", "nextn", "eagle"})
EAGLE_METHODS = frozenset({"eagle", "eagle3"})
MINIMAX_PREFIX = "minimaxm3"
MINIMAX_EAGLE3 = "minimaxm3_eagle3"
MINIMAX_EAGLE3_GQA = "minimaxm3_eagle3_gqa"
GQA_MARKER = "gqa"
DSPARK = "dspark"
SAMPLE_GREEDY = "greedy"
SAMPLE_PROBABILISTIC = "probabilistic"
KIMI_PREFIX = "kimik3"
KIMI_DSPARK_GREEDY = "kimik3_dspark"
KIMI_DSPARK_PROBABILISTIC = "kimik3_dspark_probabilistic_sample_method_block_rejection_sample_method"
DSV4_PREFIX = "dsv4"
DSV4_DSPARK_PROB_KEY = "dsv4dsparkprob"
DSV4_DSPARK = "dsv4-pro-0813-dspark"
DSV41FLASH_PREFIX = "dsv41flash"
DSV41FLASH_DSPARK = "dsv41flash_dspark"

Reason = Literal["ok", "no-curve", "needs-sample-method", "no-thinking-mode", "no-k", "bad-k", "bad-curve",
                 "other-model"]

# Words of a model name that say how it is stored, not which model it is.
_PRECISION_WORD = re.compile(
    r"^(?:(?:mx|nv)?fp(?:4|6|8|16|32)|bf16|int[48]|w\d+a\d+|attnfp8|awq|gptq|quant(?:ized)?|preview|dynamic)$")
_REVISION_WORD = re.compile(r"^v\d+$")  # `-NVFP4-V2`: the quantized checkpoint's revision
_DATE_WORD = re.compile(r"^\d{4}$")  # `-0813`, `-0528`: a checkpoint date


def model_identity(name: str) -> tuple[str, ...]:
    """The words that identify a model: `nvidia/Qwen3.5-397B-A17B-NVFP4-V2` and the curve key
    `qwen3.5-397b-a17b-nvfp4` are both (qwen3.5, 397b, a17b); `Kimi-K2.6-NVFP4` is (kimi, k2.6)."""
    base = name.strip().lower()
    base = base[3:] if base.startswith("hf:") else base
    base = base.rstrip("/").rsplit("/", 1)[-1]
    out: list[str] = []
    stored = False
    for word in (w for w in re.split(r"[-_\s]+", base) if w):
        if _PRECISION_WORD.match(word):
            stored = True
        elif not (_DATE_WORD.match(word) or stored and _REVISION_WORD.match(word)):
            out.append(word)
    return tuple(out)


def same_model(a: str, b: str) -> bool:
    ia = model_identity(a)
    return bool(ia) and ia == model_identity(b)


@dataclass
class GoldenCurve:
    stem: str
    path: str
    model_name: str
    values: dict[ThinkingMode, dict[int, float]] = field(default_factory=dict)
    lines: dict[tuple[str, int], int] = field(default_factory=dict)
    model_line: int | None = None  # the line of the measured-model key

    def line_of(self, mode: ThinkingMode, k: int) -> int | None:
        return self.lines.get((mode, k))


@dataclass(frozen=True)
class GoldenLookup:
    """One golden AL value, or why there is none (`al` is None then; `reason` says why)."""

    al: float | None
    curve: str | None
    path: str | None
    line: int | None
    reason: str
    code: Reason = "ok"

    @property
    def found(self) -> bool:
        return self.al is not None


@dataclass
class GoldenSet:
    directory: str
    curves: dict[str, GoldenCurve] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    # Curve files that exist but could not be read, by stem: a lookup names the problem rather
    # than calling the curve uncommitted.
    broken: dict[str, Finding] = field(default_factory=dict)

    def expected_stem(
        self,
        model_prefix: str,
        method: str,
        *,
        draft_model: str | None = None,
        draft_sample_method: str | None = None,
    ) -> str | None:
        """The curve name spec 5.2 maps a (model, method) to, whether or not it is committed.
        None when the mapping itself needs more input (Kimi DSpark without a sample method)."""
        prefix = model_prefix.strip().lower()
        m = method.strip().lower()
        sample = (draft_sample_method or "").strip().lower() or None
        if m == DSV4_DSPARK_PROB_KEY or prefix == DSV4_DSPARK_PROB_KEY:
            return DSV4_DSPARK
        if prefix == MINIMAX_PREFIX and m in EAGLE_METHODS:
            gqa = draft_model is not None and GQA_MARKER in draft_model.lower()
            return MINIMAX_EAGLE3_GQA if gqa else MINIMAX_EAGLE3
        if m in MTP_METHODS:
            return f"{prefix}_mtp"
        if m == DSPARK:
            if prefix == DSV41FLASH_PREFIX:
                return DSV41FLASH_DSPARK
            if prefix == KIMI_PREFIX:
                if sample == SAMPLE_GREEDY:
                    return KIMI_DSPARK_GREEDY
                if sample == SAMPLE_PROBABILISTIC:
                    return KIMI_DSPARK_PROBABILISTIC
                return None
            if prefix == DSV4_PREFIX:
                # The only committed dsv4 DSpark curve was measured with probabilistic drafting;
                # ATOM's DSpark implies it (spec 5.4), so only an explicit greedy has no curve.
                return None if sample == SAMPLE_GREEDY else DSV4_DSPARK
        return f"{prefix}_{m}"

    def resolve(
        self,
        model_prefix: str,
        method: str,
        *,
        draft_model: str | None = None,
        draft_sample_method: str | None = None,
    ) -> str | None:
        """Stem of the committed curve for this speculative config, or None."""
        stem = self.expected_stem(
            model_prefix, method, draft_model=draft_model, draft_sample_method=draft_sample_method
        )
        # No fallback to another file: a Kimi probabilistic draft or a GQA EAGLE3 draft measured
        # against its sibling curve would cite a golden value the launch never uses (spec 5.2:
        # a missing curve fails rather than guessing).
        return stem if stem is not None and stem in self.curves else None

    def lookup(
        self,
        model_prefix: str,
        method: str,
        thinking_mode: ThinkingMode,
        k: int,
        *,
        draft_model: str | None = None,
        draft_sample_method: str | None = None,
        served_model: str | None = None,
    ) -> GoldenLookup:
        """The golden AL for (model, method, thinking mode, K); the launch would fail without it.
        With `served_model`, a curve measured on another model is not this model's ("other-model")."""
        where = f"{model_prefix} {method}"
        if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
            return GoldenLookup(None, None, None, None, f"draft length K={k!r} is not a positive integer", "bad-k")
        stem = self.resolve(model_prefix, method, draft_model=draft_model, draft_sample_method=draft_sample_method)
        if stem is None:
            expected = self.expected_stem(
                model_prefix, method, draft_model=draft_model, draft_sample_method=draft_sample_method
            )
            if expected is None and method.strip().lower() == DSPARK and model_prefix.strip().lower() == KIMI_PREFIX:
                return GoldenLookup(
                    None, None, None, None,
                    f"{where}: DSpark for {KIMI_PREFIX} needs draft_sample_method "
                    f"({SAMPLE_GREEDY} or {SAMPLE_PROBABILISTIC})",
                    "needs-sample-method",
                )
            if expected in self.broken:
                bad = self.broken[expected]
                return GoldenLookup(
                    None, expected, bad.path, bad.line,
                    f"{where}: the golden curve {bad} cannot be read", "bad-curve",
                )
            name = f"{expected}.yaml" if expected else "a matching curve"
            return GoldenLookup(
                None, expected, None, None,
                f"{where}: no committed golden curve ({name} not in {self.directory})", "no-curve",
            )
        curve = self.curves[stem]
        if served_model and not same_model(curve.model_name, served_model):
            return GoldenLookup(
                None, stem, curve.path, curve.model_line,
                f"{curve.path} was measured on {curve.model_name}, not on the served {served_model}, which has no "
                "golden curve of its own", "other-model",
            )
        mode_values = curve.values.get(thinking_mode)
        if mode_values is None:
            have = ", ".join(sorted(curve.values)) or "none"
            return GoldenLookup(
                None, stem, curve.path, None,
                f"{curve.path} has no {thinking_mode} values (has: {have})", "no-thinking-mode",
            )
        if k not in mode_values:
            have = ", ".join(str(x) for x in sorted(mode_values)) or "none"
            return GoldenLookup(
                None, stem, curve.path, None,
                f"{curve.path} has no {thinking_mode} value for K={k} (committed K: {have})", "no-k",
            )
        return GoldenLookup(
            mode_values[k], stem, curve.path, curve.line_of(thinking_mode, k),
            f"{curve.path}:{curve.line_of(thinking_mode, k)} {thinking_mode} K={k} -> {mode_values[k]}",
        )


def _is_number(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def parse_golden(data: bytes, path: str) -> tuple[GoldenCurve | None, list[Finding]]:
    """One curve file: `<model-name>: {thinking_mode: {K: AL}}`. Bad shapes are findings."""
    findings: list[Finding] = []
    stem = path.rsplit("/", 1)[-1]
    for suffix in _YAML_SUFFIXES:
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
    try:
        doc = load_yaml(data, path)
    except RecipeError as e:
        return None, [e.finding]
    if not isinstance(doc.data, dict) or len(doc.data) != 1:
        findings.append(Finding(path=path, line=doc.line() or 1, code="golden-shape",
                                message="a golden curve file must hold exactly one model-name key"))
        return None, findings
    (model_name, modes), = doc.data.items()
    curve = GoldenCurve(stem=stem, path=path, model_name=str(model_name), model_line=doc.line(model_name))
    if not isinstance(modes, dict):
        findings.append(Finding(path=path, line=doc.line(model_name), code="golden-shape",
                                message=f"`{model_name}` must map thinking modes to curves"))
        return curve, findings
    for mode, ks in modes.items():
        mline = doc.line(model_name, mode)
        if mode not in THINKING_MODES:
            findings.append(Finding(path=path, line=mline, code="golden-mode", severity="warning",
                                    message=f"unknown thinking mode {mode!r} (expected {' or '.join(THINKING_MODES)})"))
        if not isinstance(ks, dict):
            findings.append(Finding(path=path, line=mline, code="golden-shape",
                                    message=f"`{mode}` must map draft lengths K to AL values"))
            continue
        values: dict[int, float] = {}
        for k, al in ks.items():
            kline = doc.line(model_name, mode, k)
            if isinstance(k, bool) or not isinstance(k, int) or k <= 0:
                findings.append(Finding(path=path, line=kline, code="golden-k",
                                        message=f"draft length {k!r} is not a positive integer"))
                continue
            if not _is_number(al):
                findings.append(Finding(path=path, line=kline, code="golden-value",
                                        message=f"AL for K={k} is {al!r}, not a number"))
                continue
            # AL = 1 + accepted/steps, so it cannot leave [1, K+1] (spec 5.1).
            if not 1.0 <= float(al) <= k + 1:
                findings.append(Finding(path=path, line=kline, code="golden-range",
                                        message=f"AL {al} for K={k} is outside [1, {k + 1}]"))
            values[k] = float(al)
            curve.lines[(str(mode), k)] = kline or 1
        curve.values[str(mode)] = values
    return curve, findings


def load_golden(src: FileSource, golden_dir: str) -> GoldenSet:
    """Every curve under `golden_dir` (not recursive), keyed by file stem."""
    golden_dir = golden_dir.strip("/")
    gs = GoldenSet(directory=golden_dir)
    depth = golden_dir.count("/") + 1 if golden_dir else 0
    for path in src.list(golden_dir):
        if not path.endswith(_YAML_SUFFIXES) or path.count("/") != depth:
            continue
        data = src.read(path)
        if data is None:
            continue
        curve, findings = parse_golden(data, path)
        gs.findings.extend(findings)
        if curve is not None:
            gs.curves[curve.stem] = curve
        elif findings:
            stem = path.rsplit("/", 1)[-1].rsplit(".", 1)[0]
            gs.broken[stem] = next((f for f in findings if f.severity == "error"), findings[0])
    return gs
