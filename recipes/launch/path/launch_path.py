"""What a PR affects: the launch path of each benchmark point, and the one rule built on it.

The rule (docs/architecture.md "What a PR affects"; spec 12 "affected" for Checks 6-15). A head-side
benchmark point is affected when the PR changes something on that point's launch path:

1. its master-config entry (added or changed; image, args, settings, anything but position);
2. its launcher: the srt-slurm recipe (or multi-node CONFIG_FILE / eval recipe) it binds to,
   or its bash launcher script;
3. a file the launch path really runs: `source FILE`, `. FILE`, `bash FILE`, `sh FILE`,
   `exec FILE` or `./FILE.sh`, a Python file it runs (`python3 [-u] FILE.py`; one of the
   benchmark client's folders, policy `benchmark_client_paths`, changes what is measured, not
   what is served, and affects no point), with references resolved through
   `$(dirname "$0")`, `${BASH_SOURCE[0]}`, `$GITHUB_WORKSPACE`, the container workspace mounts
   and variables assigned earlier in the script; a recipe's `setup_script` and the scripts its
   `benchmark.command` runs; the runner scripts (`runners/launch_<node>.sh`) of the nodes
   that serve the point's runner label in `runners.yaml`;
4. for a shell file on the path that the PR modifies, the change counts only where it runs:
   top-level code always runs, a function body runs only when the path calls that function
   (from any executed code of the path, transitively). A change inside functions the path
   never calls does not affect the point; a change of top-level code affects every point whose
   path holds the file (unless it only changes the elements of an array the file tests for
   membership alone: then only the points whose tested value it adds or removes,
   recipes.launch.path.array_membership); a change that cannot be attributed (the file is added, removed,
   renamed, unreadable, or not shell) affects every point whose path holds it.

Text mentions and comments never count: a launcher whose text names a changed script, or a
changed comment, affects nothing. Each affected point carries its reasons, e.g.
"master-config entry dsr1-fp8-mi355x-sglang changed" or "benchmark_lib.sh: `run_eval` changed
(run by benchmarks/single_node/dsr1_fp8_mi355x.sh)".

The same path model tells Check 10 which code runs (`LaunchPath.executes`): a patch inside a
function of a sourced library that the path never calls is not on the executed launch path.
"""
from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, field
from typing import Any, Iterable

from recipes.launch.path.array_membership import ListEdit, list_edits, list_reasons
from recipes.launch.compare import trusted_url
from recipes.launch.path.conditions import selected_lines
from recipes.identity import by_identity
from recipes.launch.env import point_env  # noqa: F401  (the one definition; checks import it from here too)
from recipes.scripts import ScriptAnalysis, analyze_command_line, analyze_script, code_units, python_file_runs
from recipes.repository import SRT_RECIPE_DIRS
from recipes.yamlio import load_yaml

MAX_PATH_FILES = 64
# How a file reached from another file of the path says so ("run by <path>"); checks tell a
# helper library from the launcher by it.
VIA_RUN_BY = "run by "
MAX_SCAN_BYTES = 1_000_000
RUNNERS_FILE = "runners.yaml"
RUNNER_SCRIPT = "runners/launch_{node}.sh"
SHELL_SUFFIXES = (".sh", ".bash")
# A Python file run as `python3 FILE.py` is on the launch path too (rule 3).
PYTHON_SUFFIX = ".py"

# How scripts spell "the directory I am in"; replaced by the referring file's directory.
_SELF_DIR = re.compile(
    r"""\$\(\s*cd\s+"?\$\(\s*dirname\s+"?\$(?:\{BASH_SOURCE(?:\[0\])?\}|BASH_SOURCE|0|\{0\})"?\s*\)"?\s*"""
    r"""(?:>\s*/dev/null\s*(?:2>&1\s*)?)?(?:&&|;)\s*pwd(?:\s+-P)?\s*\)"""
    r"""|\$\(\s*(?:realpath|readlink\s+-f)\s+"?\$\(\s*dirname\s+"?\$(?:\{BASH_SOURCE(?:\[0\])?\}|BASH_SOURCE|0|\{0\})"?\s*\)"?\s*\)"""
    r"""|\$\(\s*dirname\s+"?\$(?:\{BASH_SOURCE(?:\[0\])?\}|BASH_SOURCE|0|\{0\})"?\s*\)"""
    r"""|\$\{(?:BASH_SOURCE(?:\[0\])?|0)%/\*\}"""
)
_WORKSPACE = re.compile(r"\$\{?GITHUB_WORKSPACE\}?/?")
_SELF = "\x00self\x00"


