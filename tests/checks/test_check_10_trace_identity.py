"""Check 10 reads each distinct trace once: which traces are the same must not depend on the
address of the `PointTrace` a lookup builds (found replaying InferenceX #2231, whose verdict
flipped between PASS and "could not verify" on the same code)."""
from __future__ import annotations

from types import SimpleNamespace

from checks.check_10_no_engine_patches import _trace_patches
from recipes.config import RepoConfig
from recipes.launch.point import PointTrace
from recipes.launch.trace import SERVER, UNKNOWN, Effect, Site, Trace

RUNNER = "runners/launch_b200.sh"


def _runner(served: bool) -> Trace:
    site = Site("benchmarks/agentic/run.sh", 40)
    if served:
        return Trace([Effect(SERVER, site, argv=("vllm", "serve", "m"), container="img")])
    return Trace([Effect(UNKNOWN, site, container="img",
                         detail="the launch ends at benchmarks/agentic/run.sh:40 (exit 1) before any server starts")])


def _views(n: int):
    return [SimpleNamespace(config_key=f"key-{i}", point=SimpleNamespace(key=i), launcher_path="benchmarks/agentic/run.sh")
            for i in range(n)]


def test_a_trace_is_read_even_when_an_earlier_lookups_object_was_freed(monkeypatch):
    # One runner trace per point, kept (as a tracer's cache keeps them); the PointTrace around
    # it is built afresh on every lookup, as Tracer.trace does, and dropped after it.
    runners = [_runner(served=True) for _ in range(7)] + [_runner(served=False)]
    monkeypatch.setattr("recipes.launch.path.trace_affected.head_trace",
                        lambda ctx, point: PointTrace(runners={RUNNER: runners[point.key]}))
    # CPython gives a freed object's address to the next one of its size: whether that happens
    # depends on what else was allocated in between, so it is made certain here. Every lookup's
    # PointTrace gets the same id(), as the freed ones may; other objects keep their own.
    import builtins
    monkeypatch.setattr("checks.check_10_no_engine_patches.id",
                        lambda o: 1 if isinstance(o, PointTrace) else builtins.id(o), raising=False)
    ctx = SimpleNamespace(config=RepoConfig())
    _, hidden = _trace_patches(ctx, _views(len(runners)))
    assert hidden is not None and "key-7" in hidden.reason and "before any server starts" in hidden.reason


def test_identity_is_the_runner_traces_not_the_object():
    shared, other = _runner(served=True), _runner(served=True)
    a, b = PointTrace(runners={RUNNER: shared}), PointTrace(runners={RUNNER: shared})
    assert a is not b and a.identity == b.identity
    first = PointTrace(runners={RUNNER: shared}).identity
    assert PointTrace(runners={RUNNER: other}).identity != first
