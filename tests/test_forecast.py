"""Forecasts of the daily season (traffic.forecast), against values worked by hand."""

import numpy as np
import pytest

from replicaplan.core.calendar import MINUTES_PER_DAY
from replicaplan.traffic.forecast import forecast_error, seasonal_forecast


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
