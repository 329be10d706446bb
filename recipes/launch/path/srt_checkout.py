"""The srt-slurm checkout a multi-node point's runner makes, and where its recipe is read from.

A multi-node point names its recipe as srtctl sees it: `CONFIG_FILE: recipes/<...>.yaml`,
relative to the srt-slurm checkout the runner script makes. The runner clones a repository
(`git clone [--branch REF] https://github.com/<owner>/<repo>.git DIR`), may pin a ref
(`git checkout REF`), and may copy folders of the benchmark repository into it
(`cp -rT "$GITHUB_WORKSPACE/benchmarks/multi_node/srt-slurm-recipes/x" recipes/y`). Which of
those commands run for a point is decided by the runner's branches over the point's variables
(`FRAMEWORK`, `MODEL_PREFIX`, `PRECISION`, `IS_AGENTIC`, ...: recipes.launch.path.launch_path.point_env).

So the recipe of a point whose CONFIG_FILE the benchmark repository does not hold where the
layout puts it is, in this order:
1. the benchmark-repository file a copy the runner makes puts at that path;
2. else the file of the cloned repository at the pinned ref (a branch as of the review date),
   read through `ctx.snapshot.external_tree` when the repository is one the policy names
   (`recipe_repositories`);
3. else unknown: a "could not verify" naming the runner line that decides it.
Evidence from a cloned repository's file cites it as `owner/name@<sha>:<path>`
(checks.result.external_path), never as a file of the benchmark repository.
"""
from __future__ import annotations

import dataclasses
import posixpath
import re
from dataclasses import dataclass, field
from typing import Any

from recipes.launch.path.conditions import evaluate_condition, variables_read
from recipes.launch.path.launch_path import (
    MEMO_RUNNERS, SETUP_SCRIPT_KEY, point_env, point_memo, read_analysis, runner_nodes, runner_scripts, setup_script_name,
)
from recipes.evidence import Evidence, Unavailable, external_path
from recipes.wording import join
from recipes.identity import by_identity
from recipes.master import split_recipe_ref
from recipes.scripts import analyze_python_file, analyze_script, python_file_runs
from recipes.source import inside_path
from recipes.srt import parse_recipe

# A clone of a GitHub repository, by URL; anything else (a variable, another host) is unknown.
GITHUB_URL = re.compile(r"^(?:https://github\.com/|git@github\.com:)(?P<repo>[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+?)"
                        r"(?:\.git)?/?$")
# An srt-slurm clone by its URL, literal or a variable named for it (`"$POWER_SRT_SLURM_URL"`).
SRT_SLURM = re.compile(r"srt[-_]slurm", re.I)
WORKSPACE_PREFIXES = ("$GITHUB_WORKSPACE/", "${GITHUB_WORKSPACE}/")
DEFAULT_BRANCH = "HEAD"
# A git ref as a runner may pin it: branch, tag or commit names, no `..` step, nothing a URL or a
# shell would read otherwise. Anything else is a ref the bot does not resolve.
SAFE_REF = re.compile(r"^(?!.*\.\.)(?!/)[A-Za-z0-9._/+-]{1,200}$")
# A git option of `clone` that takes a value (the rest are flags).
CLONE_VALUE_OPTIONS = frozenset({"--branch", "-b", "--depth", "--origin", "-o", "--reference", "--filter",
                                 "--config", "-c", "--jobs", "-j", "--shallow-since", "--shallow-exclude"})
MEMO_CHECKOUT = "srt_checkout:{runner}:{env}"
MEMO_POINT_CHECKOUT = "srt_checkout.point"
MEMO_RECIPE = "srt_checkout.recipe:{key}"
MEMO_SETUP = "srt_checkout.setup:{key}"
# What reading a file of the cloned repository gave (shared by every point naming it).
READ_OK, READ_NOT_GIVEN, READ_UNAVAILABLE, READ_ABSENT = "ok", "not given", "unavailable", "absent"
MEMO_RUNNER = "srt_checkout.runner:{path}"
MEMO_LABEL_RUNNERS = "srt_checkout.label:{runner}"
MEMO_COPY_NAMED = "srt_checkout.copy_named"

