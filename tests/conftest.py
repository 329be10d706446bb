"""Shared pytest fixtures. Builders and fakes live in tests/builders.py."""
from __future__ import annotations

from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parent.parent
SHARED = PROJECT.parent / "shared"
INFERENCEX = SHARED / "inferencex"


@pytest.fixture
def inferencex_dir() -> Path:
    """The real InferenceX data snapshot in ../shared, or skip when absent."""
    if not (INFERENCEX / "inferencex-e2e").is_dir():
        pytest.skip("../shared/inferencex is not present")
    return INFERENCEX
