"""Install anywhere: a CREATEROLE login deploys, squatted roles are refused, prefixes isolate,
and `taskboard sql` installs what Sqitch does.

Every test makes its own roles under a fresh prefix and its own databases,
and drops them again: roles are shared by the whole server.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from psycopg import sql

from taskboard import install
from taskboard.migrate import sqitch_target
from taskboard_dev import server
from tests.support.cli import error_line, run
from tests.support.database import DB_DIR, MakeDatabase, can_use
from tests.support.install import Domain, catalog, execute, psql

KINDS = ("owner", "producer", "worker", "admin")


@pytest.fixture
def domain(server_url: str) -> Iterator[Domain]:
    made = Domain(server_url)
    yield made
    made.drop()


def migrate(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return run(url, "migrate", *args)


# -- a CREATEROLE login, no superuser ---------------------------------------------------


def test_a_createrole_login_installs_upgrades_and_keeps_no_owner_rights(domain: Domain) -> None:
    url = domain.database()
    deployer_url = domain.deployer(url)
    deployer = domain.logins[-1]

    done = migrate(deployer_url, "--prefix", domain.prefix)
    assert done.returncode == 0, done.stderr
    assert "get_job" in done.stdout and "enqueue_many" in done.stdout, done.stdout

    owner = domain.role("owner")
    with psycopg.connect(url) as conn:
        schema_owner = conn.execute(
            "SELECT nspowner::regrole::text FROM pg_namespace WHERE nspname = 'taskboard'"
        ).fetchone()
        assert schema_owner == (owner,)
        super_row = conn.execute(
            "SELECT rolsuper FROM pg_roles WHERE rolname = %s", [deployer]
        ).fetchone()
        assert super_row == (False,)
    assert not can_use(url, deployer, owner), "the deployer is left able to use the owner"

    again = migrate(deployer_url)  # the prefix comes from the schema's owner
    assert again.returncode == 0, again.stderr
    assert "Nothing to deploy" in again.stdout, again.stdout
    status = migrate(deployer_url, "--status")
    assert status.returncode == 0, status.stderr
    assert "Nothing to deploy (up-to-date)" in status.stdout

    worker = domain.login("w", domain.role("worker"))
    with psycopg.connect(server.as_user(url, worker), autocommit=True) as conn:
        (job_id,) = conn.execute("SELECT taskboard.enqueue('ping')").fetchone() or (None,)
        claimed = conn.execute("SELECT job_id FROM taskboard.claim('default', 'w', 1, '30s')")
        assert claimed.fetchall() == [(job_id,)]


def test_createrole_self_grant_gives_the_deployer_nothing_of_the_owner(domain: Domain) -> None:
    """On 16+, a CREATEROLE login with createrole_self_grant = 'set, inherit' would become a
    member of every role it creates; the deploy turns it off for its own transaction."""
    url = domain.database()
    deployer_url = domain.deployer(url)
    deployer = domain.logins[-1]
    with psycopg.connect(url, autocommit=True) as conn:
        if conn.info.server_version < 160000:
            with pytest.raises(psycopg.errors.UndefinedObject):
                conn.execute("SHOW createrole_self_grant")  # nothing to turn off on 15
            return
        conn.execute(
            sql.SQL("ALTER ROLE {} SET createrole_self_grant = 'set, inherit'").format(
                sql.Identifier(deployer)
            )
        )
    done = migrate(deployer_url, "--prefix", domain.prefix)
    assert done.returncode == 0, done.stderr
    for kind in KINDS:
        assert not can_use(url, deployer, domain.role(kind)), kind


def test_a_second_prefix_on_an_installed_database_is_refused(domain: Domain) -> None:
    url = domain.database()
    deployer_url = domain.deployer(url)
    assert migrate(deployer_url, "--prefix", domain.prefix).returncode == 0

    done = migrate(deployer_url, "--prefix", domain.prefix + "x")
    assert done.returncode == 1
    line = error_line(done)
    assert f"owned by {domain.role('owner')}" in line, line


@pytest.mark.parametrize("through", ["directly", "through another role"])
def test_verify_fails_when_a_login_can_use_the_owner(domain: Domain, through: str) -> None:
    url = domain.database()
    assert migrate(domain.deployer(url), "--prefix", domain.prefix).returncode == 0
    verify = (DB_DIR / "verify" / "roles.sql").read_text()
    assert psql(url, verify, "-v", f"prefix={domain.prefix}").returncode == 0

    if through == "directly":
        login = domain.login("intruder", domain.role("owner"))
    else:
        middle = domain.role("middle")
        execute(
            url,
            sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(middle)),
            sql.SQL("GRANT {} TO {}").format(
                sql.Identifier(domain.role("owner")), sql.Identifier(middle)
            ),
        )
        login = domain.login("intruder", middle)
    failed = psql(url, verify, "-v", f"prefix={domain.prefix}")
    assert failed.returncode != 0
    assert login in failed.stderr and "LOGIN roles can use the rights" in failed.stderr


# -- squatted roles ------------------------------------------------------------------------

SQUATS: dict[str, tuple[str, str, str]] = {
    # name: (role kind, how it was made, what the error says)
    "login owner": ("owner", "CREATE ROLE {role} LOGIN", "it can log in (LOGIN)"),
    "superuser worker": ("worker", "CREATE ROLE {role} SUPERUSER", "it is a superuser"),
    "createrole admin": ("admin", "CREATE ROLE {role} CREATEROLE", "it has CREATEROLE"),
    "createdb producer": ("producer", "CREATE ROLE {role} CREATEDB", "it has CREATEDB"),
    "replication owner": ("owner", "CREATE ROLE {role} REPLICATION", "it has REPLICATION"),
    "bypassrls worker": ("worker", "CREATE ROLE {role} BYPASSRLS", "it has BYPASSRLS"),
    "a member": (
        "worker",
        "CREATE ROLE {role}; CREATE ROLE {other} LOGIN; GRANT {role} TO {other}",
        "members or admins this deploy did not grant: {other}",
    ),
    "an admin": (
        "owner",
        "CREATE ROLE {role}; CREATE ROLE {other}; GRANT {role} TO {other} WITH ADMIN OPTION",
        "members or admins this deploy did not grant: {other}",
    ),
    "a member of another role": (
        "owner",
        "CREATE ROLE {role}; GRANT pg_read_all_data TO {role}",
        "it is a member of pg_read_all_data",
    ),
    "default privileges": (
        "owner",
        "CREATE ROLE {role}; CREATE ROLE {other};"
        " ALTER DEFAULT PRIVILEGES FOR ROLE {role} GRANT ALL ON TABLES TO {other}",
        "it already owns, is granted or gives default privileges",
    ),
    "owns a database": (
        "owner",
        "CREATE ROLE {role}; CREATE DATABASE {other} OWNER {role}",
        "it already owns, is granted or gives default privileges",
    ),
}


@pytest.mark.parametrize("squat", list(SQUATS))
def test_a_squatted_role_is_refused_and_nothing_is_left(domain: Domain, squat: str) -> None:
    kind, make, says = SQUATS[squat]
    names = {"role": domain.role(kind), "other": domain.role("squatter")}
    url = domain.database()
    execute(url, *(part.strip().format(**names) for part in make.split(";")))
    if "CREATE DATABASE" in make:
        domain.databases.append(names["other"])
    deployer_url = domain.deployer(url)

    done = migrate(deployer_url, "--prefix", domain.prefix)
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    line = error_line(done)
    assert f"role {names['role']} already exists and is not adopted" in line, line
    assert says.format(**names) in line, line

    with psycopg.connect(url) as conn:
        left = conn.execute(
            "SELECT to_regnamespace('taskboard'), to_regnamespace('sqitch'),"
            " (SELECT count(*) FROM pg_roles WHERE rolname = ANY(%s))",
            [[domain.role(k) for k in KINDS]],
        ).fetchone()
    assert left == (None, None, 1), "a refused install left something behind"


def test_a_squatter_that_created_the_owner_is_refused(domain: Domain) -> None:
    """The red-team case: another CREATEROLE login made the owner first (on 16+ it is then
    the owner's admin; on 15 it gave itself membership)."""
    url = domain.database()
    squatter = domain.role("squatter")
    execute(url, sql.SQL("CREATE ROLE {} LOGIN CREATEROLE").format(sql.Identifier(squatter)))
    domain.logins.append(squatter)
    with psycopg.connect(server.as_user(url, squatter), autocommit=True) as conn:
        owner = sql.Identifier(domain.role("owner"))
        conn.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(owner))
        if conn.info.server_version < 160000:
            conn.execute(sql.SQL("GRANT {} TO {}").format(owner, sql.Identifier(squatter)))

    done = migrate(domain.deployer(url), "--prefix", domain.prefix)
    assert done.returncode == 1
    assert squatter in error_line(done) and domain.role("owner") in error_line(done)


