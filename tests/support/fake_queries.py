"""A fake of taskboard.sql.worker.Queries, the worker's one seam to the database, and what the
unit tests build a worker's parts from. No PostgreSQL anywhere.

FakeQueries records every call and answers from a script: `script(method, *answers)`
queues answers for one method, used in order. An answer that is an exception is
raised; an asyncio.Future is awaited first and its result answered (a test holds an
answer back and lets it arrive when it likes). A method with nothing scripted answers
as the database answers the holder of every token: claim finds nothing, complete
completes, fail queues the job again, release releases, renew renews, lease_state
says held, get_job finds no job. A method the worker should not call raises (Queries' own body would need
a real connection).
"""

from __future__ import annotations

import asyncio
import datetime as dt
import time
import uuid
from collections import defaultdict, deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any, cast

import psycopg

from taskboard.context import AsyncContext
from taskboard.settings import Settings, load_settings
from taskboard.sql import admin_async
from taskboard.sql import worker as sql_worker
from taskboard.tasks import Task
from taskboard.worker.executor import Executor
from taskboard.worker.held import Held, Ledger

# Where a test hands the worker a connection: Queries is the seam, so nothing
# reads it but needs_new_connection, which asks whether it is broken or closed.
CONN: Any = SimpleNamespace(broken=False, closed=False)
LEASE_SECONDS = 30.0


@dataclass(frozen=True)
class Call:
    method: str
    args: tuple[Any, ...]


class FakeQueries(sql_worker.Queries):
    """Records calls; answers what was scripted, else what the database tells a holder."""

    def __init__(self) -> None:
        self.calls: list[Call] = []
        self._script: defaultdict[str, deque[Any]] = defaultdict(deque)

    def script(self, method: str, *answers: Any) -> None:
        self._script[method].extend(answers)

    def called(self, method: str) -> list[tuple[Any, ...]]:
        """The arguments (after the connection) of every call of `method`, in order."""
        return [c.args for c in self.calls if c.method == method]

    async def _answer(self, method: str, args: tuple[Any, ...], default: Any) -> Any:
        self.calls.append(Call(method, args))
        queued = self._script[method]
        if not queued:
            return default
        answer = queued.popleft()
        if isinstance(answer, asyncio.Future):
            answer = await answer
        if isinstance(answer, BaseException):
            raise answer
        return answer

    async def listen(self, conn: psycopg.AsyncConnection[Any]) -> None:
        await self._answer("listen", (), None)

    async def claim(
        self, conn: psycopg.AsyncConnection[Any], queue: str, worker: str, batch: int, lease: float
    ) -> list[sql_worker.Claimed]:
        return cast(
            list[sql_worker.Claimed], await self._answer("claim", (queue, worker, batch, lease), [])
        )

    async def renew_many(
        self,
        conn: psycopg.AsyncConnection[Any],
        job_ids: Sequence[int],
        tokens: Sequence[uuid.UUID],
        lease: float,
    ) -> list[dt.datetime | None]:
        deadline = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=lease)
        default = [deadline for _ in job_ids]
        args = (list(job_ids), list(tokens), lease)
        return cast(list[dt.datetime | None], await self._answer("renew_many", args, default))

    async def renew(
        self, conn: psycopg.AsyncConnection[Any], job_id: int, token: uuid.UUID, lease: float
    ) -> dt.datetime | None:
        deadline = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=lease)
        return cast(
            dt.datetime | None, await self._answer("renew", (job_id, token, lease), deadline)
        )

    async def complete(
        self,
        conn: psycopg.AsyncConnection[Any],
        job_id: int,
        token: uuid.UUID,
        result_json: str | None,
    ) -> bool:
        return bool(await self._answer("complete", (job_id, token, result_json), True))

    async def complete_many(
        self,
        conn: psycopg.AsyncConnection[Any],
        job_ids: Sequence[int],
        tokens: Sequence[uuid.UUID],
        results_json: Sequence[str | None],
    ) -> list[tuple[int, bool]]:
        args = (list(job_ids), list(tokens), list(results_json))
        default = [(job_id, True) for job_id in job_ids]
        return cast(list[tuple[int, bool]], await self._answer("complete_many", args, default))

    async def complete_many_then_claim(
        self,
        conn: psycopg.AsyncConnection[Any],
        job_ids: Sequence[int],
        tokens: Sequence[uuid.UUID],
        results_json: Sequence[str | None],
        claim_args: tuple[str, str, int, float],
    ) -> tuple[list[tuple[int, bool]], list[sql_worker.Claimed]]:
        args = (list(job_ids), list(tokens), list(results_json), claim_args)
        nothing: list[sql_worker.Claimed] = []
        default = ([(job_id, True) for job_id in job_ids], nothing)
        return cast(
            tuple[list[tuple[int, bool]], list[sql_worker.Claimed]],
            await self._answer("complete_many_then_claim", args, default),
        )

    async def fail(
        self,
        conn: psycopg.AsyncConnection[Any],
        job_id: int,
        token: uuid.UUID,
        error: str,
        retry_in: float | None = None,
        retry: bool = True,
        traceback: str | None = None,
    ) -> str | None:
        args = (job_id, token, error, retry_in, retry, traceback)
        return cast(str | None, await self._answer("fail", args, "queued"))

    async def release(
        self, conn: psycopg.AsyncConnection[Any], job_id: int, token: uuid.UUID, delay: float
    ) -> bool:
        return bool(await self._answer("release", (job_id, token, delay), True))

    async def lease_state(
        self, conn: psycopg.AsyncConnection[Any], job_id: int, token: uuid.UUID
    ) -> str:
        return str(await self._answer("lease_state", (job_id, token), "held"))

    async def get_job(
        self, conn: psycopg.AsyncConnection[Any], job_id: int
    ) -> admin_async.JobInfo | None:
        return cast(admin_async.JobInfo | None, await self._answer("get_job", (job_id,), None))

    async def prune(self, conn: psycopg.AsyncConnection[Any], older_than: float, batch: int) -> int:
        raise AssertionError("prune is not part of these tests")

    async def clock(self, conn: psycopg.AsyncConnection[Any]) -> dt.datetime:
        raise AssertionError("clock is not part of these tests")