def resolve_ref(repo: Any, mounts: Iterable[str], ref: str, referrer: str) -> str | None:
    """The repository path a script reference names, or None when it is not in the repository
    (a container path, a download, or a reference built from unknown variables)."""
    ref = ref.strip().strip("'\"")
    ref = _SELF_DIR.sub(_SELF, ref)
    here = posixpath.dirname(referrer)
    if ref.startswith(_SELF):
        ref = posixpath.join(here, ref[len(_SELF):].lstrip("/")) if here else ref[len(_SELF):].lstrip("/")
        ref = posixpath.normpath(ref)
        if ref.startswith(".."):
            return None
        return ref if repo.exists(ref) else None
    ref = _WORKSPACE.sub("", ref) if _WORKSPACE.match(ref) else ref
    if not ref or "$" in ref or "`" in ref or _SELF in ref:
        return None
    candidates: list[str] = []
    if ref.startswith("/"):
        for mount in mounts:
            mount = mount.rstrip("/")
            if ref.startswith(mount + "/"):
                rel = ref[len(mount) + 1:]
                candidates += [repo.layout.rel(rel), rel]
    else:
        candidates += [posixpath.normpath(posixpath.join(here, ref)), repo.layout.rel(ref), posixpath.normpath(ref),
                       f"{repo.layout.scripts_dir}/{ref}"]
    for c in candidates:
        if c and not c.startswith("..") and repo.exists(c):
            return c
    return None


def missing_self_relative(repo: Any, ref: str, referrer: str) -> str | None:
    """The repository path a reference relative to the referring script's own folder names
    (`"$(dirname "$0")/../benchmark_lib.sh"`) when no such file is in the repository: a
    source that fails at run time, not a container path. None otherwise."""
    ref = _SELF_DIR.sub(_SELF, ref.strip().strip("'\""))
    if not ref.startswith(_SELF) or "$" in ref[len(_SELF):] or "`" in ref:
        return None
    here = posixpath.dirname(referrer)
    path = posixpath.normpath(posixpath.join(here, ref[len(_SELF):].lstrip("/")))
    return None if path.startswith("..") or repo.exists(path) else path


@dataclass
class PathFile:
    """One file on a launch path: how it is reached, and its analysis (None: not shell)."""

    path: str
    via: str
    analysis: ScriptAnalysis | None


@dataclass
class LaunchPath:
    """The files a point's launch runs and, per shell file, the functions the path calls."""

    files: dict[str, PathFile] = field(default_factory=dict)
    called: dict[str, set[str]] = field(default_factory=dict)  # path -> its functions that run
    # Scripts the path runs whose name is built from a variable the bot cannot resolve:
    # (referring path, line, reference as written). Their code is unknown, so the checks that
    # read script bodies cannot verify the point (never a PASS).
    unresolved: list[tuple[str, int, str]] = field(default_factory=list)

    def executes(self, path: str, function: str | None) -> bool:
        """Whether code of `path` inside `function` (None: top level) runs on this path."""
        if path not in self.files:
            return False
        return function is None or function in self.called.get(path, set())


# The plain path after the last dynamic part of a reference: `.../pwd)/benchmarks/lib.sh` -> `benchmarks/lib.sh`.
_PATH_CHARS = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.+-/")


def _plain_tail(ref: str) -> str | None:
    """The plain path after the last non-path character of `ref`, from its first `/` that
    starts one (`$WS_PATH/env.sh` -> `env.sh`, `"${ROOT}"/benchmarks/x.sh` -> `benchmarks/x.sh`),
    a closing quote dropped; None when it does not end in one. Read from the end once (a regex
    anchored at `$` tried every `/` of a long word, each to the end: quadratic)."""
    body = ref[:-1] if ref.endswith(("'", '"')) else ref
    start = len(body)
    while start > 0 and body[start - 1] in _PATH_CHARS:
        start -= 1
    tail = body[start:]
    if not tail or tail.endswith("/"):
        return None
    slash = tail.find("/", tail.rfind("//") + 1)  # the path after it has no empty segment
    return tail[slash + 1:] if slash >= 0 else None


