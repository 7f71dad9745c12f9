"""Text for people: the policy table, clock times and the lines the CLI and the book print.

The models return numbers; this module alone turns them into text.
"""

from __future__ import annotations

from replicaplan.simulation.day import DayPolicy, DayResult, event_requests


def clock(minute: int) -> str:
    """Minute of the day as HH:MM.

    >>> clock(21 * 60 - 1)
    '20:59'
    """
    return f"{minute // 60:02d}:{minute % 60:02d}"


def policy_table_text(rows: list[tuple[DayPolicy, DayResult]]) -> str:
    """The table with the source's columns and digits: hours, uncovered, queued, excess, use."""
    width = max(27, *(len(p.name) + 1 for p, _ in rows))
    lines = [f"{'policy':<{width}}{'hours':>7}{'uncov.':>7}{'queued':>8}{'excess':>8}{'use':>7}"]
    for p, r in rows:
        lines.append(
            f"{p.name:<{width}}{r.paid_hours:7.1f}{r.uncovered_minutes:7d}"
            f"{r.queued_minutes:8d}{r.excess_fraction:8.2%}{r.utilization:7.1%}"
        )
    return "\n".join(lines)


def event_request_line(rate=None, *, event_start_min: int = 21 * 60, **kwargs) -> str:
    """The line printed under the table: replicas wanted the minute before the event and at it."""
    before, at = event_requests(rate, event_start_min=event_start_min, **kwargs)
    return (
        f"replicas requested: {before} at {clock(event_start_min - 1)}, "
        f"{at} at {clock(event_start_min)}"
    )
