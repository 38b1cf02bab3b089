"""The Sqitch project installs, verifies and removes itself, one database at a time."""

from __future__ import annotations

import psycopg

from tests.support.database import MakeDatabase, Sqitch

ROLES = ("taskboard_owner", "taskboard_producer", "taskboard_worker", "taskboard_admin")


def schema_exists(url: str) -> bool:
    with psycopg.connect(url) as conn:
        row = conn.execute("SELECT to_regnamespace('taskboard') IS NOT NULL").fetchone()
        assert row is not None
        return bool(row[0])


def roles_left(url: str) -> set[str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT rolname FROM pg_roles WHERE rolname = ANY(%s)", [list(ROLES)])
        return {r[0] for r in rows}


def roles_in_use_elsewhere(url: str) -> bool:
    """True when another database of the server still depends on the roles."""
    with psycopg.connect(url) as conn:
        row = conn.execute(
            """
            SELECT EXISTS (
                SELECT FROM pg_shdepend AS d JOIN pg_roles AS r ON r.oid = d.refobjid
                 WHERE d.refclassid = 'pg_authid'::regclass AND r.rolname = ANY(%s))
            """,
            [list(ROLES)],
        ).fetchone()
        assert row is not None
        return bool(row[0])


# What a revert of data-holding changes needs once there is data (see the guard, revert_guard).
DROP_DATA = ("--set", "drop_data=yes")


def enqueue_and_claim(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        job_id = conn.execute("SELECT taskboard.enqueue('ping', queue => 'sqitch')").fetchone()
        claimed = conn.execute("SELECT job_id FROM taskboard.claim('sqitch', 'w')").fetchone()
        assert job_id is not None and claimed == job_id


def test_deploy_verify_revert_and_deploy_again_on_an_empty_database(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = make_database(deploy=False)
    assert sqitch(url, "deploy", "--verify").returncode == 0
    assert sqitch(url, "verify").returncode == 0
    enqueue_and_claim(url)

    # The job's fence and start time would go: the guard asks for drop_data=yes.
    refused = sqitch(url, "revert", "-y")
    assert refused.returncode != 0
    assert "fences (1 rows, added in 0.3.0)" in refused.stderr, refused.stderr
    assert schema_exists(url)
    assert sqitch(url, "revert", "-y", *DROP_DATA).returncode == 0
    assert not schema_exists(url)

    assert sqitch(url, "deploy", "--verify").returncode == 0
    enqueue_and_claim(url)


def test_revert_in_one_database_neither_fails_nor_breaks_another(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    first = make_database(deploy=True)
    second = make_database(deploy=True)

    reverted = sqitch(first, "revert", "-y")
    assert reverted.returncode == 0, reverted.stderr
    assert not schema_exists(first)
    assert roles_left(second) == set(ROLES), (
        "reverting one database dropped roles another still uses"
    )
    enqueue_and_claim(second)
    assert sqitch(second, "verify").returncode == 0

    reverted = sqitch(second, "revert", "-y", *DROP_DATA)
    assert reverted.returncode == 0, reverted.stderr
    # The roles go with the last database that used them.
    if roles_in_use_elsewhere(second):
        assert roles_left(second) == set(ROLES)
    else:
        assert roles_left(second) == set()

    assert sqitch(first, "deploy", "--verify").returncode == 0
    enqueue_and_claim(first)


def test_verify_fails_when_a_function_is_callable_by_public(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("GRANT EXECUTE ON FUNCTION taskboard.cancel(bigint) TO PUBLIC")
    verified = sqitch(url, "verify")
    assert verified.returncode != 0
    assert "cancel" in verified.stdout + verified.stderr


def test_verify_fails_when_a_function_is_not_security_definer(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "ALTER FUNCTION taskboard.claim(text, text, integer, interval) SECURITY INVOKER"
        )
    verified = sqitch(url, "verify")
    assert verified.returncode != 0
    assert "claim" in verified.stdout + verified.stderr


def test_verify_fails_when_an_application_role_may_write_the_table(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("GRANT UPDATE ON taskboard.jobs TO taskboard_worker")
    verified = sqitch(url, "verify")
    assert verified.returncode != 0
    assert "jobs" in verified.stdout + verified.stderr
