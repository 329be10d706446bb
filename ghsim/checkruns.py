"""Checks and statuses: check runs (create, update, annotations) and commit statuses."""
from __future__ import annotations

from datetime import timedelta

from .common import HEX40, iso, node_id
from .effects import EFFECT_CHECK_RUN_CREATED, EFFECT_CHECK_RUN_UPDATED, EFFECT_STATUS_SET
from .http import MSG_VALIDATION, HttpError, Request, Response, invalid, not_found

STATUS_STATES = ("error", "failure", "pending", "success")
# REST "Create a commit status" (https://docs.github.com/en/rest/commits/statuses#create-a-commit-status):
# GitHub answers 422 for a description over 140 characters and a context over 255.
MAX_STATUS_DESCRIPTION = 140
MAX_STATUS_CONTEXT = 255
# GitHub's checks API limits (REST "Create a check run",
# https://docs.github.com/en/rest/checks/runs#create-a-check-run). The docs say "65535
# characters" for output.summary and output.text, but GitHub counts UTF-8 bytes: its 422 reads
# "summary exceeds a maximum bytesize of 65535" (https://github.com/github/docs/issues/35252).
MAX_CHECK_OUTPUT = 65535
MAX_CHECK_TITLE = 255
MAX_ANNOTATIONS_PER_REQUEST = 50
CHECK_STATUSES = ("queued", "in_progress", "completed", "waiting", "requested", "pending")
CHECK_CONCLUSIONS = ("action_required", "cancelled", "failure", "neutral", "success", "skipped", "stale", "timed_out")
ANNOTATION_LEVELS = ("notice", "warning", "failure")


