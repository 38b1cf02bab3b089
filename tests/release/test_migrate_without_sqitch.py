"""`taskboard migrate` without Sqitch: the SQL the package carries, in one transaction,
recorded in Sqitch's registry exactly as Sqitch records it, so that Sqitch adopts it.

Each test runs the command with a PATH that holds no `sqitch`, as a
CREATEROLE CREATEDB login (what managed PostgreSQL gives), under a role
prefix of its own.
"""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest

from taskboard import install, registry
from tests.support import TESTS_DIR
from tests.support.cli import TASKBOARD, error_line, run
from tests.support.database import DB_DIR, MakeDatabase, run_sqitch
from tests.support.install import Domain, catalog, psql

# The registry's rows, without who recorded them and when.
CHANGES = """
    SELECT change_id, script_hash, change, project, note, planned_at, planner_name, planner_email
      FROM sqitch.changes ORDER BY committed_at
"""
TAGS = """
    SELECT tag_id, tag, project, change_id, note, planned_at, planner_name, planner_email
      FROM sqitch.tags ORDER BY committed_at
"""
DEPENDENCIES = "SELECT * FROM sqitch.dependencies ORDER BY change_id, dependency"
EVENTS = """
    SELECT event, change_id, change, project, note, tags, requires, conflicts, planned_at,
           planner_name, planner_email
      FROM sqitch.events ORDER BY committed_at
"""


@pytest.fixture
def domain(server_url: str) -> Iterator[Domain]:
    made = Domain(server_url)
    yield made
    made.drop()


def registry_rows(url: str) -> dict[str, list[tuple[object, ...]]]:
    with psycopg.connect(url) as conn:
        return {
            query: conn.execute(query).fetchall() for query in (CHANGES, TAGS, DEPENDENCIES, EVENTS)
        }


def without_sqitch(url: str, *args: str, path: Path) -> subprocess.CompletedProcess[str]:
    """`taskboard migrate ARGS...` with `path`, a directory without sqitch, as PATH."""
    assert not (path / "sqitch").exists()
    return run(url, "migrate", *args, path=str(path))


