"""Git data: refs, commits and their diffs, compare, contents, blobs, trees, and repository tarballs
(served through a codeload stand-in, as GitHub redirects them)."""
from __future__ import annotations

import difflib
import gzip
import re
import urllib.parse

from .common import HEX40, SAFE_REF, b64_lines, git_out, is_text, iso, node_id
from .http import MSG_NOT_FOUND, HttpError, Request, Response, not_found

# Stands in for codeload.github.com, where GitHub redirects repository archive requests.
CODELOAD_PREFIX = "/_sandbox/codeload"
# GitHub names an archive's single top-level directory <owner>-<repo>-<7-char sha>.
ARCHIVE_SHORT_SHA = 7
CONTENTS_INLINE_LIMIT = 1024 * 1024  # contents API returns no content above 1 MB
PATCH_SIZE_LIMIT = 1024 * 1024
MAX_COMMIT_FILES = 300
# "Compare two commits" (https://docs.github.com/en/rest/commits/commits#compare-two-commits):
# without `page`/`per_page` at most 250 commits, the last being the most recent of the whole
# comparison; with them the commits are paged, oldest first (since
# https://github.blog/changelog/2021-03-22-compare-rest-api-now-supports-pagination), and the
# changed files come on the first page only.
MAX_COMPARE_COMMITS = 250


