"""The rate limit (schema 0.4.9) pressed at its edges with real sessions: windows whose
length depends on the calendar or on the session's time zone, claims that wait on the
queue's row while another commits, limits changed under claims in flight, the liveness
of short claims under keys, key limits, rates per key and queue limits together, the
numbers queue_stats and queue_overview report, and the way back to 0.4.8. Each holds on
any date: the pers whose sign depends on the calendar are judged by their fixed length."""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest
from psycopg import errors as pgerrors

from tests.support.cli import error_line, run
from tests.support.database import MakeDatabase, Sqitch, connect, value
from tests.support.processes import Workers, wait_until
from tests.support.processes import enqueue as enqueue_work

HOUR = timedelta(hours=1)


def enqueue(conn: psycopg.Connection[Any], queue: str, n: int, key: str | None = None) -> None:
    for _ in range(n):
        conn.execute("SELECT taskboard.enqueue('t', '{}', %s, concurrency_key => %s)", [queue, key])


def claim(conn: psycopg.Connection[Any], queue: str, batch: int = 1) -> list[int]:
    return [
        int(r[0])
        for r in conn.execute(
            "SELECT job_id FROM taskboard.claim(%s, 'w', %s, '1 hour')", [queue, batch]
        ).fetchall()
    ]


# -- the window's length --------------------------------------------------------------------


# Pers whose months and days (or days and hours) have opposite signs: on some dates clock +
# per and clock - per disagree on which side of the clock they fall. set_rate_limit keeps per
# as a fixed length (a month as 30 days, a day as 24 hours), so each is judged the same way on
# every date.
MIXED_PERS = {
    "1 mon -30 days": None,
    "1 mon -31 days": None,
    "-1 mon 30 days": None,
    "1 mon -29 days": 86_400,
    "-1 mon 31 days": 86_400,
    "-1 mon 30 days 1 hour": 3_600,
    "-1 mon 31 days 1 hour": 90_000,
    "1 day -24 hours": None,
    "1 day -23 hours": 3_600,
    "-1 day 25 hours": 3_600,
}


@pytest.mark.parametrize(("per", "seconds"), MIXED_PERS.items())
def test_a_per_of_mixed_signs_is_judged_by_its_fixed_length_on_any_date(
    make_database: MakeDatabase, per: str, seconds: int | None
) -> None:
    """check_interval once judged `per` by clock + per and the table's CHECK by interval
    order, a month counted as 30 days: a per between the two ('1 mon -30 days' when the
    next month has 31 days) passed the first and failed the second (23514, a constraint's
    name in the message, where the contract says 22023). Kept as its length in seconds, a
    per is positive or not whatever the date: 22023 when not, the fixed length when so."""
    url = make_database(deploy=True)
    with connect(url, "taskboard_admin") as admin:
        if seconds is None:
            with pytest.raises(psycopg.Error) as raised:
                admin.execute("SELECT taskboard.set_rate_limit('odd', 1, %s::interval)", [per])
            assert raised.value.sqlstate == "22023", (raised.value.sqlstate, str(raised.value))
            assert "per must be positive" in str(raised.value)
            assert (
                value(admin, "SELECT count(*) FROM taskboard.queue_overview() WHERE queue = 'odd'")
                == 0
            )
        else:
            assert value(admin, "SELECT taskboard.set_rate_limit('odd', 1, %s::interval)", [per])
            stored = value(
                admin,
                "SELECT extract(epoch FROM rate_per) FROM taskboard.queue_overview() WHERE queue = 'odd'",
            )
            assert stored == seconds, (per, stored)


@pytest.mark.parametrize("per", [p for p, s in MIXED_PERS.items() if s is not None])
def test_a_per_set_without_error_never_makes_an_empty_window(
    make_database: MakeDatabase, per: str
) -> None:
    """A per of months and days of opposite signs: on some dates clock + per is later than
    the clock (so a check by the calendar takes it) but clock - per is not earlier (claim's
    window would end before it begins), and claim would then count no start in its window:
    a limit of 1 start per window handing out one start per claim, without end. Kept as a
    fixed length, every per set_rate_limit takes makes a window that holds its starts."""
    url = make_database(deploy=True)
    with connect(url, "taskboard_admin") as admin:
        assert value(admin, "SELECT taskboard.set_rate_limit('odd', 1, %s::interval)", [per])
        enqueue(admin, "odd", 5)
        started = sum(len(claim(admin, "odd", 5)) for _ in range(5))
        assert started == 1, f"{started} starts under 1 per {per}"


