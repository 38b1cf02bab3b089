"""A refused late write stays a refusal while an admin prunes the job: the line the
history would record goes with the job, and the holder gets its NULL or false, never a
foreign-key error (23503) from the job_events row it would have written."""

from __future__ import annotations

import threading
import time

import psycopg
import pytest

from tests.support.database import MakeDatabase, connect

CALLS = {
    "complete": ("SELECT taskboard.complete(%s, %s, '{}')", (False,)),
    "fail": ("SELECT taskboard.fail(%s, %s, 'late')", (None,)),
    "renew": ("SELECT taskboard.renew(%s, %s, '1 minute')", (None,)),
    "complete_many": (
        "SELECT completed FROM taskboard.complete_many(ARRAY[%s]::bigint[], ARRAY[%s]::uuid[])",
        (False,),
    ),
    "renew_many": (
        "SELECT count(*) FROM taskboard.renew_many(ARRAY[%s]::bigint[], ARRAY[%s]::uuid[], '1 minute')",
        None,
    ),
}


@pytest.mark.parametrize("call", sorted(CALLS))
def test_a_refused_write_racing_a_prune_is_still_refused(
    make_database: MakeDatabase, call: str
) -> None:
    url = make_database(deploy=True)
    with connect(url, "taskboard_worker") as worker:
        with psycopg.connect(url, autocommit=True) as conn:
            job = conn.execute("SELECT taskboard.enqueue('t', '{}', 'rp')").fetchone()
        assert job is not None
        row = worker.execute(
            "SELECT job_id, token FROM taskboard.claim('rp', 'w', 1, '1 second')"
        ).fetchone()
        assert row is not None
        job_id, token = row
        # Cancelled once its lease has ended: it holds no place, so prune may delete it.
        time.sleep(1.2)
        with connect(url, "taskboard_admin", autocommit=False) as admin:
            assert admin.execute("SELECT taskboard.cancel(%s)", [job_id]).fetchone() == (True,)
            admin.commit()
            # The admin prunes the cancelled job and has not committed yet.
            assert admin.execute("SELECT taskboard.prune('0 seconds')").fetchone() == (1,)
            outcome: dict[str, object] = {}
            sql, expected = CALLS[call]

            def late_write() -> None:
                try:
                    outcome["answer"] = worker.execute(sql, [job_id, token]).fetchone()
                except psycopg.Error as exc:
                    outcome["error"] = exc

            writer = threading.Thread(target=late_write)
            writer.start()
            time.sleep(0.5)
            admin.commit()
            writer.join(timeout=30)
        assert "error" not in outcome, f"{call} raised {outcome.get('error')!r}"
        if expected is not None:
            assert outcome["answer"] == expected
