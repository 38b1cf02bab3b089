"""The app's producer side against real databases: enqueue, enqueue_many, aenqueue,
aenqueue_many, the errors they raise, and the connections they keep."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from psycopg.rows import class_row, dict_row, namedtuple_row

from taskboard import Taskboard, load_settings
from taskboard.app import ENQUEUE_POOL_MAX
from taskboard.errors import InvalidArgument, PermissionDenied, TaskboardError, translate
from tests.support.database import TERMINATE_WAIT_MS, MakeDatabase, login_role

THREADS = 20
JOBS_PER_THREAD = 20
CONCURRENT_TASKS = 200
DEADLINE_SECONDS = 30.0  # for a closed connection's backend to leave pg_stat_activity
OBSERVER = "test-observer"  # application_name of this module's own connections


def make_app(url: str) -> Taskboard:
    return Taskboard(load_settings(database_url=url))


def job_ids(url: str) -> list[int]:
    with psycopg.connect(url, application_name=OBSERVER) as conn:
        return [row[0] for row in conn.execute("SELECT id FROM taskboard.jobs ORDER BY id")]


def backends(url: str) -> list[int]:
    """The pids of the client backends of the database at `url`, other than this module's
    own (a connection it closed may still be listed while its backend exits)."""
    with psycopg.connect(url, application_name=OBSERVER) as conn:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity"
            " WHERE datname = current_database() AND application_name <> %s"
            " AND backend_type = 'client backend' ORDER BY pid",
            [OBSERVER],
        ).fetchall()
    return [row[0] for row in rows]


def last_enqueue_backend(url: str) -> int:
    """The pid of the backend that ran taskboard.enqueue last in the database at `url`."""
    with psycopg.connect(url, application_name=OBSERVER) as conn:
        row = conn.execute(
            "SELECT pid FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND query LIKE %s ORDER BY query_start DESC LIMIT 1",
            ["%taskboard.enqueue(%"],
        ).fetchone()
    assert row is not None, "no backend ran taskboard.enqueue"
    return int(row[0])


def until(condition: Callable[[], bool]) -> None:
    """Return once `condition()` holds; fail after DEADLINE_SECONDS."""
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not condition():
        assert time.monotonic() < deadline, "the condition did not hold in time"
        time.sleep(0.02)


def terminate_backends(url: str) -> list[int]:
    """pg_terminate_backend every other client backend of the database; their pids."""
    with psycopg.connect(url, application_name=OBSERVER, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT pid, pg_terminate_backend(pid, %s) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND backend_type = 'client backend'",
            [TERMINATE_WAIT_MS],
        ).fetchall()
    assert all(terminated for _, terminated in rows), rows
    return [pid for pid, _ in rows]


@pytest.fixture
def url(make_database: MakeDatabase) -> str:
    return make_database(deploy=True)


@pytest.fixture
def app(url: str) -> Iterator[Taskboard]:
    app = make_app(url)
    yield app
    app.close()


@pytest.fixture
def login(url: str) -> Iterator[str]:
    """The URL of `url`'s database for a LOGIN role granted no taskboard role."""
    with login_role(url) as login:
        yield login


# -- errors ------------------------------------------------------------------------


def enqueue_sync(app: Taskboard, url: str, call: str, task: str) -> None:
    """Enqueue one job of `task` the way `call` names: own connection or `conn`, one or many."""
    many, with_conn = call.startswith("enqueue_many"), call.endswith("conn")
    if with_conn:
        with psycopg.connect(url, application_name=OBSERVER) as conn:
            if many:
                app.enqueue_many(task, [{}], conn=conn)
            else:
                app.enqueue(task, conn=conn)
    elif many:
        app.enqueue_many(task, [{}])
    else:
        app.enqueue(task)


async def enqueue_async(app: Taskboard, url: str, call: str, task: str) -> None:
    """`enqueue_sync` with aenqueue and aenqueue_many; closes the app's async pool after."""
    many, with_conn = call.startswith("enqueue_many"), call.endswith("conn")
    try:
        if with_conn:
            async with await psycopg.AsyncConnection.connect(url) as conn:
                if many:
                    await app.aenqueue_many(task, [{}], conn=conn)
                else:
                    await app.aenqueue(task, conn=conn)
        elif many:
            await app.aenqueue_many(task, [{}])
        else:
            await app.aenqueue(task)
    finally:
        await app.aclose()