def zone_with_a_transition_just_passed(shift_hours: int) -> str:
    """A POSIX time zone, UTC until the top of this hour and UTC + shift_hours for three
    days from then: its clock jumped ahead less than an hour ago."""
    now = datetime.now(UTC)
    day = now.timetuple().tm_yday - 1  # zero-based, 29 February counted
    # Near the year's end the rule's end falls early in the next year: a rule whose end
    # comes before its start keeps the shifted clock across the new year.
    return f"AAA0BBB-{shift_hours},{day}/{now.hour},{(day + 3) % 365}/0"


def test_the_window_of_a_day_does_not_shrink_in_a_session_of_another_time_zone(
    make_database: MakeDatabase,
) -> None:
    """claim computes its window as clock - per in the caller's TimeZone (it sets only
    search_path and two planner settings): across a daylight-saving jump a day is not 24
    hours. A worker whose session zone jumped ahead (here a whole day: a POSIX zone
    PostgreSQL accepts) sees an empty window, starts past the limit, and deletes from the
    log the starts it counted out, which the workers in UTC then no longer count."""
    url = make_database(deploy=True)
    with connect(url, "taskboard_admin") as admin:
        admin.execute("SELECT taskboard.set_rate_limit('zoned', 1, '1 day')")
        enqueue(admin, "zoned", 5)
    starts = 0
    with connect(url, "taskboard_worker") as utc, connect(url, "taskboard_worker") as far:
        utc.execute("SET TimeZone = 'UTC'")
        far.execute(
            "SELECT set_config('TimeZone', %s, false)", [zone_with_a_transition_just_passed(24)]
        )
        starts += len(claim(utc, "zoned"))
        starts += len(claim(far, "zoned"))
        starts += len(claim(utc, "zoned"))
    assert starts <= 1, f"{starts} starts under 1 per day"


def test_a_start_23_and_a_half_hours_ago_holds_a_day_window_in_any_zone(
    make_database: MakeDatabase,
) -> None:
    """The everyday form of the same: a zone whose clock sprang ahead an hour within the
    last day (any daylight-saving zone, the day after its spring change) makes a window of
    '1 day' 23 hours long. The start an earlier claim logged 23.5 hours ago is written
    into the log here, as the owner, since the test cannot wait a day."""
    url = make_database(deploy=True)
    with connect(url, "taskboard_admin") as admin:
        admin.execute("SELECT taskboard.set_rate_limit('dst', 1, '1 day')")
        enqueue(admin, "dst", 3)
    with psycopg.connect(url, autocommit=True) as owner:
        owner.execute(
            "INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)"
            " VALUES ('dst', NULL, clock_timestamp() - interval '23 hours 30 minutes')"
        )
    with connect(url, "taskboard_worker") as utc, connect(url, "taskboard_worker") as sprung:
        utc.execute("SET TimeZone = 'UTC'")
        assert claim(utc, "dst") == []  # the window of 24 hours holds the start
        sprung.execute(
            "SELECT set_config('TimeZone', %s, false)", [zone_with_a_transition_just_passed(1)]
        )
        assert claim(sprung, "dst") == [], "a day is 23 hours in this session"


@pytest.mark.parametrize(
    ("first", "then", "length"),
    [("1 mon", "30 days", "720:00:00"), ("1 day", "24 hours", "24:00:00")],
    ids=["month", "day"],
)
def test_a_per_is_kept_as_a_fixed_length_so_equal_pers_are_one_limit(
    make_database: MakeDatabase, first: str, then: str, length: str
) -> None:
    """Interval order calls '1 mon' and '30 days' (or '1 day' and '24 hours') equal, and
    claim's window, clock - per, would tell them apart (a month ago is 31 days back in
    some months; a day ago is 23 or 25 hours back across a daylight-saving change): per is
    kept as its fixed length, so both are one limit and one window."""
    url = make_database(deploy=True)
    with connect(url, "taskboard_admin") as admin:
        assert value(admin, "SELECT taskboard.set_rate_limit('eq', 5, %s::interval)", [first])
        changed = value(admin, "SELECT taskboard.set_rate_limit('eq', 5, %s::interval)", [then])
    with psycopg.connect(url, autocommit=True) as owner:
        kept = value(owner, "SELECT rate_per::text FROM taskboard.queues WHERE queue = 'eq'")
    assert (changed, kept) == (False, length)


