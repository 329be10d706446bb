"""Affected = the trace changed: the points a PR reaches only through a shared launch file are
judged by what they run, interpreted at the base and at the head (recipes.launch).

`Context.affected` first finds the points whose launch path holds a changed file (the textual
reach rule of recipes.launch.path.launch_path: cheap, and never too narrow). A point whose own entry or
launcher changed stays affected. A point reached only through a file other points share (a
runner script, benchmark_lib.sh, a server script) is traced at both trees with the point's
values (recipes.launch.point.Tracer, one trace per arm and runner, shared):

- the serving parts differ: affected, with the first difference as its reason;
- only the client parts differ (`build_replay_cmd`, the client's flags): affected for the
  client's check only (`AffectedPoint.scope == "client"`);
- nothing differs: not affected (a new `elif` arm for another model, a `${X:-same}` default,
  a partition or mount change on the runner);
- either trace holds an unknown that may hide code (a command, a source, an eval the
  interpreter could not read): the textual rule's answer stands, with that unknown named.

Before the base is traced, `unreached` asks whether the head trace can have reached the PR's
change at all (recipes.launch.reached): when every changed file is a shell script the head ran
none of the changed lines of (or a file no trace can read), the base trace is the head's and the
point is not affected without tracing it. Any doubt compares both traces.
"""
from __future__ import annotations

import logging
import re
from typing import Any, Optional

from recipes.launch.compare import CLIENT_ONLY, compare, hides_code
from recipes.launch.point import Budget, PointTrace, Tracer, is_client_install, srt_hook

log = logging.getLogger(__name__)
MEMO_TRACER = "trace:{side}"
MEMO_SHORTCUT = "trace:shortcut"  # {"decided": n, "compared": n, "why": {doubt: n}}: what `unreached` did
MEMO_BUDGET = "trace:budget"
MEMO_PROBES_SKIPPED = "trace:probes-skipped"  # the warning that the spent budget leaves probes untraced
# Interpreter steps one review spends on launches (both trees, the affected rule and Check 10
# together; recipes.launch.point.Budget): about 0.6 s of CPU here. A PR that reaches thousands
# of points through a shared file would otherwise take tens of seconds; past the budget, a point
# is judged as without traces (the reach rule, the script reading). What a smaller or a larger
# budget costs in rows and in CPU: docs/launch.md#budget.
TRACE_BUDGET_STEPS = 42_000
# What the affected rule leaves of the budget to the checks, which trace after it (Check 11 the
# agentic runs of a few points, checks.engine.BUDGET_ORDER): re-judging the candidates leaves
# CHECK_RESERVE; the probes (a point the text does not tie to a changed file, traced in case it
# depends on one) leave PROBE_RESERVE. Without them, a PR that reaches hundreds of points through
# a shared file left its own new point untraced ("could not verify"; #2158, #2360).
CHECK_RESERVE = 10_000
PROBE_RESERVE = 20_000
UNBUDGETED_STEPS = 10**12  # `without_budget`
REASON_BUDGET = "not traced: the review's {steps:,} interpreter steps were spent"
REASON_OPAQUE = "the trace could not rule it out: {what} at {where}"
REASON_DEPENDS = "{path} changed (its launch reads it: {how})"


