"""The files a cloned srt-slurm setup script runs in its checkout are on the launch path.

srtctl mounts its checkout's `configs/` at `/configs` in each worker container, and real setup
scripts there run more files of it (NVIDIA/srt-slurm `configs/vllm-container-deps.sh`:
`bash /configs/install-ai-dynamo.sh`, `python3 /configs/patches/vllm_numa_bind_hash_fix.py`,
which rewrites vLLM's installed `config/parallel.py`). Those files are read from the same tree,
transitively, so a patch in one is an engine patch (Check 10) and a clean set passes.
"""
from __future__ import annotations

from checks.result import split_external
from tests.checks.test_external_srt_recipe import IN_REPO, RECIPE, SHA, Reader, _rows

REF = ("NVIDIA/srt-slurm", "sa-submission-q2-2026")
WITH_SETUP = RECIPE.replace("backend:\n", "setup_script: deps.sh\nbackend:\n")
DEPS = """#!/bin/bash
pip install msgpack
if [ -n "${DYNAMO_VERSION:-}" ]; then
    bash /configs/install-dynamo.sh
fi
if [ -f /configs/patches/hash_fix.py ]; then
    python3 /configs/patches/hash_fix.py
fi
"""
INSTALL = "#!/bin/bash\nset -euo pipefail\npip install --no-deps ai-dynamo==1.2.1\n"
PATCH_PY = '''from pathlib import Path
TARGET = Path("/usr/local/lib/python3.12/dist-packages/tensorrt_llm/serve/openai_server.py")
TARGET.write_text(TARGET.read_text().replace("a", "b"))
'''
HARMLESS_PY = 'import json\nprint(json.dumps({"ok": True}))\n'


def test_a_patch_file_the_setup_script_runs_in_the_checkout_fails_check_10_citing_it():
    reader = Reader({REF: {"configs/deps.sh": DEPS, "configs/install-dynamo.sh": INSTALL,
                           "configs/patches/hash_fix.py": PATCH_PY}})
    rows = _rows({IN_REPO: WITH_SETUP}, reader=reader)
    assert rows[10].status.value == "FAIL" and not rows[10].reason.startswith("could not verify"), rows[10].reason
    # The chain: the recipe, its setup script's line, the Python file's writing line.
    assert "openai_server.py" in rows[10].reason and f"NVIDIA/srt-slurm@{SHA}:configs/deps.sh:7 -> " \
        f"NVIDIA/srt-slurm@{SHA}:configs/patches/hash_fix.py:3 python write" in rows[10].reason, rows[10].reason
    assert any(split_external(e.path) == ("NVIDIA/srt-slurm", SHA, "configs/patches/hash_fix.py")
               for e in rows[10].evidence), rows[10].evidence
    assert not rows[8].reason.startswith("could not verify"), rows[8].reason  # the setup chain was read


def test_files_run_transitively_and_all_clean_pass():
    nested = INSTALL + "bash /configs/more.sh\n"
    reader = Reader({REF: {"configs/deps.sh": DEPS, "configs/install-dynamo.sh": nested,
                           "configs/more.sh": "#!/bin/bash\necho ok\n", "configs/patches/hash_fix.py": HARMLESS_PY}})
    rows = _rows({IN_REPO: WITH_SETUP}, reader=reader)
    assert rows[10].status.value == "PASS", rows[10].reason
    assert not rows[8].reason.startswith("could not verify"), rows[8].reason  # the setup chain was read
    # The same chain with a patch two hops down is found there.
    deep = Reader({REF: {"configs/deps.sh": DEPS, "configs/install-dynamo.sh": nested,
                         "configs/more.sh": "#!/bin/bash\nsed -i 's/x/y/' /usr/local/lib/python3.12/dist-packages/"
                                            "tensorrt_llm/llmapi/llm.py\n",
                         "configs/patches/hash_fix.py": HARMLESS_PY}})
    rows = _rows({IN_REPO: WITH_SETUP}, reader=deep)
    assert rows[10].status.value == "FAIL" and "configs/install-dynamo.sh:4 -> " in rows[10].reason, rows[10].reason


def test_a_path_that_climbs_out_of_the_mount_is_not_read():
    reader = Reader({REF: {"configs/deps.sh": "#!/bin/bash\nbash /configs/../src/x.sh\n", "src/x.sh": "echo\n"}})
    rows = _rows({IN_REPO: WITH_SETUP}, reader=reader)
    assert rows[10].status.value == "FAIL" and rows[10].reason.startswith("could not verify"), rows[10].reason
    assert "/configs/../src/x.sh, a path outside the checkout's /configs mount" in rows[10].reason, rows[10].reason


def test_a_file_that_cannot_be_read_is_named_as_unreadable_not_absent():
    from checks.snapshot import ExternalTree
    from recipes.source import MemorySource

    class Source(MemorySource):
        def read(self, path):
            if path == "configs/install-dynamo.sh":
                raise OSError("GitHub answered 502 three times")
            return super().read(path)

    def reader(repo, ref):
        if (repo, ref) != REF:
            return None
        return ExternalTree(repo=repo, ref=ref, sha=SHA, source=Source({"configs/deps.sh": DEPS,
                                                                         "configs/patches/hash_fix.py": HARMLESS_PY}))

    rows = _rows({IN_REPO: WITH_SETUP}, reader=reader)
    assert rows[10].status.value == "FAIL" and rows[10].reason.startswith("could not verify"), rows[10].reason
    assert "line 4: /configs/install-dynamo.sh, which could not be read (GitHub answered 502 three times)" \
        in rows[10].reason, rows[10].reason
