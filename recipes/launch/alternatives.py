"""Commands and tests over values an undecided branch left different (`words.OneOf`,
`OneOfRest`): a command runs once per combination of values, as the arms of a branch; a test
is tried with each combination and decided when all decide it alike (docs/launch.md "Values
with alternatives")."""
from __future__ import annotations

from typing import Any, Callable, Optional

from .state import Ctx, Out, State, one_of_texts
from .trace import EXEC
from .words import MAX_ALTERNATIVES, OneOf, Unknown, Word, alternatives, picks

# A command whose words hold values with alternatives runs once per combination: at most this
# many combinations for one command, and this many such runs in one trace (past either, the
# words are unknown, as any value the interpreter cannot know).
MAX_COMBINATIONS = 8
MAX_ALTERNATIVE_RUNS = 64


class Alternatives:
    """Runs of a command once per value its words may have, and tests tried per value."""

    def test_each_value(self, expr: Any, names: list[str], state: State, ctx: Ctx) -> Optional[bool]:
        """A test over variables with alternatives, tried with each combination of their values
        on a copy of the state: decided when every combination decides it alike."""
        values = {n: state.positional if n == "@" else state.get(n) for n in names}
        words = [v if isinstance(v, OneOf) else v[-1] for v in values.values()]
        chosen = picks(words, MAX_COMBINATIONS)
        if chosen is None:
            return None
        verdicts = set()
        for pick in chosen:
            trial = state.copy()
            for (name, value), word in zip(values.items(), words):
                run = list((alternatives(word) or [])[pick[word]])
                if name == "@":
                    trial.positional = value[:-1] + run
                else:
                    trial.set(name, run[0] if isinstance(value, OneOf) else value[:-1] + run)
            verdicts.add(self.test_expr(expr, trial, ctx))
            if None in verdicts or len(verdicts) > 1:
                return None
        return verdicts.pop()

    def run_alternatives(self, runs: list[tuple[list[Word], tuple[tuple[str, str], ...]]], prefix: list[tuple[str, Word]],
                         state: State, ctx: Ctx, node: Any, *, stdin: Word | None, out: Out | None,
                         functions: bool) -> Optional[int]:
        """A command whose words hold values an undecided branch left different (`OneOf`): run
        once per combination of values, as the arms of a branch (each run's effects carry what it
        chose in `under`), and the states merged. Its output is one of the runs' outputs."""
        labels = ["; ".join(f"{label}: {shown}" for label, shown in what) for _, what in runs]
        ce = self.same_effects([words for words, _ in runs], state, ctx, functions)
        if ce is not None:
            # What it runs does not depend on the choice: each argv is recorded under its choice,
            # and what it runs is followed once, as sure as the command itself.
            env = self.env_of(state, prefix)
            for (words, _), label in zip(runs, labels):
                self.emit(EXEC, ctx.but(under=ctx.under + (label,)), node, state, argv=tuple(words), env=env,
                          cwd=state.cwd)
            self.apply(ce, runs[0][0], prefix, state, ctx, node, stdin=stdin, out=out)
            self.unmodelled_output(ce, runs[0][0][0], out)
            return None
        statuses: list[Optional[int]] = []
        outs: list[Out] = []

        def arm(words: list[Word]) -> Callable[[State, Ctx], Any]:
            def run(s: State, c: Ctx) -> None:
                sink = None
                if out is not None:
                    sink = Out()
                    outs.append(sink)
                statuses.append(self.run_argv(words, prefix, s, c, node, stdin=stdin, out=sink,
                                              functions=functions))
            return run

        arms = [(label, arm(words)) for (words, _), label in zip(runs, labels)]
        why = f"set by a command run with {runs[0][1][0][0]}"
        try:
            self.run_arms(arms, state, ctx, fallthrough=False, why=why)
        finally:
            if out is not None and any(o.parts for o in outs):
                out.write(_one_output([o.value() for o in outs], f"the output of a command run with {runs[0][1][0][0]}"))
        return statuses[0] if statuses and all(st == statuses[0] for st in statuses) else None


# Text in a test that runs commands (a test tried once per value must not run them again).
RUNS_CODE = ("$(", "`", "<(", ">(")


def _one_output(values: list[Word], why: str) -> Word:
    """The output of a command run once per alternative: the same text, one of the texts, or unknown."""
    distinct = list(dict.fromkeys(values))
    if len(distinct) == 1:
        return distinct[0]
    if len(distinct) <= MAX_ALTERNATIVES and all(isinstance(v, str) for v in distinct):
        return one_of_texts(distinct, why, f"one of {len(distinct)} values of {why}")
    return Unknown(why)
