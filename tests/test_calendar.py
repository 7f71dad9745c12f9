"""The one calendar (core/calendar.py), against Python's own datetime."""

from datetime import UTC, datetime, timedelta

import pytest

from replicaplan.core import calendar


@pytest.mark.parametrize(
    "when",
    [
        datetime(1970, 1, 1, tzinfo=UTC),
        datetime(2023, 11, 16, 14, 30, tzinfo=UTC),  # the Azure trace's day, a Thursday
        datetime(2024, 1, 7, 0, 0, tzinfo=UTC),  # a Sunday at midnight
        datetime(2024, 1, 6, 23, 59, tzinfo=UTC),  # the minute before
        datetime(2026, 12, 6, 9, 15, tzinfo=UTC),
    ],
)
def test_weekday_and_minute_of_the_week_are_the_calendars(when):
    seconds = when.timestamp()
    cron_weekday = (when.weekday() + 1) % 7  # datetime: Monday 0; cron: Sunday 0
    assert calendar.weekday(seconds) == cron_weekday
    sunday = (when - timedelta(days=cron_weekday)).replace(hour=0, minute=0)
    assert calendar.minute_of_week(seconds) == (when - sunday) // timedelta(minutes=1)
    assert calendar.MINUTES_PER_WEEK == 10_080