def _is_dynamic(ref: str) -> bool:
    """A reference built from a variable or a command substitution the bot does not know (the
    spellings of "my own directory" are known: such a path is judged as a plain path)."""
    rest = _SELF_DIR.sub("", ref)
    return "$" in rest or "`" in rest


_FN_CALL = re.compile(r"\$\(\s*([A-Za-z_][\w-]*)\s*\)")
# Commands that only compute the directory inside such a function's `cd "$(dirname ...)"`.
_DIR_HELPERS = frozenset({"dirname", "realpath", "readlink", "basename"})


def dir_functions(analysis: ScriptAnalysis) -> dict[str, str]:
    """The script's functions that print a directory, `name() { cd DIR && pwd; }`: {name: DIR},
    so `"$(name)/x.py"` is `DIR/x.py` (benchmark_lib.sh's `_eval_patches_dir`). Computed once."""
    cached = analysis.__dict__.get("_dir_functions")
    if cached is not None:
        return cached
    bodies: dict[str, list[list[str]]] = {}
    for cmd in analysis.commands:
        if cmd.function and cmd.argv:
            bodies.setdefault(cmd.function, []).append([str(a) for a in cmd.argv])
    out: dict[str, str] = {}
    for name, cmds in bodies.items():
        main = [argv for argv in cmds if argv[0] not in _DIR_HELPERS]
        if len(main) == 2 and main[0][0] == "cd" and len(main[0]) == 2 and main[1] in (["pwd"], ["pwd", "-P"]):
            out[name] = main[0][1]
    analysis.__dict__["_dir_functions"] = out
    return out


def _sibling(repo: Any, ref: str, referrer: str) -> str | None:
    """`$WS_PATH/env.sh`, `$INFERENCEX_ROOT/benchmarks/benchmark_lib.sh`: a workspace or root
    variable in front of a path that exists relative to the referring script's folder or the
    nearest of its ancestors (the harness copies a script's folder as its workspace; a root
    variable names the checkout). Only an existing file counts; anything else stays unresolved."""
    if not _is_dynamic(ref):
        return None
    tail = _plain_tail(ref.strip())
    if tail is None:
        return None
    here = posixpath.dirname(referrer)
    while True:
        candidate = posixpath.normpath(posixpath.join(here, tail)) if here else posixpath.normpath(tail)
        if not candidate.startswith("..") and repo.exists(candidate):
            return candidate
        if not here:
            return None
        here = posixpath.dirname(here)


_SUBMODULE_PATH = re.compile(r"^[ \t]*path[ \t]*=[ \t]*(\S.*?)\s*$", re.M)  # `[ \t]*`: `\s*` ran over blank lines
GITMODULES = ".gitmodules"


def submodule_paths(src: Any) -> tuple[str, ...]:
    """The folders `.gitmodules` declares: their files are not in the tree, so the bot cannot
    read what a script there runs."""
    try:
        data = src.read(GITMODULES)
    except Exception:  # noqa: BLE001 - an unreadable .gitmodules declares nothing readable
        return ()
    if not data:
        return ()
    return tuple(p.strip("/") for p in _SUBMODULE_PATH.findall(data.decode("utf-8", "replace")))


def _in_submodule(ref: str, referrer: str, submodules: tuple[str, ...]) -> bool:
    ref = ref.strip().strip("'\"")
    if not submodules or not ref or ref.startswith("/") or _is_dynamic(ref):
        return False
    here = posixpath.dirname(referrer)
    paths = {posixpath.normpath(ref), posixpath.normpath(posixpath.join(here, ref)) if here else ref}
    return any(p == s or p.startswith(s + "/") for p in paths for s in submodules)


_URL = re.compile(r"https?://[^\s'\"|;&)]+")


def trusted_download(analysis: ScriptAnalysis, line: int | None, trusted: Iterable[str]) -> bool:
    """A download piped to a shell whose every URL is a trusted tooling installer's (the script
    reading's form of recipes.launch.compare.hides_code, for a launch read without its trace)."""
    text = analysis.opaque_texts.get(line or 0)
    urls = _URL.findall(text or "")
    return bool(urls) and all(trusted_url(u, trusted) for u in urls)


