"""Periodic jobs: each slot of a schedule is exactly one job, whatever the number of workers,
their stalls and their clocks.

The slot of a schedule is counted on the database clock and taken by
taskboard.enqueue_periodic. Worker processes run tests/apps/periodic_app.py,
whose schedule fires every two seconds and which journals every
enqueue_periodic it makes with the database's answer. The tests wait for
conditions in the database or the journal and assert no timings.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import itertools
import json
import logging
import os
import signal
import sys
import threading
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
import pytest

from taskboard import Taskboard, TaskError
from taskboard.cron import Cron
from taskboard.periodic import Schedule
from taskboard.sql.worker import Queries
from taskboard.worker.scheduler import Scheduler
from taskboard_dev.harness import Journal, WorkerProcess
from tests.support import TESTS_DIR
from tests.support.cli import error_line, run
from tests.support.database import MakeDatabase, connect, heard, listening, login_role, value
from tests.support.processes import FAST, wait_until

APP = TESTS_DIR / "apps" / "periodic_app.py"
STEP = dt.timedelta(seconds=2)  # the app's cron: every two seconds
CALLERS = 8
ROLES = ("taskboard_worker", "taskboard_admin")  # producers may not (see 16-periodic_roles)
ENQUEUE_PERIODIC = "SELECT taskboard.enqueue_periodic(%s, %s, %s)"


# -- registration ------------------------------------------------------------------


def app() -> Taskboard:
    return Taskboard()  # settings are read when a worker or enqueue needs them


@pytest.mark.parametrize(
    ("cron", "says"),
    [
        ("61 * * * *", "Bad minute"),
        ("* * *", "Wrong number of fields"),
        ("", "Wrong number of fields"),
        ("0 0 31 2 *", "Bad day-of-month"),
    ],
)
def test_a_bad_cron_is_one_clear_error_at_registration(cron: str, says: str) -> None:
    board = app()
    with pytest.raises(TaskError) as raised:
        board.periodic(cron)
    assert str(raised.value) == f"periodic: cron {cron!r} is not valid: {says}"


def test_a_schedule_is_of_a_registered_task_with_its_name_and_queue_by_default() -> None:
    board = app()

    @board.periodic("*/5 * * * *", payload={"kind": "digest"})
    @board.task("send_digest", queue="mail")
    def send_digest(ctx: Any, payload: Any) -> None:
        return None

    schedule = board.schedules["send_digest"]
    assert (schedule.task, schedule.queue, schedule.cron.expression) == (
        "send_digest",
        "mail",
        "*/5 * * * *",
    )
    assert json.loads(schedule.payload_json) == {"kind": "digest"}

    board.periodic("0 * * * *", name="hourly-digest", queue="bulk")(send_digest)
    assert board.schedules["hourly-digest"].queue == "bulk"


def test_periodic_below_the_task_or_twice_under_one_name_is_refused() -> None:
    board = app()

    def unregistered(ctx: Any, payload: Any) -> None:
        return None

    with pytest.raises(TaskError, match=r"put @app\.periodic above @app\.task"):
        board.periodic("* * * * *")(unregistered)

    registered = board.task("t")(unregistered)
    board.periodic("* * * * *")(registered)
    with pytest.raises(TaskError, match="'t' is already scheduled"):
        board.periodic("*/2 * * * *")(registered)


@pytest.mark.parametrize(
    ("options", "says"),
    [
        ({"payload": float("nan")}, "payload is not JSON-serialisable"),
        ({"max_attempts": 0}, "max_attempts must be at least 1"),
        ({"priority": 2**31}, "priority must be between"),
        ({"name": ""}, "name must not be empty"),
        ({"queue": "q" * 201}, "queue must be at most 200 characters"),
        ({"previous_names": "old"}, "previous_names must be a list of names"),
        ({"previous_names": [""]}, "previous_names must not be empty"),
        ({"name": "n", "previous_names": ["n"]}, "previous_names must not include its own name"),
        ({"previous_names": None}, "previous_names must be a list of names"),
        ({"previous_names": 5}, "previous_names must be a list of names"),
        ({"previous_names": b"old"}, "previous_names must be a list of names"),
        ({"previous_names": ["old\x00"]}, "previous_names must not contain a NUL character"),
        ({"name": "n\x00"}, "name must not contain a NUL character"),
    ],
)
def test_a_schedule_argument_that_cannot_be_used_is_refused_at_registration(
    options: dict[str, Any], says: str
) -> None:
    board = app()
    registered = board.task("t")(lambda ctx, payload: None)
    with pytest.raises(TaskError, match=says):
        board.periodic("* * * * *", **options)(registered)
    assert board.schedules == {}


def test_previous_names_may_not_name_a_schedule_the_app_still_declares() -> None:
    # Its every slot would be taken under that name too, for this schedule's task:
    # the live schedule would meet a conflict at each slot and never run again.
    board = app()
    live = board.task("live")(lambda ctx, payload: None)
    board.periodic("* * * * *")(live)
    renamed = board.task("renamed")(lambda ctx, payload: None)
    with pytest.raises(TaskError, match="previous_names lists 'live', a schedule this app"):
        board.periodic("* * * * *", previous_names=["live"])(renamed)
    later = app()
    first = later.task("renamed")(lambda ctx, payload: None)
    later.periodic("* * * * *", previous_names=["live"])(first)
    second = later.task("live")(lambda ctx, payload: None)
    with pytest.raises(TaskError, match="previous_names lists 'live', a schedule this app"):
        later.periodic("* * * * *")(second)
    assert list(later.schedules) == ["renamed"]


# -- SQL: one slot, many callers -----------------------------------------------------------


def test_concurrent_callers_of_one_slot_get_one_job_id_and_the_rest_null(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        now = value(conn, "SELECT date_trunc('second', clock_timestamp())")
    slots = [now - dt.timedelta(seconds=s) for s in (40, 30, 20, 10, 0)]
    answers: dict[dt.datetime, list[int | None]] = {slot: [] for slot in slots}
    errors: list[Exception] = []
    barrier = threading.Barrier(CALLERS)
    lock = threading.Lock()

    def caller(n: int) -> None:
        try:
            with connect(url, ROLES[n % len(ROLES)]) as own:
                for slot in slots:
                    barrier.wait()
                    answer = value(own, ENQUEUE_PERIODIC, ["race", slot, "tick"])
                    with lock:
                        answers[slot].append(answer)
        except (psycopg.Error, threading.BrokenBarrierError) as exc:  # reported below
            errors.append(exc)
            barrier.abort()

    threads = [threading.Thread(target=caller, args=(n,)) for n in range(CALLERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    for slot in slots:
        ids = [a for a in answers[slot] if a is not None]
        assert len(ids) == 1, (slot, answers[slot])
        assert answers[slot].count(None) == CALLERS - 1
    with psycopg.connect(url, autocommit=True) as conn:
        run_ats = [r[0] for r in conn.execute("SELECT run_at FROM taskboard.jobs ORDER BY id")]
        last = conn.execute("SELECT last_slot, last_job_id FROM taskboard.schedules").fetchall()
    assert run_ats == slots  # one job per slot, its run_at the slot
    assert last == [(slots[-1], next(a for a in answers[slots[-1]] if a is not None))]


def test_a_slot_later_than_the_database_clock_is_refused(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with connect(url, "taskboard_worker") as conn:
        ahead = value(conn, "SELECT clock_timestamp() + interval '5 seconds'")
        with pytest.raises(psycopg.errors.InvalidParameterValue, match="database clock"):
            conn.execute(ENQUEUE_PERIODIC, ["ahead", ahead, "tick"])
    with psycopg.connect(url, autocommit=True) as conn:
        assert value(conn, "SELECT count(*) FROM taskboard.jobs") == 0
        assert value(conn, "SELECT count(*) FROM taskboard.schedules") == 0


def test_enqueue_periodic_notifies_the_queue_of_its_job(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with listening(url) as listener, connect(url, "taskboard_worker") as caller:
        slot = value(caller, "SELECT clock_timestamp()")
        query = "SELECT taskboard.enqueue_periodic(%s, %s, 'tick', queue => 'reports')"
        assert value(caller, query, ["notify", slot]) is not None
        assert value(caller, query, ["notify", slot]) is None
        assert heard(listener, caller) == ["reports"]  # once: the NULL call sends nothing


# -- the scheduler counts on the database clock -------------------------------------------


class Recording(Queries):
    """Records the database's clock answers and the slots sent; changes no answer."""

    def __init__(self) -> None:
        self.clocks: list[dt.datetime] = []
        self.sent: list[tuple[dt.datetime, int | None]] = []

    async def clock(self, conn: psycopg.AsyncConnection[Any]) -> dt.datetime:
        now = await super().clock(conn)
        self.clocks.append(now)
        return now

    async def enqueue_periodic(
        self,
        conn: psycopg.AsyncConnection[Any],
        schedule: str,
        slot: dt.datetime,
        task: str,
        payload_json: str,
        queue: str,
        priority: int,
        max_attempts: int,
        previous_names: Sequence[str] = (),
    ) -> int | None:
        job = await super().enqueue_periodic(
            conn, schedule, slot, task, payload_json, queue, priority, max_attempts, previous_names
        )
        self.sent.append((slot, job))
        return job


