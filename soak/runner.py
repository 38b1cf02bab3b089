"""Run the soak: server, deploy, producers, workers, faults, drain, checks, report.

    python -m soak [--jobs N] [--seconds S] [--workers W] [--seed SEED] [--quick]
                   [--pg 18|15] [--run-dir DIR] [--report FILE]

Options default to SOAK_JOBS, SOAK_SECONDS, SOAK_WORKERS, SOAK_SEED and
SOAK_QUICK from the environment (what `make soak` passes), then to 20,000
jobs, 240 s of load and faults, and 4 workers; --quick is 1,500 jobs in 20 s
with 3 workers. The seed is printed first: run again with --seed to get the
same jobs and the same fault schedule. Exit status 0 when every invariant
held, 1 when one was violated, 2 when the soak could not run.
"""

from __future__ import annotations

import argparse
import contextlib
import datetime as dt
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psycopg
from psycopg import conninfo

from soak import check, report
from soak.history import History
from soak.plan import (
    DEFAULT_JOBS,
    DEFAULT_SECONDS,
    DEFAULT_WORKERS,
    KEY_LIMIT,
    KEYED_QUEUE,
    QUICK_JOBS,
    QUICK_SECONDS,
    QUICK_WORKERS,
    RATE_LIMITS,
    Config,
    Fault,
    Operation,
    Plan,
    make_plan,
)
from taskboard.app import Taskboard
from taskboard.settings import load_settings
from taskboard_dev import devdb
from taskboard_dev.harness import WorkerProcess
from taskboard_dev.server import Server, ServerError, drop_database, recreate_database

DATABASE = "taskboard_soak"
WORKER_ROLE = "soak_worker"
PRODUCER_ROLE = "soak_producer"
OPERATOR_ROLE = "soak_operator"  # pauses, limits, cancels and retries, as an administrator
TICK_S = 0.02
PROGRESS_EVERY_S = 10.0
PRODUCER_START_DELAY_S = 1.0
WORKER_WARMUP_S = 1.0
STOP_WAIT_S = 25.0  # shutdown_grace (5 s) + the driver's settle-at-exit (10 s) + slack
EXIT_OK, EXIT_VIOLATED, EXIT_BROKEN = 0, 1, 2
RESPAWN_DELAY_S = 0.5  # before replacing a worker that exited by itself
OWN_SERVER_PREFIX = "taskboard-soak-pg-"
# The own server's settings beyond the durable ones taskboard_dev.server spells
# out (an immediate shutdown is a crash, and committed work must survive it).
OWN_SERVER_SETTINGS = {"max_connections": "200"}
MID_HANDLER_WAIT_S = 2.0  # how long a kill or stop waits for its worker to hold a job
OPERATION_RETRY_S = 0.3  # a resume or limit that could not be sent is sent again after this
OPERATION_GIVE_UP_S = 30.0  # ... for this long at most
PICK_FROM = 50  # a cancel or retry picks its job among the newest this many in a state
DB_CLOCK_SQL = "SELECT extract(epoch FROM clock_timestamp())::float8"
SAMPLE_EVERY_S = 0.1  # how often the runner counts each worker's server connections
# Each worker's connections show as `taskboard <worker name>` (Settings.application_name).
CONNECTIONS_SQL = """
SELECT application_name, count(*)
  FROM pg_stat_activity
 WHERE datname = current_database() AND application_name LIKE 'taskboard %'
 GROUP BY application_name
"""
# Jobs others wait for (an edge names them): those running under a live lease, with
# their holder, for an aimed kill or stop; the newest unfinished ones, for an aimed cancel.
DEPENDENCY_HOLDERS_SQL = """
SELECT j.id, j.claimed_by
  FROM taskboard.jobs AS j
 WHERE j.state = 'running'
   AND EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = j.id)
   AND j.lease_expires_at > clock_timestamp()
"""
DEPENDENCIES_SQL = """
SELECT j.id, j.state
  FROM taskboard.jobs AS j
 WHERE j.state IN ('queued', 'running')
   AND EXISTS (SELECT FROM taskboard.job_dependencies AS d WHERE d.depends_on = j.id)
 ORDER BY j.id DESC
 LIMIT %s
"""
Conn = psycopg.Connection[Any]

SETUP_SQL = f"""
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{WORKER_ROLE}') THEN
        CREATE ROLE {WORKER_ROLE} LOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{PRODUCER_ROLE}') THEN
        CREATE ROLE {PRODUCER_ROLE} LOGIN;
    END IF;
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '{OPERATOR_ROLE}') THEN
        CREATE ROLE {OPERATOR_ROLE} LOGIN;
    END IF;
END
$$;
GRANT taskboard_worker TO {WORKER_ROLE};
GRANT taskboard_producer TO {PRODUCER_ROLE};
GRANT taskboard_admin TO {OPERATOR_ROLE};
-- What ledger.post writes in the transaction that completes its job: the
-- fenced database effect. No unique constraint: duplicates must show.
CREATE SCHEMA soak_app;
CREATE TABLE soak_app.ledger (
    job_id bigint      NOT NULL,
    token  uuid        NOT NULL,
    rid    text        NOT NULL,
    at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
GRANT USAGE ON SCHEMA soak_app TO {WORKER_ROLE};
GRANT INSERT ON soak_app.ledger TO {WORKER_ROLE};
"""


