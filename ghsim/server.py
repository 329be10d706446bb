"""The local GitHub REST API emulator: serves one world over HTTP with GitHub's JSON shapes,
records every write as an effect, counts requests, and injects faults on demand.

The Emulator is assembled from one class per GitHub resource (pulls, issues, git data, checks,
actions, orgs, auth), the route table, the world state and fault injection; this module holds
its lifecycle, the request dispatch and the HTTP server."""
from __future__ import annotations

import json
import random
import shutil
import socket
import tempfile
import threading
import time
import urllib.parse
from collections import Counter
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Mapping

from .actions import Actions
from .auth import MSG_PRIMARY_LIMIT, RATE_LIMIT, RATE_WINDOW_S, Auth
from .checkruns import CheckRuns
from .faults import DEFAULT_RETRY_AFTER_S, FAULT_DROP, GHOST_SEED, MSG_SERVER_ERROR, Fault, Faults, fault_response
from .gitdata import GitData
from .others import OtherRepo, OtherRepos
from .http import DOCS, HttpError, Pages, Request, Response, not_found
from .issues import Issues
from .orgs import Orgs
from .pulls import Pulls
from .routes import Routes
from .state import State
from .world import COMMITS_DIR, GitReader, World, apply_change, author_of, build_world_repo, git

HOST = "127.0.0.1"
API_PREFIX = "/api/v3"  # GitHub Enterprise style prefix, accepted as an alias of the root
MSG_BAD_JSON = "Problems parsing JSON"
# Request bodies kept in the request log (a long comment body is cut, not dropped).
LOGGED_BODY_MAX = 70_000


