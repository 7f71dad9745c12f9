"""A log's traffic replayed under the book's policies (always on, chasing, chasing with spares,
with a learned schedule), each priced per token; how they move with the start-up time; and the
recommendation with its reason.

Layer: planner.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from replicaplan.core import _check
from replicaplan.core.promises import PROMISES, Promises
from replicaplan.core.sizing import SIZING, ReplicaRate, Sizing
from replicaplan.core.startup import STARTUP, Startup
from replicaplan.economics.cost import PricedPolicy, Pricing, price_day
from replicaplan.planner.reserve import spares_for
from replicaplan.planner.schedule import SCHEDULE_MIN_DAYS
from replicaplan.serving.fluid import replicas_needed
from replicaplan.simulation.day import DayPolicy, DayResult, run_policies, standard_policies
from replicaplan.traffic.forecast import (
    day_and_hour,
    days_covered,
    learned_forecast,
    pooled_mean_forecast,
)


# ------------------------------------------------------------------ the log's traffic replayed
@dataclass(frozen=True)
class ReplayRow:
    """One policy over the log's traffic: what it paid, what it missed, what a token cost."""

    policy: DayPolicy
    result: DayResult
    priced: PricedPolicy


# ------------------------------------------------------------------ the policies compared
def replay(
    rate,
    replica_rate: ReplicaRate,
    *,
    startup: Startup = STARTUP,
    pricing: Pricing,
    start_s: float = 0.0,
) -> list[ReplayRow]:
    """The log's per-minute traffic under the book's policies, each priced per token.

    * always on: the fleet the busiest minute needs at ``replica_rate``'s ρ*μ*, ⌈max λ/(ρ*μ*)⌉,
      all along;
    * chase: the book's autoscaler with ``startup`` (T_start) before a replica serves;
    * chase with spares: the same, plus ``spares_for`` the log's steepest ramp and largest step;
    * with a schedule, for logs of two days or more: chase, and start T_start
      early the replicas ``learned_forecast`` promises from the days before.

    Each is priced by ``cost.price_run`` at ``pricing`` (a replica-hour's price and the log's
    own mean answer, ``OperatingPoint.mean_output``): the planner has no default for it, so a
    reader's traffic is never priced with the running example's numbers.
    """
    rate = _check.rates("rate", rate)
    peak_fleet = replicas_needed(float(rate.max()), replica_rate)
    spares = spares_for(rate, replica_rate, startup)
    forecast = None
    if days_covered(rate, start_s) >= SCHEDULE_MIN_DAYS:
        forecast = learned_forecast(rate, start_s)
    policies = standard_policies(
        peak_fleet,
        startup,
        spares=spares,
        ahead=("forecast",) if forecast is not None else (),
    )
    rows = run_policies(rate, policies, replica_rate, forecast)
    priced = price_day(rows, pricing)
    return [ReplayRow(p, r, c) for (p, r), c in zip(rows, priced, strict=True)]


SENSITIVITY_STARTUPS = np.arange(1, 31, 2)
"""Start-up times (min) at which ``plan(..., sensitivity=True)`` runs the policies again."""


POLICY_KINDS = ("always on", "chase", "spares", "schedule")
"""Short names of ``replay``'s rows, in its order (the schedule only for two days or more)."""


@dataclass(frozen=True)
class StartupSensitivity:
    """Each policy over the same traffic as the start-up time varies (arrays by ``startups``)."""

    startups: np.ndarray
    per_million: dict
    """Policy kind (``POLICY_KINDS``) → price per million output tokens at each start-up."""
    uncovered: dict
    """Policy kind → minutes short of capacity at each start-up."""

    def first_short(self, kind: str) -> int | None:
        """The shortest start-up at which ``kind`` leaves a minute short (None if never)."""
        short = np.asarray(self.uncovered[kind]) > 0
        return int(self.startups[np.argmax(short)]) if short.any() else None