MSG_UNDECIDED = ("could not verify: {ref} named at {where} is read from the srt-slurm checkout the runner makes, "
                 "and {line} decides which one under a condition the bot cannot evaluate for {point} "
                 "({condition}); make the runner's choice depend on the point's framework, model and precision.")
MSG_CLONE_UNKNOWN = ("could not verify: {ref} named at {where} is read from the srt-slurm checkout the runner makes, "
                     "and {line} clones {url}, which is not a GitHub repository the bot can name; clone a "
                     "repository by its GitHub URL.")
MSG_REF_UNKNOWN = ("could not verify: {ref} named at {where} is read from the srt-slurm checkout the runner makes, "
                   "and {line} checks out {rev}, a ref the bot cannot resolve; pin a branch, tag or commit.")
MSG_RUNNERS_DIFFER = ("could not verify: {ref} named at {where} is read from the srt-slurm checkout the runner makes, "
                      "and the runner scripts of {runner} make different ones ({runners}); make them agree.")
MSG_NOT_ALLOWED = ("could not verify: {ref} named at {where} is read from {repo} ({line} clones it), which is not "
                   "a recipe repository the bot reads (policy `recipe_repositories`: {allowed}); commit the recipe "
                   "under {folder} or add the repository to the policy.")
MSG_NOT_GIVEN = ("could not verify: {ref} named at {where} is not in this repository: srtctl reads CONFIG_FILE "
                 "{written} from {repo} at {rev} ({line}), and the bot was given no copy of {repo} (local mode: "
                 "`--external-repo {repo}=DIR`); commit the recipe under {folder} or give the bot that repository.")
MSG_TREE_UNAVAILABLE = ("could not verify: {ref} named at {where} is read from {repo} at {rev} ({line}), which could "
                        "not be read: {reason}; re-run the review.")
MSG_NOT_IN_CLONE = ("could not verify: {ref} named at {where} is read from {repo} at {rev} ({line}, commit "
                    "{short}), which has no {written}; fix CONFIG_FILE or commit the recipe under {folder}.")
MSG_COPY_MISSING = ("could not verify: {ref} named at {where} is copied into the srt-slurm checkout from {source} "
                    "({line}), which is not in this repository; commit the recipe or fix the copy.")
MSG_SETUP_NOT_IN_CLONE = "neither is it under {folders} of {repo} at {rev}, which {line} checks out"
MSG_SETUP_CLONE_UNREAD = ("srtctl runs it from the checkout of {repo} at {rev} ({line}), a repository or ref the "
                          "bot does not read (policy `recipe_repositories`)")
MSG_SETUP_CLONE_NOT_GIVEN = ("srtctl runs it from the checkout of {repo} at {rev} ({line}), and the bot was given no "
                             "copy of {repo} (local mode: `--external-repo {repo}=DIR`)")
MSG_SETUP_CLONE_FAILED = "srtctl runs it from the checkout of {repo} at {rev} ({line}), which could not be read: {reason}"
MSG_SETUP_RUNS_MORE = ("srtctl runs it from {path}, which runs files the bot does not follow there ({runs})")
MSG_ESCAPES = ("could not verify: CONFIG_FILE {written} named at {where} leaves the srt-slurm checkout; "
               "name a recipe inside it.")


@dataclass(frozen=True)
class Copy:
    """`cp [-rT] "$GITHUB_WORKSPACE/<source>" <dest>` run inside the checkout."""

    source: str  # a benchmark-repository path (file or folder)
    dest: str  # checkout-relative
    contents: bool  # `-T` (or a trailing `/.`): the folder's contents land at `dest` itself
    line: int
    certain: bool = True  # False: whether it runs for the point depends on something else