CALLS = ["enqueue", "enqueue conn", "enqueue_many", "enqueue_many conn"]


def assert_invalid_task(raised: pytest.ExceptionInfo[InvalidArgument]) -> None:
    assert str(raised.value) == "task must not be NULL or empty"
    assert isinstance(raised.value, ValueError)
    assert isinstance(raised.value, TaskboardError)
    assert raised.value.sqlstate == "22023"
    assert isinstance(raised.value.__cause__, psycopg.errors.InvalidParameterValue)


@pytest.mark.parametrize("call", CALLS)
def test_enqueue_with_an_empty_task_raises_invalid_argument_naming_task(
    app: Taskboard, url: str, call: str
) -> None:
    with pytest.raises(InvalidArgument) as raised:
        enqueue_sync(app, url, call, "")
    assert_invalid_task(raised)
    assert job_ids(url) == []


@pytest.mark.parametrize("call", CALLS)
def test_aenqueue_with_an_empty_task_raises_invalid_argument_naming_task(
    app: Taskboard, url: str, call: str
) -> None:
    with pytest.raises(InvalidArgument) as raised:
        asyncio.run(enqueue_async(app, url, call, ""))
    assert_invalid_task(raised)
    assert job_ids(url) == []


def assert_producer_role_needed(raised: pytest.ExceptionInfo[PermissionDenied]) -> None:
    message = str(raised.value)
    assert message.startswith("permission denied for "), message
    assert message.endswith(
        ": grant taskboard_producer (PREFIX_producer if installed with another prefix) to this login"
    ), message
    assert raised.value.sqlstate == "42501"
    assert isinstance(raised.value.__cause__, psycopg.errors.InsufficientPrivilege)


@pytest.mark.parametrize("call", CALLS)
def test_a_login_without_the_producer_role_gets_permission_denied_naming_it(
    login: str, call: str
) -> None:
    app = make_app(login)
    try:
        with pytest.raises(PermissionDenied) as raised:
            enqueue_sync(app, login, call, "ping")
    finally:
        app.close()
    assert_producer_role_needed(raised)


@pytest.mark.parametrize("call", CALLS)
def test_a_login_without_the_producer_role_gets_permission_denied_naming_it_async(
    login: str, call: str
) -> None:
    app = make_app(login)
    with pytest.raises(PermissionDenied) as raised:
        asyncio.run(enqueue_async(app, login, call, "ping"))
    assert_producer_role_needed(raised)


def test_a_login_granted_the_producer_role_enqueues(url: str) -> None:
    with login_role(url, "taskboard_producer") as producer:
        app = make_app(producer)
        try:
            first = app.enqueue("ping")
            asyncio.run(enqueue_async(app, producer, "enqueue_many", "ping"))
        finally:
            app.close()
    assert job_ids(url)[0] == first
    assert len(job_ids(url)) == 2


def test_other_database_errors_pass_through_translate_unchanged(url: str) -> None:
    with (
        psycopg.connect(url, application_name=OBSERVER) as conn,
        pytest.raises(psycopg.errors.DivisionByZero),
        translate(role_needed="taskboard_producer"),
    ):
        conn.execute("SELECT 1 / 0")


# -- row factories -------------------------------------------------------------------


@dataclass
class OneColumn:
    enqueue: int


ROW_FACTORIES: dict[str, Any] = {  # for Connection and AsyncConnection alike
    "dict_row": dict_row,
    "namedtuple_row": namedtuple_row,
    "class_row": class_row(OneColumn),
}


@pytest.mark.parametrize("factory", ROW_FACTORIES)
def test_enqueue_with_a_dict_row_connection_returns_the_id(
    app: Taskboard, url: str, factory: str
) -> None:
    row_factory = ROW_FACTORIES[factory]
    with psycopg.connect(url, application_name=OBSERVER, row_factory=row_factory) as conn:
        one = app.enqueue("ping", conn=conn)
        many = app.enqueue_many("ping", [{}, {}], conn=conn)

    async def main() -> tuple[int, list[int]]:
        async with await psycopg.AsyncConnection.connect(url, row_factory=row_factory) as conn:
            return (
                await app.aenqueue("ping", conn=conn),
                await app.aenqueue_many("ping", [{}, {}], conn=conn),
            )

    aone, amany = asyncio.run(main())
    assert [one, *many, aone, *amany] == job_ids(url)


