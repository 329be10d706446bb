"""Users, organizations, teams and collaborators: identities, team membership, repository permission."""
from __future__ import annotations

import urllib.parse
from datetime import timedelta

from .common import WEB, iso, node_id, user_id
from .http import Request, Response, not_found


class Orgs:
    def user(self, login: str, user_type: str | None = None) -> dict:
        kind = user_type or ("Bot" if login.endswith("[bot]") else "User")
        uid = user_id(login)
        api = f"{self.api}/users/{urllib.parse.quote(login)}"
        return {"login": login, "id": uid, "node_id": node_id("User", uid), "type": kind, "site_admin": False,
                "avatar_url": f"https://avatars.githubusercontent.com/u/{uid}?v=4", "gravatar_id": "",
                "url": api, "html_url": f"{WEB}/{login}", "followers_url": f"{api}/followers",
                "repos_url": f"{api}/repos", "organizations_url": f"{api}/orgs", "events_url": f"{api}/events{{/privacy}}",
                "received_events_url": f"{api}/received_events", "user_view_type": "public",
                "following_url": f"{api}/following{{/other_user}}", "gists_url": f"{api}/gists{{/gist_id}}",
                "starred_url": f"{api}/starred{{/owner}}{{/repo}}", "subscriptions_url": f"{api}/subscriptions"}

    def _actor_type(self, login: str) -> str:
        return "Bot" if login.endswith("[bot]") else "User"

    def _association(self, login: str) -> str:
        perm = self.world.pr.users.get(login, {}).get("permission")
        if perm in ("admin", "maintain", "write"):
            return "COLLABORATOR"
        if login == self.world.pr.author:
            return "CONTRIBUTOR"
        return "NONE"

    def org_json(self, org: str) -> dict:
        """GitHub's organization-full shape (GET /orgs/{org}; a team's `organization`)."""
        api = f"{self.api}/orgs/{org}"
        base = self.user(org, "Organization")
        return {**base, "url": api, "repos_url": f"{api}/repos", "events_url": f"{api}/events",
                "hooks_url": f"{api}/hooks", "issues_url": f"{api}/issues", "members_url": f"{api}/members{{/member}}",
                "public_members_url": f"{api}/public_members{{/member}}", "description": None, "name": org,
                "has_organization_projects": True, "has_repository_projects": True, "public_repos": 1,
                "public_gists": 0, "followers": 0, "following": 0, "created_at": iso(self.pr_created - timedelta(days=700)),
                "updated_at": iso(self.pr_created), "archived_at": None}

    def h_user(self, req: Request) -> Response:
        # GitHub's public-user shape (the bot's own profile).
        return Response(200, {**self.user(req.actor or ""), "name": req.actor, "company": None, "blog": "",
                              "location": None, "email": None, "hireable": None, "bio": None,
                              "public_repos": 0, "public_gists": 0, "followers": 0, "following": 0,
                              "created_at": iso(self.pr_created - timedelta(days=900)), "updated_at": iso(self.pr_created)})

    def h_users(self, req: Request) -> Response:
        return Response(200, self.user(req.params["login"]))

    def h_org(self, req: Request) -> Response:
        org = req.params["org"]
        known = {k.split("/", 1)[0].lower() for k in self.world.teams} | {self.world.owner.lower()}
        if org.lower() not in known:
            raise not_found()
        return Response(200, self.org_json(org))

    def _team_members(self, req: Request) -> list[str]:
        key = f"{req.params['org']}/{req.params['slug']}".lower()
        for name, members in self.world.teams.items():
            if name.lower() == key:
                return members
        raise not_found()

    def h_team(self, req: Request) -> Response:
        self._team_members(req)
        org, slug = req.params["org"], req.params["slug"]
        tid = user_id(f"team:{org}/{slug}")
        url = f"{self.api}/orgs/{org}/teams/{slug}"
        return Response(200, {"id": tid, "node_id": node_id("Team", tid), "name": slug, "slug": slug, "url": url,
                              "html_url": f"{WEB}/orgs/{org}/teams/{slug}", "description": None,
                              "privacy": "closed", "permission": "pull", "members_url": f"{url}/members{{/member}}",
                              "repositories_url": f"{url}/repos", "parent": None, "type": "organization",
                              "members_count": len(self._team_members(req)), "repos_count": 1,
                              "created_at": iso(self.pr_created - timedelta(days=300)), "updated_at": iso(self.pr_created),
                              "organization": self.org_json(org)})

    def _is_team_member(self, req: Request) -> bool:
        return req.params["user"].lower() in {m.lower() for m in self._team_members(req)}

    def h_team_membership(self, req: Request) -> Response:
        if not self._is_team_member(req):
            raise not_found()
        org, slug, user = req.params["org"], req.params["slug"], req.params["user"]
        return Response(200, {"url": f"{self.api}/orgs/{org}/teams/{slug}/memberships/{user}",
                              "role": "member", "state": "active"})

    def h_team_member(self, req: Request) -> Response:
        if not self._is_team_member(req):
            raise not_found()
        return Response(204)

    def h_permission(self, req: Request) -> Response:
        self._check_repo(req)
        login = req.params["user"]
        entry = self.world.pr.users.get(login)
        # A public repository: anyone without a grant can still read.
        perm = (entry or {}).get("permission", "read")
        role = (entry or {}).get("role_name", perm)
        return Response(200, {"permission": perm, "role_name": role, "user": {**self.user(login), "role_name": role, "permissions": {
            "admin": perm == "admin", "maintain": role in ("admin", "maintain"),
            "push": perm in ("admin", "write"), "triage": perm in ("admin", "write") or role == "triage",
            "pull": perm != "none"}}})
