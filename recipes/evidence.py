"""Evidence as checks cite it: a file and line, a run, an artifact, or a fact that could not be
obtained. The repository model holds it because reading a point's launch path already cites
files (a recipe of the srt-slurm checkout a runner makes) and meets missing inputs."""
from __future__ import annotations

import re

from pydantic import ConfigDict

from recipes.model import Model

# A file of another repository (the srt-slurm checkout a runner makes), as evidence cites it:
# `owner/name@<40-hex commit>:<path>` (recipes.launch.path.srt_checkout). The commit pins what was read.
_EXTERNAL = re.compile(r"^(?P<repo>[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+)@(?P<sha>[0-9a-f]{40}):(?P<path>[^/].*)$")
SHORT_SHA = 12


def external_path(repo: str, sha: str, path: str) -> str:
    return f"{repo}@{sha}:{path}"


def split_external(path: str | None) -> tuple[str, str, str] | None:
    """(repo, commit, path) of an `external_path`, else None (a benchmark-repository path)."""
    m = _EXTERNAL.match(path or "")
    return (m.group("repo"), m.group("sha"), m.group("path")) if m else None


class Evidence(Model):
    """One cited fact: a file and line, a run, an artifact, a comment, or missing evidence."""

    model_config = ConfigDict(frozen=True)

    path: str | None = None
    line: int | None = None
    url: str | None = None
    run_id: int | None = None
    artifact: str | None = None
    note: str | None = None
    # True when this item records evidence GitHub (or the checkout) could not provide.
    unavailable: bool = False

    def label(self) -> str:
        parts = []
        if self.path:
            ext = split_external(self.path)
            path = f"{ext[0]}@{ext[1][:SHORT_SHA]}:{ext[2]}" if ext else self.path
            parts.append(f"{path}:{self.line}" if self.line else path)
        if self.run_id:
            parts.append(f"run {self.run_id}")
        if self.artifact:
            parts.append(f"artifact {self.artifact}")
        if self.url and not parts:
            parts.append(self.url)
        if self.note:
            parts.append(self.note)
        return ", ".join(parts)


class Unavailable(Model):
    """Evidence that could not be obtained, and why."""

    model_config = ConfigDict(frozen=True)

    reason: str

    def __bool__(self) -> bool:  # so `if snapshot.comments:` never treats it as data
        return False
