"""The launch vocabulary (recipes.launch.vocabulary): every command of the history's scripts is
classified, an unknown name is unknown, and each family reads its words as the command does."""
from __future__ import annotations

from pathlib import Path

import pytest

from recipes.launch.effects import Container, Download, Install, PythonRun, Write
from recipes.launch.families.jobs import _JOB_ENV
from recipes.launch.state import symbolic
from recipes.launch.vocabulary import CLASSES, SHELL_BUILTINS, TABLE, effects, lookup, name_class, pip_effects
from recipes.launch.words import Unknown

HISTORY = Path(__file__).resolve().parents[1] / "fixtures" / "history_commands.txt"
U = Unknown("a variable nobody set")


def history_names() -> list[str]:
    return [line for line in HISTORY.read_text().splitlines() if line and not line.startswith("#")]


# --------------------------------------------------------------------------- coverage

def test_every_command_of_the_history_is_classified():
    names = history_names()
    assert len(names) > 150  # the census found the history's commands, not an empty file
    missing = [n for n in names if n not in SHELL_BUILTINS and lookup(n) is None and "/" not in n]
    assert missing == [], f"add these to recipes/launch/vocabulary.py: {missing}"
    assert [n for n in names if name_class(n) == "unknown"] == []


def test_a_path_in_the_history_is_a_script_or_a_program():
    paths = [n for n in history_names() if "/" in n]
    assert paths and all(effects([p]) is not None for p in paths)


def test_each_name_is_classified_once_into_a_known_class():
    assert all(entry.cls in CLASSES for entry in TABLE.values())
    assert not SHELL_BUILTINS & set(TABLE)
    assert {"cd", "export", "printf", "read", "mapfile", "eval", "source", ".", "[["} <= SHELL_BUILTINS


def test_an_unknown_name_is_unknown():
    assert effects(["frobnicate", "--all"]) is None
    assert effects([U, "x"]) is None
    assert lookup("frobnicate") is None and name_class("frobnicate") == "unknown"


def test_names_are_looked_up_by_basename_and_family():
    assert effects(["/usr/bin/sed", "-i", "s/a/b/", "f"]).writes == [Write("f", "in-place edit")]
    assert effects(["python3.12", "-c", "pass"]).python == [PythonRun(code="pass")]
    assert effects(["/opt/venv/bin/pip3", "install", "x"]).installs == [Install("pip", ("x",))]


def test_paths_to_scripts_and_programs():
    assert effects(["./run.sh", "a"]).shell_files == [("./run.sh", ("a",))]
    assert effects(["rebuild-deepep.sh"]).shell_files == [("rebuild-deepep.sh", ())]
    assert effects(["./tool.py", "x"]).python == [PythonRun(script="./tool.py", argv=("x",))]
    assert effects(["/opt/bin/server", "--port", "1"]).programs == [("/opt/bin/server", ("--port", "1"))]
    assert effects(["./run.sh"], cwd="/ws").shell_files == [("/ws/run.sh", ())]


# --------------------------------------------------------------------------- in-place editors

@pytest.mark.parametrize("argv", [
    ["sed", "-i", "s/a/b/", "/x/f.py"], ["sed", "-i.bak", "-e", "s/a/b/", "/x/f.py"],
    ["sed", "--in-place", "s/a/b/", "/x/f.py"], ["sed", "-Ei", "s/a/b/", "/x/f.py"],
    ["perl", "-pi", "-e", "s/a/b/", "/x/f.py"], ["perl", "-i", "-pe", "s/a/b/", "/x/f.py"],
    ["ed", "-s", "/x/f.py"], ["ex", "-s", "-c", "%s/a/b/|x", "/x/f.py"], ["vim", "-c", "wq", "/x/f.py"],
    ["awk", "-i", "inplace", "{print}", "/x/f.py"], ["yq", "-i", ".a = 1", "/x/f.py"],
    ["yq", "eval", "--inplace", ".a = 1", "/x/f.py"],
])
def test_in_place_edits(argv):
    out = effects(argv)
    assert out.unknown is None and out.writes == [Write("/x/f.py", "in-place edit")]


def test_sed_ie_takes_e_as_the_backup_suffix_and_still_edits():
    assert effects(["sed", "-ie", "s/a/b/", "f"]).writes == [Write("f", "in-place edit")]


