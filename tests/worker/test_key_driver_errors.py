"""Concurrency keys meet an older schema, and an empty key: set_key_limit on 0.4.7 raises
SchemaVersionError naming the release (the command line says it in one line), and an
empty key's message says NULL is how a job has no key."""

from __future__ import annotations

import psycopg
import pytest

from taskboard import SchemaVersionError, Taskboard
from tests.support.cli import error_line, run
from tests.support.database import MakeDatabase, Sqitch
from tests.support.inprocess import make_app


def schema_0_4_7(make_database: MakeDatabase, sqitch: Sqitch) -> str:
    url = make_database()
    deployed = sqitch(url, "deploy", "--to", "@v0.4.7")
    assert deployed.returncode == 0, deployed.stderr
    return url


def test_set_key_limit_on_a_0_4_7_schema_raises_schema_version_error(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    """enqueue with a key says which release it needs; set_key_limit lets psycopg's
    UndefinedFunction through ("function taskboard.set_key_limit(queue => unknown,
    max_running_per_key => smallint) does not exist")."""
    url = schema_0_4_7(make_database, sqitch)
    app = Taskboard(make_app(url).settings)
    try:
        with pytest.raises(SchemaVersionError, match=r"0\.4\.8"):
            app.set_key_limit("q", 1)
    finally:
        app.close()


def test_the_cli_key_limit_on_a_0_4_7_schema_names_the_release_it_needs(
    make_database: MakeDatabase, sqitch: Sqitch
) -> None:
    url = schema_0_4_7(make_database, sqitch)
    done = run(url, "key-limit", "q", "1")
    assert done.returncode != 0
    line = error_line(done)
    assert "0.4.8" in line and "HINT" not in line, line


def test_an_empty_concurrency_key_is_refused_without_saying_null_is_refused(
    make_database: MakeDatabase,
) -> None:
    """NULL is how a job has no key; the message for '' says NULL is refused too."""
    url = make_database(deploy=True)
    with psycopg.connect(url, autocommit=True) as conn:
        with pytest.raises(psycopg.errors.InvalidParameterValue) as refused:
            conn.execute("SELECT taskboard.enqueue('t', concurrency_key => '')")
        conn.execute("SELECT taskboard.enqueue('t', concurrency_key => NULL)")
    assert "NULL" not in str(refused.value).splitlines()[0], refused.value
