"""The app of the dashboard's tests: `taskboard worker apps.dashboard_app:app`, run from tests/.

`flaky` fails while the file named by its payload's `gate` is missing, and
succeeds once it exists: a person sees it fail, fixes the cause, retries it
and watches it succeed. `nightly` gives the schedules page a cron to show.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from taskboard.app import Taskboard
from taskboard.context import BaseContext

QUEUE = "dash"

app = Taskboard()


@app.task("flaky", queue=QUEUE, max_attempts=1)
def flaky(ctx: BaseContext, payload: Any) -> dict[str, Any]:
    gate = Path(payload["gate"])
    if not gate.exists():
        raise ConnectionError(f"the mail relay refused the connection ({gate.name} is missing)")
    return {"sent": True, "attempt": ctx.attempt}


@app.task("echo", queue=QUEUE)
def echo(ctx: BaseContext, payload: Any) -> Any:
    return payload


@app.periodic("0 3 * * *", name="nightly-report")
@app.task("report", queue="reports")
def report(ctx: BaseContext, payload: Any) -> None:
    return None
