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

from taskboard_dev import docs_examples
from tests.support.database import DB_DIR, MakeDatabase

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


# -- examples that could escape the runner -----------------------------------------


def test_every_block_of_every_page_runs_or_is_only_shown() -> None:
    found = [
        f"{page_id(page)}: {problem}"
        for page in PAGES
        for problem in docs_examples.problems(docs_examples.page_text(page, ROOT))
    ]
    assert found == []


SPELLINGS = """\
```Python
a = 1
```

```py3
b = 2
```

```python title="x.py" linenums="1"
c = 3
```

```{.python .annotate}
d = 4
```

~~~python
e = 5
~~~

!!! note

    ```python
    f = 6
    ```

=== "Tab"

    ```py
    g = 7
    ```

1. A step:

   ```python3
   h = 8
   ```
"""


def test_every_spelling_of_a_python_fence_is_collected(tmp_path: Path) -> None:
    """```py3, ```python3, ```{.python} and ~~~ fences were skipped: their code never ran."""
    page = tmp_path / "page.md"
    page.write_text(SPELLINGS)
    collected = docs_examples.python_blocks(page)
    assert [block.code for block in collected] == [
        f"{name} = {value}\n" for value, name in enumerate("abcdefgh", 1)
    ]
    assert docs_examples.problems(SPELLINGS) == []


def test_a_longer_closing_fence_closes_its_block(tmp_path: Path) -> None:
    """```sh closed by ```` swallowed the Python block after it, which then never ran."""
    page = tmp_path / "page.md"
    page.write_text("```sh\nmake\n````\n\n```python\nx = 1\n```\n\n````python\ny = 2\n```\n````\n")
    assert [block.code for block in docs_examples.python_blocks(page)] == [
        "x = 1\n",
        "y = 2\n```\n",
    ]


def test_a_block_that_would_not_run_is_a_problem() -> None:
    text = (
        "```pycon\n>>> 1\n```\n\n"  # line 1
        "```\nprint('no language')\n```\n\n"  # line 5
        "> ```python\n> print('quoted')\n> ```\n\n"  # line 9
        "```psql\ntaskboard=# SELECT 1\n ?column?\n```\n\n"  # line 13
        "- ```python\n  print('listed')\n  ```\n"  # line 18
    )
    neither = (
        "neither runs (python, psql) nor is only shown (bash, console, ini, javascript, json,"
        " promql, sh, sql, text, toml, yaml): name one of these"
    )
    hidden = "a fence after a quote or list marker is not collected: put it on a line of its own"
    assert docs_examples.problems(text) == [
        f"line 9: {hidden}, indented",
        f"line 18: {hidden}, indented",
        f"line 1: a block of language 'pycon' {neither}",
        f"line 5: a block of language '(none)' {neither}",
        "line 14: psql runs no statement without a closing ; (nor a \\command): 'SELECT 1'",
        # The listed block's closing fence, seen as the opening of one.
        f"line 20: a block of language '(none)' {neither}",
    ]


def test_a_file_written_twice_on_a_page_runs_twice(tmp_path: Path) -> None:
    """The second `# NAME.py` block was imported from sys.modules: it never ran."""
    page = tmp_path / "page.md"
    page.write_text(
        "```python\n# shown.py\nVERSION = 1\n```\n\n"
        "```python\n# shown.py\nVERSION = 2\n```\n\n"
        "```python\nimport shown\n\nassert (VERSION, shown.VERSION) == (2, 2)\n```\n\n"
        "```python\n# re.py\nraise SystemExit('the page shadows a module')\n```\n"
    )
    workdir = tmp_path / "run"
    workdir.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "dev")}
    result = subprocess.run(
        [sys.executable, "-m", "taskboard_dev.docs_examples", str(page), str(workdir)],
        env=env,
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=PAGE_TIMEOUT,
        check=False,
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"RuntimeError: {page}:18: the block's file re.py would not run: module re is" in (
        result.stderr
    )


def session(*lines: str) -> docs_examples.Block:
    return docs_examples.Block("psql", 1, "\n".join(lines) + "\n")


def test_a_statement_that_fails_where_the_page_shows_success_fails(
    make_database: MakeDatabase,
) -> None:
    block = session("taskboard=# SELECT 1/0 AS x;", " x", "---", " 1", "(1 row)")
    with pytest.raises(AssertionError, match="ERROR:  division by zero"):
        docs_examples.check_session(ROOT / "README.md", block, make_database())


def test_a_session_showing_fewer_lines_than_psql_prints_fails(
    make_database: MakeDatabase,
) -> None:
    block = session(
        "taskboard=# SELECT x FROM generate_series(1, 2) AS x;", " x", "---", " 1", "(2 rows)"
    )
    with pytest.raises(AssertionError, match="psql printed"):
        docs_examples.check_session(ROOT / "README.md", block, make_database())


def test_a_statement_psql_never_finishes_fails_in_time(
    make_database: MakeDatabase, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An open quote swallowed the separator: the session waited forever."""
    monkeypatch.setattr(docs_examples, "PSQL_READ_TIMEOUT_SECONDS", 1)
    block = session("taskboard=# SELECT 'open;", " x")
    with pytest.raises(RuntimeError, match=r"psql did not finish \"SELECT 'open;\" in 1s"):
        docs_examples.check_session(ROOT / "README.md", block, make_database())


def test_the_examples_a_page_includes_run_as_its_own(tmp_path: Path) -> None:
    """The site shows what --8<-- includes, so the runner reads the page as the
    site does: an included section's blocks run with the page's."""
    (tmp_path / "notes.md").write_text(
        "Before.\n<!-- --8<-- [start:shown] -->\n```python\nshown = 1\n```\n"
        "<!-- --8<-- [end:shown] -->\nAfter.\n"
    )
    page = tmp_path / "page.md"
    page.write_text('Intro.\n\n--8<-- "notes.md:shown"\n\n```python\nassert shown == 1\n```\n')
    assert docs_examples.page_text(page, tmp_path) == (
        "Intro.\n\n```python\nshown = 1\n```\n\n```python\nassert shown == 1\n```\n"
    )
    page.write_text('--8<-- "notes.md:missing"\n')
    with pytest.raises(ValueError, match=r"notes\.md has no section 'missing'"):
        docs_examples.page_text(page, tmp_path)


def test_getting_started_runs_the_readmes_example() -> None:
    """The first task is written once, in the README, and Getting started
    includes it: its later blocks import the module the README's block makes."""
    [readme_block] = docs_examples.python_blocks(ROOT / "README.md")
    started = docs_examples.python_blocks(ROOT / "docs" / "getting-started.md")
    assert readme_block.code in [block.code for block in started]
