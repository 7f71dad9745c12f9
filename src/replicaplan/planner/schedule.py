"""A schedule learned from a log's history: the busiest minute of each clock hour over the
earlier days, turned into minimum replicas per hour (UTC), and the forecast it implies.

Two choices make it hold out of sample (``chapters/plan_your_fleet.md`` measures both):

* **the median of the hour's peaks**, not their mean: one day's burst moves a mean by a share
  of its height, a median not at all, and a schedule only sets a floor that the autoscaler's
  chase tops up on the day;
* **by weekday** once the log holds two weeks (``WEEKDAY_MIN_DAYS``): each weekday learns from
  the same weekday of the earlier weeks, so a Monday is not planned from a Sunday. With fewer
  days every day learns from all the earlier ones.

Days are calendar days in UTC; weekdays are cron's (0 = Sunday), since the schedule is written
as KEDA cron triggers.

Layer: planner.
"""

from __future__ import annotations

import numpy as np

from replicaplan.core import _check
from replicaplan.core.calendar import EPOCH_WEEKDAY, MINUTES_PER_DAY
from replicaplan.serving.fluid import replicas_needed

# ------------------------------------------------------------------ a schedule from history
SCHEDULE_MIN_DAYS = 2
"""Calendar days a log must touch before a schedule is learned from it (one to learn from, one to
replay on)."""

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


def _hour_peaks(rate: np.ndarray, start_s: float) -> np.ndarray:
    """The busiest minute of each clock hour (UTC) of each calendar day: shape (days, 24), NaN
    where the log does not reach that hour."""
    day, hour = day_and_hour(rate.size, start_s)
    peaks = np.full((day[-1] + 1, 24), -np.inf)
    np.maximum.at(peaks, (day, hour), rate)
    peaks[np.isneginf(peaks)] = np.nan
    return peaks


def days_covered(rate, start_s: float = 0.0) -> int:
    """Calendar days (UTC) the per-minute ``rate`` touches, from ``start_s`` (epoch seconds)."""
    return _hour_peaks(_check.rates("rate", rate), start_s).shape[0]


def by_weekday(rate, start_s: float = 0.0) -> bool:
    """True when the log is long enough (``WEEKDAY_MIN_DAYS``) to learn each weekday apart."""
    return days_covered(rate, start_s) >= WEEKDAY_MIN_DAYS


def _median(peaks: np.ndarray) -> np.ndarray:
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
    peaks = _hour_peaks(rate, start_s)
    weekly = peaks.shape[0] >= WEEKDAY_MIN_DAYS
    dow = weekdays(peaks.shape[0], start_s)
    learned = np.zeros_like(peaks)
    for d in range(1, peaks.shape[0]):
        same = np.flatnonzero(dow[:d] == dow[d]) if weekly else np.array([], dtype=int)
        learned[d] = _median(peaks[same] if same.size else peaks[:d])
    return learned[day_and_hour(rate.size, start_s)]


def pooled_mean_forecast(rate, start_s: float = 0.0) -> np.ndarray:
    """The first planner's forecast, kept as the baseline the chapter measures against: the
    *mean* of the same hour's busiest minutes over all the earlier days, weekdays pooled."""
    rate = _check.rates("rate", rate)
    peaks = _hour_peaks(rate, start_s)
    seen = np.nan_to_num(peaks)
    counts = np.cumsum(~np.isnan(peaks), axis=0) - ~np.isnan(peaks)  # earlier days only
    sums = np.cumsum(seen, axis=0) - seen
    mean = np.divide(sums, counts, out=np.zeros_like(sums), where=counts > 0)
    return mean[day_and_hour(rate.size, start_s)]


def schedule(rate, mu_star_rps: float, target: float, start_s: float = 0.0) -> list[int]:
    """The minimum replicas to apply from tomorrow on, learned from the whole log:
    ⌈peak/(ρ*μ*)⌉ of the median of the hour's busiest minutes (0 for an hour the log never
    reaches). 24 values, one per clock hour (UTC); for a log of ``WEEKDAY_MIN_DAYS`` or more,
    168 values, 24 per weekday from Sunday (cron's order), each from its own weekdays."""
    rate = _check.rates("rate", rate)
    peaks = _hour_peaks(rate, start_s)
    if peaks.shape[0] >= WEEKDAY_MIN_DAYS:
        dow = weekdays(peaks.shape[0], start_s)
        median = np.concatenate([_median(peaks[dow == w]) for w in range(7)])
    else:
        median = _median(peaks)
    return [int(n) for n in replicas_needed(median, mu_star_rps, target)]
