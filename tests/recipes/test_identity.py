"""recipes.identity.by_identity: one computation per tuple of argument objects, by identity."""
from __future__ import annotations

from recipes.identity import by_identity


def test_one_call_per_object_and_equal_objects_are_not_confused():
    calls = []

    @by_identity(8)
    def size(d: dict, extra: list) -> int:
        calls.append(1)
        return len(d) + len(extra)

    a, b, extra = {"x": 1}, {"x": 1}, [1]  # unhashable, and a == b
    assert size(a, extra) == 2 and size(a, extra) == 2
    assert len(calls) == 1
    a["y"] = 2  # the same object: its answer is remembered, as documented (pure functions only)
    assert size(a, extra) == 2 and size(b, extra) == 2
    assert len(calls) == 2
    size.cache_clear()
    assert size(a, extra) == 3 and len(calls) == 3


def test_a_full_cache_starts_again_and_answers_stay_right():
    @by_identity(2)
    def ident(o: object) -> int:
        return id(o)

    objs = [object() for _ in range(5)]
    assert [ident(o) for o in objs] == [id(o) for o in objs]
    assert [ident(o) for o in objs] == [id(o) for o in objs]