def project_root() -> Path:
    return Path(__file__).resolve().parents[1]


@dataclass(eq=False, kw_only=True)
class Proc(WorkerProcess):
    """A worker or producer process of the soak, and what the runner did to it."""

    kind: str  # worker or producer
    slot: int
    started: float
    stopped_until: float | None = None  # SIGSTOPped by us until then
    expected_exit: str | None = None  # why we ended it: killed, terminated
    exit_recorded: bool = False


@dataclass
class ConnectionSampler:
    """Counts each worker process's server connections in pg_stat_activity, by its
    application_name, every SAMPLE_EVERY_S on a thread and a connection of its own
    (not while the server restarts). Records each new high of a process (`conns`)
    and, when stopped, how many samples it took (`conns_sampled`)."""

    highs: dict[str, int] = field(default_factory=dict)
    samples: int = 0
    failed: int = 0
    _done: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self, soak: Soak) -> None:
        self._thread = threading.Thread(
            target=self._run, args=(soak,), name="soak-sampler", daemon=True
        )
        self._thread.start()

    def stop(self) -> None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _run(self, soak: Soak) -> None:
        conn: Conn | None = None
        while not self._done.wait(SAMPLE_EVERY_S):
            if soak.restarting.is_set():
                continue
            workers = {p.name for p in list(soak.procs) if p.kind == "worker"}
            try:
                if conn is None or conn.closed or conn.broken:
                    conn = psycopg.connect(
                        soak.urls.admin,
                        autocommit=True,
                        connect_timeout=2,
                        application_name="soak sampler",
                    )
                rows = conn.execute(CONNECTIONS_SQL).fetchall()
            except psycopg.Error:
                self.failed += 1
                if conn is not None:
                    conn.close()
                conn = None
                continue
            self.samples += 1
            for app_name, count in rows:
                name = str(app_name).removeprefix("taskboard ")
                if name in workers and int(count) > self.highs.get(name, 0):
                    self.highs[name] = int(count)
                    soak.history.write("conns", name=name, n=int(count))
        if conn is not None:
            conn.close()
        soak.history.write(
            "conns_sampled", samples=self.samples, failed=self.failed, every=SAMPLE_EVERY_S
        )


@dataclass
class Urls:
    admin: str  # superuser, the soak database
    worker: str
    producer: str
    operator: str  # the admin role: queue control and job management through the driver