@dataclass(frozen=True)
class Checkout:
    runner: str
    line: int
    url: str
    repo: str | None  # owner/name, when the URL names a GitHub repository
    ref: str  # as the script names it; DEFAULT_BRANCH when it names none
    ref_line: int
    copies: tuple[Copy, ...] = ()
    ref_unknown: bool = False

    @property
    def where(self) -> str:
        return f"{self.runner}:{self.ref_line}"

    @property
    def rev_text(self) -> str:
        return "its default branch" if self.ref == DEFAULT_BRANCH else self.ref

    def copies_into(self, folder: str) -> bool:
        """Whether some copy puts files at or under checkout folder `folder`."""
        return any((c.dest.rstrip("/") + "/").startswith(folder.rstrip("/") + "/")
                   or folder.startswith(c.dest.rstrip("/") + "/") for c in self.copies)

    def locate(self, rel: str) -> tuple[str, Copy] | None:
        """The benchmark-repository path the runner's copies put at checkout path `rel` (the
        last copy that covers it wins, as on disk), with the copy."""
        found = None
        for c in self.copies:
            if c.contents or c.dest.endswith("/"):
                base = c.dest.rstrip("/")
                target = base if c.contents else f"{base}/{posixpath.basename(c.source.rstrip('/'))}"
            else:
                target = c.dest
            if rel == target:
                found = (c.source, c)
            elif rel.startswith(target + "/"):
                found = (f"{c.source.rstrip('/')}/{rel[len(target) + 1:]}", c)
        return found


@dataclass(frozen=True)
class CheckoutAnswer:
    """The checkout a point's runner makes, or why it cannot be told (`why`, a format key and
    its values: the caller names the recipe)."""

    checkout: Checkout | None = None
    why: str | None = None
    values: dict = field(default_factory=dict)


def _words(cmd: Any) -> list[str]:
    return [str(a) for a in (cmd.expanded or cmd.argv)]


def _git_args(argv: list[str]) -> list[str]:
    """`git [-C dir] [-c k=v] sub ...` -> [sub, ...]."""
    rest = argv[1:]
    while rest and rest[0] in ("-C", "-c"):
        rest = rest[2:]
    return rest


def _clone(argv: list[str]) -> tuple[str, str | None] | None:
    """(URL, --branch value) of a `git clone` of an srt-slurm repository, else None."""
    args = _git_args(argv)
    if not args or args[0] != "clone":
        return None
    positional, branch, i = [], None, 1
    while i < len(args):
        a = args[i]
        if a in CLONE_VALUE_OPTIONS:
            if a in ("--branch", "-b") and i + 1 < len(args):
                branch = args[i + 1]
            i += 2
            continue
        if a.startswith("--branch="):
            branch = a.split("=", 1)[1]
        elif not a.startswith("-"):
            positional.append(a)
        i += 1
    if not positional or not SRT_SLURM.search(positional[0]):
        return None
    return positional[0], branch


def _checkout_ref(argv: list[str]) -> str | None:
    args = _git_args(argv)
    if not args or args[0] not in ("checkout", "switch"):
        return None
    refs = [a for a in args[1:] if not a.startswith("-")]
    return refs[0] if refs else None


def _copy(argv: list[str], line: int) -> Copy | None:
    if not argv or argv[0] != "cp":
        return None
    flags = "".join(a[1:] for a in argv[1:] if a.startswith("-") and not a.startswith("--"))
    operands = [a for a in argv[1:] if not a.startswith("-")]
    if len(operands) != 2:
        return None
    source, dest = operands
    prefix = next((p for p in WORKSPACE_PREFIXES if source.startswith(p)), None)
    if prefix is None or dest.startswith(("/", "$", "~")):
        return None
    contents = "T" in flags or "--no-target-directory" in argv or source.endswith("/.")
    src = inside_path(source[len(prefix):].rstrip("/").removesuffix("/."))
    dst = inside_path(dest) if dest.strip("/") else None
    if src is None or dst is None:
        return None
    # `cp -r DIR DEST` lands at DEST when DEST does not exist and at DEST/DIR when it does, which
    # the bot cannot tell: such a copy is never taken as certain.
    ambiguous = not contents and not dest.endswith("/") and "." not in posixpath.basename(src)
    return Copy(source=src, dest=dst + ("/" if dest.endswith("/") else ""), contents=contents, line=line,
                certain=not ambiguous)