def tracer(ctx: Any, side: str) -> Tracer:
    """The review's tracer of one tree ("base" or "head"), shared by every point."""
    def build() -> Tracer:
        repo = ctx.head_repo if side == "head" else ctx.base_repo
        src = ctx.snapshot.head if side == "head" else ctx.snapshot.merge_base_tree
        client = tuple(repo.layout.rel(d) for d in ctx.config.policy.benchmark_client_paths)

        def variant(point: Any) -> Any:
            from recipes.launch.path.srt_checkout import cloned_variant, is_cloned

            try:
                found = repo.variant_for(point)
                # A recipe of the srt-slurm checkout the runner makes (the same checkout at both
                # trees: what a PR changes there is what it copies in, read below).
                return found if found is not None or not is_cloned(point.launcher) else cloned_variant(ctx, point)
            except Exception:  # a recipe that does not bind is the hook's unknown
                return None

        def setup_text(point: Any, variant: Any, ref: str) -> tuple | None:
            from recipes.launch.path.launch_path import resolve_ref, srt_config_script
            from recipes.launch.path.srt_checkout import cloned_script, is_cloned, point_checkout

            if any(re.fullmatch(rx, ref.rsplit("/", 1)[-1]) for rx in ctx.config.policy.harness_setup_scripts):
                return ref, None  # srtctl ships it (policy `harness_setup_scripts`): not the PR's code
            path = None
            found = None
            if is_cloned(point.launcher):
                found = point_checkout(ctx, point)
                path = cloned_script(found.checkout if found is not None else None, ref)
            path = path or resolve_ref(repo, ctx.config.policy.workspace_mounts, ref, variant.path) or \
                srt_config_script(repo, ref, variant.path)
            data = src.read(path) if path else None
            if data is not None:
                return path, data.decode("utf-8", "replace")
            # Neither this repository nor a copy: the runner's srt-slurm checkout, if it makes one.
            found = found if found is not None else point_checkout(ctx, point)
            return cloned_setup_text(ctx, found.checkout if found is not None else None, ref)

        def deps(point: Any) -> tuple:
            launcher = getattr(point, "launcher", None)
            return (getattr(launcher, "path", None), getattr(launcher, "selector", None))

        return Tracer(src, hooks={"srtctl": srt_hook(variant, setup_text)}, client_paths=client, point_deps=deps,
                      mounts=tuple(ctx.config.policy.workspace_mounts), root=repo.layout.root,
                      budget=ctx.memo(MEMO_BUDGET, lambda: Budget(TRACE_BUDGET_STEPS)))
    return ctx.memo(MEMO_TRACER.format(side=side), build)


def without_budget(ctx: Any) -> None:
    """Lift the review's step budget for `ctx` (a tool that traces a whole tree, not a review:
    `inspect --trace`, bench/trace_coverage.py); each trace stays bounded by the interpreter's
    own caps (recipes/launch/state.py). Before the context's first trace."""
    ctx.memo(MEMO_BUDGET, lambda: Budget(UNBUDGETED_STEPS))


def own_trace(ctx: Any, point: Any) -> Optional[PointTrace]:
    """The point's trace at the head with its own values (its concurrency too, not a symbol), by
    the review's tracer: what `inspect --trace` prints and bench/trace_coverage.py counts."""
    return tracer(ctx, "head").trace(point, runners(ctx, "head", point.runner), symbolic=False)


def cloned_setup_text(ctx: Any, checkout: Any, ref: str) -> tuple | None:
    """A recipe's setup script read from the srt-slurm checkout the runner makes (its `configs/`
    or `configs/patches/` folder, mounted at `/configs` in the container), with that mount for
    the files it runs there; None when the checkout is not given or lacks it."""
    from recipes.evidence import external_path
    from recipes.evidence import Unavailable
    from recipes.launch.path.srt_checkout import CLONE_MOUNT, SETUP_FOLDERS, setup_script_name
    from recipes.source import inside_path

    if checkout is None or not checkout.repo:
        return None
    tree = ctx.snapshot.external_tree(checkout.repo, checkout.ref)
    if tree is None or isinstance(tree, Unavailable):
        return None
    name = setup_script_name(ref)
    for folder in SETUP_FOLDERS:
        rel = inside_path(f"{folder}/{name}")
        if rel is None or not rel.startswith(SETUP_FOLDERS[0] + "/"):
            return None
        try:
            data = tree.source.read(rel)
        except OSError:
            return None
        if data is not None:
            key = f"{checkout.repo}@{tree.sha}"
            mount = (CLONE_MOUNT[0].rstrip("/"), key, tree.source, CLONE_MOUNT[1].rstrip("/"))
            return external_path(checkout.repo, tree.sha, rel), data.decode("utf-8", "replace"), mount
    return None


def runners(ctx: Any, side: str, label: str | None) -> list[str]:
    from recipes.launch.path.launch_path import label_runner_scripts, runner_nodes, runner_scripts

    if side == "head":
        return label_runner_scripts(ctx, label)
    nodes = ctx.memo("trace:base-runner-nodes", lambda: runner_nodes(ctx.base_repo, ctx.snapshot.merge_base_tree))
    return runner_scripts(ctx.base_repo, nodes, label)


