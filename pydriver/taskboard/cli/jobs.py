"""The commands about jobs: ``enqueue TASK [JSON]``, and managing them: ``jobs``,
``job ID``, ``cancel ID...``, ``retry ID...`` and ``prune --older-than DURATION``."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys
from collections.abc import Callable
from typing import Any

from taskboard.app import Taskboard
from taskboard.cli.common import (
    EXIT_OK,
    EXIT_RUNTIME,
    EXIT_USAGE,
    PROG,
    CliError,
    Commands,
    connect,
    duration,
    format_table,
    integer,
    load_app,
    report,
    with_app,
)
from taskboard.settings import load_settings
from taskboard.sql import admin_async, parameters

JOB_COLUMNS = ("id", "queue", "task", "state", "attempt", "run_at", "started_at", "finished_at")


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


def dependency_note(job: admin_async.JobInfo | None) -> str:
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


# -- managing jobs ---------------------------------------------------------------


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
            state = answer["state"]
            now = "has succeeded" if state == "succeeded" else f"is {state}"
            print(f"{PROG}: error: job {job_id} {now}: not {done}", file=sys.stderr)
    return EXIT_OK if all(answer["changed"] for answer in answers) else EXIT_RUNTIME


def cmd_prune(args: argparse.Namespace) -> int:
    deleted = with_app(lambda app: app.prune(args.older_than))
    report(
        args,
        {"deleted": deleted, "older_than_seconds": args.older_than},
        f"deleted {deleted} finished job{'' if deleted == 1 else 's'}",
    )
    return EXIT_OK


# -- the parser ----------------------------------------------------------------


def job_id(text: str) -> int:
    """A job id: a positive bigint."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if not 1 <= value <= parameters.INT8_MAX:
        raise argparse.ArgumentTypeError(f"not a job id: {text!r}")
    return value


def page_size(text: str) -> int:
    value = integer(text)
    if not 1 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"must be between 1 and 1000, got {text!r}")
    return value


def add_enqueue(commands: Commands) -> None:
    """Add the command enqueue."""
    enqueue = commands.add(
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


def add_commands(commands: Commands) -> None:
    """Add the commands that manage jobs: jobs, job, cancel, retry and prune."""
    jobs = commands.add(
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
    job = commands.add("job", cmd_job, "Show one job: its state, times, result and errors.")
    job.add_argument("job_id", type=job_id, metavar="ID")
    job.add_argument("--json", action="store_true", help="print the job as JSON")
    for name, run, text in (
        ("cancel", cmd_cancel, "Cancel waiting, queued or running jobs."),
        ("retry", cmd_retry, "Queue dead or cancelled jobs again, attempts reset."),
    ):
        sub = commands.add(name, run, text)
        sub.add_argument("job_ids", type=job_id, nargs="+", metavar="ID")
        sub.add_argument("--json", action="store_true", help="one JSON object per job")
    prune = commands.add(
        "prune",
        cmd_prune,
        "Delete finished jobs (succeeded, dead, cancelled) older than DURATION.",
    )
    prune.add_argument(
        "--older-than", type=duration, required=True, metavar="DURATION", help="e.g. 7d, 12h"
    )
    prune.add_argument("--json", action="store_true", help="print the result as JSON")
