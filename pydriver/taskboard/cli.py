"""The ``taskboard`` command (a placeholder until the CLI lands)."""

from __future__ import annotations

import sys

USAGE = "usage: taskboard {migrate,worker,enqueue,status,demo} ..."


def main() -> int:
    """Print the usage and exit 2: no command is implemented yet."""
    print(USAGE, file=sys.stderr)
    sys.exit(2)
