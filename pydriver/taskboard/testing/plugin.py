"""The pytest plugin of taskboard.testing (entry point ``taskboard``): fixtures only."""

from __future__ import annotations
