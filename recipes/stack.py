"""Run deep Python code without the interpreter mapping and unmapping its frame memory.

CPython 3.11 and 3.12 keep a thread's frames in chunks of 16 KiB. When a call does not fit in
the current chunk, a new chunk is mapped from the system (`mmap`), and it is unmapped again as
soon as the frame that opened it returns. A loop that calls across that boundary maps and unmaps
a chunk on every call (python/cpython#142183; 3.13 and 3.14 keep one chunk cached). The launch
interpreter and the script walkers recurse a syntax tree, so their depth crosses such boundaries
all the time: a slow verdict of the InferenceX history mapped and unmapped 6,576 chunks, each a
system call pair and a fresh page, about 6% of its CPU.

A chunk is sized to the frame that opens it (doubled from 16 KiB until the frame fits), and the
frames called after it fill the rest of it. So `on_one_chunk` calls its function from a frame of
about 512 KiB: that frame opens a chunk of 1 MiB once, and the function's own frames, to a depth
of about 500 KiB of frames (thousands of calls), stay in it. Deeper calls get ordinary chunks.
The large frame's slots are evaluation stack its code never uses: nothing writes or reads them.
"""
from __future__ import annotations

import types
from typing import Any, Callable, TypeVar

T = TypeVar("T")

# Unused stack slots of the calling frame (8 bytes each): with the frame's other slots, over half
# of a 1 MiB chunk, so the chunk opened for it is 1 MiB and leaves about 500 KiB to its callees.
ROOM_SLOTS = 64 * 1024 + 16


def _call(fn: Callable[..., Any], args: tuple) -> Any:
    return fn(*args)


def _deep_caller() -> Callable[[Callable[..., Any], tuple], Any]:
    """`_call` with ROOM_SLOTS more slots of evaluation stack than its code uses; `_call` itself
    where this Python's code objects cannot be rebuilt so (another implementation). The slots
    are stack, not locals, so nothing writes them when the frame starts: the chunk's pages are
    touched only as the frames called from it fill them."""
    code = _call.__code__
    try:
        wide = code.replace(co_stacksize=code.co_stacksize + ROOM_SLOTS)
        return types.FunctionType(wide, _call.__globals__, _call.__name__)
    except (AttributeError, TypeError, ValueError):
        return _call


_CALLER = _deep_caller()  # a code object rebuilt with a larger stack size: about 10 us


def on_one_chunk(fn: Callable[..., T], *args: Any) -> T:
    """`fn(*args)`, called from a frame that gives it (and what it calls) one large chunk of
    frame memory (see the module). Results and exceptions pass through unchanged."""
    return _CALLER(fn, args)
