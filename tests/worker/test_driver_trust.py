"""Regressions: the driver is as trustworthy as the SQL it calls.

Each test is named after a failure the driver had: a stale handler told it
still held its job, a finished charge run again after a transient error, a
job left `running` forever, a worker killed by a poison job, renewal stuck
behind one locked row. Workers run in-process against a real PostgreSQL;
faults are real server errors (row locks, timeouts, cancelled and
terminated backends) or, where PostgreSQL has no way to cause one on
demand (a serialization failure or deadlock in one statement, a prepared
statement a pooler dropped), a real server error raised by a statement a
Queries subclass sends on the worker's own connection first.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable
from typing import Any

import psycopg
import psycopg.sql
import pytest

from taskboard import AsyncContext, JobEvent, SyncContext, Taskboard
from taskboard.sql import worker as sql_worker
from tests.support.database import MakeDatabase, connect, make_runnable, value
from tests.support.inprocess import (
    FAST,
    finished,
    job,
    make_app,
    only_error,
    run_worker_until,
    worker_running,
)

ADMIN = "taskboard_admin"
DEADLINE_SECONDS = 90.0


async def wait_for(condition: Callable[[], Any], what: str) -> Any:
    """Poll `condition` (in a thread: it may query the database) until it is truthy."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while True:
        found = await asyncio.to_thread(condition)
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def events_of(app: Taskboard) -> list[JobEvent]:
    seen: list[JobEvent] = []
    app.on_event(seen.append)
    return seen


def control_backend(url: str, waiting_on_lock: bool = True) -> int | None:
    """The pid of the in-process worker's connection blocked on a row lock, if any."""
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE application_name = 'taskboard inproc'"
            " AND datname = current_database() AND wait_event_type = 'Lock'"
            " AND query LIKE '%complete_many%'"
        ).fetchone()
    return None if row is None else int(row[0])


# -- 1. still_holder answers for its own claim ------------------------------------


def test_stale_handler_is_not_told_it_holds_a_job_the_same_worker_claimed_again(
    make_database: MakeDatabase,
) -> None:
    """Cancelled, retried and claimed again by the same worker: the first handler's
    still_holder() asks for its own token, not for whoever holds the job id now.

    retry makes such a job due only when the cancelled lease ends; here it is made due at
    once, as a retry of a schema before 0.4.2 or an operator's UPDATE does."""
    url = make_database(deploy=True)
    app = make_app(url)
    starts: list[AsyncContext] = []
    answers: dict[int, bool] = {}
    second_started = asyncio.Event()

    @app.task("charge")
    async def charge(ctx: AsyncContext, payload: Any) -> int:
        starts.append(ctx)
        n = len(starts)
        if n == 1:
            await second_started.wait()
        else:
            second_started.set()
        answers[n] = await ctx.still_holder()
        return n

    async def main() -> None:
        job_id = app.enqueue("charge", max_attempts=1)
        # Long renewals: the first claim is not given up before its handler asks.
        async with worker_running(app, pool_size=4, lease=60, renew_every=20):
            await wait_for(lambda: len(starts) == 1, "the first claim")
            with connect(url, ADMIN) as admin:
                assert value(admin, "SELECT taskboard.cancel(%s)", [job_id]) is True
                assert value(admin, "SELECT taskboard.retry(%s)", [job_id]) is True
            await asyncio.to_thread(make_runnable, url, job_id)
            await wait_for(lambda: len(answers) == 2, "both handlers' holder checks")
            await wait_for(finished(url, job_id), "the job to finish")
        assert starts[0].token != starts[1].token
        assert starts[0].job_id == starts[1].job_id == job_id
        assert answers == {1: False, 2: True}
        row = job(url, job_id)
        assert (row["state"], row["result"], row["lease_token"]) == (
            "succeeded",
            2,
            starts[1].token,
        )

    asyncio.run(main())
    app.close()


