"""``python -m soak``: run the fault-injection soak (see soak/runner.py)."""

from __future__ import annotations

import sys

from soak.runner import main

sys.exit(main())
