"""The GitHub snapshot builder: one PRSnapshot from the REST API with as few requests as it can.

Each resource is fetched once. The target tree comes from one tarball when the repository is small
enough (its file list trusted only when it agrees with the head tree), else file by file through
`bot.remote_source.RemoteTree`; the PR's changed files at head are rebuilt from their patches.
Check runs only for the PR's commits; independent reads in parallel. What only some checks need
(team memberships, users' access, Actions runs and artifacts, upstream PRs) is not read here:
the snapshot answers those accessors through `bot.github_data.GitHubData`, on first use by the
check that decides it matters. Whatever still fails after the client's retries becomes
`Unavailable` with the reason.
"""
from __future__ import annotations

import logging
import os
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import date, datetime, timezone
from typing import Any, Callable, Iterable

from bot.dates import review_day
from bot.dates import parse_time
from bot.github_client import GitHubApi, describe_error, fetch
from bot.github_data import GitHubData, merge_base
from bot.remote_source import (
    BlobStore,
    Failures,
    Gate,
    RemoteReadError,
    RemoteTree,
    apply_patch,
    mark_builder_thread,
    archive_mismatch,
    candidates,
    fetch_archive,
    git_blob_sha,
)
from checks.context import ReviewContext
from checks.snapshot import ChangedFile, CheckRun, Comment, Commit, PRSnapshot, Unavailable
from checks.sweep_runs import reuse_source, run_id_of, sweep_choice
from checks.signoff_keys import PREFIXES_TEXT, parse_signoff_key
from recipes.config import CONFIG_PATH, RepoConfig, read_repo_config
from recipes.layout import detect_layout
from recipes.markdown import strip_quotes_and_code
from recipes.repository import Repository

log = logging.getLogger(__name__)

POOL_WORKERS = 12
STAGE_WORKERS = 16
# The target tree comes from one tarball when GitHub's `size` of the repository is at most this
# many KB (the env variable overrides it; 0 turns archives off and reads files one by one).
ARCHIVE_MAX_KB_ENV = "INFX_ARCHIVE_MAX_KB"
DEFAULT_ARCHIVE_MAX_KB = 100 * 1024
PREFETCH_SUFFIXES = (".yaml", ".yml", ".sh", ".json", ".py", ".patch")

COMPARE_FILES_CAP = 300
# "List commits on a pull request" lists at most 250 commits
# (https://docs.github.com/en/rest/pulls/pulls#list-commits-on-a-pull-request): past that the
# newest ones (those Check 1 looks for) are missing, so the PR's commits come from "Compare two
# commits", which pages them (https://docs.github.com/en/rest/commits/commits#compare-two-commits),
# or are "could not verify".
PR_COMMITS_CAP = 250
COMPARE_COMMITS_PER_PAGE = 100
MSG_COMMITS_CAPPED = ("GitHub lists at most {cap} commits of a PR and this one has {declared}; reading them "
                      "through the compare API gave {got}")
MSG_FILES_CAPPED = "GitHub listed only {listed} of the PR's {declared} changed files (it lists at most 3000)"
MSG_COMPARE_CAPPED = "GitHub's compare lists at most {cap} files, so the changes up to {sha} cannot be listed completely"
MSG_PR = "pull request {repo}#{number} could not be fetched: {error}"
MSG_NOT_SIGNOFF = "{ref} does not name a comment (expected a URL or key with " + PREFIXES_TEXT + ")"
MSG_SIGNOFF_MISSING = "the sign-off {key} is not a comment on {repo}#{number}"
MSG_PIN_NOT_IN_PR = "commit {sha} is not a commit of {repo}#{number}"
MSG_SOME_COMMENTS = "{what} could not be listed: {reason}"

Progress = Callable[[str], None]


