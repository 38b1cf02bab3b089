"""A release as one Sqitch change, written from db/functions/.

db/functions/NAME.sql is where a function is written, and the only place: its
contract (the `--` header, which becomes its COMMENT ON FUNCTION), its
definition, its grants (to the roles of the default prefix). A release is one
Sqitch change, a rework of `version` (so that `sqitch verify` checks the last
release's scripts only), the plan's only change after the last tag, whose
scripts this module writes, never a person:

- deploy creates or replaces each function whose file differs from what the
  last release deployed, creates the new ones and drops those whose file is
  gone, with the hand-written table changes of db/next/deploy.sql first;
- revert starts with the guard (a revert that would drop data is refused
  unless drop_data is yes), puts back the last release's definitions, drops
  the new functions, then runs db/next/revert.sql;
- verify checks each function the release wrote: its body, owner, security,
  search_path and grants, and that the dropped ones are gone.

What the last release deployed is read from a scratch database of the dev
PostgreSQL 18 that `sqitch deploy --to @vLAST` fills (the same rendering as
db/functions/, taskboard_dev.schema). Like pgmq's `pgmq.sql` with its generated
`pgmq--X--Y.sql`, the sources are read as they stand and each release holds
only the difference; released scripts are never rewritten (db/TAG.sha256).

    python -m taskboard_dev.release write 0.7.0 "what it brings"   # start release 0.7.0
    python -m taskboard_dev.release write     # write the pending release's scripts again
    python -m taskboard_dev.release check     # exit 1 when they are stale
    python -m taskboard_dev.release tag       # tag it, write db/vX.Y.Z.sha256
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from taskboard_dev import devdb, schema

DB = devdb.project_root() / "db"
FUNCTIONS_DIR = DB / "functions"
NEXT_DIR = DB / "next"  # hand-written table changes of the pending release, if any
SCRATCH_DB = "taskboard_release"
CHANGE = "version"  # the change each release reworks
VERSION_ANSWER = re.compile(r"SELECT '(\d+\.\d+\.\d+)'::text")
PLANNER = {"SQITCH_FULLNAME": "Taskboard", "SQITCH_EMAIL": "taskboard@example.invalid"}
ROLE_KINDS = ("producer", "worker", "admin")
DEFAULT_ROLE = re.compile(r"^taskboard_(producer|worker|admin)$")


class ReleaseError(Exception):
    """Why the release's scripts cannot be written: one line for the developer."""


@dataclass(frozen=True)
class Function:
    """One db/functions/ file, read back into its parts."""

    name: str
    signature: str  # as regprocedure prints it: taskboard.claim(text,text,integer,interval)
    comment: str
    definition: str  # CREATE OR REPLACE FUNCTION ... $function$, without the semicolon
    roles: tuple[str, ...]  # the role kinds granted EXECUTE: producer, worker, admin

    @property
    def body(self) -> str | None:
        """The text between the definition's dollar quotes (pg_proc.prosrc): $function$,
        or $functionx$ when the body holds $function (as pg_get_functiondef picks)."""
        quote = re.search(r"\nAS (\$function[x]*\$)\n", self.definition)
        if quote is None or not self.definition.endswith(quote[1]):
            return None
        return self.definition[quote.end() - 1 : -len(quote[1])]

    @property
    def security_definer(self) -> bool:
        header = re.split(r"\nAS \$function[x]*\$\n", self.definition, maxsplit=1)[0]
        return re.search(r"\bSECURITY DEFINER\b", header) is not None


def parse(name: str, text: str) -> Function:
    """db/functions/NAME.sql as its parts; ReleaseError naming what is out of place."""
    where = f"db/functions/{name}.sql"
    header, sep, rest = text.partition("\n\n")
    if not sep or any(not line.startswith("--") for line in header.splitlines()):
        raise ReleaseError(
            f"{where}: it must open with its contract, `--` lines, then a blank line"
        )
    comment = "\n".join(re.sub(r"^-- ?", "", line) for line in header.splitlines())
    if not rest.startswith(schema.FUNCTION_NOTE):
        raise ReleaseError(
            f"{where}: the note under its contract is missing: {schema.FUNCTION_NOTE!r}"
        )
    rest = rest[len(schema.FUNCTION_NOTE) :]
    definition, sep, grants = rest.partition(";\n\nREVOKE ALL ON FUNCTION ")
    if not sep or not definition.startswith("CREATE OR REPLACE FUNCTION "):
        raise ReleaseError(f"{where}: a CREATE OR REPLACE FUNCTION, then its REVOKE and GRANTs")
    signature, _, grant_lines = grants.partition(" FROM PUBLIC;\n")
    roles = []
    for line in grant_lines.splitlines():
        prefix = f"GRANT EXECUTE ON FUNCTION {signature} TO "
        role = line[len(prefix) : -1] if line.startswith(prefix) and line.endswith(";") else ""
        kind = DEFAULT_ROLE.match(role)
        if not kind:
            raise ReleaseError(f"{where}: {line!r} grants to no role of the default prefix")
        roles.append(kind[1])
    if "$comment$" in comment:
        raise ReleaseError(f"{where}: its contract may not contain $comment$")
    return Function(name, signature, comment, definition, tuple(roles))


