"""The book's studies: the scenarios its chapters run on the library, with the book's numbers
as defaults. The five policies the source compares and their table over the reference day; the
forecast against chasing as the days grow noisier; the replicas wanted either side of the
21:00 event; the HPA on GPU utilization against the HPA on concurrency over the day.

Nothing in the library imports this module (an import-linter contract): a reader's plan is
never sized on the book's scenario by default.

Layer: scenarios. Imports the library.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from replicaplan.autoscalers.controllers import HPAOn
from replicaplan.core import _check
from replicaplan.core.example import EXAMPLE
from replicaplan.core.sizing import REPLICA_RATE, ReplicaRate
from replicaplan.core.startup import Startup
from replicaplan.scenarios.synthetic import noisy_days, reference_traffic
from replicaplan.serving.fluid import replicas_needed
from replicaplan.simulation.control import FleetRun, per_second, simulate_fleet
from replicaplan.simulation.day import (
    DayPolicy,
    DayResult,
    run_policies,
    simulate_day,
    standard_policies,
)
from replicaplan.traffic.forecast import forecast_error, seasonal_forecast


# --- the policy table --------------------------------------------------------------------
def reference_policies(
    rate,
    mu_star_rps: float = EXAMPLE.mu_star_rps,
    startup_min: int = EXAMPLE.startup_min,
    spares: int = 3,
    *,
    with_forecast: bool = False,
) -> list[DayPolicy]:
    """The five policies the source compares (``simulation.day.standard_policies`` with a
    1-minute chase and the calendar, under the source's names), for a given start-up time and
    number of spares; with ``with_forecast``, a sixth that scales ahead on a forecast.

    The fixed fleet is sized on the peak at full capacity, ⌈max λ / μ*⌉, as the source does.
    """
    peak_fleet = replicas_needed(float(np.max(rate)), ReplicaRate(mu_star_rps))
    startup = Startup(startup_min)
    startup_min = startup.minutes
    names = [
        "always at peak",
        "chase, 1 min start",
        f"chase, {startup_min} min start",
        f"{startup_min} min, {spares} spare replicas",
        f"{startup_min} min, with calendar",
    ]
    if with_forecast:
        names.append(f"{startup_min} min, with forecast")
    return standard_policies(
        peak_fleet,
        startup,
        spares=spares,
        ahead=("calendar", "forecast") if with_forecast else ("calendar",),
        quick_start=Startup(1),
        names=names,
    )


def policy_table(
    rate=None,
    replica_rate: ReplicaRate = REPLICA_RATE,
    startup_min: int = EXAMPLE.startup_min,
    spares: int = 3,
    forecast=None,
) -> list[tuple[DayPolicy, DayResult]]:
    """Run the five reference policies over a day (the source's day when ``rate`` is None).

    With a ``forecast`` (one predicted rate per minute, for instance ``seasonal_forecast`` of
    earlier days) a sixth row scales ahead on it with the same start-up time.
    """
    rate = reference_traffic() if rate is None else _check.rates("rate", rate)
    spares = _check.integer("spares", spares, minimum=0)
    policies = reference_policies(
        rate, replica_rate.mu_star_rps, startup_min, spares, with_forecast=forecast is not None
    )
    return run_policies(rate, policies, replica_rate, forecast)


# --- several days, and a forecast of the daily season ---------------------------------------
@dataclass(frozen=True)
class ForecastStudy:
    """The forecast policy against plain chasing, as the day-to-day noise grows (means over
    seeds). Arrays are indexed like ``noise``."""

    noise: np.ndarray
    error: np.ndarray
    """RMS error of the forecast relative to the mean rate of the day it forecasts."""
    uncovered_chase: np.ndarray
    uncovered_forecast: np.ndarray
    hours_chase: np.ndarray
    hours_forecast: np.ndarray


def forecast_study(
    noise_levels,
    *,
    seeds: int = 10,
    history_days: int = 7,
    startup_min: int = EXAMPLE.startup_min,
    replica_rate: ReplicaRate = REPLICA_RATE,
) -> ForecastStudy:
    """For each noise level: learn the season from ``history_days`` noisy days, then run the
    next day chasing and scaling ahead on the forecast; average over ``seeds`` runs."""
    levels = _check.rates("noise_levels", noise_levels)
    seeds = _check.integer("seeds", seeds, minimum=1)
    history_days = _check.integer("history_days", history_days, minimum=1)
    startup = Startup(startup_min)
    rows = []
    for level in levels:
        per_seed = []
        for seed in range(seeds):
            days = noisy_days(history_days + 1, noise=float(level), seed=seed)
            fc, today = seasonal_forecast(days[:-1]), days[-1]
            chase = simulate_day(today, replica_rate, startup)
            ahead = simulate_day(today, replica_rate, startup, forecast=fc)
            per_seed.append(
                (
                    forecast_error(fc, today),
                    chase.uncovered_minutes,
                    ahead.uncovered_minutes,
                    chase.paid_hours,
                    ahead.paid_hours,
                )
            )
        rows.append(np.mean(per_seed, axis=0))
    cols = np.array(rows).T
    return ForecastStudy(levels, *cols)


def event_requests(
    rate=None,
    replica_rate: ReplicaRate = REPLICA_RATE,
    event_start_min: int = 21 * 60,
) -> tuple[int, int]:
    """Replicas the autoscaler wants for the traffic of the minute before the event and at it."""
    rate = reference_traffic() if rate is None else _check.rates("rate", rate)
    before, at = replicas_needed(rate[[event_start_min - 1, event_start_min]], replica_rate)
    return int(before), int(at)


# --- the scaling signal over the day -------------------------------------------------------
def utilization_against_concurrency(
    rate=None,
    *,
    utilization_target: float = 0.8,
    concurrency_target: float = EXAMPLE.concurrency_target,
    startup_s: float = 60.0,
) -> tuple[FleetRun, FleetRun]:
    """The same traffic through the HPA on GPU utilization, then on concurrency per replica.

    ``rate`` is req/s one value a second (by default the simulated day, per second); replicas
    start in ``startup_s``. Returns (run on utilization, run on concurrency): the comparison of
    the "What to watch" chapter, in one call for every page that quotes it.
    """
    rate = per_second(reference_traffic()) if rate is None else rate
    utilization_target = _check.fraction("utilization_target", utilization_target)
    concurrency_target = _check.positive("concurrency_target", concurrency_target)
    on_util = simulate_fleet(
        rate, HPAOn({"gpu_utilization": utilization_target}), startup_s=startup_s
    )
    on_conc = simulate_fleet(rate, HPAOn({"concurrency": concurrency_target}), startup_s=startup_s)
    return on_util, on_conc
