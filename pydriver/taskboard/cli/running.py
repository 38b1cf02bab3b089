"""The commands that run until a signal stops them: ``worker MODULE:APP`` (one worker,
alone or claiming for N handler processes), ``metrics`` (the queue exporter) and
``dashboard``."""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
from typing import Any

import psycopg

from taskboard import metrics, runner
from taskboard.cli.common import (
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    CliError,
    Commands,
    Parser,
    configure_logging,
    connect,
    integer,
    load_app,
)
from taskboard.settings import load_settings, with_overrides
from taskboard.worker import handling
from taskboard.worker.host import HandlerProcesses

# The command's records are the package's, taskboard.cli, whichever module logs them.
log = logging.getLogger(__package__)

LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")
MAX_PROCESSES = 256  # handler processes under one `taskboard worker --processes N`


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
    if args.handler_fd is not None:  # a handler process of --processes (see worker.host)
        settings = with_overrides(app.settings, **overrides)
        runner.run_until_signalled(
            lambda stop: handling.serve(args.handler_fd, app.tasks, settings, stop),
            supervised=True,
        )
        return EXIT_OK
    if args.processes == 1:
        app.run_worker(**overrides)  # bad settings fail before the loop starts
        return EXIT_OK
    app.run_worker(processes=handler_processes(args), **overrides)
    return EXIT_OK


def handler_processes(args: argparse.Namespace) -> HandlerProcesses:
    """`taskboard worker --processes N`: this process claims, renews and settles for N
    handler processes, each `python -m taskboard worker` with the same options, which
    runs the handlers of the jobs it is handed (see worker.host)."""
    options = [f"--log-level={args.log_level}"]
    for option, value in (
        ("--pool-size", args.pool_size),
        ("--concurrency", args.concurrency),
        ("--lease", args.lease),
        ("--worker-name", args.worker_name),
    ):
        if value is not None:
            options.append(f"{option}={value}")
    command = [sys.executable, "-m", PROG, "worker", args.app, *options]
    return HandlerProcesses([command] * args.processes, runner.start_handler_process)


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


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def process_count(text: str) -> int:
    """How many handler processes: 1..MAX_PROCESSES, in plain digits."""
    if not (text.isascii() and text.isdigit()):
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number")
    value = int(text)
    if not 1 <= value <= MAX_PROCESSES:
        raise argparse.ArgumentTypeError(f"must be between 1 and {MAX_PROCESSES}, got {value}")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, got {text}")
    return value


def tcp_port(text: str) -> int:
    value = integer(text)
    if not 1 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"must be a TCP port, 1..65535, got {text}")
    return value


def logging_options() -> argparse.ArgumentParser:
    """The parent parser of the commands that log: --log-level."""
    options = Parser(add_help=False)
    options.add_argument(
        "--log-level", choices=LOG_LEVELS, default="INFO", type=str.upper, help="default INFO"
    )
    return options


def add_worker(commands: Commands) -> None:
    """Add the command worker."""
    worker = commands.add(
        "worker",
        cmd_worker,
        "Run a worker for the Taskboard app APP of module MODULE until SIGTERM or SIGINT.",
        parents=[logging_options()],
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
    worker.add_argument("--worker-name", metavar="NAME", help="default: host-pid")
    worker.add_argument(
        "--processes",
        type=process_count,
        default=1,
        metavar="N",
        help=f"run the handlers in N processes (1..{MAX_PROCESSES}) of --concurrency each, "
        "for CPU-bound sync handlers; this one claims and settles for all of them; "
        "default 1: handlers run in this process",
    )
    # How --processes starts its handler processes: the socket to their claimer
    # (taskboard.worker.handling). Not for people.
    worker.add_argument("--handler-fd", type=int, help=argparse.SUPPRESS)


def add_servers(commands: Commands) -> None:
    """Add the commands that serve over HTTP: metrics and dashboard."""
    exporter = commands.add(
        "metrics",
        cmd_metrics,
        "Serve /metrics with every queue's depth, runnable jobs and oldest due job, read from "
        "taskboard.queue_stats on each scrape; run one per database, not one per worker.",
        parents=[logging_options()],
    )
    exporter.add_argument(
        "--port", type=tcp_port, metavar="N", help="default: TASKBOARD_METRICS_PORT"
    )
    exporter.add_argument(
        "--host", metavar="H", help="default: TASKBOARD_METRICS_HOST, else 127.0.0.1"
    )
    dashboard = commands.add(
        "dashboard",
        cmd_dashboard,
        "Serve the web dashboard: queues, jobs, schedules, and actions for an admin login "
        "(extra taskboard-pg[web]). Set TASKBOARD_DASHBOARD_PASSWORD to ask for a "
        "password (HTTP Basic), and TASKBOARD_DASHBOARD_ALLOWED_HOSTS for the names it is "
        "opened by beyond loopback.",
        parents=[logging_options()],
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
