"""The docs' reference pages, generated from what they describe.

A page asks for generated text with a marker line of its own,
`<!-- reference: WHAT -->` or `<!-- reference: WHAT NAME -->`:

- `sql-functions`: every function of schema taskboard, its signature as the
  database has it, the application roles its grants let call it, and its
  contract header; functions granted to no application role are internal;
- `sql-types`: the composite types those functions return, with columns;
- `sql-view NAME`: view NAME's columns and who may read it (the page says
  what it is); the page with `sql-functions` must name every view there is;
- `role-grants`: what each application role may call and read;
- `settings`: the fields of taskboard.settings.Settings, a section each;
- `cli`: the commands of the `taskboard` parser, their help and roles;
- `releases`: the schema's releases (db/sqitch.plan's tags) and the ones
  this driver works with.

The SQL is read from a deployed database (`read_catalog`); everything else
from the driver itself. docs_hooks.py fills the pages at build time.
"""

from __future__ import annotations

import argparse
import functools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from annotated_types import Ge, Gt, Le, MaxLen, MinLen
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from taskboard import __version__, cli, install
from taskboard.settings import Settings
from taskboard.worker.startup import SUPPORTED_SCHEMA_VERSIONS

MARKER = re.compile(r"^<!-- reference: (?P<what>[a-z-]+)(?: (?P<name>\w+))? -->$", re.MULTILINE)
# A line that means to be a marker; one MARKER does not match would stay an HTML comment,
# and its section would be silently empty.
MARKER_LIKE = re.compile(r"<!--\s*reference\b", re.IGNORECASE)
# The markers the site must hold, each on some page: without one, a reference is missing.
REQUIRED_MARKERS = ("sql-functions", "sql-types", "role-grants", "settings", "cli", "releases")
ROLE_KINDS = ("producer", "worker", "admin")  # each may do what the ones before it may
ENV_PREFIX = "TASKBOARD_"
HELP_WIDTH = 80  # columns of the CLI's help as the pages show it


class ReferenceError(Exception):
    """A page or the database does not fit what the reference needs: one line."""


# -- the database ------------------------------------------------------------------


@dataclass(frozen=True)
class Function:
    """A function of schema taskboard, as the catalog has it."""

    name: str
    arguments: str  # pg_get_function_arguments
    result: str  # pg_get_function_result
    roles: tuple[str, ...]  # the role kinds granted EXECUTE, in ROLE_KINDS order
    comment: str | None  # COMMENT ON FUNCTION, when there is one


@dataclass(frozen=True)
class Relation:
    """A view or composite type of schema taskboard and its columns."""

    name: str
    kind: str  # "view" or "type"
    columns: tuple[tuple[str, str], ...]  # (name, type)
    roles: tuple[str, ...]  # the role kinds granted SELECT (views)


@dataclass(frozen=True)
class Catalog:
    """What the reference shows of a deployed schema."""

    prefix: str  # of the roles: the schema owner is PREFIX_owner
    functions: tuple[Function, ...]
    relations: tuple[Relation, ...]

    def of_kind(self, kind: str) -> tuple[Relation, ...]:
        return tuple(r for r in self.relations if r.kind == kind)


# The role kinds whose PREFIX_KIND role the ACL grants the privilege, in ROLE_KINDS order.
GRANTED = """
ARRAY(SELECT k.kind
        FROM unnest(%(kinds)s::text[]) WITH ORDINALITY AS k(kind, n)
       WHERE EXISTS (SELECT FROM pg_catalog.aclexplode({acl}) AS a
                       JOIN pg_catalog.pg_roles AS r ON r.oid = a.grantee
                      WHERE r.rolname = %(prefix)s || '_' || k.kind
                        AND a.privilege_type = '{privilege}')
       ORDER BY k.n)
"""

PREFIX = """
SELECT pg_catalog.substring(pg_catalog.pg_get_userbyid(nspowner), '^([a-z_][a-z0-9_]*)_owner$')
  FROM pg_catalog.pg_namespace
 WHERE nspname = 'taskboard'
"""

FUNCTIONS = """
SELECT p.proname,
       pg_catalog.pg_get_function_arguments(p.oid),
       pg_catalog.pg_get_function_result(p.oid),
       {granted},
       pg_catalog.obj_description(p.oid, 'pg_proc')
  FROM pg_catalog.pg_proc AS p
 WHERE p.pronamespace = 'taskboard'::regnamespace
 ORDER BY p.proname, p.oid
""".format(
    granted=GRANTED.format(
        acl="coalesce(p.proacl, pg_catalog.acldefault('f', p.proowner))", privilege="EXECUTE"
    )
)

