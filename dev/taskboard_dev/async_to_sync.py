"""Write the driver's sync calls from their asyncio source, or check they are up to date.

Each call that exists for both psycopg.Connection and psycopg.AsyncConnection
is written once, for asyncio; its sync twin is generated from it, as psycopg
generates its sync code (its tools/async_to_sync.py). Two kinds of target:

- a module `X_async.py` gives `X.py`: every `async def` of it, made sync, and
  the other names it uses imported from `X_async`;
- a file with a region marked `# -- generated sync calls ...` gets there the
  code of the region marked `# -- asyncio calls ...` made sync: the methods of
  a class that has both regions, or at module level a whole class (AsyncGroup
  gives Group in taskboard/handles.py).

Made sync means: `async` and `await` dropped, `Awaitable[T]` is `T`, each name
`aNAME` (or `_aNAME`) that an `async def` of the sources defines is `NAME`
(`_NAME`), in code, strings and comments alike, and the asyncio names of
ASYNC_NAMES are their sync counterparts. The output goes through ruff (import
order, unused imports, nested with statements joined, format), as the checked-in
files do.

    python -m taskboard_dev.async_to_sync write   # make sync
    python -m taskboard_dev.async_to_sync check   # in make lint: exit 1 when stale
"""

from __future__ import annotations

import ast
import io
import re
import subprocess
import sys
import textwrap
import tokenize
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "pydriver" / "taskboard"
RUFF = Path(sys.executable).parent / "ruff"
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)

# asyncio source module -> the sync module generated from it.
MODULES = [
    PACKAGE / "sql" / "session_async.py",
    PACKAGE / "sql" / "producer_async.py",
    PACKAGE / "sql" / "admin_async.py",
]
# Files whose region of asyncio calls gives their region of generated sync calls.
REGION_FILES = [
    PACKAGE / name
    for name in (
        "calls.py",
        "enqueueing.py",
        "queue_control.py",
        "job_admin.py",
        "results.py",
        "handles.py",
    )
]

ASYNC_NAMES = {
    "AsyncConnection": "Connection",
    "AsyncCursor": "Cursor",
    "AsyncConnectionPool": "ConnectionPool",
    "AsyncIterator": "Iterator",
    "checked_within": "sync_checked_within",
    "AsyncGroup": "Group",  # the group an app's agroup gives (taskboard.handles)
}
# Files of no generated code whose `async def` names are renamed all the same (apool is
# pool, agroup is group).
NAMED_FILES = [PACKAGE / "pools.py", PACKAGE / "app.py"]
# Phrases of docstrings and comments whose article changes with the name.
PHRASES = {"an AsyncConnection": "a Connection", "an asyncio": "a sync"}

ASYNC_REGION = re.compile(r"^(?P<indent> *)# -- asyncio calls\b.*$", re.MULTILINE)
SYNC_REGION = re.compile(r"^(?P<indent> *)# -- generated sync calls\b.*$", re.MULTILINE)
REGION_END = re.compile(
    r"^ *# -- end of (?:the )?(?:asyncio|generated sync) calls\b.*$", re.MULTILINE
)


def module_header(source: Path) -> str:
    return (
        f"# Generated from {source.name} by dev/taskboard_dev/async_to_sync.py (make sync):\n"
        f"# edit {source.name}, not this file.\n"
    )


def sync_region_marker(indent: str) -> str:
    return (
        f"{indent}# -- generated sync calls: made from the asyncio calls below by make sync\n"
        f"{indent}# (dev/taskboard_dev/async_to_sync.py); edit those, not these.\n"
    )


def async_names(modules: list[str], regions: list[str]) -> dict[str, str]:
    """aNAME -> NAME (and _aNAME -> _NAME) for every `async def` of `modules` (the asyncio
    modules, the files with regions and NAMED_FILES) and every def of `regions`, the module names
    X_async -> X, and ASYNC_NAMES."""
    names = dict(ASYNC_NAMES)
    defs: list[ast.AST] = [
        node
        for text in modules
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.AsyncFunctionDef)
    ]
    for text in regions:
        code = textwrap.dedent(text)
        defs += [n for n in ast.walk(ast.parse(code)) if isinstance(n, DEFS)]
    for node in defs:
        assert isinstance(node, DEFS)
        match = re.fullmatch(r"(_?)a([a-z]\w*)", node.name)
        if match:
            names[node.name] = match[1] + match[2]
    for source in MODULES:
        names[source.stem] = source.stem.removesuffix("_async")
    return names


def rename_words(text: str, names: dict[str, str]) -> str:
    for phrase, sync in PHRASES.items():
        text = text.replace(phrase, sync)
    pattern = re.compile(
        r"\b(" + "|".join(map(re.escape, sorted(names, key=len, reverse=True))) + r")\b"
    )
    return pattern.sub(lambda m: names[m[1]], text)


@dataclass
class Edit:
    start: tuple[int, int]
    end: tuple[int, int]
    text: str


