"""db/schema.sql and db/functions/ against the `taskboard` schema a deploy leaves.

db/functions/NAME.sql is where a function is written (taskboard_dev.release
makes each release's Sqitch change from them): its contract as a leading `--`
block (its COMMENT ON FUNCTION), its definition as pg_get_functiondef prints
it, then its grants, with the roles named as a deploy with the default prefix
names them. `make schema` writes the pending release's scripts from them,
deploys the whole plan into a scratch database of the dev PostgreSQL 18,
writes what pg_dump prints of the schema (tables, types, indexes, views,
functions and grants) to db/schema.sql, and fails when a function the deploy
left differs from its file. `make schema-check` (inside `make test`) fails
when any of these files differs from what the deploy holds.

    python -m taskboard_dev.schema write URL   # write db/schema.sql from URL's schema
    python -m taskboard_dev.schema check URL   # exit 1 when a file differs
"""

from __future__ import annotations

import argparse
import difflib
import re
import subprocess
import sys
from pathlib import Path

import psycopg

from taskboard_dev.devdb import project_root
from taskboard_dev.server import flavour

SCHEMA_FILE = project_root() / "db" / "schema.sql"
FUNCTIONS_DIR = project_root() / "db" / "functions"
HEADER = (
    "-- The taskboard schema as deployed: written by `make schema` from pg_dump of a fresh\n"
    "-- deploy (never by hand); `make test` fails when it differs. The changes that build\n"
    "-- it are db/deploy/ in the order of db/sqitch.plan.\n"
)
# Lines that change from one dump to the next: pg_dump's random \restrict key and versions.
UNSTABLE = re.compile(r"^(\\restrict |\\unrestrict |-- Dumped (from|by) )")
FUNCTION_NOTE = (
    "-- The source of this function: edit it here. The header above is its COMMENT ON\n"
    "-- FUNCTION; `make schema` writes the next release's Sqitch change from this file.\n"
)
# The application roles in the order their grants are written: each may do what the
# ones before it may.
ROLE_ORDER = ("producer", "worker", "admin")

FUNCTIONS = """
SELECT p.proname,
       p.oid::pg_catalog.regprocedure::text,
       pg_catalog.pg_get_functiondef(p.oid),
       pg_catalog.obj_description(p.oid, 'pg_proc'),
       ARRAY(SELECT CASE a.grantee WHEN 0 THEN 'PUBLIC' ELSE pg_catalog.pg_get_userbyid(a.grantee) END
               FROM pg_catalog.aclexplode(
                        coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))) AS a
              WHERE a.privilege_type = 'EXECUTE' AND a.grantee <> p.proowner)
  FROM pg_catalog.pg_proc AS p
 WHERE p.pronamespace = 'taskboard'::pg_catalog.regnamespace
 ORDER BY p.proname, p.oid
"""


def dump(url: str) -> str:
    """The schema `taskboard` of the database at `url`, as pg_dump prints it
    (owners left out: they depend on the deploying login), normalised."""
    pg_dump = flavour("18").bin_dir / "pg_dump"
    result = subprocess.run(
        [str(pg_dump), "--schema-only", "--schema=taskboard", "--no-owner", "--dbname", url],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise SystemExit(f"pg_dump failed: {result.stderr.strip()}")
    lines = [line for line in result.stdout.splitlines() if not UNSTABLE.match(line)]
    text = re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip("\n")
    return HEADER + "\n" + text + "\n"


def grant_order(role: str) -> tuple[int, str]:
    kind = role.rsplit("_", 1)[-1]
    return (ROLE_ORDER.index(kind) if kind in ROLE_ORDER else len(ROLE_ORDER), role)


def function_file(signature: str, definition: str, comment: str, roles: list[str]) -> str:
    """One function's db/functions/NAME.sql: header, definition, grants."""
    header = "".join(
        f"-- {line}\n" if line.strip() else "--\n" for line in comment.strip("\n").splitlines()
    )
    grants = "".join(
        f"GRANT EXECUTE ON FUNCTION {signature} TO {role};\n"
        for role in sorted(roles, key=grant_order)
    )
    return (
        f"{header}\n{FUNCTION_NOTE}{definition.strip()};\n\n"
        f"REVOKE ALL ON FUNCTION {signature} FROM PUBLIC;\n{grants}"
    )


def functions(url: str) -> dict[str, str]:
    """db/functions/'s files of the database at `url`: NAME.sql to its text, by name."""
    with psycopg.connect(url) as conn:
        rows = conn.execute(FUNCTIONS).fetchall()
    files: dict[str, str] = {}
    for name, signature, definition, comment, roles in rows:
        if f"{name}.sql" in files:
            raise SystemExit(f"taskboard.{name} has two signatures: one file cannot hold both")
        if not (comment or "").strip():
            raise SystemExit(
                f"{signature} has no comment: the deploy script that creates it must set its "
                "contract header with COMMENT ON FUNCTION"
            )
        files[f"{name}.sql"] = function_file(signature, definition, comment, roles)
    return files


def generated(url: str) -> dict[Path, str]:
    """Every file `make schema` writes, by path, from the database at `url`."""
    return {
        SCHEMA_FILE: dump(url),
        **{FUNCTIONS_DIR / name: text for name, text in functions(url).items()},
    }


def stale(files: dict[Path, str]) -> list[Path]:
    """The files of db/functions/ whose function the database no longer has."""
    return sorted(set(FUNCTIONS_DIR.glob("*.sql")) - set(files))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m taskboard_dev.schema")
    parser.add_argument("command", choices=["write", "check"])
    parser.add_argument("url", help="a database holding a fresh deploy")
    args = parser.parse_args(argv)
    files = generated(args.url)
    root = project_root()
    if args.command == "write":  # db/schema.sql only: db/functions/ is the source
        if not SCHEMA_FILE.exists() or SCHEMA_FILE.read_text() != files[SCHEMA_FILE]:
            SCHEMA_FILE.write_text(files[SCHEMA_FILE])
            print(f"wrote {SCHEMA_FILE.relative_to(root)}")
        return 0
    differ = []
    for path, current in files.items():
        written = path.read_text() if path.exists() else ""
        if written == current:
            continue
        name = str(path.relative_to(root))
        differ.append(name)
        diff = difflib.unified_diff(
            written.splitlines(), current.splitlines(), name, "deployed", lineterm=""
        )
        print("\n".join(list(diff)[:60]), file=sys.stderr)
    differ += [f"{path.relative_to(root)} (of no function)" for path in stale(files)]
    if not differ:
        print("db/schema.sql and db/functions/ are what the deploy holds")
        return 0
    for name in differ:
        fix = (
            "run make schema and commit it"
            if name == str(SCHEMA_FILE.relative_to(root))
            else "the deploy does not give what the file says (db/next/ changed it, or "
            "the release's scripts are stale: run make schema)"
        )
        print(f"{name} differs from the deployed schema: {fix}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
