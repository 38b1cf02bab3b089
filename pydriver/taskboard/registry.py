"""Sqitch's registry, written without Sqitch.

When `taskboard migrate` finds no `sqitch` on PATH, it installs or upgrades
from the SQL the package carries (`taskboard sql`) and records every change
it deployed here, in the same transaction, exactly as `sqitch deploy`
would have: the schema `sqitch` with Sqitch's registry tables (release
1.1), and one row a change in `changes` and `events`, its dependencies and
its tags. A later `sqitch deploy` then finds the database at that change
and carries on from there.

The ids are Sqitch's own. A change's id is the SHA-1 of its plan entry as
Sqitch describes it (project, name, the previous change's id, planner,
date, requires, conflicts, note); a tag's, of its entry and its change's
id; a change's script_hash, of its deploy script's bytes. The tests compare
every row with what Sqitch itself records for the same plan.
"""

from __future__ import annotations

import getpass
import hashlib
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import psycopg

from taskboard.errors import TaskboardError

# The registry release these tables are (Sqitch's Engine::registry_release).
REGISTRY_RELEASE = "1.1"
# The key of the advisory lock Sqitch's PostgreSQL engine takes while it
# deploys: holding it keeps a migrate and a sqitch deploy from running at once.
SQITCH_LOCK_KEY = 75474063

CHANGE_LINE = re.compile(
    r"^(?P<name>[^\s@#\[\]:%][^\s\[\]#]*)"
    r"(?:\s*\[(?P<deps>[^\]]*)\])?"
    r"\s+(?P<at>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"
    r"\s+(?P<planner>.*?)\s*<(?P<email>[^>]*)>"
    r"(?:\s*#\s*(?P<note>.*))?$"
)
TAG_LINE = re.compile(
    r"^@(?P<name>\S+)"
    r"\s+(?P<at>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"
    r"\s+(?P<planner>.*?)\s*<(?P<email>[^>]*)>"
    r"(?:\s*#\s*(?P<note>.*))?$"
)
PRAGMA = re.compile(r"^%\s*(?P<name>[\w-]+)\s*=\s*(?P<value>\S+)")


class RegistryError(TaskboardError):
    """The plan cannot be read as Sqitch reads it, or the registry records another plan."""


@dataclass(frozen=True)
class Dependency:
    """One entry of a change's [...]: a change it requires, or one it conflicts with."""

    text: str  # as Sqitch writes it in the registry: name, name@tag or project:name
    change: str
    tag: str | None
    conflict: bool


@dataclass
class Tag:
    name: str  # without the @
    planned_at: str
    planner_name: str
    planner_email: str
    note: str
    id: str = ""


@dataclass
class Change:
    """One change of the plan, as Sqitch identifies and records it."""

    name: str
    dependencies: list[Dependency]
    planned_at: str
    planner_name: str
    planner_email: str
    note: str
    id: str = ""
    script: str = ""  # the deploy script's file name, e.g. claim@v0.1.0.sql
    script_hash: str | None = None
    tags: list[Tag] = field(default_factory=list)  # the tags right after it

    @property
    def requires(self) -> list[Dependency]:
        return [d for d in self.dependencies if not d.conflict]

    @property
    def conflicts(self) -> list[Dependency]:
        return [d for d in self.dependencies if d.conflict]


@dataclass(frozen=True)
class Plan:
    project: str
    uri: str | None
    changes: list[Change]

    def position_of(self, change_id: str) -> int | None:
        """The index of the change with that id, None when the plan has none."""
        return next((i for i, c in enumerate(self.changes) if c.id == change_id), None)

    def release_at(self, index: int) -> str | None:
        """The release (tag vX.Y.Z, as X.Y.Z) right after changes[index], if any."""
        releases = [t.name for t in self.changes[index].tags if t.name.startswith("v")]
        return releases[-1][1:] if releases else None

    def tagged(self, tag: str) -> int:
        """The index of the change that tag `tag` (without @) follows."""
        for index, change in enumerate(self.changes):
            if any(t.name == tag for t in change.tags):
                return index
        raise RegistryError(f"the plan has no tag @{tag}")