def test_a_sed_script_from_a_file_edits_and_is_not_verified():
    out = effects(["sed", "-i", "-f", "fix.sed", "f"])
    assert out.writes == [Write("f", "in-place edit")] and out.unknown and "fix.sed" in out.reads


def test_an_unknown_sed_script_still_edits_and_is_not_verified():
    out = effects(["sed", "-i", "-e", U, "f"])
    assert out.writes == [Write("f", "in-place edit")] and out.unknown
    assert effects(["sed", "-i", U, "f"]).unknown  # the unknown word could be an option too


def test_perl_slurp_mode_edits_in_place():
    assert effects(["perl", "-0777", "-pi", "-e", "s/a/b/", "f"]).writes == [Write("f", "in-place edit")]


def test_sed_without_in_place_only_reads():
    out = effects(["sed", "-n", "s/a/b/p", "f"])
    assert out.writes == [] and out.reads == ["f"] and out.unknown is None


@pytest.mark.parametrize("script", ["s/a/b/w /tmp/out", "1e id", "r /etc/passwd", "s/x/y/e", "$w out"])
def test_sed_scripts_that_write_or_run_are_unknown(script):
    assert effects(["sed", script, "f"]).unknown


def test_sed_scripts_that_only_substitute_are_known():
    for script in ("s/^/  - /", "/^#/d;s|a|b|g", "y/abc/xyz/", "s/a\\/w/b/", "$a text w", "0,/re/s//X/"):
        assert effects(["sed", script, "f"]).unknown is None, script


def test_perl_code_that_does_more_than_edit_is_unknown():
    assert effects(["perl", "-pi", "-e", "system('id')", "f"]).unknown
    assert effects(["perl", "-i", "-e", "open(F, '>x')", "f"]).unknown


def test_perl_ie_takes_e_as_the_backup_suffix():
    # `-pie` is -p and -i with the suffix "e": the code is then the file operand, as perl reads it.
    out = effects(["perl", "-pie", "s/a/b/", "f"])
    assert out.unknown or out.writes != [Write("f", "in-place edit")]


def test_patch_targets():
    assert effects(["patch", "-p1", "-d", "/sgl", "-i", "/tmp/p.diff"]).writes == [Write("/sgl", "in-place edit")]
    assert effects(["patch", "-d", "sglang", "-p1"], cwd="/sgl").writes == [Write("/sgl/sglang", "in-place edit")]
    # Without -d the patch names its files itself (`-p0`, `../`): where it writes is unknown.
    unknown_target = effects(["patch", "-p1", "-i", "/tmp/p.diff"], cwd="/vllm").writes
    assert len(unknown_target) == 1 and isinstance(unknown_target[0].path, Unknown)
    assert effects(["patch", "/x/f.py", "p.diff"]).writes == [Write("/x/f.py", "in-place edit")]
    assert effects(["patch", "--dry-run", "-p1", "-i", "p.diff"]).writes == []


# --------------------------------------------------------------------------- writers

def test_copy_move_link_targets():
    assert effects(["cp", "-r", "a", "b", "/opt/dst"]).writes == [Write("/opt/dst", "copy")]
    assert effects(["cp", "-t", "/opt/dst", "a", "b"]).writes == [Write("/opt/dst", "copy")]
    assert effects(["mv", "a", "/opt/b"]).writes == [Write("/opt/b", "move")]
    assert effects(["ln", "-sf", "/real", "/site/x.py"]).writes == [Write("/site/x.py", "link")]
    assert effects(["ln", "-s", "/real/x.py"], cwd="/w").writes == [Write("/w/x.py", "link")]
    assert effects(["cp", "a", "b"], cwd="/w").reads == ["/w/a"]


def test_an_unknown_destination_is_a_write_to_an_unknown_path():
    out = effects(["cp", "/tmp/fix.py", U])
    assert out.unknown is None and len(out.writes) == 1
    assert isinstance(out.writes[0].path, Unknown) and out.writes[0].how == "copy"
    out = effects(["sed", "-i", "s/a/b/", U])
    assert out.unknown is None and isinstance(out.writes[0].path, Unknown)
    assert isinstance(effects(["rm", "-rf", U]).writes[0].path, Unknown)