# -- the app's own connections ----------------------------------------------------------


def test_aenqueue_many_enqueues_one_job_per_payload_in_order(app: Taskboard, url: str) -> None:
    async def main() -> list[int]:
        try:
            return await app.aenqueue_many("ping", [{"n": n} for n in range(3)], queue="q")
        finally:
            await app.aclose()

    ids = asyncio.run(main())
    with psycopg.connect(url, application_name=OBSERVER) as conn:
        rows = conn.execute("SELECT id, queue, payload FROM taskboard.jobs ORDER BY id").fetchall()
    assert rows == [(job_id, "q", {"n": n}) for n, job_id in enumerate(ids)]


def test_twenty_threads_enqueueing_at_once_all_succeed_on_at_most_the_pool_max_connections(
    app: Taskboard, url: str
) -> None:
    results: list[list[int]] = [[] for _ in range(THREADS)]
    start = threading.Barrier(THREADS)

    def produce(slot: int) -> None:
        start.wait()
        for n in range(JOBS_PER_THREAD):
            results[slot].append(app.enqueue("ping", {"thread": slot, "n": n}))

    threads = [threading.Thread(target=produce, args=(slot,)) for slot in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(job_id for ids in results for job_id in ids) == job_ids(url)
    assert len(job_ids(url)) == THREADS * JOBS_PER_THREAD
    # The pool keeps what it opened (idle connections close after minutes): all are still here.
    assert 1 <= len(backends(url)) <= ENQUEUE_POOL_MAX


def test_two_hundred_concurrent_aenqueues_all_succeed_on_at_most_the_pool_max_connections(
    app: Taskboard, url: str
) -> None:
    async def main() -> tuple[list[int], list[int]]:
        try:
            ids = await asyncio.gather(
                *(app.aenqueue("ping", {"n": n}) for n in range(CONCURRENT_TASKS))
            )
            return list(ids), await asyncio.to_thread(backends, url)
        finally:
            await app.aclose()

    ids, connected = asyncio.run(main())
    assert sorted(ids) == job_ids(url)
    assert len(set(ids)) == CONCURRENT_TASKS
    assert 1 <= len(connected) <= ENQUEUE_POOL_MAX


def test_enqueue_after_its_connections_are_terminated_succeeds(app: Taskboard, url: str) -> None:
    first = app.enqueue("ping")
    killed = terminate_backends(url)
    assert killed, "the app keeps a connection"
    second = app.enqueue("ping")
    third = app.enqueue_many("ping", [{}])
    assert job_ids(url) == [first, second, *third]
    assert not set(killed) & set(backends(url))


def test_aenqueue_after_its_connections_are_terminated_succeeds(app: Taskboard, url: str) -> None:
    async def main() -> list[int]:
        try:
            first = await app.aenqueue("ping")
            killed = await asyncio.to_thread(terminate_backends, url)
            assert killed, "the app keeps a connection"
            second = await app.aenqueue("ping")
            third = await app.aenqueue_many("ping", [{}])
            assert not set(killed) & set(await asyncio.to_thread(backends, url))
            return [first, second, *third]
        finally:
            await app.aclose()

    assert asyncio.run(main()) == job_ids(url)


def test_aenqueue_reuses_its_connection_between_calls(app: Taskboard, url: str) -> None:
    async def main() -> tuple[int, int]:
        try:
            await app.aenqueue("ping")
            first = await asyncio.to_thread(last_enqueue_backend, url)
            await app.aenqueue("ping")
            second = await asyncio.to_thread(last_enqueue_backend, url)
            return first, second
        finally:
            await app.aclose()

    first, second = asyncio.run(main())
    assert first == second


def test_aenqueue_from_a_second_event_loop_opens_a_pool_there(app: Taskboard, url: str) -> None:
    first = asyncio.run(app.aenqueue("ping"))  # its loop closes with the pool still open
    second = asyncio.run(app.aenqueue("ping"))
    asyncio.run(app.aclose())
    assert job_ids(url) == [first, second]


def test_close_and_aclose_close_the_apps_connections_and_enqueue_opens_them_again(
    app: Taskboard, url: str
) -> None:
    async def main() -> None:
        await app.aenqueue("ping")
        app.enqueue("ping")
        assert len(await asyncio.to_thread(backends, url)) >= 2
        await app.aclose()

    asyncio.run(main())
    until(lambda: backends(url) == [])
    app.enqueue("ping")
    assert len(backends(url)) == 1
    app.close()
    until(lambda: backends(url) == [])
    assert len(job_ids(url)) == 3


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("priority", 2**31),
        ("priority", -(2**31) - 1),
        ("max_attempts", 2**40),
        ("priority", 1.5),
        ("max_attempts", "5"),
        ("priority", True),
    ],
)
def test_enqueue_with_an_integer_postgresql_cannot_take_raises_invalid_argument_naming_it(
    app: Taskboard, url: str, option: str, value: Any
) -> None:
    """Not psycopg's "function does not exist": one error naming the argument, nothing written."""
    with pytest.raises(InvalidArgument, match=f"^{option} must be") as raised:
        app.enqueue("t", **{option: value})
    assert raised.value.sqlstate == "22023"
    with pytest.raises(InvalidArgument, match=f"^{option} must be"):
        app.enqueue_many("t", [{}], **{option: value})
    assert job_ids(url) == []


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda app: app.enqueue("t", {"ratio": float("nan")}), "payload is not JSON-serialisable"),
        (lambda app: app.enqueue("t", {"a": "\x00"}), "payload holds a NUL character"),
        (lambda app: app.enqueue("t", "\ud800"), "payload holds a lone surrogate"),
        (lambda app: app.enqueue(5), "task must be a string"),
        (lambda app: app.enqueue("t", queue=7), "queue must be a string"),
        (lambda app: app.enqueue("t", dedupe_key=5), "dedupe_key must be a string"),
        (lambda app: app.enqueue_many("t", {"to": 1, "cc": 2}), "payloads must be a list"),
        (lambda app: app.enqueue_many("t", "abc"), "payloads must be a list"),
        (lambda app: app.enqueue_many("t", [{}, float("inf")]), "payloads[1] is not JSON"),
        (lambda app: app.enqueue_many("t", [{}], dedupe_keys=[1]), "dedupe_keys[0] must be"),
    ],
)
def test_enqueue_refuses_what_jsonb_or_the_functions_cannot_take_in_one_error_naming_it(
    app: Taskboard, url: str, call: Any, says: str
) -> None:
    """Not a server error that reads like a missing schema, nor one job per dict key."""
    with pytest.raises(InvalidArgument) as raised:
        call(app)
    assert str(raised.value).startswith(says), raised.value
    assert job_ids(url) == []