RELATIONS = """
SELECT c.relname,
       CASE c.relkind WHEN 'v' THEN 'view' ELSE 'type' END,
       ARRAY(SELECT ARRAY[a.attname::text, pg_catalog.format_type(a.atttypid, a.atttypmod)]
               FROM pg_catalog.pg_attribute AS a
              WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped
              ORDER BY a.attnum),
       {granted}
  FROM pg_catalog.pg_class AS c
 WHERE c.relnamespace = 'taskboard'::regnamespace AND c.relkind IN ('v', 'c')
 ORDER BY c.relname
""".format(
    granted=GRANTED.format(
        acl="coalesce(c.relacl, pg_catalog.acldefault('r', c.relowner))", privilege="SELECT"
    )
)


def read_catalog(conn: psycopg.Connection[Any]) -> Catalog:
    """The functions, views and types of the database's taskboard schema.

    Raises ReferenceError when the database has no taskboard schema, or one
    whose owner is not named PREFIX_owner (the roles could not be told).
    """
    row = conn.execute(PREFIX).fetchone()
    if row is None:
        raise ReferenceError("the database has no taskboard schema: run `taskboard migrate`")
    if row[0] is None:
        raise ReferenceError("schema taskboard's owner is not named PREFIX_owner")
    params = {"prefix": row[0], "kinds": list(ROLE_KINDS)}
    functions = tuple(
        Function(name, arguments, result, tuple(roles), comment)
        for name, arguments, result, roles, comment in conn.execute(FUNCTIONS, params)
    )
    relations = tuple(
        Relation(name, kind, tuple((column, type_) for column, type_ in columns), tuple(roles))
        for name, kind, columns, roles in conn.execute(RELATIONS, params)
    )
    return Catalog(row[0], functions, relations)


def read_catalog_at(url: str) -> Catalog:
    with psycopg.connect(url, connect_timeout=10) as conn:
        return read_catalog(conn)


def contract_header(function: Function, functions_dir: Path) -> str:
    """A function's contract: its COMMENT ON FUNCTION up to its first empty line
    when it has one, else the leading comment block of db/functions/NAME.sql
    up to its first empty `--` line (what follows, in either, are notes on
    the implementation). A first line that only restates the signature,
    `name(args) -> result`, is left out: the page shows the database's own.
    """
    if function.comment:
        lines = []
        for line in function.comment.strip().splitlines():
            if not line.strip():
                break
            lines.append(line)
    else:
        path = functions_dir / f"{function.name}.sql"
        if not path.is_file():
            raise ReferenceError(f"function {function.name} has no comment and no {path}")
        lines = []
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line.startswith("--") or line.rstrip() == "--":
                break
            lines.append(line[3:] if line.startswith("-- ") else line[2:])
    if lines and re.match(rf"{function.name}\(.*\) -> ", lines[0]):
        lines = lines[1:]
    if not lines:
        raise ReferenceError(f"function {function.name} has no contract header")
    return "\n".join(lines)


def plan_history(db_dir: Path) -> dict[str, list[str]]:
    """Each change of db/sqitch.plan: the releases that added or reworked it, oldest
    first ("unreleased" for one after the last tag)."""
    history: dict[str, list[str]] = {}
    pending: list[str] = []
    for line in (db_dir / "sqitch.plan").read_text(encoding="utf-8").splitlines():
        if line.startswith("@v"):
            release = line.split()[0].removeprefix("@v")
            for name in pending:
                history.setdefault(name, []).append(release)
            pending = []
        elif re.match(r"\w", line):
            pending.append(line.split()[0])
    for name in pending:
        history.setdefault(name, []).append("unreleased")
    return history


def since(name: str, history: dict[str, list[str]]) -> str:
    """` Since 0.1.0; changed in 0.2.0.` for change `name`, or nothing for one the plan lacks."""
    releases = list(dict.fromkeys(history.get(name, [])))
    if not releases:
        return ""
    changed = f"; changed in {', '.join(releases[1:])}" if releases[1:] else ""
    return f" Since {releases[0]}{changed}."