# -- isolation -------------------------------------------------------------------------------


def test_databases_with_their_own_prefix_share_no_privilege(
    domain: Domain, server_url: str
) -> None:
    other = Domain(server_url)
    try:
        url_a, url_b = domain.database(), other.database()
        assert migrate(domain.deployer(url_a), "--prefix", domain.prefix).returncode == 0
        assert migrate(other.deployer(url_b), "--prefix", other.prefix).returncode == 0
        worker_a = domain.login("w", domain.role("worker"))

        execute(url_b, "SELECT taskboard.enqueue('ping')")
        with (
            psycopg.connect(server.as_user(url_b, worker_a), autocommit=True) as conn,
            pytest.raises(psycopg.errors.InsufficientPrivilege),
        ):
            conn.execute("SELECT * FROM taskboard.claim('default', 'w', 1, '30s')")
        with psycopg.connect(url_b) as conn:
            grants = conn.execute(
                "SELECT count(*) FROM pg_proc AS p"
                " WHERE p.pronamespace = 'taskboard'::regnamespace"
                "   AND (p.proacl::text LIKE %(a)s OR p.proowner::regrole::text LIKE %(a)s)",
                {"a": f"%{domain.prefix}\\_%"},
            ).fetchone()
        assert grants == (0,), "database B grants something to database A's roles"

        execute(url_a, "SELECT taskboard.enqueue('ping')")
        with psycopg.connect(server.as_user(url_a, worker_a), autocommit=True) as conn:
            rows = conn.execute("SELECT * FROM taskboard.claim('default', 'w', 1, '30s')")
            assert len(rows.fetchall()) == 1
    finally:
        other.drop()


