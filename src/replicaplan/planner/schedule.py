"""A schedule learned from a log's history: the busiest minute of each clock hour over the
earlier days (``traffic.forecast.learned_forecast``'s peaks), turned into minimum replicas per
clock hour and written as KEDA cron triggers.

Two choices make it hold out of sample (``chapters/plan_your_fleet.md`` measures both):

* **the median of the hour's peaks**, not their mean: one day's burst moves a mean by a share
  of its height, a median not at all, and a schedule only sets a floor that the autoscaler's
  chase tops up on the day;
* **by weekday** once the log holds two weeks (``WEEKDAY_MIN_DAYS``): each weekday learns from
  the same weekday of the earlier weeks, so a Monday is not planned from a Sunday. With fewer
  days every day learns from all the earlier ones.

Days are calendar days of the clock ``start_s`` is on: UTC, or a zone's wall clock when the plan is
given one (``calendar.wall_clock_s``; the cron triggers then name that zone); weekdays are
cron's (0 = Sunday), since the schedule is written as KEDA cron triggers.

Layer: planner.
"""

from __future__ import annotations

import numpy as np

from replicaplan.core import _check
from replicaplan.core.sizing import ReplicaRate
from replicaplan.serving.fluid import replicas_needed
from replicaplan.traffic.forecast import WEEKDAY_MIN_DAYS, hour_medians, hour_peaks, weekdays

# ------------------------------------------------------------------ a schedule from history
SCHEDULE_MIN_DAYS = 2
"""Calendar days a log must touch before a schedule is learned from it (one to learn from, one to
replay on)."""


def schedule(rate, replica_rate: ReplicaRate, start_s: float = 0.0) -> list[int]:
    """The minimum replicas to apply from tomorrow on, learned from the whole log:
    ⌈peak/(ρ*μ*)⌉ at ``replica_rate`` of the median of the hour's busiest minutes (0 for an
    hour the log never reaches). 24 values, one per clock hour of ``start_s``'s clock; for a log of
    ``WEEKDAY_MIN_DAYS`` or more, 168 values, 24 per weekday from Sunday (cron's order), each
    from its own weekdays."""
    rate = _check.rates("rate", rate)
    peaks = hour_peaks(rate, start_s)
    if peaks.shape[0] >= WEEKDAY_MIN_DAYS:
        dow = weekdays(peaks.shape[0], start_s)
        median = np.concatenate([hour_medians(peaks[dow == w]) for w in range(7)])
    else:
        median = hour_medians(peaks)
    return [int(n) for n in replicas_needed(median, replica_rate)]
