"""make schema-check: db/schema.sql is checked against a fresh deploy.

`make test` runs the check itself on PostgreSQL 18 (the version the file is
written from); these tests show that the check can fail and names the fix.
"""

from __future__ import annotations

from pathlib import Path

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
