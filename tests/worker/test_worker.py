"""The Python worker in-process: what a handler's outcome does to its job, and enqueue.

Each test runs `await app.worker(stop=...)` on a fresh database until the
jobs it enqueued are settled, then stops it. Process-level behaviour
(signals, stalls, kills, restarts) is in tests/process/.
"""

from __future__ import annotations

import asyncio
import logging
import re
from typing import Any

import psycopg
import pytest

from taskboard import (
    AsyncContext,
    JobEvent,
    SchemaVersionError,
    SyncContext,
    Taskboard,
    TaskError,
    load_settings,
)
from taskboard.testing import run_until_empty
from tests.support.database import MakeDatabase
from tests.support.inprocess import (
    FAST,
    finished,
    job,
    make_app,
    only_error,
    run_worker_until,
)

# -- enqueue ---------------------------------------------------------------------


def test_enqueue_in_a_rolled_back_transaction_leaves_no_job(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    with psycopg.connect(url) as conn:
        conn.execute("CREATE TABLE public.orders (id int)")
        conn.commit()
        conn.execute("INSERT INTO public.orders VALUES (1)")
        undone = app.enqueue("mail", {"order": 1}, conn=conn)
        conn.rollback()
        conn.execute("INSERT INTO public.orders VALUES (2)")
        kept = app.enqueue("mail", {"order": 2}, conn=conn)
        conn.commit()
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT (taskboard.get_job(%s)).state", [undone]).fetchone() == (None,)
        assert conn.execute("SELECT (taskboard.get_job(%s)).state", [kept]).fetchone() == (
            "queued",
        )
        assert conn.execute("SELECT count(*) FROM taskboard.jobs").fetchone() == (1,)
    assert job(url, kept)["payload"] == {"order": 2}
    app.close()


def test_aenqueue_joins_the_callers_async_transaction(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    async def main() -> tuple[int, int]:
        async with await psycopg.AsyncConnection.connect(url) as conn:
            undone = await app.aenqueue("mail", conn=conn)
            await conn.rollback()
            kept = await app.aenqueue("mail", conn=conn)
            await conn.commit()
            return undone, kept

    undone, kept = asyncio.run(main())
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute(
            "SELECT count(*) FROM taskboard.jobs WHERE id = %s", [undone]
        ).fetchone() == (0,)
    assert job(url, kept)["state"] == "queued"


# -- registering tasks ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "options", "says"),
    [
        ("", {}, "a task's name must not be empty"),
        (123, {}, "a task's name must be a string"),
        ("t", {"queue": ""}, "task 't': queue must not be empty"),
        ("t", {"queue": "q" * 201}, "task 't': queue must be at most 200 characters"),
        ("t", {"queue": None}, "task 't': queue must be a string"),
        ("t", {"timeout": float("nan")}, "task 't': timeout must be a positive number"),
        ("t", {"timeout": float("inf")}, "task 't': timeout must be a positive number"),
        ("t", {"timeout": 0}, "task 't': timeout must be a positive number"),
    ],
)
def test_task_registration_refuses_what_the_worker_could_never_run(
    name: Any, options: dict[str, Any], says: str
) -> None:
    app = Taskboard(load_settings(database_url="postgresql:///unused"))
    with pytest.raises(TaskError, match=f"^{re.escape(says)}"):
        app.task(name, **options)


# -- outcomes ----------------------------------------------------------------------


def test_handler_sees_its_job_and_lease(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    seen: dict[str, Any] = {}

    @app.task("look")
    async def look(ctx: AsyncContext, payload: Any) -> dict[str, Any]:
        seen.update(
            job_id=ctx.job_id,
            attempt=ctx.attempt,
            token=ctx.token,
            payload=payload,
            ctx_payload=ctx.payload,
            idempotency_key=ctx.idempotency_key,
            fence=ctx.fence,
            lost=ctx.lost,
            holder=await ctx.still_holder(),
        )
        return {"ok": True}

    @app.task("look_sync")
    def look_sync(ctx: SyncContext, payload: Any) -> list[int]:
        seen["sync_holder"] = ctx.still_holder()
        return [1, 2]

    job_id = app.enqueue("look", {"to": "maya"})
    sync_id = app.enqueue("look_sync")
    outcomes = run_until_empty(app)

    assert sorted((o.job_id, o.state, o.attempt, o.result) for o in outcomes) == [
        (job_id, "succeeded", 1, {"ok": True}),
        (sync_id, "succeeded", 1, [1, 2]),
    ]
    row = job(url, job_id)
    assert seen == {
        "job_id": job_id,
        "attempt": 1,
        "token": row["lease_token"],
        "payload": {"to": "maya"},
        "ctx_payload": {"to": "maya"},
        "idempotency_key": row["idempotency_key"],
        "fence": row["fence"],
        "lost": False,
        "holder": True,
        "sync_holder": True,
    }
    app.close()


def test_each_claim_of_a_job_hands_its_handler_a_higher_fence(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    fences: dict[int, list[int | None]] = {}

    @app.task("flaky")
    async def flaky(ctx: AsyncContext, payload: Any) -> None:
        fences.setdefault(ctx.job_id, []).append(ctx.fence)
        if payload["fail"] and ctx.attempt == 1:
            raise RuntimeError("not yet")

    # Enough jobs that later claims ride on the batched completions' statement.
    ids = [app.enqueue("flaky", {"fail": n % 4 == 0}) for n in range(12)]
    run_worker_until(app, finished(url, *ids))

    for job_id in ids:
        assert fences[job_id] == list(range(1, len(fences[job_id]) + 1)), fences
        assert job(url, job_id)["fence"] == len(fences[job_id])
    assert sorted({len(seen) for seen in fences.values()}) == [1, 2]
    app.close()


def test_unknown_task_is_handed_back_without_burning_attempts_until_a_worker_knows_it(
    make_database: MakeDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    """Rolling deploys: an old worker claims a job of a task only new workers know."""
    url = make_database(deploy=True)
    old = make_app(url)

    @old.task("known")
    async def known(ctx: AsyncContext, payload: Any) -> None:
        return None

    released: list[JobEvent] = []
    old.on_event(lambda e: released.append(e) if e.kind == "released" else None)
    job_id = old.enqueue("new-task", queue="default", max_attempts=1)
    with caplog.at_level(logging.WARNING, logger="taskboard.worker"):
        run_worker_until(old, lambda: len(released) >= 2, unknown_task_delay=1)
    assert all(e.answer is True and e.job_id == job_id for e in released)
    row = job(url, job_id)
    assert (row["state"], row["attempt"], row["errors"]) == ("queued", 0, []), row
    # The worker's own warning (the enqueue above logs one of taskboard.app's).
    warnings = [
        r for r in caplog.records if r.name == "taskboard.worker" and "new-task" in r.getMessage()
    ]
    assert len(warnings) == 1, [r.getMessage() for r in warnings]

    new = make_app(url)

    @new.task("new-task")
    async def new_task(ctx: AsyncContext, payload: Any) -> int:
        return ctx.attempt

    run_worker_until(new, finished(url, job_id))
    row = job(url, job_id)
    assert (row["state"], row["attempt"], row["result"]) == ("succeeded", 1, 1), row
    old.close()
    new.close()


def not_stored(url: str, job_id: int) -> str:
    """Why the job's result was not stored: the job succeeded on its one attempt regardless."""
    row = job(url, job_id)
    assert (row["state"], row["attempt"], row["errors"]) == ("succeeded", 1, []), row
    assert list(row["result"]) == ["taskboard_result_not_stored"], row["result"]
    return str(row["result"]["taskboard_result_not_stored"])


def test_unserialisable_result_completes_the_job_and_records_why_it_was_not_stored(
    make_database: MakeDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("returns_a_set")
    async def returns_a_set(ctx: AsyncContext, payload: Any) -> Any:
        return {1, 2}

    job_id = app.enqueue("returns_a_set", max_attempts=1)
    with caplog.at_level(logging.WARNING, logger="taskboard.worker"):
        run_worker_until(app, finished(url, job_id))
    why = not_stored(url, job_id)
    assert why.startswith("the result is not JSON-serialisable"), why
    assert "set" in why
    assert any("result is not stored" in r.getMessage() for r in caplog.records)


def test_result_jsonb_refuses_completes_its_job_and_spares_the_batch(
    make_database: MakeDatabase,
) -> None:
    """A lone surrogate passes json.dumps but not jsonb: that job completes without its
    result, the rest complete with theirs, and no handler runs twice.
    """
    url = make_database(deploy=True)
    app = make_app(url)
    runs: list[int] = []

    @app.task("echo")
    async def echo(ctx: AsyncContext, payload: Any) -> Any:
        runs.append(ctx.job_id)
        return payload["text"] + ("\ud800" if payload.get("lone_surrogate") else "")

    bad = app.enqueue("echo", {"text": "a", "lone_surrogate": True}, max_attempts=1)
    ok = [app.enqueue("echo", {"text": f"fine {n}"}) for n in range(5)]
    run_worker_until(app, finished(url, bad, *ok), pool_size=4)

    why = not_stored(url, bad)
    assert why == "the result holds a lone surrogate, which jsonb cannot store", why
    for n, job_id in enumerate(ok):
        row = job(url, job_id)
        assert (row["state"], row["attempt"], row["result"]) == ("succeeded", 1, f"fine {n}")
    assert sorted(runs) == sorted([bad, *ok])
    app.close()


@pytest.mark.parametrize("flavour", ["async", "sync"])
def test_exception_fails_the_job_with_its_type_and_message(
    make_database: MakeDatabase, flavour: str
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    if flavour == "async":

        @app.task("fragile")
        async def fragile(ctx: AsyncContext, payload: Any) -> None:
            raise ValueError(f"bad input: {payload['n']}\nsecond line")

    else:

        @app.task("fragile")
        def fragile_sync(ctx: SyncContext, payload: Any) -> None:
            raise ValueError(f"bad input: {payload['n']}\nsecond line")

    job_id = app.enqueue("fragile", {"n": 42}, max_attempts=1)
    run_worker_until(app, finished(url, job_id))
    assert only_error(url, job_id) == "ValueError: bad input: 42"


def test_failed_attempt_with_attempts_left_is_queued_again(
    make_database: MakeDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    attempts: list[int] = []

    @app.task("flaky")
    async def flaky(ctx: AsyncContext, payload: Any) -> str:
        attempts.append(ctx.attempt)
        if ctx.attempt == 1:
            raise RuntimeError("first time unlucky")
        return "fine"

    job_id = app.enqueue("flaky")
    with caplog.at_level(logging.INFO, logger="taskboard"):
        run_worker_until(app, finished(url, job_id))
    row = job(url, job_id)
    assert (row["state"], row["attempt"], row["result"]) == ("succeeded", 2, "fine")
    assert [e["error"] for e in row["errors"]] == ["RuntimeError: first time unlucky"]
    assert attempts == [1, 2]
    assert "stopped: claimed=2 succeeded=1 failed=1 dead=0 lost=0 stale=0 released=0" in caplog.text


# -- transactional tasks -------------------------------------------------------------


def test_transactional_writes_commit_with_the_completion_and_vanish_with_a_failure(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE public.ledger (job_id bigint, note text)")
    app = make_app(url)
    isolation: list[str] = []

    @app.task("book", transactional=True)
    async def book(ctx: AsyncContext, payload: Any) -> str:
        assert ctx.conn is not None
        await ctx.conn.execute(
            "INSERT INTO public.ledger VALUES (%s, %s)", [ctx.job_id, payload["note"]]
        )
        row = await (await ctx.conn.execute("SHOW transaction_isolation")).fetchone()
        assert row is not None
        isolation.append(row[0])
        assert await ctx.still_holder()
        if payload.get("fail"):
            raise LookupError("no such account")
        return "booked"

    ok = app.enqueue("book", {"note": "kept"})
    bad = app.enqueue("book", {"note": "undone", "fail": True}, max_attempts=1)
    run_worker_until(app, finished(url, ok, bad))

    assert job(url, ok)["result"] == "booked"
    assert only_error(url, bad) == "LookupError: no such account"
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT job_id, note FROM public.ledger").fetchall() == [(ok, "kept")]
    assert isolation == ["read committed", "read committed"]


def test_transactional_task_refuses_another_isolation_level(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE public.ledger (job_id bigint)")
    app = make_app(url)

    @app.task("serial", transactional=True)
    async def serial(ctx: AsyncContext, payload: Any) -> None:
        assert ctx.conn is not None
        await ctx.conn.execute("SET TRANSACTION ISOLATION LEVEL SERIALIZABLE")
        await ctx.conn.execute("INSERT INTO public.ledger VALUES (%s)", [ctx.job_id])

    job_id = app.enqueue("serial", max_attempts=1)
    run_worker_until(app, finished(url, job_id))
    error = only_error(url, job_id)
    assert "ISOLATION LEVEL" in error, error
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM public.ledger").fetchone() == (0,)


# -- start-up ------------------------------------------------------------------------


def test_worker_refuses_a_database_without_the_schema(make_database: MakeDatabase) -> None:
    url = make_database(deploy=False)
    app = make_app(url)
    with pytest.raises(SchemaVersionError, match="taskboard migrate"):
        asyncio.run(app.worker(stop=asyncio.Event(), **FAST))
