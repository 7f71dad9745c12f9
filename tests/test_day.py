"""The simulated day (simulation.day): one policy over per-minute rates, its invariants and
its inputs, a forecast beside the calendar, and the one factory of the policies."""

import math

import numpy as np
import pytest

from replicaplan.core.sizing import ReplicaRate
from replicaplan.core.startup import Startup
from replicaplan.scenarios.synthetic import reference_traffic
from replicaplan.simulation.day import simulate_day


def test_zero_startup_is_ready_at_once():
    rate = np.array([5.0, 50.0, 50.0])
    r = simulate_day(rate, startup=Startup(0))
    assert list(r.ready) == [1, 8, 8] and r.uncovered_minutes == 0


def test_scale_down_waits_for_the_window():
    rate = np.array([50.0] * 3 + [5.0] * 10)
    r = simulate_day(rate, startup=Startup(1), scale_down_window_min=5)
    # the high recommendation stays in the last five for four more minutes
    assert list(r.ready[:8]) == [8, 8, 8, 8, 8, 8, 8, 1]


def test_backlog_is_carried():
    # one replica of 8 req/s: minute 0 leaves 8 req/s × 60 s = 480 requests behind
    r = simulate_day(np.array([16.0, 4.0, 0.0, 0.0]), fixed=1)
    assert r.uncovered_minutes == 1  # only the first minute is short
    assert list(r.queued) == [True, True, False, False]  # 480 → 240 → 0
    r2 = simulate_day(np.array([16.0, 7.0, 7.0]), fixed=1)
    assert list(r2.queued) == [True, True, True]  # drains at 60 requests a minute


@pytest.fixture(scope="module")
def random_days():
    rng = np.random.default_rng(2026)
    return [np.round(rng.gamma(2.0, 10.0, size=300), 2) for _ in range(6)]


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(startup=Startup(0)),
        dict(startup=Startup(1)),
        dict(startup=Startup(8)),
        dict(startup=Startup(8), reserve=3),
        dict(startup=Startup(8), calendar=True),
        dict(fixed=9),
    ],
)
def test_invariants(random_days, kwargs):
    for rate in random_days:
        r = simulate_day(rate, **kwargs)
        assert np.all(r.paid >= r.ready)
        assert np.all(r.ready >= 1)
        assert 0 < r.utilization <= 1
        assert 0 <= r.excess_fraction <= 1
        # a minute with excess always ends with a backlog
        assert np.all(r.queued[r.excess > 0])


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(startup=Startup(1)),
        dict(startup=Startup(8)),
        dict(startup=Startup(8), calendar=True),
        dict(startup=Startup(8), reserve=2),
    ],
)
def test_more_capacity_never_pays_more(random_days, kwargs):
    rate = reference_traffic()
    for day in [rate, *random_days]:
        hours = [
            simulate_day(day, ReplicaRate(c, 0.8), **kwargs).paid_hours for c in (4, 6, 8, 10, 16)
        ]
        assert all(a >= b for a, b in zip(hours, hours[1:], strict=False)), hours


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(rate=[1.0, -1.0]), "rate"),
        (dict(rate=[1.0, math.nan]), "rate"),
        (dict(rate=[1.0, math.inf]), "rate"),
        (dict(rate=[]), "rate"),
        (dict(rate=[[1.0]]), "rate"),
        (dict(reserve=1.5), "reserve"),
        (dict(reserve=-1), "reserve"),
        (dict(reserve=True), "reserve"),
        (dict(fixed=0), "fixed"),
        (dict(scale_down_window_min=0), "scale_down_window_min"),
    ],
)
def test_bad_input(kwargs, name):
    args = dict(rate=reference_traffic()) | kwargs
    with pytest.raises(ValueError, match=name):
        simulate_day(**args)


def test_target_one_is_allowed():
    assert simulate_day(reference_traffic(), ReplicaRate(8.0, 1.0)).paid_hours > 0


def test_a_perfect_forecast_is_the_calendar_on_a_day_without_event():
    from replicaplan.scenarios.synthetic import noisy_days
    from replicaplan.traffic.forecast import seasonal_forecast

    days = noisy_days(3, noise=0.0)
    season = reference_traffic(event_rps=0.0)
    assert np.array_equal(days[0], season)
    np.testing.assert_allclose(seasonal_forecast(days), season, rtol=1e-15)
    ahead = simulate_day(season, forecast=days[0])
    calendar = simulate_day(season, calendar=True)
    assert np.array_equal(ahead.paid, calendar.paid) and np.array_equal(ahead.ready, calendar.ready)


def test_forecast_bad_input():
    from replicaplan.scenarios.synthetic import noisy_days
    from replicaplan.traffic.forecast import seasonal_forecast

    with pytest.raises(ValueError, match="history must have shape"):
        seasonal_forecast(np.ones((2, 10)))
    with pytest.raises(ValueError, match="forecast must hold one rate per minute"):
        simulate_day(reference_traffic(), forecast=np.ones(10))
    with pytest.raises(ValueError, match="noise"):
        noisy_days(2, noise=-0.1)


def test_one_factory_builds_the_books_five_policies_and_a_replays_set():
    """The source's five rows (facts: P1 holds 8 replicas all day; P2 chases with 1-minute starts;
    P3 with 8; P4 keeps 3 spares; P5 reads the calendar) and a reader's replay (no 1-minute
    chase, a schedule in place of the calendar) come from ``standard_policies``."""
    from replicaplan.scenarios.studies import reference_policies
    from replicaplan.simulation.day import standard_policies

    book = reference_policies(reference_traffic(), with_forecast=True)
    assert [(p.startup.minutes, p.fixed, p.reserve, p.calendar, p.forecast) for p in book] == [
        (0, 8, 0, False, False),
        (1, None, 0, False, False),
        (8, None, 0, False, False),
        (8, None, 3, False, False),
        (8, None, 0, True, False),
        (8, None, 0, False, True),
    ]
    assert book[0].name == "always at peak" and book[4].name == "8 min, with calendar"
    replay = standard_policies(5, Startup(4), spares=2, ahead=("forecast",))
    assert [(p.startup.minutes, p.fixed, p.reserve, p.forecast) for p in replay] == [
        (0, 5, 0, False),
        (4, None, 0, False),
        (4, None, 2, False),
        (4, None, 0, True),
    ]
    with pytest.raises(ValueError, match="ahead must be among"):
        standard_policies(5, Startup(4), spares=2, ahead=("oracle",))
    with pytest.raises(ValueError, match="names: 3 policies, got 2 names"):
        standard_policies(5, Startup(4), spares=2, names=["a", "b"])


def test_a_policy_is_checked_when_it_is_made():
    from replicaplan.simulation.day import DayPolicy

    with pytest.raises(ValueError, match="reserve must be an integer >= 0"):
        DayPolicy("spares", Startup(8), reserve=-1)
    with pytest.raises(ValueError, match="fixed must be an integer >= 1"):
        DayPolicy("none", Startup(0), fixed=0)
    with pytest.raises(ValueError, match="startup_min must be an integer >= 0"):
        DayPolicy("late", Startup(-1))
