"""The words a command passes when a branch chose some of them, for one point
(recipes.launch.path.runner_launch.chain_words; Check 9 reads a client's flags from them).

bench.sh sets `extra_flags="--use-chat-template"` only in `if [ "$IS_MTP" = "true" ]` and runs
`run_benchmark_serving ... $extra_flags`: the static reading of the script (recipes.bash) cannot
say which value a point passes; read in the chain's scope (recipes.launch.path.shell_scope), with the point's
values, it can."""
from __future__ import annotations

import re
from typing import Any, Callable, TypeVar

from recipes.launch.path.conditions import VAR_REF
from recipes.launch.path.launch_path import point_env
from recipes.launch.path.shell_scope import MISSING, Scope, Stop, absolute
from recipes.scripts import ScriptAnalysis

T = TypeVar("T")
WORKSPACE_VARS = ("GITHUB_WORKSPACE",)  # the runner's checkout, its working directory
PRINT_COMMANDS = frozenset({"echo", "printf", ":", "true", "logger"})  # text printed to a log never reaches a program
_BRANCH_FLAGS = "_branch_words_flag_vars"  # per analysis: the variables `_branch_flag_vars` gives


def branch_words(a: ScriptAnalysis, cmd: Any) -> list[tuple[int, str]]:
    """(index in argv, variable) of each `$name` word of a command that a branch of this text
    may set to an option (`extra_flags="--use-chat-template"` in an `if`): the words a check of
    client flags needs decided. Other words stay as written (and the walk asks no more of the
    point's variables than it needs)."""
    if not cmd.expanded or not any(cmd.arg_conditions) or cmd.argv[0] in PRINT_COMMANDS:
        return []
    flags = _branch_flag_vars(a)
    return [(i, m.group(1)) for i, w in enumerate(cmd.argv) if (m := VAR_REF.fullmatch(w)) and m.group(1) in flags]


def _branch_flag_vars(a: ScriptAnalysis) -> frozenset[str]:
    """The variables this text assigns at the top level on a branch, one of whose top-level
    values holds an option word (`--x`)."""
    found = a.__dict__.get(_BRANCH_FLAGS)
    if found is None:
        top = [(n, loc) for n, loc, _ in a.assignments if loc.function is None]
        branch = {n for n, loc in top if loc.condition}
        found = frozenset(n for n, loc in top if n in branch and any(w.startswith("--") for w in (loc.value or "").split()))
        a.__dict__[_BRANCH_FLAGS] = found
    return found


def words_of(scope: Scope, cmd: Any) -> tuple[str | None, ...] | None:
    """The words of `cmd` for the point the scope now reads, or None when its branch is not
    decided to run."""
    if scope.holds(cmd.condition, cmd.line) is not True:
        return None
    values: dict[int, list[str | None]] = {}
    for i, name in branch_words(scope.analysis, cmd):
        try:
            value = scope.value(name, cmd.line)
        except Stop:
            values[i] = [None]  # words the bot cannot know
            continue
        if value is not None and ("$(" in value or "`" in value):
            values[i] = [None]
            continue
        quoted = re.search(r'"\$\{?' + name + r'\}?"', cmd.text or "") is not None
        values[i] = [value] if quoted and value is not None else (value.split() if value else [])
    return tuple(w for i, raw in enumerate(cmd.argv) for w in values.get(i, [raw]))


def runner_env(ctx: Any, point: Any) -> dict[str, str]:
    """What a point's runner script starts with: the variables the sweep sets
    (recipes.launch.path.launch_path.point_env) and the runner's checkout as its workspace."""
    env = point_env(point)
    env.update({name: absolute(ctx.head_repo.layout.root or "") for name in WORKSPACE_VARS})
    return env


MEMO_CHAIN_WORDS = "branch_words.chain"


def chain_words(ctx: Any, chain: Any, point: Any) -> dict[tuple[str, int], tuple[str | None, ...]]:
    """(holder, line) -> the words a top-level command of the chain passes for this point, with
    each variable a branch set to an option (bench.sh's `$extra_flags`, `--use-chat-template`
    when IS_MTP is true) read as the point's run sets it (recipes.launch.path.shell_scope); None stands for
    words the bot cannot know. A command whose own branch cannot be decided is left out."""
    if not chain.branch_commands or chain.root is None:
        return {}

    def read() -> dict[tuple[str, int], tuple[str | None, ...]]:
        words: dict[tuple[str, int], tuple[str | None, ...]] = {}
        for sc, cmd in chain.branch_commands:
            found = words_of(sc, cmd)
            if found is not None:
                words[(sc.path, cmd.line)] = found
        return words

    return read_for_point(ctx, chain, point, chain.word_sets, read, {})


def read_for_point(ctx: Any, chain: Any, point: Any, sets: list, read: Callable[[], T], failed: T) -> T:
    """What `read()` finds in the chain's texts for this point (`failed` when a script trips it).

    The points sharing a walk may still differ in what these texts read (the draft length of
    the decode block), so they are read here, apart from the walk: the walk's texts are read
    again with this point's values, and whatever that remembered is forgotten after, so the
    walk stays what every point sharing it saw. `sets` keeps each result with the values it
    asked: read once per set of them."""
    env = runner_env(ctx, point)
    with ctx.lock(MEMO_CHAIN_WORDS):
        for asked, found in sets:
            if all(env.get(name, MISSING) == value for name, value in asked.items()):
                return found
        root = chain.root
        kept = (root.env, root.asked, [(sc, sc.memo, sc.where_used) for sc in chain.scopes])
        root.env, root.asked = env, {}
        for sc in chain.scopes:
            sc.memo = dict(sc.memo)
        try:
            found = read()
        except Exception:  # noqa: BLE001 - a script the reading trips on decides nothing
            found = failed
        finally:
            asked = root.asked
            root.env, root.asked = kept[0], kept[1]
            for sc, memo, used in kept[2]:
                sc.memo, sc.where_used = memo, used
        sets.append((asked, found))
        return found
