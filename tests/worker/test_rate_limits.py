"""Rate limits through the driver, the command line and the exporter, on a real database with
a real worker: the admin sets a queue's rate limit, and a worker with room for many jobs
finishes them all while no window of the limit's length, read from the jobs' start times,
holds more than its starts; jobs held back stay queued, counted neither failed nor delayed."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import time
from collections import defaultdict
from collections.abc import Iterable
from typing import Any

import psycopg
import pytest

from taskboard import AsyncContext, InvalidArgument, SyncContext, Taskboard
from tests.support.cli import error_line, run
from tests.support.database import MakeDatabase
from tests.support.inprocess import FAST, finished, make_app, run_worker_until
from tests.support.metrics import Samples, exporter_samples, free_port, listening, scrape, value

DEADLINE_SECONDS = 60.0
SECOND = dt.timedelta(seconds=1)


def rate_limit(url: str, queue: str) -> tuple[int | None, dt.timedelta | None, bool] | None:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT rate_starts, rate_per, rate_by_key FROM taskboard.queues WHERE queue = %s",
            [queue],
        ).fetchone()
    return None if row is None else (row[0], row[1], row[2])


def starts_of(url: str, *job_ids: int) -> list[tuple[str | None, dt.datetime]]:
    """(concurrency key, started_at) of each job, which must have run exactly once: with one
    attempt and no reclaim, started_at is the only start the job had."""
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT state, attempt, concurrency_key, started_at FROM taskboard.jobs"
            " WHERE id = ANY(%s)",
            [list(job_ids)],
        ).fetchall()
        reclaims = conn.execute(
            "SELECT count(*) FROM taskboard.job_events WHERE job_id = ANY(%s)", [list(job_ids)]
        ).fetchone()
    assert len(rows) == len(job_ids)
    assert {(state, attempt) for state, attempt, _, _ in rows} == {("succeeded", 1)}, rows
    assert reclaims == (0,)
    return [(key, started) for _, _, key, started in rows]


def busiest_window(started: Iterable[dt.datetime], per: dt.timedelta) -> int:
    """The most starts in any window (t - per, t] of length `per`: the window queue_stats and
    claim count."""
    times = sorted(started)
    return max((sum(1 for s in times if t - per < s <= t) for t in times), default=0)


# -- the driver ------------------------------------------------------------------------


def test_the_app_sets_and_clears_a_rate_limit(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = Taskboard(make_app(url).settings)
    try:
        assert app.set_rate_limit("sms", 500, SECOND) is True
        assert app.set_rate_limit("sms", 500, 1) is False  # seconds: the same limit
        assert rate_limit(url, "sms") == (500, SECOND, False)
        assert app.set_rate_limit("sms", 5, dt.timedelta(minutes=1), by_key=True) is True
        assert rate_limit(url, "sms") == (5, dt.timedelta(minutes=1), True)
        assert app.set_rate_limit("sms", None, None) is True
        assert app.set_rate_limit("sms", None, None) is False
        assert rate_limit(url, "sms") == (None, None, False)

        async def twin() -> list[bool]:
            try:
                return [
                    await app.aset_rate_limit("mail", 2, dt.timedelta(seconds=0.5)),
                    await app.aset_rate_limit("mail", 2, 0.5),
                ]
            finally:
                await app.aclose()

        assert asyncio.run(twin()) == [True, False]
    finally:
        app.close()
    assert rate_limit(url, "mail") == (2, dt.timedelta(seconds=0.5), False)


@pytest.mark.parametrize(
    ("args", "kwargs", "says"),
    [
        (("q", 0, SECOND), {}, "starts must be between 1 and 100000, got 0: pause the queue"),
        (("q", 100_001, SECOND), {}, "starts must be between 1 and 100000, got 100001"),
        (("q", "5", SECOND), {}, "starts must be an integer, got '5'"),
        (("q", True, SECOND), {}, "starts must be an integer, got True"),
        (("q", 5, None), {}, "starts and per must both be given, or both be None"),
        (("q", None, SECOND), {}, "starts and per must both be given, or both be None"),
        (("q", 5, dt.timedelta(0)), {}, "per must be positive"),
        (("q", 5, -1), {}, "per must be positive"),
        (
            ("q", 5, 1e-7),
            {},
            "per must be at least 0.000001 seconds (one microsecond, the"
            " database's precision), got 1e-07, which rounds to 0",
        ),
        (("q", 5, dt.timedelta(days=31, seconds=1)), {}, "per must be at most 31 days"),
        (("q", 5, "1s"), {}, "per must be a timedelta or a finite number of seconds"),
        (("q", 5, float("inf")), {}, "per must be a timedelta or a finite number of seconds"),
        (("q", 5, SECOND), {"by_key": None}, "by_key must be True or False, got None"),
        (("q", None, None), {"by_key": True}, "by_key needs a rate limit"),
        ((5, 5, SECOND), {}, "queue must be a string, got 5"),
    ],
)
def test_a_bad_rate_limit_is_refused_naming_the_argument_and_changes_nothing(
    make_database: MakeDatabase, args: tuple[Any, ...], kwargs: dict[str, Any], says: str
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    try:
        with pytest.raises(InvalidArgument) as refused:
            app.set_rate_limit(*args, **kwargs)
    finally:
        app.close()
    assert says in str(refused.value)
    assert isinstance(refused.value, ValueError)
    assert rate_limit(url, "q") is None


# -- a worker under a rate limit ---------------------------------------------------------


def test_a_worker_finishes_every_job_and_no_window_holds_more_than_its_starts(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("sms", queue="sms")
    def sms(ctx: SyncContext, payload: Any) -> None:
        pass

    try:
        assert app.set_rate_limit("sms", 5, SECOND) is True
        ids = sms.enqueue_many([{"n": n} for n in range(20)])
        run_worker_until(app, finished(url, *ids), concurrency=8)
    finally:
        app.close()
    started = [at for _, at in starts_of(url, *ids)]
    assert busiest_window(started, SECOND) <= 5
    assert busiest_window(started, SECOND) >= 1  # the check counts something


def test_a_limit_by_key_holds_each_key_and_leaves_jobs_without_a_key_alone(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("sync", queue="sync")
    def sync(ctx: SyncContext, payload: Any) -> None:
        pass

    # The jobs without a key come first, so that the first claim finds them all runnable.
    keys: list[str | None] = [None] * 6 + [k for _ in range(6) for k in ("a", "b")]
    try:
        assert app.set_rate_limit("sync", 2, SECOND, by_key=True) is True
        ids = sync.enqueue_many([{} for _ in keys], concurrency_keys=keys)
        run_worker_until(app, finished(url, *ids), concurrency=12)
    finally:
        app.close()
    by_key: defaultdict[str | None, list[dt.datetime]] = defaultdict(list)
    for key, at in starts_of(url, *ids):
        by_key[key].append(at)
    assert busiest_window(by_key["a"], SECOND) <= 2
    assert busiest_window(by_key["b"], SECOND) <= 2
    assert busiest_window(by_key["a"] + by_key["b"], SECOND) <= 4
    # Jobs without a key are not limited: the first claim started them all at once.
    assert busiest_window(by_key[None], SECOND) > 2


def test_a_reclaim_counts_as_a_start(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("t", queue="r")
    def t(ctx: SyncContext, payload: Any) -> None:
        pass

    try:
        assert app.set_rate_limit("r", 2, dt.timedelta(hours=1)) is True
        lost = t.enqueue({}, priority=10)  # claimed first, and first again once expired
        waiting = t.enqueue({})
        with psycopg.connect(url, autocommit=True) as conn:
            # Another worker's start, then its lease expires: the deadline moved, no sleep.
            claimed = conn.execute("SELECT job_id FROM taskboard.claim('r', 'gone')").fetchall()
            assert claimed == [(lost,)]
            conn.execute(
                "UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1s'"
                " WHERE id = %s",
                [lost],
            )
        # The worker's reclaim is the second start of the hour: the other job must wait.
        run_worker_until(app, finished(url, lost), concurrency=4)
        run_worker_until(app, idle_for(FAST["poll_interval"] * 5), concurrency=4)
    finally:
        app.close()
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute("SELECT id, state, attempt FROM taskboard.jobs ORDER BY id").fetchall()
        events = conn.execute("SELECT job_id, kind, worker FROM taskboard.job_events").fetchall()
        window = conn.execute(
            "SELECT DISTINCT window_starts FROM taskboard.queue_stats WHERE queue = 'r'"
        ).fetchall()
    assert rows == [(lost, "succeeded", 2), (waiting, "queued", 0)]
    assert events == [(lost, "reclaimed", "gone")]
    assert window == [(2,)]


def idle_for(seconds: float) -> Any:
    """A condition that holds once `seconds` have passed since its first call: lets a worker
    poll a few times, to show what it did not do."""
    since: list[float] = []

    def check() -> bool:
        if not since:
            since.append(time.monotonic())
        return time.monotonic() - since[0] >= seconds

    return check


# -- metrics: held back is neither failed nor delayed -----------------------------------


def test_jobs_held_back_are_counted_neither_failed_nor_delayed(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    port = free_port()
    app = make_app(url)

    @app.task("sms", queue="sms")
    async def sms(ctx: AsyncContext, payload: Any) -> None:
        pass

    assert app.set_rate_limit("sms", 1, dt.timedelta(hours=1)) is True
    first, *held = sms.enqueue_many([{}, {}, {}])
    with psycopg.connect(url, autocommit=True) as conn:
        due: dict[int, dt.datetime] = dict(
            conn.execute("SELECT id, run_at FROM taskboard.jobs").fetchall()
        )

    async def main() -> Samples:
        stop = asyncio.Event()
        worker = asyncio.create_task(app.worker(stop=stop, metrics_port=port, **FAST))
        try:
            deadline = time.monotonic() + DEADLINE_SECONDS
            while not (
                await asyncio.to_thread(listening, port)
                and await asyncio.to_thread(finished(url, first))
            ):
                assert not worker.done(), worker.result()
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            # A few more polls find the two others runnable and held back.
            await asyncio.sleep(FAST["poll_interval"] * 5)
            return await asyncio.to_thread(scrape, port)
        finally:
            stop.set()
            await asyncio.wait_for(worker, DEADLINE_SECONDS)

    try:
        samples = asyncio.run(main())
    finally:
        app.close()

    def count(outcome: str) -> float:
        return value(samples, "taskboard_jobs_total", queue="sms", task="sms", outcome=outcome)

    assert (count("claimed"), count("succeeded")) == (1, 1)
    for outcome in ("failed", "dead", "refused", "lost", "released"):
        assert count(outcome) == 0, outcome
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT id, state, attempt, run_at, errors FROM taskboard.jobs WHERE id = ANY(%s)",
            [held],
        ).fetchall()
    # Queued as enqueued: no attempt used, no error, run_at where it was.
    assert [(i, s, a, r, e) for i, s, a, r, e in rows] == [
        (i, "queued", 0, due[i], []) for i in sorted(held)
    ]
    exported = exporter_samples(url)
    assert value(exported, "taskboard_queue_jobs", queue="sms", state="queued") == 2
    assert value(exported, "taskboard_queue_jobs", queue="sms", state="dead") == 0
    assert value(exported, "taskboard_queue_runnable", queue="sms") == 2
    assert value(exported, "taskboard_queue_rate_starts", queue="sms") == 1
    assert value(exported, "taskboard_queue_rate_per_seconds", queue="sms") == 3600
    assert value(exported, "taskboard_queue_rate_by_key", queue="sms") == 0
    assert value(exported, "taskboard_queue_window_starts", queue="sms") == 1


def test_the_exporter_has_no_rate_series_for_a_queue_without_a_rate_limit(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    try:
        app.enqueue("t", queue="plain")
        app.enqueue("t", queue="keyed", concurrency_key="c")
        assert app.set_rate_limit("keyed", 3, dt.timedelta(minutes=2), by_key=True) is True
    finally:
        app.close()
    samples = exporter_samples(url)
    rate_series = {
        (name, dict(labels)["queue"])
        for name, labels in samples
        if name.startswith("taskboard_queue_rate") or name == "taskboard_queue_window_starts"
    }
    assert rate_series == {
        ("taskboard_queue_rate_starts", "keyed"),
        ("taskboard_queue_rate_per_seconds", "keyed"),
        ("taskboard_queue_rate_by_key", "keyed"),
        ("taskboard_queue_window_starts", "keyed"),
    }
    assert value(samples, "taskboard_queue_rate_per_seconds", queue="keyed") == 120
    assert value(samples, "taskboard_queue_rate_by_key", queue="keyed") == 1
    assert value(samples, "taskboard_queue_window_starts", queue="keyed") == 0


# -- the command line ----------------------------------------------------------------------


def test_the_cli_sets_a_rate_limit_and_status_shows_it(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    try:
        app.enqueue("sms", queue="sms")
        app.enqueue("sync", queue="sync", concurrency_key="c")
        app.enqueue("plain", queue="plain")
    finally:
        app.close()

    done = run(url, "rate-limit", "sms", "500/1s", "--json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {
        "queue": "sms",
        "starts": 500,
        "per_seconds": 1.0,
        "by_key": False,
        "changed": True,
    }
    assert rate_limit(url, "sms") == (500, SECOND, False)
    again = run(url, "rate-limit", "sms", "500/s")
    assert (
        again.stdout.strip() == 'queue "sms": at most 500 starts per 1s for the queue (unchanged)'
    )
    keyed = run(url, "rate-limit", "sync", "5/1m", "--by-key")
    assert keyed.stdout.strip() == (
        'queue "sync": at most 5 starts per 1m for each concurrency key'
    )
    assert rate_limit(url, "sync") == (5, dt.timedelta(minutes=1), True)

    with psycopg.connect(url, autocommit=True) as conn:  # one start in sms's window
        assert conn.execute("SELECT count(*) FROM taskboard.claim('sms', 'w')").fetchone() == (1,)
    header, *rows = run(url, "status").stdout.splitlines()
    assert header.split()[-4:] == ["key", "limit", "rate", "limit"]
    cells = {row.split()[0]: row for row in rows}
    assert cells["sms"].endswith("500/1s (1)")
    assert cells["sync"].endswith("5/1m per key (0)")
    assert len(cells["plain"]) < header.index("key limit")  # no limit of any kind

    cleared = run(url, "rate-limit", "sms", "none")
    assert cleared.stdout.strip() == 'queue "sms": no rate limit'
    assert rate_limit(url, "sms") == (None, None, False)
    gone = run(url, "rate-limit", "sms", "none", "--json")
    assert json.loads(gone.stdout) == {
        "queue": "sms",
        "starts": None,
        "per_seconds": None,
        "by_key": False,
        "changed": False,
    }


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["rate-limit", "sms", "0/1s"], "N must be between 1 and 100000, got 0"),
        (["rate-limit", "sms", "100001/1s"], "N must be between 1 and 100000, got 100001"),
        (["rate-limit", "sms", "500"], "'500' is not N/PER or none (e.g. 500/1s"),
        (["rate-limit", "sms", "x/1s"], "'x/1s' is not N/PER or none"),
        (["rate-limit", "sms", "5/0s"], "PER must be a positive duration, got '0s'"),
        (["rate-limit", "sms", "5/"], "PER must be a positive duration, got ''"),
        (["rate-limit", "sms", "5/5x"], "not a duration: '5x'"),
        (["rate-limit", "sms", "5/32d"], "PER must be at most 31d, got '32d'"),
        (
            ["rate-limit", "sms", "5/1e-7"],
            "PER '1e-7' rounds to 0: it must be at least one microsecond (0.000001s)",
        ),
        (["rate-limit", "sms", "none", "--by-key"], "--by-key needs a rate limit N/PER"),
        (["rate-limit", "sms"], "the following arguments are required: N/PER|none"),
    ],
)
def test_the_cli_refuses_a_bad_rate_limit_in_one_line(
    make_database: MakeDatabase, args: list[str], says: str
) -> None:
    url = make_database(deploy=True)
    done = run(url, *args)
    assert done.returncode == 2
    assert says in error_line(done)
    assert rate_limit(url, "sms") is None