def settings(**overrides: Any) -> Settings:
    """Worker settings for a database that is never reached."""
    values: dict[str, Any] = {
        "database_url": "postgresql://unit.invalid/none",
        "worker_name": "unit",
        "lease": LEASE_SECONDS,
        "pool_size": 6,
        "queues": ["q"],
    }
    values.update(overrides)
    return load_settings(**values)


def row(
    job_id: int, task: str = "ok", *, attempt: int = 1, payload: Any = None
) -> sql_worker.Claimed:
    """A claim row of queue q with a fresh token."""
    return sql_worker.Claimed(
        job_id=job_id,
        token=uuid.uuid4(),
        task=task,
        payload={} if payload is None else payload,
        attempt=attempt,
        lease_expires_at=dt.datetime.now(dt.UTC) + dt.timedelta(seconds=LEASE_SECONDS),
        idempotency_key=uuid.uuid4(),
        queue="q",
    )


def task(name: str, handler: Any, **options: Any) -> Task:
    values: dict[str, Any] = {"queue": "q", "timeout": None, "transactional": False}
    values.update(options)
    return Task(name=name, handler=handler, **values)


def executor(
    queries: FakeQueries,
    ledger: Ledger,
    tasks: Mapping[str, Task] | None = None,
    **overrides: Any,
) -> Executor:
    """An executor without a handler pool: plain handlers need none."""
    return Executor(
        tasks=tasks or {},
        settings=settings(**overrides),
        queries=queries,
        ledger=ledger,
        pool=cast(Any, None),
    )


def hold(ledger: Ledger, claimed: sql_worker.Claimed, *, safe_for: float = LEASE_SECONDS) -> Held:
    """Hold `claimed` in `ledger` (running), its lease safe for `safe_for` seconds more."""

    async def check() -> bool:
        return True

    ctx = AsyncContext(
        job_id=claimed.job_id,
        attempt=claimed.attempt,
        token=claimed.token,
        payload=claimed.payload,
        task=claimed.task,
        idempotency_key=claimed.idempotency_key,
        check=check,
    )
    held = Held(claimed, None, ctx, safe_until=time.monotonic() + safe_for)
    ledger.add(held)
    return held


def held_in(ledger: Ledger, job_id: int) -> Held:
    [held] = [h for h in ledger if h.job_id == job_id]
    return held


async def until(condition: Any, timeout: float = 2.0) -> None:
    """Let the event loop run until `condition()` is true."""
    async with asyncio.timeout(timeout):
        while not condition():
            await asyncio.sleep(0)
