"""The PR facts checks ask for by name (checks.snapshot.PRData), read from the GitHub API on first
use: team memberships, users' repository access, Actions runs with their artifacts, the sweep
workflow's runs, upstream recipe PRs. Each resource is fetched once however many checks (in
however many threads) ask; what fails after the client's retries is `Unavailable` with the
reason. Which facts matter is the checks' decision: nothing here predicts it.
"""
from __future__ import annotations

import logging
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

from bot.github_client import GitHubApi, describe_error, fetch
from bot.reuse import artifacts_from, sweep_run_from
from checks.snapshot import Artifact, ExternalTree, PRData, SweepRun, Unavailable, UpstreamRef, UserAccess
# Artifacts are downloaded only for runs of the sweep workflow (the rule of checks/sweep_runs.py).
from checks.sweep_runs import workflow_problem
from recipes.artifacts import MAX_ARTIFACT_DOWNLOAD, META_FILE, json_rows, read_artifact_zip, rows_from
from recipes.config import RepoConfig
from recipes.errors import Finding

log = logging.getLogger(__name__)

POOL_WORKERS = 12
PULL_REQUEST_EVENT = "pull_request"
MSG_TEAM_UNREADABLE = "membership of {login} in {team} could not be read ({error})"
MSG_NOT_FETCHED = "artifact {name} of run {run} was not downloaded: {why}"
MSG_EXPIRED = "artifact {name} of run {run} expired"
MSG_ARTIFACT_CAP = "GitHub lists it at {size} bytes, over the {limit}-byte download cap"
MSG_NOT_SWEEP_RUN = "run {run} is not a run of the sweep workflow, so its artifacts were not downloaded"
MSG_UNSAFE_REF = "{ref!r} is not a ref of {repo} the bot asks GitHub about"
MSG_NO_COMMIT = "GitHub named no commit for {ref} of {repo}"
MSG_PAGE = "published pages are not fetched by the bot; judge {url} from the sign-off text"


def merge_base(api: GitHubApi, repo: str, target_sha: str, head_sha: str, commits: Any = None) -> str:
    """The PR's merge base: the one side of "what did this PR change?" (checks.snapshot). A
    linear PR whose first commit sits on `target_sha` starts there (no request); otherwise
    GitHub's compare `GET /repos/{repo}/compare/{target}...{head}` names it
    (`merge_base_commit`). When GitHub cannot tell, the target tip, as before it was asked."""
    if isinstance(commits, list) and commits and all(len(c.parents) == 1 for c in commits) \
            and commits[0].parents[0] == target_sha:
        return target_sha
    found = fetch("the merge base", lambda: api.get(f"/repos/{repo}/compare/{target_sha}...{head_sha}"))
    if isinstance(found, Unavailable):
        log.warning("%s; comparing with the target tip %s", found.reason, target_sha[:12])
        return target_sha
    return ((found.get("merge_base_commit") or {}).get("sha")) or target_sha


def _is_404(exc: Any) -> bool:
    return getattr(exc, "status", None) == 404


class _NotFound(Unavailable):
    """A 404 membership answer: "no" when the team is visible, else unknown."""


class _Once:
    """Values by key, each computed once; concurrent askers of one key wait for the first."""

    def __init__(self) -> None:
        self._futures: dict[Any, Future] = {}
        self._lock = threading.Lock()

    def get(self, key: Any, compute: Callable[[], Any]) -> Any:
        with self._lock:
            fut = self._futures.get(key)
            mine = fut is None
            if mine:
                fut = self._futures[key] = Future()
        if mine:
            try:
                fut.set_result(compute())
            except BaseException as exc:  # never cached as an answer: the next asker retries
                with self._lock:
                    self._futures.pop(key, None)
                fut.set_exception(exc)
                raise
        return fut.result()


