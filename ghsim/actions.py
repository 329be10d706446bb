"""GitHub Actions: workflows, runs, jobs, artifacts (zip downloads through a pre-signed URL stand-in)
and workflow dispatch."""
from __future__ import annotations

import io
import json
import zipfile
from datetime import timedelta
from pathlib import Path

import yaml

from .common import iso, node_id
from .effects import EFFECT_WORKFLOW_DISPATCHED
from .http import HttpError, Request, Response, invalid, not_found

DOWNLOAD_PREFIX = "/_sandbox/artifacts"
MSG_EXPIRED = "Artifact has expired"
ZIP_DATE = (2026, 1, 1, 0, 0, 0)
# `<artifacts_dir>/<run>/<name>.zip` (with no `<name>/` folder) is an artifact's download as given.
PREBUILT_ZIP_SUFFIX = ".zip"
# "Create a workflow dispatch event" (https://docs.github.com/en/rest/actions/workflows#create-a-workflow-dispatch-event)
# takes the inputs the workflow file at `ref` declares under `on.workflow_dispatch.inputs`, at
# most 25 of them (`on.workflow_dispatch.inputs`,
# https://docs.github.com/en/actions/reference/workflows-and-actions/workflow-syntax#onworkflow_dispatchinputs;
# the limit was 10 before), and answers 422 to any other input, a missing required one or a workflow without the trigger.
MAX_DISPATCH_INPUTS = 25
MSG_NO_DISPATCH = "Workflow does not have 'workflow_dispatch' trigger"
MSG_UNEXPECTED_INPUTS = "Unexpected inputs provided: {names}"
MSG_TOO_MANY_INPUTS = "you may only define up to {max} `inputs` for a `workflow_dispatch` event"
MSG_REQUIRED_INPUT = "Required input '{name}' not provided"


