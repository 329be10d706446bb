"""The PR as an issue: its comments (create, edit, delete), reactions and labels."""
from __future__ import annotations

import urllib.parse

from .common import iso, node_id, ordered, user_id
from .effects import (
    EFFECT_COMMENT_CREATED,
    EFFECT_COMMENT_DELETED,
    EFFECT_COMMENT_EDITED,
    EFFECT_LABEL_ADDED,
    EFFECT_LABEL_REMOVED,
    EFFECT_REACTION_ADDED,
    EFFECT_REACTION_REMOVED,
)
from .http import HttpError, Request, Response, invalid, not_found

# GitHub limits the emulator enforces, so the bot meets them here before it meets them live.
MAX_COMMENT_BODY = 65536
REACTIONS = ("+1", "-1", "laugh", "confused", "heart", "hooray", "rocket", "eyes")


class Issues:
    def issue_json(self) -> dict:
        pr = self.pr_json()
        n = self.pr_number
        keep = ("id", "node_id", "number", "state", "locked", "title", "body", "user", "labels", "milestone",
                "assignee", "assignees", "comments", "created_at", "updated_at", "closed_at", "author_association",
                "active_lock_reason", "draft")
        out = {k: pr[k] for k in keep}
        out.update({"url": pr["issue_url"], "repository_url": self.repo_api, "html_url": pr["html_url"],
                    "labels_url": f"{pr['issue_url']}/labels{{/name}}", "comments_url": pr["comments_url"],
                    "events_url": f"{pr['issue_url']}/events", "state_reason": None,
                    "pull_request": {"url": pr["url"], "html_url": pr["html_url"], "diff_url": pr["diff_url"],
                                     "patch_url": pr["patch_url"], "merged_at": None},
                    "reactions": {"url": f"{self.repo_api}/issues/{n}/reactions", "total_count": 0,
                                  **{r: 0 for r in REACTIONS}}})
        return out

    def label_json(self, name: str) -> dict:
        lid = user_id("label:" + name)
        return {"id": lid, "node_id": node_id("Label", lid), "name": name, "color": "ededed", "default": False,
                "description": None, "url": f"{self.repo_api}/labels/{urllib.parse.quote(name)}"}

    def _reaction_summary(self, subject: str, cid: int, url: str) -> dict:
        out = {"url": f"{url}/reactions", "total_count": 0, **{r: 0 for r in REACTIONS}}
        for r in self._reactions.get((subject, cid), []):
            out[r["content"]] += 1
            out["total_count"] += 1
        return out

    def issue_comment_json(self, rec: dict) -> dict:
        url = f"{self.repo_api}/issues/comments/{rec['id']}"
        return {"id": rec["id"], "node_id": node_id("IssueComment", rec["id"]), "url": url,
                "html_url": self.web(f"/pull/{self.pr_number}#issuecomment-{rec['id']}"),
                "issue_url": f"{self.repo_api}/issues/{self.pr_number}", "body": rec["body"],
                "user": self.user(rec["author"], rec["user_type"]), "created_at": iso(rec["created_at"]),
                "updated_at": iso(rec["updated_at"]), "author_association": rec["association"],
                "reactions": self._reaction_summary("issue_comment", rec["id"], url),
                "performed_via_github_app": None}

    def h_issue(self, req: Request) -> Response:
        self._check_pr(req)
        return Response(200, self.issue_json())

    def h_comments_list(self, req: Request) -> Response:
        self._check_pr(req)
        items = ordered(self._issue_comments)
        since = req.query.get("since")
        if since:
            items = [c for c in items if iso(c["updated_at"]) >= since]
        return self.listing(req, items, self.issue_comment_json)

    def _comment_body(self, req: Request) -> str:
        body = (req.body or {}).get("body") if isinstance(req.body, dict) else None
        if not isinstance(body, str) or not body:
            raise invalid("body is missing", "body", "missing_field")
        if len(body) > MAX_COMMENT_BODY:
            raise invalid(f"Body is too long (maximum is {MAX_COMMENT_BODY} characters)", "body", "custom")
        return body

    def h_comment_create(self, req: Request) -> Response:
        self._check_pr(req)
        body = self._comment_body(req)
        actor = req.actor or ""
        now = self._tick()
        rec = {"id": self._new_id(), "author": actor, "association": self._association(actor) if not actor.endswith("[bot]") else "NONE",
               "body": body, "created_at": now, "updated_at": now, "user_type": self._actor_type(actor)}
        self._issue_comments[rec["id"]] = rec
        self._effect(EFFECT_COMMENT_CREATED, actor, id=rec["id"], number=self.pr_number, body=body)
        out = self.issue_comment_json(rec)
        return Response(201, out, {"Location": out["url"]})

    def _comment(self, req: Request) -> dict:
        self._check_repo(req)
        rec = self._issue_comments.get(self._int(req, "comment_id"))
        if rec is None:
            raise not_found()
        return rec

    def h_comment_get(self, req: Request) -> Response:
        return Response(200, self.issue_comment_json(self._comment(req)))

    def h_comment_edit(self, req: Request) -> Response:
        rec = self._comment(req)
        body = self._comment_body(req)
        previous = rec["body"]
        rec["body"], rec["updated_at"] = body, self._tick()
        self._effect(EFFECT_COMMENT_EDITED, req.actor, id=rec["id"], number=self.pr_number, body=body,
                     previous_body=previous, author=rec["author"])
        return Response(200, self.issue_comment_json(rec))

    def h_comment_delete(self, req: Request) -> Response:
        rec = self._comment(req)
        del self._issue_comments[rec["id"]]
        self._effect(EFFECT_COMMENT_DELETED, req.actor, id=rec["id"], number=self.pr_number, author=rec["author"])
        return Response(204)

    def _reaction_subject(self, req: Request) -> tuple[str, int]:
        self._check_repo(req)
        cid = self._int(req, "comment_id")
        subject = "review_comment" if "/pulls/comments/" in req.path else "issue_comment"
        store = self._review_comments if subject == "review_comment" else self._issue_comments
        if cid not in store:
            raise not_found()
        return subject, cid

    def _reaction_json(self, rec: dict) -> dict:
        return {"id": rec["id"], "node_id": node_id("Reaction", rec["id"]), "user": self.user(rec["actor"]),
                "content": rec["content"], "created_at": iso(rec["created_at"])}

    def h_reactions_list(self, req: Request) -> Response:
        key = self._reaction_subject(req)
        items = self._reactions.get(key, [])
        if req.query.get("content"):
            items = [r for r in items if r["content"] == req.query["content"]]
        return self.listing(req, items, self._reaction_json)

    def h_reactions_add(self, req: Request) -> Response:
        subject, cid = self._reaction_subject(req)
        content = (req.body or {}).get("content") if isinstance(req.body, dict) else None
        if content not in REACTIONS:
            raise invalid(f"content must be one of {', '.join(REACTIONS)}", "content")
        existing = self._reactions.setdefault((subject, cid), [])
        for r in existing:
            if r["actor"] == req.actor and r["content"] == content:
                return Response(200, self._reaction_json(r))  # GitHub answers 200 for a repeat
        rec = {"id": self._new_id(), "actor": req.actor or "", "content": content, "created_at": self._tick()}
        existing.append(rec)
        self._effect(EFFECT_REACTION_ADDED, req.actor, subject=subject, comment_id=cid, content=content)
        return Response(201, self._reaction_json(rec))

    def h_reaction_delete(self, req: Request) -> Response:
        subject, cid = self._reaction_subject(req)
        rid = self._int(req, "reaction_id")
        existing = self._reactions.get((subject, cid), [])
        for r in existing:
            if r["id"] == rid:
                if r["actor"] != req.actor:
                    raise HttpError(403, "Must have admin rights to Repository.")
                existing.remove(r)
                self._effect(EFFECT_REACTION_REMOVED, req.actor, subject=subject, comment_id=cid, content=r["content"])
                return Response(204, None)
        raise not_found()

    def h_labels_list(self, req: Request) -> Response:
        self._check_pr(req)
        return self.listing(req, list(self._labels), self.label_json)

    def h_labels_add(self, req: Request) -> Response:
        self._check_pr(req)
        body = req.body
        names = body.get("labels") if isinstance(body, dict) else body
        if not isinstance(names, list) or not all(isinstance(x, str) and x for x in names):
            raise invalid("labels must be a list of names", "labels")
        for name in names:
            if name not in self._labels:
                self._labels.append(name)
                self._effect(EFFECT_LABEL_ADDED, req.actor, number=self.pr_number, label=name)
        return Response(200, [self.label_json(x) for x in self._labels])

    def h_label_remove(self, req: Request) -> Response:
        self._check_pr(req)
        name = req.params["name"]
        if name not in self._labels:
            raise HttpError(404, "Label does not exist")
        self._labels.remove(name)
        self._effect(EFFECT_LABEL_REMOVED, req.actor, number=self.pr_number, label=name)
        return Response(200, [self.label_json(x) for x in self._labels])

    def h_label(self, req: Request) -> Response:
        self._check_repo(req)
        return Response(200, self.label_json(req.params["name"]))
