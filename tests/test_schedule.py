"""The schedule learned from earlier days and placed on the clock (planner/schedule.py)."""

import math

import numpy as np
from test_forecast import three_days

from replicaplan.core.sizing import ReplicaRate
from replicaplan.planner import plan
from replicaplan.traffic import forecast


def test_the_schedule_is_placed_on_the_clock():
    # the log starts at 12:00 UTC: its minute 0 belongs to hour 12 of its first day
    rate = np.zeros(2 * 1440)
    rate[0] = 20.0  # 12:00 on day 0
    rate[1440] = 12.0  # 12:00 on day 1
    assert forecast.days_covered(rate, start_s=12 * 3600) == 3
    table = plan.schedule(rate, ReplicaRate(8.0, 0.8), start_s=12 * 3600)
    # hour 12 seen on days 0 and 1 (mean 16 req/s): ⌈16/6.4⌉ = 3; every other hour: 0
    assert table[12] == 3 and sum(table) == 3
    fc = forecast.learned_forecast(rate, start_s=12 * 3600)
    assert fc[1440] == 20.0  # day 1's 12:00 hour learned from day 0's


def test_schedule_by_hand():
    table = plan.schedule(three_days(), ReplicaRate(8.0, 0.8))
    # hour 10: busiest minutes 5, 9, 3 → mean 17/3 → ⌈(17/3)/6.4⌉ = 1; others: mean 2 → 1
    assert table == [1] * 24
    table = plan.schedule(three_days() * 4, ReplicaRate(8.0, 0.8))
    assert table[10] == math.ceil(4 * 17 / 3 / 6.4) == 4 and table[0] == math.ceil(8 / 6.4) == 2


def test_one_days_burst_does_not_move_the_schedule():
    """Five quiet days at 4 req/s with a 60 req/s minute at 13:00 on one of them: the mean of the
    hour's peaks (the first planner's) would ask ⌈(4·4 + 60)/5/6.4⌉ = 3 replicas; the median is
    the quiet days' 4 req/s, ⌈4/6.4⌉ = 1, and so is the forecast of the day after."""
    rate = np.full(6 * 1440, 4.0)
    rate[2 * 1440 + 13 * 60] = 60.0
    assert plan.schedule(rate[: 5 * 1440], ReplicaRate(8.0, 0.8))[13] == 1
    assert math.ceil((4 * 4 + 60) / 5 / 6.4) == 3
    assert forecast.learned_forecast(rate)[5 * 1440 + 13 * 60] == 4.0
    assert forecast.pooled_mean_forecast(rate)[5 * 1440 + 13 * 60] == (4 * 4 + 60) / 5


def test_two_weeks_are_learned_by_weekday():
    """Two weeks from Monday 2024-01-01 (epoch seconds 1704067200): weekdays peak at 20 req/s
    at 13:00, weekends at 8. The table has 168 hours from Sunday (cron's order) with 4 replicas
    at 13:00 on Monday to Friday and 2 at the weekend (⌈20/6.4⌉, ⌈8/6.4⌉); the second week's
    Saturday forecasts from the first Saturday, its Monday from the first Monday."""
    start = 1704067200.0
    assert forecast.weekdays(14, start)[:7].tolist() == [1, 2, 3, 4, 5, 6, 0]
    rate = np.full(14 * 1440, 2.0)
    for d in range(14):
        rate[d * 1440 + 13 * 60] = 8.0 if d % 7 in (5, 6) else 20.0
    table = plan.schedule(rate, ReplicaRate(8.0, 0.8), start_s=start)
    assert len(table) == 168
    assert [table[24 * w + 13] for w in range(7)] == [2, 4, 4, 4, 4, 4, 2]
    assert table[24 * 3 + 12] == 1
    fc = forecast.learned_forecast(rate, start_s=start)
    assert fc[12 * 1440 + 13 * 60] == 8.0  # Saturday of week 2 learns from the first Saturday
    assert fc[7 * 1440 + 13 * 60] == 20.0  # Monday of week 2 from the first Monday
    assert fc[5 * 1440 + 13 * 60] == 20.0  # the first Saturday has no Saturday: all days before
    short = plan.schedule(rate[: 13 * 1440], ReplicaRate(8.0, 0.8), start_s=start)
    assert len(short) == 24  # thirteen days: one table for all days
