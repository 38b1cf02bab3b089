"""Every example of the docs and the README runs and shows what it does.

Each page's Python blocks run in one fresh process against a freshly
deployed database; each psql session runs in psql against another, and its
output must match the page's (dev/taskboard_dev/docs_examples.py says how).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import DB_DIR, MakeDatabase
from taskboard_dev import docs_examples

ROOT = DB_DIR.parent
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
PAGE_TIMEOUT = 120


def page_id(page: Path) -> str:
    return str(page.relative_to(ROOT))


PYTHON_PAGES = [page for page in PAGES if docs_examples.python_blocks(page)]
SESSIONS = [
    pytest.param(page, block, id=f"{page_id(page)}:{block.line}")
    for page in PAGES
    for block in docs_examples.psql_blocks(page)
]


def test_the_collector_finds_the_examples() -> None:
    """The pages hold Python blocks and psql sessions, so the tests below
    run something (a renamed fence would otherwise pass by running nothing)."""
    assert ROOT / "README.md" in PYTHON_PAGES
    assert len(PYTHON_PAGES) >= 5
    assert len(SESSIONS) >= 2


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=page_id)
def test_the_python_blocks_of_a_page_run(
    page: Path, make_database: MakeDatabase, tmp_path: Path
) -> None:
    env = {**os.environ, "TASKBOARD_DATABASE_URL": make_database(deploy=True)}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "dev"), env.get("PYTHONPATH", "")])
    result = subprocess.run(
        [sys.executable, "-m", "taskboard_dev.docs_examples", str(page), str(tmp_path)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=PAGE_TIMEOUT,
        check=False,
    )
    assert result.returncode == 0, f"{page_id(page)}:\n{result.stdout}{result.stderr}"


@pytest.mark.parametrize(("page", "block"), SESSIONS)
def test_a_psql_session_shows_what_psql_prints(
    page: Path, block: docs_examples.Block, make_database: MakeDatabase
) -> None:
    docs_examples.check_session(page, block, make_database(deploy=True))


def test_a_session_that_differs_fails(make_database: MakeDatabase) -> None:
    """The comparison catches a changed value, yet accepts another uuid."""
    page = ROOT / "README.md"
    shown = (
        "```psql\n"
        "taskboard=# SELECT gen_random_uuid() IS NOT NULL AS ok,\n"
        "taskboard-#        'e4dcf131-5983-4411-9ec7-2bfff5d67f98'::uuid AS u;\n"
        " ok |                  u\n"
        "----+--------------------------------------\n"
        " t  | e4dcf131-5983-4411-9ec7-2bfff5d67f98\n"
        "(1 row)\n"
        "```\n"
    )
    [block] = docs_examples.blocks(shown)
    url = make_database(deploy=True)
    docs_examples.check_session(page, block, url)
    wrong = docs_examples.Block("psql", 1, block.code.replace(" t  |", " f  |"))
    with pytest.raises(AssertionError, match="psql printed"):
        docs_examples.check_session(page, wrong, url)