@by_identity(256)
def _relevant(analysis: Any) -> list[tuple[Any, str, Any]]:
    """The runner's srt-slurm clones, `git checkout`s and workspace copies in line order, as
    (command, kind, parsed), computed once per analysis: every point of a runner asks about
    the same few commands, and only their conditions are evaluated."""
    out: list[tuple[Any, str, Any]] = []
    for cmd in sorted(analysis.commands, key=lambda c: c.line):
        argv = _words(cmd)
        if not argv or argv[0] not in ("git", "cp"):
            continue
        if argv[0] == "cp":
            copy = _copy(argv, cmd.line)
            if copy is not None:
                out.append((cmd, "copy", copy))
        elif (clone := _clone(argv)) is not None:
            out.append((cmd, "clone", clone))
        elif (rev := _checkout_ref(argv)) is not None:
            out.append((cmd, "checkout", rev))
    return out


def runner_checkout(analysis: Any, runner: str, env: dict[str, str]) -> CheckoutAnswer | None:
    """The srt-slurm checkout `runner` makes for a point with these variables; None when the
    runner clones no srt-slurm repository at all. The clone that runs is the last one whose
    condition holds (one the bot cannot evaluate leaves it undecided); the checkouts and copies
    that count are those after it and before the next clone."""
    def holds(cmd: Any) -> bool | None:
        return evaluate_condition(cmd.condition, env) if cmd.condition else True

    def undecided(cmd: Any) -> CheckoutAnswer:
        return CheckoutAnswer(why=MSG_UNDECIDED, values={"line": f"{runner}:{cmd.line}", "condition": cmd.condition})

    steps = _relevant(analysis)
    clones = [i for i, (_, kind, _) in enumerate(steps) if kind == "clone"]
    if not clones:
        return None
    chosen = None
    for i in clones:
        verdict = holds(steps[i][0])
        if verdict is None:
            return undecided(steps[i][0])
        if verdict:
            chosen = i
    if chosen is None:
        return CheckoutAnswer(why=None)  # the runner clones srt-slurm only for other points
    cmd, _, (url, branch) = steps[chosen]
    m = GITHUB_URL.match(url)
    ref, ref_line, ref_unknown = branch or DEFAULT_BRANCH, cmd.line, bool(branch and not SAFE_REF.match(branch))
    copies: list[Copy] = []
    end = next((i for i in clones if i > chosen), len(steps))
    for later, kind, parsed in steps[chosen + 1:end]:
        verdict = holds(later)
        if verdict is False:
            continue
        if kind == "checkout":
            if verdict is None:
                return undecided(later)
            ref, ref_line, ref_unknown = parsed, later.line, not SAFE_REF.match(parsed) or parsed == "FETCH_HEAD"
        elif kind == "copy":
            copies.append(parsed if verdict else dataclasses.replace(parsed, certain=False))
    return CheckoutAnswer(checkout=Checkout(
        runner=runner, line=cmd.line, url=url, repo=m.group("repo") if m else None, ref=ref, ref_line=ref_line,
        copies=tuple(copies), ref_unknown=ref_unknown))


def point_checkout(ctx: Any, point: Any) -> CheckoutAnswer | None:
    """`runner_checkout` over every runner script the point's label may run (they must agree);
    None when none of them clones srt-slurm. The answer depends on the point only through the
    variables the scripts' clone, checkout and copy conditions name, so points that differ in
    others (every point differs in EXP_NAME and CONC) share one. Asked again for the same
    point (the affected rule's roots, its copied recipe, its cloned variant), once per point."""
    return point_memo(ctx, MEMO_POINT_CHECKOUT, point, lambda: _point_checkout(ctx, point))


