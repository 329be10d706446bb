"""docs/install.md and the workflows name the same things: each input and secret of the reusable
workflow (.github/workflows/review.yml), the repository secrets the caller (docs/caller-workflow.yml)
passes them from, the permissions of the caller's job and of the reusable workflow's jobs, and the
GitHub App permissions the bot asks for in its installation tokens (bot/github_client.py). A name
added, renamed or dropped on one side only fails here, naming it."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from bot.events import (EVENT_DISPATCH, EVENT_ISSUE_COMMENT, EVENT_PULL_REQUEST, EVENT_REVIEW,
                        EVENT_REVIEW_COMMENT, EVENT_WORKFLOW_RUN)
from bot.github_client import JOB_PERMISSIONS

PROJECT = Path(__file__).resolve().parents[2]
INSTALL = PROJECT / "docs" / "install.md"
REVIEW = PROJECT / ".github" / "workflows" / "review.yml"
CALLER = PROJECT / "docs" / "caller-workflow.yml"
LEVELS = {"none": 0, "read": 1, "write": 2}
_CODE = re.compile(r"`([^`]+)`")
_SECRET_REF = re.compile(r"^\$\{\{\s*secrets\.([A-Za-z0-9_]+)\s*\}\}$")


def table_after(markdown: str, heading: str) -> list[list[str]]:
    """The cells of each body row of the first table after the heading line `heading`."""
    lines = markdown.splitlines()
    start = lines.index(heading)
    rows: list[list[str]] = []
    for line in lines[start + 1:]:
        if line.startswith("#"):
            break
        if line.startswith("|"):
            rows.append([c.strip() for c in line.strip().strip("|").split("|")])
        elif rows:
            break
    assert len(rows) > 2, f"{INSTALL.name}: no table after {heading!r}"
    return rows[2:]  # header and separator rows


def code_in(cell: str) -> list[str]:
    return _CODE.findall(cell)


def _workflow(path: Path) -> dict:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {("on" if k is True else k): v for k, v in data.items()}  # YAML 1.1 reads `on:` as True


def _call(review: dict) -> dict:
    return review["on"]["workflow_call"]


def _max_permissions(jobs) -> dict[str, str]:
    out: dict[str, str] = {}
    for perms in jobs:
        for name, level in perms.items():
            if LEVELS[level] > LEVELS.get(out.get(name, "none"), 0):
                out[name] = level
    return out


def documented(markdown: str) -> dict[str, dict]:
    """What install.md's tables name: inputs, secrets (reusable-workflow name -> repository
    secret), workflow permissions and App permissions (name -> level)."""
    secrets = {}
    for cells in table_after(markdown, "### Secrets"):
        (name,), (repo_secret,) = code_in(cells[0]), code_in(cells[1])
        secrets[name] = repo_secret
    return {
        "inputs": {code_in(cells[0])[0]: cells for cells in table_after(markdown, "### Inputs")},
        "secrets": secrets,
        "workflow permissions": {code_in(c[0])[0]: code_in(c[1])[0] for c in table_after(markdown, "### Workflow permissions")},
        "app permissions": {code_in(c[0])[0]: code_in(c[1])[0] for c in table_after(markdown, "### App permissions")},
    }


@pytest.fixture(scope="module")
def facts():
    review, caller = _workflow(REVIEW), _workflow(CALLER)
    (job,) = caller["jobs"].values()
    return {
        "doc": documented(INSTALL.read_text(encoding="utf-8")),
        "review": review,
        "caller job": job,
    }


def test_install_md_lists_every_input_of_the_reusable_workflow(facts):
    assert sorted(facts["doc"]["inputs"]) == sorted(_call(facts["review"])["inputs"])


def test_the_caller_passes_only_inputs_the_reusable_workflow_declares(facts):
    declared = _call(facts["review"])["inputs"]
    required = {k for k, v in declared.items() if v.get("required")}
    passed = set(facts["caller job"].get("with", {}))
    assert passed <= set(declared), f"undeclared inputs: {passed - set(declared)}"
    assert required <= passed, f"required inputs not passed: {required - passed}"


def test_install_md_names_each_secret_as_the_caller_passes_it(facts):
    declared = set(_call(facts["review"])["secrets"])
    caller = {name: _SECRET_REF.match(value).group(1) for name, value in facts["caller job"]["secrets"].items()}
    assert set(facts["doc"]["secrets"]) == declared
    assert set(caller) <= declared, f"the caller passes undeclared secrets: {set(caller) - declared}"
    for name, repo_secret in caller.items():
        assert facts["doc"]["secrets"][name] == repo_secret, f"{name}: install.md says {facts['doc']['secrets'][name]}"


def test_the_workflow_permissions_agree_between_install_md_the_caller_and_the_jobs(facts):
    jobs = [job.get("permissions", {}) for job in facts["review"]["jobs"].values()]
    union = _max_permissions(jobs)
    assert facts["caller job"]["permissions"] == union, "the caller's job must grant what the called jobs ask for"
    assert facts["doc"]["workflow permissions"] == union


def test_install_md_lists_the_app_permissions_the_bot_asks_for(facts):
    asked = _max_permissions(JOB_PERMISSIONS.values())
    doc = facts["doc"]["app permissions"]
    assert doc.pop("metadata") == "read"  # every App has it; GitHub grants it with any other
    assert doc == asked


def test_every_event_the_bot_handles_is_subscribed_by_the_caller(facts):
    events = set(_workflow(CALLER)["on"])
    assert {EVENT_ISSUE_COMMENT, EVENT_PULL_REQUEST, EVENT_REVIEW, EVENT_REVIEW_COMMENT,
            EVENT_DISPATCH, EVENT_WORKFLOW_RUN} <= events


def test_the_bot_login_input_reaches_every_job_that_writes(facts):
    for name in ("review", "sweep"):
        (step,) = [s for s in facts["review"]["jobs"][name]["steps"] if "handle-event" in s.get("run", "")]
        assert step["env"]["INFX_BOT_LOGIN"] == "${{ inputs.bot-login }}", name


def test_a_disagreement_is_named():
    text = INSTALL.read_text(encoding="utf-8")
    renamed = text.replace("| `app-id` |", "| `app-identifier` |", 1)
    assert renamed != text
    assert "app-identifier" in documented(renamed)["secrets"]
    assert set(documented(renamed)["secrets"]) != set(_call(_workflow(REVIEW))["secrets"])
    dropped = text.replace("| `checks` | `write` | `review`, `sweep`", "| `check` | `write` | `review`, `sweep`", 1)
    assert dropped != text and "checks" not in documented(dropped)["workflow permissions"]
    with pytest.raises(ValueError):
        documented(text.replace("### Inputs", "### Settings"))