def test_a_job_retried_after_a_cancel_starts_again_only_once_its_first_handler_was_given_up(
    make_database: MakeDatabase,
) -> None:
    """Cancel a running job and retry it at once: no second handler starts beside the
    first. The job is due when the cancelled lease ends; the first handler is given up
    before, at the renewal the cancel refuses."""
    url = make_database(deploy=True)
    app = make_app(url)
    seen: list[str] = []

    @app.task("charge")
    async def charge(ctx: AsyncContext, payload: Any) -> int:
        n = sum(1 for what in seen if what.startswith("start"))
        seen.append(f"start {n + 1}")
        if n == 0:
            try:
                await asyncio.sleep(DEADLINE_SECONDS)
            except asyncio.CancelledError:
                seen.append("given up 1")
                raise
        return n + 1

    async def main() -> None:
        job_id = app.enqueue("charge", max_attempts=1)
        async with worker_running(app, pool_size=4, lease=2):
            await wait_for(lambda: seen == ["start 1"], "the first claim")
            deadline = job(url, job_id)["lease_expires_at"]
            with connect(url, ADMIN) as admin:
                assert value(admin, "SELECT taskboard.cancel(%s)", [job_id]) is True
                assert value(admin, "SELECT taskboard.retry(%s)", [job_id]) is True
            assert job(url, job_id)["run_at"] == deadline
            await wait_for(finished(url, job_id), "the job to finish")
        assert seen == ["start 1", "given up 1", "start 2"]
        row = job(url, job_id)
        assert (row["state"], row["result"], row["attempt"], row["fence"]) == ("succeeded", 2, 1, 2)
        assert row["started_at"] >= deadline

    asyncio.run(main())
    app.close()


# -- 2. a succeeded handler is never run again for a transient error --------------


DROP_PREPARED = "drop the prepared statements"


class FailsFirst(sql_worker.Queries):
    """The first completions sent meet a real server error raised just before them."""

    def __init__(self, statement: str, times: int = 1, after: int = 0) -> None:
        self.statement = statement
        self.times = times
        self.after = after  # completions that go through untouched first
        self.calls = 0

    async def _fault(self, conn: psycopg.AsyncConnection[Any]) -> None:
        self.calls += 1
        if not self.after < self.calls <= self.after + self.times:
            return
        if self.statement != DROP_PREPARED:
            await conn.execute(self.statement)
            return
        # As a pooler that hands the session another server connection: the
        # statements psycopg prepared are gone, and psycopg does not know it.
        cur = await conn.execute("SELECT name FROM pg_prepared_statements")
        for (name,) in await cur.fetchall():
            await conn.execute(
                psycopg.sql.SQL("DEALLOCATE {}").format(psycopg.sql.Identifier(name))
            )

    async def complete_many(self, conn: Any, *args: Any) -> Any:
        await self._fault(conn)
        return await super().complete_many(conn, *args)

    async def complete_many_then_claim(self, conn: Any, *args: Any) -> Any:
        await self._fault(conn)
        return await super().complete_many_then_claim(conn, *args)


INTERRUPTS = {
    "cancelled_statement": "pg_cancel_backend",
    "broken_connection": "pg_terminate_backend",
}
EXPECTED_ERROR = {
    "lock_timeout": "LockNotAvailable",
    "statement_timeout": "QueryCanceled: canceling statement due to statement timeout",
    "cancelled_statement": "QueryCanceled: canceling statement due to user request",
    "broken_connection": "terminating connection due to administrator command",
}


def raising(sqlstate: str) -> str:
    return (
        "DO $$ BEGIN RAISE EXCEPTION 'injected before the completion' "
        f"USING ERRCODE = '{sqlstate}'; END $$"
    )