def read_analysis(src: Any, path: str) -> ScriptAnalysis | None:
    """The analysis of a shell file as the source holds it (None: absent or unreadable, which
    the checks that read it report). Analyses are memoized per (path, text) in recipes.scripts."""
    try:
        data = src.read(path)
    except Exception:  # noqa: BLE001 - an unreadable file is reported by the checks that read it
        return None
    if data is None:
        return None
    # Every launch path of a review reads the shared libraries again: the text is decoded (and
    # hashed by the analyser's memo) once per source view and file while its bytes stay the same.
    known = _analyses_of(src)
    hit = known.get(path)
    if hit is not None and hit[0] == data:
        return hit[1]
    analysis = analyze_script(data.decode("utf-8", "replace"), path)
    known[path] = (data, analysis)
    return analysis


@by_identity(16)
def _analyses_of(src: Any) -> dict[str, tuple[bytes, ScriptAnalysis]]:
    """The analyses `read_analysis` gave for one source view, with the bytes they were read from."""
    return {}


def build_path(repo: Any, src: Any, mounts: Iterable[str], roots: list[tuple[str, str]],
               commands: list[tuple[str, ScriptAnalysis]] = (), skip: frozenset = frozenset()) -> LaunchPath:
    """The launch path from `roots` ((path, via) of files that run from their top) and inline
    command strings (`commands`: (holder path, analysis), e.g. a recipe's benchmark.command).
    References at `skip` ((holder, line)) are not followed: recipes.launch.path.runner_launch decided them."""
    mounts = tuple(mounts)
    submodules = submodule_paths(src)
    out = LaunchPath()
    defined: dict[str, list[str]] = {}  # function name -> paths on the path defining it
    names_called: set[str] = set()
    units: list[tuple[str, ScriptAnalysis, str | None]] = []  # (path, analysis, function) to process
    seen_units: set[tuple[int, str | None]] = set()

    def add_unit(path: str, analysis: ScriptAnalysis, function: str | None) -> None:
        key = (id(analysis), function)
        if key not in seen_units:
            seen_units.add(key)
            if function is not None:
                out.called.setdefault(path, set()).add(function)
            units.append((path, analysis, function))

    def add_file(path: str, via: str) -> None:
        if path in out.files or len(out.files) >= MAX_PATH_FILES:
            return
        analysis = read_analysis(src, path) if path.endswith(SHELL_SUFFIXES) or "." not in path.rsplit("/", 1)[-1] else None
        out.files[path] = PathFile(path=path, via=via, analysis=analysis)
        if analysis is None:
            return
        for name in analysis.functions:
            defined.setdefault(name, []).append(path)
            if name in names_called:
                add_unit(path, analysis, name)
        add_unit(path, analysis, None)

    for path, via in roots:
        add_file(path, via)
    for holder, analysis in commands:
        add_unit(holder, analysis, None)
    while units:
        path, analysis, function = units.pop()
        unit = analysis.units().get(function)
        if unit is None:
            continue
        refs = [(ref.resolved or ref.value, ref.line, ref.value) for ref in unit.sources if (path, ref.line) not in skip]
        # A Python file the unit runs (`python3 fix.py`) is on the path too, as a leaf.
        refs += [(py, line, py) for py, fn, line in python_file_runs(analysis) if fn == function and (path, line) not in skip]
        dirs = dir_functions(analysis)
        for written, line, value in refs:
            if dirs and "$(" in written:  # `"$(_patches_dir)/fix.py"`: a function that prints a directory
                written = _FN_CALL.sub(lambda m: dirs.get(m.group(1), m.group(0)), written)
            target = resolve_ref(repo, mounts, written, path) or _sibling(repo, written, path)
            if target is not None:
                add_file(target, f"{VIA_RUN_BY}{path}")
            elif _is_dynamic(written) or _in_submodule(written, path, submodules):
                out.unresolved.append((path, line, value))
        # A function runs when an executed command names it: `fn`, `retry fn`, `timeout 9 fn`.
        # (Nothing below reads `names_called`: the new words join it at once.)
        new = unit.words - names_called
        names_called |= new
        for word in new:
            for p in defined.get(word, ()):
                a = out.files[p].analysis
                if a is not None:
                    add_unit(p, a, word)
    return out


