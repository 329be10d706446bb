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
