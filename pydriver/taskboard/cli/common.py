"""What every command group of the ``taskboard`` command shares.

Exit statuses, what each command needs of its login (COMMAND_NEEDS), the
expected failure (CliError) and its one line on stderr, the connection a
command reads through, loading an app, the parser class and `Commands`, the
argument types more than one group takes, and the table the listing commands
print. The command groups import this module and nothing else of the package.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import json
import math
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import psycopg

from taskboard import logs
from taskboard.app import Taskboard
from taskboard.calls import PRODUCER_ROLE
from taskboard.errors import PermissionDenied, TaskboardError, missing_role, one_line, translate
from taskboard.settings import Settings, load_settings
from taskboard.sql import session

PROG = "taskboard"
EXIT_OK = 0
EXIT_RUNTIME = 1
EXIT_USAGE = 2
NO_SCHEMA = "the database has no taskboard schema: run `taskboard migrate` first"
INT4_MIN, INT4_MAX = -(2**31), 2**31 - 1  # PostgreSQL integer: priority, max_attempts
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
    "discard": Needs("admin"),
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
            present = session.schema_present(conn)
            if not present:
                raise CliError(NO_SCHEMA)
            session.read_schema(conn)
        yield conn


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


# -- failures --------------------------------------------------------------------


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
            who = session.login_roles(conn)
    except (TaskboardError, psycopg.Error):
        return str(exc)
    if kind in who.holds:
        return str(exc)
    refusal = server.diag.message_primary or str(server)
    return missing_role(refusal, kind, login=who.login, prefix=who.prefix, holds=who.holds)


def fail(message: str, status: int) -> int:
    print(f"{PROG}: error: {one_line(message)}", file=sys.stderr)
    return status


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


class Commands:
    """The commands of a `taskboard` parser: each command group adds its own here, in
    the order `taskboard --help` lists them."""

    def __init__(self, parser: argparse.ArgumentParser) -> None:
        self._subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(
        self, name: str, run: Callable[[argparse.Namespace], int], text: str, **kwargs: Any
    ) -> argparse.ArgumentParser:
        """The parser of command `name`, which `run` runs; `text` and the command's needs
        (COMMAND_NEEDS) are its line in `taskboard --help` and its description."""
        text = f"{text} [{COMMAND_NEEDS[name]}]"
        sub = self._subparsers.add_parser(name, help=text, description=text, **kwargs)
        sub.set_defaults(run=run)
        return sub


def integer(text: str) -> int:
    """A PostgreSQL integer (32 bits)."""
    value = int(text)
    if not INT4_MIN <= value <= INT4_MAX:
        raise argparse.ArgumentTypeError(f"must be between {INT4_MIN} and {INT4_MAX}, got {value}")
    return value


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