@dataclass(frozen=True)
class FileChange:
    """How a changed file changed: wholly, or in its top level and/or named functions."""

    path: str
    whole: str | None = None  # why the change cannot be attributed (added, removed, not shell, ...)
    top: bool = False
    functions: frozenset[str] = frozenset()
    lines: frozenset[int] = frozenset()  # head-side lines of changed code (comments excluded)
    lists: tuple[ListEdit, ...] = ()  # the change is only these arrays' elements (recipes.launch.path.array_membership)

    @property
    def empty(self) -> bool:
        """Only comments or layout changed."""
        return self.whole is None and not self.top and not self.functions


def file_change(base_src: Any, head_src: Any, path: str, status: str, previous: str | None) -> FileChange:
    """Attribute the change of `path` (base -> head) to its top level and functions."""
    if status in ("added", "removed") or (previous and previous != path):
        return FileChange(path=path, whole=status if status in ("added", "removed") else "renamed")
    if not path.endswith(SHELL_SUFFIXES):
        return FileChange(path=path, whole="changed")
    try:
        old, new = base_src.read(path), head_src.read(path)
    except Exception:  # noqa: BLE001
        return FileChange(path=path, whole="unreadable")
    if old is None or new is None:
        return FileChange(path=path, whole="changed")
    a, b = code_units(old.decode("utf-8", "replace")), code_units(new.decode("utf-8", "replace"))
    if a is None or b is None:
        return FileChange(path=path, whole="changed (not readable as bash)")
    funcs = frozenset(n for n in set(a.functions) | set(b.functions) if a.functions.get(n) != b.functions.get(n))
    top = a.top != b.top
    lists = list_edits(old.decode("utf-8", "replace"), new.decode("utf-8", "replace")) if top and not funcs else ()
    return FileChange(path=path, top=top, functions=funcs, lines=_changed_lines(a.lines, b.lines), lists=lists)


MEMO_CHANGE = "launch_path.change:{path}"


def changed_file(ctx: Any, f: Any) -> FileChange:
    """`file_change` of one changed file of the PR (an entry of `ctx.snapshot.files`), once per
    review: the affected rule and Check 10's "which PR introduced this patch" read the same one."""
    return ctx.memo(MEMO_CHANGE.format(path=f.path), lambda: file_change(
        ctx.snapshot.merge_base_tree, ctx.snapshot.head, f.path, f.status, f.previous_path))


def _changed_lines(old: tuple[str, ...], new: tuple[str, ...]) -> frozenset[int]:
    """Head-side line numbers (1-based) of changed code; a deletion marks its neighbours."""
    import difflib

    # The common head and tail are equal by definition: matching only what lies between keeps
    # an edit to a long shared library from costing a quadratic match over the whole file.
    lead, n_old, n_new = 0, len(old), len(new)
    while lead < n_old and lead < n_new and old[lead] == new[lead]:
        lead += 1
    tail = 0
    while tail < n_old - lead and tail < n_new - lead and old[n_old - 1 - tail] == new[n_new - 1 - tail]:
        tail += 1
    mid_old, mid_new = old[lead:n_old - tail], new[lead:n_new - tail]
    out: set[int] = set()
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, mid_old, mid_new, autojunk=False).get_opcodes():
        i1, i2, j1, j2 = i1 + lead, i2 + lead, j1 + lead, j2 + lead
        if op == "equal":
            continue
        if op in ("replace", "insert"):
            out.update(j + 1 for j in range(j1, j2) if new[j])
        if op == "delete" and any(old[i] for i in range(i1, i2)):
            out.update(x for x in (j1, j1 + 1) if 1 <= x <= len(new))
    return frozenset(out)


