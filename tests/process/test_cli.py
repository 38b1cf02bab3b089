"""The `taskboard` command, run as the installed console script against real databases."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import conninfo

from taskboard.migrate import sqitch_target
from tests.support import TESTS_DIR
from tests.support.cli import (
    APP,
    TASKBOARD,
    TIMEOUT_SECONDS,
    command_env,
    enqueue,
    error_line,
    get_job,
    run,
    run_worker_until,
)
from tests.support.database import MakeDatabase, login_role


def job_count(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT count(*) FROM taskboard.jobs").fetchone()
        assert row is not None
        return int(row[0])


def payload_of(url: str, job_id: int) -> Any:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT payload FROM taskboard.jobs WHERE id = %s", [job_id]).fetchone()
        assert row is not None
        return row[0]


def schema_exists(url: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT to_regnamespace('taskboard') IS NOT NULL").fetchone()
        assert row is not None
        return bool(row[0])


def enqueue_json(url: str, *args: str) -> dict[str, Any]:
    done = run(url, "enqueue", "--json", *args)
    assert done.returncode == 0, done.stderr
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer


@pytest.fixture
def deployed(make_database: MakeDatabase) -> str:
    return make_database(deploy=True)


@pytest.fixture
def empty(make_database: MakeDatabase) -> str:
    return make_database(deploy=False)


# -- the parser ------------------------------------------------------------------


def test_help_lists_the_commands() -> None:
    done = run(None, "--help")
    assert done.returncode == 0
    for command in ("migrate", "sql", "worker", "enqueue", "status"):
        assert command in done.stdout


def test_no_command_is_a_usage_error() -> None:
    assert run(None).returncode == 2


@pytest.mark.parametrize(
    ("args", "says"),
    [
        ([], "required: COMMAND"),
        (["enqueue"], "required: TASK"),
        (["enqueue", "ping", "{}", "extra"], "unrecognized arguments: extra"),
        (["enqueue", "ping", "--nosuch"], "unrecognized arguments: --nosuch"),
        (["worker"], "required: MODULE:APP"),
    ],
    ids=["no-command", "no-task", "extra-argument", "unknown-option", "no-app"],
)
def test_a_usage_error_is_one_line(args: list[str], says: str) -> None:
    done = run(None, *args)
    assert says in error_line(done)
    assert done.returncode == 2


@pytest.mark.parametrize("url", [None, "", " \t"], ids=["unset", "empty", "blank"])
@pytest.mark.parametrize(
    "args",
    [["status"], ["enqueue", "ping"], ["jobs"], ["migrate"], ["worker", APP]],
    ids=lambda a: a[0],
)
def test_a_missing_or_empty_database_url_is_one_line(args: list[str], url: str | None) -> None:
    done = run(url, *args)
    assert error_line(done) == "taskboard: error: TASKBOARD_DATABASE_URL is required"
    assert done.returncode == 2


def test_an_unreachable_database_is_one_line(tmp_path: Path) -> None:
    done = run(f"postgresql://nobody@/nowhere?host={tmp_path}", "status")
    assert str(tmp_path) in error_line(done)
    assert done.returncode == 1


# -- enqueue -----------------------------------------------------------------------


def test_enqueue_prints_the_id_of_the_job_it_made(deployed: str) -> None:
    job_id = enqueue(
        deployed,
        "send-email",
        '{"to": "maya@example.com"}',
        "--queue=emails",
        "--run-at=2030-01-02T03:04:05+00:00",
        "--priority=7",
        "--max-attempts=2",
    )
    job = get_job(deployed, job_id)
    assert job["task"] == "send-email"
    assert job["queue"] == "emails"
    assert job["state"] == "queued"
    assert job["priority"] == 7
    assert job["max_attempts"] == 2
    assert job["run_at"] == dt.datetime(2030, 1, 2, 3, 4, 5, tzinfo=dt.UTC)
    assert payload_of(deployed, job_id) == {"to": "maya@example.com"}


@pytest.mark.parametrize(
    "args",
    [
        ["--queue", "q", "--priority", "3", "ping", '{"n": 1}'],
        ["--queue=q", "ping", "--priority=3", '{"n": 1}'],
        ["ping", "--queue", "q", '{"n": 1}', "--priority", "3"],
        ["ping", '{"n": 1}', "--queue", "q", "--priority", "3"],
        ["--priority", "3", "ping", '{"n": 1}', "--queue=q"],
    ],
    ids=["options-first", "options-between", "option-between", "options-last", "both-sides"],
)
def test_enqueue_takes_its_options_in_any_position(deployed: str, args: list[str]) -> None:
    job_id = enqueue(deployed, *args)
    job = get_job(deployed, job_id)
    assert (job["task"], job["queue"], job["priority"]) == ("ping", "q", 3)
    assert payload_of(deployed, job_id) == {"n": 1}


def test_enqueue_prints_the_id_on_stdout_and_its_queue_on_stderr(deployed: str) -> None:
    done = run(deployed, "enqueue", "ping", "--queue=emails")
    assert done.returncode == 0, done.stderr
    job_id = int(done.stdout)
    assert done.stdout == f"{job_id}\n"
    assert done.stderr == f'job {job_id} on queue "emails"\n'
    assert get_job(deployed, job_id)["queue"] == "emails"


def test_enqueue_with_json_prints_the_id_and_the_queue_as_one_object(deployed: str) -> None:
    answer = enqueue_json(deployed, "ping", '{"n": 2}')
    assert set(answer) == {"job_id", "queue"}
    assert answer["queue"] == "default"
    assert get_job(deployed, answer["job_id"])["queue"] == "default"


def test_enqueue_with_an_app_uses_the_queue_its_task_is_registered_with(deployed: str) -> None:
    answer = enqueue_json(deployed, "--app", APP, "cli-echo", '{"n": 3}')
    assert answer["queue"] == "cli"
    assert get_job(deployed, answer["job_id"])["queue"] == "cli"


def test_enqueue_with_an_app_and_a_queue_uses_the_queue_given(deployed: str) -> None:
    answer = enqueue_json(deployed, "cli-echo", "--queue=elsewhere", f"--app={APP}")
    assert get_job(deployed, answer["job_id"])["queue"] == "elsewhere"


def test_enqueue_with_an_app_refuses_a_task_it_does_not_register(deployed: str) -> None:
    done = run(deployed, "enqueue", "--app", APP, "no-such-task", "--queue=cli")
    line = error_line(done)
    assert "'no-such-task' is not registered in apps.cli_app:app" in line, line
    assert "cli-echo" in line, "the app's tasks are listed"
    assert done.returncode == 2
    assert done.stdout == ""
    assert job_count(deployed) == 0


def test_enqueue_with_an_app_validates_a_payload_model_and_stores_its_json(
    deployed: str,
) -> None:
    done = run(deployed, "enqueue", "--app", APP, "cli-sign-up", '{"email": "a@x", "seats": 0}')
    line = error_line(done)
    assert "payload of task 'cli-sign-up': field 'seats': Input should be greater" in line, line
    assert done.returncode == 2
    assert job_count(deployed) == 0

    answer = enqueue_json(deployed, "--app", APP, "cli-sign-up", '{"email": "a@x", "seats": "2"}')
    assert payload_of(deployed, answer["job_id"]) == {"email": "a@x", "seats": 2}


def test_enqueue_with_a_bad_app_is_a_usage_error(deployed: str) -> None:
    done = run(deployed, "enqueue", "--app", "apps.cli_app:missing", "cli-echo")
    assert "has no attribute 'missing'" in error_line(done)
    assert done.returncode == 2
    assert job_count(deployed) == 0


def test_enqueue_as_a_login_without_the_producer_role_says_which_role_to_grant(
    deployed: str,
) -> None:
    with login_role(deployed) as login:
        done = run(login, "enqueue", "ping")
    assert error_line(done) == (
        "taskboard: error: permission denied for schema taskboard: this login holds no "
        "Taskboard role; as the deploying login run: GRANT taskboard_producer TO "
        + str(conninfo.conninfo_to_dict(login)["user"])
    )
    assert done.returncode == 1
    assert job_count(deployed) == 0


def test_enqueue_without_json_or_queue_makes_an_empty_payload_in_default(deployed: str) -> None:
    job_id = enqueue(deployed, "ping")
    assert get_job(deployed, job_id)["queue"] == "default"
    assert payload_of(deployed, job_id) == {}


def test_enqueue_with_a_dedupe_key_returns_the_unfinished_job(deployed: str) -> None:
    first = enqueue(deployed, "report", "--dedupe-key=daily")
    assert enqueue(deployed, "report", '{"again": true}', "--dedupe-key=daily") == first
    assert job_count(deployed) == 1


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["ping", '{"to": '], "not valid JSON"),
        (["ping", '{"ratio": NaN}'], "payload is not JSON-serialisable"),
        (["ping", "--run-at=tomorrow"], "--run-at"),
        (["ping", "--run-at=0001-01-01T00:00:00"], "--run-at: '0001-01-01T00:00:00' is out of"),
        (["ping", "--queue="], "queue"),  # 22023 from taskboard.enqueue
        (["ping", "--max-attempts=0"], "max_attempts must be at least 1, got 0"),  # 22023
        (["", "{}"], "task must not be NULL or empty"),  # 22023 from taskboard.enqueue
        (["ping", "--priority=2147483648"], "--priority: must be between"),
        (["ping", "--priority", "-2147483649"], "--priority: must be between"),
        (["ping", "--priority=high"], "--priority: invalid integer value: 'high'"),
        (["ping", "--max-attempts=99999999999"], "--max-attempts: must be between"),
    ],
    ids=[
        "invalid-json",
        "nan-payload",
        "bad-run-at",
        "run-at-before-year-1-in-local-time",
        "empty-queue",
        "zero-attempts",
        "empty-task",
        "priority-too-large",
        "priority-too-small",
        "priority-not-a-number",
        "max-attempts-too-large",
    ],
)
def test_enqueue_refuses_bad_input_in_one_line_and_enqueues_nothing(
    deployed: str, args: list[str], says: str
) -> None:
    done = run(deployed, "enqueue", *args)
    assert says in error_line(done)
    assert done.returncode == 2
    assert done.stdout == ""
    assert job_count(deployed) == 0


def test_enqueue_without_the_schema_says_to_migrate(empty: str) -> None:
    done = run(empty, "enqueue", "ping")
    assert "taskboard migrate" in error_line(done)
    assert done.returncode == 1


# -- status --------------------------------------------------------------------------


def test_status_without_jobs(deployed: str) -> None:
    done = run(deployed, "status")
    assert (done.returncode, done.stdout) == (0, "no jobs\n")


def test_status_shows_the_counts_per_queue_and_state(deployed: str) -> None:
    enqueue(deployed, "ping")
    enqueue(deployed, "ping")
    enqueue(deployed, "ping", "--queue=later", "--run-at=2030-01-01T00:00:00+00:00")
    done = run(deployed, "status")
    assert done.returncode == 0, done.stderr
    header, *rows = [line.split() for line in done.stdout.splitlines()]
    assert header == [
        "queue",
        "state",
        "jobs",
        "runnable",
        "oldest_run_at",
        "paused",
        "limit",
        "key",
        "limit",
        "rate",
        "limit",
    ]
    assert [row[:4] for row in rows] == [
        ["default", "queued", "2", "2"],
        ["later", "queued", "1", "0"],
    ]
    assert rows[1][4:] == ["2030-01-01", "00:00:00+00:00"]  # neither paused nor limited
    header_line, *row_lines = done.stdout.splitlines()
    state_at = header_line.index("state")
    runnable_end = header_line.index("runnable") + len("runnable")
    oldest_at = header_line.index("oldest_run_at")
    for line, row in zip(row_lines, rows, strict=True):  # aligned columns
        assert line[state_at:].startswith(row[1]), done.stdout
        assert line[:runnable_end].endswith(" " + row[3]), done.stdout
        assert line[oldest_at:].startswith(row[4]), done.stdout


def test_status_without_the_schema_says_to_migrate(empty: str) -> None:
    done = run(empty, "status")
    assert "taskboard migrate" in error_line(done)
    assert done.returncode == 1


# -- output to a pipe whose reader has gone -------------------------------------------


def enqueue_many(url: str, count: int) -> None:
    with psycopg.connect(url) as conn:
        conn.execute(
            "SELECT taskboard.enqueue_many('ping', array_fill('{}'::jsonb, ARRAY[%s]))", [count]
        )


@pytest.mark.parametrize(
    "args", [["status"], ["jobs"], ["jobs", "--json"], ["job", "1", "--json"]], ids=" ".join
)
def test_output_to_a_closed_pipe_ends_quietly(deployed: str, args: list[str]) -> None:
    enqueue_many(deployed, 1)
    job_id = enqueue(deployed, "ping")
    args = [str(job_id) if arg == "1" else arg for arg in args]
    with subprocess.Popen(
        [str(TASKBOARD), *args],
        cwd=TESTS_DIR,
        env=command_env(deployed),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    ) as command:
        assert command.stdout is not None
        command.stdout.close()  # the reader is gone before the command writes a byte
        _, stderr = command.communicate(timeout=TIMEOUT_SECONDS)
    assert stderr == "", "no traceback, no message: the reader stopped reading"
    assert command.returncode == 1


def test_jobs_json_piped_into_head_ends_quietly(deployed: str) -> None:
    enqueue_many(deployed, 1000)  # a JSON array larger than a pipe's buffer (64 KiB)
    done = subprocess.run(
        ["sh", "-c", f"'{TASKBOARD}' jobs --json --limit 1000 | head -c 10; echo \" $?\" >&2"],
        cwd=TESTS_DIR,
        env=command_env(deployed),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=TIMEOUT_SECONDS,
        check=False,
    )
    assert done.stdout == '[{"job_id"'
    assert done.stderr == " 0\n", "only head's status: the command said nothing"


# -- migrate ---------------------------------------------------------------------------


def test_migrate_reverts_the_shipped_project(deployed: str) -> None:
    """Deploying, reporting and upgrading: tests/release/test_install.py."""
    status = run(deployed, "migrate", "--status")
    assert status.returncode == 0, status.stderr
    assert "Nothing to deploy (up-to-date)" in status.stdout

    reverted = run(deployed, "migrate", "--revert", "--yes")
    assert reverted.returncode == 0, reverted.stderr
    assert "- get_job" in reverted.stdout, "Sqitch's own output is shown"
    assert not schema_exists(deployed)


def test_migrate_revert_without_a_terminal_needs_yes(deployed: str) -> None:
    done = run(deployed, "migrate", "--revert")
    assert "--yes" in error_line(done)
    assert done.returncode == 2
    assert schema_exists(deployed)


def test_migrate_status_and_revert_are_exclusive(deployed: str) -> None:
    assert run(deployed, "migrate", "--status", "--revert").returncode == 2


def test_migrate_revert_without_sqitch_says_how_to_install_it(
    deployed: str, tmp_path: Path
) -> None:
    done = run(deployed, "migrate", "--revert", path=str(tmp_path))  # nothing on PATH, no --yes
    assert "apt-get install sqitch libdbd-pg-perl" in error_line(done)
    assert done.returncode == 1
    assert schema_exists(deployed)


def test_migrate_needs_a_url_sqitch_understands() -> None:
    done = run("host=/tmp dbname=jobs", "migrate")
    assert "postgresql://" in error_line(done)
    assert done.returncode == 2


def test_the_sqitch_target_keeps_the_password_off_the_command_line() -> None:
    target, env = sqitch_target("postgresql://app:s%40cret@db.example:6432/jobs?sslmode=require")
    assert target == "db:pg://app@db.example:6432/jobs?sslmode=require"
    assert env == {"SQITCH_PASSWORD": "s@cret"}
    target, env = sqitch_target("postgresql://postgres@/jobs?host=/run/postgresql")
    assert (target, env) == ("db:pg://postgres@/jobs?host=/run/postgresql", {})


# -- worker --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("nosuchmodule:app", "cannot import nosuchmodule"),
        ("tests_app_without_colon", "is not MODULE:APP"),
        ("apps.cli_app:", "is not MODULE:APP"),
        ("apps.cli_app:missing", "has no attribute 'missing'"),
        ("apps.cli_app:not_an_app", "not a taskboard.app.Taskboard"),
    ],
)
def test_worker_with_a_bad_app_is_a_usage_error(deployed: str, spec: str, says: str) -> None:
    done = run(deployed, "worker", spec)
    assert says in error_line(done)
    assert done.returncode == 2


def test_worker_with_bad_settings_is_a_usage_error(deployed: str) -> None:
    done = run(deployed, "worker", APP, "--pool-size=2")
    assert "TASKBOARD_POOL_SIZE" in error_line(done)
    assert done.returncode == 2


@pytest.mark.parametrize(
    ("name", "value"),
    [("lease", "inf"), ("lease", "nan"), ("lease", "86400"), ("renew_every", "inf")],
)
def test_worker_refuses_a_lease_it_cannot_keep_in_one_line_naming_the_setting(
    deployed: str, name: str, value: str
) -> None:
    done = run(deployed, "worker", APP, settings={name: value})
    assert f"TASKBOARD_{name.upper()}" in error_line(done)
    assert done.returncode == 2


def test_worker_whose_login_lacks_the_worker_role_says_what_to_grant(deployed: str) -> None:
    with login_role(deployed, "taskboard_producer") as url:
        done = run(url, "worker", APP)
    line = error_line(done)
    assert "may not claim jobs" in line and "GRANT taskboard_worker TO" in line, line
    assert done.returncode == 1


def test_worker_without_the_schema_says_to_migrate(empty: str) -> None:
    done = run(empty, "worker", APP)
    assert "taskboard migrate" in error_line(done)
    assert done.returncode == 1


@pytest.mark.parametrize("queue", ["cli", "elsewhere"])
def test_worker_runs_a_job_of_the_queue_given_and_stops_on_sigterm_with_its_counters(
    deployed: str, queue: str
) -> None:
    """--queue is honoured, also for a queue no task of the app is registered on."""
    job_id = enqueue(deployed, "cli-echo", '{"n": 1}', f"--queue={queue}")
    worker, log = run_worker_until(
        deployed,
        job_id,
        "succeeded",
        [f"--queue={queue}", "--pool-size=3", "--worker-name=cli-test"],
    )
    assert worker.returncode == 0, log
    assert get_job(deployed, job_id)["result"] == {"echo": {"n": 1}, "attempt": 1}
    lines = log.splitlines()
    assert "Traceback" not in log
    assert any(f"worker cli-test started: queues={queue} " in line for line in lines), log
    assert any(" INFO taskboard.runner: SIGTERM: shutting down" in line for line in lines), log
    assert "worker cli-test stopped: claimed=1 succeeded=1 failed=0 dead=0" in lines[-1], log


def test_worker_logs_one_json_object_a_line_with_the_job_it_is_about(deployed: str) -> None:
    """TASKBOARD_LOG_FORMAT=json: every line parses; a record about a job names it."""
    job_id = enqueue(deployed, "cli-boom", "--queue=cli", "--max-attempts=1")
    worker, log = run_worker_until(
        deployed,
        job_id,
        "dead",
        ["--pool-size=3", "--worker-name=json-test"],
        settings={"TASKBOARD_LOG_FORMAT": "json"},
    )
    assert worker.returncode == 0, log
    records = [json.loads(line) for line in log.splitlines()]  # every line is one object
    assert all({"ts", "level", "logger", "message"} <= set(r) for r in records), records
    about_job = [r for r in records if r.get("job_id") == job_id]
    assert about_job, records
    failed = about_job[0]
    assert (failed["attempt"], failed["queue"], failed["task"]) == (1, "cli", "cli-boom")
    assert "RuntimeError: boom for the log" in failed["exception"]
    assert any(r["message"].startswith("worker json-test stopped:") for r in records)


def test_an_unknown_log_format_is_one_line_and_exit_2(deployed: str) -> None:
    done = run(deployed, "worker", APP, settings={"log_format": "yaml"})
    assert (
        error_line(done)
        == "taskboard: error: TASKBOARD_LOG_FORMAT must be text or json, got 'yaml'"
    )
    assert done.returncode == 2


@pytest.mark.parametrize("command", [["status"], ["jobs"], ["enqueue", "ping"], ["sql"]])
def test_an_unknown_log_format_is_refused_by_every_command(
    deployed: str, command: list[str]
) -> None:
    done = run(deployed, *command, settings={"log_format": "xml"})
    assert (
        error_line(done) == "taskboard: error: TASKBOARD_LOG_FORMAT must be text or json, got 'xml'"
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert job_count(deployed) == 0


@pytest.mark.parametrize(
    ("change", "says"),
    [
        ({"dbname": "taskboard_no_such_db"}, 'database "taskboard_no_such_db" does not exist'),
        ({"user": "taskboard_no_such_login"}, 'role "taskboard_no_such_login" does not exist'),
    ],
    ids=["database", "login"],
)
def test_a_worker_the_server_refuses_stops_at_once(
    deployed: str, change: dict[str, str], says: str
) -> None:
    """A typo in the URL is one line and exit 1, not a wait for a server that is up."""
    url = conninfo.make_conninfo(deployed, **change)
    done = run(url, "worker", APP)
    line = error_line(done)
    assert "cannot connect to the database" in line and says in line
    assert done.returncode == 1
