"""make schema-check: db/schema.sql is checked against a fresh deploy.

`make test` runs the check itself on PostgreSQL 18 (the version the file is
written from); these tests show that the check can fail and names the fix.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import psycopg
import pytest

from taskboard_dev import schema
from tests.support.database import MakeDatabase


def test_the_check_fails_when_the_file_differs_and_says_how_to_fix_it(
    make_database: MakeDatabase,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = make_database(deploy=True)
    written = tmp_path / "schema.sql"
    monkeypatch.setattr(schema, "SCHEMA_FILE", written)
    monkeypatch.setattr(schema, "project_root", lambda: tmp_path)

    assert schema.main(["write", url]) == 0
    assert "CREATE FUNCTION taskboard.claim(" in written.read_text()
    assert "\\restrict" not in written.read_text()
    assert schema.main(["check", url]) == 0, "two dumps of one deploy are the same"

    written.write_text(written.read_text().replace("FOR UPDATE SKIP LOCKED", "FOR UPDATE", 1))
    assert schema.main(["check", url]) == 1
    err = capsys.readouterr().err
    assert "run make schema and commit it" in err
    assert "+" in err and "SKIP LOCKED" in err


def test_the_check_names_a_function_file_that_differs_or_is_left_over(
    make_database: MakeDatabase,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    url = make_database(deploy=True)
    functions = tmp_path / "functions"
    shutil.copytree(schema.FUNCTIONS_DIR, functions)
    monkeypatch.setattr(schema, "SCHEMA_FILE", tmp_path / "schema.sql")
    monkeypatch.setattr(schema, "FUNCTIONS_DIR", functions)
    monkeypatch.setattr(schema, "project_root", lambda: tmp_path)

    assert schema.main(["write", url]) == 0
    pause = (functions / "pause.sql").read_text()
    assert pause.startswith("-- pause(queue) -> boolean\n-- Pauses `queue`")
    assert "CREATE OR REPLACE FUNCTION taskboard.pause(queue text)\n" in pause
    assert pause.endswith(
        "REVOKE ALL ON FUNCTION taskboard.pause(text) FROM PUBLIC;\n"
        "GRANT EXECUTE ON FUNCTION taskboard.pause(text) TO taskboard_admin;\n"
    )
    assert schema.main(["check", url]) == 0, "the files are what the deploy holds"
    capsys.readouterr()

    (functions / "pause.sql").write_text(pause.replace("SET paused = true", "SET paused = false"))
    (functions / "gone.sql").write_text("-- a function the database no longer has\n")
    assert schema.main(["check", url]) == 1
    err = capsys.readouterr().err
    assert "functions/pause.sql differs from the deployed schema: the deploy does not give" in err
    assert "run make schema" in err
    assert "functions/gone.sql (of no function) differs" in err
    assert "schema.sql differs" not in err


def test_a_function_without_its_contract_header_as_comment_is_refused(
    make_database: MakeDatabase, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = make_database(deploy=True)
    monkeypatch.setattr(schema, "SCHEMA_FILE", tmp_path / "schema.sql")
    monkeypatch.setattr(schema, "project_root", lambda: tmp_path)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("COMMENT ON FUNCTION taskboard.resume(text) IS NULL")

    with pytest.raises(SystemExit, match=r"taskboard\.resume\(text\) has no comment"):
        schema.main(["write", url])
    assert not (tmp_path / "schema.sql").exists()