def path_reasons(launch: LaunchPath, changes: dict[str, FileChange], skip: set[str],
                 point: Any = None) -> list[str]:
    """Why the PR's file changes affect a point with this launch path ([] when they do not).
    With `point`, a top-level change counts only when a changed line runs for it: a line in a
    branch whose condition is false for the point's variables (`IS_MULTINODE`, `FRAMEWORK`,
    ...) does not."""
    env = point_env(point) if point is not None else None
    reasons: list[str] = []
    for path, pf in launch.files.items():
        change = changes.get(path)
        if change is None or path in skip or change.empty:
            continue
        where = f" ({pf.via})"
        name = path.rsplit("/", 1)[-1]
        if change.whole is not None or pf.analysis is None:
            reasons.append(f"{path} changed{where}")
            continue
        if change.top and (env is None or selected_lines(pf.analysis, change, env)):
            # Only elements of arrays tested for membership changed: the points they select. A
            # file another file runs may be sourced by it, which could read the array.
            listed = None if env is None or pf.via.startswith(VIA_RUN_BY) else list_reasons(
                change.lists, path, pf.analysis, env)
            reasons.extend([f"{name}: top-level code changed{where}"] if listed is None else
                           [f"{name}: {why}{where}" for why in listed])
            continue
        for fn in sorted(change.functions & launch.called.get(path, set())):
            reasons.append(f"{name}: `{fn}` changed{where}")
    return reasons


def runner_nodes(repo: Any, src: Any) -> dict[str, list[str]]:
    """runners.yaml `labels`: runner label -> node names ({} when absent or unreadable)."""
    path = f"{repo.layout.configs_dir}/{RUNNERS_FILE}"
    try:
        data = src.read(path)
        if data is None:
            return {}
        doc = load_yaml(data, path).data
    except Exception:  # noqa: BLE001 - no runner file: runner scripts are matched by label prefix
        return {}
    labels = doc.get("labels", doc) if isinstance(doc, dict) else {}
    if not isinstance(labels, dict):
        return {}
    return {str(k): [str(n) for n in v] for k, v in labels.items() if isinstance(v, list)}


def runner_scripts(repo: Any, nodes: dict[str, list[str]], label: str | None) -> list[str]:
    """The runner scripts that may run a point of this runner label (the sweep runs
    `runners/launch_${RUNNER_NAME%%_*}.sh` on one of the label's nodes)."""
    if not label:
        return []
    names = {n.split("_", 1)[0] for n in nodes.get(label, [])} or {label.split("_", 1)[0]}
    out = []
    for name in sorted(names):
        path = repo.layout.rel(RUNNER_SCRIPT.format(node=name))
        if repo.exists(path):
            out.append(path)
    return out


SETUP_SCRIPT_KEY = "setup_script"
MEMO_PATH = "launch_path:{key}"
MEMO_PATHS = "launch_path.by_roots"
MEMO_ROOT = "launch_path.root:{key}"
MEMO_RUNNERS = "launch_path.runners"
MEMO_RUNNER_SCRIPTS = "launch_path.runner_scripts"
MEMO_AFFECTED_ROOTS = "launch_path.affected_roots:{in_repo}"


@dataclass
class PointRoots:
    """Where a point's launch starts: files run from their top and inline command strings."""

    files: list[tuple[str, str]] = field(default_factory=list)  # (path, via)
    commands: list[tuple[str, ScriptAnalysis]] = field(default_factory=list)
    missing_setup: list[tuple[str, str, int | None]] = field(default_factory=list)  # (ref, recipe, line)
    # Setup scripts read from the cloned srt-slurm repository, with the files of that checkout
    # they run (recipes.launch.path.srt_checkout): (cited path, analysis, how it runs).
    cloned: list[tuple[str, ScriptAnalysis, str]] = field(default_factory=list)
    # Setup scripts looked for in the cloned repository in vain: (ref, recipe, line, why).
    cloned_gaps: list[tuple[str, str, int | None, str]] = field(default_factory=list)

    @property
    def key(self) -> tuple:
        return (tuple(self.files), tuple((h, id(a)) for h, a in self.commands))


def setup_script_name(ref: str) -> str:
    """A recipe's `setup_script` value as srtctl names the file (quotes dropped)."""
    return ref.strip().strip(chr(39) + chr(34))


def srt_config_script(repo: Any, ref: str, recipe_path: str) -> str | None:
    """srtctl runs a recipe's `setup_script` from the `configs/` folder of the srt-slurm recipes
    checkout: `<recipes root>/configs/<name>` (e.g. kimik3-dspark-config-compat.sh)."""
    for sub in SRT_RECIPE_DIRS:
        root = "/".join(p for p in (repo.layout.scripts_dir, sub) if p)
        if recipe_path.startswith(root + "/"):
            candidate = f"{root}/configs/{setup_script_name(ref).rsplit('/', 1)[-1]}"
            return candidate if repo.exists(candidate) else None
    return None


