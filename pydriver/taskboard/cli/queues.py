"""The commands about queues: ``status``, and queue control: ``pause QUEUE``,
``resume QUEUE``, ``limit QUEUE N|none``, ``discard QUEUE on|off``, ``key-limit QUEUE N|none`` and
``rate-limit QUEUE N/PER|none``."""

from __future__ import annotations

import argparse
import datetime as dt
from dataclasses import dataclass
from typing import Any

from taskboard.cli.common import (
    DURATION_UNITS,
    EXIT_OK,
    EXIT_USAGE,
    INT4_MAX,
    CliError,
    Commands,
    connect,
    duration,
    format_table,
    report,
    with_app,
)
from taskboard.settings import load_settings
from taskboard.sql import dashboard, parameters


def cmd_status(args: argparse.Namespace) -> int:
    with connect(load_settings()) as conn:
        stats = dashboard.queue_stats(conn)
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


def cmd_discard(args: argparse.Namespace) -> int:
    discard = args.setting == "on"
    changed = with_app(lambda app: app.set_queue_discard(args.queue, discard))
    what = "a completed job is deleted" if discard else "completed jobs are kept"
    data = {"queue": args.queue, "discard": discard, "changed": changed}
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


# -- the parser ----------------------------------------------------------------


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
    if not 1 <= starts <= parameters.MAX_RATE_STARTS:
        stop = ": pause the queue to stop it" if starts < 1 else ""
        raise argparse.ArgumentTypeError(
            f"N must be between 1 and {parameters.MAX_RATE_STARTS}, got {starts}{stop}"
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
    if per > parameters.MAX_RATE_PER.total_seconds():
        raise argparse.ArgumentTypeError(
            f"PER must be at most {parameters.MAX_RATE_PER.days}d, got {window!r}"
        )
    return RateLimit(starts, per)


def add_commands(commands: Commands) -> None:
    """Add the commands status, pause, resume, limit, discard, key-limit and rate-limit."""
    commands.add(
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
        sub = commands.add(name, run, text)
        sub.add_argument("queue", metavar="QUEUE")
        sub.add_argument("--json", action="store_true", help="print the result as JSON")
    limit = commands.add(
        "limit",
        cmd_limit,
        "Run at most N jobs of QUEUE at once across all workers; none removes the limit.",
    )
    limit.add_argument("queue", metavar="QUEUE")
    limit.add_argument("max_running", metavar="N|none", type=queue_limit)
    limit.add_argument("--json", action="store_true", help="print the result as JSON")
    discard = commands.add(
        "discard",
        cmd_discard,
        "on: an accepted completion of a job of QUEUE deletes the job and its history; "
        "off (every queue's default): completed jobs are kept.",
        epilog="A job another job waits on, or one another transaction holds at that moment, "
        "is kept for prune. Failed, dead and cancelled jobs are always kept.",
    )
    discard.add_argument("queue", metavar="QUEUE")
    discard.add_argument("setting", metavar="on|off", choices=["on", "off"])
    discard.add_argument("--json", action="store_true", help="print the result as JSON")
    key_limit = commands.add(
        "key-limit",
        cmd_key_limit,
        "Run at most N jobs of one concurrency key of QUEUE at once across all workers; "
        "none removes the key limit.",
    )
    key_limit.add_argument("queue", metavar="QUEUE")
    key_limit.add_argument("max_running_per_key", metavar="N|none", type=queue_limit)
    key_limit.add_argument("--json", action="store_true", help="print the result as JSON")
    rate = commands.add(
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
