"""The publisher: the bot's only writes for a verdict. One comment per sign-off (found by its
hidden marker among the bot's own comments), the commit status on the assessed head, and in
GitHub Actions a copy of the verdict in the job summary (spec 11.2, 11.3 generation B)."""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bot.github_client import GithubException

from bot.github_client import GitHubApi, create_once, describe_error
from bot.pipeline import Rendered
from checks.engine import Verdict, VerdictStatus
from checks.render import HEADERS, MARKER, FOOTER, render_markdown
from checks.result import Status, split_external
from checks.text import COMMENT_MAX, escape_inline, status_description
from recipes.config import STATUS_CONTEXT_MAX

log = logging.getLogger(__name__)

STATUS_CONTEXT = "codeowner-signoff-verify"
STATE_SUCCESS = "success"
STATE_FAILURE = "failure"
DESC_PASS = "CODEOWNER checklist passed: verdict PASS"
DESC_WARN = "CODEOWNER checklist passed with warnings ({checks})"
CHECK_ONE = "Check {n}"
CHECK_MANY = "Checks {n}"
DESC_REJECTED = "Sign-off verification rejected - see verdict comment"
DESC_INCOMPLETE = "Sign-off verification could not complete: {reason}"
INCOMPLETE_TEXT = "The verification could not complete: {reason}. Retry the sign-off verification."
SUMMARY_ENV = "GITHUB_STEP_SUMMARY"
ACTION_CREATED = "created"
ACTION_EDITED = "edited"
ACTION_UNCHANGED = "unchanged"
INCOMPLETE_REASON_MAX = 300
MSG_COMMENT_FAILED = "the verdict comment could not be posted ({error})"
MSG_MARKED_COMMENT = "the comment {marker} on {repo}#{number}"
# The last line of a verdict comment: which version of the sign-off it assessed (its last edit
# time and a digest of its text), so any later job can tell a current verdict from a stale one
# (bot/handlers/catchup.py). The digest is what catches an edited review: GitHub's reviews have
# only `submitted_at`, which an edit of the review's text leaves as it was ("Update a review for a
# pull request", https://docs.github.com/en/rest/pulls/reviews#update-a-review-for-a-pull-request).
SIGNOFF_STAMP = "<!-- infx-review signoff-version={version} body={digest} -->"
SIGNOFF_DIGEST_LEN = 16
NOTES_ROOM = 200
# The check run on the assessed head, beside the status (rulesets require the status): the
# verdict as its summary, the rows as its text, one annotation per cited file:line so findings
# show on the diff. GitHub takes at most 50 annotations per request, and at most 65535 bytes of
# UTF-8 in output.summary and in output.text: the docs say characters
# (https://docs.github.com/en/rest/checks/runs#create-a-check-run), GitHub's 422 says "exceeds a
# maximum bytesize of 65535" (https://github.com/github/docs/issues/35252).
CHECK_RUN_NAME = STATUS_CONTEXT
CHECK_TITLE = "Sign-off verification: {status}"
CHECK_SUMMARY = "{header}\n\nAssessed commit `{sha}`; the verdict comment: {link}."
CHECK_LINK_NONE = "none (no sign-off to key it by)"
CHECK_TEXT_MAX = 65535
FENCE_CLOSE = "```\n"
TEXT_TRUNCATED = "\n\n(The verdict text was cut here to fit GitHub's check-run limit; the verdict comment has all of it.)\n"
# A status context longer than STATUS_CONTEXT_MAX (255) is refused with 422 ("Create a commit
# status", https://docs.github.com/en/rest/commits/statuses#create-a-commit-status): the config
# validates the configured one, and the publisher refuses one it is handed.
MSG_CONTEXT_TOO_LONG = "a commit status context has at most {max} characters; {context!r} has {n}"
ANNOTATIONS_PER_REQUEST = 50
ANNOTATION_MESSAGE_MAX = 4000
ANNOTATION_TITLE = "Check {n} ({name}): {status}"
ANNOTATION_LEVEL = {Status.FAIL: "failure", Status.WARN: "warning"}
CONCLUSION = {VerdictStatus.PASS: "success", VerdictStatus.WARN: "neutral", VerdictStatus.REJECTED: "failure"}
EXTRA_CHECK_RUN = "check run"
EXTRA_SUGGESTIONS = "{n} suggestion(s)"
MSG_SUGGESTION_SKIPPED = "no suggestion for %s:%s: %s"
MSG_SUGGESTIONS_FAILED = "could not post the suggested fixes on %s#%s: %s"
MSG_SUGGESTION_REFUSED = "the suggestion for %s:%s was not posted: %s"
# Fixes on lines outside the PR's diff, which GitHub takes no review comment on: in the verdict.
OUTSIDE_DIFF_HEADER = ("**Suggested fixes outside the PR's diff** (GitHub takes review suggestions only on the "
                       "lines of the diff, so these are here):")
