"""A model of GitHub Actions' concurrency groups, to replay bursts of events through the bot the way
GitHub would schedule their jobs.

GitHub's rules (docs: "Control the concurrency of workflows and jobs"; changelog 2026-05-07): a
group has at most one running job. A job queued while another runs is pending. With the default
`queue: single` there is at most one pending job: a newer one cancels the older pending one and
takes its place. With `queue: max` (only with `cancel-in-progress: false`) up to 100 jobs wait
and start first in, first out; what GitHub does past 100 is not documented, and this model cancels
the oldest pending one then. `cancel-in-progress: true` also cancels the running job (not
modelled: the bot never sets it).

Time is virtual: events arrive at given instants, a job runs for a given duration, and a job's
work (the callback) happens when it starts, which is when it reads GitHub's state.
"""
from __future__ import annotations

import heapq
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

QUEUE_SINGLE = "single"
QUEUE_MAX = "max"
QUEUE_LIMIT = 100

Queue = Literal["single", "max"]


@dataclass
class Job:
    """One job of one event: `group` is its concurrency group (None: not in any group)."""

    name: str
    group: str | None
    arrival: float
    duration: float
    payload: Any = None
    state: str = "queued"  # queued -> pending -> running -> completed, or cancelled
    started: float | None = None


@dataclass
class Schedule:
    """What happened: every job in arrival order, and the order they started in."""

    jobs: list[Job] = field(default_factory=list)
    started: list[Job] = field(default_factory=list)

    @property
    def cancelled(self) -> list[Job]:
        return [j for j in self.jobs if j.state == "cancelled"]


def run_schedule(jobs: list[Job], work: Callable[[Job], None], *, queue: Queue = QUEUE_SINGLE,
                 limit: int = QUEUE_LIMIT) -> Schedule:
    """Schedule `jobs` (by arrival) under one of GitHub's queue modes and call `work(job)` when
    each one starts. Jobs without a group start on arrival."""
    out = Schedule(jobs=sorted(jobs, key=lambda j: j.arrival))
    running: dict[str, Job] = {}
    pending: dict[str, deque[Job]] = {}
    # (time, order, kind, job): arrivals and completions; at equal times completions come first,
    # so a job that finishes as another arrives frees the group for it.
    clock: list[tuple[float, int, int, int]] = []
    by_id = {id(j): j for j in out.jobs}
    for n, j in enumerate(out.jobs):
        heapq.heappush(clock, (j.arrival, 1, n, id(j)))
    seq = len(out.jobs)

    def start(job: Job, now: float) -> None:
        nonlocal seq
        job.state, job.started = "running", now
        out.started.append(job)
        if job.group is not None:
            running[job.group] = job
        work(job)
        seq += 1
        heapq.heappush(clock, (now + job.duration, 0, seq, id(job)))

    while clock:
        now, kind, _, jid = heapq.heappop(clock)
        job = by_id[jid]
        if kind == 0:  # completion
            job.state = "completed"
            if job.group is not None and running.get(job.group) is job:
                del running[job.group]
                waiting = pending.get(job.group)
                if waiting:
                    start(waiting.popleft(), now)
            continue
        if job.group is None or job.group not in running:
            start(job, now)
            continue
        waiting = pending.setdefault(job.group, deque())
        cap = 1 if queue == QUEUE_SINGLE else limit
        while len(waiting) >= cap:
            waiting.popleft().state = "cancelled"
        job.state = "pending"
        waiting.append(job)
    return out
