"""A copy of the checkout somewhere else is the checkout there (recipes.launch.fs.Files.copy): a
repository script run from the copy is read and followed, what the launch wrote into the checkout
before the copy goes along, what it writes into the copy afterwards is the launch's, and a copy
the bot cannot be sure of stays unknown."""
from __future__ import annotations

from recipes.launch.fs import WORKSPACE, Files
from recipes.launch.shell import Interpreter
from recipes.launch.trace import EXEC, RUN_WRITTEN, SOURCE, UNKNOWN, WRITE
from recipes.source import MemorySource

REPO = {"benchmarks/x.sh": "echo from-x\nsleep 11\n", "benchmarks/y.sh": "sleep 22\n"}


def run(text: str, env: dict | None = None):
    it = Interpreter(Files(MemorySource({"launch.sh": text, **REPO})),
                     inputs={"GITHUB_WORKSPACE": WORKSPACE, **(env or {})})
    state = it.initial_state()
    state.argv0 = f"{WORKSPACE}/launch.sh"
    it.run_top(text, "launch.sh", state)
    return it


def ran(it) -> list[str]:
    return [" ".join(w if isinstance(w, str) else "?" for w in e.argv) for e in it.trace.of(EXEC)]


def unknowns(it) -> list[str]:
    return [e.detail for e in it.trace.of(UNKNOWN)]


def test_each_exact_copy_of_the_checkout_runs_the_repository_script():
    for copy, run_it in (('cp -rT "$GITHUB_WORKSPACE" /tmp/ws', "bash /tmp/ws/benchmarks/x.sh"),
                         ('cp -r "$GITHUB_WORKSPACE/." /tmp/ws', "bash /tmp/ws/benchmarks/x.sh"),
                         ('cp -r -t /tmp "$GITHUB_WORKSPACE/benchmarks"', "bash /tmp/benchmarks/x.sh"),
                         ("rsync -a --exclude=.git ./ /tmp/ws/", "bash /tmp/ws/benchmarks/x.sh"),
                         ("rsync -a benchmarks /tmp/ws", "bash /tmp/ws/benchmarks/x.sh"),
                         ("tar -C \"$GITHUB_WORKSPACE\" -czf /tmp/a.tgz . && mkdir -p /tmp/ws && "
                          "tar -C /tmp/ws -xzf /tmp/a.tgz", "bash /tmp/ws/benchmarks/x.sh"),
                         ("tar -czf /tmp/a.tgz benchmarks && tar -C /tmp/ws -xzf /tmp/a.tgz",
                          "bash /tmp/ws/benchmarks/x.sh")):
        it = run(f"{copy}\n{run_it}\n")
        assert "sleep 11" in ran(it), (copy, ran(it), unknowns(it))
        assert not unknowns(it), (copy, unknowns(it))
        # It is the repository's file, named as the checkout's, and the trace depends on it.
        assert f"{WORKSPACE}/benchmarks/x.sh" in [e.path for e in it.trace.of(SOURCE)], copy
        assert "benchmarks/x.sh" in it.files.depends()


def test_a_copy_whose_layout_or_contents_are_not_sure_is_not_the_checkout():
    for copy in ('cp -r "$GITHUB_WORKSPACE" /tmp/ws',  # /tmp/ws/workspace when /tmp/ws exists
                 "rsync -a --exclude=benchmarks/x.sh ./ /tmp/ws/",
                 "tar --exclude='*.sh' -czf /tmp/a.tgz . && tar -C /tmp/ws -xzf /tmp/a.tgz",
                 "tar -czf /tmp/a.tgz . && tar -C /tmp/ws --strip-components=1 -xzf /tmp/a.tgz",
                 "tar -czf /tmp/a.tgz . && echo junk > /tmp/a.tgz && tar -C /tmp/ws -xzf /tmp/a.tgz"):
        it = run(f"{copy}\nbash /tmp/ws/benchmarks/x.sh\n")
        assert "sleep 11" not in ran(it), copy
        assert any("/tmp/ws/benchmarks/x.sh" in u for u in unknowns(it)), (copy, unknowns(it))


def test_writes_before_the_copy_go_along_and_writes_after_it_stay_where_they_land():
    it = run("echo 'sleep 33' > benchmarks/x.sh\n"
             "cp -rT . /tmp/ws\n"
             "echo 'sleep 44' > benchmarks/y.sh\n"
             "bash /tmp/ws/benchmarks/x.sh\n"
             "bash /tmp/ws/benchmarks/y.sh\n")
    assert "sleep 33" in ran(it) and "sleep 22" in ran(it) and "sleep 44" not in ran(it), ran(it)


def test_an_edit_inside_the_copy_is_the_launch_s_and_a_copy_of_the_copy_carries_it():
    it = run("cp -rT . /tmp/ws\n"
             "sed -i 's/11/55/' /tmp/ws/benchmarks/x.sh\n"
             "rsync -a /tmp/ws/ /tmp/ws2\n"
             "bash /tmp/ws2/benchmarks/x.sh\n"
             "bash /tmp/ws2/benchmarks/y.sh\n")
    # The edit's write names the checkout's file; running the edited copy runs a written file
    # whose text is not known, never the repository's.
    assert [e.path for e in it.trace.of(WRITE) if e.how == "in-place edit"] == [f"{WORKSPACE}/benchmarks/x.sh"]
    assert it.trace.of(RUN_WRITTEN) and "sleep 11" not in ran(it), ran(it)
    assert "sleep 22" in ran(it)


