"""Upgrades and reverts as the deploying login a managed server gives (CREATEROLE CREATEDB, no
superuser), through `taskboard migrate`, the path the docs tell users to take: from every
release up to this one, back to a release, and back to nothing. A revert that would drop data
(fences, queue settings, schedules, started_at, trace contexts) refuses unless told it may, and
says what it would drop; what a raw Sqitch command cannot do as that login is pinned here."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import psycopg
import pytest
from psycopg import conninfo
from psycopg import sql as pgsql
from psycopg.types.json import Jsonb

from taskboard import install
from taskboard_dev import server
from tests.support.cli import error_line, run
from tests.support.database import can_use, connect, run_sqitch, value
from tests.support.install import Domain

RELEASES = install.releases(install.shipped_sqitch_project())
BEFORE_GUARD = "0.4.4"  # the last release without revert_guard and revert_losses


@dataclass(frozen=True)
class Database:
    """A database (its superuser URL), its deploying login's URL, and its role prefix."""

    url: str
    deployer: str
    prefix: str

    def role(self, kind: str) -> str:
        return f"{self.prefix}_{kind}"

    @property
    def variables(self) -> tuple[str, ...]:
        return ("--set", f"prefix={self.prefix}")


@pytest.fixture
def fresh(server_url: str) -> Iterator[Database]:
    """An empty database with roles of its own to come, and its CREATEROLE CREATEDB deployer."""
    domain = Domain(server_url)
    url = domain.database()
    yield Database(url, domain.deployer(url), domain.prefix)
    domain.drop()


@pytest.fixture(scope="module")
def migrated_template(server_url: str) -> Iterator[Database]:
    """A database the deployer installed with `taskboard migrate`, to copy."""
    domain = Domain(server_url)
    url = domain.database()
    deployer = domain.deployer(url)
    done = migrate(deployer, "--prefix", domain.prefix)
    assert done.returncode == 0, done.stdout + done.stderr
    yield Database(url, deployer, domain.prefix)
    domain.drop()


@pytest.fixture
def migrated(server_url: str, migrated_template: Database) -> Iterator[Database]:
    """A copy of migrated_template and its deployer: what `taskboard migrate` as the deployer
    leaves, without deploying again for each test."""
    template = str(conninfo.conninfo_to_dict(migrated_template.url)["dbname"])
    name = f"{template}_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(
            pgsql.SQL("CREATE DATABASE {} TEMPLATE {}").format(
                pgsql.Identifier(name), pgsql.Identifier(template)
            )
        )
    url = server.as_user(migrated_template.url, "postgres").replace(f"/{template}", f"/{name}", 1)
    login = str(conninfo.conninfo_to_dict(migrated_template.deployer)["user"])
    deployer = server.managed_deployer(url, login, prefix=migrated_template.prefix)
    yield Database(url, deployer, migrated_template.prefix)
    with psycopg.connect(server_url, autocommit=True) as conn:
        conn.execute(pgsql.SQL("DROP DATABASE {} WITH (FORCE)").format(pgsql.Identifier(name)))


