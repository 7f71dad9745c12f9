"""Text for people: the policy table, clock times and the lines the CLI and the book print.

The models return numbers; this module alone turns them into text.
"""

from __future__ import annotations

import html
from dataclasses import dataclass

from replicaplan.scenarios.studies import event_requests
from replicaplan.simulation.day import DayPolicy, DayResult


def clock(minute: int) -> str:
    """Minute of the day as HH:MM.

    >>> clock(21 * 60 - 1)
    '20:59'
    """
    return f"{minute // 60:02d}:{minute % 60:02d}"


def zone_label(zone: str) -> str:
    """A time zone as a reader sees it beside a clock: UTC for either of its IANA names.

    >>> zone_label("Etc/UTC"), zone_label("Europe/Rome")
    ('UTC', 'Europe/Rome')
    """
    return "UTC" if zone in ("Etc/UTC", "UTC") else zone


def policy_table_text(rows: list[tuple[DayPolicy, DayResult]]) -> str:
    """The table with the source's columns and digits: hours, uncovered, queued, excess, use."""
    return Table(
        ("policy", "hours", "uncov.", "queued", "excess", "use"),
        tuple(
            (
                p.name,
                f"{r.paid_hours:.1f}",
                f"{r.uncovered_minutes:d}",
                f"{r.queued_minutes:d}",
                f"{r.excess_fraction:.2%}",
                f"{r.utilization:.1%}",
            )
            for p, r in rows
        ),
    ).text()


def event_request_line(rate=None, *, event_start_min: int = 21 * 60, **kwargs) -> str:
    """The line printed under the table: replicas wanted the minute before the event and at it."""
    before, at = event_requests(rate, event_start_min=event_start_min, **kwargs)
    return (
        f"replicas requested: {before} at {clock(event_start_min - 1)}, "
        f"{at} at {clock(event_start_min)}"
    )


# ------------------------------------------------------------------ one table, three renderings


@dataclass(frozen=True)
class Table:
    """A table of already formatted cells, rendered the same way on a terminal, in Markdown and
    in HTML: one model for every table the package prints, so the three never disagree on a
    digit. The first column is left-aligned text; the others are right-aligned on a terminal."""

    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]

    def __post_init__(self):
        for row in self.rows:
            if len(row) != len(self.header):
                raise ValueError(f"a row has {len(row)} cells for {len(self.header)} columns")

    def text(self, indent: str = "") -> str:
        widths = [max(len(c) for c in col) for col in zip(self.header, *self.rows, strict=True)]
        lines = []
        for row in (self.header, *self.rows):
            first, *rest = row
            cells = [first.ljust(widths[0])] + [
                c.rjust(w) for c, w in zip(rest, widths[1:], strict=True)
            ]
            lines.append(indent + "  ".join(cells).rstrip())
        return "\n".join(lines)

    def markdown(self) -> str:
        lines = ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(r) + " |" for r in self.rows]
        return "\n".join(lines)

    def html(self, inline=html.escape) -> str:
        head = "".join(f"<th>{inline(h)}</th>" for h in self.header)
        cells = "".join(
            "<tr>" + "".join(f"<td>{inline(c)}</td>" for c in r) + "</tr>" for r in self.rows
        )
        return f"<table><thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>"