class CheckRuns:
    def check_run_json(self, rec: dict) -> dict:
        url = f"{self.repo_api}/check-runs/{rec['id']}"
        done = rec["status"] == "completed"
        when = self._commit_date(rec["head_sha"]) + timedelta(minutes=5)
        out = rec.get("output") or {}
        return {"id": rec["id"], "head_sha": rec["head_sha"], "node_id": node_id("CheckRun", rec["id"]),
                "external_id": rec.get("external_id", str(rec["id"])), "url": url,
                "html_url": self.web(f"/runs/{rec['id']}"),
                "details_url": rec["details_url"] or None, "status": rec["status"],
                "conclusion": rec["conclusion"] if done else None, "started_at": iso(when),
                "completed_at": iso(when + timedelta(minutes=30)) if done else None,
                "output": {"title": out.get("title"), "summary": out.get("summary"), "text": out.get("text"),
                           "annotations_count": len(rec.get("annotations") or []),
                           "annotations_url": f"{url}/annotations"},
                "name": rec["name"], "check_suite": {"id": (rec["run_id"] or rec["id"]) + 1},
                "app": self.app_json(15368, "github-actions", "GitHub Actions", self.user("github", "Organization")),
                "pull_requests": []}

    def h_check_runs(self, req: Request) -> Response:
        self._check_repo(req)
        sha = self._commit_or_404(req.params["ref"])
        runs = list(self._check_runs.get(sha, []))
        if req.query.get("check_name"):
            runs = [r for r in runs if r["name"] == req.query["check_name"]]
        if req.query.get("status"):
            runs = [r for r in runs if r["status"] == req.query["status"]]
        if req.query.get("filter", "latest") == "latest":
            latest: dict[str, dict] = {}
            for r in runs:
                latest[r["name"]] = r
            runs = list(latest.values())
        return self.wrapped_listing(req, "check_runs", runs, self.check_run_json)

    def h_check_run(self, req: Request) -> Response:
        self._check_repo(req)
        cid = self._int(req, "check_run_id")
        for runs in self._check_runs.values():
            for r in runs:
                if r["id"] == cid:
                    return Response(200, self.check_run_json(r))
        raise not_found()

    def _find_check_run(self, cid: int) -> dict:
        for runs in self._check_runs.values():
            for r in runs:
                if r["id"] == cid:
                    return r
        raise not_found()

    def _check_output(self, body: dict) -> tuple[dict | None, list[dict]]:
        """GitHub's validation of a check run's `output` (its limits answer 422). Creating and
        updating alike: an `output` needs its `title` and `summary` ("Update a check run",
        https://docs.github.com/en/rest/checks/runs#update-a-check-run, marks both required), and
        an update's output replaces the run's, so a `text` left out of it is gone."""
        out = body.get("output")
        if out is None:
            return None, []
        if not isinstance(out, dict) or not isinstance(out.get("title"), str) or not isinstance(out.get("summary"), str):
            raise invalid("output needs a title and a summary", "output", "missing_field")
        if len(out["title"]) > MAX_CHECK_TITLE:
            raise invalid("output.title is too long", "output.title", "custom")
        for key in ("summary", "text"):
            value = out.get(key)
            if value is not None and (not isinstance(value, str) or len(value.encode("utf-8")) > MAX_CHECK_OUTPUT):
                raise HttpError(422, MSG_VALIDATION, [{"resource": "CheckRun", "code": "custom", "field": key,
                                                       "message": f"{key} exceeds a maximum bytesize of {MAX_CHECK_OUTPUT}"}])
        annotations = out.get("annotations") or []
        if len(annotations) > MAX_ANNOTATIONS_PER_REQUEST:
            raise invalid(f"at most {MAX_ANNOTATIONS_PER_REQUEST} annotations per request", "output.annotations", "custom")
        for a in annotations:
            if not (isinstance(a, dict) and isinstance(a.get("path"), str) and isinstance(a.get("start_line"), int)
                    and isinstance(a.get("end_line"), int) and a.get("annotation_level") in ANNOTATION_LEVELS
                    and isinstance(a.get("message"), str) and a["start_line"] >= 1 and a["end_line"] >= a["start_line"]):
                raise invalid("an annotation needs path, start_line <= end_line, annotation_level and message",
                              "output.annotations", "invalid")
        return {k: out.get(k) for k in ("title", "summary", "text")}, [dict(a) for a in annotations]

    def h_check_run_create(self, req: Request) -> Response:
        self._check_repo(req)
        body = req.body if isinstance(req.body, dict) else {}
        name, sha = body.get("name"), body.get("head_sha")
        if not isinstance(name, str) or not name:
            raise invalid("name is missing", "name", "missing_field")
        if not isinstance(sha, str) or not HEX40.match(sha) or self.git.commit(sha) is None:
            raise invalid(f"No commit found for SHA: {sha}", "head_sha")
        status = body.get("status", "queued")
        conclusion = body.get("conclusion")
        if status not in CHECK_STATUSES or (conclusion is not None and conclusion not in CHECK_CONCLUSIONS):
            raise invalid("status or conclusion is not one GitHub knows", "conclusion")
        if conclusion is not None:
            status = "completed"
        output, annotations = self._check_output(body)
        rec = {"id": self._new_id(), "name": name, "status": status, "conclusion": conclusion,
               "details_url": body.get("details_url"), "run_id": None, "head_sha": sha,
               "external_id": str(body.get("external_id") or ""), "output": output or {}, "annotations": annotations}
        self._check_runs.setdefault(sha, []).append(rec)
        self._effect(EFFECT_CHECK_RUN_CREATED, req.actor, id=rec["id"], name=name, sha=sha, conclusion=conclusion,
                     output=dict(rec["output"]), annotations=annotations)
        return Response(201, self.check_run_json(rec))

    def h_check_run_update(self, req: Request) -> Response:
        self._check_repo(req)
        rec = self._find_check_run(self._int(req, "check_run_id"))
        body = req.body if isinstance(req.body, dict) else {}
        output, annotations = self._check_output(body)
        if body.get("conclusion") is not None:
            if body["conclusion"] not in CHECK_CONCLUSIONS:
                raise invalid("conclusion is not one GitHub knows", "conclusion")
            rec["conclusion"], rec["status"] = body["conclusion"], "completed"
        if output is not None:
            rec["output"] = output
        # GitHub appends the annotations of each update to the run's.
        rec["annotations"] = list(rec.get("annotations") or []) + annotations
        self._effect(EFFECT_CHECK_RUN_UPDATED, req.actor, id=rec["id"], conclusion=rec["conclusion"],
                     output=dict(rec["output"]), annotations=annotations)
        return Response(200, self.check_run_json(rec))

    def h_check_run_annotations(self, req: Request) -> Response:
        self._check_repo(req)
        rec = self._find_check_run(self._int(req, "check_run_id"))
        return self.listing(req, list(rec.get("annotations") or []), lambda a: {
            **{k: a.get(k) for k in ("path", "start_line", "end_line", "annotation_level", "message", "title")},
            "blob_href": self.web(f"/blob/{rec['head_sha']}/{a.get('path')}")})

    def status_json(self, rec: dict) -> dict:
        return {"url": f"{self.repo_api}/statuses/{rec['sha']}", "id": rec["id"], "node_id": node_id("StatusContext", rec["id"]),
                "state": rec["state"], "description": rec["description"], "target_url": rec["target_url"],
                "context": rec["context"], "created_at": iso(rec["created_at"]), "updated_at": iso(rec["created_at"]),
                "avatar_url": None, "creator": self.user(rec["actor"])}

    def h_statuses(self, req: Request) -> Response:
        self._check_repo(req)
        sha = self._commit_or_404(req.params["ref"])
        return self.listing(req, list(reversed(self._statuses.get(sha, []))), self.status_json)

    def h_combined_status(self, req: Request) -> Response:
        self._check_repo(req)
        sha = self._commit_or_404(req.params["ref"])
        latest: dict[str, dict] = {}
        for s in self._statuses.get(sha, []):
            latest[s["context"]] = s
        states = {s["state"] for s in latest.values()}
        if states & {"error", "failure"}:
            state = "failure"
        elif not states or "pending" in states:
            state = "pending"
        else:
            state = "success"
        chunk, headers = self.paginate(req, list(latest.values()))
        return Response(200, {"state": state, "statuses": [self.status_json(s) for s in chunk], "sha": sha,
                              "total_count": len(latest), "repository": self.repo_json(self.world.repo),
                              "commit_url": f"{self.repo_api}/commits/{sha}",
                              "url": f"{self.repo_api}/commits/{sha}/status"}, headers)

    def h_status_create(self, req: Request) -> Response:
        self._check_repo(req)
        sha = req.params["sha"]
        if not HEX40.match(sha) or self.git.commit(sha) is None:
            raise HttpError(422, f"No commit found for SHA: {sha}")
        body = req.body if isinstance(req.body, dict) else {}
        state = body.get("state")
        if state not in STATUS_STATES:
            raise invalid(f"state must be one of {', '.join(STATUS_STATES)}", "state")
        description = body.get("description")
        if description is not None and len(description) > MAX_STATUS_DESCRIPTION:
            raise invalid(f"description is too long (maximum is {MAX_STATUS_DESCRIPTION} characters)", "description", "custom")
        context = body.get("context") or "default"
        if not isinstance(context, str) or len(context) > MAX_STATUS_CONTEXT:
            raise invalid(f"context is too long (maximum is {MAX_STATUS_CONTEXT} characters)", "context", "custom")
        rec = {"id": self._new_id(), "sha": sha, "state": state, "description": description,
               "target_url": body.get("target_url"), "context": context,
               "created_at": self._tick(), "actor": req.actor or ""}
        self._statuses.setdefault(sha, []).append(rec)
        self._effect(EFFECT_STATUS_SET, req.actor, sha=sha, state=state, context=rec["context"],
                     description=description, target_url=rec["target_url"])
        return Response(201, self.status_json(rec))
