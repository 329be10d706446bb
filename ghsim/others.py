"""Other repositories a world's runners clone (`other_repos:` in world.yaml), served read-only:
a commit by ref, its tree and its blobs, the reads a client makes of a public repository it
does not own. Each is one commit of the files under its `dir`, with every name in `refs`
(branches or tags) pointing at it."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .common import HEX40, b64_lines, node_id
from .http import HttpError, Request, Response, not_found


@dataclass
class OtherRepo:
    repo: str  # owner/name as the world spells it
    sha: str
    refs: tuple[str, ...]
    reader: object  # world.GitReader over its built repository

    def api(self, path: str = "") -> str:
        return f"/repos/{self.repo}{path}"

    def resolve(self, ref: str) -> str | None:
        ref = ref.removeprefix("refs/heads/").removeprefix("refs/tags/")
        if ref in self.refs or ref == "HEAD" or ref == self.sha or (len(ref) >= 7 and self.sha.startswith(ref)):
            return self.sha
        return None

    def h_commit(self, req: Request) -> Response:
        sha = self.resolve(req.params["ref"])
        if sha is None:
            raise HttpError(422, f"No commit found for SHA: {req.params['ref']}")
        info = self.reader.commit(sha)
        return Response(200, {"sha": sha, "node_id": node_id("Commit", sha), "url": self.api(f"/commits/{sha}"),
                              "commit": {"message": info["message"], "tree": {"sha": info["tree"]}},
                              "parents": [{"sha": p} for p in info["parents"]], "files": []})

    def h_tree(self, req: Request) -> Response:
        ref = req.params["ref"]
        sha = self.resolve(ref)
        tree_sha = self.reader.commit(sha)["tree"] if sha else (ref if HEX40.match(ref) else None)
        entries = self.reader.tree(tree_sha, req.query.get("recursive") not in (None, "", "0", "false")) \
            if tree_sha else None
        if entries is None:
            raise not_found()
        tree = [{"path": e["path"], "mode": e["mode"], "type": e["type"], "sha": e["sha"],
                 **({"size": e["size"]} if e["size"] is not None else {})} for e in entries]
        return Response(200, {"sha": tree_sha, "url": self.api(f"/git/trees/{tree_sha}"), "tree": tree,
                              "truncated": False})

    def h_blob(self, req: Request) -> Response:
        sha = req.params["sha"]
        obj = self.reader.read(sha) if HEX40.match(sha) else None
        if obj is None or obj[0] != "blob":
            raise not_found()
        return Response(200, {"sha": sha, "node_id": node_id("Blob", sha), "size": len(obj[1]),
                              "url": self.api(f"/git/blobs/{sha}"), "content": b64_lines(obj[1]), "encoding": "base64"})


class OtherRepos:
    """The emulator's side: which request names another repository, and its answer."""

    others: dict[str, OtherRepo]

    def other_repo(self, req: Request) -> OtherRepo | None:
        name = f"{req.params.get('owner')}/{req.params.get('repo')}".lower()
        return getattr(self, "others", {}).get(name)


def other_repo_dir(dest: Path, repo: str) -> Path:
    """Where a world's other repository is built, beside its own."""
    return dest.parent / "others" / repo.replace("/", "+")
