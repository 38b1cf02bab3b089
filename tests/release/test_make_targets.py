"""Each make target needs only the tools it uses: the demo needs Python, not the test
suite's apt packages (chromium, pgbouncer, pg_prove, Sqitch)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RULE = re.compile(r"^(?P<target>[a-zA-Z0-9_-]+):(?P<needs>[^=#\n]*)(?:##.*)?$", re.MULTILINE)


def prerequisites() -> dict[str, list[str]]:
    return {m["target"]: m["needs"].split() for m in RULE.finditer((ROOT / "Makefile").read_text())}


def test_the_demo_and_the_dashboard_need_no_test_tools() -> None:
    needs = prerequisites()
    for target in ("demo", "demo-sql", "dashboard"):
        assert target in needs, f"the Makefile has no target {target}"
        assert needs[target] == ["venv"], f"make {target} needs {needs[target]}, not only the venv"


def test_the_tests_still_install_their_tools() -> None:
    assert "tools" in prerequisites()["test"]