# -- taskboard sql ---------------------------------------------------------------------------


def test_sql_installs_the_same_catalog_as_a_sqitch_deploy(
    make_database: MakeDatabase, domain: Domain
) -> None:
    by_sqitch = make_database(deploy=True)
    script = run(None, "sql", "--prefix", domain.prefix)
    assert script.returncode == 0, script.stderr
    assert not [line for line in script.stdout.splitlines() if line.startswith("\\")], (
        "psql-only syntax in taskboard sql"
    )

    url = domain.database()
    piped = psql(domain.deployer(url), script.stdout)  # a CREATEROLE login, as on a managed server
    assert piped.returncode == 0, piped.stderr
    assert catalog(url, domain.prefix) == catalog(by_sqitch)


def test_sql_without_transaction_runs_inside_a_migration_tools_transaction(
    make_database: MakeDatabase, domain: Domain
) -> None:
    """What the docs' recipes without Sqitch do (Alembic, Django): the text to the DB-API cursor as one
    batch, no parameters, inside the tool's own transaction."""
    by_sqitch = make_database(deploy=True)
    script = run(None, "sql", "--no-transaction", "--prefix", domain.prefix)
    assert script.returncode == 0, script.stderr
    assert "BEGIN;" not in script.stdout and "COMMIT;" not in script.stdout
    url = domain.database()
    with psycopg.connect(url) as conn:
        conn.cursor().execute(script.stdout)
        assert conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
    assert catalog(url, domain.prefix) == catalog(by_sqitch)


@pytest.mark.parametrize("since", install.releases(DB_DIR)[:-1])
def test_sql_from_a_release_upgrades_to_the_same_catalog(
    make_database: MakeDatabase, since: str
) -> None:
    by_sqitch = make_database(deploy=True)
    url = make_database(release=since)

    script = run(None, "sql", "--from", since)
    assert script.returncode == 0, script.stderr
    piped = psql(url, script.stdout)
    assert piped.returncode == 0, piped.stderr
    assert catalog(url) == catalog(by_sqitch)


def test_sql_refuses_a_database_that_has_taskboard(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    before = catalog(url)
    piped = psql(url, run(None, "sql").stdout)
    assert piped.returncode != 0
    assert "already has a taskboard schema" in piped.stderr
    assert catalog(url) == before


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--prefix", "Bad-Name"], "role prefix 'Bad-Name' must be"),
        (["--prefix", "1st"], "not starting with a digit"),
        (["--from", "9.9.9"], "no release 9.9.9 in the plan"),
        (["--to", "nope"], "no release nope in the plan"),
        (["--from", "0.1.0", "--to", "0.1.0"], "--to 0.1.0 must be a release after --from 0.1.0"),
        (["--prefix", "pg_x"], "not starting with a digit or pg_"),
    ],
)
def test_sql_refuses_bad_input_in_one_line(args: list[str], says: str) -> None:
    done = run(None, "sql", *args)
    assert done.returncode == 2
    assert done.stdout == ""
    assert says in error_line(done)


def test_sql_names_the_roles_of_its_prefix_only() -> None:
    text = install.script("acme")
    assert '"acme_owner"' in text and "acme_worker" in text
    assert "taskboard_" not in text.replace("taskboard_result_not_stored", "")


