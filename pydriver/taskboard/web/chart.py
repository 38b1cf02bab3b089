"""The overview's chart: finished jobs and failed attempts per minute, as inline SVG."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Mapping
from typing import Any

from markupsafe import Markup, escape

WIDTH = 720
HEIGHT = 160
MARGIN_LEFT = 44
MARGIN_BOTTOM = 18
MARGIN_TOP = 8
MINUTE = dt.timedelta(minutes=1)


def per_minute(
    rows: Iterable[Mapping[str, Any]], now: dt.datetime, minutes: int
) -> list[tuple[dt.datetime, int, int]]:
    """(minute, succeeded, failed) for each of the last `minutes` minutes, oldest first.

    `failed` counts failed attempts (job_activity's `failed`), which
    include the last attempt of every job that died of an error.
    """
    last = now.replace(second=0, microsecond=0)
    first = last - (minutes - 1) * MINUTE
    succeeded = dict.fromkeys((first + i * MINUTE for i in range(minutes)), 0)
    failed = dict(succeeded)
    for row in rows:
        minute = row["minute_start"]
        if minute in succeeded:
            succeeded[minute] += int(row["succeeded"])
            failed[minute] += int(row["failed"])
    return [(minute, succeeded[minute], failed[minute]) for minute in succeeded]


def activity_svg(buckets: list[tuple[dt.datetime, int, int]]) -> Markup:
    """Succeeded jobs as green bars above the axis, failed attempts as red bars below it."""
    top = max((s for _, s, _ in buckets), default=0)
    bottom = max((f for _, _, f in buckets), default=0)
    span = max(top + bottom, 1)
    plot_height = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM
    axis = MARGIN_TOP + plot_height * top / span if top + bottom else MARGIN_TOP + plot_height / 2
    step = (WIDTH - MARGIN_LEFT) / max(len(buckets), 1)
    parts = [
        f'<svg class="chart" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        f'aria-label="Succeeded jobs and failed attempts per minute">',
        f'<line x1="{MARGIN_LEFT}" y1="{axis:.1f}" x2="{WIDTH}" y2="{axis:.1f}" class="axis"/>',
        f'<text x="{MARGIN_LEFT - 4}" y="{MARGIN_TOP + 10}" class="label" text-anchor="end">{top}</text>',
        f'<text x="{MARGIN_LEFT - 4}" y="{HEIGHT - MARGIN_BOTTOM}" class="label" '
        f'text-anchor="end">{bottom}</text>',
    ]
    for i, (minute, succeeded, failed) in enumerate(buckets):
        x = MARGIN_LEFT + i * step + step * 0.1
        width = step * 0.8
        tip = escape(f"{minute:%H:%M} UTC: {succeeded} succeeded, {failed} failed attempts")
        if succeeded:
            h = plot_height * succeeded / span
            parts.append(
                f'<rect class="ok" x="{x:.1f}" y="{axis - h:.1f}" width="{width:.1f}" '
                f'height="{h:.1f}"><title>{tip}</title></rect>'
            )
        if failed:
            h = plot_height * failed / span
            parts.append(
                f'<rect class="bad" x="{x:.1f}" y="{axis:.1f}" width="{width:.1f}" '
                f'height="{h:.1f}"><title>{tip}</title></rect>'
            )
    if buckets:
        for i, anchor in ((0, "start"), (len(buckets) // 2, "middle"), (len(buckets) - 1, "end")):
            x = (
                MARGIN_LEFT
                + i * step
                + (0 if anchor == "start" else step if anchor == "end" else step / 2)
            )
            parts.append(
                f'<text x="{x:.1f}" y="{HEIGHT - 4}" class="label" text-anchor="{anchor}">'
                f"{buckets[i][0]:%H:%M}</text>"
            )
    parts.append("</svg>")
    return Markup("".join(parts))