def start_migrate(url: str, prefix: str, path: Path, **environment: str) -> subprocess.Popen[str]:
    """`taskboard migrate --prefix PREFIX` started in the background, without sqitch on PATH."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("TASKBOARD_")}
    env.update(TASKBOARD_DATABASE_URL=url, PATH=str(path), **environment)
    return subprocess.Popen(
        [str(TASKBOARD), "migrate", "--prefix", prefix],
        cwd=TESTS_DIR,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def installed_release(url: str) -> str:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT taskboard.version()").fetchone()
    assert row is not None
    return str(row[0])


def last_release() -> str:
    return install.releases(DB_DIR)[-1]


def test_a_fresh_install_without_sqitch_is_what_sqitch_deploys_and_records(
    make_database: MakeDatabase, domain: Domain, tmp_path: Path
) -> None:
    bare = domain.database()
    done = without_sqitch(domain.deployer(bare), "--prefix", domain.prefix, path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "Sqitch is not on PATH" in done.stdout
    assert "Installed Taskboard" in done.stdout and "in one transaction" in done.stdout

    by_sqitch = make_database(deploy=True)
    assert catalog(bare, domain.prefix) == catalog(by_sqitch)
    assert registry_rows(bare) == registry_rows(by_sqitch)
    plan = registry.read_plan(DB_DIR)
    assert [row[0] for row in registry_rows(bare)[CHANGES]] == [c.id for c in plan.changes]


def test_sqitch_adopts_what_migrate_installed_without_it(domain: Domain, tmp_path: Path) -> None:
    url = domain.database()
    deployer = domain.deployer(url)
    assert without_sqitch(deployer, "--prefix", domain.prefix, path=tmp_path).returncode == 0

    status = run_sqitch(deployer, "status")
    assert status.returncode == 0, status.stdout + status.stderr
    assert "Nothing to deploy (up-to-date)" in status.stdout
    # Sqitch works from those records: it reverts the last release's changes and deploys
    # them again, verified.
    older = install.releases(DB_DIR)[-2]
    variables = ("--set", f"prefix={domain.prefix}")
    reverted = run_sqitch(deployer, "revert", "-y", "--to", f"@v{older}", *variables)
    assert reverted.returncode == 0, reverted.stdout + reverted.stderr
    assert installed_release(url) == older
    deployed = run_sqitch(deployer, "deploy", "--verify", *variables)
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    assert installed_release(url) == last_release()
    again = run(deployer, "migrate")  # with Sqitch on PATH
    assert again.returncode == 0, again.stderr
    assert "With Sqitch" in again.stdout
    assert "Nothing to deploy (up-to-date)" in again.stdout


def test_migrate_without_sqitch_twice_deploys_nothing_the_second_time(
    domain: Domain, tmp_path: Path
) -> None:
    url = domain.database()
    deployer = domain.deployer(url)
    assert without_sqitch(deployer, "--prefix", domain.prefix, path=tmp_path).returncode == 0
    rows = registry_rows(url)
    done = without_sqitch(deployer, path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"Nothing to deploy: Taskboard {last_release()} is installed." in done.stdout
    assert registry_rows(url) == rows


def test_a_release_installed_by_taskboard_sql_is_recorded_and_upgraded(
    make_database: MakeDatabase, domain: Domain, tmp_path: Path
) -> None:
    url = domain.database()
    deployer = domain.deployer(url)
    first = install.releases(DB_DIR)[0]
    script = run(None, "sql", "--to", first, "--prefix", domain.prefix)
    assert psql(deployer, script.stdout).returncode == 0

    done = without_sqitch(deployer, path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"Found release {first}, installed without a record" in done.stdout
    assert f"Upgraded from {first} to Taskboard {last_release()}" in done.stdout
    assert installed_release(url) == last_release()

    fresh = make_database(deploy=True)
    assert catalog(url, domain.prefix) == catalog(fresh)
    assert registry_rows(url) == registry_rows(fresh)
    assert "Nothing to deploy" in run_sqitch(deployer, "status").stdout


def test_a_database_sqitch_deployed_to_a_release_is_upgraded_without_it(
    domain: Domain, tmp_path: Path
) -> None:
    url = domain.database()
    deployer = domain.deployer(url)
    releases = install.releases(DB_DIR)
    older = releases[-3]
    script = run(None, "sql", "--to", older, "--prefix", domain.prefix)
    assert psql(deployer, script.stdout).returncode == 0
    logged = run_sqitch(deployer, "deploy", "--log-only", "--no-verify", "--to", f"@v{older}")
    assert logged.returncode == 0, logged.stdout + logged.stderr

    done = without_sqitch(deployer, path=tmp_path)
    assert done.returncode == 0, done.stderr
    assert f"Upgraded from {older} to Taskboard {last_release()}" in done.stdout
    assert "Found release" not in done.stdout  # Sqitch had recorded it
    assert installed_release(url) == last_release()
    assert "Nothing to deploy" in run_sqitch(deployer, "status").stdout


def test_a_failed_install_without_sqitch_leaves_nothing(domain: Domain, tmp_path: Path) -> None:
    # A squatted owner role (it can log in) makes the roles step refuse, in the transaction.
    domain.login("owner")
    url = domain.database()
    done = without_sqitch(domain.deployer(url), "--prefix", domain.prefix, path=tmp_path)
    assert f"role {domain.role('owner')} already exists and is not adopted" in error_line(done)
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT to_regnamespace('taskboard'), to_regnamespace('sqitch')"
        ).fetchone()
    assert row == (None, None)


@pytest.mark.parametrize("sqitch_on_path", [True, False], ids=["with-sqitch", "without-sqitch"])
def test_a_second_database_is_told_to_install_with_its_own_prefix(
    domain: Domain, tmp_path: Path, sqitch_on_path: bool
) -> None:
    first = domain.database()
    assert run(domain.deployer(first), "migrate", "--prefix", domain.prefix).returncode == 0
    domain.login("app", domain.role("producer"))  # the first database is in use

    second = domain.database()
    path = os.environ["PATH"] if sqitch_on_path else str(tmp_path)
    done = run(domain.deployer(second), "migrate", "--prefix", domain.prefix, path=path)
    line = error_line(done)
    assert f"role {domain.prefix}_" in line and "already exists and is not adopted" in line
    assert "another database of this server uses these roles" in line
    assert "taskboard migrate --prefix NAME" in line
    assert "sqitch deploy --set" not in line
    with psycopg.connect(second) as conn:
        assert conn.execute("SELECT to_regnamespace('taskboard')").fetchone() == (None,)

    own_prefix = f"{domain.prefix}_two"  # dropped with the domain's roles
    own = run(
        domain.deployer(second, prefix=own_prefix), "migrate", "--prefix", own_prefix, path=path
    )
    assert own.returncode == 0, own.stderr


def test_two_migrates_without_sqitch_at_once_install_once(domain: Domain, tmp_path: Path) -> None:
    url = domain.database()
    deployer = domain.deployer(url)
    # A login whose transactions default to REPEATABLE READ: the one that waits must still
    # see what the other committed.
    options = "-c default_transaction_isolation=repeatable\\ read"
    both = [start_migrate(deployer, domain.prefix, tmp_path, PGOPTIONS=options) for _ in range(2)]
    outputs = [process.communicate(timeout=120) for process in both]
    assert [process.returncode for process in both] == [0, 0], outputs
    said = sorted("Nothing to deploy" in out for out, _ in outputs)
    assert said == [False, True], outputs
    assert installed_release(url) == last_release()


def test_status_without_sqitch_reads_the_registry(domain: Domain, tmp_path: Path) -> None:
    url = domain.database()
    deployer = domain.deployer(url)
    status = without_sqitch(deployer, "--status", path=tmp_path)
    assert status.returncode == 0, status.stderr
    assert "No Taskboard schema here: taskboard migrate installs it." in status.stdout

    older = install.releases(DB_DIR)[-2]
    script = run(None, "sql", "--to", older, "--prefix", domain.prefix)
    assert psql(deployer, script.stdout).returncode == 0
    status = without_sqitch(deployer, "--status", path=tmp_path)
    assert (
        f"Taskboard {older} (schema owner {domain.role('owner')}), installed without a record"
        in (status.stdout)
    )

    assert without_sqitch(deployer, path=tmp_path).returncode == 0
    plan = registry.read_plan(DB_DIR)
    status = without_sqitch(deployer, "--status", path=tmp_path)
    assert f"Taskboard {last_release()} (schema owner {domain.role('owner')})" in status.stdout
    assert f"{len(plan.changes)} of this package's {len(plan.changes)}" in status.stdout
    assert "Nothing to deploy (up-to-date)." in status.stdout


LOCK_WAIT_S = 60  # how long the migrate started may take to find the lock held


def wait_until_it_tried_the_lock(
    holder: psycopg.Connection[Any], waiting: subprocess.Popen[str]
) -> None:
    """Return once another session of the database has tried Sqitch's lock (and, the lock
    being held, found it taken); fail when `waiting` ends first or none has within
    LOCK_WAIT_S."""
    deadline = time.monotonic() + LOCK_WAIT_S
    while time.monotonic() < deadline and waiting.poll() is None:
        row = holder.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
            " AND query LIKE 'SELECT pg_try_advisory_xact_lock(%%'"
        ).fetchone()
        if row is not None and row[0] > 0:
            return
        time.sleep(0.1)
    pytest.fail(f"no session tried Sqitch's lock: {waiting.poll()=}")


def test_migrate_without_sqitch_waits_for_a_deploy_holding_sqitchs_lock(
    domain: Domain, tmp_path: Path
) -> None:
    url = domain.database()
    deployer = domain.deployer(url)
    with psycopg.connect(url, autocommit=True) as holder:
        holder.execute("SELECT pg_advisory_lock(%s)", (registry.SQITCH_LOCK_KEY,))
        waiting = start_migrate(deployer, domain.prefix, tmp_path)
        wait_until_it_tried_the_lock(holder, waiting)
        assert waiting.poll() is None, waiting.communicate()
        with psycopg.connect(url) as conn:
            assert conn.execute("SELECT to_regnamespace('taskboard')").fetchone() == (None,)
        holder.execute("SELECT pg_advisory_unlock(%s)", (registry.SQITCH_LOCK_KEY,))
        out, err = waiting.communicate(timeout=120)
    assert waiting.returncode == 0, err
    assert "Waited for another deploy of this database to finish." in out
    assert installed_release(url) == last_release()


def test_a_registry_sqitch_keeps_in_another_schema_is_refused(
    domain: Domain, tmp_path: Path
) -> None:
    url = domain.database()
    deployer = domain.deployer(url)
    older = install.releases(DB_DIR)[-2]
    script = run(None, "sql", "--to", older, "--prefix", domain.prefix)
    assert psql(deployer, script.stdout).returncode == 0
    elsewhere = ("--registry", "elsewhere")
    logged = run_sqitch(
        deployer, "deploy", *elsewhere, "--log-only", "--no-verify", "--to", f"@v{older}"
    )
    assert logged.returncode == 0, logged.stdout + logged.stderr

    done = without_sqitch(deployer, path=tmp_path)
    assert "schema elsewhere holds a Sqitch registry" in error_line(done)
    assert installed_release(url) == older
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regnamespace('sqitch')").fetchone() == (None,)


def test_a_registry_of_another_release_is_refused(domain: Domain, tmp_path: Path) -> None:
    url = domain.database()
    deployer = domain.deployer(url)
    older = install.releases(DB_DIR)[-2]
    script = run(None, "sql", "--to", older, "--prefix", domain.prefix)
    assert psql(deployer, script.stdout).returncode == 0
    logged = run_sqitch(deployer, "deploy", "--log-only", "--no-verify", "--to", f"@v{older}")
    assert logged.returncode == 0, logged.stdout + logged.stderr
    with psycopg.connect(deployer, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO sqitch.releases (version, installer_name, installer_email)"
            " VALUES (1.2, 'a newer sqitch', 'sqitch@example.invalid')"
        )

    done = without_sqitch(deployer, path=tmp_path)
    assert "Sqitch's registry is at release 1.2" in error_line(done)
    assert installed_release(url) == older


@pytest.mark.parametrize("sqitch_on_path", [True, False], ids=["with-sqitch", "without-sqitch"])
def test_a_sqitch_schema_that_is_not_sqitchs_registry_is_refused(
    domain: Domain, tmp_path: Path, sqitch_on_path: bool
) -> None:
    url = domain.database()
    deployer = domain.deployer(url)
    with psycopg.connect(deployer, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA sqitch")
        conn.execute("CREATE TABLE sqitch.changes (id integer)")
    path = os.environ["PATH"] if sqitch_on_path else str(tmp_path)
    done = run(deployer, "migrate", "--prefix", domain.prefix, path=path)
    assert "schema sqitch holds changes, which is not Sqitch's registry" in error_line(done)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regnamespace('taskboard')").fetchone() == (None,)


def test_an_empty_taskboard_schema_is_named_as_what_it_is(domain: Domain, tmp_path: Path) -> None:
    url = domain.database()
    deployer = domain.deployer(url)
    with psycopg.connect(deployer, autocommit=True) as conn:
        conn.execute("CREATE SCHEMA taskboard")
    done = without_sqitch(deployer, "--prefix", domain.prefix, path=tmp_path)
    assert "exists but holds no Taskboard install" in error_line(done)


def test_a_deployer_without_create_on_the_database_is_told_the_grant(
    domain: Domain, tmp_path: Path
) -> None:
    url = domain.database()
    deployer = domain.deployer(url)
    name = str(psycopg.conninfo.conninfo_to_dict(url)["dbname"])
    with psycopg.connect(url, autocommit=True) as conn:  # as the superuser
        conn.execute(f'ALTER DATABASE "{name}" OWNER TO postgres')
        conn.execute(f'REVOKE CREATE ON DATABASE "{name}" FROM PUBLIC')
    done = without_sqitch(deployer, "--prefix", domain.prefix, path=tmp_path)
    line = error_line(done)
    assert f"permission denied for database {name}" in line
    assert f"GRANT CREATE ON DATABASE {name} TO it" in line
