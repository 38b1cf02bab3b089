"""Jobs that wait for other jobs, through the driver and the command line, on a real database
with a real worker: a job enqueued with depends_on is waiting until its dependencies have
ended, runs after them, is cancelled when one ends dead (or runs all the same with
on_dependency_failure="run"); a group's jobs commit together; a follow-up enqueued by a
transactional handler exists if and only if its job's completion is accepted."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest

from taskboard import (
    AsyncContext,
    InvalidArgument,
    JobEvent,
    SchemaVersionError,
    SyncContext,
    metrics,
)
from tests.support.cli import enqueue, error_line, run
from tests.support.database import MakeDatabase, Sqitch
from tests.support.inprocess import (
    DEADLINE_SECONDS,
    finished,
    job,
    make_app,
    run_worker_until,
    worker_running,
)


def states(url: str, *job_ids: int) -> list[str]:
    return [job(url, j)["state"] for j in job_ids]


def job_count(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM taskboard.jobs").fetchone()
    assert row is not None
    return int(row[0])


def exists(url: str, job_id: int) -> bool:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM taskboard.jobs WHERE id = %s", [job_id]).fetchone()
    return row == (1,)


# -- a worker runs a graph of jobs in dependency order ------------------------------------


def test_a_worker_runs_each_job_after_every_job_it_depends_on(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    ran: list[str] = []

    @app.task("step", queue="build")
    def step(ctx: SyncContext, payload: Any) -> str:
        ran.append(payload["name"])
        time.sleep(0.02)
        return str(payload["name"])

    @app.task("report", queue="mail")  # another queue: dependencies may be in any queue
    def report(ctx: SyncContext, payload: Any) -> None:
        ran.append("report")

    try:
        fetch = step.enqueue({"name": "fetch"})
        left = step.enqueue({"name": "left"}, depends_on=[fetch])
        right = app.enqueue("step", {"name": "right"}, depends_on=[fetch])
        join = step.enqueue({"name": "join"}, depends_on=[left, right, fetch])
        mail = report.enqueue(depends_on=[join])
        assert states(url, fetch, left, right, join, mail) == [
            "queued",
            "waiting",
            "waiting",
            "waiting",
            "waiting",
        ]
        run_worker_until(app, finished(url, mail), concurrency=4)
    finally:
        app.close()

    edges = {left: [fetch], right: [fetch], join: [left, right, fetch], mail: [join]}
    for dependent, dependencies in edges.items():
        started = job(url, dependent)["started_at"]
        for dependency in dependencies:
            ended = job(url, dependency)["finished_at"]
            assert started > ended, (dependent, dependency)
    assert states(url, fetch, left, right, join, mail) == ["succeeded"] * 5
    assert ran[0] == "fetch" and ran[-2:] == ["join", "report"]


def test_a_dead_dependency_cancels_its_dependents_and_theirs(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    ran: list[str] = []

    @app.task("step")
    def step(ctx: SyncContext, payload: Any) -> None:
        ran.append(payload["name"])
        if payload.get("fail"):
            raise RuntimeError("the disk is full")

    try:
        broken = step.enqueue({"name": "broken", "fail": True}, max_attempts=1)
        after = step.enqueue({"name": "after"}, depends_on=[broken])
        after_after = step.enqueue({"name": "after_after"}, depends_on=[after])
        anyway = step.enqueue({"name": "anyway"}, depends_on=[broken], on_dependency_failure="run")
        run_worker_until(app, finished(url, broken, after, after_after, anyway))
    finally:
        app.close()

    assert states(url, broken, after, after_after, anyway) == [
        "dead",
        "cancelled",
        "cancelled",
        "succeeded",
    ]
    assert [e["error"] for e in job(url, after)["errors"]] == [f"dependency {broken} ended dead"]
    assert [e["error"] for e in job(url, after_after)["errors"]] == [
        f"dependency {after} ended cancelled"
    ]
    assert sorted(ran) == ["anyway", "broken"]
    assert job(url, anyway)["started_at"] > job(url, broken)["finished_at"]


def test_a_cancelled_waiting_job_is_cancelled_with_its_dependents(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    try:
        first = app.enqueue("t")
        waiting = app.enqueue("t", depends_on=[first])
        after = app.enqueue("t", depends_on=[waiting])
        assert app.cancel(waiting) is True
        assert app.jobs(state="waiting") == []
    finally:
        app.close()
    assert states(url, first, waiting, after) == ["queued", "cancelled", "cancelled"]


# -- the arguments ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"depends_on": [True]}, "depends_on[0] must be an integer, got True"),
        ({"depends_on": ["1"]}, "depends_on[0] must be an integer, got '1'"),
        ({"depends_on": [1.0]}, "depends_on[0] must be an integer, got 1.0"),
        ({"depends_on": 7}, "depends_on must be a list (any iterable of items), got int"),
        ({"depends_on": "12"}, "depends_on must be a list (any iterable of items), got str"),
        ({"depends_on": [2**63]}, "depends_on[0] is out of range"),
        ({"depends_on": range(1, 10_002)}, "depends_on must name at most 10000 jobs, got 10001"),
        (
            {"depends_on": [1], "dedupe_key": "k"},
            "a job with depends_on cannot have a dedupe_key",
        ),
        ({"on_dependency_failure": "ignore"}, "on_dependency_failure must be cancel or run"),
        ({"on_dependency_failure": None}, "on_dependency_failure must be cancel or run"),
        ({"depends_on": [987_654_321]}, "depends_on names job 987654321, which does not exist"),
    ],
)
def test_a_bad_dependency_argument_is_refused_naming_it_and_enqueues_nothing(
    make_database: MakeDatabase, options: dict[str, Any], says: str
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    try:
        with pytest.raises(InvalidArgument) as refused:
            app.enqueue("t", **options)
    finally:
        app.close()
    assert says in str(refused.value)
    assert job_count(url) == 0


def test_a_schema_before_0_5_0_is_refused_at_the_first_call_naming_migrate(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = make_database(release="0.4.9")
    app = make_app(url)
    says = (
        "the database's taskboard schema is version 0.4.9; this driver supports 0.6.0 up to "
        "(not including) 0.8.0: run `taskboard migrate`"
    )
    try:
        with pytest.raises(SchemaVersionError) as refused:
            app.enqueue("t")
        assert str(refused.value) == says
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT count(*) FROM taskboard.jobs").fetchone() == (0,)

        async def twin() -> None:
            try:
                await app.aset_rate_limit("t", 5, 1.0)
            finally:
                await app.aclose()

        with pytest.raises(SchemaVersionError, match=r"version 0\.4\.9"):
            asyncio.run(twin())
        for command in (["enqueue", "t"], ["key-limit", "t", "1"], ["status"]):
            done = run(url, *command)  # one line naming the fix
            assert done.returncode == 1, (command, done.stdout)
            assert error_line(done) == f"taskboard: error: {says}", command
        # Migrated since: the next call reads the schema again.
        migrated = sqitch(url, "deploy")
        assert migrated.returncode == 0, migrated.stderr
        first = app.enqueue("t")
        waiting = app.enqueue("t", depends_on=[first])
    finally:
        app.close()
    assert states(url, first, waiting) == ["queued", "waiting"]


# -- groups ---------------------------------------------------------------------------------


def test_a_group_commits_its_jobs_together_and_may_depend_on_its_own(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("resize", queue="images")
    def resize(ctx: SyncContext, payload: Any) -> None:
        pass

    try:
        with app.group() as g:
            original = g.enqueue("fetch", {"url": "https://example.com/a.png"})
            sizes = g.enqueue_many(resize, [{"px": 64}, {"px": 512}])
            joined = g.enqueue(resize, {"px": 0}, depends_on=[original, *sizes])
            also = resize.enqueue({"px": 1}, depends_on=[original], conn=g.conn)
            with psycopg.connect(url, autocommit=True) as other:
                seen = other.execute("SELECT count(*) FROM taskboard.jobs").fetchone()
            assert seen == (0,), "nothing is visible before the group commits"
    finally:
        app.close()
    assert states(url, original, *sizes, joined, also) == [
        "queued",
        "queued",
        "queued",
        "waiting",
        "waiting",
    ]
    assert job(url, joined)["queue"] == "images"


def test_a_group_that_raises_enqueues_none_of_its_jobs(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    try:
        with pytest.raises(LookupError, match="no such customer"), app.group() as g:
            first = g.enqueue("t")
            g.enqueue("t", depends_on=[first])
            raise LookupError("no such customer")
        # A call refused by the database spoils the group, even when the block goes on.
        with pytest.raises(psycopg.errors.InFailedSqlTransaction), app.group() as g:
            g.enqueue("t")
            with pytest.raises(InvalidArgument, match="does not exist"):
                g.enqueue("t", depends_on=[987_654_321])
        assert app.enqueue("t") > 0  # the pool's connection is fine afterwards
    finally:
        app.close()
    assert job_count(url) == 1


def test_an_async_group_commits_together_and_rolls_back_on_an_exception(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)

    @app.task("step")
    async def step(ctx: AsyncContext, payload: Any) -> None:
        pass

    async def main() -> list[int]:
        try:
            with contextlib.suppress(LookupError):
                async with app.agroup() as g:
                    await g.aenqueue("step")
                    raise LookupError("undone")
            async with app.agroup() as g:
                first = await g.aenqueue(step)
                (second,) = await g.aenqueue_many("step", [{}])
                third = await step.aenqueue(depends_on=[first, second], conn=g.conn)
            return [first, second, third]
        finally:
            await app.aclose()

    ids = asyncio.run(main())
    assert states(url, *ids) == ["queued", "queued", "waiting"]
    assert job_count(url) == 3


# -- fenced follow-ups ----------------------------------------------------------------------


async def wait_for(condition: Callable[[], Any], what: str) -> None:
    deadline = time.monotonic() + DEADLINE_SECONDS
    while not await asyncio.to_thread(condition):
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.05)


def settled(seen: list[JobEvent], job_id: int) -> list[Any]:
    return [e.answer for e in seen if e.kind == "settled" and e.job_id == job_id]


@pytest.mark.parametrize("reclaimed", [False, True], ids=["accepted", "refused"])
def test_a_follow_up_enqueued_with_ctx_conn_exists_iff_the_completion_is_accepted(
    make_database: MakeDatabase, reclaimed: bool
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    seen: list[JobEvent] = []
    app.on_event(seen.append)
    follow_ups: list[int] = []
    gate = asyncio.Event()

    @app.task("receipt", queue="billing")
    async def receipt(ctx: AsyncContext, payload: Any) -> None:
        pass

    @app.task("charge", queue="billing", transactional=True)
    async def charge(ctx: AsyncContext, payload: Any) -> str:
        assert ctx.conn is not None
        # The receipt job commits with this job's completion, or not at all.
        follow_ups.append(await app.aenqueue("receipt", {"for": ctx.job_id}, conn=ctx.conn))
        await gate.wait()
        return "charged"

    async def main() -> int:
        job_id = app.enqueue("charge", max_attempts=2)  # an attempt left to reclaim
        # A long lease, renewed late: only the other worker below takes the job away.
        async with worker_running(app, lease=60, renew_every=30):
            await wait_for(lambda: follow_ups, "the handler's follow-up")
            if reclaimed:
                with psycopg.connect(url) as thief:  # one transaction: expired and reclaimed
                    thief.execute(
                        "UPDATE taskboard.jobs"
                        " SET lease_expires_at = clock_timestamp() - interval '1 second'"
                        " WHERE id = %s",
                        [job_id],
                    )
                    taken = thief.execute(
                        "SELECT job_id FROM taskboard.claim('billing', 'thief')"
                    ).fetchall()
                    assert taken == [(job_id,)]
            gate.set()
            await wait_for(lambda: settled(seen, job_id), "the completion's answer")
        return job_id

    try:
        job_id = asyncio.run(main())
    finally:
        app.close()
    (follow_up,) = follow_ups
    if reclaimed:
        assert settled(seen, job_id) == [False]
        assert not exists(url, follow_up)
        row = job(url, job_id)
        assert (row["state"], row["claimed_by"]) == ("running", "thief")
    else:
        assert settled(seen, job_id) == [True]
        assert exists(url, follow_up)
        assert job(url, follow_up)["payload"] == {"for": job_id}
        assert job(url, job_id)["state"] == "succeeded"


# -- the exporter ----------------------------------------------------------------------------


def job_gauges(url: str) -> dict[tuple[str, str], float]:
    """The exporter's taskboard_queue_jobs by (queue, state), from one collect."""
    registry = metrics.exporter_registry(lambda: psycopg.connect(url, autocommit=True))
    return {
        (sample.labels["queue"], sample.labels["state"]): sample.value
        for family in registry.collect()
        if family.name == "taskboard_queue_jobs"
        for sample in family.samples
    }