def read_plan(project_dir: Path) -> Plan:
    """The Sqitch project's plan, each change with its id, script and script hash."""
    pragmas: dict[str, str] = {}
    changes: list[Change] = []
    text = (project_dir / "sqitch.plan").read_text(encoding="utf-8")
    for number, raw in enumerate(text.split("\n"), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if pragma := PRAGMA.match(line):
            pragmas[pragma["name"]] = pragma["value"]
        elif tagged := TAG_LINE.match(line):
            if not changes:
                raise RegistryError(f"sqitch.plan line {number}: a tag before any change")
            changes[-1].tags.append(
                Tag(
                    tagged["name"],
                    tagged["at"],
                    tagged["planner"],
                    tagged["email"],
                    note(tagged["note"]),
                )
            )
        elif entry := CHANGE_LINE.match(line):
            changes.append(
                Change(
                    entry["name"],
                    [
                        dependency(d, pragmas.get("project", ""))
                        for d in (entry["deps"] or "").split()
                    ],
                    entry["at"],
                    entry["planner"],
                    entry["email"],
                    note(entry["note"]),
                )
            )
        else:
            raise RegistryError(f"sqitch.plan line {number} is not a change or a tag: {raw!r}")
    if "project" not in pragmas:
        raise RegistryError("sqitch.plan names no %project")
    uri = pragmas.get("uri")
    plan = Plan(pragmas["project"], canonical_uri(uri) if uri else None, changes)
    parent: Change | None = None
    for index, change in enumerate(changes):
        change.id = sha1_object("change", change_info(plan, change, parent))
        for tag in change.tags:
            tag.id = sha1_object("tag", tag_info(plan, tag, change))
        change.script = script_name(project_dir, changes, index)
        path = project_dir / "deploy" / change.script
        change.script_hash = hashlib.sha1(path.read_bytes()).hexdigest() if path.is_file() else None
        parent = change
    return plan


def canonical_uri(uri: str) -> str:
    """The %uri as Sqitch writes it into an id (URI->canonical): scheme and host lowercase,
    a default port dropped."""
    parts = urlsplit(uri)
    if not parts.scheme or not parts.netloc:
        return uri
    host = (parts.hostname or "").lower()
    default = {"http": 80, "https": 443}.get(parts.scheme.lower())
    port = f":{parts.port}" if parts.port and parts.port != default else ""
    user = parts.netloc.rpartition("@")[0]
    netloc = f"{user}@{host}{port}" if user else f"{host}{port}"
    return urlunsplit(
        (parts.scheme.lower(), netloc, parts.path or "/", parts.query, parts.fragment)
    )


def dependency(text: str, project: str) -> Dependency:
    """One entry of a change's [...], named as Sqitch names it (without its own project)."""
    conflict = text.startswith("!")
    text = text.removeprefix("!")
    other, _, rest = text.rpartition(":")
    change, _, tag = rest.partition("@")
    if other and other != project:
        raise RegistryError(f"dependency {text} names another project, which sql cannot deploy")
    return Dependency(rest, change, tag or None, conflict)


def note(text: str | None) -> str:
    """A plan note as Sqitch keeps it: trimmed, with \\\\, \\n and \\r unescaped."""
    if not text:
        return ""
    escapes = {"\\\\": "\\", "\\n": "\n", "\\r": "\r"}
    return re.sub(r"\\[\\nr]", lambda m: escapes[m[0]], text.strip())


def change_info(plan: Plan, change: Change, parent: Change | None) -> str:
    lines = [f"project {plan.project}"]
    if plan.uri:
        lines.append(f"uri {plan.uri}")
    lines.append(f"change {change.name}")
    if parent is not None:
        lines.append(f"parent {parent.id}")
    lines.append(f"planner {change.planner_name} <{change.planner_email}>")
    lines.append(f"date {change.planned_at}")
    if change.requires:
        lines.append("requires\n  + " + "\n  + ".join(d.text for d in change.requires))
    if change.conflicts:
        lines.append("conflicts\n  - " + "\n  - ".join(d.text for d in change.conflicts))
    if change.note:
        lines += ["", change.note]
    return "\n".join(lines)


def tag_info(plan: Plan, tag: Tag, change: Change) -> str:
    lines = [f"project {plan.project}"]
    if plan.uri:
        lines.append(f"uri {plan.uri}")
    lines += [
        f"tag @{tag.name}",
        f"change {change.id}",
        f"planner {tag.planner_name} <{tag.planner_email}>",
        f"date {tag.planned_at}",
    ]
    if tag.note:
        lines += ["", tag.note]
    return "\n".join(lines)


def sha1_object(kind: str, info: str) -> str:
    content = info.encode()
    return hashlib.sha1(f"{kind} {len(content)}\0".encode() + content).hexdigest()


def script_name(project_dir: Path, changes: list[Change], index: int) -> str:
    """The deploy script of changes[index]: NAME.sql, or NAME@TAG.sql once it was reworked.

    As Sqitch finds it: the tags between this change and its rework, by
    change from the latest back (each change's own in plan order), and the
    first whose NAME@TAG.sql exists (else the first of them).
    """
    change = changes[index]
    later = next(
        (i for i in range(index + 1, len(changes)) if changes[i].name == change.name), None
    )
    if later is None:
        return f"{change.name}.sql"
    tags = [t.name for c in reversed(changes[index:later]) for t in c.tags]
    if not tags:
        raise RegistryError(f"change {change.name} is reworked with no tag in between")
    for tag in tags:
        if (project_dir / "deploy" / f"{change.name}@{tag}.sql").is_file():
            return f"{change.name}@{tag}.sql"
    return f"{change.name}@{tags[0]}.sql"


def resolve(plan: Plan, upto: int, dep: Dependency) -> str | None:
    """The id a requirement of changes[upto] resolves to, as Sqitch resolves it in its registry.

    name@tag: the latest change of that name at or before the tag; a plain
    name: the earliest change of that name. Conflicts resolve to nothing.
    """
    if dep.conflict:
        return None
    candidates = [i for i, c in enumerate(plan.changes[:upto]) if c.name == dep.change]
    if dep.tag is not None:
        last = plan.tagged(dep.tag)
        candidates = [i for i in candidates if i <= last]
        chosen = candidates[-1] if candidates else None
    else:
        chosen = candidates[0] if candidates else None
    if chosen is None:
        raise RegistryError(
            f"change {plan.changes[upto].name} requires {dep.text}, which no earlier change is"
        )
    return plan.changes[chosen].id


# Sqitch's registry for PostgreSQL (App::Sqitch's pg.sql, release 1.1), in schema sqitch.
REGISTRY_DDL = """
CREATE SCHEMA IF NOT EXISTS sqitch;
COMMENT ON SCHEMA sqitch IS 'Sqitch database deployment metadata v1.1.';

CREATE TABLE sqitch.releases (
    version         REAL        PRIMARY KEY,
    installed_at    TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    installer_name  TEXT        NOT NULL,
    installer_email TEXT        NOT NULL
);

CREATE TABLE sqitch.projects (
    project         TEXT        PRIMARY KEY,
    uri             TEXT            NULL UNIQUE,
    created_at      TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    creator_name    TEXT        NOT NULL,
    creator_email   TEXT        NOT NULL
);

CREATE TABLE sqitch.changes (
    change_id       TEXT        PRIMARY KEY,
    script_hash     TEXT            NULL,
    change          TEXT        NOT NULL,
    project         TEXT        NOT NULL REFERENCES sqitch.projects(project) ON UPDATE CASCADE,
    note            TEXT        NOT NULL DEFAULT '',
    committed_at    TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    committer_name  TEXT        NOT NULL,
    committer_email TEXT        NOT NULL,
    planned_at      TIMESTAMPTZ NOT NULL,
    planner_name    TEXT        NOT NULL,
    planner_email   TEXT        NOT NULL,
    UNIQUE(project, script_hash)
);

CREATE TABLE sqitch.tags (
    tag_id          TEXT        PRIMARY KEY,
    tag             TEXT        NOT NULL,
    project         TEXT        NOT NULL REFERENCES sqitch.projects(project) ON UPDATE CASCADE,
    change_id       TEXT        NOT NULL REFERENCES sqitch.changes(change_id) ON UPDATE CASCADE,
    note            TEXT        NOT NULL DEFAULT '',
    committed_at    TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    committer_name  TEXT        NOT NULL,
    committer_email TEXT        NOT NULL,
    planned_at      TIMESTAMPTZ NOT NULL,
    planner_name    TEXT        NOT NULL,
    planner_email   TEXT        NOT NULL,
    UNIQUE(project, tag)
);

CREATE TABLE sqitch.dependencies (
    change_id       TEXT        NOT NULL REFERENCES sqitch.changes(change_id) ON UPDATE CASCADE ON DELETE CASCADE,
    type            TEXT        NOT NULL,
    dependency      TEXT        NOT NULL,
    dependency_id   TEXT            NULL REFERENCES sqitch.changes(change_id) ON UPDATE CASCADE CONSTRAINT dependencies_check CHECK (
            (type = 'require'  AND dependency_id IS NOT NULL)
         OR (type = 'conflict' AND dependency_id IS NULL)
    ),
    PRIMARY KEY (change_id, dependency)
);

CREATE TABLE sqitch.events (
    event           TEXT        NOT NULL CONSTRAINT events_event_check CHECK (
        event IN ('deploy', 'revert', 'fail', 'merge')
    ),
    change_id       TEXT        NOT NULL,
    change          TEXT        NOT NULL,
    project         TEXT        NOT NULL REFERENCES sqitch.projects(project) ON UPDATE CASCADE,
    note            TEXT        NOT NULL DEFAULT '',
    requires        TEXT[]      NOT NULL DEFAULT '{}',
    conflicts       TEXT[]      NOT NULL DEFAULT '{}',
    tags            TEXT[]      NOT NULL DEFAULT '{}',
    committed_at    TIMESTAMPTZ NOT NULL DEFAULT clock_timestamp(),
    committer_name  TEXT        NOT NULL,
    committer_email TEXT        NOT NULL,
    planned_at      TIMESTAMPTZ NOT NULL,
    planner_name    TEXT        NOT NULL,
    planner_email   TEXT        NOT NULL,
    PRIMARY KEY (change_id, committed_at)
);
"""

INSERT_CHANGE = """
INSERT INTO sqitch.changes (change_id, script_hash, change, project, note, committer_name,
                            committer_email, planned_at, planner_name, planner_email, committed_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, clock_timestamp())
"""
INSERT_DEPENDENCY = """
INSERT INTO sqitch.dependencies (change_id, type, dependency, dependency_id)
VALUES (%s, %s, %s, %s)
"""
INSERT_TAG = """
INSERT INTO sqitch.tags (tag_id, tag, project, change_id, note, committer_name, committer_email,
                         planned_at, planner_name, planner_email, committed_at)
VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, clock_timestamp())
"""
INSERT_EVENT = """
INSERT INTO sqitch.events (event, change_id, change, project, note, tags, requires, conflicts,
                           committer_name, committer_email, planned_at, planner_name,
                           planner_email, committed_at)
VALUES ('deploy', %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, clock_timestamp())
"""


def committer() -> tuple[str, str]:
    """Who records the deploy: the system user, as Sqitch names one without configuration."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "unknown"
    return f"{user} (taskboard migrate)", f"{user}@{socket.gethostname()}"


# Schemas other than sqitch that hold Sqitch's registry tables (Sqitch's `registry` setting).
OTHER_REGISTRIES = """
    SELECT n.nspname
      FROM pg_catalog.pg_namespace AS n
     WHERE n.nspname <> 'sqitch'
       AND (SELECT count(*) FROM pg_catalog.pg_class AS c
             WHERE c.relnamespace = n.oid AND c.relkind = 'r'
               AND c.relname IN ('releases', 'projects', 'changes', 'tags', 'dependencies',
                                 'events')) = 6
"""


def check(conn: psycopg.Connection[Any]) -> None:
    """Refuse a registry these records would not fit: one Sqitch keeps in another schema (a
    second registry here would split the history), or one of another registry release."""
    others = [name for (name,) in conn.execute(OTHER_REGISTRIES).fetchall()]
    if others:
        raise RegistryError(
            f"schema {others[0]} holds a Sqitch registry (Sqitch's registry setting): deploy "
            "with Sqitch configured for it, since a deploy without Sqitch records in schema "
            "sqitch only"
        )
    if conn.execute("SELECT to_regclass('sqitch.releases') IS NULL").fetchone() == (True,):
        return
    row = conn.execute("SELECT max(version)::text FROM sqitch.releases").fetchone()
    found = row[0] if row else None
    if found != REGISTRY_RELEASE:
        raise RegistryError(
            f"Sqitch's registry is at release {found or 'none'}, and a deploy without Sqitch "
            f"records in release {REGISTRY_RELEASE} only: deploy with the Sqitch that made it "
            "(or run sqitch upgrade)"
        )


def deployed(conn: psycopg.Connection[Any], plan: Plan) -> int | None:
    """The index in `plan` of the last change the registry records; None when it records none.

    Raises RegistryError when the registry records a change `plan` does not
    have (a database deployed from another plan).
    """
    if conn.execute("SELECT to_regclass('sqitch.changes') IS NULL").fetchone() == (True,):
        return None
    row = conn.execute(
        "SELECT change_id, change FROM sqitch.changes WHERE project = %s"
        " ORDER BY committed_at DESC LIMIT 1",
        (plan.project,),
    ).fetchone()
    if row is None:
        return None
    position = plan.position_of(row[0])
    if position is None:
        raise RegistryError(
            f"Sqitch's registry records change {row[1]} ({row[0][:12]}), which this package's "
            "plan does not have: deploy with Sqitch from the project that made it"
        )
    return position


def record(conn: psycopg.Connection[Any], plan: Plan, first: int, last: int) -> int:
    """Record plan.changes[first..last] as deployed, in the caller's transaction.

    Creates the registry when the database has none. Returns how many
    changes were recorded.
    """
    name, email = committer()
    if conn.execute("SELECT to_regclass('sqitch.releases') IS NULL").fetchone() == (True,):
        conn.execute(REGISTRY_DDL, prepare=False)
        conn.execute(
            "INSERT INTO sqitch.releases (version, installer_name, installer_email)"
            " VALUES (%s, %s, %s)",
            (float(REGISTRY_RELEASE), name, email),
        )
    conn.execute(
        "INSERT INTO sqitch.projects (project, uri, creator_name, creator_email)"
        " VALUES (%s, %s, %s, %s) ON CONFLICT (project) DO NOTHING",
        (plan.project, plan.uri, name, email),
    )
    for index in range(first, last + 1):
        change = plan.changes[index]
        conn.execute(
            INSERT_CHANGE,
            (
                change.id,
                change.script_hash,
                change.name,
                plan.project,
                change.note,
                name,
                email,
                change.planned_at,
                change.planner_name,
                change.planner_email,
            ),
        )
        for dep in change.dependencies:
            conn.execute(
                INSERT_DEPENDENCY,
                (
                    change.id,
                    "conflict" if dep.conflict else "require",
                    dep.text,
                    resolve(plan, index, dep),
                ),
            )
        for tag in change.tags:
            conn.execute(
                INSERT_TAG,
                (
                    tag.id,
                    f"@{tag.name}",
                    plan.project,
                    change.id,
                    tag.note,
                    name,
                    email,
                    tag.planned_at,
                    tag.planner_name,
                    tag.planner_email,
                ),
            )
        conn.execute(
            INSERT_EVENT,
            (
                change.id,
                change.name,
                plan.project,
                change.note,
                [f"@{t.name}" for t in change.tags],
                [d.text for d in change.requires],
                [d.text for d in change.conflicts],
                name,
                email,
                change.planned_at,
                change.planner_name,
                change.planner_email,
            ),
        )
    return last - first + 1