def test_an_unknown_word_where_an_option_could_hide_is_unknown():
    assert effects(["sed", U, "f"]).unknown
    assert effects(["cp", U, "dst"]).unknown  # `-t DIR` could hide there
    assert effects(["python3", U]).unknown


def test_an_option_the_vocabulary_does_not_list_is_unknown():
    assert "--bogus" in effects(["sed", "--bogus", "s/a/b/", "f"]).unknown
    assert effects(["cp", "--frobnicate", "a", "b"]).unknown
    assert effects(["tar", "--to-command=sh", "-xf", "a.tar"]).unknown


def test_readers_know_which_options_take_values():
    assert effects(["head", "-n", "5", "f"]).reads == ["f"]
    assert effects(["cut", "-d", " ", "-f", "1", "f"]).reads == ["f"]
    assert effects(["jq", "--arg", "k", "v", "-r", ".a", "f.json"]).reads == ["f.json"]
    assert effects(["jq", "--slurpfile", "d", "d.json", ".", "f.json"]).reads == ["d.json", "f.json"]
    assert effects(["jq", "-n", ".", "--args", "a", "b"]).reads == []
    assert effects(["tr", "a-z", "A-Z"]).reads == []
    assert effects(["base64", "-d", "f"]).reads == ["f"] and effects(["nl", "-s", ":", "f"]).reads == ["f"]
    assert effects(["sort", "-o", "out", "-k", "2", "in"]).reads == ["in"]
    assert effects(["tree", "-o", "out.txt", "-L", "2", "d"]).writes == [Write("out.txt", "create")]
    assert effects(["stat", "-L", "-c", "%s", "f"]).reads == ["f"] and effects(["ls", "-ltc", "d"]).reads == ["d"]


def test_harmless_commands_take_any_option():
    assert effects(["cat", "--weird", "f"]).reads == ["f"]
    assert effects(["mkdir", "-p", U]).writes[0].how == "create"


def test_tar_unzip_and_decompressors():
    assert effects(["tar", "-xzf", "a.tgz", "-C", "/opt/x"]).writes == [Write("/opt/x", "unpack")]
    assert effects(["tar", "xzf", "a.tgz"], cwd="/w").writes == [Write("/w", "unpack")]
    assert effects(["tar", "-czf", "out.tgz", "d"]).writes == [Write("out.tgz", "create")]
    assert effects(["tar", "-tzf", "a.tgz"]).writes == []
    assert effects(["tar", "-zf", "a.tgz"]).unknown  # neither extract nor create
    assert effects(["unzip", "-q", "a.zip", "-d", "/opt/y"]).writes == [Write("/opt/y", "unpack")]
    assert effects(["gunzip", "w.gz"]).writes == [Write("w", "unpack"), Write("w.gz", "delete")]
    assert effects(["xz", "-d", "w.xz"]).writes[0] == Write("w", "unpack")
    assert effects(["zstd", "-dc", "w.zst"]).writes == []


def test_find_actions():
    out = effects(["find", "/opt", "-name", "*.pyc", "-delete"])
    assert out.writes[0].how == "delete" and isinstance(out.writes[0].path, Unknown)
    out = effects(["find", ".", "-name", "*.py", "-exec", "sed", "-i", "s/a/b/", "{}", ";"])
    (argv, env, where), = out.runs
    assert argv[:4] == ("sed", "-i", "s/a/b/", argv[3]) and isinstance(argv[3], Unknown)
    assert effects(["find", ".", "-exec", "rm", "{}"]).unknown  # no `;`
    out = effects(["find", U, "-name", "*.pyc", "-delete"])
    assert out.unknown is None and isinstance(out.reads[0], Unknown) and out.writes[0].how == "delete"
    assert effects(["find", ".", "-name", U, "-delete"]).writes[0].how == "delete"
    assert effects(["find", ".", "-name", "x", U]).unknown


