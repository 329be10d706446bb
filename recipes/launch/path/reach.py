"""Which files can lead to a changed one: text filters that spare building launch paths that
cannot hold a changed file (recipes.launch.path.launch_path, rule 3). Only filters: the affected rule itself
reads the launch path, never text; a filter may keep too much, never too little."""
from __future__ import annotations

import posixpath
import re
from typing import Any, Iterable

from recipes.launch.path.conditions import VAR_REF
from recipes.launch.path.launch_path import MAX_SCAN_BYTES, SHELL_SUFFIXES, FileChange
from recipes.launch.text import _trim
from recipes.identity import by_identity
from recipes.scripts import code_text, code_units


def reach_names(repo: Any, src: Any, targets: Iterable[str]) -> set[str]:
    """File names that can lead to a target: the targets' own names, then every shell file
    (under the scripts folder and runners/) whose code names one already in the set, to a
    fixpoint. Only a filter that spares building launch paths that cannot hold a target; the
    rule itself reads the launch path, never text.

    A name only a comment holds does not count (comments never run; `# launch_mi355x-amds.sh
    derives PORT ...` in benchmark_lib.sh made every launcher a candidate for a change of the
    AMD runner's scripts): a file all of whose mentions of the names sit after a `#` on their
    line is parsed once and read again without its comments."""
    names = {t.rsplit("/", 1)[-1] for t in targets}
    texts = _shell_texts(repo, src)
    if texts is None:
        return set()
    codes = _code_texts(repo, src)
    # Whether a file names one of a set is whether it names one of any part of it: each round
    # asks the files still out only about the names the last round added.
    fresh = set(names)
    while fresh:
        added: set[str] = set()
        for path, text in texts.items():
            name = path.rsplit("/", 1)[-1]
            if name not in names and name not in added and _names_one(codes, path, text, fresh):
                added.add(name)
        names |= added
        fresh = added
    return names


def affected_names(repo: Any, src: Any, changes: dict[str, FileChange]) -> set[str]:
    """`reach_names` of the changed files, where a shell file changed only inside functions
    counts through the names of those functions instead of its own name (launch_path rule 4:
    sourcing such a file runs none of the change; calling a changed function does).

    For each such file: `called` = its changed functions, then every function of the file
    whose body names one already in the set, to a fixpoint. The file itself stays a target
    only when its top-level code names one of them. Every other shell file whose code names
    one is a target, and the names join the result, so a recipe's inline command or a file
    naming one stays a candidate too, and so does a file that glues a word from literal parts
    that all occur in one such name (`build_${kind}_cmd`). A benchmark_lib.sh edit inside
    `build_replay_cmd` leaves the ~200 launchers that source the library without calling it
    out of the candidates."""
    targets: set[str] = set()
    called: set[str] = set()
    libraries: set[str] = set()
    for path, change in changes.items():
        inside = _function_closure(src, path, change)
        if inside is None:
            targets.add(path)
            continue
        functions, from_top = inside
        called |= functions
        libraries.add(path)
        if from_top:
            targets.add(path)
    if called:
        texts = _shell_texts(repo, src)
        if texts is None:
            return set()
        codes = _code_texts(repo, src)
        targets.update(path for path, text in texts.items()
                       if path not in libraries and (_names_one(codes, path, text, called)
                                                     or _assembles_one(text, called)))
    return reach_names(repo, src, targets) | called


# Where a literal part and an expansion meet inside one word: `d_$x`, `d_${x}`, `${x}_d`.
# Each branch starts with its literal (`$`, `}`) and looks around it, so the scan jumps from
# one `$` or `}` to the next (a leading character class made it try every position: 0.1 s
# over the ~260 scripts of 6816ed05f2, against 0.035 s).
_JUNCTION = re.compile(r"\$(?<=[A-Za-z0-9_]\$)\{?[A-Za-z_]|\}(?=[A-Za-z0-9_])")
_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_${}")


def _assembles_one(text: str, names: set[str]) -> bool:
    """Whether the text glues a word whose literal parts all occur in one of `names`
    (`build_${kind}_cmd` for `build_replay_cmd`): the walker expands such a word when it knows
    the variable, so the filter keeps the file. Comments are not told apart here. Only the
    places where a literal part touches an expansion are visited (matching every word of the
    ~260 scripts took 0.7 s)."""
    seen: set[str] = set()
    for m in _JUNCTION.finditer(text):
        a = b = m.start()
        while a > 0 and text[a - 1] in _WORD_CHARS:
            a -= 1
        while b < len(text) and text[b] in _WORD_CHARS:
            b += 1
        word = text[a:b]
        if word in seen:
            continue
        seen.add(word)
        parts = [p for p in VAR_REF.sub("\0", word).split("\0") if p]  # the literal parts
        if parts and sum(map(len, parts)) >= 3 and any(all(p in n for p in parts) for n in names):
            return True
    return False