def point_traces(ctx: Any, point: Any, leave: int = 0) -> tuple[Optional[PointTrace], Optional[PointTrace]]:
    """The point's traces at the base and the head (its concurrency a symbol in both); None for
    one the review's budget (all but `leave` steps of it) leaves unmade."""
    base_t, head_t = tracer(ctx, "base"), tracer(ctx, "head")
    b_runners, h_runners = runners(ctx, "base", point.runner), runners(ctx, "head", point.runner)
    head = head_t.trace(point, h_runners, leave=leave)
    base = base_t.trace(point, b_runners, leave=leave)
    return base, head


def narrow(ctx: Any, points: list, shared: list[tuple[int, int]], leave: int = 0) -> list:
    """The affected points with those reached through shared files re-judged by trace: `shared`
    holds (index, number of the point's own reasons) for each. A point whose own entry or
    launcher changed keeps those reasons; the shared-file ones are replaced by the trace's.
    `leave`: steps of the budget its traces may not spend (`probe`)."""
    packages = ctx.config.policy.benchmark_client_packages
    trusted = ctx.config.policy.trusted_installers
    out: dict[int, Any] = dict(enumerate(points))
    for i, n_own in shared:
        ap = points[i]
        head = head_trace(ctx, ap.point, leave)
        hidden = None if head is None else _hidden(ctx, head, trusted)
        base = None
        if head is not None and hidden is None and unreached(ctx, ap.point, head):
            # The head never ran what the PR changed: the base trace is the same trace.
            if n_own:
                out[i] = type(ap)(point=ap.point, reasons=ap.reasons[:n_own])
            else:
                del out[i]
            continue
        if head is not None and hidden is None:  # an unknown at the head keeps the point
            base, head = point_traces(ctx, ap.point, leave)
            if base is not None and head is not None:
                hidden = _hidden(ctx, head, trusted) or _hidden(ctx, base, trusted)
        if head is None or (hidden is None and base is None):
            out[i] = type(ap)(point=ap.point, reasons=ap.reasons + [REASON_BUDGET.format(steps=TRACE_BUDGET_STEPS)])
            continue
        if hidden is not None:
            out[i] = type(ap)(point=ap.point, reasons=ap.reasons + [
                REASON_OPAQUE.format(what=hidden.detail, where=hidden.where())])
            continue
        # Points of one arm share their traces: the traces are compared once (`PointTrace.identity`).
        diff = ctx.memo(f"trace:compare:{base.identity}:{head.identity}", lambda b=base, h=head: compare(
            b.effects(), h.effects(), lambda e: is_client_install(e, packages)))
        if diff is None:
            if n_own:
                out[i] = type(ap)(point=ap.point, reasons=ap.reasons[:n_own])
            else:
                del out[i]
            continue
        out[i] = type(ap)(point=ap.point, reasons=ap.reasons[:n_own] + [diff.reason()],
                               scope=CLIENT_ONLY if diff.scope == CLIENT_ONLY and not n_own else "serving")
    return [out[i] for i in sorted(out)]


def _hidden(ctx: Any, trace: PointTrace, trusted: Any) -> Any:
    """The trace's first unknown that may hide code (compare.hides_code), or None: once per
    trace a review makes, not once per point that shares it (`PointTrace.identity`)."""
    return ctx.memo(f"trace:hidden:{trace.identity}",
                    lambda: next((e for e in trace.effects() if hides_code(e, trusted)), None))


def head_trace(ctx: Any, point: Any, leave: int = 0) -> Optional[PointTrace]:
    """The point's trace at the head (shared by the points of its arm); None when the review's
    budget (all but `leave` steps of it) is spent before it is made."""
    return tracer(ctx, "head").trace(point, runners(ctx, "head", point.runner), leave=leave)


def traced_speculation(ctx: Any, point: Any) -> Optional[bool]:
    """Whether the point's servers at the head start speculative decoding, read from its trace
    (recipes.launch.knobs.speculates): True when one does, False when every engine server's
    settings say it does not; None past the review's budget, for a trace that reaches no engine
    server, or when a server's settings cannot tell (the caller keeps its script reading)."""
    from recipes.launch import knobs

    trace = head_trace(ctx, point)
    if trace is None:
        return None
    said = [knobs.speculates(e) for e in knobs.servers(trace.effects()) if not e.client]
    if True in said:
        return True
    return False if said and None not in said else None


