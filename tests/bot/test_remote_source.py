"""Repository archives: GitHub's tarball shape in the emulator, unpacking one into the blob store,
the checks that decide whether its file list may stand for the target tree, and the download cap."""
from __future__ import annotations

import gzip
import io
import tarfile
from dataclasses import dataclass
from pathlib import Path

import pytest

from bot.github_client import DownloadTooLarge
from bot.remote_source import (
    Archive,
    BlobStore,
    RemoteReadError,
    RemoteTree,
    archive_mismatch,
    fetch_archive,
    git_blob_sha,
    read_archive,
)
from ghsim import Emulator
from tests.builders import emulator_api

SEED = Path(__file__).resolve().parents[2] / "ghsim" / "worlds" / "seed"
SHA = "a" * 40
TOP = "Org-Repo-aaaaaaa"


@dataclass
class Change:
    """The ChangedFile fields archive_mismatch reads."""

    path: str
    status: str = "modified"
    previous_path: str | None = None


def tarball(files: dict[str, bytes], *, commit: str | None = SHA, top: str = TOP, links: dict[str, str] | None = None,
            extra_top: str | None = None) -> bytes:
    """A gzip tar shaped like GitHub's: one top-level directory, the commit in a pax global header."""
    buf = io.BytesIO()
    pax = {"comment": commit} if commit else {}
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT, pax_headers=pax) as tar:
        for name in [top] + ([extra_top] if extra_top else []):
            d = tarfile.TarInfo(name)
            d.type = tarfile.DIRTYPE
            tar.addfile(d)
        for path, data in files.items():
            info = tarfile.TarInfo(f"{top}/{path}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for path, target in (links or {}).items():
            info = tarfile.TarInfo(f"{top}/{path}")
            info.type = tarfile.SYMTYPE
            info.linkname = target
            tar.addfile(info)
    # mtime=0: the same bytes in every process (pytest-xdist compares the test ids its workers
    # collect, and a parameter's id holds its bytes).
    return gzip.compress(buf.getvalue(), mtime=0)


def blobs() -> BlobStore:
    return BlobStore(api=None, repo="Org/Repo")  # type: ignore[arg-type]  # never asked: all reads hit the cache


# ----- unpacking ------------------------------------------------------------------------------------


def test_an_archive_fills_the_blob_store_keyed_by_git_blob_sha():
    store = blobs()
    archive = read_archive(tarball({"a.yaml": b"x: 1\n", "dir/b.sh": b"echo\n"}, links={"link": "a.yaml"}), SHA, store)
    assert archive.entries == {
        "a.yaml": (git_blob_sha(b"x: 1\n"), 5),
        "dir/b.sh": (git_blob_sha(b"echo\n"), 5),
        "link": (git_blob_sha(b"a.yaml"), 6),  # git stores a symlink as a blob holding its target
    }
    assert store.cached(git_blob_sha(b"echo\n")) == b"echo\n"
    assert archive.altered is None


def test_a_tree_built_on_an_archive_reads_without_requests():
    store = blobs()
    archive = read_archive(tarball({"a.yaml": b"x: 1\n"}), SHA, store)
    tree = RemoteTree(None, "Org/Repo", SHA, store, entries=archive.entries)  # type: ignore[arg-type]
    assert tree.read("a.yaml") == b"x: 1\n" and tree.read("missing") is None and tree.list("") == ["a.yaml"]


@pytest.mark.parametrize("data, match", [
    (b"not a tarball", "not a gzip tar"),
    (tarball({"a": b"1"}, commit="b" * 40), "archive of commit b"),
    (tarball({"a": b"1"}, extra_top="Other-top"), "one top-level directory, found 2"),
], ids=["not-gzip", "another-commit", "two-top-directories"])
def test_a_wrong_archive_is_refused(data, match):
    with pytest.raises(ValueError, match=match):
        read_archive(data, SHA, blobs())


def test_an_archive_that_unpacks_too_large_is_refused():
    with pytest.raises(ValueError, match="unpacks to over 10 bytes"):
        read_archive(tarball({"a": b"0123456789", "b": b"x"}), SHA, blobs(), max_unpacked=10)


@pytest.mark.parametrize("attributes", ["docs/ export-ignore\n", "*.txt export-subst\n", "*.bin filter=lfs diff=lfs\n"])
def test_attributes_that_change_archives_are_flagged(attributes):
    archive = read_archive(tarball({"sub/.gitattributes": attributes.encode(), "a": b"1"}), SHA, blobs())
    assert archive.altered and "sub/.gitattributes" in archive.altered
    assert "sub/.gitattributes" in archive_mismatch(archive, {}, [])
    harmless = read_archive(tarball({".gitattributes": b"*.sh text eol=lf\n"}), SHA, blobs())
    assert harmless.altered is None


# ----- may the archive's file list stand for the target tree? ----------------------------------------


def _entries(files: dict[str, bytes]) -> dict[str, tuple[str, int]]:
    return {p: (git_blob_sha(d), len(d)) for p, d in files.items()}


BASE = {"keep.yaml": b"k\n", "edit.yaml": b"old\n", "gone.yaml": b"g\n", "old-name.sh": b"r\n"}
HEAD = {"keep.yaml": b"k\n", "edit.yaml": b"new\n", "new.yaml": b"n\n", "new-name.sh": b"r\n"}
CHANGES = [Change("edit.yaml"), Change("gone.yaml", "removed"), Change("new.yaml", "added"),
           Change("new-name.sh", "renamed", "old-name.sh")]


def test_a_faithful_archive_agrees_with_head_and_changes():
    assert archive_mismatch(Archive(SHA, _entries(BASE)), _entries(HEAD), CHANGES) is None


@pytest.mark.parametrize("base, problem", [
    ({k: v for k, v in BASE.items() if k != "keep.yaml"}, "keep.yaml is missing"),  # export-ignore
    ({**BASE, "keep.yaml": b"$Format:%H$\n"}, "keep.yaml has other content"),  # export-subst
    ({k: v for k, v in BASE.items() if k != "edit.yaml"}, "edit.yaml is missing"),
    ({k: v for k, v in BASE.items() if k != "gone.yaml"}, "gone.yaml is missing"),
    ({k: v for k, v in BASE.items() if k != "old-name.sh"}, "old-name.sh is missing"),
    ({**BASE, "new.yaml": b"n\n"}, "new.yaml is present"),
    ({**BASE, "stray.txt": b"s\n"}, "stray.txt is present"),
])
def test_an_archive_that_disagrees_is_not_trusted(base, problem):
    assert problem in archive_mismatch(Archive(SHA, _entries(base)), _entries(HEAD), CHANGES)


def test_a_change_list_that_misses_a_change_makes_the_archive_untrusted():
    # Without the edit in the list, edit.yaml looks unchanged but differs: refused, never guessed.
    assert "edit.yaml has other content" in archive_mismatch(Archive(SHA, _entries(BASE)), _entries(HEAD), CHANGES[1:])


# ----- over HTTP against the emulator ------------------------------------------------------------------


@pytest.fixture(scope="module")
def emu():
    with Emulator(SEED, strict=True) as e:
        yield e


def test_the_emulator_serves_github_shaped_tarballs_matching_the_tree(emu):
    emu.reset_counters()
    api = emulator_api(emu)
    for sha in (emu.base_sha, emu.head_sha):
        store = BlobStore(api, emu.world.repo)
        archive = fetch_archive(api, emu.world.repo, sha, store, 10 << 20)
        listed = RemoteTree(api, emu.world.repo, sha, BlobStore(api, emu.world.repo)).entries()
        assert archive.entries == listed and archive.altered is None
    assert emu.requests["GET /repos/{owner}/{repo}/tarball/{ref}"] == 2
    assert emu.requests["GET /_sandbox/codeload/{owner}/{repo}/{sha}/{signature}"] == 2
    assert emu.requests["GET /repos/{owner}/{repo}/git/blobs/{sha}"] == 0
    # GitHub's layout: one <owner>-<repo>-<short sha>/ directory.
    url = api.redirect_target(f"/repos/{emu.world.repo}/tarball/{emu.base_sha}")
    with tarfile.open(fileobj=io.BytesIO(api.download(url)), mode="r:gz") as tar:
        assert {m.name.split("/")[0] for m in tar.getmembers()} == {f"SemiAnalysisAI-InferenceX-{emu.base_sha[:7]}"}
        assert tar.pax_headers["comment"] == emu.base_sha
    emu.assert_clean()


def test_the_repository_reports_its_size(emu):
    assert emulator_api(emu).get(f"/repos/{emu.world.repo}")["size"] > 0
    assert emulator_api(emu).get(f"/repos/{emu.world.repo}/pulls/{emu.world.pr.number}")["base"]["repo"]["size"] > 0


def test_unknown_refs_and_forged_download_urls_are_404(emu):
    api = emulator_api(emu)
    with pytest.raises(RemoteReadError, match="404"):
        fetch_archive(api, emu.world.repo, "0" * 40, blobs(), 1 << 20)
    url = api.redirect_target(f"/repos/{emu.world.repo}/tarball/{emu.base_sha}")
    with pytest.raises(Exception, match="404"):
        api.download(url[:-3] + "xyz")


def test_a_download_over_the_cap_is_abandoned(emu):
    api = emulator_api(emu)
    url = api.redirect_target(f"/repos/{emu.world.repo}/tarball/{emu.base_sha}")
    with pytest.raises(DownloadTooLarge, match="over the 100-byte cap"):
        api.download(url, max_bytes=100)
    with pytest.raises(RemoteReadError, match="cap"):
        fetch_archive(api, emu.world.repo, emu.base_sha, blobs(), 100)


def test_a_file_that_exists_but_cannot_be_read_is_named_in_failures():
    """Read failures are raised (never a silent "absent") and recorded, so PRSnapshot.unreadable
    can name the file and the reason for the checks."""
    from bot.remote_source import BlobStore, RemoteReadError, RemoteTree

    class Broken(BlobStore):
        def get(self, sha):
            raise RuntimeError("502 Bad Gateway")

    entries = {"inferencex-e2e/configs/amd-master.yaml": ("a" * 40, 10), "big.bin": ("b" * 40, 10 ** 9)}
    tree = RemoteTree(None, "o/r", "c" * 40, Broken(None, "o/r"), entries=entries)
    with pytest.raises(RemoteReadError):
        tree.read("inferencex-e2e/configs/amd-master.yaml")
    with pytest.raises(RemoteReadError):
        tree.read("big.bin")
    assert tree.read("missing.yaml") is None
    assert set(tree.failures) == {"inferencex-e2e/configs/amd-master.yaml", "big.bin"}
    assert "502 Bad Gateway" in tree.failures["inferencex-e2e/configs/amd-master.yaml"]
