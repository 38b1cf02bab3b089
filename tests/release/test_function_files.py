"""db/functions/ is where a reviewer reads each function: prove it is what a fresh deploy installs."""

from __future__ import annotations

import re
from pathlib import Path

import psycopg

from taskboard import install
from tests.support.database import MakeDatabase

DB = Path(__file__).resolve().parents[2] / "db"
FUNCTIONS = DB / "functions"
CREATE = re.compile(r"CREATE OR REPLACE FUNCTION taskboard\.(\w+)\(", re.IGNORECASE)

INSTALLED = """
    SELECT p.proname, pg_get_functiondef(p.oid), coalesce(p.proacl::text, '')
      FROM pg_proc AS p
     WHERE p.pronamespace = 'taskboard'::regnamespace
     ORDER BY p.proname, p.oid
"""


def installed(conn: psycopg.Connection) -> dict[str, list[tuple[str, str]]]:
    found: dict[str, list[tuple[str, str]]] = {}
    for name, definition, acl in conn.execute(INSTALLED):
        found.setdefault(name, []).append((definition, acl))
    return found


def test_every_function_file_defines_exactly_the_function_it_is_named_after() -> None:
    files = sorted(FUNCTIONS.glob("*.sql"))
    assert files, "db/functions/ holds no function"
    for path in files:
        assert CREATE.findall(path.read_text()) == [path.stem], path.name


def test_no_function_name_has_two_signatures(make_database: MakeDatabase) -> None:
    with psycopg.connect(make_database(deploy=True)) as conn:
        for name, versions in installed(conn).items():
            assert len(versions) == 1, f"taskboard.{name} has {len(versions)} signatures"


def test_function_files_and_a_fresh_deploy_define_the_same_functions(
    make_database: MakeDatabase,
) -> None:
    with psycopg.connect(make_database(deploy=True)) as conn:
        deployed = installed(conn)
        assert sorted(deployed) == sorted(p.stem for p in FUNCTIONS.glob("*.sql"))

        # Replaying every file over the deployed schema must change nothing:
        # not a body, a signature, an attribute nor a grant. A file with a
        # different signature would add an overload and show up here too.
        for path in sorted(FUNCTIONS.glob("*.sql")):
            conn.execute(install.render(path.read_text(), install.DEFAULT_PREFIX))
        assert installed(conn) == deployed
        conn.rollback()


def test_no_unreleased_deploy_script_claims_to_be_a_copy_of_a_function_file() -> None:
    # db/functions/ is written from a deploy; the released scripts that still say
    # they hold its text are checksummed and stay as they were released.
    for change in install.plan(DB):
        deploy = (DB / "deploy" / change.script).read_text()
        assert "\\i" not in deploy, (
            f"deploy/{change.script} includes a file instead of holding its text"
        )
        if change.release is None:
            assert "functions/" not in deploy, f"deploy/{change.script} names db/functions/"
