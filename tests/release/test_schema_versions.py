"""Upgrades are additive: the first release's calls all work on this schema; this driver
works on the schemas of this series and the one before it, and names the range it accepts."""

from __future__ import annotations

import asyncio
import datetime as dt
from typing import Any

import psycopg
import pytest

from taskboard import SchemaVersionError, SyncContext
from taskboard.worker.startup import SUPPORTED_SCHEMA_VERSIONS, schema_supported
from tests.support.database import MakeDatabase, Sqitch, at_first_release
from tests.support.inprocess import FAST, finished, make_app, run_worker_until

# Every function of the schema, with what it gives, each argument (name, type,
# default), how it is called (kind, strictness, argument modes, variadic) and
# who may call it.
SIGNATURES = """
    SELECT p.proname::text, pg_get_function_result(p.oid),
           array(SELECT ARRAY[p.proargnames[i], format_type(p.proargtypes[i - 1], NULL),
                              pg_get_function_arg_default(p.oid, i)]
                   FROM generate_series(1, p.pronargs) AS i ORDER BY i),
           ARRAY[p.prokind::text, p.proretset::text, coalesce(p.proargmodes::text, ''),
                 p.provariadic::regtype::text, p.prosecdef::text],
           array(SELECT r.rolname FROM pg_roles AS r
                  WHERE r.rolname LIKE 'taskboard\\_%%'
                    AND has_function_privilege(r.oid, p.oid, 'EXECUTE') ORDER BY 1)
      FROM pg_proc AS p
     WHERE p.pronamespace = 'taskboard'::regnamespace
     ORDER BY 1
"""
ROW_TYPES = """
    SELECT t.typname, a.attnum, a.attname, format_type(a.atttypid, a.atttypmod)
      FROM pg_type AS t JOIN pg_attribute AS a ON a.attrelid = t.typrelid
     WHERE t.typnamespace = 'taskboard'::regnamespace AND t.typtype = 'c' AND a.attnum > 0
       AND t.typname <> 'jobs'
     ORDER BY 1, 2
"""


def described(url: str, query: str) -> list[tuple[object, ...]]:
    with psycopg.connect(url) as conn:
        return [tuple(row) for row in conn.execute(query).fetchall()]