def test_other_writers():
    assert effects(["tee", "-a", "log"]).writes == [Write("log", "append")]
    assert effects(["rsync", "-a", "src/", "/opt/dst/"]).writes == [Write("/opt/dst/", "copy")]
    out = effects(["rsync", "-a", "host:/x", "/opt/dst"])
    assert out.writes == [Write("/opt/dst", "download")] and out.downloads == [Download("host:/x", "/opt/dst")]
    assert effects(["dd", "if=/dev/zero", "of=/opt/x", "bs=1M"]).writes == [Write("/opt/x", "create")]
    assert effects(["chmod", "+x", "run.sh"]).writes == [Write("run.sh", "mode")]
    assert effects(["chmod", "-R", "755", "d"]).writes == [Write("d", "mode")]
    assert effects(["chmod", "-x", "run.sh"]).writes == [Write("run.sh", "mode")]
    assert effects(["sort", "-o", "out", "in"]).writes == [Write("out", "create")]
    assert effects(["mktemp", "-d"]).writes[0].how == "create"
    assert effects(["truncate", "-s", "0", "f"]).writes == [Write("f", "in-place edit")]


# --------------------------------------------------------------------------- git

def test_git_in_a_folder():
    assert effects(["git", "-C", "/sgl", "apply", "/tmp/p.diff"]).writes == [Write("/sgl", "in-place edit")]
    assert effects(["git", "-C", "/sgl", "checkout", "abc"]).writes == [Write("/sgl", "checkout")]
    assert effects(["git", "apply", "p.diff"], cwd="/vllm").writes == [Write("/vllm", "in-place edit")]
    assert effects(["git", "-C", "/a", "-C", "b", "reset", "--hard"]).writes == [Write("/a/b", "checkout")]
    assert effects(["git", "apply", "--check", "p.diff"]).writes == []
    assert effects(["git", "status"]).writes == []


def test_git_clone():
    out = effects(["git", "clone", "--depth", "1", "https://github.com/a/b.git"], cwd="/w")
    assert out.writes == [Write("/w/b", "checkout")]
    assert out.downloads == [Download("https://github.com/a/b.git", "/w/b")]
    assert effects(["git", "clone", "-b", "v1", "https://h/x", "/opt/x"]).writes == [Write("/opt/x", "checkout")]


def test_git_configuration_that_runs_programs_is_unknown():
    assert effects(["git", "-c", "core.hooksPath=/tmp/h", "commit", "-m", "x"]).unknown
    assert effects(["git", "config", "alias.st", "!sh x"]).unknown
    assert effects(["git", "-c", "safe.directory=*", "status"]).unknown is None
    redirect = "url.https://evil/.insteadOf=https://github.com/"
    assert effects(["git", "-c", redirect, "clone", "https://github.com/a/b"]).unknown
    assert effects(["git", "clone", "-c", "core.hooksPath=/h", "https://h/x"]).unknown
    assert effects(["git", "frobnicate"]).unknown


# --------------------------------------------------------------------------- network

def test_downloads():
    out = effects(["curl", "-fsSL", "-o", "/tmp/x.whl", "https://h/x.whl"])
    assert out.downloads == [Download("https://h/x.whl", "/tmp/x.whl")]
    assert out.writes == [Write("/tmp/x.whl", "download")]
    assert effects(["curl", "-s", "https://h/health"]).downloads == [Download("https://h/health", None)]
    assert effects(["curl", "-LO", "https://h/a/b.tgz"], cwd="/w").writes == [Write("/w/b.tgz", "download")]
    assert effects(["wget", "-O", "/tmp/y", "https://h/c"]).writes == [Write("/tmp/y", "download")]
    assert effects(["wget", "-q", "-P", "/d", "https://h/c.py"]).writes == [Write("/d/c.py", "download")]
    assert effects(["curl", "-K", "cfg", "https://h"]).unknown
    assert effects(["wget", "-nv", "-nc", "-O", "f", "https://h/f"]).writes == [Write("f", "download")]
    assert effects(["unsquashfs", "-f", "-dest", "/opt/x", "img.sqsh"]).writes == [Write("/opt/x", "unpack")]


def test_hugging_face_downloads():
    out = effects(["hf", "download", "org/m", "--local-dir", "/models/m"])
    assert out.downloads == [Download("hf://org/m", "/models/m")]
    out = effects(["huggingface-cli", "download", "org/m"])
    assert isinstance(out.writes[0].path, Unknown)  # the cache


