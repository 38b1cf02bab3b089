"""An application's sign-up: it enqueues a welcome email, which a worker sends."""

from __future__ import annotations

from typing import Any

from taskboard import SyncContext, Taskboard

app = Taskboard()  # settings from TASKBOARD_* variables, read on first use

# Where this example "sends" mail; a real application calls its mail service here.
outbox: list[str] = []


@app.task("send_welcome", max_attempts=3)
def send_welcome(ctx: SyncContext, payload: dict[str, Any]) -> dict[str, str]:
    email = payload["email"]
    if "@" not in email:
        raise ValueError(f"not an email address: {email!r}")
    outbox.append(email)
    return {"sent_to": email}


def sign_up(email: str) -> int:
    """Sign a user up; their welcome email goes out from a worker. Returns the job's id."""
    return send_welcome.enqueue({"email": email})