class Actions:
    def workflow_json(self, rec: dict) -> dict:
        url = f"{self.repo_api}/actions/workflows/{rec['id']}"
        return {"id": rec["id"], "node_id": node_id("Workflow", rec["id"]), "name": rec["name"], "path": rec["path"],
                "state": "active", "created_at": iso(self.pr_created), "updated_at": iso(self.pr_created), "url": url,
                "html_url": self.web(f"/blob/{self.world.default_branch}/{rec['path']}"),
                "badge_url": self.web(f"/workflows/{Path(rec['path']).name}/badge.svg")}

    def _workflow(self, req: Request) -> dict:
        self._check_repo(req)
        key = req.params["workflow_id"]
        for wf in self._workflows.values():
            if key == str(wf["id"]) or key == Path(wf["path"]).name:
                return wf
        raise not_found()

    def h_workflow(self, req: Request) -> Response:
        return Response(200, self.workflow_json(self._workflow(req)))

    def h_workflow_runs(self, req: Request) -> Response:
        wf = self._workflow(req)
        return self.wrapped_listing(req, "workflow_runs", self._filtered_runs(req, wf["id"]), self.run_json)

    def h_dispatch(self, req: Request) -> Response:
        wf = self._workflow(req)
        body = req.body if isinstance(req.body, dict) else {}
        ref = body.get("ref")
        if not isinstance(ref, str) or not ref:
            raise invalid("ref is missing", "ref", "missing_field")
        sha = self.resolve_ref(ref)
        if sha is None:
            raise invalid(f"No ref found for: {ref}", "ref")
        if "return_run_details" in body and not self.run_details:
            raise invalid("return_run_details is not a permitted key.", "return_run_details")
        inputs = body.get("inputs") or {}
        self._check_dispatch_inputs(wf, sha, inputs)
        run_id = self._new_id()
        self._runs[run_id] = {"id": run_id, "name": wf["name"], "workflow_id": wf["id"], "path": wf["path"],
                              "event": "workflow_dispatch", "status": "queued", "conclusion": None, "head_sha": sha,
                              "created_at": self._tick(), "head_branch": ref.removeprefix("refs/heads/"),
                              "artifacts": [], "actor": req.actor}
        self._effect(EFFECT_WORKFLOW_DISPATCHED, req.actor, workflow=wf["path"], ref=ref, inputs=inputs, run_id=run_id)
        if body.get("return_run_details"):
            return Response(200, {"workflow_run_id": run_id, "run_url": f"{self.repo_api}/actions/runs/{run_id}",
                                  "html_url": self.web(f"/actions/runs/{run_id}")})
        return Response(204)

    def _declared_inputs(self, wf: dict, sha: str) -> dict[str, dict] | None:
        """The `workflow_dispatch` inputs the workflow file declares at commit `sha` (name -> spec),
        or None when the file there has no `workflow_dispatch` trigger (or is not there)."""
        entry = self.git.files(sha).get(wf["path"])
        found = self.git.read(entry["sha"]) if entry else None
        try:
            doc = yaml.safe_load(found[1]) if found else None
        except yaml.YAMLError:
            return None
        # YAML 1.1 reads the key `on` as true.
        triggers = (doc.get("on", doc.get(True)) if isinstance(doc, dict) else None) or {}
        if isinstance(triggers, str):
            triggers = {triggers: None}
        elif isinstance(triggers, list):
            triggers = dict.fromkeys(triggers)
        if not isinstance(triggers, dict) or "workflow_dispatch" not in triggers:
            return None
        declared = (triggers.get("workflow_dispatch") or {}).get("inputs") or {}
        return {str(k): (v if isinstance(v, dict) else {}) for k, v in declared.items()}

    def _check_dispatch_inputs(self, wf: dict, sha: str, inputs: object) -> None:
        if not isinstance(inputs, dict):
            raise invalid("inputs must be an object", "inputs")
        declared = self._declared_inputs(wf, sha)
        if declared is None:
            raise HttpError(422, MSG_NO_DISPATCH)
        if len(declared) > MAX_DISPATCH_INPUTS or len(inputs) > MAX_DISPATCH_INPUTS:
            raise HttpError(422, MSG_TOO_MANY_INPUTS.format(max=MAX_DISPATCH_INPUTS))
        unexpected = sorted(k for k in inputs if k not in declared)
        if unexpected:
            raise HttpError(422, MSG_UNEXPECTED_INPUTS.format(names=json.dumps(unexpected)))
        for name, spec in declared.items():
            if spec.get("required") is True and "default" not in spec and inputs.get(name) in (None, ""):
                raise HttpError(422, MSG_REQUIRED_INPUT.format(name=name))

    def run_json(self, rec: dict) -> dict:
        url = f"{self.repo_api}/actions/runs/{rec['id']}"
        wf = self._workflows[rec["workflow_id"]]
        info = self.git.commit(rec["head_sha"])
        head_commit = None
        if info:
            head_commit = {"id": rec["head_sha"], "tree_id": info["tree"], "message": info["message"],
                           "timestamp": iso(info["committer"][2]),
                           "author": {"name": info["author"][0], "email": info["author"][1]},
                           "committer": {"name": info["committer"][0], "email": info["committer"][1]}}
        repo = self.repo_json(self.world.repo)
        return {"id": rec["id"], "name": rec["name"], "node_id": node_id("WorkflowRun", rec["id"]),
                "head_branch": rec["head_branch"], "head_sha": rec["head_sha"], "path": wf["path"],
                "display_title": self.world.pr.title or rec["name"], "run_number": rec["id"] % 100_000,
                "run_attempt": 1, "event": rec["event"], "status": rec["status"],
                "conclusion": rec["conclusion"] if rec["status"] == "completed" else None,
                "workflow_id": rec["workflow_id"], "check_suite_id": rec["id"] + 1, "url": url,
                "html_url": self.web(f"/actions/runs/{rec['id']}"), "created_at": iso(rec["created_at"]),
                "updated_at": iso(rec["created_at"] + timedelta(hours=1)), "run_started_at": iso(rec["created_at"]),
                "jobs_url": f"{url}/jobs", "logs_url": f"{url}/logs", "artifacts_url": f"{url}/artifacts",
                "cancel_url": f"{url}/cancel", "rerun_url": f"{url}/rerun", "check_suite_url": f"{self.repo_api}/check-suites/{rec['id'] + 1}",
                "workflow_url": f"{self.repo_api}/actions/workflows/{rec['workflow_id']}",
                "pull_requests": [], "head_commit": head_commit, "repository": repo, "head_repository": repo,
                "actor": self.user(self.world.pr.author), "triggering_actor": self.user(rec.get("actor") or self.world.pr.author)}

    def _filtered_runs(self, req: Request, workflow_id: int | None = None) -> list[dict]:
        runs = sorted(self._runs.values(), key=lambda r: (r["created_at"], r["id"]), reverse=True)
        q = req.query
        if workflow_id is not None:
            runs = [r for r in runs if r["workflow_id"] == workflow_id]
        if q.get("event"):
            runs = [r for r in runs if r["event"] == q["event"]]
        if q.get("status"):
            runs = [r for r in runs if q["status"] in (r["status"], r["conclusion"])]
        if q.get("branch"):
            runs = [r for r in runs if r["head_branch"] == q["branch"]]
        if q.get("head_sha"):
            runs = [r for r in runs if r["head_sha"] == q["head_sha"]]
        return runs

    def h_runs(self, req: Request) -> Response:
        self._check_repo(req)
        return self.wrapped_listing(req, "workflow_runs", self._filtered_runs(req), self.run_json)

    def _run(self, req: Request) -> dict:
        self._check_repo(req)
        rec = self._runs.get(self._int(req, "run_id"))
        if rec is None:
            raise not_found()
        return rec

    def h_run(self, req: Request) -> Response:
        return Response(200, self.run_json(self._run(req)))

    def job_json(self, rec: dict) -> dict:
        run = self._runs.get(rec["run_id"], {})
        when = self._commit_date(rec["head_sha"]) + timedelta(minutes=5)
        done = rec["status"] == "completed"
        return {"id": rec["id"], "run_id": rec["run_id"], "run_url": f"{self.repo_api}/actions/runs/{rec['run_id']}",
                "node_id": node_id("CheckRun", rec["id"]), "head_sha": rec["head_sha"],
                "url": f"{self.repo_api}/actions/jobs/{rec['id']}", "html_url": rec["details_url"],
                "status": rec["status"], "conclusion": rec["conclusion"] if done else None,
                "created_at": iso(when), "started_at": iso(when),
                "completed_at": iso(when + timedelta(minutes=30)) if done else None, "name": rec["name"],
                "steps": [], "check_run_url": f"{self.repo_api}/check-runs/{rec['id']}", "labels": [],
                "runner_id": None, "runner_name": None, "runner_group_id": None, "runner_group_name": None,
                "workflow_name": run.get("name"), "head_branch": run.get("head_branch"), "run_attempt": 1}

    def h_run_jobs(self, req: Request) -> Response:
        rec = self._run(req)
        return self.wrapped_listing(req, "jobs", self._jobs_by_run.get(rec["id"], []), self.job_json)

    def h_job(self, req: Request) -> Response:
        self._check_repo(req)
        jid = self._int(req, "job_id")
        for jobs in self._jobs_by_run.values():
            for j in jobs:
                if j["id"] == jid:
                    return Response(200, self.job_json(j))
        raise not_found()

    def artifact_json(self, rec: dict) -> dict:
        url = f"{self.repo_api}/actions/artifacts/{rec['id']}"
        run = self._runs[rec["run_id"]]
        size = sum(p.stat().st_size for p in rec["dir"].rglob("*") if p.is_file()) if rec["dir"].is_dir() else 0
        created = rec["created_at"]
        return {"id": rec["id"], "node_id": node_id("Artifact", rec["id"]), "name": rec["name"], "size_in_bytes": size,
                "url": url, "archive_download_url": f"{url}/zip", "expired": rec["expired"],
                "created_at": iso(created), "updated_at": iso(created), "expires_at": iso(created + timedelta(days=90)),
                "digest": None,
                "workflow_run": {"id": run["id"], "repository_id": self.repo_id, "head_repository_id": self.repo_id,
                                 "head_branch": run["head_branch"], "head_sha": run["head_sha"]}}

    def h_run_artifacts(self, req: Request) -> Response:
        rec = self._run(req)
        arts = [self._artifacts[a] for a in rec["artifacts"]]
        if req.query.get("name"):
            arts = [a for a in arts if a["name"] == req.query["name"]]
        return self.wrapped_listing(req, "artifacts", arts, self.artifact_json)

    def _artifact(self, req: Request) -> dict:
        self._check_repo(req)
        rec = self._artifacts.get(self._int(req, "artifact_id"))
        if rec is None:
            raise not_found()
        return rec

    def h_artifact(self, req: Request) -> Response:
        return Response(200, self.artifact_json(self._artifact(req)))

    def _signature(self, artifact_id: int) -> str:
        return node_id("download", f"{artifact_id}:{self.port}").replace("+", "-").replace("/", "_")

    def h_artifact_zip(self, req: Request) -> Response:
        rec = self._artifact(req)
        if rec["expired"]:
            raise HttpError(410, MSG_EXPIRED)
        # Like GitHub: a redirect to a short-lived URL that needs no token.
        location = f"{self.api}{DOWNLOAD_PREFIX}/{rec['id']}/{self._signature(rec['id'])}"
        return Response(302, b"", {"Location": location}, content_type="text/plain")

    def h_download(self, req: Request) -> Response:
        aid = self._int(req, "artifact_id")
        rec = self._artifacts.get(aid)
        if rec is None or rec["expired"] or req.params["signature"] != self._signature(aid):
            raise HttpError(404, "BlobNotFound")
        if aid not in self._zip_cache:
            prebuilt = rec["dir"].with_name(rec["dir"].name + PREBUILT_ZIP_SUFFIX)
            if not rec["dir"].is_dir() and prebuilt.is_file():
                self._zip_cache[aid] = prebuilt.read_bytes()  # served as is, e.g. a truncated zip
            else:
                self._zip_cache[aid] = zip_dir(rec["dir"])
        return Response(200, self._zip_cache[aid], content_type="application/zip")


def zip_dir(root: Path) -> bytes:
    """Deterministic zip of an artifact directory (fixed timestamps, sorted names)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        if root.is_dir():
            for p in sorted(x for x in root.rglob("*") if x.is_file()):
                info = zipfile.ZipInfo(p.relative_to(root).as_posix(), date_time=ZIP_DATE)
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, p.read_bytes())
    return buf.getvalue()
