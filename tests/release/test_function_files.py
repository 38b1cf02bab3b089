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


def code_lines(name: str) -> int:
    """The lines of db/functions/NAME.sql that are SQL: comments and blank lines left out."""
    lines = (FUNCTIONS / f"{name}.sql").read_text().splitlines()
    return sum(1 for line in lines if line.strip() and not line.strip().startswith("--"))


LEASE_CORE = (
    "grant_leases",
    "renew",
    "renew_many",
    "complete",
    "complete_many",
    "complete_held",
    "discard_held",
    "fail",
    "release",
)
PICKERS = (
    "pick_queued",
    "pick_expired",
    "pick_keyed",
    "bury_spent",
    "queue_room",
    "window_room",
    "full_keys",
    "rate_full_keys",
)
RAISES_22023 = re.compile(r"invalid_parameter_value|'22023'")


def test_the_lease_core_reads_in_one_sitting() -> None:
    """The functions that write a held job's lease, the grant and a discarding queue's
    delete included, stay small enough to review together; claim only dispatches, and
    each picker is short."""
    assert sum(code_lines(name) for name in LEASE_CORE) <= 410
    assert code_lines("claim") <= 150
    for name in PICKERS:
        assert code_lines(name) <= 150, name


def test_only_the_shared_checks_raise_22023() -> None:
    """A check that raises 22023 is written once: in a check_* function, which every
    other function calls."""
    raising: dict[str, int] = {}
    for path in sorted(FUNCTIONS.glob("*.sql")):
        code = [
            line
            for line in path.read_text().splitlines()
            if line.strip() and not line.strip().startswith("--")
        ]
        found = sum(1 for line in code if RAISES_22023.search(line))
        if found:
            raising[path.stem] = found
    assert raising, "no function raises 22023"
    assert all(name.startswith("check_") for name in raising), sorted(raising)
    assert sum(raising.values()) <= 25, raising
