"""The GitHub snapshot builder: one PRSnapshot from the REST API with as few requests as it can.

Each resource is fetched once. The target tree comes from one tarball when the repository is small
enough (its file list trusted only when it agrees with the head tree), else file by file through
`bot.remote_source.RemoteTree`; the PR's changed files at head are rebuilt from their patches.
Check runs only for the PR's commits; Actions runs and artifacts only for the run Check 1 reads
and the one a reuse command names; team memberships only until the signer is found an owner;
independent reads in parallel. Whatever still fails after the client's retries becomes
`Unavailable` with the reason.
"""
from __future__ import annotations

import logging
import os
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import date, datetime, timezone
from typing import Any, Callable, Iterable

import github

from bot.github_client import GitHubApi, describe_error, fetch, parse_time
from bot.reuse import artifacts_from, pick_reusable, sweep_run_from
from bot.dates import review_day
from bot.remote_source import (
    BlobStore,
    RemoteReadError,
    RemoteTree,
    apply_patch,
    archive_mismatch,
    candidates,
    fetch_archive,
    git_blob_sha,
)
# Check 1 decides which run it reads; the builder fetches that run (and no other) by the same rule.
from checks.sweep_runs import group_runs, reuse_problem, run_id_of, workflow_problem
from checks.commands import find_reuse_command
from checks.signoff_keys import PREFIXES_TEXT, parse_signoff_key
from checks.snapshot import (
    Artifact,
    ChangedFile,
    CheckRun,
    Comment,
    Commit,
    PRSnapshot,
    ReuseSource,
    SweepRun,
    Unavailable,
    UpstreamRef,
    UserAccess,
)
from recipes.artifacts import MAX_ARTIFACT_DOWNLOAD, META_FILE, json_rows, read_artifact_zip, rows_from
from recipes.codeowners import parse_codeowners
from recipes.errors import Finding
from recipes.config import CONFIG_PATH, RepoConfig, read_repo_config
from recipes.layout import detect_layout
from recipes.repository import Repository
from recipes.markdown import find_section, github_pull, links, strip_quotes_and_code

log = logging.getLogger(__name__)

POOL_WORKERS = 12
STAGE_WORKERS = 16
# The target tree comes from one tarball when GitHub's `size` of the repository is at most this
# many KB (the env variable overrides it; 0 turns archives off and reads files one by one).
ARCHIVE_MAX_KB_ENV = "INFX_ARCHIVE_MAX_KB"
DEFAULT_ARCHIVE_MAX_KB = 100 * 1024
PULL_REQUEST_EVENT = "pull_request"
DETAIL_SECTION_RE = r"additional detail"
# At most this many users' permissions are looked up for bypass comments (a PR thread could
# otherwise turn into hundreds of requests).
MAX_BYPASS_USERS = 10
MAX_UPSTREAM_PULLS = 10
# Teams asked per CODEOWNERS line in the first waves of membership lookups (then doubling).
TEAM_WAVE_WIDTHS = (1, 1)
PREFETCH_SUFFIXES = (".yaml", ".yml", ".sh", ".json", ".py", ".patch")

COMPARE_FILES_CAP = 300
# Candidate runs of other workflows read before Check 1 gives up (each costs one run read).
MAX_SPOOF_CANDIDATES = 8
MSG_FILES_CAPPED = "GitHub listed only {listed} of the PR's {declared} changed files (it lists at most 3000)"
MSG_COMPARE_CAPPED = "GitHub's compare lists at most {cap} files, so the changes up to {sha} cannot be listed completely"
MSG_PR = "pull request {repo}#{number} could not be fetched: {error}"
MSG_NOT_SIGNOFF = "{ref} does not name a comment (expected a URL or key with " + PREFIXES_TEXT + ")"
MSG_SIGNOFF_MISSING = "the sign-off {key} is not a comment on {repo}#{number}"
MSG_PIN_NOT_IN_PR = "commit {sha} is not a commit of {repo}#{number}"
MSG_SOME_COMMENTS = "{what} could not be listed: {reason}"
MSG_TEAM_UNREADABLE = "membership of {login} in {team} could not be read ({error})"
MSG_TEAM_NOT_ASKED = "membership of {login} in {team} is unknown (GitHub answered {error}); not asked further, as another team on the line decides"
MSG_NOT_FETCHED = "artifact {name} of run {run} was not downloaded: {why}"
MSG_EXPIRED = "artifact {name} of run {run} expired"
MSG_ARTIFACT_CAP = "GitHub lists it at {size} bytes, over the {limit}-byte download cap"
MSG_NOT_SWEEP_RUN = "run {run} is not a run of the sweep workflow, so its artifacts were not downloaded"
MSG_PAGE = "published pages are not fetched by the bot; judge {url} from the sign-off text"
MSG_UPSTREAM = "{url} could not be fetched: {error}"

Progress = Callable[[str], None]


class SnapshotError(Exception):
    """The PR itself (or a requested sign-off or pinned head) could not be resolved: no verdict."""


