"""A schedule learned from a log's history: the busiest minute of each clock hour over the
earlier days, turned into minimum replicas per hour (UTC), and the forecast it implies.

Layer: planner.
"""

from __future__ import annotations

import numpy as np

from replicaplan.core import _check
from replicaplan.serving.fluid import replicas_needed
from replicaplan.traffic.synthetic import MINUTES_PER_DAY

# ------------------------------------------------------------------ a schedule from history
SCHEDULE_MIN_DAYS = 2
"""Calendar days a log must touch before a schedule is learned from it (one to learn from, one to
replay on)."""


def _day_and_hour(minutes: int, start_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Calendar day (from the first, UTC) and clock hour of each of ``minutes`` minutes of a
    series whose minute 0 starts at ``start_s`` (epoch seconds)."""
    clock = int(start_s // 60) % MINUTES_PER_DAY + np.arange(minutes)
    return clock // MINUTES_PER_DAY, (clock % MINUTES_PER_DAY) // 60


def _hour_peaks(rate: np.ndarray, start_s: float) -> np.ndarray:
    """The busiest minute of each clock hour (UTC) of each calendar day: shape (days, 24), NaN
    where the log does not reach that hour."""
    day, hour = _day_and_hour(rate.size, start_s)
    peaks = np.full((day[-1] + 1, 24), -np.inf)
    np.maximum.at(peaks, (day, hour), rate)
    peaks[np.isneginf(peaks)] = np.nan
    return peaks


def days_covered(rate, start_s: float = 0.0) -> int:
    """Calendar days (UTC) the per-minute ``rate`` touches, from ``start_s`` (epoch seconds)."""
    return _hour_peaks(_check.rates("rate", rate), start_s).shape[0]


def learned_forecast(rate, start_s: float = 0.0) -> np.ndarray:
    """Per minute, what a schedule learned from the days before would have promised: the busiest
    minute of the same clock hour, averaged over the earlier days of the log (0 on the first
    day, which has no history). Each day sees only the days before it, so a replay with it
    is out of sample."""
    rate = _check.rates("rate", rate)
    peaks = _hour_peaks(rate, start_s)
    seen = np.nan_to_num(peaks)
    counts = np.cumsum(~np.isnan(peaks), axis=0) - ~np.isnan(peaks)  # earlier days only
    sums = np.cumsum(seen, axis=0) - seen
    mean = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
    return mean[_day_and_hour(rate.size, start_s)]


def schedule(rate, capacity: float, target: float, start_s: float = 0.0) -> list[int]:
    """The minimum replicas for each clock hour (UTC, 0–23) learned from the whole log:
    ⌈peak/(ρ*μ*)⌉ of the busiest minute of that hour averaged over the days (0 for an hour the
    log never reaches). This is the table to apply from tomorrow on."""
    rate = _check.rates("rate", rate)
    mean = np.nan_to_num(np.nanmean(_hour_peaks(rate, start_s), axis=0))
    return [int(n) for n in replicas_needed(mean, capacity, target)]
