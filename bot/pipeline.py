"""The one verification pipeline: snapshot source -> evaluate -> render once -> publish.

The CLI (`check PR#` and `check --local`), the event handlers and the demo all run it; they
differ only in the snapshot source (the GitHub API or a git checkout) and the publisher (the PR,
or nothing: the caller prints). The review date and `--only` are decided by the caller once
(`bot/dates.py` is the only reader of the clock) and passed down; the verdict is rendered once,
and every output (the printed text, the comment, the job summary, the check run) reuses it.
"""
from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from datetime import date
from functools import cached_property
from typing import TYPE_CHECKING, Callable

from bot.cli import EXIT_ERROR, EXIT_OK, EXIT_REJECTED
from bot.dates import review_day
from checks.engine import Verdict, VerdictStatus, evaluate

if TYPE_CHECKING:  # GitHub mode only: PyGithub and the publisher load when a PR is reviewed
    from bot.github_client import GitHubApi
    from bot.publisher import Published, Publisher

log = logging.getLogger(__name__)

MSG_LOCAL_INTERNAL = "internal error while reading the repository (traceback logged above)"
MSG_INTERNAL = "internal error while {stage} (traceback logged above)"
STAGE_SNAPSHOT = "building the snapshot"
STAGE_EVALUATE = "evaluating the checks"
STAGE_RENDER = "rendering the verdict"
FORMAT_JSON = "json"
MSG_CONFIGURATION = "%s (this file is not applied: the default policy is)"


# Start-up: local mode and `--help` never import PyGithub, the publisher or jinja2; these
# stand-ins import their module on first call (and stay patchable as module attributes).
def build_snapshot(*args, **kwargs):
    from bot.snapshot_builder import build_snapshot as impl

    return impl(*args, **kwargs)


def build_local_snapshot(*args, **kwargs):
    from bot.local import build_local_snapshot as impl

    return impl(*args, **kwargs)


class Rendered:
    """The verdict's texts, each rendered at most once and shared by every output."""

    def __init__(self, verdict: Verdict):
        self.verdict = verdict

    @cached_property
    def markdown(self) -> str:
        """The verdict text (stdout, the job summary, the check run)."""
        from checks.render import render_markdown

        return render_markdown(self.verdict)

    @cached_property
    def comment(self) -> str | None:
        """The verdict comment's body (marker, verdict, footer), or None without a sign-off."""
        if self.verdict.signoff is None:
            return None
        from checks.render import render_comment

        return render_comment(self.verdict, self.verdict.signoff.key)

    def text(self, fmt: str) -> str:
        if fmt == FORMAT_JSON:
            return json.dumps(self.verdict.to_json(), indent=2, ensure_ascii=False)
        return self.markdown


@dataclass
class Review:
    """The outcome of one pipeline run: the verdict (None when it could not be produced), its
    rendering, what was published, and the exit code."""

    verdict: Verdict | None
    published: Published | None
    code: int
    error: str | None = None
    snapshot: object | None = field(default=None, repr=False)
    # The request failure behind `error` when the PR could not be read (bot/diagnose.py).
    cause: BaseException | None = field(default=None, repr=False)

    @cached_property
    def rendered(self) -> Rendered | None:
        return Rendered(self.verdict) if self.verdict is not None else None


def _evaluate(snapshot, only: set[int] | None) -> Verdict:
    """The checks' verdict; a configuration file that could not be applied is also said on
    standard error, one `file:line: problem` each (the verdict carries a short note)."""
    verdict = evaluate(snapshot, only=only)
    for problem in verdict.configuration:
        log.warning(MSG_CONFIGURATION, problem)
    return verdict


def exit_code(status: VerdictStatus) -> int:
    return EXIT_REJECTED if status is VerdictStatus.REJECTED else EXIT_OK


def review_local(path: str, base: str, head: str, *, pr_file: str | None = None, review_date: date | None = None,
                 repo: str | None = None, only: set[int] | None = None, external: list[str] | None = None,
                 config_file: str | None = None) -> Review:
    """Local mode: the snapshot from a git checkout (and the PR file), evaluated; nothing is
    published (the caller prints `review.rendered`)."""
    from bot.local import LocalModeError, external_repos

    try:
        snapshot = build_local_snapshot(path, base, head, pr_file=pr_file, review_date=review_day(review_date),
                                        repo=repo, external=external_repos(external or ()), config_file=config_file)
    except LocalModeError as e:
        return Review(None, None, EXIT_ERROR, str(e))
    except Exception:  # a bug reading the inputs is exit 2, never a verdict (issue 12)
        log.exception("building the local snapshot of %s failed", path)
        return Review(None, None, EXIT_ERROR, MSG_LOCAL_INTERNAL)
    try:
        verdict = _evaluate(snapshot, only)
    except Exception:  # an internal error is exit 2, never a verdict
        log.exception("evaluating %s failed", snapshot.repo)
        return Review(None, None, EXIT_ERROR, MSG_INTERNAL.format(stage=STAGE_EVALUATE), snapshot)
    return Review(verdict, None, exit_code(verdict.status), None, snapshot)