def _login(user: Any) -> str:
    return str((user or {}).get("login") or "ghost")


def _is_bot_user(user: Any) -> bool:
    return (user or {}).get("type") == "Bot" or _login(user).endswith("[bot]")


def _comment(item: dict, kind: str) -> Comment:
    user = item.get("user")
    created = item.get("submitted_at") if kind == "review" else item.get("created_at")
    return Comment(
        id=int(item["id"]),
        kind=kind,  # type: ignore[arg-type]
        author=_login(user),
        association=str(item.get("author_association") or "NONE"),
        is_bot=_is_bot_user(user),
        body=item.get("body") or "",
        created_at=parse_time(created),
        updated_at=parse_time(item.get("updated_at") or created),
        url=str(item.get("html_url") or ""),
    )


def _by_time(comments: list[Comment]) -> list[Comment]:
    epoch = datetime.min.replace(tzinfo=timezone.utc)
    return sorted(comments, key=lambda c: (c.created_at or epoch, c.id))


def parse_signoff_ref(ref: str) -> tuple[str, int]:
    """(comment kind, id) from a sign-off URL or key (grammar: checks.signoff_keys)."""
    parsed = parse_signoff_key(ref)
    if parsed is None:
        raise SnapshotError(MSG_NOT_SIGNOFF.format(ref=ref))
    return parsed


def find_signoff(comments: Iterable[Comment], phrase: str, bot_logins: Iterable[str]) -> Comment | None:
    """The newest human comment of any kind whose live text (outside quotes and code) holds the
    sign-off phrase (spec 8.2)."""
    bots = {b.lower() for b in bot_logins}
    needle = " ".join(phrase.lower().split())
    found = None
    for c in _by_time(list(comments)):
        if c.is_bot or c.author.lower() in bots:
            continue
        live = " ".join(line for _, line in strip_quotes_and_code(c.body))
        if needle in " ".join(live.lower().split()):
            found = c
    return found


def _changed_file(item: dict) -> ChangedFile:
    return ChangedFile(
        path=item["filename"],
        status=item.get("status") or "modified",
        previous_path=item.get("previous_filename"),
        patch=item.get("patch"),
        additions=int(item.get("additions") or 0),
        deletions=int(item.get("deletions") or 0),
    )


def _commit(item: dict) -> Commit:
    return Commit(
        sha=item["sha"],
        message=((item.get("commit") or {}).get("message") or "").strip(),
        parents=[p["sha"] for p in item.get("parents") or []],
    )


def _check_run(item: dict, sha: str) -> CheckRun:
    url = item.get("details_url") or ""
    return CheckRun(
        name=item.get("name") or "",
        status=item.get("status") or "completed",
        conclusion=item.get("conclusion"),
        details_url=url,
        run_id=run_id_of(CheckRun(name="", details_url=url)),
        head_sha=item.get("head_sha") or sha,
    )


