"""Check 10 (No engine patches): the pinned image runs as shipped, or the patch carries a complete, linked waiver.

What it checks:
    Each affected point's interpreted trace at the head (recipes.launch, docs/launch.md), and
    the PR's diff. Nothing passes because no pattern matched: the check reads what the launch
    does, whatever construct does it.
    - `.patch`/`.diff` files added or changed in the PR, and `sitecustomize.py`,
      `usercustomize.py` or `.pth` files;
    - a file the launch wrote or downloaded and then runs or imports, inside the container
      the server runs in;
    - a write, move, unpack, checkout, in-place edit or Python write where the image keeps
      code (Python's package folders, an engine's source tree, a code or start-up hook file;
      recipes.launch.image), an engine's tree in a folder mounted into the container, and
      any patch applied inside the container (`git apply`/`am`, `patch`);
    - an install inside the container from anything but the image's own index (a URL, a
      git source, a wheel or archive, a local tree, another index);
    - environment hooks on a server that load code into it (policy `patch_env_hooks`, e.g.
      `PYTHONSTARTUP`, `LD_PRELOAD`, also from an srt-slurm recipe's environment), and
      `PYTHONPATH` naming a repository directory that holds `sitecustomize.py`/
      `usercustomize.py`/`.pth` files, or a folder where the launch wrote one that imports
      more than the client's packages;
    - "could not verify" for an unknown inside the container before its last server starts
      that may hide code (a command, an option, a source, an eval, a setup script the bot
      cannot read, a write to a path it cannot know; on the runner too when the launch starts
      no server the bot can see), and for a point the review's interpreter budget left
      untraced, unless a definite patch is reported.
    Each finding cites the effect's file:line and the chain that reached it (runner:line ->
    script:line -> fn ... -> file:line).
    The rule covers the serving stack only: a patch whose target and command name only the
    benchmark client or eval tooling (policy `benchmark_client_packages`: lm-eval, aiperf,
    sa-bench, the harness's eval patches) and no engine package is not an engine patch, nor is
    a `.patch` file all of whose target files are client files.
    A patch passes only with a waiver `<waiver_dir>/<PR>.md` (recipes.waivers) that states
    what is patched, why, the upstream link and the removal plan, names the patched file, and
    is linked from the sign-off's Additional detail section. A patch in a file this PR
    changes needs this PR's waiver (at the head); a patch in an unchanged file (a pre-existing
    patch that a new config now reaches) needs the waiver of the PR that introduced it, already
    on the target branch, naming the file.
Why it matters:
    A patched engine measures something no customer can run; the waiver makes every
    exception visible, justified and temporary.
Evidence it cites:
    The file and line of each patch with its chain, and the waiver path (or its absence).
Not applicable when:
    No benchmark point's script, image or config changes: no affected point and no patch-like
    file in the diff (a changed script that no point runs, or whose change no point takes,
    affects nothing).
How to fix:
    Remove the patch and use an image that runs unmodified, or file a complete waiver
    `docs/waiver/<PR>.md` in the introducing PR and link it in the Additional detail section.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from recipes.launch.path.launch_path import changed_file
from checks.result import CheckResult, Evidence
from recipes.launch.path.serving import resolve_reference, serving_views
from recipes.launch.path.serving_unlisted import unlisted_agentic_views
from checks.serving_rows import changed_files_unavailable, first_unavailable, launch_evidence
from checks.text import items_text, join, keys_text
from recipes.engines import dist_name
from recipes.waivers import Waiver, parse_waiver, waiver_path

PATCH_SUFFIXES = (".patch", ".diff")
HOOK_FILES = re.compile(r"(?:^|/)(?:sitecustomize|usercustomize)\.py$|\.pth$")
PYTHONPATH = "PYTHONPATH"

MSG_NA = "No benchmark point's scripts, images or serving configs change, and the diff adds no patch files."
MSG_PATCH_FILE = "{path} is a patch file added by this PR"
MSG_HOOK_FILE = "{path} is an interpreter start-up hook ({kind})"
MSG_ENV_HOOK = "{where} sets {name}={value}, which loads code into the server"
MSG_PYTHONPATH = "{where} puts {value} on PYTHONPATH, an overlay holding {hook}"
MSG_HOOK_WRITTEN = "{where} writes {path} ({detail}), a start-up hook the server at {server} loads through PYTHONPATH"
MSG_NO_WAIVER = "no waiver {path}"
MSG_WAIVER_INCOMPLETE = "waiver {path} lacks {missing}"
MSG_WAIVER_UNNAMED = "waiver {path} does not name {files}"
MSG_WAIVER_UNLINKED = "waiver {path} is not linked from the Additional detail section"
MSG_NO_BASE_WAIVER = "no waiver on the target branch names {files}"
MSG_FAIL = "Engine patch without a valid waiver: {items} ({missing}); remove the patch, or {fix}."
MSG_FIX_NEW = "file a complete {path} (what, why, upstream link, removal plan) and link it in the Additional detail section"
MSG_FIX_OLD = "link the target branch's waiver for it (filed by the PR that introduced it) in the Additional detail section"
MSG_PASS_CLEAN = (
    "No patch files, in-place rewrites, start-up hooks, engine wheel installs or container file "
    "overrides in the launch path of {keys}{launch}."
)
MSG_PASS_LAUNCH = "; the server starts with plain {entries}"
MSG_PASS_WAIVED = "Engine patch {items} is covered by waiver {waivers}, complete and linked from the Additional detail section."


@dataclass(frozen=True)
class Patch:
    text: str
    path: str  # the file that holds the patch
    line: int | None
    target: str | None = None
    chain: str | None = None  # how the launch got there (runner:line -> script:line -> fn ...)
    last: int | None = None  # the statement's last line (continuations, a here-document)

    @property
    def evidence(self) -> Evidence:
        return Evidence(path=self.path, line=self.line, note=f"via {self.chain}" if self.chain else None)


_SEGMENT = re.compile(r"[/@#=+:\[\]\s\"'$(){}.]+")


def _line_text(here: list) -> str:
    """The words of what a line runs (its reads left out), for the client-only rule."""
    from recipes.launch.trace import READ

    return " ".join(w for x in here if x.kind != READ for w in x.argv if isinstance(w, str))


def _settings_only(e, hooks: set) -> bool:
    """Whether the file a run-written effect runs is known text of plain `NAME=value` lines (and
    blank or comment lines) whose names load no code."""
    texts = [text for _, text in e.wrote]
    if len(texts) != 1 or not isinstance(texts[0], str):
        return False
    for line in texts[0].splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        m = _SETTING.fullmatch(line)
        if m is None or m.group(1) in hooks or m.group(1) in _CODE_LOADING_NAMES:
            return False
    return True


def _client_only(ctx, *texts: str | None) -> bool:
    """Whether a patch touches only the benchmark client or eval tooling (policy
    `benchmark_client_packages`: lm-eval, aiperf, sa-bench, the harness's eval patches) and names
    no engine package: the rule covers the serving stack, not the client measuring it."""
    policy = ctx.config.policy
    text = " ".join(t for t in texts if t).lower()
    if not text:
        return False
    return _text_client_only(text, tuple(policy.engine_packages), tuple(policy.benchmark_client_packages))


@functools.lru_cache(maxsize=4096)
def _text_client_only(text: str, engine_packages: tuple[str, ...], client_packages: tuple[str, ...]) -> bool:
    # Every point running the same scripts asks about the same patch texts.
    engine_pkgs = _dists(engine_packages)
    words = {w for w in _SEGMENT.split(text) if w}
    if any(dist_name(w) in engine_pkgs or dist_name(w.removesuffix(".git")) in engine_pkgs for w in words):
        return False
    return any(c.lower() in text for c in client_packages)


@functools.lru_cache(maxsize=16)
def _dists(packages: tuple[str, ...]) -> frozenset[str]:
    return frozenset(dist_name(p) for p in packages)


_DIFF_TARGET = re.compile(r"^(?:\+\+\+|---) (?:[ab]/)?(\S+)", re.MULTILINE)


def _patch_file_client_only(ctx, path: str) -> bool:
    """A `.patch`/`.diff` file every one of whose target files belongs to the benchmark client."""
    data = ctx.snapshot.head.read(path)
    if data is None:
        return False
    targets = {t for t in _DIFF_TARGET.findall(data.decode("utf-8", "replace")) if t != "/dev/null"}
    return bool(targets) and all(_client_only(ctx, t) for t in targets)


def _applies_client_patch(ctx, effects) -> bool:
    """The trace's reads at one line (`git apply x.patch`, `patch -p1 < x.patch`) are repository
    patch files that all touch only the benchmark client: the patch file's own targets decide,
    not the directory it is applied in."""
    files = [p for e in effects for p, _ in e.files if p.endswith(PATCH_SUFFIXES)]
    return bool(files) and all(_patch_file_client_only(ctx, p) for p in files)


# Writes that change no file's text: a new folder or empty file, a mode.
HARMLESS_WRITES = ("create", "mode")
# Writes to a path the bot cannot know that are not code: a command's output (a log), a
# deletion, a download kept as data (it is code only once it runs: a run-written effect).
UNKNOWN_PATH_DATA = ("delete", "redirect", "append", "create", "download", "config")
# Writes that change code where they land (a log or a result written into a mounted folder does not).
CODE_CHANGES = ("in-place edit", "checkout", "unpack", "copy", "move", "link", "install", "python write")
# Commands whose in-place edit applies a patch (`git apply`/`am`, `patch`): whatever folder it is
# applied in, the patch changes code there, unless every file it targets is the client's. Other
# in-place edits of git (`git config --global` of ~/.gitconfig) are not patches.
GIT_PATCH_VERBS = ("apply", "am")


def _applies_patch(argv) -> bool:
    words = [w for w in argv if isinstance(w, str)]
    tool = words[0].rsplit("/", 1)[-1] if words else ""
    return tool == "patch" or (tool == "git" and any(w in GIT_PATCH_VERBS for w in words[1:]))
MSG_TRACE_WRITE = "{where} {how} {path} inside the image {image}"
MSG_TRACE_WRITE_MOUNTED = "{where} {how} {path}, a folder mounted into {image}"
MSG_TRACE_RUN_WRITTEN = "{where} runs {path}, which {detail}"
# A settings file the launch writes and sources (`NAME=value` lines, job.slurm's
# hicache_mc_<JOB>.env): plain assignments run no code. A name that loads code (the policy's
# hooks, PYTHONPATH, BASH_ENV/ENV that a later shell sources) or chooses which program or
# library runs (PATH, LD_LIBRARY_PATH, PYTHONHOME, PYTHONUSERBASE: a folder the launch wrote
# ahead of the image's) keeps it a patch.
_SETTING = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)=[A-Za-z0-9_.,:/@%+=\x01-]*")
_CODE_LOADING_NAMES = frozenset({"PYTHONPATH", "BASH_ENV", "ENV", "PATH", "LD_LIBRARY_PATH", "PYTHONHOME",
                                 "PYTHONUSERBASE"})
MSG_TRACE_INSTALL = "{where} installs {pkgs} from {origin}"
MSG_TRACE_HIDDEN = (
    "could not verify {key}: what it runs is not fully known at {where} ({detail}); "
    "the bot reads every command of a serving path, so make that step one it can read"
)
MSG_UNTRACED = (
    "could not verify {key}: its launch was not interpreted, the review's {steps:,} interpreter steps "
    "were spent on other points; the bot reads a launch only by interpreting it"
)


def _file_site(e):
    """The repository file and line an effect happens at: its own site, or for shell text it
    ran (`bash -c '...'`, `eval`), the line of the file that ran it."""
    for site in (e.site, *reversed(e.chain)):
        if not site.path.endswith(")") and site.path not in ("runner", "sweep job", "<unknown>"):
            return site
    return e.site


def _trace_patches(ctx, views) -> tuple[list[Patch], CheckResult | None]:
    """Engine patches read off each point's interpreted trace (recipes.launch): a file the
    launch wrote and then runs, a write into the image where it keeps code, an install from
    anything but the image's index, an environment hook or a start-up overlay on a server; and
    the first unknown that may hide code on a serving path, or a point left untraced by the
    review's budget ("could not verify": nothing passes because no pattern matched)."""
    from recipes.launch.path.trace_affected import TRACE_BUDGET_STEPS, head_trace
    from recipes.launch.compare import hides_code, serving_part
    from recipes.launch.image import code_path, install_origin
    from recipes.launch.point import is_client_install, server_env
    from recipes.launch.trace import EXEC, INSTALL, PYTHON, READ, RUN_WRITTEN, SERVER, WRITE
    from recipes.launch.words import Unknown

    policy = ctx.config.policy
    hooks = set(policy.patch_env_hooks)
    engine_pkgs = _dists(tuple(policy.engine_packages))
    out: dict[tuple, Patch] = {}
    done: set[tuple] = set()  # PointTrace.identity of the traces read
    hidden: CheckResult | None = None

    def patch(e, text: str, target: str | None, *key) -> None:
        # The first effect at a site and key stands for the rest (points share their launch
        # files): its chain is spelled out only then.
        site = _file_site(e)
        at = (site.path, site.line) + key
        if at not in out:
            out[at] = Patch(text, site.path, site.line, target, e.where(), site.last)

    def unknown(v, e, detail: str) -> CheckResult:
        return hidden or CheckResult.failed(MSG_TRACE_HIDDEN.format(key=v.config_key, where=e.where(), detail=detail),
                                            Evidence(path=e.site.path, line=e.site.line, unavailable=True,
                                                     note=f"via {e.where()}"))

    for v in views:
        trace = head_trace(ctx, v.point)
        if trace is None:
            # Past the review's budget: nothing read this point's launch, so nothing may pass it.
            hidden = hidden or CheckResult.failed(
                MSG_UNTRACED.format(key=v.config_key, steps=TRACE_BUDGET_STEPS),
                Evidence(path=v.launcher_path or v.point.source_path, line=None if v.launcher_path else v.point.source_line,
                         unavailable=True, note="not interpreted: the review's trace budget was spent"))
            continue
        if trace.identity in done:
            continue
        done.add(trace.identity)
        effects = trace.effects()
        # An unknown can hide a patch only before the servers start (after: the client, the
        # evals, the cleanup); a definite patch counts wherever it is.
        early = {id(e) for e in trace.before_serving()}
        # A launch that starts no server the bot can see (its `sbatch`/`srun`/`docker` is one
        # it could not read): an unknown on the runner itself may hide the whole serving path.
        serverless = {id(e) for t in trace.runners.values() if not any(x.kind == SERVER for x in t.effects)
                      for e in t.effects}
        # Start-up hooks the launch writes inside a container (`cat > "$dir/sitecustomize.py"`),
        # by the folder that holds them as the container sees it: one a server loads through
        # PYTHONPATH is a patch unless what it imports is only the client's.
        hooks_written: dict[str, list] = {}
        for e in effects:
            if e.kind == WRITE and e.container and isinstance(e.path, str) and HOOK_FILES.search(e.path):
                hooks_written.setdefault(e.shown_path().rsplit("/", 1)[0], []).append(e)
        # What each line does, for the client-only rule (a patch that names only the benchmark
        # client, or applies a .patch file whose targets are all client files).
        at_line: dict[tuple, list] = {}
        for e in effects:
            if e.kind in (EXEC, PYTHON, READ):
                at_line.setdefault((e.site.path, e.site.line), []).append(e)
        serving = {id(e) for e in serving_part(effects, lambda e: is_client_install(e, policy.benchmark_client_packages))}
        for e in effects:
            if id(e) not in serving and not (e.kind == WRITE and e.client):
                # The client's part is the client's, except a write into the engine's code made
                # from it (a client helper rewriting an installed engine file).
                continue
            where = e.where()
            here = at_line.get((e.site.path, e.site.line), [])
            if e.kind in (WRITE, RUN_WRITTEN) and (_client_only(ctx, e.shown_path(), _line_text(here))
                                                   or _applies_client_patch(ctx, here)):
                continue  # the eval/benchmark client, not the serving stack
            # Inside the container the server runs in (or the recipe's, for its setup script):
            # the runner's own tooling on the host (its venv, its installers) is not the engine.
            # On the runner, a file it sources from its own tooling (a venv's `activate`, uv's
            # `env`) sets its environment; what starts the job is a command it runs.
            on_runner = id(e) in serverless and not e.detail.startswith("sources ")
            if hides_code(e, policy.trusted_installers) and (e.container or on_runner) and id(e) in early:
                hidden = unknown(v, e, e.detail)
                continue
            if e.kind == RUN_WRITTEN and e.container:
                # Where the server runs (the runner's own scripts it writes and runs, such as a
                # result collector, change nothing the engine serves).
                if _settings_only(e, hooks):
                    continue
                patch(e, MSG_TRACE_RUN_WRITTEN.format(where=where, path=e.shown_path(), detail=e.detail),
                      e.shown_path())
            elif e.kind == WRITE and e.container and e.how not in HARMLESS_WRITES:
                applies = e.how == "in-place edit" and any(x.kind == EXEC and _applies_patch(x.argv) for x in here)
                how = f"{e.how} (applying a patch)" if applies else e.how
                if isinstance(e.path, Unknown):
                    if applies:  # a patch applied in a folder found at run time is still a patch
                        patch(e, MSG_TRACE_WRITE.format(where=where, how=how, path=f"<{e.path.why}>",
                                                        image=e.container), None)
                    elif e.how not in UNKNOWN_PATH_DATA and id(e) in early:
                        hidden = unknown(v, e, f"{e.how} of a path it cannot know: {e.path.why}")
                    continue
                prefix = f"{e.container}:"
                inside = e.path[len(prefix):] if e.path.startswith(prefix) else None
                # A folder mounted from the host (the checkout) counts when the write changes code
                # in an engine's tree there; in the image, any write where it keeps code.
                code = code_path(inside, engine_pkgs) if inside is not None else \
                    e.how in CODE_CHANGES and code_path(e.path, engine_pkgs, image=False)
                if code or applies:
                    if inside is not None:
                        patch(e, MSG_TRACE_WRITE.format(where=where, how=how, path=inside, image=e.container), inside)
                    else:
                        patch(e, MSG_TRACE_WRITE_MOUNTED.format(where=where, how=how, path=e.path, image=e.container),
                              e.path)
            elif e.kind == INSTALL and e.container:  # the runner's own tooling is not the engine
                words = [w for w in e.argv if isinstance(w, str)]
                origin = "a source tree" if e.detail == "editable" else install_origin(words)
                if origin and not _client_only(ctx, " ".join(words)):
                    pkgs = " ".join(w for w in words if not w.startswith("-"))[:120]
                    patch(e, MSG_TRACE_INSTALL.format(where=where, pkgs=pkgs, origin=origin), pkgs)
            elif e.kind in (SERVER, PYTHON):
                for name, value in server_env(e):
                    if name in hooks and isinstance(value, str) and value.strip():
                        patch(e, MSG_ENV_HOOK.format(where=where, name=name, value=value), value, name)
                    elif name == PYTHONPATH and isinstance(value, str):
                        hook = _overlay_hook(ctx, value, e.site.path)
                        if hook:
                            patch(e, MSG_PYTHONPATH.format(where=where, value=value, hook=hook), hook, name)
                        for entry in value.split(":"):
                            for w in hooks_written.get(entry.rstrip("/"), []):
                                if not _client_only(ctx, w.shown_path(), w.detail):
                                    patch(w, MSG_HOOK_WRITTEN.format(where=w.where(), path=w.shown_path(), detail=w.detail,
                                                                     server=where), w.shown_path(), name)
    return list(out.values()), hidden


def _server_entries(ctx, views) -> list[str]:
    """How each traced point's servers start (`sglang.launch_server`, `vllm serve`), for a pass."""
    from recipes.launch.path.trace_affected import head_trace
    from recipes.engines import launch_executables, launch_modules
    from recipes.launch.trace import SERVER

    modules, executables = launch_modules(), launch_executables()
    out: set[str] = set()
    seen: set[tuple] = set()
    for v in views:
        trace = head_trace(ctx, v.point)
        if trace is None or trace.identity in seen:
            continue
        seen.add(trace.identity)
        for e in trace.effects():
            if e.kind != SERVER:
                continue
            words = [w for w in e.argv if isinstance(w, str)]
            entry = next((w for w in words if w in modules), None)
            if entry is None:
                exe = next((w.rsplit("/", 1)[-1] for w in words if w.rsplit("/", 1)[-1] in executables), None)
                entry = f"{exe} serve" if exe and "serve" in words else exe
            if entry:  # an srt-slurm recipe's server has no command line of its own
                out.add(entry)
    return sorted(out)


def _overlay_hook(ctx, value: str, referrer: str) -> str | None:
    """A start-up hook file inside a repository directory named on PYTHONPATH, if any."""
    repo = ctx.head_repo
    for entry in value.split(":"):
        entry = entry.strip()
        if not entry or "$" in entry:
            continue
        probe = resolve_reference(ctx, entry.rstrip("/") + "/sitecustomize.py", referrer)
        if probe:
            return probe
        for candidate in (entry, repo.layout.rel(entry.lstrip("/"))):
            for path in repo.src.list(candidate.strip("/")) if candidate else []:
                if HOOK_FILES.search(path):
                    return path
    return None


def _diff_patches(ctx) -> list[Patch]:
    out = []
    files = ctx.snapshot.files
    for f in files if isinstance(files, list) else []:
        if f.status == "removed":
            continue
        if f.path.endswith(PATCH_SUFFIXES):
            if _patch_file_client_only(ctx, f.path):
                continue
            out.append(Patch(MSG_PATCH_FILE.format(path=f.path), f.path, None, f.path))
        elif HOOK_FILES.search(f.path) and not _client_only(ctx, f.path):
            out.append(Patch(MSG_HOOK_FILE.format(path=f.path, kind=f.path.rsplit("/", 1)[-1]), f.path, None, f.path))
    return out


def _introduced(ctx, patch: Patch, changed: frozenset) -> bool:
    """Whether this PR introduces the patch: its file is new, or not shell, or the PR changed a
    line of the patching statement (its continuation lines and a here-document it writes, as the
    trace's site spans them). A PR that edits another line of a file holding an older patch does
    not introduce that patch: the waiver it needs is the introducing PR's, already on the target
    branch."""
    if patch.path not in changed:
        return False
    files = ctx.snapshot.files if isinstance(ctx.snapshot.files, list) else []
    f = next((f for f in files if f.path == patch.path), None)
    if f is None or patch.line is None:
        return True
    change = changed_file(ctx, f)
    if change.whole is not None:
        return True
    last = max(patch.line, patch.last or patch.line)
    return any(patch.line <= n <= last for n in change.lines)


def _names(patch: Patch) -> set[str]:
    """Words a waiver may use to name a patch: the patching file and the patched target."""
    out = {patch.path.rsplit("/", 1)[-1]}
    if patch.target:
        last = patch.target.rstrip("/").rsplit("/", 1)[-1]
        if not re.search(r"[$`()\s]", last):  # `$(python3 -c ...)`: a target known only at run time names nothing
            out.add(last)
    return {n for n in out if n}


def _names_patch(waiver_text: str, patch: Patch) -> bool:
    low = waiver_text.lower()
    return any(n.lower() in low for n in _names(patch))


def _linked(ctx, path: str) -> bool:
    tail = "/".join(path.rsplit("/", 2)[-2:]).lower()  # "waiver/<PR>.md"
    return tail in ctx.additional_detail.lower()


def _load(src, path: str) -> tuple[str, Waiver] | None:
    data = src.read(path)
    if data is None:
        return None
    text = data.decode("utf-8", "replace")
    return text, parse_waiver(text, path)


class NoEnginePatchesCheck:
    def applies(self, ctx) -> str | None:
        if changed_files_unavailable(ctx) is not None:
            return None
        if ctx.affected.serving_points or _diff_patches(ctx) or unlisted_agentic_views(ctx):
            return None
        return MSG_NA

    def evaluate(self, ctx) -> CheckResult:
        unavailable = changed_files_unavailable(ctx)
        if unavailable is not None:
            return unavailable
        views = serving_views(ctx) + unlisted_agentic_views(ctx)
        missing = first_unavailable(views, launch=ctx)
        if missing is not None:
            return missing
        traced, hidden = _trace_patches(ctx, views)
        patches = _diff_patches(ctx) + traced
        if hidden is not None and not patches:
            return hidden  # a patch found is the more useful FAIL; no pass with an unknown left
        if not patches:
            entries = _server_entries(ctx, views)
            launch = MSG_PASS_LAUNCH.format(entries=join(entries, None)) if entries else ""
            return CheckResult.passed(MSG_PASS_CLEAN.format(keys=keys_text(v.config_key for v in views), launch=launch),
                                      *launch_evidence(views))
        changed = ctx.changed_paths if isinstance(ctx.changed_paths, frozenset) else frozenset()
        new = [p for p in patches if _introduced(ctx, p, changed)]
        old = [p for p in patches if p not in new]
        waiver_dir = ctx.head_repo.layout.waiver_dir
        problems: list[str] = []
        evidence: list[Evidence] = []
        used: list[str] = []
        fix = MSG_FIX_OLD
        if new:
            path = waiver_path(waiver_dir, ctx.snapshot.number)
            fix = MSG_FIX_NEW.format(path=path)
            loaded = _load(ctx.snapshot.head, path)
            if loaded is None:
                problems.append(MSG_NO_WAIVER.format(path=path))
                evidence.append(Evidence(path=path, unavailable=True, note="waiver missing"))
            else:
                text, waiver = loaded
                if waiver.missing:
                    problems.append(MSG_WAIVER_INCOMPLETE.format(path=path, missing=join(waiver.missing, None)))
                unnamed = [p for p in new if not _names_patch(text, p)]
                if unnamed:
                    files = join(sorted({n for p in unnamed for n in _names(p)}), None)
                    problems.append(MSG_WAIVER_UNNAMED.format(path=path, files=files))
                if not _linked(ctx, path):
                    problems.append(MSG_WAIVER_UNLINKED.format(path=path))
                evidence.append(Evidence(path=path))
                used.append(path)
        if old:
            # A pre-existing patch needs the waiver of the PR that introduced it, already on the
            # target branch (not merely at this PR's merge base).
            target = ctx.target_repo
            base_waivers = [w for w in (_load(target.src, p) for p in target.src.list(target.layout.waiver_dir)
                                        if p.endswith(".md")) if w is not None]
            for p in old:
                good = [w for text, w in base_waivers if _names_patch(text, p)]
                if not good:
                    problems.append(MSG_NO_BASE_WAIVER.format(files=join(sorted(_names(p)), None)))
                    continue
                complete = [w for w in good if not w.missing] or good
                w = complete[0]
                if w.missing:
                    problems.append(MSG_WAIVER_INCOMPLETE.format(path=w.path, missing=join(w.missing, None)))
                if not _linked(ctx, w.path):
                    problems.append(MSG_WAIVER_UNLINKED.format(path=w.path))
                evidence.append(Evidence(path=w.path))
                used.append(w.path)
        items = [p.text for p in patches]
        shown = items_text(items)
        if problems:
            return CheckResult.failed(MSG_FAIL.format(items=shown, missing="; ".join(dict.fromkeys(problems)), fix=fix),
                                      *[p.evidence for p in patches], *evidence)
        if hidden is not None:
            return hidden
        return CheckResult.passed(MSG_PASS_WAIVED.format(items=shown, waivers=join(dict.fromkeys(used), None)),
                                  *[p.evidence for p in patches], *evidence)
