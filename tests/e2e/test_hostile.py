"""The hostile and malformed input corpus (issue 7): every case in tests/hostile/ runs through the
engine (and, for `run: emulator`, the whole GitHub pipeline with posting against the strict
emulator) and must never crash, never leave the PR without a status, and give the expected rows.
The case format is described in tests/hostile/README.md."""
from __future__ import annotations

import io
import json
import logging
import resource
import shutil
import subprocess
import struct
import sys
import tempfile
import time
import zipfile
import zlib
from datetime import date
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.builders import WORLDS_DIR, build_snapshot, read_yaml  # noqa: E402
from checks.engine import UNEVALUATED_REASON, Verdict, evaluate  # noqa: E402
from checks.render import (  # noqa: E402
    MARKER,
    render_comment,
    render_markdown,
    validate_comment,
    validate_verdict_markdown,
)

CASES_DIR = Path(__file__).resolve().parents[1] / "hostile"
CASES = sorted(CASES_DIR.glob("*.yaml"))
REVIEW_DATE = date(2026, 11, 29)
CASE_KEYS = {"description", "kind", "snapshot", "only", "world", "edit", "run", "steps", "expect", "xfail", "limits"}
LIMIT_KEYS = {"seconds", "peak_rss_mb"}
# How a case with limits runs in its own interpreter (from the project root).
CHILD_MODULE = "tests.e2e.test_hostile"
EDIT_KEYS = {"files", "artifacts", "world_sub", "pr", "append_comments"}
EXPECT_KEYS = {"verdict", "verdict_in", "rows", "status", "bot_comments", "rendered_excludes",
               "rendered_contains", "no_verdict", "error_contains"}
ROW_KEYS = {"status", "status_in", "reason_contains", "reason_excludes", "unavailable"}
STEP_KINDS = {"bot", "post_comment", "edit_comment", "push"}
CRASH_MARK = UNEVALUATED_REASON.split("{", 1)[0]
MIN_CASES = 40


# ----- generated values (big or binary inputs are never committed) ------------------------------

