"""A log's traffic under the book's policies, priced, and the recommendation (planner/replay.py)."""

import math

import numpy as np
import pytest
from test_forecast import three_days

from replicaplan.core.promises import Promises
from replicaplan.core.sizing import ReplicaRate
from replicaplan.core.startup import Startup
from replicaplan.economics.cost import Pricing
from replicaplan.planner import plan

PRICE = {"pricing": Pricing(2.0, 200.0)}


def test_replay_of_a_step_by_hand():
    """2 req/s for an hour, 10 for half an hour, 2 again; μ* = 8, ρ* = 0.8 (6.4 req/s each)."""
    rate = np.r_[np.full(60, 2.0), np.full(30, 10.0), np.full(30, 2.0)]
    always, chase, spares = plan.replay(
        rate,
        ReplicaRate(8.0, 0.8),
        startup=Startup(8),
        pricing=Pricing(2.0, 211.5),
    )
    assert always.result.paid_hours == pytest.approx(2 * 2.0)  # ⌈10/6.4⌉ = 2 replicas, 2 h
    assert always.result.uncovered_minutes == 0
    assert chase.result.uncovered_minutes == 8  # the step waits one start-up
    assert plan.largest_step_reserve(rate, ReplicaRate(8.0, 0.8)) == 2  # ⌈8/6.4⌉
    assert spares.result.uncovered_minutes == 0
    served = (60 * 2 + 30 * 10 + 30 * 2) * 60  # every request finds room in the always-on fleet
    tokens = served * 211.5  # the log's own mean answer, not the running example's
    assert always.priced.per_million == pytest.approx(4.0 * 2.0 / tokens * 1e6)
    # chase: one replica of μ* = 8 req/s meets 10 req/s for 8 minutes, 2 × 8 of 480 req/s-min
    assert chase.result.excess_fraction == pytest.approx(2 * 8 / (60 * 2 + 30 * 10 + 30 * 2))
    best, why = plan.recommend([always, chase, spares])  # 3.3 % beyond capacity is over 1 %
    assert best is always and "at most 1.00% of requests" in why  # cheaper than spares all along
    best, why = plan.recommend([always, chase, spares], plan.Sizing(short_budget=0))
    assert best is always and "no minute uncovered" in why
    best, why = plan.recommend([always, chase, spares], plan.Sizing(short_budget=0.04))
    assert best is chase and "at most 4.00%" in why
    assert plan.default_short_budget(0.9) == pytest.approx(0.01)
    assert plan.default_short_budget(0.99) == pytest.approx(0.001)
    stricter = Promises(quota=0.99)  # the default budget follows the quota: 0.1 %
    assert plan.recommend([always, chase, spares], promises=stricter)[0] is always
    with pytest.raises(ValueError, match="short_budget"):
        plan.Sizing(short_budget=1.0)


def test_recommend_when_nothing_covers():
    rate = np.r_[np.full(10, 1.0), np.full(10, 50.0)]
    rows = plan.replay(rate, ReplicaRate(8.0, 0.8), startup=Startup(8), **PRICE)
    rows = [r for r in rows if r.result.uncovered_minutes > 0]
    best, why = plan.recommend(rows)
    assert "fewest" in why and best.result.uncovered_minutes == min(
        r.result.uncovered_minutes for r in rows
    )


def test_the_replay_has_a_schedule_row_only_for_two_days_or_more():
    one = plan.replay(three_days()[:1440], ReplicaRate(8.0, 0.8), **PRICE)
    assert len(one) == 3
    rows = plan.replay(three_days(), ReplicaRate(8.0, 0.8), startup=Startup(8), **PRICE)
    assert len(rows) == 4 and rows[3].policy.forecast
    chase, sched = rows[1].result, rows[3].result
    # the schedule cannot act before the first minute whose look-ahead reaches day 1
    assert np.array_equal(chase.ready[: 1440 - 8], sched.ready[: 1440 - 8])


def test_startup_sensitivity_on_a_step_by_hand():
    """2 → 10 req/s at once (μ* = 8, ρ* = 0.8): chasing is short for exactly one start-up."""
    rate = np.r_[np.full(60, 2.0), np.full(30, 10.0), np.full(30, 2.0)]
    sens = plan.startup_sensitivity(rate, ReplicaRate(8.0, 0.8), [0, 3, 8], **PRICE)
    assert list(sens.per_million) == ["always on", "chase", "spares"]  # one day: no schedule
    assert sens.uncovered["chase"].tolist() == [0, 3, 8]
    assert sens.uncovered["spares"].tolist() == [0, 0, 0]  # ⌈8/6.4⌉ = 2 spares cover the step
    assert sens.first_short("chase") == 3 and sens.first_short("spares") is None
    # always on does not depend on the start-up; chasing pays a little more with a slower start
    assert np.ptp(sens.per_million["always on"]) == 0
    with pytest.raises(ValueError, match="startups"):
        plan.startup_sensitivity(rate, ReplicaRate(8.0, 0.8), [], **PRICE)


def test_the_weekday_median_beats_the_pooled_mean_on_a_week_it_has_not_seen():
    """Two weeks from Thursday 1970-01-01: 2 req/s, except 13:00-14:00 at 20 req/s on weekdays and
    8 at weekends; μ* = 8, ρ* = 0.8, so that hour needs ⌈20/6.4⌉ = 4 or ⌈8/6.4⌉ = 2 replicas.
    In the second week (days 7-13) the weekday median has each weekday's own week-one hour:
    never short, never spare. The pooled mean of the earlier days' peaks (day d sees days
    0..d-1; weekends are days 2, 3, 9, 10) is 16.6, 17, 17.3, 16.4, 15.6, 16, 16.3 req/s, each
    ⌈·/6.4⌉ = 3 replicas: one short on the five weekdays (5 × 60 min), one spare at the
    weekend (2 replica-hours)."""
    rate = np.full(14 * 1440, 2.0)
    for d in range(14):
        weekend = d % 7 in (2, 3)
        rate[d * 1440 + 13 * 60 : d * 1440 + 14 * 60] = 8.0 if weekend else 20.0
    means = [sum(20.0 if k % 7 not in (2, 3) else 8.0 for k in range(d)) / d for d in range(7, 14)]
    assert [math.ceil(m / 6.4) for m in means] == [3] * 7
    pooled, median = plan.compare_schedules(
        rate, ReplicaRate(8.0, 0.8), startup=Startup(15), from_day=7
    )
    assert (pooled.floor_short_minutes, pooled.floor_spare_hours) == (300, 2.0)
    assert (median.floor_short_minutes, median.floor_spare_hours) == (0, 0.0)
    assert median.paid_hours < pooled.paid_hours
    with pytest.raises(ValueError, match="from_day=14: the log ends before that day"):
        plan.compare_schedules(rate, ReplicaRate(8.0, 0.8), from_day=14)
