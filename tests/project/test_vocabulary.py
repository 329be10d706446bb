"""Each piece of shared vocabulary is spelled in one module: engines (recipes/engines.py), value
readings (recipes/values.py), list joins (checks/text.py), the sign-off key grammar
(checks/signoff_keys.py) and the repository config reader (recipes/config.py)."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]
PACKAGES = ("bot", "checks", "recipes", "bench")


def _lines(pattern: re.Pattern, allowed: set[str]) -> list[str]:
    out = []
    for package in PACKAGES:
        for path in sorted((PROJECT / package).rglob("*.py")):
            rel = path.relative_to(PROJECT).as_posix()
            if rel in allowed:
                continue
            for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if pattern.search(line):
                    out.append(f"{rel}:{n}: {line.strip()}")
    return out


NOT_CHECKS = {p.relative_to(PROJECT).as_posix() for pkg in ("bot", "recipes", "bench")
              for p in (PROJECT / pkg).rglob("*.py")}

RULES = {
    "sign-off key grammar": (re.compile(r"issuecomment-|pullrequestreview-|discussion_r"), {"checks/signoff_keys.py"}),
    "truthiness words": (re.compile(r"""["']true["'].*["']1["']|["']1["'].*["']true["']|["']yes["'].*["']on["']"""),
                         {"recipes/values.py"}),
    "flag-name normalising": (re.compile(r"""lstrip\(["']-["']\)\.replace\(["']_["'], ["']-["']\)"""),
                              {"recipes/values.py"}),
    "framework -> engine tables": (re.compile(r"""["'](?:dynamo-trt|atom-disagg|sglang-disagg|dynamo-sglang)["']"""),
                                   {"recipes/engines.py"}),
    "hand-written list joins": (re.compile(r"""["'] (?:and|or) ["'] \+|\+ ["'] (?:and|or) ["']|f["'] and \{|["'] (?:and|or) ["']\.join"""),
                                # recipes/ may not import checks/: its findings join with a plain separator.
                                {"checks/text.py", "recipes/golden.py"}),
    # Reason text in checks/ joins lists through checks.text.join (Checks 11 and 13 are being
    # reworked in parallel and follow with that change; an evidence label is not a list in prose).
    "comma joins in check reasons": (re.compile(r"""["'], ["']\.join\("""),
                                     {"checks/text.py", "checks/result.py", "checks/check_11_agentic_golden_al.py",
                                      "checks/check_13_draft_runs_as_shipped.py"} | NOT_CHECKS),
    "repository config readers": (re.compile(r"\bload_repo_config\("),
                                  # The reader itself (with load_config_file, a file named by the user)
                                  # and the router's read through the contents API.
                                  {"recipes/config.py", "bot/router.py"}),
}


@pytest.mark.parametrize("rule", RULES)
def test_vocabulary_is_spelled_in_one_place(rule):
    pattern, allowed = RULES[rule]
    assert _lines(pattern, allowed) == []


def test_the_scanner_sees_what_it_forbids():
    # Guards the guard: each rule matches the form it names.
    samples = {
        "sign-off key grammar": "'#issuecomment-1'",
        "truthiness words": '_TRUE = {"true", "1"}',
        "flag-name normalising": 'name.lstrip("-").replace("_", "-")',
        "framework -> engine tables": '{"dynamo-trt": "trtllm"}',
        "hand-written list joins": '" and ".join(a)',
        "comma joins in check reasons": '", ".join(keys)',
        "repository config readers": "load_repo_config(data)",
    }
    for rule, sample in samples.items():
        assert RULES[rule][0].search(sample), rule


def test_tests_ask_the_registry_how_many_checks_there_are():
    """Only checks/registry.py knows there are sixteen checks; tests use CHECK_NUMBERS / CHECKS
    (tests/checks/test_registry.py holds the same rule for bot/, checks/ and recipes/)."""
    spelled = re.compile(r"range\(16\)|\[[\"']checks[\"']\]\) == 16\b|\b0-15\b")
    offenders = [f"{p.relative_to(PROJECT)}:{n}" for p in sorted((PROJECT / "tests").rglob("test_*.py"))
                 if p.name != "test_vocabulary.py"
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if spelled.search(line)]
    assert offenders == []