def test_the_scheduler_sends_the_latest_slot_by_the_database_clock_once(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    cron = Cron("*/2 * * * * *")
    schedule = Schedule("every-2s", cron, "tick", "periodic", "{}", 0, 5)
    queries = Recording()
    scheduler = Scheduler([schedule], queries)

    async def passes() -> None:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            assert scheduler.due()  # the first pass is due at once
            await scheduler.run(conn)
            # The next pass waits for the next slot: at most one step, plus a margin.
            assert scheduler.seconds_until_due() <= STEP.total_seconds() + 0.1
            await scheduler.run(conn)  # early, or at the next slot: no slot sent twice

    asyncio.run(passes())
    assert len(queries.clocks) == 2
    first_slot = cron.latest(queries.clocks[0])
    assert first_slot is not None
    assert queries.sent[0][0] == first_slot and queries.sent[0][1] is not None
    assert [slot for slot, _ in queries.sent[1:]] == [
        s for s in [cron.latest(queries.clocks[1])] if s is not None and s > first_slot
    ]  # the second pass sends the slot of its own clock reading, and only when it is new


YEARLY = Cron("0 0 1 1 *")  # its latest slot stays put for the length of a test


def test_the_scheduler_logs_a_slot_taken_for_another_task_once_as_a_conflict(
    make_database: MakeDatabase, caplog: pytest.LogCaptureFixture
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        slot = YEARLY.latest(value(conn, "SELECT clock_timestamp()"))
        value(
            conn,
            "SELECT taskboard.enqueue_periodic('report', %s, 'noop', queue => 'blackhole')",
            [slot],
        )
    schedule = Schedule("report", YEARLY, "send_report", "reports", "{}", 0, 5)
    queries = Recording()

    async def passes() -> None:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await Scheduler([schedule], queries).run(conn)
            await Scheduler([schedule], queries).run(conn)  # a second worker, the same slot

    with caplog.at_level(logging.INFO, logger="taskboard"):
        asyncio.run(passes())
    conflicts = [r.getMessage() for r in caplog.records if "conflict" in r.getMessage()]
    assert len(conflicts) == 2, conflicts  # once per worker
    assert "taken by task noop on queue blackhole" in conflicts[0]
    assert [job for _, job in queries.sent] == []  # the Recording saw no answer: it raised
    with psycopg.connect(url, autocommit=True) as conn:
        assert value(conn, "SELECT count(*) FROM taskboard.jobs WHERE task = 'send_report'") == 0


def test_a_renamed_schedule_does_not_enqueue_the_slot_its_old_name_ran(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    old = Schedule("digest", YEARLY, "send_digest", "mail", "{}", 0, 5)
    new = Schedule("digest-daily", YEARLY, "send_digest", "mail", "{}", 0, 5, ("digest",))
    unaware = Schedule("digest-daily", YEARLY, "send_digest", "mail", "{}", 0, 5)
    queries = Recording()

    async def passes() -> None:
        async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
            await Scheduler([old], queries).run(conn)
            await Scheduler([new], queries).run(conn)

    asyncio.run(passes())
    assert [job is None for _, job in queries.sent] == [False, True]
    with psycopg.connect(url, autocommit=True) as conn:
        assert value(conn, "SELECT count(*) FROM taskboard.jobs") == 1
        conn.execute("SELECT taskboard.remove_schedule('digest-daily')")

    asyncio.run(_one_pass(url, unaware, queries))
    assert queries.sent[-1][1] is not None, "without previous_names the new name runs it again"


async def _one_pass(url: str, schedule: Schedule, queries: Queries) -> None:
    async with await psycopg.AsyncConnection.connect(url, autocommit=True) as conn:
        await Scheduler([schedule], queries).run(conn)


# -- worker processes ---------------------------------------------------------------------


@dataclass
class Workers:
    """periodic_app.py worker processes of one test, sharing one journal."""

    directory: Path
    started: list[WorkerProcess] = field(default_factory=list)

    @property
    def journal(self) -> Path:
        return self.directory / "journal.jsonl"

    def start(self, url: str, name: str, **env: str) -> WorkerProcess:
        environ = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
        environ.update(
            {
                "PYTHONUNBUFFERED": "1",
                "TASKBOARD_DATABASE_URL": url,
                "TASKBOARD_WORKER_NAME": name,
                "PERIODIC_APP_JOURNAL": str(self.journal),
                "PERIODIC_APP_DEBUG": "1",
                **env,
            }
        )
        for key, setting in FAST.items():
            environ[f"TASKBOARD_{key.upper()}"] = str(setting)
        worker = WorkerProcess.start(
            name, [sys.executable, str(APP)], log_path=self.directory / f"{name}.log", env=environ
        )
        self.started.append(worker)
        return worker

    def events(self, event: str, **match: Any) -> list[dict[str, Any]]:
        return Journal(self.journal).records(event=event, **match)

    def close(self) -> None:
        for worker in self.started:
            worker.kill()
        for worker in self.started:
            print(f"----- log of worker {worker.name} (exit {worker.proc.returncode}) -----")
            print(worker.log())


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Workers]:
    started = Workers(tmp_path)
    try:
        yield started
    finally:
        started.close()


def tick_slots(url: str) -> list[dt.datetime]:
    """The run_at (= slot) of every job of task tick, in order, as the superuser sees them."""
    with psycopg.connect(url, autocommit=True) as conn:
        return [r[0] for r in conn.execute("SELECT run_at FROM taskboard.jobs ORDER BY run_at")]


def assert_one_job_per_slot(url: str, workers: Workers) -> list[dt.datetime]:
    """Every slot from the first to the last has exactly one job; the journal agrees."""
    slots = tick_slots(url)
    duplicates = {slot: n for slot, n in Counter(slots).items() if n > 1}
    assert duplicates == {}, f"slots with more than one job: {duplicates}"
    gaps = [(a, b) for a, b in itertools.pairwise(slots) if b - a != STEP]
    assert gaps == [], f"slots without a job between: {gaps}"
    answered = [e for e in workers.events("sent") if e["job"] is not None]
    assert sorted(dt.datetime.fromisoformat(e["slot"]) for e in answered) == slots
    return slots


def wait_for_slots(url: str, count: int, what: str) -> list[dt.datetime]:
    def enough() -> list[dt.datetime] | None:
        slots = tick_slots(url)
        return slots if len(slots) >= count else None

    return wait_until(enough, what)


def wait_for_a_call(workers: Workers, worker: WorkerProcess) -> None:
    wait_until(lambda: workers.events("sent", worker=worker.name), f"{worker.name} to send a slot")


def test_four_workers_over_several_slots_make_exactly_one_job_per_slot(
    make_database: MakeDatabase, workers: Workers
) -> None:
    """One worker is also frozen with SIGSTOP for a few slots and resumed: it adds none."""
    url = make_database(deploy=True)
    procs = [workers.start(url, f"w{n}") for n in range(1, 5)]
    for proc in procs:
        wait_for_a_call(workers, proc)
    frozen = procs[3]
    frozen.send(signal.SIGSTOP)
    before = len(tick_slots(url))
    wait_for_slots(url, before + 3, "three slots while w4 is frozen")
    calls_before = len(workers.events("sent", worker=frozen.name))
    frozen.send(signal.SIGCONT)
    wait_until(
        lambda: len(workers.events("sent", worker=frozen.name)) > calls_before,
        "w4 to send a slot again after SIGCONT",
    )
    wait_for_slots(url, len(tick_slots(url)) + 3, "three more slots with all four workers")
    for proc in procs:
        proc.terminate()

    slots = assert_one_job_per_slot(url, workers)
    assert len(slots) >= 7
    calls = workers.events("sent")
    assert len(calls) > len(slots), "the workers raced for the slots"
    assert {e["worker"] for e in calls} == {"w1", "w2", "w3", "w4"}, "every worker schedules"
    with psycopg.connect(url, autocommit=True) as conn:
        states: dict[str, int] = dict(
            conn.execute("SELECT state, count(*) FROM taskboard.jobs GROUP BY state").fetchall()
        )
        last = conn.execute("SELECT schedule, last_slot FROM taskboard.schedules").fetchall()
    assert set(states) <= {"succeeded", "queued"}, states  # a last slot may come at shutdown
    assert states.get("succeeded", 0) >= len(slots) - 1, states
    assert last == [("tick", slots[-1])]


def test_a_worker_stalled_with_a_slot_in_hand_adds_no_job(
    make_database: MakeDatabase, workers: Workers, tmp_path: Path
) -> None:
    """A has computed its slot and is about to send it when it is frozen (SIGSTOP). B goes on
    enqueuing later slots. Resumed (SIGCONT), A sends its old slot: the database answers NULL."""
    url = make_database(deploy=True)
    hold = tmp_path / "hold"
    a = workers.start(url, "a", PERIODIC_APP_HOLD=str(hold))
    b = workers.start(url, "b")
    for proc in (a, b):
        wait_for_a_call(workers, proc)
    hold.touch()
    held = wait_until(lambda: workers.events("held", worker="a"), "a to hold a slot")[0]
    in_hand = dt.datetime.fromisoformat(held["slot"])
    a.send(signal.SIGSTOP)
    wait_until(lambda: max(tick_slots(url)) >= in_hand + 2 * STEP, "b to enqueue two later slots")
    hold.unlink()
    a.send(signal.SIGCONT)
    late = wait_until(
        lambda: workers.events("sent", worker="a", slot=held["slot"]), "a to send its slot"
    )
    assert late[0]["job"] is None, "the stale slot was refused"
    later = len(tick_slots(url)) + 2
    wait_for_slots(url, later, "two more slots after a resumed")
    for proc in (a, b):
        proc.terminate()
    assert_one_job_per_slot(url, workers)


# -- the CLI -------------------------------------------------------------------------------


def test_the_cli_shows_each_schedule_s_latest_slot_and_job(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    done = run(url, "schedules")
    assert (done.returncode, done.stdout) == (0, "no schedules\n")
    assert json.loads(run(url, "schedules", "--json").stdout) == []

    with connect(url, "taskboard_worker") as conn:
        noon = dt.datetime(2026, 1, 2, 12, 0, tzinfo=dt.UTC)
        report = value(conn, ENQUEUE_PERIODIC, ["nightly-report", noon, "report"])
        cleanup = value(conn, ENQUEUE_PERIODIC, ["cleanup", noon + dt.timedelta(hours=1), "c"])
    done = run(url, "schedules")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split() for line in lines] == [
        ["schedule", "last_slot", "last_job_id", "task", "queue"],
        ["cleanup", "2026-01-02", "13:00:00+00:00", str(cleanup), "c", "default"],
        ["nightly-report", "2026-01-02", "12:00:00+00:00", str(report), "report", "default"],
    ]
    job_id_end = lines[0].index("last_job_id") + len("last_job_id")
    assert all(line[:job_id_end].split()[-1].isdigit() for line in lines[1:])  # ids right-aligned

    answer = json.loads(run(url, "schedules", "--json").stdout)
    assert answer == [
        {
            "schedule": "cleanup",
            "last_slot": "2026-01-02T13:00:00+00:00",
            "last_job_id": cleanup,
            "task": "c",
            "queue": "default",
        },
        {
            "schedule": "nightly-report",
            "last_slot": "2026-01-02T12:00:00+00:00",
            "last_job_id": report,
            "task": "report",
            "queue": "default",
        },
    ]


def test_the_cli_shows_a_slot_taken_for_another_task_as_a_conflict_not_as_the_job(
    make_database: MakeDatabase,
) -> None:
    """apps.dashboard_app declares nightly-report as task report on queue reports; its
    slot was taken for task noop on queue blackhole, and cleanup is declared by no app."""
    url = make_database(deploy=True)
    with connect(url, "taskboard_worker") as conn:
        noon = dt.datetime(2026, 1, 2, 12, 0, tzinfo=dt.UTC)
        taken = value(
            conn,
            "SELECT taskboard.enqueue_periodic(%s, %s, 'noop', queue => 'blackhole')",
            ["nightly-report", noon],
        )
        value(conn, ENQUEUE_PERIODIC, ["cleanup", noon, "c"])
    done = run(url, "schedules", "--app", "apps.dashboard_app:app")
    assert done.returncode == 0, done.stderr
    rows = {line.split()[0]: line for line in done.stdout.splitlines()[1:]}
    assert rows["cleanup"].endswith("not declared")
    conflict = rows["nightly-report"]
    assert conflict.split()[3:5] == ["noop", "blackhole"], conflict  # no job id before them
    assert conflict.endswith(
        f"conflict: its latest slot (job {taken}) was taken for task noop on queue blackhole, "
        "not report on reports"
    )
    answer = json.loads(run(url, "schedules", "--app", "apps.dashboard_app:app", "--json").stdout)
    assert [row["status"] for row in answer] == ["not declared", conflict.split("  ")[-1].strip()]


def test_prune_missing_removes_the_rows_the_app_does_not_declare_as_an_admin(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with connect(url, "taskboard_worker") as conn:
        noon = dt.datetime(2026, 1, 2, 12, 0, tzinfo=dt.UTC)
        value(
            conn,
            "SELECT taskboard.enqueue_periodic(%s, %s, 'report', queue => 'reports')",
            ["nightly-report", noon],
        )
        for name in ("old-report", "cleanup"):
            value(conn, ENQUEUE_PERIODIC, [name, noon, "c"])
    app = ["--app", "apps.dashboard_app:app"]

    usage = run(url, "schedules", "--prune-missing")
    assert usage.returncode == 2
    assert "--prune-missing needs --app MODULE:APP" in error_line(usage)

    with login_role(url, "taskboard_producer", "taskboard_worker") as worker_url:
        refused = run(worker_url, "schedules", *app, "--prune-missing")
    assert refused.returncode != 0
    assert "grant taskboard_admin" in error_line(refused), refused.stderr

    with login_role(url, "taskboard_admin") as admin_url:
        done = run(admin_url, "schedules", *app, "--prune-missing")
        assert done.returncode == 0, done.stderr
        lines = done.stdout.splitlines()
        assert lines[0] == (
            "removed 2 schedules apps.dashboard_app:app does not declare: cleanup, old-report"
        )
        assert [line.split()[0] for line in lines[1:]] == ["schedule", "nightly-report"]
        again = run(admin_url, "schedules", *app, "--prune-missing", "--json")
    assert again.stderr.strip() == "removed no schedules: apps.dashboard_app:app declares every one"
    assert [row["schedule"] for row in json.loads(again.stdout)] == ["nightly-report"]


def test_the_cli_schedules_lists_a_declared_schedule_that_sent_no_slot_yet(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    answer = run(url, "schedules", "--app", "apps.dashboard_app:app", "--json")
    assert answer.returncode == 0, answer.stderr
    assert json.loads(answer.stdout) == [
        {
            "schedule": "nightly-report",
            "last_slot": None,
            "last_job_id": None,
            "task": "report",
            "queue": "reports",
            "status": "declared, no slot sent yet",
        }
    ]
    table = run(url, "schedules", "--app", "apps.dashboard_app:app")
    assert table.stdout.splitlines()[1].split() == [
        "nightly-report",
        "report",
        "reports",
        "declared,",
        "no",
        "slot",
        "sent",
        "yet",
    ]
    assert run(url, "schedules").stdout.strip() == "no schedules"


def test_prune_missing_keeps_the_rows_of_a_declared_schedules_previous_names(
    make_database: MakeDatabase,
) -> None:
    # Removed before the new name's first slot, the old row's slot would run again.
    url = make_database(deploy=True)
    noon = dt.datetime(2026, 1, 2, 3, 0, tzinfo=dt.UTC)
    with connect(url, "taskboard_worker") as conn:
        first = value(
            conn,
            "SELECT taskboard.enqueue_periodic(%s, %s, 'report', queue => 'reports')",
            ["old-report", noon],
        )
    app = ["--app", "apps.renamed_app:app"]
    with login_role(url, "taskboard_admin") as admin_url:
        shown = run(admin_url, "schedules", *app)
        assert shown.stdout.splitlines()[1].endswith("previous name of nightly-report")
        done = run(admin_url, "schedules", *app, "--prune-missing")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith("removed no schedules")
    with connect(url, "taskboard_worker") as conn:
        again = value(
            conn,
            "SELECT taskboard.enqueue_periodic(%s, %s, 'report', queue => 'reports',"
            " previous_names => %s)",
            ["nightly-report", noon, ["old-report"]],
        )
    assert first is not None and again is None, "the slot old-report ran is not enqueued again"


def test_the_cli_schedules_without_the_schema_says_to_migrate(make_database: MakeDatabase) -> None:
    done = run(make_database(deploy=False), "schedules")
    assert "taskboard migrate" in error_line(done)
    assert done.returncode == 1
