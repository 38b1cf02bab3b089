"""The ``taskboard`` command: its parser, of every command group's commands, and main.

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
import os
import sys
from collections.abc import Sequence

import psycopg

from taskboard import __version__
from taskboard.cli import jobs, queues, running, schedules, schema
from taskboard.cli.common import (
    EXIT_RUNTIME,
    EXIT_USAGE,
    NO_SCHEMA,
    PROG,
    ROLES_EPILOG,
    CliError,
    Commands,
    Parser,
    check_log_format,
    fail,
    refused,
)
from taskboard.errors import ConfigError, InvalidArgument, PermissionDenied, TaskboardError
from taskboard.runner import EXIT_AT_ONCE


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(
        prog=PROG,
        description="Taskboard, a PostgreSQL job queue. Settings come from TASKBOARD_* "
        "variables; TASKBOARD_DATABASE_URL is required.",
        epilog=ROLES_EPILOG,
    )
    parser.add_argument("--version", action="version", version=f"{PROG} {__version__}")
    # In the order `taskboard --help` lists them: migrate, sql, worker, enqueue, status
    # ... rate-limit, jobs ... prune, schedules, metrics, dashboard.
    commands = Commands(parser)
    schema.add_commands(commands)
    running.add_worker(commands)
    jobs.add_enqueue(commands)
    queues.add_commands(commands)
    jobs.add_commands(commands)
    schedules.add_commands(commands)
    running.add_servers(commands)
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