def point_roots(ctx: Any, point: Any, *, runners: bool, names: set[str] | None = None) -> PointRoots:
    """The roots of a point's launch path at the head (see the module docstring, rule 3).

    With `names` (the file names that can lead to a changed file, `reach_names`), a recipe of
    this repository whose text names none of them is not parsed: the roots it gives (its
    `setup_script` and benchmark command) could not pass `candidate_roots` anyway."""
    return _point_roots(ctx, point, runners, _reads_recipe(ctx, point.launcher, names))


def _reads_recipe(ctx: Any, launcher: Any, names: set[str] | None) -> bool:
    """Whether `point_roots` reads the recipe of this repository a launcher names (the only
    use it makes of `names`)."""
    from recipes.launch.path.reach import may_name

    return launcher is not None and launcher.kind != "script" and (
        names is None or launcher.exists is False or may_name(ctx.head_repo, launcher.path, names))


def _point_roots(ctx: Any, point: Any, runners: bool, in_repo: bool) -> PointRoots:
    from recipes.evidence import split_external
    from recipes.launch.path.srt_checkout import cloned_script, cloned_setup, cloned_variant, is_cloned, point_checkout

    repo = ctx.head_repo
    out = PointRoots()
    launcher = point.launcher
    if launcher is not None and launcher.kind == "script" and launcher.exists is not False:
        out.files.append((launcher.path, "launcher"))
    variant = repo.variant_for(point) if in_repo else None
    checkout = None
    if variant is None and is_cloned(launcher):
        # The recipe the runner's srt-slurm checkout holds (recipes.launch.path.srt_checkout). For the
        # affected rule (`runners`) only a checkout with this repository's `configs/` copied in
        # can put one of its files on the path (a recipe's setup_script): no clone is read else.
        found = point_checkout(ctx, point)
        checkout = found.checkout if found is not None else None
        if not runners or (checkout is not None and checkout.copies_into("configs")):
            variant = cloned_variant(ctx, point)
    if variant is not None:
        setup = variant.get(SETUP_SCRIPT_KEY)
        line = variant.line_of(SETUP_SCRIPT_KEY)
        for ref in ([setup] if isinstance(setup, str) else setup if isinstance(setup, list) else []):
            path = cloned_script(checkout, str(ref)) or (None if split_external(variant.path) else (
                resolve_ref(repo, ctx.config.policy.workspace_mounts, str(ref), variant.path)
                or srt_config_script(repo, str(ref), variant.path)))
            if path is None and not runners and launcher.kind == "multinode-recipe":
                # srtctl runs it from the checkout's `configs/`: the cloned repository's file.
                found = cloned_setup(ctx, point, str(ref))
                if isinstance(found, list):
                    out.cloned.extend(found)
                    continue
                if found is not None:  # the cloned repository was read: why it does not tell
                    out.cloned_gaps.append((str(ref), variant.path, line, found))
                    continue
            if path is None:
                out.missing_setup.append((str(ref), variant.path, line))
            elif (path, SETUP_SCRIPT_KEY) not in out.files:
                out.files.append((path, SETUP_SCRIPT_KEY))
        cmd = variant.benchmark_command
        if isinstance(cmd, str) and cmd.strip():
            cline = variant.line_of("benchmark", "command") or 1
            out.commands.append((variant.path, analyze_command_line(cmd, variant.path, cline)))
    if runners:
        for path in label_runner_scripts(ctx, point.runner):
            out.files.append((path, f"runner for {point.runner}"))
    return out