def test_cloud_bucket_copies():
    out = effects(["aws", "s3", "cp", "--recursive", "s3://b/m", "/models/m"])
    assert out.downloads == [Download("s3://b/m", "/models/m")] and out.writes == [Write("/models/m", "download")]
    assert effects(["gsutil", "-m", "cp", "-r", "gs://b/x", "/w"]).writes == [Write("/w", "download")]
    assert effects(["aws", "s3", "cp", "res.json", "s3://b/r.json"]).writes == []
    assert effects(["aws", "ec2", "run-instances"]).unknown
    out = effects(["rclone", "copy", "store:models/m", "/models/m"])
    assert out.downloads == [Download("store:models/m", "/models/m")]


def test_ssh_runs_its_words_as_shell_text():
    assert effects(["ssh", "-o", "X=1", "host", "ls", "-l"]).shell_text == [("ls -l", ())]


# --------------------------------------------------------------------------- packages

def test_pip_install_records_packages_and_indexes():
    out = effects(["pip", "install", "--index-url", "https://idx", "git+https://g/x.git", "-r", "req.txt"])
    assert out.installs == [Install("pip", ("-r", "req.txt", "git+https://g/x.git"), ("--index-url", "https://idx"))]
    assert out.reads == ["req.txt"]
    out = effects(["pip3", "install", "-e", "/src/vllm"])
    assert out.installs == [Install("pip", ("-e", "/src/vllm"), (), editable=True)]
    assert effects(["pip", "install", "--extra-index-url=https://x", "y"]).installs[0].index == (
        "--extra-index-url", "https://x")


def test_python_m_pip_and_uv_share_the_pip_reader():
    assert effects(["python3", "-m", "pip", "install", "x"]).python == [PythonRun(module="pip", argv=("install", "x"))]
    assert pip_effects(["pip", "install", "x"]).installs == [Install("pip", ("x",))]
    assert effects(["uv", "pip", "install", "--system", "x"]).installs == [Install("uv", ("x",))]
    assert pip_effects(["pip", "install", "--frobnicate", "x"]).unknown
    assert effects(["pip", "uninstall", "-y", "x"]).writes[0].how == "delete"
    assert effects(["pip", "list"]).installs == []
    assert effects(["pip", "download", "-d", "/w", "x==1"]).downloads == [Download("x==1", "/w")]


def test_system_package_managers():
    assert effects(["apt-get", "install", "-y", "libnuma1"]).installs == [Install("apt", ("libnuma1",))]
    assert effects(["conda", "install", "-c", "nvidia", "cuda"]).installs == [
        Install("conda", ("cuda",), ("-c", "nvidia"))]


# --------------------------------------------------------------------------- wrappers

def test_wrappers_run_the_rest():
    assert effects(["env", "A=1", "B=2", "cmd", "x"]).runs == [(("cmd", "x"), (("A", "1"), ("B", "2")), None)]
    out = effects(["env", "-u", "X", "-i", "-C", "/w", "cmd"])
    assert out.runs == [(("cmd",), (), "/w")] and out.unsets == ("X",) and out.clears_env
    assert effects(["env"]).runs == []
    assert effects(["timeout", "10", "cmd", "-x"]).runs == [(("cmd", "-x"), (), None)]
    assert effects(["timeout", "-s", "KILL", "5m", "cmd"]).runs == [(("cmd",), (), None)]
    assert effects(["nohup", "python3", "s.py"]).runs == [(("python3", "s.py"), (), None)]
    assert effects(["sudo", "-E", "rm", "-rf", "/x"]).runs == [(("rm", "-rf", "/x"), (), None)]
    assert effects(["sudo", "rm", "/x"]).clears_env and not effects(["sudo", "-E", "rm", "/x"]).clears_env
    assert "login shell" in effects(["sudo", "-s"]).unknown
    assert effects(["nice", "-n", "5", "cmd"]).runs == [(("cmd",), (), None)]
    assert effects(["taskset", "-c", "0-7", "cmd"]).runs == [(("cmd",), (), None)]
    assert effects(["numactl", "--cpunodebind=0", "cmd"]).runs == [(("cmd",), (), None)]


