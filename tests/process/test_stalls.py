"""The Python worker as real processes: stalls, kills and lost leases.

Each test runs tests/apps/worker_app.py in subprocesses on a fresh database.
Leases are a few seconds long; the tests wait for conditions in the
database, the handlers' journal or the workers' logs, never for a fixed
time before an assertion, and assert no timings beyond "far below an
interval that would otherwise explain it".
"""

from __future__ import annotations

import signal
import time
from pathlib import Path

import psycopg
import pytest

from tests.support.database import MakeDatabase, connect, expire, value
from tests.support.processes import (
    ADMIN,
    LEASE_SECONDS,
    Workers,
    create_ledger,
    effects,
    enqueue,
    job,
    ledger_rows,
    wait_for_expiry,
    wait_for_state,
    wait_until,
)


def test_stale_worker_cannot_complete_after_reclaim(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path
) -> None:
    """The story: A stalls holding Maya's email job, B reclaims and sends it,
    A resumes, "sends" too, and its completion is refused.

    A's lease is made to run out by moving its deadline (principle 2); A
    itself runs with a lease so long that its own watchdog and renewer stay
    quiet, so that A really gets as far as calling complete with its stale
    token. (With a short lease A gives the job up first: next test.)
    """
    url = make_database(deploy=True)
    job_id = enqueue(url, "work", {"to": "maya@example.com"})
    a_may_send = tmp_path / "a-may-send"
    a = workers.start(url, "worker-a", gate=a_may_send, lease=600, renew_every=300)
    claim_a = workers.journal.wait_for("start", job=job_id)
    assert claim_a["worker"] == "worker-a" and claim_a["attempt"] == 1

    a.send(signal.SIGSTOP)
    expire(url, job_id)
    assert job(url, job_id)["lease_expired"]

    b = workers.start(url, "worker-b")
    done = wait_for_state(url, job_id, "succeeded")
    claim_b = workers.journal.wait_for("effect", job=job_id, worker="worker-b")
    assert claim_b["attempt"] == 2
    assert str(done["lease_token"]) == claim_b["token"] != claim_a["token"]

    a_may_send.touch()
    a.send(signal.SIGCONT)
    a.wait_for_log(f"complete of job {job_id} (attempt 1) refused")

    # What the database cannot fence: A "sent" the email too, after B.
    sent = effects(workers.journal, job_id)
    assert [(e["worker"], e["attempt"]) for e in sent] == [("worker-b", 2), ("worker-a", 1)]
    # Nothing A did changed the job.
    after = job(url, job_id)
    assert (after["state"], after["attempt"], after["result"], after["finished_at"]) == (
        "succeeded",
        2,
        done["result"],
        done["finished_at"],
    )
    assert after["result"]["token"] == claim_b["token"]

    a_counts = a.terminate()
    assert (a_counts["claimed"], a_counts["succeeded"], a_counts["stale"], a_counts["lost"]) == (
        1,
        0,
        1,
        0,
    )
    b_counts = b.terminate()
    assert (b_counts["claimed"], b_counts["succeeded"]) == (1, 1)


def test_stalled_worker_past_its_lease_gives_the_job_up_and_sends_nothing(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path
) -> None:
    """A is SIGSTOPped until its lease has run out on the server clock and B
    has completed the job. When A resumes it neither succeeds nor "sends":
    its watchdog or renewal gives the job up (the handler is cancelled), or
    the handler's holder check right before the effect says no and A's
    completion is then refused.
    """
    url = make_database(deploy=True)
    job_id = enqueue(url, "work", {"check_holder": True})
    a_may_send = tmp_path / "a-may-send"
    a = workers.start(url, "worker-a", gate=a_may_send)
    claim_a = workers.journal.wait_for("start", job=job_id)

    a.send(signal.SIGSTOP)
    wait_for_expiry(url, job_id)
    b = workers.start(url, "worker-b")
    done = wait_for_state(url, job_id, "succeeded")
    assert done["attempt"] == 2

    a_may_send.touch()
    a.send(signal.SIGCONT)
    wait_until(
        lambda: (
            f"lost job {job_id} (attempt 1)" in a.log()
            or f"complete of job {job_id} (attempt 1) refused" in a.log()
        ),
        "worker A to give the job up or be refused",
    )
    a_counts = a.terminate()
    assert a_counts["succeeded"] == 0
    assert a_counts["lost"] + a_counts["stale"] == 1
    a_events = [e["event"] for e in workers.journal.events(token=claim_a["token"])]
    assert a_events in (["start", "cancelled"], ["start", "skipped"]), a_events

    sent = effects(workers.journal, job_id)
    assert [(e["worker"], e["attempt"]) for e in sent] == [("worker-b", 2)]
    assert job(url, job_id)["result"]["token"] == sent[0]["token"]
    assert b.terminate()["succeeded"] == 1


