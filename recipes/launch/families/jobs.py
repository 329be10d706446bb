"""Commands that start work elsewhere: containers (docker/podman, enroot, apptainer), Slurm (srun,
sbatch, salloc, sbcast), profilers, tmux, kubectl, sg."""
from __future__ import annotations

import re

from ..chars import HOST_NAMES
from ..effects import CommandEffects, Container, Copy, Download, Write
from ..options import Parsed, opts, parse, under
from ..state import SYMBOL, symbol
from ..words import Unknown, Word
from .common import _assignment, _joined_text, _names, _pure, _split_list, _subcommands, _Unknown


_DOCKER_RUN = opts(
    "-d -i -t -P --detach --interactive --tty --rm --privileged --init --read-only --publish-all --no-healthcheck "
    "--oom-kill-disable --sig-proxy --quiet -q --help",
    valued="-e -v -w -u -p -h -l -m -a -c --env --env-file --volume --mount --workdir --entrypoint --name --network "
           "--net --ipc --pid --uts --shm-size --device --group-add --security-opt --cap-add --cap-drop --user --gpus "
           "--ulimit --publish --hostname --add-host --label --label-file --runtime --memory --memory-swap --cpus "
           "--cpuset-cpus --cpuset-mems --restart --log-driver --log-opt --platform --pull --dns --tmpfs "
           "--stop-signal --stop-timeout --cgroupns --userns --cidfile --volumes-from --device-cgroup-rule --sysctl "
           "--expose --link --attach --mac-address --oom-score-adj --storage-opt --isolation --detach-keys "
           "--network-alias --health-cmd --health-interval --health-retries --health-timeout --memory-reservation "
           "--cpu-shares --blkio-weight --pids-limit --annotation --hooks-dir --tz --replace --userns-mode",
    stop=True)


