"""An app whose schedule was renamed: `nightly-report`, formerly `old-report` (tests/process/test_periodic.py)."""

from __future__ import annotations

from typing import Any

from taskboard.app import Taskboard
from taskboard.context import BaseContext

app = Taskboard()


@app.periodic("0 3 * * *", name="nightly-report", previous_names=["old-report"])
@app.task("report", queue="reports")
def report(ctx: BaseContext, payload: Any) -> None:
    return None
