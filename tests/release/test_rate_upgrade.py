"""Release 0.4.9 met with jobs in flight: a 0.4.8 database with queued, running and expired
jobs, and a key limit, upgraded and claimed from under a rate limit; and the way back to
0.4.8 with rate limits present."""

from __future__ import annotations

import psycopg
import pytest

from tests.support.cli import error_line, run
from tests.support.database import MakeDatabase, Sqitch


def one(conn: psycopg.Connection, query: str, params: list[object] | None = None) -> object:
    row = conn.execute(query, params).fetchone()
    assert row is not None, query
    return row[0]


def test_a_0_4_8_database_with_jobs_in_flight_upgrades_and_claims_under_a_rate_limit(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = make_database()
    assert sqitch(url, "deploy", "--to", "@v0.4.8").returncode == 0
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT taskboard.set_key_limit('up', 2)")
        for key in ["a", "a", "a", "b", None, None]:
            conn.execute("SELECT taskboard.enqueue('t', '{}', 'up', concurrency_key => %s)", [key])
        held = conn.execute("SELECT job_id, token FROM taskboard.claim('up', 'old', 3)").fetchall()
        conn.execute(
            "UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second'"
            " WHERE id = %s",
            [held[0][0]],
        )
    deployed = sqitch(url, "deploy", "--verify", "--to", "@v0.4.9")
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        assert one(conn, "SELECT taskboard.version()") == "0.4.9"
        # A token of 0.4.8 still completes.
        assert one(conn, "SELECT taskboard.complete(%s, %s)", list(held[1])) is True
        # A rate limit counts the starts from the claims after it: two an hour, so the
        # reclaim of the expired job and one queued job start, nothing more.
        assert one(conn, "SELECT taskboard.set_rate_limit('up', 2, '1 hour')") is True
        got = conn.execute(
            "SELECT job_id, attempt FROM taskboard.claim('up', 'new', 10)"
        ).fetchall()
        assert len(got) == 2 and (held[0][0], 2) in [tuple(g) for g in got]
        assert one(conn, "SELECT count(*) FROM taskboard.claim('up', 'new', 10)") == 0
        assert (
            one(conn, "SELECT max(window_starts) FROM taskboard.queue_stats WHERE queue = 'up'")
            == 2
        )


def test_a_revert_to_0_4_8_with_rate_limits_says_what_it_drops(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = make_database()
    assert sqitch(url, "deploy", "--to", "@v0.4.9").returncode == 0
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT taskboard.set_rate_limit('back', 2, '1 minute')")
        conn.execute("SELECT taskboard.set_rate_limit('keyed', 1, '1 hour', by_key => true)")
        for _ in range(3):
            conn.execute("SELECT taskboard.enqueue('t', '{}', 'back')")
        assert one(conn, "SELECT count(*) FROM taskboard.claim('back', 'w', 10)") == 2
    refused = run(url, "migrate", "--revert", "--to", "0.4.8", "--yes")
    assert refused.returncode != 0
    assert "rate limits (2 rows, added in 0.4.9)" in error_line(refused)
    raw = sqitch(url, "revert", "-y", "--to", "@v0.4.8")
    assert raw.returncode != 0 and "may drop data" in raw.stderr, raw.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        assert one(conn, "SELECT taskboard.version()") == "0.4.9"
    dropped = sqitch(url, "revert", "-y", "--to", "@v0.4.8", "--set", "drop_data=yes")
    assert dropped.returncode == 0, dropped.stdout + dropped.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        assert one(conn, "SELECT taskboard.version()") == "0.4.8"
        # Without its rate limit the queue's last job starts.
        assert one(conn, "SELECT count(*) FROM taskboard.claim('back', 'w', 10)") == 1
        assert one(conn, "SELECT to_regclass('taskboard.queue_starts')") is None
        with pytest.raises(psycopg.errors.UndefinedFunction):
            conn.execute("SELECT taskboard.set_rate_limit('back', 1, '1 second')")
    again = sqitch(url, "deploy", "--verify")
    assert again.returncode == 0, again.stdout + again.stderr
