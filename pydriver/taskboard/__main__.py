"""``python -m taskboard``: the ``taskboard`` command (how `worker --processes` starts its children)."""

from __future__ import annotations

import sys

from taskboard.cli import main

sys.exit(main())
