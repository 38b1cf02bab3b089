"""MkDocs hooks (mkdocs.yml, `hooks:`): the reference pages filled at build time.

A page's `<!-- reference: ... -->` lines are replaced by what
taskboard_dev.reference generates; the build stops when no page asks for
one of them, or a page holds a line that means to be a marker and is
not. The SQL reference is read from the database at
TASKBOARD_DOCS_DATABASE_URL (`make docs` deploys a fresh one and sets
it); without it the build stops with one line saying so.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import Any

import psycopg
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.exceptions import PluginError
from mkdocs.structure.files import Files
from mkdocs.structure.pages import Page

from taskboard_dev import reference

DATABASE_URL = "TASKBOARD_DOCS_DATABASE_URL"

_state: dict[str, Any] = {}


def on_config(config: MkDocsConfig) -> MkDocsConfig:
    url = os.environ.get(DATABASE_URL, "").strip()
    if not url:
        raise PluginError(
            f"{DATABASE_URL} is not set: the SQL reference is read from a deployed database "
            "(`make docs` deploys one and sets it)"
        )
    root = Path(config.config_file_path).parent
    _state["db_dir"] = root / "db"
    _state["catalog"] = functools.cache(functools.partial(catalog, url))
    return config


def on_files(files: Files, config: MkDocsConfig) -> Files:
    """Stop the build when no page asks for one of the references (REQUIRED_MARKERS), or a
    page holds a marker that is not one: either would render nothing, silently."""
    pages = []
    for file in files.documentation_pages():
        page = Path(file.abs_src_path or "").read_text(encoding="utf-8")
        try:
            reference.markers(page)
        except reference.ReferenceError as exc:
            raise PluginError(f"{file.src_uri}: {exc}") from None
        pages.append(page)
    missing = reference.missing_markers(pages)
    if missing:
        raise PluginError(
            "no page holds the reference marker "
            + ", ".join(f"<!-- reference: {what} -->" for what in missing)
            + ": that reference would be missing from the site"
        )
    return files


def catalog(url: str) -> reference.Catalog:
    try:
        return reference.read_catalog_at(url)
    except reference.ReferenceError as exc:
        raise PluginError(f"{DATABASE_URL}: {exc}") from None
    except psycopg.Error as exc:
        reason = " ".join(str(exc).split())  # libpq's messages span lines
        raise PluginError(f"{DATABASE_URL}: cannot read the database: {reason}") from None


def on_page_markdown(markdown: str, page: Page, **_: Any) -> str:
    try:
        return reference.fill(markdown, _state["catalog"], _state["db_dir"])
    except reference.ReferenceError as exc:
        raise PluginError(f"{page.file.src_uri}: {exc}") from None
