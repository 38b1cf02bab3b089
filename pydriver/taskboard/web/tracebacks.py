"""A stored traceback as a person reads it first: the handler's frames, not the worker's."""

from __future__ import annotations

import re

TRACEBACK_START = "Traceback (most recent call last):"
# A frame of the worker that called the handler: taskboard/worker/*.py, wherever installed.
WORKER_FRAME = re.compile(
    r'  File "[^"]*[/\\]taskboard[/\\]worker[/\\][^"/\\]+\.py", line \d+, in '
)


def handler_frames(text: str) -> tuple[str, int]:
    """The traceback without the worker's leading frames, and how many frames were left out.

    Each "Traceback (most recent call last):" block (a chained exception has
    several) loses the run of worker frames it starts with, replaced by one
    line saying so; a block made only of worker frames is kept whole.
    """
    lines = text.split("\n")
    shown: list[str] = []
    hidden = 0
    i = 0
    while i < len(lines):
        shown.append(lines[i])
        if lines[i] != TRACEBACK_START:
            i += 1
            continue
        i += 1
        start, frames = i, 0
        while i < len(lines) and WORKER_FRAME.match(lines[i]):
            i += 1
            frames += 1
            while i < len(lines) and lines[i].startswith("    "):
                i += 1  # the frame's source line and its ^^^ markers
        if frames and i < len(lines) and lines[i].startswith('  File "'):
            shown.append(f"  [{frames} frames of the Taskboard worker left out]")
            hidden += frames
        else:
            i = start
    return "\n".join(shown), hidden