def test_the_exporter_counts_waiting_jobs(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    try:
        first = app.enqueue("t", queue="build")
        app.enqueue("t", queue="pages", depends_on=[first])
    finally:
        app.close()
    now = job_gauges(url)
    assert now[("pages", "waiting")] == 1 and now[("build", "waiting")] == 0
    assert now[("build", "queued")] == 1 and now[("pages", "queued")] == 0


def test_the_exporter_of_a_schema_before_0_5_0_says_the_database_is_not_up(
    make_database: MakeDatabase,
) -> None:
    older = make_database(release="0.4.9")
    registry = metrics.exporter_registry(lambda: psycopg.connect(older, autocommit=True))
    families = {family.name: family for family in registry.collect()}
    assert [s.value for s in families["taskboard_exporter_database_up"].samples] == [0]
    assert job_gauges(older) == {}


# -- the command line -------------------------------------------------------------------------


def test_the_cli_enqueues_with_dependencies_and_lists_and_cancels_waiting_jobs(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    first = enqueue(url, "t")
    second = enqueue(url, "t")
    waiting = enqueue(url, "t", f"--depends-on={first}", "--depends-on", str(second))
    anyway = enqueue(url, "t", f"--depends-on={first}", "--on-dependency-failure=run")
    assert states(url, waiting, anyway) == ["waiting", "waiting"]
    assert job(url, anyway)["on_dependency_failure"] == "run"

    listed = run(url, "jobs", "--state", "waiting", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [j["job_id"] for j in json.loads(listed.stdout)] == [anyway, waiting]
    status = run(url, "status").stdout.splitlines()
    assert any(line.split()[:3] == ["default", "waiting", "2"] for line in status), status

    cancelled = run(url, "cancel", str(first), "--json")
    assert cancelled.returncode == 0, cancelled.stderr
    # The first job's end, cancelled, cancels the dependent that waits on both; the one
    # enqueued with --on-dependency-failure=run counts it as ended, and is queued.
    assert states(url, first, second, waiting, anyway) == [
        "cancelled",
        "queued",
        "cancelled",
        "queued",
    ]


def test_the_cli_says_a_retried_job_waits_again_for_its_dependencies(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    first = enqueue(url, "t")
    waiting = enqueue(url, "t", f"--depends-on={first}")
    assert run(url, "cancel", str(waiting)).returncode == 0
    retried = run(url, "retry", str(waiting), "--json")
    assert retried.returncode == 0, retried.stderr
    assert json.loads(retried.stdout) == [
        {"job_id": waiting, "changed": True, "state": "waiting", "exists": True}
    ]
    assert run(url, "cancel", str(waiting)).returncode == 0
    said = run(url, "retry", str(waiting))
    assert said.returncode == 0, said.stderr
    assert said.stdout == f"job {waiting} waiting again for its dependencies\n"
    assert run(url, "cancel", str(first)).returncode == 0
    retried = run(url, "retry", str(first), "--json")
    assert json.loads(retried.stdout) == [
        {"job_id": first, "changed": True, "state": "queued", "exists": True}
    ]
    assert run(url, "retry", str(first)).stderr.strip() == (
        f"taskboard: error: job {first} is queued: not queued again"
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--depends-on=0"], "not a job id: '0'"),
        (["--depends-on=x"], "not a job id: 'x'"),
        (["--depends-on=1", "--on-dependency-failure=skip"], "invalid choice: 'skip'"),
        (["--depends-on=424242"], "depends_on names job 424242, which does not exist"),
        (["--depends-on=1", "--dedupe-key=k"], "cannot have a dedupe_key"),
    ],
)
def test_the_cli_refuses_a_bad_dependency_in_one_line(
    make_database: MakeDatabase, args: list[str], says: str
) -> None:
    url = make_database(deploy=True)
    done = run(url, "enqueue", "t", *args)
    assert done.returncode != 0
    assert says in error_line(done)
    assert job_count(url) == 0


def test_taskboard_job_shows_what_a_waiting_job_waits_for_and_its_concurrency_key(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    first = enqueue(url, "t")
    second = enqueue(url, "t")
    waiting = enqueue(
        url, "t", f"--depends-on={second}", f"--depends-on={first}", "--concurrency-key=acme"
    )
    app = make_app(url)
    try:
        seen = app.get_job(waiting)
        assert seen is not None
        assert (seen.waiting_for, seen.concurrency_key) == ([first, second], "acme")
        assert app.cancel(first)
        seen = app.get_job(waiting)
        assert seen is not None and seen.state == "cancelled" and seen.waiting_for is None
        other = app.enqueue("t", depends_on=[second])
    finally:
        app.close()
    shown = run(url, "job", str(other))
    assert shown.returncode == 0, shown.stderr
    lines = {line.split()[0]: line.split()[1:] for line in shown.stdout.splitlines() if line}
    assert lines["waiting_for"] == [str(second)] and lines["concurrency_key"] == []
    as_json = json.loads(run(url, "job", str(other), "--json").stdout)
    assert (as_json["waiting_for"], as_json["concurrency_key"]) == ([second], None)
    queued = json.loads(run(url, "job", str(second), "--json").stdout)
    assert queued["waiting_for"] is None


def test_the_cli_says_that_a_job_enqueued_with_depends_on_is_waiting(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    first = enqueue(url, "t")
    done = run(url, "enqueue", "t", f"--depends-on={first}")
    assert done.returncode == 0, done.stderr
    waiting = int(done.stdout)
    assert done.stderr == f'job {waiting} on queue "default", waiting for {first}\n'
    as_json = run(url, "enqueue", "t", f"--depends-on={first}", "--json")
    assert as_json.returncode == 0, as_json.stderr
    shown = json.loads(as_json.stdout)
    assert (shown["state"], shown["waiting_for"]) == ("waiting", [first])
    assert run(url, "cancel", str(first)).returncode == 0
    late = run(url, "enqueue", "t", f"--depends-on={first}", "--on-dependency-failure=run")
    assert late.returncode == 0, late.stderr
    assert late.stderr.endswith(", queued: its dependencies had already ended\n"), late.stderr
    plain = run(url, "enqueue", "t")
    assert plain.stderr == f'job {int(plain.stdout)} on queue "default"\n'


def test_on_dependency_failure_run_without_depends_on_is_refused_everywhere(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    says = "on_dependency_failure 'run' needs depends_on"
    done = run(url, "enqueue", "t", "--on-dependency-failure=run")
    assert done.returncode != 0 and says in error_line(done)
    app = make_app(url)
    try:
        with pytest.raises(InvalidArgument, match=says):
            app.enqueue("t", on_dependency_failure="run")
        with (
            psycopg.connect(url, autocommit=True) as conn,
            pytest.raises(psycopg.errors.InvalidParameterValue, match=says),
        ):
            conn.execute("SELECT taskboard.enqueue('t', on_dependency_failure => 'run')")
        assert job_count(url) == 0
        # The default, cancel, is what every caller sends without dependencies.
        assert job(url, app.enqueue("t"))["state"] == "queued"
    finally:
        app.close()


def test_an_empty_depends_on_is_no_dependency_and_takes_a_dedupe_key(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    app = make_app(url)
    try:
        first = app.enqueue("t", depends_on=[], dedupe_key="nightly")
        assert app.enqueue("t", depends_on=(), dedupe_key="nightly") == first
        assert job(url, first)["state"] == "queued"
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute(
                "SELECT taskboard.enqueue('t', depends_on => '{}', dedupe_key => 'nightly')"
            ).fetchone()
        assert row == (first,)
    finally:
        app.close()