def migrate(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run(url, "migrate", *args)


def release_of(db: Database) -> str:
    with connect(db.url, db.role("producer")) as producer:
        return str(value(producer, "SELECT taskboard.version()"))


def with_data(db: Database) -> None:
    """What a day of 0.4.x leaves: a claimed job (fence, started_at), a trace context, a
    paused queue and a schedule's slot."""
    with connect(db.url, db.role("worker")) as worker:
        worker.execute(
            "SELECT taskboard.enqueue('t', queue => 'q', trace_context => %s)",
            [Jsonb({"traceparent": "00-" + "1" * 32 + "-" + "2" * 16 + "-01"})],
        )
        worker.execute("SELECT * FROM taskboard.claim(queue => 'q', worker => 'w')")
        worker.execute(
            "SELECT taskboard.enqueue_periodic('nightly', date_trunc('minute', now()), 't')"
        )
    with connect(db.url, db.role("admin")) as admin:
        admin.execute("SELECT taskboard.pause('q')")


@pytest.mark.parametrize("release", RELEASES)
def test_the_deployer_upgrades_from_each_release_with_taskboard_migrate(
    fresh: Database, release: str
) -> None:
    # A database at `release`, as `taskboard sql --to RELEASE` installs it.
    with psycopg.connect(fresh.deployer, autocommit=True) as conn:
        conn.execute(install.script(fresh.prefix, until=release), prepare=False)
    assert release_of(fresh) == release
    with connect(fresh.url, fresh.role("producer")) as producer:
        job_id = value(producer, "SELECT taskboard.enqueue('t')")
    done = migrate(fresh.deployer)
    assert done.returncode == 0, done.stdout + done.stderr
    status = run_sqitch(fresh.deployer, "status")
    assert "Nothing to deploy (up-to-date)" in status.stdout, status.stdout + status.stderr
    with connect(fresh.url, fresh.role("worker")) as worker:
        claimed = worker.execute(
            "SELECT job_id, fence FROM taskboard.claim(queue => 'default', worker => 'w')"
        ).fetchall()
    assert claimed == [(job_id, 1)]


def test_the_deployer_reverts_to_the_first_release(migrated: Database) -> None:
    # Upgrading from there is test_the_deployer_upgrades_from_each_release_...[0.1.0].
    reverted = migrate(migrated.deployer, "--revert", "--to", RELEASES[0], "--yes")
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr
    assert release_of(migrated) == RELEASES[0]
    status = run_sqitch(migrated.deployer, "status")
    assert "# On database" in status.stdout and "@v0.1.0" in status.stdout, status.stdout
    # Past the first release a raw Sqitch revert needs a superuser (its scripts drop the
    # owner's objects as the deploying login); taskboard migrate --revert does it in steps.
    raw = run_sqitch(migrated.deployer, "revert", "-y", *migrated.variables)
    assert raw.returncode != 0
    assert "revert/get_job@v0.2.0.sql" in raw.stderr, raw.stderr


def test_the_deployer_reverts_everything_with_taskboard_migrate(migrated: Database) -> None:
    with connect(migrated.url, migrated.role("producer")) as producer:
        producer.execute("SELECT taskboard.enqueue('t')")
    refused = migrate(migrated.deployer, "--revert", "--yes")
    assert "drops jobs (1 rows, added in 0.1.0)" in error_line(refused)
    reverted = migrate(migrated.deployer, "--revert", "--yes", "--drop-data")
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr
    assert f"the roles {migrated.prefix}_* stay" in reverted.stdout
    with psycopg.connect(migrated.url) as conn:
        assert value(conn, "SELECT to_regnamespace('taskboard') IS NULL") is True
        assert value(conn, "SELECT count(*) FROM sqitch.changes WHERE project = 'taskboard'") == 0
    # The owner is gone with the schema: the prefix is given again.
    again = migrate(migrated.deployer, "--prefix", migrated.prefix)
    assert again.returncode == 0, again.stdout + again.stderr
    with connect(migrated.url, migrated.role("producer")) as producer:
        assert value(producer, "SELECT taskboard.enqueue('t')") is not None


def test_migrate_revert_says_what_it_would_drop_and_changes_nothing_without_drop_data(
    migrated: Database,
) -> None:
    with_data(migrated)
    refused = migrate(migrated.deployer, "--revert", "--to", "0.2.0", "--yes")
    line = error_line(refused)
    assert line.startswith(
        "taskboard: error: a revert to release 0.2.0 drops fences (1 rows, added in 0.3.0), "
        "queue settings (1 rows, added in 0.3.0), schedules (1 rows, added in 0.3.0), "
        "started_at (1 rows, added in 0.3.0), trace contexts (1 rows, added in 0.4.0), "
        "slot tasks and queues (1 rows, added in 0.4.5): "
        "nothing reverted; run it again with --drop-data"
    ), line
    with connect(migrated.url, migrated.role("admin")) as admin:
        assert value(admin, "SELECT bool_or(paused) FROM taskboard.queue_stats WHERE queue = 'q'")
    # Counting held the owner for a transaction that is gone: the deployer is no member.
    login = str(conninfo.conninfo_to_dict(migrated.deployer)["user"])
    assert not can_use(migrated.url, login, migrated.role("owner"))
    status = run_sqitch(migrated.deployer, "status")
    assert "Nothing to deploy (up-to-date)" in status.stdout, status.stdout + status.stderr
    # Back to the last release without the guard drops only what came after it.
    refused = migrate(migrated.deployer, "--revert", "--to", BEFORE_GUARD, "--yes")
    assert "drops slot tasks and queues (1 rows, added in 0.4.5): nothing reverted" in (
        error_line(refused)
    )
    kept = migrate(migrated.deployer, "--revert", "--to", BEFORE_GUARD, "--yes", "--drop-data")
    assert kept.returncode == 0, kept.stdout + kept.stderr
    assert release_of(migrated) == BEFORE_GUARD
    # A schema without revert_losses cannot count: only --drop-data goes on.
    uncounted = error_line(migrate(migrated.deployer, "--revert", "--to", "0.2.0", "--yes"))
    assert "data this schema cannot count (it predates revert_losses)" in uncounted
    assert migrate(migrated.deployer).returncode == 0

    dropped = migrate(migrated.deployer, "--revert", "--to", "0.2.0", "--yes", "--drop-data")
    assert dropped.returncode == 0, dropped.stdout + dropped.stderr
    assert "Dropped fences (1 rows" in dropped.stdout
    assert release_of(migrated) == "0.2.0"


def test_migrate_revert_refuses_an_unknown_release(migrated: Database) -> None:
    line = error_line(migrate(migrated.deployer, "--revert", "--to", "9.9.9", "--yes"))
    assert "--to must be a release of this package" in line


def test_migrate_to_and_drop_data_go_with_revert(migrated: Database) -> None:
    assert "--to and --drop-data go with --revert" in error_line(
        migrate(migrated.deployer, "--to", "0.2.0")
    )


def test_a_raw_sqitch_revert_as_the_deployer_stops_at_the_guard_unless_drop_data_is_yes(
    migrated: Database,
) -> None:
    with_data(migrated)
    refused = run_sqitch(
        migrated.deployer, "revert", "-y", "--to", f"@v{BEFORE_GUARD}", *migrated.variables
    )
    assert refused.returncode != 0
    assert f"a revert to a release before {RELEASES[-1]} may drop data" in refused.stderr, (
        refused.stderr
    )
    assert "queue settings (1 rows, added in 0.3.0)" in refused.stderr
    status = run_sqitch(migrated.deployer, "status")
    assert "Nothing to deploy (up-to-date)" in status.stdout, status.stdout + status.stderr

    allowed = run_sqitch(
        migrated.deployer,
        "revert",
        "-y",
        "--to",
        "@v0.2.0",
        *migrated.variables,
        "--set",
        "drop_data=yes",
    )
    assert allowed.returncode == 0, allowed.stdout + allowed.stderr
    assert release_of(migrated) == "0.2.0"


# -- what a raw Sqitch command cannot do as the deployer (documented) ---------------------


def test_a_raw_sqitch_deploy_of_a_fresh_database_needs_a_superuser(fresh: Database) -> None:
    # The released 0.1.0 scripts run first and need one; taskboard migrate installs 0.1.0
    # from `taskboard sql` instead.
    done = run_sqitch(fresh.deployer, "deploy", *fresh.variables)
    assert done.returncode != 0
    assert "schema.sql" in done.stderr, done.stderr


def test_a_raw_sqitch_verify_as_the_deployer_fails_on_released_verify_scripts(
    migrated: Database,
) -> None:
    # The released 0.1.0 verify scripts need a superuser; `sqitch deploy --verify` (what
    # taskboard migrate runs) verifies each later change as it deploys it.
    done = run_sqitch(migrated.deployer, "verify", *migrated.variables)
    assert done.returncode != 0
    assert "Verify Summary Report" in done.stdout, done.stdout + done.stderr
