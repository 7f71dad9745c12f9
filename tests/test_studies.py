"""The book's studies over the simulated day (scenarios.studies): the policy table of Fig. 36.17
and its facts digit for digit, the 21:00 event's line, the seasonal forecast and its study."""

import numpy as np
import pytest

from replicaplan.core.sizing import ReplicaRate
from replicaplan.interface.report import event_request_line
from replicaplan.interface.report import policy_table_text as format_policy_table
from replicaplan.scenarios.studies import policy_table
from replicaplan.scenarios.synthetic import reference_traffic
from replicaplan.serving.fluid import replicas_needed as replicas_wanted

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


def test_use_of_the_paid_capacity_matches_the_re_run_of_the_source():
    # the facts sheet re-ran the source's listing dividing by paid (not ready) capacity:
    # 36.1 %, 73.3 %, 72.9 %, 41.6 %, 72.0 % (its note N3)
    paid_use = [round(r.paid_utilization * 100, 1) for _, r in policy_table()]
    assert paid_use == [36.1, 73.3, 72.9, 41.6, 72.0]


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