class SnapshotError(Exception):
    """The PR itself (or a requested sign-off or pinned head) could not be resolved: no verdict.
    `cause` is the failed request's exception, when one was (the CLI tells repository, PR, token
    and network apart by it)."""

    def __init__(self, message: str, cause: BaseException | None = None):
        super().__init__(message)
        self.cause = cause


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
        self.data_pool: ThreadPoolExecutor | None = None

    def submit(self, what: str, call: Callable[[], Any]) -> Future:
        return self.leaf.submit(fetch, what, call)

    # ----- the pull request and its lists ---------------------------------------------------

    def build(self, signoff_ref: str | None, review_date: date | None, pin_head: str | None) -> PRSnapshot:
        """Reads are started as soon as what they depend on is known, so the slowest chain
        (the target's archive -> its config) sets the pace, not the number of reads."""
        n, r = self.number, self.r
        review_date = review_day(review_date)  # the pipeline gives it; direct callers may not
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
            raise SnapshotError(MSG_PR.format(repo=self.repo, number=n, error=describe_error(exc)), exc) from None
        current_head = pr["head"]["sha"]
        target_sha = pr["base"]["sha"]
        head_sha = pin_head or current_head
        f_archive = self._start_archive(pr, target_sha)
        sides: dict[str, Any] = {}
        head = RemoteTree(self.api, self.repo, head_sha, self.blobs, derive=self._deriver(sides))
        f_head = self.leaf.submit(self._warm, head)

        commits = f_commits.result()
        declared = int(pr.get("commits") or 0)
        if not isinstance(commits, Unavailable) and len(commits) < declared:
            commits = self._compare_commits(target_sha, current_head, declared)
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
        data = GitHubData(self.api, self.repo, RepoConfig(), head_ref=(pr.get("head") or {}).get("ref") or "",
                          pool=self.data_pool)
        self.stage.submit(self._warm_sweep_choice, pr, commits, f_checks, f_lists, data, review_date)
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

        base_sha = merge_base(self.api, self.repo, target_sha, head_sha, commits)
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
        self.progress("reading the files")
        f_head.result()
        check_runs = f_checks.result()
        # The prefetch goes on while the checks start (those waiting on runs or teams need no
        # file); tree reads and `unreadable` wait for it behind one gate.
        gate = Gate()
        for tree in (target, base, head):
            tree.gate = gate
        self.stage.submit(self._prefetch_then_open, gate, target, base, head, files, config)
        # What the prefetch could not read, named for the checks that read those files (head wins).
        unreadable = Failures([target, base, head], gate)

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
            review_date=review_date,
            config=config,
            unreadable=unreadable,
            html_url=pr.get("html_url") or "",
        ).with_data(data.for_config(config))

    def _compare_commits(self, base: str, head: str, declared: int) -> list[dict] | Unavailable:
        """All `declared` commits of the PR, oldest first, paged through the compare API; the
        reason when they cannot all be read."""
        out: list[dict] = []
        pages = -(-declared // COMPARE_COMMITS_PER_PAGE) + 1
        for page in range(1, pages + 1):
            got = fetch(f"the commits of {self.repo}#{self.number} (page {page})", lambda page=page: self.api.get(
                f"{self.r}/compare/{base}...{head}", {"per_page": COMPARE_COMMITS_PER_PAGE, "page": page}))
            if isinstance(got, Unavailable):
                return Unavailable(reason=MSG_COMMITS_CAPPED.format(cap=PR_COMMITS_CAP, declared=declared,
                                                                    got=got.reason))
            batch = got.get("commits") or []
            out.extend(batch)
            if len(batch) < COMPARE_COMMITS_PER_PAGE or len(out) >= int(got.get("total_commits") or 0):
                break
        if len(out) < declared:
            return Unavailable(reason=MSG_COMMITS_CAPPED.format(cap=PR_COMMITS_CAP, declared=declared,
                                                                got=f"only {len(out)}"))
        return out

    def _warm_sweep_choice(self, pr: dict, commits, f_checks: Future, f_lists: dict[str, Future],
                           data: GitHubData, review_date: date) -> None:
        """Start the sweep run reads before the target's policy arrives (the run chain, run ->
        artifact -> download, is the longest wait of a review): Check 1's own choice
        (checks.sweep_runs) over a provisional snapshot judged by the default policy. Nothing
        of it reaches the verdict; the checks choose again under the real policy, and answers
        that depend on the policy are cached per policy."""
        try:
            comments, _ = self._comments(f_lists)
            provisional = PRSnapshot(
                repo=self.repo, number=self.number, head_sha=pr["head"]["sha"], commits=commits,
                comments=comments, check_runs=f_checks.result(), review_date=review_date,
            ).with_data(data)
            ctx = ReviewContext(provisional)
            reuse_source(ctx)
            sweep_choice(ctx)
        except Exception as exc:  # an optimisation only: evaluation reads what it needs anyway
            log.debug("warming the sweep run failed: %s", exc)

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
        # Its problems are said once, by the pipeline, from the verdict (Verdict.configuration).
        return read_repo_config(target)[0]

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

    # ----- files ----------------------------------------------------------------------------

    def _prefetch_then_open(self, gate: Gate, *args: Any) -> None:
        try:
            self._prefetch(*args)
        except Exception:  # prefetch is an optimisation; evaluation reads what it needs anyway
            log.exception("prefetch failed")
        finally:
            gate.open()
            self.leaf.shutdown(wait=False)
            self.stage.shutdown(wait=False)

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

def build_snapshot(
    gh: GitHubApi | Any,  # a GitHubApi, or a PyGithub client to wrap in one
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
    # The pools outlive the build: the prefetch goes on while checks are evaluated (it shuts
    # them down when it is over), and the accessors read through `data_pool` on demand.
    data_pool = ThreadPoolExecutor(POOL_WORKERS, thread_name_prefix="infx-data")
    leaf = ThreadPoolExecutor(POOL_WORKERS, thread_name_prefix="infx-get", initializer=mark_builder_thread)
    stage = ThreadPoolExecutor(STAGE_WORKERS, thread_name_prefix="infx-stage", initializer=mark_builder_thread)
    builder = _Builder(api, repo, pr_number, leaf, stage, progress, cap)
    builder.data_pool = data_pool
    mark_builder_thread()
    try:
        return builder.build(signoff_ref, review_date, pin_head)
    except BaseException:
        leaf.shutdown(wait=False, cancel_futures=True)
        stage.shutdown(wait=False, cancel_futures=True)
        data_pool.shutdown(wait=False)
        raise
    finally:
        mark_builder_thread(False)


def archive_cap_from_env(env: dict[str, str] | None = None) -> int:
    """The archive size cap in KB from INFX_ARCHIVE_MAX_KB (a bad value keeps the default)."""
    value = (env if env is not None else os.environ).get(ARCHIVE_MAX_KB_ENV, "").strip()
    if not value:
        return DEFAULT_ARCHIVE_MAX_KB
    if not value.isdigit():
        log.warning("%s=%r is not a number of KB; using %d", ARCHIVE_MAX_KB_ENV, value, DEFAULT_ARCHIVE_MAX_KB)
        return DEFAULT_ARCHIVE_MAX_KB
    return int(value)