def test_killed_worker_job_is_reclaimed_and_completed_once(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path
) -> None:
    """kill -9 in the middle of a handler: after the lease another worker
    reclaims the job and completes it once."""
    url = make_database(deploy=True)
    job_id = enqueue(url, "work")
    a = workers.start(url, "worker-a", gate=tmp_path / "never")
    claim_a = workers.journal.wait_for("start", job=job_id)

    a.send(signal.SIGKILL)
    assert a.wait_exit() == -signal.SIGKILL
    b = workers.start(url, "worker-b")
    done = wait_for_state(url, job_id, "succeeded")

    assert done["attempt"] == 2
    sent = effects(workers.journal, job_id)
    assert len(sent) == 1
    assert sent[0]["worker"] == "worker-b"
    assert sent[0]["token"] == str(done["lease_token"]) == done["result"]["token"]
    assert sent[0]["token"] != claim_a["token"]
    counts = b.terminate()
    assert (counts["claimed"], counts["succeeded"], counts["lost"], counts["stale"]) == (1, 1, 0, 0)


def test_renewal_keeps_transactional_handlers_leases_while_they_hold_every_pool_connection(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path
) -> None:
    """The reserve: with pool_size=4 there are two handler slots. Two
    transactional handlers each hold their pool connection in an open
    transaction for four leases; renewal has a connection of its own, so a
    competitor claiming the same queue the whole time gets nothing."""
    url = make_database(deploy=True)
    create_ledger(url)
    jobs = [enqueue(url, "ledger", {"watch": True}) for _ in range(2)]
    gate = tmp_path / "let-go"
    holder = workers.start(url, "holder", gate=gate, pool_size=4)
    tokens = {j: workers.journal.wait_for("start", job=j)["token"] for j in jobs}
    competitor = workers.start(url, "competitor", poll_interval=0.1)
    competitor.wait_for_log("worker competitor started")

    end = time.monotonic() + 4 * LEASE_SECONDS
    while time.monotonic() < end:
        for j in jobs:
            row = job(url, j)
            assert (row["state"], row["attempt"], str(row["lease_token"])) == (
                "running",
                1,
                tokens[j],
            )
            assert not row["lease_expired"], f"job {j}'s lease ran out while its handler held it"
        time.sleep(0.2)
    gate.touch()

    for j in jobs:
        done = wait_for_state(url, j, "succeeded")
        assert done["attempt"] == 1
        assert [str(r["token"]) for r in ledger_rows(url, j)] == [tokens[j]]
    assert workers.journal.events("not_holder") == []
    assert competitor.terminate()["claimed"] == 0
    counts = holder.terminate()
    assert (counts["claimed"], counts["succeeded"], counts["lost"]) == (2, 2, 0)


@pytest.mark.parametrize("how", ["refused", "expired"])
def test_stale_transactional_handler_writes_vanish(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path, how: str
) -> None:
    """A transactional handler's ledger row commits only with its completion.

    A inserts its row and stalls (SIGSTOP); its lease runs out; B reclaims,
    inserts its own row and completes. When A resumes, its row does not
    survive: "refused" moves A's deadline (A runs with a long lease, so it
    gets to call complete, which returns false and rolls back); "expired"
    lets the lease run out on the server clock (A gives the job up, or is
    refused, and rolls back either way).
    """
    url = make_database(deploy=True)
    create_ledger(url)
    job_id = enqueue(url, "ledger")
    a_go = tmp_path / "a-go"
    slow = {"lease": 600, "renew_every": 300} if how == "refused" else {}
    a = workers.start(url, "worker-a", gate=a_go, **slow)
    claim_a = workers.journal.wait_for("start", job=job_id)

    a.send(signal.SIGSTOP)
    if how == "refused":
        expire(url, job_id)
    else:
        wait_for_expiry(url, job_id)
    b = workers.start(url, "worker-b")
    done = wait_for_state(url, job_id, "succeeded")
    assert done["attempt"] == 2
    token_b = str(done["lease_token"])
    assert [(str(r["token"]), r["note"]) for r in ledger_rows(url, job_id)] == [
        (token_b, "worker-b")
    ]

    a_go.touch()
    a.send(signal.SIGCONT)
    refused = f"complete of job {job_id} (attempt 1) refused"
    if how == "refused":
        a.wait_for_log(refused)
    else:
        wait_until(
            lambda: refused in a.log() or f"lost job {job_id} (attempt 1)" in a.log(),
            "worker A to give the job up or be refused",
        )
    a_counts = a.terminate()
    assert a_counts["succeeded"] == 0
    assert a_counts["stale"] + a_counts["lost"] == 1
    if how == "refused":
        assert a_counts["stale"] == 1
        assert workers.journal.events("effect", token=claim_a["token"])  # it got that far

    rows = ledger_rows(url, job_id)
    assert [(str(r["token"]), r["note"]) for r in rows] == [(token_b, "worker-b")]
    assert job(url, job_id)["result"]["token"] == token_b
    assert b.terminate()["succeeded"] == 1


