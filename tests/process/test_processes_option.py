"""`taskboard worker --processes N` as real processes: one claimer that runs its
handlers in N handler processes, claims and settles for them, and stops them together."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
import pytest

from tests.support import TESTS_DIR
from tests.support.database import MakeDatabase
from tests.support.processes import (
    EXIT_SECONDS,
    wait_until,
)

# -- taskboard worker --processes N -----------------------------------------------------
#
# The console script itself, on tests/apps/cli_app.py: a claimer that starts N
# `python -m taskboard worker` handler processes and stops them together.

TASKBOARD = Path(sys.executable).parent / "taskboard"  # the venv's console script
CLI_APP = "apps.cli_app:app"
CHILD_STARTED = re.compile(r"handler process (\d+) of (\d+) started: pid (\d+)")


@dataclass
class Supervisor:
    """One `taskboard worker --processes N` process, its log, and its children's pids."""

    proc: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def children(self, count: int) -> dict[int, int]:
        """{index: pid} once the parent has logged `count` children started."""

        def started() -> dict[int, int] | None:
            assert self.proc.poll() is None, f"the parent exited early:\n{self.log()}"
            found = {int(m[1]): int(m[3]) for m in CHILD_STARTED.finditer(self.log())}
            return found if len(found) == count else None

        return wait_until(started, f"{count} worker processes to start")

    def wait_exit(self, timeout: float = EXIT_SECONDS) -> int:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"the parent did not exit within {timeout:g}s:\n{self.log()}"
            ) from None


def alive(pid: int) -> bool:
    """Whether process `pid` exists and is not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state != "Z"


@pytest.fixture
def supervisors(tmp_path: Path) -> Iterator[Callable[..., Supervisor]]:
    """Starts `taskboard worker apps.cli_app:app ARGS...` on a database; kills what is left."""
    started: list[Supervisor] = []

    def start(url: str, *args: str, settings: dict[str, str] | None = None) -> Supervisor:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
        env.update(TASKBOARD_DATABASE_URL=url, PYTHONUNBUFFERED="1", **(settings or {}))
        log_path = tmp_path / f"supervisor-{len(started)}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(
                [str(TASKBOARD), "worker", CLI_APP, *args],
                cwd=TESTS_DIR,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        started.append(Supervisor(proc, log_path))
        return started[-1]

    try:
        yield start
    finally:
        for supervisor in started:
            if supervisor.proc.poll() is None:
                supervisor.proc.send_signal(signal.SIGTERM)
                try:
                    supervisor.proc.wait(EXIT_SECONDS)
                except subprocess.TimeoutExpired:
                    supervisor.proc.kill()
                    supervisor.proc.wait()
            for pid in {int(m[3]) for m in CHILD_STARTED.finditer(supervisor.log())}:
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)
            print(
                f"----- log of taskboard worker --processes (exit {supervisor.proc.returncode}) -----"
            )
            print(supervisor.log())


def cli_jobs(url: str, count: int, sleep: float) -> list[int]:
    with psycopg.connect(url, autocommit=True) as conn:
        return [
            int(r[0])
            for r in conn.execute(
                "SELECT taskboard.enqueue(task => 'cli-pid', queue => 'cli',"
                "                         payload => jsonb_build_object('sleep', %s::float8))"
                "  FROM generate_series(1, %s)",
                [sleep, count],
            )
        ]


def results(url: str, job_ids: list[int]) -> dict[int, tuple[str, Any]]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {
            r[0]: (r[1], r[2])
            for r in conn.execute(
                "SELECT id, state, result FROM taskboard.jobs WHERE id = ANY(%s)", [job_ids]
            )
        }


def jobs_in(url: str, job_ids: list[int], state: str) -> bool:
    with psycopg.connect(url, autocommit=True) as conn:
        found = conn.execute(
            "SELECT count(*) FROM taskboard.jobs WHERE id = ANY(%s) AND state = %s",
            [job_ids, state],
        ).fetchone()
    return found == (len(job_ids),)


def backends(url: str) -> int:
    """Connections to the database other than this one's."""
    with psycopg.connect(url, autocommit=True) as conn:
        found = conn.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
    assert found is not None
    return int(found[0])


