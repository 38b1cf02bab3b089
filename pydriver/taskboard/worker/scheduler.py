"""The scheduler: every worker enqueues the due slot of each periodic schedule; no leader.

It runs on the worker's control connection, between claims. A pass asks
the database for its clock, computes each schedule's latest slot at or
before that time, and sends it to taskboard.enqueue_periodic, which makes
each slot exactly one job however many workers send it: the others get
NULL. So a slot is never decided by this machine's clock. The worker's
monotonic clock only measures how long to wait for the next slot; a pass
that comes early finds no new slot and waits again, and a worker that was
stopped or stalled past a slot sends a slot the database already has.

Slots missed while no worker ran are not caught up: the next pass sends
only the latest.

A slot's identity includes its task and queue: a slot the database says
was taken for another task or queue (two declarations sharing a name) is
logged once as a conflict, never counted as this schedule's job. A renamed
schedule sends its former names along, so no slot they had runs again.
"""

from __future__ import annotations

import datetime as dt
import logging
import math
import time
from collections.abc import Sequence
from typing import Any

import psycopg

from taskboard.periodic import Schedule
from taskboard.sql.worker import Queries
from taskboard.worker.outcomes import describe

log = logging.getLogger("taskboard.worker")

# A pass starts this long after the next slot by the clocks' reckoning, so
# that it finds the slot due on the database clock.
WAKE_MARGIN_SECONDS = 0.05


class Scheduler:
    """Sends each schedule's due slot to the database, once per slot from this worker."""

    def __init__(self, schedules: Sequence[Schedule], queries: Queries) -> None:
        self.schedules = list(schedules)
        self.queries = queries
        # When the next pass is due, on the monotonic clock: at once for the first.
        self._due_at = 0.0 if self.schedules else math.inf
        # The latest slot the database answered for, per schedule.
        self._sent: dict[str, dt.datetime] = {}
        # Schedules whose last call the database refused (logged once until one succeeds).
        self._refused: set[str] = set()

    def due(self) -> bool:
        return time.monotonic() >= self._due_at

    def seconds_until_due(self) -> float:
        """How long until the next pass; 0 when it is due, inf without schedules."""
        return max(self._due_at - time.monotonic(), 0.0)

    async def run(self, conn: psycopg.AsyncConnection[Any]) -> None:
        """Send the latest due slot of every schedule, then set when the next pass is due.

        A statement error the database would repeat for this schedule (a
        missing function or privilege, a refused argument) is logged, and
        the slot is not sent again; any other error propagates, and the
        pass is due again.
        """
        asked = time.monotonic()
        now = await self.queries.clock(conn)
        for schedule in self.schedules:
            slot = schedule.cron.latest(now)
            sent = self._sent.get(schedule.name)
            if slot is None or (sent is not None and slot <= sent):
                continue
            await self._send(conn, schedule, slot)
            self._sent[schedule.name] = slot
        upcoming = [s for s in (schedule.cron.after(now) for schedule in self.schedules) if s]
        if upcoming:
            wait = (min(upcoming) - now).total_seconds() + WAKE_MARGIN_SECONDS
            self._due_at = asked + wait
        else:
            self._due_at = math.inf

    async def _send(
        self, conn: psycopg.AsyncConnection[Any], schedule: Schedule, slot: dt.datetime
    ) -> None:
        try:
            job_id = await self.queries.enqueue_periodic(
                conn,
                schedule.name,
                slot,
                schedule.task,
                schedule.payload_json,
                schedule.queue,
                schedule.priority,
                schedule.max_attempts,
                schedule.previous_names,
            )
        except psycopg.errors.UniqueViolation as exc:
            self._refused_once(schedule, f"conflict: {describe(exc)}")
            return
        except (psycopg.errors.UndefinedFunction, psycopg.errors.UndefinedTable) as exc:
            self._refused_once(schedule, f"{describe(exc)}: run `taskboard migrate`")
            return
        except (psycopg.errors.InsufficientPrivilege, psycopg.DataError) as exc:
            self._refused_once(schedule, describe(exc))
            return
        self._refused.discard(schedule.name)
        if job_id is None:
            log.debug("schedule %s: slot %s already has its job", schedule.name, slot.isoformat())
        else:
            log.info(
                "schedule %s: enqueued job %s of task %s for slot %s",
                schedule.name,
                job_id,
                schedule.task,
                slot.isoformat(),
                extra={"job_id": job_id},
            )

    def _refused_once(self, schedule: Schedule, why: str) -> None:
        if schedule.name not in self._refused:
            self._refused.add(schedule.name)
            log.error("schedule %s: the database refused its slot: %s", schedule.name, why)
