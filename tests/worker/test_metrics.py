"""Prometheus metrics: a real worker's /metrics and the `taskboard metrics` exporter, scraped
over HTTP and read with prometheus_client's own text parser."""

from __future__ import annotations

import asyncio
import datetime as dt
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
import pytest

from taskboard import AsyncContext, Taskboard, load_settings
from tests.support import TESTS_DIR
from tests.support.metrics import Samples, free_port, listening, scrape, value

MakeDatabase = Callable[..., str]
TASKBOARD = Path(sys.executable).parent / "taskboard"
DEADLINE_SECONDS = 60.0
FAST: dict[str, Any] = {"pool_size": 5, "lease": 3, "renew_every": 1, "poll_interval": 0.2}
SLOTS = FAST["pool_size"] - 2


def states(url: str) -> dict[int, str]:
    with psycopg.connect(url, autocommit=True) as conn:
        return {i: s for i, s in conn.execute("SELECT id, state FROM taskboard.jobs")}


def env_for(url: str, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
    env["TASKBOARD_DATABASE_URL"] = url
    env.update({f"TASKBOARD_{k.upper()}": v for k, v in settings.items()})
    return env


def test_worker_metrics_count_what_ran(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    port = free_port()
    app = Taskboard(load_settings(database_url=url, worker_name="metrics"))
    release = asyncio.Event()

    @app.task("hold", queue="mail")
    async def hold(ctx: AsyncContext, payload: Any) -> None:
        await release.wait()

    @app.task("ok", queue="mail")
    async def ok(ctx: AsyncContext, payload: Any) -> str:
        return "sent"

    @app.task("flaky", queue="mail")
    async def flaky(ctx: AsyncContext, payload: Any) -> str:
        if ctx.attempt == 1:
            raise RuntimeError("first attempt fails")
        return "sent"

    @app.task("boom", queue="mail", max_attempts=1)
    async def boom(ctx: AsyncContext, payload: Any) -> None:
        raise RuntimeError("always fails")

    # Due two minutes before the worker starts: its start lag counts them.
    held_id = app.enqueue("hold", {}, run_at=dt.datetime.now(dt.UTC) - dt.timedelta(minutes=2))

    async def wait_for(check: Callable[[Samples], bool]) -> Samples:
        deadline = time.monotonic() + DEADLINE_SECONDS
        while True:
            samples = await asyncio.to_thread(scrape, port)
            if check(samples):
                return samples
            assert time.monotonic() < deadline, samples
            await asyncio.sleep(0.1)

    async def main() -> None:
        stop = asyncio.Event()
        worker = asyncio.create_task(app.worker(stop=stop, metrics_port=port, **FAST))
        try:
            deadline = time.monotonic() + DEADLINE_SECONDS
            while not await asyncio.to_thread(listening, port):
                assert not worker.done(), worker.result()
                assert time.monotonic() < deadline
                await asyncio.sleep(0.05)
            # One handler runs and holds its lease across renewals.
            during = await wait_for(lambda s: value(s, "taskboard_running_handlers") == 1)
            assert value(during, "taskboard_held_leases") == 1
            assert value(during, "taskboard_free_slots") == SLOTS - 1
            await asyncio.sleep(FAST["renew_every"] * 2.5)
            during = await asyncio.to_thread(scrape, port)
            since = value(during, "taskboard_seconds_since_last_renewal")
            assert 0 < since < FAST["renew_every"] * 2, since  # renewed, not just claimed
            release.set()
            ids = [app.enqueue("ok", {}) for _ in range(3)]
            ids += [app.enqueue("flaky", {}), app.enqueue("boom", {})]
            deadline = time.monotonic() + DEADLINE_SECONDS
            while not all(
                s in ("succeeded", "dead") for s in (await asyncio.to_thread(states, url)).values()
            ):
                assert not worker.done(), worker.result()
                assert time.monotonic() < deadline
                await asyncio.sleep(0.1)
            # Counters move on the database's answer, which the states above already show.
            after = await wait_for(
                lambda s: (
                    value(s, "taskboard_jobs_total", queue="mail", task="ok", outcome="succeeded")
                    == 3
                )
            )
            assert len(ids) == 5 and held_id
        finally:
            stop.set()
            await asyncio.wait_for(worker, DEADLINE_SECONDS)
        jobs = "taskboard_jobs_total"

        def count(task: str, outcome: str) -> float:
            return value(after, jobs, queue="mail", task=task, outcome=outcome)

        assert count("hold", "claimed") == 1
        assert count("hold", "succeeded") == 1
        assert count("ok", "claimed") == 3
        assert count("flaky", "claimed") == 2
        assert count("flaky", "failed") == 1
        assert count("flaky", "succeeded") == 1
        assert count("boom", "claimed") == 1
        assert count("boom", "dead") == 1
        for task in ("hold", "ok", "flaky", "boom"):
            for outcome in ("lost", "refused", "released"):
                assert count(task, outcome) == 0
        duration = "taskboard_handler_duration_seconds_count"
        assert value(after, duration, queue="mail", task="ok") == 3
        assert value(after, duration, queue="mail", task="flaky") == 2
        assert value(after, duration, queue="mail", task="boom") == 1
        assert value(after, "taskboard_handler_duration_seconds_sum", queue="mail", task="hold") > (
            FAST["renew_every"] * 2
        )
        assert value(after, "taskboard_claim_to_start_seconds_count", queue="mail", task="ok") == 3
        lag = "taskboard_start_lag_seconds"
        assert value(after, f"{lag}_count", queue="mail", task="hold") == 1
        assert 120 <= value(after, f"{lag}_sum", queue="mail", task="hold") < 120 + DEADLINE_SECONDS
        assert value(after, f"{lag}_count", queue="mail", task="ok") == 3
        assert value(after, f"{lag}_sum", queue="mail", task="ok") < DEADLINE_SECONDS
        assert value(after, "taskboard_running_handlers") == 0
        assert value(after, "taskboard_held_leases") == 0
        assert value(after, "taskboard_free_slots") == SLOTS
        assert value(after, "taskboard_seconds_since_last_renewal") == 0
        assert not any("job_id" in dict(labels) for _, labels in after)

    asyncio.run(main())
    assert not listening(port)  # the server stops with the worker
    app.close()


def test_worker_metrics_count_released_lost_and_refused(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    port = free_port()
    app = Taskboard(load_settings(database_url=url, worker_name="metrics"))

    def cancel(job_id: int) -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT taskboard.cancel(%s)", [job_id])

    @app.task("vanish", queue="mail")
    async def vanish(ctx: AsyncContext, payload: Any) -> None:
        # Cancelled under its handler: the next renewal is refused and the claim is lost.
        await asyncio.to_thread(cancel, ctx.job_id)
        await asyncio.sleep(DEADLINE_SECONDS)

    @app.task("stale", queue="mail")
    async def stale(ctx: AsyncContext, payload: Any) -> str:
        # Cancelled, then returns at once: its completion presents a token no longer current.
        await asyncio.to_thread(cancel, ctx.job_id)
        return "too late"

    vanished = app.enqueue("vanish", {}, queue="mail")
    staled = app.enqueue("stale", {}, queue="mail")
    unknown = app.enqueue("ghost", {}, queue="mail")  # no worker of this app knows it

    # Renewals 3 s apart leave "stale" no chance to be renewed (and lost) between its
    # cancellation and its completion, milliseconds later.
    settings = {**FAST, "lease": 9, "renew_every": 3}

    async def main() -> Samples:
        stop = asyncio.Event()
        worker = asyncio.create_task(app.worker(stop=stop, metrics_port=port, **settings))
        deadline = time.monotonic() + DEADLINE_SECONDS
        try:
            while True:
                if await asyncio.to_thread(listening, port):
                    samples = await asyncio.to_thread(scrape, port)
                    jobs = "taskboard_jobs_total"
                    if (
                        value(samples, jobs, queue="mail", task="vanish", outcome="lost")
                        + value(samples, jobs, queue="mail", task="stale", outcome="refused")
                        + value(samples, jobs, queue="mail", task="ghost", outcome="released")
                        == 3
                    ):
                        return samples
                assert not worker.done(), worker.result()
                assert time.monotonic() < deadline
                await asyncio.sleep(0.1)
        finally:
            stop.set()
            await asyncio.wait_for(worker, DEADLINE_SECONDS)

    samples = asyncio.run(main())
    for task in ("vanish", "stale", "ghost"):
        assert (
            value(samples, "taskboard_jobs_total", queue="mail", task=task, outcome="claimed") == 1
        )
    for outcome in ("succeeded", "failed", "dead"):
        for task in ("vanish", "stale", "ghost"):
            assert (
                value(samples, "taskboard_jobs_total", queue="mail", task=task, outcome=outcome)
                == 0
            )
    # Only the handler that ended by itself is timed: the lost one was cancelled.
    duration = "taskboard_handler_duration_seconds_count"
    assert value(samples, duration, queue="mail", task="stale") == 1
    assert value(samples, duration, queue="mail", task="vanish") == 0
    assert value(samples, duration, queue="mail", task="ghost") == 0
    assert states(url) == {vanished: "cancelled", staled: "cancelled", unknown: "queued"}
    app.close()


def test_metrics_are_off_by_default(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = Taskboard(load_settings(database_url=url, worker_name="quiet"))
    assert app.settings.metrics_port is None
    # Nothing in the runtime imports prometheus_client until metrics are on.
    probe = (
        "import sys, taskboard, taskboard.app, taskboard.cli, taskboard.metrics, taskboard.worker; "
        "assert 'prometheus_client' not in sys.modules, 'imported'"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    # A worker without the setting opens no port besides its database connections.
    before = listening_ports()
    ran: list[int] = []

    @app.task("ok")
    async def ok(ctx: AsyncContext, payload: Any) -> None:
        ran.append(len(listening_ports() - before))

    app.enqueue("ok", {})

    async def main() -> None:
        stop = asyncio.Event()
        worker = asyncio.create_task(app.worker(stop=stop, **FAST))
        deadline = time.monotonic() + DEADLINE_SECONDS
        while not ran:
            assert not worker.done(), worker.result()
            assert time.monotonic() < deadline
            await asyncio.sleep(0.05)
        stop.set()
        await asyncio.wait_for(worker, DEADLINE_SECONDS)

    asyncio.run(main())
    assert ran == [0]
    app.close()


def listening_ports() -> set[str]:
    """The TCP sockets this process listens on (from /proc/self/net, state 0A)."""
    inodes = set()
    for fd in Path("/proc/self/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[3] == "0A" and fields[9] in inodes:
                ports.add(fields[1])
    return ports


@pytest.mark.parametrize(
    ("port", "says"),
    [("70000", "TASKBOARD_METRICS_PORT"), ("nine", "TASKBOARD_METRICS_PORT")],
)
def test_a_bad_metrics_port_is_one_line(make_database: MakeDatabase, port: str, says: str) -> None:
    url = make_database(deploy=True)
    done = subprocess.run(
        [str(TASKBOARD), "worker", "apps.cli_app:app"],
        cwd=TESTS_DIR,
        env=env_for(url, metrics_port=port),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("taskboard: error: "), done.stderr
    assert says in lines[0]


def test_a_metrics_port_in_use_is_one_line(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [str(TASKBOARD), "worker", "apps.cli_app:app"],
            cwd=TESTS_DIR,
            env=env_for(url, metrics_port=str(port)),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 2, done.stderr
    error = [line for line in done.stderr.splitlines() if "error" in line.lower()]
    assert len(error) == 1 and error[0].startswith("taskboard: error: "), done.stderr
    assert f"cannot serve /metrics on 127.0.0.1:{port}" in error[0]
    assert "Traceback" not in done.stderr, done.stderr


def test_metrics_without_prometheus_client_says_which_extra(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    # The interpreter refuses the import, as it would were the package not installed.
    code = (
        "import sys; sys.modules['prometheus_client'] = None; "
        "from taskboard.cli import main; sys.exit(main(['worker', 'apps.cli_app:app']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=TESTS_DIR,
        env={**env_for(url, metrics_port=str(free_port())), "PYTHONPATH": str(TESTS_DIR)},
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1, done.stderr
    assert "pip install 'taskboard-pg[metrics]'" in lines[0]


def test_exporter_serves_the_queue_depth(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    app = Taskboard(load_settings(database_url=url))
    hour_ago = dt.datetime.now(dt.UTC) - dt.timedelta(hours=1)
    tomorrow = dt.datetime.now(dt.UTC) + dt.timedelta(days=1)
    app.enqueue("mail", {}, queue="outbox", run_at=hour_ago)
    app.enqueue("mail", {}, queue="outbox")
    app.enqueue("mail", {}, queue="outbox", run_at=tomorrow)
    app.enqueue("mail", {}, queue="later", run_at=tomorrow)
    app.close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SELECT taskboard.pause('later')")
        conn.execute("SELECT taskboard.set_queue_limit('outbox', 4)")
    port = free_port()
    exporter = subprocess.Popen(
        [str(TASKBOARD), "metrics", "--port", str(port)],
        cwd=TESTS_DIR,
        env=env_for(url),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + DEADLINE_SECONDS
        while not listening(port):
            assert exporter.poll() is None, exporter.communicate()
            assert time.monotonic() < deadline
            time.sleep(0.05)
        samples = scrape(port)
    finally:
        exporter.send_signal(signal.SIGTERM)
        _, stderr = exporter.communicate(timeout=DEADLINE_SECONDS)
    assert exporter.returncode == 0, stderr
    assert value(samples, "taskboard_exporter_database_up") == 1
    assert value(samples, "taskboard_queue_jobs", queue="outbox", state="queued") == 3
    assert value(samples, "taskboard_queue_jobs", queue="outbox", state="running") == 0
    assert value(samples, "taskboard_queue_jobs", queue="later", state="queued") == 1
    assert value(samples, "taskboard_queue_runnable", queue="outbox") == 2
    assert value(samples, "taskboard_queue_runnable", queue="later") == 0
    age = value(samples, "taskboard_queue_oldest_queued_age_seconds", queue="outbox")
    assert 3600 <= age < 3600 + DEADLINE_SECONDS, age
    assert value(samples, "taskboard_queue_oldest_queued_age_seconds", queue="later") == 0
    assert value(samples, "taskboard_queue_paused", queue="later") == 1
    assert value(samples, "taskboard_queue_paused", queue="outbox") == 0
    assert value(samples, "taskboard_queue_max_running", queue="outbox") == 4
    assert ("taskboard_queue_max_running", frozenset({("queue", "later")})) not in samples


def test_exporter_without_a_port_is_one_line(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    done = subprocess.run(
        [str(TASKBOARD), "metrics"],
        cwd=TESTS_DIR,
        env=env_for(url),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "taskboard: error: give --port N (or set TASKBOARD_METRICS_PORT)"
    ]


def test_metrics_host_defaults_to_loopback() -> None:
    settings = load_settings(database_url="postgresql://x/y", metrics_port="")
    assert (settings.metrics_port, settings.metrics_host) == (None, "127.0.0.1")