def _point_checkout(ctx: Any, point: Any) -> CheckoutAnswer | None:
    repo = ctx.head_repo

    def analyses() -> tuple[list[tuple[str, Any]], str]:
        nodes = ctx.memo(MEMO_RUNNERS, lambda: runner_nodes(repo, ctx.snapshot.head))
        out = []
        for path in runner_scripts(repo, nodes, point.runner):
            analysis = ctx.memo(MEMO_RUNNER.format(path=path), lambda: read_analysis(ctx.snapshot.head, path))
            if analysis is not None:
                out.append((path, analysis))
        # Their conditions joined once per label: every point of the label asks which variables
        # they read, and the one string's hash is then worked out once (`variables_read` is kept
        # per text).
        return out, "\n".join(_conditions(analysis) for _, analysis in out)

    scripts, conditions = ctx.memo(MEMO_LABEL_RUNNERS.format(runner=point.runner), analyses)
    env = variables_read(conditions, point_env(point))

    def compute() -> CheckoutAnswer | None:
        answers: dict[str, CheckoutAnswer] = {}
        for path, analysis in scripts:
            answer = runner_checkout(analysis, path, env)
            if answer is not None:
                answers[path] = answer
        if not answers:
            return None
        undecided = next((a for a in answers.values() if a.why is not None), None)
        if undecided is not None:
            return undecided
        made = {(a.checkout.repo, a.checkout.url, a.checkout.ref,
                 tuple((c.source, c.dest, c.contents) for c in a.checkout.copies))
                for a in answers.values() if a.checkout}
        if len(made) > 1:
            return CheckoutAnswer(why=MSG_RUNNERS_DIFFER, values={"runner": point.runner,
                                                                  "runners": join(sorted(answers))})
        return next((a for a in answers.values() if a.checkout is not None), CheckoutAnswer(why=None))

    key = ",".join(f"{k}={v}" for k, v in sorted(env.items()))
    return ctx.memo(MEMO_CHECKOUT.format(runner=point.runner, env=key), compute)


@by_identity(256)
def _conditions(analysis: Any) -> str:
    """The conditions `runner_checkout` evaluates for this runner analysis, joined: a variable
    whose name they do not hold cannot change its answer (recipes.launch.path.conditions.variables_read)."""
    return "\n".join(cmd.condition for cmd, _, _ in _relevant(analysis) if cmd.condition)


@dataclass
class PointRecipe:
    """Where a multi-node point's recipe was read from, or why it was not."""

    recipe: Any | None = None
    path: str | None = None  # the recipe's path as evidence cites it
    unavailable: str | None = None
    evidence: Evidence | None = None


def _readable(ctx: Any, co: Checkout | None) -> bool:
    """Whether the bot may read the repository `co` clones: a GitHub repository the policy
    names (`recipe_repositories`), at a ref it can resolve."""
    allowed = {a.lower() for a in ctx.config.policy.recipe_repositories}
    return co is not None and co.repo is not None and not co.ref_unknown and co.repo.lower() in allowed


def is_cloned(launcher: Any) -> bool:
    """Whether a launcher is a multi-node CONFIG_FILE the benchmark repository does not hold."""
    return launcher is not None and launcher.kind == "multinode-recipe" and launcher.exists is False


def cloned_variant(ctx: Any, point: Any) -> Any | None:
    """The variant serving a multi-node point from the recipe its runner's srt-slurm checkout
    holds (`point_recipe`); None when there is none or not exactly one."""
    if not is_cloned(point.launcher):
        return None
    found = point_recipe(ctx, point)
    if found is None or found.recipe is None:
        return None
    picked = found.recipe.select(point.launcher.selector)
    return picked[0] if len(picked) == 1 else None


_WORKSPACE_PATH = re.compile(r"\$\{?GITHUB_WORKSPACE\}?/([^\s\"']+)")
MEMO_COPY_SOURCES = "srt_checkout.copy_sources:{runner}"