def probe(ctx: Any, point: Any, changed: set[str]) -> list[str]:
    """Whether a point whose textual path does not hold a changed file depends on one: the files
    its trace reads at the head or at the base (`PointTrace.files`). The reasons when it does, or
    when a trace sources or runs a file whose path it could not know; [] when neither trace
    reads one, and past the review's budget (logged: the probe is skipped, the candidates the
    text found were traced first, and the probes leave PROBE_RESERVE steps to the checks)."""
    head = head_trace(ctx, point, PROBE_RESERVE)
    found = sorted(changed & head.files) if head is not None else []
    trace = head
    if head is not None and not found and _base_may_differ(ctx, point, head, changed):
        base, _ = point_traces(ctx, point, PROBE_RESERVE)
        found, trace = (sorted(changed & base.files), base) if base is not None else ([], None)
    if trace is None:
        # Logged once a review (the memo runs it once): the next probes find the budget spent too.
        ctx.memo(MEMO_PROBES_SKIPPED, lambda: log.warning(
            "probe of %s not traced: the review's %s interpreter steps were spent (the later probes of "
            "this review are skipped without a message)", getattr(point, "config_key", "?"), f"{TRACE_BUDGET_STEPS:,}"))
        return []
    if not found:
        # A source or a run of a file whose path the trace could not know may be a changed file.
        trusted = ctx.config.policy.trusted_installers
        hidden = next((e for t in (head, trace) for e in t.effects() if hides_code(e, trusted) and _unknown_file(e)),
                      None)
        return [] if hidden is None else [REASON_OPAQUE.format(what=hidden.detail, where=hidden.where())]
    return [REASON_DEPENDS.format(path=p, how=_first_use(trace, p)) for p in found]


def _base_may_differ(ctx: Any, point: Any, head: PointTrace, changed: set[str]) -> bool:
    """Whether the point's base trace may differ from a head trace that depends on none of the
    `changed` files. Both runs start from the same values and read the same files with the same
    text until one reads a file the trees hold differently: a changed file, which the head would
    depend on. So the base trace is the head's unless the tracer reads something no trace
    records (`_read_by_tracer`), or a changed path lies in a folder the head looked up (a test
    of the folder: what a listing of it finds is not a file the trace depends on)."""
    if _read_by_tracer(ctx, point, changed) is not None:
        return True
    looked = set().union(*(t.data_reads | t.run_reads for t in head.runners.values()))
    return any(folder in looked for path in changed for folder in _folders(path))


def _folders(path: str) -> list[str]:
    parts = path.split("/")
    return ["/".join(parts[:i]) for i in range(1, len(parts))]


def _read_by_tracer(ctx: Any, point: Any, paths: Any) -> Optional[str]:
    """Why a change to `paths` may reach a point's trace without the trace recording a read of
    it, or None: the runner scripts its label lands on differ between the trees (runners.yaml),
    or a changed path is one the tracer reads for itself (`_tracer_file`)."""
    if _other_runners(ctx, point):
        return _OTHER_RUNNERS
    return next((_TRACER_READS for path in paths if _tracer_file(point, path)), None)


_TRACER_READS = "a changed file the tracer reads"
_OTHER_RUNNERS = "other runner scripts at the base"


def _other_runners(ctx: Any, point: Any) -> bool:
    """Whether the point's label lands on other runner scripts at the base (runners.yaml)."""
    return runners(ctx, "base", point.runner) != runners(ctx, "head", point.runner)


def _tracer_file(point: Any, path: str) -> bool:
    """A file the tracer reads for itself, outside what a trace records: a workflow template;
    for a point an srt-slurm recipe launches, a recipe file its binding may pick."""
    launcher = getattr(point, "launcher", None)
    recipe_launched = launcher is not None and launcher.kind != "script"
    return path.startswith(_TEMPLATE_FOLDER) or (recipe_launched and path.endswith(_RECIPE_SUFFIXES))


def _unknown_file(effect: Any) -> bool:
    return any(m in effect.detail for m in ("a file whose path is not known", "not a file"))