def affected_roots(ctx: Any, point: Any, names: set[str] | None, shared: dict) -> PointRoots:
    """`candidate_roots(point_roots(runners=True))` for the affected rule. The roots of a point
    with a script launcher or none are that launcher and its label's runner scripts, so such
    points share them through `shared` (one dict per computation of the affected points)."""
    launcher = point.launcher
    if launcher is not None and launcher.kind != "script":
        # Asked once per set of names (the changed files', the data files', the blind ones'):
        # the roots differ only in whether the recipe is read.
        in_repo = _reads_recipe(ctx, launcher, names)
        roots = point_memo(ctx, MEMO_AFFECTED_ROOTS.format(in_repo=in_repo), point,
                           lambda: _point_roots(ctx, point, True, in_repo))
        return candidate_roots(roots, names)
    key = ((launcher.path, launcher.exists) if launcher is not None else None, point.runner)
    if key not in shared:
        shared[key] = candidate_roots(point_roots(ctx, point, runners=True, names=names), names)
    return shared[key]


def point_memo(ctx: Any, key: str, point: Any, fn: Any) -> Any:
    """`fn()` once per review for this point object (by identity: a point is frozen, and the
    entry keeps it alive so its id stays its own). For answers a point asks for again under
    each set of names of the affected rule, and again in the checks."""
    memo = ctx.memo(key, dict)
    hit = memo.get(id(point))
    if hit is not None and hit[0] is point:
        return hit[1]
    value = fn()
    memo[id(point)] = (point, value)
    return value


def label_runner_scripts(ctx: Any, label: str | None) -> list[str]:
    """The runner scripts of a runner label (`runner_scripts`), once per review (asked for
    every point, several times: one dict of the labels' answers)."""
    known = ctx.memo(MEMO_RUNNER_SCRIPTS, dict)
    found = known.get(label)
    if found is None:
        nodes = ctx.memo(MEMO_RUNNERS, lambda: runner_nodes(ctx.head_repo, ctx.snapshot.head))
        found = known[label] = runner_scripts(ctx.head_repo, nodes, label)
    return found


def only_runner_entries(repo: Any, live: Iterable[str]) -> bool:
    """Whether every changed file is a runner entry script (`runners/launch_<node>.sh`). The
    sweep starts exactly one per job, on one of its own nodes: such a file is on the launch
    path of its label's points only, so a point of another label whose runner picks its script
    at run time need not walk that chain to learn it is not affected."""
    live = list(live)
    entry = re.compile(re.escape(repo.layout.rel(RUNNER_SCRIPT)).replace(re.escape("{node}"), "[^/]+") + "$")
    return bool(live) and all(entry.match(p) for p in live)


def candidate_roots(roots: PointRoots, names: set[str] | None) -> PointRoots:
    """The roots whose launch path may hold a changed file (all of them when `names` is None)."""
    if names is None:
        return roots
    files = [(p, via) for p, via in roots.files if p.rsplit("/", 1)[-1] in names]
    commands = [(h, a) for h, a in roots.commands
                if any(n in c.text for c in a.commands for n in names)]
    return PointRoots(files=files, commands=commands, missing_setup=roots.missing_setup)


def merge_paths(parts: list[LaunchPath]) -> LaunchPath:
    out = LaunchPath()
    for part in parts:
        for path, pf in part.files.items():
            out.files.setdefault(path, pf)
        for path, fns in part.called.items():
            out.called.setdefault(path, set()).update(fns)
    return out


def launch_path(ctx: Any, roots: PointRoots) -> LaunchPath:
    """The launch path from these roots at the head, built once per review. Each root is its
    own process (a runner runs the launcher with `bash`), so each is followed once and shared
    by every point that has it."""
    repo, src, mounts = ctx.head_repo, ctx.snapshot.head, ctx.config.policy.workspace_mounts

    def build() -> LaunchPath:
        parts = [ctx.memo(MEMO_ROOT.format(key=repr(root)), lambda root=root: build_path(repo, src, mounts, [root]))
                 for root in roots.files]
        parts += [ctx.memo(MEMO_ROOT.format(key=f"command {id(a)}"),
                           lambda h=h, a=a: build_path(repo, src, mounts, [], [(h, a)]))
                  for h, a in roots.commands]
        return parts[0] if len(parts) == 1 else merge_paths(parts)

    # Asked for every point whose roots may hold a changed file: by the roots' key itself (its
    # text, built per ask, cost more than the lookup).
    built = ctx.memo(MEMO_PATHS, dict)
    key = roots.key
    found = built.get(key)
    if found is None:
        found = built[key] = ctx.memo(MEMO_PATH.format(key=repr(key)), build)
    return found