def copy_sources(ctx: Any, point: Any) -> frozenset[str]:
    """Every `$GITHUB_WORKSPACE/<path>` the point's runner scripts name, read from their text:
    a cheap superset of what their copies can bring into a checkout (no bash parse)."""
    def compute() -> frozenset[str]:
        nodes = ctx.memo(MEMO_RUNNERS, lambda: runner_nodes(ctx.head_repo, ctx.snapshot.head))
        out: set[str] = set()
        for path in runner_scripts(ctx.head_repo, nodes, point.runner):
            try:
                data = ctx.snapshot.head.read(path)
            except OSError:
                data = None
            if data is not None:
                out.update(m.rstrip("/") for m in _WORKSPACE_PATH.findall(data.decode("utf-8", "replace")))
        return frozenset(out)

    return ctx.memo(MEMO_COPY_SOURCES.format(runner=point.runner), compute)


def copied_recipe(ctx: Any, point: Any, changed: tuple[str, ...] = ()) -> str | None:
    """The benchmark-repository file a runner's copy puts at a cloned launcher's CONFIG_FILE
    path (the file the point really runs; its edits affect the point, checks.context). With
    `changed`, the runner is read only when one of those files lies under a path it names
    (asked once per runner label and set of files)."""
    if not is_cloned(point.launcher):
        return None
    if changed:
        named = ctx.memo(MEMO_COPY_NAMED, dict)
        key = (point.runner, changed)
        if key not in named:
            sources = copy_sources(ctx, point)
            named[key] = any(c == s or c.startswith(s + "/") for c in changed for s in sources)
        if not named[key]:
            return None
    rel = inside_path(split_recipe_ref(point.launcher.written or point.launcher.path)[0])
    answer = point_checkout(ctx, point) if rel is not None else None
    found = answer.checkout.locate(rel) if answer is not None and answer.checkout is not None else None
    return found[0] if found is not None else None


def cloned_script(checkout: Checkout | None, ref: str) -> str | None:
    """The benchmark-repository file a recipe's `setup_script` is when the runner copies it into
    the checkout's `configs/` folder (srtctl runs setup scripts from there)."""
    if checkout is None:
        return None
    found = checkout.locate(f"configs/{setup_script_name(ref).rsplit('/', 1)[-1]}")
    return found[0] if found is not None and found[1].certain else None


# Where srtctl looks for a recipe's setup_script in its checkout, in order (worker_stage.py:
# `/configs/<name>`, then `/configs/patches/<name>` in newer srtctl).
SETUP_FOLDERS = ("configs", "configs/patches")


def cloned_setup(ctx: Any, point: Any, ref: str) -> list[tuple[str, Any, str]] | str | None:
    """A recipe `setup_script` that neither this repository nor a copy provides, read from the
    `configs/` (or `configs/patches/`) folder of the cloned repository at the pinned ref, with
    the files of that checkout it runs (`_clone_files`): [(cited path, analysis, how it runs)].
    Else why it was not read there (a sentence), or None when the point makes no checkout the
    bot reads."""
    answer = point_checkout(ctx, point)
    co = answer.checkout if answer is not None else None
    if co is None:
        return None
    if not _readable(ctx, co):
        return MSG_SETUP_CLONE_UNREAD.format(repo=co.repo or co.url, rev=co.rev_text, line=co.where)
    name = setup_script_name(ref)
    rels = [inside_path(f"{folder}/{name}") for folder in SETUP_FOLDERS]
    if any(r is None or not r.startswith(SETUP_FOLDERS[0] + "/") for r in rels):
        return None
    def read() -> tuple[str, Any] | None:
        tree = ctx.snapshot.external_tree(co.repo, co.ref)
        if tree is None:
            return READ_NOT_GIVEN, None
        if isinstance(tree, Unavailable):
            return READ_UNAVAILABLE, tree.reason
        for rel in rels:
            try:
                data = tree.source.read(rel)
            except OSError as exc:
                return READ_UNAVAILABLE, str(exc)
            if data is not None:
                break
        else:
            return READ_ABSENT, None
        return READ_OK, _clone_files(tree, co.repo, rel, data)

    kind, value = ctx.memo(MEMO_SETUP.format(key=f"{co.repo}@{co.ref}:{rels[0]}"), read)
    # Worded for this point's runner line (the read is shared).
    fmt = {"repo": co.repo, "rev": co.rev_text, "line": co.where}
    if kind == READ_ABSENT:
        return MSG_SETUP_NOT_IN_CLONE.format(**fmt, folders=join(f"{f}/" for f in SETUP_FOLDERS))
    if kind == READ_NOT_GIVEN:
        return MSG_SETUP_CLONE_NOT_GIVEN.format(**fmt)
    if kind == READ_UNAVAILABLE:
        return MSG_SETUP_CLONE_FAILED.format(**fmt, reason=value)
    return value