OUTSIDE_DIFF_ITEM = "- `{path}:{line}` (Check {check}, {why}): replace line {line} with\n\n{block}"
HUNK_RE = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@", re.M)
MSG_CHECK_RUN_FAILED = "could not publish the check run on %s: %s"
SIGNOFF_STAMP_RE = re.compile(r"<!-- infx-review signoff-version=(\S+?)(?: body=([0-9a-f]+))? -->")


def hunk_lines(patch: str | None) -> set[int]:
    """The new-side line numbers a unified diff's hunks show (changed and context lines): the
    lines GitHub takes a review comment on. None (no patch: binary or too large) shows none."""
    lines: set[int] = set()
    for m in HUNK_RE.finditer(patch or ""):
        start, count = int(m.group(1)), int(m.group(2) if m.group(2) is not None else 1)
        lines.update(range(start, start + count))
    return lines


def _fenced(text: str) -> str:
    """`text` as a code block whose fence no run of backticks in it can close."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}yaml\n{text}\n{fence}"


@dataclass
class SuggestionPlan:
    """Fixes for review comments on the diff (fix, marker, body, line) and fixes outside it
    (fix, line, suggested text), which the verdict comment lists instead."""

    inline: list[tuple[Any, str, str, int]] = field(default_factory=list)
    outside: list[tuple[Any, int, str]] = field(default_factory=list)

    @property
    def notes(self) -> str | None:
        if not self.outside:
            return None
        items = [OUTSIDE_DIFF_ITEM.format(path=escape_inline(fix.path, INCOMPLETE_REASON_MAX), line=line,
                                          check=fix.check, why=escape_inline(fix.why.rstrip("."), INCOMPLETE_REASON_MAX),
                                          block=_fenced(text))
                 for fix, line, text in self.outside]
        return OUTSIDE_DIFF_HEADER + "\n\n" + "\n\n".join(items)


@dataclass
class Published:
    """What one publish did, for the CLI's report and the tests."""

    comment_url: str | None = None
    comment_action: str | None = None
    status_state: str | None = None
    status_description: str | None = None
    # False when the status already said this and nothing was written.
    status_written: bool = False
    extras: list[str] = field(default_factory=list)


def status_for(verdict: Verdict) -> tuple[str, str]:
    """(state, description) of the commit status for a verdict (descriptions fit 140 characters)."""
    if verdict.status is VerdictStatus.PASS:
        return STATE_SUCCESS, status_description(DESC_PASS)
    if verdict.status is VerdictStatus.WARN:
        numbers = [str(r.number) for r in verdict.rows if r.status is Status.WARN]
        checks = (CHECK_ONE if len(numbers) == 1 else CHECK_MANY).format(n=", ".join(numbers))
        return STATE_SUCCESS, status_description(DESC_WARN.format(checks=checks))
    return STATE_FAILURE, status_description(DESC_REJECTED)


def signoff_digest(body: str) -> str:
    """A short digest of a sign-off's text (line endings normalised)."""
    return hashlib.sha256(body.replace("\r\n", "\n").encode("utf-8")).hexdigest()[:SIGNOFF_DIGEST_LEN]


def signoff_stamp(signoff) -> str:
    """The hidden line for the version (last edit, else creation, and text) of a sign-off."""
    version = signoff.updated_at or signoff.created_at
    return SIGNOFF_STAMP.format(version=version.isoformat() if version else "unknown",
                                digest=signoff_digest(signoff.body or ""))


def stamped(body: str, signoff) -> str:
    """`body` with the sign-off stamp as its last line, unless that would pass GitHub's limit
    (a verdict without a stamp is then judged by its edit time)."""
    out = body.rstrip("\n") + "\n" + signoff_stamp(signoff) + "\n"
    return out if len(out) <= COMMENT_MAX else body


