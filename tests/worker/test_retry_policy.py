"""Retry policies, Retry, Abort and ctx.snooze, with a real worker on a real database.

Delays are read back from the job row: `fail` records the error's `at` and
sets `run_at` from the same database clock reading, so run_at - at is the
delay the worker sent. Nothing here asserts how fast anything runs.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import math
import re
import uuid
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from taskboard import (
    Abort,
    AsyncContext,
    ExponentialBackoff,
    InvalidArgument,
    Retry,
    Snooze,
    SyncContext,
    Taskboard,
    TaskError,
    load_settings,
)
from taskboard.retries import MAX_DELAY_SECONDS
from taskboard.worker.outcomes import MAX_TRACEBACK_CHARS, format_traceback
from tests.support.database import MakeDatabase, make_runnable
from tests.support.inprocess import finished, job, make_app, run_worker_until

TOLERANCE = dt.timedelta(milliseconds=1)  # float seconds to interval: microseconds


def delays_after(
    url: str, failures: int, *job_ids: int
) -> tuple[Callable[[], bool], dict[int, dt.timedelta]]:
    """A condition that holds once each job waits after its `failures`-th failed attempt,
    and the delay each was given then: run_at minus the time of that error."""
    delays: dict[int, dt.timedelta] = {}

    def check() -> bool:
        for job_id in job_ids:
            row = job(url, job_id)
            if job_id not in delays and row["state"] == "queued" and len(row["errors"]) == failures:
                delays[job_id] = row["run_at"] - dt.datetime.fromisoformat(row["errors"][-1]["at"])
        return len(delays) == len(job_ids)

    return check, delays


def db_clock(url: str) -> dt.datetime:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT clock_timestamp()").fetchone()
    assert row is not None
    now: dt.datetime = row[0]
    return now


# -- max_attempts at registration -------------------------------------------------------


def test_registered_max_attempts_is_enqueues_default_and_an_explicit_value_wins(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("twice", max_attempts=2)
    def twice(ctx: SyncContext, payload: Any) -> None:
        raise RuntimeError("always")

    @app.task("plain")
    def plain(ctx: SyncContext, payload: Any) -> None:
        return None

    async def async_ids() -> list[int]:
        one = await app.aenqueue("twice")
        many = await app.aenqueue_many("twice", [{}, {}], max_attempts=4)
        await app.aclose()
        return [one, *many]

    ids = {
        "registered": app.enqueue("twice"),
        "explicit": app.enqueue("twice", max_attempts=7),
        "many registered": app.enqueue_many("twice", [{}])[0],
        "many explicit": app.enqueue_many("twice", [{}], max_attempts=1)[0],
        "none given": app.enqueue("twice", max_attempts=None),
        "task without one": app.enqueue("plain"),
        "unknown task": app.enqueue("nobody-registered-it"),
    }
    a_one, a_many, _ = asyncio.run(async_ids())
    assert {name: job(url, i)["max_attempts"] for name, i in ids.items()} == {
        "registered": 2,
        "explicit": 7,
        "many registered": 2,
        "many explicit": 1,
        "none given": 2,
        "task without one": 5,
        "unknown task": 5,
    }
    assert (job(url, a_one)["max_attempts"], job(url, a_many)["max_attempts"]) == (2, 4)

    # The registered default decides when the job dies.
    fast = make_app(url)
    fast.task("fragile", max_attempts=2, retry=ExponentialBackoff(base=0.01, cap=0.01, jitter=0))(
        twice
    )
    dies = fast.enqueue("fragile")
    run_worker_until(fast, finished(url, dies))
    row = job(url, dies)
    assert (row["state"], row["attempt"], len(row["errors"])) == ("dead", 2, 2)
    app.close()
    fast.close()


# -- retry policies ---------------------------------------------------------------------


def test_a_backoff_policys_delay_reaches_run_at(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("exact", retry=ExponentialBackoff(base=600, cap=3600, jitter=0))
    @app.task("jittered", retry=ExponentialBackoff(base=100, cap=3600, jitter=0.5))
    @app.task("capped", retry=ExponentialBackoff(base=600, cap=900, jitter=0))
    async def down(ctx: AsyncContext, payload: Any) -> None:
        raise ConnectionError("service down")

    exact, jittered = app.enqueue("exact"), app.enqueue("jittered")
    capped = app.enqueue("capped")
    with psycopg.connect(url, autocommit=True) as conn:  # attempt 3 next: 600 s * 4 > 900 s
        conn.execute("UPDATE taskboard.jobs SET attempt = 2 WHERE id = %s", [capped])
    waiting, delays = delays_after(url, 1, exact, jittered, capped)
    run_worker_until(app, waiting)

    assert abs(delays[exact] - dt.timedelta(seconds=600)) <= TOLERANCE
    low, high = dt.timedelta(seconds=50), dt.timedelta(seconds=150)
    assert low - TOLERANCE <= delays[jittered] <= high + TOLERANCE
    assert abs(delays[capped] - dt.timedelta(seconds=900)) <= TOLERANCE
    assert job(url, capped)["attempt"] == 3
    app.close()


def test_exponential_backoff_doubles_from_base_up_to_cap() -> None:
    policy = ExponentialBackoff(base=2, cap=30, jitter=0)
    assert [policy(attempt, RuntimeError()) for attempt in range(1, 7)] == [2, 4, 8, 16, 30, 30]
    assert policy(10_000, RuntimeError()) == 30  # no overflow for a late attempt
    jittered = ExponentialBackoff(base=10, cap=1000, jitter=0.2)
    assert all(8 <= jittered(1, RuntimeError()) <= 12 for _ in range(200))


def test_a_callable_policy_gets_the_attempt_and_the_exception(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    asked: list[tuple[int, BaseException]] = []

    def policy(attempt: int, exception: BaseException) -> float:
        asked.append((attempt, exception))
        return 0.01 if attempt < 2 else 1234.5

    @app.task("counted", max_attempts=3, retry=policy)
    def counted(ctx: SyncContext, payload: Any) -> None:
        raise LookupError(f"attempt {ctx.attempt}")

    job_id = app.enqueue("counted")
    waiting, delays = delays_after(url, 2, job_id)
    run_worker_until(app, waiting)
    assert [(a, type(e), str(e)) for a, e in asked] == [
        (1, LookupError, "attempt 1"),
        (2, LookupError, "attempt 2"),
    ]
    assert abs(delays[job_id] - dt.timedelta(seconds=1234.5)) <= TOLERANCE
    app.close()


def test_a_policy_that_raises_leaves_the_delay_to_the_database(
    make_database: MakeDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    def broken(attempt: int, exception: BaseException) -> float:
        raise ZeroDivisionError("policy bug")

    def too_long(attempt: int, exception: BaseException) -> float:
        return MAX_DELAY_SECONDS + 1

    def exits(attempt: int, exception: BaseException) -> float:
        raise SystemExit("a policy must not stop the worker")

    @app.task("exits", retry=exits)
    @app.task("broken", retry=broken)
    @app.task("too-long", retry=too_long)
    @app.task("database", retry=lambda attempt, exception: None)
    def fails(ctx: SyncContext, payload: Any) -> None:
        raise RuntimeError("handler error")

    ids = [
        app.enqueue("broken"),
        app.enqueue("too-long"),
        app.enqueue("database"),
        app.enqueue("exits"),
    ]
    waiting, delays = delays_after(url, 1, *ids)
    with caplog.at_level(logging.WARNING, logger="taskboard.worker"):
        run_worker_until(app, waiting)
    for job_id in ids:
        # The database's backoff after attempt 1: 2 s +/- 25 %.
        low, high = dt.timedelta(seconds=1.5), dt.timedelta(seconds=2.5)
        assert low - TOLERANCE <= delays[job_id] <= high + TOLERANCE, job_id
        assert job(url, job_id)["errors"][0]["error"] == "RuntimeError: handler error"
    warned = {r.getMessage() for r in caplog.records if "retry policy" in r.getMessage()}
    assert any("task 'broken' failed (ZeroDivisionError: policy bug)" in w for w in warned)
    assert any("task 'exits' failed (SystemExit: a policy must not stop" in w for w in warned)
    assert any(
        "task 'too-long' failed (InvalidArgument: the delay must be between 0 and 43200 seconds"
        in w
        for w in warned
    )
    assert not any("'database'" in w for w in warned), "None is the database's backoff"
    app.close()


# -- Retry and Abort ----------------------------------------------------------------------


@pytest.mark.parametrize("flavour", ["async", "sync"])
def test_retry_after_delays_the_next_attempt_and_uses_one(
    make_database: MakeDatabase, flavour: str
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    policy = ExponentialBackoff(base=5000, cap=5000, jitter=0)  # Retry's own delay wins

    if flavour == "async":

        @app.task("later", retry=policy)
        async def later(ctx: AsyncContext, payload: Any) -> None:
            raise Retry(after=payload["after"])

    else:

        @app.task("later", retry=policy)
        def later_sync(ctx: SyncContext, payload: Any) -> None:
            raise Retry("rate limited", after=payload["after"])

    waits = app.enqueue("later", {"after": 300})
    last = app.enqueue("later", {"after": 300}, max_attempts=1)
    waiting, delays = delays_after(url, 1, waits)
    run_worker_until(app, lambda: waiting() and finished(url, last)())

    row = job(url, waits)
    assert (row["state"], row["attempt"]) == ("queued", 1)
    assert abs(delays[waits] - dt.timedelta(seconds=300)) <= TOLERANCE
    reason = "retry requested after 300s" if flavour == "async" else "rate limited"
    assert row["errors"][0]["error"] == f"Retry: {reason}"
    row = job(url, last)
    assert (row["state"], row["attempt"]) == ("dead", 1), "Retry uses an attempt"
    app.close()


def test_retry_without_after_takes_the_policys_delay(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("again", retry=ExponentialBackoff(base=700, cap=700, jitter=0))
    async def again(ctx: AsyncContext, payload: Any) -> None:
        raise Retry()

    job_id = app.enqueue("again")
    waiting, delays = delays_after(url, 1, job_id)
    run_worker_until(app, waiting)
    assert abs(delays[job_id] - dt.timedelta(seconds=700)) <= TOLERANCE
    assert job(url, job_id)["errors"][0]["error"] == "Retry: retry requested"
    app.close()


@pytest.mark.parametrize("flavour", ["async", "sync", "transactional"])
def test_abort_makes_the_job_dead_at_once_with_its_reason(
    make_database: MakeDatabase, flavour: str
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    if flavour == "sync":

        @app.task("charge", max_attempts=5)
        def charge_sync(ctx: SyncContext, payload: Any) -> None:
            raise Abort("card reported stolen")

    else:

        @app.task("charge", max_attempts=5, transactional=flavour == "transactional")
        async def charge(ctx: AsyncContext, payload: Any) -> None:
            if ctx.conn is not None:
                await ctx.conn.execute("CREATE TABLE public.charged (id int)")
            raise Abort("card reported stolen")

    job_id = app.enqueue("charge")
    run_worker_until(app, finished(url, job_id))
    row = job(url, job_id)
    assert (row["state"], row["attempt"]) == ("dead", 1)
    assert row["finished_at"] is not None
    [entry] = row["errors"]
    assert entry["error"] == "Abort: card reported stolen"
    assert entry["traceback"].startswith("Traceback (most recent call last):")
    assert "in charge" in entry["traceback"]
    assert entry["traceback"].endswith("taskboard.retries.Abort: card reported stolen")
    if flavour == "transactional":
        with psycopg.connect(url) as conn:
            found = conn.execute("SELECT to_regclass('public.charged')").fetchone()
        assert found == (None,), "the aborted handler's writes rolled back"
    app.close()


# -- ctx.snooze ---------------------------------------------------------------------------


@pytest.mark.parametrize("flavour", ["async", "sync"])
def test_snooze_hands_the_job_back_for_later_without_using_an_attempt(
    make_database: MakeDatabase, flavour: str
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    attempts: list[int] = []
    after_snooze: list[str] = []

    if flavour == "async":

        @app.task("nap", max_attempts=1)
        async def nap(ctx: AsyncContext, payload: Any) -> int:
            attempts.append(ctx.attempt)
            if len(attempts) == 1:
                try:
                    ctx.snooze(600)
                except Exception:  # noqa: BLE001 - a handler's catch-all does not swallow it
                    after_snooze.append("swallowed")
                after_snooze.append("went on")
            return ctx.attempt

    else:

        @app.task("nap", max_attempts=1)
        def nap_sync(ctx: SyncContext, payload: Any) -> int:
            attempts.append(ctx.attempt)
            if len(attempts) == 1:
                try:
                    ctx.snooze(600)
                except Exception:  # noqa: BLE001 - a handler's catch-all does not swallow it
                    after_snooze.append("swallowed")
                after_snooze.append("went on")
            return ctx.attempt

    before = db_clock(url)
    job_id = app.enqueue("nap")
    run_worker_until(app, lambda: len(attempts) == 1 and job(url, job_id)["state"] == "queued")
    after = db_clock(url)
    row = job(url, job_id)
    assert (row["attempt"], row["errors"], after_snooze) == (0, [], [])
    span = dt.timedelta(seconds=600)
    assert before + span <= row["run_at"] <= after + span

    make_runnable(url, job_id)
    run_worker_until(app, finished(url, job_id))
    row = job(url, job_id)
    assert (row["state"], row["attempt"], row["result"]) == ("succeeded", 1, 1)
    assert attempts == [1, 1], "the snoozed claim did not count as an attempt"
    app.close()


def test_snooze_with_a_bad_delay_fails_the_attempt_naming_it(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("bad-nap", max_attempts=1)
    async def bad_nap(ctx: AsyncContext, payload: Any) -> None:
        ctx.snooze(-5)

    job_id = app.enqueue("bad-nap")
    run_worker_until(app, finished(url, job_id))
    [entry] = job(url, job_id)["errors"]
    assert entry["error"] == (
        "InvalidArgument: seconds must be between 0 and 43200 seconds (12 hours), got -5"
    )
    app.close()


# -- tracebacks ---------------------------------------------------------------------------


def test_a_failed_attempt_records_its_traceback_bounded(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    def deep(n: int) -> None:
        if n == 0:
            raise ValueError("x" * 30_000 + " the end")
        deep(n - 1)

    @app.task("crash", max_attempts=1)
    def crash(ctx: SyncContext, payload: Any) -> None:
        if payload["long"]:
            deep(50)
        raise KeyError("missing")

    short, long = app.enqueue("crash", {"long": False}), app.enqueue("crash", {"long": True})
    run_worker_until(app, finished(url, short, long))

    [entry] = job(url, short)["errors"]
    assert entry["error"] == "KeyError: 'missing'"
    assert entry["traceback"].startswith("Traceback (most recent call last):")
    assert "in crash" in entry["traceback"]
    assert entry["traceback"].endswith("KeyError: 'missing'")

    [entry] = job(url, long)["errors"]
    assert len(entry["error"]) <= 2000
    stored = entry["traceback"]
    assert len(stored) <= 16384
    assert stored.startswith("[traceback cut: its first ")
    assert stored.endswith("x" * 100 + " the end"), "the end of a traceback is kept"
    app.close()


def test_format_traceback_keeps_the_end_within_its_bound() -> None:
    try:
        raise RuntimeError("y" * (3 * MAX_TRACEBACK_CHARS) + "\x00 last")
    except RuntimeError as exc:
        text = format_traceback(exc)
    assert text is not None
    first, rest = text.split("\n", 1)
    assert first.startswith("[traceback cut: its first ") and len(rest) == MAX_TRACEBACK_CHARS
    assert rest.endswith("\\0 last"), "NUL is stored as text PostgreSQL accepts"
    assert format_traceback(RuntimeError("never raised")) is None


# -- bad arguments ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("make", "says"),
    [
        (lambda: Retry(after=-1), "after must be between 0 and 43200 seconds"),
        (lambda: Retry(after=0), "after must be positive"),
        (lambda: Retry(after=1e-9), "after must be positive"),
        (lambda: Retry(after=MAX_DELAY_SECONDS + 1), "after must be between 0 and 43200"),
        (lambda: Retry(after=math.nan), "after must be between 0 and 43200"),
        (lambda: Retry(after=math.inf), "after must be between 0 and 43200"),
        (lambda: Retry(after="5"), "after must be a number of seconds"),  # type: ignore[arg-type]
        (lambda: Retry(after=True), "after must be a number of seconds"),
        (lambda: Snooze(-0.5), "seconds must be between 0 and 43200"),
        (lambda: Snooze(43_201), "seconds must be between 0 and 43200"),
        (lambda: ExponentialBackoff(base=0), "base must be positive"),
        (lambda: ExponentialBackoff(base=-1), "base must be between 0 and 43200"),
        (lambda: ExponentialBackoff(base=10, cap=5), "cap must be at least base"),
        (lambda: ExponentialBackoff(cap=MAX_DELAY_SECONDS * 2), "cap must be between 0 and 43200"),
        (lambda: ExponentialBackoff(jitter=1), "jitter must be a fraction in [0, 1)"),
        (lambda: ExponentialBackoff(jitter=-0.1), "jitter must be a fraction in [0, 1)"),
    ],
)
def test_bad_delays_raise_invalid_argument_naming_the_argument(make: Any, says: str) -> None:
    with pytest.raises(InvalidArgument, match=f"^{re.escape(says)}") as raised:
        make()
    assert isinstance(raised.value, ValueError)


def test_snooze_refuses_a_bad_delay_before_it_stops_the_handler() -> None:
    async def holder() -> bool:
        return True

    ctx = AsyncContext(
        job_id=1,
        attempt=1,
        token=uuid.uuid4(),
        payload={},
        task="t",
        idempotency_key=uuid.uuid4(),
        check=holder,
    )
    with pytest.raises(InvalidArgument, match=r"^seconds must be between 0 and 43200"):
        ctx.snooze(-1)
    with pytest.raises(Snooze) as snoozed:
        ctx.snooze(0)
    assert snoozed.value.seconds == 0


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"max_attempts": 0}, "task 't': max_attempts must be an integer from 1 to 2147483647"),
        ({"max_attempts": 2**31}, "task 't': max_attempts must be an integer from 1 to"),
        ({"max_attempts": 2.0}, "task 't': max_attempts must be an integer"),
        ({"max_attempts": True}, "task 't': max_attempts must be an integer"),
        ({"retry": 5}, "task 't': retry must be an ExponentialBackoff or a callable"),
        ({"retry": ExponentialBackoff}, "task 't': retry must be an ExponentialBackoff or"),
    ],
)
def test_task_registration_refuses_a_bad_max_attempts_or_policy(
    options: dict[str, Any], says: str
) -> None:
    app = Taskboard(load_settings(database_url="postgresql:///unused"))
    with pytest.raises(TaskError, match=f"^{re.escape(says)}"):
        app.task("t", **options)