def _function_closure(src: Any, path: str, change: FileChange) -> tuple[set[str], bool] | None:
    """The functions of a shell file changed only inside functions that can run its change (the
    changed ones and, within the file, their callers), and whether its top level names one;
    None when the change is not confined to functions or the file cannot be split."""
    if change.whole is not None or change.top or not change.functions:
        return None
    try:
        data = src.read(path)
    except Exception:  # noqa: BLE001 - unreadable: the whole file stays a target
        return None
    units = code_units(data.decode("utf-8", "replace")) if data is not None else None
    if units is None:
        return None
    found = set(change.functions)
    grew = True
    while grew:
        grew = False
        for name, body in units.functions.items():
            if name not in found and (any(n in body for n in found) or _assembles_one(body, found)):
                found.add(name)
                grew = True
    return found, any(n in units.top for n in found) or _assembles_one(units.top, found)


def _names_one(codes: dict[str, str], path: str, text: str, names: set[str]) -> bool:
    """Whether the code of a shell file names one of `names`. Only a file all of whose
    mentions sit after a `#` on their line is parsed to tell comments from code."""
    found = []
    for n in names:
        if n in text:
            if _outside_hash(text, n):
                return True
            found.append(n)
    if not found:
        return False
    if path not in codes:
        code = code_text(text)
        codes[path] = text if code is None else code  # unparsable: the whole text counts
    return any(n in codes[path] for n in found)


def _outside_hash(text: str, name: str) -> bool:
    """Whether some mention of `name` has no `#` before it on its line (it cannot be in a comment)."""
    at = text.find(name)
    while at >= 0:
        if "#" not in text[text.rfind("\n", 0, at) + 1:at]:
            return True
        at = text.find(name, at + 1)
    return False


@by_identity(8)
def _code_texts(repo: Any, src: Any) -> dict[str, str]:
    """The shell files' texts without comments, for one repository view (filled lazily)."""
    return {}


@by_identity(8)
def _shell_texts(repo: Any, src: Any) -> dict[str, str] | None:
    """Every shell file's text under the scripts folder and runners/, read once per repository
    view (a review asks for the changed scripts' names, then the settings files'); None when
    a folder cannot be listed."""
    files: list[str] = []
    texts: dict[str, str] | None = {}
    for directory in (repo.layout.scripts_dir, repo.layout.rel("runners")):
        try:
            files.extend(p for p in src.list(directory) if p.endswith(SHELL_SUFFIXES))
        except Exception:  # noqa: BLE001 - no listing: every root stays a candidate
            texts = None
            break
    for path in dict.fromkeys(files) if texts is not None else ():
        try:
            data = src.read(path)
        except Exception:  # noqa: BLE001
            data = None
        if data is not None and len(data) <= MAX_SCAN_BYTES:
            texts[path] = data.decode("utf-8", "replace")
    return texts


def may_name(repo: Any, path: str, names: set[str]) -> bool:
    """Whether the recipe file at `path` can name one of `names` in a value: its text holds one,
    or a backslash (a double-quoted YAML escape can spell a name its text does not hold).
    Asked once per recipe for one set of names (the points of a recipe share it)."""
    memo = _named_recipes(repo, names)
    if path not in memo:
        memo[path] = _names_in(repo, path, names)
    return memo[path]


@by_identity(8)
def _named_recipes(repo: Any, names: set[str]) -> dict[str, bool]:
    """The answers of `may_name` for one repository view and one set of names (filled lazily)."""
    return {}


def _names_in(repo: Any, path: str, names: set[str]) -> bool:
    try:
        data = repo.src.read(path)
    except Exception:  # noqa: BLE001 - unreadable here: read it the usual way
        return True
    if data is None or b"\\" in data:
        return True
    return _finder(names)(data)


@by_identity(8)
def _finder(names: set[str]) -> Any:
    """Whether bytes hold one of `names`, for one set of names (a few hundred when a shared
    library changed, asked of every recipe). A name with a dot is found where its last dot
    part (`.sh`) occurs, by the text ending there; the others one by one."""
    by_tail: dict[bytes, dict[int, set[bytes]]] = {}
    plain: list[bytes] = []
    for n in names:
        raw = n.encode()
        dot = raw.rfind(b".")
        if dot < 0:
            plain.append(raw)
        else:
            by_tail.setdefault(raw[dot:], {}).setdefault(len(raw), set()).add(raw)

    def holds(data: bytes) -> bool:
        for tail, by_len in by_tail.items():
            at = data.find(tail)
            while at >= 0:
                end = at + len(tail)
                if any(data[end - size:end] in found for size, found in by_len.items() if size <= end):
                    return True
                at = data.find(tail, at + 1)
        return any(n in data for n in plain)

    return holds


