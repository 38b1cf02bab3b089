"""Maya's story, live: two worker processes, a lease that runs out, a real SMTP server.

``python -m taskboard_dev.demo`` (also ``make demo``)
makes a fresh database taskboard_demo, installs the schema as `taskboard migrate` does,
starts an SMTP server on loopback as Maya's mail server and an HTTP object
store on loopback that checks fences, and tells the story of DESIGN.md
four times with real processes:

1. A's handler sends the email; then the demo freezes A (SIGSTOP) until its
   lease has expired in the database. B reclaims the job, sends and
   completes. Maya gets two emails: SMTP cannot be fenced.
2. The handler asks ``ctx.still_holder()`` right before sending. A, frozen
   before that question and thawed after B completed, does not send: one
   email.
3. A transactional handler writes a ledger row in ``ctx.conn``. A's row
   vanishes with its attempt; B's commits with its completion.
4. The handler writes Maya's welcome card to the object store with
   ``ctx.fence``. A, frozen before the write and thawed after B wrote with
   its higher fence and completed, is refused by the store itself.

Where taskboard_demo lives: on the dev PostgreSQL 18 (``.taskboard/``,
development's own server), it is dropped and created again on every run.
On the server TASKBOARD_DATABASE_URL names, a server the user configured,
the demo never drops a database it did not make: it creates
taskboard_demo there and marks it with a comment, and on a later run
drops and recreates only a taskboard_demo carrying that mark. When one
without the mark exists, the demo refuses (one line on stderr, exit 1)
and leaves it alone. ``--database-url`` tells the story in a database of
the user's choosing instead, never dropped (deployed into when it has no
taskboard schema).

``main()`` returns 0 when the story unfolded so, 1 otherwise. The workers
are this module too (``--role worker-a`` or ``worker-b``): their handlers
record what they do in a file the demo reads, and their logs go to files
the demo quotes. The demo reads each job's deadline from taskboard.jobs,
which takes the owner or a superuser (the dev server's ``postgres``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import email
import email.message
import functools
import json
import logging
import os
import re
import shutil
import signal
import smtplib
import socket
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from aiosmtpd.controller import Controller
from psycopg import sql
from psycopg.rows import dict_row

from taskboard import migrate
from taskboard.app import Taskboard
from taskboard.context import AsyncContext, SyncContext
from taskboard.errors import TaskboardError
from taskboard.settings import DEFAULT_DASHBOARD_HOST, DEFAULT_DASHBOARD_PORT, load_settings
from taskboard_dev import devdb
from taskboard_dev.harness import Journal, WorkerProcess, WorkerProcessError
from taskboard_dev.server import log_to_stderr

DEMO_DATABASE = "taskboard_demo"
# The comment that marks a database as the demo's own on a configured server:
# only a database carrying it is ever dropped there.
DEMO_MARK = "made by taskboard demo, which drops and recreates it on its next run"
LEASE_SECONDS = 3.0  # short, so that a frozen worker loses its job within seconds
RENEW_EVERY_SECONDS = 0.5
POLL_INTERVAL_SECONDS = 0.2
SHUTDOWN_GRACE_SECONDS = 2.0
WORKER_POOL_SIZE = 3  # the minimum: renewal, control and one handler slot
STEP_TIMEOUT_SECONDS = 60.0  # per step: a loaded machine may slow the story, not break it
STOP_TIMEOUT_SECONDS = 30.0  # for a worker to exit after SIGTERM
WATCH_EVERY_SECONDS = 0.05  # how often the demo looks for an event it waits for
SMTP_HOST = "127.0.0.1"
SMTP_TIMEOUT_SECONDS = 30
SMTP_READY_TIMEOUT_SECONDS = 30.0
SMTP_BIND_ATTEMPTS = 5
STORE_HOST = "127.0.0.1"  # loopback only, like the mail server
STORE_PATH = "/objects"
STORE_TIMEOUT_SECONDS = 30
EMAIL_QUEUE = "email"
BILLING_QUEUE = "billing"
CARDS_QUEUE = "cards"
CARD_TASK = "publish_welcome_card"
MAYA = "maya@example.com"
SENDER = "Taskboard demo <welcome@taskboard.example>"
WELCOME_CREDIT_CENTS = 500
CARD_KEY = f"welcome-cards/{MAYA}"
TOKEN_PREFIX_CHARS = 8
PR_SET_PDEATHSIG = 1  # prctl option (Linux)
WORKER_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
ROLES = {"worker-a": "worker-A", "worker-b": "worker-B"}
STALLING_ROLE = "worker-a"

LEDGER_TABLE = """
CREATE TABLE IF NOT EXISTS public.ledger (
    id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    job_id bigint NOT NULL,
    account text NOT NULL,
    amount_cents integer NOT NULL,
    written_by text NOT NULL,
    attempt integer NOT NULL,
    written_at timestamptz NOT NULL DEFAULT clock_timestamp()
)
"""
LEDGER_INSERT = """
INSERT INTO public.ledger (job_id, account, amount_cents, written_by, attempt)
VALUES (%s, %s, %s, %s, %s)
"""

T = TypeVar("T")


class StoryError(Exception):
    """The story did not unfold as it should; the message says where."""


class DemoRefused(Exception):
    """The demo will not touch the database it would use; the message says why."""


def short(token: object) -> str:
    return f"{str(token)[:TOKEN_PREFIX_CHARS]}…"


# -- the workers (``--role worker-a|worker-b``) -----------------------------------


def journal_path(workdir: Path, worker: str) -> Path:
    return workdir / f"{worker}.events"


def frozen_flag(workdir: Path, worker: str) -> Path:
    """Created by the demo once it has frozen `worker`: the stalled handler may go on."""
    return workdir / f"{worker}.frozen"


def build_app(
    database_url: str,
    *,
    worker: str,
    stall: bool,
    smtp_port: int,
    store_port: int,
    workdir: Path,
) -> Taskboard:
    """The app both workers run: two email tasks, a transactional ledger task, a store task.

    With `stall`, each handler stops at its stall point until the demo has
    frozen this process and created the frozen flag, so that the freeze
    lands exactly there.
    """
    settings = load_settings(
        database_url=database_url,
        pool_size=WORKER_POOL_SIZE,
        lease=LEASE_SECONDS,
        renew_every=RENEW_EVERY_SECONDS,
        poll_interval=POLL_INTERVAL_SECONDS,
        shutdown_grace=SHUTDOWN_GRACE_SECONDS,
        worker_name=worker,
        queues=[EMAIL_QUEUE, BILLING_QUEUE, CARDS_QUEUE],
        listen_url="",
    )
    app = Taskboard(settings)
    journal = Journal(journal_path(workdir, worker))
    flag = frozen_flag(workdir, worker)
    log = logging.getLogger(f"taskboard_dev.demo.{worker}")

    def note(event: str, ctx: SyncContext | AsyncContext, **details: Any) -> None:
        """Journal what a handler did, for the demo to read."""
        journal.write(
            {
                "worker": worker,
                "event": event,
                "job_id": ctx.job_id,
                "attempt": ctx.attempt,
                "token": str(ctx.token),
                "idempotency_key": str(ctx.idempotency_key),
                "fence": ctx.fence,
                **details,
            }
        )

    def send(ctx: SyncContext, payload: dict[str, Any]) -> None:
        message = email.message.EmailMessage()
        message["From"] = SENDER
        message["To"] = payload["to"]
        message["Subject"] = payload["subject"]
        # The same for every attempt of the job: a receiver that honours it can drop a repeat.
        message["Message-ID"] = f"<{ctx.idempotency_key}@example.com>"
        message["X-Taskboard-Job"] = str(ctx.job_id)
        message["X-Taskboard-Attempt"] = str(ctx.attempt)
        message["X-Taskboard-Worker"] = worker
        message.set_content(f"Welcome, Maya! (job {ctx.job_id}, attempt {ctx.attempt}, {worker})\n")
        with smtplib.SMTP(SMTP_HOST, smtp_port, timeout=SMTP_TIMEOUT_SECONDS) as smtp:
            smtp.send_message(message)
        note("sent", ctx)

    def store_write(ctx: SyncContext, key: str, value: Any) -> tuple[int, dict[str, Any]]:
        """POST {key, fence, value} to the object store; its HTTP status and answer."""
        request = urllib.request.Request(
            f"http://{STORE_HOST}:{store_port}{STORE_PATH}",
            data=json.dumps({"key": key, "fence": ctx.fence, "value": value}).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(request, timeout=STORE_TIMEOUT_SECONDS) as response:
                return response.status, json.loads(response.read())
        except urllib.error.HTTPError as refused:  # 409: a higher fence was seen; 400: malformed
            with refused:
                return refused.code, json.loads(refused.read())

    def stall_here(ctx: SyncContext) -> None:
        if stall:
            note("stall-point", ctx)
            while not flag.exists():
                time.sleep(WATCH_EVERY_SECONDS)
            note("thawed", ctx)

    @app.task("send_email", queue=EMAIL_QUEUE)
    def send_email(ctx: SyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        """Scenario 1: send, then (A) stall before the worker can complete."""
        note("claimed", ctx)
        send(ctx, payload)
        stall_here(ctx)
        note("returned", ctx)
        return {"sent_by": worker}

    @app.task("send_email_checked", queue=EMAIL_QUEUE)
    def send_email_checked(ctx: SyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        """Scenario 2: (A) stall, then ask the database right before sending."""
        note("claimed", ctx)
        stall_here(ctx)
        holder = ctx.still_holder()
        note("checked", ctx, holder=holder)
        if not holder:
            log.warning("job %s: not the holder any more: the email is not sent", ctx.job_id)
            note("returned", ctx)
            return {"sent_by": None}
        send(ctx, payload)
        note("returned", ctx)
        return {"sent_by": worker}

    @app.task("grant_welcome_credit", queue=BILLING_QUEUE, transactional=True)
    async def grant_welcome_credit(ctx: AsyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        """Scenario 3: write a ledger row in ctx.conn, then (A) stall before completing."""
        assert ctx.conn is not None  # transactional: the connection complete will run on
        note("claimed", ctx)
        await ctx.conn.execute(
            LEDGER_INSERT,
            [ctx.job_id, payload["account"], payload["amount_cents"], worker, ctx.attempt],
        )
        note("wrote", ctx)
        if stall:
            note("stall-point", ctx)
            while not flag.exists():
                await asyncio.sleep(WATCH_EVERY_SECONDS)
            note("thawed", ctx)
        note("returned", ctx)
        return {"credited_by": worker}

    @app.task(CARD_TASK, queue=CARDS_QUEUE)
    def publish_welcome_card(ctx: SyncContext, payload: dict[str, Any]) -> dict[str, Any]:
        """Scenario 4: (A) stall, then write the card to the object store with ctx.fence."""
        note("claimed", ctx)
        stall_here(ctx)
        card = {"text": "Welcome, Maya!", "written_by": worker, "attempt": ctx.attempt}
        status, answer = store_write(ctx, payload["key"], card)
        note("stored", ctx, status=status, answer=answer)
        note("returned", ctx)
        if not answer.get("accepted"):
            log.warning(
                "job %s: the store refused the write with fence %s: %s",
                ctx.job_id,
                ctx.fence,
                answer,
            )
            return {"stored_by": None}
        return {"stored_by": worker}

    return app


def die_with_parent(parent_pid: int) -> None:
    """Have the kernel kill this worker when the demo dies, even while it is frozen (Linux)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent_pid:
        os._exit(1)  # the demo is already gone