@pytest.mark.parametrize(
    "fault",
    [
        "lock_timeout",
        "statement_timeout",
        "cancelled_statement",
        "broken_connection",
        "serialization_failure",
        "deadlock",
        "prepared_statement_dropped",
    ],
)
def test_succeeded_handler_is_not_run_again_when_its_completion_meets_a_transient_error(
    make_database: MakeDatabase, fault: str
) -> None:
    url = make_database(deploy=True)
    overrides: dict[str, Any] = {}
    queries: sql_worker.Queries | None = None
    if fault == "statement_timeout":
        overrides["database_url"] = url + "&options=-c%20statement_timeout%3D300"
    elif fault == "serialization_failure":
        queries = FailsFirst(raising("40001"), times=2)
    elif fault == "deadlock":
        queries = FailsFirst(raising("40P01"), times=2)
    elif fault == "prepared_statement_dropped":
        # Prepared at once; the second job's completion finds its statement gone.
        overrides["prepare_threshold"] = 0
        queries = FailsFirst(DROP_PREPARED, after=1)
    app = make_app(url)
    runs: list[int] = []
    seen = events_of(app)
    gate = threading.Event()

    @app.task("charge")
    def charge(ctx: SyncContext, payload: Any) -> str:
        runs.append(ctx.job_id)
        gate.wait(DEADLINE_SECONDS)
        return "charged"

    locked = fault in (
        "lock_timeout",
        "statement_timeout",
        "cancelled_statement",
        "broken_connection",
    )

    async def main() -> list[int]:
        jobs = [app.enqueue("charge", max_attempts=3) for _ in range(2)]
        async with worker_running(app, queries=queries, **overrides):
            if not locked:
                gate.set()
                await wait_for(finished(url, *jobs), "both jobs to finish")
                return jobs
            await wait_for(lambda: len(runs) == 1, "the first handler")
            with psycopg.connect(url) as admin:
                # An admin's open transaction holds the job's row while the handler returns.
                admin.execute("SELECT 1 FROM taskboard.jobs WHERE id = %s FOR UPDATE", [jobs[0]])
                gate.set()
                expected = EXPECTED_ERROR[fault]

                def hit() -> bool:
                    if any(e.kind == "send_failed" and expected in str(e.error) for e in seen):
                        return True
                    pid = control_backend(url) if fault in INTERRUPTS else None
                    if pid is not None:
                        with psycopg.connect(url, autocommit=True) as other:
                            other.execute(f"SELECT {INTERRUPTS[fault]}(%s)", [pid])
                    return False

                await wait_for(hit, f"a completion that met {expected}")
                admin.rollback()
            await wait_for(finished(url, *jobs), "both jobs to finish")
        return jobs

    jobs = asyncio.run(main())
    for job_id in jobs:
        row = job(url, job_id)
        assert (row["state"], row["attempt"], row["result"]) == ("succeeded", 1, "charged"), row
    assert sorted(runs) == sorted(jobs), "a handler ran twice"
    failed = [str(e.error) for e in seen if e.kind == "send_failed"]
    assert failed, "the fault never hit a completion"
    if fault in ("serialization_failure", "deadlock", "prepared_statement_dropped"):
        expected = {
            "serialization_failure": "SerializationFailure",
            "deadlock": "DeadlockDetected",
            "prepared_statement_dropped": "InvalidSqlStatementName",
        }[fault]
        assert any(expected in error for error in failed), failed
    assert not [e for e in seen if e.kind == "lost"]
    app.close()


# -- 3. every way a handler ends settles its job; none kills the worker -----------


class StrRaises(Exception):
    def __str__(self) -> str:
        raise RuntimeError("no text for you")


ENDINGS: dict[str, tuple[BaseException, str]] = {
    "cancelled_error": (asyncio.CancelledError("from the handler"), "CancelledError"),
    "system_exit": (SystemExit(3), "SystemExit: 3"),
    "keyboard_interrupt": (KeyboardInterrupt(), "KeyboardInterrupt"),
    "str_raises": (StrRaises(), "StrRaises: <str() of the exception raised RuntimeError>"),
    "lone_surrogate": (ValueError("bad \udc80 text"), "ValueError: bad \\udc80 text"),
    "nul": (ValueError("bad \x00 byte"), "ValueError: bad \\0 byte"),
}


