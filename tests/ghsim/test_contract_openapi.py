"""Contract tests: every JSON response the emulator serves, for every endpoint the bot uses in the
bundled flows (verdicts, commands, sweeps, check runs), validates against the response schema of
GitHub's published OpenAPI description (tests/contract/github-rest-subset.json, cut from
@octokit/openapi by tests/contract/extract_openapi.py), so the emulator cannot drift from GitHub."""
from __future__ import annotations

import importlib.util
import json
from datetime import date
from pathlib import Path

import pytest

jsonschema = pytest.importorskip("jsonschema")


from bot.pipeline import review_pr  # noqa: E402
from bot.commands.handle_event import handle_event  # noqa: E402
from bot.events import event_name_from_filename, load_payload  # noqa: E402
from ghsim import Emulator  # noqa: E402
from tests.builders import emulator_api

HERE = Path(__file__).resolve().parents[1]  # tests/
WORLDS = HERE.parent / "ghsim" / "worlds"
SUBSET = HERE / "contract" / "github-rest-subset.json"
REVIEW_DATE = date(2026, 11, 29)


def _extractor():
    spec = importlib.util.spec_from_file_location("extract_openapi", HERE / "contract" / "extract_openapi.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


EXTRACT = _extractor()
CONTRACT = json.loads(SUBSET.read_text(encoding="utf-8"))


def _validator(operation: str, status: int):
    schema = CONTRACT["operations"][operation][str(status)]
    return jsonschema.Draft202012Validator({"$defs": CONTRACT["$defs"], **schema})


def _flows(emu: Emulator, world: str) -> None:
    api = emulator_api(emu)
    try:
        review_pr(api, emu.world.repo, emu.world.pr.number, post=True, review_date=REVIEW_DATE)
        for path in sorted((WORLDS / world / "events").glob("*.json")) if (WORLDS / world / "events").is_dir() else []:
            handle_event(api, event_name_from_filename(path), load_payload(path), env={}, review_date=REVIEW_DATE)
        r = f"/repos/{emu.world.repo}"
        for extra in (f"{r}/commits/{emu.head_sha}/status", f"{r}/commits/{emu.head_sha}/statuses",
                      f"{r}/issues/{emu.world.pr.number}", f"{r}/issues/{emu.world.pr.number}/labels", "/rate_limit"):
            api.get(extra)
    finally:
        api.close()


@pytest.mark.parametrize("world", ["seed", "rejected", "reuse", "sweep"])
def test_every_json_response_meets_githubs_schema(world):
    with Emulator(WORLDS / world, strict=True, record_responses=True) as emu:
        _flows(emu, world)
        emu.assert_clean()
        responses = list(emu.responses)
    checked, problems = set(), []
    for template, status, body in responses:
        if status >= 300:
            continue
        operation = EXTRACT.operation_key(template)
        if operation in EXTRACT.NOT_IN_DESCRIPTION:
            continue
        assert operation in CONTRACT["operations"], f"{template}: no operation in GitHub's description"
        assert str(status) in CONTRACT["operations"][operation], f"{template} answered {status}, not in the description"
        errors = sorted(_validator(operation, status).iter_errors(body), key=lambda e: list(e.absolute_path))
        for e in errors[:3]:
            problems.append(f"{template} {status}: {'/'.join(map(str, e.absolute_path))}: {e.message[:200]}")
        checked.add(operation)
    assert problems == []
    assert len(checked) >= 10, checked


def test_the_subset_covers_every_route_the_emulator_serves():
    served = set(EXTRACT.served_operations())
    assert served - set(CONTRACT["described"]) == set(EXTRACT.NOT_IN_DESCRIPTION)
    assert set(CONTRACT["operations"]) <= served
    assert CONTRACT["source"].startswith("@octokit/openapi")
