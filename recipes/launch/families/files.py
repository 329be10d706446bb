"""Commands on files: readers, in-place editors (sed -i, perl -pi, ed, patch, awk -i inplace),
writers (cp, mv, ln, rm, tee, dd, ...) and archives (tar, unzip, gzip/xz/zstd, unsquashfs)."""
from __future__ import annotations

import posixpath
import re

from ..effects import CommandEffects, Copy, Write
from ..options import Options, Parsed, opts, parse, respelled, under
from ..words import Unknown, Word
from .common import _ASSIGNMENT, _copy, Handler, _names, _only_git, _tree_copy, _Unknown, _words


_READ = opts(risky=False)


def _jq(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`jq [opts] FILTER [FILE...]`: `--arg NAME VALUE` and its kin take two words (`--slurpfile`
    and `--rawfile` read the second); after `--args`/`--jsonargs` the operands are arguments."""
    reads: list[Word] = []
    operands: list[Word] = []
    positional = False
    k = 0
    while k < len(args):
        word = args[k]
        k += 1
        if isinstance(word, str) and word in _JQ_TWO:
            if word in ("--slurpfile", "--rawfile") and k + 1 < len(args):
                reads.append(under(args[k + 1], cwd))
            k += 2
        elif isinstance(word, str) and word in ("--indent", "-L", "--from-file", "-f"):
            if word in ("--from-file", "-f") and k < len(args):
                reads.append(under(args[k], cwd))
                operands.append("")  # the filter came from the file
            k += 1
        elif isinstance(word, str) and word in ("--args", "--jsonargs"):
            positional = True
        elif isinstance(word, str) and word.startswith("-") and word != "-":
            continue
        else:
            operands.append(word)
    files = [] if positional else operands[1:]
    return CommandEffects(reads=reads + [under(f, cwd) for f in files if f != "-"])


_JQ_TWO = frozenset({"--arg", "--argjson", "--slurpfile", "--rawfile"})


def _in_out(spec: Options) -> Handler:
    """`uniq [IN [OUT]]`: reads IN, writes OUT."""
    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        p = parse(args, spec)
        files = [under(f, cwd) for f in p.operands if f != "-"]
        return CommandEffects(reads=files[:1], writes=[Write(f, "create") for f in files[1:2]])
    return handle


_FIND_ACTS = {"-delete": "delete"}
_FIND_RUNS = ("-exec", "-execdir", "-ok", "-okdir")
_FIND_WRITES = ("-fprint", "-fprint0", "-fprintf", "-fls")
# Tests whose value is a pattern, a number or a name (any value: an unknown one changes no effect).
_FIND_VALUED = frozenset("-name -iname -path -ipath -wholename -iwholename -regex -iregex -type -xtype -maxdepth "
                         "-mindepth -newer -mtime -mmin -atime -amin -ctime -cmin -size -user -group -perm -uid "
                         "-gid -links -inum -samefile -lname -ilname -regextype -fstype -printf -print0f".split())


def _find(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`find ROOTS... EXPR`: reads the roots; `-delete` deletes under them, `-exec CMD {} ;` runs
    CMD with an unknown path, `-fprint FILE` writes FILE. An unknown word before the expression is
    a root (an unknown folder); in the expression it is not understood."""
    k = 0
    while k < len(args) and isinstance(args[k], str) and args[k] in ("-H", "-L", "-P"):
        k += 1
    roots: list[Word] = []
    while k < len(args) and (isinstance(args[k], Unknown) or not args[k].startswith(("-", "(", "!"))):
        roots.append(args[k])
        k += 1
    roots = [under(r, cwd) for r in roots] or [under(".", cwd)]
    out = CommandEffects(reads=list(roots))
    while k < len(args):
        word = args[k]
        k += 1
        if isinstance(word, Unknown):
            raise _Unknown(f"an unknown word in the expression ({word.why})")
        if word in _FIND_VALUED:
            k += 1
        elif word in _FIND_ACTS:
            out.writes += [Write(Unknown(f"files find selects under {r}"), _FIND_ACTS[word]) for r in _names(roots)]
        elif word in _FIND_WRITES:
            if k >= len(args):
                raise _Unknown(f"`{word}` without its file")
            out.writes.append(Write(under(args[k], cwd), "create"))
            k += 1
        elif word in _FIND_RUNS:
            end = next((j for j in range(k, len(args)) if args[j] in (";", "+")), None)
            if end is None:
                raise _Unknown(f"`{word}` without its `;` or `+`")
            cmd = tuple(Unknown("a path find selects") if w == "{}" else w for w in args[k:end])
            if not cmd:
                raise _Unknown(f"`{word}` without a command")
            out.runs.append((cmd, (), None))
            k = end + 1
    return out


_SED = opts("-n -E -r -s -u -z --quiet --silent --regexp-extended --separate --unbuffered --null-data --posix "
            "--debug --sandbox --follow-symlinks", valued="-e -f -l --expression --file --line-length",
            attached="-i --in-place")


def _sed(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`sed [-n] SCRIPT FILE...` reads; with `-i`/`--in-place` it edits each FILE in place."""
    p = parse(args, _SED)
    given = p.has("-e", "-f", "--expression", "--file")
    files = p.operands if given else p.operands[1:]
    scripts = p.values("-e", "--expression") if given else p.operands[:1]
    if any(isinstance(s, str) and _sed_acts(s) for s in scripts):
        raise _Unknown("a script with `e`, `w` or `r` commands (runs or writes files)")
    files = [under(f, cwd) for f in files]
    out = CommandEffects(reads=[f for f in files if f != "-"] + [under(f, cwd) for f in p.values("-f", "--file")])
    if p.has("-i", "--in-place"):
        if not files:
            raise _Unknown("`-i` with no file")
        out.writes = [Write(f, "in-place edit") for f in files]
    if p.values("-f", "--file") or any(isinstance(s, Unknown) for s in scripts):
        out.unknown = "`sed`: a script from a file (`-f`) or an unknown script, whose `w`/`e` commands are not read"
    return out


_SED_PLAIN = frozenset("dDpPnNgGhHxlz=qQF")


def _sed_acts(script: str) -> bool:
    """Whether a sed script runs a program or reads or writes a file: the `e`, `r`, `R`, `w`, `W`
    commands and the `e`/`w` flags of `s`; text the scanner cannot follow counts as acting."""
    k, n = 0, len(script)
    while k < n:
        c = script[k]
        if c in " \t\n;}!":
            k += 1
            continue
        if c.isdigit() or c in "$,+~":
            k += 1
            continue
        if c in "/\\":  # an address /re/ or \cREc
            delim = "/" if c == "/" else (script[k + 1] if k + 1 < n else "")
            k = _sed_part(script, k + (1 if c == "/" else 2), delim)
            while k < n and script[k] in "IM":
                k += 1
            continue
        if c == "{":
            k += 1
        elif c in _SED_PLAIN:
            k += 1
            while k < n and script[k].isdigit():
                k += 1
        elif c in ":btT":
            k = _sed_line_end(script, k + 1, stop_at_semicolon=True)
        elif c in "aic":
            # Its text runs to the end of the line, and on over each line that ends in `\`
            # (`a\` then the text lines, GNU and POSIX).
            k = _sed_line_end(script, k + 1, stop_at_semicolon=False)
            while k < n and script[k - 1] == "\\":
                k = _sed_line_end(script, k + 1, stop_at_semicolon=False)
        elif c in "sy":
            if k + 1 >= n:
                return True
            delim = script[k + 1]
            k = _sed_part(script, _sed_part(script, k + 2, delim), delim)
            if c == "s":
                flags_end = k
                while flags_end < n and script[flags_end] not in ";\n}":
                    flags_end += 1
                if any(f in script[k:flags_end] for f in "ew"):
                    return True
                k = flags_end
        else:
            return True  # e r R w W, or what the scanner cannot read
    return False


def _sed_part(script: str, k: int, delim: str) -> int:
    """The index after the closing `delim` of a regex or replacement starting at `k`."""
    while k < len(script):
        if script[k] == "\\":
            k += 2
            continue
        if script[k] == delim:
            return k + 1
        k += 1
    return k


def _sed_line_end(script: str, k: int, *, stop_at_semicolon: bool) -> int:
    while k < len(script) and script[k] != "\n" and not (stop_at_semicolon and script[k] in ";}"):
        k += 1
    return k


def _perl(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`perl -pi -e CODE FILE...` edits each FILE in place; perl code that could do more than edit
    the lines it is given (system, open, backticks, unlink, ...) is not interpreted."""
    p = parse(_perl_clusters(args), opts("-p -n -a -w -s -T -t -W -X -U -c", valued="-e -E -M -I -m -F -x",
                                         attached="-i -0 -l -C", stop=True))
    codes = p.values("-e", "-E")
    operands = p.operands
    if not codes:
        if not operands:
            raise _Unknown("perl reading its program from standard input")
        return CommandEffects(programs=[(name, tuple(args))])
    if p.values("-M", "-m") or any(not isinstance(c, str) or _PERL_MORE.search(c) for c in codes):
        raise _Unknown("perl code that could do more than edit lines")
    files = [under(f, cwd) for f in operands]
    out = CommandEffects(reads=[f for f in files if f != "-"])
    if p.has("-i"):
        out.writes = [Write(f, "in-place edit") for f in files]
    return out


def _perl_clusters(args: list[Word]) -> list[Word]:
    """perl's `-0` and `-l` take only digits (`-0777`, `-l012`): `-0pi` is `-0 -pi`."""
    out: list[Word] = []
    for k, w in enumerate(args):
        if not isinstance(w, str) or w == "--" or not w.startswith("-"):
            return out + list(args[k:])
        m = re.fullmatch(r"-([0l])(x[0-9A-Fa-f]*|[0-7]*)([A-Za-z].*)", w)
        out += [f"-{m.group(1)}{m.group(2)}", f"-{m.group(3)}"] if m else [w]
    return out


_PERL_MORE = re.compile(r"\b(?:system|exec|open|unlink|rename|require|use|do|eval|qx|mkdir|rmdir|link|symlink|"
                        r"chmod|chown|truncate|syscall|fork|kill)\b|`|\bprint\s*\{|>\s*\$")


def _ed(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`ed FILE`, `ex -s -c CMD FILE`, `vim -c CMD FILE`: edits each FILE in place (the commands
    come from standard input or `-c`; whether they write is not read)."""
    cleaned: list[Word] = []
    skip = False
    for k, w in enumerate(args):
        if skip:
            skip = False
            continue
        if isinstance(w, str) and w in ("-c", "-S", "-u", "-i", "-s", "-p", "-w", "-W", "-T", "--cmd"):
            skip = w not in ("-s",) and k + 1 < len(args)
            continue
        if isinstance(w, Unknown) or not w.startswith(("-", "+")):
            cleaned.append(w)
    files = [under(f, cwd) for f in cleaned]
    if not files:
        raise _Unknown("no file to edit")
    return CommandEffects(reads=list(files), writes=[Write(f, "in-place edit") for f in files])


def _patch(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`patch [-pN] [-d DIR] [-i PATCH | < PATCH] [FILE [PATCH]]`: edits the files the patch names
    (under DIR), FILE when given, or writes `-o OUT`."""
    p = parse(args, opts("-R -N -E -f -s -t -u -c -n -l -e -b -F --forward --reverse --dry-run --quiet --silent "
                         "--batch --force --unified --ignore-whitespace --no-backup-if-mismatch --backup --verbose "
                         "--binary --posix", valued="-p -d -i -o -r -D -B -z -V -Y --strip --directory --input "
                                                   "--output --reject-file --fuzz --suffix --prefix",
                         attached="-F"))
    base = p.last("-d", "--directory")
    where = under(base, cwd) if base is not None else cwd
    reads = [under(f, where) for f in p.values("-i", "--input")]
    if p.has("--dry-run"):
        return CommandEffects(reads=reads)
    if len(p.operands) > 1:
        reads.append(under(p.operands[1], where))
    if p.values("-o", "--output"):
        outputs = p.values("-o", "--output")
        return CommandEffects(reads=reads, writes=[Write(under(f, where), "create") for f in outputs])
    if p.operands:
        return CommandEffects(reads=reads, writes=[Write(under(p.operands[0], where), "in-place edit")])
    target = where if base is not None and where is not None else \
        Unknown(f"the files the patch names ({_words(name, args)})")
    return CommandEffects(reads=reads, writes=[Write(target, "in-place edit")])


def _awk(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("--posix --traditional --sandbox -S -N -b -c -P -r -O",
                         valued="-F -v -f --field-separator --assign --file -i --include -l -E"))
    if p.values("-i", "--include"):
        if any(v == "inplace" for v in p.values("-i", "--include")):
            files = [under(f, cwd) for f in (p.operands if p.values("-f", "--file") else p.operands[1:])]
            return CommandEffects(reads=list(files), writes=[Write(f, "in-place edit") for f in files])
        raise _Unknown("an awk library (`-i`)")
    program_files = p.values("-f", "--file", "-E")
    programs = [] if program_files else p.operands[:1]
    if any(not isinstance(t, str) or _AWK_ACTS.search(t) for t in programs):
        raise _Unknown("an awk program that writes files or runs commands (`>`, `|`, `system`)")
    if program_files:
        raise _Unknown("an awk program from a file")
    files = [under(f, cwd) for f in p.operands[1:] if not (isinstance(f, str) and _ASSIGNMENT.match(f))]
    return CommandEffects(reads=[f for f in files if f != "-"])


# `print > "f"`, `printf ... >> f`, `print | "cmd"`, `system(...)`, `"cmd" | getline`: acts beyond stdout.
_AWK_ACTS = re.compile(r"\bsystem\s*\(|\|\s*getline|\bprintf?\b[^;{}]*(?:>|\|)|\bclose\s*\(|\bfflush\s*\(\s*\"")


def _mode_given(p: Parsed) -> bool:
    """Whether the first operand of chmod/chown is the mode or owner: not with `--reference`, nor
    when the mode was spelled like an option (`chmod -x FILE`: `-x` is read as the mode)."""
    return not p.has("--reference", "-r", "-w", "-x", "-X", "-s", "-t")


_MODE = opts("-R -v -c -f -h --recursive --verbose --changes --silent --quiet --no-dereference --dereference",
             valued="--reference --from", risky=False)


def _install(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-d -D -c -C -p -s -v -b --directory --compare --preserve-timestamps --strip --verbose",
                         valued="-m -o -g -t -S --mode --owner --group --target-directory --suffix"))
    if p.has("-d", "--directory"):
        return CommandEffects(writes=[Write(under(f, cwd), "create") for f in p.operands])
    return _copy(opts(), "copy")(name, [*p.operands, *p.values("-t", "--target-directory")], cwd)


_CP = opts("-r -R -a -f -i -n -p -P -L -H -l -s -u -v -x -b -T -d --recursive --archive --force --no-clobber "
           "--parents --preserve --no-dereference --dereference --update --verbose --remove-destination "
           "--no-target-directory --link --symbolic-link",
           valued="-t -S --target-directory --suffix --backup", attached="--preserve --reflink --sparse")
_cp_words = _copy(_CP, "copy")


def _cp(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`cp`: reads its sources, writes the last operand; with one source, where its files land when
    cp says it exactly (`Copy`): `-T` (DEST is the copy), `-t DIR` (DIR/NAME), a folder's `SRC/.`
    (its contents into DEST). `cp -r SRC DEST` lands at DEST/SRC when DEST exists, which is not
    known: no `Copy`. Links and `--parents` copy no files' text."""
    out = _cp_words(name, args, cwd)
    p = parse(args, _CP)
    if len(p.operands) != 2 - bool(p.values("-t", "--target-directory")) or \
            p.has("--parents", "-l", "-s", "--link", "--symbolic-link"):
        return out
    source, dest = under(p.operands[0], cwd), out.writes[0].path
    folder = p.has("-r", "-R", "-a", "--recursive", "--archive")
    if isinstance(source, Unknown) or isinstance(dest, Unknown) and p.values("-t", "--target-directory"):
        return out
    if p.values("-t", "--target-directory"):
        dest = posixpath.join(dest, posixpath.basename(source))
    elif not p.has("-T", "--no-target-directory") and not (folder and _contents(p.operands[0])):
        return out
    out.copies = [_tree_copy(source, dest) if folder else Copy("file", dest, ((source, ""),))]
    return out


def _contents(word: Word) -> bool:
    """`SRC/.`: the folder's contents, wherever the destination is."""
    return isinstance(word, str) and (word == "." or word.endswith("/."))


def _tee(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-a -i -p --append --ignore-interrupts", attached="--output-error", risky=False))
    how = "append" if p.has("-a", "--append") else "create"
    return CommandEffects(writes=[Write(under(f, cwd), how) for f in p.operands])


def _dd(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    out = CommandEffects()
    for w in args:
        if isinstance(w, Unknown):
            raise _Unknown(f"an unknown operand ({w.why})")
        key, eq, value = w.partition("=")
        if not eq or key not in ("if", "of", "bs", "ibs", "obs", "count", "skip", "seek", "conv", "status",
                                 "iflag", "oflag", "cbs"):
            raise _Unknown(f"operand `{w}` is not in the vocabulary")
        if key == "if":
            out.reads.append(under(value, cwd))
        elif key == "of":
            out.writes.append(Write(under(value, cwd), "create"))
    return out


def _mktemp(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-d -u -q -t --directory --dry-run --quiet", valued="-p --tmpdir --suffix"))
    if p.has("-u", "--dry-run"):
        return CommandEffects()
    folder = p.last("-p", "--tmpdir") or "/tmp"
    template = p.operands[0] if p.operands else "tmp.XXXXXXXXXX"
    if isinstance(template, str) and "/" in template and not p.has("-t", "-p", "--tmpdir"):
        path: Word = Unknown(f"a new file named like {template}")
    else:
        path = Unknown(f"a new file in {folder if isinstance(folder, str) else '<?>'}")
    return CommandEffects(writes=[Write(path, "create")])


def _mount(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-a -r -w -v -f -n -l -R -B --bind --rbind --move -M", valued="-t -o -L -U --types "
                                                                                   "--options"))
    if not p.operands:
        return CommandEffects()
    return CommandEffects(writes=[Write(under(p.operands[-1], cwd), "mount")])


def _sysctl(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-w -a -n -e -q -p --write --all --values", risky=False))
    sets = [w for w in p.operands if not isinstance(w, str) or "=" in w]
    return CommandEffects(writes=[Write(Unknown(f"kernel parameter {_names([w])[0]}"), "in-place edit") for w in sets])


def _tar(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`tar -x[z]f A [-C DIR]` unpacks into DIR; `tar -c[z]f A FILES` writes A; `tar -t` reads."""
    if args and isinstance(args[0], str) and args[0] and not args[0].startswith("-"):
        args = ["-" + args[0], *args[1:]]  # the old bundled form: `tar xzf A`
    p = parse(args, opts(
        "-x -c -t -r -u -z -j -J -v -p -k -m -h -P -O -a -S -o --extract --get --create --list --append --update "
        "--gzip --bzip2 --xz --zstd --verbose --preserve-permissions --keep-old-files --overwrite --no-same-owner "
        "--same-owner --touch --dereference --absolute-names --to-stdout --auto-compress --skip-old-files "
        "--numeric-owner --no-same-permissions --no-overwrite-dir --recursive-unlink --unlink-first --wildcards "
        "--anchored",
        valued="-f -C -T -X -b --file --directory --files-from --exclude-from --strip-components --exclude "
               "--owner --group --mode --transform --xform --blocking-factor --warning"))
    mode = [m for m in ("x", "c", "t", "r", "u") if p.has(f"-{m}", *_TAR_LONG[m])]
    if len(mode) != 1:
        raise _Unknown("cannot tell whether it extracts, creates or lists")
    archive = p.last("-f", "--file")
    folder = p.last("-C", "--directory")
    where = under(folder, cwd) if folder is not None else (cwd if cwd is not None else ".")
    arch = under(archive, cwd) if archive is not None and archive != "-" else None
    # Whether the archive's members are the files as named (no renaming, nothing left out but
    # `.git`, no absolute names, no list of names from a file).
    exact = _only_git(p.values("--exclude")) and not p.values("--transform", "--xform", "--strip-components",
                                                                  "-X", "--exclude-from", "-T", "--files-from") \
        and not p.has("-P", "--absolute-names")
    if mode == ["x"]:
        out = CommandEffects(reads=[arch] if arch is not None else [])
        if not p.has("-O", "--to-stdout"):
            out.writes = [Write(where, "unpack")]
            if arch is not None and exact and not p.operands:
                out.copies = [Copy("unpack", where, ((arch, ""),))]
        return out
    if mode == ["t"]:
        return CommandEffects(reads=[arch] if arch is not None else [])
    files = [under(f, where) for f in p.operands] + [under(f, cwd) for f in p.values("-T", "--files-from")]
    out = CommandEffects(reads=files, writes=[Write(arch, "create")] if arch is not None else [])
    if mode == ["c"] and arch is not None and exact and p.operands:
        members = [_member(f) for f in p.operands]
        if all(m is not None for m in members):
            out.copies = [Copy("pack", arch, tuple((f, m) for f, m in zip(files, members) if m is not None))]
    return out


def _member(operand: Word) -> str | None:
    """The name `tar -c` gives an operand's files in the archive (`.` and `./`: none; `a/b`:
    `a/b`), or None when it is not a plain relative path."""
    if not isinstance(operand, str) or operand.startswith("/") or not operand:
        return None
    name = posixpath.normpath(operand)
    if name == ".":
        return ""
    return None if name.startswith("..") else name


_TAR_LONG = {"x": ("--extract", "--get"), "c": ("--create",), "t": ("--list",), "r": ("--append",),
             "u": ("--update",)}


def _unzip(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    p = parse(args, opts("-o -n -q -qq -j -l -t -v -u -f -a -C -L -X -Z -p", valued="-d -x"))
    if not p.operands:
        raise _Unknown("no archive")
    archive = under(p.operands[0], cwd)
    if p.has("-l", "-t", "-v", "-Z", "-p"):
        return CommandEffects(reads=[archive])
    folder = p.last("-d")
    where = under(folder, cwd) if folder is not None else (cwd if cwd is not None else ".")
    return CommandEffects(reads=[archive], writes=[Write(where, "unpack")])


def _decompress(suffixes: tuple[str, ...], *, compress: bool) -> Handler:
    """gzip/xz/zstd/bzip2 and their `-d` forms: replaces FILE by FILE.gz (or the reverse);
    `-c`/`--stdout`/`-t`/`-l` write nothing."""
    spec = opts("-d -c -f -k -q -v -t -l -r -n -N -1 -2 -3 -4 -5 -6 -7 -8 -9 -T0 --decompress --uncompress "
                "--stdout --to-stdout --force --keep --quiet --verbose --test --list --rm --fast --best",
                valued="-o -S --suffix -T --threads")

    def handle(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
        p = parse(args, spec)
        files = [under(f, cwd) for f in p.operands if f != "-"]
        out = CommandEffects(reads=list(files))
        if p.has("-c", "--stdout", "--to-stdout", "-t", "--test", "-l", "--list"):
            return out
        unpack = not compress or p.has("-d", "--decompress", "--uncompress")
        for f in files:
            target = p.last("-o") or _renamed(f, suffixes, unpack)
            out.writes += [Write(under(target, cwd), "unpack" if unpack else "create"), Write(f, "delete")]
        return out
    return handle


def _renamed(path: Word, suffixes: tuple[str, ...], unpack: bool) -> Word:
    if isinstance(path, Unknown):
        return path
    if not unpack:
        return path + suffixes[0]
    for suffix in suffixes:
        if path.endswith(suffix):
            return path[:-len(suffix)]
    return Unknown(f"{path} without its suffix")


def _unsquashfs(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`unsquashfs [-f] [-d DIR] IMAGE` (its long options are spelled with one dash: `-dest`)."""
    p = parse(respelled(args, _UNSQUASHFS_LONG),
              opts("-f -q -n -l -s --force --quiet --no-progress --no-xattrs --ll --lls",
                   valued="-d -p --dest --processors"))
    if not p.operands:
        raise _Unknown("no image")
    folder = p.last("-d", "--dest") or "squashfs-root"
    return CommandEffects(reads=[under(p.operands[0], cwd)], writes=[Write(under(folder, cwd), "unpack")])


_UNSQUASHFS_LONG = {w: "-" + w for w in ("-dest", "-force", "-quiet", "-no-progress", "-no-xattrs", "-processors",
                                         "-ll", "-lls")}


def _yq(name: Word, args: list[Word], cwd: Word | None) -> CommandEffects:
    """`yq [eval] [-i] EXPR FILE...` (mikefarah's yq; also python-yq's `-y`/`--in-place`): reads
    the files, and with `-i` edits them in place."""
    words = args[1:] if args[:1] in (["eval"], ["e"], ["eval-all"], ["ea"]) else args
    p = parse(words, opts("-i -P -r -y -Y -e -n -N -M -C -j -I --inplace --in-place --prettyPrint --raw-output "
                          "--null-input --no-doc --exit-status --unwrapScalar --yaml-output --no-colors --colors",
                          valued="-o -p --output-format --input-format --indent --arg --argjson --from-file "
                                 "--front-matter --expression"))
    if p.values("--from-file"):
        raise _Unknown("an expression from a file")
    exprs = p.values("--expression") or p.operands[:1]
    files = [under(f, cwd) for f in (p.operands if p.values("--expression") else p.operands[1:]) if f != "-"]
    out = CommandEffects(reads=list(files))
    if any(isinstance(e, str) and "load(" in e for e in exprs):
        out.unknown = "`yq`: an expression that loads other files"
    if p.has("-i", "--inplace", "--in-place"):
        if not files:
            raise _Unknown("`-i` with no file")
        out.writes = [Write(f, "in-place edit") for f in files]
    return out