def test_other_users():
    assert effects(["su", "-", "bench", "-c", "sed -i s/a/b/ f"]).shell_text == [("sed -i s/a/b/ f", ())]
    assert effects(["runuser", "-u", "bench", "--", "cmd", "x"]).runs == [(("cmd", "x"), (), None)]
    assert effects(["su", "-l", "bench"]).unknown


def test_a_build_that_installs_writes_where_it_installs():
    out = effects(["make", "-C", "/sgl", "install"])
    assert out.writes[0] == Write("/sgl", "create") and isinstance(out.writes[1].path, Unknown)
    assert out.programs == [("make", ("-C", "/sgl", "install"))]
    assert len(effects(["cmake", "--build", "build"]).writes) == 1


def test_xargs_runs_its_command_with_unknown_words():
    (argv, _, _), = effects(["xargs", "-n", "1", "sed", "-i", "s/a/b/"]).runs
    assert argv[:3] == ("sed", "-i", "s/a/b/") and isinstance(argv[3], Unknown)
    (argv, _, _), = effects(["xargs", "-I{}", "cp", "{}", "/dst"]).runs
    assert argv[0] == "cp" and isinstance(argv[1], Unknown) and argv[2] == "/dst"


def test_shells():
    assert effects(["bash", "-c", "echo $1", "a", "b"]).shell_text == [("echo $1", ("a", "b"))]
    assert effects(["bash", "-lc", "x"]).shell_text == [("x", ())]
    assert effects(["bash", "-euxo", "pipefail", "-c", "x"]).shell_text == [("x", ())]
    assert effects(["bash", "+x", "f.sh", "a"]).shell_files == [("f.sh", ("a",))]
    assert effects(["sh", "-s", "a"]).shell_stdin and effects(["bash"]).shell_stdin
    assert effects(["bash", "-n", "f.sh"]).shell_files == []


def test_python_forms():
    assert effects(["python3", "-u", "-m", "sglang.launch_server", "--port", "1"]).python == [
        PythonRun(module="sglang.launch_server", argv=("--port", "1"))]
    assert effects(["python", "-c", "import x", "a"]).python == [PythonRun(code="import x", argv=("a",))]
    assert effects(["python3", "-W", "ignore", "-X", "dev", "s.py", "-c"]).python == [
        PythonRun(script="s.py", argv=("-c",))]
    assert effects(["python3", "-um", "pip"]).python == [PythonRun(module="pip")]
    assert effects(["python3", "-"]).python == [PythonRun()]
    assert effects(["python3", "-Z"]).unknown
    assert effects(["torchrun", "--nproc_per_node=8", "-m", "x.y"]).python == [PythonRun(module="x.y")]
    assert effects(["torchrun", "--nproc_per_node", "8", "t.py", "--lr=1"]).python == [
        PythonRun(script="t.py", argv=("--lr=1",))]


# --------------------------------------------------------------------------- containers and Slurm

def test_docker_run():
    out = effects(["docker", "run", "--rm", "--ipc=host", "--shm-size", "16g", "--gpus", "all",
                   "-e", "A=1", "--env", "HF_TOKEN", "--env-file", "e.env", "-v", "/h:/c:ro",
                   "--mount", "type=bind,source=/s,target=/t", "-w", "/w", "--entrypoint", "bash", "img", "-c", "x"])
    box, = out.containers
    assert box == Container(image="img", env=(("A", "1"), ("HF_TOKEN", box.env[1][1])), env_from_host=("HF_TOKEN",),
                            env_files=("e.env",), mounts=(("/h", "/c"), ("/s", "/t")), workdir="/w",
                            entrypoint="bash", argv=("-c", "x"))
    assert isinstance(box.env[1][1], Unknown)
    assert effects(["docker", "run", "--frobnicate", "img"]).unknown
    assert effects(["docker", "run", "--rm=true", "--privileged=false", "img"]).containers[0].image == "img"
    assert effects(["podman", "exec", "-e", "X=1", "ctr", "ls"]).containers[0].env == (("X", "1"),)


def test_srun_with_a_container():
    out = effects(["srun", "-N", "1", "--container-image=img", "--container-mounts=/a:/b,/c:/d",
                   "--container-env=X,Y", "--export=ALL,Z=1", "--no-container-entrypoint",
                   "--container-workdir", "/w", "python3", "s.py"])
    box, = out.containers
    assert box.image == "img" and box.mounts == (("/a", "/b"), ("/c", "/d")) and box.workdir == "/w"
    assert box.env[0] == ("Z", "1") and box.env_from_host == ("X", "Y") and box.argv == ("python3", "s.py")