class GitData:
    def resolve_ref(self, ref: str | None) -> str | None:
        """Branch name, full or abbreviated SHA, refs/heads/x or refs/pull/N/head to a commit SHA."""
        w = self.world
        if not ref:
            return self.base_sha
        ref = ref.removeprefix("refs/heads/")
        if ref == w.default_branch:
            return self.base_sha
        if ref in (w.head_branch, f"pull/{w.pr.number}/head", f"refs/pull/{w.pr.number}/head"):
            return self.head_sha
        if not SAFE_REF.match(ref) or not re.fullmatch(r"[0-9a-f]{7,40}", ref):
            return None
        obj = self.git.read(ref)
        if obj is None or obj[0] != "commit":
            return None
        if HEX40.match(ref):
            return ref
        return next((s for s in [*reversed(self._chain), *reversed(self._target_chain)] if s.startswith(ref)), None)

    def _commit_or_404(self, ref: str) -> str:
        sha = self.resolve_ref(ref)
        if sha is None:
            raise HttpError(422, f"No commit found for SHA: {ref}")
        return sha

    def commit_json(self, sha: str, with_files: bool) -> dict:
        info = self.git.commit(sha)
        if info is None:
            raise not_found()
        url = f"{self.repo_api}/commits/{sha}"

        def person(p: tuple) -> dict:
            return {"name": p[0], "email": p[1], "date": iso(p[2])}

        def gh_user(p: tuple) -> dict | None:
            return self.user(p[0]) if p[1].endswith("@users.noreply.github.com") else None

        out = {"sha": sha, "node_id": node_id("Commit", sha), "url": url, "html_url": self.web(f"/commit/{sha}"),
               "comments_url": f"{url}/comments",
               "commit": {"author": person(info["author"]), "committer": person(info["committer"]),
                          "message": info["message"], "comment_count": 0,
                          "tree": {"sha": info["tree"], "url": f"{self.repo_api}/git/trees/{info['tree']}"},
                          "url": f"{self.repo_api}/git/commits/{sha}",
                          "verification": {"verified": False, "reason": "unsigned", "signature": None, "payload": None,
                                           "verified_at": None}},
               "author": gh_user(info["author"]), "committer": gh_user(info["committer"]),
               "parents": [{"sha": p, "url": f"{self.repo_api}/commits/{p}", "html_url": self.web(f"/commit/{p}")}
                           for p in info["parents"]]}
        if with_files:
            files = self._diff(info["parents"][0] if info["parents"] else None, sha)
            adds = sum(f["additions"] for f in files)
            dels = sum(f["deletions"] for f in files)
            out["stats"] = {"additions": adds, "deletions": dels, "total": adds + dels}
            out["files"] = files[:MAX_COMMIT_FILES]
        return out

    def _diff(self, a: str | None, b: str) -> list[dict]:
        """GitHub-style file entries for the change from commit a (None: empty tree) to commit b."""
        key = (a or "", b)
        with self._lock:
            if key in self._diff_cache:
                return self._diff_cache[key]
        old = self.git.files(a) if a else {}
        new = self.git.files(b)
        removed = {p: e for p, e in old.items() if p not in new}
        renamed_from = {}
        by_blob = {e["sha"]: p for p, e in removed.items()}
        for p, e in new.items():
            if p not in old and e["sha"] in by_blob:
                renamed_from[p] = by_blob.pop(e["sha"])
        entries = []
        for p in sorted(set(old) | set(new)):
            o, n = old.get(p), new.get(p)
            if n is not None and o is not None and o["sha"] == n["sha"]:
                continue
            if n is None and p not in by_blob.values():
                continue  # the old side of a rename
            if n is None:
                entries.append(self._file_entry(p, "removed", o, None, b))
            elif p in renamed_from:
                entries.append(self._file_entry(p, "renamed", old[renamed_from[p]], n, b, renamed_from[p]))
            elif o is None:
                entries.append(self._file_entry(p, "added", None, n, b))
            else:
                entries.append(self._file_entry(p, "modified", o, n, b))
        with self._lock:
            self._diff_cache[key] = entries
        return entries

    def _blob(self, sha: str) -> bytes:
        obj = self.git.read(sha)
        return obj[1] if obj else b""

    def _file_entry(self, path: str, status: str, o: dict | None, n: dict | None, commit: str,
                    previous: str | None = None) -> dict:
        adds = dels = 0
        patch = None
        if status != "renamed":
            before = self._blob(o["sha"]) if o else b""
            after = self._blob(n["sha"]) if n else b""
            if is_text(before) and is_text(after) and max(len(before), len(after)) <= PATCH_SIZE_LIMIT:
                lines = list(difflib.unified_diff(before.decode().splitlines(), after.decode().splitlines(),
                                                  lineterm="", n=3))[2:]
                adds = sum(1 for ln in lines if ln.startswith("+"))
                dels = sum(1 for ln in lines if ln.startswith("-"))
                patch = "\n".join(lines)
        quoted = urllib.parse.quote(path)
        entry = {"sha": (n or o)["sha"], "filename": path, "status": status, "additions": adds, "deletions": dels,
                 "changes": adds + dels, "blob_url": self.web(f"/blob/{commit}/{quoted}"),
                 "raw_url": self.web(f"/raw/{commit}/{quoted}"),
                 "contents_url": f"{self.repo_api}/contents/{quoted}?ref={commit}"}
        if patch is not None:
            entry["patch"] = patch
        if previous:
            entry["previous_filename"] = previous
        return entry

    def h_commit(self, req: Request) -> Response:
        other = self.other_repo(req)
        if other is not None:
            return other.h_commit(req)
        self._check_repo(req)
        return Response(200, self.commit_json(self._commit_or_404(req.params["ref"]), True))

    def h_compare(self, req: Request) -> Response:
        self._check_repo(req)
        basehead = req.params["basehead"]
        a, sep, b = basehead.partition("...")
        if not sep:
            a, sep, b = basehead.partition("..")
        sa, sb = self.resolve_ref(a), self.resolve_ref(b)
        if not sep or sa is None or sb is None:
            raise not_found()
        # GitHub's three-dot compare: the merge base, what only b has (oldest first), the diff
        # from the merge base to b, and how far each side is from the merge base.
        only_a, only_b = self._ancestry(sa), self._ancestry(sb)
        mb = next((c for c in only_b if c in set(only_a)), None)
        if mb is None:
            raise not_found()
        ahead, behind = only_b[:only_b.index(mb)], only_a[:only_a.index(mb)]
        status = "identical" if sa == sb else "ahead" if not behind else "behind" if not ahead else "diverged"
        commits = list(reversed(ahead))
        files = self._diff(mb, sb)
        url = f"{self.repo_api}/compare/{basehead}"
        total, headers = len(commits), {}
        if "page" in req.query or "per_page" in req.query:
            commits, headers = self.paginate(req, commits)
            if int(req.query.get("page") or 1) > 1:
                files = []
        else:
            commits = commits[-MAX_COMPARE_COMMITS:]
        return Response(200, {"url": url, "html_url": self.web(f"/compare/{basehead}"),
                              "permalink_url": self.web(f"/compare/{sa}...{sb}"),
                              "diff_url": self.web(f"/compare/{basehead}.diff"),
                              "patch_url": self.web(f"/compare/{basehead}.patch"),
                              "base_commit": self.commit_json(sa, False), "merge_base_commit": self.commit_json(mb, False),
                              "status": status, "ahead_by": len(ahead), "behind_by": len(behind),
                              "total_commits": total, "commits": [self.commit_json(s, False) for s in commits],
                              "files": files[:MAX_COMMIT_FILES]}, headers)

    def _ancestry(self, sha: str) -> list[str]:
        """`sha` and its ancestors, newest first (first parents; the worlds' histories are
        linear on each branch)."""
        out = []
        seen = set()
        while sha and sha not in seen:
            seen.add(sha)
            out.append(sha)
            info = self.git.commit(sha)
            sha = info["parents"][0] if info and info["parents"] else ""
        return out

    def _wants_raw(self, req: Request) -> bool:
        accept = req.headers.get("Accept") or ""
        return "vnd.github.raw" in accept or "vnd.github.v3.raw" in accept

    def h_contents(self, req: Request) -> Response:
        self._check_repo(req)
        sha = self.resolve_ref(req.query.get("ref"))
        if sha is None:
            raise HttpError(404, f"No commit found for the ref {req.query.get('ref')}")
        path = req.params.get("path", "").strip("/")
        entries = self.git.tree(sha, True) or []
        ref = req.query.get("ref") or self.world.default_branch
        hit = next((e for e in entries if e["path"] == path), None)
        if hit is not None and hit["type"] == "blob":
            data = self._blob(hit["sha"])
            if self._wants_raw(req):
                return Response(200, data, content_type="application/vnd.github.raw")
            out = self._content_entry(hit, ref)
            if len(data) > CONTENTS_INLINE_LIMIT:
                out.update(content="", encoding="none")
            else:
                out.update(content=b64_lines(data), encoding="base64")
            return Response(200, out)
        if path and hit is None:
            raise not_found()
        prefix = f"{path}/" if path else ""
        children = [e for e in entries if e["path"].startswith(prefix) and "/" not in e["path"][len(prefix):]]
        return Response(200, [self._content_entry(e, ref) for e in children])

    def _content_entry(self, e: dict, ref: str) -> dict:
        quoted = urllib.parse.quote(e["path"])
        is_file = e["type"] == "blob"
        url = f"{self.repo_api}/contents/{quoted}?ref={urllib.parse.quote(ref)}"
        git_url = f"{self.repo_api}/git/{'blobs' if is_file else 'trees'}/{e['sha']}"
        html = self.web(f"/{'blob' if is_file else 'tree'}/{ref}/{quoted}")
        return {"type": "file" if is_file else "dir", "name": e["path"].rsplit("/", 1)[-1], "path": e["path"],
                "sha": e["sha"], "size": e["size"] or 0, "url": url, "git_url": git_url, "html_url": html,
                "download_url": f"https://raw.githubusercontent.com/{self.world.repo}/{ref}/{quoted}" if is_file else None,
                "_links": {"self": url, "git": git_url, "html": html}}

    def h_blob(self, req: Request) -> Response:
        other = self.other_repo(req)
        if other is not None:
            return other.h_blob(req)
        self._check_repo(req)
        sha = req.params["sha"]
        obj = self.git.read(sha) if HEX40.match(sha) else None
        if obj is None or obj[0] != "blob":
            raise not_found()
        if self._wants_raw(req):
            return Response(200, obj[1], content_type="application/vnd.github.raw")
        return Response(200, {"sha": sha, "node_id": node_id("Blob", sha), "size": len(obj[1]),
                              "url": f"{self.repo_api}/git/blobs/{sha}", "content": b64_lines(obj[1]),
                              "encoding": "base64"})

    def h_tree(self, req: Request) -> Response:
        other = self.other_repo(req)
        if other is not None:
            return other.h_tree(req)
        self._check_repo(req)
        ref = req.params["ref"]
        sha = self.resolve_ref(ref)
        tree_sha = self.git.commit(sha)["tree"] if sha else None
        if tree_sha is None and HEX40.match(ref):
            obj = self.git.read(ref)
            tree_sha = ref if obj and obj[0] == "tree" else None
        if tree_sha is None:
            raise not_found()
        recursive = req.query.get("recursive") not in (None, "", "0", "false")
        entries = self.git.tree(tree_sha, recursive) or []
        out = []
        for e in entries:
            kind = "blobs" if e["type"] == "blob" else "trees"
            item = {"path": e["path"], "mode": e["mode"], "type": e["type"], "sha": e["sha"],
                    "url": f"{self.repo_api}/git/{kind}/{e['sha']}"}
            if e["type"] == "blob":
                item["size"] = e["size"]
            out.append(item)
        return Response(200, {"sha": tree_sha, "url": f"{self.repo_api}/git/trees/{tree_sha}", "tree": out,
                              "truncated": False})

    def _archive_signature(self, sha: str) -> str:
        return node_id("codeload", f"{sha}:{self.port}").replace("+", "-").replace("/", "_")

    def h_tarball(self, req: Request) -> Response:
        """Like GitHub: a redirect to a short-lived codeload URL that needs no token."""
        self._check_repo(req)
        sha = self.resolve_ref(req.params["ref"])
        if sha is None or self.git.commit(sha) is None:
            raise not_found()
        owner, name = self.world.repo.split("/", 1)
        location = f"{self.api}{CODELOAD_PREFIX}/{owner}/{name}/{sha}/{self._archive_signature(sha)}"
        return Response(302, b"", {"Location": location}, content_type="text/plain")

    def h_codeload(self, req: Request) -> Response:
        sha = req.params["sha"]
        if f"{req.params['owner']}/{req.params['repo']}".lower() != self.world.repo.lower() \
                or req.params["signature"] != self._archive_signature(sha) or self.git.commit(sha) is None:
            raise HttpError(404, MSG_NOT_FOUND)
        with self._lock:
            cached = self._tarball_cache.get(sha)
        if cached is None:
            prefix = archive_name(self.world.repo, sha).removesuffix(".tar.gz") + "/"
            # git archive writes the commit id into a pax global header, as GitHub's archives carry it.
            tar = git_out(self.repo_path, "archive", "--format=tar", f"--prefix={prefix}", sha)
            cached = gzip.compress(tar, mtime=0)
            with self._lock:
                self._tarball_cache[sha] = cached
        disposition = f"attachment; filename={archive_name(self.world.repo, sha)}"
        return Response(200, cached, {"Content-Disposition": disposition}, content_type="application/x-gzip")


def archive_name(repo: str, sha: str) -> str:
    return f"{repo.replace('/', '-')}-{sha[:ARCHIVE_SHORT_SHA]}.tar.gz"
