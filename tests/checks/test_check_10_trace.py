"""Check 10 reads the trace alone (issue 29): its findings are trace effects cited with their
chain, Python the launch runs is read for what it writes, and a point the review's interpreter
budget left untraced is never passed on a reading of its scripts."""
from __future__ import annotations

import recipes.launch.path.trace_affected as trace_affected
from checks.engine import evaluate
from tests.builders import build_snapshot
from tests.checks.test_affected import A, A_TEXT, base_tree

SERVER = "python3 -m sglang.launch_server"


def _row(text: str):
    return evaluate(build_snapshot(base=base_tree(), head={A: text}), only={10}).row(10)


def test_a_patch_row_cites_the_effect_and_its_chain_in_reason_and_evidence():
    text = A_TEXT.replace(SERVER, "sed -i 's/a/b/' /usr/local/lib/python3.12/dist-packages/sglang/srt/x.py\n" + SERVER)
    row = _row(text)
    assert row.status.value == "FAIL", row.reason
    assert f"runner:1 -> {A}:3 in-place edit /usr/local/lib/python3.12/dist-packages/sglang/srt/x.py" in row.reason
    cited = [e for e in row.evidence if e.path == A and e.line == 3]
    assert cited and cited[0].note == f"via runner:1 -> {A}:3", row.evidence


def test_an_unknown_command_before_the_server_is_could_not_verify_with_its_chain():
    row = _row(A_TEXT.replace(SERVER, "frobnicate --all\n" + SERVER))
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert f"runner:1 -> {A}:3" in row.reason and "frobnicate" in row.reason, row.reason
    cited = [e for e in row.evidence if e.path == A and e.line == 3]
    assert cited and cited[0].unavailable and cited[0].note == f"via runner:1 -> {A}:3", row.evidence


def test_inline_python_writing_into_site_packages_is_a_patch_at_its_line():
    code = "python3 -c \"open('/usr/local/lib/python3.12/dist-packages/sglang/srt/x.py', 'a').write('#')\"\n"
    row = _row(A_TEXT.replace(SERVER, code + SERVER))
    assert row.status.value == "FAIL", row.reason
    assert f"{A}:3 python write /usr/local/lib/python3.12/dist-packages/sglang/srt/x.py" in row.reason, row.reason


def test_inline_python_that_writes_only_scratch_passes():
    code = "python3 -c \"open('/tmp/marker', 'w').write('1')\"\n"
    row = _row(A_TEXT.replace(SERVER, code + SERVER))
    assert row.status.value == "PASS", row.reason


def test_a_point_left_untraced_by_the_budget_is_could_not_verify_naming_it(monkeypatch):
    # A launcher whose text holds nothing a pattern would flag: without its trace, nothing read
    # what it runs, so the check must not pass it.
    monkeypatch.setattr(trace_affected, "TRACE_BUDGET_STEPS", 0)
    row = _row(A_TEXT + "echo touched\n")
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert "0 interpreter steps" in row.reason, row.reason


def test_a_patch_applied_in_a_folder_found_at_run_time_is_a_patch():
    code = "git -C \"$(python3 -c 'import vllm, os; print(os.path.dirname(vllm.__file__))')\" apply /tmp/fix.diff\n"
    row = _row(A_TEXT.replace(SERVER, code + SERVER))
    assert row.status.value == "FAIL" and not row.reason.startswith("could not verify"), row.reason
    assert f"{A}:3 in-place edit (applying a patch) <" in row.reason, row.reason


def test_a_runner_command_that_hides_the_whole_serving_path_is_could_not_verify():
    # The runner submits the job with an option the bot cannot read (#2144's `sbatch`): the trace
    # then starts no server, and nothing that runs in the job's container was read.
    tree = base_tree()
    tree["configs/runners.yaml"] = "labels:\n  mi355x:\n    - mi355x-amds_0\n"
    runner = 'sbatch $EXTRA_SBATCH_OPTS --wrap "bash benchmarks/single_node/${EXP_NAME%%_*}.sh"\n'
    tree["runners/launch_mi355x-amds.sh"] = runner
    snap = build_snapshot(base=tree, head={"runners/launch_mi355x-amds.sh": runner + "echo submitted\n",
                                           A: A_TEXT + "echo touched\n"})
    row = evaluate(snap, only={10}).row(10)
    assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), row.reason
    assert "runners/launch_mi355x-amds.sh:1" in row.reason and "sbatch" in row.reason, row.reason


def test_git_config_in_the_container_is_not_a_patch():
    # #2577: `git config --global --add safe.directory ...` edits ~/.gitconfig in place.
    code = "git config --global --add safe.directory /sgl-workspace/sglang\n"
    row = _row(A_TEXT.replace(SERVER, code + SERVER))
    assert row.status.value == "PASS", row.reason


UV_INSTALL = "curl -LsSf https://astral.sh/uv/install.sh | sh\n"


def test_a_trusted_installer_s_download_is_excused_by_the_policy_and_by_what_was_downloaded():
    # uv's installer (policy `trusted_installers`) piped to a shell before the server: excused by
    # the URL the trace records for the download, not by words of the unknown's text.
    assert _row(A_TEXT.replace(SERVER, UV_INSTALL + SERVER)).status.value == "PASS"
    for other in ("curl -LsSf https://astral.sh/uv/../../tmp/x.sh | sh\n",
                  "( curl -LsSf https://astral.sh/uv/install.sh; echo 'sed -i s/a/b/ /x.py' ) | sh\n"):
        row = _row(A_TEXT.replace(SERVER, other + SERVER))
        assert row.status.value == "FAIL" and row.reason.startswith("could not verify"), (other, row.reason)
    # The policy decides: with no trusted installers, the same download is not excused.
    untrusted = evaluate(build_snapshot(base={**base_tree(), ".github/infx-review.yml": "policy:\n  trusted_installers: []\n"},
                                        head={A: A_TEXT.replace(SERVER, UV_INSTALL + SERVER)}), only={10}).row(10)
    assert untrusted.status.value == "FAIL" and untrusted.reason.startswith("could not verify"), untrusted.reason
    assert "astral.sh/uv/install.sh" in untrusted.reason, untrusted.reason


def _sourced_settings(lines: str, run: str = "source /tmp/s.env") -> str:
    return A_TEXT.replace(SERVER, f"cat > /tmp/s.env <<EOF\n{lines}EOF\n{run}\n{SERVER}")


def test_a_settings_file_the_launch_writes_and_sources_is_not_a_patch():
    # job.slurm's hicache_mc_<JOB>.env: NAME=value lines, sourced before the server starts.
    row = _row(_sourced_settings("# tunables\nHICACHE_RATIO=2\nHICACHE_PAGE_SIZE=\nMC_DEVICE=mlx5_0,mlx5_1\n"))
    assert row.status.value == "PASS", row.reason


def test_a_written_file_that_runs_a_command_or_sets_a_hook_is_still_a_patch():
    for lines, run in [("A=1; pip install evil\n", "source /tmp/s.env"),
                       ("LD_PRELOAD=/tmp/x.so\n", "source /tmp/s.env"),
                       ("PYTHONPATH=/tmp/hooks\n", "source /tmp/s.env"),
                       ("PATH=/tmp/bin:/usr/bin\n", "source /tmp/s.env"),
                       ("LD_LIBRARY_PATH=/tmp/lib\n", "source /tmp/s.env"),
                       ("echo hi\n", "bash /tmp/s.env")]:
        row = _row(_sourced_settings(lines, run))
        assert row.status.value == "FAIL" and "runs /tmp/s.env, which the launch wrote" in row.reason, (lines, row.reason)