# srtctl mounts its checkout's `configs/` folder at `/configs` in every worker container
# (srtctl core/runtime.py), so a file a setup script runs as `/configs/<x>` is `configs/<x>`
# of the clone. Anything else it runs (a relative path, a variable) is not followed.
CLONE_MOUNT = ("/configs/", "configs/")
MAX_CLONE_FILES = 16
MSG_CLONE_RUNS_UNKNOWN = "line {line}: {ref}, a path outside the checkout's /configs mount"
MSG_CLONE_RUNS_ABSENT = "line {line}: {ref}, which that checkout does not hold"
MSG_CLONE_RUNS_MANY = f"more than {MAX_CLONE_FILES} files"
MSG_CLONE_RUNS_FAILED = "line {line}: {ref}, which could not be read ({reason})"


def _clone_files(tree: Any, repo: str, rel: str, data: bytes) -> list[tuple[str, Any, str]] | str:
    """The setup script at `rel` of a cloned tree and every file it runs there (`bash`/`source`
    of a script, `python3 FILE.py`), transitively, as (cited path, analysis, how it runs); or
    why the bot cannot tell what runs (MSG_SETUP_RUNS_MORE naming the lines)."""
    out: list[tuple[str, Any, str]] = []
    seen = {rel}
    queue = [(rel, data, False, SETUP_SCRIPT_KEY)]
    gaps: list[str] = []
    while queue:
        here, raw, python, via = queue.pop(0)
        path = external_path(repo, tree.sha, here)
        text = raw.decode("utf-8", "replace")
        analysis = analyze_python_file(text, path) if python else analyze_script(text, path)
        out.append((path, analysis, via))
        runs = [(str(src.resolved or src.value), src.line, False) for src in analysis.sources]
        runs += [(py, line, True) for py, _, line in python_file_runs(analysis)]
        for ref, line, is_py in runs:
            target = CLONE_MOUNT[1] + ref[len(CLONE_MOUNT[0]):] if ref.startswith(CLONE_MOUNT[0]) else None
            target = inside_path(target) if target is not None else None
            if target is None or not target.startswith(CLONE_MOUNT[1]):
                gaps.append(MSG_CLONE_RUNS_UNKNOWN.format(line=line, ref=ref))
                continue
            if target in seen:
                continue
            if len(seen) >= MAX_CLONE_FILES:
                gaps.append(MSG_CLONE_RUNS_MANY)
                break
            seen.add(target)
            try:
                got = tree.source.read(target)
            except OSError as exc:  # e.g. the GitHub API failing after its retries
                gaps.append(MSG_CLONE_RUNS_FAILED.format(line=line, ref=ref, reason=exc))
                continue
            if got is None:
                gaps.append(MSG_CLONE_RUNS_ABSENT.format(line=line, ref=ref))
                continue
            queue.append((target, got, is_py, f"run by {here}"))
    if gaps:
        return MSG_SETUP_RUNS_MORE.format(path=out[0][0], runs=join(dict.fromkeys(gaps), None, limit=3))
    return out


