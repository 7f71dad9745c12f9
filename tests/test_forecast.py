"""Forecasts of the daily season (traffic.forecast), against values worked by hand."""

import numpy as np
import pytest

from replicaplan.core.calendar import MINUTES_PER_DAY
from replicaplan.traffic.forecast import forecast_error, learned_forecast, seasonal_forecast


def test_the_seasonal_forecast_is_each_minutes_mean_over_the_days():
    days = np.vstack([np.full(MINUTES_PER_DAY, 10.0), np.full(MINUTES_PER_DAY, 20.0)])
    days[1, 600] = 50.0
    fc = seasonal_forecast(days)
    assert fc[0] == 15.0 and fc[600] == 30.0


def test_forecast_error_is_the_rms_miss_over_the_mean():
    actual = np.array([10.0, 20.0, 30.0, 40.0])
    forecast = actual + np.array([1.0, -1.0, 1.0, -1.0])
    assert forecast_error(forecast, actual) == pytest.approx(1.0 / 25.0)
    assert forecast_error(actual, actual) == 0.0


@pytest.mark.parametrize("shape", [(MINUTES_PER_DAY,), (0, MINUTES_PER_DAY), (2, 1439)])
def test_history_of_the_wrong_shape_is_refused(shape):
    with pytest.raises(ValueError, match="history must have shape"):
        seasonal_forecast(np.ones(shape))


def three_days():
    """Day 0 at 1 req/s with a 5 req/s minute at 10:07, day 1 at 2 req/s with 9 at 10:30,
    day 2 at 3 req/s with 1 at 10:00 (a quiet hour's busiest minute is the plain rate)."""
    rate = np.concatenate([np.full(1440, 1.0), np.full(1440, 2.0), np.full(1440, 3.0)])
    rate[10 * 60 + 7] = 5.0
    rate[1440 + 10 * 60 + 30] = 9.0
    return rate


def test_the_learned_forecast_uses_only_earlier_days():
    fc = learned_forecast(three_days())
    assert np.all(fc[:1440] == 0)  # day 0 has no history
    assert fc[1440 + 10 * 60] == 5.0 and fc[1440 + 9 * 60] == 1.0  # day 1 learns from day 0
    assert fc[2880 + 10 * 60 + 59] == (5.0 + 9.0) / 2 and fc[2880 + 3 * 60] == (1 + 2) / 2
