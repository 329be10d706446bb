"""Issue 12 units: internal errors exit 2, the one guarded artifact reader, caps on work."""
from __future__ import annotations

import io
import json
import os
import zipfile

import pytest

from bot import cli
from recipes import artifacts as A
from recipes.errors import Finding
from recipes.master import MAX_MASTER_VALUES, parse_master


def test_an_internal_error_in_a_command_exits_2(monkeypatch, tmp_path):
    import bot.commands.check as check

    def boom(*a, **k):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(check, "build_local_snapshot", boom)
    assert cli.main(["check", "--local", str(tmp_path), "--base", "a", "--head", "b"]) == cli.EXIT_ERROR


def test_an_unexpected_exception_anywhere_exits_2(monkeypatch):
    parser, runners = cli.build_parser()

    def bad_build():
        def run(args):
            raise ValueError("a bug")
        return parser, {**runners, "inspect": run}

    monkeypatch.setattr(cli, "build_parser", bad_build)
    assert cli.main(["inspect", "."]) == cli.EXIT_ERROR


@pytest.mark.parametrize("data, words", [
    (b"[" * 100_000 + b"]" * 100_000, "nests too deeply"),
    (b'[{"conc": ' + b"9" * 5000 + b"}]", "integer string conversion"),
    (b"[" + b"{}," * (A.MAX_JSON_OBJECTS + 1) + b"{}]", "JSON objects"),
    (b"\xff\xfe[]", "not valid JSON"),
])
def test_unreadable_json_is_a_finding_never_an_exception(data, words):
    got = A.parse_json(data, "x.json")
    assert isinstance(got, Finding) and words in got.message


def test_json_over_the_byte_cap_is_not_parsed():
    got = A.parse_json(b" " * (A.MAX_JSON_BYTES + 1), "big.json")
    assert isinstance(got, Finding) and "over the" in got.message


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for k, v in members.items():
            zf.writestr(k, v)
    return buf.getvalue()


def test_zip_members_other_than_json_are_never_inflated():
    out = A.read_artifact_zip(_zip({"a.json": b"[]", "server.log": b"x" * (A.MAX_ZIP_UNCOMPRESSED + 10)}), "n")
    assert out == {"a.json": b"[]"}


def test_zip_member_count_is_read_before_the_index():
    data = _zip({f"m{i}.json": b"[]" for i in range(A.MAX_ZIP_MEMBERS + 1)})
    got = A.read_artifact_zip(data, "n")
    assert isinstance(got, Finding) and f"{A.MAX_ZIP_MEMBERS + 1} members" in got.message


def test_json_rows_reports_each_unreadable_file():
    rows, objects, problems = A.json_rows([("a/x.json", b'[{"a": 1}]'), ("a/meta_env.json", b'{"image": "i"}'),
                                           ("a/deep.json", b"[" * 5000 + b"]" * 5000)])
    assert rows == [{"a": 1}] and objects == {"meta_env.json": {"image": "i"}}
    assert len(problems) == 1 and "deep.json" in problems[0]


def test_folder_files_refuses_links_and_oversize(tmp_path):
    root = tmp_path / "artifacts"
    folder = root / "1" / "results_bmk"
    folder.mkdir(parents=True)
    (folder / "ok.json").write_text("[]")
    (folder / "link.json").symlink_to("/etc/passwd")
    (folder / "sub").symlink_to(tmp_path)
    with open(folder / "big.json", "wb") as fh:
        fh.truncate(A.MAX_JSON_BYTES + 1)
    got = dict(A.folder_files(folder, root))
    assert got[str(folder / "ok.json")] == b"[]"
    for name in ("link.json", "sub", "big.json"):
        assert isinstance(got[str(folder / name)], Finding), name
    linked = root / "1" / "eval_results_all"
    linked.symlink_to(tmp_path)
    (got_one,) = A.folder_files(linked, root)
    assert isinstance(got_one[1], Finding) and "symbolic link" in got_one[1].message


def test_a_master_config_with_too_many_values_is_not_parsed():
    mf = parse_master(b"a:\n  conc-list: [" + b"1, " * MAX_MASTER_VALUES + b"1]\n", "configs/x-master.yaml")
    assert not mf.entries and mf.findings[0].code == "too-large" and "value limit" in mf.findings[0].message
