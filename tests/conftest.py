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


def _is_loopback(address) -> bool:
    if isinstance(address, tuple) and address:
        host = str(address[0])
        return host in ("localhost", "::1") or host.startswith("127.") or host == "::ffff:127.0.0.1"
    return isinstance(address, (str, bytes))  # AF_UNIX paths are local by construction


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch):
    """Any connection that is not to loopback fails the test: the suite must never reach out
    (DEVELOPERS.md: servers bind 127.0.0.1 only and nothing may try another address)."""
    import socket

    real_connect = socket.socket.connect
    real_connect_ex = socket.socket.connect_ex

    def guard(address):
        if not _is_loopback(address):
            raise AssertionError(f"test tried to connect to a non-loopback address: {address!r}")

    def connect(self, address):
        guard(address)
        return real_connect(self, address)

    def connect_ex(self, address):
        guard(address)
        return real_connect_ex(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket.socket, "connect_ex", connect_ex)
