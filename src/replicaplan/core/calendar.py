"""The calendar every layer counts minutes and weekdays by: minutes in a day and a week, and the
weekday of the epoch, so that a rate series' minute 0 (seconds since 1970-01-01 00:00 UTC) and
a cron expression's weekday (0 = Sunday) are placed on the same clock.

>>> weekday(0), weekday(3 * 86_400)  # 1970-01-01 was a Thursday, the 4th a Sunday
(4, 0)

Layer: core.
"""

from __future__ import annotations

MINUTES_PER_DAY = 24 * 60
MINUTES_PER_WEEK = 7 * MINUTES_PER_DAY
EPOCH_WEEKDAY = 4
"""Cron's weekday (0 = Sunday) of 1970-01-01, a Thursday: where a series' weekdays start when
its minute 0 is given in seconds since the epoch."""


def weekday(seconds_since_epoch: float) -> int:
    """Cron's weekday (0 = Sunday … 6 = Saturday) of a time in seconds since the epoch, UTC."""
    return (int(seconds_since_epoch // 86_400) + EPOCH_WEEKDAY) % 7


def minute_of_week(seconds_since_epoch: float) -> int:
    """Minutes since the last Sunday 00:00 UTC of a time in seconds since the epoch."""
    return (int(seconds_since_epoch // 60) + EPOCH_WEEKDAY * MINUTES_PER_DAY) % MINUTES_PER_WEEK


UTC = "Etc/UTC"
"""The zone a rate series' epoch seconds are in, and the cron triggers' default."""


def zone(name: str):
    """The IANA time zone ``name`` (``Europe/Rome``, ``America/New_York``, ``Etc/UTC``), or a
    ValueError that names it: the zone a schedule is learned and its cron triggers fire in."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if not isinstance(name, str) or not name.strip() or name != name.strip():
        raise ValueError(f"timezone must be an IANA time zone such as Europe/Rome, got {name!r}")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"timezone must be an IANA time zone such as Europe/Rome or Etc/UTC, got {name!r}"
        ) from None


def wall_clock_s(seconds_since_epoch: float, timezone: str = UTC) -> float:
    """The same instant on ``timezone``'s wall clock, in seconds counted as if that clock were
    UTC: epoch seconds plus the zone's offset at that instant (summer time included). Minute 0
    of a series placed this way falls on the zone's own hours and weekdays.

    >>> wall_clock_s(0.0, "Etc/UTC"), wall_clock_s(0.0, "Asia/Tokyo")
    (0.0, 32400.0)
    """
    from datetime import datetime

    offset = datetime.fromtimestamp(seconds_since_epoch, zone(timezone)).utcoffset()
    return float(seconds_since_epoch + offset.total_seconds())


def offset_changes(start_s: float, end_s: float, timezone: str = UTC) -> bool:
    """True when ``timezone``'s offset from UTC differs at ``start_s`` and ``end_s`` (a summer
    time change inside the span): hours learned on one offset then land an hour off after it."""
    return wall_clock_s(start_s, timezone) - start_s != wall_clock_s(end_s, timezone) - end_s