def startup_sensitivity(
    rate, replica_rate: ReplicaRate, startups, **replay_kwargs
) -> StartupSensitivity:
    """``replay`` at each start-up time in ``startups`` (whole minutes): how the policies' prices
    and shortfalls move with the time a replica takes to start."""
    startups = np.asarray(startups)
    if startups.ndim != 1 or startups.size == 0:
        raise ValueError("startups must be a non-empty list of whole minutes")
    per_million: dict = {}
    uncovered: dict = {}
    for t in startups:
        rows = replay(rate, replica_rate, startup=Startup(int(t)), **replay_kwargs)
        for kind, row in zip(POLICY_KINDS, rows, strict=False):
            per_million.setdefault(kind, []).append(row.priced.per_million)
            uncovered.setdefault(kind, []).append(row.result.uncovered_minutes)
    return StartupSensitivity(
        startups,
        {k: np.array(v) for k, v in per_million.items()},
        {k: np.array(v) for k, v in uncovered.items()},
    )


SHORT_BUDGET = SIZING.budget(PROMISES)
"""``sizing.default_short_budget`` of the book's 90 % quota: 1 % of requests."""


def recommend(
    rows: list[ReplayRow], sizing: Sizing = SIZING, promises: Promises = PROMISES
) -> tuple[ReplayRow, str]:
    """The cheapest policy per token that leaves at most the short budget of ``sizing`` under
    ``promises`` of the requests beyond capacity (``DayResult.excess_fraction``; 1 % by default,
    ``SHORT_BUDGET``); else the one that leaves fewest. With a budget of 0 this is the cheapest
    policy that leaves no minute uncovered."""
    short_budget = sizing.budget(promises)
    within = [r for r in rows if r.result.excess_fraction <= short_budget]
    if within:
        best = min(within, key=lambda r: r.priced.per_million)
        if short_budget == 0:
            return best, "the cheapest per token of the policies that leave no minute uncovered"
        return best, (
            "the cheapest per token of the policies that leave at most "
            f"{short_budget:.2%} of requests beyond capacity"
        )
    best = min(rows, key=lambda r: (r.result.excess_fraction, r.priced.per_million))
    return best, (
        f"no policy leaves {short_budget:.2%} of requests or fewer beyond capacity; this one "
        "leaves the fewest"
    )


# ------------------------------------------------------------------ schedules compared
@dataclass(frozen=True)
class ScheduleScore:
    """One forecast replayed out of sample: what its floor alone and the chase on top of it did
    on the days that had a history to learn from."""

    name: str
    paid_hours: float
    """Replica-hours the chase paid with this forecast's floor, over the days with a history."""
    uncovered_minutes: int
    """Minutes short of capacity in that replay."""
    floor_short_minutes: int
    """Minutes in which the floor alone held fewer replicas than the minute needed."""
    floor_spare_hours: float
    """Replica-hours the floor alone held beyond what the minutes needed."""


def compare_schedules(
    rate,
    replica_rate: ReplicaRate,
    *,
    startup: Startup = STARTUP,
    start_s: float = 0.0,
    from_day: int = 1,
) -> list[ScheduleScore]:
    """The first planner's forecast (``pooled_mean_forecast``: mean of the hour's peaks, all
    days pooled) against today's (``learned_forecast``: their median, by weekday once the log
    holds two weeks), each replayed with the chase, scored from calendar day ``from_day`` on
    (1: every day that has a history; 7: the second week, where weekdays first have their own)."""
    rate = _check.rates("rate", rate)
    need = replicas_needed(rate, replica_rate)
    day, _ = day_and_hour(rate.size, start_s)
    scored = day >= _check.integer("from_day", from_day, minimum=1)
    if not scored.any():
        raise ValueError(f"from_day={from_day}: the log ends before that day")
    scores = []
    for name, forecast in (
        ("mean of the hour's peaks, all days", pooled_mean_forecast(rate, start_s)),
        ("median of the hour's peaks, by weekday", learned_forecast(rate, start_s)),
    ):
        policy = DayPolicy(name, startup, forecast=True)
        ((_, result),) = run_policies(rate, [policy], replica_rate, forecast)
        floor = replicas_needed(forecast, replica_rate)
        scores.append(
            ScheduleScore(
                name,
                paid_hours=float(result.paid[scored].sum() / 60),
                uncovered_minutes=int((result.excess[scored] > 0).sum()),
                floor_short_minutes=int((floor[scored] < need[scored]).sum()),
                floor_spare_hours=float(np.maximum(floor - need, 0)[scored].sum() / 60),
            )
        )
    return scores