def test_processes_run_sync_jobs_in_several_processes_for_one_claimer_and_stop_on_sigterm(
    make_database: MakeDatabase, supervisors: Callable[..., Supervisor]
) -> None:
    url = make_database(deploy=True)
    parent = supervisors(url, "--processes", "3", "--concurrency", "1", "--pool-size", "3")
    children = parent.children(3)
    assert len(set(children.values())) == 3 and parent.proc.pid not in children.values()
    wait_until(lambda: " started: queues=cli slots=3 " in parent.log(), "the claimer")
    job_ids = cli_jobs(url, 12, sleep=0.3)
    wait_until(lambda: jobs_in(url, job_ids[:1], "succeeded"), "a first job to succeed")
    # One claimer's connections (control, its second cycle, renewal); plain handlers
    # in the children open none.
    assert backends(url) <= 3

    def all_succeeded() -> dict[int, tuple[str, Any]] | None:
        found = results(url, job_ids)
        return found if all(state == "succeeded" for state, _ in found.values()) else None

    done = wait_until(all_succeeded, "12 jobs to succeed")
    pids = {result["pid"] for _, result in done.values()}
    assert pids <= set(children.values()), (pids, children)
    assert len(pids) >= 2, pids

    parent.proc.send_signal(signal.SIGTERM)
    assert parent.wait_exit() == 0, parent.log()
    assert not [pid for pid in children.values() if alive(pid)]
    log = parent.log()
    assert "Traceback" not in log
    for index, pid in children.items():
        assert f"handler process {index} (pid {pid}) stopped (exit status 0)" in log, log
    # One worker claimed and settled for all three processes.
    assert log.count(" stopped: claimed=") == 1, log
    assert " stopped: claimed=12 succeeded=12 " in log, log


