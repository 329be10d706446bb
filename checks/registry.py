"""The one ordered, explicit list of the sixteen checks. Numbers never change or get reused."""
from __future__ import annotations

from .base import Check
from .check_00_codeowner import CodeownerCheck
from .check_01_sweep_on_in_pr_commit import SweepOnInPrCommitCheck
from .check_02_evals import EvalsCheck
from .check_03_upstream_recipe import UpstreamRecipeCheck
from .check_04_reuse_command import ReuseCommandCheck
from .check_05_latest_checklist import LatestChecklistCheck
from .check_06_upstream_images_ordering import UpstreamImagesOrderingCheck
from .check_07_deprecated_models import DeprecatedModelsCheck
from .check_08_no_arch_hacks import NoArchHacksCheck
from .check_09_spec_decode_chat_template import SpecDecodeChatTemplateCheck
from .check_10_no_engine_patches import NoEnginePatchesCheck
from .check_11_agentic_golden_al import AgenticGoldenAlCheck
from .check_12_append_only import AppendOnlyCheck
from .check_13_draft_runs_as_shipped import DraftRunsAsShippedCheck
from .check_14_pareto_coverage import ParetoCoverageCheck
from .check_15_pr_description import PrDescriptionCheck

CHECKS: tuple[Check, ...] = (
    CodeownerCheck(),
    SweepOnInPrCommitCheck(),
    EvalsCheck(),
    UpstreamRecipeCheck(),
    ReuseCommandCheck(),
    LatestChecklistCheck(),
    UpstreamImagesOrderingCheck(),
    DeprecatedModelsCheck(),
    NoArchHacksCheck(),
    SpecDecodeChatTemplateCheck(),
    NoEnginePatchesCheck(),
    AgenticGoldenAlCheck(),
    AppendOnlyCheck(),
    DraftRunsAsShippedCheck(),
    ParetoCoverageCheck(),
    PrDescriptionCheck(),
)


# Everything else asks these instead of spelling numbers out (STYLE.md section 2).
CHECK_NUMBERS: frozenset[int] = frozenset(c.number for c in CHECKS)
ADVISORY_NUMBERS: frozenset[int] = frozenset(c.number for c in CHECKS if c.advisory)


def check_by_number(number: int) -> Check:
    for check in CHECKS:
        if check.number == number:
            return check
    raise KeyError(f"no check numbered {number}")
