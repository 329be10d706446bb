"""Shared helpers of the emulator's resources: GitHub's id, node id and timestamp formats, and raw git."""
from __future__ import annotations

import base64
import os
import re
import subprocess
from datetime import datetime
from pathlib import Path
from typing import Any

from .world import utc

WEB = "https://github.com"
SAFE_REF = re.compile(r"^[A-Za-z0-9._/\-]+$")
HEX40 = re.compile(r"^[0-9a-f]{40}$")


def iso(dt: datetime | None) -> str | None:
    return None if dt is None else utc(dt).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_id(kind: str, ident: Any) -> str:
    return base64.b64encode(f"{kind}:{ident}".encode()).decode().rstrip("=")


def user_id(login: str) -> int:
    """Stable made-up numeric id for a login (GitHub ids are positive ints)."""
    return 10_000_000 + (int.from_bytes(login.lower().encode()[:8].ljust(8, b"\0"), "big") % 90_000_000)


def is_text(data: bytes) -> bool:
    if b"\0" in data[:8192]:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True



def ordered(store: dict[int, dict]) -> list[dict]:
    return sorted(store.values(), key=lambda r: (r["created_at"], r["id"]))


def b64_lines(data: bytes) -> str:
    """Base64 wrapped at 60 columns, as the contents and blobs APIs return it."""
    enc = base64.b64encode(data).decode()
    return "".join(enc[i:i + 60] + "\n" for i in range(0, len(enc), 60))


def git_out(repo: Path, *args: str) -> bytes:
    """Raw stdout of a git command in the world repository (archives are binary)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    proc = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"git {' '.join(args)} failed: {proc.stderr.decode(errors='replace').strip()}")
    return proc.stdout
