"""The repository and its pull request (plus upstream PRs a world names), reviews and inline review
comments."""
from __future__ import annotations

import difflib
from datetime import timedelta

from .common import WEB, git_out, is_text, iso, node_id, ordered, user_id
from .effects import EFFECT_REVIEW_COMMENT_CREATED
from .http import HttpError, Request, Response, invalid, not_found
from .issues import MAX_COMMENT_BODY

MAX_PR_FILES = 3000
# "List commits on a pull request" lists at most 250 commits
# (https://docs.github.com/en/rest/pulls/pulls#list-commits-on-a-pull-request); the others are
# read through "Compare two commits", which pages them (ghsim/gitdata.py).
MAX_PR_COMMITS = 250
# Lines of context GitHub shows around each change: only the lines of a hunk (changed or
# context) take a review comment.
DIFF_CONTEXT = 3
# GitHub's answer to a review comment on a line outside the diff ("Create a review comment for
# a pull request", https://docs.github.com/en/rest/pulls/comments#create-a-review-comment-for-a-pull-request:
# `line` is "the line of the blob in the pull request diff that the comment applies to").
MSG_LINE_NOT_IN_DIFF = "pull_request_review_thread.line must be part of the diff"
# The `*_url` templates of GitHub's repository objects (name -> path under the repository URL).
REPO_URL_TEMPLATES = {
    "archive": "{archive_format}{/ref}", "assignees": "assignees{/user}", "blobs": "git/blobs{/sha}",
    "branches": "branches{/branch}", "collaborators": "collaborators{/collaborator}",
    "comments": "comments{/number}", "compare": "compare/{base}...{head}", "contributors": "contributors",
    "deployments": "deployments", "downloads": "downloads", "events": "events", "forks": "forks",
    "git_commits": "git/commits{/sha}", "git_refs": "git/refs{/sha}", "git_tags": "git/tags{/sha}",
    "hooks": "hooks", "issue_comment": "issues/comments{/number}", "issue_events": "issues/events{/number}",
    "keys": "keys{/key_id}", "languages": "languages", "merges": "merges", "milestones": "milestones{/number}",
    "notifications": "notifications{?since,all,participating}", "releases": "releases{/id}",
    "stargazers": "stargazers", "subscribers": "subscribers", "subscription": "subscription", "tags": "tags",
    "teams": "teams", "trees": "git/trees{/sha}",
}


