import math

import numpy as np
import pytest

from replicaplan.core.sizing import ReplicaRate
from replicaplan.core.startup import Startup
from replicaplan.interface.report import event_request_line
from replicaplan.interface.report import policy_table_text as format_policy_table
from replicaplan.scenarios.studies import policy_table
from replicaplan.scenarios.synthetic import reference_traffic
from replicaplan.serving.fluid import replicas_needed as replicas_wanted
from replicaplan.simulation.day import simulate_day

SOURCE_TABLE = [
    ("192.0", 0, 0, "0.00%", "36.1%"),
    ("94.4", 1, 2, "0.08%", "73.5%"),
    ("94.4", 8, 20, "0.63%", "74.3%"),
    ("166.4", 8, 8, "0.05%", "42.0%"),
    ("96.1", 0, 0, "0.00%", "73.4%"),
]


@pytest.fixture(scope="module")
def rows():
    return policy_table()


@pytest.mark.parametrize("i", range(5))
def test_policy_table_digit_for_digit(rows, i):
    _, r = rows[i]
    hours, uncovered, queued, excess, use = SOURCE_TABLE[i]
    assert f"{r.paid_hours:.1f}" == hours
    assert r.uncovered_minutes == uncovered
    assert r.queued_minutes == queued
    assert f"{r.excess_fraction:.2%}" == excess
    assert f"{r.utilization:.1%}" == use


def test_formatted_table_has_the_source_rows(rows):
    text = format_policy_table(rows).splitlines()
    assert len(text) == 6
    for line, (hours, uncovered, queued, excess, use) in zip(text[1:], SOURCE_TABLE, strict=True):
        assert line.split()[-5:] == [hours, str(uncovered), str(queued), excess, use]


def test_event_line():
    assert event_request_line() == "replicas requested: 2 at 20:59, 7 at 21:00"


def test_facts_drawn_from_the_table(rows):
    rate = reference_traffic()
    peak_fleet = rows[0][1].ready[0]
    assert peak_fleet == 8
    assert round(rate.max() / (peak_fleet * 8.0), 2) == 0.94  # 94 % busy at the peak
    assert replicas_wanted(rate.max(), ReplicaRate(8.0, 0.8)) == 10  # the 80 % target wants 10
    assert rows[3][1].paid_hours - rows[2][1].paid_hours == pytest.approx(72.0)
    spares_ready = rows[3][1].ready[21 * 60]  # at 21:00, before new ones
    assert spares_ready * 8.0 == 40.0 and rate[21 * 60] == 42.0


def test_calendar_calls_replicas_startup_minutes_early(rows):
    chase, cal = rows[2][1], rows[4][1]
    assert chase.ready[21 * 60 + 7] < 7 <= chase.ready[21 * 60 + 8]
    assert cal.ready[21 * 60] >= 7


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


def test_use_of_the_paid_capacity_matches_the_re_run_of_the_source():
    # the facts sheet re-ran the source's listing dividing by paid (not ready) capacity:
    # 36.1 %, 73.3 %, 72.9 %, 41.6 %, 72.0 % (its note N3)
    paid_use = [round(r.paid_utilization * 100, 1) for _, r in policy_table()]
    assert paid_use == [36.1, 73.3, 72.9, 41.6, 72.0]


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


def test_a_seasonal_forecast_cannot_see_an_unannounced_event():
    from replicaplan.scenarios.synthetic import noisy_days
    from replicaplan.traffic.forecast import seasonal_forecast

    forecast = seasonal_forecast(noisy_days(7, noise=0.1, seed=1))
    rows = policy_table(forecast=forecast)
    assert [r.summary() for _, r in rows[:5]] == [r.summary() for _, r in policy_table()]
    name, result = rows[5][0].name, rows[5][1]
    assert name == "8 min, with forecast"
    assert result.uncovered_minutes == 8  # the 21:00 step still costs the whole start-up
    assert result.paid_hours > rows[2][1].paid_hours  # and scaling ahead is paid for


def test_forecast_study_error_and_cost_grow_with_noise():
    from replicaplan.scenarios.studies import forecast_study

    study = forecast_study([0.0, 0.1, 0.3], seeds=4)
    assert study.error[0] < 1e-12 and np.all(np.diff(study.error) > 0)
    assert study.uncovered_chase[0] == study.uncovered_forecast[0] == 0
    assert np.all(study.hours_forecast >= study.hours_chase)  # looking ahead never pays less
    assert study.uncovered_forecast[-1] < study.uncovered_chase[-1]


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


def test_each_policy_and_start_up_of_the_table_is_checked_once(checks_made):
    """The book's five policies: each start-up is checked once, where its ``Startup`` is made
    (8 min, the table's; 1, the quick chase; 0, always on), and each policy once, where it is
    made, under its final name: not again when it is renamed or run."""
    rows = policy_table()
    seen = checks_made["integer"]
    assert [p.name for p, _ in rows][0] == "always at peak"
    assert seen.count("startup_min") == 3
    assert seen.count("fixed") == 1  # the one fixed fleet
    assert seen.count("peak_fleet") == 1
