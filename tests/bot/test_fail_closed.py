"""Issue 12 units: internal errors exit 2, the one guarded artifact reader, caps on work."""
from __future__ import annotations

import io
import os
import zipfile

import pytest

from bot import cli
from recipes import artifacts as A
from recipes.errors import Finding
from recipes.master import MAX_MASTER_VALUES, parse_master


def test_an_internal_error_in_a_command_exits_2(monkeypatch, tmp_path):
    import bot.pipeline as check

    def boom(*a, **k):
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(check, "build_local_snapshot", boom)
    assert cli.main(["check", "--local", str(tmp_path), "--base", "a", "--head", "b"]) == cli.EXIT_ERROR


def test_an_unexpected_exception_anywhere_exits_2(monkeypatch):
    parser, runners = cli.build_parser()

    def bad_build(argv=None):
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


# ----- reads outside the repository (item 12) and symbolic links (item 3) --------------------------

def test_dir_source_refuses_dotdot_paths_and_links_out_of_the_root(tmp_path):
    from recipes.source import DirSource

    (tmp_path / "secret.yaml").write_text("password: hunter2\n")
    root = tmp_path / "repo"
    (root / "a").mkdir(parents=True)
    (root / "a" / "real.sh").write_text("echo in-repo\n")
    (root / "a" / "in.sh").symlink_to("real.sh")
    (root / "a" / "out.yaml").symlink_to(tmp_path / "secret.yaml")
    src = DirSource(root)
    assert src.read("a/in.sh") == b"echo in-repo\n"  # in-repo links are followed
    assert src.read("../secret.yaml") is None and src.read("a/../../secret.yaml") is None
    assert src.read("a/out.yaml") is None
    assert "leaves the repository" in src.failures["a/out.yaml"]
    assert "leaves the repository" in src.failures["../secret.yaml"]


def test_inspect_never_reads_an_srt_recipe_outside_the_checkout(tmp_path, capsys):
    (tmp_path / "secret.yaml").write_text("base: {name: leaked-secret-recipe}\n")
    root = tmp_path / "repo"
    (root / "configs").mkdir(parents=True)
    (root / "perf-changelog.yaml").write_text("[]\n")
    (root / "configs" / "amd-master.yaml").write_text(
        "x-fp4-mi355x-sglang:\n  image: lmsysorg/sglang:v1\n  model: m\n  model-prefix: x\n  runner: mi355x\n"
        "  precision: fp4\n  framework: sglang\n  multinode: false\n  scenarios:\n    fixed-seq-len:\n"
        "    - isl: 1024\n      osl: 1024\n      search-space:\n"
        "      - {tp: 8, conc-list: [4], srt-recipe: ../../../../../secret.yaml}\n")
    code = cli.main(["inspect", str(root), "--format", "json"])
    out = capsys.readouterr().out
    assert code in (0, 1) and "leaked-secret-recipe" not in out


def test_git_source_follows_in_repo_links_and_refuses_escaping_ones(tmp_path):
    import subprocess

    from recipes.source import GitSource

    repo = tmp_path / "r"
    (repo / "b").mkdir(parents=True)
    (repo / "b" / "real.sh").write_text("echo hi\n")
    os.symlink("real.sh", repo / "b" / "launch.sh")
    os.symlink("/etc/passwd", repo / "b" / "out.sh")
    os.symlink("b", repo / "d")
    env = {**os.environ, "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    for args in (["init", "-q"], ["add", "-A"], ["-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "x"]):
        subprocess.run(["git", "-C", str(repo), *args], check=True, env=env)
    src = GitSource(repo, "HEAD")
    assert src.read("b/launch.sh") == b"echo hi\n"
    assert src.read("d/real.sh") == b"echo hi\n"  # through a linked directory, as a checkout reads it
    assert src.read("b/out.sh") is None
    assert set(src.link_problems()) == {"b/out.sh"}


def test_the_world_builder_copies_links_as_links_never_their_targets(tmp_path):
    from ghsim.world import _overlay

    (tmp_path / "outside.txt").write_text("outside secret\n")
    src = tmp_path / "world"
    src.mkdir()
    (src / "link.txt").symlink_to(tmp_path / "outside.txt")
    dest = tmp_path / "repo"
    dest.mkdir()
    (dest / "link.txt").write_text("old regular file\n")
    _overlay(src, dest)
    assert (dest / "link.txt").is_symlink() and os.readlink(dest / "link.txt") == str(tmp_path / "outside.txt")
    (src / "link.txt").unlink()
    (src / "link.txt").write_text("a regular file again\n")
    _overlay(src, dest)  # a file over a link replaces the link, never writes through it
    assert not (dest / "link.txt").is_symlink() and (tmp_path / "outside.txt").read_text() == "outside secret\n"
