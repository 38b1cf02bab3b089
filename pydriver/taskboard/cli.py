"""The ``taskboard`` command.

Commands: ``migrate`` (Sqitch on the project shipped as taskboard/db),
``sql`` (the install or upgrade as one plain script), ``worker MODULE:APP``,
``enqueue TASK [JSON]``, ``status``, ``pause QUEUE``, ``resume QUEUE``,
``limit QUEUE N|none``, ``key-limit QUEUE N|none``,
``rate-limit QUEUE N/PER|none``, ``jobs``, ``job ID``, ``cancel ID...``,
``retry ID...``, ``prune --older-than DURATION``, ``schedules``,
``metrics`` (the queue exporter) and ``dashboard``.
A command's options and arguments may come in any order. Settings come from
TASKBOARD_* variables. An expected failure, a usage error included, is one
line on stderr, ``taskboard: error: ...``; exit status 0 ok, 1 runtime
error, 2 usage error. Output to a pipe whose reader has gone (``| head``)
ends quietly with status 1.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import datetime as dt
import importlib
import json
import logging
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import psycopg
from psycopg import conninfo

from taskboard import __version__, install, logs, metrics, migrate, runner, sql
from taskboard.app import Taskboard
from taskboard.calls import ADMIN_ROLE, PRODUCER_ROLE
from taskboard.errors import (
    ConfigError,
    InvalidArgument,
    PermissionDenied,
    TaskboardError,
    missing_role,
    one_line,
    translate,
)
from taskboard.periodic import Schedule
from taskboard.runner import EXIT_AT_ONCE
from taskboard.settings import Settings, load_settings, with_overrides

log = logging.getLogger(__name__)

PROG = "taskboard"
EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_USAGE = 2
LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
NO_SCHEMA = "the database has no taskboard schema: run `taskboard migrate` first"
INT4_MIN, INT4_MAX = -(2**31), 2**31 - 1  # PostgreSQL integer: priority, max_attempts
MAX_PROCESSES = 256  # worker processes under one `taskboard worker --processes N`
T = TypeVar("T")


@dataclass(frozen=True)
class Needs:
    """What a command needs of the login it runs as.

    `role` is the least Taskboard role that may run it, as the SQL grants
    decide (each role of errors.ROLE_KINDS may do what the ones before it
    may); None for a command that needs none. `note` says more, or what it
    needs instead.
    """

    role: str | None
    note: str = ""

    def __str__(self) -> str:
        role = f"role: {self.role}" if self.role else ""
        return "; ".join(part for part in (role, self.note) if part)


# Each command's needs: its --help says them, and a login the database
# refuses is told the GRANT of this role (see refused).
COMMAND_NEEDS: dict[str, Needs] = {
    "migrate": Needs(None, "a superuser, or a login with CREATEROLE and CREATE on the database"),
    "sql": Needs(None, "no database"),
    "worker": Needs("worker"),
    "enqueue": Needs("producer"),
    "status": Needs("producer"),
    "pause": Needs("admin"),
    "resume": Needs("admin"),
    "limit": Needs("admin"),
    "key-limit": Needs("admin"),
    "rate-limit": Needs("admin"),
    "jobs": Needs("producer"),
    "job": Needs("producer"),
    "cancel": Needs("admin"),
    "retry": Needs("admin"),
    "prune": Needs("admin"),
    "schedules": Needs("producer", "admin for --prune-missing"),
    "metrics": Needs("producer"),
    "dashboard": Needs("producer", "admin for its actions"),
}
ROLES_EPILOG = (
    "[role: R] is the least Taskboard role a command's login needs: a worker may do what "
    "a producer may, an admin what a worker may. A command the database refuses names "
    "the GRANT that lets it run."
)


class CliError(Exception):
    """An expected failure: one line for stderr and the exit status."""

    def __init__(self, message: str, status: int = EXIT_RUNTIME) -> None:
        super().__init__(message)
        self.status = status


# -- helpers -------------------------------------------------------------------


def check_log_format() -> str:
    """TASKBOARD_LOG_FORMAT, checked for every command; CliError (usage) naming the
    formats when it is none of them."""
    try:
        return logs.log_format()
    except ValueError as exc:
        raise CliError(str(exc), EXIT_USAGE) from None


def configure_logging(level: str) -> None:
    """Log to stderr at `level`, as text or JSON (TASKBOARD_LOG_FORMAT)."""
    logs.configure(level, check_log_format())


@contextlib.contextmanager
def connect(settings: Settings) -> Iterator[psycopg.Connection[Any]]:
    """An autocommit connection to a database holding a taskboard schema this driver
    supports.

    Raises CliError when the schema is missing, SchemaVersionError when this driver
    does not support its version, PermissionDenied when the login may not see it.
    """
    with psycopg.connect(
        settings.database_url, **settings.connection_options(application_name=f"{PROG} cli")
    ) as conn:
        with translate(role_needed=PRODUCER_ROLE):
            present = sql.schema_present(conn)
            if not present:
                raise CliError(NO_SCHEMA)
            sql.read_schema(conn)
        yield conn


def confirm(question: str) -> bool:
    """Ask `question` on the terminal; True only for yes. Refuses without a terminal."""
    if not sys.stdin.isatty():
        raise CliError("no terminal to confirm on: pass --yes", EXIT_USAGE)
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def parse_spec(spec: str) -> tuple[str, str]:
    """MODULE:APP as (module, attribute path); CliError (usage) when malformed."""
    module, sep, attr = spec.partition(":")
    names = [*module.split("."), *attr.split(".")]
    if not sep or not all(name.isidentifier() for name in names):
        raise CliError(f"{spec!r} is not MODULE:APP (e.g. myproject.tasks:app)", EXIT_USAGE)
    return module, attr


def load_app(spec: str) -> Taskboard:
    """Import MODULE (the current directory included) and return its Taskboard APP."""
    module_name, attr = parse_spec(spec)
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        obj: Any = importlib.import_module(module_name)
    except ImportError as exc:
        raise CliError(f"cannot import {module_name}: {one_line(str(exc))}", EXIT_USAGE) from None
    for name in attr.split("."):
        if not hasattr(obj, name):
            raise CliError(f"{module_name} has no attribute {attr!r}", EXIT_USAGE)
        obj = getattr(obj, name)
    if not isinstance(obj, Taskboard):
        raise CliError(
            f"{spec} is a {type(obj).__name__}, not a taskboard.app.Taskboard", EXIT_USAGE
        )
    return obj


def parse_payload(text: str | None) -> Any:
    if text is None:
        return {}
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CliError(f"the payload is not valid JSON: {exc}", EXIT_USAGE) from None


def parse_run_at(text: str | None) -> dt.datetime | None:
    """An ISO-8601 time; one without an offset is local time."""
    if text is None:
        return None
    try:
        value = dt.datetime.fromisoformat(text)
    except ValueError:
        raise CliError(
            f"--run-at: {text!r} is not an ISO-8601 time (e.g. 2026-12-02T13:00:00+01:00)",
            EXIT_USAGE,
        ) from None
    if value.tzinfo is not None:
        return value
    try:
        return value.astimezone()
    except (ValueError, OverflowError):
        raise CliError(
            f"--run-at: {text!r} is out of range in local time: give a time in the years "
            "1 to 9999, or one with its offset (e.g. 0001-01-01T00:00:00+00:00)",
            EXIT_USAGE,
        ) from None


def format_table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: set[int]) -> str:
    """Columns padded to their widest cell; `numeric` columns right-aligned."""
    widths = [max(len(row[i]) for row in [header, *rows]) for i in range(len(header))]

    def line(row: Sequence[str]) -> str:
        cells = (
            cell.rjust(width) if i in numeric else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(row, widths, strict=True))
        )
        return "  ".join(cells).rstrip()

    return "\n".join(line(row) for row in [header, *rows])


# -- commands ------------------------------------------------------------------


def cmd_migrate(args: argparse.Namespace) -> int:
    settings = load_settings()
    # A URL naming a primary and its standbys: the primary's host alone, on both paths.
    url = migrate.one_host(
        settings.database_url, settings.connection_options(application_name=f"{PROG} migrate")
    )
    if url != settings.database_url:
        settings = with_overrides(settings, database_url=url)
    if args.status:
        if not migrate.sqitch_on_path():
            options = settings.connection_options(application_name=f"{PROG} migrate")
            sys.stdout.write(migrate.status_without_sqitch(settings.database_url, options))
            return EXIT_OK
        done = migrate.sqitch(settings.database_url, "status")
        return EXIT_OK if done.returncode == 0 else EXIT_RUNTIME
    if args.revert:
        if not migrate.sqitch_on_path():
            raise CliError(f"taskboard migrate --revert needs Sqitch: {migrate.SQITCH_HINT}")
        database = conninfo.conninfo_to_dict(settings.database_url).get("dbname", "the database")
        options = settings.connection_options(application_name=f"{PROG} migrate")
        release = migrate.check_revert_target(args.to)
        losses = migrate.revert_losses(settings.database_url, options, release)
        if losses and not args.drop_data:
            raise CliError(
                f"{f'a revert to release {release}' if release else 'a revert of everything'} drops "
                f"{migrate.describe_losses(losses)}: nothing reverted; run it again with "
                "--drop-data to drop that data"
            )
        question = (
            f"Revert Taskboard in {database} to release {release}?"
            if release
            else f"Revert Taskboard from {database}? This drops the taskboard schema and every job."
        )
        if losses:
            question += f" It drops {migrate.describe_losses(losses)}."
        if not args.yes and not confirm(question):
            raise CliError("nothing reverted")
        sys.stdout.write(
            migrate.revert(settings.database_url, options, to=release, drop_data=args.drop_data)
        )
        return EXIT_OK
    if args.to is not None or args.drop_data:
        raise CliError("--to and --drop-data go with --revert")
    options = settings.connection_options(application_name=f"{PROG} migrate")
    sys.stdout.write(migrate.deploy(settings.database_url, options, prefix=args.prefix))
    return EXIT_OK


def cmd_sql(args: argparse.Namespace) -> int:
    sys.stdout.write(
        install.script(
            args.prefix, since=args.since, until=args.until, transaction=args.transaction
        )
    )
    return EXIT_OK


def cmd_worker(args: argparse.Namespace) -> int:
    configure_logging(args.log_level)
    app = load_app(args.app)
    given = {
        "queues": args.queues,
        "pool_size": args.pool_size,
        "concurrency": args.concurrency,
        "lease": args.lease,
        "worker_name": args.worker_name,
    }
    overrides = {name: value for name, value in given.items() if value is not None}
    if args.supervised:  # a child of --processes: stopped by its parent alone (see runner)
        if overrides:
            with_overrides(app.settings, **overrides)  # bad settings fail before the loop
        runner.run_until_signalled(lambda stop: app.worker(stop=stop, **overrides), supervised=True)
        return EXIT_OK
    if args.processes == 1:
        app.run_worker(**overrides)  # bad settings fail before the loop starts
        return EXIT_OK
    return run_worker_processes(args, app, overrides)


def run_worker_processes(
    args: argparse.Namespace, app: Taskboard, overrides: dict[str, Any]
) -> int:
    """`taskboard worker --processes N`: N workers, each `python -m taskboard worker` with
    the same options, under this process, which holds no connection.

    Each child's settings are checked here first, so that bad ones fail once,
    before any child starts. With a worker name (--worker-name or
    TASKBOARD_WORKER_NAME), child i is named NAME-i; otherwise each has the
    default host-pid.
    """
    named = overrides.pop("worker_name", None)
    if named is None and "worker_name" in app.settings.model_fields_set:
        named = app.settings.worker_name
    if named is not None:
        with_overrides(app.settings, worker_name=named)  # as given, before the suffixes
    names = [None if named is None else f"{named}-{i}" for i in range(1, args.processes + 1)]
    longest = {} if names[-1] is None else {"worker_name": names[-1]}
    settings = with_overrides(app.settings, **overrides, **longest)
    if settings.metrics_port is not None:
        raise CliError(
            f"--processes {args.processes} with TASKBOARD_METRICS_PORT set: every process would "
            "serve /metrics on that one port; unset it, or run one worker a port",
            EXIT_USAGE,
        )
    options = [f"--log-level={args.log_level}"]
    options += [f"--queue={queue}" for queue in args.queues or []]
    for option, value in (
        ("--pool-size", args.pool_size),
        ("--concurrency", args.concurrency),
        ("--lease", args.lease),
    ):
        if value is not None:
            options.append(f"{option}={value!r}")
    commands = [
        [sys.executable, "-m", PROG, "worker", args.app, "--supervised", *options]
        + ([] if name is None else [f"--worker-name={name}"])
        for name in names
    ]
    return runner.supervise(commands, shutdown_grace=settings.shutdown_grace)


def cmd_metrics(args: argparse.Namespace) -> int:
    configure_logging(args.log_level)
    settings = load_settings()
    port = args.port if args.port is not None else settings.metrics_port
    if port is None:
        raise CliError("give --port N (or set TASKBOARD_METRICS_PORT)", EXIT_USAGE)
    host = args.host or settings.metrics_host
    with connect(settings):
        pass  # the schema is there and this login may read it: fail now, not at the first scrape

    def open_connection() -> psycopg.Connection[Any]:
        return psycopg.connect(
            settings.database_url,
            **settings.connection_options(application_name=metrics.EXPORTER_APPLICATION_NAME),
        )

    server = metrics.Server(metrics.exporter_registry(open_connection), host, port)
    log.info("queue metrics on http://%s:%d/metrics", server.host, server.port)

    async def serve(stop: asyncio.Event) -> None:
        await stop.wait()

    try:
        runner.run_until_signalled(serve)
    finally:
        server.close()
    return EXIT_OK


def cmd_enqueue(args: argparse.Namespace) -> int:
    payload = parse_payload(args.payload)
    run_at = parse_run_at(args.run_at)
    if args.app is None:
        app = Taskboard(load_settings())
    else:
        app = load_app(args.app)
        if args.task not in app.tasks:
            known = ", ".join(sorted(app.tasks)) or "none"
            raise CliError(
                f"task {args.task!r} is not registered in {args.app} (its tasks: {known})",
                EXIT_USAGE,
            )
    queue = app.queue_of(args.task, args.queue)
    with connect(app.settings) as conn:
        job_id = app.enqueue(
            args.task,
            payload,
            queue=queue,
            run_at=run_at,
            priority=args.priority,
            max_attempts=args.max_attempts,
            dedupe_key=args.dedupe_key,
            concurrency_key=args.concurrency_key,
            depends_on=args.depends_on,
            on_dependency_failure=args.on_dependency_failure,
            conn=conn,
        )
        job = app.get_job(job_id, conn=conn) if args.depends_on else None
    if args.json:
        shown: dict[str, Any] = {"job_id": job_id, "queue": queue}
        if job is not None:
            shown.update(state=job.state, waiting_for=job.waiting_for)
        print(json.dumps(shown))
    else:
        print(job_id)
        print(f"job {job_id} on queue {json.dumps(queue)}{dependency_note(job)}", file=sys.stderr)
    return EXIT_OK


def dependency_note(job: sql.JobInfo | None) -> str:
    """What `enqueue --depends-on` adds to its line: what the job waits for, or that its
    dependencies had already ended; nothing for a job enqueued without dependencies."""
    if job is None:
        return ""
    if job.state == "waiting":
        ids = waiting_for(job.waiting_for)
        return f", waiting for {ids}" if ids else ", waiting for its dependencies"
    if job.state == "cancelled":
        return ", cancelled: a dependency had already ended dead or cancelled"
    return f", {job.state}: its dependencies had already ended"


def cmd_status(args: argparse.Namespace) -> int:
    with connect(load_settings()) as conn:
        stats = sql.queue_stats(conn)
    if not stats:
        print("no jobs")
        return EXIT_OK
    header = ["queue", "state", "jobs", "runnable", "oldest_run_at"]
    header += ["paused", "limit", "key limit", "rate limit"]
    rows = []
    for row in stats:
        oldest = row["oldest_run_at"]
        limit = row["max_running"]
        per_key = row["max_running_per_key"]
        rows.append(
            [
                str(row["queue"]),
                str(row["state"]),
                str(row["jobs"]),
                str(row["runnable"]),
                "" if oldest is None else oldest.isoformat(sep=" ", timespec="seconds"),
                "yes" if row["paused"] else "",
                "" if limit is None else str(limit),
                "" if per_key is None else str(per_key),
                rate_cell(row),
            ]
        )
    print(format_table(header, rows, numeric={2, 3, 6, 7}))
    return EXIT_OK


def rate_cell(row: dict[str, Any]) -> str:
    """A queue_stats row's rate limit as status shows it: `500/1s (312)`, `5/1m per key
    (3)`, the window's starts in brackets; empty without one."""
    if row["rate_starts"] is None:
        return ""
    per_key = " per key" if row["rate_by_key"] else ""
    return f"{row['rate_starts']}/{span(row['rate_per'])}{per_key} ({row['window_starts']})"


def span(value: dt.timedelta) -> str:
    """`value` in the syntax of `duration`: its largest whole unit (1s, 15m, 2w), else
    seconds with their fraction (0.5s)."""
    total = value.total_seconds()
    for unit, size in sorted(DURATION_UNITS.items(), key=lambda item: -item[1]):
        if total >= size and total % size == 0:
            return f"{int(total // size)}{unit}"
    return f"{total:g}s"


def cmd_pause(args: argparse.Namespace) -> int:
    changed = with_app(lambda app: app.pause(args.queue))
    line = "paused" if changed else "was already paused"
    report(
        args,
        {"queue": args.queue, "paused": True, "changed": changed},
        f'queue "{args.queue}" {line}',
    )
    return EXIT_OK


def cmd_resume(args: argparse.Namespace) -> int:
    changed = with_app(lambda app: app.resume(args.queue))
    line = "resumed" if changed else "was not paused"
    report(
        args,
        {"queue": args.queue, "paused": False, "changed": changed},
        f'queue "{args.queue}" {line}',
    )
    return EXIT_OK


def cmd_limit(args: argparse.Namespace) -> int:
    changed = with_app(lambda app: app.set_queue_limit(args.queue, args.max_running))
    what = "no limit" if args.max_running is None else f"at most {args.max_running} running"
    data = {"queue": args.queue, "max_running": args.max_running, "changed": changed}
    report(args, data, f'queue "{args.queue}": {what}' + ("" if changed else " (unchanged)"))
    return EXIT_OK


def cmd_key_limit(args: argparse.Namespace) -> int:
    limit = args.max_running_per_key
    changed = with_app(lambda app: app.set_key_limit(args.queue, limit))
    what = "no key limit" if limit is None else f"at most {limit} running per concurrency key"
    data = {"queue": args.queue, "max_running_per_key": limit, "changed": changed}
    report(args, data, f'queue "{args.queue}": {what}' + ("" if changed else " (unchanged)"))
    return EXIT_OK


def cmd_rate_limit(args: argparse.Namespace) -> int:
    limit: RateLimit | None = args.rate
    if limit is None and args.by_key:
        raise CliError("--by-key needs a rate limit N/PER, not none", EXIT_USAGE)
    starts, per = (None, None) if limit is None else (limit.starts, limit.per)
    changed = with_app(
        lambda app: app.set_rate_limit(
            args.queue,
            starts,
            None if per is None else dt.timedelta(seconds=per),
            by_key=args.by_key,
        )
    )
    if limit is None:
        what = "no rate limit"
    else:
        each = "each concurrency key" if args.by_key else "the queue"
        what = (
            f"at most {limit.starts} starts per {span(dt.timedelta(seconds=limit.per))} for {each}"
        )
    data = {
        "queue": args.queue,
        "starts": starts,
        "per_seconds": per,
        "by_key": args.by_key,
        "changed": changed,
    }
    report(args, data, f'queue "{args.queue}": {what}' + ("" if changed else " (unchanged)"))
    return EXIT_OK


# -- managing jobs ---------------------------------------------------------------

JOB_COLUMNS = ("id", "queue", "task", "state", "attempt", "run_at", "started_at", "finished_at")


def when(value: dt.datetime | None) -> str:
    return "" if value is None else value.isoformat(sep=" ", timespec="seconds")


def cmd_jobs(args: argparse.Namespace) -> int:
    found = with_app(
        lambda app: app.jobs(
            queue=args.queue,
            state=args.state,
            task=args.task,
            after_id=args.after,
            limit=args.limit,
        )
    )
    if args.json:
        print(json.dumps([job.as_json() for job in found]))
        return EXIT_OK
    if not found:
        print("no jobs")
        return EXIT_OK
    rows = [
        [
            str(job.job_id),
            job.queue,
            job.task,
            job.state,
            f"{job.attempt}/{job.max_attempts}",
            when(job.run_at),
            when(job.started_at),
            when(job.finished_at),
        ]
        for job in found
    ]
    print(format_table(JOB_COLUMNS, rows, numeric={0}))
    if len(found) == args.limit:
        print(f"(more: --after {found[-1].job_id})", file=sys.stderr)
    return EXIT_OK


def waiting_for(job_ids: list[int] | None) -> str:
    """The ids a waiting job still waits for, as `taskboard job` prints them."""
    return ", ".join(str(job_id) for job_id in job_ids or ())


def cmd_job(args: argparse.Namespace) -> int:
    job = with_app(lambda app: app.get_job(args.job_id))
    if job is None:
        raise CliError(f"job {args.job_id} does not exist")
    if args.json:
        print(json.dumps(job.as_json()))
        return EXIT_OK
    fields = [
        ("id", str(job.job_id)),
        ("queue", job.queue),
        ("task", job.task),
        ("state", job.state),
        ("attempt", f"{job.attempt} of {job.max_attempts}"),
        ("priority", str(job.priority)),
        ("fence", "" if job.fence is None else str(job.fence)),
        ("concurrency_key", job.concurrency_key or ""),
        ("waiting_for", waiting_for(job.waiting_for)),
        ("created_at", when(job.created_at)),
        ("run_at", when(job.run_at)),
        ("started_at", when(job.started_at)),
        ("finished_at", when(job.finished_at)),
        ("payload", "" if job.payload is None else json.dumps(job.payload)),
        ("result", "" if job.result is None else json.dumps(job.result)),
    ]
    width = max(len(name) for name, _ in fields)
    for name, value in fields:
        print(f"{name:<{width}}  {value}")
    for error in job.errors:
        print(
            f"\nattempt {error.get('attempt')} failed at {error.get('at')} "
            f"on {error.get('worker')}: {error.get('error')}"
        )
        if error.get("traceback"):
            print("    " + str(error["traceback"]).rstrip().replace("\n", "\n    "))
    return EXIT_OK


def cmd_cancel(args: argparse.Namespace) -> int:
    return change_jobs(args, "cancelled", "cancelled", lambda app, job_id: app.cancel(job_id))


def cmd_retry(args: argparse.Namespace) -> int:
    return change_jobs(
        args, "queued again", "queued", lambda app, job_id: app.retry(job_id), read_state=True
    )


def change_jobs(
    args: argparse.Namespace,
    done: str,
    changed_state: str,
    change: Callable[[Taskboard, int], bool],
    *,
    read_state: bool = False,
) -> int:
    """`change` each job of args.job_ids; one line each, or with --json one array of an
    object per job (its state after the call, null when it does not exist); 1 if any was
    not changed. A changed job's state is `changed_state`, or with `read_state` the state
    the job is in right after the call (a retried job with dependencies left is waiting)."""

    def each(app: Taskboard) -> list[dict[str, Any]]:
        answers = []
        for job_id in args.job_ids:
            changed = change(app, job_id)
            job = app.get_job(job_id) if read_state or not changed else None
            state = changed_state if changed and job is None else (job and job.state)
            answers.append(
                {
                    "job_id": job_id,
                    "changed": changed,
                    "state": state,
                    "exists": changed or job is not None,
                }
            )
        return answers

    answers = with_app(each)
    if args.json:
        print(json.dumps(answers))
    for answer in answers:
        job_id = answer["job_id"]
        if args.json:
            continue
        if answer["changed"] and answer["state"] == "waiting":
            print(f"job {job_id} waiting again for its dependencies")
        elif answer["changed"]:
            print(f"job {job_id} {done}")
        elif not answer["exists"]:
            print(f"{PROG}: error: job {job_id} does not exist", file=sys.stderr)
        else:
            print(f"{PROG}: error: job {job_id} is {answer['state']}: not {done}", file=sys.stderr)
    return EXIT_OK if all(answer["changed"] for answer in answers) else EXIT_RUNTIME


def cmd_prune(args: argparse.Namespace) -> int:
    deleted = with_app(lambda app: app.prune(args.older_than))
    report(
        args,
        {"deleted": deleted, "older_than_seconds": args.older_than},
        f"deleted {deleted} finished job{'' if deleted == 1 else 's'}",
    )
    return EXIT_OK


def cmd_schedules(args: argparse.Namespace) -> int:
    declared = load_app(args.app).schedules if args.app else None
    if args.prune_missing and declared is None:
        raise CliError(
            "--prune-missing needs --app MODULE:APP: the rows of the schedules that app "
            "declares are kept",
            EXIT_USAGE,
        )
    with connect(load_settings()) as conn:
        rows = sql.schedules(conn)
        if rows is None:
            raise CliError(
                "the database's taskboard schema has no schedules (0.3.0 and later): "
                "run `taskboard migrate`"
            )
        if declared is not None and args.prune_missing:
            # A declared schedule's former names are kept: their rows carry its slots over
            # until its first slot under the new name.
            kept = set(declared).union(*(s.previous_names for s in declared.values()))
            missing = [str(row["schedule"]) for row in rows if row["schedule"] not in kept]
            with translate(role_needed=ADMIN_ROLE):
                removed = [n for n in missing if sql.remove_schedule(conn, {"schedule": n})]
            rows = [row for row in rows if row["schedule"] not in removed]
            line = (
                f"removed {len(removed)} schedule{'' if len(removed) == 1 else 's'} "
                f"{args.app} does not declare: {', '.join(removed)}"
                if removed
                else f"removed no schedules: {args.app} declares every one"
            )
            print(line, file=sys.stderr if args.json else sys.stdout)
    statuses = [schedule_status(row, declared) for row in rows]
    if declared is not None:
        # Declared schedules that have no row yet (no slot sent): listed too.
        present = {row["schedule"] for row in rows}
        for name in sorted(set(declared) - present):
            schedule = declared[name]
            rows.append(
                {
                    "schedule": name,
                    "last_slot": None,
                    "last_job_id": None,
                    "task": schedule.task,
                    "queue": schedule.queue,
                }
            )
            statuses.append("declared, no slot sent yet")
    if args.json:
        print(
            json.dumps(
                [
                    {
                        **row,
                        "last_slot": None
                        if row["last_slot"] is None
                        else row["last_slot"].isoformat(),
                        **({} if status is None else {"status": status}),
                    }
                    for row, status in zip(rows, statuses, strict=True)
                ]
            )
        )
    elif not rows:
        print("no schedules")
    else:
        cells = [
            [
                str(row["schedule"]),
                ""
                if row["last_slot"] is None
                else row["last_slot"].isoformat(sep=" ", timespec="seconds"),
                # A slot taken for another task is not the schedule's job.
                ""
                if row["last_job_id"] is None or (status or "").startswith("conflict")
                else str(row["last_job_id"]),
                str(row.get("task") or ""),
                str(row.get("queue") or ""),
                *([] if status is None else [status]),
            ]
            for row, status in zip(rows, statuses, strict=True)
        ]
        headers = ["schedule", "last_slot", "last_job_id", "task", "queue"]
        print(format_table(headers + ([] if declared is None else ["status"]), cells, numeric={2}))
    return EXIT_OK


def schedule_status(row: dict[str, Any], declared: dict[str, Schedule] | None) -> str | None:
    """What the app (None: not given) makes of a row of taskboard.schedules: None without
    an app, "ok", "not declared", or the conflict of a slot taken for another task or
    queue than the app's."""
    if declared is None:
        return None
    schedule = declared.get(str(row["schedule"]))
    if schedule is None:
        renamed = [s.name for s in declared.values() if row["schedule"] in s.previous_names]
        return f"previous name of {renamed[0]}" if renamed else "not declared"
    conflict = schedule.slot_conflict(row.get("task"), row.get("queue"), row["last_job_id"])
    return conflict or "ok"


def with_app(call: Callable[[Taskboard], T]) -> T:
    """`call` on an app of the configured settings, its connections closed after."""
    app = Taskboard(load_settings())
    try:
        return call(app)
    finally:
        app.close()


def report(args: argparse.Namespace, data: dict[str, Any], line: str) -> None:
    """`data` as one JSON object on stdout with --json, else `line`."""
    print(json.dumps(data) if args.json else line)


def cmd_dashboard(args: argparse.Namespace) -> int:
    configure_logging(args.log_level)
    # The web extra (Starlette, Jinja2, uvicorn) is optional: the core install
    # stays without it.
    try:
        from taskboard.web import server
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("starlette", "jinja2", "uvicorn", "markupsafe"):
            raise
        raise CliError(
            "taskboard dashboard needs the web extra: pip install 'taskboard-pg[web]'"
        ) from exc
    settings = load_settings()
    schedules = load_app(args.app).schedules if args.app else None
    host = args.host or settings.dashboard_host
    port = args.port if args.port is not None else settings.dashboard_port
    with connect(settings):
        pass  # the schema is there, and of a version this driver supports
    server.serve(settings, host=host, port=port, schedules=schedules)
    return EXIT_OK


# -- the parser ----------------------------------------------------------------


class Parser(argparse.ArgumentParser):
    """argparse with one-line errors, where a command's options and arguments mix freely.

    A parser without subcommands parses intermixed (``enqueue --queue q
    TASK JSON`` and ``enqueue TASK --queue q JSON`` alike); an error is one
    line on stderr and exit status 2.
    """

    _intermixed_now = False

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        if self._subparsers is not None or self._intermixed_now:
            return super().parse_known_args(args, namespace)
        self._intermixed_now = True  # parse_known_intermixed_args calls back in here
        try:
            return self.parse_known_intermixed_args(args, namespace)
        finally:
            self._intermixed_now = False

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{PROG}: error: {one_line(message)} (see {self.prog} --help)\n")


def integer(text: str) -> int:
    """A PostgreSQL integer (32 bits)."""
    value = int(text)
    if not INT4_MIN <= value <= INT4_MAX:
        raise argparse.ArgumentTypeError(f"must be between {INT4_MIN} and {INT4_MAX}, got {value}")
    return value


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def process_count(text: str) -> int:
    """How many worker processes: 1..MAX_PROCESSES, in plain digits."""
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    value = int(text)
    if not 1 <= value <= MAX_PROCESSES:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_PROCESSES}, got {value}")
    return value


def queue_limit(text: str) -> int | None:
    if text.strip().lower() == "none":
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number or none") from None
    if value < 1:
        raise argparse.ArgumentTypeError(
            f"a limit must be at least 1, got {value}: pause the queue to stop it"
        )
    if value > INT4_MAX:
        raise argparse.ArgumentTypeError(f"a limit must be at most {INT4_MAX}, got {value}")
    return value


@dataclass(frozen=True)
class RateLimit:
    """A rate limit as `rate-limit` takes it: `starts` jobs per `per` seconds."""

    starts: int
    per: float


def rate_limit(text: str) -> RateLimit | None:
    """N/PER (500/1s, 5/1m, 100/s: PER in the syntax of `duration`), or none."""
    if text.strip().lower() == "none":
        return None
    number, slash, window = text.partition("/")
    if not slash or not (number.isascii() and number.isdigit()):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not N/PER or none (e.g. 500/1s, 5/1m, 100/s)"
        )
    starts = int(number)
    if not 1 <= starts <= sql.MAX_RATE_STARTS:
        stop = ": pause the queue to stop it" if starts < 1 else ""
        raise argparse.ArgumentTypeError(
            f"N must be between 1 and {sql.MAX_RATE_STARTS}, got {starts}{stop}"
        )
    if window in DURATION_UNITS:  # 100/s: one of the unit
        window = f"1{window}"
    per = duration(window) if window else 0.0
    if per <= 0:
        raise argparse.ArgumentTypeError(f"PER must be a positive duration, got {window!r}")
    if dt.timedelta(seconds=per) <= dt.timedelta(0):  # under half a microsecond
        raise argparse.ArgumentTypeError(
            f"PER {window!r} rounds to 0: it must be at least one microsecond (0.000001s)"
        )
    if per > sql.MAX_RATE_PER.total_seconds():
        raise argparse.ArgumentTypeError(
            f"PER must be at most {sql.MAX_RATE_PER.days}d, got {window!r}"
        )
    return RateLimit(starts, per)


def role_prefix(text: str) -> str:
    try:
        return install.check_prefix(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


DURATION_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def duration(text: str) -> float:
    """Seconds from e.g. 90, 90s, 15m, 12h, 7d or 2w (at least 0)."""
    number, unit = (text[:-1], text[-1]) if text[-1:] in DURATION_UNITS else (text, "s")
    try:
        value = float(number) * DURATION_UNITS[unit]
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value >= 0):
        raise argparse.ArgumentTypeError(
            f"not a duration: {text!r} (e.g. 90s, 15m, 12h, 7d, 2w; a number is seconds)"
        )
    return value


def page_size(text: str) -> int:
    value = integer(text)
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"must be between 1 and 1000, got {text!r}")
    return value


def tcp_port(text: str) -> int:
    value = integer(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a TCP port, 1..65535, got {text}")
    return value


def job_id(text: str) -> int:
    """A job id: a positive bigint."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= sql.INT8_MAX:
        raise argparse.ArgumentTypeError(f"not a job id: {text!r}")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description="Taskboard, a PostgreSQL job queue. Settings come from TASKBOARD_* "
        "variables; TASKBOARD_DATABASE_URL is required.",
        epilog=ROLES_EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    logging_options = Parser(add_help=False)
    logging_options.add_argument(
        "--log-level", choices=LOG_LEVELS, default="INFO", type=str.upper, help="default INFO"
    )

    def command(
        name: str, run: Callable[[argparse.Namespace], int], text: str, **kwargs: Any
    ) -> argparse.ArgumentParser:
        text = f"{text} [{COMMAND_NEEDS[name]}]"
        sub = commands.add_parser(name, help=text, description=text, **kwargs)
        sub.set_defaults(run=run)
        return sub

    migrate = command(
        "migrate",
        cmd_migrate,
        "Install or upgrade the taskboard schema: with Sqitch (deploy --verify) when it is on "
        "PATH, else from the SQL this package carries, recorded in Sqitch's registry.",
    )
    action = migrate.add_mutually_exclusive_group()
    action.add_argument(
        "--status",
        action="store_true",
        help="show what is deployed (sqitch status; without Sqitch, read from its registry)",
    )
    action.add_argument(
        "--revert",
        action="store_true",
        help="remove the schema and its jobs, or go back to a release (--to)",
    )
    migrate.add_argument("--yes", action="store_true", help="revert without asking")
    migrate.add_argument(
        "--to",
        metavar="RELEASE",
        help="with --revert: revert to this release (e.g. 0.2.0) instead of removing everything",
    )
    migrate.add_argument(
        "--drop-data",
        action="store_true",
        help="with --revert: drop the data the revert loses (listed when it refuses)",
    )
    migrate.add_argument(
        "--prefix",
        type=role_prefix,
        metavar="P",
        help="roles P_owner, P_producer, P_worker, P_admin for a fresh install "
        "(default taskboard; an installed database keeps its own)",
    )

    sql_command = command(
        "sql",
        cmd_sql,
        "Print the install SQL as one script (no Sqitch needed): for Alembic, Django, "
        "Flyway or Liquibase.",
    )
    sql_command.add_argument(
        "--from", dest="since", metavar="RELEASE", help="the upgrade from RELEASE, e.g. 0.1.0"
    )
    sql_command.add_argument("--to", dest="until", metavar="RELEASE", help="stop after RELEASE")
    sql_command.add_argument(
        "--no-transaction",
        dest="transaction",
        action="store_false",
        help="leave out BEGIN and COMMIT, for tools that run each migration in their own "
        "transaction (Alembic, Django, Flyway)",
    )
    sql_command.add_argument(
        "--prefix",
        type=role_prefix,
        default=install.DEFAULT_PREFIX,
        metavar="P",
        help="the role names P_owner, P_producer, P_worker, P_admin (default taskboard)",
    )

    worker = command(
        "worker",
        cmd_worker,
        "Run a worker for the Taskboard app APP of module MODULE until SIGTERM or SIGINT.",
        parents=[logging_options],
    )
    worker.add_argument("app", metavar="MODULE:APP", help="e.g. myproject.tasks:app")
    worker.add_argument(
        "--queue",
        dest="queues",
        action="append",
        metavar="Q",
        help="claim from queue Q (repeatable; default: the queues of the app's tasks)",
    )
    worker.add_argument("--pool-size", type=positive_int, metavar="N", help="connections in all")
    worker.add_argument(
        "--concurrency",
        type=positive_int,
        metavar="N",
        help="handlers at once (default: pool size - 2; plain handlers hold no connection)",
    )
    worker.add_argument("--lease", type=positive_float, metavar="S", help="lease in seconds")
    worker.add_argument(
        "--worker-name", metavar="NAME", help="default: host-pid (NAME-1..NAME-N with --processes)"
    )
    worker.add_argument(
        "--processes",
        type=process_count,
        default=1,
        metavar="N",
        help=f"run N worker processes (1..{MAX_PROCESSES}) under one parent, each with its own "
        "pool_size connections, for CPU-bound sync handlers; default 1: this process is the worker",
    )
    # How --processes starts its children: SIGTERM and SIGINT ignored, the parent's
    # SIGUSR1 drains, SIGUSR2 exits at once (taskboard.runner). Not for people.
    worker.add_argument("--supervised", action="store_true", help=argparse.SUPPRESS)

    enqueue = command(
        "enqueue",
        cmd_enqueue,
        "Enqueue one job and print its id.",
        epilog='The id goes alone to stdout, and `job ID on queue "Q"` to stderr; with --json, '
        'stdout is one JSON object instead, {"job_id": ID, "queue": "Q"}.',
    )
    enqueue.add_argument("task", metavar="TASK")
    enqueue.add_argument("payload", metavar="JSON", nargs="?", help="the payload (default {})")
    enqueue.add_argument(
        "--app",
        metavar="MODULE:APP",
        help="the Taskboard app whose registered task TASK is: its queue is the default, "
        "and an unknown TASK is refused",
    )
    enqueue.add_argument(
        "--queue", metavar="Q", help="default: the task's queue with --app, else default"
    )
    enqueue.add_argument(
        "--run-at", metavar="ISO-8601", help="runnable from then (no offset: local time)"
    )
    enqueue.add_argument("--priority", type=integer, default=0, metavar="N", help="higher first")
    enqueue.add_argument(
        "--max-attempts",
        type=integer,
        metavar="N",
        help="default: the task's max_attempts with --app when it has one, else 5",
    )
    enqueue.add_argument("--dedupe-key", metavar="K", help="reuse an unfinished job with key K")
    enqueue.add_argument(
        "--concurrency-key",
        metavar="K",
        help="count the job against its queue's limit per key K (taskboard key-limit)",
    )
    enqueue.add_argument(
        "--depends-on",
        type=job_id,
        action="append",
        metavar="ID",
        help="wait until job ID has ended (repeat for more)",
    )
    enqueue.add_argument(
        "--on-dependency-failure",
        choices=("cancel", "run"),
        default="cancel",
        help="when a dependency ends dead or cancelled: cancel this job (default) or run it",
    )
    enqueue.add_argument("--json", action="store_true", help="print the job as JSON on stdout")

    command(
        "status",
        cmd_status,
        "Show the jobs per queue and state, and which queues are paused or limited.",
    )
    for name, run, text in (
        (
            "pause",
            cmd_pause,
            "Pause QUEUE: no worker takes a job from it until resume.",
        ),
        ("resume", cmd_resume, "Resume a paused QUEUE."),
    ):
        sub = command(name, run, text)
        sub.add_argument("queue", metavar="QUEUE")
        sub.add_argument("--json", action="store_true", help="print the result as JSON")
    limit = command(
        "limit",
        cmd_limit,
        "Run at most N jobs of QUEUE at once across all workers; none removes the limit.",
    )
    limit.add_argument("queue", metavar="QUEUE")
    limit.add_argument("max_running", metavar="N|none", type=queue_limit)
    limit.add_argument("--json", action="store_true", help="print the result as JSON")
    key_limit = command(
        "key-limit",
        cmd_key_limit,
        "Run at most N jobs of one concurrency key of QUEUE at once across all workers; "
        "none removes the key limit.",
    )
    key_limit.add_argument("queue", metavar="QUEUE")
    key_limit.add_argument("max_running_per_key", metavar="N|none", type=queue_limit)
    key_limit.add_argument("--json", action="store_true", help="print the result as JSON")
    rate = command(
        "rate-limit",
        cmd_rate_limit,
        "Start at most N jobs of QUEUE in any window of PER (e.g. 500/1s, 5/1m), on the "
        "database's clock, across all workers; none removes the rate limit.",
        epilog="Jobs held back stay queued. PER is a duration: 90s, 15m, 12h, 7d, 2w, a number "
        "is seconds; N/s, N/m ... mean one of the unit. With --json, stdout is one object, "
        '{"queue", "starts", "per_seconds", "by_key", "changed"}.',
    )
    rate.add_argument("queue", metavar="QUEUE")
    rate.add_argument("rate", metavar="N/PER|none", type=rate_limit)
    rate.add_argument(
        "--by-key",
        action="store_true",
        help="N per PER for each concurrency key of QUEUE; jobs without a key are not limited",
    )
    rate.add_argument("--json", action="store_true", help="print the result as JSON")
    jobs = command(
        "jobs",
        cmd_jobs,
        "List jobs, newest first, filtered by queue, state and task.",
    )
    jobs.add_argument("--queue", metavar="Q")
    jobs.add_argument(
        "--state",
        choices=("waiting", "queued", "running", "succeeded", "dead", "cancelled"),
        metavar="S",
        help="waiting, queued, running, succeeded, dead or cancelled",
    )
    jobs.add_argument("--task", metavar="TASK")
    jobs.add_argument("--after", type=job_id, metavar="ID", help="the jobs older than job ID")
    jobs.add_argument(
        "--limit", type=page_size, default=50, metavar="N", help="1..1000, default 50"
    )
    jobs.add_argument("--json", action="store_true", help="print a JSON array")
    job = command("job", cmd_job, "Show one job: its state, times, result and errors.")
    job.add_argument("job_id", type=job_id, metavar="ID")
    job.add_argument("--json", action="store_true", help="print the job as JSON")
    for name, run, text in (
        ("cancel", cmd_cancel, "Cancel waiting, queued or running jobs."),
        ("retry", cmd_retry, "Queue dead or cancelled jobs again, attempts reset."),
    ):
        sub = command(name, run, text)
        sub.add_argument("job_ids", type=job_id, nargs="+", metavar="ID")
        sub.add_argument("--json", action="store_true", help="one JSON object per job")
    prune = command(
        "prune",
        cmd_prune,
        "Delete finished jobs (succeeded, dead, cancelled) older than DURATION.",
    )
    prune.add_argument(
        "--older-than", type=duration, required=True, metavar="DURATION", help="e.g. 7d, 12h"
    )
    prune.add_argument("--json", action="store_true", help="print the result as JSON")
    schedules = command(
        "schedules",
        cmd_schedules,
        "Show each periodic schedule's latest enqueued slot, its job, task and queue; with "
        "--app, whether the app declares it, and a slot taken for another task or queue "
        "as a conflict.",
    )
    schedules.add_argument(
        "--app", metavar="MODULE:APP", help="the app whose schedules to compare the rows with"
    )
    schedules.add_argument(
        "--prune-missing",
        action="store_true",
        help="remove the rows of the schedules the app does not declare (needs --app; role: admin)",
    )
    schedules.add_argument("--json", action="store_true", help="print the rows as JSON")
    exporter = command(
        "metrics",
        cmd_metrics,
        "Serve /metrics with every queue's depth, runnable jobs and oldest due job, read from "
        "taskboard.queue_stats on each scrape; run one per database, not one per worker.",
        parents=[logging_options],
    )
    exporter.add_argument(
        "--port", type=tcp_port, metavar="N", help="default: TASKBOARD_METRICS_PORT"
    )
    exporter.add_argument(
        "--host", metavar="H", help="default: TASKBOARD_METRICS_HOST, else 127.0.0.1"
    )
    dashboard = command(
        "dashboard",
        cmd_dashboard,
        "Serve the web dashboard: queues, jobs, schedules, and actions for an admin login "
        "(extra taskboard-pg[web]). Set TASKBOARD_DASHBOARD_PASSWORD to ask for a "
        "password (HTTP Basic), and TASKBOARD_DASHBOARD_ALLOWED_HOSTS for the names it is "
        "opened by beyond loopback.",
        parents=[logging_options],
    )
    dashboard.add_argument(
        "--port", type=tcp_port, metavar="N", help="default: TASKBOARD_DASHBOARD_PORT, else 8080"
    )
    dashboard.add_argument(
        "--host", metavar="H", help="default: TASKBOARD_DASHBOARD_HOST, else 127.0.0.1"
    )
    dashboard.add_argument(
        "--app",
        metavar="MODULE:APP",
        help="the app whose periodic schedules to show with next slots",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``taskboard`` command and return its exit status."""
    args = build_parser().parse_args(argv)
    try:
        check_log_format()
        status: int = args.run(args)
        sys.stdout.flush()  # a reader gone (`| head`) shows here, not at exit
        return status
    except BrokenPipeError:
        # What stdout still buffers would fail again at exit: send it nowhere.
        # The reader stopped reading; saying so on stderr would only be noise.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_RUNTIME
    except CliError as exc:
        return fail(str(exc), exc.status)
    except (ConfigError, InvalidArgument) as exc:
        return fail(str(exc), EXIT_USAGE)
    except (PermissionDenied, psycopg.errors.InsufficientPrivilege) as exc:
        return fail(refused(args.command, exc), EXIT_RUNTIME)
    except TaskboardError as exc:
        return fail(str(exc), EXIT_RUNTIME)
    except psycopg.errors.InvalidSchemaName:
        return fail(NO_SCHEMA, EXIT_RUNTIME)
    except psycopg.Error as exc:
        return fail(str(exc), EXIT_RUNTIME)
    except KeyboardInterrupt:
        return EXIT_AT_ONCE


def refused(command: str, exc: PermissionDenied | psycopg.Error) -> str:
    """The line for a call the database refused this login: the server's message, the
    Taskboard roles the login holds and the GRANT of the role COMMAND_NEEDS names.

    Without a role to name, or when the login holds it already (an older
    schema's grants), or when the roles cannot be read, `exc`'s own message.
    """
    server = exc.__cause__ if isinstance(exc, PermissionDenied) else exc
    kind = COMMAND_NEEDS[command].role
    if kind is None or not isinstance(server, psycopg.Error):
        return str(exc)
    try:
        settings = load_settings()
        with psycopg.connect(
            settings.database_url, **settings.connection_options(application_name=f"{PROG} cli")
        ) as conn:
            who = sql.login_roles(conn)
    except (TaskboardError, psycopg.Error):
        return str(exc)
    if kind in who.holds:
        return str(exc)
    refusal = server.diag.message_primary or str(server)
    return missing_role(refusal, kind, login=who.login, prefix=who.prefix, holds=who.holds)


def fail(message: str, status: int) -> int:
    print(f"{PROG}: error: {one_line(message)}", file=sys.stderr)
    return status