def test_a_paused_queue_under_a_rate_starts_nothing_and_logs_nothing(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with connect(url, "taskboard_admin") as admin:
        admin.execute("SELECT taskboard.set_rate_limit('pz', 2, '1 hour')")
        enqueue(admin, "pz", 5)
        admin.execute("SELECT taskboard.pause('pz')")
        assert claim(admin, "pz", 5) == []
        admin.execute("SELECT taskboard.resume('pz')")
        assert len(claim(admin, "pz", 5)) == 2
        assert claim(admin, "pz", 5) == []


def test_batch_larger_than_the_room_takes_the_highest_priorities(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with connect(url, "taskboard_admin") as admin:
        admin.execute("SELECT taskboard.set_rate_limit('pr', 2, '1 hour')")
        ids = [
            int(value(admin, "SELECT taskboard.enqueue('t', '{}', 'pr', priority => %s)", [p]))
            for p in [0, 5, 1, 9]
        ]
        assert sorted(claim(admin, "pr", 100)) == sorted([ids[1], ids[3]])


def test_expired_leases_of_a_full_key_wait_while_the_others_start(
    make_database: MakeDatabase,
) -> None:
    """Per key, 1 start an hour: key a has started (its lease expired, attempts left, and a
    spent lease of a too); key b's lease expired without its window full. A claim
    reclaims b's, buries a's spent lease, starts the keyless job and c's, leaves a's
    expired lease and queued job alone, and returns short: nothing else may start."""
    url = make_database(deploy=True)
    with connect(url, "taskboard_admin") as admin, psycopg.connect(url, autocommit=True) as owner:
        admin.execute("SELECT taskboard.set_rate_limit('ek', 1, '1 hour', true)")
        a1 = value(admin, "SELECT taskboard.enqueue('t','{}','ek', concurrency_key => 'a')")
        assert claim(admin, "ek") == [a1]
        a_spent = value(
            admin,
            "SELECT taskboard.enqueue('t','{}','ek', concurrency_key => 'a', max_attempts => 1)",
        )
        b1 = value(admin, "SELECT taskboard.enqueue('t','{}','ek', concurrency_key => 'b')")
        # b's job started before the limit was set: its expired lease is its first start.
        owner.execute(
            "UPDATE taskboard.jobs SET state = 'running', attempt = 1, lease_token ="
            " gen_random_uuid(), lease_expires_at = clock_timestamp() - interval '1 second',"
            " started_at = clock_timestamp(), claimed_by = 'old' WHERE id = %s",
            [b1],
        )
        owner.execute(
            "UPDATE taskboard.jobs SET state = 'running', attempt = 1, lease_token ="
            " gen_random_uuid(), lease_expires_at = clock_timestamp() - interval '1 second',"
            " started_at = clock_timestamp(), claimed_by = 'old' WHERE id = %s",
            [a_spent],
        )
        owner.execute(
            "UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second'"
            " WHERE id = %s",
            [a1],
        )
        a2 = value(admin, "SELECT taskboard.enqueue('t','{}','ek', concurrency_key => 'a')")
        free = value(admin, "SELECT taskboard.enqueue('t','{}','ek')")
        c1 = value(admin, "SELECT taskboard.enqueue('t','{}','ek', concurrency_key => 'c')")
        got = claim(admin, "ek", 10)
        assert sorted(got) == sorted([b1, free, c1]), got
        states: dict[int, str] = dict(
            owner.execute(
                "SELECT id, state FROM taskboard.jobs WHERE id = ANY(%s)", [[a1, a_spent, a2]]
            ).fetchall()
        )
        assert states == {a1: "running", a_spent: "dead", a2: "queued"}
        assert claim(admin, "ek", 10) == []


def test_an_infinite_per_is_refused_where_postgresql_can_write_one(
    make_database: MakeDatabase,
) -> None:
    """'infinity' intervals exist from PostgreSQL 17 on; on 15, pgTAP's
    throws_ok('... ''infinity'')', '22023') in db/tests/89c catches 22007 from the cast
    instead. Here the refusal is checked where the value exists."""
    url = make_database(deploy=True)
    with connect(url, "taskboard_admin") as admin:
        if value(admin, "SELECT current_setting('server_version_num')::int") < 170000:
            with pytest.raises(psycopg.errors.InvalidDatetimeFormat):
                admin.execute("SELECT 'infinity'::interval")
            return
        with pytest.raises(psycopg.errors.InvalidParameterValue) as raised:
            admin.execute("SELECT taskboard.set_rate_limit('inf', 5, 'infinity'::interval)")
    assert raised.value.diag.message_primary == "per must be at most 31 days, got infinity"


# -- claims that wait, limits changed under claims in flight ----------------------------------


def blocked(conn: psycopg.Connection[Any]) -> bool:
    pid = conn.info.backend_pid
    with psycopg.connect(conn.info.dsn, autocommit=True) as probe:
        return bool(
            value(
                probe,
                "SELECT wait_event_type = 'Lock' FROM pg_stat_activity WHERE pid = %s",
                [pid],
            )
        )


def in_thread(target: Any) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def body() -> None:
        try:
            out["result"] = target()
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            out["error"] = exc

    thread = threading.Thread(target=body)
    thread.start()
    return thread, out


def wait_blocked(conn: psycopg.Connection[Any]) -> None:
    for _ in range(200):
        if blocked(conn):
            return
        time.sleep(0.02)
    raise AssertionError("the session never waited on a lock")


@pytest.mark.parametrize(
    "isolation",
    [
        psycopg.IsolationLevel.READ_COMMITTED,
        psycopg.IsolationLevel.REPEATABLE_READ,
        psycopg.IsolationLevel.SERIALIZABLE,
    ],
    ids=["rc", "rr", "ser"],
)
@pytest.mark.parametrize("by_key", [False, True], ids=["queue", "key"])
def test_a_claim_that_waited_on_the_queue_row_counts_the_start_it_waited_for(
    make_database: MakeDatabase, isolation: psycopg.IsolationLevel, by_key: bool
) -> None:
    """One claim holds the queue's row (its transaction open, one start made); another,
    its snapshot taken before, waits for it. After the first commits, the second starts
    nothing (READ COMMITTED) or raises 40001 (the others)."""
    url = make_database(deploy=True)
    key = "k" if by_key else None
    with connect(url, "taskboard_admin") as admin:
        admin.execute("SELECT taskboard.set_rate_limit('wq', 1, '1 hour', %s)", [by_key])
        enqueue(admin, "wq", 4, key)
    first = connect(url, "taskboard_worker", autocommit=False)
    second = connect(url, "taskboard_worker", autocommit=False)
    try:
        second.isolation_level = isolation
        second.execute("SELECT 1")  # the snapshot, before the first claim commits
        assert len(claim(first, "wq")) == 1
        thread, out = in_thread(lambda: claim(second, "wq", 3))
        wait_blocked(second)
        time.sleep(0.2)
        first.commit()
        thread.join(30)
        if isolation == psycopg.IsolationLevel.READ_COMMITTED:
            assert out.get("result") == [], out
        else:
            assert isinstance(out.get("error"), pgerrors.SerializationFailure), out
        second.rollback()
        assert claim(second, "wq", 3) == []
        second.commit()
    finally:
        first.close()
        second.close()


def test_a_limit_removed_and_set_again_under_a_claim_in_flight(
    make_database: MakeDatabase,
) -> None:
    """A claim's transaction open under 1 per hour: the removal waits for it, then forgets
    the queue's starts (as documented), and the limit set again counts from there."""
    url = make_database(deploy=True)
    with connect(url, "taskboard_admin") as admin:
        admin.execute("SELECT taskboard.set_rate_limit('rs', 1, '1 hour')")
        enqueue(admin, "rs", 5)
    worker = connect(url, "taskboard_worker", autocommit=False)
    admin = connect(url, "taskboard_admin")
    try:
        assert len(claim(worker, "rs", 3)) == 1
        thread, out = in_thread(
            lambda: value(admin, "SELECT taskboard.set_rate_limit('rs', NULL, NULL)")
        )
        wait_blocked(admin)
        worker.commit()
        thread.join(30)
        assert out.get("result") is True, out
        assert value(admin, "SELECT count(*) FROM taskboard.queue_stats WHERE queue = 'rs'") > 0
        assert value(admin, "SELECT taskboard.set_rate_limit('rs', 1, '1 hour')") is True
        assert len(claim(worker, "rs", 3)) == 1
        worker.commit()
        assert claim(worker, "rs", 3) == []
        worker.commit()
    finally:
        worker.close()
        admin.close()


def test_a_limit_tightened_waits_for_the_claim_in_flight_and_counts_it(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with connect(url, "taskboard_admin") as admin:
        admin.execute("SELECT taskboard.set_rate_limit('tq', 10, '1 hour')")
        enqueue(admin, "tq", 10)
    worker = connect(url, "taskboard_worker", autocommit=False)
    admin = connect(url, "taskboard_admin")
    try:
        assert len(claim(worker, "tq", 3)) == 3
        thread, out = in_thread(
            lambda: value(admin, "SELECT taskboard.set_rate_limit('tq', 3, '1 hour')")
        )
        wait_blocked(admin)
        worker.commit()
        thread.join(30)
        assert out.get("result") is True, out
        assert claim(worker, "tq", 5) == []
        worker.commit()
    finally:
        worker.close()
        admin.close()


def test_a_claim_rolled_back_leaves_its_window_room(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with connect(url, "taskboard_admin") as admin:
        admin.execute("SELECT taskboard.set_rate_limit('rb', 2, '1 hour')")
        enqueue(admin, "rb", 5)
    with connect(url, "taskboard_worker", autocommit=False) as worker:
        assert len(claim(worker, "rb", 5)) == 2
        worker.rollback()
        assert len(claim(worker, "rb", 5)) == 2
        worker.commit()
        assert claim(worker, "rb", 5) == []
        worker.commit()


# -- liveness and bounds, everything together --------------------------------------------------

KEYS = ["a", "b", "c", "d", None]


def configure(admin: psycopg.Connection[Any], rng: random.Random, queue: str) -> dict[str, Any]:
    conf: dict[str, Any] = {
        "max_running": rng.choice([None, None, 4, 7]),
        "per_key": rng.choice([None, 1, 2]),
        "by_key": rng.choice([False, True]),
    }
    conf["starts"] = rng.choice([1, 2, 3] if conf["by_key"] else [5, 10, 20])
    if conf["max_running"] is not None:
        admin.execute("SELECT taskboard.set_queue_limit(%s, %s)", [queue, conf["max_running"]])
    if conf["per_key"] is not None:
        admin.execute("SELECT taskboard.set_key_limit(%s, %s)", [queue, conf["per_key"]])
    admin.execute(
        "SELECT taskboard.set_rate_limit(%s, %s, '1 hour', %s)",
        [queue, conf["starts"], conf["by_key"]],
    )
    return conf


@pytest.mark.parametrize("seed", range(16))
def test_a_short_claim_leaves_nothing_startable_and_no_limit_is_passed(
    make_database: MakeDatabase, seed: int
) -> None:
    """A random queue under a rate (per queue or per key, one hour, so no window moves),
    with or without a queue limit and a key limit; jobs of four keys and none at three
    priorities; leases expired (attempts left or not), jobs completed, cancelled under
    their lease, failed to a retry an hour on, released. Whenever a claim
    returns fewer rows than its batch, another claim at once starts nothing; the starts
    never pass the rate, and the holders never pass the limits."""
    rng = random.Random(seed)
    url = make_database(deploy=True)
    queue = f"live{seed}"
    with connect(url, "taskboard_admin") as admin:
        conf = configure(admin, rng, queue)
        for _ in range(40):
            admin.execute(
                "SELECT taskboard.enqueue('t', '{}', %s, priority => %s, max_attempts => %s,"
                " concurrency_key => %s)",
                [queue, rng.choice([0, 0, 1, 2]), rng.choice([1, 3]), rng.choice(KEYS)],
            )
    started: Counter[str | None] = Counter()
    with connect(url, "taskboard_worker") as worker, psycopg.connect(url, autocommit=True) as owner:
        for step in range(40):
            batch = rng.choice([1, 2, 3, 5, 8])
            ids = claim(worker, queue, batch)
            rows = owner.execute(
                "SELECT id, concurrency_key FROM taskboard.jobs WHERE id = ANY(%s)", [ids]
            ).fetchall()
            for _, key in rows:
                started[key] += 1
            if len(rows) < batch:
                again = claim(worker, queue, 8)
                assert again == [], (step, conf, len(rows), batch, again)
            # The holders never pass the limits.
            holders: dict[str, int] = dict(
                owner.execute(
                    "SELECT coalesce(concurrency_key, ''), count(*) FROM taskboard.jobs"
                    " WHERE queue = %s AND state = 'running' GROUP BY 1",
                    [queue],
                ).fetchall()
            )
            if conf["per_key"] is not None:
                assert all(n <= conf["per_key"] for k, n in holders.items() if k), (conf, holders)
            # The starts never pass the rate (a reclaim is a start).
            if conf["by_key"]:
                assert all(n <= conf["starts"] for k, n in started.items() if k is not None), (
                    conf,
                    started,
                )
            else:
                assert sum(started.values()) <= conf["starts"], (conf, started)
            # Time passes for leases only: some expire, some jobs finish.
            running = owner.execute(
                "SELECT id, lease_token FROM taskboard.jobs WHERE queue = %s AND state = 'running'",
                [queue],
            ).fetchall()
            for job_id, token in running:
                roll = rng.random()
                if roll < 0.25:
                    owner.execute(
                        "UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp()"
                        " - interval '1 second' WHERE id = %s",
                        [job_id],
                    )
                elif roll < 0.45:
                    owner.execute("SELECT taskboard.complete(%s, %s)", [job_id, token])
                elif roll < 0.5:
                    owner.execute("SELECT taskboard.cancel(%s)", [job_id])
                elif roll < 0.55:
                    owner.execute(
                        "SELECT taskboard.fail(%s, %s, 'boom', retry_in => '1 hour')",
                        [job_id, token],
                    )
                elif roll < 0.6:
                    owner.execute("SELECT taskboard.release(%s, %s)", [job_id, token])
    assert sum(started.values()) > 0


# -- the numbers ------------------------------------------------------------------------------


@pytest.mark.parametrize("by_key", [False, True], ids=["queue", "key"])
def test_queue_stats_and_overview_count_the_window_as_claim_does(
    make_database: MakeDatabase, by_key: bool
) -> None:
    url = make_database(deploy=True)
    with connect(url, "taskboard_admin") as admin:
        admin.execute("SELECT taskboard.set_rate_limit('nums', 3, '1 hour', %s)", [by_key])
        for key in ["a", "a", "a", "a", "b", None, None]:
            enqueue(admin, "nums", 1, key)
        got = len(claim(admin, "nums", 10))
        # Per queue: 3 of 7. Per key: a's 3, b's 1, the two without a key.
        assert got == (6 if by_key else 3)
        stats = admin.execute(
            "SELECT DISTINCT rate_starts, rate_per, rate_by_key, window_starts"
            " FROM taskboard.queue_stats WHERE queue = 'nums'"
        ).fetchall()
        assert stats == [(3, HOUR, by_key, 3)]
        overview = admin.execute(
            "SELECT rate_starts, rate_per, rate_by_key, window_starts, max_running_per_key"
            " FROM taskboard.queue_overview() WHERE queue = 'nums'"
        ).fetchall()
        assert overview == [(3, HOUR, by_key, 3, None)]
        assert claim(admin, "nums", 10) == []


# -- the way back -----------------------------------------------------------------------------


def test_a_revert_to_0_4_8_with_rate_limits_says_what_it_drops(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT taskboard.set_rate_limit('back', 1, '1 hour', true)")
        conn.execute("SELECT taskboard.set_key_limit('back', 5)")
        for key in ["a", "a", "b", None]:
            enqueue(conn, "back", 1, key)
        assert len(claim(conn, "back", 10)) == 3
    refused = run(url, "migrate", "--revert", "--to", "0.4.8", "--yes")
    line = error_line(refused)
    assert "rate limits (1 rows, added in 0.4.9)" in line, line
    dropped = run(url, "migrate", "--revert", "--to", "0.4.8", "--yes", "--drop-data")
    assert dropped.returncode == 0, dropped.stdout + dropped.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        assert value(conn, "SELECT taskboard.version()") == "0.4.8"
        assert value(conn, "SELECT to_regclass('taskboard.queue_starts')") is None
        # The key limit stays; the job held back by the rate starts now.
        assert len(claim(conn, "back", 10)) == 1
        assert (
            value(conn, "SELECT max_running_per_key FROM taskboard.queues WHERE queue = 'back'")
            == 5
        )
    again = sqitch(url, "deploy", "--verify", "--to", "@v0.4.9")
    assert again.returncode == 0, again.stdout + again.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        assert value(conn, "SELECT taskboard.version()") == "0.4.9"
        assert (
            value(conn, "SELECT rate_starts IS NULL FROM taskboard.queues WHERE queue = 'back'")
            is True
        )


# -- limits changed while claimers race ---------------------------------------------------------


def test_a_limit_changed_over_and_over_under_racing_claimers_still_holds_its_largest(
    make_database: MakeDatabase,
) -> None:
    """The claimers of the race in test_rate_limit_races (every isolation level, leases
    left to expire and reclaimed, jobs completed, failed, released, cancelled) while an
    admin flips the limit between 2 and 4 starts per 0.5 s, per queue and per key, as fast
    as it can. Whatever the limit of the moment, no key starts more than 4 jobs in any
    window of 0.5 s (per queue, 4 bounds the whole queue and so each key)."""
    from tests.sql import test_rate_limit_races as races

    url = make_database(deploy=True)
    per = timedelta(seconds=0.5)
    races.set_limit(url, "flip", 4, per, False)
    races.enqueue(url, "flip")
    stop = threading.Event()
    changes: list[int] = []
    failures: list[BaseException] = []

    def changer() -> None:
        rng = random.Random(7)
        try:
            with connect(url, "taskboard_admin") as admin:
                while not stop.is_set():
                    if value(
                        admin,
                        "SELECT taskboard.set_rate_limit('flip', %s, %s, %s)",
                        [rng.choice([2, 4]), per, rng.choice([False, True])],
                    ):
                        changes.append(1)
                    time.sleep(rng.uniform(0, 0.05))
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            failures.append(exc)

    thread = threading.Thread(target=changer)
    thread.start()
    try:
        starts = races.race(url, "flip")
    finally:
        stop.set()
        thread.join(30)
    assert not failures, failures[0]
    assert len(changes) > 20
    assert races.most_in_a_window(starts, per, True) <= 4
    assert len(starts) > 20


# -- the cost of a claim per key ------------------------------------------------------------------

LOG_FETCHES = """
SELECT coalesce(sum(idx_tup_fetch), 0) FROM pg_catalog.pg_stat_xact_user_tables
 WHERE relid = 'taskboard.queue_starts'::regclass
"""


def test_a_claim_per_key_reads_the_starts_of_its_candidates_not_of_every_key(
    make_database: MakeDatabase,
) -> None:
    """Per key, every round of a claim gathers the keys whose window is full from the
    whole window's log of the queue: the starts of every key, 20,000 here over 2,000 keys
    that have nothing queued (written as the owner, as the claims of the last hour would
    have), for a claim of one job of a key that never started. Claims of a queue take
    turns, so this cost bounds the whole queue's claim rate; a batch pays it once per
    round."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as owner:
        owner.execute("SELECT taskboard.set_rate_limit('wide', 1000, '1 day', true)")
        owner.execute(
            "INSERT INTO taskboard.queue_starts (queue, concurrency_key, started_at)"
            " SELECT 'wide', 'old' || (g % 2000), clock_timestamp() - interval '1 hour'"
            " FROM generate_series(1, 20000) AS g"
        )
        enqueue(owner, "wide", 1, "new")
    with connect(url, "taskboard_worker") as worker, worker.transaction():
        before = value(worker, LOG_FETCHES)
        assert len(claim(worker, "wide")) == 1
        fetched = value(worker, LOG_FETCHES) - before
    assert fetched < 100, f"a claim of one job read {fetched} starts of the log"


# -- worker processes ---------------------------------------------------------------------------


def test_worker_processes_under_a_rate_keep_it_and_drain_the_queue(
    make_database: MakeDatabase, workers: Workers
) -> None:
    """Three worker processes of the Python driver claim 'default' under 3 starts per
    second: every job runs, no second holds more than 3 starts, and the queue drains in
    about its 5 windows (the workers poll; nothing wakes them when a window opens)."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT taskboard.set_rate_limit('default', 3, '1 second')")
    jobs = [enqueue_work(url, "work") for _ in range(15)]
    began = time.monotonic()
    for n in range(3):
        workers.start(url, f"w{n}")

    def done() -> bool:
        with psycopg.connect(url, autocommit=True) as conn:
            return bool(
                value(
                    conn,
                    "SELECT count(*) = %s FROM taskboard.jobs"
                    " WHERE id = ANY(%s) AND state = 'succeeded'",
                    [len(jobs), jobs],
                )
            )

    wait_until(done, "every job succeeded", timeout=30)
    took = time.monotonic() - began
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT started_at, attempt FROM taskboard.jobs WHERE id = ANY(%s)", [jobs]
        ).fetchall()
    assert all(attempt == 1 for _, attempt in rows)
    times = sorted(at for at, _ in rows)
    most = max(
        sum(1 for t in times[i:] if t < start + timedelta(seconds=1))
        for i, start in enumerate(times)
    )
    assert most <= 3, times
    assert took < 12, f"15 jobs at 3 a second took {took:.1f} s"


def test_racing_claimers_meet_no_error_but_40001_while_every_setting_changes(
    make_database: MakeDatabase,
) -> None:
    """The same race while an admin removes the rate limit and sets it again, per queue and
    per key, pauses and resumes the queue, and sets and removes its queue and key limits:
    the claimers meet no deadlock, no error but 40001 in the stricter levels, and the
    admin none at all."""
    from tests.sql import test_rate_limit_races as races

    url = make_database(deploy=True)
    per = timedelta(seconds=0.5)
    races.set_limit(url, "churn", 4, per, False)
    races.enqueue(url, "churn")
    stop = threading.Event()
    calls: Counter[str] = Counter()
    failures: list[BaseException] = []
    settings = [
        ("rate", "SELECT taskboard.set_rate_limit('churn', %s, %s, %s)"),
        ("unrate", "SELECT taskboard.set_rate_limit('churn', NULL, NULL)"),
        ("pause", "SELECT taskboard.pause('churn')"),
        ("resume", "SELECT taskboard.resume('churn')"),
        ("limit", "SELECT taskboard.set_queue_limit('churn', %s)"),
        ("keys", "SELECT taskboard.set_key_limit('churn', %s)"),
    ]

    def changer() -> None:
        rng = random.Random(11)
        try:
            with connect(url, "taskboard_admin") as admin:
                while not stop.is_set():
                    name, query = rng.choice(settings)
                    if name == "rate":
                        params: list[Any] = [rng.choice([2, 4]), per, rng.choice([False, True])]
                    elif name in ("limit", "keys"):
                        params = [rng.choice([None, 1, 3])]
                    else:
                        params = []
                    admin.execute(query, params or None)
                    calls[name] += 1
                    time.sleep(rng.uniform(0, 0.03))
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            failures.append(exc)

    thread = threading.Thread(target=changer)
    thread.start()
    try:
        starts = races.race(url, "churn")
    finally:
        stop.set()
        thread.join(30)
    assert not failures, failures[0]
    assert min(calls.values()) > 3, calls
    assert len(starts) > 20


# -- the way up ---------------------------------------------------------------------------------


def test_a_0_4_8_database_with_jobs_in_flight_upgrades_and_a_rate_counts_from_then(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    """Jobs queued, running and expired under 0.4.8 (with a key limit); after the upgrade a
    rate limit per key counts the starts from its setting on: a reclaim is one, the key
    limit still holds, and queue_stats shows the window."""
    url = make_database(release="0.4.8")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT taskboard.set_key_limit('up', 2)")
        for key in ["a", "a", "a", "b", "b", None]:
            enqueue(conn, "up", 1, key)
        held = claim(conn, "up", 2)  # a's first two
        conn.execute(
            "UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second'"
            " WHERE id = %s",
            [held[0]],
        )
    deployed = sqitch(url, "deploy", "--verify", "--to", "@v0.4.9")
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        assert value(conn, "SELECT taskboard.version()") == "0.4.9"
        assert value(conn, "SELECT taskboard.set_rate_limit('up', 1, '1 hour', true)") is True
        got = claim(conn, "up", 10)
        keys: dict[int, str | None] = dict(
            conn.execute(
                "SELECT id, concurrency_key FROM taskboard.jobs WHERE id = ANY(%s)", [got]
            ).fetchall()
        )
        # a: its expired lease reclaimed (its one start); b: one; the keyless job.
        assert held[0] in got and sorted(map(str, keys.values())) == ["None", "a", "b"], keys
        assert claim(conn, "up", 10) == []
        assert (
            value(
                conn,
                "SELECT max(window_starts) FROM taskboard.queue_stats WHERE queue = 'up'",
            )
            == 1
        )


@pytest.mark.parametrize("row_before", [False, True], ids=["no_row", "row"])
def test_a_snapshot_older_than_a_first_rate_limit_raises_40001(
    make_database: MakeDatabase, row_before: bool
) -> None:
    """A REPEATABLE READ claim whose snapshot predates a first rate limit (the queue with
    no row yet, or a row left by pause and resume) raises 40001 rather than start
    without counting."""
    url = make_database(deploy=True)
    with connect(url, "taskboard_admin") as admin:
        if row_before:
            admin.execute("SELECT taskboard.pause('fl')")
            admin.execute("SELECT taskboard.resume('fl')")
        enqueue(admin, "fl", 3)
    worker = connect(url, "taskboard_worker", autocommit=False)
    try:
        worker.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        worker.execute("SELECT 1")
        with connect(url, "taskboard_admin") as admin:
            admin.execute("SELECT taskboard.set_rate_limit('fl', 1, '1 hour')")
        with pytest.raises(pgerrors.SerializationFailure):
            claim(worker, "fl", 3)
        worker.rollback()
        assert len(claim(worker, "fl", 3)) == 1
        worker.commit()
    finally:
        worker.close()