def sources() -> dict[str, Function]:
    """db/functions/ as it stands, by name."""
    return {
        path.stem: parse(path.stem, path.read_text())
        for path in sorted(FUNCTIONS_DIR.glob("*.sql"))
    }


# -- the plan -------------------------------------------------------------------------


def plan_lines() -> list[str]:
    return (DB / "sqitch.plan").read_text().splitlines()


def last_tag() -> str:
    tags = [line.split()[0][2:] for line in plan_lines() if line.startswith("@v")]
    if not tags:
        raise ReleaseError("db/sqitch.plan has no release yet")
    return tags[-1]


def pending() -> list[str]:
    """The names of the changes after the last tag, in plan order."""
    names: list[str] = []
    for line in plan_lines():
        if line.startswith("@"):
            names = []
        elif line.strip() and not line.startswith(("%", "#")):
            names.append(re.split(r"[\s\[]", line, maxsplit=1)[0])
    return names


def pending_release() -> str | None:
    """The release the plan's pending change makes (what db/functions/version.sql
    answers); None when the last tag ends the plan. ReleaseError when anything but one
    rework of `version` follows the tag."""
    names = pending()
    if not names:
        return None
    if names != [CHANGE]:
        raise ReleaseError(
            f"after @v{last_tag()} the plan must hold one change, a rework of {CHANGE}, not {names}"
        )
    return answer()


def answer() -> str:
    match = VERSION_ANSWER.search((FUNCTIONS_DIR / "version.sql").read_text())
    if not match:
        raise ReleaseError("db/functions/version.sql must answer a release: SELECT 'X.Y.Z'::text")
    return match[1]


