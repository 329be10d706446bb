"""recipes.stack: deep code run from one large chunk of frame memory."""
from __future__ import annotations

import sys

import pytest

from recipes import stack
from recipes.stack import on_one_chunk

resource = pytest.importorskip("resource")

# CPython before 3.13 unmaps a frame chunk as soon as the frame that opened it returns
# (python/cpython#142183); later versions keep one chunk, so the churn this module avoids is gone.
CHUNK_CHURN = sys.implementation.name == "cpython" and sys.version_info < (3, 13) and sys.platform == "linux"


def _down(n: int) -> int:
    return 0 if n == 0 else _down(n - 1) + 1


def _oscillate() -> int:
    # 400 frames of `_down` are about 50 KiB of frame memory: each descent crosses chunk
    # boundaries of 16 KiB, and each return unmaps what the descent mapped.
    return sum(_down(400) for _ in range(1500))


def _faults(fn) -> int:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    fn()
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def test_passes_arguments_results_and_exceptions():
    assert on_one_chunk(lambda a, b=0: a - b, 5, 2) == 3
    with pytest.raises(ZeroDivisionError):
        on_one_chunk(lambda: 1 / 0)
    assert on_one_chunk(_oscillate) == 400 * 1500


@pytest.mark.skipif(sys.implementation.name != "cpython", reason="the frame layout is CPython's")
def test_the_caller_has_room_for_the_chunk():
    caller = stack._deep_caller()
    assert caller.__code__.co_stacksize >= stack.ROOM_SLOTS
    assert caller(lambda x: x * 2, (21,)) == 42


@pytest.mark.skipif(not CHUNK_CHURN, reason="frame chunks are mapped and unmapped only by CPython 3.11-3.12")
def test_deep_calls_stop_mapping_frame_memory():
    plain = min(_faults(_oscillate) for _ in range(2))
    chunked = min(_faults(lambda: on_one_chunk(_oscillate)) for _ in range(2))
    # Each mapped chunk is a fresh page when first written: thousands of faults without the
    # large frame, a few hundred at most with it (the 1 MiB chunk itself, once per call).
    assert plain >= 1500
    assert chunked * 5 <= plain
