"""The README's examples say what the software does.

The first Python example runs as written under `taskboard worker` against
the installed wheel in `make test-installed` (dev/taskboard_dev/installed.py);
these check the psql session against the database itself.
"""

from __future__ import annotations

import re

import psycopg

from conftest import DB_DIR, MakeDatabase

README = DB_DIR.parent / "README.md"


def psql_record(call: str) -> list[str]:
    """The field names of the README's psql `\\gx` record of `call`."""
    text = README.read_text()
    start = text.index(f"SELECT * FROM {call}")
    record = text[start:].split("\n\n", 1)[0]
    return re.findall(r"^(\w+)\s+\|", record, flags=re.MULTILINE)


def test_the_psql_session_shows_every_column_claim_returns(make_database: MakeDatabase) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url) as conn:
        cursor = conn.execute(
            "SELECT * FROM taskboard.claim(queue => 'readme', worker => 'readme')"
        )
        assert cursor.description is not None
        columns = [column.name for column in cursor.description]
    assert psql_record("taskboard.claim(") == columns
