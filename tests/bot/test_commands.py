"""The reuse-command grammar shared by Check 4 and the bot's command handler (spec 9.3)."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest

from checks.commands import (
    COMMANDS,
    REUSE_SWEEP_RUN,
    USE,
    find_reuse_command,
    help_text,
    parse_reuse_command,
    unauthorized_commands,
)
from tests.builders import make_comment

AUTH = ["OWNER", "MEMBER", "COLLABORATOR"]


@pytest.mark.parametrize("body, command, run_id, line", [
    ("/use 123", USE, 123, 1),
    ("  /use\t123  ", USE, 123, 1),
    ("/Use 5", USE, 5, 1),
    ("/reuse-sweep-run 77", REUSE_SWEEP_RUN, 77, 1),
    ("/REUSE-SWEEP-RUN", REUSE_SWEEP_RUN, None, 1),
    ("text\n/use 1\nmore\n/reuse-sweep-run", REUSE_SWEEP_RUN, None, 4),  # last line wins
    ("> /use 9\n\n/use 10", USE, 10, 3),
])
def test_parse_accepts_whole_line_commands(body, command, run_id, line):
    cmd = parse_reuse_command(body)
    assert cmd is not None
    assert (cmd.command, cmd.run_id, cmd.line) == (command, run_id, line)
    assert cmd.explicit is (run_id is not None)


@pytest.mark.parametrize("body", [
    "/use",  # bare /use is rejected upstream
    "/use abc",
    "/use 12 34",
    "please /use 12",
    "/use 12 please",
    "> /use 12",
    "> quoted text\n/use 12",  # a lazy continuation line renders inside the quote
    "```\n/use 12\n```",
    "    /use 12",  # indented code block
    "<!-- /use 12 -->",
    "/usefully 12",
    "/reuse-sweep-run12",
    "",
])
def test_parse_rejects_everything_else(body):
    assert parse_reuse_command(body) is None


def _c(author, association, body, day, **kw):
    return make_comment({"author": author, "association": association, "body": body,
                         "created_at": datetime(2026, 10, day, tzinfo=timezone.utc), **kw}, default_id=day)


def test_newest_authorized_comment_wins_regardless_of_list_order():
    newest = _c("b", "MEMBER", "/reuse-sweep-run 2", 5)
    comments = [newest, _c("a", "OWNER", "/use 1", 3), _c("x", "CONTRIBUTOR", "/use 3", 9)]
    comment, cmd = find_reuse_command(comments, AUTH)
    assert comment is newest and str(cmd) == "/reuse-sweep-run 2"


def test_authorization_ignores_case_and_excludes_bots():
    assert find_reuse_command([_c("a", "member", "/use 1", 1)], AUTH) is not None
    assert find_reuse_command([_c("bot", "MEMBER", "/use 1", 1, is_bot=True)], AUTH) is None
    assert find_reuse_command([_c("a", "NONE", "/use 1", 1)], AUTH) is None


def test_unauthorized_commands_lists_refused_attempts_only():
    comments = [_c("a", "CONTRIBUTOR", "/use 1", 1), _c("b", "MEMBER", "/use 2", 2), _c("c", "NONE", "hi", 3)]
    refused = unauthorized_commands(comments, AUTH)
    assert [(c.author, cmd.run_id) for c, cmd in refused] == [("a", 1)]


def test_help_is_generated_from_the_command_table():
    text = help_text()
    for c in COMMANDS:
        assert c.usage in text and c.who in text
        for example in c.examples:
            assert parse_reuse_command(example) is not None, example


# ---------------------------------------------------------------- the bot's command handlers
# (bot/handlers/commands.py, bot/handlers/sweep.py) and the reuse rules (bot/reuse.py)

from pathlib import Path  # noqa: E402

from bot import reuse  # noqa: E402
from checks import sweep_runs  # noqa: E402
from bot.command_lines import mentions_command, parse_sweep_command  # noqa: E402
from bot.handlers.commands import asks_help, bare_use_line, declarations, help_markdown  # noqa: E402
from bot.handlers.sweep import SWEEP_COMMANDS, plan_sweep  # noqa: E402
from checks.snapshot import Artifact, SweepRun, Unavailable  # noqa: E402
from recipes.config import RepoConfig, SweepPolicy  # noqa: E402
from recipes.source import MemorySource  # noqa: E402

SWEEP = SweepPolicy()
WORKFLOW = SWEEP.workflow
PR_SHAS = ["a" * 40, "b" * 40]
SEED = Path(__file__).resolve().parents[2] / "ghsim" / "worlds" / "seed"
ATOM_KEY = "dsv41flash-fp4-mi355x-atom-agentic-dspark"
CHANGELOG = "inferencex-e2e/perf-changelog.yaml"
AMD_MASTER = "inferencex-e2e/configs/amd-master.yaml"


def _run(run_id=1, *, sha="a" * 40, event="pull_request", status="completed", conclusion="success",
         path=WORKFLOW, artifacts=(("results_bmk", False),)):
    arts = artifacts if isinstance(artifacts, Unavailable) else [Artifact(name=n, expired=e) for n, e in artifacts]
    return SweepRun(run_id=run_id, head_sha=sha, event=event, status=status, conclusion=conclusion,
                    workflow_path=path, artifacts=arts)


@pytest.mark.parametrize("run, code", [
    (None, sweep_runs.UNKNOWN_RUN),
    (Unavailable(reason="HTTP 502"), sweep_runs.UNKNOWN_RUN),
    (_run(path=".github/workflows/e2e-tests.yml"), sweep_runs.NOT_SWEEP),
    (_run(event="workflow_dispatch"), sweep_runs.NOT_SWEEP),
    (_run(status="in_progress", conclusion=None), sweep_runs.FAILED),
    (_run(conclusion="cancelled"), sweep_runs.FAILED),
    (_run(sha="c" * 40), sweep_runs.NOT_THIS_PR),
    (_run(sha=""), sweep_runs.NOT_THIS_PR),
    (_run(artifacts=(("results_bmk", True), ("server_logs_x", False))), sweep_runs.EXPIRED),
    (_run(artifacts=Unavailable(reason="HTTP 500")), sweep_runs.EXPIRED),
    (_run(artifacts=(("bmk_agentic_x", False),)), None),
    (_run(path=WORKFLOW + "@refs/heads/main"), None),
])
def test_reuse_problem_fails_closed_for_each_reason(run, code):
    refusal = sweep_runs.reuse_problem(run, SWEEP, run_id=1, pr_shas=PR_SHAS)
    assert (refusal.code if refusal else None) == code
    if refusal:
        assert refusal.reason and "1" in refusal.reason


def test_reuse_problem_without_commits_or_outcome_tests_for_check_1():
    failed_elsewhere = _run(sha="c" * 40, conclusion="failure")
    assert sweep_runs.reuse_problem(failed_elsewhere, SWEEP, run_id=1, require_success=False) is None
    assert sweep_runs.reuse_problem(_run(), SWEEP, run_id=1, pr_shas=Unavailable(reason="x")).code == sweep_runs.NOT_THIS_PR


def test_pick_reusable_takes_the_newest_eligible_run_and_reads_artifacts_sparingly():
    runs = [
        {"id": 10, "head_sha": "a" * 40, "event": "pull_request", "status": "completed", "conclusion": "success",
         "path": WORKFLOW, "created_at": "2026-10-01T00:00:00Z"},
        {"id": 11, "head_sha": "b" * 40, "event": "pull_request", "status": "completed", "conclusion": "failure",
         "path": WORKFLOW, "created_at": "2026-10-03T00:00:00Z"},
        {"id": 12, "head_sha": "c" * 40, "event": "pull_request", "status": "completed", "conclusion": "success",
         "path": WORKFLOW, "created_at": "2026-10-04T00:00:00Z"},
        {"id": 13, "head_sha": "b" * 40, "event": "pull_request", "status": "completed", "conclusion": "success",
         "path": WORKFLOW, "created_at": "2026-10-02T00:00:00Z"},
    ]
    asked = []

    def artifacts_of(run_id):
        asked.append(run_id)
        return [Artifact(name="results_bmk", expired=run_id == 13)]

    assert reuse.pick_reusable(runs, PR_SHAS, SWEEP, artifacts_of) == 10
    assert asked == [13, 10], "runs failing cheaper tests cost no artifact listing"
    assert reuse.pick_reusable(runs[1:], PR_SHAS, SWEEP, artifacts_of) is None


def test_not_reusable_labels_block_reuse():
    assert reuse.pr_labels_problem(["full-sweep-enabled"], SWEEP) is None
    assert reuse.pr_labels_problem(["agentx-fast"], SWEEP).code == sweep_runs.NOT_REUSABLE_PR


@pytest.mark.parametrize("body, expected", [
    ("/use 12", True),
    ("/USE", True),
    ("/infx help", True),
    ("/reuse-sweep-run", True),
    ("> /use 12", False),
    ("```\n/use 12\n```", False),
    ("please /use 12", False),
    ("/useful 12", False),
    ("", False),
])
def test_mentions_command_reads_live_lines_only(body, expected):
    assert mentions_command(body) is expected


def test_bare_use_and_help_detection():
    assert bare_use_line("thanks\n  /Use  ") == "/Use"
    assert bare_use_line("> /use") is None and bare_use_line("/use 5") is None
    assert asks_help("/infx help") and asks_help("/INFX") and not asks_help("`/infx help`") and not asks_help("> /infx help")


@pytest.mark.parametrize("body, expected", [
    ("/sweep", ("/sweep", False)),
    ("  /Sweep fail-fast ", ("/Sweep fail-fast", True)),
    ("/sweep\n/sweep fail-fast", ("/sweep fail-fast", True)),
    ("> /sweep", None),
    ("/sweep now", None),
    ("/sweeping", None),
])
def test_parse_sweep_command(body, expected):
    assert parse_sweep_command(body) == expected


def test_help_is_generated_from_every_declaration():
    text = help_markdown("[this comment](https://example.invalid)", "As a PR reviewer and CODEOWNER")
    assert len(declarations()) == 4 and SWEEP_COMMANDS[0] in declarations()
    for c in declarations():
        assert f"`{c.usage}`" in text and c.who in text
        for example in c.examples:
            assert f"`{example}`" in text
    assert "<run_id>" not in text.replace("`/use <run_id>`", "").replace("`/reuse-sweep-run [<run_id>]`", ""), \
        "descriptions escape angle brackets outside code spans"
    assert "Sweep workflow" not in text


def test_help_names_the_sweep_workflow_the_bot_counts():
    from recipes.config import SweepPolicy

    text = help_markdown("[c](https://example.invalid)", "As a PR reviewer and CODEOWNER",
                         SweepPolicy(workflow=".github/workflows/bench.yml", mode="dispatch"))
    assert text.endswith("Sweep workflow: `.github/workflows/bench.yml` in `dispatch` mode (`sweep.workflow` and "
                         "`sweep.mode` of `.github/infx-review.yml`); only its runs count.\n")


def _tree(*roots: Path) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    for root in roots:
        for p in sorted(root.rglob("*")):
            if p.is_file():
                files[p.relative_to(root).as_posix()] = p.read_bytes()
    return files


def test_plan_sweep_selects_the_seed_entry_and_its_sixteen_points():
    base = _tree(SEED / "base")
    head = _tree(SEED / "base", SEED / "commits" / "c1")
    plan = plan_sweep(MemorySource(base), MemorySource(head), RepoConfig())
    assert plan.keys == [ATOM_KEY] and plan.points == 16 and plan.entries == 1
    assert plan.configs[0].scenarios == ("agentic-coding",) and not plan.append_only and plan.problems == []
    assert plan_sweep(MemorySource(base), MemorySource(base), RepoConfig()).is_empty


def test_plan_sweep_append_only_counts_only_new_points_and_names_bad_patterns():
    before = _tree(SEED / "base", SEED / "commits" / "c1")
    after = dict(before)
    after[AMD_MASTER] = before[AMD_MASTER].replace(b"conc-list: [1, 4, 5, 6, 8, 32]", b"conc-list: [1, 4, 5, 6, 8, 16, 32]")
    entry = (f"\n- config-keys:\n    - {ATOM_KEY}\n    - no-such-*\n  description:\n    - \"Add TP4 c16\"\n"
             "  pr-link: https://github.com/SemiAnalysisAI/InferenceX/pull/XXX\n  append-only: true\n").encode()
    after[CHANGELOG] = before[CHANGELOG] + entry
    plan = plan_sweep(MemorySource(before), MemorySource(after), RepoConfig())
    assert plan.append_only and plan.keys == [ATOM_KEY] and plan.points == 1
    assert any("no-such-*" in p for p in plan.problems)
