"""The install and upgrade SQL as one plain script, read from the shipped Sqitch project.

For teams whose migrations run through Alembic, Django, Flyway or Liquibase:
`taskboard sql` is the whole install, `taskboard sql --from 0.1.0` the
upgrade from that release. The text is the project's own deploy scripts in
plan order, with the role names of the chosen prefix written in and the
psql-only lines taken out, inside one transaction: it runs through any
driver, and a failure anywhere leaves nothing behind.

The released v0.1.0 scripts name the `taskboard_` roles literally; later
scripts take their names from the Sqitch variable `prefix`. Both are
rewritten here for the prefix asked for. The script starts with the current
`roles` step, so existing roles are checked before anything is adopted, and
the deploying role holds the owner only inside the transaction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from taskboard import registry
from taskboard.errors import ConfigError, TaskboardError

DEFAULT_PREFIX = "taskboard"
ROLE_KINDS = ("owner", "producer", "worker", "admin")
PREFIX_PATTERN = re.compile(r"[a-z_][a-z0-9_]{0,47}")

# What the scripts say that only psql understands, or that names a role.
PSQL_SET = re.compile(r"^\\set [^\n]*\n", re.MULTILINE)
PSQL_ROLE = re.compile(r':"(owner|producer|worker|admin)_role"')
PSQL_PREFIX = ":'prefix'"
PSQL_LEFT = re.compile(r""":["'][A-Za-z_]\w*["']""")  # an uninterpolated :"var" or :'var'
RELEASED_ROLE = re.compile(r"\btaskboard_(owner|producer|worker|admin)\b")
TRANSACTION = re.compile(r"^(BEGIN|COMMIT);\n", re.MULTILINE)


FRESH_ONLY = """
DO $fresh$
BEGIN
    IF EXISTS (SELECT FROM pg_catalog.pg_namespace WHERE nspname = 'taskboard') THEN
        RAISE EXCEPTION 'this database already has a taskboard schema: upgrade it with the script of `taskboard sql --from RELEASE` (taskboard.version() names its release)'
            USING ERRCODE = '55000';
    END IF;
END
$fresh$;
"""


class InstallError(TaskboardError):
    """The shipped Sqitch project is missing, or has no such release."""


@dataclass(frozen=True)
class Change:
    """One deploy step of the plan, with the script that deploys it."""

    name: str
    script: str  # file name under deploy/, e.g. roles@v0.1.0.sql
    release: str | None  # the first tag after it (its release), or None while unreleased


def shipped_sqitch_project() -> Path:
    """The Sqitch project inside the installed package (taskboard/db)."""
    project = resources.files("taskboard") / "db"
    if not isinstance(project, Path) or not (project / "sqitch.plan").is_file():
        raise InstallError(
            f"the taskboard package ships no Sqitch project at {project}: reinstall it"
        )
    return project


def check_prefix(prefix: str) -> str:
    """`prefix` when it makes valid role names; ConfigError naming it otherwise."""
    if not PREFIX_PATTERN.fullmatch(prefix) or prefix.startswith("pg_"):
        raise ConfigError(
            f"role prefix {prefix!r} must be 1 to 48 lowercase letters, digits or underscores, "
            "not starting with a digit or pg_"
        )
    return prefix


def role_names(prefix: str) -> dict[str, str]:
    """The four role names of `prefix`, by kind."""
    return {kind: f"{check_prefix(prefix)}_{kind}" for kind in ROLE_KINDS}


def plan(project: Path) -> list[Change]:
    """The deploy steps of `project`'s sqitch.plan, in order, each with the script Sqitch
    deploys it from (taskboard.registry reads the plan as Sqitch does)."""
    changes = registry.read_plan(project).changes
    return [
        Change(
            change.name,
            change.script,
            next((t.name for later in changes[index:] for t in later.tags), None),
        )
        for index, change in enumerate(changes)
    ]


def releases(project: Path) -> list[str]:
    """The released versions of the plan, oldest first (tag @v0.1.0 is 0.1.0)."""
    text = (project / "sqitch.plan").read_text(encoding="utf-8")
    return re.findall(r"^@v(\S+)", text, flags=re.MULTILINE)


def render(text: str, prefix: str) -> str:
    """One deploy script as plain SQL for roles of `prefix`, without BEGIN and COMMIT."""
    roles = role_names(prefix)
    text = PSQL_SET.sub("", text)
    text = PSQL_ROLE.sub(lambda m: quote_ident(roles[m[1]]), text)
    text = text.replace(PSQL_PREFIX, quote_literal(prefix))
    text = RELEASED_ROLE.sub(lambda m: roles[m[1]], text)
    text = TRANSACTION.sub("", text)
    return text


def script(
    prefix: str = DEFAULT_PREFIX,
    *,
    since: str | None = None,
    until: str | None = None,
    transaction: bool = True,
    project: Path | None = None,
) -> str:
    """The SQL that installs Taskboard, or upgrades it from release `since`, as one transaction.

    Without `transaction`, BEGIN and COMMIT are left out, for tools that run
    each migration in a transaction of their own (Alembic, Django, Flyway).

    `until` stops after that release (for a Sqitch registry then recorded
    with `sqitch deploy --log-only --to @vUNTIL`). Raises ConfigError for a
    release the plan does not have or a bad prefix.
    """
    project = project or shipped_sqitch_project()
    known = releases(project)
    for version in (since, until):
        if version is not None and version not in known:
            raise ConfigError(
                f"no release {version} in the plan (releases: {', '.join(known) or 'none'})"
            )
    if since is not None and until is not None and known.index(until) <= known.index(since):
        raise ConfigError(f"--to {until} must be a release after --from {since}")
    changes = plan(project)
    current_roles = next(c for c in reversed(changes) if c.name == "roles")
    steps = between(changes, since, until)
    owner = quote_ident(role_names(prefix)["owner"])
    hold, let_go = (
        f"\nGRANT {owner} TO CURRENT_USER;\n",
        f"\nRESET ROLE;\nREVOKE {owner} FROM CURRENT_USER;\n",
    )

    parts = [
        f"-- Taskboard {describe(since, until)}, roles {prefix}_*: generated by `taskboard sql`\n"
        "-- from the Sqitch plan. Run it in one transaction: all of it, or nothing.\n"
    ]
    if transaction:
        parts.append("\nBEGIN;\n")
    if since is None:
        parts.append(FRESH_ONLY)
    # The current roles step comes first, so nothing is adopted unchecked; on
    # a fresh install it replaces the v0.1.0 one.
    if since is None or current_roles in steps:
        parts.append(section(project, current_roles, prefix))
    held = False
    for change in steps:
        if change.name == "roles" and (change == current_roles or since is None):
            continue
        # v0.1.0's scripts expect the caller to hold the owner; later ones
        # take it for themselves.
        takes_owner = ':"owner_role"' in (project / "deploy" / change.script).read_text(
            encoding="utf-8"
        )
        if takes_owner == held:
            parts.append(let_go if held else hold)
            held = not held
        parts.append(section(project, change, prefix))
    if held:
        parts.append(let_go)
    if transaction:
        parts.append("\nCOMMIT;\n")
    return "".join(parts)


def between(changes: list[Change], since: str | None, until: str | None) -> list[Change]:
    """The steps after release `since` (from the start when None) up to release `until` (to the end)."""
    if since is not None:
        last = max(i for i, c in enumerate(changes) if c.release == f"v{since}")
        changes = changes[last + 1 :]
    if until is not None:
        last = max(i for i, c in enumerate(changes) if c.release == f"v{until}")
        changes = changes[: last + 1]
    return changes


def section(project: Path, change: Change, prefix: str) -> str:
    text = render((project / "deploy" / change.script).read_text(encoding="utf-8"), prefix)
    left = PSQL_LEFT.search(text)
    if left:
        raise InstallError(
            f"deploy/{change.script} holds psql syntax sql cannot rewrite: {left[0]}"
        )
    return f"\n-- == {change.script[: -len('.sql')]}\n{text}"


def describe(since: str | None, until: str | None) -> str:
    if since is not None:
        return f"upgrade from {since}"
    if until is not None:
        return f"install of release {until}"
    return "install"


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"
