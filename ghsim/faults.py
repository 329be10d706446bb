"""Fault injection: server errors, secondary rate limits, dropped connections and ghost writes
(applied, then answered as failed), drawn from seeded generators so a run is reproducible."""
from __future__ import annotations

from .http import DOCS, WRITE_METHODS, Response

FAULT_DROP = "drop"
FAULT_RATE_LIMIT = "rate_limit"
# What a secondary-rate-limit fault asks the client to wait; GitHub sends whole seconds, and a
# fault benchmark may lower it to 0 to measure the retry logic rather than the sleeping.
DEFAULT_RETRY_AFTER_S = 1
# A ghost write is applied and then answered as if it failed: what GitHub does when a 5xx or a
# dropped connection comes after the write landed. Its draws use their own generator, so adding
# ghosts never changes which requests the other knobs fail.
GHOST_STATUS = 502
GHOST_SEED = "ghost-writes:{seed}"
MSG_SECONDARY_LIMIT = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID sandbox."
)
MSG_SERVER_ERROR = {500: "Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}


class Faults:
    """The fault knobs' draws (the Emulator's constructor sets the rates and generators)."""

    def _draw_fault(self) -> str | int | None:
        with self._lock:
            if self.rate_limit_first > 0:
                self.rate_limit_first -= 1
                return FAULT_RATE_LIMIT
            if not (self.drop_rate or self.fail_rate or self.rate_limit_rate):
                return None
            u = self._rng.random()
            code = self._rng.choice(sorted(MSG_SERVER_ERROR))
        if u < self.drop_rate:
            return FAULT_DROP
        if u < self.drop_rate + self.fail_rate:
            return code
        if u < self.drop_rate + self.fail_rate + self.rate_limit_rate:
            return FAULT_RATE_LIMIT
        return None

    def _draw_ghost(self, method: str, template: str, status: int) -> int | str | None:
        """For a write that was applied: the failure to answer instead (502 or a dropped
        connection), or None. Called under the state lock, so draws follow the write order."""
        if method not in WRITE_METHODS or status >= 400 or not self.ghost_write_rate:
            return None
        if self.ghost_write_only is not None and self.ghost_write_only not in template:
            return None
        if self.ghost_write_limit is not None and len(self.ghost_writes) >= self.ghost_write_limit:
            return None
        u, drop = self._ghost_rng.random(), self._ghost_rng.random() < 0.5
        if u >= self.ghost_write_rate:
            return None
        return FAULT_DROP if drop else GHOST_STATUS


class Fault(Exception):
    def __init__(self, kind: str | int):
        super().__init__(str(kind))
        self.kind = kind


def fault_response(kind: str | int, retry_after_s: int | None = DEFAULT_RETRY_AFTER_S,
                    status: int = 403) -> Response:
    if kind == FAULT_RATE_LIMIT:
        return Response(status, {"message": MSG_SECONDARY_LIMIT, "documentation_url":
                                 "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"},
                        {} if retry_after_s is None else {"Retry-After": str(int(retry_after_s))})
    code = int(kind)
    return Response(code, {"message": MSG_SERVER_ERROR[code], "documentation_url": DOCS, "status": str(code)})