@dataclass
class Soak:
    config: Config
    plan: Plan
    server: Server | None  # the soak's own, which it restarts; None on an external server
    urls: Urls
    run_dir: Path
    history: History
    rng: random.Random
    procs: list[Proc] = field(default_factory=list)
    slots: dict[int, Proc] = field(default_factory=dict)
    generation: dict[int, int] = field(default_factory=dict)
    respawn_at: dict[int, float] = field(default_factory=dict)
    restarting: threading.Event = field(default_factory=threading.Event)
    restart_thread: threading.Thread | None = None
    admin_conn: psycopg.Connection[Any] | None = None
    operator_conn: psycopg.Connection[Any] | None = None
    operator_app: Taskboard | None = None
    sampler: ConnectionSampler = field(default_factory=ConnectionSampler)
    paused: set[str] = field(default_factory=set)  # queues a confirmed pause left paused
    limited: set[str] = field(default_factory=set)  # queues whose limit may be set
    t0: float = 0.0
    phase_end: float = 0.0
    drained_at: float | None = None
    stuck: int = 0

    # -- processes ---------------------------------------------------------------

    def _child_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
        root = str(project_root())
        env["PYTHONPATH"] = root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        return env

    def _spawn(self, name: str, kind: str, slot: int, argv: list[str], **recorded: Any) -> Proc:
        proc = Proc.start(
            name,
            [sys.executable, *argv],
            log_path=self.run_dir / "logs" / f"{name}.log",
            env=self._child_env(),
            cwd=project_root(),
            new_session=True,  # a Ctrl-C on the soak reaches the runner only
            kind=kind,
            slot=slot,
            started=time.time(),
        )
        self.procs.append(proc)
        self.history.write("spawn", name=name, kind=kind, slot=slot, pid=proc.pid, **recorded)
        return proc

    def spawn_worker(self, slot: int) -> Proc:
        """Start the worker of `slot`: every task, or (a plain slot) only the tasks of the
        queues without a transactional task, with a small pool and a high concurrency."""
        gen = self.generation.get(slot, -1) + 1
        self.generation[slot] = gen
        cfg = self.config
        plain = cfg.is_plain(slot)
        name = f"{'p' if plain else 'w'}{slot}.{gen}"
        pool_size = cfg.plain_pool_size if plain else cfg.pool_size
        extra = ["--plain", "--concurrency", str(cfg.plain_concurrency)] if plain else []
        proc = self._spawn(
            name,
            "worker",
            slot,
            [
                "-m",
                "soak.app",
                "--url",
                self.urls.worker,
                "--history",
                str(self.run_dir / "history" / f"{name}.jsonl"),
                "--name",
                name,
                "--lease",
                str(cfg.lease),
                "--renew-every",
                str(cfg.renew_every),
                "--pool-size",
                str(pool_size),
                *extra,
            ],
            group="plain" if plain else "all",
            pool_size=pool_size,
        )
        self.slots[slot] = proc
        return proc

    def spawn_producer(self, index: int) -> Proc:
        return self._spawn(
            f"producer-{index}",
            "producer",
            index,
            [
                "-m",
                "soak.producer",
                "--url",
                self.urls.producer,
                "--plan",
                str(self.run_dir / "plan.json"),
                "--index",
                str(index),
                "--start",
                str(self.t0),
                "--history",
                str(self.run_dir / "history" / f"producer-{index}.jsonl"),
            ],
        )

    def respawn_due(self) -> None:
        for slot, at in list(self.respawn_at.items()):
            if time.time() >= at:
                del self.respawn_at[slot]
                self.spawn_worker(slot)

    def reap(self) -> None:
        """Record every exit; replace a worker that died without our doing."""
        for proc in self.procs:
            if proc.exit_recorded or proc.running():
                continue
            proc.exit_recorded = True
            code = proc.proc.returncode
            cause = proc.expected_exit or (
                "done" if proc.kind == "producer" and code == 0 else "unexpected"
            )
            self.history.write(
                "exit", name=proc.name, kind=proc.kind, pid=proc.pid, code=code, cause=cause
            )
            if cause == "unexpected":
                print(
                    f"soak: {proc.kind} {proc.name} exited by itself with status {code}", flush=True
                )
                if (
                    proc.kind == "worker"
                    and self.slots.get(proc.slot) is proc
                    and time.time() < self.phase_end
                ):
                    self.spawn_worker(proc.slot)

    # -- the database as superuser ------------------------------------------------

    def admin(self) -> psycopg.Connection[Any]:
        if self.admin_conn is None or self.admin_conn.closed or self.admin_conn.broken:
            self.admin_conn = psycopg.connect(
                self.urls.admin, autocommit=True, connect_timeout=5, application_name="soak runner"
            )
        return self.admin_conn

    def counts(self) -> dict[str, int]:
        rows = (
            self.admin()
            .execute("SELECT state, count(*) FROM taskboard.jobs GROUP BY state")
            .fetchall()
        )
        return {str(state): int(n) for state, n in rows}

    # -- faults -------------------------------------------------------------------

    def holding(self, proc: Proc) -> int:
        """How many running jobs `proc` holds (to aim kill and stop at a worker mid-handler)."""
        try:
            row = (
                self.admin()
                .execute(
                    "SELECT count(*) FROM taskboard.jobs WHERE state = 'running' AND claimed_by = %s",
                    [proc.name],
                )
                .fetchone()
            )
        except psycopg.OperationalError:
            return -1
        return int(row[0]) if row else 0

    def inject(self, fault: Fault | Operation, due: float) -> bool:
        """Inject `fault` or make the operation; False to be asked again (a kill or stop
        waits for a busy worker, a resume or limit for the server to answer)."""
        if isinstance(fault, Operation):
            return self.operate(fault, due)
        kind = fault.kind
        if kind in ("kill", "stop"):
            if fault.aim:
                aimed = self.dependency_holder()
                if aimed is not None:
                    self._inject(fault, *aimed)
                    return True
                if time.time() < due + MID_HANDLER_WAIT_S:
                    return False
            proc = self.slots[fault.slot]
            busy = proc.running() and proc.stopped_until is None and self.holding(proc) > 0
            if not busy and time.time() < due + MID_HANDLER_WAIT_S:
                return False
        self._inject(fault)
        return True

    def dependency_holder(self) -> tuple[Proc, int] | None:
        """A worker of ours, running and not stopped, that holds a live lease of a job
        others wait for, and that job; None when there is none (or no answer)."""
        try:
            rows = self.admin().execute(DEPENDENCY_HOLDERS_SQL).fetchall()
        except psycopg.OperationalError:
            return None
        workers = {
            p.name: p for p in self.slots.values() if p.running() and p.stopped_until is None
        }
        held = [(workers[str(worker)], int(job)) for job, worker in rows if worker in workers]
        return self.rng.choice(held) if held else None

    def _inject(self, fault: Fault, target: Proc | None = None, aimed: int | None = None) -> None:
        """Inject `fault`: a kill or stop hits `target` (the worker holding job `aimed`,
        a job others wait for) or else its slot's worker."""
        kind = fault.kind
        if kind.startswith("restart"):
            server = self.server
            if server is None:
                self.history.write(
                    "fault_skipped", kind=kind, why="the server is not the soak's own"
                )
                return
            if self.restarting.is_set():
                self.history.write("fault_skipped", kind=kind, why="a restart is under way")
                return
            self.restarting.set()
            self.restart_thread = threading.Thread(
                target=self._restart, args=(server, fault), daemon=True
            )
            self.restart_thread.start()
            return
        if kind == "cancel":
            self._cancel(aimed=bool(fault.aim))
            return
        proc = target or self.slots[fault.slot]
        aim = {} if aimed is None else {"aimed": aimed}
        if not proc.running():
            self.history.write("fault_skipped", kind=kind, target=proc.name, why="not running")
            return
        at = time.time()  # before the fault: the checker's window starts here
        if kind == "kill":
            open_claims = proc.stopped_until is None
            os.kill(proc.pid, signal.SIGKILL)
            proc.expected_exit = "killed"
            proc.proc.wait()
            self.history.write(
                "fault",
                kind="kill",
                at=at,
                target=proc.name,
                pid=proc.pid,
                while_stopped=not open_claims,
                **aim,
            )
            proc.stopped_until = None
            self.reap()
            self.spawn_worker(proc.slot)
        elif kind == "stop":
            if proc.stopped_until is not None:
                self.history.write(
                    "fault_skipped", kind=kind, target=proc.name, why="already stopped"
                )
                return
            os.kill(proc.pid, signal.SIGSTOP)
            proc.stopped_until = time.time() + fault.duration
            self.history.write(
                "fault",
                kind="stop",
                at=at,
                target=proc.name,
                pid=proc.pid,
                duration=fault.duration,
                **aim,
            )
        elif kind == "terminate":
            self._terminate(proc, fault.share)

    def _terminate(self, proc: Proc, share: float) -> None:
        if self.restarting.is_set():
            self.history.write(
                "fault_skipped", kind="terminate", target=proc.name, why="server restarting"
            )
            return
        app_name = f"taskboard {proc.name}"[:63]
        at = time.time()
        try:
            conn = self.admin()
            pids = [
                int(r[0])
                for r in conn.execute(
                    "SELECT pid FROM pg_stat_activity WHERE application_name = %s ORDER BY pid",
                    [app_name],
                ).fetchall()
            ]
            chosen = self.rng.sample(pids, max(1, round(len(pids) * share))) if pids else []
            ended = [
                pid
                for pid in chosen
                if conn.execute("SELECT pg_terminate_backend(%s)", [pid]).fetchone() == (True,)
            ]
        except psycopg.OperationalError as exc:
            self.history.write(
                "fault_skipped", kind="terminate", target=proc.name, why=str(exc)[:200]
            )
            return
        self.history.write(
            "fault",
            kind="terminate",
            at=at,
            target=proc.name,
            backends=len(pids),
            terminated=len(ended),
        )

    # -- operations, through the driver's management API as the admin role ----------

    def operator(self) -> tuple[Taskboard, psycopg.Connection[Any]]:
        """The management API and the autocommit connection its calls are made on (so
        that the database clock can be read right before and right after each)."""
        if self.operator_app is None:
            self.operator_app = Taskboard(load_settings(database_url=self.urls.operator))
        conn = self.operator_conn
        if conn is None or conn.closed or conn.broken:
            conn = self.operator_conn = psycopg.connect(
                self.urls.operator,
                autocommit=True,
                connect_timeout=5,
                application_name="soak operator",
            )
        return self.operator_app, conn

    def _clock(self) -> tuple[Taskboard, psycopg.Connection[Any], float | None]:
        """The management API, its connection, and the database clock read on it now. A
        connection that a restart broke is opened again, once: nothing was sent on it."""
        try:
            app, conn = self.operator()
            row = conn.execute(DB_CLOCK_SQL).fetchone()
        except psycopg.OperationalError:
            if self.operator_conn is not None:
                self.operator_conn.close()
            app, conn = self.operator()
            row = conn.execute(DB_CLOCK_SQL).fetchone()
        return app, conn, float(row[0]) if row else None

    def _call(self, kind: str, call: Callable[[Taskboard, Conn], Any], **fields: Any) -> bool:
        """Make one management call and record it as an `op`: the database clock read
        right before it was sent (sent_db) and right after its answer (confirmed_db), the
        wall clock around it, its answer. A call whose connection broke is recorded with
        its error: its outcome is unknown. False when it could not be made or answered."""
        try:
            app, conn, sent_db = self._clock()
        except psycopg.OperationalError as exc:
            self.history.write("op_skipped", kind=kind, why=str(exc)[:200], **fields)
            return False
        sent = time.time()
        try:
            answer = call(app, conn)
        except psycopg.OperationalError as exc:
            error = f"{type(exc).__name__}: {exc}"[:200]
            self.history.write(
                "op", kind=kind, sent=sent, sent_db=sent_db, answer=None, error=error, **fields
            )
            return False
        answered = time.time()
        try:
            row = conn.execute(DB_CLOCK_SQL).fetchone()
            confirmed_db = float(row[0]) if row else None
        except psycopg.OperationalError:
            confirmed_db = None  # committed, but not known when by the database's clock
        self.history.write(
            "op",
            kind=kind,
            sent=sent,
            sent_db=sent_db,
            answered=answered,
            confirmed_db=confirmed_db,
            answer=answer,
            **fields,
        )
        return True

    def operate(self, op: Operation, due: float) -> bool:
        """Make a planned operation; False to be asked again (a resume or limit change
        is sent again until the server answers it, for OPERATION_GIVE_UP_S)."""
        if op.kind == "retry":
            self._retry()
            return True
        must_happen = op.kind in ("resume", "limit")
        if self.restarting.is_set():
            if must_happen and time.time() < due + OPERATION_GIVE_UP_S:
                return False
            self.history.write("op_skipped", kind=op.kind, queue=op.queue, why="server restarting")
            return True
        if op.kind == "pause":
            done = self._call("pause", lambda app, c: app.pause(op.queue, conn=c), queue=op.queue)
            if done:
                self.paused.add(op.queue)
            return True
        if op.kind == "resume":
            done = self._call("resume", lambda app, c: app.resume(op.queue, conn=c), queue=op.queue)
            if done:
                self.paused.discard(op.queue)
        else:
            self.limited.add(op.queue)
            done = self._call(
                "limit",
                lambda app, c: app.set_queue_limit(op.queue, op.limit, conn=c),
                queue=op.queue,
                limit=op.limit,
            )
            if done and op.limit is None:
                self.limited.discard(op.queue)
        if not done and time.time() < due + OPERATION_GIVE_UP_S:
            time.sleep(OPERATION_RETRY_S)
            return False
        return True

    def free_queues(self) -> None:
        """Resume every queue a pause may have left paused and remove every limit that
        may be left, until the server answers: the drain must run free."""
        deadline = time.time() + OPERATION_GIVE_UP_S
        while (self.paused or self.limited) and time.time() < deadline:
            for queue in sorted(self.paused):
                if self._call("resume", lambda app, c, q=queue: app.resume(q, conn=c), queue=queue):
                    self.paused.discard(queue)
            for queue in sorted(self.limited):
                if self._call(
                    "limit",
                    lambda app, c, q=queue: app.set_queue_limit(q, None, conn=c),
                    queue=queue,
                    limit=None,
                ):
                    self.limited.discard(queue)
            if self.paused or self.limited:
                time.sleep(OPERATION_RETRY_S)

    def _pick(self, kind: str, states: tuple[str, ...]) -> tuple[int, str] | None:
        """A random job among the newest PICK_FROM in one of `states`, found with app.jobs."""
        try:
            app, conn, _ = self._clock()
            found = [
                (j.job_id, j.state)
                for s in states
                for j in app.jobs(state=s, limit=PICK_FROM, conn=conn)
            ]
        except psycopg.OperationalError as exc:
            self.history.write("op_skipped", kind=kind, why=str(exc)[:200])
            return None
        if not found:
            self.history.write("op_skipped", kind=kind, why=f"no {' or '.join(states)} job")
            return None
        return self.rng.choice(found)

    def _cancel(self, *, aimed: bool = False) -> None:
        """Cancel an unfinished job (app.cancel): most often a running one; `aimed`, one
        that others wait for when there is one."""
        if self.restarting.is_set():
            self.history.write("op_skipped", kind="cancel", why="server restarting")
            return
        if aimed:
            try:
                rows = self.admin().execute(DEPENDENCIES_SQL, [PICK_FROM]).fetchall()
            except psycopg.OperationalError:
                rows = []
            if rows:
                job, was = self.rng.choice(rows)
                self._call(
                    "cancel",
                    lambda app, c: app.cancel(job, conn=c),
                    job=int(job),
                    was=str(was),
                    aimed=True,
                )
                return
        want = "running" if self.rng.random() < 0.75 else "queued"
        picked = self._pick("cancel", (want,))
        if picked is not None:
            job = picked[0]
            self._call("cancel", lambda app, c: app.cancel(job, conn=c), job=job, was=want)

    def _retry(self) -> None:
        if self.restarting.is_set():
            self.history.write("op_skipped", kind="retry", why="server restarting")
            return
        picked = self._pick("retry", ("dead", "cancelled"))
        if picked is not None:
            job, was = picked
            self._call("retry", lambda app, c: app.retry(job, conn=c), job=job, was=was)

    def _restart(self, server: Server, fault: Fault) -> None:
        mode = fault.kind.removeprefix("restart-")
        self.history.write("fault_begin", kind=fault.kind, down_for=fault.duration)
        try:
            server.restart(mode, fault.duration)
            self.history.write("fault_end", kind=fault.kind, ok=True)
        except Exception as exc:  # noqa: BLE001 - reported, and the soak goes on
            self.history.write("fault_end", kind=fault.kind, ok=False, error=str(exc)[:500])
            print(f"soak: {fault.kind} failed: {exc}", flush=True)
            try:
                server.start()
            except Exception as again:  # noqa: BLE001
                print(f"soak: cannot start the server again: {again}", flush=True)
        finally:
            self.restarting.clear()

    def resume_due(self, *, all_now: bool = False) -> None:
        now = time.time()
        for proc in self.procs:
            if proc.stopped_until is not None and (all_now or now >= proc.stopped_until):
                if proc.running():
                    os.kill(proc.pid, signal.SIGCONT)
                    self.history.write("fault", kind="cont", target=proc.name, pid=proc.pid)
                proc.stopped_until = None

    # -- phases -------------------------------------------------------------------

    def limit_keys(self) -> None:
        """Set the keyed queue's limit per concurrency key (app.set_key_limit, as the admin
        role) before any
        job exists; recorded as an `op` (key_limit) that the check reads. It stays set
        through the drain."""
        if not self._call(
            "key_limit",
            lambda app, c: app.set_key_limit(KEYED_QUEUE, KEY_LIMIT, conn=c),
            queue=KEYED_QUEUE,
            limit=KEY_LIMIT,
        ):
            raise RuntimeError(f"could not set the key limit of {KEYED_QUEUE}")

    def limit_rates(self) -> None:
        """Set each rate limit of RATE_LIMITS (taskboard.set_rate_limit, as the admin role)
        before any job exists; each recorded as an `op` (rate_limit: queue, starts, per
        in seconds, by_key) that the check reads. They stay set through the drain."""
        for queue, starts, per, by_key in RATE_LIMITS:
            if not self._call(
                "rate_limit",
                lambda app, c, q=queue, n=starts, p=per, k=by_key: _set_rate_limit(c, q, n, p, k),
                queue=queue,
                starts=starts,
                per=per,
                by_key=by_key,
            ):
                raise RuntimeError(f"could not set the rate limit of {queue}")

    def run(self) -> None:
        cfg = self.config
        self.limit_keys()
        self.limit_rates()
        self.sampler.start(self)
        for slot in range(cfg.slots):
            self.spawn_worker(slot)
        time.sleep(WORKER_WARMUP_S)
        self.t0 = time.time() + PRODUCER_START_DELAY_S
        self.phase_end = self.t0 + cfg.seconds
        self.history.write("phase", name="faults", start=self.t0, end=self.phase_end)
        producers = [self.spawn_producer(i) for i in range(cfg.producers)]
        pending: list[Fault | Operation] = sorted(
            [*self.plan.faults, *self.plan.operations], key=lambda f: f.at
        )
        next_progress = self.t0 + PROGRESS_EVERY_S
        print(f"soak: fault phase {cfg.seconds:g} s, {len(pending)} faults planned", flush=True)
        while time.time() < self.phase_end or any(p.running() for p in producers):
            now = time.time()
            while pending and self.t0 + pending[0].at <= now:
                if not self.inject(pending[0], self.t0 + pending[0].at):
                    break
                pending.pop(0)
            self.resume_due()
            self.reap()
            self.respawn_due()
            if now >= next_progress:
                self.progress(now)
                next_progress += PROGRESS_EVERY_S
            time.sleep(TICK_S)
        for fault in pending:
            skipped = "op_skipped" if isinstance(fault, Operation) else "fault_skipped"
            self.history.write(skipped, kind=fault.kind, why="the fault phase ended")
        self.resume_due(all_now=True)
        if self.restart_thread is not None:
            self.restart_thread.join()
        self.free_queues()
        self.history.write("phase", name="drain", start=time.time())
        self.drain()
        self.stop_workers()
        self.sampler.stop()

    def progress(self, now: float) -> None:
        if self.restarting.is_set():
            print(f"soak: {now - self.t0:6.1f} s  (server restarting)", flush=True)
            return
        try:
            c = self.counts()
        except psycopg.OperationalError:
            print(f"soak: {now - self.t0:6.1f} s  (server unreachable)", flush=True)
            return
        done = c.get("succeeded", 0) + c.get("dead", 0) + c.get("cancelled", 0)
        try:
            row = (
                self.admin()
                .execute(
                    "SELECT count(*) FROM taskboard.jobs WHERE state = 'queued' AND run_at <= now()"
                )
                .fetchone()
            )
            backlog = int(row[0]) if row else 0
        except psycopg.OperationalError:
            backlog = -1
        if backlog >= 0:
            self.history.write("progress", at=now - self.t0, backlog=backlog, counts=c)
        print(
            f"soak: {now - self.t0:6.1f} s  jobs {sum(c.values())}: finished {done}, "
            f"queued {c.get('queued', 0)}, running {c.get('running', 0)}",
            flush=True,
        )

    def drain(self) -> None:
        """Wait, with no faults, until no job is queued, running or waiting (or the
        timeout): once every dependency has ended, a waiting job is one whose end the
        workers' claims have still to settle (an edge its dependency's end could not
        see)."""
        deadline = time.time() + self.config.drain_timeout
        next_progress = time.time() + PROGRESS_EVERY_S
        while True:
            self.reap()
            self.respawn_due()
            try:
                c = self.counts()
            except psycopg.OperationalError:
                c = {"queued": -1}
            unfinished = c.get("queued", 0) + c.get("running", 0) + c.get("waiting", 0)
            if unfinished == 0:
                self.drained_at = time.time()
                print(
                    f"soak: drained {self.drained_at - self.phase_end:.1f} s after the fault phase",
                    flush=True,
                )
                return
            if time.time() > deadline:
                self.stuck = unfinished
                print(
                    f"soak: {unfinished} job(s) still unfinished after the drain timeout",
                    flush=True,
                )
                return
            if time.time() >= next_progress:
                self.progress(time.time())
                next_progress += PROGRESS_EVERY_S
            time.sleep(0.2)

    def stop_workers(self) -> None:
        self.history.write("stopping")  # SIGTERM to every worker: they stop claiming
        for proc in self.procs:
            if proc.kind == "worker" and proc.running():
                proc.expected_exit = "stopped"
                os.kill(proc.pid, signal.SIGTERM)
        deadline = time.time() + STOP_WAIT_S
        for proc in self.procs:
            if proc.running():
                try:
                    proc.proc.wait(max(deadline - time.time(), 0.1))
                except subprocess.TimeoutExpired:
                    proc.expected_exit = "killed at the end (did not stop)"
                    proc.proc.kill()
                    proc.proc.wait()
        self.reap()

    def kill_all(self) -> None:
        for proc in self.procs:
            if proc.running():
                proc.proc.kill()
                proc.proc.wait()