def test_enqueue_takes_astral_characters_whether_one_code_point_or_a_surrogate_pair(
    app: Taskboard, url: str
) -> None:
    """Only a lone surrogate is refused: a pair held as two code points is one character."""
    ids = [app.enqueue("t", {"e": "\U0001f600"}), app.enqueue("t", {"e": "\ud83d\ude00"})]
    with psycopg.connect(url, application_name=OBSERVER, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT payload->>'e' FROM taskboard.jobs WHERE id = ANY(%s) ORDER BY id", [ids]
        ).fetchall()
    assert rows == [("\U0001f600",), ("\U0001f600",)]


def test_enqueue_many_takes_any_iterable_of_payloads_and_keys(app: Taskboard, url: str) -> None:
    ids = app.enqueue_many("t", ({"n": n} for n in range(3)), dedupe_keys=("a", None, "c"))
    with psycopg.connect(url, application_name=OBSERVER, autocommit=True) as conn:
        rows = [
            conn.execute(
                "SELECT payload->>'n', dedupe_key FROM taskboard.jobs WHERE id = %s", [job_id]
            ).fetchone()
            for job_id in ids
        ]
    assert rows == [("0", "a"), ("1", None), ("2", "c")]


def test_enqueue_with_a_task_of_the_wrong_type_names_it(app: Taskboard, url: str) -> None:
    with pytest.raises(InvalidArgument, match=r"^task must be a string"):
        app.enqueue(["x"], {})  # type: ignore[arg-type]
    assert job_ids(url) == []