def _first_use(trace: PointTrace, path: str) -> str:
    """Where a trace first uses a repository file: the effect's chain, or that it read it."""
    from recipes.launch.fs import WORKSPACE

    host = f"{WORKSPACE}/{path}"
    for e in trace.effects():
        named = isinstance(e.path, str) and (e.path == host or e.path.endswith(":" + host))
        if named or any(p == path for p, _ in e.files):
            return f"{e.describe()} at {e.where()}"
    return "a test or a lookup of the file"


# Files the tracer reads for itself, outside what a trace records: the workflow templates (the
# job's variables; recipes.launch.point.TEMPLATES); and for a point an srt-slurm recipe
# launches, the recipe's YAML (the variant it binds, recipes.repository.variant_for). A change
# to one is compared even when no trace looked it up. runners.yaml is the runner scripts a point
# lands on, compared as such; a master config gives the point's values, which are the head
# point's in both traces (a point whose own entry changed is affected by that, never here).
_TEMPLATE_FOLDER = ".github/workflows/"
_RECIPE_SUFFIXES = (".yaml", ".yml", ".json", ".toml")


def unreached(ctx: Any, point: Any, head: PointTrace) -> bool:
    """Whether the PR's change cannot have reached the point's launch: then its base trace is
    its head trace and the point is not affected. True only when, for every changed path,
    - the head trace ran it as a shell script (looked up to run or source, never as data, never
      named by an effect: a file the command reads, a recipe), it is at both trees, its
      statements outside the change are the same (recipes.launch.reached.same_skeleton), and
      no line the head ran reaches a hunk of it (`reached`); or
    - no trace of the point looked it up nor ran it, and it is not a file the tracer reads for
      itself (a workflow template; for a point an srt-slurm recipe launches, any YAML or JSON);
    and the point runs on the same runner scripts at both trees. Anything else: False (compare)."""
    stats = ctx.memo(MEMO_SHORTCUT, lambda: {"decided": 0, "compared": 0, "why": {}})
    why = _doubt(ctx, point, head)
    if why is None:
        stats["decided"] += 1
        return True
    stats["compared"] += 1
    stats["why"][why] = stats["why"].get(why, 0) + 1
    return False


def _doubt(ctx: Any, point: Any, head: PointTrace) -> Optional[str]:
    """Why the head trace alone cannot decide (`unreached`), or None when it can."""
    from recipes.launch.fs import WORKSPACE
    from recipes.launch.reached import reached
    from recipes.launch.trace import SOURCE

    paths = ctx.changed_paths
    if not isinstance(paths, frozenset) or not head.runners:
        return "no changed files or no runner"
    if _other_runners(ctx, point):
        return _OTHER_RUNNERS
    traces = list(head.runners.values())
    named: set[str] = set()
    for e in head.effects():
        named.update(p for p, _ in e.files)
        if e.kind != SOURCE and isinstance(e.path, str):
            named.add(e.path.removeprefix(WORKSPACE + "/"))
    for path in sorted(paths):
        data = any(path in t.data_reads or any(path.startswith(d + "/") for d in t.data_reads) for t in traces)
        run = any(path in t.run_reads for t in traces)
        ran = set().union(*(t.executed.get(path, ()) for t in traces))
        defined = set().union(*(t.defined.get(path, ()) for t in traces))
        if data or path in named:
            return "a changed file read as data"
        if not run:
            if ran or defined:
                return "a changed file run outside the files record (a setup script)"
            if _tracer_file(point, path):
                return _TRACER_READS
            continue
        texts = ctx.memo(f"trace:texts:{path}", lambda p=path: _texts(ctx, p))
        if texts is None:
            return "a changed script added, deleted or renamed"
        _, head_text, file_hunks, same = texts
        if not same:
            return "a changed script's statements moved"
        lines = head_text.splitlines()
        if any(reached(h, ran, lines, defined) for h in file_hunks):
            return "a changed line reached"
    return None


def _texts(ctx: Any, path: str) -> Optional[tuple]:
    """(base text, head text, hunks, same skeleton) of a file changed in place; None otherwise."""
    from recipes.launch.reached import hunks, same_skeleton

    try:
        base = ctx.snapshot.merge_base_tree.read(path)
        head = ctx.snapshot.head.read(path)
    except Exception:
        return None
    if base is None or head is None:
        return None
    b, h = base.decode("utf-8", "replace"), head.decode("utf-8", "replace")
    return b, h, hunks(b, h), same_skeleton(b, h)
