"""Samples to one comparison table, and the JSON a run leaves in bench/results/."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Any

FLOOR = "raw SQL"


@dataclass(frozen=True)
class Line:
    """One row of the table: a workload and configuration, measured in `unit`."""

    workload: str
    config: str
    unit: str
    higher_is_better: bool

    @property
    def key(self) -> str:
        return f"{self.workload} {self.config}"


@dataclass
class Samples:
    """Every measurement of a run: line -> system -> values, in the order lines were first seen."""

    lines: list[Line] = field(default_factory=list)
    values: dict[Line, dict[str, list[float]]] = field(default_factory=dict)

    def add(self, line: Line, system: str, value: float) -> None:
        if line not in self.values:
            self.lines.append(line)
            self.values[line] = {}
        self.values[line].setdefault(system, []).append(value)

    def median(self, line: Line, system: str) -> float | None:
        got = self.values.get(line, {}).get(system)
        return statistics.median(got) if got else None


def spread(values: list[float]) -> float | None:
    """(max - min) / median, or None for fewer than two values."""
    if len(values) < 2:
        return None
    middle = statistics.median(values)
    return (max(values) - min(values)) / middle if middle else None


def advantage(line: Line, ours: float | None, theirs: float | None) -> float | None:
    """How many times better Taskboard is on this line (> 1: Taskboard wins)."""
    if ours is None or theirs is None or ours <= 0 or theirs <= 0:
        return None
    return ours / theirs if line.higher_is_better else theirs / ours


def number(value: float) -> str:
    if value >= 100:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def cell(values: list[float] | None) -> str:
    if not values:
        return "-"
    text = number(statistics.median(values))
    s = spread(values)
    return f"{text} ±{s * 50:.0f}%" if s is not None else text


def table(samples: Samples, systems: list[str], labels: dict[str, str], ours: str) -> str:
    """The comparison table: one row per line, a column per system, then Taskboard's advantage."""
    peers = [s for s in systems if s != ours]
    has_floor = any(FLOOR in samples.values[line] for line in samples.lines)
    columns = [*systems, *([FLOOR] if has_floor else [])]
    header = ["workload", "unit", *(labels.get(s, s) for s in columns)]
    header += [f"TB vs {labels.get(p, p)}" for p in peers]
    rows = [header]
    for line in samples.lines:
        by_system = samples.values[line]
        unit = f"{line.unit} ({'higher' if line.higher_is_better else 'lower'} better)"
        row = [line.key, unit, *(cell(by_system.get(s)) for s in columns)]
        for peer in peers:
            adv = advantage(line, samples.median(line, ours), samples.median(line, peer))
            row.append("-" if adv is None else f"×{adv:.2f}")
        rows.append(row)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]

    def fmt(row: list[str]) -> str:
        parts = [row[0].ljust(widths[0]), row[1].ljust(widths[1])]
        parts += [value.rjust(width) for value, width in zip(row[2:], widths[2:], strict=True)]
        return " | ".join(parts)

    out = [fmt(header), "-+-".join("-" * w for w in widths)]
    out += [fmt(r) for r in rows[1:]]
    return "\n".join(out)


def to_json(samples: Samples) -> list[dict[str, Any]]:
    out = []
    for line in samples.lines:
        for system, values in samples.values[line].items():
            out.append(
                {
                    "workload": line.workload,
                    "config": line.config,
                    "unit": line.unit,
                    "higher_is_better": line.higher_is_better,
                    "system": system,
                    "runs": values,
                    "median": statistics.median(values),
                    "spread": spread(values),
                }
            )
    return out