def run_worker_role(
    role: str, database_url: str, smtp_port: int, store_port: int, workdir: Path, parent: int
) -> int:
    die_with_parent(parent)
    worker = ROLES[role]
    logging.basicConfig(level=logging.INFO, format=WORKER_LOG_FORMAT, stream=sys.stderr)
    app = build_app(
        database_url,
        worker=worker,
        stall=role == STALLING_ROLE,
        smtp_port=smtp_port,
        store_port=store_port,
        workdir=workdir,
    )
    app.run_worker()
    return 0


# -- Maya's mail server --------------------------------------------------------


class Inbox:
    """An aiosmtpd handler that keeps every message it receives."""

    def __init__(self) -> None:
        self._messages: list[email.message.Message] = []
        self._lock = threading.Lock()

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        content = envelope.content
        raw = content if isinstance(content, bytes) else str(content).encode()
        with self._lock:
            self._messages.append(email.message_from_bytes(raw))
        return "250 Message accepted for delivery"

    def for_job(self, job_id: int) -> list[email.message.Message]:
        with self._lock:
            return [m for m in self._messages if m["X-Taskboard-Job"] == str(job_id)]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind((SMTP_HOST, 0))
        port: int = probe.getsockname()[1]
        return port


def start_mail_server(inbox: Inbox, stack: contextlib.ExitStack) -> int:
    """Start an SMTP server on a free loopback port (stopped by `stack`); return the port."""
    for attempt in range(1, SMTP_BIND_ATTEMPTS + 1):
        port = free_port()
        controller = Controller(
            inbox, hostname=SMTP_HOST, port=port, ready_timeout=SMTP_READY_TIMEOUT_SECONDS
        )
        try:
            controller.start()
        except OSError:  # someone took the port between the probe and the bind
            if attempt == SMTP_BIND_ATTEMPTS:
                raise
            continue
        stack.callback(controller.stop)
        return port
    raise AssertionError("unreachable")


