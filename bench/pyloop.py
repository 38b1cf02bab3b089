"""The worker's Python per job, without a database.

The control loop (Control's passes on the control connection: the finished
batch's complete_many and the next claim in one statement, then waiting for
the handlers to end) and the executor drain N no-op jobs,
C at a time, through the real `taskboard.sql.worker.Queries`, whose statements go to
a stand-in connection that answers the rows the database would (as psycopg
hands them over: dicts, the payload as text). What it times is everything the
worker's own Python does per job: decoding the claim's rows, holding each in
the ledger, its handler's task, settling, building the next statement's
parameters and reading its answer. Not measured: psycopg's and the server's
work. Prints the CPU time (process time) and the wall time per job.

    .venv/bin/python bench/pyloop.py [N] [C] [--runs R]   # defaults 20000 32, 1 run
"""

from __future__ import annotations

import argparse
import asyncio
import datetime as dt
import statistics
import time
import uuid
from typing import Any

from psycopg.rows import dict_row

from taskboard.settings import load_settings
from taskboard.sql.worker import Queries
from taskboard.tasks import Task
from taskboard.worker.control import Control
from taskboard.worker.executor import Executor
from taskboard.worker.held import Ledger

# The columns of the worker's claim statements (schema 0.4.x), in order.
CLAIM = ("job_id", "token", "task", "payload", "attempt", "lease_expires_at", "idempotency_key")
EXTRAS = ("fence", "trace_context", "waited")
COMPLETED_THEN_CLAIMED = ("job_id", "completed", *CLAIM[1:], *EXTRAS)


class Cursor:
    def __init__(self, conn: Connection, as_dicts: bool) -> None:
        self.conn = conn
        self.as_dicts = as_dicts

    async def __aenter__(self) -> Cursor:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def execute(self, query: str, params: Any) -> None:
        self.conn.statements += 1

    async def fetchall(self) -> list[Any]:
        columns, tuples = self.conn.answers.pop()
        if self.as_dicts:  # what psycopg's dict_row does with each row
            return [dict(zip(columns, row, strict=True)) for row in tuples]
        return tuples


class Connection:
    """Answers each statement with the next prepared rows: tuples, as psycopg hands them
    over (tuple_row, the default), or made into dicts for a cursor made with dict_row, as
    psycopg does."""

    broken = False
    closed = False

    def __init__(self) -> None:
        self.answers: list[tuple[tuple[str, ...], list[tuple[Any, ...]]]] = []
        self.statements = 0

    def cursor(self, row_factory: Any = None) -> Cursor:
        return Cursor(self, row_factory is dict_row)


def claim_rows(ids: range, lease: dt.datetime) -> list[dict[str, Any]]:
    """claim's rows for `ids`, by column name."""
    return [
        {
            "job_id": i,
            "completed": None,
            "token": uuid.uuid4(),
            "task": "t",
            "payload": f'{{"seq": {i}}}',
            "attempt": 1,
            "lease_expires_at": lease,
            "idempotency_key": uuid.uuid4(),
            "fence": i,
            "trace_context": None,
            "waited": dt.timedelta(0),
        }
        for i in ids
    ]


def answer(
    rows: list[dict[str, Any]], columns: tuple[str, ...]
) -> tuple[tuple[str, ...], list[tuple[Any, ...]]]:
    """`rows` as tuples of `columns`."""
    return columns, [tuple(row.get(c) for c in columns) for row in rows]


async def noop(ctx: Any, payload: Any) -> None:
    return None


async def drain(n: int, c: int) -> tuple[float, float]:
    settings = load_settings(
        database_url="postgresql://bench.invalid/none",
        worker_name="bench",
        pool_size=c + 2,
        queues=["q"],
    )
    queries = Queries()
    ledger = Ledger("bench")
    tasks = {"t": Task(name="t", handler=noop, queue="q", timeout=None, transactional=False)}
    executor = Executor(
        tasks=tasks,
        settings=settings,
        queries=queries,
        ledger=ledger,
        pool=None,  # type: ignore[arg-type]
    )
    control = Control(
        settings=settings,
        queries=queries,
        ledger=ledger,
        executor=executor,
        queues=["q"],
        connect=lambda url: None,
        stopping=asyncio.Event(),
        finished=asyncio.Event(),
    )
    conn = Connection()
    lease = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=30)
    # Every statement's answer, made before the clock starts (last first: popped).
    batches = [range(i, min(i + c, n + 1)) for i in range(1, n + 1, c)]
    answers = [answer(claim_rows(batches[0], lease), (*CLAIM, *EXTRAS))]
    for done, nxt in zip(batches, [*batches[1:], range(0)], strict=True):
        rows = [{"job_id": i, "completed": True, "token": None} for i in done]
        answers.append(answer([*rows, *claim_rows(nxt, lease)], COMPLETED_THEN_CLAIMED))
    conn.answers = answers[::-1]

    cpu, wall = time.process_time(), time.perf_counter()
    session = asyncio.create_task(control._session(conn, False, ()))  # type: ignore[arg-type]
    while ledger.counts.succeeded < n:
        ledger.changed.clear()
        await ledger.changed.wait()
    control.finished.set()
    ledger.wake.set()
    await session
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert ledger.counts.succeeded == n and not len(ledger), ledger.counts.line()
    return cpu / n * 1e6, wall / n * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("n", type=int, nargs="?", default=20000, help="jobs (20000)")
    parser.add_argument("c", type=int, nargs="?", default=32, help="handlers (32)")
    parser.add_argument("--runs", type=int, default=1, help="drains, each in a new loop (1)")
    args = parser.parse_args()
    figures = [asyncio.run(drain(args.n, args.c)) for _ in range(args.runs)]
    for cpu, wall in figures:
        print(f"{args.n} jobs, c={args.c}: {cpu:.1f} µs CPU a job, {wall:.1f} µs wall")
    if args.runs > 1:
        cpu = statistics.median(f[0] for f in figures)
        print(f"median of {args.runs}: {cpu:.1f} µs CPU a job")


if __name__ == "__main__":
    main()