def test_transactional_handlers_commit_with_their_completion_in_the_handler_processes(
    make_database: MakeDatabase, supervisors: Callable[..., Supervisor]
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE cli_tx_log (job_id bigint PRIMARY KEY, pid int)")
        conn.execute("GRANT ALL ON cli_tx_log TO PUBLIC")
        job_ids = [
            int(r[0])
            for r in conn.execute(
                "SELECT taskboard.enqueue(task => 'cli-tx', queue => 'cli')"
                "  FROM generate_series(1, 6)"
            )
        ]
    parent = supervisors(url, "--processes", "2", "--concurrency", "2", "--pool-size", "4")
    children = parent.children(2)

    def all_succeeded() -> dict[int, tuple[str, Any]] | None:
        found = results(url, job_ids)
        return found if all(state == "succeeded" for state, _ in found.values()) else None

    done = wait_until(all_succeeded, "6 transactional jobs to succeed")
    with psycopg.connect(url, autocommit=True) as conn:
        written: dict[int, int] = dict(
            conn.execute("SELECT job_id, pid FROM cli_tx_log").fetchall()
        )
    # Each job's row committed with its completion, in the process that ran it, which
    # asked the database whether it still held the job (on its own connection).
    assert written == {job_id: result["pid"] for job_id, (_, result) in done.items()}
    assert set(written.values()) <= set(children.values()), (written, children)
    assert all(result["holder"] is True for _, result in done.values()), done
    parent.proc.send_signal(signal.SIGTERM)
    assert parent.wait_exit() == 0, parent.log()
    assert " stopped: claimed=6 succeeded=6 " in parent.log(), parent.log()


def test_a_child_killed_fails_its_job_stops_the_others_and_the_parent_exits_1(
    make_database: MakeDatabase, supervisors: Callable[..., Supervisor]
) -> None:
    url = make_database(deploy=True)
    parent = supervisors(url, "--processes", "2", "--concurrency", "1", "--pool-size", "3")
    children = parent.children(2)
    job_ids = cli_jobs(url, 2, sleep=30)
    wait_until(lambda: jobs_in(url, job_ids, "running"), "both jobs to be running")
    os.kill(children[2], signal.SIGKILL)
    assert parent.wait_exit() == 1, parent.log()
    assert not [pid for pid in children.values() if alive(pid)]
    log = parent.log()
    assert f"handler process 2 (pid {children[2]}) exited on its own (killed by SIGKILL)" in log, (
        log
    )
    with psycopg.connect(url, autocommit=True) as conn:
        errors = [
            r[0]
            for r in conn.execute(
                "SELECT errors->-1->>'error' FROM taskboard.jobs WHERE id = ANY(%s) ORDER BY id",
                [job_ids],
            )
        ]
    # The killed process's job failed at once (its attempt died with it), to be retried;
    # the other's was released at the shutdown that followed.
    assert errors.count("the handler process running it exited (killed by SIGKILL)") == 1, errors
    assert jobs_in(url, job_ids, "queued"), results(url, job_ids)


def test_sigterm_after_a_child_exited_still_drains(
    make_database: MakeDatabase, supervisors: Callable[..., Supervisor]
) -> None:
    """The stop a child's exit starts is not the first signal: SIGTERM after it drains."""
    url = make_database(deploy=True)
    parent = supervisors(url, "--processes", "2", "--concurrency", "1", "--pool-size", "3")
    children = parent.children(2)
    job_ids = cli_jobs(url, 2, sleep=3)
    wait_until(lambda: jobs_in(url, job_ids, "running"), "both jobs to be running")
    os.kill(children[2], signal.SIGKILL)
    wait_until(lambda: "exited on its own" in parent.log(), "the claimer to notice")
    parent.proc.send_signal(signal.SIGTERM)
    assert parent.wait_exit() == 1, parent.log()
    log = parent.log()
    assert "at once" not in log, log
    # The survivor's handler was let finish within the grace.
    assert sorted(state for state, _ in results(url, job_ids).values()) == [
        "queued",
        "succeeded",
    ], results(url, job_ids)


def test_a_payload_too_deep_to_hand_over_fails_alone(
    make_database: MakeDatabase, supervisors: Callable[..., Supervisor]
) -> None:
    """JSON Python reads but cannot pickle (nested 600 deep): that job fails for good,
    the others of its claim run."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        job_ids = [
            int(r[0])
            for r in conn.execute(
                "SELECT taskboard.enqueue(task => 'cli-echo', queue => 'cli',"
                "   payload => CASE WHEN i = 3 THEN (repeat('[', 600) || repeat(']', 600))::jsonb"
                "                   ELSE '{}'::jsonb END)"
                "  FROM generate_series(1, 5) AS i"
            )
        ]
    parent = supervisors(url, "--processes", "2", "--concurrency", "4", "--pool-size", "6")
    parent.children(2)

    def settled() -> dict[int, tuple[str, Any]] | None:
        found = results(url, job_ids)
        return (
            found
            if all(state != "queued" and state != "running" for state, _ in found.values())
            else None
        )

    done = wait_until(settled, "the five jobs to settle")
    assert [state for state, _ in done.values()].count("succeeded") == 4, done
    assert done[job_ids[2]][0] == "dead", done
    with psycopg.connect(url, autocommit=True) as conn:
        error = conn.execute(
            "SELECT errors->-1->>'error' FROM taskboard.jobs WHERE id = %s", [job_ids[2]]
        ).fetchone()
    assert error is not None and "could not be handed to a handler process" in error[0], error


def test_a_stopped_child_is_killed_and_its_job_failed(
    make_database: MakeDatabase, supervisors: Callable[..., Supervisor]
) -> None:
    """SIGSTOP: the claimer would otherwise renew a lease nobody runs under."""
    url = make_database(deploy=True)
    parent = supervisors(
        url, "--processes", "2", "--concurrency", "1", "--pool-size", "3", "--lease", "3"
    )
    children = parent.children(2)
    job_ids = cli_jobs(url, 2, sleep=30)
    wait_until(lambda: jobs_in(url, job_ids, "running"), "both jobs to be running")
    os.kill(children[1], signal.SIGSTOP)
    assert parent.wait_exit() == 1, parent.log()
    assert not alive(children[1])
    log = parent.log()
    assert f"handler process 1 (pid {children[1]}) stopped answering: killing it" in log, log
    assert jobs_in(url, job_ids, "queued"), results(url, job_ids)


def test_the_children_exit_when_the_claimer_is_killed(
    make_database: MakeDatabase, supervisors: Callable[..., Supervisor]
) -> None:
    url = make_database(deploy=True)
    parent = supervisors(url, "--processes", "2", "--concurrency", "1", "--pool-size", "3")
    children = parent.children(2)
    job_ids = cli_jobs(url, 2, sleep=30)
    wait_until(lambda: jobs_in(url, job_ids, "running"), "both jobs to be running")
    parent.proc.kill()
    parent.proc.wait()
    wait_until(
        lambda: not [pid for pid in children.values() if alive(pid)] or None,
        "the handler processes to exit",
    )
    # Nobody completes or fails them: their leases expire as a stopped worker's do.
    assert jobs_in(url, job_ids, "running"), results(url, job_ids)


@pytest.mark.parametrize("value", ["0", "x", "257", " 2", "1_0", "２"])
def test_processes_out_of_range_is_one_line_naming_the_option_and_exit_2(
    make_database: MakeDatabase, value: str
) -> None:
    url = make_database(deploy=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
    env["TASKBOARD_DATABASE_URL"] = url
    done = subprocess.run(
        [str(TASKBOARD), "worker", CLI_APP, "--processes", value],
        cwd=TESTS_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=EXIT_SECONDS,
        check=False,
    )
    assert done.returncode == 2
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("taskboard: error: "), done.stderr
    assert "--processes" in lines[0], lines[0]
    assert "handler process" not in done.stdout + done.stderr


def test_sigterm_to_the_parent_and_every_child_at_once_drains_once(
    make_database: MakeDatabase, supervisors: Callable[..., Supervisor]
) -> None:
    """What systemd's default KillMode=control-group (or pkill -f) does: the children
    ignore the signal sent to them, and the claimer drains them once."""
    url = make_database(deploy=True)
    parent = supervisors(
        url,
        *("--processes", "2", "--concurrency", "1", "--pool-size", "3", "--worker-name", "grp"),
        settings={"TASKBOARD_SHUTDOWN_GRACE": "1"},
    )
    children = parent.children(2)
    wait_until(lambda: "worker grp started" in parent.log(), "the claimer to start")
    job_ids = cli_jobs(url, 2, sleep=30)
    wait_until(lambda: jobs_in(url, job_ids, "running"), "both jobs to be running")

    for pid in (parent.proc.pid, *children.values()):
        os.kill(pid, signal.SIGTERM)

    assert parent.wait_exit() == 0, parent.log()
    assert not [pid for pid in children.values() if alive(pid)]
    log = parent.log()
    assert "at once" not in log, log
    assert log.count("SIGTERM: shutting down") == 1, log
    # Past its grace the claimer released the jobs the handlers still ran.
    assert jobs_in(url, job_ids, "queued"), results(url, job_ids)


def test_sigterm_while_the_children_start_stops_them_all(
    make_database: MakeDatabase, supervisors: Callable[..., Supervisor]
) -> None:
    url = make_database(deploy=True)
    parent = supervisors(
        url,
        *("--processes", "4", "--pool-size", "3"),
        settings={"TASKBOARD_SHUTDOWN_GRACE": "2"},
    )
    wait_until(lambda: "handler process 1 of 4 started" in parent.log(), "the first child")
    parent.proc.send_signal(signal.SIGTERM)
    assert parent.wait_exit() == 0, parent.log()
    log = parent.log()
    assert "did not exit in time" not in log, log
    started = [int(m[3]) for m in CHILD_STARTED.finditer(log)]
    assert started and not [pid for pid in started if alive(pid)], log


def test_an_empty_worker_name_is_refused_with_processes_as_without(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
    env["TASKBOARD_DATABASE_URL"] = url
    done = subprocess.run(
        [str(TASKBOARD), "worker", CLI_APP, "--processes", "2", "--worker-name", ""],
        cwd=TESTS_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=EXIT_SECONDS,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [done.stderr.strip()], done.stderr
    assert "WORKER_NAME" in done.stderr and "handler process" not in done.stderr


def test_bad_settings_fail_in_the_parent_before_any_child_starts(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
    env["TASKBOARD_DATABASE_URL"] = url
    done = subprocess.run(
        [str(TASKBOARD), "worker", CLI_APP, "--processes", "2", "--pool-size", "2"],
        cwd=TESTS_DIR,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=EXIT_SECONDS,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.splitlines() == [done.stderr.strip()], done.stderr
    assert "TASKBOARD_POOL_SIZE" in done.stderr and "handler process" not in done.stderr