# -- the object store that checks fences ------------------------------------------


class FencedStore:
    """An object store that compares-and-sets on the fence a writer presents.

    Per key it keeps the value of the accepted write with the highest fence.
    A write whose fence is lower than that is refused and changes nothing: a
    later claim of the job has written there (a key is one job's object,
    since fences count the claims of one job). A write with the same fence
    is accepted: the same claim sending its write again. The comparison and
    the write happen under one lock, so a lower fence never replaces a
    higher one, however the writes race.
    """

    def __init__(self) -> None:
        self._objects: dict[str, dict[str, Any]] = {}  # key -> {"fence": int, "value": ...}
        self._refused: dict[str, list[dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def put(self, key: str, fence: int, value: Any) -> dict[str, Any]:
        """Write `value` at `key` unless a higher fence was accepted there; return the answer."""
        with self._lock:
            current = self._objects.get(key)
            if current is not None and fence < current["fence"]:
                answer = {
                    "accepted": False,
                    "key": key,
                    "fence": fence,
                    "highest_fence": current["fence"],
                }
                self._refused.setdefault(key, []).append({**answer, "value": value})
                return answer
            self._objects[key] = {"fence": fence, "value": value}
            return {"accepted": True, "key": key, "fence": fence}

    def get(self, key: str) -> dict[str, Any] | None:
        """The object at `key`, {"fence", "value"}, or None."""
        with self._lock:
            current = self._objects.get(key)
            return None if current is None else dict(current)

    def refused(self, key: str) -> list[dict[str, Any]]:
        """The writes to `key` refused so far, oldest first."""
        with self._lock:
            return list(self._refused.get(key, []))


class StoreRequests(BaseHTTPRequestHandler):
    """POST /objects with a JSON body {key, fence, value}.

    200 and {"accepted": true, ...}: written. 409 and {"accepted": false,
    "highest_fence": ...}: refused, a higher fence was accepted for the key.
    400: the body is not such an object (a fence must be an integer).
    """

    def __init__(self, *args: Any, store: FencedStore, **kwargs: Any) -> None:
        self.store = store  # set first: the base class handles the request in __init__
        super().__init__(*args, **kwargs)

    def do_POST(self) -> None:
        if self.path != STORE_PATH:
            self.answer(404, {"error": f"no such path: {self.path}"})
            return
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            key, fence, value = body["key"], body["fence"], body["value"]
        except (ValueError, KeyError, TypeError) as exc:
            self.answer(400, {"error": f"expected a JSON object with key, fence and value: {exc}"})
            return
        if not isinstance(key, str) or not isinstance(fence, int) or isinstance(fence, bool):
            self.answer(400, {"error": "key must be a string and fence an integer"})
            return
        answer = self.store.put(key, fence, value)
        self.answer(200 if answer["accepted"] else 409, answer)

    def answer(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the demo tells what the store answered."""


def start_store(store: FencedStore, stack: contextlib.ExitStack) -> int:
    """Serve `store` over HTTP on a free loopback port (stopped by `stack`); return the port."""
    server = ThreadingHTTPServer((STORE_HOST, 0), functools.partial(StoreRequests, store=store))
    thread = threading.Thread(target=server.serve_forever, name="object-store", daemon=True)
    thread.start()
    stack.callback(server.server_close)
    stack.callback(server.shutdown)  # runs first: stop serving, then close the socket
    port: int = server.server_address[1]
    return port


# -- the database --------------------------------------------------------------


def prepare_database(database_url: str | None, *, name: str = DEMO_DATABASE) -> str:
    """The URL of a database with the taskboard schema and the ledger table.

    Without `database_url`, a fresh database `name` (see `fresh_database`)
    with the schema installed (`deploy`); with it, deploy only when its
    taskboard schema is missing.
    """
    if database_url is None:
        url = fresh_database(name)
        deploy(url)
    else:
        url = database_url
        with psycopg.connect(url, autocommit=True) as conn:
            present = conn.execute("SELECT to_regprocedure('taskboard.version()') IS NOT NULL")
            row = present.fetchone()
        if not (row and row[0]):
            deploy(url)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(LEDGER_TABLE)
    return url


def fresh_database(name: str) -> str:
    """Create database `name` afresh, empty, and return its URL.

    On the dev PostgreSQL 18, drop it first if it exists. On the server
    TASKBOARD_DATABASE_URL names, drop it only when it carries DEMO_MARK
    (the demo made it), and mark the new one; DemoRefused when `name`
    exists there without the mark.
    """
    configured = os.environ.get(devdb.DATABASE_URL_ENV)
    if not configured:
        try:
            return devdb.recreate_database(name, devdb.DEFAULT_VERSION, pgtap=False)
        except devdb.ServerError as exc:
            raise StoryError(str(exc)) from None
    ident = sql.Identifier(name)
    with psycopg.connect(configured, autocommit=True) as conn:
        row = conn.execute(
            "SELECT shobj_description(oid, 'pg_database') FROM pg_database WHERE datname = %s",
            [name],
        ).fetchone()
        if row is not None:
            if row[0] != DEMO_MARK:
                raise DemoRefused(
                    f"database {name} already exists on the server {devdb.DATABASE_URL_ENV} "
                    "names and the demo did not make it: left alone (drop it yourself, "
                    "or tell the story elsewhere with --database-url)"
                )
            conn.execute(sql.SQL("DROP DATABASE {} WITH (FORCE)").format(ident))
        conn.execute(sql.SQL("CREATE DATABASE {}").format(ident))
        conn.execute(sql.SQL("COMMENT ON DATABASE {} IS {}").format(ident, sql.Literal(DEMO_MARK)))
    return devdb.database_url(configured, name)


def deploy(url: str) -> None:
    """Install the schema as `taskboard migrate` does: through Sqitch when it is on
    PATH, else from the SQL the package carries, in one transaction."""
    try:
        migrate.deploy(url, {})
    except TaskboardError as exc:
        raise StoryError(str(exc)) from None


# -- the demo's view of a worker process ----------------------------------------


def first(worker: WorkerProcess, job_id: int, event: str) -> dict[str, Any] | None:
    """The first journal record of `event` for the job, or None."""
    assert worker.journal is not None  # every demo worker has one
    return worker.journal.first(job_id=job_id, event=event)


def fence_of(claim: dict[str, Any]) -> str:
    """The text ', fence N' for a claim record that has a fence (schema 0.3.0 on), else ''."""
    return "" if claim.get("fence") is None else f", fence {claim['fence']}"


# -- the story -----------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """One telling of the story: the task A and B run, and how to say what happened."""

    number: int
    title: str
    task: str
    queue: str
    payload: dict[str, Any]
    what: str  # the job, in words
    b_did: str  # what B's handler did, in words
    a_undone: str = ""  # what else A's giving up undoes, in words
    stalls_before: str = ""  # what A's handler has yet to do when it is frozen, in words


@dataclass
class Story:
    """Tells the scenarios in one database, one mail server and one store, numbering the steps."""

    url: str
    smtp_port: int
    mail: Inbox
    store_port: int
    store: FencedStore
    conn: psycopg.Connection[dict[str, Any]]
    workdir: Path
    stack: contextlib.ExitStack
    step_no: int = 0
    outcomes: list[str] = field(default_factory=list)

    def step(self, text: str) -> None:
        self.step_no += 1
        print(f"{self.step_no:2d}. {text}", flush=True)

    # -- helpers -------------------------------------------------------------

    def wait(
        self, what: str, probe: Callable[[], T | None], watched: Sequence[WorkerProcess] = ()
    ) -> T:
        """Poll `probe` until it returns something other than None; StoryError after the timeout."""
        deadline = time.monotonic() + STEP_TIMEOUT_SECONDS
        while True:
            found = probe()
            if found is not None:
                return found
            for worker in watched:
                worker.check_alive()
            if time.monotonic() > deadline:
                tails = "\n".join(w.log_tail() for w in watched)
                raise StoryError(f"waited {STEP_TIMEOUT_SECONDS:g}s for {what}\n{tails}".rstrip())
            time.sleep(WATCH_EVERY_SECONDS)

    def start_worker(self, role: str, round_dir: Path) -> WorkerProcess:
        name = ROLES[role]
        worker = WorkerProcess.start(
            name,
            [
                sys.executable,
                "-m",
                "taskboard_dev.demo",
                "--role",
                role,
                "--database-url",
                self.url,
                "--smtp-port",
                str(self.smtp_port),
                "--store-port",
                str(self.store_port),
                "--dir",
                str(round_dir),
                "--parent-pid",
                str(os.getpid()),
            ],
            log_path=round_dir / f"{name}.log",
            journal=Journal(journal_path(round_dir, name)),
        )
        self.stack.callback(worker.kill, STOP_TIMEOUT_SECONDS)
        return worker

    def get_job(self, job_id: int) -> dict[str, Any]:
        row = self.conn.execute(
            "SELECT state, attempt, result FROM taskboard.get_job(job_id => %s)", [job_id]
        ).fetchone()
        if row is None:
            raise StoryError(f"get_job({job_id}) returned no row")
        return row

    def lease_expired(self, job_id: int) -> bool | None:
        row = self.conn.execute(
            "SELECT lease_expires_at < clock_timestamp() AS expired"
            "  FROM taskboard.jobs WHERE id = %s",
            [job_id],
        ).fetchone()
        return True if row and row["expired"] else None

    def stale_answers(self, job_id: int, token: str) -> tuple[bool, str]:
        """What the database answers to A's token now: complete (a no-op) and lease_state."""
        row = self.conn.execute(
            "SELECT taskboard.complete(job_id => %(id)s, token => %(token)s) AS completed,"
            " taskboard.lease_state(job_id => %(id)s, token => %(token)s) AS lease_state",
            {"id": job_id, "token": token},
        ).fetchone()
        assert row is not None
        return bool(row["completed"]), str(row["lease_state"])

    def a_gave_up(self, a: WorkerProcess, job_id: int) -> tuple[str, str] | None:
        """A's log line saying it gave the job up, or that its completion was refused."""
        for kind, pattern in (
            ("lost", rf"lost job {job_id} \(attempt 1\): .*"),
            ("refused", rf"complete of job {job_id} \(attempt 1\) refused.*"),
        ):
            found = re.search(pattern, a.log())
            if found:
                return kind, found.group(0)
        return None

    # -- one scenario --------------------------------------------------------

    def scenario(self, scene: Scenario) -> int:
        """Freeze A at its stall point past its lease, let B reclaim, thaw A; return the job id."""
        print(f"\nScenario {scene.number}: {scene.title}", flush=True)
        round_dir = self.workdir / f"scenario{scene.number}"
        round_dir.mkdir()
        producer = Taskboard(load_settings(database_url=self.url))
        try:
            job_id = producer.enqueue(scene.task, scene.payload, queue=scene.queue)
        finally:
            producer.close()
        self.step(f"Enqueued job {job_id}: {scene.task}, {scene.what}.")

        a = self.start_worker("worker-a", round_dir)
        claim = self.wait("A to claim the job", lambda: first(a, job_id, "claimed"), [a])
        a_token = str(claim["token"])
        self.step(
            f"Worker A (pid {a.pid}) claimed job {job_id}: attempt {claim['attempt']}, "
            f"token {short(a_token)}{fence_of(claim)}, lease {LEASE_SECONDS:g}s renewed every "
            f"{RENEW_EVERY_SECONDS:g}s."
        )
        if claim["attempt"] != 1:
            raise StoryError(f"A claimed attempt {claim['attempt']}, not 1")
        if scene.task == CARD_TASK and claim["fence"] is None:
            raise StoryError(
                f"claim handed out no fence: scenario {scene.number} needs taskboard schema 0.3.0"
            )

        def stall_point() -> dict[str, Any] | None:
            if self.a_gave_up(a, job_id) is not None:
                raise StoryError(
                    f"A gave job {job_id} up before the demo froze it (an overloaded machine?):\n"
                    f"{a.log_tail()}"
                )
            return first(a, job_id, "stall-point")

        self.wait("A's handler to reach its stall point", stall_point, [a])
        a.freeze(STEP_TIMEOUT_SECONDS)
        frozen_at = time.monotonic()
        frozen_flag(round_dir, a.name).touch()  # A's handler goes on once A is thawed
        if first(a, job_id, "sent"):
            self.step("A's handler sent the email. SIGSTOP: A is frozen before completing.")
        elif first(a, job_id, "wrote"):
            self.step(
                "A's handler wrote a ledger row in ctx.conn, uncommitted. "
                "SIGSTOP: A is frozen before completing."
            )
        else:
            self.step(f"A's handler started. SIGSTOP: A is frozen before {scene.stalls_before}.")

        self.wait("A's lease to expire", lambda: self.lease_expired(job_id))
        self.step(
            f"A's lease expired in the database {time.monotonic() - frozen_at:.1f}s later: "
            "lease_expires_at < clock_timestamp()."
        )

        b = self.start_worker("worker-b", round_dir)
        b_claim = self.wait("B to reclaim the job", lambda: first(b, job_id, "claimed"), [b])
        self.step(
            f"Worker B (pid {b.pid}) reclaimed job {job_id}: attempt {b_claim['attempt']}, "
            f"token {short(b_claim['token'])}{fence_of(b_claim)}."
        )
        if b_claim["attempt"] != 2:
            raise StoryError(f"B claimed attempt {b_claim['attempt']}, not 2")
        if None not in (claim["fence"], b_claim["fence"]) and b_claim["fence"] <= claim["fence"]:
            raise StoryError(f"B's fence {b_claim['fence']} is not above A's {claim['fence']}")
        if b_claim["idempotency_key"] != claim["idempotency_key"]:
            raise StoryError("B's ctx.idempotency_key differs from A's")
        done = self.wait("B to complete the job", lambda: self.finished(job_id), [b])
        if done["state"] != "succeeded" or done["attempt"] != 2:
            raise StoryError(
                f"after B, job {job_id} is {done['state']} on attempt {done['attempt']}"
            )
        self.step(scene.b_did)

        a.thaw()
        kind, line = self.wait("A to give the job up", lambda: self.a_gave_up(a, job_id), [a])
        if scene.task == "send_email_checked":
            checked = self.wait("A's ctx.still_holder()", lambda: first(a, job_id, "checked"), [a])
            if checked["holder"]:
                raise StoryError("A's ctx.still_holder() said true after B had reclaimed the job")
            self.step(
                "SIGCONT: A resumes. Its handler asks ctx.still_holder(): false. It does not send."
            )
            self.step(f"A's log: {line}")
        elif scene.task == CARD_TASK:
            stored = self.wait("A's write to the store", lambda: first(a, job_id, "stored"), [a])
            self.step(
                f"SIGCONT: A resumes. Its handler writes the card with fence {stored['fence']}; "
                f"the store answers {stored['status']} {json.dumps(stored['answer'])}."
            )
            if stored["answer"].get("accepted"):
                raise StoryError(f"the store accepted A's write with fence {stored['fence']}")
            self.step(f"A's log: {line}")
        elif kind == "lost":
            self.step(
                f"SIGCONT: A resumes and gives the job up uncompleted{scene.a_undone}. "
                f"A's log:\n      {line}"
            )
        else:
            self.step(
                f"SIGCONT: A resumes and tries to complete{scene.a_undone}. A's log:\n      {line}"
            )
        completed, state = self.stale_answers(job_id, a_token)
        if completed or state != "lost":
            raise StoryError(f"A's token still counts: complete={completed}, lease_state={state}")
        self.step(
            f"The fence: complete(job {job_id}, A's token {short(a_token)}) returns false; "
            f"lease_state says {state}."
        )

        a_counts = a.terminate(STOP_TIMEOUT_SECONDS)
        b_counts = b.terminate(STOP_TIMEOUT_SECONDS)
        if a_counts.get("succeeded") != 0 or b_counts.get("succeeded") != 1:
            raise StoryError(f"worker counts: A {a_counts}; B {b_counts}")
        job = self.get_job(job_id)
        if job["state"] != "succeeded" or job["attempt"] != 2:
            raise StoryError(f"job {job_id} ended {job['state']} on attempt {job['attempt']}")
        self.step(
            f"get_job({job_id}): {job['state']}, attempt {job['attempt']}, result "
            f"{json.dumps(job['result'])}."
        )
        return job_id

    def finished(self, job_id: int) -> dict[str, Any] | None:
        job = self.get_job(job_id)
        return None if job["state"] == "running" else job

    def inbox(self, job_id: int, expected: int) -> str:
        """Show Maya's messages for the job; StoryError unless there are `expected`."""
        messages = self.mail.for_job(job_id)
        got = f"{len(messages)} message{'' if len(messages) == 1 else 's'}"
        senders = " and ".join(
            f"{m['X-Taskboard-Worker']} (attempt {m['X-Taskboard-Attempt']})" for m in messages
        )
        ids = " ".join(sorted({str(m["Message-ID"]) for m in messages}))
        self.step(f"Maya's inbox for job {job_id}: {got}, from {senders or 'nobody'}.")
        if messages:
            both = " on both" if len(messages) > 1 else ""
            print(f"      Message-ID{both}: {ids} (ctx.idempotency_key)", flush=True)
        if len(messages) != expected:
            raise StoryError(f"Maya has {got} for job {job_id}, not {expected}")
        return got

    def ledger(self, job_id: int) -> list[dict[str, Any]]:
        rows = self.conn.execute(
            "SELECT account, amount_cents, written_by, attempt FROM public.ledger"
            " WHERE job_id = %s ORDER BY id",
            [job_id],
        ).fetchall()
        self.step(f"public.ledger for job {job_id}: {len(rows)} row{'' if len(rows) == 1 else 's'}")
        print("      account          | amount_cents | written_by | attempt", flush=True)
        for r in rows:
            print(
                f"      {r['account']:<16} | {r['amount_cents']:>12} | {r['written_by']:<10} |"
                f" {r['attempt']:>7}",
                flush=True,
            )
        return rows

    def tell(self) -> None:
        self.step(f"Maya's mail server (aiosmtpd) listens on {SMTP_HOST}:{self.smtp_port}.")
        self.step(
            f"An object store (HTTP) listens on {STORE_HOST}:{self.store_port}: per key, it refuses "
            "a write whose fence is lower than the highest it has accepted."
        )
        welcome = {"to": MAYA, "subject": "Welcome to Taskboard, Maya"}
        job = self.scenario(
            Scenario(
                1,
                "A sends the email, then stalls before it can complete.",
                "send_email",
                EMAIL_QUEUE,
                welcome,
                f"an email to {MAYA}",
                "B sent the email and completed: complete returned true.",
            )
        )
        got = self.inbox(job, 2)
        self.outcomes.append(f"Scenario 1 (send, then stall): Maya got {got}: SMTP cannot un-send.")

        job = self.scenario(
            Scenario(
                2,
                "the handler asks ctx.still_holder() right before sending.",
                "send_email_checked",
                EMAIL_QUEUE,
                welcome,
                f"an email to {MAYA}",
                "B's ctx.still_holder() said true: it sent the email and completed: "
                "complete returned true.",
                stalls_before="it asks ctx.still_holder()",
            )
        )
        got = self.inbox(job, 1)
        self.outcomes.append(
            f"Scenario 2 (ctx.still_holder() before sending): Maya got {got}: A did not send."
        )

        job = self.scenario(
            Scenario(
                3,
                "a transactional task writes a ledger row in ctx.conn.",
                "grant_welcome_credit",
                BILLING_QUEUE,
                {"account": MAYA, "amount_cents": WELCOME_CREDIT_CENTS},
                f"{WELCOME_CREDIT_CENTS} cents to {MAYA}",
                "B wrote its ledger row in ctx.conn and completed in that transaction "
                "(complete returned true).",
                a_undone="; its transaction rolls back",
            )
        )
        rows = self.ledger(job)
        if len(rows) != 1 or rows[0]["written_by"] != ROLES["worker-b"]:
            raise StoryError(f"the ledger should hold B's row alone, not {rows}")
        self.outcomes.append(
            "Scenario 3 (transactional): the ledger holds 1 row, worker-B's: A's row vanished."
        )

        job = self.scenario(
            Scenario(
                4,
                "an object store that compares-and-sets refuses A's write by its fence.",
                CARD_TASK,
                CARDS_QUEUE,
                {"key": CARD_KEY},
                f"Maya's welcome card at {CARD_KEY} in the object store",
                "B wrote the card with its fence (the store accepted it) and completed: "
                "complete returned true.",
                stalls_before="it writes the card to the store",
            )
        )
        card, refused = self.stored_card(job)
        self.outcomes.append(
            f"Scenario 4 (fenced store): the store holds {card['value']['written_by']}'s card, "
            f"fence {card['fence']}; it refused {refused[0]['value']['written_by']}'s write, "
            f"fence {refused[0]['fence']}."
        )

    def stored_card(self, job_id: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Show the store's card and refusals; StoryError unless B's write stands and A's fell.

        B's write must be there with the job's fence now in the database (the
        last claim's), and A's, with a lower fence, refused.
        """
        row = self.conn.execute(
            "SELECT fence FROM taskboard.jobs WHERE id = %s", [job_id]
        ).fetchone()
        job_fence = None if row is None else row["fence"]
        card, refused = self.store.get(CARD_KEY), self.store.refused(CARD_KEY)
        if card is None:
            raise StoryError(f"the store holds nothing at {CARD_KEY}")
        writes = ", ".join(f"fence {r['fence']} from {r['value']['written_by']}" for r in refused)
        self.step(
            f"The store's {CARD_KEY}: fence {card['fence']}, written by "
            f"{card['value']['written_by']} (attempt {card['value']['attempt']}); "
            f"it refused: {writes or 'nothing'}."
        )
        if card["value"]["written_by"] != ROLES["worker-b"] or card["fence"] != job_fence:
            raise StoryError(
                f"the store should hold worker-B's card with fence {job_fence}, not {card}"
            )
        if len(refused) != 1 or refused[0]["value"]["written_by"] != ROLES["worker-a"]:
            raise StoryError(f"the store should have refused worker-A's write alone, not {refused}")
        if refused[0]["fence"] >= card["fence"]:
            raise StoryError(f"the store refused fence {refused[0]['fence']}, not a lower one")
        return card, refused


CLOSING = """\
What the fence promises: the database state is fenced. Once B reclaimed a job, A's token
changes nothing (complete returns false), and what a handler writes in the transaction that
completes the job commits only if complete returns true: A's ledger row vanished (scenario 3).
What it cannot fence: SMTP. An email handed over stays sent, so Maya got two (scenario 1).
ctx.still_holder() right before the effect narrows that window (scenario 2) but cannot close
it: a worker can stall between the check and the send. ctx.idempotency_key, the same on every
attempt (the Message-ID above), lets a receiver that honours it drop a repeat.
Past the database, the fence reaches only a store that checks it: ctx.fence grows with every
claim, and a store that compares-and-sets refuses a write whose fence is lower than one it has
accepted, so A's late write was refused by the store itself (scenario 4). Taskboard runs a job
at least once; it never promises exactly-once external effects."""


DASHBOARD_URL = f"http://{DEFAULT_DASHBOARD_HOST}:{DEFAULT_DASHBOARD_PORT}/"


def tell(database_url: str | None) -> int:
    """Tell the story; 0 when it unfolded as it should."""
    started = time.monotonic()
    log_to_stderr()  # the dev server's progress (initdb, start), when it starts one
    print("Taskboard demo: Maya's welcome email, two worker processes, one lease.", flush=True)
    workdir: Path | None = None
    try:
        with contextlib.ExitStack() as stack:
            url = prepare_database(database_url)
            conn = stack.enter_context(psycopg.connect(url, autocommit=True, row_factory=dict_row))
            version = conn.execute("SELECT taskboard.version() AS v").fetchone()
            print(
                f"Database: {url} (taskboard schema {version['v'] if version else '?'})", flush=True
            )
            workdir = Path(tempfile.mkdtemp(prefix="taskboard-demo-"))
            inbox = Inbox()
            port = start_mail_server(inbox, stack)
            store = FencedStore()
            store_port = start_store(store, stack)
            story = Story(url, port, inbox, store_port, store, conn, workdir, stack)
            story.tell()
    except DemoRefused as exc:
        print(f"demo: {exc}", file=sys.stderr, flush=True)
        return 1
    except (StoryError, WorkerProcessError) as exc:
        print(f"\nThe story did not unfold as it should: {exc}", flush=True)
        if workdir is not None:
            print(f"The workers' logs and journals are in {workdir}", flush=True)
        return 1
    except KeyboardInterrupt:
        print("\nInterrupted: the workers are stopped.", flush=True)
        if workdir is not None:
            shutil.rmtree(workdir, ignore_errors=True)
        return 130
    except (psycopg.Error, TaskboardError, OSError) as exc:
        print(f"\nThe demo failed: {type(exc).__name__}: {exc}", flush=True)
        if workdir is not None:
            print(f"The workers' logs and journals are in {workdir}", flush=True)
        return 1
    shutil.rmtree(workdir, ignore_errors=True)
    print("\nOutcomes:")
    for outcome in story.outcomes:
        print(f"  {outcome}")
    print(f"\n{CLOSING}")
    print(f"\nDone in {time.monotonic() - started:.1f}s. Look around: psql '{url}'", flush=True)
    print(
        f"See it on the dashboard: `make dashboard` (or TASKBOARD_DATABASE_URL='{url}' "
        f"taskboard dashboard), then open {DASHBOARD_URL}",
        flush=True,
    )
    return 0


def main() -> int:
    """Tell Maya's story in database taskboard_demo; return 0 when it unfolded as it should."""
    return tell(None)


def command_line(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m taskboard_dev.demo",
        description="Tell Maya's story live: a worker stalled past its lease, a second worker "
        "that reclaims the job, and what the token fence does and does not prevent.",
    )
    parser.add_argument(
        "--database-url",
        metavar="URL",
        help="tell it in this database (deployed if it has no taskboard schema) "
        f"instead of recreating {DEMO_DATABASE}",
    )
    parser.add_argument("--role", choices=sorted(ROLES), help=argparse.SUPPRESS)
    parser.add_argument("--smtp-port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--store-port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--parent-pid", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.role is not None:
        needed = (args.database_url, args.smtp_port, args.store_port, args.dir, args.parent_pid)
        if None in needed:
            parser.error(
                "--role needs --database-url, --smtp-port, --store-port, --dir and --parent-pid"
            )
        return run_worker_role(
            args.role, args.database_url, args.smtp_port, args.store_port, args.dir, args.parent_pid
        )
    return tell(args.database_url)


if __name__ == "__main__":
    sys.exit(command_line(sys.argv[1:]))
