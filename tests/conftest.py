"""Fixtures shared by the tests: a server, fresh databases, and Sqitch.

The server is the one named by TASKBOARD_DATABASE_URL (`make test` sets it
for each PostgreSQL version), or else the dev PostgreSQL 18, started here.
"""

from __future__ import annotations

import fcntl
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import psycopg
import pytest
from psycopg import sql

from taskboard import install
from taskboard_dev import devdb
from tests.support.database import DB_DIR, TEST_DATABASE_PREFIX, MakeDatabase, Sqitch, run_sqitch
from tests.support.processes import Workers


@pytest.fixture(scope="session")
def server_url() -> str:
    """Base URL (the `postgres` database) of the server the tests use."""
    return devdb.base_url("18")


@pytest.fixture(scope="session")
def make_database(server_url: str) -> MakeDatabase:
    """Factory: `make_database(deploy=False) -> url` creates a fresh,
    uniquely named database; with deploy=True it holds a fresh
    `sqitch deploy --verify` of db/, with release="0.4.7" what
    `sqitch deploy --verify --to @v0.4.7` leaves. All are dropped when the
    session finishes (pytest_sessionfinish): a teardown here would count
    against the time limit of whichever test ran last."""
    created = _CREATED.setdefault(server_url, [])
    # The templates are the run's, shared by its processes (pytest -n): each is made
    # once, under the machine's deploy lock, by whichever process first needs it, and
    # written down for the process that ends the run to drop.

    def create(name: str, *, copy_of: str | None = None, template: bool = False) -> str:
        query = sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name))
        if copy_of is not None:
            query += sql.SQL(" TEMPLATE {}").format(sql.Identifier(copy_of))
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(query)
        if template:
            with TEMPLATES.open("a") as listed:
                listed.write(f"{server_url}\t{name}\n")
        else:
            created.append(name)
        return devdb.database_url(server_url, name)

    def exists(name: str) -> bool:
        with psycopg.connect(server_url, autocommit=True) as conn:
            found = conn.execute("SELECT FROM pg_database WHERE datname = %s", [name])
            return found.fetchone() is not None

    def deployed_template() -> str:
        # One real `sqitch deploy --verify` per run; every deployed database after
        # that is a copy of it, registry included.
        name = f"{TEST_DATABASE_PREFIX}template_{RUN}"
        with deploying():
            if not exists(name):
                if not (DB_DIR / "sqitch.plan").is_file():
                    pytest.fail(f"{DB_DIR}/sqitch.plan does not exist: nothing to deploy")
                result = run_sqitch(create(name, template=True), "deploy", "--verify")
                if result.returncode != 0:
                    pytest.fail(f"sqitch deploy failed:\n{result.stdout}{result.stderr}")
        return name

    def release_template(release: str) -> str:
        # One `sqitch deploy --verify --to @vX` per release and run, each from the
        # release before it on one database (the same changes in the same order as a
        # deploy from nothing), copied as it stands at each release.
        releases = install.releases(DB_DIR)
        if release not in releases:
            pytest.fail(f"no release {release} in {DB_DIR}/sqitch.plan")
        chain = f"{TEST_DATABASE_PREFIX}chain_{RUN}"
        at = {
            step: f"{TEST_DATABASE_PREFIX}release_{RUN}_{step.replace('.', '_')}"
            for step in releases
        }
        with deploying():
            if exists(at[release]):
                return at[release]
            if not exists(chain):
                create(chain, template=True)
            for step in releases[: releases.index(release) + 1]:
                if exists(at[step]):
                    continue  # the chain has passed it
                url = devdb.database_url(server_url, chain)
                result = run_sqitch(url, "deploy", "--verify", "--to", f"@v{step}")
                if result.returncode != 0:
                    pytest.fail(
                        f"sqitch deploy --to @v{step} failed:\n{result.stdout}{result.stderr}"
                    )
                create(at[step], copy_of=chain, template=True)
        return at[release]

    def make(*, deploy: bool = False, release: str | None = None) -> str:
        name = TEST_DATABASE_PREFIX + uuid.uuid4().hex[:12]
        if release is not None:
            return create(name, copy_of=release_template(release))
        return create(name, copy_of=deployed_template() if deploy else None)

    return make


@contextmanager
def deploying() -> Iterator[None]:
    """One first deploy at a time on the machine: the parallel test processes (pytest -n)
    would otherwise create the cluster's shared roles at once, and one of them fail."""
    lock = devdb.project_root() / ".taskboard" / "deploy.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with lock.open("a") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(held, fcntl.LOCK_UN)


_CREATED: dict[str, list[str]] = {}  # server URL -> the databases make_database created
# The run's name, in the names of its templates: set by the first process (with
# pytest -n, the controller), inherited by the processes it starts.
RUN = os.environ.setdefault("TASKBOARD_TEST_RUN", uuid.uuid4().hex[:12])
TEMPLATES = devdb.project_root() / ".taskboard" / f"test-run-{RUN}.templates"


# The SQL suites: each of their tests runs on PostgreSQL 15 too (marker pg15), but for
# the files of DRIVER_FILES.
SQL_SUITES = ("sql", "release")
# Files of the SQL suites whose tests are about the driver, the docs or the release files,
# and say nothing of the server's version: they run on 18 only, as the driver's suites do.
DRIVER_FILES = {
    ("release", "test_docs_examples.py"),  # the docs' Python blocks, through the driver
    ("release", "test_testing_plugin.py"),  # the pytest plugin, as a user's suite loads it
    ("release", "test_readme.py"),  # the README's length and links
    ("release", "test_release.py"),  # the release manifests beside the plan
}
TESTS_DIR = Path(__file__).parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark pg15 every test of the SQL suites but DRIVER_FILES': `make test-pg15` runs
    `-m pg15`."""
    for item in items:
        if item.path.is_relative_to(TESTS_DIR):
            parts = item.path.relative_to(TESTS_DIR).parts
            if len(parts) > 1 and parts[0] in SQL_SUITES and parts not in DRIVER_FILES:
                item.add_marker(pytest.mark.pg15)


def utf8(text: str) -> str:
    """`text` with any lone surrogate written as its escape: UTF-8 encodable."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """A report's captured output in UTF-8: tests that send lone surrogates (which jsonb
    refuses) log them, and pytest -n sends each report to the controller as UTF-8."""
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    report.sections = [(title, utf8(content)) for title, content in report.sections]
    if isinstance(report.longrepr, str):
        report.longrepr = utf8(report.longrepr)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Drop the databases make_database created, outside every test's time limit; the
    run's templates when the whole run is over (in pytest -n, its controller's end)."""
    worker = hasattr(session.config, "workerinput")
    for server_url, names in _CREATED.items():
        with psycopg.connect(server_url, autocommit=True) as conn:
            for name in names:
                drop(conn, name)
    _CREATED.clear()
    if worker:
        return
    if TEMPLATES.exists():
        for line in TEMPLATES.read_text().splitlines():
            url, name = line.split("\t")
            with psycopg.connect(url, autocommit=True) as conn:
                drop(conn, name)
        TEMPLATES.unlink()


def drop(conn: psycopg.Connection[Any], name: str) -> None:
    conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


@pytest.fixture(scope="session")
def sqitch() -> Sqitch:
    """`sqitch(url, "status")`: run sqitch in db/ against the database at `url`."""
    return run_sqitch


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[Workers]:
    """Starts worker processes; afterwards ends those still running and prints every log."""
    started = Workers(tmp_path)
    try:
        yield started
    finally:
        started.close()