class _Builder:
    def __init__(self, api: GitHubApi, repo: str, number: int, leaf: ThreadPoolExecutor, stage: ThreadPoolExecutor,
                 progress: Progress | None, archive_max_kb: int = DEFAULT_ARCHIVE_MAX_KB):
        # Two pools so nothing waits on its own pool: `leaf` tasks make requests and never submit
        # work; `stage` tasks combine several requests by submitting to `leaf`.
        self.api, self.repo, self.number, self.leaf, self.stage = api, repo, number, leaf, stage
        self.progress = progress or (lambda message: None)
        self.r = f"/repos/{repo}"
        self.blobs = BlobStore(api, repo)
        self.archive_max_kb = archive_max_kb
        self._runs: dict[int, Future] = {}
        self._listings: dict[int, Future] = {}
        self._runs_lock = threading.Lock()

    def submit(self, what: str, call: Callable[[], Any]) -> Future:
        return self.leaf.submit(fetch, what, call)

    # ----- the pull request and its lists ---------------------------------------------------

    def build(self, signoff_ref: str | None, review_date: date | None, pin_head: str | None) -> PRSnapshot:
        """Reads are started as soon as what they depend on is known, so the slowest chain
        (check runs -> run -> artifact -> download) sets the pace, not the number of reads."""
        n, r = self.number, self.r
        self.progress(f"reading {self.repo}#{n}")
        f_pr = self.leaf.submit(self.api.get, f"{r}/pulls/{n}")
        f_files = self.submit(f"the changed files of {self.repo}#{n}", lambda: self.api.list(f"{r}/pulls/{n}/files"))
        f_commits = self.submit(f"the commits of {self.repo}#{n}", lambda: self.api.list(f"{r}/pulls/{n}/commits"))
        f_lists = {
            "issue_comment": self.submit("conversation comments", lambda: self.api.list(f"{r}/issues/{n}/comments")),
            "review": self.submit("reviews", lambda: self.api.list(f"{r}/pulls/{n}/reviews")),
            "review_comment": self.submit("review comments", lambda: self.api.list(f"{r}/pulls/{n}/comments")),
        }
        try:
            pr = f_pr.result()
        except Exception as exc:
            raise SnapshotError(MSG_PR.format(repo=self.repo, number=n, error=describe_error(exc))) from None
        self.stage.submit(self._speculate_reuse, f_lists)
        current_head = pr["head"]["sha"]
        target_sha = pr["base"]["sha"]
        head_sha = pin_head or current_head
        f_archive = self._start_archive(pr, target_sha)
        sides: dict[str, Any] = {}
        head = RemoteTree(self.api, self.repo, head_sha, self.blobs, derive=self._deriver(sides))
        f_head = self.leaf.submit(self._warm, head)

        commits = f_commits.result()
        if not isinstance(commits, Unavailable):
            commits = [_commit(c) for c in commits]
            shas = [c.sha for c in commits]
            if head_sha in shas:
                if head_sha == current_head and shas[-1] != head_sha:
                    current_head = shas[-1]  # the PR moved between our reads (pinned or not)
                # Commits past the assessed head are not the PR the verdict describes.
                commits = commits[: shas.index(head_sha) + 1]
            elif pin_head and pin_head != current_head:
                raise SnapshotError(MSG_PIN_NOT_IN_PR.format(sha=pin_head, repo=self.repo, number=n))
        f_checks = self.stage.submit(self._check_runs, commits)
        files = f_files.result()
        # Once the PR has moved past the assessed head, its file list may describe the newer
        # commit; the changes up to the assessed head come from a compare instead.
        pinned = head_sha != current_head
        if pinned:
            files = fetch(f"the changes up to {head_sha}",
                          lambda: self.api.get(f"{r}/compare/{target_sha}...{head_sha}")["files"])
        if not isinstance(files, Unavailable):
            # GitHub lists at most 3000 changed files for a PR (300 for a compare): a capped list
            # would hide paths from Checks 0 and 12, so it is no list at all.
            listed, declared = len(files), int(pr.get("changed_files") or 0)
            if not pinned and listed < declared:
                files = Unavailable(reason=MSG_FILES_CAPPED.format(listed=listed, declared=declared))
            elif pinned and listed >= COMPARE_FILES_CAP:
                files = Unavailable(reason=MSG_COMPARE_CAPPED.format(cap=COMPARE_FILES_CAP, sha=head_sha))
            else:
                files = [_changed_file(f) for f in files]
        sides["files"] = files

        base_sha = self._merge_base(target_sha, head_sha, commits)
        # GitHub lists at most 3000 changed files (compare: 300); only a complete list may vouch
        # for the archive.
        complete = not pinned and not isinstance(files, Unavailable) \
            and len(files) == int(pr.get("changed_files") or -1)
        target = self._target_tree(target_sha, f_archive, head, f_head,
                                   files if complete and base_sha == target_sha else None)
        base = target if base_sha == target_sha else RemoteTree(self.api, self.repo, base_sha, self.blobs)
        sides["base"] = base
        config = self._config(target)
        policy = config.policy
        comments, by_kind = self._comments(f_lists)
        signoff = self._signoff(signoff_ref, by_kind, policy)
        reuse_found = None
        if not isinstance(comments, Unavailable):
            bots = {b.lower() for b in policy.bot_logins}
            reuse_found = find_reuse_command([c for c in comments if c.author.lower() not in bots],
                                             policy.authorized_associations)
        if reuse_found and reuse_found[1].run_id is not None:
            self._run_future(reuse_found[1].run_id, config)  # started now, read when the checks are in
        f_runs = self.stage.submit(self._runs_of_checks, f_checks, commits, config)

        self.progress("reading owners, permissions, runs and files")
        f_teams = self.stage.submit(self._teams, target, files, signoff, config)
        f_users = self.stage.submit(self._users, signoff, comments, config)
        f_upstream = self.stage.submit(self._upstream, signoff, config)
        f_head.result()
        f_prefetch = self.stage.submit(self._prefetch, target, base, head, files, config)
        check_runs = f_checks.result()
        sweep_runs, reuse = self._with_reuse(f_runs.result(), check_runs, reuse_found, commits, pr, config)
        f_prefetch.result()
        # What the prefetch could not read, named for the checks that read those files (head wins).
        unreadable = {**target.failures, **base.failures, **head.failures}

        return PRSnapshot(
            repo=self.repo,
            number=n,
            title=pr.get("title") or "",
            body=pr.get("body") or "",
            author=_login(pr.get("user")),
            state=pr.get("state") or "open",
            draft=bool(pr.get("draft")),
            base_ref=pr["base"].get("ref") or "",
            base_sha=base_sha,
            head_sha=head_sha,
            current_head_sha=current_head,
            files=files,
            base=base,
            head=head,
            target=target,
            commits=commits,
            signoff=signoff,
            comments=comments,
            labels=[lb["name"] for lb in pr.get("labels") or []],
            check_runs=check_runs,
            sweep_runs=sweep_runs,
            reuse=reuse,
            upstream=f_upstream.result(),
            users=f_users.result(),
            team_members=f_teams.result(),
            review_date=review_day(review_date),
            config=config,
            unreadable=unreadable,
            html_url=pr.get("html_url") or "",
        )

    # ----- the target tree: one archive when the repository is small enough ------------------

    def _start_archive(self, pr: dict, target_sha: str) -> Future | None:
        """The target's tarball, fetched in the background when GitHub's `size` of the repository
        (KB) is known and within the cap; None means the per-file path."""
        size_kb = ((pr.get("base") or {}).get("repo") or {}).get("size")
        if not self.archive_max_kb or not isinstance(size_kb, int) or size_kb > self.archive_max_kb:
            log.debug("no archive for %s (size %s KB, cap %s KB)", self.repo, size_kb, self.archive_max_kb)
            return None
        return self.leaf.submit(fetch_archive, self.api, self.repo, target_sha, self.blobs,
                                self.archive_max_kb * 1024)

    def _target_tree(self, target_sha: str, f_archive: Future | None, head: RemoteTree, f_head: Future,
                     files: list[ChangedFile] | None) -> RemoteTree:
        """The target tree. Its file list comes from the archive only when the archive agrees
        with the head tree on every file the PR leaves alone (`files`: the PR's complete changes
        from the target, or None when the PR does not start on the target tip); otherwise from a
        tree listing. Either way the archive's bytes serve reads, as they are keyed by blob SHA."""
        if f_archive is None:
            return RemoteTree(self.api, self.repo, target_sha, self.blobs)
        try:
            archive = f_archive.result()
        except RemoteReadError as exc:
            log.warning("%s; reading files one by one", exc)
            return RemoteTree(self.api, self.repo, target_sha, self.blobs)
        if files is None:
            return RemoteTree(self.api, self.repo, target_sha, self.blobs)
        f_head.result()
        try:
            problem = archive_mismatch(archive, head.entries(), files)
        except RemoteReadError as exc:
            problem = str(exc)
        if problem is not None:
            log.warning("the file list of the archive of %s@%s is not used: %s", self.repo, target_sha, problem)
            return RemoteTree(self.api, self.repo, target_sha, self.blobs)
        return RemoteTree(self.api, self.repo, target_sha, self.blobs, entries=archive.entries, links=archive.links)

    @staticmethod
    def _warm(tree: RemoteTree) -> None:
        try:
            tree.list("")
        except RemoteReadError as exc:
            log.warning("%s", exc)

    def _merge_base(self, target_sha: str, head_sha: str, commits: list[Commit] | Unavailable) -> str:
        """The PR's diff base. A linear PR starts on the target tip, which costs nothing to see;
        otherwise GitHub's compare gives the merge base (one request)."""
        if not isinstance(commits, Unavailable) and commits and all(len(c.parents) == 1 for c in commits) \
                and commits[0].parents[0] == target_sha:
            return target_sha
        found = fetch("the merge base", lambda: self.api.get(f"{self.r}/compare/{target_sha}...{head_sha}"))
        if isinstance(found, Unavailable):
            return target_sha
        return ((found.get("merge_base_commit") or {}).get("sha")) or target_sha

    @staticmethod
    def _deriver(sides: dict[str, Any]) -> Callable[[str, str], bytes | None]:
        """Head content of a changed file from its patch (and the base side), when it checks out
        against the head tree's blob SHA: saves a download per added or edited file. `sides`
        gets the changed files and the base tree once they are known."""

        def derive(path: str, sha: str) -> bytes | None:
            files, base = sides.get("files"), sides.get("base")
            if files is None or base is None or isinstance(files, Unavailable):
                return None
            f = next((x for x in files if x.path == path), None)
            if f is None or not f.patch or f.status not in ("added", "modified", "changed", "renamed"):
                return None
            if f.status == "added":
                before = ""
            else:
                try:
                    data = base.read(f.previous_path or path)
                except RemoteReadError:
                    return None
                if data is None:
                    return None
                try:
                    before = data.decode("utf-8")
                except UnicodeDecodeError:
                    return None
            lines = apply_patch(before, f.patch)
            if lines is None:
                return None
            return next((c for c in candidates(lines) if git_blob_sha(c) == sha), None)

        return derive

    def _config(self, target: RemoteTree) -> RepoConfig:
        config, findings = read_repo_config(target)
        for f in findings:
            log.warning("%s", f)
        return config

    def _comments(self, futures: dict[str, Future]) -> tuple[list[Comment] | Unavailable, dict[str, list[Comment] | Unavailable]]:
        by_kind: dict[str, list[Comment] | Unavailable] = {}
        missing = []
        for kind, fut in futures.items():
            items = fut.result()
            if isinstance(items, Unavailable):
                by_kind[kind] = items
                missing.append(items.reason)
                continue
            if kind == "review":
                # A review without text (a bare approval) or still pending is not a comment.
                items = [i for i in items if (i.get("body") or "").strip() and i.get("submitted_at")]
            by_kind[kind] = [_comment(i, kind) for i in items]
        if missing:
            return Unavailable(reason="; ".join(missing)), by_kind
        return _by_time([c for items in by_kind.values() for c in items]), by_kind  # type: ignore[union-attr]

    def _signoff(self, ref: str | None, by_kind: dict[str, list[Comment] | Unavailable], policy) -> Comment | None:
        if ref is None:
            pool = [c for items in by_kind.values() if not isinstance(items, Unavailable) for c in items]
            return find_signoff(pool, policy.signoff_phrase, policy.bot_logins)
        kind, cid = parse_signoff_ref(ref)
        items = by_kind.get(kind)
        if not isinstance(items, Unavailable):
            for c in items or []:
                if c.id == cid:
                    return c
            raise SnapshotError(MSG_SIGNOFF_MISSING.format(key=ref, repo=self.repo, number=self.number))
        path = {"issue_comment": f"{self.r}/issues/comments/{cid}",
                "review": f"{self.r}/pulls/{self.number}/reviews/{cid}",
                "review_comment": f"{self.r}/pulls/comments/{cid}"}[kind]
        try:
            return _comment(self.api.get(path), kind)
        except Exception as exc:
            raise SnapshotError(MSG_SIGNOFF_MISSING.format(key=ref, repo=self.repo, number=self.number)
                                + f" ({describe_error(exc)})") from None

    # ----- check runs, owners, users, upstream ---------------------------------------------

    def _check_runs(self, commits: list[Commit] | Unavailable) -> dict[str, list[CheckRun] | Unavailable] | Unavailable:
        if isinstance(commits, Unavailable):
            return Unavailable(reason=f"check runs need the PR's commits: {commits.reason}")

        def one(sha: str) -> list[CheckRun] | Unavailable:
            items = fetch(f"the check runs of {sha[:12]}", lambda: self.api.list(
                f"{self.r}/commits/{sha}/check-runs", {"filter": "all"}, key="check_runs"))
            return items if isinstance(items, Unavailable) else [_check_run(i, sha) for i in items]

        return dict(zip([c.sha for c in commits], self.leaf.map(one, [c.sha for c in commits])))

    def _teams(self, target: RemoteTree, files, signoff: Comment | None, config: RepoConfig) -> dict[str, list[str] | Unavailable]:
        """Membership of the signer in the teams that could make the signer an owner of a changed
        path: none when every deciding line names the signer; else each line's teams in order
        until one counts the signer in."""
        if signoff is None or isinstance(files, Unavailable):
            return {}
        try:
            data = target.read(config.paths.codeowners)
        except RemoteReadError as exc:
            log.warning("%s", exc)
            return {}
        if data is None:
            return {}
        co = parse_codeowners(data.decode("utf-8", "replace"), config.paths.codeowners)
        signer = signoff.author
        groups: list[list[str]] = []
        paths = {p for f in files for p in (f.path, f.previous_path) if p}
        for path in sorted(paths):
            m = co.owners_of(path)
            if m is None:
                continue
            if m.is_catch_all:
                if signer.lower() not in co.everyone_users():
                    groups.append(sorted(co.everyone_teams()))
            elif not m.names_user(signer):
                groups.append(m.teams())
        if not groups:
            return {}

        def ask(team: str) -> bool | Exception:
            org, _, slug = team.partition("/")
            try:
                data = self.api.get(f"/orgs/{org}/teams/{slug}/memberships/{signer}")
                return (data or {}).get("state") == "active"
            except Exception as exc:
                return exc

        # Each path's teams in the line's order, stopping at the first that makes the signer an
        # owner (Check 0 reads no further). A wave asks the next teams of every path still open:
        # one, one, then twice as many as the wave before, so a long line costs few round trips.
        answers: dict[str, bool | Exception] = {}
        widths = iter(TEAM_WAVE_WIDTHS)
        width = 1
        while True:
            width = next(widths, width * 2)
            wave: list[str] = []
            for group in groups:
                if any(answers.get(t) is True for t in group):
                    continue
                wave.extend(t for t in [t for t in group if t not in answers][:width] if t not in wave)
            if not wave:
                break
            answers.update(zip(wave, self.leaf.map(ask, wave)))
        out: dict[str, list[str] | Unavailable] = {}
        follow_up: list[str] = []
        for group in groups:
            if any(answers[t] is True for t in group):
                continue
            follow_up.extend(t for t in group if isinstance(answers[t], Exception))
        follow_up = list(dict.fromkeys(follow_up))

        def readable(team: str) -> bool | Exception:
            org, _, slug = team.partition("/")
            try:
                self.api.get(f"/orgs/{org}/teams/{slug}")
                return True
            except Exception as exc:
                return exc

        visible = dict(zip(follow_up, self.leaf.map(readable, follow_up)))
        for team, answer in answers.items():
            if answer is True:
                out[team] = [signer]
            elif answer is False:
                out[team] = []
            elif team in visible and visible[team] is True and _is_404(answer):
                out[team] = []  # the team is visible and GitHub says the signer is not in it
            elif team in visible:
                out[team] = Unavailable(reason=MSG_TEAM_UNREADABLE.format(login=signer, team=team,
                                                                          error=describe_error(answer)))
            else:
                out[team] = Unavailable(reason=MSG_TEAM_NOT_ASKED.format(login=signer, team=team,
                                                                         error=describe_error(answer)))
        return out

    def _users(self, signoff: Comment | None, comments, config: RepoConfig) -> dict[str, UserAccess | Unavailable]:
        logins: list[str] = []
        if signoff is not None:
            logins.append(signoff.author)
        if not isinstance(comments, Unavailable):
            phrase = " ".join(config.policy.pareto_bypass_phrase.lower().split())
            bots = {b.lower() for b in config.policy.bot_logins}
            for c in reversed(comments):
                if c.is_bot or c.author.lower() in bots:
                    continue
                live = " ".join(line for _, line in strip_quotes_and_code(c.body))
                if phrase and phrase in " ".join(live.lower().split()):
                    logins.append(c.author)
        logins = list(dict.fromkeys(logins))[: MAX_BYPASS_USERS + 1]

        def one(login: str) -> UserAccess | Unavailable:
            data = fetch(f"the repository permission of {login}",
                         lambda: self.api.get(f"{self.r}/collaborators/{login}/permission"))
            if isinstance(data, Unavailable):
                return data
            return UserAccess(login=login, permission=data.get("permission"), role_name=data.get("role_name"))

        return dict(zip(logins, self.leaf.map(one, logins)))

    def _upstream(self, signoff: Comment | None, config: RepoConfig) -> dict[str, UpstreamRef]:
        """Upstream recipe PRs and pages linked in the sign-off's Additional detail section."""
        if signoff is None:
            return {}
        section = find_section(signoff.body, DETAIL_SECTION_RE)
        if section is None:
            return {}
        repos = {r.lower() for r in config.policy.upstream_recipe_repos}
        sites = [s.lower() for s in config.policy.upstream_recipe_sites]
        pulls: list[tuple[str, str, int]] = []
        out: dict[str, UpstreamRef] = {}
        for url in links(section.text):
            pull = github_pull(url)
            if pull and pull[0].lower() in repos:
                pulls.append((url, *pull))
            elif any(site in url.lower() for site in sites):
                out[url] = UpstreamRef(url=url, kind="page", unavailable=MSG_PAGE.format(url=url))

        def one(item: tuple[str, str, int]) -> UpstreamRef:
            url, repo, number = item
            pr = fetch(url, lambda: self.api.get(f"/repos/{repo}/pulls/{number}"))
            files = fetch(url, lambda: self.api.list(f"/repos/{repo}/pulls/{number}/files"))
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

        for ref in self.leaf.map(one, list(dict.fromkeys(pulls))[:MAX_UPSTREAM_PULLS]):
            out[ref.url] = ref
        return out

    # ----- files ----------------------------------------------------------------------------

    def _prefetch(self, target: RemoteTree, base: RemoteTree, head: RemoteTree, files, config: RepoConfig) -> None:
        """Read in parallel what every review reads anyway (the changed files on both sides and the
        policy files of the layout), so evaluation does not wait on them one by one."""
        try:
            layout = detect_layout(target, config.paths)
        except RemoteReadError:
            return
        policy_files = [CONFIG_PATH, layout.codeowners, layout.checklist, layout.models_md, layout.thresholds,
                        layout.changelog, *layout.master_configs(target)]
        target.prefetch(policy_files, self.leaf)
        if isinstance(files, Unavailable):
            return
        # Changed benchmark files (recipes, launchers, data); changed prose is read only on demand.
        changed = [f for f in files if f.path.endswith(PREFETCH_SUFFIXES)]
        base.prefetch([f.previous_path or f.path for f in changed if f.status != "added"], self.leaf)
        head.prefetch([f.path for f in changed if f.status != "removed"] + [layout.changelog,
                      *layout.master_configs(head)], self.leaf)
        # Then the recipes the head's benchmark points launch and the golden AL curves: the
        # checks read them to bind points, and one by one they would cost a round trip each.
        try:
            points = Repository(head, config).points
            head_layout = detect_layout(head, config.paths)
            launchers = [lc.path for p in points for lc in (p.launcher, p.eval_launcher) if lc is not None]
            head.prefetch(launchers + head.list(head_layout.golden_dir), self.leaf)
        except Exception as exc:  # prefetch is an optimisation; evaluation reads what it needs anyway
            log.debug("prefetch of recipes skipped: %s", exc)

    # ----- Actions runs and artifacts ---------------------------------------------------------

    def _run_future(self, run_id: int, config: RepoConfig) -> Future:
        """Run `run_id` with its artifacts, fetched once however many reasons ask for it."""
        with self._runs_lock:
            if run_id not in self._runs:
                self._runs[run_id] = self.stage.submit(self._sweep_run, run_id, config)
            return self._runs[run_id]

    def _runs_of_checks(self, f_checks: Future, commits, config: RepoConfig) -> dict[int, SweepRun]:
        """The run Check 1 would pick from the check runs (newest in-PR commit first, the newest
        run whose benchmark and eval jobs all passed and which is a run of the sweep workflow),
        fetched as soon as the check runs are in. A candidate of another workflow (any workflow
        can name its jobs `eval / x`) is kept without its artifacts, so Check 1 can name it;
        runs it would not read (a reuse gate's, a failed one) are not fetched. At most
        MAX_SPOOF_CANDIDATES foreign candidates are read; past them Check 1 cannot verify."""
        check_runs = f_checks.result()
        if isinstance(check_runs, Unavailable) or isinstance(commits, Unavailable):
            return {}
        found: dict[int, SweepRun] = {}
        for commit in reversed(commits):
            runs = check_runs.get(commit.sha)
            if isinstance(runs, Unavailable) or not runs:
                continue
            for g in group_runs(runs, commit.sha, config):
                if not g.qualifies or g.run_id is None or g.run_id in found:
                    continue
                if len(found) >= MAX_SPOOF_CANDIDATES:
                    return found
                run, arts = self._run_listing(g.run_id).result()
                bare = SweepRun(run_id=g.run_id) if isinstance(run, Unavailable) else sweep_run_from(run, [])
                if not isinstance(run, Unavailable) and workflow_problem(bare, config.sweep) is not None:
                    skipped = Unavailable(reason=MSG_NOT_SWEEP_RUN.format(run=g.run_id))
                    found[g.run_id] = bare.model_copy(update={
                        "artifacts": arts if isinstance(arts, Unavailable) else artifacts_from(arts),
                        "throughput": skipped, "evals": skipped})
                    continue
                found[g.run_id] = self._run_future(g.run_id, config).result()
                return found
        return found

    def _with_reuse(self, sweep_runs: dict[int, SweepRun], check_runs, reuse_found, commits, pr: dict,
                    config: RepoConfig) -> tuple[dict[int, SweepRun] | Unavailable, ReuseSource | None]:
        """Add the reuse command's run (picked for a bare `/reuse-sweep-run`) and validate it."""
        comment, command = reuse_found if reuse_found else (None, None)
        run_id = None
        if command is not None:
            shas = [] if isinstance(commits, Unavailable) else [c.sha for c in commits]
            run_id = command.run_id if command.run_id is not None else self._pick_reusable(pr, shas, config)
        if run_id is not None and run_id not in sweep_runs:
            sweep_runs = {**sweep_runs, run_id: self._run_future(run_id, config).result()}
        if not sweep_runs and isinstance(check_runs, Unavailable):
            return Unavailable(reason=check_runs.reason), None
        reuse = None
        if command is not None and run_id is not None:
            problem = self._reuse_problem(sweep_runs.get(run_id), config)
            if problem is None:
                reuse = ReuseSource(run_id=run_id, comment=comment, command=command.command,
                                    explicit=command.run_id is not None)
            else:
                log.warning("reuse command %s by %s not accepted: %s", command, comment.author, problem)
        return sweep_runs, reuse

    @staticmethod
    def _reuse_problem(run: SweepRun | None, config: RepoConfig) -> str | None:
        """bot/reuse.py's rules (spec 9.3, fail closed) minus completion and in-PR commit, which
        Check 1 judges and explains itself."""
        if run is None:
            return "the run could not be read"
        refusal = reuse_problem(run, config.sweep, run_id=run.run_id, require_success=False)
        return refusal.reason if refusal else None

    def _pick_reusable(self, pr: dict, shas: list[str], config: RepoConfig) -> int | None:
        """Bare `/reuse-sweep-run`: the newest completed PR run of the sweep workflow on the head
        branch that passes every rule of bot/reuse.py."""
        workflow = config.sweep.workflow.rsplit("/", 1)[-1]
        runs = fetch("the sweep workflow's runs", lambda: self.api.list(
            f"{self.r}/actions/workflows/{workflow}/runs",
            {"branch": pr["head"].get("ref") or "", "event": PULL_REQUEST_EVENT, "status": "completed"},
            key="workflow_runs"))
        if isinstance(runs, Unavailable):
            return None

        def artifacts_of(run_id: int):
            items = fetch(f"the artifacts of run {run_id}", lambda: self.api.list(
                f"{self.r}/actions/runs/{run_id}/artifacts", key="artifacts"))
            return items if isinstance(items, Unavailable) else artifacts_from(items)

        return pick_reusable(runs, shas, config.sweep, artifacts_of)

    def _run_listing(self, run_id: int) -> Future:
        """Run `run_id` and its artifact list (no policy needed), fetched once."""
        with self._runs_lock:
            if run_id not in self._listings:
                self._listings[run_id] = self.stage.submit(self._fetch_run, run_id)
            return self._listings[run_id]

    def _fetch_run(self, run_id: int) -> tuple[Any, Any]:
        f_run = self.submit(f"run {run_id}", lambda: self.api.get(f"{self.r}/actions/runs/{run_id}"))
        arts = fetch(f"the artifacts of run {run_id}",
                     lambda: self.api.list(f"{self.r}/actions/runs/{run_id}/artifacts", key="artifacts"))
        return f_run.result(), arts

    def _speculate_reuse(self, f_lists: dict[str, Future]) -> None:
        """Start reading the run a `/reuse-sweep-run <id>` names as soon as the comments are in,
        judged by the default policy: the target's policy arrives a round trip later, and decides
        whether the run is used at all."""
        comments, _ = self._comments(f_lists)
        if isinstance(comments, Unavailable):
            return
        policy = RepoConfig().policy
        bots = {b.lower() for b in policy.bot_logins}
        found = find_reuse_command([c for c in comments if c.author.lower() not in bots and not c.is_bot],
                                   policy.authorized_associations)
        if found and found[1].run_id is not None:
            self._run_listing(found[1].run_id)

    def _sweep_run(self, run_id: int, config: RepoConfig) -> SweepRun | None:
        run, arts = self._run_listing(run_id).result()
        if isinstance(run, Unavailable):
            missing = Unavailable(reason=run.reason)
            return SweepRun(run_id=run_id, artifacts=missing, throughput=missing, evals=missing)
        artifacts: list[Artifact] | Unavailable
        fields: dict[str, Any] = {}
        meta: dict[str, dict] = {}
        if isinstance(arts, Unavailable):
            artifacts = arts
            fields = {"throughput": arts, "evals": arts}
        else:
            artifacts = [Artifact(name=a["name"], id=int(a["id"]), expired=bool(a.get("expired")),
                                  size_in_bytes=int(a.get("size_in_bytes") or 0)) for a in arts]
            fields, meta = self._artifact_rows(run_id, artifacts, config)
        return SweepRun(
            run_id=run_id,
            head_sha=run.get("head_sha") or "",
            event=run.get("event") or "",
            status=run.get("status") or "",
            conclusion=run.get("conclusion"),
            workflow_path=run.get("path") or "",
            created_at=parse_time(run.get("created_at")),
            html_url=run.get("html_url") or "",
            artifacts=artifacts,
            meta=meta,
            **fields,
        )

    def _artifact_rows(self, run_id: int, artifacts: list[Artifact], config: RepoConfig) -> tuple[dict, dict]:
        """Download only what checks read: the aggregate throughput and eval artifacts (per-job
        `bmk_*` / `eval_*` ones only without them), plus per-job `eval_*` for their metadata."""
        sweep = config.sweep
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
        for name, (rows, meta_env) in zip(wanted, self.leaf.map(one, wanted)):
            per_artifact[name] = rows
            if meta_env is not None:
                meta[name] = meta_env
        fields = {
            "throughput": rows_from(per_artifact, sweep.throughput_artifact, "bmk_"),
            "evals": rows_from(per_artifact, sweep.eval_artifact, "eval_"),
        }
        return fields, meta


