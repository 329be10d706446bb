"""The one ordered, explicit list of the sixteen checks. Numbers never change or get reused.

Each row is a check's number, its short name, its kind (advisory, escalating, retired) and the
class that implements it, named as `module:Class` inside this package (ruff's `codes.rs` table
names each rule's implementation the same way). The table is the only place these facts live:
a check module holds the implementation (`applies`, `evaluate`) and its docstring, nothing more.

A check's module is imported the first time the check has to run. A verdict none of whose rules
was in force (checks.policy; 561 of the 831 PR commits of the public history predate the first
rule) never loads the check code and its libraries (about a third of a verdict's imports), and
a review by number loads only the checks it runs.
"""
from __future__ import annotations

import importlib
import threading
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .base import Check

if TYPE_CHECKING:
    from .context import ReviewContext
    from .result import CheckResult

# One lock for every check import: checks run in a thread pool on a lazy snapshot, and two
# threads importing check modules that share libraries must not wait on each other's locks.
_LOADING = threading.Lock()
_LOADED: dict[str, object] = {}


@dataclass(frozen=True)
class Registered:
    """A registry row: what every verdict needs to know of a check, and where its code is."""

    number: int
    name: str  # the spec's short name, as verdict rows print it
    impl: str  # "check_07_deprecated_models:DeprecatedModelsCheck", inside this package
    advisory: bool = False  # may WARN but never FAIL
    escalates: bool = False  # a WARN mentions the repository's escalation handles (spec 11.2)
    retired: bool = False  # kept so its number is never reused; never evaluated

    @property
    def module(self) -> str:
        return f"{__package__}.{self.impl.partition(':')[0]}"

    def implementation(self):
        """The implementing object, imported and built on first use, then shared."""
        found = _LOADED.get(self.impl)
        if found is None:
            with _LOADING:
                found = _LOADED.get(self.impl)
                if found is None:
                    found = getattr(importlib.import_module(self.module), self.impl.partition(":")[2])()
                    _LOADED[self.impl] = found
        return found

    def applies(self, ctx: "ReviewContext") -> str | None:
        return self.implementation().applies(ctx)

    def evaluate(self, ctx: "ReviewContext") -> "CheckResult":
        return self.implementation().evaluate(ctx)


CHECKS: tuple[Check, ...] = (
    Registered(0, "CODEOWNER", "check_00_codeowner:CodeownerCheck"),
    Registered(1, "Sweep on in-PR commit", "check_01_sweep_on_in_pr_commit:SweepOnInPrCommitCheck"),
    Registered(2, "Evals", "check_02_evals:EvalsCheck"),
    Registered(3, "Upstream recipe", "check_03_upstream_recipe:UpstreamRecipeCheck"),
    Registered(4, "Reuse command", "check_04_reuse_command:ReuseCommandCheck", advisory=True),
    Registered(5, "Latest checklist", "check_05_latest_checklist:LatestChecklistCheck"),
    Registered(6, "Upstream images / ordering", "check_06_upstream_images_ordering:UpstreamImagesOrderingCheck"),
    Registered(7, "Deprecated models", "check_07_deprecated_models:DeprecatedModelsCheck"),
    Registered(8, "No arch hacks", "check_08_no_arch_hacks:NoArchHacksCheck"),
    Registered(9, "Spec-decode chat template", "check_09_spec_decode_chat_template:SpecDecodeChatTemplateCheck"),
    Registered(10, "No engine patches", "check_10_no_engine_patches:NoEnginePatchesCheck"),
    Registered(11, "Agentic golden AL", "check_11_agentic_golden_al:AgenticGoldenAlCheck"),
    Registered(12, "Append-only", "check_12_append_only:AppendOnlyCheck"),
    Registered(13, "Draft runs as shipped", "check_13_draft_runs_as_shipped:DraftRunsAsShippedCheck"),
    Registered(14, "Pareto coverage", "check_14_pareto_coverage:ParetoCoverageCheck", advisory=True, escalates=True),
    Registered(15, "PR description", "check_15_pr_description:PrDescriptionCheck", advisory=True),
)


# Everything else asks these instead of spelling numbers out (STYLE.md section 2).
CHECK_NUMBERS: frozenset[int] = frozenset(c.number for c in CHECKS)
ADVISORY_NUMBERS: frozenset[int] = frozenset(c.number for c in CHECKS if c.advisory)


def check_by_number(number: int) -> Check:
    for check in CHECKS:
        if check.number == number:
            return check
    raise KeyError(f"no check numbered {number}")


def module_of(check: Check) -> str:
    """The module that implements a check: a registry row's, or a stand-in's own."""
    return check.module if isinstance(check, Registered) else type(check).__module__
