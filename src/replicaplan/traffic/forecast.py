"""Forecasts of the daily season from earlier days, and how far a forecast misses.

Layer: traffic. Imports core and traffic only.
"""

from __future__ import annotations

import numpy as np

from replicaplan.core.calendar import MINUTES_PER_DAY


def seasonal_forecast(history) -> np.ndarray:
    """The forecast of tomorrow's traffic from earlier days: the mean of each minute of the day."""
    history = np.asarray(history, dtype=float)
    if history.ndim != 2 or history.shape[0] < 1 or history.shape[1] != MINUTES_PER_DAY:
        raise ValueError(
            f"history must have shape (days >= 1, {MINUTES_PER_DAY}), got {history.shape}"
        )
    return history.mean(axis=0)


def forecast_error(forecast, actual) -> float:
    """Root-mean-square error of a per-minute forecast, relative to the mean actual rate."""
    forecast, actual = np.asarray(forecast, float), np.asarray(actual, float)
    return float(np.sqrt(np.mean((forecast - actual) ** 2)) / actual.mean())
