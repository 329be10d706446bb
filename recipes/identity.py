"""Memoizing a pure function of objects that are shared rather than equal: a script analysis,
a recipe variant, a file change. Such objects are often unhashable (pydantic models with dicts)
or costly to hash (a whole analysis), yet every benchmark point that shares one asks the same
question of it. The cache is keyed by the arguments' identities and keeps them alive beside
the answer, so an id is never reused for another object while its entry exists."""
from __future__ import annotations

import functools
import threading
from typing import Any, Callable, TypeVar

T = TypeVar("T")


def by_identity(maxsize: int) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorator: `fn(*objects)` computed once per tuple of argument objects (by identity), at
    most `maxsize` remembered (the cache is emptied when full). `fn.cache_clear()` empties it."""
    def decorate(fn: Callable[..., T]) -> Callable[..., T]:
        cache: dict[tuple[int, ...], tuple[tuple[Any, ...], T]] = {}
        lock = threading.Lock()

        @functools.wraps(fn)
        def wrapper(*args: Any) -> T:
            key = tuple(map(id, args))
            hit = cache.get(key)
            if hit is not None and all(a is b for a, b in zip(hit[0], args)):
                return hit[1]
            value = fn(*args)
            with lock:
                if len(cache) >= maxsize:
                    cache.clear()
                cache[key] = (args, value)
            return value

        wrapper.cache_clear = cache.clear  # type: ignore[attr-defined]
        return wrapper
    return decorate
