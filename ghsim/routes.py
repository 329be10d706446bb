"""The route table: which handler answers which method and path template, and how it authenticates."""
from __future__ import annotations

import re
import urllib.parse
from dataclasses import dataclass

from .actions import DOWNLOAD_PREFIX
from .gitdata import CODELOAD_PREFIX
from .http import Handler


@dataclass
class Route:
    method: str
    template: str
    regex: re.Pattern
    handler: Handler
    auth: str = "token"  # "token", "jwt" or "none"


def compile_route(template: str) -> re.Pattern:
    special = {"path": r"(?:/(?P<path>.*))?", "ref": r"(?P<ref>.+?)", "basehead": r"(?P<basehead>.+)"}
    out = ""
    for part in re.split(r"(\{[a-z_]+\})", template):
        if part.startswith("{"):
            name = part[1:-1]
            if name == "path":
                out = out.rstrip("/")
            out += special.get(name, rf"(?P<{name}>[^/]+)")
        else:
            out += re.escape(part)
    return re.compile(f"^{out}$")



class Routes:
    def _routes(self) -> list[Route]:
        R = "/repos/{owner}/{repo}"
        table: list[tuple[str, str, Handler] | tuple[str, str, Handler, str]] = [
            ("GET", "/user", self.h_user),
            ("GET", "/users/{login}", self.h_users),
            ("GET", "/rate_limit", self.h_rate_limit),
            ("GET", "/app", self.h_app, "jwt"),
            ("GET", "/app/installations/{installation_id}", self.h_installation, "jwt"),
            ("POST", "/app/installations/{installation_id}/access_tokens", self.h_access_token, "jwt"),
            ("GET", f"{R}/installation", self.h_repo_installation, "jwt"),
            ("GET", "/orgs/{org}", self.h_org),
            ("GET", "/orgs/{org}/teams/{slug}", self.h_team),
            ("GET", "/orgs/{org}/teams/{slug}/memberships/{user}", self.h_team_membership),
            ("GET", "/orgs/{org}/teams/{slug}/members/{user}", self.h_team_member),
            ("GET", R, self.h_repo),
            ("GET", f"{R}/pulls/comments/{{comment_id}}", self.h_review_comment),
            ("GET", f"{R}/pulls/comments/{{comment_id}}/reactions", self.h_reactions_list),
            ("POST", f"{R}/pulls/comments/{{comment_id}}/reactions", self.h_reactions_add),
            ("DELETE", f"{R}/pulls/comments/{{comment_id}}/reactions/{{reaction_id}}", self.h_reaction_delete),
            ("GET", f"{R}/pulls", self.h_pulls),
            ("GET", f"{R}/pulls/{{number}}", self.h_pull),
            ("GET", f"{R}/pulls/{{number}}/files", self.h_pull_files),
            ("GET", f"{R}/pulls/{{number}}/commits", self.h_pull_commits),
            ("GET", f"{R}/pulls/{{number}}/reviews", self.h_reviews),
            ("GET", f"{R}/pulls/{{number}}/reviews/{{review_id}}", self.h_review),
            ("PUT", f"{R}/pulls/{{number}}/reviews/{{review_id}}", self.h_review_update),
            ("GET", f"{R}/pulls/{{number}}/comments", self.h_review_comments),
            ("POST", f"{R}/pulls/{{number}}/comments", self.h_review_comment_create),
            ("GET", f"{R}/issues/comments/{{comment_id}}", self.h_comment_get),
            ("PATCH", f"{R}/issues/comments/{{comment_id}}", self.h_comment_edit),
            ("DELETE", f"{R}/issues/comments/{{comment_id}}", self.h_comment_delete),
            ("GET", f"{R}/issues/comments/{{comment_id}}/reactions", self.h_reactions_list),
            ("POST", f"{R}/issues/comments/{{comment_id}}/reactions", self.h_reactions_add),
            ("DELETE", f"{R}/issues/comments/{{comment_id}}/reactions/{{reaction_id}}", self.h_reaction_delete),
            ("GET", f"{R}/issues/{{number}}", self.h_issue),
            ("GET", f"{R}/issues/{{number}}/comments", self.h_comments_list),
            ("POST", f"{R}/issues/{{number}}/comments", self.h_comment_create),
            ("GET", f"{R}/issues/{{number}}/labels", self.h_labels_list),
            ("POST", f"{R}/issues/{{number}}/labels", self.h_labels_add),
            ("DELETE", f"{R}/issues/{{number}}/labels/{{name}}", self.h_label_remove),
            ("GET", f"{R}/labels/{{name}}", self.h_label),
            ("GET", f"{R}/contents{{path}}", self.h_contents),
            ("GET", f"{R}/git/blobs/{{sha}}", self.h_blob),
            ("GET", f"{R}/git/trees/{{ref}}", self.h_tree),
            ("GET", f"{R}/commits/{{ref}}/check-runs", self.h_check_runs),
            ("GET", f"{R}/commits/{{ref}}/statuses", self.h_statuses),
            ("GET", f"{R}/commits/{{ref}}/status", self.h_combined_status),
            ("GET", f"{R}/commits/{{ref}}", self.h_commit),
            ("GET", f"{R}/compare/{{basehead}}", self.h_compare),
            ("GET", f"{R}/check-runs/{{check_run_id}}", self.h_check_run),
            ("POST", f"{R}/check-runs", self.h_check_run_create),
            ("PATCH", f"{R}/check-runs/{{check_run_id}}", self.h_check_run_update),
            ("GET", f"{R}/check-runs/{{check_run_id}}/annotations", self.h_check_run_annotations),
            ("GET", f"{R}/statuses/{{ref}}", self.h_statuses),
            ("POST", f"{R}/statuses/{{sha}}", self.h_status_create),
            ("GET", f"{R}/actions/runs", self.h_runs),
            ("GET", f"{R}/actions/runs/{{run_id}}", self.h_run),
            ("GET", f"{R}/actions/runs/{{run_id}}/jobs", self.h_run_jobs),
            ("GET", f"{R}/actions/runs/{{run_id}}/artifacts", self.h_run_artifacts),
            ("GET", f"{R}/actions/jobs/{{job_id}}", self.h_job),
            ("GET", f"{R}/actions/artifacts/{{artifact_id}}", self.h_artifact),
            ("GET", f"{R}/actions/artifacts/{{artifact_id}}/zip", self.h_artifact_zip),
            ("GET", f"{R}/actions/workflows/{{workflow_id}}", self.h_workflow),
            ("GET", f"{R}/actions/workflows/{{workflow_id}}/runs", self.h_workflow_runs),
            ("POST", f"{R}/actions/workflows/{{workflow_id}}/dispatches", self.h_dispatch),
            ("GET", f"{R}/collaborators/{{user}}/permission", self.h_permission),
            ("GET", f"{DOWNLOAD_PREFIX}/{{artifact_id}}/{{signature}}", self.h_download, "none"),
            ("GET", f"{R}/tarball/{{ref}}", self.h_tarball),
            ("GET", f"{CODELOAD_PREFIX}/{{owner}}/{{repo}}/{{sha}}/{{signature}}", self.h_codeload, "none"),
        ]
        return [Route(t[0], t[1], compile_route(t[1]), t[2], t[3] if len(t) > 3 else "token") for t in table]

    def match(self, method: str, path: str) -> tuple[Route, dict[str, str]] | None:
        for route in self.routes:
            if route.method != method:
                continue
            m = route.regex.match(path)
            if m:
                return route, {k: urllib.parse.unquote(v or "") for k, v in m.groupdict().items()}
        return None