def point_recipe(ctx: Any, point: Any) -> PointRecipe | None:
    """The recipe of a multi-node point whose CONFIG_FILE the benchmark repository does not
    hold where the layout puts it (see the module docstring); None when its runner clones no
    srt-slurm repository (the recipe is then simply missing)."""
    launcher = point.launcher
    folder = posixpath.dirname(launcher.path) or launcher.path
    written = launcher.written or launcher.path
    rel_written, _ = split_recipe_ref(written)
    where = f"{point.source_path}:{point.source_line}"
    cite = Evidence(path=point.source_path, line=point.source_line, unavailable=True)
    fmt = {"ref": launcher.ref, "where": where, "written": rel_written, "folder": folder, "point": point.point_id}
    rel = inside_path(rel_written)
    if rel is None:
        return PointRecipe(unavailable=MSG_ESCAPES.format(**fmt), evidence=cite)
    answer = point_checkout(ctx, point)
    if answer is None:
        return None
    if answer.checkout is None:
        if answer.why is None:
            return None  # the runner clones srt-slurm only for other points
        return PointRecipe(unavailable=answer.why.format(**fmt, **answer.values), evidence=cite)
    co = answer.checkout
    line = f"{co.runner}:{co.line}"
    fmt.update(line=line, repo=co.repo or co.url, rev=co.rev_text)
    found = co.locate(rel)
    if found is not None:
        source, copy = found
        if not copy.certain:
            return PointRecipe(unavailable=MSG_UNDECIDED.format(**dict(fmt, line=f"{co.runner}:{copy.line}"),
                                                                condition="whether the copy runs"), evidence=cite)
        recipe = ctx.head_repo.recipe(source)
        if recipe is None:
            return PointRecipe(unavailable=MSG_COPY_MISSING.format(**dict(fmt, line=f"{co.runner}:{copy.line}"),
                                                                   source=source), evidence=cite)
        return PointRecipe(recipe=recipe, path=source)
    if co.repo is None:
        return PointRecipe(unavailable=MSG_CLONE_UNKNOWN.format(**fmt, url=co.url), evidence=cite)
    if co.ref_unknown:
        return PointRecipe(unavailable=MSG_REF_UNKNOWN.format(**dict(fmt, line=co.where)), evidence=cite)
    if not _readable(ctx, co):
        allowed = ctx.config.policy.recipe_repositories
        return PointRecipe(unavailable=MSG_NOT_ALLOWED.format(**fmt, allowed=join(allowed, None) or "none"),
                           evidence=cite)
    kind, value = ctx.memo(MEMO_RECIPE.format(key=f"{co.repo}@{co.ref}:{rel}"), lambda: _read_cloned(ctx, co, rel))
    # The read is shared by every point naming the recipe; the reason names this point's lines.
    fmt = dict(fmt, line=co.where)
    if kind == READ_OK:
        return PointRecipe(recipe=value, path=value.path)
    if kind == READ_NOT_GIVEN:
        message = MSG_NOT_GIVEN.format(**fmt)
    elif kind == READ_UNAVAILABLE:
        message = MSG_TREE_UNAVAILABLE.format(**fmt, reason=value)
    else:
        message = MSG_NOT_IN_CLONE.format(**fmt, short=value[:12])
    return PointRecipe(unavailable=message, evidence=cite)



def _read_cloned(ctx: Any, co: Checkout, rel: str) -> tuple[str, Any]:
    """(kind, value) of reading `rel` from the cloned repository at the checkout's ref: the
    parsed recipe, why the tree could not be read, or the commit that lacks the file."""
    tree = ctx.snapshot.external_tree(co.repo, co.ref)
    if tree is None:
        return READ_NOT_GIVEN, None
    if isinstance(tree, Unavailable):
        return READ_UNAVAILABLE, tree.reason
    try:
        data = tree.source.read(rel)
    except OSError as exc:
        return READ_UNAVAILABLE, str(exc)
    if data is None:
        return READ_ABSENT, tree.sha
    return READ_OK, parse_recipe(data, external_path(co.repo, tree.sha, rel))