@pytest.mark.parametrize("flavour", ["async", "sync"])
@pytest.mark.parametrize("ending", list(ENDINGS))
def test_handler_ending_any_way_settles_its_job_and_the_worker_goes_on(
    make_database: MakeDatabase, ending: str, flavour: str
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    raised, error = ENDINGS[ending]

    if flavour == "async":

        @app.task("poison")
        async def poison(ctx: AsyncContext, payload: Any) -> None:
            raise raised

    else:

        @app.task("poison")
        def poison_sync(ctx: SyncContext, payload: Any) -> None:
            raise raised

    @app.task("fine")
    async def fine(ctx: AsyncContext, payload: Any) -> str:
        return "ok"

    bad = app.enqueue("poison", max_attempts=1)
    run_worker_until(app, finished(url, bad))
    assert only_error(url, bad).startswith(error)
    good = app.enqueue("fine")
    run_worker_until(app, finished(url, good))
    assert job(url, good)["state"] == "succeeded"
    app.close()


class ClaimFailsOnce(sql_worker.Queries):
    def __init__(self) -> None:
        self.failed = False

    async def claim(self, conn: Any, *args: Any) -> Any:
        if not self.failed:
            self.failed = True
            await conn.execute(raising("55P03"))  # lock_not_available, say
        return await super().claim(conn, *args)


def test_a_statement_error_on_the_control_connection_is_logged_and_retried_not_fatal(
    make_database: MakeDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("fine")
    async def fine(ctx: AsyncContext, payload: Any) -> str:
        return "ok"

    job_id = app.enqueue("fine")
    queries = ClaimFailsOnce()
    with caplog.at_level(logging.WARNING, logger="taskboard.worker"):
        run_worker_until(app, finished(url, job_id), queries=queries)
    assert queries.failed
    assert any("injected before the completion" in r.getMessage() for r in caplog.records)
    assert job(url, job_id)["state"] == "succeeded"
    app.close()


class ClaimAnsweredLate(sql_worker.Queries):
    """The first claim that finds jobs is made on the server at once, and its answer
    reaches the worker only when `answer` is set: a claim still on its way."""

    def __init__(self) -> None:
        self.claimed = asyncio.Event()
        self.answer = asyncio.Event()

    async def claim(self, conn: Any, *args: Any) -> Any:
        rows = await super().claim(conn, *args)
        if rows and not self.claimed.is_set():
            self.claimed.set()
            await self.answer.wait()
        return rows


def test_a_claim_answered_after_the_stop_began_is_run_not_left_holding_a_lease(
    make_database: MakeDatabase,
) -> None:
    """The database handed the job out; the worker, stopping with no handler running,
    waits for the claim's answer and runs what it holds, instead of exiting with the
    job running under a lease no one renews."""
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("fine")
    async def fine(ctx: AsyncContext, payload: Any) -> str:
        return "ok"

    job_id = app.enqueue("fine")
    queries = ClaimAnsweredLate()

    async def main() -> None:
        stop = asyncio.Event()
        worker = asyncio.create_task(app.worker(stop=stop, queries=queries, **FAST))
        await asyncio.wait_for(queries.claimed.wait(), DEADLINE_SECONDS)
        stop.set()
        await asyncio.sleep(0.5)  # the shutdown begins, the claim's answer still on its way
        queries.answer.set()
        await asyncio.wait_for(worker, DEADLINE_SECONDS)

    asyncio.run(main())
    assert job(url, job_id)["state"] == "succeeded"
    app.close()


def test_payload_python_cannot_decode_fails_its_own_job_and_not_the_worker(
    make_database: MakeDatabase,
) -> None:
    """jsonb takes nesting deeper than Python's recursion limit and integers of more than
    4,300 digits; decoding them in the claim used to kill every worker that claimed one."""
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("t")
    async def t(ctx: AsyncContext, payload: Any) -> str:
        return "ran"

    with psycopg.connect(url, autocommit=True) as conn:
        deep, huge, fine = (
            value(conn, "SELECT taskboard.enqueue('t', %s::jsonb, max_attempts => 1)", [p])
            for p in ("[" * 1100 + "]" * 1100, '{"n": ' + "9" * 5000 + "}", "{}")
        )

    def row(job_id: int) -> tuple[Any, ...]:
        # Not the payload: the test's own psycopg could not decode it either.
        with psycopg.connect(url, autocommit=True) as conn:
            got = conn.execute(
                "SELECT state, attempt, errors->0->>'error', result FROM taskboard.jobs"
                " WHERE id = %s",
                [job_id],
            ).fetchone()
        assert got is not None
        return tuple(got)

    run_worker_until(
        app,
        lambda: all(row(j)[0] in ("succeeded", "dead") for j in (deep, huge, fine)),
        pool_size=5,
    )
    assert row(deep)[:2] == ("dead", 1)
    assert str(row(deep)[2]).startswith("the payload cannot be decoded: RecursionError")
    assert row(huge)[:2] == ("dead", 1)
    assert str(row(huge)[2]).startswith("the payload cannot be decoded: ValueError")
    assert row(fine) == ("succeeded", 1, None, "ran")
    app.close()


def test_transactional_result_jsonb_refuses_completes_the_job_once_with_its_writes(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE public.ledger (job_id bigint)")
    app = make_app(url)
    runs: list[int] = []

    @app.task("charge", transactional=True)
    async def charge(ctx: AsyncContext, payload: Any) -> str:
        assert ctx.conn is not None
        runs.append(ctx.attempt)
        await ctx.conn.execute("INSERT INTO public.ledger VALUES (%s)", [ctx.job_id])
        return "card \ud800 charged"

    job_id = app.enqueue("charge", max_attempts=3)
    run_worker_until(app, finished(url, job_id))
    row = job(url, job_id)
    assert (row["state"], row["attempt"]) == ("succeeded", 1), row
    assert row["result"] == {
        "taskboard_result_not_stored": "the result holds a lone surrogate, which jsonb cannot store"
    }
    assert runs == [1]
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM public.ledger").fetchone() == (1,)
    app.close()


class ClaimWithCompletionsFails(sql_worker.Queries):
    """The claim that travels with completions meets a real server error, once."""

    def __init__(self) -> None:
        self.failed = False

    async def complete_many_then_claim(self, conn: Any, *args: Any) -> Any:
        if not self.failed:
            self.failed = True
            await conn.execute(raising("22023"))
        return await super().complete_many_then_claim(conn, *args)


def test_an_error_of_the_claim_sent_with_completions_never_costs_their_results(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("charge")
    async def charge(ctx: AsyncContext, payload: Any) -> dict[str, int]:
        return {"charge_id": ctx.job_id}

    jobs = [app.enqueue("charge") for _ in range(4)]
    queries = ClaimWithCompletionsFails()
    run_worker_until(app, finished(url, *jobs), queries=queries)
    assert queries.failed
    for job_id in jobs:
        row = job(url, job_id)
        assert (row["state"], row["attempt"], row["result"]) == (
            "succeeded",
            1,
            {"charge_id": job_id},
        ), row
    app.close()


# -- 4. renewal never stalls behind one locked row ---------------------------------


def test_renewal_keeps_other_leases_while_an_admin_holds_one_row_locked(
    make_database: MakeDatabase,
) -> None:
    """An admin holds `BEGIN; SELECT taskboard.cancel(a)` open past the lease: b's lease
    is kept; a is tried again at each renewal, and lost only because it was cancelled."""
    url = make_database(deploy=True)
    app = make_app(url)
    seen = events_of(app)
    gates = {"a": threading.Event(), "b": threading.Event()}

    @app.task("hold")
    def hold(ctx: SyncContext, payload: Any) -> str:
        gates[payload["name"]].wait(DEADLINE_SECONDS)
        return str(payload["name"])

    async def main() -> tuple[int, int]:
        a = app.enqueue("hold", {"name": "a"}, max_attempts=1)
        b = app.enqueue("hold", {"name": "b"}, max_attempts=1)
        async with worker_running(app, pool_size=4, lease=3, renew_every=1):
            await wait_for(
                lambda: len([e for e in seen if e.kind == "started"]) == 2, "both handlers"
            )

            def renewals_of_b() -> int:
                return len([e for e in seen if e.kind == "renewed" and e.job_id == b])

            async def hold_a_locked(renewals: int, then_commit: bool) -> None:
                """Hold `cancel(a)` open until b was renewed `renewals` more times."""
                with connect(url, ADMIN, autocommit=False) as admin:
                    assert value(admin, "SELECT taskboard.cancel(%s)", [a]) is True
                    target = renewals_of_b() + renewals
                    await wait_for(lambda: renewals_of_b() >= target, f"{renewals} renewals of b")
                    if then_commit:
                        admin.commit()
                    else:
                        admin.rollback()

            # A short hold that ends in ROLLBACK: a is only delayed, never lost.
            await hold_a_locked(1, then_commit=False)
            assert not [e for e in seen if e.kind == "lost"]
            # A hold past the lease (3 s) that commits the cancel.
            await hold_a_locked(4, then_commit=True)
            await wait_for(
                lambda: any(e.kind == "lost" and e.job_id == a for e in seen), "a to be lost"
            )
            gates["a"].set()
            gates["b"].set()
            await wait_for(finished(url, a, b), "both jobs to finish")
        return a, b

    a, b = asyncio.run(main())
    assert job(url, a)["state"] == "cancelled"
    row = job(url, b)
    assert (row["state"], row["attempt"], row["result"]) == ("succeeded", 1, "b")
    assert not [e for e in seen if e.kind == "lost" and e.job_id == b]
    app.close()


# -- 6. timeouts and transactional handlers ----------------------------------------


def test_sync_handler_abandoned_at_its_timeout_sees_ctx_lost(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    saw_lost = threading.Event()

    @app.task("slow_sync", timeout=0.5)
    def slow_sync(ctx: SyncContext, payload: Any) -> None:
        deadline = time.monotonic() + DEADLINE_SECONDS
        while not ctx.lost and time.monotonic() < deadline:
            time.sleep(0.02)
        if ctx.lost:
            saw_lost.set()

    job_id = app.enqueue("slow_sync", max_attempts=1)
    run_worker_until(app, lambda: finished(url, job_id)() and saw_lost.is_set())
    assert only_error(url, job_id).startswith("TimeoutError: task 'slow_sync' ran past")
    app.close()


@pytest.mark.parametrize("escape", ["commit", "rollback", "sql_commit"])
def test_transactional_handler_that_ends_its_own_transaction_fails_its_attempt(
    make_database: MakeDatabase, escape: str
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE public.ledger (job_id bigint)")
        conn.execute("GRANT ALL ON public.ledger TO PUBLIC")
    app = make_app(url)

    @app.task("escape", transactional=True)
    async def escape_fence(ctx: AsyncContext, payload: Any) -> None:
        assert ctx.conn is not None
        await ctx.conn.execute("INSERT INTO public.ledger VALUES (%s)", [ctx.job_id])
        if escape == "commit":
            await ctx.conn.commit()
        elif escape == "rollback":
            await ctx.conn.rollback()
        else:
            await ctx.conn.execute("COMMIT")
        await ctx.conn.execute("INSERT INTO public.ledger VALUES (%s)", [-ctx.job_id])

    job_id = app.enqueue("escape", max_attempts=1)
    run_worker_until(app, finished(url, job_id))
    error = only_error(url, job_id)
    assert error.startswith("FenceEscaped: transactional task 'escape' committed or rolled back"), (
        error
    )
    with psycopg.connect(url, autocommit=True) as conn:
        rows = {r[0] for r in conn.execute("SELECT job_id FROM public.ledger").fetchall()}
    # What the handler committed itself is out of the fence's reach; the rest rolled back.
    assert rows == ({job_id} if escape != "rollback" else set())
    app.close()


def test_transactional_handler_whose_complete_waits_past_the_lease_is_not_given_up(
    make_database: MakeDatabase,
) -> None:
    """The handler returned and its complete waits on a row lock longer than the lease:
    the database's answer decides, not the watchdog."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE public.ledger (job_id bigint)")
        conn.execute("GRANT ALL ON public.ledger TO PUBLIC")
    app = make_app(url)
    seen = events_of(app)
    gate = asyncio.Event()

    @app.task("post", transactional=True)
    async def post(ctx: AsyncContext, payload: Any) -> str:
        assert ctx.conn is not None
        await ctx.conn.execute("INSERT INTO public.ledger VALUES (%s)", [ctx.job_id])
        await gate.wait()
        return "posted"

    async def main() -> int:
        job_id = app.enqueue("post", max_attempts=1)
        async with worker_running(app, lease=2, renew_every=0.5):
            await wait_for(lambda: any(e.kind == "started" for e in seen), "the handler")
            with psycopg.connect(url) as admin:
                admin.execute("SELECT 1 FROM taskboard.jobs WHERE id = %s FOR UPDATE", [job_id])
                gate.set()
                await wait_for(
                    lambda: any(e.kind == "sending" for e in seen), "the complete on its way"
                )
                await asyncio.sleep(3)  # longer than the lease: the watchdog would have struck
                admin.rollback()
            await wait_for(finished(url, job_id), "the job to finish")
        return job_id

    job_id = asyncio.run(main())
    row = job(url, job_id)
    assert (row["state"], row["attempt"], row["result"]) == ("succeeded", 1, "posted")
    assert not [e for e in seen if e.kind == "lost"]
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM public.ledger").fetchone() == (1,)
    app.close()


# -- 7. queues given to the worker are the queues it claims from ------------------


@pytest.mark.parametrize("how", ["worker", "settings"])
def test_worker_claims_from_the_queues_it_was_given(make_database: MakeDatabase, how: str) -> None:
    url = make_database(deploy=True)
    app = (
        make_app(url)
        if how == "worker"
        else Taskboard(make_app(url).settings.model_copy(update={"queues": ["other"]}))
    )

    @app.task("echo", queue="mine")
    async def echo(ctx: AsyncContext, payload: Any) -> str:
        return "done"

    elsewhere = app.enqueue("echo", queue="other")
    registered = app.enqueue("echo")
    overrides = {"queues": ["other"]} if how == "worker" else {}
    run_worker_until(app, finished(url, elsewhere), **overrides)
    assert job(url, registered)["state"] == "queued"
    app.close()
