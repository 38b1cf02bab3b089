"""`make demo` end to end: the story unfolds, with real worker processes and a real SMTP server.

The demo runs as a subprocess in a fresh deployed database of its own, so
it never touches taskboard_demo (which `make demo` may be using) nor
another test's database.
"""

from __future__ import annotations

import re
import subprocess
import sys

from conftest import MakeDatabase

DEMO_TIMEOUT_SECONDS = 240  # it takes well under a minute; a loaded machine gets room


def test_demo_tells_the_story_with_two_emails_then_one_and_one_ledger_row(
    make_database: MakeDatabase,
) -> None:
    url = make_database(deploy=True)
    done = subprocess.run(
        [sys.executable, "-m", "taskboard_dev.demo", "--database-url", url],
        capture_output=True,
        text=True,
        timeout=DEMO_TIMEOUT_SECONDS,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert re.search(r"Scenario 1 \(send, then stall\): Maya got 2 messages", output), output
    assert re.search(r"Scenario 2 \(.*\): Maya got 1 message\b", output), output
    assert re.search(r"Scenario 3 \(transactional\): the ledger holds 1 row, worker-B's", output)
    # B reclaimed each job on attempt 2, and A's token was refused every time.
    assert len(re.findall(r"Worker B \(pid \d+\) reclaimed job \d+: attempt 2,", output)) == 3
    assert len(re.findall(r"A's token \S+\) returns false", output)) == 3


def test_taskboard_demo_without_the_dev_extra_says_how_to_install_it() -> None:
    # A None entry in sys.modules makes `import aiosmtpd` fail as if it were not installed.
    code = (
        "import sys; sys.modules['aiosmtpd'] = None; "
        "from taskboard.cli import main; sys.exit(main(['demo']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert done.stderr.strip() == (
        "taskboard: error: taskboard demo needs the development extra: pip install 'taskboard[dev]'"
    )
