"""The command ``schedules``: each periodic schedule's latest slot, and with ``--app``
what the app makes of it (``--prune-missing`` removes the rows it does not declare)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from taskboard.calls import ADMIN_ROLE
from taskboard.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    CliError,
    Commands,
    connect,
    format_table,
    load_app,
)
from taskboard.errors import translate
from taskboard.periodic import Schedule
from taskboard.settings import load_settings
from taskboard.sql import admin, dashboard


def cmd_schedules(args: argparse.Namespace) -> int:
    declared = load_app(args.app).schedules if args.app else None
    if args.prune_missing and declared is None:
        raise CliError(
            "--prune-missing needs --app MODULE:APP: the rows of the schedules that app "
            "declares are kept",
            EXIT_USAGE,
        )
    with connect(load_settings()) as conn:
        rows = dashboard.schedules(conn)
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
                removed = [n for n in missing if admin.remove_schedule(conn, {"schedule": n})]
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


def add_commands(commands: Commands) -> None:
    """Add the command schedules."""
    schedules = commands.add(
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
