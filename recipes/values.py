"""How recipe, script and env values read: one truthiness, one number reading, one flag spelling.

Truthiness: the words are the union of what the readers of these values accept, because a
check must see a switch as on whenever any of them would. srtctl validates recipes with
pydantic (`1/on/true/yes`, `0/off/false/no`), YAML 1.1 loaders (PyYAML, which srtctl uses)
read `yes/on/no/off` as booleans, engines read env vars with `int(os.getenv(...))` (any
nonzero number is on) or `.lower() in ("1", "true")`, and the benchmark repository itself
writes `enabled` as an on-value (`NVIDIA_GDRCOPY: "enabled"` in llm-d recipes,
`dyn-default-thinking-mode: "enabled"` in srt recipes). `none`, `null` and the empty string
are "not set": off for a switch, but not an explicit "off".
"""
from __future__ import annotations

from typing import Any

TRUE_WORDS = frozenset({"1", "true", "yes", "on", "enable", "enabled"})
FALSE_WORDS = frozenset({"0", "false", "no", "off", "disable", "disabled"})
UNSET_WORDS = frozenset({"none", "null", ""})


def _word(value: Any) -> str:
    return str(value).strip().strip("'\"").lower()


def truth(value: Any) -> bool | None:
    """True or False for a value written as a switch (`true`, `on`, `1`, `enabled`; `false`,
    `off`, `0`, and unset), None for anything else (`fp8`, `2`: a value, not a switch)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return True if value == 1 else False if value == 0 else None
    text = _word(value)
    if text in TRUE_WORDS:
        return True
    if text in FALSE_WORDS or text in UNSET_WORDS:
        return False
    return None


def is_unset(value: Any) -> bool:
    return value is None or (isinstance(value, str) and _word(value) in UNSET_WORDS)


def is_enabled(value: Any) -> bool:
    """A value that turns a switch on: a true word or any nonzero number (`=2` is on for an
    engine reading `int(os.getenv(...))`); `=0`, false words, unset and unknown words are not."""
    t = truth(value)
    if t is not None:
        return t
    n = as_float(value)
    return n is not None and n != 0


def is_disabled(value: Any) -> bool:
    """A value that explicitly turns a switch off (unset is not explicit)."""
    return not is_unset(value) and truth(value) is False


def as_int(value: Any) -> int | None:
    """An integer written as a YAML int or a string of digits; booleans and floats are not."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def as_float(value: Any) -> float | None:
    """A number written as a YAML number or a (possibly quoted) numeric string; booleans are not."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(_word(value))
    except ValueError:
        return None


def flag_name(name: Any) -> str:
    """One spelling per knob: `--Hf_Overrides`, `hf-overrides` and `HF_OVERRIDES` are equal
    (vLLM and SGLang accept `_` and `-` alike; flags are matched case-insensitively)."""
    if type(name) is str:  # the checks ask about the same few hundred names again and again
        found = _FLAG_NAMES.get(name)
        if found is None:
            if len(_FLAG_NAMES) > 65536:
                _FLAG_NAMES.clear()
            found = _FLAG_NAMES[name] = name.strip().lstrip("-").replace("_", "-").lower()
        return found
    return str(name).strip().lstrip("-").replace("_", "-").lower()


_FLAG_NAMES: dict[str, str] = {}
