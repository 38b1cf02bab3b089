"""The commands that install the schema: ``migrate`` (Sqitch, or the SQL this package
carries, on the configured database) and ``sql`` (the install or an upgrade as one
plain script)."""

from __future__ import annotations

import argparse
import sys

from psycopg import conninfo

from taskboard import install, migrate
from taskboard.cli.common import EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, PROG, CliError, Commands
from taskboard.errors import ConfigError
from taskboard.settings import load_settings, with_overrides


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


def confirm(question: str) -> bool:
    """Ask `question` on the terminal; True only for yes. Refuses without a terminal."""
    if not sys.stdin.isatty():
        raise CliError("no terminal to confirm on: pass --yes", EXIT_USAGE)
    try:
        answer = input(f"{question} [y/N] ")
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes")


def cmd_sql(args: argparse.Namespace) -> int:
    sys.stdout.write(
        install.script(
            args.prefix, since=args.since, until=args.until, transaction=args.transaction
        )
    )
    return EXIT_OK


def role_prefix(text: str) -> str:
    try:
        return install.check_prefix(text)
    except ConfigError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def add_commands(commands: Commands) -> None:
    """Add the commands migrate and sql."""
    migrate_command = commands.add(
        "migrate",
        cmd_migrate,
        "Install or upgrade the taskboard schema: with Sqitch (deploy --verify) when it is on "
        "PATH, else from the SQL this package carries, recorded in Sqitch's registry.",
    )
    action = migrate_command.add_mutually_exclusive_group()
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
    migrate_command.add_argument("--yes", action="store_true", help="revert without asking")
    migrate_command.add_argument(
        "--to",
        metavar="RELEASE",
        help="with --revert: revert to this release (e.g. 0.2.0) instead of removing everything",
    )
    migrate_command.add_argument(
        "--drop-data",
        action="store_true",
        help="with --revert: drop the data the revert loses (listed when it refuses)",
    )
    migrate_command.add_argument(
        "--prefix",
        type=role_prefix,
        metavar="P",
        help="roles P_owner, P_producer, P_worker, P_admin for a fresh install "
        "(default taskboard; an installed database keeps its own)",
    )

    sql_command = commands.add(
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
