"""Shared by the Oban for Python scripts that bench/systems.py and bench/run.py start with
bench/.venv312's Python 3.12 (Oban needs 3.12; the bench's own venv may be older).

Each script is the Python-3.12 twin of a Node peer's script: install.py, enqueue.py,
producer.py and worker.py take the same arguments and speak the same protocol as
bench/graphile/*.mjs. Oban runs as its own `oban start` runs it: uvloop's event loop
and orjson for JSON when they are installed (they come with oban), its defaults
otherwise, no per-job log lines (its telemetry logger stays detached, as the other
peers log warnings only).
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Coroutine
from typing import Any

from oban import Job, Oban, worker
from psycopg_pool import AsyncConnectionPool

QUEUE = "default"


def on_job_default(seq: int) -> None:
    pass


@worker(queue=QUEUE)
class Noop:
    """The no-op job: calls `on_job(seq)` first thing, then awaits `work_s` when set."""

    on_job: Callable[[int], None] = staticmethod(on_job_default)
    work_s = 0.0

    async def process(self, job: Job) -> None:
        Noop.on_job(job.args["seq"])
        if Noop.work_s:
            await asyncio.sleep(Noop.work_s)


def new_job(seq: int) -> Job:
    return Noop.new({"seq": seq})


async def pool(url: str, size: int) -> AsyncConnectionPool:
    """An open pool of `size` connections (opened at once, as the other peers' pools are)."""
    return await Oban.create_pool(url, min_size=size, max_size=size)


def run(main: Coroutine[Any, Any, Any]) -> Any:
    """Run `main` the way `oban start` does: uvloop and orjson when installed."""
    try:
        import orjson
        from psycopg.types.json import set_json_dumps, set_json_loads

        set_json_dumps(orjson.dumps)
        set_json_loads(orjson.loads)
    except ImportError:
        pass
    try:
        import uvloop
    except ImportError:
        return asyncio.run(main)
    return uvloop.run(main)


def fail(message: str) -> None:
    print(message, file=sys.stderr)
    sys.exit(2)
