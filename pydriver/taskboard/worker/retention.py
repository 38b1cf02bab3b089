"""Retention: workers whose login may prune delete jobs that finished longer ago than
`retention`.

taskboard.prune is the admin role's only (from schema 0.4.5; 0.3.0 to 0.4.4
granted it to workers too): a worker login that could delete jobs could
claim any due job, fail it without retry and prune it. So a worker prunes
only when its login is also granted the admin role; any other worker login
is told once in the log and keeps every job, and retention is then
`taskboard prune --older-than DURATION` run as an admin (from cron, say).

Such a worker prunes, on its control connection between claims, one batch
at a time: a full batch is followed by another on the next pass, anything
less by a pause of about a minute (never more than half the retention),
jittered so that workers started together spread out. Concurrent prunes
skip each other's rows (taskboard.prune locks with SKIP LOCKED), so two
workers never wait on each other, and a batch is small enough that a claim
queued behind it waits milliseconds.

A login that may not call prune is told once in the log; the worker then
stops pruning.
"""

from __future__ import annotations

import logging
import random
import time
from typing import Any

import psycopg
from psycopg import errors as pgerrors

from taskboard.sql.worker import Queries

log = logging.getLogger("taskboard.worker")

PRUNE_EVERY_SECONDS = 60.0
PRUNE_BATCH = 1000
JITTER = 0.2  # each pause is its length times 1 ± this


class Pruner:
    """Decides when the control loop prunes, and prunes one batch when asked."""

    def __init__(self, retention: float, queries: Queries) -> None:
        self.retention = retention
        self.queries = queries
        self.every = min(PRUNE_EVERY_SECONDS, retention / 2)
        self.next_at = time.monotonic() + random.uniform(0, self.every)
        self.allowed = True
        self.deleted = 0

    def due(self) -> bool:
        return self.allowed and time.monotonic() >= self.next_at

    def seconds_until_due(self) -> float:
        if not self.allowed:
            return float("inf")
        return max(0.0, self.next_at - time.monotonic())

    async def run(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """Prune one batch; other errors propagate to the control loop, which retries."""
        try:
            deleted = await self.queries.prune(conn, self.retention, PRUNE_BATCH)
        except pgerrors.InsufficientPrivilege:
            self.allowed = False
            log.warning(
                "retention: this login may not prune finished jobs (prune is the admin "
                "role's): finished jobs are kept; run `taskboard prune --older-than "
                "DURATION` as an admin (from cron, say), grant this login the admin role, "
                "or set TASKBOARD_RETENTION=none to silence this"
            )
            return
        self.deleted += deleted
        if deleted >= PRUNE_BATCH:
            self.next_at = time.monotonic()  # more to do: again on the next pass
            return
        pause = self.every * random.uniform(1 - JITTER, 1 + JITTER)
        self.next_at = time.monotonic() + pause
        if deleted:
            log.info("retention: pruned %d finished jobs", deleted)
