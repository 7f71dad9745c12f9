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