def _is_404(exc: Any) -> bool:
    return isinstance(exc, github.GithubException) and exc.status == 404


def build_snapshot(
    gh: github.Github | GitHubApi,
    repo: str,
    pr_number: int,
    *,
    signoff_ref: str | None = None,
    review_date: date | None = None,
    pin_head: str | None = None,
    progress: Progress | None = None,
    archive_max_kb: int | None = None,
) -> PRSnapshot:
    """The snapshot of `repo#pr_number` as GitHub reports it now (or at `pin_head`, a commit of
    the PR). The sign-off is `signoff_ref` (URL or key), else the newest comment holding the
    sign-off phrase. Raises SnapshotError when the PR, the sign-off or the pinned head is unknown.
    `archive_max_kb` caps the repository size for which the target tree comes from one tarball
    (default: $INFX_ARCHIVE_MAX_KB, else 100 MB; 0: never)."""
    api = gh if isinstance(gh, GitHubApi) else GitHubApi(gh)
    cap = archive_max_kb if archive_max_kb is not None else archive_cap_from_env()
    with ThreadPoolExecutor(POOL_WORKERS, thread_name_prefix="infx-get") as leaf, \
            ThreadPoolExecutor(STAGE_WORKERS, thread_name_prefix="infx-stage") as stage:
        return _Builder(api, repo, pr_number, leaf, stage, progress, cap).build(signoff_ref, review_date, pin_head)


def archive_cap_from_env(env: dict[str, str] | None = None) -> int:
    """The archive size cap in KB from INFX_ARCHIVE_MAX_KB (a bad value keeps the default)."""
    value = (env if env is not None else os.environ).get(ARCHIVE_MAX_KB_ENV, "").strip()
    if not value:
        return DEFAULT_ARCHIVE_MAX_KB
    if not value.isdigit():
        log.warning("%s=%r is not a number of KB; using %d", ARCHIVE_MAX_KB_ENV, value, DEFAULT_ARCHIVE_MAX_KB)
        return DEFAULT_ARCHIVE_MAX_KB
    return int(value)
