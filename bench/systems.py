"""The queues under test, each behind the same small interface.

A system knows how to:
- install its schema into a template database (`install`),
- enqueue no-op jobs with its own batch API, one call per batch, and say how
  long the calls took, connecting not counted (`enqueue_batches`),
- enqueue one job at a time, each committed on its own (`producer`),
- say how many jobs are not finished yet (`REMAINING`, plain SQL),
- run one worker at a given concurrency that calls `on_job(seq)` first thing
  in every handler, until `stop` is set (`run_worker`).

Each peer runs as its documentation sets it up, defaults kept, with the
same connection budget where it has a pool: Taskboard pool_size =
concurrency + 2 (two of its own, `concurrency` for handlers), Procrastinate
a psycopg pool of concurrency + 2, PgQueuer its default single asyncpg
connection (batch_size = min(10, concurrency // 2), as its own check
requires max_concurrent_tasks >= 2 * batch_size).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

OnJob = Callable[[int], None]
Enqueue = Callable[[int], Awaitable[None]]

REPO = Path(__file__).resolve().parents[1]
TASK = "noop"


def sqitch_target(url: str) -> str:
    return "db:pg:" + url.split(":", 1)[1]


class Taskboard:
    name = "taskboard"
    label = "Taskboard"
    REMAINING = "SELECT count(*) FROM taskboard.jobs WHERE state <> 'succeeded'"

    @staticmethod
    def version() -> str:
        from importlib.metadata import version

        return version("taskboard")

    @staticmethod
    async def install(url: str) -> None:
        proc = await asyncio.create_subprocess_exec(
            "sqitch",
            "deploy",
            "--verify",
            sqitch_target(url),
            cwd=REPO / "db",
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        output, _ = await proc.communicate()
        if proc.returncode != 0:
            raise RuntimeError(f"sqitch deploy failed:\n{output.decode(errors='replace')}")

    @staticmethod
    async def enqueue_batches(url: str, batches: list[range]) -> float:
        import psycopg

        from taskboard import sql

        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            started = time.perf_counter()
            for seqs in batches:
                params = sql.enqueue_many_params(
                    TASK, [{"seq": s} for s in seqs], "default", None, 0, 5, None
                )
                await sql.aenqueue_many(conn, params)
            return time.perf_counter() - started

    @staticmethod
    @contextlib.asynccontextmanager
    async def producer(url: str) -> AsyncIterator[Enqueue]:
        import psycopg

        from taskboard import Taskboard as App
        from taskboard.settings import load_settings

        app = App(load_settings(database_url=url))
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:

            async def enqueue(seq: int) -> None:
                await app.aenqueue(TASK, {"seq": seq}, conn=conn)

            yield enqueue

    @staticmethod
    async def run_worker(url: str, concurrency: int, on_job: OnJob, stop: asyncio.Event) -> None:
        from taskboard import Taskboard as App
        from taskboard.settings import load_settings

        app = App(load_settings(database_url=url, pool_size=concurrency + 2))

        @app.task(TASK)
        async def noop(ctx: Any, payload: Any) -> None:
            on_job(payload["seq"])

        await app.worker(stop=stop)


class Procrastinate:
    name = "procrastinate"
    label = "Procrastinate"
    REMAINING = "SELECT count(*) FROM procrastinate_jobs WHERE status <> 'succeeded'"

    @staticmethod
    def version() -> str:
        from importlib.metadata import version

        return version("procrastinate")

    @staticmethod
    def _app(url: str, pool: int | None = None) -> Any:
        import procrastinate

        kwargs: dict[str, Any] = {"conninfo": url}
        if pool is not None:
            kwargs.update(min_size=pool, max_size=pool)
        return procrastinate.App(connector=procrastinate.PsycopgConnector(**kwargs))

    @classmethod
    async def install(cls, url: str) -> None:
        app = cls._app(url)
        async with app.open_async():
            await app.schema_manager.apply_schema_async()

    @classmethod
    def _with_task(cls, url: str, on_job: OnJob | None = None, pool: int | None = None) -> Any:
        app = cls._app(url, pool)

        @app.task(name=TASK)
        async def noop(seq: int) -> None:
            if on_job is not None:
                on_job(seq)

        return app

    @classmethod
    async def enqueue_batches(cls, url: str, batches: list[range]) -> float:
        app = cls._with_task(url, pool=1)
        async with app.open_async():
            started = time.perf_counter()
            for seqs in batches:
                await app.tasks[TASK].batch_defer_async(*({"seq": s} for s in seqs))
            return time.perf_counter() - started

    @classmethod
    @contextlib.asynccontextmanager
    async def producer(cls, url: str) -> AsyncIterator[Enqueue]:
        app = cls._with_task(url, pool=1)
        async with app.open_async():
            task = app.tasks[TASK]

            async def enqueue(seq: int) -> None:
                await task.defer_async(seq=seq)

            yield enqueue

    @classmethod
    async def run_worker(
        cls, url: str, concurrency: int, on_job: OnJob, stop: asyncio.Event
    ) -> None:
        app = cls._with_task(url, on_job, pool=concurrency + 2)
        async with app.open_async():
            worker = asyncio.create_task(
                app.run_worker_async(concurrency=concurrency, install_signal_handlers=False)
            )
            stopped = asyncio.create_task(stop.wait())
            await asyncio.wait([worker, stopped], return_when=asyncio.FIRST_COMPLETED)
            if worker.done():
                worker.result()  # it died: say why
            worker.cancel()  # procrastinate stops gracefully on cancellation
            with contextlib.suppress(asyncio.CancelledError):
                await worker


class PgQueuer:
    name = "pgqueuer"
    label = "PgQueuer"
    REMAINING = "SELECT count(*) FROM pgqueuer"

    @staticmethod
    def version() -> str:
        from importlib.metadata import version

        return version("pgqueuer")

    @staticmethod
    def _dsn(url: str) -> str:
        return url  # asyncpg takes the same postgresql:// URI, host=/socket/dir included

    @classmethod
    async def install(cls, url: str) -> None:
        import asyncpg
        from pgqueuer import AsyncpgDriver, Queries

        conn = await asyncpg.connect(cls._dsn(url))
        try:
            await Queries(AsyncpgDriver(conn)).install()
        finally:
            await conn.close()

    @classmethod
    async def enqueue_batches(cls, url: str, batches: list[range]) -> float:
        import asyncpg
        from pgqueuer import AsyncpgDriver, Queries

        conn = await asyncpg.connect(cls._dsn(url))
        try:
            queries = Queries(AsyncpgDriver(conn))
            started = time.perf_counter()
            for seqs in batches:
                await queries.enqueue(
                    [TASK] * len(seqs), [str(s).encode() for s in seqs], [0] * len(seqs)
                )
            return time.perf_counter() - started
        finally:
            await conn.close()

    @classmethod
    @contextlib.asynccontextmanager
    async def producer(cls, url: str) -> AsyncIterator[Enqueue]:
        import asyncpg
        from pgqueuer import AsyncpgDriver, Queries

        conn = await asyncpg.connect(cls._dsn(url))
        try:
            queries = Queries(AsyncpgDriver(conn))

            async def enqueue(seq: int) -> None:
                await queries.enqueue(TASK, str(seq).encode())

            yield enqueue
        finally:
            await conn.close()

    @classmethod
    async def run_worker(
        cls, url: str, concurrency: int, on_job: OnJob, stop: asyncio.Event
    ) -> None:
        import asyncpg
        from pgqueuer import Job
        from pgqueuer import PgQueuer as App

        conn = await asyncpg.connect(cls._dsn(url))
        try:
            app = App.from_asyncpg_connection(conn)

            @app.entrypoint(TASK)
            async def noop(job: Job) -> None:
                on_job(int(job.payload or b"0"))

            batch = max(1, min(10, concurrency // 2))
            runner = asyncio.create_task(
                app.run(batch_size=batch, max_concurrent_tasks=concurrency)
            )
            stopped = asyncio.create_task(stop.wait())
            await asyncio.wait([runner, stopped], return_when=asyncio.FIRST_COMPLETED)
            if runner.done():
                runner.result()
            app.shutdown.set()
            await runner
        finally:
            await conn.close()


SYSTEMS: dict[str, Any] = {s.name: s for s in (Taskboard, Procrastinate, PgQueuer)}
# Shown in the table when a later increment adds them (pg-boss needs Node 22).
PLANNED = {"pg-boss": "pg-boss (Node): not run in this increment"}
