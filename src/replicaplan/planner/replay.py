"""A log's traffic replayed under the book's policies (always on, chasing, chasing with spares,
with a learned schedule), each priced per token; how they move with the start-up time; and the
recommendation with its reason.

Layer: planner.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from replicaplan.core import _check
from replicaplan.core.example import EXAMPLE
from replicaplan.economics.cost import PricedPolicy, price_day
from replicaplan.planner.reserve import spares_for
from replicaplan.planner.schedule import SCHEDULE_MIN_DAYS, days_covered, learned_forecast
from replicaplan.serving.fluid import replicas_needed
from replicaplan.simulation.day import DayPolicy, DayResult, run_policies


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
    capacity: float,
    *,
    target: float = EXAMPLE.target_utilization,
    startup_min: int = EXAMPLE.startup_min,
    price_per_hour: float,
    tokens_per_request: float,
    start_s: float = 0.0,
) -> list[ReplayRow]:
    """The log's per-minute traffic under the book's policies, each priced per token.

    * always on: the fleet the busiest minute needs at the target, ⌈max λ/(ρ*μ*)⌉, all along;
    * chase: the book's autoscaler with ``startup_min`` minutes of start-up;
    * chase with spares: the same, plus ``spares_for`` the log's steepest ramp and largest step;
    * with a schedule, for logs of two days or more: chase, and start ``startup_min`` minutes
      early the replicas ``learned_forecast`` promises from the days before.

    Each is priced by ``cost.price_run`` at ``price_per_hour`` and ``tokens_per_request`` (the
    log's own mean answer, ``OperatingPoint.mean_output``): the planner has no default for
    either, so a reader's traffic is never priced with the running example's numbers.
    """
    rate = _check.rates("rate", rate)
    capacity = _check.positive("capacity", capacity)
    target = _check.fraction("target", target)
    startup_min = _check.integer("startup_min", startup_min, minimum=0)
    peak_fleet = replicas_needed(float(rate.max()), capacity, target)
    spares = spares_for(rate, capacity, target, startup_min)
    policies = [
        DayPolicy("always on, sized for the busiest minute", startup_min=0, fixed=peak_fleet),
        DayPolicy(f"chase, {startup_min} min start", startup_min=startup_min),
        DayPolicy(
            f"chase, {startup_min} min start, spares: {spares}",
            startup_min=startup_min,
            reserve=spares,
        ),
    ]
    forecast = None
    if days_covered(rate, start_s) >= SCHEDULE_MIN_DAYS:
        forecast = learned_forecast(rate, start_s)
        policies.append(
            DayPolicy(
                f"chase, {startup_min} min start, schedule from earlier days",
                startup_min=startup_min,
                forecast=True,
            )
        )
    rows = run_policies(rate, policies, capacity, target, forecast)
    priced = price_day(rows, price_per_hour=price_per_hour, tokens_per_request=tokens_per_request)
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


def startup_sensitivity(rate, capacity: float, startups, **replay_kwargs) -> StartupSensitivity:
    """``replay`` at each start-up time in ``startups`` (whole minutes): how the policies' prices
    and shortfalls move with the time a replica takes to start."""
    startups = np.asarray(startups)
    if startups.ndim != 1 or startups.size == 0:
        raise ValueError("startups must be a non-empty list of whole minutes")
    per_million: dict = {}
    uncovered: dict = {}
    for t in startups:
        rows = replay(rate, capacity, startup_min=int(t), **replay_kwargs)
        for kind, row in zip(POLICY_KINDS, rows, strict=False):
            per_million.setdefault(kind, []).append(row.priced.per_million)
            uncovered.setdefault(kind, []).append(row.result.uncovered_minutes)
    return StartupSensitivity(
        startups,
        {k: np.array(v) for k, v in per_million.items()},
        {k: np.array(v) for k, v in uncovered.items()},
    )


def recommend(rows: list[ReplayRow]) -> tuple[ReplayRow, str]:
    """The cheapest policy that leaves no minute uncovered; else the one that leaves fewest."""
    covered = [r for r in rows if r.result.uncovered_minutes == 0]
    if covered:
        best = min(covered, key=lambda r: r.priced.per_million)
        return best, "the cheapest per token of the policies that leave no minute uncovered"
    best = min(rows, key=lambda r: (r.result.uncovered_minutes, r.priced.per_million))
    return best, "no policy covers every minute; this one leaves the fewest uncovered"