def make_sync(code: str, names: dict[str, str]) -> str:
    """`code` (whole lines of Python) with its asyncio made sync."""
    tokens = list(tokenize.generate_tokens(io.StringIO(code).readline))
    edits: list[Edit] = []
    i = 0
    while i < len(tokens):
        tok = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if tok.type == tokenize.NAME and tok.string in ("async", "await") and nxt is not None:
            end = nxt.start if nxt.start[0] == tok.start[0] else tok.end
            edits.append(Edit(tok.start, end, ""))
        elif tok.type == tokenize.NAME and tok.string == "Awaitable" and nxt and nxt.string == "[":
            depth, j = 0, i + 1
            while True:
                depth += {"[": 1, "]": -1}.get(tokens[j].string, 0)
                if depth == 0:
                    break
                j += 1
            edits.append(Edit(tok.start, nxt.end, ""))
            edits.append(Edit(tokens[j].start, tokens[j].end, ""))
        elif tok.type == tokenize.NAME and tok.string == "asyncio" and nxt and nxt.string == ".":
            if i + 2 < len(tokens) and tokens[i + 2].string == "sleep":
                edits.append(Edit(tok.start, tok.end, "time"))
        elif tok.type == tokenize.NAME and tok.string in names:
            edits.append(Edit(tok.start, tok.end, names[tok.string]))
        elif tok.type in (tokenize.STRING, tokenize.COMMENT):
            renamed = rename_words(tok.string, names)
            if renamed != tok.string:
                edits.append(Edit(tok.start, tok.end, renamed))
        i += 1
    lines = code.splitlines(keepends=True)
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        (r1, c1), (r2, c2) = edit.start, edit.end
        head, tail = lines[r1 - 1][:c1], lines[r2 - 1][c2:]
        lines[r1 - 1 : r2] = [head + edit.text + tail]
    return "".join(lines)


def ruff(text: str, path: Path) -> str:
    """`text` as ruff leaves the file `path`: imports sorted, unused ones gone, formatted."""
    fixed = subprocess.run(
        [
            str(RUFF),
            "check",
            "--fix",
            "--select",
            "I,F401,SIM117",
            "--quiet",
            "--exit-zero",
            "--stdin-filename",
            str(path),
            "-",
        ],
        input=text,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout
    return subprocess.run(
        [str(RUFF), "format", "--stdin-filename", str(path), "-"],
        input=fixed,
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
    ).stdout


def line_span(node: ast.stmt) -> tuple[int, int]:
    """First line (its decorators included) and last line of `node`, 1-based."""
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    assert node.end_lineno is not None
    return first, node.end_lineno


def sync_module(source: Path, names: dict[str, str]) -> str:
    """The sync module of `source`: its imports and its async defs made sync, its other
    top-level names imported from it."""
    text = source.read_text()
    tree = ast.parse(text)
    lines = text.splitlines(keepends=True)
    imports: list[str] = []
    defs: list[str] = []
    others: list[str] = []
    for node in tree.body:
        first, last = line_span(node)
        chunk = "".join(lines[first - 1 : last])
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(chunk)
        elif isinstance(node, ast.AsyncFunctionDef):
            # The comment lines just above a def belong to it.
            while first > 1 and lines[first - 2].startswith("#"):
                first -= 1
            defs.append("".join(lines[first - 1 : last]))
        elif isinstance(node, ast.FunctionDef | ast.ClassDef):
            others.append(node.name)
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            others += [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    docstring = ast.get_docstring(tree, clean=False) or ""
    module = f"taskboard.sql.{source.stem}"
    body = [
        module_header(source),
        f'"""{rename_words(docstring, names)}"""\n\n',
        make_sync("".join(imports), names),
        f"from {module} import {', '.join(others)}\n" if others else "",
        "\n\n",
        "\n\n".join(make_sync(d, names) for d in defs),
    ]
    return ruff("".join(body), source.with_name(source.stem.removesuffix("_async") + ".py"))


def regions(text: str, start: re.Pattern[str], path: Path) -> list[tuple[int, int, str]]:
    """(start, end, indent) of each region opened by `start`: its marker included, its
    end marker not."""
    found = []
    for opening in start.finditer(text):
        end = REGION_END.search(text, opening.end())
        if end is None:
            raise SystemExit(f"{path}: the region at offset {opening.start()} has no end marker")
        found.append((opening.start(), end.start(), opening["indent"]))
    return found


def region_pairs(path: Path) -> list[tuple[str, tuple[int, int, str]]]:
    """Each asyncio region's code, with the generated region it gives (in file order)."""
    text = path.read_text()
    sources = regions(text, ASYNC_REGION, path)
    targets = regions(text, SYNC_REGION, path)
    if not sources or len(sources) != len(targets):
        raise SystemExit(
            f"{path}: {len(sources)} asyncio regions and {len(targets)} generated ones"
        )
    return [
        (text[a:b].split("\n", 1)[1], target)
        for (a, b, _), target in zip(sources, targets, strict=True)
    ]


def sync_regions(path: Path, names: dict[str, str]) -> str:
    """`path` with each generated sync region made anew from its asyncio region."""
    text = path.read_text()
    for source, (start, end, indent) in reversed(region_pairs(path)):
        sync = sync_region_marker(indent) + "\n" + make_sync(source, names) + "\n"
        text = text[:start] + sync + text[end:]
    return ruff(text, path)


def generated() -> dict[Path, str]:
    """Every generated file and what it should hold."""
    region_code = [code for path in REGION_FILES for code, _ in region_pairs(path)]
    sources = (*MODULES, *REGION_FILES, *NAMED_FILES)
    names = async_names([p.read_text() for p in sources], region_code)
    out = {
        source.with_name(source.stem.removesuffix("_async") + ".py"): sync_module(source, names)
        for source in MODULES
    }
    for path in REGION_FILES:
        out[path] = sync_regions(path, names)
    return out


def main(argv: list[str]) -> int:
    if argv not in (["write"], ["check"]):
        print("usage: python -m taskboard_dev.async_to_sync write|check", file=sys.stderr)
        return 2
    stale = []
    for path, text in generated().items():
        if path.exists() and path.read_text() == text:
            continue
        stale.append(path.relative_to(ROOT))
        if argv == ["write"]:
            path.write_text(text)
    if argv == ["check"] and stale:
        for path in stale:
            print(f"{path} is not what its asyncio source gives: run make sync", file=sys.stderr)
        return 1
    for path in stale:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
