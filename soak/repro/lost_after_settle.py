"""Reproduce: renewal refuses a job the worker is settling, and the worker calls it lost.

    .venv/bin/python -m soak.repro.lost_after_settle

Seen in the soak (seed 115151578, quick: w2.0, job 576): the control
connection sent `fail` for a job; before its answer arrived, the renewal
connection sent `renew_many` for the same job; the fail had committed, so
the renewal was refused (the job was no longer running), and the worker
logged "lost job 576 (attempt 1): renewal refused" and counted it lost, and
then counted the fail's answer too. The same race exists for `complete`.
Nothing is fenced wrongly, but the warning is false and `lost` is inflated
(an operator alerting on lost jobs sees outages that did not happen).

Here the race is made certain by holding back the answers of `fail`,
`complete_many` and `complete_many_then_claim` for 0.5 s (the database call
itself is not delayed; a Queries subclass handed to the worker waits after
each answer) while renewal runs every 0.1 s. Prints the worker's counters and exits 1 when a
settled job was also counted lost (the behaviour reported), 0 otherwise.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from typing import Any

from soak.runner import OWN_SERVER_PREFIX, OWN_SERVER_SETTINGS, prepare
from taskboard.app import Taskboard
from taskboard.context import AsyncContext
from taskboard.settings import load_settings
from taskboard.sql.worker import Queries
from taskboard.worker import Worker
from taskboard_dev.server import Server

ANSWER_DELAY_S = 0.5


class SlowAnswers(Queries):
    """The answers of fail and complete_many arrive late (they committed at once)."""

    async def fail(self, *args: Any) -> Any:
        answer = await super().fail(*args)
        await asyncio.sleep(ANSWER_DELAY_S)
        return answer

    async def complete_many(self, *args: Any) -> Any:
        answer = await super().complete_many(*args)
        await asyncio.sleep(ANSWER_DELAY_S)
        return answer

    async def complete_many_then_claim(self, *args: Any) -> Any:
        answer = await super().complete_many_then_claim(*args)
        await asyncio.sleep(ANSWER_DELAY_S)
        return answer


async def scenario(worker_url: str) -> int:
    settings = load_settings(
        database_url=worker_url,
        pool_size=3,
        lease=2.0,
        renew_every=0.1,
        worker_name="repro",
        poll_interval=0.2,
    )
    app = Taskboard(settings)

    @app.task("ok", queue="repro")
    async def ok(ctx: AsyncContext, payload: dict[str, Any]) -> None:
        await asyncio.sleep(0.2)

    @app.task("broken", queue="repro")
    async def broken(ctx: AsyncContext, payload: dict[str, Any]) -> None:
        await asyncio.sleep(0.2)
        raise RuntimeError("fails on purpose")

    worker = Worker(app.tasks, settings, queries=SlowAnswers())
    stop = asyncio.Event()
    running = asyncio.create_task(worker.run(stop))
    app.enqueue_many("ok", [{}], queue="repro")
    app.enqueue_many("broken", [{}], queue="repro", max_attempts=1)
    app.close()
    for _ in range(100):
        if worker.counts.succeeded + worker.counts.dead >= 2:
            break
        await asyncio.sleep(0.1)
    stop.set()
    await running
    print(f"counters: {worker.counts.line()}")
    return 1 if worker.counts.lost else 0


def main() -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    server = Server(settings=OWN_SERVER_SETTINGS, prefix=OWN_SERVER_PREFIX)
    try:
        urls = prepare(server.start(), own=True)
        return asyncio.run(scenario(urls.worker))
    finally:
        server.remove()


if __name__ == "__main__":
    sys.exit(main())