def start(release: str, note: str) -> None:
    """Release `release` begins: version.sql answers it, and the plan reworks `version`."""
    path = FUNCTIONS_DIR / "version.sql"
    path.write_text(VERSION_ANSWER.sub(f"SELECT '{release}'::text", path.read_text()))
    done = subprocess.run(
        ["sqitch", "rework", CHANGE, "-n", f"Release {release}: {note}"],
        cwd=DB,
        env={**os.environ, **PLANNER},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise ReleaseError(f"sqitch rework {CHANGE} failed: {done.stderr.strip()}")


# -- what the last release deployed ---------------------------------------------------


# What released_functions read, by project, tag and the plan up to that tag.
_RELEASED: dict[tuple[Path, str, str], dict[str, Function]] = {}


def released_functions(tag: str) -> dict[str, Function]:
    """The functions `sqitch deploy --to @vTAG` leaves, rendered and read back.

    Read once per process for a project and its plan up to the tag: a released
    change is never edited (tests/release/test_release.py), so the same plan
    up to a tag deploys the same functions.
    """
    lines = plan_lines()
    marks = [i for i, line in enumerate(lines) if line.split()[:1] == [f"@v{tag}"]]
    key = (DB, tag, "\n".join(lines[: marks[0] + 1]) if marks else "")
    if marks and key in _RELEASED:
        return dict(_RELEASED[key])
    found = _deployed_functions(tag)
    if marks:
        _RELEASED[key] = dict(found)
    return found


def _deployed_functions(tag: str) -> dict[str, Function]:
    url = devdb.recreate_database(SCRATCH_DB, pgtap=False)
    done = subprocess.run(
        ["sqitch", "deploy", "--to", f"@v{tag}", "--target", devdb.sqitch_target(url)],
        cwd=DB,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise ReleaseError(f"sqitch deploy --to @v{tag} failed: {done.stderr.strip()}")
    return functions_of(url)


def functions_of(url: str) -> dict[str, Function]:
    """The functions of the database at `url`, rendered as db/functions/ and read back."""
    return {
        name[: -len(".sql")]: parse(name[: -len(".sql")], text)
        for name, text in schema.functions(url).items()
    }


# -- the scripts ----------------------------------------------------------------------

OPEN = """BEGIN;

\\set owner_role :prefix _owner
\\set producer_role :prefix _producer
\\set worker_role :prefix _worker
\\set admin_role :prefix _admin

-- The deploying role holds the owner for this transaction only.
GRANT :"owner_role" TO CURRENT_USER;
SET LOCAL ROLE :"owner_role";
"""
CLOSE = """
RESET ROLE;
REVOKE :"owner_role" FROM CURRENT_USER;

COMMIT;
"""
ALL_ROLES = ", ".join(f':"{kind}_role"' for kind in ROLE_KINDS)


def create(function: Function) -> str:
    grants = "".join(
        f'GRANT EXECUTE ON FUNCTION {function.signature} TO :"{kind}_role";\n'
        for kind in function.roles
    )
    return (
        f"\n-- taskboard.{function.name}\n{function.definition};\n\n"
        f"COMMENT ON FUNCTION {function.signature} IS\n$comment${function.comment}$comment$;\n\n"
        f"REVOKE ALL ON FUNCTION {function.signature} FROM PUBLIC, {ALL_ROLES};\n{grants}"
    )


def drop(function: Function) -> str:
    return f"\n-- taskboard.{function.name}, no more\nDROP FUNCTION {function.signature};\n"


def hand_written(kind: str) -> str:
    path = NEXT_DIR / f"{kind}.sql"
    if not path.exists():
        return ""
    return f"\n-- db/next/{kind}.sql, written by hand\n{path.read_text().strip()}\n"


def differences(
    before: dict[str, Function], after: dict[str, Function]
) -> tuple[list[Function], list[Function]]:
    """(what `after` creates or replaces, what it drops) to go from `before`."""
    changed = [f for name, f in sorted(after.items()) if before.get(name) != f]
    dropped = [
        f
        for name, f in sorted(before.items())
        if name not in after or after[name].signature != f.signature
    ]
    return changed, dropped


def checked_by_released_verify(function: Function) -> bool:
    """Whether a released change other than `version` verifies `function`: `sqitch verify`
    runs every change's last verify script, so such a function must stay."""
    pattern = re.compile(rf"\btaskboard\.{re.escape(function.name)}\(")
    return any(
        pattern.search(path.read_text())
        for path in sorted((DB / "verify").glob("*.sql"))
        if not path.stem.startswith(CHANGE)
    )


def deploy_script(release: str, before: dict[str, Function], after: dict[str, Function]) -> str:
    changed, dropped = differences(before, after)
    kept = [f.signature for f in dropped if checked_by_released_verify(f)]
    if kept:
        raise ReleaseError(
            f"{', '.join(kept)} cannot be dropped or change its arguments: a released change's "
            "verify script checks it, and sqitch verify runs it (keep its file, and its "
            "signature)"
        )
    return (
        f"-- Deploy taskboard:{CHANGE} to pg\n--\n"
        f"-- Release {release}: written by `make schema` from the function files (never by\n"
        f"-- hand), those that differ from release {last_tag()}'s.\n\n"
        + OPEN
        + hand_written("deploy")
        + "".join(drop(f) for f in dropped)
        + "".join(create(f) for f in changed)
        + CLOSE
    )


GUARD = """
SET LOCAL taskboard.drop_data TO :'drop_data';

DO $guard$
DECLARE
    v_lost text;
BEGIN
    SELECT pg_catalog.string_agg(pg_catalog.format('%s (%s rows, added in %s)', l.data, l.rows, l.added_in), ', ')
      INTO v_lost
      FROM taskboard.revert_losses('0.1.0') AS l;
    IF v_lost IS NOT NULL AND pg_catalog.current_setting('taskboard.drop_data') <> 'yes' THEN
        RAISE EXCEPTION 'a revert to a release before RELEASE may drop data: %', v_lost
            USING ERRCODE = '55000',
                  HINT = 'taskboard migrate --revert --to RELEASE lists what a revert to that release drops; to drop it, revert with sqitch revert --set drop_data=yes';
    END IF;
END
$guard$;
"""


def revert_script(release: str, before: dict[str, Function], after: dict[str, Function]) -> str:
    # Reverting is deploying `before` from `after`: what after dropped comes back.
    changed, dropped = differences(after, before)
    return (
        f"-- Revert taskboard:{CHANGE} from pg\n--\n"
        f"-- Release {release}: written by `make schema` (never by hand). A revert stops at\n"
        f"-- the guard, before anything changes, while taskboard.revert_losses('0.1.0') finds\n"
        f"-- data, unless the Sqitch variable drop_data is yes; then release {last_tag()}'s\n"
        f"-- functions come back.\n\n"
        "\\if :{?drop_data}\n\\else\n\\set drop_data no\n\\endif\n\n"
        + OPEN
        + GUARD.replace("before RELEASE", f"before {release}")
        + "".join(drop(f) for f in dropped)
        + "".join(create(f) for f in changed)
        + hand_written("revert")
        + CLOSE
    )


def verify_function(function: Function) -> str:
    body = function.body
    checks = [
        f"""    IF v_fn IS NULL THEN
        RAISE EXCEPTION '{function.signature} is missing';
    END IF;""",
        f"""    IF (SELECT p.prosecdef = {str(function.security_definer).lower()}
                   AND p.proowner = pg_catalog.to_regrole(v_prefix || '_owner')
              FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn) IS NOT TRUE THEN
        RAISE EXCEPTION '% must be owned by %_owner, security as its source says', v_fn, v_prefix;
    END IF;""",
        """    IF pg_catalog.has_function_privilege('public', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must not be executable by PUBLIC', v_fn;
    END IF;""",
    ]
    if body is not None:
        digest = hashlib.md5(body.encode()).hexdigest()
        checks.append(
            f"""    IF (SELECT pg_catalog.md5(p.prosrc) FROM pg_catalog.pg_proc AS p WHERE p.oid = v_fn)
       IS DISTINCT FROM '{digest}' THEN
        RAISE EXCEPTION '% does not have the body this release deploys', v_fn;
    END IF;"""
        )
    comment = hashlib.md5(function.comment.encode()).hexdigest()
    checks.append(
        f"""    IF pg_catalog.md5(pg_catalog.obj_description(v_fn, 'pg_proc')) IS DISTINCT FROM '{comment}' THEN
        RAISE EXCEPTION '% does not have the contract this release deploys', v_fn;
    END IF;"""
    )
    for kind in ROLE_KINDS:
        granted = kind in function.roles
        checks.append(
            f"""    IF {"NOT " if granted else ""}pg_catalog.has_function_privilege(v_prefix || '_{kind}', v_fn, 'EXECUTE') THEN
        RAISE EXCEPTION '% must {"" if granted else "not "}be executable by %_{kind}', v_fn, v_prefix;
    END IF;"""
        )
    lines = "\n".join(checks)
    return f"""
DO $verify$
DECLARE
    v_prefix text := pg_catalog.current_setting('taskboard.role_prefix');
    v_fn pg_catalog.regprocedure := pg_catalog.to_regprocedure('{function.signature}');
BEGIN
{lines}
END
$verify$;
"""


def verify_script(release: str, before: dict[str, Function], after: dict[str, Function]) -> str:
    _, dropped = differences(before, after)
    gone = [f for f in dropped if f.name not in after]
    # Every function, not only those this release wrote: once `version` is reworked
    # again, this script is no longer run, and the next one must cover them all.
    checks = "".join(verify_function(f) for _, f in sorted(after.items()))
    if gone:
        missing = ", ".join(f"'{f.signature}'" for f in gone)
        checks += f"""
DO $verify$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.unnest(ARRAY[{missing}]) AS s(sig)
                WHERE pg_catalog.to_regprocedure(s.sig) IS NOT NULL) THEN
        RAISE EXCEPTION 'release {release} drops {", ".join(f.signature for f in gone)}';
    END IF;
END
$verify$;
"""
    return (
        f"-- Verify taskboard:{CHANGE} on pg\n--\n"
        f"-- Release {release}: written by `make schema` (never by hand).\n\n"
        "BEGIN;\n\n"
        "SET LOCAL taskboard.role_prefix TO :'prefix';\n"
        "\\set owner_role :prefix _owner\n"
        "-- Reading the schema needs the owner's USAGE: held until the ROLLBACK.\n"
        'GRANT :"owner_role" TO CURRENT_USER;\n' + checks + "\nROLLBACK;\n"
    )


def scripts(release: str) -> dict[Path, str]:
    """The pending release's deploy, revert and verify scripts, by path."""
    before = released_functions(last_tag())
    after = sources()
    return {
        DB / "deploy" / f"{CHANGE}.sql": deploy_script(release, before, after),
        DB / "revert" / f"{CHANGE}.sql": revert_script(release, before, after),
        DB / "verify" / f"{CHANGE}.sql": verify_script(release, before, after),
    }


def manifest(tag: str) -> str:
    """db/vTAG.sha256: the SHA-256 of each deploy, revert and verify script of the
    changes the plan lists before @vTAG, each change once, in plan order."""
    names: list[str] = []
    for line in plan_lines():
        if line.split(" ", 1)[0] == f"@v{tag}":
            break
        if line.strip() and not line.startswith(("@", "%", "#")):
            name = re.split(r"[\s\[]", line, maxsplit=1)[0]
            if name not in names:
                names.append(name)
    return "".join(
        f"{hashlib.sha256((DB / kind / f'{name}.sql').read_bytes()).hexdigest()}  {kind}/{name}.sql\n"
        for name in names
        for kind in ("deploy", "revert", "verify")
    )


def tag(release: str) -> str:
    """Tag the pending release, write its manifest; the CHANGELOG's Manifest line."""
    note = next(line for line in reversed(plan_lines()) if line.startswith(f"{CHANGE} [")).split(
        " # ", 1
    )
    done = subprocess.run(
        ["sqitch", "tag", f"v{release}", "-n", note[1] if len(note) > 1 else f"Release {release}"],
        cwd=DB,
        env={**os.environ, **PLANNER},
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise ReleaseError(f"sqitch tag v{release} failed: {done.stderr.strip()}")
    path = DB / f"v{release}.sha256"
    path.write_text(manifest(release))
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return f"Manifest: `db/v{release}.sha256` SHA-256 `{digest}`"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m taskboard_dev.release")
    sub = parser.add_subparsers(dest="command", required=True)
    write = sub.add_parser("write", help="write the pending release's scripts")
    write.add_argument("release", nargs="?", help="X.Y.Z: start that release first")
    write.add_argument("note", nargs="?", default="", help="the plan's note for a new release")
    sub.add_parser("check", help="exit 1 when the pending release's scripts are stale")
    sub.add_parser("tag", help="tag the pending release and write its manifest")
    args = parser.parse_args(argv)
    release = pending_release()
    if args.command == "tag":
        if release is None or main(["check"]) != 0:
            raise ReleaseError("no pending release with current scripts to tag: run make schema")
        print(tag(release))
        return 0
    if args.command == "write" and args.release and release is None:
        if not re.fullmatch(r"\d+\.\d+\.\d+", args.release):
            raise ReleaseError(f"release must be X.Y.Z, got {args.release!r}")
        start(args.release, args.note or "(say what it brings)")
        release = args.release
    elif args.command == "write" and args.release and args.release != release:
        raise ReleaseError(f"the plan's pending release is {release}, not {args.release}")
    if release is None:
        # Nothing pending: db/functions/ must be what the last release deployed.
        changed, dropped = differences(released_functions(last_tag()), sources())
        if changed or dropped:
            names = ", ".join(sorted({f.name for f in changed + dropped}))
            raise ReleaseError(
                f"db/functions/ differs from release {last_tag()} ({names}): name the release "
                "that brings it, make schema RELEASE=X.Y.Z"
            )
        return 0
    files = scripts(release)
    stale = [path for path, text in files.items() if not path.exists() or path.read_text() != text]
    if args.command == "write":
        for path in stale:
            path.write_text(files[path])
            print(f"wrote {path.relative_to(DB.parent)}")
        return 0
    for path in stale:
        written = path.read_text() if path.exists() else ""
        diff = difflib.unified_diff(
            written.splitlines(),
            files[path].splitlines(),
            str(path.relative_to(DB.parent)),
            "db/functions/",
            lineterm="",
        )
        print("\n".join(list(diff)[:40]), file=sys.stderr)
        print(
            f"{path.relative_to(DB.parent)} is stale: run make schema and commit it",
            file=sys.stderr,
        )
    return 1 if stale else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except ReleaseError as refused:
        sys.exit(f"make schema: {refused}")
