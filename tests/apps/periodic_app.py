"""A worker application with one periodic schedule, for tests/process/test_periodic.py: run it as a subprocess.

    TASKBOARD_DATABASE_URL=... PERIODIC_APP_JOURNAL=/tmp/journal python tests/apps/periodic_app.py

Settings come from the TASKBOARD_* variables. The app's own:

- PERIODIC_APP_JOURNAL (required): a file the worker appends one JSON line
  to, fsynced, for every enqueue_periodic it makes: "sent" with the slot,
  the answer (a job id or null), the worker and its pid.
- PERIODIC_APP_CRON: the schedule's cron (default every two seconds).
- PERIODIC_APP_HOLD (optional): a path. While that file exists, the
  worker's next enqueue_periodic records "held" with its slot and waits,
  slot in hand, until the file is gone: a worker stalled in the middle of
  a pass.

Schedule "tick" enqueues task "tick" on queue "periodic", whose handler
returns the worker's name. Every SQL call goes through the Queries
subclass below, which only observes.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import psycopg

from taskboard import Taskboard, runner
from taskboard.context import AsyncContext
from taskboard.sql import worker as sql_worker
from taskboard_dev.harness import Journal

DEFAULT_CRON = "*/2 * * * * *"
HOLD_POLL_SECONDS = 0.05

app = Taskboard()


def worker_name() -> str:
    return os.environ.get("TASKBOARD_WORKER_NAME", f"pid-{os.getpid()}")


JOURNAL = Journal(Path(os.environ["PERIODIC_APP_JOURNAL"]))


def record(event: str, **fields: Any) -> None:
    JOURNAL.write({"event": event, "worker": worker_name(), "pid": os.getpid(), **fields})


@app.periodic(os.environ.get("PERIODIC_APP_CRON", DEFAULT_CRON), name="tick")
@app.task("tick", queue="periodic")
async def tick(ctx: AsyncContext, payload: Any) -> dict[str, Any]:
    return {"worker": worker_name()}


async def holding() -> bool:
    """Whether the file PERIODIC_APP_HOLD names exists."""
    hold = os.environ.get("PERIODIC_APP_HOLD")
    if not hold:
        return False
    return await asyncio.to_thread(Path(hold).exists)


class JournalingQueries(sql_worker.Queries):
    """Records every enqueue_periodic and its answer; holds one while PERIODIC_APP_HOLD exists."""

    async def enqueue_periodic(
        self,
        conn: psycopg.AsyncConnection[Any],
        schedule: str,
        slot: dt.datetime,
        task: str,
        payload_json: str,
        queue: str,
        priority: int,
        max_attempts: int,
        previous_names: Sequence[str] = (),
    ) -> int | None:
        if await holding():
            record("held", slot=slot.isoformat())
            while await holding():
                await asyncio.sleep(HOLD_POLL_SECONDS)
        job = await super().enqueue_periodic(
            conn, schedule, slot, task, payload_json, queue, priority, max_attempts, previous_names
        )
        record("sent", slot=slot.isoformat(), job=job)
        return job


def main() -> None:
    if "PERIODIC_APP_JOURNAL" not in os.environ:
        sys.exit("periodic_app: PERIODIC_APP_JOURNAL is required")
    logging.basicConfig(
        level=logging.DEBUG if os.environ.get("PERIODIC_APP_DEBUG") else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    runner.run_until_signalled(lambda stop: app.worker(stop=stop, queries=JournalingQueries()))


if __name__ == "__main__":
    main()
