"""Concurrency keys through the driver and the command line, on a real database with a real
worker: the key is stored with each job, the admin sets a queue's key limit, and a worker
with room for many jobs runs at most that many of one key at once while it runs the other
keys' jobs beside them."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections import Counter
from typing import Any

import psycopg
import pytest

from taskboard import InvalidArgument, SyncContext, Taskboard
from tests.support.cli import enqueue, error_line, run
from tests.support.database import MakeDatabase
from tests.support.inprocess import finished, make_app, run_worker_until


def stored_keys(url: str, *job_ids: int) -> list[str | None]:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT id, concurrency_key FROM taskboard.jobs WHERE id = ANY(%s)", [list(job_ids)]
        ).fetchall()
    keys: dict[int, str | None] = dict(rows)
    return [keys[j] for j in job_ids]


def key_limit(url: str, queue: str) -> int | None:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT max_running_per_key FROM taskboard.queues WHERE queue = %s", [queue]
        ).fetchone()
    return None if row is None else row[0]


# -- enqueue ---------------------------------------------------------------------------


def test_enqueue_stores_the_key_of_each_job(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("sync")
    def sync(ctx: SyncContext, payload: Any) -> None:
        pass

    try:
        one = app.enqueue("sync", {"n": 1}, concurrency_key="customer-42")
        plain = app.enqueue("sync", {"n": 2})
        many = app.enqueue_many(
            "sync", [{}, {}, {}], concurrency_keys=["customer-1", None, "customer-2"]
        )
        unkeyed = app.enqueue_many("sync", [{}, {}], concurrency_keys=[None, None])
        handled = sync.enqueue({}, concurrency_key="customer-7")

        async def twins() -> list[int]:
            try:
                return [
                    await app.aenqueue("sync", concurrency_key="customer-3"),
                    *await app.aenqueue_many("sync", [{}], concurrency_keys=["customer-4"]),
                    await sync.aenqueue({}, concurrency_key="customer-5"),
                    *await sync.aenqueue_many([{}], concurrency_keys=["customer-6"]),
                ]
            finally:
                await app.aclose()

        awaited = asyncio.run(twins())
    finally:
        app.close()
    assert stored_keys(url, one, plain, *many, *unkeyed, handled, *awaited) == [
        "customer-42",
        None,
        "customer-1",
        None,
        "customer-2",
        None,
        None,
        "customer-7",
        "customer-3",
        "customer-4",
        "customer-5",
        "customer-6",
    ]


@pytest.mark.parametrize(
    ("call", "says"),
    [
        (lambda app: app.enqueue("t", concurrency_key=42), "concurrency_key must be a string"),
        (lambda app: app.enqueue("t", concurrency_key=""), "concurrency_key must not be"),
        (
            lambda app: app.enqueue("t", concurrency_key="k" * 201),
            "concurrency_key must be at most",
        ),
        (
            lambda app: app.enqueue_many("t", [{}, {}], concurrency_keys=["a", 3]),
            "concurrency_keys[1] must be a string",
        ),
        (
            lambda app: app.enqueue_many("t", [{}, {}], concurrency_keys="ab"),
            "concurrency_keys must be a list",
        ),
        (
            lambda app: app.enqueue_many("t", [{}, {}], concurrency_keys=["a"]),
            "concurrency_keys has 1 elements but payloads has 2",
        ),
        (
            lambda app: app.enqueue_many("t", [{}], concurrency_keys=[""]),
            "concurrency_keys must hold keys of 1 to 200 characters",
        ),
    ],
)
def test_a_bad_key_is_refused_naming_it_and_enqueues_nothing(
    make_database: MakeDatabase, call: Any, says: str
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    try:
        with pytest.raises(InvalidArgument) as refused:
            call(app)
    finally:
        app.close()
    assert says in str(refused.value)
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM taskboard.jobs").fetchone() == (0,)


# -- the key limit -----------------------------------------------------------------------


def test_the_app_sets_and_clears_a_key_limit(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = Taskboard(make_app(url).settings)
    try:
        assert app.set_key_limit("sync", 2) is True
        assert app.set_key_limit("sync", 2) is False
        assert key_limit(url, "sync") == 2
        with pytest.raises(InvalidArgument, match="max_running_per_key must be at least 1"):
            app.set_key_limit("sync", 0)
        with pytest.raises(InvalidArgument, match="max_running_per_key must be an integer"):
            app.set_key_limit("sync", "2")  # type: ignore[arg-type]
        assert app.set_key_limit("sync", None) is True
        assert key_limit(url, "sync") is None

        async def twin() -> bool:
            try:
                return await app.aset_key_limit("mail", 1)
            finally:
                await app.aclose()

        assert asyncio.run(twin()) is True
    finally:
        app.close()
    assert key_limit(url, "mail") == 1


def test_a_worker_runs_one_job_of_a_key_at_a_time_and_other_keys_beside_it(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    running: Counter[str | None] = Counter()
    most: Counter[str | None] = Counter()
    together: set[frozenset[str | None]] = set()
    lock = threading.Lock()

    @app.task("sync", queue="sync")
    def sync(ctx: SyncContext, payload: Any) -> None:
        key = payload["key"]
        with lock:
            running[key] += 1
            most[key] = max(most[key], running[key])
            together.add(frozenset(k for k, n in running.items() if n))
        time.sleep(0.05)
        with lock:
            running[key] -= 1

    keys = [k for _ in range(6) for k in ("a", "b", None)]
    try:
        assert app.set_key_limit("sync", 1) is True
        ids = sync.enqueue_many([{"key": k} for k in keys], concurrency_keys=keys)
        run_worker_until(app, finished(url, *ids), concurrency=8)
    finally:
        app.close()
    assert most["a"] == 1 and most["b"] == 1, most
    assert most[None] > 1, "jobs without a key are not limited"
    assert any({"a", "b"} <= group for group in together), "keys a and b never ran together"


# -- the command line ----------------------------------------------------------------------


def test_the_cli_enqueues_with_a_key_and_sets_the_key_limit(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    job_id = enqueue(url, "sync", "--queue=sync", "--concurrency-key=customer-42")
    assert stored_keys(url, job_id) == ["customer-42"]

    done = run(url, "key-limit", "sync", "1", "--json")
    assert json.loads(done.stdout) == {"queue": "sync", "max_running_per_key": 1, "changed": True}
    again = run(url, "key-limit", "sync", "1")
    assert again.stdout.strip() == (
        'queue "sync": at most 1 running per concurrency key (unchanged)'
    )
    header, row = run(url, "status").stdout.splitlines()
    assert header.split()[-5:] == ["limit", "key", "limit", "rate", "limit"]
    assert row.split()[:3] == ["sync", "queued", "1"] and row.split()[-1] == "1"

    cleared = run(url, "key-limit", "sync", "none")
    assert cleared.stdout.strip() == 'queue "sync": no key limit'
    assert key_limit(url, "sync") is None


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["key-limit", "sync", "0"], "a limit must be at least 1, got 0: pause the queue"),
        (["key-limit", "sync", "some"], "'some' is not a whole number or none"),
        (["key-limit", "sync"], "the following arguments are required: N|none"),
    ],
)
def test_the_cli_refuses_a_bad_key_limit_in_one_line(
    make_database: MakeDatabase, args: list[str], says: str
) -> None:
    url = make_database(deploy=True)
    done = run(url, *args)
    assert done.returncode == 2
    assert says in error_line(done)


def test_the_cli_refuses_an_empty_key_in_one_line(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    done = run(url, "enqueue", "sync", "--concurrency-key=")
    assert done.returncode != 0
    assert "concurrency_key must not be" in error_line(done)
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT count(*) FROM taskboard.jobs").fetchone() == (0,)


def test_an_empty_key_is_refused_saying_null_means_no_key(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InvalidParameterValue) as refused:
            conn.execute("SELECT taskboard.enqueue('t', concurrency_key => '')")
        conn.execute("SELECT taskboard.enqueue('t', concurrency_key => NULL)")
    message = str(refused.value).splitlines()[0]
    assert message == "concurrency_key must not be empty (NULL means no key)"