@pytest.mark.parametrize("task", ["work", "work_sync"])
def test_cancelled_job_is_lost_and_never_settled(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path, task: str
) -> None:
    """An admin cancels a running job: renewal is refused, ctx.lost turns
    true, an async handler is cancelled, and the worker neither completes
    nor fails the job."""
    url = make_database(deploy=True)
    job_id = enqueue(url, task)
    w = workers.start(url, "w", gate=tmp_path / "never")
    workers.journal.wait_for("start", job=job_id)

    with connect(url, ADMIN) as admin:
        assert value(admin, "SELECT taskboard.cancel(%s)", [job_id]) is True
    w.wait_for_log(f"lost job {job_id} (attempt 1): renewal refused")
    if task == "work":
        assert workers.journal.wait_for("cancelled", job=job_id)["lost"] is True
    else:
        workers.journal.wait_for("lost", job=job_id)  # the thread saw ctx.lost and returned

    counts = w.terminate()
    assert counts == {
        "claimed": 1,
        "succeeded": 0,
        "failed": 0,
        "dead": 0,
        "lost": 1,
        "stale": 0,
        "released": 0,
    }
    row = job(url, job_id)
    assert (row["state"], row["attempt"], row["errors"]) == ("cancelled", 1, [])


def test_job_is_given_up_when_renewal_cannot_get_through(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path
) -> None:
    """Renewal blocked (the job's row locked by another session): once the
    lease could have expired the worker gives the job up on its own clock and
    cancels the handler; the job is claimed again later and completed."""
    url = make_database(deploy=True)
    gate = tmp_path / "second-attempt-may-pass"
    job_id = enqueue(url, "work", {"gate": str(gate)})
    w = workers.start(url, "w")
    first = workers.journal.wait_for("start", job=job_id)

    with psycopg.connect(url) as locker:
        locker.execute("SELECT 1 FROM taskboard.jobs WHERE id = %s FOR UPDATE", [job_id])
        w.wait_for_log(f"lost job {job_id} (attempt 1): no successful renewal")
        assert workers.journal.wait_for("cancelled", job=job_id, attempt=1)["lost"] is True
        assert f"job {job_id}: renewal could not be made now" in w.log()
        wait_for_expiry(url, job_id)
        gate.touch()
        locker.rollback()

    done = wait_for_state(url, job_id, "succeeded")
    assert done["attempt"] == 2
    sent = effects(workers.journal, job_id)
    assert [e["attempt"] for e in sent] == [2]
    assert sent[0]["token"] != first["token"]
    counts = w.terminate()
    assert (counts["claimed"], counts["succeeded"], counts["lost"], counts["stale"]) == (2, 1, 1, 0)


def test_commit_broken_off_is_resolved_with_lease_state(
    make_database: MakeDatabase, workers: Workers
) -> None:
    """The connection of a transactional handler breaks during COMMIT: the
    worker asks lease_state on another connection, learns the COMMIT did not
    happen, fails the attempt without calling complete again, and the next
    attempt commits its writes once.

    A deferred trigger makes the first COMMIT slow, so that its backend can
    be terminated in the middle of it. The worker's lease is long, so that
    its watchdog stays out of the way while the COMMIT hangs.
    """
    url = make_database(deploy=True)
    create_ledger(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE SEQUENCE public.commits")
        conn.execute(
            "CREATE FUNCTION public.slow_first_commit() RETURNS trigger LANGUAGE plpgsql AS $$"
            " BEGIN"
            "   IF nextval('public.commits') = 1 THEN PERFORM pg_sleep(600); END IF;"
            "   RETURN NULL;"
            " END $$"
        )
        conn.execute(
            "CREATE CONSTRAINT TRIGGER slow_first_commit AFTER INSERT ON public.ledger"
            " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION public.slow_first_commit()"
        )
    w = workers.start(url, "w", lease=60, renew_every=20)
    job_id = enqueue(url, "ledger")

    def committing() -> int | None:
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT pid FROM pg_stat_activity"
                " WHERE application_name = 'taskboard w' AND state = 'active' AND query = 'COMMIT'"
            ).fetchone()
        return None if row is None else int(row[0])

    pid = wait_until(committing, "the handler's COMMIT to hang")
    with psycopg.connect(url, autocommit=True) as conn:
        assert value(conn, "SELECT pg_terminate_backend(%s)", [pid]) is True
    w.wait_for_log(f"job {job_id}: connection lost during COMMIT")
    w.wait_for_log(f"job {job_id}: its COMMIT did not happen (lease_state held)")

    done = wait_for_state(url, job_id, "succeeded")
    assert done["attempt"] == 2
    [error] = done["errors"]
    assert error["attempt"] == 1 and "during COMMIT, which did not happen" in error["error"], error
    assert [str(r["token"]) for r in ledger_rows(url, job_id)] == [str(done["lease_token"])]
    counts = w.terminate()
    assert (counts["claimed"], counts["succeeded"], counts["failed"], counts["stale"]) == (
        2,
        1,
        1,
        0,
    )
