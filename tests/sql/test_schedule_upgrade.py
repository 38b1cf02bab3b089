"""Schedules over an upgrade from 0.4.4: the rows the schema kept before learn the task
and queue of their job when it is still there, so a slot a producer took for a job of
its own before the upgrade shows as a conflict after it; producers lose
enqueue_periodic, and a revert to @v0.4.4 gives it back with every row kept."""

from __future__ import annotations

import datetime as dt

import psycopg
import pytest

from tests.support.database import MakeDatabase, Sqitch, connect, value

PREVIOUS = "@v0.4.4"
NOON = dt.datetime(2026, 1, 2, 12, 0, tzinfo=dt.UTC)


def test_schedule_rows_from_0_4_4_keep_their_task_and_queue_across_the_upgrade(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = make_database(release=PREVIOUS.removeprefix("@v"))
    with connect(url, "taskboard_producer") as producer:
        call = "SELECT taskboard.enqueue_periodic(%s, %s, %s, queue => %s)"
        value(producer, call, ["report", NOON, "send_report", "reports"])
        silenced = value(producer, call, ["nightly", NOON, "noop", "blackhole"])
        gone = value(producer, call, ["cleanup", NOON, "clean", "default"])
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DELETE FROM taskboard.jobs WHERE id = %s", [gone])  # as prune would

    upgraded = sqitch(url, "deploy", "--verify")
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    with connect(url, "taskboard_worker") as worker:
        rows = worker.execute(
            "SELECT schedule, task, queue FROM taskboard.schedules ORDER BY schedule"
        ).fetchall()
        assert rows == [
            ("cleanup", None, None),  # its job was pruned: not known
            ("nightly", "noop", "blackhole"),
            ("report", "send_report", "reports"),
        ]
        call = "SELECT taskboard.enqueue_periodic(%s, %s, %s, queue => %s)"
        assert value(worker, call, ["report", NOON, "send_report", "reports"]) is None
        with pytest.raises(psycopg.errors.UniqueViolation, match="noop on queue blackhole"):
            worker.execute(call, ["nightly", NOON, "send_report", "reports"])
        assert value(worker, call, ["cleanup", NOON, "clean", "default"]) is None
    with (
        connect(url, "taskboard_producer") as producer,
        pytest.raises(psycopg.errors.InsufficientPrivilege),
    ):
        producer.execute(call, ["report", NOON + dt.timedelta(hours=1), "send_report", "r"])

    # The revert drops the slots' task and queue: it is told it may (revert_guard).
    reverted = sqitch(url, "revert", "-y", "--to", PREVIOUS, "--set", "drop_data=yes")
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr
    with connect(url, "taskboard_producer") as producer:
        rows = producer.execute(
            "SELECT schedule, last_job_id FROM taskboard.schedules ORDER BY schedule"
        ).fetchall()
        assert [name for name, _ in rows] == ["cleanup", "nightly", "report"]
        assert dict(rows)["nightly"] == silenced
        later = NOON + dt.timedelta(hours=1)
        assert value(producer, call, ["report", later, "send_report", "reports"]) is not None