def incomplete_comment(signoff_key: str, head_sha: str, reason: str) -> str:
    """The REJECTED comment for a verification that crashed or could not read the PR."""
    text = INCOMPLETE_TEXT.format(reason=escape_inline(reason, INCOMPLETE_REASON_MAX))
    return (MARKER.format(key=signoff_key) + "\n" + HEADERS[VerdictStatus.REJECTED] + "\n\n" + text
            + "\n\n" + FOOTER.format(sha=head_sha) + "\n")


def own_marked(api: GitHubApi, repo: str, number: int, login: str, marker: str, *,
               prefix: bool = False) -> list[dict]:
    """The conversation comments on `number` authored by `login` whose first line is `marker` (or
    starts with it, with `prefix`), oldest first. Humans copying a marker are never matched."""
    login = login.lower()
    mine = []
    for c in api.list(f"/repos/{repo}/issues/{number}/comments"):
        first = (c.get("body") or "").split("\n", 1)[0].rstrip("\r")
        if str((c.get("user") or {}).get("login", "")).lower() == login \
                and (first.startswith(marker) if prefix else first == marker):
            mine.append(c)
    return sorted(mine, key=lambda c: (str(c.get("created_at") or ""), int(c["id"])))


def upsert_marked(api: GitHubApi, repo: str, number: int, login: str, marker: str, body: str) -> tuple[dict, str]:
    """(comment, action) for the one comment of `login` whose first line is `marker` (`body`
    starts with it): edited when its text changed, left alone when identical, created when there
    is none (or it vanished before the edit). Redelivered events never add a second one."""
    existing = own_marked(api, repo, number, login, marker)
    if existing:
        oldest = existing[0]
        if len(existing) > 1:
            log.warning("%d comments carry %s; editing the oldest (%s)", len(existing), marker, oldest["id"])
        if oldest.get("body") == body:
            return oldest, ACTION_UNCHANGED
        try:
            return api.patch(f"/repos/{repo}/issues/comments/{oldest['id']}", {"body": body}), ACTION_EDITED
        except GithubException as exc:
            if exc.status != 404:
                raise
            log.warning("comment %s vanished; posting a new one", oldest["id"])
    return create_marked(api, repo, number, login, marker, body), ACTION_CREATED


def create_marked(api: GitHubApi, repo: str, number: int, login: str, marker: str, body: str) -> dict:
    """Post a comment whose first line is `marker`, exactly once: a post that fails after GitHub
    may have applied it (5xx, dropped connection) is followed by a listing of the bot's comments,
    and the oldest carrying the marker is adopted; only when none does is it posted again."""
    def find() -> dict | None:
        found = own_marked(api, repo, number, login, marker)
        if not found or found[0].get("body") == body:
            return found[0] if found else None
        # Another job posted it between our listing and our post: it stays the one comment, and
        # our text goes into it rather than beside it.
        return api.patch(f"/repos/{repo}/issues/comments/{found[0]['id']}", {"body": body})

    return create_once(MSG_MARKED_COMMENT.format(marker=marker, repo=repo, number=number),
                       lambda: api.post(f"/repos/{repo}/issues/{number}/comments", {"body": body}), find,
                       policy=getattr(api, "policy", None))


def annotations_for(verdict: Verdict) -> list[dict]:
    """One annotation per distinct cited file:line of every row (failure for FAIL, warning for
    WARN, notice otherwise), in row order."""
    out, seen = [], set()
    for row in verdict.rows:
        for e in row.evidence:
            if not e.path or not e.line or e.line < 1 or e.unavailable or split_external(e.path):
                continue  # an annotation can only sit on a file of this repository
            key = (row.number, e.path, e.line)
            if key in seen:
                continue
            seen.add(key)
            message = row.reason + (f" ({e.note})" if e.note else "")
            out.append({"path": e.path, "start_line": e.line, "end_line": e.line,
                        "annotation_level": ANNOTATION_LEVEL.get(row.status, "notice"),
                        "title": ANNOTATION_TITLE.format(n=row.number, name=row.name, status=row.status.value),
                        "message": message[:ANNOTATION_MESSAGE_MAX]})
    return out


