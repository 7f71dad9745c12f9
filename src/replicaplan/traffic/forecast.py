"""Every forecast the package makes, in one place, and how far a forecast misses:

* ``seasonal_forecast``: tomorrow from earlier whole days, the mean of each minute of the day
  (the book's forecast of the simulated day);
* ``learned_forecast``: what a schedule learned from a log's earlier days promises for each
  minute, the median of the same clock hour's busiest minutes (by weekday once the log holds
  two weeks): the forecast behind the planner's schedule (``planner.schedule``);
* ``pooled_mean_forecast``: the first planner's forecast, kept as the baseline it is measured
  against;

with the calendar helpers they share (calendar days and clock hours in UTC, cron's weekdays).

Layer: traffic. Imports core and traffic only.
"""

from __future__ import annotations

import numpy as np

from replicaplan.core import _check
from replicaplan.core.calendar import EPOCH_WEEKDAY, MINUTES_PER_DAY


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


# ------------------------------------------------- forecasts from a log's earlier days
WEEKDAY_MIN_DAYS = 14
"""Calendar days from which the schedule is learned by weekday: two of each, so the table to
apply comes from more than one Monday."""


def day_and_hour(minutes: int, start_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Calendar day (from the first, UTC) and clock hour of each of ``minutes`` minutes of a
    series whose minute 0 starts at ``start_s`` (epoch seconds)."""
    clock = int(start_s // 60) % MINUTES_PER_DAY + np.arange(minutes)
    return clock // MINUTES_PER_DAY, (clock % MINUTES_PER_DAY) // 60


def weekdays(days: int, start_s: float) -> np.ndarray:
    """Cron weekday (0 = Sunday) of each calendar day of a log whose minute 0 is ``start_s``."""
    first = int(start_s // 86_400)
    return (first + np.arange(days) + EPOCH_WEEKDAY) % 7


def hour_peaks(rate: np.ndarray, start_s: float) -> np.ndarray:
    """The busiest minute of each clock hour (UTC) of each calendar day: shape (days, 24), NaN
    where the log does not reach that hour."""
    day, hour = day_and_hour(rate.size, start_s)
    peaks = np.full((day[-1] + 1, 24), -np.inf)
    np.maximum.at(peaks, (day, hour), rate)
    peaks[np.isneginf(peaks)] = np.nan
    return peaks


def days_covered(rate, start_s: float = 0.0) -> int:
    """Calendar days (UTC) the per-minute ``rate`` touches, from ``start_s`` (epoch seconds)."""
    return hour_peaks(_check.rates("rate", rate), start_s).shape[0]


def by_weekday(rate, start_s: float = 0.0) -> bool:
    """True when the log is long enough (``WEEKDAY_MIN_DAYS``) to learn each weekday apart."""
    return days_covered(rate, start_s) >= WEEKDAY_MIN_DAYS


def hour_medians(peaks: np.ndarray) -> np.ndarray:
    """Per hour, the median over the rows that reach it (0 where none does)."""
    seen = ~np.isnan(peaks)
    out = np.zeros(peaks.shape[1])
    for h in np.flatnonzero(seen.any(axis=0)):
        out[h] = np.median(peaks[seen[:, h], h])
    return out


def learned_forecast(rate, start_s: float = 0.0) -> np.ndarray:
    """Per minute, what a schedule learned from the days before would have promised: the median
    of the same clock hour's busiest minutes over the earlier days (the same weekday's, for a
    log of ``WEEKDAY_MIN_DAYS`` or more, once an earlier one exists), 0 on the first day.
    Each day sees only the days before it, so a replay with it is out of sample."""
    rate = _check.rates("rate", rate)
    peaks = hour_peaks(rate, start_s)
    weekly = peaks.shape[0] >= WEEKDAY_MIN_DAYS
    dow = weekdays(peaks.shape[0], start_s)
    learned = np.zeros_like(peaks)
    for d in range(1, peaks.shape[0]):
        same = np.flatnonzero(dow[:d] == dow[d]) if weekly else np.array([], dtype=int)
        learned[d] = hour_medians(peaks[same] if same.size else peaks[:d])
    return learned[day_and_hour(rate.size, start_s)]


def pooled_mean_forecast(rate, start_s: float = 0.0) -> np.ndarray:
    """The first planner's forecast, kept as the baseline the chapter measures against: the
    *mean* of the same hour's busiest minutes over all the earlier days, weekdays pooled."""
    rate = _check.rates("rate", rate)
    peaks = hour_peaks(rate, start_s)
    seen = np.nan_to_num(peaks)
    counts = np.cumsum(~np.isnan(peaks), axis=0) - ~np.isnan(peaks)  # earlier days only
    sums = np.cumsum(seen, axis=0) - seen
    mean = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
    return mean[day_and_hour(rate.size, start_s)]
