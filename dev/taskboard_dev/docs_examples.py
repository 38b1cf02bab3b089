"""The docs' examples, read from their pages and run as a reader would.

tests/release/test_docs_examples.py runs every page of docs/ and the README:

- a page's ```python blocks run in order in one fresh Python process, one
  namespace shared by all of them (as in a notebook), in a fresh directory,
  with TASKBOARD_DATABASE_URL naming a freshly deployed database. A block
  whose first line is `# NAME.py` is also written to NAME.py there and run
  as the module NAME, so later blocks can import it. A block that only
  includes a file (`--8<-- "examples/..."`) shows that file, which its own
  test runs, and is not run here;
- a page's ```psql blocks are sessions: the lines after a prompt
  (`db=#`, `db=>`, continued by `db-#`, `db(>` and the like) run in one psql against a freshly
  deployed database, and what psql prints must be what the page shows but
  for uuids, timestamps and intervals, which are matched by their shape (a
  uuid the page shows and uses later stands for the one psql printed).

Every other block must be of a language that is only shown (SHOWN: sh,
text, sql, ...): `problems(text)` names a block of another language or of
none (```py3 once ran nothing), a fence the collector would not see (after
`>` or a list marker on its line), and a psql statement that psql would
not run (no closing `;`). tests/release/test_docs_examples.py fails on any. A
page that includes Markdown (`--8<-- "README.md:myapp"`) is read as the
site shows it (`page_text`): the examples it includes run as its own.

Run one page by hand: python -m taskboard_dev.docs_examples PAGE (with
TASKBOARD_DATABASE_URL set): it runs the page's Python blocks.
"""

from __future__ import annotations

import importlib
import os
import queue
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from taskboard_dev.devdb import project_root

FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>[^`\n]*)$")
# A fence after other text on its line (a quote's `>`, a list marker): the page
# renders a code block there that FENCE does not see.
HIDDEN_FENCE = re.compile(r"^[ \t]*(?:>|[-*+]|\d+[.)])[ \t>]*(?:`{3,}|~{3,})[ \t]*[^`~\s]")
# The info string's first word names the language: ```python title="x.py", ```{.python}.
LANGUAGE_WORD = re.compile(r"^\{?\s*\.?(?P<language>[^\s{}]*)")
ALIASES = {"py": "python", "py3": "python", "python3": "python"}
RUN = ("python", "psql")
# Languages a page shows and nothing runs: a block of any other, or of none, is a problem.
SHOWN = frozenset(
    {"sh", "bash", "console", "text", "sql", "ini", "toml", "yaml", "json", "promql", "javascript"}
)
PSQL_READ_TIMEOUT_SECONDS = 60  # for one statement's output
INCLUDE = re.compile(r'^\s*--8<--\s+"[^"]+"\s*$')
# A page's include of a Markdown file or of one section of it: "PATH" or "PATH:SECTION".
MARKDOWN_INCLUDE = re.compile(r'^\s*--8<--\s+"(?P<path>[^":]+\.md)(?::(?P<section>[\w-]+))?"\s*$')
MODULE_FILE = re.compile(r"^# ([A-Za-z_][A-Za-z0-9_]*)\.py\s*$")
PROMPT = re.compile(r"^\w+(?P<kind>[-=('\"*$][#>]) ?(?P<text>.*)$")

UUID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
TIMESTAMP = re.compile(r"\b\d{4}-\d\d-\d\d[ T]\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:[+-]\d\d(?::\d\d)?)?")
INTERVAL = re.compile(r"(?<![\d:])-?\d\d:\d\d:\d\d(?:\.\d+)?\b")


@dataclass(frozen=True)
class Block:
    """One fenced code block of a page: its language, first line of code
    (1-based, in the page) and code, indentation removed."""

    language: str
    line: int
    code: str

    @property
    def includes_only(self) -> bool:
        """True when the block only shows included files (--8<--)."""
        lines = [line for line in self.code.splitlines() if line.strip()]
        return bool(lines) and all(INCLUDE.match(line) for line in lines)


def blocks(text: str) -> Iterator[Block]:
    """The fenced code blocks of a Markdown page, in order."""
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        opening = FENCE.match(lines[index])
        index += 1
        if opening is None:
            continue
        indent, fence = opening["indent"], opening["fence"]
        language = language_of(opening["info"])
        start = index
        # A run of the fence's character at least as long closes it (CommonMark): a longer
        # one left open swallowed the blocks after it.
        closing = re.compile(rf"{re.escape(fence[0])}{{{len(fence)},}}")
        while index < len(lines) and not closing.fullmatch(lines[index].strip()):
            index += 1
        body = [
            line[len(indent) :] if line.startswith(indent) else line.lstrip()
            for line in lines[start:index]
        ]
        index += 1
        yield Block(language, start + 1, "\n".join(body) + "\n")


def language_of(info: str) -> str:
    """The language an info string names, lowercased, aliases resolved ("" for none)."""
    word = LANGUAGE_WORD.match(info.strip())
    language = (word["language"] if word else "").lower()
    return ALIASES.get(language, language)


def problems(text: str) -> list[str]:
    """Why an example of a page would not run, or run other than shown: each with its line."""
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        if HIDDEN_FENCE.match(line):
            found.append(
                f"line {number}: a fence after a quote or list marker is not collected: "
                "put it on a line of its own, indented"
            )
    for block in blocks(text):
        if block.language not in RUN and block.language not in SHOWN:
            found.append(
                f"line {block.line - 1}: a block of language {block.language or '(none)'!r} "
                f"neither runs ({', '.join(RUN)}) nor is only shown ({', '.join(sorted(SHOWN))}): "
                "name one of these"
            )
        if block.language == "psql":
            try:
                steps = session_steps(block)
            except ValueError as exc:
                found.append(str(exc))
                continue
            for step in steps:
                if not runs_at_once(step.statement):
                    found.append(
                        f"line {block.line}: psql runs no statement without a closing ; "
                        f"(nor a \\command): {step.statement[-1]!r}"
                    )
    return found


def page_text(page: Path, root: Path) -> str:
    """The page as the site shows it: each line including Markdown
    (`--8<-- "README.md:myapp"`) replaced by that file or section, so the
    examples a page includes run with the page's own."""
    lines = []
    for line in page.read_text(encoding="utf-8").splitlines():
        include = MARKDOWN_INCLUDE.match(line)
        if include is None:
            lines.append(line)
            continue
        included = (root / include["path"]).read_text(encoding="utf-8")
        if include["section"]:
            start, end = f"[start:{include['section']}]", f"[end:{include['section']}]"
            if start not in included or end not in included:
                raise ValueError(f"{page}: {include['path']} has no section {include['section']!r}")
            included = included.partition(start)[2].partition(end)[0]
            included = included.split("\n", 1)[1].rsplit("\n", 1)[0]  # the marker lines
        lines.extend(included.splitlines())
    return "\n".join(lines) + "\n"


def python_blocks(page: Path) -> list[Block]:
    """The page's Python blocks that run (not those only including a file),
    those of the Markdown it includes among them."""
    return [
        block
        for block in blocks(page_text(page, project_root()))
        if block.language == "python" and not block.includes_only
    ]


def psql_blocks(page: Path) -> list[Block]:
    """The page's psql sessions, those of the Markdown it includes among them."""
    return [block for block in blocks(page_text(page, project_root())) if block.language == "psql"]


# -- Python ---------------------------------------------------------------------


def run_python_page(page: Path, workdir: Path) -> None:
    """Run the page's Python blocks in order in this process, one namespace
    for all, in `workdir`. A traceback names the page and its line."""
    os.chdir(workdir)
    sys.path.insert(0, str(workdir))
    sys.dont_write_bytecode = True  # a file written again within a second is read again
    namespace: dict[str, object] = {"__name__": "__docs__"}
    for block in python_blocks(page):
        first_line = block.code.split("\n", 1)[0]
        module_file = MODULE_FILE.match(first_line)
        if module_file is not None:
            name = module_file[1]
            path = workdir / f"{name}.py"
            imported = sys.modules.pop(name, None)
            if imported is not None and getattr(imported, "__file__", None) != str(path):
                raise RuntimeError(
                    f"{page}:{block.line}: the block's file {name}.py would not run: module "
                    f"{name} is already imported from {getattr(imported, '__file__', None)}"
                )
            path.write_text(block.code)  # a second block of the same file runs again
            importlib.invalidate_caches()
            module = importlib.import_module(name)
            namespace.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
            continue
        # Padding keeps the page's line numbers in a traceback.
        source = "\n" * (block.line - 1) + block.code
        exec(compile(source, str(page), "exec"), namespace)


# -- psql -----------------------------------------------------------------------


@dataclass
class Step:
    """One statement of a psql session and the output the page shows."""

    statement: list[str]
    expected: list[str] = field(default_factory=list)


def session_steps(block: Block) -> list[Step]:
    """The statements of a ```psql block, each with its shown output."""
    steps: list[Step] = []
    for line in block.code.splitlines():
        prompt = PROMPT.match(line)
        if prompt is not None and prompt["kind"].startswith("="):
            steps.append(Step([prompt["text"]]))
        elif prompt is not None and steps and not steps[-1].expected:
            steps[-1].statement.append(prompt["text"])
        elif steps:
            steps[-1].expected.append(line)
        elif line.strip():
            raise ValueError(f"line {block.line}: a psql block starts with a prompt, not {line!r}")
    return steps


def runs_at_once(statement: list[str]) -> bool:
    """Whether psql runs `statement` as its last line is read: it ends in `;` (or a \\g
    form), or it is a backslash command."""
    last = statement[-1].rstrip()
    return (
        statement[0].lstrip().startswith("\\")
        or last.endswith(";")
        or last.split("--", 1)[0].rstrip().endswith(";")  # a comment after the ;
        or re.search(r"\\g\w*(\s.*)?$", last) is not None
    )


def shape(line: str) -> str:
    """A line with its uuids, timestamps and intervals replaced by their kind,
    spaces and rules collapsed (column widths follow the values' lengths)."""
    line = UUID.sub("<uuid>", line)
    line = TIMESTAMP.sub("<timestamp>", line)
    line = INTERVAL.sub("<interval>", line)
    line = re.sub(r"-{2,}", "-", line)
    return re.sub(r"\s+", " ", line).strip()


def trimmed(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


class Psql:
    """One psql session fed a statement at a time (stdout unbuffered, errors
    in the same stream, as a terminal shows them)."""

    def __init__(self, url: str) -> None:
        self.process = subprocess.Popen(
            ["stdbuf", "-o0", "-e0", "psql", "-X", "-P", "pager=off", "--dbname", url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        self.count = 0
        # Lines read by a thread, so that a statement psql never finishes times out.
        self.lines: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def run(self, statement: str) -> list[str]:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.count += 1
        separator = f"__taskboard_docs_{self.count}__"
        self.process.stdin.write(f"{statement}\n\\echo {separator}\n")
        self.process.stdin.flush()
        output: list[str] = []
        while True:
            try:
                line = self.lines.get(timeout=PSQL_READ_TIMEOUT_SECONDS)
            except queue.Empty:
                raise RuntimeError(
                    f"psql did not finish {statement!r} in {PSQL_READ_TIMEOUT_SECONDS}s (an open "
                    f"quote, or a statement that reads its input): {output}"
                ) from None
            if line is None:
                raise RuntimeError(f"psql ended during {statement!r}: {output}")
            if line == separator:
                return output
            output.append(line)

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        try:
            self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def check_session(page: Path, block: Block, url: str) -> None:
    """Run one psql session of a page; raise AssertionError at the first
    statement whose output differs from what the page shows."""
    psql = Psql(url)
    shown_as: dict[str, str] = {}  # a uuid the page shows -> the one psql printed
    try:
        for step in session_steps(block):
            statement = "\n".join(step.statement)
            for shown, actual in shown_as.items():
                statement = statement.replace(shown, actual)
            output = trimmed(psql.run(statement))
            expected = trimmed(step.expected)
            where = f"{page}:{block.line}: {step.statement[0]}"
            assert [shape(line) for line in output] == [shape(line) for line in expected], (
                f"{where}\npsql printed:\n"
                + "\n".join(output)
                + "\nthe page shows:\n"
                + "\n".join(expected)
            )
            for printed, shown in zip(output, expected, strict=True):
                for actual_uuid, shown_uuid in zip(
                    UUID.findall(printed), UUID.findall(shown), strict=True
                ):
                    shown_as.setdefault(shown_uuid, actual_uuid)
    finally:
        psql.close()


def main() -> None:
    """python -m taskboard_dev.docs_examples PAGE [WORKDIR]"""
    page = Path(sys.argv[1]).resolve()
    workdir = Path(sys.argv[2]) if len(sys.argv) > 2 else Path.cwd()
    run_python_page(page, workdir.resolve())


if __name__ == "__main__":
    main()
