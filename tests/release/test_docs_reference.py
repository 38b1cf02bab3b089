"""The reference pages are generated from what they describe, and all of it.

The SQL reference of a fresh deploy lists exactly its functions, each with
the signature and grants the database has; the settings page every field
of Settings; the command-line page every command of the parser.
"""

from __future__ import annotations

import re
import uuid
from dataclasses import replace
from pathlib import Path

import psycopg
import pytest
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import File, Files
from psycopg import sql

from taskboard import cli, install
from taskboard.app import Taskboard
from taskboard.settings import Settings
from taskboard_dev import docs_hooks, reference
from tests.support.database import DB_DIR, MakeDatabase

DOCS = DB_DIR.parent / "docs"
SQL_PAGE = (DOCS / "reference" / "sql.md").read_text(encoding="utf-8")


def sections(page: str) -> dict[str, str]:
    """The page's `### NAME {#NAME}` sections by name."""
    parts = re.split(r"^### (\w+) \{#\1\}$", page, flags=re.MULTILINE)
    return dict(zip(parts[1::2], parts[2::2], strict=True))


def catalog_of(url: str) -> reference.Catalog:
    with psycopg.connect(url) as conn:
        return reference.read_catalog(conn)


def test_the_sql_reference_lists_exactly_the_functions_of_a_fresh_deploy(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    with psycopg.connect(url) as conn:
        functions = conn.execute(
            "SELECT proname, pg_get_function_arguments(oid), pg_get_function_result(oid)"
            "  FROM pg_proc WHERE pronamespace = 'taskboard'::regnamespace"
        ).fetchall()
        others = {
            name
            for (name,) in conn.execute(
                "SELECT relname FROM pg_class"
                " WHERE relnamespace = 'taskboard'::regnamespace AND relkind IN ('v', 'c')"
            )
        }
    catalog = catalog_of(url)
    page = sections(reference.fill(SQL_PAGE, lambda: catalog, DB_DIR))

    assert set(page) - others == {name for name, _, _ in functions}
    assert {"queue_stats", "schedules", "claimed", "job_info"} <= others <= set(page)
    for name, arguments, result in functions:
        text = page[name]
        for argument in reference.split_arguments(arguments):
            assert f"\n    {argument}" in text, (name, argument)
        assert f") RETURNS {result}\n" in text, name
        header = (DB_DIR / "functions" / f"{name}.sql").read_text(encoding="utf-8").splitlines()
        assert header[1].removeprefix("-- ") in text, name  # the contract, past the synopsis
    assert "[Roles](roles.md): worker, admin." in page["claim"]
    assert "[Roles](roles.md): producer, worker, admin." in page["enqueue"]
    assert "[Roles](roles.md): admin." in page["cancel"]
    assert "[Roles](roles.md): none." in page["notify_runnable"]
    assert "plan_cache_mode" not in page["claim"]  # the notes after the header stay out
    assert "Returns [`taskboard.claimed`](#claimed)." in page["claim"]
    assert (
        "[Roles](roles.md): producer, worker, admin. Since 0.4.0; changed in 0.4.4, 0.4.9, 0.5.0.\n"
        in page["queue_overview"]
    )


def test_the_releases_of_a_change_are_read_from_the_plan(tmp_path: Path) -> None:
    (tmp_path / "sqitch.plan").write_text(
        "%project=t\n\n"
        "a 2026-01-01T00:00:00Z T <t@example.invalid> # one\n"
        "b [a] 2026-01-01T00:00:00Z T <t@example.invalid> # two\n"
        "@v0.1.0 2026-01-01T00:00:00Z T <t@example.invalid> # release\n"
        "a [a@v0.1.0] 2026-01-02T00:00:00Z T <t@example.invalid> # reworked\n"
        "@v0.2.0 2026-01-02T00:00:00Z T <t@example.invalid> # release\n"
        "c 2026-01-03T00:00:00Z T <t@example.invalid> # new\n"
    )
    history = reference.plan_history(tmp_path)
    assert history == {"a": ["0.1.0", "0.2.0"], "b": ["0.1.0"], "c": ["unreleased"]}
    assert reference.since("a", history) == " Since 0.1.0; changed in 0.2.0."
    assert reference.since("d", history) == ""


def test_the_roles_are_read_with_the_installed_prefix(
    make_database: MakeDatabase, server_url: str
) -> None:
    prefix = "docs" + uuid.uuid4().hex[:8]
    url = make_database()
    try:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(install.script(prefix, project=DB_DIR).encode())
        catalog = catalog_of(url)
        assert catalog.prefix == prefix
        claim = next(f for f in catalog.functions if f.name == "claim")
        assert claim.roles == ("worker", "admin")
        assert f"- `{prefix}_worker` may do what a producer may; call [`claim`]" in (
            reference.role_grants(catalog)
        )
    finally:
        roles = [sql.Identifier(f"{prefix}_{kind}") for kind in install.ROLE_KINDS]
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP OWNED BY {} CASCADE").format(sql.SQL(", ").join(roles)))
        with psycopg.connect(server_url, autocommit=True) as conn:
            for role in roles:
                conn.execute(sql.SQL("DROP ROLE IF EXISTS {}").format(role))


def test_a_contract_comment_in_the_database_comes_before_the_file() -> None:
    commented = reference.Function(
        "claim", "", "void", (), "claim(queue) -> void\nTakes jobs.\nRaises 22023."
    )
    assert (
        reference.contract_header(commented, DB_DIR / "functions") == "Takes jobs.\nRaises 22023."
    )
    from_file = reference.contract_header(replace(commented, comment=None), DB_DIR / "functions")
    assert from_file.startswith("Takes up to `batch` runnable jobs")
    assert "plan_cache_mode" not in from_file


def test_the_sql_page_names_each_view_of_the_database() -> None:
    view = reference.Relation("queue_stats", "view", (("queue", "text"),), ("producer",))
    other = reference.Relation("other_view", "view", (("x", "int"),), ())
    catalog = reference.Catalog("taskboard", (), (view, other))
    with pytest.raises(reference.ReferenceError, match="other_view"):
        reference.fill(SQL_PAGE, lambda: catalog, DB_DIR)
    with pytest.raises(reference.ReferenceError, match="unknown reference marker"):
        reference.fill("<!-- reference: nothing -->\n", lambda: catalog, DB_DIR)


def test_arguments_are_cut_at_top_level_commas_only() -> None:
    arguments = (
        "a text DEFAULT 'x, y'::text, b integer[] DEFAULT '{1,2}'::integer[], c numeric(10,2)"
    )
    assert reference.split_arguments(arguments) == [
        "a text DEFAULT 'x, y'::text",
        "b integer[] DEFAULT '{1,2}'::integer[]",
        "c numeric(10,2)",
    ]
    assert reference.split_arguments("") == []


def test_the_settings_page_covers_every_field_with_its_description() -> None:
    page = reference.settings_sections()
    for name, field in Settings.model_fields.items():
        assert field.description, f"Settings.{name} has no description"
        assert f"## `TASKBOARD_{name.upper()}` {{#{name}}}\n\n" in page
        assert field.description in page
    assert "Integer, 3 to 1002. Default: 10." in page  # pool_size's bounds and default
    assert "Number, over 0, at most 43200. Default: 60." in page  # lease


def test_the_cli_page_covers_every_command() -> None:
    page = reference.cli_reference()
    commands = reference.commands(cli.build_parser())
    assert set(commands) == set(cli.COMMAND_NEEDS)
    for name in commands:
        assert f"### taskboard {name} {{#{name}}}\n\nNeeds: {cli.COMMAND_NEEDS[name]}." in page
        assert f"usage: taskboard {name} " in page
        assert f"| [`{name}`](#{name}) | {cli.COMMAND_NEEDS[name]} |" in page
    assert max(len(line) for line in page.splitlines() if not line.startswith("|")) <= 80


def test_the_python_page_lists_every_public_member_of_the_app() -> None:
    """Taskboard's calls come from the classes it is built from: the page names them all."""
    page = (DOCS / "reference" / "python.md").read_text(encoding="utf-8")
    block = page.split("::: taskboard.Taskboard\n", 1)[1].split("\n\n", 1)[0]
    listed = re.findall(r"^ +- (\w+)$", block, flags=re.MULTILINE)
    public = {name for name in dir(Taskboard) if not name.startswith("_")}
    assert len(listed) == len(set(listed))
    assert set(listed) == public


def test_the_build_stops_in_one_line_without_a_database(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv(docs_hooks.DATABASE_URL, raising=False)
    config = MkDocsConfig(config_file_path=str(tmp_path / "mkdocs.yml"))
    with pytest.raises(PluginError) as refused:
        docs_hooks.on_config(config)
    assert docs_hooks.DATABASE_URL in str(refused.value)
    assert "\n" not in str(refused.value)


# -- a reference that would render empty stops the build, in one line -------------------


def test_a_function_without_a_header_or_a_file_stops_the_build(tmp_path: Path) -> None:
    (tmp_path / "functions").mkdir()
    (tmp_path / "functions" / "bare.sql").write_text("CREATE FUNCTION taskboard.bare() ...\n")
    (tmp_path / "functions" / "synopsis.sql").write_text("-- synopsis() -> void\n--\n")
    for name, why in [
        ("bare", "function bare has no contract header"),
        ("synopsis", "function synopsis has no contract header"),
        ("absent", f"function absent has no comment and no {tmp_path}/functions/absent.sql"),
    ]:
        function = reference.Function(name, "", "void", ("admin",), None)
        with pytest.raises(reference.ReferenceError) as refused:
            reference.contract_header(function, tmp_path / "functions")
        assert str(refused.value) == why


def test_a_function_file_the_database_lacks_stops_the_build(tmp_path: Path) -> None:
    """Its header was shown nowhere, and nothing said so."""
    (tmp_path / "functions").mkdir()
    (tmp_path / "sqitch.plan").write_text("%project=t\n")
    (tmp_path / "functions" / "claim.sql").write_text("-- Takes jobs.\n")
    (tmp_path / "functions" / "newer.sql").write_text("-- Not deployed yet.\n")
    claim = reference.Function("claim", "", "void", ("worker",), None)
    catalog = reference.Catalog("taskboard", (claim,), ())
    with pytest.raises(reference.ReferenceError) as refused:
        reference.sql_functions(catalog, tmp_path)
    assert str(refused.value) == (
        f"{tmp_path}/functions: newer.sql define no function the database has "
        "(deploy the change, or remove the file)"
    )
    overloaded = reference.Catalog("taskboard", (claim, replace(claim, arguments="x int")), ())
    with pytest.raises(reference.ReferenceError, match=r"^functions with two signatures: claim$"):
        reference.sql_functions(overloaded, tmp_path)


def test_a_schema_without_functions_or_types_stops_the_build() -> None:
    empty = reference.Catalog("taskboard", (), ())
    with pytest.raises(reference.ReferenceError, match="schema taskboard has no function"):
        reference.sql_functions(empty, DB_DIR)
    with pytest.raises(reference.ReferenceError, match="schema taskboard has no composite type"):
        reference.sql_types(empty)


@pytest.mark.parametrize(
    "line",
    [
        "<!-- reference: sql-functions --> ",
        "<!--reference: cli-->",
        "  <!-- reference: settings -->",
        "<!-- Reference: releases -->",
        "<!-- reference: sql-view queue_stats extra -->",
    ],
)
def test_a_line_that_is_almost_a_marker_stops_the_build(line: str) -> None:
    """It stayed an HTML comment: the page rendered without its reference."""
    with pytest.raises(reference.ReferenceError) as refused:
        reference.fill(f"# Page\n\n{line}\n", lambda: reference.Catalog("t", (), ()), DB_DIR)
    assert str(refused.value).startswith(
        f"not a reference marker, so it would render nothing: {line.strip()!r}"
    )
    assert "\n" not in str(refused.value)


def page_files(tmp_path: Path, pages: dict[str, str]) -> Files:
    for name, text in pages.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    return Files([File(name, str(tmp_path), str(tmp_path / "site"), True) for name in pages])


def test_the_build_stops_when_no_page_asks_for_a_reference(tmp_path: Path) -> None:
    config = MkDocsConfig(config_file_path=str(tmp_path / "mkdocs.yml"))
    pages = {
        f"{what}.md": f"# {what}\n\n<!-- reference: {what} -->\n"
        for what in reference.REQUIRED_MARKERS
    }
    assert docs_hooks.on_files(page_files(tmp_path, pages), config) is not None
    del pages["sql-types.md"]
    (tmp_path / "sql-types.md").unlink()
    with pytest.raises(PluginError) as refused:
        docs_hooks.on_files(page_files(tmp_path, pages), config)
    assert str(refused.value) == (
        "no page holds the reference marker <!-- reference: sql-types -->: that reference "
        "would be missing from the site"
    )
    pages["cli.md"] = "# cli\n\n<!-- reference: cli  -->\n"
    with pytest.raises(PluginError, match=r"^cli\.md: not a reference marker"):
        docs_hooks.on_files(page_files(tmp_path, pages), config)


def test_a_database_without_the_schema_or_unreachable_stops_the_build_in_one_line(
    make_database: MakeDatabase,
) -> None:
    for url, why in [
        (make_database(), "the database has no taskboard schema: run `taskboard migrate`"),
        ("postgresql://nobody@127.0.0.1:1/x", "cannot read the database: connection failed"),
    ]:
        with pytest.raises(PluginError) as refused:
            docs_hooks.catalog(url)
        assert str(refused.value).startswith(f"{docs_hooks.DATABASE_URL}: {why}")
        assert "\n" not in str(refused.value)
