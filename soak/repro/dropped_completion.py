"""Reproduce: a handler that finished during an outage runs again, although nobody reclaimed its job.

    .venv/bin/python -m soak.repro.dropped_completion

Seen in the soak: `make soak SOAK_QUICK=1 SOAK_SEED=178442244` reported
"dropped-completion: 4 handlers had finished ... 4 of them reclaimed only
after the worker had given them up".

One worker (lease 2 s), one job. While its handler runs, the server goes
down (a fast shutdown) for 3 s, longer than the lease; the handler
sends its effect once the server is down and returns. It finished during
the outage:
its completion waits in the worker's outbox for the control connection.
At 2 s the watchdog gives the job up ("no successful renewal before its
lease could have expired") and the worker drops the pending completion.
When the server is back, nobody else has claimed the job, so the same
worker claims it again and the handler runs, and sends its effect, a
second time.

complete is fenced on the token: had the worker sent the completion after
reconnecting, the database would have accepted it (the token was still
current: nobody had reclaimed the job) and the effect would have happened
once. Exits 1 when the effect happened twice (the behaviour reported), 0
when once.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import time
from typing import Any

import psycopg

from soak.runner import OWN_SERVER_PREFIX, OWN_SERVER_SETTINGS, prepare
from taskboard.app import Taskboard
from taskboard.context import AsyncContext
from taskboard.settings import load_settings
from taskboard_dev.server import Server

LEASE_S = 2.0
DOWN_S = 3.0


async def scenario(server: Server, worker_url: str, admin_url: str) -> int:
    app = Taskboard(
        load_settings(
            database_url=worker_url,
            pool_size=3,
            lease=LEASE_S,
            worker_name="repro",
            poll_interval=0.2,
        )
    )
    effects: list[tuple[int, int]] = []
    started = asyncio.Event()
    down = threading.Event()

    def outage() -> None:
        server.stop("fast")
        down.set()
        time.sleep(DOWN_S)
        server.start()

    @app.task("email", queue="repro")
    async def email(ctx: AsyncContext, payload: dict[str, Any]) -> None:
        started.set()
        while not down.is_set() and ctx.attempt == 1:
            await asyncio.sleep(0.05)
        effects.append((ctx.job_id, ctx.attempt))  # the e-mail is sent
        print(f"effect: job {ctx.job_id} attempt {ctx.attempt}", flush=True)

    stop = asyncio.Event()
    worker = asyncio.create_task(app.worker(stop=stop))
    [job_id] = app.enqueue_many("email", [{}], queue="repro")
    app.close()
    await started.wait()
    thread = threading.Thread(target=outage)
    thread.start()
    print(f"server down for {DOWN_S:g} s (lease {LEASE_S:g} s) while the handler runs", flush=True)
    while thread.is_alive():
        await asyncio.sleep(0.1)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            with psycopg.connect(admin_url, autocommit=True) as admin:
                row = admin.execute(
                    "SELECT state, attempt FROM taskboard.jobs WHERE id = %s", [job_id]
                ).fetchone()
        except psycopg.OperationalError:
            row = None
        if row is not None and row[0] not in ("queued", "running"):
            break
        await asyncio.sleep(0.2)
    stop.set()
    await worker
    print(f"job {job_id}: {row[0] if row else '?'} after {row[1] if row else '?'} attempt(s)")
    print(f"{len(effects)} effects: {effects}")
    return 1 if len(effects) > 1 else 0


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    server = Server(settings=OWN_SERVER_SETTINGS, prefix=OWN_SERVER_PREFIX)
    try:
        urls = prepare(server.start(), own=True)
        return asyncio.run(scenario(server, urls.worker, urls.admin))
    finally:
        server.remove()


if __name__ == "__main__":
    sys.exit(main())