def test_what_the_copy_holds_besides_the_repository_is_not_known():
    files = run("cp -rT . /tmp/ws\n").files
    assert files.exists("/tmp/ws/benchmarks/x.sh") is True
    assert files.exists("/tmp/ws/benchmarks") is True
    assert files.exists("/tmp/ws/benchmarks/z.sh") is None  # it may be there from before
    assert files.exists(f"{WORKSPACE}/benchmarks/z.sh") is False


def test_a_folder_written_over_the_copy_hides_it_and_a_made_one_does_not():
    it = run("cp -rT . /tmp/ws\nmkdir -p /tmp/ws/benchmarks\nchmod -R 755 /tmp/ws\nbash /tmp/ws/benchmarks/x.sh\n")
    assert "sleep 11" in ran(it)
    for over in ("git clone https://example.com/r.git /tmp/ws/benchmarks", "rm -rf /tmp/ws",
                 "tar -C /tmp/ws -xzf /tmp/other.tgz"):
        it = run(f"cp -rT . /tmp/ws\n{over}\nbash /tmp/ws/benchmarks/x.sh\n")
        assert "sleep 11" not in ran(it), over


STAGE = """JOB_ID=$(salloc --no-shell 2>&1 | grep -oP 'Granted job allocation \\K[0-9]+')
LOCAL_TAR=$(mktemp "/tmp/inferencex-${JOB_ID}.XXXXXX.tar.gz")
REMOTE_TAR="/tmp/inferencex-${JOB_ID}.tar.gz"
REMOTE_WORKSPACE="/tmp/inferencex-${JOB_ID}"
tar -C "$GITHUB_WORKSPACE" --exclude=.git --exclude='*/.git' -czf "$LOCAL_TAR" .
sbcast --force "$LOCAL_TAR" "$REMOTE_TAR"
rm -rf "$REMOTE_WORKSPACE"
mkdir -p "$REMOTE_WORKSPACE"
{extract}
srun --container-image=img --container-mounts=$REMOTE_WORKSPACE:/workspace/,/dev/kfd:/dev/kfd \\
    --container-workdir=/workspace/ bash benchmarks/x.sh
"""


def test_a_copy_at_a_place_named_by_a_value_the_bot_cannot_know_is_found_by_that_value():
    # The job id is the output of grep: the folder's name is not known, but the same variable's
    # value names the archive's copy, the folder it is unpacked in and the container's mount.
    it = run(STAGE.replace("{extract}", 'tar -C "$REMOTE_WORKSPACE" -xzf "$REMOTE_TAR"'))
    assert "sleep 11" in ran(it), (ran(it), unknowns(it))
    assert f"{WORKSPACE}/benchmarks/x.sh" in [e.path for e in it.trace.of(SOURCE)]
    # On the host too: a path after that value, and a folder `cd` names with it.
    for use in ('bash "$REMOTE_WORKSPACE/benchmarks/y.sh"', 'cd "$REMOTE_WORKSPACE" && bash benchmarks/y.sh'):
        it = run(STAGE.replace("{extract}", f'tar -C "$REMOTE_WORKSPACE" -xzf "$REMOTE_TAR"\n{use}'))
        assert "sleep 22" in ran(it), (use, unknowns(it))


def test_a_place_named_by_an_unknown_value_written_twice_is_never_the_checkout():
    # Another file an equal value names was written too: which one the extract reads is not known.
    for extra in ('echo junk > "$REMOTE_TAR"\ntar -C "$REMOTE_WORKSPACE" -xzf "$REMOTE_TAR"',
                  'tar -C "$REMOTE_WORKSPACE" -xzf "$REMOTE_TAR"\ntouch "$REMOTE_WORKSPACE"\n'
                  'git clone https://example.com/r.git "$REMOTE_WORKSPACE"',
                  'cp /etc/x "$REMOTE_WORKSPACE"\ntar -C "$REMOTE_WORKSPACE" -xzf "$REMOTE_TAR"'):
        it = run(STAGE.replace("{extract}", extra))
        assert "sleep 11" not in ran(it), (extra, ran(it))


def test_a_clone_of_the_checkout_holds_its_commit_not_what_the_launch_wrote():
    it = run("echo 'sleep 33' > benchmarks/y.sh\n"
             'git clone -q "$GITHUB_WORKSPACE" /tmp/ws\n'
             "bash /tmp/ws/benchmarks/x.sh\nbash /tmp/ws/benchmarks/y.sh\n")
    assert "sleep 11" in ran(it) and "sleep 22" in ran(it) and "sleep 33" not in ran(it), ran(it)
    # Another branch, a folder that is no work tree of its own, a remote repository: not the checkout.
    for other in ('git clone -b other "$GITHUB_WORKSPACE" /tmp/ws', 'git clone "$GITHUB_WORKSPACE/benchmarks" /tmp/ws',
                  "git clone https://example.com/r.git /tmp/ws"):
        assert "sleep 11" not in ran(run(f"{other}\nbash /tmp/ws/x.sh\nbash /tmp/ws/benchmarks/x.sh\n")), other
