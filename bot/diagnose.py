"""Why GitHub mode could not read a pull request, as one line that names what to fix: the token
(401), the repository (404 on it: wrong --repo, or a token that cannot see it), the PR number
(404 on the PR of a repository that exists), the token's access (403), the network (no answer
from the API once the retry policy gave up) or GitHub itself (5xx after the retries), each with
the URL that failed."""
from __future__ import annotations

import re

import requests

from bot.github_client import GithubException, GitHubApi, describe_error

# OWNER/NAME as GitHub spells them: a login (letters, digits, hyphens) and a repository name.
REPO_RE = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}")

MSG_BAD_REPO = "--repo must be OWNER/NAME (e.g. octo-org/benchmarks), not {repo!r}"
MSG_BAD_NUMBER = "the PR number must be a positive integer, not {number}"
MSG_NETWORK = ("cannot reach the GitHub API at {url} ({reason}, after retries); check the network, "
               "or --github-url / GITHUB_API_URL")
MSG_SERVER = "the GitHub API at {url} kept failing ({error}) after retries; try again later (githubstatus.com)"
MSG_TOKEN = ("GitHub refused the credentials at {url} ({error}); check GITHUB_TOKEN "
             "(or INFX_APP_ID, INFX_APP_PRIVATE_KEY and INFX_APP_INSTALLATION_ID)")
MSG_FORBIDDEN = "the token may not read {url} ({error}); give it read access to {repo}"
MSG_NO_REPO = ("repository {repo} was not found at {url} (HTTP 404); check --repo, or that the token "
               "can read a private repository")
MSG_NO_PR = "pull request #{number} was not found in {repo} at {url} (HTTP 404); check the PR number"
_ERRNO = re.compile(r"\[Errno -?\d+\] ([^'\")]+)")


def check_arguments(repo: str, number: int) -> str | None:
    """What is wrong with `--repo` or the PR number before any request, or None."""
    if not REPO_RE.fullmatch(repo):
        return MSG_BAD_REPO.format(repo=repo)
    if number <= 0:
        return MSG_BAD_NUMBER.format(number=number)
    return None


def _network_reason(exc: BaseException) -> str:
    """'Connection refused', 'Name or service not known', 'timed out': the last words of the cause."""
    m = _ERRNO.search(str(exc))
    if m:
        return m.group(1).strip().rstrip(".")
    if isinstance(exc, requests.Timeout):
        return "timed out"
    return type(exc).__name__


def explain(api: GitHubApi, repo: str, number: int, exc: BaseException | None) -> str | None:
    """The one-line reason reading `repo#number` failed with `exc`, or None when the failure is
    none of the user's (GitHub's 5xx, say: the caller keeps its own message)."""
    pr_url = f"{api.base_url}/repos/{repo}/pulls/{number}"
    if isinstance(exc, requests.RequestException):
        url = getattr(getattr(exc, "request", None), "url", None) or pr_url
        return MSG_NETWORK.format(url=url, reason=_network_reason(exc))
    if not isinstance(exc, GithubException):
        return None
    if exc.status >= 500:  # it answered, with errors, every time the retry policy asked
        return MSG_SERVER.format(url=pr_url, error=describe_error(exc))
    if exc.status == 401:
        return MSG_TOKEN.format(url=pr_url, error=describe_error(exc))
    if exc.status == 403:
        return MSG_FORBIDDEN.format(url=pr_url, repo=repo, error=describe_error(exc))
    if exc.status != 404:
        return None
    # 404 on the PR: is it the repository (or a token that cannot see it) or the number?
    repo_url = f"{api.base_url}/repos/{repo}"
    try:
        api.get(f"/repos/{repo}")
    except GithubException as probe:
        if probe.status == 404:
            return MSG_NO_REPO.format(repo=repo, url=repo_url)
        return None
    except requests.RequestException as probe:
        return MSG_NETWORK.format(url=repo_url, reason=_network_reason(probe))
    return MSG_NO_PR.format(number=number, repo=repo, url=pr_url)
