"""Upgrades are additive: this driver works on the previous release's schema, the previous
release's calls all work on this one, and the driver names the range it accepts."""

from __future__ import annotations

import asyncio
from typing import Any

import psycopg
import pytest

from conftest import MakeDatabase, Sqitch
from taskboard import SchemaVersionError, SyncContext
from taskboard.worker.startup import SUPPORTED_SCHEMA_VERSIONS, schema_supported
from test_worker import FAST, finished, make_app, run_worker_until

FIRST_RELEASE = "0.1.0"

# Every function of the schema, with what it takes and gives and who may call it.
SIGNATURES = """
    SELECT p.oid::regprocedure::text, pg_get_function_result(p.oid),
           pg_get_function_arguments(p.oid),
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


def at_first_release(make_database: MakeDatabase, sqitch: Sqitch) -> str:
    """A new database deployed up to the first release: its URL."""
    url = make_database(deploy=False)
    deployed = sqitch(url, "deploy", "--to", f"@v{FIRST_RELEASE}")
    assert deployed.returncode == 0, deployed.stdout + deployed.stderr
    return url


def test_every_call_of_the_first_release_works_the_same_on_this_one(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    old = at_first_release(make_database, sqitch)
    new = make_database(deploy=True)

    before, after = described(old, SIGNATURES), described(new, SIGNATURES)
    assert before, "no function at the first release"
    kept = [row for row in before if row in after]
    assert kept == before, "a function of the first release changed its signature or grants"
    # Row types may only gain attributes at the end: a reader of the old ones still fits.
    old_types, new_types = by_type(described(old, ROW_TYPES)), by_type(described(new, ROW_TYPES))
    for name, attributes in old_types.items():
        assert new_types.get(name, [])[: len(attributes)] == attributes, name


def by_type(rows: list[tuple[object, ...]]) -> dict[object, list[tuple[object, ...]]]:
    found: dict[object, list[tuple[object, ...]]] = {}
    for name, *attribute in rows:
        found.setdefault(name, []).append(tuple(attribute))
    return found


def test_this_driver_works_on_the_first_release_schema(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = at_first_release(make_database, sqitch)
    app = make_app(url)
    ran: list[Any] = []

    @app.task("note")
    def note(ctx: SyncContext, payload: Any) -> None:
        ran.append((payload, ctx.fence))

    job_id = app.enqueue("note", {"n": 7})
    run_worker_until(app, finished(url, job_id))
    assert ran == [({"n": 7}, None)]  # no fence before 0.3.0


def test_the_worker_names_the_schema_range_it_accepts(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    oldest, beyond = SUPPORTED_SCHEMA_VERSIONS
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            f"CREATE OR REPLACE FUNCTION taskboard.version() RETURNS text"
            f" LANGUAGE sql IMMUTABLE AS $$ SELECT '{beyond}'::text $$"
        )
    app = make_app(url)
    with pytest.raises(SchemaVersionError) as refused:
        asyncio.run(app.worker(stop=asyncio.Event(), **FAST))
    assert f"version {beyond}; this driver supports {oldest} up to (not including) {beyond}" in str(
        refused.value
    )


@pytest.mark.parametrize(
    ("version", "supported"),
    [
        ("0.1.0", True),
        ("0.2.0", True),
        ("0.2.7", True),
        ("0.0.9", False),
        ("0.3.0", True),
        ("0.3.9", True),
        ("0.4.0", False),
        ("1.0.0", False),
        ("0.2", False),
        ("0.2.0-rc1", False),
    ],
)
def test_schema_supported(version: str, supported: bool) -> None:
    assert schema_supported(version) is supported