class Pulls:
    def repo_json(self, full_name: str) -> dict:
        owner, name = full_name.split("/", 1)
        rid = user_id(full_name) + 1
        api = f"{self.api}/repos/{full_name}"
        is_world = full_name.lower() == self.world.repo.lower()
        return {
            "id": rid, "node_id": node_id("Repository", rid), "name": name, "full_name": full_name,
            "private": False, "visibility": "public", "owner": self.user(owner, "Organization"),
            "html_url": f"{WEB}/{full_name}", "description": None, "fork": False, "url": api,
            "default_branch": self.world.default_branch if is_world else "main",
            "pulls_url": f"{api}/pulls{{/number}}", "issues_url": f"{api}/issues{{/number}}",
            "contents_url": f"{api}/contents/{{+path}}", "commits_url": f"{api}/commits{{/sha}}",
            "statuses_url": f"{api}/statuses/{{sha}}", "labels_url": f"{api}/labels{{/name}}",
            "git_url": f"git://github.com/{full_name}.git", "clone_url": f"{WEB}/{full_name}.git",
            "created_at": iso(self.pr_created - timedelta(days=365)), "updated_at": iso(self._clock),
            "pushed_at": iso(self._clock), "archived": False, "disabled": False, "has_issues": True,
            "topics": [], "language": "Python", "size": self._size_kb() if is_world else 0,
            # The rest of GitHub's repository shape (REST "full-repository").
            **{f"{k}_url": f"{api}/{v}" for k, v in REPO_URL_TEMPLATES.items()},
            "ssh_url": f"git@github.com:{full_name}.git", "svn_url": f"{WEB}/{full_name}", "homepage": None,
            "mirror_url": None, "license": None, "forks": 0, "forks_count": 0, "open_issues": 1,
            "open_issues_count": 1, "stargazers_count": 0, "watchers": 0, "watchers_count": 0,
            "has_downloads": True, "has_pages": False, "has_projects": True, "has_wiki": False,
            "has_discussions": False, "network_count": 0, "subscribers_count": 0,
        }

    def _size_kb(self) -> int:
        if self.repo_size_kb is None:
            counts = dict(line.split(": ", 1) for line in git_out(self.repo_path, "count-objects", "-v")
                          .decode().splitlines() if ": " in line)
            self.repo_size_kb = int(counts.get("size", 0)) + int(counts.get("size-pack", 0))
        return self.repo_size_kb

    def h_repo(self, req: Request) -> Response:
        full = f"{req.params['owner']}/{req.params['repo']}"
        if full.lower() == self.world.repo.lower():
            return Response(200, self.repo_json(self.world.repo))
        for (repo, _), u in self._upstream.items():
            if repo == full.lower():
                return Response(200, self.repo_json(u["repo"]))
        raise not_found()

    def pr_json(self) -> dict:
        pr, w = self.world.pr, self.world
        n = pr.number
        url = f"{self.repo_api}/pulls/{n}"
        issue_url = f"{self.repo_api}/issues/{n}"
        files = self._diff(self.merge_base_sha, self.head_sha)
        repo = self.repo_json(w.repo)

        def side(ref: str, sha: str, who: str) -> dict:
            return {"label": f"{who}:{ref}", "ref": ref, "sha": sha, "user": self.user(who, "Organization"),
                    "repo": repo}

        head, created = self.head_sha, self.pr_created
        return {
            "url": url, "id": n + 900_000_000, "node_id": node_id("PullRequest", n), "number": n,
            "html_url": self.web(f"/pull/{n}"), "diff_url": self.web(f"/pull/{n}.diff"),
            "patch_url": self.web(f"/pull/{n}.patch"), "issue_url": issue_url,
            "commits_url": f"{url}/commits", "review_comments_url": f"{url}/comments",
            "review_comment_url": f"{self.repo_api}/pulls/comments{{/number}}",
            "comments_url": f"{issue_url}/comments", "statuses_url": f"{self.repo_api}/statuses/{head}",
            "state": pr.state, "locked": False, "title": pr.title, "body": pr.body, "user": self.user(pr.author),
            "labels": [self.label_json(x) for x in self._labels], "milestone": None, "active_lock_reason": None,
            "created_at": iso(created), "updated_at": iso(self._clock), "closed_at": None if pr.state == "open" else iso(self._clock),
            "merged_at": None, "merge_commit_sha": None, "assignee": None, "assignees": [],
            "requested_reviewers": [], "requested_teams": [],
            "head": side(w.head_branch, head, w.owner), "base": side(w.default_branch, self.base_sha, w.owner),
            "_links": {"self": {"href": url}, "html": {"href": self.web(f"/pull/{n}")},
                       "issue": {"href": issue_url}, "comments": {"href": f"{issue_url}/comments"},
                       "review_comments": {"href": f"{url}/comments"}, "commits": {"href": f"{url}/commits"},
                       "review_comment": {"href": f"{self.repo_api}/pulls/comments{{/number}}"},
                       "statuses": {"href": f"{self.repo_api}/statuses/{head}"}},
            "author_association": self._association(pr.author), "auto_merge": None, "draft": pr.draft,
            "merged": False, "mergeable": True, "rebaseable": True, "mergeable_state": "clean", "merged_by": None,
            "comments": len(self._issue_comments), "review_comments": len(self._review_comments),
            "maintainer_can_modify": False, "commits": len(self._chain) - 1,
            "additions": sum(f["additions"] for f in files), "deletions": sum(f["deletions"] for f in files),
            "changed_files": len(files),
        }

    def _upstream_pr(self, req: Request) -> dict | None:
        return self._upstream.get((f"{req.params['owner']}/{req.params['repo']}".lower(), self._int(req, "number")))

    def _upstream_pr_json(self, u: dict) -> dict:
        repo, n = u["repo"], int(u["number"])
        url = f"{self.api}/repos/{repo}/pulls/{n}"
        merged = bool(u.get("merged"))
        who = self.user(u.get("author", "someone"))
        return {"url": url, "id": user_id(f"{repo}#{n}"), "node_id": node_id("PullRequest", f"{repo}#{n}"),
                "number": n, "html_url": f"{WEB}/{repo}/pull/{n}", "issue_url": f"{self.api}/repos/{repo}/issues/{n}",
                "state": u.get("state", "closed" if merged else "open"), "title": u.get("title", ""),
                "body": u.get("body", ""), "user": who, "labels": [], "merged": merged,
                "merged_at": u.get("merged_at") or (iso(self.pr_created) if merged else None),
                "created_at": iso(self.pr_created - timedelta(days=7)), "updated_at": iso(self.pr_created),
                "closed_at": iso(self.pr_created) if u.get("state", "") == "closed" or merged else None,
                "head": {"ref": u.get("head_ref", "patch"), "sha": u.get("head_sha", "0" * 40), "label": "", "user": who,
                         "repo": self.repo_json(repo)},
                "base": {"ref": "main", "sha": "0" * 40, "label": "", "user": who, "repo": self.repo_json(repo)},
                "draft": False, "changed_files": len(u.get("files") or {}), "commits": 1,
                "author_association": "CONTRIBUTOR",
                # The rest of GitHub's pull-request shape.
                "diff_url": f"{WEB}/{repo}/pull/{n}.diff", "patch_url": f"{WEB}/{repo}/pull/{n}.patch",
                "commits_url": f"{url}/commits", "review_comments_url": f"{url}/comments",
                "review_comment_url": f"{self.api}/repos/{repo}/pulls/comments{{/number}}",
                "comments_url": f"{self.api}/repos/{repo}/issues/{n}/comments",
                "statuses_url": f"{self.api}/repos/{repo}/statuses/{u.get('head_sha', '0' * 40)}",
                "locked": False, "milestone": None, "assignee": None, "assignees": [], "auto_merge": None,
                "merge_commit_sha": None, "mergeable": None, "mergeable_state": "unknown",
                "merged_by": who if merged else None, "maintainer_can_modify": False, "comments": 0,
                "review_comments": 0, "additions": 0, "deletions": 0,
                "_links": {k: {"href": h} for k, h in (
                    ("self", url), ("html", f"{WEB}/{repo}/pull/{n}"), ("issue", f"{self.api}/repos/{repo}/issues/{n}"),
                    ("comments", f"{self.api}/repos/{repo}/issues/{n}/comments"), ("review_comments", f"{url}/comments"),
                    ("review_comment", f"{self.api}/repos/{repo}/pulls/comments{{/number}}"),
                    ("commits", f"{url}/commits"), ("statuses", f"{self.api}/repos/{repo}/statuses/0"))}}

    def h_pull(self, req: Request) -> Response:
        up = self._upstream_pr(req)
        if up is not None:
            return Response(200, self._upstream_pr_json(up))
        self._check_pr(req)
        return Response(200, self.pr_json())

    def h_pulls(self, req: Request) -> Response:
        """List pull requests (https://docs.github.com/en/rest/pulls/pulls#list-pull-requests): the
        world's PR when it matches `state` (default open), `head` (`owner:branch`) and `base`."""
        self._check_repo(req)
        pr, w = self.world.pr, self.world
        state = req.query.get("state") or "open"
        if state not in ("open", "closed", "all"):
            raise invalid("state must be open, closed or all", "state")
        head = req.query.get("head")
        matches = (state in ("all", pr.state) and (not head or head.lower() == f"{w.owner}:{w.head_branch}".lower())
                   and req.query.get("base") in (None, "", w.default_branch))
        return self.listing(req, [None] if matches else [], lambda _: self.pr_json())

    def h_pull_files(self, req: Request) -> Response:
        up = self._upstream_pr(req)
        if up is not None:
            entries = []
            for path, text in (up.get("files") or {}).items():
                lines = str(text).splitlines()
                entries.append({"sha": "0" * 40, "filename": path, "status": "added", "additions": len(lines),
                                "deletions": 0, "changes": len(lines),
                                "patch": f"@@ -0,0 +1,{len(lines)} @@\n" + "\n".join("+" + x for x in lines),
                                "blob_url": f"{WEB}/{up['repo']}/blob/main/{path}",
                                "raw_url": f"{WEB}/{up['repo']}/raw/main/{path}",
                                "contents_url": f"{self.api}/repos/{up['repo']}/contents/{path}"})
            return self.listing(req, entries, lambda x: x)
        self._check_pr(req)
        return self.listing(req, self._diff(self.merge_base_sha, self.head_sha)[:MAX_PR_FILES], lambda x: x)

    def h_pull_commits(self, req: Request) -> Response:
        self._check_pr(req)
        return self.listing(req, self._chain[1:][:MAX_PR_COMMITS], lambda s: self.commit_json(s, False))

    def review_json(self, rec: dict) -> dict:
        pr_url = f"{self.repo_api}/pulls/{self.pr_number}"
        html = self.web(f"/pull/{self.pr_number}#pullrequestreview-{rec['id']}")
        return {"id": rec["id"], "node_id": node_id("PullRequestReview", rec["id"]),
                "user": self.user(rec["author"], rec["user_type"]), "body": rec["body"], "state": "COMMENTED",
                "html_url": html, "pull_request_url": pr_url, "submitted_at": iso(rec["created_at"]),
                "commit_id": self.head_sha, "author_association": rec["association"],
                "_links": {"html": {"href": html}, "pull_request": {"href": pr_url}}}

    def review_comment_json(self, rec: dict) -> dict:
        url = f"{self.repo_api}/pulls/comments/{rec['id']}"
        pr_url = f"{self.repo_api}/pulls/{self.pr_number}"
        html = self.web(f"/pull/{self.pr_number}#discussion_r{rec['id']}")
        if rec.get("path"):
            path, line, commit = rec["path"], rec["line"], rec["commit_id"]
        else:
            files = self._diff(self.merge_base_sha, self.head_sha)
            path, line, commit = (files[0]["filename"] if files else "README.md"), 1, self.head_sha
        return {"id": rec["id"], "node_id": node_id("PullRequestReviewComment", rec["id"]), "url": url,
                "pull_request_review_id": None, "diff_hunk": "@@ -1 +1 @@", "path": path, "position": 1,
                "original_position": 1, "line": line, "original_line": line, "side": "RIGHT",
                "commit_id": commit, "original_commit_id": commit,
                "user": self.user(rec["author"], rec["user_type"]), "body": rec["body"],
                "created_at": iso(rec["created_at"]), "updated_at": iso(rec["updated_at"]), "html_url": html,
                "pull_request_url": pr_url, "author_association": rec["association"],
                "reactions": self._reaction_summary("review_comment", rec["id"], url),
                "_links": {"self": {"href": url}, "html": {"href": html}, "pull_request": {"href": pr_url}}}

    def h_reviews(self, req: Request) -> Response:
        self._check_pr(req)
        return self.listing(req, ordered(self._reviews), self.review_json)

    def h_review(self, req: Request) -> Response:
        self._check_pr(req)
        rec = self._reviews.get(self._int(req, "review_id"))
        if rec is None:
            raise not_found()
        return Response(200, self.review_json(rec))

    def h_review_comments(self, req: Request) -> Response:
        self._check_pr(req)
        return self.listing(req, ordered(self._review_comments), self.review_comment_json)

    def h_review_comment_create(self, req: Request) -> Response:
        """An inline comment on one line of the head's diff (GitHub: `commit_id`, `path`, `line`,
        `side`; the line must be in the file at that commit)."""
        self._check_pr(req)
        body = req.body if isinstance(req.body, dict) else {}
        text, path, line, commit = body.get("body"), body.get("path"), body.get("line"), body.get("commit_id")
        if not isinstance(text, str) or not text:
            raise invalid("body is missing", "body", "missing_field")
        if len(text) > MAX_COMMENT_BODY:
            raise invalid("body is too long (maximum is 65536 characters)", "body", "custom")
        if not isinstance(commit, str) or commit not in self._chain:
            raise invalid("commit_id is not part of the pull request", "commit_id")
        changed = {f["filename"] for f in self._diff(self.merge_base_sha, commit)}
        if not isinstance(path, str) or path not in changed:
            raise invalid("path is not part of the diff", "path")
        if not isinstance(line, int) or isinstance(line, bool) or line not in self._diff_lines(commit, path):
            raise HttpError(422, "Validation Failed", [{"resource": "PullRequestReviewComment", "code": "custom",
                                                        "field": "pull_request_review_thread.line",
                                                        "message": MSG_LINE_NOT_IN_DIFF}])
        if body.get("side", "RIGHT") != "RIGHT":
            raise invalid("side must be RIGHT for a new line", "side")
        actor = req.actor or ""
        now = self._tick()
        rec = {"id": self._new_id(), "author": actor, "association": "NONE" if actor.endswith("[bot]") else self._association(actor),
               "body": text, "created_at": now, "updated_at": now, "user_type": self._actor_type(actor),
               "path": path, "line": line, "commit_id": commit}
        self._review_comments[rec["id"]] = rec
        self._effect(EFFECT_REVIEW_COMMENT_CREATED, actor, id=rec["id"], path=path, line=line, commit=commit, body=text)
        return Response(201, self.review_comment_json(rec))

    def _diff_lines(self, commit: str, path: str) -> set[int]:
        """The new-side line numbers of `path` that the PR's diff up to `commit` shows: every line
        of each hunk (changed lines and their 3 lines of context), as GitHub's diff view has them."""
        def text(sha: str | None) -> list[str]:
            entry = self.git.files(sha).get(path) if sha else None
            found = self.git.read(entry["sha"]) if entry else None
            return found[1].decode().splitlines() if found and is_text(found[1]) else []

        old, new = text(self.base_sha), text(commit)
        lines: set[int] = set()
        for group in difflib.SequenceMatcher(None, old, new, autojunk=False).get_grouped_opcodes(DIFF_CONTEXT):
            lines.update(range(group[0][3] + 1, group[-1][4] + 1))
        return lines

    def h_review_update(self, req: Request) -> Response:
        """Update a review's summary (https://docs.github.com/en/rest/pulls/reviews#update-a-review-for-a-pull-request).
        A review has no `updated_at` and its `submitted_at` stays: an edit leaves no date."""
        self._check_pr(req)
        rec = self._reviews.get(self._int(req, "review_id"))
        if rec is None:
            raise not_found()
        body = req.body if isinstance(req.body, dict) else {}
        if not isinstance(body.get("body"), str):
            raise invalid("body is missing", "body", "missing_field")
        if (req.actor or "").lower() != rec["author"].lower():
            raise HttpError(403, "Resource not accessible by integration")
        rec["body"] = body["body"]
        return Response(200, self.review_json(rec))

    def h_review_comment(self, req: Request) -> Response:
        self._check_repo(req)
        rec = self._review_comments.get(self._int(req, "comment_id"))
        if rec is None:
            raise not_found()
        return Response(200, self.review_comment_json(rec))