# A word a command runs or sources (`source "$helper"`, `bash "${parts[0]}/x.sh"`, `. $DIR/env.sh`)
# that holds an expansion: the textual path cannot tell which file it names.
_RUN_WORD = r"(?:source|\.|bash|sh|exec|command)[ \t]+(?:-[A-Za-z]+[ \t]+)*(\S[^\n]*)"
_DYNAMIC_RUN = re.compile(r"(?:^|[\s;&|(!{])" + _RUN_WORD, re.M)
# The same matches past the text's first character: a match at a line start begins at the
# newline before it (`\s`), so `^` only adds the text's start, and without it the scan skips in
# C to the characters a match can start with (half the time over a review's ~260 scripts).
_DYNAMIC_RUN_ON = re.compile(r"[\s;&|(!{]" + _RUN_WORD)


def _dynamic_runs(text: str) -> Iterable[re.Match]:
    """`_DYNAMIC_RUN.finditer(text)`."""
    first = _DYNAMIC_RUN.match(text)
    if first is not None:
        yield first
    yield from _DYNAMIC_RUN_ON.finditer(text, first.end() if first is not None else 0)


_COMMENT = re.compile(r"(?:^|\s)#")
_FIRST_WORD = re.compile(r"""([^\s'"();&|<>]|"[^"]*"|'[^']*')+""")


def _run_word(arg: str) -> str | None:
    """The word a run or source command names, quotes dropped, when it holds an expansion: a
    command substitution (`"$(IFS=/; echo ...)"`) is any text; None for a plain word."""
    if arg.lstrip("\"'").startswith(("$(", "`")):
        return "$_"  # a variable no point gives: any name
    m = _FIRST_WORD.match(arg)
    word = m.group(0).replace('"', "").replace("'", "") if m else ""
    return word if "$" in word or "`" in word else None


def blind_files(repo: Any, src: Any, targets: Iterable[str]) -> set[str]:
    """The shell files (under the scripts folder and runners/) whose code runs or sources a word
    built from expansions that can name one of `targets`: `source "$helper"` after
    `printf -v helper ...`, a path from an array, `. "$DIR/${NAME}.sh"`. The textual launch path
    cannot follow such a word; the trace can (recipes.launch.path.trace_affected.probe). A job constant
    (`$GITHUB_WORKSPACE`, `$HOME`) is its value; any other expansion may be anything, so
    `$GITHUB_WORKSPACE/.venv/bin/activate` names no target and `$helper` names every one."""
    from recipes.launch.path.launch_path import _SELF_DIR
    from recipes.launch.fs import WORKSPACE
    from recipes.launch.point import JOB_CONSTANTS

    targets = tuple(targets)
    texts = _shell_texts(repo, src)
    if not targets or texts is None:
        return set()
    out: set[str] = set()
    for path, text in texts.items():
        if "$" not in text and "`" not in text:
            continue
        # The raw text, a match after a ` #` or a line-leading `#` skipped (a comment): parsing
        # every script to strip its comments cost a review more than the probes it spares.
        for m in _dynamic_runs(text):
            if "$" not in m.group(1) and "`" not in m.group(1):
                # A plain word (every spelling of "my own folder" starts with `$`): `_run_word`
                # gives None, so the line is not read.
                continue
            line = text[text.rfind("\n", 0, m.start()) + 1:m.start()]
            if _COMMENT.search(line):
                continue
            # "My own folder" spelled with `$(dirname "$0")` and the like is known: the
            # textual path resolves it.
            word = _run_word(_SELF_DIR.sub(lambda _: posixpath.dirname(f"{WORKSPACE}/{path}"), m.group(1)))
            if word is None:
                continue
            rx = built_name_pattern(word, JOB_CONSTANTS)
            if any(rx.fullmatch(t) or rx.fullmatch(f"{WORKSPACE}/{t}") or rx.fullmatch(t.rsplit("/", 1)[-1])
                   or rx.fullmatch(t.split("/", 1)[-1]) for t in targets):
                out.add(path)
                break
    return out


# --- words built from expansions (blind_files) ------------------------------------------------------------
_PARAM = re.compile(r"\$\{([A-Za-z_]\w*)(?:(%%|%|##|#)([^}]*))?\}|\$([A-Za-z_]\w*)")
_ANY_PARAM = re.compile(r"\$\{[^}]*\}|\$[A-Za-z_]\w*|\$\{?[^A-Za-z_{]")


def built_name_pattern(word: str, env: dict[str, str]) -> re.Pattern:
    """The texts a word built from expansions can take: each `${NAME}`, `$NAME` or simple trim of
    a variable `env` gives is its value (trimmed as the interpreter trims, recipes.launch.text);
    any other expansion matches anything."""
    out, at = [], 0
    for m in _ANY_PARAM.finditer(word):
        out.append(re.escape(word[at:m.start()]))
        p = _PARAM.fullmatch(m.group(0))
        name = p and (p.group(1) or p.group(4))
        value = env[name] if name and name in env and not p.group(2) else \
            _trim(env[name], p.group(2), p.group(3)) if name and name in env else None
        if isinstance(value, str):
            out.append(re.escape(value))
        else:  # not given, or a trim the interpreter's reading cannot tell
            out.append(".*")
        at = m.end()
    out.append(re.escape(word[at:]))
    return re.compile("".join(out), re.S)
