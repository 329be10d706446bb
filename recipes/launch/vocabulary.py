"""The one table of command semantics: what each command the launch scripts run reads, writes and
executes. A name not in it is unknown (`effects` returns None) and the interpreter reports it as
such; a known name whose option or form is not understood answers `CommandEffects(unknown=...)`.

`TABLE` maps each command name to one `Entry` (its class, a line saying what it is, and the
handler that reads its words); the `_add` lines below are the whole table. Handlers live in
`recipes.launch.families`, shared by families of commands (`_reader`, `_every_operand`, `_copy`,
`_runs_rest`, `_subcommands`, ...), and each command's options are listed once
(`recipes.launch.options`).
Names are looked up by basename (`/usr/bin/sed` is `sed`); a path to a shell script runs that
script (`shell_files`), a path to a `.py` file runs Python, any other path is a program
(`programs`). `python3.12` is `python`, `pip3.10` is `pip`.

Every name of the real history's scripts is in the table or in `SHELL_BUILTINS`
(tests/fixtures/history_commands.txt, made by bench/vocabulary_census.py; docs/launch-vocabulary.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from .effects import CommandEffects, PythonRun
from .families.common import (
    Handler, _copy, _every_operand, _fixed_write, _not_command, _program, _pure, _reader, _reads, _runs_rest,
    _Unknown,
)
from .families.files import (
    _MODE, _READ, _awk, _cp, _dd, _decompress, _ed, _find, _in_out, _install, _jq, _mktemp, _mode_given, _mount,
    _patch, _perl, _sed, _sysctl, _tar, _tee, _unsquashfs, _unzip, _yq,
)
from .families.jobs import (
    _DOCKER, _ENROOT, _apptainer, _kubectl, _profiler, _salloc, _sbatch, _sbcast, _sg, _srun, _tmux,
)
from .families.network import _HF, _cloud_copy, _curl, _gh, _git, _rclone, _rsync, _scp, _ssh, _wget
from .families.programs import (
    _apt_key, _build, _conda, _dpkg, _env, _flock, _maturin, _mpirun, _pip_command, _python, _shell, _skip_first,
    _su, _sudo, _system_packages, _time, _timeout, _torchrun, _uv, _watch, _xargs, pip_effects,
)
from .options import OptionError, opts, under
from .words import Unknown, Word

__all__ = ["CLASSES", "SHELL_BUILTINS", "TABLE", "Entry", "effects", "kept_effects", "lookup", "name_class", "pip_effects"]

# Builtins and keywords the interpreter evaluates itself (it never asks `effects` about them).
SHELL_BUILTINS: frozenset[str] = frozenset("""
cd pushd popd dirs export declare typeset local readonly unset set shopt shift source . eval exec
read printf echo let mapfile readarray alias unalias trap return exit break continue true false :
test [ [[ wait getopts command builtin type hash ulimit umask jobs disown kill times caller enable
help logout bg fg suspend compgen complete compopt history fc
""".split())


@dataclass(frozen=True)
class Entry:
    cls: str        # one of CLASSES
    what: str       # what the command is, for the docs and a reviewer
    handler: Handler


CLASSES = ("pure", "reader", "writer", "wrapper", "shell", "python", "package", "build", "container",
           "network", "engine", "system", "not-a-command")
TABLE: dict[str, Entry] = {}


def _add(cls: str, names: str, what: str, handler: Handler) -> None:
    assert cls in CLASSES, cls
    for name in names.split():
        assert name not in TABLE, f"{name} classified twice"
        TABLE[name] = Entry(cls, what, handler)


def effects(argv: Sequence[Word], cwd: Word | None = None) -> CommandEffects | None:
    """What the command `argv` does, or None when its name is not in the vocabulary. Relative
    paths are resolved against `cwd` when it is given (`recipes.launch.options.under`)."""
    if not argv or isinstance(argv[0], Unknown):
        return None
    name = argv[0]
    args = list(argv[1:])
    base = name.rsplit("/", 1)[-1]
    entry = lookup(name)
    if entry is None:
        if "/" in name and base:
            if base.endswith(_SCRIPT_SUFFIXES):
                return CommandEffects(shell_files=[(under(name, cwd), tuple(args))])
            if base.endswith(".py"):
                return CommandEffects(python=[PythonRun(script=under(name, cwd), argv=tuple(args))])
            return CommandEffects(programs=[(under(name, cwd), tuple(args))])
        return None
    try:
        return entry.handler(name, args, cwd)
    except (_Unknown, OptionError) as why:
        return CommandEffects(unknown=f"`{base}`: {why}")


# `effects`' answers by (argv, cwd), for the interpreter (`kept_effects`).
_KEPT: dict[tuple, CommandEffects | None] = {}
MAX_KEPT = 4_096
_UNASKED = object()


def kept_effects(argv: Sequence[Word], cwd: Word | None = None) -> CommandEffects | None:
    """`effects(argv, cwd)`, kept: an answer depends on the words alone (the handlers read
    nothing else), and a launch runs the same commands again and again (each trace of a runner,
    a poll in a loop, a function called per server). The answers are shared, so nothing may
    change one; a handler's fault is raised again each time, never kept."""
    key = (tuple(argv), cwd)
    try:
        got = _KEPT.get(key, _UNASKED)
    except TypeError:  # a word that does not hash
        return effects(argv, cwd)
    if got is _UNASKED:
        if len(_KEPT) >= MAX_KEPT:
            _KEPT.clear()
        got = _KEPT[key] = effects(argv, cwd)
    return got


_SCRIPT_SUFFIXES = (".sh", ".bash", ".slurm")
_FAMILIES = ((re.compile(r"^python\d*(?:\.\d+)?$"), "python"), (re.compile(r"^pip\d*(?:\.\d+)?$"), "pip"))


def lookup(name: str) -> Entry | None:
    """The table entry for a command name or path (by basename), None when there is none. A bare
    script name (`rebuild-deepep.sh`, found on PATH) runs that script."""
    base = name.rsplit("/", 1)[-1]
    if base in TABLE:
        return TABLE[base]
    for pattern, family in _FAMILIES:
        if pattern.match(base):
            return TABLE[family]
    if "/" not in name and base.endswith(_SCRIPT_SUFFIXES):
        return _SCRIPT
    return None


def name_class(name: str) -> str:
    """The class of a command name: "builtin", a table class, "script"/"program" for a path, or
    "unknown"."""
    if name in SHELL_BUILTINS:
        return "builtin"
    entry = lookup(name)
    if entry is not None:
        return entry.cls
    if "/" in name:
        return "script" if name.endswith(_SCRIPT_SUFFIXES + (".py",)) else "program"
    return "unknown"


def _script_on_path(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    return CommandEffects(shell_files=[(name, tuple(args))])


_SCRIPT = Entry("shell", "a shell script found on PATH", _script_on_path)


# --------------------------------------------------------------------------- pure

_add("pure", """
date sleep seq basename dirname hostname nproc uname whoami id groups tty arch printenv pwd yes expr bc
factor numfmt getconf locale logname users uptime
""", "prints or computes text; no file effect", _pure())
_add("pure", "envsubst", "substitutes variables in standard input", _pure())
_add("system", """
nvidia-smi rocm-smi amd-smi rocminfo hipconfig ibv_devices ibv_devinfo ibstat ibdev2netdev rdma nicctl
lscpu lspci free df du top ps pgrep lsof fuser ss netstat ip ping getent findmnt blkid mountpoint
ldd nm which whereis
""", "asks the system, the GPUs or the network about their state; no file effect", _pure())
_add("system", "scontrol squeue sinfo sacct scancel sstat", "asks or tells Slurm about jobs; no file effect", _pure())
_add("system", "pkill killall", "signals processes by name", _pure())
_add("system", "sync", "flushes file buffers", _pure())

# --------------------------------------------------------------------------- readers

_add("reader", """
cat rev md5sum sha1sum sha256sum sha512sum shasum b2sum cksum zcat bzcat xzcat zstdcat more less diffstat
""", "reads the files it names (standard input without one)", _reader(_READ))
_add("reader", "head tail", "reads the start or end of the files it names",
     _reader(_reads("-n -c -s --lines --bytes --pid --sleep-interval --max-unchanged-stats")))
_add("reader", "cut paste column", "reads the columns of the files it names",
     _reader(_reads("-d -f -b -c -s -o -N -W --delimiter --fields --bytes --characters --output-delimiter "
                    "--delimiters --separator --output-separator --table-columns")))
_add("reader", "fold base64 base32", "reads and rewraps or encodes the files it names",
     _reader(_reads("-w --width --wrap")))
_add("reader", "nl tac strings", "reads and numbers, reverses or filters the lines of the files it names",
     _reader(_reads("-b -d -f -h -i -l -n -s -v -w -t -e --separator --bytes --radix --encoding")))
_add("reader", "od xxd hexdump", "dumps the bytes of the files it names",
     _reader(_reads("-A -j -N -t -w -l -s -c -g -o -n -e -f")))
_add("reader", "diff cmp comm", "compares the files it names",
     _reader(_reads("-U -C -L -x -X -I -i -n -F -W -D --label --exclude --exclude-from --ignore-matching-lines "
                    "--ignore-initial --bytes --output-delimiter --unified --context --width --ifdef")))
_add("reader", "wc", "counts the lines, words and bytes of the files it names",
     _reader(_reads("--files0-from"), read_opts=("--files0-from",)))
_add("reader", "ls", "lists the files and folders it names",
     _reader(_reads("-I -w -T --ignore --width --tabsize --sort --time-style --format --hide --block-size --time "
                    "--quoting-style")))
_add("reader", "stat file realpath readlink", "describes the files it names",
     _reader(_reads("-c -m -F -e --format --printf --magic-file --separator --exclude --relative-to "
                    "--relative-base")))
_add("reader", "tree", "lists a folder as a tree (`-o FILE` writes it)",
     _reader(_reads("-L -P -I --charset --filelimit --sort", write="-o"), write_opts=("-o",)))
_add("reader", "iconv", "converts the encoding of the files it names (`-o FILE` writes)",
     _reader(_reads("-f -t --from-code --to-code", write="-o --output"), write_opts=("-o", "--output")))
_add("pure", "tr", "translates characters of its input (its operands are character sets)", _pure())
_add("reader", "grep egrep fgrep rg", "searches the files it names for a pattern",
     _reader(opts(valued="-e -f -m -A -B -C --regexp --file --max-count --include --exclude --color --colour "
                        "--label --context --after-context --before-context -d -D --devices --directories",
                  risky=False), program_first=True, program_opts=("-e", "-f", "--regexp", "--file"),
            read_opts=("-f", "--file")))
_add("reader", "jq", "reads JSON files with a filter", _jq)
_add("reader", "sort", "sorts the lines of the files it names; `-o FILE` writes",
     _reader(opts("-n -r -u -h -g -V -f -b -d -i -M -R -s -c -C -m -z --numeric-sort --reverse --unique "
                  "--human-numeric-sort --version-sort --stable --general-numeric-sort",
                  valued="-k -t -o -S -T --key --field-separator --output --buffer-size --temporary-directory "
                         "--parallel --files0-from"), write_opts=("-o", "--output")))
_add("reader", "uniq", "filters repeated lines; a second operand is the output file",
     _in_out(opts("-c -d -u -i -D -z --count --repeated --unique --ignore-case -f -s -w",
                  valued="--skip-fields --skip-chars --check-chars")))
_add("reader", "find", "lists files; `-exec`/`-delete`/`-fprint` act on them",
     _find)

# --------------------------------------------------------------------------- text editors (in place)

_add("writer", "yq", "a YAML/JSON processor; `-i` edits files in place", _yq)
_add("writer", "sed", "a stream editor; `-i` edits files in place", _sed)
_add("writer", "perl", "perl; `-pi -e` edits files in place", _perl)
_add("writer", "ed ex vi vim nvim", "a text editor run on files: edits them in place", _ed)
_add("writer", "patch", "applies a diff to the files it names", _patch)
_add("writer", "awk gawk mawk nawk", "a text program; `-i inplace`, `print > FILE` and `system()` act on files",
     _awk)

# --------------------------------------------------------------------------- writers

_add("writer", "rm", "deletes the files it names",
     _every_operand(opts("-r -R -f -i -I -d -v --recursive --force --verbose --dir --one-file-system "
                         "--no-preserve-root --preserve-root --interactive", risky=False), "delete"))
_add("writer", "rmdir", "deletes the empty folders it names",
     _every_operand(opts("-p -v --parents --verbose --ignore-fail-on-non-empty", risky=False), "delete"))
_add("writer", "unlink", "deletes the file it names", _every_operand(opts(risky=False), "delete"))
_add("writer", "mkdir", "creates the folders it names",
     _every_operand(opts("-p -v --parents --verbose", valued="-m --mode", risky=False), "create"))
_add("writer", "mkfifo", "creates the named pipes it names",
     _every_operand(opts(valued="-m --mode", risky=False), "create"))
_add("writer", "touch", "creates the files it names or updates their times",
     _every_operand(opts("-a -c -m -h --no-create", valued="-d -r -t --date --reference --time", risky=False),
                    "create"))
_add("writer", "truncate", "changes the size of the files it names",
     _every_operand(opts("-c -o --no-create --io-blocks", valued="-s -r --size --reference", risky=False),
                    "in-place edit"))
_add("writer", "shred", "overwrites the files it names",
     _every_operand(opts("-f -u -v -z --force --remove --verbose --zero", valued="-n -s --iterations --size"),
                    "delete"))
_add("writer", "chmod chown chgrp", "changes the mode or owner of the files it names (after the mode/owner)",
     _every_operand(_MODE, "mode", skip_first=_mode_given))
_add("writer", "cp", "copies its sources to the last operand", _cp)
_add("writer", "mv", "moves its sources to the last operand",
     _copy(opts("-f -i -n -u -v -b -T --force --no-clobber --update --verbose --no-target-directory",
                valued="-t -S --target-directory --suffix --backup"), "move"))
_add("writer", "ln", "links the last operand to its sources",
     _copy(opts("-s -f -n -r -v -b -T -i -L -P --symbolic --force --no-dereference --relative --verbose "
                "--no-target-directory", valued="-t -S --target-directory --suffix --backup"), "link",
           one_operand_here=True))
_add("writer", "install", "copies files into place (`-d`: creates folders)", _install)
_add("writer", "tee", "copies standard input to the files it names",
     _tee)
_add("writer", "dd", "copies `if=` to `of=`", _dd)
_add("writer", "mktemp", "creates a temporary file or folder (under /tmp unless told)",
     _mktemp)
_add("writer", "ldconfig", "rebuilds the shared-library cache (/etc/ld.so.cache)",
     _fixed_write("/etc/ld.so.cache", "create"))
_add("writer", "mkfs.ext4 mkfs mkswap", "formats the device it names",
     _every_operand(opts("-F -q -F -E", valued="-L -t -b -m -O -E -N -i"), "create"))
_add("writer", "mount umount", "mounts or unmounts a file system on a folder",
     _mount)
_add("writer", "swapon swapoff", "turns swap on a device on or off", _pure())
_add("writer", "sysctl", "reads or sets kernel parameters (`-w`, NAME=VALUE)",
     _sysctl)
_add("writer", "mdadm", "manages software RAID devices", _not_command("RAID management is not interpreted"))

# --------------------------------------------------------------------------- archives

_add("writer", "tar", "packs or unpacks archives", _tar)
_add("writer", "unzip", "unpacks a zip archive (into `-d DIR`)", _unzip)
_add("writer", "gzip", "compresses files (`-d`: unpacks)", _decompress((".gz", ".tgz"), compress=True))
_add("writer", "gunzip", "unpacks .gz files", _decompress((".gz", ".tgz"), compress=False))
_add("writer", "xz", "compresses files (`-d`: unpacks)", _decompress((".xz",), compress=True))
_add("writer", "unxz", "unpacks .xz files", _decompress((".xz",), compress=False))
_add("writer", "zstd", "compresses files (`-d`: unpacks)", _decompress((".zst",), compress=True))
_add("writer", "unzstd", "unpacks .zst files", _decompress((".zst",), compress=False))
_add("writer", "bzip2", "compresses files (`-d`: unpacks)", _decompress((".bz2",), compress=True))
_add("writer", "bunzip2", "unpacks .bz2 files", _decompress((".bz2",), compress=False))
_add("writer", "unsquashfs", "unpacks a squashfs image (into `-d DIR`)",
     _unsquashfs)

# --------------------------------------------------------------------------- network

_add("network", "curl", "fetches URLs (`-o`/`-O`: into files)", _curl)
_add("network", "wget", "downloads URLs into files", _wget)
_add("network", "huggingface-cli hf", "the Hugging Face Hub client (`download` into `--local-dir` or the cache)", _HF)
_add("network", "rclone", "copies between local folders and cloud storage", _rclone)
_add("network", "aws gsutil gcloud", "copies from and to cloud buckets (`aws s3 cp`, `gsutil cp`)", _cloud_copy)
_add("network", "ssh", "runs shell text on another host", _ssh)
_add("network", "scp", "copies files between hosts", _scp)
_add("writer", "rsync", "copies files and folders (also between hosts)", _rsync)
_add("network", "gh", "the GitHub CLI (asks GitHub; `release download`/`run download` fetch files)",
     _gh)
_add("network", "gpg", "checks or imports keys and signatures",
     _fixed_write(Unknown("the GnuPG keyring"), "in-place edit"))
_add("network", "nc netcat ncat", "opens a network connection (waits for a port)", _pure())

# --------------------------------------------------------------------------- git

_add("writer", "git", "version control: clones, checks out, applies patches (in `-C DIR`)", _git)

# --------------------------------------------------------------------------- wrappers

_add("wrapper", "env", "runs a command with environment changes (`-u`, `-i`, `-C`, NAME=value)", _env)
_add("wrapper", "sudo", "runs a command as another user (without `-E`: with a reset environment)", _sudo)
_add("wrapper", "xargs", "runs a command with words from its input", _xargs)
_add("wrapper", "timeout", "runs a command with a time limit", _timeout)
_add("wrapper", "time", "runs a command and reports its time (`-o FILE` writes it)", _time)
_add("wrapper", "nohup", "runs a command immune to hangups", _runs_rest(opts(stop=True)))
_add("wrapper", "setsid", "runs a command in a new session",
     _runs_rest(opts("-c -f -w --ctty --fork --wait", stop=True), needs_command=True))
_add("wrapper", "nice", "runs a command at another priority",
     _runs_rest(opts(valued="-n --adjustment", attached="-1 -2 -3 -4 -5 -6 -7 -8 -9", stop=True)))
_add("wrapper", "ionice", "runs a command at another I/O priority",
     _runs_rest(opts("-t", valued="-c -n -p --class --classdata --pid", stop=True)))
_add("wrapper", "stdbuf", "runs a command with other stream buffering",
     _runs_rest(opts(valued="-i -o -e --input --output --error", stop=True), needs_command=True))
_add("wrapper", "numactl", "runs a command bound to NUMA nodes (`--hardware`/`--show`: prints)",
     _runs_rest(opts("-l -H -s --localalloc --hardware --show -a --all",
                     valued="-N -m -C -i -p --cpunodebind --membind --physcpubind --interleave --preferred "
                            "--preferred-many", stop=True)))
_add("wrapper", "taskset", "runs a command bound to CPUs (`-p PID`: changes a process)",
     _skip_first(opts("-a -c --all-tasks --cpu-list -p --pid", stop=True), unless=("-p", "--pid")))
_add("wrapper", "chrt", "runs a command with a real-time priority",
     _skip_first(opts("-b -f -o -r -d -i -a -R -v -m --batch --fifo --other --rr --deadline --idle -p --pid",
                      valued="-T -P -D", stop=True), unless=("-p", "--pid", "-m")))
_add("wrapper", "flock", "runs a command holding a lock file", _flock)
_add("wrapper", "watch", "runs shell text again and again", _watch)
_add("wrapper", "mpirun mpiexec", "runs a command as MPI ranks (`-x NAME=value` exports)", _mpirun)

# --------------------------------------------------------------------------- shells and Python

_add("shell", "bash sh zsh dash ksh", "a shell: runs `-c TEXT`, a FILE, or its standard input", _shell)
_add("python", "python", "Python (`python3`, `python3.12`): runs `-m MOD`, `-c CODE`, a FILE or its input",
     _python)
_add("python", "torchrun", "runs a Python script as distributed ranks", _torchrun)

# --------------------------------------------------------------------------- packages

_add("package", "pip", "installs Python packages (also `pip3`, `pip3.12`)",
     _pip_command)
_add("package", "uv", "the uv Python package manager (`uv pip install`, `uv run`, `uv venv`)", _uv)
_add("package", "apt-get apt", "installs Debian packages",
     _system_packages("apt", installs=("install", "reinstall", "upgrade", "dist-upgrade", "full-upgrade",
                                       "build-dep"),
                      removes=("remove", "purge", "autoremove"), refresh=("update",),
                      harmless=("clean", "autoclean", "show", "list", "search", "policy", "cache", "download",
                                "source", "check", "changelog")))
_add("package", "yum dnf microdnf", "installs RPM packages",
     _system_packages("yum", installs=("install", "reinstall", "upgrade", "update", "groupinstall", "localinstall"),
                      removes=("remove", "erase", "autoremove"), refresh=("makecache",),
                      harmless=("clean", "info", "list", "search", "repolist", "check-update")))
_add("package", "conda mamba micromamba", "installs conda packages (`-c CHANNEL`), makes environments",
     _conda)
_add("package", "npm", "installs Node packages",
     _system_packages("npm", installs=("install", "i", "ci", "add", "update"), removes=("uninstall", "remove", "rm"),
                      harmless=("ls", "list", "view", "config", "version", "--version", "cache", "prefix", "root")))
_add("package", "cargo", "builds Rust code and installs Rust programs (`cargo install`)",
     _system_packages("cargo", installs=("install",), removes=("uninstall",),
                      harmless=("--version", "version", "metadata", "tree")))
_add("package", "dpkg", "installs .deb files (`-i`) and lists packages",
     _dpkg)
_add("package", "apt-key", "adds keys to apt's keyring",
     _apt_key)
_add("package", "maturin", "builds a Rust/Python package (`develop`: installs it)",
     _maturin)
_add("build", "make cmake ninja meson scons bazel", "runs a build's recipes (a program the interpreter judges)",
     _build)

# --------------------------------------------------------------------------- containers

_add("container", "docker podman", "runs and manages containers (`run`/`exec`: env, mounts, workdir cross in)",
     _DOCKER)
_add("container", "enroot", "imports, creates and starts enroot containers", _ENROOT)
_add("container", "apptainer singularity", "runs Apptainer/Singularity images", _apptainer)

# --------------------------------------------------------------------------- Slurm

_add("container", "srun", "runs a command on the job's nodes (in a pyxis container with `--container-image`)",
     _srun)
_add("shell", "sbatch", "submits a batch script (`FILE`, `--wrap=TEXT`) with its environment", _sbatch)
_add("wrapper", "salloc", "runs a command in a new allocation", _salloc)
_add("writer", "sbcast", "copies a file to every node of the job", _sbcast)

# --------------------------------------------------------------------------- engines, tools, sessions

_add("engine", """
vllm sglang trtllm-serve trtllm-llmapi-launch trtllm-bench atom dynamo lm_eval lighteval sgl-eval aiperf genai-perf
guidellm vllm-router sglang-router mooncake_master mooncake_client lmcache epp envoy pd-sidecar etcd etcdctl
mini-extra ns srtctl nats-server
""", "an inference engine, router, store or benchmark client (the interpreter classifies its argv)", _program)
_add("engine", "streamlit", "a dashboard web server (srt-slurm's run_dashboard.sh)", _program)
_add("system", "nsys py-spy", "profiles a command (runs it; `-o` writes the report)", _profiler)
_add("shell", "tmux", "runs shell text in a detached terminal session", _tmux)
_add("container", "kubectl", "drives a Kubernetes cluster", _kubectl)
_add("pure", "deactivate", "leaves a Python virtual environment (a function `activate` defines)", _pure())
_add("not-a-command", "c Expand",
     "no command: a typo (runners/launch_h100-greennode.sh) and text pasted from a GitHub page",
     _not_command("command not found"))
_add("wrapper", "su runuser", "runs shell text or a command as another user (`su USER -c TEXT`)", _su)
_add("wrapper", "sg", "runs shell text with another group (`sg docker -c TEXT`)", _sg)