class Emulator(State, Routes, Pages, Faults, Auth, Orgs, Pulls, Issues, GitData, OtherRepos, CheckRuns, Actions):
    """A running emulator for one world. Use as a context manager or call `stop()`."""

    def __init__(
        self,
        world_dir: str | Path,
        *,
        strict: bool = False,
        fail_rate: float = 0.0,
        rate_limit_rate: float = 0.0,
        drop_rate: float = 0.0,
        latency_ms: int = 0,
        seed: int = 0,
        port: int = 0,
        retry_after_s: int = DEFAULT_RETRY_AFTER_S,
        ghost_write_rate: float = 0.0,
        ghost_write_limit: int | None = None,
        ghost_write_only: str | None = None,
        clock: Any = None,
        rate_limit: int = RATE_LIMIT,
        rate_window_s: int = RATE_WINDOW_S,
        limit_status: int = 403,
        rate_limit_first: int = 0,
        run_details: bool = True,
        record_responses: bool = False,
    ):
        self.world_dir = Path(world_dir)
        self.strict = strict
        self.fail_rate, self.rate_limit_rate, self.drop_rate = fail_rate, rate_limit_rate, drop_rate
        self.latency_ms = latency_ms
        # None: a secondary-limit fault carries no Retry-After (GitHub then asks for a minute).
        self.retry_after_s = retry_after_s
        # The primary limit: `rate_limit` requests per token per `rate_window_s`, on the clock's
        # time (a bot.retry_policy.VirtualClock makes the window pass without waiting); a spent
        # limit answers `limit_status` (GitHub uses 403 and 429) with x-ratelimit-remaining 0.
        self.clock = clock
        self.rate_limit, self.rate_window_s, self.limit_status = rate_limit, rate_window_s, limit_status
        # The next `rate_limit_first` requests answer a secondary limit, then the knobs above apply.
        self.rate_limit_first = rate_limit_first
        # False: a server from before `return_run_details` (GitHub Enterprise Server), which
        # refuses the unknown key with 422.
        self.run_details = run_details
        # (route template, status, JSON body) of every answer, for the OpenAPI contract tests.
        self.record_responses = record_responses
        self.responses: list[tuple[str, int, Any]] = []
        self._rng = random.Random(seed)
        # At most `ghost_write_limit` ghosts (None: no cap), only on writes whose "METHOD route"
        # (e.g. "POST /repos/{owner}/{repo}/issues/{number}/comments") contains `ghost_write_only`.
        self.ghost_write_rate, self.ghost_write_limit = ghost_write_rate, ghost_write_limit
        self.ghost_write_only = ghost_write_only
        self._ghost_rng = random.Random(GHOST_SEED.format(seed=seed))
        # (method, path, answer) of every write applied and then answered as failed.
        self.ghost_writes: list[tuple[str, str, int | str]] = []
        self._lock = threading.RLock()
        self._local = threading.local()
        self._tmp = Path(tempfile.mkdtemp(prefix="infx-sandbox-"))
        try:
            built = build_world_repo(self.world_dir, self._tmp / "repo")
        except BaseException:
            shutil.rmtree(self._tmp, ignore_errors=True)
            raise
        self.built = built
        self.world: World = built.world
        self.repo_path = built.path
        self.git = GitReader(built.path)
        self.others = {spec.repo.lower(): OtherRepo(spec.repo, built.others[spec.repo][1], tuple(spec.refs),
                                                    GitReader(built.others[spec.repo][0]))
                       for spec in self.world.other_repos}
        # The default branch's tip (the PR's `base.sha`) and the PR's merge base (its diff base);
        # the same commit unless the world has `target_commits`.
        self.base_sha = built.target_sha or built.base_sha
        self.merge_base_sha = built.base_sha
        self.shas: dict[str, str] = dict(built.shas)
        self._chain = [built.base_sha] + [built.shas[c.id] for c in self.world.commits]
        self._target_chain = [built.shas[c.id] for c in self.world.target_commits]
        self._effects: list[dict] = []
        self.requests: Counter[str] = Counter()
        self.request_log: list[dict] = []
        self.violations: list[str] = []
        self._rate_used: Counter[str] = Counter()
        self._rate_reset = int(self._now()) + self.rate_window_s
        # Permissions an App installation token was minted with (GitHub enforces them).
        self._install_token_perms: dict[str, dict[str, str]] = {}
        self._install_tokens: dict[str, str] = {}
        self._diff_cache: dict[tuple[str, str], list[dict]] = {}
        self._zip_cache: dict[int, bytes] = {}
        self._tarball_cache: dict[str, bytes] = {}
        # GitHub's repository `size` (KB); None: measured from the world's git objects. Tests set it
        # to exercise clients' size caps.
        self.repo_size_kb: int | None = None
        self._load_state()
        self.routes = self._routes()
        self._server = ThreadingHTTPServer((HOST, port), make_handler(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), name="infx-sandbox",
                                        daemon=True)
        self._thread.start()
        self.port = self._server.server_address[1]
        self.url = f"http://{HOST}:{self.port}"

    # ----- lifecycle and observation -------------------------------------------------------

    def __enter__(self) -> "Emulator":
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)
        self._server = None  # type: ignore[assignment]
        self.git.close()
        for other in self.others.values():
            other.reader.close()
        shutil.rmtree(self._tmp, ignore_errors=True)

    @property
    def head_sha(self) -> str:
        with self._lock:
            return self._chain[-1]

    @property
    def effects(self) -> list[dict]:
        with self._lock:
            return [dict(e) for e in self._effects]

    def reset_counters(self) -> None:
        """Forget request counts and the request log (effects and violations are kept)."""
        with self._lock:
            self.requests.clear()
            self.request_log.clear()

    def assert_clean(self) -> None:
        with self._lock:
            if self.violations:
                raise AssertionError("emulator saw unexpected requests:\n  " + "\n  ".join(self.violations))

    def push(self, change: str | Mapping[str, str | bytes | None], *, message: str | None = None,
             delete: list[str] = ()) -> str:  # type: ignore[assignment]
        """Append a commit to the PR's head branch and return its SHA. `change` is an overlay
        directory name under the world's commits/ (or a path), or {path: content or None to delete}."""
        with self._lock:
            self._clock += timedelta(minutes=1)
            when = self._clock
            if isinstance(change, str):
                overlay = Path(change) if Path(change).is_absolute() else self.world_dir / COMMITS_DIR / change
                if not overlay.is_dir():
                    raise FileNotFoundError(f"no overlay directory {overlay}")
                sha = apply_change(self.repo_path, overlay_dir=overlay, delete=list(delete),
                                   message=message or change, author=author_of(self.world.pr.author), when=when)
                self.shas[change] = sha
            else:
                sha = apply_change(self.repo_path, files=change, delete=list(delete), message=message or "Update",
                                   author=author_of(self.world.pr.author), when=when)
            self._chain.append(sha)
            return sha

    def push_empty(self, n: int, *, message: str = "Empty commit {i}") -> list[str]:
        """Append `n` commits that change no file to the PR's head branch in one `git fast-import`
        (a PR longer than GitHub lists, without n subprocesses); returns their SHAs, oldest first."""
        with self._lock:
            parent = self._chain[-1]
            stamp = int(self._clock.timestamp())
            name, email = author_of(self.world.pr.author)
            stream = []
            for i in range(n):
                text = message.format(i=i + 1).encode()
                stream.append(f"commit refs/heads/{self.world.head_branch}\nmark :{i + 1}\n"
                              f"author {name} <{email}> {stamp + i} +0000\n"
                              f"committer {name} <{email}> {stamp + i} +0000\ndata {len(text)}\n".encode()
                              + text + (f"\nfrom {parent}\n" if i == 0 else "\n").encode())
            marks = self._tmp / "marks"
            git(self.repo_path, "fast-import", "--quiet", "--force", f"--export-marks={marks}",
                input=b"".join(stream))
            by_mark = dict(line.split() for line in marks.read_text().splitlines())
            shas = [by_mark[f":{i + 1}"] for i in range(n)]
            self._clock += timedelta(seconds=n + 60)
            self._chain.extend(shas)
            return shas

    # ----- dispatch ------------------------------------------------------------------------

    def _record(self, method: str, path: str, route: str, status: int | str, actor: str | None,
                body: bytes = b"") -> None:
        entry: dict[str, Any] = {"method": method, "path": path, "route": route, "status": status, "actor": actor}
        if body:
            # Kept so tests can scan what clients sent (e.g. that no token leaks into a write).
            entry["body"] = body[:LOGGED_BODY_MAX].decode("utf-8", "replace")
        with self._lock:
            self.requests[route] += 1
            self.request_log.append(entry)

    def handle(self, method: str, raw_path: str, headers: Mapping[str, str], body: bytes) -> Response | str:
        """Answer one request. Returns the Response, or FAULT_DROP to close without answering."""
        parsed = urllib.parse.urlsplit(raw_path)
        path, prefix = parsed.path, ""
        if path.startswith(API_PREFIX + "/"):
            path, prefix = path[len(API_PREFIX):], API_PREFIX
        self._local.prefix = prefix
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(parsed.query, keep_blank_values=True).items()}
        if self.latency_ms:
            time.sleep(self.latency_ms / 1000)
        found = self.match(method, path.rstrip("/") or "/")
        template = f"{method} {found[0].template}" if found else f"{method} {path}"
        if found is None and self.strict:
            with self._lock:
                self.violations.append(f"{method} {raw_path}")
        fault = self._draw_fault()
        actor = None
        ghost: int | str | None = None
        if fault == FAULT_DROP:
            self._record(method, raw_path, template, FAULT_DROP, None, body)
            return FAULT_DROP
        try:
            if fault is not None:
                raise Fault(fault)
            if found is None:
                raise not_found()
            route, params = found
            if route.auth != "none":
                actor = self._authenticate(route, headers)
            with self._lock:
                if route.auth == "token":
                    self._roll_rate_window()
                    if self._rate_used[actor or ""] >= self.rate_limit:
                        # Refused before anything is applied; it does not count as used.
                        raise HttpError(self.limit_status, MSG_PRIMARY_LIMIT)
                    self._rate_used[actor or ""] += 1
                    self._check_token_permission(route, method)
                try:
                    data = json.loads(body) if body else None
                except ValueError:
                    raise HttpError(400, MSG_BAD_JSON) from None
                req = Request(method, path, query, headers, data, params, actor)
                resp = route.handler(req)
                ghost = self._draw_ghost(method, template, resp.status)
                if ghost is not None:
                    self.ghost_writes.append((method, raw_path, ghost))
            if ghost == FAULT_DROP:
                self._record(method, raw_path, template, FAULT_DROP, actor, body)
                return FAULT_DROP
            if ghost is not None:
                raise Fault(ghost)
        except Fault as f:
            resp = fault_response(f.kind, self.retry_after_s, self.limit_status)
        except HttpError as e:
            payload: dict[str, Any] = {"message": e.message, "documentation_url": DOCS, "status": str(e.status)}
            if e.errors:
                payload["errors"] = e.errors
            resp = Response(e.status, payload)
        except Exception as e:  # an emulator bug: answer like GitHub would, and fail assert_clean()
            with self._lock:
                self.violations.append(f"emulator error on {method} {raw_path}: {type(e).__name__}: {e}")
            resp = Response(500, {"message": MSG_SERVER_ERROR[500], "documentation_url": DOCS, "status": "500"})
        with self._lock:
            resp.headers.update(self._rate_headers(actor))
            if self.record_responses and isinstance(resp.body, (dict, list)):
                self.responses.append((template, resp.status, json.loads(json.dumps(resp.body, default=str))))
        self._record(method, raw_path, template, resp.status, actor, body)
        return resp


def make_handler(emu: Emulator) -> type[BaseHTTPRequestHandler]:
    class _Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in separate writes; with Nagle on, delayed ACKs add ~40 ms each.
        disable_nagle_algorithm = True
        server_version = "infx-sandbox"

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            result = emu.handle(self.command, self.path, self.headers, body)
            if result == FAULT_DROP:
                self.close_connection = True
                try:
                    self.connection.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
                return
            assert isinstance(result, Response)
            if result.body is None:
                payload = b""
            elif isinstance(result.body, bytes):
                payload = result.body
            else:
                payload = json.dumps(result.body).encode()
            self.send_response(result.status)
            if result.body is not None:
                self.send_header("Content-Type", result.content_type)
            self.send_header("Content-Length", str(len(payload)))
            for k, v in result.headers.items():
                self.send_header(k, v)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(payload)

        do_GET = do_POST = do_PATCH = do_DELETE = do_PUT = do_HEAD = _serve

    return _Handler
