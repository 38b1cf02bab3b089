"""What the tests share: helpers by subject, fixtures stay in tests/conftest.py.

- database: fresh databases, Sqitch, connections as each application role,
  moving a job's clock, logins, notifications, the first release.
- cli: the `taskboard` console script run as a user runs it.
- inprocess: a worker run in this process until a condition holds.
- processes: worker processes of tests/apps/worker_app.py, their journal and logs.
- install: role prefixes (domains), psql, and the catalog a deploy decides.
- web: a free port, a server that is up.
"""

from __future__ import annotations

from pathlib import Path

TESTS_DIR = Path(__file__).resolve().parents[1]  # apps/ is imported from here
