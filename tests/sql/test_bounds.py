"""Bounds reworked after v0.1.0: 'infinity' intervals, and the upgrade from v0.1.0 and back.

The finite bounds are pgTAP (db/tests/25-bounds.sql); 'infinity' as an
interval exists from PostgreSQL 17 on, so it is tested here per server.
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from tests.support.database import MakeDatabase, Sqitch, connect, value

INFINITE_DURATIONS = [
    ("SELECT * FROM taskboard.claim(queue => 'q', worker => 'w', lease => %s)", "lease"),
    ("SELECT taskboard.renew(job_id => 1, token => gen_random_uuid(), lease => %s)", "lease"),
    (
        "SELECT * FROM taskboard.renew_many(job_ids => ARRAY[1]::bigint[],"
        " tokens => ARRAY[gen_random_uuid()], lease => %s)",
        "lease",
    ),
    (
        "SELECT taskboard.fail(job_id => 1, token => gen_random_uuid(), error => 'e',"
        " retry_in => %s)",
        "retry_in",
    ),
    ("SELECT taskboard.release(job_id => 1, token => gen_random_uuid(), delay => %s)", "delay"),
]


@pytest.mark.parametrize(("query", "argument"), INFINITE_DURATIONS)
def test_an_infinite_duration_is_refused_naming_the_argument(
    make_database: MakeDatabase, query: str, argument: str
) -> None:
    url = make_database(deploy=True)
    with connect(url, "taskboard_worker") as conn:
        if value(conn, "SELECT current_setting('server_version_num')::int") < 170000:
            # No infinite interval before PostgreSQL 17: the value cannot even be written.
            with pytest.raises(psycopg.errors.InvalidDatetimeFormat):
                conn.execute("SELECT 'infinity'::interval")
            return
        with pytest.raises(psycopg.errors.InvalidParameterValue) as raised:
            conn.execute(query.replace("%s", "'infinity'::interval"))
    assert raised.value.diag.message_primary == f"{argument} must be at most 12 hours, got infinity"


def test_a_v0_1_0_database_upgrades_with_its_tokens_valid_and_reverts(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = make_database(release="0.1.0")
    with connect(url, "taskboard_producer") as producer:
        queued, running, finished = (
            value(producer, "SELECT taskboard.enqueue(task => 't', queue => %s)", [q])
            for q in ("queued", "running", "finished")
        )
    with connect(url, "taskboard_worker") as worker:
        held: dict[str, tuple[Any, ...]] = {}
        for q in ("running", "finished"):
            row = worker.execute(
                "SELECT job_id, token FROM taskboard.claim(queue => %s, worker => 'w')", [q]
            ).fetchone()
            assert row is not None, f"nothing claimed from {q}"
            held[q] = tuple(row)
        assert value(worker, "SELECT taskboard.complete(%s, %s)", list(held["finished"]))
        # v0.1.0 takes a lease the new release refuses.
        worker.execute("SELECT taskboard.renew(%s, %s, lease => '13 hours')", list(held["running"]))

    upgraded = sqitch(url, "deploy", "--verify")
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    with connect(url, "taskboard_worker") as worker:
        job_id, token = held["running"]
        assert value(worker, "SELECT taskboard.lease_state(%s, %s)", [job_id, token]) == "held"
        assert value(worker, "SELECT taskboard.renew(%s, %s)", [job_id, token]) is not None
        assert value(worker, "SELECT taskboard.complete(%s, %s)", [job_id, token]) is True
        with pytest.raises(psycopg.errors.InvalidParameterValue):
            worker.execute(
                "SELECT * FROM taskboard.claim(queue => 'queued', worker => 'w', lease => '13 hours')"
            )
    with connect(url, "taskboard_producer") as producer:
        states = {
            j: value(producer, "SELECT (taskboard.get_job(%s)).state", [j])
            for j in (queued, running, finished)
        }
    assert states == {queued: "queued", running: "succeeded", finished: "succeeded"}

    reverted = sqitch(url, "revert", "-y", "--to", "@v0.1.0")
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr
    verified = sqitch(url, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    with connect(url, "taskboard_worker") as worker:
        claimed = worker.execute(
            "SELECT job_id FROM taskboard.claim(queue => 'queued', worker => 'w', lease => '13 hours')"
        ).fetchall()
    assert claimed == [(queued,)]  # v0.1.0's claim again, and the queued job survived both ways
