"""db/schema.sql: the whole current `taskboard` schema, read from the database.

`make schema` deploys into a scratch database of the dev PostgreSQL 18 and
writes what pg_dump prints of the schema (tables, types, indexes, views,
functions and grants), so that a reviewer reads the schema as it stands
rather than adding up the Sqitch changes that built it. `make schema-check`
(inside `make test`) fails when db/schema.sql differs from that.

    python -m taskboard_dev.schema write URL   # write db/schema.sql from URL's schema
    python -m taskboard_dev.schema check URL   # exit 1 when db/schema.sql differs
"""

from __future__ import annotations

import argparse
import difflib
import re
import subprocess
import sys

from taskboard_dev.devdb import project_root
from taskboard_dev.server import flavour

SCHEMA_FILE = project_root() / "db" / "schema.sql"
HEADER = (
    "-- The taskboard schema as deployed: written by `make schema` from pg_dump of a fresh\n"
    "-- deploy (never by hand); `make test` fails when it differs. The changes that build\n"
    "-- it are db/deploy/ in the order of db/sqitch.plan.\n"
)
# Lines that change from one dump to the next: pg_dump's random \restrict key and versions.
UNSTABLE = re.compile(r"^(\\restrict |\\unrestrict |-- Dumped (from|by) )")


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m taskboard_dev.schema")
    parser.add_argument("command", choices=["write", "check"])
    parser.add_argument("url", help="a database holding a fresh deploy")
    args = parser.parse_args(argv)
    current = dump(args.url)
    if args.command == "write":
        SCHEMA_FILE.write_text(current)
        print(f"wrote {SCHEMA_FILE.relative_to(project_root())}")
        return 0
    written = SCHEMA_FILE.read_text() if SCHEMA_FILE.exists() else ""
    if written == current:
        print("db/schema.sql is what the deploy holds")
        return 0
    diff = difflib.unified_diff(
        written.splitlines(), current.splitlines(), "db/schema.sql", "deployed", lineterm=""
    )
    print("\n".join(list(diff)[:60]), file=sys.stderr)
    print(
        "db/schema.sql differs from the deployed schema: run make schema and commit it",
        file=sys.stderr,
    )
    return 1


if __name__ == "__main__":
    sys.exit(main())