def test_every_deploy_script_renders_to_plain_sql() -> None:
    for change in install.plan(DB_DIR):
        rendered = install.render((DB_DIR / "deploy" / change.script).read_text(), "acme")
        assert ':"' not in rendered and ":'prefix'" not in rendered, change.script
        assert not any(line.startswith("\\") for line in rendered.splitlines()), change.script


# -- migrate around the edges ----------------------------------------------------------------


def test_a_registry_someone_else_prepared_is_refused(domain: Domain) -> None:
    url = domain.database()
    stranger = domain.role("stranger")
    execute(
        url,
        sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(stranger)),
        sql.SQL("CREATE SCHEMA sqitch AUTHORIZATION {}").format(sql.Identifier(stranger)),
    )
    done = migrate(domain.deployer(url), "--prefix", domain.prefix)
    assert done.returncode == 1
    assert f"schema sqitch (Sqitch's registry) is owned by {stranger}" in error_line(done)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regnamespace('taskboard')").fetchone() == (None,)


def test_a_registry_with_a_trigger_is_refused(domain: Domain) -> None:
    url = domain.database()
    deployer_url = domain.deployer(url)
    execute(
        deployer_url,
        "CREATE SCHEMA sqitch",
        "CREATE TABLE sqitch.changes (project text)",
        "CREATE FUNCTION sqitch.f() RETURNS trigger LANGUAGE plpgsql AS $$BEGIN RETURN NEW; END$$",
        "CREATE TRIGGER planted BEFORE INSERT ON sqitch.changes"
        " FOR EACH ROW EXECUTE FUNCTION sqitch.f()",
    )
    done = migrate(deployer_url, "--prefix", domain.prefix)
    assert done.returncode == 1
    assert "Sqitch's registry has triggers, which it never makes: changes.planted" in error_line(
        done
    )


def test_a_fresh_install_sqitch_cannot_record_leaves_nothing(
    domain: Domain, tmp_path: Path
) -> None:
    fake = tmp_path / "sqitch"
    fake.write_text("#!/bin/sh\necho 'ERROR:  the registry is out of reach' >&2\nexit 2\n")
    fake.chmod(0o755)
    url = domain.database()
    done = run(
        domain.deployer(url),
        "migrate",
        "--prefix",
        domain.prefix,
        path=f"{tmp_path}:{os.environ['PATH']}",
    )
    assert done.returncode == 1
    assert "sqitch failed: the registry is out of reach" in error_line(done)
    with psycopg.connect(url) as conn:
        assert conn.execute("SELECT to_regnamespace('taskboard')").fetchone() == (None,)
    assert not can_use(url, domain.logins[-1], domain.role("owner"))


def test_an_install_made_with_taskboard_sql_is_recorded_and_upgraded(domain: Domain) -> None:
    url = domain.database()
    deployer_url = domain.deployer(url)
    first = install.releases(DB_DIR)[0]
    script = run(None, "sql", "--to", first, "--prefix", domain.prefix)
    assert psql(deployer_url, script.stdout).returncode == 0

    done = migrate(deployer_url)
    assert done.returncode == 0, done.stderr
    assert f"Release {first} found, installed without Sqitch" in done.stdout
    assert "enqueue_many" in done.stdout  # the later changes, deployed by Sqitch
    assert migrate(deployer_url).stdout.strip().endswith("\nNothing to deploy (up-to-date)")


def test_a_registry_without_the_schema_is_refused(domain: Domain) -> None:
    url = domain.database()
    deployer_url = domain.deployer(url)
    assert migrate(deployer_url, "--prefix", domain.prefix).returncode == 0
    execute(url, "DROP SCHEMA taskboard CASCADE")
    done = migrate(deployer_url)
    assert done.returncode == 1
    assert "records Taskboard but the taskboard schema is gone" in error_line(done)


@pytest.mark.parametrize(
    ("url", "target", "password"),
    [
        (
            "postgresql:///app?host=/run/pg&user=deploy",
            "db:pg:///app?host=/run/pg&user=deploy",
            None,
        ),
        ("postgresql://deploy:s%40cret@db:5432/app", "db:pg://deploy@db:5432/app", "s@cret"),
        (
            "postgresql://deploy@db/app?password=hush&sslmode=require",
            "db:pg://deploy@db/app?sslmode=require",
            "hush",
        ),
    ],
)
def test_the_sqitch_target_keeps_the_url_and_never_the_password(
    url: str, target: str, password: str | None
) -> None:
    made, env = sqitch_target(url)
    assert made == target
    assert env.get("SQITCH_PASSWORD") == password
