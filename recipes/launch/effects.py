"""What one command does, as the vocabulary describes it (`vocabulary.effects(argv)`).

The interpreter expands a command's words, handles shell builtins itself, calls functions the
scripts define, and asks the vocabulary about every other command name. The answer lists the
command's effects on the world in terms the checks understand: files read, files written (and
how), other commands it runs (wrappers such as `env`, `timeout`, `nohup`, `srun`), shell text
it runs (`bash -c TEXT`, `sh -s <<EOF`), Python it runs, downloads, package installs and
container launches. Paths and arguments are `Word`s: an unknown path stays unknown, so an
unknown write target is an unknown effect, never no effect.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .words import Word


@dataclass(frozen=True)
class Write:
    """A file or folder the command writes. `how`: "copy", "move", "link", "redirect",
    "in-place edit", "unpack", "checkout", "create", "delete", "download", "append", "mode"."""

    path: Word
    how: str


@dataclass(frozen=True)
class Copy:
    """What a copy puts where, when the command says it exactly (`recipes.launch.fs.Files.copy`):
    - "tree": the files of `sources[0]` (a folder or a file) land at `dest` (`cp -rT SRC DEST`,
      `cp -r SRC/. DEST`, `rsync -a SRC/ DEST/`);
    - "pack": `dest` is an archive holding each source under its member name (`tar -C SRC -czf
      DEST .`: `.` is the member "");
    - "file": the file `sources[0]` is copied to the file `dest` (an archive's copy is that archive);
    - "unpack": the archive `sources[0]` is extracted into the folder `dest`;
    - "commit": a clone of the git work tree `sources[0]` is made at `dest` (its committed files).
    A copy whose layout the bot cannot be sure of (`cp -r SRC DEST`: DEST/SRC when DEST exists),
    or that leaves files out (`--exclude` of anything but `.git`), has no `Copy`."""

    kind: str
    dest: Word
    sources: tuple[tuple[Word, str], ...]  # (path, member name in the archive; "" but for "pack")


@dataclass(frozen=True)
class Download:
    """A network fetch: `url` saved to `dest` (None: to standard output)."""

    url: Word
    dest: Word | None = None


@dataclass(frozen=True)
class Install:
    """A package install. `manager`: "pip", "uv", "apt", "conda", "npm", ...; `packages`: the
    requirement words as given (a path, a URL, `-e DIR`, `git+https://...` included); `index`:
    the index URLs/options given (`--index-url`, `--extra-index-url`, `-f`), empty when none."""

    manager: str
    packages: tuple[Word, ...]
    index: tuple[Word, ...] = ()
    editable: bool = False


@dataclass(frozen=True)
class PythonRun:
    """Python started by the command: exactly one of `module` (`-m M`), `script` (a file) or
    `code` (`-c TEXT`) is set (none of them: Python reads its program from standard input);
    `argv` are the program's own arguments."""

    module: Word | None = None
    script: Word | None = None
    code: Word | None = None
    argv: tuple[Word, ...] = ()


@dataclass(frozen=True)
class Container:
    """A container the command starts (`docker run`, `podman run`, `srun --container-image`,
    `enroot start`, `apptainer exec`, ...): what crosses into it and what it runs there."""

    image: Word
    env: tuple[tuple[str, Word], ...] = ()   # NAME=value given on the way in (value Unknown when
                                             # passed through from the host by name: see `env_from_host`)
    env_from_host: tuple[str, ...] = ()      # `-e NAME` / `--export=NAME` / `--env-file` names
    env_files: tuple[Word, ...] = ()
    mounts: tuple[tuple[Word, Word], ...] = ()  # (host path, container path)
    workdir: Word | None = None
    entrypoint: Word | None = None
    argv: tuple[Word, ...] = ()              # the command run inside (empty: the image's default)
    # Whether the process inside starts with the caller's whole environment (pyxis `srun
    # --container-image` does, as srun's `--export=ALL` default; `docker run` does not).
    inherits_env: bool = False


@dataclass
class CommandEffects:
    """The vocabulary's answer for one expanded argv."""

    reads: list[Word] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    # Another command this one runs with the rest of its words (`env A=1 cmd`, `timeout 5 cmd`,
    # `nohup cmd`, `xargs cmd`, `srun [opts] cmd`): (argv, env assignments it adds, cwd or None).
    runs: list[tuple[tuple[Word, ...], tuple[tuple[str, Word], ...], Word | None]] = field(default_factory=list)
    # What `runs` starts with removed from the environment it inherits: the names (`env -u X`) and
    # whether all of it is (`env -i`, `srun --export=NONE`, `sudo` without `-E`: sudo keeps only
    # a few variables such as PATH and HOME).
    unsets: tuple[str, ...] = ()
    clears_env: bool = False
    # Shell text it runs (`bash -c TEXT`, `su -c TEXT`, `ssh host TEXT`): (text, positional args).
    shell_text: list[tuple[Word, tuple[Word, ...]]] = field(default_factory=list)
    # A shell script file it runs (`bash FILE args`, `sh FILE`): (path, args).
    shell_files: list[tuple[Word, tuple[Word, ...]]] = field(default_factory=list)
    # The command reads shell code from standard input (`bash -s`, `sh` with no file, `| bash`).
    shell_stdin: bool = False
    python: list[PythonRun] = field(default_factory=list)
    downloads: list[Download] = field(default_factory=list)
    installs: list[Install] = field(default_factory=list)
    containers: list[Container] = field(default_factory=list)
    # Runs a program by path that is not a shell or Python file the vocabulary knows (`./x`,
    # `/opt/tool/run`): the program word and its args.
    programs: list[tuple[Word, tuple[Word, ...]]] = field(default_factory=list)
    # What it copies where, when the copy is exact (the files it copies are also in `reads`
    # and `writes`): a copy of the checkout somewhere else is the checkout there.
    copies: list[Copy] = field(default_factory=list)
    # Set when the command (or an option of it) is not understood: the reason. The interpreter
    # reports it as an unknown naming the line; nothing else in this answer is then complete.
    unknown: str | None = None