# -- the SQL pages -----------------------------------------------------------------


def split_arguments(arguments: str) -> list[str]:
    """pg_get_function_arguments' text cut at its top-level commas."""
    parts, depth, quoted, start = [], 0, False, 0
    for index, char in enumerate(arguments):
        if char == "'":
            quoted = not quoted  # '' inside a literal toggles twice
        elif not quoted and char in "([":
            depth += 1
        elif not quoted and char in ")]":
            depth -= 1
        elif not quoted and depth == 0 and char == ",":
            parts.append(arguments[start:index].strip())
            start = index + 1
    last = arguments[start:].strip()
    return [*parts, last] if last else parts


def signature(function: Function) -> str:
    """The function's CREATE FUNCTION head, one argument a line."""
    arguments = split_arguments(function.arguments)
    inner = "".join(f"\n    {argument}," for argument in arguments).rstrip(",")
    close = "\n)" if arguments else ")"
    return f"taskboard.{function.name}({inner}{close} RETURNS {function.result}"


def role_list(roles: Sequence[str]) -> str:
    return ", ".join(roles) if roles else "none"


def function_section(
    function: Function, db_dir: Path, types: Sequence[str], history: dict[str, list[str]]
) -> str:
    returned = [name for name in types if re.search(rf"\btaskboard\.{name}\b", function.result)]
    lines = [
        f"### {function.name} {{#{function.name}}}",
        "",
        "```sql",
        signature(function),
        "```",
        "",
        f"[Roles](roles.md): {role_list(function.roles)}."
        + since(function.name, history)
        + "".join(f" Returns [`taskboard.{name}`](#{name})." for name in returned),
        "",
        "```text",
        contract_header(function, db_dir / "functions"),
        "```",
    ]
    return "\n".join(lines)


def sql_functions(catalog: Catalog, db_dir: Path) -> str:
    """Each function, grouped by the least role that may call it, then the internal ones.

    Raises ReferenceError when the schema has no function, a function two
    signatures (one anchor each), or db/functions a file of a function the
    database lacks (its header would be shown nowhere).
    """
    if not catalog.functions:
        raise ReferenceError("schema taskboard has no function: run `taskboard migrate`")
    names = [f.name for f in catalog.functions]
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise ReferenceError(f"functions with two signatures: {', '.join(twice)}")
    lacking = sorted(
        path.name for path in (db_dir / "functions").glob("*.sql") if path.stem not in names
    )
    if lacking:
        raise ReferenceError(
            f"{db_dir / 'functions'}: {', '.join(lacking)} define no function the database has "
            "(deploy the change, or remove the file)"
        )
    types = [t.name for t in catalog.of_kind("type")]
    history = plan_history(db_dir)
    sections = []
    for kind in (*ROLE_KINDS, None):
        group = [f for f in catalog.functions if (f.roles[0] if f.roles else None) == kind]
        if not group:
            continue
        if kind is None:
            sections.append(
                "## Internal functions\n\nGranted to no application role: "
                "the other functions call them."
            )
        else:
            sections.append(
                f"## {kind.capitalize()} functions\n\nThe least role that may call these is {kind}."
            )
        sections.extend(function_section(f, db_dir, types, history) for f in group)
    return "\n\n".join(sections)


def columns_table(relation: Relation) -> str:
    rows = "".join(f"\n| `{name}` | `{type_}` |" for name, type_ in relation.columns)
    return f"| column | type |\n|---|---|{rows}"


def sql_types(catalog: Catalog) -> str:
    if not catalog.of_kind("type"):
        raise ReferenceError("schema taskboard has no composite type: the sql-types list is empty")
    sections = []
    for relation in catalog.of_kind("type"):
        users = [
            f"[`{f.name}`](#{f.name})"
            for f in catalog.functions
            if re.search(rf"\btaskboard\.{relation.name}\b", f.result)
        ]
        sections.append(
            f"### {relation.name} {{#{relation.name}}}\n\n"
            f"Returned by {', '.join(users) or 'no function'}.\n\n{columns_table(relation)}"
        )
    return "\n\n".join(sections)


def sql_view(catalog: Catalog, name: str, db_dir: Path) -> str:
    views = {view.name: view for view in catalog.of_kind("view")}
    if name not in views:
        raise ReferenceError(f"the database has no view taskboard.{name}")
    view = views[name]
    history = since(name, plan_history(db_dir))
    return (
        f"Readable by [roles](roles.md): {role_list(view.roles)}.{history}\n\n{columns_table(view)}"
    )


