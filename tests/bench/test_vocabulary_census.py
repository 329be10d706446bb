"""The census of command names (bench/vocabulary_census.py) on a small history of its own: which
blobs count as shell, which names count as commands, and the rules that leave garbage out."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PROJECT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(PROJECT / "bench"))

import vocabulary_census  # noqa: E402

SCRIPT = b"""#!/bin/bash
helper() { ls; }
helper
sudo -E env A=1 timeout 5 python3 -u x.py
bash -c 'jq . f.json | wc -l'
cat > job.sh <<END
PORT=$(( 8888 + $OFFSET ))
END
$TOOL --flag
"$DIR"/run.sh
if declare -F infx_hook_post >/dev/null; then infx_hook_post; fi
docker run --rm img nvidia-smi
bash -s <<'EOF'
numactl --hardware
EOF
"""
NOT_SHELL = b"#!/usr/bin/env python3\nimport os\n"


def _history(tmp_path: Path) -> Path:
    repo = tmp_path / "history"
    repo.mkdir()
    (repo / "launch.sh").write_bytes(SCRIPT)
    (repo / "runner").write_bytes(b"#!/usr/bin/env bash\nsrun --export=ALL,X=1 rsync -a a b\n")
    (repo / "tool").write_bytes(NOT_SHELL)
    (repo / "notes.txt").write_bytes(b"curl http://x\n")
    git = ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "one"], check=True)
    (repo / "launch.sh").write_bytes(SCRIPT + b"grep -q x y\n")
    subprocess.run([*git, "commit", "-qam", "two"], check=True)
    return repo


def test_the_census_reads_every_shell_blob_once_and_only_shell(tmp_path):
    repo = _history(tmp_path)
    paths = sorted(path for _oid, path, _data in vocabulary_census.shell_blobs(repo, max_commits=None,
                                                                            max_blobs=None))
    assert paths == ["launch.sh", "launch.sh", "runner"]  # two versions of launch.sh, no python, no text


def test_the_census_names_commands_and_leaves_functions_and_garbage_out(tmp_path):
    census = vocabulary_census.Census()
    for _oid, _path, data in vocabulary_census.shell_blobs(_history(tmp_path), max_commits=None, max_blobs=None):
        census.blob(data)
    names = census.commands()
    # wrappers, shells and containers are unwrapped as the vocabulary reads them
    for name in ("sudo", "env", "timeout", "python3", "bash", "jq", "wc", "docker", "nvidia-smi", "numactl",
                 "srun", "rsync", "grep"):
        assert name in names, name
    # a function, a hook asked about with declare -F, an arithmetic misread, expansions: not commands
    for name in ("helper", "infx_hook_post", "8888", "$TOOL", "OFFSET"):
        assert name not in names, name
    assert census.blobs == 3


def test_the_census_writes_the_names_with_the_command_that_regenerates_them(tmp_path, capsys):
    out = tmp_path / "names.txt"
    assert vocabulary_census.main(["--repo", str(_history(tmp_path)), "--write", str(out), "--quiet"]) == 0
    lines = out.read_text().splitlines()
    assert lines[1].startswith("# Regenerate: python bench/vocabulary_census.py --repo ")
    body = [line for line in lines if not line.startswith("#")]
    assert body == sorted(body) and "python3" in body
    assert "distinct command names" in capsys.readouterr().out
