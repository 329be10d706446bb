"""The suite's own guard: a connection to anything but loopback fails the test."""
import socket

import pytest


def test_non_loopback_connection_is_refused_before_any_packet():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(AssertionError, match="non-loopback"):
            s.connect(("192.0.2.1", 443))  # TEST-NET-1: never routed, and never tried
    finally:
        s.close()


def test_loopback_connection_is_allowed():
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    try:
        c = socket.create_connection(srv.getsockname(), timeout=2)
        c.close()
    finally:
        srv.close()