def role_grants(catalog: Catalog) -> str:
    """A line per role kind: the functions it may call and the views it may read, as
    "what the role before it may, and ..." when it may do all that role may."""
    lines = []
    before: tuple[str, set[str], set[str]] | None = None
    for kind in ROLE_KINDS:
        calls = {f.name for f in catalog.functions if kind in f.roles}
        reads = {v.name for v in catalog.of_kind("view") if kind in v.roles}
        added = []
        if before is not None and before[1] <= calls and before[2] <= reads:
            added.append(f"do what a {before[0]} may")
            calls_new, reads_new = calls - before[1], reads - before[2]
        else:
            calls_new, reads_new = calls, reads
        for verb, names in (("call", calls_new), ("read", reads_new)):
            if names:
                added.append(f"{verb} " + ", ".join(f"[`{n}`](sql.md#{n})" for n in sorted(names)))
        lines.append(f"- `{catalog.prefix}_{kind}` may {'; '.join(added) or 'do nothing'}.")
        before = (kind, calls, reads)
    return "\n".join(lines)


# -- settings ----------------------------------------------------------------------


def number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


TYPE_NAMES: dict[object, str] = {
    int: "integer",
    float: "number",
    str: "text",
    list[str]: "comma-separated list",
}


def bounds(field: FieldInfo) -> tuple[float | None, float | None, bool, str]:
    """The field's (low, high, low is exclusive, unit) from its constraints."""
    low: float | None = None
    high: float | None = None
    exclusive, unit = False, ""
    for item in field.metadata:
        if isinstance(item, Ge):
            low = float(item.ge)  # type: ignore[arg-type]
        elif isinstance(item, Gt):
            low, exclusive = float(item.gt), True  # type: ignore[arg-type]
        elif isinstance(item, Le):
            high = float(item.le)  # type: ignore[arg-type]
        elif isinstance(item, MinLen):
            low, unit = item.min_length, " characters"
        elif isinstance(item, MaxLen):
            high, unit = item.max_length, " characters"
    return low, high, exclusive, unit


def setting_type(field: FieldInfo) -> str:
    """The field's type as the environment gives it, and its bounds."""
    annotation: object = field.annotation
    members = getattr(annotation, "__args__", ())
    if type(None) in members and len(members) == 2:  # X | None: the default says what None is
        annotation = next(a for a in members if a is not type(None))
    if annotation not in TYPE_NAMES:
        raise ReferenceError(f"no name for the settings type {annotation!r}")
    text = TYPE_NAMES[annotation]
    low, high, exclusive, unit = bounds(field)
    if low is not None and exclusive:
        text += f", over {number(low)}"
        return text + (f", at most {number(high)}" if high is not None else "")
    if low is not None and high is not None:
        return f"{text}, {number(low)} to {number(high)}{unit}"
    if low == 1 and unit:
        return f"{text}, not empty"
    if low is not None:
        return f"{text}, at least {number(low)}{unit}"
    if high is not None:
        return f"{text}, at most {number(high)}{unit}"
    return text


def setting_default(field: FieldInfo) -> str:
    if field.is_required():
        return "required"
    if field.default_factory is not None:
        if field.default_factory is list:
            return "empty"
        doc = (field.default_factory.__doc__ or "").strip()
        return doc.splitlines()[0].rstrip(".") if doc else "computed"
    default = field.default
    if default is None or default is PydanticUndefined:
        return "unset"
    if default == "":
        return "empty"
    if isinstance(default, int | float):
        return number(default)
    return f"`{default}`"


def settings_sections() -> str:
    """A section per field: its variable, type and bounds, default and description."""
    if not Settings.model_fields:
        raise ReferenceError("Settings has no field: the settings list is empty")
    sections = []
    for name, field in Settings.model_fields.items():
        if not field.description:
            raise ReferenceError(f"Settings.{name} has no description")
        sections.append(
            f"## `{ENV_PREFIX}{name.upper()}` {{#{name}}}\n\n"
            f"{setting_type(field).capitalize()}. Default: {setting_default(field)}.\n\n"
            f"{field.description}"
        )
    return "\n\n".join(sections)


# -- the command line --------------------------------------------------------------


def commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """The parser's subcommands by name, in the order `taskboard --help` lists them."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise ReferenceError("the taskboard parser has no commands")


def help_text(parser: argparse.ArgumentParser) -> str:
    """The parser's --help at HELP_WIDTH columns, whatever the terminal."""
    parser.formatter_class = functools.partial(argparse.HelpFormatter, width=HELP_WIDTH)
    return parser.format_help().rstrip()


def cli_reference() -> str:
    parser = cli.build_parser()
    subcommands = commands(parser)
    summaries = {
        choice.dest: choice.help or ""
        for action in parser._actions
        if isinstance(action, argparse._SubParsersAction)
        for choice in action._choices_actions
    }
    rows = []
    sections = [f"### taskboard {{#taskboard}}\n\n```text\n{help_text(parser)}\n```"]
    for name, sub in subcommands.items():
        needs = cli.COMMAND_NEEDS[name]
        summary = summaries[name].removesuffix(f" [{needs}]")
        rows.append(f"| [`{name}`](#{name}) | {needs} | {summary} |")
        sections.append(
            f"### taskboard {name} {{#{name}}}\n\nNeeds: {needs}.\n\n```text\n{help_text(sub)}\n```"
        )
    table = "| command | needs | what it does |\n|---|---|---|\n" + "\n".join(rows)
    return "\n\n".join([table, *sections])


# -- releases ---------------------------------------------------------------------


def releases(db_dir: Path) -> str:
    tags = install.releases(db_dir)
    if not tags:
        raise ReferenceError(f"{db_dir / 'sqitch.plan'} has no release tag")
    oldest, beyond = SUPPORTED_SCHEMA_VERSIONS
    listed = ", ".join(f"`{tag}`" for tag in tags[:-1])
    return (
        f"The schema's releases, oldest first: {listed} and `{tags[-1]}`, the current one "
        f"(what [`version()`](sql.md#version) answers). This driver, taskboard-pg "
        f"{__version__}, works with schema releases from `{oldest}` up to, not including, "
        f"`{beyond}`."
    )


# -- filling a page ----------------------------------------------------------------


def markers(markdown: str) -> Iterator[re.Match[str]]:
    """The page's markers; ReferenceError for a line that means to be one and is not."""
    for line in markdown.splitlines():
        if MARKER_LIKE.search(line) and not MARKER.fullmatch(line):
            raise ReferenceError(
                f"not a reference marker, so it would render nothing: {line.strip()!r} "
                "(write `<!-- reference: WHAT -->` or `<!-- reference: WHAT NAME -->` "
                "alone on its line)"
            )
    return MARKER.finditer(markdown)


def missing_markers(pages: Sequence[str]) -> list[str]:
    """The REQUIRED_MARKERS that no page of `pages` (their Markdown) holds."""
    found = {match["what"] for page in pages for match in markers(page)}
    return [what for what in REQUIRED_MARKERS if what not in found]


def fill(markdown: str, catalog: Callable[[], Catalog], db_dir: Path) -> str:
    """The page with each marker replaced by what it asks for.

    `catalog` is called only when a marker needs the database; `db_dir` is
    the Sqitch project (db/), with the functions' sources. Raises
    ReferenceError for an unknown marker, and when the page that lists the
    functions does not name each view of the schema, or names one it lacks.
    """
    found = list(markers(markdown))
    if any(m["what"] == "sql-functions" for m in found):
        named = {m["name"] for m in found if m["what"] == "sql-view"}
        views = {v.name for v in catalog().of_kind("view")}
        if named != views:
            raise ReferenceError(
                f"the SQL reference's views ({', '.join(sorted(named))}) are not the "
                f"database's ({', '.join(sorted(views))}): add or remove a sql-view marker"
            )

    def replace(match: re.Match[str]) -> str:
        what, name = match["what"], match["name"]
        if what == "sql-functions":
            return sql_functions(catalog(), db_dir)
        if what == "sql-types":
            return sql_types(catalog())
        if what == "sql-view" and name:
            return sql_view(catalog(), name, db_dir)
        if what == "role-grants":
            return role_grants(catalog())
        if what == "settings":
            return settings_sections()
        if what == "cli":
            return cli_reference()
        if what == "releases":
            return releases(db_dir)
        raise ReferenceError(f"unknown reference marker: {match[0]}")

    return MARKER.sub(replace, markdown)