def utf8_fit(text: str, limit: int, notice: str = TEXT_TRUNCATED) -> str:
    """`text` if its UTF-8 encoding fits `limit` bytes; else its longest prefix that ends a line
    (else a whole character) and, with `notice`, fits, followed by `notice`."""
    data = text.encode("utf-8")
    if len(data) <= limit:
        return text
    room = limit - len(notice.encode("utf-8")) - len(FENCE_CLOSE)
    head = data[:max(room, 0)].decode("utf-8", errors="ignore")  # never half a character
    line_end = head.rfind("\n")
    if line_end > 0:
        head = head[:line_end + 1]
    if sum(1 for line in head.splitlines() if line.lstrip().startswith("```")) % 2:
        head += FENCE_CLOSE  # a code block (a chart) cut open is closed before the notice
    return head + notice


def check_run_output(verdict: Verdict, comment_url: str | None, annotations: list[dict],
                     rendered: Rendered | None = None) -> dict:
    """The check run's output: the verdict as summary, the rows (the verdict text) as text; a
    text over GitHub's byte limit drops the details, then is cut at a line and says so."""
    text = (rendered or Rendered(verdict)).markdown
    if len(text.encode("utf-8")) > CHECK_TEXT_MAX:
        text = utf8_fit(render_markdown(verdict, with_details=False), CHECK_TEXT_MAX)
    link = f"[verdict]({comment_url})" if comment_url else CHECK_LINK_NONE
    return {"title": CHECK_TITLE.format(status=verdict.status.value),
            "summary": utf8_fit(CHECK_SUMMARY.format(header=HEADERS[verdict.status], sha=verdict.head_sha, link=link),
                                CHECK_TEXT_MAX),
            "text": text, "annotations": annotations}


