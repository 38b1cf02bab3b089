"""The dev database tooling: the server, pgTAP, fresh databases, Sqitch."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import psycopg
import pytest

from taskboard_dev import devdb

OLDEST_SUPPORTED_VERSION_NUM = 150000  # PostgreSQL 15

MakeDatabase = Callable[..., str]


def test_server_runs_postgresql_15_or_newer(server_url: str) -> None:
    with psycopg.connect(server_url) as conn:
        row = conn.execute("SELECT current_setting('server_version_num')::int").fetchone()
    assert row is not None and row[0] >= OLDEST_SUPPORTED_VERSION_NUM


def test_pgtap_is_available_on_the_server(server_url: str) -> None:
    with psycopg.connect(server_url) as conn:
        row = conn.execute(
            "SELECT default_version FROM pg_available_extensions WHERE name = 'pgtap'"
        ).fetchone()
    assert row is not None, "pgtap is not in pg_available_extensions"


def test_start_prints_only_the_server_url(server_url: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "taskboard_dev.devdb", "start"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout == server_url + "\n"


def test_recreate_db_replaces_a_database_in_use_and_creates_pgtap(server_url: str) -> None:
    name = "taskboard_t_recreate"
    url = devdb.recreate_database(name)
    try:
        with psycopg.connect(url, autocommit=True) as held:
            again = devdb.recreate_database(name)  # drops it WITH (FORCE)
            with pytest.raises(psycopg.OperationalError):
                held.execute("SELECT 1")
        assert again == url
        with psycopg.connect(url) as conn:
            extensions = {r[0] for r in conn.execute("SELECT extname FROM pg_extension")}
        assert "pgtap" in extensions
    finally:
        with psycopg.connect(server_url, autocommit=True) as conn:
            conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


def test_make_database_gives_fresh_databases(make_database: MakeDatabase) -> None:
    first, second = make_database(), make_database()
    assert first != second
    for url in (first, second):
        with psycopg.connect(url) as conn:
            row = conn.execute(
                "SELECT current_database(), count(*) FROM pg_namespace"
                " WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'"
            ).fetchone()
        assert row is not None
        assert url.split("?")[0].endswith("/" + str(row[0]))
        assert row[1] == 1  # public only


def test_sqitch_deploys_over_the_unix_socket(
    make_database: MakeDatabase,
    sqitch: Callable[..., subprocess.CompletedProcess[str]],
    tmp_path: Path,
) -> None:
    url = make_database()
    for argv in (
        ["sqitch", "init", "probe", "--engine", "pg"],
        ["sqitch", "add", "first", "-n", "An empty change from the Sqitch template"],
    ):
        subprocess.run(argv, cwd=tmp_path, capture_output=True, check=True)
    result = sqitch(url, "deploy", "--verify", project=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    with psycopg.connect(url) as conn:
        changes = [r[0] for r in conn.execute("SELECT change FROM sqitch.changes")]
    assert changes == ["first"]


@pytest.mark.parametrize(
    ("base", "name", "expected"),
    [
        (
            "postgresql://postgres@/postgres?host=/srv/app/.taskboard/pg18",
            "taskboard_test",
            "postgresql://postgres@/taskboard_test?host=/srv/app/.taskboard/pg18",
        ),
        (
            "postgres://u:secret@db.internal:5433/app?sslmode=require&dbname=app",
            "taskboard_test",
            "postgres://u:secret@db.internal:5433/taskboard_test?sslmode=require",
        ),
    ],
)
def test_database_url_changes_only_the_database(base: str, name: str, expected: str) -> None:
    assert devdb.database_url(base, name) == expected


def test_sqitch_target_keeps_the_socket_directory() -> None:
    url = "postgresql://postgres@/taskboard_test?host=/srv/app/.taskboard/pg18"
    assert devdb.sqitch_target(url) == (
        "db:pg://postgres@/taskboard_test?host=/srv/app/.taskboard/pg18"
    )


def test_libpq_env_says_what_the_url_says() -> None:
    env = devdb.libpq_env("postgresql://postgres@/taskboard_test?host=/srv/app/.taskboard/pg18")
    assert env == {
        "PGUSER": "postgres",
        "PGDATABASE": "taskboard_test",
        "PGHOST": "/srv/app/.taskboard/pg18",
    }
