"""The emulator's mutable state, loaded from the world: comments, reviews, check runs, workflow runs,
artifacts, labels; ids and the virtual clock; the URLs it answers with; request parameter lookups."""
from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from .common import WEB, user_id
from .http import Request, not_found
from .world import utc


class State:
    def _load_state(self) -> None:
        w, pr = self.world, self.world.pr
        self.repo_id = user_id(w.repo) + 1
        known = [c.id for c in pr.comments if c.id] + [r.id for r in pr.runs]
        if pr.signoff and pr.signoff.id:
            known.append(pr.signoff.id)
        self._next = max([1_000_000] + [k for k in known if k < 10**11]) + 1
        stamps = [d for d in (self.git.commit(s)["committer"][2] for s in self._chain)]
        all_comments = list(pr.comments) + ([pr.signoff] if pr.signoff else [])
        stamps += [utc(t) for c in all_comments for t in (c.created_at, c.updated_at) if t]
        stamps += [utc(r.created_at) for r in pr.runs if r.created_at]
        self._clock = max(stamps) + timedelta(hours=1)
        # The PR opens with its first commit (or first comment, if a world dates one earlier).
        self.pr_created = min(stamps[1:]) if len(stamps) > 1 else stamps[0]
        self._issue_comments: dict[int, dict] = {}
        self._reviews: dict[int, dict] = {}
        self._review_comments: dict[int, dict] = {}
        seq = self.pr_created
        for c in sorted(all_comments, key=lambda c: (utc(c.created_at) if c.created_at else self.pr_created)):
            seq += timedelta(seconds=1)
            created = utc(c.created_at) if c.created_at else seq
            rec = {"id": c.id or self._new_id(), "author": c.author, "association": c.association,
                   "body": c.body, "created_at": created, "updated_at": utc(c.updated_at) if c.updated_at else created,
                   "user_type": c.user_type}
            {"issue_comment": self._issue_comments, "review": self._reviews,
             "review_comment": self._review_comments}[c.kind][rec["id"]] = rec
        self._reactions: dict[tuple[str, int], list[dict]] = {}
        self._labels: list[str] = list(dict.fromkeys(pr.labels))
        self._statuses: dict[str, list[dict]] = {}
        self._check_runs: dict[str, list[dict]] = {}
        self._jobs_by_run: dict[int, list[dict]] = {}
        for ref, runs in pr.check_runs.items():
            sha = self.built.resolve(ref)
            for cr in runs:
                rec = {"id": self._new_id(), "name": cr.name, "status": cr.status, "conclusion": cr.conclusion,
                       "details_url": cr.details_url, "run_id": cr.run_id, "head_sha": sha}
                if not rec["details_url"] and cr.run_id:
                    rec["details_url"] = f"{WEB}/{w.repo}/actions/runs/{cr.run_id}/job/{rec['id']}"
                self._check_runs.setdefault(sha, []).append(rec)
                if cr.run_id:
                    self._jobs_by_run.setdefault(cr.run_id, []).append(rec)
        self._workflows: dict[int, dict] = {}
        self._runs: dict[int, dict] = {}
        self._artifacts: dict[int, dict] = {}
        art_root = self.world_dir / (pr.artifacts_dir or "artifacts")
        for run in pr.runs:
            wf = self._workflow_for(run.workflow, run.name)
            sha = self.built.resolve(run.head)
            created = utc(run.created_at) if run.created_at else self._commit_date(sha) + timedelta(minutes=10)
            rec = {"id": run.id, "name": run.name, "workflow_id": wf["id"], "path": wf["path"], "event": run.event,
                   "status": run.status, "conclusion": run.conclusion, "head_sha": sha, "created_at": created,
                   "head_branch": run.head_branch or w.head_branch, "artifacts": []}
            self._runs[run.id] = rec
            for i, art in enumerate(run.artifacts):
                aid = run.id * 100 + i + 1
                self._artifacts[aid] = {"id": aid, "name": art.name, "run_id": run.id, "expired": art.expired,
                                        "dir": art_root / str(run.id) / art.name, "created_at": created}
                rec["artifacts"].append(aid)
        for entry in self.git.files(self.base_sha):
            if re.match(r"^\.github/workflows/[^/]+\.ya?ml$", entry):
                self._workflow_for(entry, None)
        self._upstream = {(u.get("repo", "").lower(), int(u.get("number", 0))): u for u in pr.upstream}

    def _new_id(self) -> int:
        self._next += 1
        return self._next

    def _tick(self) -> datetime:
        self._clock += timedelta(seconds=1)
        return self._clock

    def _workflow_for(self, path: str, name: str | None) -> dict:
        for wf in self._workflows.values():
            if wf["path"] == path:
                return wf
        wid = 100_000 + len(self._workflows) + 1
        self._workflows[wid] = {"id": wid, "path": path, "name": name or Path(path).name}
        return self._workflows[wid]

    def _commit_date(self, sha: str) -> datetime:
        info = self.git.commit(sha)
        return info["committer"][2] if info else self._clock

    def _effect(self, kind: str, actor: str | None, **details: Any) -> None:
        self._effects.append({"kind": kind, **details, "actor": actor})

    @property
    def api(self) -> str:
        """API root as the current client addresses it (with /api/v3 when it used that prefix)."""
        return self.url + getattr(self._local, "prefix", "")

    @property
    def repo_api(self) -> str:
        return f"{self.api}/repos/{self.world.repo}"

    @property
    def app_slug(self) -> str:
        return self.world.bot.login.removesuffix("[bot]")

    @property
    def pr_number(self) -> int:
        return self.world.pr.number

    def web(self, tail: str = "") -> str:
        return f"{WEB}/{self.world.repo}{tail}"

    def _check_repo(self, req: Request) -> None:
        if f"{req.params['owner']}/{req.params['repo']}".lower() != self.world.repo.lower():
            raise not_found()

    def _check_pr(self, req: Request) -> None:
        self._check_repo(req)
        if self._int(req, "number") != self.pr_number:
            raise not_found()

    def _int(self, req: Request, name: str) -> int:
        try:
            return int(req.params[name])
        except ValueError:
            raise not_found() from None