class Publisher:
    """Writes for one PR. Only comments authored by the bot's own login are ever edited, so a
    user pasting the marker into their own comment changes nothing."""

    def __init__(self, api: GitHubApi, repo: str, number: int, *, context: str = STATUS_CONTEXT,
                 env: dict[str, str] | None = None):
        self.api, self.repo, self.number = api, repo, number
        self.context = context
        self.env = os.environ if env is None else env
        self.r = f"/repos/{repo}"

    @property
    def context(self) -> str:
        return self._context

    @context.setter
    def context(self, value: str) -> None:
        if len(value) > STATUS_CONTEXT_MAX:
            raise ValueError(MSG_CONTEXT_TOO_LONG.format(max=STATUS_CONTEXT_MAX, context=value[:40] + "…", n=len(value)))
        self._context = value

    # ----- the verdict comment ---------------------------------------------------------------

    def upsert_comment(self, signoff_key: str, body: str) -> tuple[str, str]:
        """(html_url, action): edit the oldest of our comments with this sign-off's marker, leave
        it alone when identical, else create one. Never a second comment for the same sign-off."""
        comment, action = upsert_marked(self.api, self.repo, self.number, self.api.login(),
                                        MARKER.format(key=signoff_key), body)
        return comment.get("html_url") or "", action

    # ----- the commit status -------------------------------------------------------------------

    def set_status(self, sha: str, state: str, description: str, target_url: str | None) -> bool:
        """Set our status context on `sha`; False (nothing written) when it already says this."""
        description = status_description(description)
        try:
            current = self.api.get(f"{self.r}/commits/{sha}/status")
            latest = next((s for s in (current or {}).get("statuses") or [] if s.get("context") == self.context), None)
        except GithubException as exc:  # unknown current state: writing again is harmless
            log.info("could not read the statuses of %s: %s", sha, exc)
            latest = None
        if latest is not None and (latest.get("state"), latest.get("description"), latest.get("target_url") or None) \
                == (state, description, target_url or None):
            return False
        body: dict[str, Any] = {"state": state, "description": description, "context": self.context}
        if target_url:
            body["target_url"] = target_url
        # Repeating a status with the same context, state and description changes nothing.
        self.api.post_idempotent(f"{self.r}/statuses/{sha}", body)
        return True

    # ----- extras --------------------------------------------------------------------------------

    def append_summary(self, markdown: str) -> str | None:
        """Best effort: the verdict in the Actions job summary; logged, never raised."""
        path = self.env.get(SUMMARY_ENV)
        if not path:
            return None
        try:
            with Path(path).open("a", encoding="utf-8") as fh:
                fh.write(markdown.rstrip("\n") + "\n")
            return "job summary"
        except OSError as exc:
            log.warning("could not append the verdict to the job summary %s: %s", path, exc)
            return None

    # ----- whole publications -------------------------------------------------------------------

    def publish(self, verdict: Verdict, *, signoff=None, rendered: Rendered | None = None,
                notes: str | None = None) -> Published:
        """The verdict comment (when there is a sign-off to key it by) and the status. `signoff`,
        the sign-off comment itself (checks.snapshot.Comment), stamps the version assessed;
        `rendered` is the pipeline's one rendering of the verdict; `notes` (the suggested fixes
        outside the diff) end the comment when they fit."""
        if verdict.partial:
            raise ValueError("a partial verdict (--only) is never published")
        rendered = rendered or Rendered(verdict)
        out = Published()
        if verdict.signoff is not None:
            body = rendered.comment
            if notes and len(body) + len(notes) + NOTES_ROOM <= COMMENT_MAX:  # the stamp still fits
                body = body.rstrip("\n") + "\n\n" + notes + "\n"
            if signoff is not None:
                body = stamped(body, signoff)
            try:
                out.comment_url, out.comment_action = self.upsert_comment(verdict.signoff.key, body)
            except Exception as exc:
                # No verdict comment, so no passing status either: the gate says to retry.
                reason = MSG_COMMENT_FAILED.format(error=describe_error(exc))
                description = status_description(DESC_INCOMPLETE.format(reason=reason))
                self.set_status(verdict.head_sha, STATE_FAILURE, description, None)
                raise
        else:
            log.warning("no sign-off on %s#%s: publishing the status only", self.repo, self.number)
        out.status_state, out.status_description = status_for(verdict)
        out.status_written = self.set_status(verdict.head_sha, out.status_state, out.status_description,
                                             out.comment_url)
        extra = self.append_summary(rendered.markdown)
        if extra:
            out.extras.append(extra)
        return out

    def publish_check_run(self, verdict: Verdict, comment_url: str | None, *, rendered: Rendered | None = None) -> bool:
        """Best effort, after the status: the check run on the assessed head. Unchanged when the
        newest run of ours on that head already says the same; otherwise a new run (GitHub shows
        the newest by name; updating an old one would append its annotations twice), its first 50
        annotations in the creation and the rest in updates of 50. Logged, never raised."""
        annotations = annotations_for(verdict)
        output = check_run_output(verdict, comment_url, annotations[:ANNOTATIONS_PER_REQUEST], rendered)
        conclusion = CONCLUSION[verdict.status]
        digest = hashlib.sha256(json.dumps([conclusion, output, annotations], sort_keys=True).encode()).hexdigest()[:16]
        external_id = f"{verdict.signoff.key if verdict.signoff else 'none'}:{digest}"
        runs_path = f"{self.r}/commits/{verdict.head_sha}/check-runs"
        try:
            def find() -> dict | None:
                runs = self.api.list(runs_path, {"check_name": CHECK_RUN_NAME, "filter": "latest"}, key="check_runs")
                return next((r for r in runs if r.get("external_id") == external_id), None)

            if find() is not None:
                return False
            body = {"name": CHECK_RUN_NAME, "head_sha": verdict.head_sha, "status": "completed",
                    "conclusion": conclusion, "external_id": external_id, "output": output}
            if comment_url:
                body["details_url"] = comment_url
            run = create_once(f"the check run on {verdict.head_sha[:12]}", lambda: self.api.post(f"{self.r}/check-runs", body),
                              find, policy=getattr(self.api, "policy", None))
            # Each update carries the whole output: GitHub requires its title and summary ("Update
            # a check run", https://docs.github.com/en/rest/checks/runs#update-a-check-run) and an
            # update's output replaces the run's, so one without the text would erase it.
            for start in range(ANNOTATIONS_PER_REQUEST, len(annotations), ANNOTATIONS_PER_REQUEST):
                batch = annotations[start:start + ANNOTATIONS_PER_REQUEST]
                self.api.patch(f"{self.r}/check-runs/{run['id']}", {"output": {**output, "annotations": batch}})
            return True
        except Exception as exc:  # the status is the gate; the check run only shows findings on the diff
            log.warning(MSG_CHECK_RUN_FAILED, verdict.head_sha[:12], describe_error(exc))
            return False

    def plan_suggestions(self, verdict: Verdict, snapshot) -> SuggestionPlan:
        """Which mechanical fixes (bot/fixes.py) go on the PR's diff as ```suggestion review
        comments and which go into the verdict comment as text: GitHub takes a review comment only
        on a line of the diff's hunks, and refuses any other line with 422 ("Create a review
        comment for a pull request", https://docs.github.com/en/rest/pulls/comments#create-a-review-comment-for-a-pull-request:
        "pull_request_review_thread.line must be part of the diff"). Never raises."""
        from bot.fixes import FixError, fixes_of, suggested_text, suggestion_comment, suggestion_line

        plan = SuggestionPlan()
        files = {f.path: f for f in snapshot.files} if isinstance(getattr(snapshot, "files", None), list) else {}
        for fix in fixes_of(verdict):
            changed = files.get(fix.path)
            if changed is None:
                log.info(MSG_SUGGESTION_SKIPPED, fix.path, fix.line, "not a file of this PR")
                continue
            try:
                text = snapshot.head.read(fix.path).decode("utf-8")
                marker, body = suggestion_comment(fix, text)
                line = suggestion_line(text, fix)  # an added line's comment goes on the line it follows
                suggestion = suggested_text(text, fix)
            except (FixError, UnicodeDecodeError, OSError, AttributeError, ValueError) as exc:
                log.info(MSG_SUGGESTION_SKIPPED, fix.path, fix.line, exc)
                continue
            if line in hunk_lines(changed.patch):
                plan.inline.append((fix, marker, body, line))
            else:
                plan.outside.append((fix, line, suggestion))
        return plan

    def publish_suggestions(self, verdict: Verdict, snapshot, *, plan: SuggestionPlan | None = None) -> int:
        """Best effort: each mechanical fix on a line of the PR's diff as one review comment with
        a ```suggestion block on its line of the assessed head; found again by its marker among the
        bot's own review comments, never posted twice. One refused suggestion does not stop the
        others. Returns how many were posted. Logged, never raised."""
        plan = plan if plan is not None else self.plan_suggestions(verdict, snapshot)
        if not plan.inline:
            return 0
        posted = 0
        try:
            me = self.api.login().lower()
            mine = {(c.get("body") or "").split("\n", 1)[0]
                    for c in self.api.list(f"{self.r}/pulls/{self.number}/comments")
                    if str((c.get("user") or {}).get("login", "")).lower() == me}
        except Exception as exc:  # suggestions are a courtesy; the verdict and status stand
            log.warning(MSG_SUGGESTIONS_FAILED, self.repo, self.number, describe_error(exc))
            return 0
        for fix, marker, body, line in plan.inline:
            if marker in mine:
                continue

            def find(marker=marker) -> dict | None:
                return next((c for c in self.api.list(f"{self.r}/pulls/{self.number}/comments")
                             if (c.get("body") or "").split("\n", 1)[0] == marker
                             and str((c.get("user") or {}).get("login", "")).lower() == me), None)

            try:
                create_once(marker, lambda body=body, fix=fix, line=line: self.api.post(
                    f"{self.r}/pulls/{self.number}/comments",
                    {"body": body, "commit_id": verdict.head_sha, "path": fix.path, "line": line, "side": "RIGHT"}),
                    find, policy=getattr(self.api, "policy", None))
                posted += 1
            except Exception as exc:  # e.g. 422 for a line GitHub does not count as the diff's
                log.warning(MSG_SUGGESTION_REFUSED, fix.path, line, describe_error(exc))
        return posted

    def publish_incomplete(self, head_sha: str, reason: str, *, signoff_key: str | None = None) -> Published:
        """When building or evaluating failed: a REJECTED comment saying so and a failure status."""
        out = Published()
        if signoff_key:
            try:
                out.comment_url, out.comment_action = self.upsert_comment(
                    signoff_key, incomplete_comment(signoff_key, head_sha, reason))
            except Exception as exc:  # the status below must still go out
                log.warning("could not post the incomplete-verification comment: %s", exc)
        out.status_state = STATE_FAILURE
        out.status_description = status_description(DESC_INCOMPLETE.format(reason=reason))
        out.status_written = self.set_status(head_sha, out.status_state, out.status_description, out.comment_url)
        extra = self.append_summary(HEADERS[VerdictStatus.REJECTED] + "\n\n" + INCOMPLETE_TEXT.format(reason=reason))
        if extra:
            out.extras.append(extra)
        return out
