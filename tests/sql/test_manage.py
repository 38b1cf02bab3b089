"""Managing jobs from Python and the command line: get_job, jobs, cancel, retry, prune
and result, each with its async twin; tables for people, --json for scripts, one line
and exit 2 for bad input, one line and exit 1 for a job that does not exist."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import threading
import uuid
from typing import Any

import psycopg
import pytest

from taskboard import (
    AsyncContext,
    InvalidArgument,
    JobCancelled,
    JobFailed,
    JobInfo,
    JobNotFound,
    PermissionDenied,
    Taskboard,
)
from taskboard_dev.server import as_user
from tests.support.cli import error_line, run
from tests.support.database import MakeDatabase
from tests.support.inprocess import finished, job, make_app, run_worker_until


def backdate(url: str, *job_ids: int, days: int) -> None:
    """Move the jobs' finished_at `days` into the past."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "UPDATE taskboard.jobs SET finished_at = clock_timestamp() - make_interval(days => %s)"
            " WHERE id = ANY(%s)",
            [days, list(job_ids)],
        )


def test_get_job_shows_a_job_without_its_token_and_none_for_an_unknown_id(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("look", queue="mail")
    async def look(ctx: AsyncContext, payload: Any) -> dict[str, Any]:
        return {"seen": payload["n"]}

    before = dt.datetime.now(dt.UTC)
    job_id = app.enqueue("look", {"n": 3}, priority=2, max_attempts=4)
    queued = app.get_job(job_id)
    assert isinstance(queued, JobInfo)
    assert (queued.queue, queued.task, queued.state, queued.attempt) == (
        "mail",
        "look",
        "queued",
        0,
    )
    assert (queued.max_attempts, queued.priority, queued.started_at) == (4, 2, None)
    assert not queued.finished

    run_worker_until(app, finished(url, job_id))
    done = app.get_job(job_id)
    assert done is not None and done.finished
    assert (done.state, done.result, done.errors) == ("succeeded", {"seen": 3}, [])
    assert done.started_at is not None and before <= done.started_at <= done.finished_at  # type: ignore[operator]
    token = str(job(url, job_id)["lease_token"])
    assert token not in json.dumps(done.as_json())

    assert app.get_job(10**15) is None
    assert asyncio.run(app.aget_job(job_id)) == done
    with pytest.raises(InvalidArgument, match="job_id must be an integer"):
        app.get_job("7")  # type: ignore[arg-type]
    app.close()


def test_jobs_filters_pages_and_refuses_bad_input(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    mail = [app.enqueue("send", {"n": n}, queue="mail") for n in range(5)]
    sms = app.enqueue("text", queue="sms")
    assert app.cancel(mail[1])

    assert [j.job_id for j in app.jobs()] == [sms, *reversed(mail)]
    assert [j.job_id for j in app.jobs(queue="mail", state="queued")] == [
        mail[4],
        mail[3],
        mail[2],
        mail[0],
    ]
    assert [j.job_id for j in app.jobs(task="text")] == [sms]
    first = app.jobs(queue="mail", limit=2)
    rest = app.jobs(queue="mail", after_id=first[-1].job_id, limit=2)
    last = app.jobs(queue="mail", after_id=rest[-1].job_id, limit=2)
    assert [j.job_id for j in first + rest + last] == list(reversed(mail))
    assert [j.state for j in asyncio.run(app.ajobs(state="cancelled"))] == ["cancelled"]

    with pytest.raises(InvalidArgument, match="state must be waiting, queued, running"):
        app.jobs(state="done")
    with pytest.raises(InvalidArgument, match="limit must be between 1 and 1000, got 0"):
        app.jobs(limit=0)
    with pytest.raises(InvalidArgument, match="limit must be between 1 and 1000, got 5000"):
        app.jobs(limit=5000)
    with pytest.raises(InvalidArgument, match="queue must not be empty"):
        app.jobs(queue="")
    app.close()


def test_cancel_and_retry_sync_and_async(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    a, b = app.enqueue("send"), app.enqueue("send")
    assert app.cancel(a) is True
    assert app.cancel(a) is False, "a cancelled job is finished"
    assert asyncio.run(app.acancel(b)) is True
    assert app.retry(a) is True
    assert asyncio.run(app.aretry(b)) is True
    assert [app.get_job(j).state for j in (a, b)] == ["queued", "queued"]  # type: ignore[union-attr]
    assert app.retry(a) is False, "a queued job is not retried"
    assert app.cancel(10**15) is False
    app.close()


def test_prune_deletes_old_finished_jobs_in_batches_until_none_is_left(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    old = [app.enqueue("send") for _ in range(5)]
    recent, waiting = app.enqueue("send"), app.enqueue("send")
    for job_id in (*old, recent):
        assert app.cancel(job_id)
    backdate(url, *old, days=10)

    assert app.prune(dt.timedelta(days=7), batch=2) == 5
    assert [app.get_job(j) for j in old] == [None] * 5
    assert app.get_job(recent) is not None and app.get_job(waiting) is not None
    assert asyncio.run(app.aprune(3600)) == 0, "the recent one finished under an hour ago"
    with pytest.raises(InvalidArgument, match="older_than must not be NULL or negative"):
        app.prune(-1)
    with pytest.raises(InvalidArgument, match="older_than must be seconds or a timedelta"):
        app.prune("7d")  # type: ignore[arg-type]
    with pytest.raises(InvalidArgument, match="batch must be at least 1"):
        app.prune(60, batch=0)
    app.close()


def test_result_waits_for_the_outcome(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("double")
    async def double(ctx: AsyncContext, payload: Any) -> int:
        return int(payload["n"]) * 2

    @app.task("broken")
    async def broken(ctx: AsyncContext, payload: Any) -> None:
        raise ValueError("no good")

    ok, bad, gone = (
        app.enqueue("double", {"n": 21}),
        app.enqueue("broken", max_attempts=1),
        app.enqueue("double"),
    )
    assert app.cancel(gone)
    with pytest.raises(TimeoutError, match=f"job {ok} did not finish in time"):
        app.result(ok, timeout=0.2)

    worker = threading.Thread(target=run_worker_until, args=(app, finished(url, ok, bad)))
    worker.start()
    try:
        assert app.result(ok, timeout=30) == 42
        with pytest.raises(JobFailed, match="no good") as failed:
            asyncio.run(app.aresult(bad, timeout=30))
        assert failed.value.errors[0]["attempt"] == 1
    finally:
        worker.join()
    with pytest.raises(JobCancelled):
        app.result(gone)
    with pytest.raises(JobNotFound, match="job 1000000000000000 does not exist"):
        app.result(10**15)
    with pytest.raises(ValueError, match="timeout"):
        app.result(ok, timeout=-1)
    app.close()


def test_managing_jobs_needs_the_admin_role(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    login = "mj_producer_" + uuid.uuid4().hex[:8]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {login} LOGIN IN ROLE taskboard_producer")
    producer = Taskboard.__new__(Taskboard)
    try:
        producer = make_app(as_user(url, login))
        job_id = producer.enqueue("send")
        assert producer.get_job(job_id) is not None, "a producer may read a job"
        assert [j.job_id for j in producer.jobs()] == [job_id], "and list jobs (0.4.0 on)"
        for change in (producer.cancel, producer.retry):
            with pytest.raises(PermissionDenied, match="grant taskboard_admin"):
                change(job_id)
        done = run(as_user(url, login), "cancel", str(job_id))
        assert done.returncode == 1 and "GRANT taskboard_admin TO" in error_line(done)
    finally:
        producer.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP ROLE {login}")


def test_reading_jobs_without_a_role_asks_for_the_producer_role_not_admin(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    login = "mj_nobody_" + uuid.uuid4().hex[:8]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE ROLE {login} LOGIN")
    nobody = Taskboard.__new__(Taskboard)
    try:
        nobody = make_app(as_user(url, login))
        for read in (nobody.jobs, lambda: nobody.get_job(1)):
            with pytest.raises(PermissionDenied, match="grant taskboard_producer") as refused:
                read()
            assert "admin" not in str(refused.value)
        with pytest.raises(PermissionDenied, match="grant taskboard_producer"):
            asyncio.run(nobody.ajobs())
    finally:
        nobody.close()
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP ROLE {login}")


# -- the command line ---------------------------------------------------------------


def test_the_cli_lists_shows_cancels_retries_and_prunes(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    a = app.enqueue("send", {"to": "ada"}, queue="mail")
    b = app.enqueue("send", queue="mail")
    app.close()

    table = run(url, "jobs", "--queue", "mail").stdout.splitlines()
    assert table[0].split() == [
        "id",
        "queue",
        "task",
        "state",
        "attempt",
        "run_at",
        "started_at",
        "finished_at",
    ]
    assert [line.split()[:5] for line in table[1:]] == [
        [str(b), "mail", "send", "queued", "0/5"],
        [str(a), "mail", "send", "queued", "0/5"],
    ]
    paged = run(url, "jobs", "--limit", "1", "--json")
    assert [j["job_id"] for j in json.loads(paged.stdout)] == [b]
    assert f"--after {b}" in run(url, "jobs", "--limit", "1").stderr

    cancelled = run(url, "cancel", str(a), str(b))
    assert cancelled.returncode == 0
    assert cancelled.stdout.splitlines() == [f"job {a} cancelled", f"job {b} cancelled"]
    again = run(url, "cancel", str(a), "999999999")
    assert again.returncode == 1
    assert again.stderr.splitlines() == [
        f"taskboard: error: job {a} is cancelled: not cancelled",
        "taskboard: error: job 999999999 does not exist",
    ]
    retried = run(url, "retry", str(a), "--json")
    assert json.loads(retried.stdout) == [
        {"job_id": a, "changed": True, "state": "queued", "exists": True}
    ]
    # Several ids: still one JSON document, the state of each job after the call.
    both = run(url, "cancel", str(a), "999999999", str(b), "--json")
    assert both.returncode == 1
    assert json.loads(both.stdout) == [
        {"job_id": a, "changed": True, "state": "cancelled", "exists": True},
        {"job_id": 999999999, "changed": False, "state": None, "exists": False},
        {"job_id": b, "changed": False, "state": "cancelled", "exists": True},
    ]
    assert run(url, "retry", str(a)).returncode == 0

    shown = run(url, "job", str(a))
    assert shown.returncode == 0
    fields = {
        k: v.strip() for k, _, v in (line.partition(" ") for line in shown.stdout.splitlines())
    }
    assert (fields["state"], fields["attempt"]) == ("queued", "0 of 5")
    as_json = json.loads(run(url, "job", str(a), "--json").stdout)
    assert (as_json["job_id"], as_json["state"], as_json["errors"]) == (a, "queued", [])
    missing = run(url, "job", "999999999")
    assert missing.returncode == 1
    assert error_line(missing) == "taskboard: error: job 999999999 does not exist"

    backdate(url, b, days=30)
    pruned = run(url, "prune", "--older-than", "7d", "--json")
    assert json.loads(pruned.stdout) == {"deleted": 1, "older_than_seconds": 604800.0}
    assert run(url, "prune", "--older-than", "7d").stdout.strip() == "deleted 0 finished jobs"


def test_the_cli_says_a_succeeded_job_has_succeeded(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    done = app.enqueue("send", queue="mail")
    app.close()
    with psycopg.connect(url, autocommit=True) as conn:
        claimed = conn.execute("SELECT job_id, token FROM taskboard.claim('mail', 'w')").fetchone()
        assert claimed is not None and claimed[0] == done
        conn.execute("SELECT taskboard.complete(%s, %s)", claimed)

    cancelled = run(url, "cancel", str(done))
    assert cancelled.returncode == 1
    assert cancelled.stderr.splitlines() == [
        f"taskboard: error: job {done} has succeeded: not cancelled"
    ]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["job", "x"], "not a job id: 'x'"),
        (["job", "0"], "not a job id: '0'"),
        (["cancel"], "the following arguments are required: ID"),
        (["retry", "-3"], "not a job id"),
        (["jobs", "--state", "done"], "invalid choice: 'done'"),
        (["jobs", "--limit", "0"], "must be between 1 and 1000"),
        (["jobs", "--queue", ""], "queue must not be empty"),
        (["prune"], "the following arguments are required: --older-than"),
        (["prune", "--older-than", "soon"], "not a duration: 'soon'"),
        (["prune", "--older-than=-1d"], "not a duration: '-1d'"),
    ],
)
def test_the_cli_refuses_bad_job_commands_in_one_line(
    make_database: MakeDatabase, args: list[str], says: str
) -> None:
    url = make_database(deploy=True)
    done = run(url, *args)
    assert done.returncode == 2, done.stderr
    assert says in error_line(done)
    assert len(done.stderr.strip().splitlines()) == 1