def _docker_run(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`docker run [opts] IMAGE [CMD...]`: environment (`-e`, `--env-file`), mounts (`-v`,
    `--mount`), working directory, entrypoint and command cross into the container."""
    p = parse(args, _DOCKER_RUN)
    if not p.operands:
        raise _Unknown("no image")
    return CommandEffects(containers=[_docker_container(p, p.operands[0], tuple(p.operands[1:]), cwd)],
                          reads=[under(f, cwd) for f in p.values("--env-file", "--label-file")],
                          writes=[Write(under(f, cwd), "create") for f in p.values("--cidfile")])


def _docker_exec(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`docker exec [opts] CONTAINER CMD...`: runs CMD in a running container (its name as the image)."""
    p = parse(args, opts("-d -i -t --detach --interactive --tty --privileged",
                         valued="-e -w -u --env --env-file --workdir --user --detach-keys", stop=True))
    if len(p.operands) < 2:
        raise _Unknown("no container or no command")
    return CommandEffects(containers=[_docker_container(p, p.operands[0], tuple(p.operands[1:]), cwd)],
                          reads=[under(f, cwd) for f in p.values("--env-file")])


def _docker_container(p: Parsed, image: Word, argv: tuple[Word, ...], cwd: Word | None) -> Container:
    env: list[tuple[str, Word]] = []
    from_host: list[str] = []
    for value in p.values("-e", "--env"):
        pair = _assignment(value)
        if pair is not None:
            env.append(pair)
        elif isinstance(value, str) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", value):
            env.append((value, Unknown(f"{value} passed from the host")))
            from_host.append(value)
        else:
            raise _Unknown(f"an environment word whose name is not known ({_names([value])[0]})")
    mounts = [_volume(v, cwd) for v in p.values("-v", "--volume")]
    mounts += [_mount_option(v, cwd) for v in p.values("--mount")]
    entry = p.last("--entrypoint")
    if entry == "":
        entry = None  # `--entrypoint ""`: no entrypoint, the command runs as given
    return Container(image=image, env=tuple(env), env_from_host=tuple(from_host),
                     env_files=tuple(under(f, cwd) for f in p.values("--env-file")),
                     mounts=tuple(m for m in mounts if m is not None), workdir=p.last("-w", "--workdir"),
                     entrypoint=entry, argv=argv)


def _volume(spec: Word, cwd: Word | None) -> tuple[Word, Word]:
    """`-v HOST:CONTAINER[:opts]` (a named or anonymous volume: its name as the host side)."""
    if isinstance(spec, Unknown):
        if ":" in spec.suffix:  # `$HF_HOME:/root/.cache/huggingface[:ro]`
            return (Unknown(spec.why, spec.prefix, spec.suffix.split(":")[0]), spec.suffix.split(":")[1])
        if ":" in spec.prefix:  # `/models:$TARGET`
            host = spec.prefix.split(":")[0]
            return (under(host, cwd), Unknown(spec.why, spec.prefix.split(":")[1], spec.suffix))
        return (spec, Unknown(f"the container side of an unknown mount ({spec.why})"))
    parts = [p.replace("\x02", ":") for p in re.sub(rf"{SYMBOL}[^\x01]*\x01", lambda m: m.group(0).replace(":", "\x02"),
                                                       spec).split(":")]  # a symbol's own `:` is no separator
    if len(parts) == 1:
        return (Unknown(f"an anonymous volume at {spec}"), spec)
    host = parts[0]
    return (under(host, cwd) if host.startswith((".", "/")) else host, parts[1])


def _mount_option(spec: Word, cwd: Word | None) -> tuple[Word, Word] | None:
    """`--mount type=bind,source=X,target=Y[,readonly]`; a tmpfs mount has no host side."""
    if isinstance(spec, Unknown):
        return (spec, Unknown(f"the container side of an unknown mount ({spec.why})"))
    fields = dict(part.partition("=")[::2] for part in spec.split(","))
    target = fields.get("target") or fields.get("dst") or fields.get("destination")
    if target is None:
        raise _Unknown(f"a mount without a target: `{spec}`")
    if fields.get("type") == "tmpfs":
        return None
    source = fields.get("source") or fields.get("src")
    return (under(source, cwd) if source else Unknown(f"an anonymous volume at {target}"), target)


def _docker_cp(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-a -L -q --archive --follow-link --quiet"))
    if len(p.operands) != 2:
        raise _Unknown("not SRC DST")
    src, dst = p.operands
    inside = re.compile(r"^[\w.-]+:")
    if isinstance(dst, str) and inside.match(dst):
        return CommandEffects(reads=[under(src, cwd)], writes=[Write(Unknown(f"{dst} inside a container"), "copy")])
    return CommandEffects(writes=[Write(under(dst, cwd), "copy")])


_DOCKER = _subcommands({
    "run": _docker_run, "exec": _docker_exec, "cp": _docker_cp,
    "pull": lambda name, args, cwd: CommandEffects(downloads=[Download(a, None) for a in args
                                                              if not (isinstance(a, str) and a.startswith("-"))]),
    "create": _docker_run,
    "load": lambda name, args, cwd: CommandEffects(reads=[under(a, cwd) for k, a in enumerate(args)
                                                          if k > 0 and args[k - 1] in ("-i", "--input")]),
    "save": lambda name, args, cwd: CommandEffects(writes=[Write(under(a, cwd), "create") for k, a in enumerate(args)
                                                           if k > 0 and args[k - 1] in ("-o", "--output")]),
    **{sub: _pure() for sub in ("ps", "images", "logs", "inspect", "info", "version", "stop", "kill", "rm", "rmi",
                                "wait", "stats", "top", "port", "network", "volume", "tag", "push", "login",
                                "logout", "start", "restart", "pause", "unpause", "container", "image", "system",
                                "events", "manifest", "context")},
}, spec=opts("-D --debug --tls --tlsverify", valued="-H --host --context --config --log-level -l"))


_ENROOT_START = opts("-r -w --root --rw", valued="-e -m -c --env --mount --conf", stop=True)


def _enroot_start(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`enroot start [--root] [--rw] [-e NAME[=V]] [-m SRC:DST] NAME [CMD...]`."""
    p = parse(args, _ENROOT_START)
    if not p.operands:
        raise _Unknown("no container")
    q = Parsed([("-e", v) for v in p.values("-e", "--env")] + [("-v", v) for v in p.values("-m", "--mount")],
               [])
    box = _docker_container(q, p.operands[0], tuple(p.operands[1:]), cwd)
    if p.values("-c", "--conf"):
        raise _Unknown("a configuration script (`--conf`) the vocabulary does not read")
    return CommandEffects(containers=[box])


def _enroot_import(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts(valued="-o -a --output --arch"))
    if not p.operands:
        raise _Unknown("no image")
    output = p.last("-o", "--output")
    dest = under(output, cwd) if output is not None else Unknown("a .sqsh file named after the image")
    return CommandEffects(downloads=[Download(p.operands[0], dest)], writes=[Write(dest, "download")])


def _enroot_create(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-f --force", valued="-n --name"))
    if not p.operands:
        raise _Unknown("no image")
    label = p.last("-n", "--name")
    return CommandEffects(reads=[under(p.operands[0], cwd)],
                          writes=[Write(Unknown(f"enroot's container {_names([label])[0] if label else '(unnamed)'}"),
                                        "unpack")])


_ENROOT = _subcommands({
    "start": _enroot_start, "import": _enroot_import, "create": _enroot_create,
    "list": _pure(), "version": _pure(), "export": _pure(),
    "remove": lambda name, args, cwd: CommandEffects(writes=[Write(Unknown(f"enroot's container {n}"), "delete")
                                                             for n in _names([a for a in args if a not in
                                                                              ("-f", "--force")])]),
})


def _apptainer(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`apptainer exec|run|shell [opts] IMAGE [CMD...]` (`-B SRC[:DST],...`, `--env K=V,...`,
    `--pwd DIR`); `pull`/`build` write an image."""
    if not args:
        raise _Unknown("no subcommand")
    sub, rest = args[0], args[1:]
    if sub in ("pull", "build"):
        p = parse(rest, opts("-F --force --fakeroot --sandbox --disable-cache", valued="--name"))
        if not p.operands:
            raise _Unknown("no image")
        dest = under(p.operands[0], cwd)
        source = p.operands[1:] or [Unknown("the image named by the file")]
        return CommandEffects(downloads=[Download(source[0], dest)], writes=[Write(dest, "create")])
    if sub not in ("exec", "run", "shell"):
        if sub in ("version", "inspect", "--version", "cache", "instance"):
            return CommandEffects()
        raise _Unknown(f"subcommand `{_names([sub])[0]}` is not in the vocabulary")
    p = parse(rest, opts("--nv --rocm --cleanenv -e --containall -C --contain -c --writable -w --fakeroot -f "
                         "--no-home --no-mount --writable-tmpfs --compat --no-init --userns -u",
                         valued="-B --bind --mount --env --env-file --pwd -H --home --overlay -o --security "
                                "--app --network --hostname", stop=True))
    if not p.operands:
        raise _Unknown("no image")
    binds = [part for value in p.values("-B", "--bind") for part in _split_list(value)]
    envs = [part for value in p.values("--env") for part in _split_list(value)]
    q = Parsed([("-e", e) for e in envs] + [("-v", b if isinstance(b, Unknown) or ":" in b else f"{b}:{b}")
                                           for b in binds] + [("-w", w) for w in p.values("--pwd")]
               + [("--env-file", f) for f in p.values("--env-file")], [])
    argv = tuple(p.operands[1:]) if sub == "exec" else ()
    return CommandEffects(containers=[_docker_container(q, p.operands[0], argv, cwd)])


_SLURM = opts(
    "-l -u -Q -v -k -K -O -E -X -s -H -I --label --unbuffered --quiet --verbose --no-kill --overlap --exclusive "
    "--oversubscribe --pty --multi-prog --container-remap-root --no-container-remap-root --container-mount-home "
    "--no-container-mount-home --container-writable --container-readonly --no-container-entrypoint "
    "--container-entrypoint --no-container-env --kill-on-bad-exit --wait-all-nodes --hold --parsable --test-only "
    "--spread-job --contiguous --no-requeue --requeue --use-min-nodes --immediate --get-user-env --exact --whole "
    "--container-entrypoint-log --no-shell --mem-bind",
    valued="-N -n -c -w -x -p -t -J -A -o -e -i -m -D -d -q -C -W -G -S -a -F -b -M "
           "--nodes --ntasks --cpus-per-task --ntasks-per-node --nodelist --exclude --partition --time --job-name "
           "--account --gres --gpus --gpus-per-node --gpus-per-task --gpu-bind --cpu-bind --mem --mem-per-cpu "
           "--mem-per-gpu --mpi --jobid --het-group --output --error --input --distribution --export --chdir "
           "--container-image --container-mounts --container-workdir --container-name --container-env "
           "--container-save --reservation --qos --dependency --network --comment --constraint --segment "
           "--threads-per-core --cpus-per-gpu --wait --signal --time-min --nodefile --switches --wrap --array "
           "--begin --mail-type --mail-user --open-mode --ntasks-per-gpu --gpus-per-socket --sockets-per-node "
           "--cores-per-socket --cluster --clusters --licenses --priority --nice --export-file --deadline "
           "--container-image-save --tmp --hint --cpu-freq --profile --acctg-freq --uid "
           "--gid --core-spec --thread-spec --prolog --epilog --task-prolog --task-epilog --mincpus --tres-per-task "
           "--gres-flags --power --batch --extra --ntasks-per-core --ntasks-per-socket --reboot --bcast --x11 "
           "--propagate --resv-ports --send-libs --tres-bind",
    attached="--exclusive --kill-on-bad-exit --overlap --propagate", stop=True)


def _export_env(p: Parsed) -> tuple[list[tuple[str, Word]], list[str], bool]:
    """`--export=ALL,X=1,Y` → ([("X", "1")], ["Y"], clears): NONE clears the environment (the
    NAME=value pairs and names still pass); an unknown value fails closed."""
    env: list[tuple[str, Word]] = []
    names: list[str] = []
    clears = False
    for value in p.values("--export"):
        for part in _split_list(value):
            pair = _assignment(part)
            if part in ("ALL", ""):
                continue
            if part in ("NONE", "NIL"):
                clears = True
            elif pair is not None:
                env.append(pair)
            elif isinstance(part, str):
                names.append(part)
            else:
                raise _Unknown(f"`--export` with an item that is not known ({part.why})")
    return env, names, clears


def _slurm_writes(p: Parsed, cwd: Word | None) -> list[Write]:
    return [Write(under(f, cwd), "create") for f in p.values("-o", "--output", "-e", "--error")
            if f not in ("/dev/null", "none")] + \
        [Write(under(f, cwd), "create") for f in p.values("--container-save", "--container-image-save")]


def _srun(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`srun [opts] CMD...` on the job's nodes; with `--container-image` (pyxis) in a container:
    `--container-mounts SRC:DST,...`, `--container-workdir`, `--container-env NAMES` (passed from
    the host), `--export=ALL,X=1` (set for the command). Either way the command inherits the
    job's environment (srun's `--export` is ALL by default) unless `--export=NONE` (`clears_env`)."""
    p = parse(args, _SLURM)
    if p.has("--multi-prog"):
        raise _Unknown("`--multi-prog` reads its programs from a file")
    env, names, clears = _export_env(p)
    chdir = p.last("-D", "--chdir")
    out = CommandEffects(writes=_slurm_writes(p, cwd), clears_env=clears,
                         reads=[under(f, cwd) for f in p.values("-i", "--input")])
    image = p.last("--container-image")
    if image is None and not p.values("--container-name"):
        if not p.operands:
            raise _Unknown("no command")
        out.runs = [(tuple(p.operands), tuple(env), under(chdir, cwd) if chdir is not None else None)]
        return out
    host_names = [n for value in p.values("--container-env") for n in _split_list(value)]
    if any(isinstance(n, Unknown) for n in host_names):
        raise _Unknown("`--container-env` with an unknown name")
    mounts = [_volume(m, cwd) for value in p.values("--container-mounts") for m in _split_list(value)]
    named = p.last("--container-name")
    out.containers = [Container(
        image=image if image is not None else Unknown(f"the container named {_names([named])[0]}"),
        env=tuple(env) + tuple((n, Unknown(f"{n} passed from the host")) for n in host_names if isinstance(n, str)),
        env_from_host=tuple([*names, *(n for n in host_names if isinstance(n, str))]),
        mounts=tuple(mounts), workdir=p.last("--container-workdir"), argv=tuple(p.operands),
        inherits_env=not clears)]
    return out


# What Slurm sets in a batch job's environment that its scripts read. Its numbers are values of
# the machine, symbols like `$UID` (recipes.launch.state.SYMBOL): `hicache_mc_${SLURM_JOB_ID}.env`
# is one path a trace can follow, and a test or arithmetic that reads one is undecided. Its
# nodes are a host list (`mi355x-[01-03],mi355x-07`): unknown, of those characters.
_JOB_ENV = tuple(
    [(n, symbol(n)) for n in ("SLURM_JOB_ID", "SLURM_JOBID", "SLURM_NNODES", "SLURM_JOB_NUM_NODES", "SLURM_NTASKS",
                              "SLURM_NPROCS")]
    + [(n, Unknown(f"${n}, which Slurm sets for the job", chars=(HOST_NAMES - {"\n"}) | set("[],")))
       for n in ("SLURM_JOB_NODELIST", "SLURM_NODELIST")])


def _sbatch(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`sbatch [opts] FILE [args]` runs FILE as a batch script, `--wrap=TEXT` runs TEXT, neither:
    the script on standard input. The job's environment (`--export`) and folder (`--chdir`) go
    with it, and what Slurm sets for every job (`_JOB_ENV`): the answer is `runs` of
    `bash FILE args` / `sh -c TEXT`."""
    p = parse(args, _SLURM)
    env, _names_, clears = _export_env(p)
    env = list(_JOB_ENV) + env
    chdir = p.last("-D", "--chdir")
    where = under(chdir, cwd) if chdir is not None else None
    out = CommandEffects(writes=_slurm_writes(p, cwd), clears_env=clears)
    wraps = p.values("--wrap")
    if wraps:
        out.runs = [(("sh", "-c", text), tuple(env), where) for text in wraps]
    elif p.operands:
        out.runs = [(("bash", *p.operands), tuple(env), where)]
    else:
        out.shell_stdin = True
    return out


def _salloc(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, _SLURM)
    if not p.operands:
        return CommandEffects()
    return CommandEffects(runs=[(tuple(p.operands), (), None)])


def _sbcast(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-f -p -C --force --preserve --compress", valued="-F -j -s -t --fanout --jobid --size "
                                                                          "--timeout --exclude --send-libs"))
    if len(p.operands) != 2:
        raise _Unknown("not SOURCE DEST")
    source, dest = under(p.operands[0], cwd), under(p.operands[1], cwd)
    return CommandEffects(reads=[source], writes=[Write(dest, "copy")], copies=[Copy("file", dest, ((source, ""),))])


def _profiler(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`nsys profile [opts] CMD...`, `py-spy record [opts] -- CMD...`: runs CMD and writes the
    report (`-o`); other subcommands (`nsys stats`, `py-spy dump --pid`) only read."""
    if not args or args[0] not in ("profile", "launch", "record", "top"):
        return CommandEffects()
    p = parse(args[1:], opts(
        "-f -n -g -s --stats --native --subprocesses --idle --gil --nonblocking --trace-fork-before-exec "
        "--cuda-memory-usage --kill --wait",
        valued="-o -t -d -y -c -r -p -F -e -w --output --trace --duration --delay --capture-range --sample "
               "--cuda-graph-trace --gpu-metrics-device --gpu-metrics-devices --cudabacktrace --python-sampling "
               "--session-new --export --rate --format --pid --capture-range-end --cpuctxsw --backtrace "
               "--nvtx-capture --osrt-threshold --gpuctxsw --sampling-period --python-backtrace "
               "--pytorch --cuda-flush-interval --env-var --force-overwrite --show-output --stop-on-exit",
        stop=True))
    out = CommandEffects(writes=[Write(under(f, cwd), "create") for f in p.values("-o", "--output")])
    if p.operands:
        out.runs = [(tuple(p.operands), (), None)]
    return out


def _tmux(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`tmux new-session -d -s NAME [TEXT]`: TEXT runs as shell text; `send-keys` types into a
    pane (not interpreted); other subcommands manage sessions."""
    if not args:
        raise _Unknown("an interactive session")
    sub, rest = args[0], args[1:]
    if sub in ("new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane"):
        p = parse(rest, opts("-d -A -D -E -P -X -h -v -b -f -k -Z", valued="-s -n -c -t -x -y -F -e -l -p"))
        return _joined_text(p.operands) if p.operands else CommandEffects()
    if sub in ("kill-session", "kill-server", "kill-window", "ls", "list-sessions", "has-session", "has",
               "list-windows", "capture-pane", "attach", "attach-session", "display-message", "wait-for"):
        return CommandEffects()
    raise _Unknown(f"subcommand `{_names([sub])[0]}` is not in the vocabulary")


def _kubectl(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """kubectl: reading a cluster is harmless; what it deploys or runs there (`apply`, `create`,
    `exec`, `run`, `patch`, ...) is not interpreted."""
    words = [w for w in args if not (isinstance(w, str) and w.startswith("-"))]
    sub = words[0] if words else None
    if sub in ("get", "describe", "logs", "wait", "version", "config", "top", "port-forward", "api-resources",
               "cluster-info", "explain", "rollout", "delete", "label", "annotate"):
        return CommandEffects()
    raise _Unknown("deploys to or runs in a cluster; not interpreted")


def _sg(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`sg GROUP [-c] TEXT`: runs TEXT as shell text with GROUP as the group (`sg GROUP` alone:
    a shell on standard input)."""
    if not args:
        raise _Unknown("no group")
    rest = [w for w in args[1:] if w != "-"]
    if rest[:1] == ["-c"]:
        rest = rest[1:]
    if not rest:
        return CommandEffects(shell_stdin=True)
    if len(rest) != 1:
        raise _Unknown("more than one word of text")
    return CommandEffects(shell_text=[(rest[0], ())])
