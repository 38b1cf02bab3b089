"""conn= on every public call: the psycopg connection of the call's kind, else one
TypeError that names the call to use or how to reach the psycopg connection."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Iterator
from typing import Any

import psycopg
import pytest
import sqlalchemy
from django.db import connection as django_connection  # type: ignore[import-untyped]
from psycopg.rows import dict_row
from sqlalchemy.orm import Session

from taskboard import SyncContext, Taskboard, TaskHandle, load_settings
from taskboard.sql import session as sql_session
from taskboard.sql import session_async
from tests.support.database import MakeDatabase

# The arguments before conn= of each public call taking it; its async twin is a + name.
ARGS: dict[str, tuple[Any, ...]] = {
    "enqueue": ("note", {}),
    "enqueue_many": ("note", [{}]),
    "pause": ("default",),
    "resume": ("default",),
    "set_queue_limit": ("default", 1),
    "set_key_limit": ("default", 1),
    "set_rate_limit": ("default", 5, 1),
    "set_queue_discard": ("default", False),
    "get_job": (1,),
    "jobs": (),
    "cancel": (1,),
    "retry": (1,),
    "prune": (3600,),
}
HANDLE_ARGS: dict[str, tuple[Any, ...]] = {"enqueue": ({},), "enqueue_many": ([{}],)}


def taking_conn(cls: type) -> set[str]:
    return {
        name
        for name, function in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_") and "conn" in inspect.signature(function).parameters
    }


def test_the_tables_name_every_public_call_taking_conn() -> None:
    assert taking_conn(Taskboard) == set(ARGS) | {"a" + name for name in ARGS}
    assert taking_conn(TaskHandle) == set(HANDLE_ARGS) | {"a" + name for name in HANDLE_ARGS}


@pytest.fixture
def url(make_database: MakeDatabase) -> str:
    return make_database(deploy=True)


@pytest.fixture
def app(url: str) -> Iterator[Taskboard]:
    app = Taskboard(load_settings(database_url=url))
    yield app
    app.close()


def note(ctx: SyncContext, payload: Any) -> None:
    pass


def calls(app: Taskboard, twin: str = "") -> list[tuple[str, Any, tuple[Any, ...]]]:
    """(name, bound method, args) for each call of the app and of a task handle:
    the sync ones, or with twin="a" their async twins."""
    handle = app.task("note")(note)
    return [(name, getattr(app, twin + name), args) for name, args in ARGS.items()] + [
        (name, getattr(handle, twin + name), args) for name, args in HANDLE_ARGS.items()
    ]


def no_jobs(url: str) -> bool:
    with psycopg.connect(url) as conn:
        return conn.execute("SELECT count(*) FROM taskboard.jobs").fetchone() == (0,)


def test_an_async_connection_to_a_sync_call_names_its_async_twin(url: str, app: Taskboard) -> None:
    async def main() -> None:
        async with await psycopg.AsyncConnection.connect(url) as conn:
            for name, call, args in calls(app):
                with pytest.raises(TypeError) as raised:
                    call(*args, conn=conn)
                assert str(raised.value) == (
                    f"{name} needs a psycopg.Connection; with a psycopg.AsyncConnection call a{name}"
                )

    asyncio.run(main())
    assert no_jobs(url)


def test_a_sync_connection_to_an_async_call_names_its_sync_twin(url: str, app: Taskboard) -> None:
    async def main() -> None:
        with psycopg.connect(url) as conn:
            for name, call, args in calls(app, "a"):
                with pytest.raises(TypeError) as raised:
                    await call(*args, conn=conn)
                assert str(raised.value) == (
                    f"a{name} needs a psycopg.AsyncConnection; with a sync psycopg.Connection"
                    f" call {name}"
                )

    asyncio.run(main())
    assert no_jobs(url)


def test_a_sqlalchemy_or_django_object_gets_the_way_to_its_psycopg_connection(
    url: str, app: Taskboard
) -> None:
    engine = sqlalchemy.create_engine(sqlalchemy.make_url(url).set(drivername="postgresql+psycopg"))
    with engine.connect() as connection, Session(engine) as session:
        wrong: list[tuple[Any, str]] = [
            (connection, "sqlalchemy.engine.base.Connection"),
            (session, "sqlalchemy.orm.session.Session"),
            (connection.connection, "sqlalchemy.pool.base._ConnectionFairy"),
        ]
        for given, kind in wrong:
            with pytest.raises(TypeError) as raised:
                app.enqueue("note", {}, conn=given)
            assert str(raised.value).startswith(
                f"enqueue needs a psycopg.Connection as conn, got {kind}; pass the psycopg"
                " connection under it: session.connection().connection.driver_connection"
            )
        # What the recipe passes is accepted.
        assert app.enqueue("note", {}, conn=connection.connection.driver_connection) > 0
        connection.rollback()
    engine.dispose()

    with pytest.raises(TypeError) as raised:
        app.enqueue("note", {}, conn=django_connection)
    assert str(raised.value) == (
        "enqueue needs a psycopg.Connection as conn, got django.utils.connection.ConnectionProxy;"
        " pass the psycopg connection under it: django.db.connection.connection (open inside"
        " transaction.atomic(); the postgresql backend with psycopg 3)"
    )
    with pytest.raises(
        TypeError, match=r"^aenqueue needs a psycopg\.AsyncConnection as conn, got str$"
    ):
        asyncio.run(app.aenqueue("note", {}, conn="postgresql://"))  # type: ignore[arg-type]
    assert no_jobs(url)


def test_every_call_accepts_a_connection_with_a_dict_row_factory(url: str, app: Taskboard) -> None:
    """pause, resume, set_queue_limit, cancel, retry and prune read row[0] through the
    caller's row factory: KeyError: 0 on a dict_row connection."""
    with psycopg.connect(url, autocommit=True, row_factory=dict_row) as conn:
        for _, call, args in calls(app):
            call(*args, conn=conn)  # raised KeyError: 0 for six of them
        # what the first call reads
        assert sql_session.read_schema(conn).version == sql_session.version(conn)

    async def main(app: Taskboard) -> None:
        async with await psycopg.AsyncConnection.connect(
            url, autocommit=True, row_factory=dict_row
        ) as conn:
            for _, call, args in calls(app, "a"):
                await call(*args, conn=conn)
            assert (await session_async.aread_schema(conn)).version == await session_async.aversion(
                conn
            )

    other = Taskboard(load_settings(database_url=url))  # registers its own "note"
    asyncio.run(main(other))
    other.close()


def test_a_closed_connection_or_a_failed_transaction_raises_psycopgs_error(
    url: str, app: Taskboard
) -> None:
    for _, call, args in calls(app):
        with psycopg.connect(url) as conn:
            with pytest.raises(psycopg.errors.DivisionByZero):
                conn.execute("SELECT 1/0")
            with pytest.raises(psycopg.errors.InFailedSqlTransaction):
                call(*args, conn=conn)
        with pytest.raises(psycopg.OperationalError, match="the connection is closed"):
            call(*args, conn=conn)
    assert no_jobs(url)


def test_the_caller_commits_a_job_enqueued_on_its_connection_unless_in_autocommit(
    url: str, app: Taskboard
) -> None:
    with psycopg.connect(url) as conn:
        app.enqueue("note", {}, conn=conn)  # psycopg begins a transaction for it
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        conn.rollback()
    assert no_jobs(url)
    with psycopg.connect(url, autocommit=True) as conn:
        app.enqueue("note", {}, conn=conn)
    assert not no_jobs(url)