def test_srun_without_a_container_runs_on_the_node():
    out = effects(["srun", "--export=ALL,A=1", "--chdir", "/w", "-o", "log", "cmd", "x"])
    assert out.runs == [(("cmd", "x"), (("A", "1"),), "/w")] and out.writes == [Write("log", "create")]
    assert effects(["srun", "--export=NONE", "cmd"]).clears_env
    assert effects(["srun", "--frobnicate", "cmd"]).unknown



def test_a_mount_whose_host_path_holds_a_symbol_splits_at_its_own_colons():
    job = dict(_JOB_ENV)["SLURM_JOB_ID"]
    box = effects(["docker", "run", "-v", f"/logs/mc_{job}.env:/config/mc.env:ro", "img", "sh"]).containers[0]
    assert box.mounts == ((f"/logs/mc_{job}.env", "/config/mc.env"),)


def test_sbatch_runs_its_script_with_its_environment():
    slurm = tuple(_JOB_ENV)
    assert effects(["sbatch", "--export=ALL,A=1", "job.sh", "x"]).runs == [
        (("bash", "job.sh", "x"), slurm + (("A", "1"),), None)]
    assert effects(["sbatch", "--wrap=echo hi"]).runs == [(("sh", "-c", "echo hi"), slurm, None)]
    # What Slurm sets for the job: its id and node count are the machine's (symbols), its nodes
    # a host list.
    env = dict(slurm)
    assert symbolic(env["SLURM_JOB_ID"]) and symbolic(env["SLURM_NNODES"])
    assert not env["SLURM_JOB_NODELIST"].chars & set(" '\";$`\\\n")


def test_enroot_and_apptainer():
    box, = effects(["enroot", "start", "--rw", "-e", "A=1", "-m", "/h:/c", "ctr", "bash"]).containers
    assert box.image == "ctr" and box.env == (("A", "1"),) and box.mounts == (("/h", "/c"),) and box.argv == ("bash",)
    box, = effects(["apptainer", "exec", "--nv", "-B", "/a:/b,/c", "--env", "X=1", "img.sif", "python3"]).containers
    assert box.mounts == (("/a", "/b"), ("/c", "/c")) and box.env == (("X", "1"),)


def test_engines_are_programs_for_the_interpreter_to_classify():
    assert effects(["vllm", "serve", "m", "--tp", "8"]).programs == [("vllm", ("serve", "m", "--tp", "8"))]
    assert name_class("trtllm-serve") == "engine"


# --------------------------------------------------------------------------- words known up to a point

def test_an_assignment_with_an_unknown_value_is_still_an_assignment():
    secret = Unknown("a CI secret", "HF_TOKEN=")
    (argv, env, _), = effects(["env", secret, "python3", "s.py"]).runs
    assert argv == ("python3", "s.py") and env[0][0] == "HF_TOKEN" and isinstance(env[0][1], Unknown)
    box, = effects(["docker", "run", "-e", secret, "img"]).containers
    assert box.env[0][0] == "HF_TOKEN" and isinstance(box.env[0][1], Unknown)
    assert effects(["docker", "run", "-e", Unknown("a name not known"), "img"]).unknown


def test_a_mount_known_on_one_side():
    box, = effects(["docker", "run", "-v", Unknown("HF_HOME not set", "", ":/root/.cache:ro"), "img"]).containers
    (host, inside), = box.mounts
    assert isinstance(host, Unknown) and inside == "/root/.cache"
    box, = effects(["docker", "run", "-v", Unknown("TARGET not set", "/models:"), "img"]).containers
    (host, inside), = box.mounts
    assert host == "/models" and isinstance(inside, Unknown)


def test_srun_export_with_a_value_not_known():
    out = effects(["srun", Unknown("a CI secret", "--export=ALL,HF_TOKEN="), "cmd"])
    (argv, env, _), = out.runs
    assert argv == ("cmd",) and env[0][0] == "HF_TOKEN" and isinstance(env[0][1], Unknown)