def review_pr(
    api: GitHubApi,
    repo: str,
    number: int,
    *,
    post: bool,
    signoff_ref: str | None = None,
    review_date: date | None = None,
    only: set[int] | None = None,
    progress: Callable[[str], None] | None = None,
    pin_head: str | None = None,
) -> Review:
    """GitHub mode, a chain of named stages: build snapshot -> evaluate -> render -> publish,
    then best-effort extras. With `post`, a verdict and a status always go out: a failed stage
    publishes a failure status (and an incomplete-verification comment) naming the stage.
    `pin_head` is the head an event saw when it started; a later head is named as not assessed."""
    from bot.github_client import describe_error
    from bot.publisher import EXTRA_CHECK_RUN, EXTRA_SUGGESTIONS, Publisher
    from bot.snapshot_builder import SnapshotError

    publisher = Publisher(api, repo, number)
    snapshot = None
    stage = STAGE_SNAPSHOT
    try:
        snapshot = build_snapshot(api, repo, number, signoff_ref=signoff_ref, review_date=review_day(review_date),
                                  progress=progress, pin_head=pin_head)
        publisher.context = snapshot.config.policy.status_context
        stage = STAGE_EVALUATE
        verdict = _evaluate(snapshot, only)
        review = Review(verdict, None, exit_code(verdict.status), None, snapshot)
        stage = STAGE_RENDER
        if post:
            review.rendered.comment  # rendered once, here: a failure stops before any write
    except SnapshotError as exc:
        failed = _incomplete(api, publisher, repo, number, str(exc), snapshot, post, signoff_ref, pin_head)
        failed.cause = exc.cause
        return failed
    except Exception as exc:  # a bug: logged with its traceback; the PR still gets a status
        log.exception("%s failed for %s#%s", stage, repo, number)
        reason = f"{stage} failed ({type(exc).__name__})"
        return _incomplete(api, publisher, repo, number, reason, snapshot, post, signoff_ref, pin_head)
    if not post:
        return review
    if progress:
        progress("publishing the verdict")
    try:
        rendered = review.rendered
        # Fixes on lines outside the PR's diff cannot be review suggestions: the verdict lists them.
        plan = publisher.plan_suggestions(verdict, snapshot)
        published = publisher.publish(verdict, signoff=snapshot.signoff, rendered=rendered, notes=plan.notes)
        # Best effort, after the gate (the status): the check run with its annotations.
        if publisher.publish_check_run(verdict, published.comment_url, rendered=rendered):
            published.extras.append(EXTRA_CHECK_RUN)
        suggested = publisher.publish_suggestions(verdict, snapshot, plan=plan)
        if suggested:
            published.extras.append(EXTRA_SUGGESTIONS.format(n=suggested))
    except Exception as exc:
        log.exception("publishing the verdict on %s#%s failed", repo, number)
        return Review(verdict, None, EXIT_ERROR, f"publishing failed: {describe_error(exc)}", snapshot)
    review.published = published
    return review


def _incomplete(api: GitHubApi, publisher: Publisher, repo: str, number: int, reason: str, snapshot,
                post: bool, signoff_ref: str | None, pin_head: str | None = None) -> Review:
    from bot.github_client import describe_error, fetch
    from checks.signoff_keys import KEY_RE
    from checks.snapshot import Unavailable

    if not post:
        return Review(None, None, EXIT_ERROR, reason)
    # The failure describes the head this run was asked to assess, not one pushed since.
    head = snapshot.head_sha if snapshot is not None else pin_head
    key = snapshot.signoff.key if snapshot is not None and snapshot.signoff is not None else None
    if head is None:
        pr = fetch(f"{repo}#{number}", lambda: api.get(f"/repos/{repo}/pulls/{number}"))
        if isinstance(pr, Unavailable):
            return Review(None, None, EXIT_ERROR, f"{reason}; no status could be set: {pr.reason}")
        head = pr["head"]["sha"]
    if key is None and signoff_ref:
        m = KEY_RE.search(signoff_ref)
        key = m.group(0) if m else None
    try:
        published = publisher.publish_incomplete(head, reason, signoff_key=key)
    except Exception as exc:
        log.exception("publishing the failure status on %s#%s failed", repo, number)
        return Review(None, None, EXIT_ERROR, f"{reason}; publishing failed: {describe_error(exc)}")
    return Review(None, published, EXIT_ERROR, reason)