class GitHubData(PRData):
    """PRData over the REST API for one PR. `head_ref` is the PR's head branch (for the sweep
    workflow's runs); `pool` runs the independent reads of one answer in parallel."""

    def __init__(self, api: GitHubApi, repo: str, config: RepoConfig, *, head_ref: str = "",
                 pool: ThreadPoolExecutor | None = None, _once: _Once | None = None):
        self.api, self.repo, self.config, self.head_ref = api, repo, config, head_ref
        self.r = f"/repos/{repo}"
        self._pool = pool or ThreadPoolExecutor(POOL_WORKERS, thread_name_prefix="infx-data")
        self._once = _once or _Once()
        # What a run's rows depend on (artifact names, the workflow): part of its cache key.
        self._sweep_key = config.sweep.model_dump_json()

    def for_config(self, config: RepoConfig) -> "GitHubData":
        """The same PR under another policy, sharing every read already made (a provisional
        policy's answers are never served under the real one where they depend on it)."""
        return GitHubData(self.api, self.repo, config, head_ref=self.head_ref, pool=self._pool, _once=self._once)

    def close(self) -> None:
        self._pool.shutdown(wait=False)

    def _parallel(self, *calls: Callable[[], Any]) -> list[Any]:
        futures = [self._pool.submit(c) for c in calls]
        return [f.result() for f in futures]

    def ask_together(self, questions) -> None:
        for future in [self._pool.submit(q) for q in questions]:
            future.result()

    # ----- owners and users ------------------------------------------------------------------

    def is_team_member(self, team: str, login: str, *, settle: bool = False) -> bool | Unavailable:
        answer = self._once.get(("team", team.lower(), login.lower()), lambda: self._membership(team, login))
        if not isinstance(answer, _NotFound):
            return answer
        if not settle:
            return Unavailable(reason=answer.reason)
        # GitHub answers 404 both for "not a member" and for "cannot see the team": only a team
        # the token can read makes it a "no" (asked once, and only when the answer decides).
        visible = self._once.get(("team-visible", team.lower()), lambda: self._visible(team))
        return False if visible else Unavailable(reason=answer.reason)

    def _membership(self, team: str, login: str) -> bool | Unavailable:
        org, _, slug = team.partition("/")
        try:
            data = self.api.get(f"/orgs/{org}/teams/{slug}/memberships/{login}")
            return (data or {}).get("state") == "active"
        except Exception as exc:
            reason = MSG_TEAM_UNREADABLE.format(login=login, team=team, error=describe_error(exc))
            return _NotFound(reason=reason) if _is_404(exc) else Unavailable(reason=reason)

    def _visible(self, team: str) -> bool:
        org, _, slug = team.partition("/")
        try:
            self.api.get(f"/orgs/{org}/teams/{slug}")
            return True
        except Exception:
            return False

    def user_access(self, login: str) -> UserAccess | Unavailable:
        return self._once.get(("user", login.lower()), lambda: self._access(login))

    def _access(self, login: str) -> UserAccess | Unavailable:
        data = fetch(f"the repository permission of {login}",
                     lambda: self.api.get(f"{self.r}/collaborators/{login}/permission"))
        if isinstance(data, Unavailable):
            return data
        return UserAccess(login=login, permission=data.get("permission"), role_name=data.get("role_name"))

    # ----- Actions runs and artifacts ---------------------------------------------------------

    def _listing(self, run_id: int) -> tuple[Any, Any]:
        """Run `run_id` and its raw artifact list, fetched once (in parallel)."""
        def read() -> tuple[Any, Any]:
            return tuple(self._parallel(  # type: ignore[return-value]
                lambda: fetch(f"run {run_id}", lambda: self.api.get(f"{self.r}/actions/runs/{run_id}")),
                lambda: fetch(f"the artifacts of run {run_id}", lambda: self.api.list(
                    f"{self.r}/actions/runs/{run_id}/artifacts", key="artifacts"))))

        return self._once.get(("listing", run_id), read)

    def run_artifacts(self, run_id: int) -> list[Artifact] | Unavailable:
        _, arts = self._listing(run_id)
        return arts if isinstance(arts, Unavailable) else artifacts_from(arts)

    def workflow_runs(self) -> list[SweepRun] | Unavailable:
        def read() -> list[SweepRun] | Unavailable:
            workflow = self.config.sweep.workflow.rsplit("/", 1)[-1]
            runs = fetch("the sweep workflow's runs", lambda: self.api.list(
                f"{self.r}/actions/workflows/{workflow}/runs",
                {"branch": self.head_ref, "event": PULL_REQUEST_EVENT, "status": "completed"}, key="workflow_runs"))
            if isinstance(runs, Unavailable):
                return runs
            return [sweep_run_from(run, Unavailable(reason=f"the artifacts of run {run.get('id')} were not listed"))
                    for run in runs]

        return self._once.get(("workflow_runs", self.config.sweep.workflow), read)

    def sweep_run(self, run_id: int) -> SweepRun:
        return self._once.get(("run", run_id, self._sweep_key), lambda: self._sweep_run(run_id))

    def _sweep_run(self, run_id: int) -> SweepRun:
        run, arts = self._listing(run_id)
        if isinstance(run, Unavailable):
            missing = Unavailable(reason=run.reason)
            return SweepRun(run_id=run_id, artifacts=missing, throughput=missing, evals=missing)
        artifacts: list[Artifact] | Unavailable = arts if isinstance(arts, Unavailable) else artifacts_from(arts)
        bare = sweep_run_from(run, artifacts)
        if workflow_problem(bare, self.config.sweep) is not None:
            # Another workflow's run (any workflow can name its jobs `eval / x`): its metadata
            # names it, its artifacts are never read.
            skipped = Unavailable(reason=MSG_NOT_SWEEP_RUN.format(run=run_id))
            return bare.model_copy(update={"throughput": skipped, "evals": skipped})
        if isinstance(artifacts, Unavailable):
            return bare.model_copy(update={"throughput": artifacts, "evals": artifacts})
        fields, meta = self._artifact_rows(run_id, artifacts)
        return bare.model_copy(update={**fields, "meta": meta})

    def _artifact_rows(self, run_id: int, artifacts: list[Artifact]) -> tuple[dict, dict]:
        """Download only what checks read: the aggregate throughput and eval artifacts (per-job
        `bmk_*` / `eval_*` ones only without them), plus per-job `eval_*` for their metadata."""
        sweep = self.config.sweep
        names = {a.name for a in artifacts}
        wanted = []
        for aggregate, prefix in ((sweep.throughput_artifact, "bmk_"), (sweep.eval_artifact, "eval_")):
            if aggregate in names:
                wanted.append(aggregate)
            else:
                wanted.extend(sorted(n for n in names if n.startswith(prefix)))
        wanted.extend(sorted(n for n in names if n.startswith("eval_") and n != sweep.eval_artifact))
        wanted = list(dict.fromkeys(wanted))
        by_name = {a.name: a for a in artifacts}

        def one(name: str) -> tuple[list[dict] | Unavailable, dict | None]:
            a = by_name[name]
            if a.expired:
                return Unavailable(reason=MSG_EXPIRED.format(name=name, run=run_id)), None
            if a.size_in_bytes > MAX_ARTIFACT_DOWNLOAD:
                return Unavailable(reason=MSG_NOT_FETCHED.format(
                    name=name, run=run_id, why=MSG_ARTIFACT_CAP.format(size=a.size_in_bytes, limit=MAX_ARTIFACT_DOWNLOAD))), None
            try:
                url = self.api.redirect_target(f"{self.r}/actions/artifacts/{a.id}/zip")
                data = self.api.download(url, max_bytes=MAX_ARTIFACT_DOWNLOAD)
            except Exception as exc:
                return Unavailable(reason=MSG_NOT_FETCHED.format(name=name, run=run_id, why=describe_error(exc))), None
            members = read_artifact_zip(data, name)
            del data
            if isinstance(members, Finding):
                return Unavailable(reason=members.message), None
            rows, objects, problems = json_rows((f"{name}/{k}", v) for k, v in members.items())
            if problems:
                return Unavailable(reason=f"unreadable artifact file {problems[0]}"), objects.get(META_FILE)
            return rows, objects.get(META_FILE)

        per_artifact: dict[str, list[dict] | Unavailable] = {}
        meta: dict[str, dict] = {}
        for name, (rows, meta_env) in zip(wanted, self._pool.map(one, wanted)):
            per_artifact[name] = rows
            if meta_env is not None:
                meta[name] = meta_env
        fields = {
            "throughput": rows_from(per_artifact, sweep.throughput_artifact, "bmk_"),
            "evals": rows_from(per_artifact, sweep.eval_artifact, "eval_"),
        }
        return fields, meta

    # ----- repositories a runner clones --------------------------------------------------------

    def external_tree(self, repo: str, ref: str) -> ExternalTree | Unavailable | None:
        """The commit `ref` names now in `repo` (GitHub resolves branches, tags and SHAs alike),
        its files read lazily like the PR's own trees. Only repositories the policy names are
        asked about (recipes.launch.path.srt_checkout decides; this is the second lock)."""
        from recipes.launch.path.srt_checkout import SAFE_REF

        if repo.lower() not in {r.lower() for r in self.config.policy.recipe_repositories}:
            return None
        if not SAFE_REF.match(ref):
            return Unavailable(reason=MSG_UNSAFE_REF.format(ref=ref, repo=repo))
        return self._once.get(("external", repo.lower(), ref), lambda: self._external(repo, ref))

    def _external(self, repo: str, ref: str) -> ExternalTree | Unavailable:
        from urllib.parse import quote

        from bot.remote_source import BlobStore, RemoteTree

        commit = fetch(f"commit {ref} of {repo}", lambda: self.api.get(f"/repos/{repo}/commits/{quote(ref, safe='/')}"))
        if isinstance(commit, Unavailable):
            return commit
        sha = str(commit.get("sha") or "")
        if len(sha) != 40:
            return Unavailable(reason=MSG_NO_COMMIT.format(ref=ref, repo=repo))
        return ExternalTree(repo=repo, ref=ref, sha=sha, source=RemoteTree(self.api, repo, sha, BlobStore(self.api, repo)))

    # ----- upstream recipes -------------------------------------------------------------------

    def upstream_ref(self, url: str, repo: str | None = None, number: int | None = None) -> UpstreamRef:
        if not repo or number is None:
            return UpstreamRef(url=url, kind="page", unavailable=MSG_PAGE.format(url=url))
        return self._once.get(("upstream", repo.lower(), number), lambda: self._pull(url, repo, number))

    def _pull(self, url: str, repo: str, number: int) -> UpstreamRef:
        pr, files = self._parallel(
            lambda: fetch(url, lambda: self.api.get(f"/repos/{repo}/pulls/{number}")),
            lambda: fetch(url, lambda: self.api.list(f"/repos/{repo}/pulls/{number}/files")))
        if isinstance(pr, Unavailable):
            return UpstreamRef(url=url, repo=repo, number=number, unavailable=pr.reason)
        text = None
        if not isinstance(files, Unavailable):
            parts = []
            for f in files:
                added = [ln[1:] for ln in (f.get("patch") or "").split("\n")
                         if ln.startswith("+") and not ln.startswith("+++")]
                parts.append(f"{f['filename']}\n" + "\n".join(added))
            text = "\n".join(parts)
        return UpstreamRef(
            url=url, kind="pull", repo=repo, number=number, state=pr.get("state"),
            merged=bool(pr.get("merged") or pr.get("merged_at")), title=pr.get("title") or "", text=text,
            unavailable=files.reason if isinstance(files, Unavailable) else None,
        )


