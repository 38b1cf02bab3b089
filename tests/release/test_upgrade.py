"""Release 0.3.0 over 0.2.0: a database with jobs in every state upgrades with its lease
tokens valid, uses what 0.3.0 adds, and reverts to @v0.2.0 with every job kept."""

from __future__ import annotations

from typing import Any

import psycopg

from tests.support.database import MakeDatabase, Sqitch, connect, value

PREVIOUS = "v0.2.0"


def states(url: str, job_ids: dict[str, int]) -> dict[str, str]:
    with connect(url, "taskboard_producer") as producer:
        return {
            name: value(producer, "SELECT (taskboard.get_job(%s)).state", [job_id])
            for name, job_id in job_ids.items()
        }


def test_a_v0_2_0_database_upgrades_to_0_3_0_with_its_jobs_and_tokens_and_reverts(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = make_database(deploy=False)
    deployed = sqitch(url, "deploy", "--verify", "--to", f"@{PREVIOUS}")
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    jobs: dict[str, int] = {}
    with connect(url, "taskboard_producer") as producer:
        for name in ("queued", "running", "succeeded", "dead", "cancelled"):
            jobs[name] = value(
                producer,
                "SELECT taskboard.enqueue(task => 't', queue => %s, max_attempts => 1)",
                [name],
            )
    held: dict[str, tuple[Any, ...]] = {}
    with connect(url, "taskboard_worker") as worker:
        for name in ("running", "succeeded", "dead"):
            row = worker.execute(
                "SELECT job_id, token FROM taskboard.claim(queue => %s, worker => 'w')", [name]
            ).fetchone()
            assert row is not None, name
            held[name] = tuple(row)
        assert value(worker, "SELECT taskboard.complete(%s, %s)", list(held["succeeded"]))
        assert value(worker, "SELECT taskboard.fail(%s, %s, 'boom')", list(held["dead"])) == "dead"
    with connect(url, "taskboard_admin") as admin:
        assert value(admin, "SELECT taskboard.cancel(%s)", [jobs["cancelled"]])
    before = states(url, jobs)
    assert before == {name: name for name in jobs}

    upgraded = sqitch(url, "deploy", "--verify", "--to", "@v0.3.0")
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    assert states(url, jobs) == before
    with connect(url, "taskboard_worker") as worker:
        assert value(worker, "SELECT taskboard.version()") == "0.3.0"
        job_id, token = held["running"]
        assert value(worker, "SELECT taskboard.lease_state(%s, %s)", [job_id, token]) == "held"
        assert value(worker, "SELECT taskboard.renew(%s, %s)", [job_id, token]) is not None
        # The job claimed before the upgrade has fence 0, which no holder was given; the
        # first claim after it hands out 1.
        claimed = worker.execute(
            "SELECT job_id, fence FROM taskboard.claim(queue => 'queued', worker => 'w')"
        ).fetchall()
        assert claimed == [(jobs["queued"], 1)]
        assert value(worker, "SELECT taskboard.complete(%s, %s)", [job_id, token]) is True
    with connect(url, "taskboard_admin") as admin:
        assert value(admin, "SELECT taskboard.retry(%s)", [jobs["dead"]]) is True
        assert value(admin, "SELECT taskboard.pause('queued')") is True
        found = admin.execute(
            "SELECT job_id, state, started_at IS NOT NULL FROM taskboard.find_jobs(queue => 'queued')"
        ).fetchall()
        assert found == [(jobs["queued"], "running", True)]
    with connect(url, "taskboard_producer") as producer:
        slot_job = value(
            producer,
            "SELECT taskboard.enqueue_periodic('nightly', date_trunc('minute', now()), 't')",
        )
        assert slot_job is not None

    reverted = sqitch(url, "revert", "-y", "--to", f"@{PREVIOUS}")
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr
    verified = sqitch(url, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    after = states(url, {**jobs, "slot": slot_job})
    assert after == {
        "queued": "running",
        "running": "succeeded",
        "succeeded": "succeeded",
        "dead": "queued",
        "cancelled": "cancelled",
        "slot": "queued",
    }
    with connect(url, "taskboard_worker") as worker:
        assert value(worker, "SELECT taskboard.version()") == "0.2.0"
        # 0.2.0's claim again: no pause any more, and no fence column.
        rows = worker.execute(
            "SELECT * FROM taskboard.claim(queue => 'dead', worker => 'w')"
        ).fetchall()
        assert [row[0] for row in rows] == [jobs["dead"]]
        with psycopg.ClientCursor(worker) as cur:
            cur.execute("SELECT * FROM taskboard.claim(queue => 'none', worker => 'w')")
            assert [c.name for c in cur.description or []][-1] == "idempotency_key"