def _set_rate_limit(conn: Conn, queue: str, starts: int, per: float, by_key: bool) -> bool:
    """taskboard.set_rate_limit on the admin's connection: true when it changed the limit."""
    row = conn.execute(
        "SELECT taskboard.set_rate_limit(queue => %s, starts => %s, per => %s, by_key => %s)",
        [queue, starts, dt.timedelta(seconds=per), by_key],
    ).fetchone()
    return bool(row[0]) if row else False


# -- setup ----------------------------------------------------------------------------


def deploy(url: str) -> None:
    argv = ["sqitch", "deploy", "--verify", devdb.sqitch_target(url)]
    result = subprocess.run(
        argv, cwd=project_root() / "db", capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        raise RuntimeError(f"sqitch deploy failed:\n{result.stdout}{result.stderr}")


def prepare(server_url: str, *, own: bool) -> Urls:
    """Recreate and deploy the soak's database on the server of `server_url`
    (`own`: the soak's own server, where its roles need no password)."""
    url = recreate_database(server_url, DATABASE)
    deploy(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(SETUP_SQL)
    if own:
        return Urls(
            admin=url,
            worker=conninfo.make_conninfo(url, user=WORKER_ROLE),
            producer=conninfo.make_conninfo(url, user=PRODUCER_ROLE),
            operator=conninfo.make_conninfo(url, user=OPERATOR_ROLE),
        )
    # An external server's login roles may need passwords we do not have:
    # everything runs as the URL's role there.
    return Urls(admin=url, worker=url, producer=url, operator=url)


def _env_number(name: str, kind: type[int | float]) -> Any:
    value = os.environ.get(name, "").strip()
    return kind(value) if value else None


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m soak", description=__doc__.split("\n\n")[0])
    parser.add_argument("--jobs", type=int, default=_env_number("SOAK_JOBS", int))
    parser.add_argument("--seconds", type=float, default=_env_number("SOAK_SECONDS", float))
    parser.add_argument("--workers", type=int, default=_env_number("SOAK_WORKERS", int))
    parser.add_argument("--seed", type=int, default=_env_number("SOAK_SEED", int))
    parser.add_argument(
        "--quick",
        action="store_true",
        default=os.environ.get("SOAK_QUICK", "").strip() not in ("", "0"),
        help="1,500 jobs, 20 s, 3 workers (under a minute in all)",
    )
    parser.add_argument(
        "--pg", choices=devdb.VERSIONS, default="18", help="own server's major version"
    )
    parser.add_argument(
        "--url",
        default=os.environ.get(devdb.DATABASE_URL_ENV) or None,
        help="use this server (no restarts) instead of an own one; default $TASKBOARD_DATABASE_URL",
    )
    parser.add_argument(
        "--own-server", action="store_true", help="ignore --url/$TASKBOARD_DATABASE_URL"
    )
    parser.add_argument(
        "--no-faults", action="store_true", help="a baseline: the same jobs with no fault injected"
    )
    parser.add_argument("--run-dir", type=Path, help="where history, logs and the report go")
    parser.add_argument("--report", type=Path, help="also write the report here")
    parser.add_argument(
        "--recheck",
        type=Path,
        metavar="RUN_DIR",
        help="check a finished run's history and final database again, from its files",
    )
    args = parser.parse_args(argv)
    if args.own_server:
        args.url = None
    return args


def make_config(args: argparse.Namespace) -> Config:
    quick = bool(args.quick)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1, 2**31)
    return Config(
        jobs=args.jobs or (QUICK_JOBS if quick else DEFAULT_JOBS),
        seconds=args.seconds or (QUICK_SECONDS if quick else DEFAULT_SECONDS),
        workers=args.workers or (QUICK_WORKERS if quick else DEFAULT_WORKERS),
        seed=seed,
        quick=quick,
    )


def finish(
    run_dir: Path,
    plan: Plan,
    final: dict[str, Any],
    server_own: bool,
    seconds: float | None,
    report_to: Path | None,
) -> int:
    """Check the invariants, print and save the report; the exit status."""
    result = check.run(
        config=plan.config,
        plan=plan,
        final=final,
        history_dir=run_dir / "history",
        server_own=server_own,
    )
    kind = "own, restarted by the soak" if server_own else "external: not restarted"
    text = report.render(
        result,
        config=plan.config,
        seed=plan.config.seed,
        total_seconds=seconds,
        server=f"PostgreSQL {result.server_version} ({kind})",
        run_dir=run_dir,
    )
    print(text, flush=True)
    (run_dir / "report.md").write_text(text)
    if report_to is not None:
        report_to.write_text(text)
    return EXIT_OK if result.ok else EXIT_VIOLATED


def recheck(run_dir: Path, report_to: Path | None) -> int:
    """Check a finished run again from its files (no server needed)."""
    final = json.loads((run_dir / "final.json").read_text())
    plan = Plan.load(run_dir / "plan.json")
    own = bool(final.get("server_own", True))
    return finish(run_dir, plan, final, own, final.get("elapsed"), report_to)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.recheck is not None:
        return recheck(args.recheck, args.report)
    config = make_config(args)
    if config.workers < 2 or config.jobs < 1 or config.seconds < 5:
        print("soak: needs at least 2 workers, 1 job and 5 seconds", file=sys.stderr)
        return EXIT_BROKEN
    run_dir = args.run_dir or Path(tempfile.mkdtemp(prefix=f"taskboard-soak-{config.seed}-"))
    for sub in ("history", "logs"):
        (run_dir / sub).mkdir(parents=True, exist_ok=True)
    again = (
        f"make soak SOAK_SEED={config.seed} SOAK_JOBS={config.jobs} SOAK_SECONDS={config.seconds:g}"
        f" SOAK_WORKERS={config.workers}" + (" SOAK_QUICK=1" if config.quick else "")
    )
    print(f"soak: seed {config.seed}  (again: {again})", flush=True)
    print(f"soak: history, logs and report in {run_dir}", flush=True)
    server: Server | None = None  # the own one, without --url
    started = time.time()
    soak: Soak | None = None
    try:
        try:
            if args.url is None:
                server = Server(
                    version=args.pg, settings=OWN_SERVER_SETTINGS, prefix=OWN_SERVER_PREFIX
                )
                urls = prepare(server.start(), own=True)
            else:
                urls = prepare(args.url, own=False)
        except Exception as exc:  # noqa: BLE001 - one line, then exit 2
            print(f"soak: cannot set up the database: {exc}", file=sys.stderr)
            return EXIT_BROKEN
        own = server is not None
        where = f"own PostgreSQL {args.pg} in {server.datadir}" if server else "the server at --url"
        print(f"soak: {where}, database {DATABASE} deployed with sqitch", flush=True)
        plan = make_plan(config, restarts=own, faults=not args.no_faults)
        plan.save(run_dir / "plan.json")
        soak = Soak(
            config,
            plan,
            server,
            urls,
            run_dir,
            History(run_dir / "history" / "runner.jsonl", process="runner"),
            random.Random(config.seed + 1),
        )
        soak.run()
        final = check.snapshot(urls.admin)
        (run_dir / "final.json").write_text(
            json.dumps({**final, "server_own": own, "elapsed": time.time() - started})
        )
        return finish(run_dir, plan, final, own, time.time() - started, args.report)
    finally:
        if soak is not None:
            soak.sampler.stop()
            soak.resume_due(all_now=True)
            soak.kill_all()
            if soak.admin_conn is not None:
                soak.admin_conn.close()
            if soak.operator_conn is not None:
                soak.operator_conn.close()
            if soak.operator_app is not None:
                soak.operator_app.close()
        if server is not None:
            if server.log_path.exists():
                (run_dir / "logs" / "server.log").write_bytes(server.log_path.read_bytes())
            server.remove()
        elif args.url is not None:
            with contextlib.suppress(psycopg.Error, ServerError):
                drop_database(args.url, DATABASE)