def _zip(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, text in sorted(files.items()):
            zf.writestr(zipfile.ZipInfo(name, date_time=(2026, 1, 1, 0, 0, 0)), text)
    return buf.getvalue()


class Streamed:
    """A big generated file written in pieces, never held whole in memory: `head`, then
    `text` `times` times, then `tail`."""

    def __init__(self, head: str, text: str, times: int, tail: str):
        self.head, self.text, self.times, self.tail = head, text, times, tail

    def write_to(self, path: Path) -> None:
        block = max(1, (1 << 20) // max(1, len(self.text)))
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(self.head)
            left = self.times
            while left > 0:
                n = min(block, left)
                fh.write(self.text * n)
                left -= n
            fh.write(self.tail)


def _zip_bomb(spec: dict) -> bytes:
    """A small zip whose one member inflates to `size` bytes of "0" (a whole number of MiB).

    Deflating a GiB takes seconds; a full flush resets the compressor, so the compressed form of
    one MiB after it is the same bytes every time: the member is that block repeated, then the
    final empty block, written into a plain one-member zip (its CRC computed over the real bytes)."""
    size, chunk = int(spec["size"]), b"0" * (1 << 20)
    if size % len(chunk):
        raise ValueError(f"$zip_bomb size {size} is not a whole number of MiB")
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    block = comp.compress(chunk) + comp.flush(zlib.Z_FULL_FLUSH)
    data = block * (size // len(chunk)) + comp.flush()
    crc = 0
    for _ in range(size // len(chunk)):
        crc = zlib.crc32(chunk, crc)
    name = spec["name"].encode()
    dos_time, dos_date = 0, (2026 - 1980) << 9 | 1 << 5 | 1
    fields = (20, 0, zipfile.ZIP_DEFLATED, dos_time, dos_date, crc, len(data), size, len(name))
    local = struct.pack("<IHHHHHIIIHH", 0x04034B50, *fields, 0) + name
    central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, *fields, 0, 0, 0, 0, 0, 0) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 1, 1, len(central), len(local) + len(data), 0)
    return local + data + central + end


def generate(value: Any) -> Any:
    """Expand the `$` generators of a case (see tests/hostile/README.md) into real values."""
    if isinstance(value, list):
        return [generate(v) for v in value]
    if not isinstance(value, dict):
        return value
    if "$stream" in value:
        return Streamed(str(value.get("head", "")), str(value["$stream"]), int(value["times"]), str(value.get("tail", "")))
    if "$zip_bomb" in value:
        return _zip_bomb(value["$zip_bomb"])
    if "$symlink" in value:
        return Symlink(str(value["$symlink"]))
    if "$repeat" in value:
        return str(value.get("head", "")) + str(value["$repeat"]) * int(value["times"]) + str(value.get("tail", ""))
    if "$concat" in value:
        return "".join(str(generate(v)) for v in value["$concat"])
    if "$hex" in value:
        return bytes.fromhex(value["$hex"])
    if "$latin1" in value:
        return str(value["$latin1"]).encode("latin-1")
    if "$truncated_zip" in value:
        data = _zip(generate(value["$truncated_zip"]))
        return data[: int(len(data) * float(value.get("keep", 0.5)))]
    out: dict[Any, Any] = {}
    for k, v in value.items():
        if k == "$many":
            for i in range(int(v["count"])):
                out[v["pattern"].format(i=i)] = v.get("text", f"{i}\n")
        else:
            out[k] = generate(v)
    return out


# ----- deriving a world --------------------------------------------------------------------------

class Symlink:
    """A symbolic link whose text is `target` (written as a link, not a file)."""

    def __init__(self, target: str):
        self.target = target


def _write(path: Path, content: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, Symlink):
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path)
        elif path.is_symlink() or path.exists():
            path.unlink()
        path.symlink_to(content.target)
    elif isinstance(content, Streamed):
        content.write_to(path)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(str(content), encoding="utf-8")


def _current(world: Path, commit: str, path: str, order: list[str]) -> str:
    """A file as the world has it at `commit` (its own overlay, else an earlier one, else base)."""
    chain = order[: order.index(commit) + 1] if commit in order else []
    for cid in reversed(chain):
        p = world / "commits" / cid / path
        if p.is_file():
            return p.read_text(encoding="utf-8")
    return (world / "base" / path).read_text(encoding="utf-8")


def _merge(base: Any, over: Any) -> Any:
    """`over` deep-merged into `base`: mappings merge, anything else (lists too) replaces."""
    if isinstance(base, dict) and isinstance(over, dict):
        return {**base, **{k: _merge(base.get(k), v) for k, v in over.items()}}
    return over


def derive_world(name: str, edit: dict, dest: Path) -> Path:
    """A copy of bundled world `name` with the case's edits applied."""
    unknown = set(edit) - EDIT_KEYS
    assert not unknown, f"unknown edit keys {unknown}"
    shutil.copytree(WORLDS_DIR / name, dest)
    wy = dest / "world.yaml"
    text = wy.read_text(encoding="utf-8")
    for old, new in generate(edit.get("world_sub", [])):
        assert old in text, f"world_sub: {old!r} is not in {name}/world.yaml"
        text = text.replace(old, new)
    data = read_yaml(text)
    order = [c["id"] for c in data.get("commits", [])]
    changed_world = bool(edit.get("world_sub") or edit.get("pr") or edit.get("append_comments"))
    data["pr"] = _merge(data["pr"], generate(edit.get("pr") or {}))
    data["pr"].setdefault("comments", []).extend(generate(edit.get("append_comments") or []))
    for commit, files in generate(edit.get("files", {})).items():
        for path, content in files.items():
            if isinstance(content, dict) and ("$sub" in content or "$from" in content):
                # `$from` copies another file as the world has it at this commit (a rename).
                current = _current(dest, commit, content.get("$from", path), order)
                for old, new in content.get("$sub", []):
                    assert old in current, f"$sub: {old!r} is not in {path} at {commit}"
                    current = current.replace(old, new)
                # `encoding` writes the edited text in another charset (a non-UTF-8 file).
                content = current.encode(content["encoding"]) if "encoding" in content else current
            if commit == "base":
                target = dest / "base" / path
                if content is None:
                    target.unlink()
                else:
                    _write(target, content)
                continue
            if content is None:
                entry = next(c for c in data["commits"] if c["id"] == commit)
                entry.setdefault("delete", []).append(path)
                changed_world = True
            else:
                _write(dest / "commits" / commit / path, content)
    for rel, content in generate(edit.get("artifacts", {})).items():
        target = dest / "artifacts" / rel
        if isinstance(content, dict) and "$sub" in content:
            current = target.read_text(encoding="utf-8")
            for old, new in content["$sub"]:
                assert old in current, f"$sub: {old!r} is not in artifact {rel}"
                current = current.replace(old, new)
            content = current
        if content is None:
            shutil.rmtree(target) if target.is_dir() and not target.is_symlink() else target.unlink()
        else:
            _write(target, content)
    if changed_world:
        wy.write_text(yaml.dump(data, Dumper=yaml.CSafeDumper, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return dest


# ----- running a case ----------------------------------------------------------------------------

def _rows(verdict: Verdict) -> dict[int, Any]:
    return {r.number: r for r in verdict.rows}


def check_verdict(verdict: Verdict, expect: dict, case: str, *, full: bool) -> str:
    """Assert the expected rows; returns the rendered text for the text expectations."""
    rows = _rows(verdict)
    for row in verdict.rows:
        assert CRASH_MARK not in row.reason, f"{case}: Check {row.number} crashed: {row.reason}"
    if "verdict" in expect:
        assert verdict.status.value == expect["verdict"], f"{case}: verdict {verdict.status.value}"
    if "verdict_in" in expect:
        assert verdict.status.value in expect["verdict_in"], f"{case}: verdict {verdict.status.value}"
    for number, want in (expect.get("rows") or {}).items():
        want = {"status": want} if isinstance(want, str) else want
        assert not set(want) - ROW_KEYS, f"{case}: unknown row keys {set(want) - ROW_KEYS}"
        row = rows[int(number)]
        where = f"{case}: Check {number} ({row.status.value}: {row.reason})"
        if "status" in want:
            assert row.status.value == want["status"], where
        if "status_in" in want:
            assert row.status.value in want["status_in"], where
        for s in want.get("reason_contains", []):
            assert s in row.reason, f"{where} lacks {s!r}"
        for s in want.get("reason_excludes", []):
            assert s not in row.reason, f"{where} has {s!r}"
        if want.get("unavailable"):
            assert any(e.unavailable for e in row.evidence), f"{where}: no unavailable evidence"
    if not full:
        return render_markdown(verdict)
    if verdict.signoff is not None:
        text = render_comment(verdict, verdict.signoff.key)
        assert validate_comment(text) == [], f"{case}: invalid comment {validate_comment(text)}"
    else:
        text = render_markdown(verdict)
        assert validate_verdict_markdown(text) == [], f"{case}: invalid verdict {validate_verdict_markdown(text)}"
    return text


def check_text(text: str, expect: dict, case: str) -> None:
    for s in expect.get("rendered_contains", []):
        assert s in text, f"{case}: rendered verdict lacks {s!r}"
    for s in expect.get("rendered_excludes", []):
        assert s not in text, f"{case}: rendered verdict has {s!r}"


def run_snapshot_case(case: dict, name: str) -> None:
    only = set(case["only"]) if case.get("only") else None
    snapshot = build_snapshot(generate(case.get("snapshot") or {}), review_date=REVIEW_DATE.isoformat())
    with timed():
        verdict = evaluate(snapshot, only=only)
    text = check_verdict(verdict, case["expect"], name, full=only is None)
    check_text(text, case["expect"], name)


# Seconds the bot itself spent on the last case run in this process (world building excluded):
# `seconds` of wall time and `cpu_seconds` of this process's CPU (what a case's `limits.seconds`
# bounds: on a machine shared by other jobs the wall time measures the load, not the bot).
MEASURED: dict[str, float] = {}


class timed:
    """Add the wall and CPU seconds of the block to MEASURED."""

    def __enter__(self) -> None:
        self.wall, self.cpu = time.perf_counter(), time.process_time()

    def __exit__(self, *exc: object) -> None:
        MEASURED["seconds"] = MEASURED.get("seconds", 0.0) + time.perf_counter() - self.wall
        MEASURED["cpu_seconds"] = MEASURED.get("cpu_seconds", 0.0) + time.process_time() - self.cpu


def run_local_case(case: dict, name: str, tmp_path: Path) -> None:
    world = derive_world(case["world"], case.get("edit") or {}, tmp_path / "world")
    from bot.local import build_local_snapshot
    from ghsim.world import build_world_repo

    built = build_world_repo(world, tmp_path / "repo")
    with timed():
        snapshot = build_local_snapshot(built.path, built.base_sha, built.head_sha, pr=built.world.pr, pr_dir=world,
                                        repo=built.world.repo, commit_aliases=built.shas,
                                        team_members=dict(built.world.teams), review_date=REVIEW_DATE)
        verdict = evaluate(snapshot)
    text = check_verdict(verdict, case["expect"], name, full=True)
    check_text(text, case["expect"], name)


def run_emulator_case(case: dict, name: str, tmp_path: Path) -> None:
    from bot.pipeline import review_pr
    from bot.github_client import GitHubApi, make_github, token_auth
    from ghsim import Emulator
    from ghsim import effects as fx

    world = derive_world(case["world"], case.get("edit") or {}, tmp_path / "world")
    expect = case["expect"]
    steps = case.get("steps") or [{"bot": {}}]
    review = None
    with Emulator(world, strict=True) as emu:
        bot = emu.world.bot.login
        human_token = next(iter(emu.world.tokens), None)
        human = GitHubApi(make_github(emu.url, auth=token_auth(human_token), env={})) if human_token else None
        issue = f"/repos/{emu.world.repo}/issues"
        try:
            for step in steps:
                (kind, arg), = step.items()
                assert kind in STEP_KINDS, f"{name}: unknown step {kind}"
                if kind == "bot":
                    api = GitHubApi(make_github(emu.url, auth=token_auth(emu.world.bot.token), env={}))
                    try:
                        with timed():
                            review = review_pr(api, emu.world.repo, emu.world.pr.number, post=True,
                                               review_date=REVIEW_DATE)
                    finally:
                        api.close()
                    statuses = [e for e in emu.effects if e["kind"] == fx.EFFECT_STATUS_SET and e["actor"] == bot]
                    assert statuses and statuses[-1]["sha"] == emu.head_sha, f"{name}: no status on the head"
                elif kind == "post_comment":
                    human.post(f"{issue}/{emu.world.pr.number}/comments", {"body": generate(arg)})
                elif kind == "edit_comment":
                    human.patch(f"{issue}/comments/{arg['id']}", {"body": generate(arg["body"])})
                elif kind == "push":
                    emu.push(generate(arg))
        finally:
            if human is not None:
                human.close()
        emu.assert_clean()
        effects = emu.effects
    mine = [e for e in effects if e["actor"] == bot]
    statuses = [e for e in mine if e["kind"] == fx.EFFECT_STATUS_SET]
    live: dict[int, str] = {}
    for e in mine:
        if e["kind"] in (fx.EFFECT_COMMENT_CREATED, fx.EFFECT_COMMENT_EDITED):
            live[e["id"]] = e["body"]
    markers = [b.split("\n", 1)[0] for b in live.values()]
    assert len(markers) == len(set(markers)), f"{name}: two bot comments for one sign-off"
    for body in live.values():
        assert body.split("\n", 1)[0].startswith(MARKER.split("{", 1)[0]), f"{name}: unmarked bot comment"
    if "status" in expect:
        assert statuses[-1]["state"] == expect["status"], f"{name}: status {statuses[-1]}"
    if "bot_comments" in expect:
        assert len(live) == expect["bot_comments"], f"{name}: {len(live)} bot comments"
    if expect.get("no_verdict"):
        assert review.verdict is None, f"{name}: expected no verdict"
    for s in [expect["error_contains"]] if "error_contains" in expect else []:
        assert review.error and s in review.error, f"{name}: error {review.error!r}"
    text = "\n".join(live.values())
    if review.verdict is not None:
        check_verdict(review.verdict, expect, name, full=False)
    check_text(text, expect, name)


def load_case(path: Path) -> dict:
    case = read_yaml(path.read_text(encoding="utf-8"))
    unknown = set(case) - CASE_KEYS
    assert not unknown, f"{path.name}: unknown keys {unknown}"
    assert isinstance(case.get("description"), str) and "\n" not in case["description"].strip()
    assert not set(case["expect"]) - EXPECT_KEYS, f"{path.name}: unknown expect keys"
    return case


def test_corpus_is_large_enough():
    assert len(CASES) >= MIN_CASES, f"{len(CASES)} hostile cases, want at least {MIN_CASES}"


def _param(path: Path):
    """A case; one with `xfail: reason` pins a known bug in a module this corpus does not own."""
    reason = (read_yaml(path.read_text(encoding="utf-8")) or {}).get("xfail")
    marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
    return pytest.param(path, id=path.stem, marks=marks)


def run_case(path: Path, tmp_path: Path) -> None:
    case = load_case(path)
    kind = case.get("kind") or ("world" if "world" in case else "snapshot")
    if kind == "snapshot":
        run_snapshot_case(case, path.stem)
    elif case.get("run", "local") == "local":
        run_local_case(case, path.stem, tmp_path)
    else:
        run_emulator_case(case, path.stem, tmp_path)


def measure_in_child(path: Path, timeout: float = 600) -> dict:
    """Run one case in a fresh interpreter: its assertions, the bot's seconds and the process's
    peak RSS (resource.getrusage; big inputs are streamed to disk, never held in memory)."""
    proc = subprocess.run([sys.executable, "-m", CHILD_MODULE, str(path)], capture_output=True, text=True,
                          timeout=timeout, cwd=Path(__file__).resolve().parents[2])
    if proc.returncode != 0:
        raise AssertionError(f"{path.stem} failed in its own process:\n{proc.stdout[-3000:]}{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("path", [_param(p) for p in CASES])
def test_hostile_case(path: Path, tmp_path: Path, caplog):
    caplog.set_level(logging.CRITICAL)  # broken input is logged loudly by design; rows are the output
    case = load_case(path)
    limits = case.get("limits")
    if not limits:
        run_case(path, tmp_path)
        return
    assert not set(limits) - LIMIT_KEYS, f"{path.stem}: unknown limits {set(limits) - LIMIT_KEYS}"
    got = measure_in_child(path)
    if "seconds" in limits:
        assert got["cpu_seconds"] <= limits["seconds"], f"{path.stem}: the bot took {got['cpu_seconds']:.2f} s of CPU"
    if "peak_rss_mb" in limits:
        assert got["peak_rss_mb"] <= limits["peak_rss_mb"], f"{path.stem}: peak RSS {got['peak_rss_mb']:.0f} MB"


def main(argv: list[str]) -> int:
    """`python -m tests.e2e.test_hostile CASE.yaml`: run one case here, print seconds and peak RSS."""
    logging.disable(logging.CRITICAL)
    with tempfile.TemporaryDirectory(prefix="infx-hostile-") as tmp:
        run_case(Path(argv[0]), Path(tmp))
    print(json.dumps({"case": Path(argv[0]).stem, "seconds": round(MEASURED.get("seconds", 0.0), 3),
                      "cpu_seconds": round(MEASURED.get("cpu_seconds", 0.0), 3),
                      "peak_rss_mb": round(own_peak_kb() / 1024, 1)}))
    return 0


def own_peak_kb() -> int:
    """This process's own peak RSS in KiB. Linux keeps the larger of the parent's RSS and the
    child's in `ru_maxrss` across the fork and exec that start it, so a child started by a
    pytest worker that has grown would report the worker's size; VmHWM (the high-water mark of
    this program's own memory) is what the bot used."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
