"""`taskboard migrate`: install or upgrade the schema, with Sqitch or without it.

With `sqitch` on PATH, every deploy goes through Sqitch on the project
shipped as taskboard/db (nothing else runs sqitch). The database password
travels in SQITCH_PASSWORD, never on sqitch's command line (which `ps`
shows). A fresh database is installed in two steps, because the v0.1.0
scripts need a superuser and name the `taskboard_` roles: the first release
comes from `taskboard sql` (any prefix, a CREATEROLE login is enough) and
is recorded in Sqitch's registry with --log-only; Sqitch then deploys every
later change itself, verified. A database already on a release is simply
upgraded by Sqitch, with the prefix its schema owner tells.

Without Sqitch, the same SQL `taskboard sql` prints installs the schema, or
upgrades it from the release it is at, in one transaction that also
records every change in Sqitch's registry (taskboard.registry), so that a
later `sqitch deploy` adopts the database and carries on from there.

A URL that names several hosts (a primary and its standbys) is narrowed
first to the one host that takes writes (`one_host`), on both paths:
Sqitch's targets name one host, and a deploy needs the primary.
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import subprocess
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit

import psycopg
from psycopg import conninfo

from taskboard import install, registry
from taskboard.connections import connect_failure
from taskboard.errors import ConfigError, TaskboardError

SQITCH_HINT = (
    "sqitch is not installed or not on PATH: install it "
    "(on Debian: apt-get install sqitch libdbd-pg-perl)"
)


log = logging.getLogger(__name__)

# How long a deploy without Sqitch waits for another deploy of the database to finish.
LOCK_WAIT_SECONDS = 120.0
LOCK_POLL_SECONDS = 0.2


class MigrateError(TaskboardError):
    """Sqitch cannot run or refused: it is missing, the package ships no project, a step failed."""


def sqitch_target(database_url: str) -> tuple[str, dict[str, str]]:
    """The Sqitch target for `database_url` and the environment carrying its password.

    The password, in the URL's user part or its `password` parameter, goes
    to SQITCH_PASSWORD and never into the target. Raises ConfigError unless
    the URL is a postgresql:// URI.
    """
    parts = urlsplit(database_url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise ConfigError("TASKBOARD_DATABASE_URL must be a postgresql://... URI for migrate")
    env: dict[str, str] = {}
    netloc = parts.netloc
    if parts.password is not None:
        env["SQITCH_PASSWORD"] = unquote(parts.password)
        userinfo, _, hostport = netloc.rpartition("@")
        netloc = f"{userinfo.split(':', 1)[0]}@{hostport}"
    query = []
    for key, value in parse_qsl(parts.query, keep_blank_values=True):
        if key == "password":
            env["SQITCH_PASSWORD"] = value
        else:
            query.append((key, value))
    # Written out by hand: urlunsplit drops the // of an empty host, and
    # Sqitch would then read the path as a database name with its slash.
    target = f"db:pg://{netloc}{parts.path}"
    if query:
        target += "?" + urlencode(query, safe="/")
    return target, env


def one_host(database_url: str, connect_options: Mapping[str, Any]) -> str:
    """`database_url` narrowed to the host of its list that takes writes, when it names
    several; unchanged otherwise.

    The hosts are tried as libpq tries them, with the URL's
    `target_session_attrs` (`read-write` when it sets none). Raises
    MigrateError, naming each host's failure, when none will do.
    """
    try:
        params = conninfo.conninfo_to_dict(database_url)
    except psycopg.ProgrammingError as exc:
        raise ConfigError(f"TASKBOARD_DATABASE_URL: {exc}") from None
    if "," not in str(params.get("host", "")) + str(params.get("hostaddr", "")):
        return database_url
    attrs = params.get("target_session_attrs") or "read-write"
    options = {**connect_options, "target_session_attrs": attrs}
    try:
        with psycopg.connect(database_url, **options) as conn:
            host, port = conn.info.host, conn.info.port
    except psycopg.OperationalError as exc:
        raise MigrateError(
            f"no host of TASKBOARD_DATABASE_URL would take the deploy: {connect_failure(exc)}"
        ) from None
    return with_host(database_url, host, port)


def with_host(database_url: str, host: str, port: int) -> str:
    """`database_url` (a postgresql:// URI) naming `host` and `port` alone."""
    parts = urlsplit(database_url)
    if parts.scheme not in ("postgresql", "postgres"):
        raise ConfigError("TASKBOARD_DATABASE_URL must be a postgresql://... URI for migrate")
    userinfo, at, _ = parts.netloc.rpartition("@")
    query = [
        (key, value)
        for key, value in parse_qsl(parts.query, keep_blank_values=True)
        if key not in ("host", "hostaddr", "port")
    ]
    if host.startswith("/"):  # a Unix socket's directory goes in the query
        hostport = ""
        query += [("host", host), ("port", str(port))]
    else:
        hostport = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
    url = f"{parts.scheme}://{userinfo}{at}{hostport}{parts.path}"
    if query:
        url += "?" + urlencode(query, safe="/")
    return url


def sqitch(
    database_url: str, *command: str, capture: bool = False
) -> subprocess.CompletedProcess[str]:
    """Run `sqitch COMMAND... --target <database_url>` in the shipped project.

    Returns the finished process (the caller reads its returncode); with
    `capture`, its output is in stdout/stderr instead of the terminal.
    Raises MigrateError when sqitch or the project is missing, ConfigError
    for a URL Sqitch cannot take.
    """
    target, password_env = sqitch_target(database_url)
    executable = shutil.which("sqitch")
    if executable is None:
        raise MigrateError(SQITCH_HINT)
    return subprocess.run(
        [executable, *command, "--target", target],
        cwd=install.shipped_sqitch_project(),
        env={**os.environ, **password_env},
        capture_output=capture,
        text=True,
        check=False,
    )


def deploy(database_url: str, connect_options: Mapping[str, Any], prefix: str | None = None) -> str:
    """Install Taskboard in the database, or upgrade it; returns what was done, in words.

    With `sqitch` on PATH, Sqitch deploys and verifies every step. Without
    it, the SQL the package carries (`taskboard sql`) installs or upgrades
    in one transaction that also records the changes in Sqitch's registry.

    `prefix` names the roles of a fresh install (default taskboard); an
    installed database keeps its own, and a different one is refused.
    Raises MigrateError when a step fails, with its error in one line; a
    failed fresh install leaves nothing behind.
    """
    sqitch_target(database_url)  # a URL Sqitch cannot take is refused before anything runs
    if not sqitch_on_path():
        return deploy_without_sqitch(database_url, connect_options, prefix)
    report = ""
    with psycopg.connect(database_url, **connect_options) as conn:
        check_registry(conn)
        state = installed(conn)
        prefix = checked_prefix(state, prefix)
        if state.owner is None:
            report = install_first_release(database_url, conn, prefix)
        elif not state.recorded:
            report = record_release(database_url, state)
    done = sqitch(database_url, "deploy", "--verify", "--set", f"prefix={prefix}", capture=True)
    return f"With Sqitch ({shutil.which('sqitch')}):\n" + report + succeeded(done).stdout


def sqitch_on_path() -> bool:
    return shutil.which("sqitch") is not None


def status_without_sqitch(database_url: str, connect_options: Mapping[str, Any]) -> str:
    """What the database holds and what this package would deploy, read from Sqitch's
    registry and the catalogs (what `sqitch status` tells, for a machine without Sqitch)."""
    plan = registry.read_plan(install.shipped_sqitch_project())
    with psycopg.connect(database_url, **connect_options) as conn:
        state = installed(conn)
        at = registry.deployed(conn, plan)
    lines = ["Sqitch is not on PATH: reading Sqitch's registry."]
    if state.owner is None:
        lines.append("No Taskboard schema here: taskboard migrate installs it.")
    elif at is None:
        lines.append(
            f"Taskboard {state.release or '(unknown release)'} (schema owner {state.owner}), "
            "installed without a record in Sqitch's registry: taskboard migrate records it."
        )
    else:
        lines.append(
            f"{plan_state(plan, at)} (schema owner {state.owner}): Sqitch's registry records "
            f"change {plan.changes[at].name}, {at + 1} of this package's {len(plan.changes)}."
        )
    pending = len(plan.changes) - (0 if at is None else at + 1)
    if state.owner is not None and at is not None:
        lines.append(
            "Nothing to deploy (up-to-date)."
            if pending == 0
            else f"{pending} changes to deploy, up to {plan_state(plan, len(plan.changes) - 1)}:"
            " taskboard migrate deploys them."
        )
    return "\n".join(lines) + "\n"


def checked_prefix(state: Installed, prefix: str | None) -> str:
    """The role prefix to deploy with: `prefix`, else the installed one, else the default.

    Raises MigrateError when the database cannot be deployed with it.
    """
    if state.owner is None and state.recorded:
        raise MigrateError(
            "Sqitch's registry records Taskboard but the taskboard schema is gone: "
            "drop the registry's record (sqitch revert --log-only -y) or restore the schema"
        )
    if state.owner is not None and state.release is None and not state.recorded:
        raise MigrateError(
            f"schema taskboard (owner {state.owner}) exists but holds no Taskboard install "
            "(no taskboard.version()): drop it, or install into another database"
        )
    if prefix is None:
        prefix = state.prefix or install.DEFAULT_PREFIX
    prefix = install.check_prefix(prefix)
    if state.owner is not None and state.owner != f"{prefix}_owner":
        raise MigrateError(
            f"schema taskboard is owned by {state.owner}, not {prefix}_owner: "
            "a database keeps the prefix it was installed with"
        )
    return prefix


def deploy_without_sqitch(
    database_url: str, connect_options: Mapping[str, Any], prefix: str | None
) -> str:
    """Install or upgrade from the SQL the package carries, recorded in Sqitch's registry.

    One transaction holds the install or upgrade and its record, under the
    advisory lock Sqitch itself deploys under. A schema `taskboard sql`
    installed without a record is recorded at its release first.
    """
    project = install.shipped_sqitch_project()
    plan = registry.read_plan(project)
    lines = ["Sqitch is not on PATH: deploying the SQL this package carries (taskboard sql)."]
    options = {**connect_options, "autocommit": True}
    with psycopg.connect(database_url, **options) as conn:
        # READ COMMITTED whatever the login's default: each statement then sees what a
        # deploy that held the lock before this one committed.
        conn.isolation_level = psycopg.IsolationLevel.READ_COMMITTED
        with conn.transaction():
            if wait_for_lock(conn):
                lines.append("Waited for another deploy of this database to finish.")
            return deploy_locked(conn, plan, prefix, project, lines)


def wait_for_lock(conn: psycopg.Connection[Any]) -> bool:
    """Take Sqitch's deploy lock for this transaction; whether another deploy held it first.

    Raises MigrateError when it is still held after LOCK_WAIT_SECONDS.
    """
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    waited = False
    while True:
        row = conn.execute(
            "SELECT pg_try_advisory_xact_lock(%s)", (registry.SQITCH_LOCK_KEY,)
        ).fetchone()
        if row == (True,):
            return waited
        if not waited:
            log.warning("another deploy of this database holds Sqitch's lock: waiting")
        waited = True
        if time.monotonic() > deadline:
            raise MigrateError(
                f"another deploy of this database (sqitch deploy or revert, or taskboard "
                f"migrate) has held Sqitch's lock for over {LOCK_WAIT_SECONDS:.0f} s: "
                "run taskboard migrate again once it is done"
            )
        time.sleep(LOCK_POLL_SECONDS)


def deploy_locked(
    conn: psycopg.Connection[Any],
    plan: registry.Plan,
    prefix: str | None,
    project: Path,
    lines: list[str],
) -> str:
    """The install or upgrade of deploy_without_sqitch, inside its transaction and lock."""
    last = len(plan.changes) - 1
    check_registry(conn)
    registry.check(conn)
    state = installed(conn)
    prefix = checked_prefix(state, prefix)
    at = registry.deployed(conn, plan)
    if at is None and state.owner is not None:
        at = release_position(plan, state)
        registry.record(conn, plan, 0, at)
        lines.append(
            f"Found release {state.release}, installed without a record: recorded it in "
            "Sqitch's registry."
        )
    if at == last:
        lines.append(f"Nothing to deploy: {plan_state(plan, last)} is installed.")
        return "\n".join(lines) + "\n"
    since = None if at is None else released_at(plan, at)
    try:
        conn.execute(
            install.script(prefix, since=since, transaction=False, project=project),
            prepare=False,
        )
    except psycopg.Error as exc:
        raise MigrateError(one_line(exc, fresh=at is None)) from exc
    count = registry.record(conn, plan, 0 if at is None else at + 1, last)
    done = "Installed" if since is None else f"Upgraded from {since} to"
    lines.append(
        f"{done} {plan_state(plan, last)} (roles {prefix}_*) in one transaction, and recorded "
        f"its {count} changes in Sqitch's registry (schema sqitch): a later `sqitch deploy` "
        "carries on from there."
    )
    return "\n".join(lines) + "\n"


def release_position(plan: registry.Plan, state: Installed) -> int:
    """Where in `plan` the release a `taskboard sql` install left stands."""
    try:
        return plan.tagged(f"v{state.release}")
    except registry.RegistryError:
        raise MigrateError(
            "the taskboard schema exists but Sqitch has no record of it, and it is at no "
            f"release this package knows ({state.release or 'unknown'}): upgrade it with "
            "`taskboard sql --from RELEASE`"
        ) from None


def released_at(plan: registry.Plan, at: int) -> str:
    """The release whose tag follows plan.changes[at]; MigrateError when none does."""
    release = plan.release_at(at)
    if release is None:
        raise MigrateError(
            f"Sqitch's registry records change {plan.changes[at].name}, which is between two "
            "releases: the SQL this package carries upgrades from a release only; "
            "install Sqitch and run taskboard migrate again"
        )
    return release


def plan_state(plan: registry.Plan, at: int) -> str:
    """How to name the schema at plan.changes[at]: its release, or the change past the last one."""
    release = plan.release_at(at)
    if release is not None:
        return f"Taskboard {release}"
    return f"Taskboard at change {plan.changes[at].name} (not a release)"


def one_line(exc: psycopg.Error, *, fresh: bool) -> str:
    """What PostgreSQL said, its hint included, naming `taskboard migrate` where the hint
    names Sqitch; for a fresh install refused by roles another database uses, the way out."""
    return explain(exc.diag.message_primary or str(exc), exc.diag.message_hint, fresh=fresh)


def explain(message: str, hint: str | None, *, fresh: bool) -> str:
    hint = (hint or "").replace(
        "sqitch deploy --set prefix=NAME", "taskboard migrate --prefix NAME"
    )
    if message.startswith("permission denied for database"):
        hint = (
            "the deploying login needs CREATE on the database: GRANT CREATE ON DATABASE "
            f"{message.rsplit(' ', 1)[-1]} TO it, or create the database as that login "
            '(see the docs: "Managed PostgreSQL and a second database")'
        )
    elif message.startswith("permission denied to create role"):
        hint = (
            'the deploying login needs CREATEROLE (see the docs: "Managed PostgreSQL and a second database"), '
            "or the roles must exist already"
        )
    if (
        fresh
        and "already exists and is not adopted" in message
        and ("has members" in message or "already owns" in message)
    ):
        hint = (
            "another database of this server uses these roles, and one set of roles is one "
            "trust domain: install this one with roles of its own, "
            'taskboard migrate --prefix NAME (see the docs: "Managed PostgreSQL and a second database")'
        )
    return f"{message} ({hint})" if hint else message


@dataclass(frozen=True)
class Loss:
    """Data a revert drops: its kind, the release that added it, how many rows hold it."""

    data: str
    added_in: str
    rows: int


def revert_losses(
    database_url: str, connect_options: Mapping[str, Any], release: str | None
) -> list[Loss]:
    """What a revert to `release` (None: a revert of everything) would drop, as
    taskboard.revert_losses counts it; UNKNOWN_LOSS when the schema predates that function.

    The deploying login is no member of the schema's owner, so it holds the
    owner for one transaction, rolled back, as the deploy scripts do.
    """
    # One transaction, rolled back, whatever the caller's options: the GRANT must not stay.
    with psycopg.connect(database_url, **{**connect_options, "autocommit": False}) as conn:
        state = installed(conn)
        if state.owner is None:
            return []
        owner = install.quote_ident(state.owner)
        try:
            conn.execute(f"GRANT {owner} TO CURRENT_USER")
            conn.execute(f"SET LOCAL ROLE {owner}")
            if conn.execute(LOSSES_DEFINED).fetchone() != (True,):
                return [UNKNOWN_LOSS]
            rows = conn.execute(
                "SELECT data, added_in, rows FROM taskboard.revert_losses(%s)", [release]
            ).fetchall()
        except psycopg.Error as exc:
            raise MigrateError(
                f"cannot count what the revert drops: {one_line(exc, fresh=False)}"
            ) from exc
        finally:
            conn.rollback()
    return [Loss(data, added_in, count) for data, added_in, count in rows]


# What a schema from before taskboard.revert_losses (0.4.4 and older) may lose.
UNKNOWN_LOSS = Loss("data this schema cannot count (it predates revert_losses)", "0.3.0", 0)

LOSSES_DEFINED = "SELECT to_regprocedure('taskboard.revert_losses(text)') IS NOT NULL"


def describe_losses(losses: list[Loss]) -> str:
    """The losses in words: `fences (2 rows, added in 0.3.0), ...`."""
    return ", ".join(
        loss.data
        if loss is UNKNOWN_LOSS
        else f"{loss.data} ({loss.rows} rows, added in {loss.added_in})"
        for loss in losses
    )


def check_revert_target(to: str | None) -> str | None:
    """`to` as a release of the shipped plan (a leading v allowed); MigrateError otherwise."""
    if to is None:
        return None
    release = to.removeprefix("@").removeprefix("v")
    known = install.releases(install.shipped_sqitch_project())
    if release not in known:
        raise MigrateError(
            f"--to must be a release of this package ({', '.join(known)}), got {to!r}"
        )
    return release


def revert(
    database_url: str,
    connect_options: Mapping[str, Any],
    *,
    to: str | None = None,
    drop_data: bool = False,
) -> str:
    """Revert to release `to` (`sqitch revert -y --to @vTO`), or everything when None,
    with the prefix the schema's owner names.

    Refuses, changing nothing, when the revert would drop data (see
    revert_losses) unless `drop_data`. Having counted exactly what the
    release loses, it tells the guard change (revert_guard) that the revert
    may go on. A login that is not a superuser reverts everything in two
    steps, since the first release's revert scripts need a superuser: Sqitch
    reverts to the first release, then its schema is dropped as its owner
    and Sqitch's record of it removed (the roles stay). Returns Sqitch's
    report; raises MigrateError, in one line, when it fails.
    """
    sqitch_target(database_url)
    release = check_revert_target(to)
    losses = revert_losses(database_url, connect_options, release)
    target = f"a revert to release {release}" if release else "a revert of everything"
    if losses and not drop_data:
        raise MigrateError(
            f"{target} drops {describe_losses(losses)}: "
            "run it again with --drop-data to drop that data"
        )
    with psycopg.connect(database_url, **connect_options) as conn:
        state = installed(conn)
        superuser = conn.execute(
            "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"
        ).fetchone() == (True,)
    prefix = state.prefix or install.DEFAULT_PREFIX
    variables = ["--set", f"prefix={prefix}", "--set", "drop_data=yes"]
    first = install.releases(install.shipped_sqitch_project())[0]
    stepwise = release is None and not superuser
    to_args = ["--to", f"@v{release or first}"] if release or stepwise else []
    report = succeeded(
        sqitch(database_url, "revert", "-y", *to_args, *variables, capture=True)
    ).stdout
    if stepwise:
        with psycopg.connect(database_url, **connect_options) as conn:
            owner = install.quote_ident(install.role_names(prefix)["owner"])
            try:
                conn.execute(UNINSTALL_FIRST_RELEASE.format(owner=owner), prepare=False)
            except psycopg.Error as exc:
                raise MigrateError(
                    f"reverting release {first} failed: {one_line(exc, fresh=False)}"
                ) from exc
        report += succeeded(
            sqitch(database_url, "revert", "-y", "--log-only", *variables, capture=True)
        ).stdout
        report += (
            f"Dropped release {first}'s schema as its owner; the roles {prefix}_* stay "
            "(other databases of the server may use them).\n"
        )
    if losses and UNKNOWN_LOSS not in losses:
        report += f"Dropped {describe_losses(losses)}.\n"
    return report


def install_first_release(database_url: str, conn: psycopg.Connection[Any], prefix: str) -> str:
    """Install the first release from `taskboard sql` and record it in Sqitch's registry.

    When Sqitch cannot record it, the install is dropped again: a fresh
    database is left as it was.
    """
    first = install.releases(install.shipped_sqitch_project())[0]
    try:
        conn.execute(install.script(prefix, until=first), prepare=False)
    except psycopg.Error as exc:
        raise MigrateError(
            f"installing release {first} failed: {one_line(exc, fresh=True)}"
        ) from exc
    try:
        recorded = record(database_url, first)
    except MigrateError:
        owner = install.quote_ident(install.role_names(prefix)["owner"])
        conn.execute(UNINSTALL_FIRST_RELEASE.format(owner=owner), prepare=False)
        raise
    return f"Installed release {first} (roles {prefix}_*) in one transaction; {recorded}"


def record_release(database_url: str, state: Installed) -> str:
    """Record in Sqitch's registry the release a `taskboard sql` install left."""
    if state.release is None or state.release not in install.releases(
        install.shipped_sqitch_project()
    ):
        raise MigrateError(
            "the taskboard schema exists but Sqitch has no record of it, and it is at no "
            f"release this package knows ({state.release or 'unknown'}): upgrade it with "
            "`taskboard sql --from RELEASE`"
        )
    return f"Release {state.release} found, installed without Sqitch; " + record(
        database_url, state.release
    )


def record(database_url: str, release: str) -> str:
    done = sqitch(
        database_url, "deploy", "--log-only", "--no-verify", "--to", f"@v{release}", capture=True
    )
    return f"Sqitch records it:\n{succeeded(done).stdout}"


# The first release's objects, for a fresh install Sqitch could not record.
# The roles stay: the server may share them, and the deploy checked them.
UNINSTALL_FIRST_RELEASE = """
    BEGIN;
    GRANT {owner} TO CURRENT_USER;
    DROP SCHEMA taskboard CASCADE;
    REVOKE {owner} FROM CURRENT_USER;
    COMMIT;
"""

# What a database holds of Taskboard, from the catalogs alone (no grant needed).
INSTALLED_SQL = """
    SELECT n.nspowner::regrole::text,
           (SELECT substring(p.prosrc FROM $$'([0-9]+[.][0-9]+[.][0-9]+)'$$)
              FROM pg_proc AS p
             WHERE p.pronamespace = n.oid AND p.proname = 'version'),
           to_regclass('sqitch.changes') IS NOT NULL
      FROM (SELECT) AS one
      LEFT JOIN pg_namespace AS n ON n.nspname = 'taskboard'
"""

# Who owns Sqitch's registry, and the triggers on it.
REGISTRY_SQL = """
    SELECT n.nspowner::regrole::text,
           n.nspowner = (SELECT oid FROM pg_roles WHERE rolname = current_user)
           OR (SELECT rolsuper FROM pg_roles WHERE oid = n.nspowner),
           (SELECT string_agg(DISTINCT c.relname || '.' || t.tgname, ', ')
              FROM pg_trigger AS t JOIN pg_class AS c ON c.oid = t.tgrelid
             WHERE c.relnamespace = n.oid AND NOT t.tgisinternal),
           ARRAY(SELECT c.relname::text FROM pg_class AS c
                  WHERE c.relnamespace = n.oid AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
                  ORDER BY 1)
      FROM pg_namespace AS n
     WHERE n.nspname = 'sqitch'
"""
# The tables of Sqitch's registry, all of them or none in schema sqitch.
REGISTRY_TABLES = ["changes", "dependencies", "events", "projects", "releases", "tags"]


@dataclass(frozen=True)
class Installed:
    """What a database holds of Taskboard."""

    owner: str | None  # of the taskboard schema; None when there is none
    release: str | None  # what taskboard.version() answers, read from its source
    recorded: bool  # whether Sqitch's registry records a deploy of the project

    @property
    def prefix(self) -> str | None:
        if self.owner is None or not self.owner.endswith("_owner"):
            return None
        return self.owner.removesuffix("_owner")


def installed(conn: psycopg.Connection[Any]) -> Installed:
    """What the database holds of Taskboard."""
    row = conn.execute(INSTALLED_SQL).fetchone()
    assert row is not None
    owner, release, registry = row
    recorded = False
    if registry:
        found = conn.execute(
            "SELECT EXISTS (SELECT FROM sqitch.changes WHERE project = 'taskboard')"
        ).fetchone()
        recorded = bool(found and found[0])
    return Installed(owner, release, recorded)


def check_registry(conn: psycopg.Connection[Any]) -> None:
    """Refuse a Sqitch registry someone else prepared (its triggers would run as the
    deployer), and a schema sqitch that is not Sqitch's registry."""
    row = conn.execute(REGISTRY_SQL).fetchone()
    if row is None:
        return
    owner, trusted, triggers, tables = row
    if not trusted:
        raise MigrateError(
            f"schema sqitch (Sqitch's registry) is owned by {owner}, not by this login or a "
            "superuser: its owner could run code as this login during the deploy"
        )
    if triggers:
        raise MigrateError(f"Sqitch's registry has triggers, which it never makes: {triggers}")
    if tables and tables != REGISTRY_TABLES:
        raise MigrateError(
            f"schema sqitch holds {', '.join(tables)}, which is not Sqitch's registry "
            f"({', '.join(REGISTRY_TABLES)}): rename that schema, or keep Sqitch's registry "
            "elsewhere (Sqitch's registry setting) and deploy with Sqitch"
        )


def succeeded(done: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """`done` when Sqitch succeeded; MigrateError with its first error line otherwise."""
    if done.returncode == 0:
        return done
    output = f"{done.stdout}\n{done.stderr}"
    error = ERROR_LINE.search(output)
    hint = HINT_LINE.search(output, error.end()) if error else None
    message = (
        f"sqitch failed: {explain(error[1], hint[1] if hint else None, fresh=False)}"
        if error
        else f"sqitch failed: {output.strip()}"
    )
    if "permission denied to grant role" in message:
        message += (
            " (the deploying login needs the ADMIN OPTION on the roles: see the docs, "
            '"Managed PostgreSQL and a second database")'
        )
    raise MigrateError(message)


# psql's report of the statement that failed, as Sqitch passes it on.
ERROR_LINE = re.compile(r"(?:psql:[^:]*:\d+: )?(?:ERROR|FATAL):\s+(.*)")
HINT_LINE = re.compile(r"^(?:psql:[^:]*:\d+: )?HINT:\s+(.*)", re.MULTILINE)
