"""Release 0.4.8 met with jobs in flight: a 0.4.7 database with queued, running and expired
jobs upgraded and claimed from; and the way back to 0.4.7 with keys and key limits
present."""

from __future__ import annotations

from pathlib import Path

import psycopg
import pytest

from tests.support.cli import error_line, run
from tests.support.database import MakeDatabase, Sqitch

REPO = Path(__file__).resolve().parents[2]


def one(conn: psycopg.Connection, query: str, params: list[object] | None = None) -> object:
    row = conn.execute(query, params).fetchone()
    assert row is not None, query
    return row[0]


def test_a_0_4_7_database_with_jobs_in_flight_upgrades_and_claims(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = make_database(release="0.4.7")
    with psycopg.connect(url, autocommit=True) as conn:
        for _ in range(6):
            conn.execute("SELECT taskboard.enqueue('t', '{}', 'up')")
        held = conn.execute("SELECT job_id, token FROM taskboard.claim('up', 'old', 3)").fetchall()
        conn.execute(
            "UPDATE taskboard.jobs SET lease_expires_at = clock_timestamp() - interval '1 second'"
            " WHERE id = %s",
            [held[0][0]],
        )
    deployed = sqitch(url, "deploy", "--verify", "--to", "@v0.4.8")
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        assert one(conn, "SELECT taskboard.version()") == "0.4.8"
        # A token of 0.4.7 still completes; the expired job is reclaimed, the rest start.
        assert one(conn, "SELECT taskboard.complete(%s, %s)", list(held[1])) is True
        got = conn.execute("SELECT job_id FROM taskboard.claim('up', 'new', 10)").fetchall()
        assert held[0][0] in [g[0] for g in got] and len(got) == 4
        assert (
            one(conn, "SELECT count(*) FROM taskboard.jobs WHERE concurrency_key IS NOT NULL") == 0
        )
        # A key limit on the upgraded queue counts the jobs already running (no key: none).
        assert one(conn, "SELECT taskboard.set_key_limit('up', 1)") is True
        for _ in range(3):
            conn.execute("SELECT taskboard.enqueue('t', '{}', 'up', concurrency_key => 'c')")
        assert one(conn, "SELECT count(*) FROM taskboard.claim('up', 'new', 10)") == 1


def test_a_revert_to_0_4_7_with_keys_and_key_limits_says_what_it_drops(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        release = one(conn, "SELECT taskboard.version()")
        conn.execute("SELECT taskboard.set_key_limit('back', 2)")
        for key in ["a", "a", "b", None]:
            conn.execute(
                "SELECT taskboard.enqueue('t', '{}', 'back', concurrency_key => %s)", [key]
            )
        conn.execute("SELECT count(*) FROM taskboard.claim('back', 'w', 1)")
    refused = run(url, "migrate", "--revert", "--to", "0.4.7", "--yes")
    assert refused.returncode != 0
    line = error_line(refused)
    assert "concurrency keys (3 rows, added in 0.4.8)" in line, line
    assert "key limits (1 rows, added in 0.4.8)" in line, line
    raw = sqitch(url, "revert", "-y", "--to", "@v0.4.7")
    assert raw.returncode != 0 and "may drop data" in raw.stderr, raw.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        assert one(conn, "SELECT taskboard.version()") == release
    dropped = sqitch(url, "revert", "-y", "--to", "@v0.4.7", "--set", "drop_data=yes")
    assert dropped.returncode == 0, dropped.stdout + dropped.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        assert one(conn, "SELECT taskboard.version()") == "0.4.7"
        # The keyed jobs are plain jobs of 0.4.7 now; all of them run.
        assert one(conn, "SELECT count(*) FROM taskboard.claim('back', 'w', 10)") == 3
        with pytest.raises(psycopg.errors.UndefinedFunction):
            conn.execute("SELECT taskboard.set_key_limit('back', 1)")
    again = sqitch(url, "deploy", "--verify")
    assert again.returncode == 0, again.stdout + again.stderr