def test_every_call_of_the_first_release_works_the_same_on_this_one(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    old = at_first_release(make_database, sqitch)
    new = make_database(deploy=True)

    before, after = described(old, SIGNATURES), described(new, SIGNATURES)
    assert before, "no function at the first release"
    now = {row[0]: row for row in after}
    changed = {row[0]: signature_change(row, now.get(row[0])) for row in before}
    assert {name: why for name, why in changed.items() if why} == {}, (
        "a function of the first release changed its signature or grants"
    )
    # Row types may only gain attributes at the end: a reader of the old ones still fits.
    old_types, new_types = by_type(described(old, ROW_TYPES)), by_type(described(new, ROW_TYPES))
    for name, attributes in old_types.items():
        assert new_types.get(name, [])[: len(attributes)] == attributes, name


def signature_change(old: tuple[Any, ...], new: tuple[Any, ...] | None) -> str | None:
    """Why a call of `old` may no longer work as before on `new`; None when it does.

    Rows are SIGNATURES rows. A function may only stay as it was, gain
    trailing arguments that all have a default, and be granted to more
    roles: then every call of the old one, by name or by position, still
    resolves to it, with the same result, for every role that could make it.
    Anything else is a change.
    """
    if new is None:
        return "dropped"
    _, result, args, how, roles = old
    _, new_result, new_args, new_how, new_roles = new
    if (new_result, new_how) != (result, how):
        return "its result or kind changed"
    if not set(roles) <= set(new_roles):
        return "a role lost its grant"
    if new_args[: len(args)] != args:
        return "its arguments changed"
    if any(default is None for _, _, default in new_args[len(args) :]):
        return "it gained an argument without a default"
    return None


OLD_FAIL = (
    "fail",
    "text",
    [
        ["job_id", "bigint", None],
        ["token", "uuid", None],
        ["error", "text", None],
        ["retry_in", "interval", "NULL::interval"],
    ],
    ["f", "false", "", "-", "true"],
    ["taskboard_admin", "taskboard_worker"],
)


def changed_fail(**replace: Any) -> tuple[Any, ...]:
    fields = dict(zip(("name", "result", "args", "how", "roles"), OLD_FAIL, strict=True))
    fields.update(replace)
    return tuple(fields.values())


@pytest.mark.parametrize(
    ("new", "allowed"),
    [
        (OLD_FAIL, True),
        (changed_fail(args=[*OLD_FAIL[2], ["retry", "boolean", "true"]]), True),
        (
            changed_fail(
                args=[
                    *OLD_FAIL[2],
                    ["retry", "boolean", "true"],
                    ["traceback", "text", "NULL::text"],
                ]
            ),
            True,
        ),
        (changed_fail(args=[*OLD_FAIL[2], ["retry", "boolean", None]]), False),
        (
            changed_fail(args=[*OLD_FAIL[2][:3], ["retry", "boolean", "true"], OLD_FAIL[2][3]]),
            False,
        ),
        (
            changed_fail(args=[*OLD_FAIL[2][:3], ["retry_in", "interval", "'00:00:01'::interval"]]),
            False,
        ),
        (changed_fail(args=[*OLD_FAIL[2][:3], ["delay", "interval", "NULL::interval"]]), False),
        (changed_fail(args=[*OLD_FAIL[2][:2], ["error", "jsonb", None], OLD_FAIL[2][3]]), False),
        (changed_fail(args=OLD_FAIL[2][:3]), False),
        (changed_fail(result="boolean"), False),
        (changed_fail(roles=["taskboard_admin"]), False),
        (changed_fail(roles=["taskboard_admin", "taskboard_producer", "taskboard_worker"]), True),
        (changed_fail(how=["f", "false", "", "-", "false"]), False),
        (None, False),
    ],
    ids=[
        "unchanged",
        "one trailing default",
        "two trailing defaults",
        "trailing without default",
        "inserted before the last",
        "default changed",
        "renamed",
        "type changed",
        "argument dropped",
        "result changed",
        "grant revoked",
        "granted to one more role",
        "no longer security definer",
        "dropped",
    ],
)
def test_only_trailing_arguments_with_defaults_and_more_grants_may_be_added(
    new: tuple[Any, ...] | None, allowed: bool
) -> None:
    assert (signature_change(OLD_FAIL, new) is None) is allowed


def test_the_fail_call_of_the_previous_drivers_runs_on_this_schema(
    make_database: MakeDatabase,
) -> None:
    """The 0.1.0 and 0.2.0 drivers' fail, by name with four arguments, as the worker role."""
    fail_of_0_2_0 = "SELECT taskboard.fail(job_id => %s, token => %s, error => %s, retry_in => %s)"
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("SET ROLE taskboard_producer")
        for max_attempts in (5, 5, 1):
            conn.execute(
                "SELECT taskboard.enqueue(task => 'old', queue => 'old-driver', max_attempts => %s)",
                [max_attempts],
            )
        conn.execute("SET ROLE taskboard_worker")
        claimed = conn.execute(
            "SELECT job_id, token FROM taskboard.claim(queue => 'old-driver', worker => 'w',"
            " batch => 3) ORDER BY job_id"
        ).fetchall()
        assert len(claimed) == 3
        answers = [
            conn.execute(fail_of_0_2_0, [job_id, token, "boom", retry_in]).fetchone()
            for (job_id, token), retry_in in zip(
                claimed, [None, dt.timedelta(seconds=30), None], strict=True
            )
        ]
        assert answers == [("queued",), ("queued",), ("dead",)]
        conn.execute("SET ROLE taskboard_producer")
        entries = [
            conn.execute(
                "SELECT (errors->-1) - 'at' FROM taskboard.get_job(job_id => %s)", [job_id]
            ).fetchone()
            for job_id, _ in claimed
        ]
        assert entries == [({"error": "boom", "attempt": 1, "worker": "w"},)] * 3


def by_type(rows: list[tuple[object, ...]]) -> dict[object, list[tuple[object, ...]]]:
    found: dict[object, list[tuple[object, ...]]] = {}
    for name, *attribute in rows:
        found.setdefault(name, []).append(tuple(attribute))
    return found


def fake_version(url: str, version: str) -> None:
    """Make taskboard.version() of the database at `url` answer `version`."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            f"CREATE OR REPLACE FUNCTION taskboard.version() RETURNS text"
            f" LANGUAGE sql IMMUTABLE AS $$ SELECT '{version}'::text $$"
        )


@pytest.mark.parametrize(
    ("version", "says"),
    [
        ("0.4.9", "run `taskboard migrate`"),
        (SUPPORTED_SCHEMA_VERSIONS[1], "upgrade the driver (pip install -U taskboard-pg)"),
    ],
)
def test_the_worker_names_the_schema_range_it_accepts(
    make_database: MakeDatabase, version: str, says: str
) -> None:
    url = make_database(deploy=True)
    oldest, beyond = SUPPORTED_SCHEMA_VERSIONS
    fake_version(url, version)
    app = make_app(url)
    with pytest.raises(SchemaVersionError) as refused:
        asyncio.run(app.worker(stop=asyncio.Event(), **FAST))
    assert str(refused.value) == (
        f"the database's taskboard schema is version {version}; this driver supports "
        f"{oldest} up to (not including) {beyond}: {says}"
    )


def test_the_previous_series_schema_runs_this_driver(make_database: MakeDatabase) -> None:
    """The oldest schema this driver supports: its worker and its enqueue work there."""
    oldest, _ = SUPPORTED_SCHEMA_VERSIONS
    url = make_database(release=oldest)
    app = make_app(url)
    ran: list[Any] = []

    @app.task("note")
    def note(ctx: SyncContext, payload: Any) -> None:
        ran.append((payload, ctx.fence))

    job_id = app.enqueue("note", {"n": 7})
    run_worker_until(app, finished(url, job_id))
    assert ran == [({"n": 7}, 1)]


@pytest.mark.parametrize(
    ("version", "supported"),
    [
        ("0.1.0", False),
        ("0.4.9", False),
        ("0.5.0", False),
        ("0.5.9", False),
        ("0.6.0", True),
        ("0.6.9", True),
        ("0.7.0", True),
        ("0.7.9", True),
        ("0.8.0", False),
        ("1.0.0", False),
        ("0.6", False),
        ("0.6.0-rc1", False),
    ],
)
def test_schema_supported(version: str, supported: bool) -> None:
    assert schema_supported(version) is supported
