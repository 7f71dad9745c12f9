"""The simulated day: traffic minute by minute against an autoscaler with a start-up delay.

The traffic (requests/s per minute of the day) is a quiet night at 12 req/s, an afternoon hump
that peaks at 60 req/s at 14:00, and an event at 21:00 that adds 30 req/s at once for 20 minutes.
The hump is a squared, clipped parabola rather than an exponential, so the series is built from
sums and products only and is the same bit for bit on every processor: the policy table depends
on where ⌈λ/(ρ*μ*)⌉ changes value, and those boundaries must not move with the machine.

The autoscaler of every policy follows the same rules:

* it wants ``n(t) = ⌈λ(t) / (ρ* μ*)⌉ + reserve`` replicas, reading the exact traffic of the minute;
  with the calendar it also reads the traffic ``startup`` minutes ahead and wants the larger;
* a replica called at minute *t* is ready at minute *t + startup*;
* it scales up at once, counting replicas already called as if they were there;
* it scales down only to the maximum of the last ``scale_down_window_min`` recommendations, and
  only when no replica is starting;
* a replica is paid from the minute it is called (the GPU is rented while it boots).

Each minute's excess λ − N_ready μ* is counted twice: as an *uncovered minute* (the excess lost
that minute) and through a *backlog* carried to the next minute, which gives the *queued minutes*
a real queue would see.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from replicaplan.autoscalers.controllers import ExactTraffic, Fixed, Metrics
from replicaplan.core import _check
from replicaplan.core.example import EXAMPLE
from replicaplan.serving.fluid import replicas_needed
from replicaplan.simulation.fleet import Fleet
from replicaplan.traffic.forecast import forecast_error, seasonal_forecast
from replicaplan.traffic.synthetic import noisy_days, reference_traffic


@dataclass(frozen=True)
class DayResult:
    """What one policy did over the day. Arrays are per minute."""

    rate: np.ndarray = field(repr=False)
    """Arrivals, requests/s."""
    mu_star_rps: float
    """μ* of one replica, requests/s."""
    ready: np.ndarray = field(repr=False)
    """Replicas ready to serve."""
    paid: np.ndarray = field(repr=False)
    """Replicas paid: ready plus those still starting."""
    wanted: np.ndarray = field(repr=False)
    """The autoscaler's recommendation (equal to ``ready`` for a fixed fleet)."""
    queued: np.ndarray = field(repr=False)
    """True where a carried backlog is waiting at the end of the minute."""

    @property
    def ready_capacity(self) -> np.ndarray:
        """Requests/s the ready replicas can serve."""
        return self.ready * self.mu_star_rps

    @property
    def excess(self) -> np.ndarray:
        """max(0, λ − N_ready μ*): requests/s that find no room, per minute."""
        return np.maximum(self.rate - self.ready_capacity, 0)

    @property
    def paid_hours(self) -> float:
        """Replica-hours paid over the day, starting replicas included."""
        return float(self.paid.sum() / 60)

    @property
    def uncovered_minutes(self) -> int:
        """Minutes in which the ready replicas cannot serve the arrivals."""
        return int((self.excess > 0).sum())

    @property
    def queued_minutes(self) -> int:
        """Minutes that end with a backlog when each minute's excess is carried to the next."""
        return int(self.queued.sum())

    @property
    def excess_fraction(self) -> float:
        """Share of the day's requests that arrived when there was no room."""
        return float(self.excess.sum() / self.rate.sum())

    @property
    def peak_load(self) -> float:
        """The busiest minute's arrivals over the capacity of the ready replicas."""
        return float((self.rate / self.ready_capacity).max())

    @property
    def served(self) -> np.ndarray:
        """min(λ, N_ready μ*): requests/s served, per minute."""
        return np.minimum(self.rate, self.ready_capacity)

    @property
    def served_requests(self) -> float:
        """Requests served over the day (each minute's rate × 60 s)."""
        return float(self.served.sum() * 60)

    @property
    def utilization(self) -> float:
        """The policy table's use: requests served over what the *ready* replicas could serve."""
        return float(self.served.sum() / self.ready_capacity.sum())

    @property
    def paid_utilization(self) -> float:
        """ρ̄ of the bill: requests served over what the paid replicas (starters too) could serve."""
        return float(self.served.sum() / (self.paid * self.mu_star_rps).sum())

    def summary(self) -> dict:
        """The scalar results as a plain dict (what ``replicaplan day --json`` prints)."""
        return {
            "paid_hours": self.paid_hours,
            "uncovered_minutes": self.uncovered_minutes,
            "queued_minutes": self.queued_minutes,
            "excess_fraction": self.excess_fraction,
            "utilization": self.utilization,
        }


MINUTE_S = 60.0
"""The day's step, in the seconds every simulator counts."""

SCALE_DOWN_WINDOW_MIN = 5
"""Minutes of recommendations a scale-down must respect (the published day's five)."""


def simulate_day(
    rate,
    mu_star_rps: float = EXAMPLE.mu_star_rps,
    target: float = EXAMPLE.target_utilization,
    startup_min: int = EXAMPLE.startup_min,
    reserve: int = 0,
    fixed: int | None = None,
    calendar: bool = False,
    scale_down_window_min: int = SCALE_DOWN_WINDOW_MIN,
    forecast=None,
) -> DayResult:
    """Run one policy over a day of per-minute rates and return what it paid and missed.

    Parameters
    ----------
    rate : array of requests/s, one per minute (any length ≥ 1; the source's day has 1440).
    mu_star_rps : μ*, requests/s one replica serves within its promises (> 0).
    target : ρ*, the utilization the autoscaler aims for, in (0, 1].
    startup_min : T_start in whole minutes (≥ 0); 0 means a called replica is ready at once.
    reserve : spare replicas kept on top of the recommendation (integer ≥ 0).
    fixed : keep exactly this many replicas all day and never scale (integer ≥ 1), or None.
    calendar : also read the traffic ``startup_min`` minutes ahead (announced events).
    scale_down_window_min : how many recent recommendations a scale-down must respect (≥ 1).
    forecast : per-minute predicted rates (same length as ``rate``): also size for the forecast
        ``startup_min`` minutes ahead, as a policy that scales ahead on the daily season does.
    """
    rate = _check.rates("rate", rate)
    mu_star_rps = _check.positive("mu_star_rps", mu_star_rps)
    target = _check.fraction("target", target)
    startup_min = _check.integer("startup_min", startup_min, minimum=0)
    reserve = _check.integer("reserve", reserve, minimum=0)
    window = _check.integer("scale_down_window_min", scale_down_window_min, minimum=1)
    if fixed is not None:
        fixed = _check.integer("fixed", fixed, minimum=1)

    n_min = rate.size
    if fixed is not None:
        controller, first = Fixed(fixed), fixed
    else:
        controller = ExactTraffic(
            rate,
            mu_star_rps,
            target,
            reserve=reserve,
            calendar=calendar,
            forecast=forecast,
            lookahead=startup_min,
            window=window,
        )
        first = controller.initial
    # one clock for every simulator: seconds. The day is the closed loop's 60-second case: its
    # fleet is looked at once a minute, a replica called at t is ready at t + 60 · startup_min,
    # and the controller decides every ``period_s`` (the day's autoscaler: 60 s)
    fleet = Fleet(ready=first, startup=startup_min * MINUTE_S)
    ready = np.zeros(n_min, dtype=int)
    paid = np.zeros(n_min, dtype=int)
    next_sync = 0.0
    for m in range(n_min):
        now = m * MINUTE_S
        fleet.admit(now)
        if now >= next_sync:
            next_sync += controller.period_s
            metrics = Metrics(now=now, ready=fleet.ready, starting=len(fleet.starting))
            fleet.resize(controller.decide(metrics), now)
        ready[m], paid[m] = fleet.ready, fleet.paid
    wanted = ready.copy() if fixed is not None else controller.wanted

    return DayResult(
        rate=rate,
        mu_star_rps=mu_star_rps,
        ready=ready,
        paid=paid,
        wanted=wanted,
        queued=_backlogged(rate, ready * mu_star_rps),
    )


def _backlogged(rate: np.ndarray, ready_capacity: np.ndarray) -> np.ndarray:
    """Per minute: does a backlog remain when each minute's excess is carried to the next?

    backlog(m) = max(0, backlog(m−1) + 60 · (λ(m) − capacity(m))), in requests.
    """
    backlog = 0.0
    waiting = np.zeros(rate.size, dtype=bool)
    for m, surplus in enumerate((rate - ready_capacity) * 60):
        backlog = max(0.0, backlog + surplus)
        waiting[m] = backlog > 0
    return waiting


# --- several days, and a forecast of the daily season ---------------------------------------


# --- the policy table --------------------------------------------------------------------


@dataclass(frozen=True)
class DayPolicy:
    """One row of the policy table: a name and the arguments it gives ``simulate_day``."""

    name: str
    startup_min: int
    reserve: int = 0
    fixed: int | None = None
    calendar: bool = False
    forecast: bool = False


def reference_policies(
    rate,
    mu_star_rps: float = EXAMPLE.mu_star_rps,
    startup_min: int = EXAMPLE.startup_min,
    spares: int = 3,
) -> list[DayPolicy]:
    """The five policies the source compares, for a given start-up time and number of spares.

    The fixed fleet is sized on the peak at full capacity, ⌈max λ / μ*⌉, as the source does.
    """
    peak_fleet = replicas_needed(float(np.max(rate)), mu_star_rps)
    return [
        DayPolicy("always at peak", startup_min=0, fixed=peak_fleet),
        DayPolicy("chase, 1 min start", startup_min=1),
        DayPolicy(f"chase, {startup_min} min start", startup_min=startup_min),
        DayPolicy(
            f"{startup_min} min, {spares} spare replicas", startup_min=startup_min, reserve=spares
        ),
        DayPolicy(f"{startup_min} min, with calendar", startup_min=startup_min, calendar=True),
    ]


def policy_table(
    rate=None,
    mu_star_rps: float = EXAMPLE.mu_star_rps,
    target: float = EXAMPLE.target_utilization,
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
    policies = reference_policies(rate, mu_star_rps, startup_min, spares)
    if forecast is not None:
        policies.append(
            DayPolicy(f"{startup_min} min, with forecast", startup_min=startup_min, forecast=True)
        )
    return run_policies(rate, policies, mu_star_rps, target, forecast)


def run_policies(
    rate,
    policies: list[DayPolicy],
    mu_star_rps: float = EXAMPLE.mu_star_rps,
    target: float = EXAMPLE.target_utilization,
    forecast=None,
) -> list[tuple[DayPolicy, DayResult]]:
    """Each policy simulated over the same per-minute ``rate``: (policy, result) in order.

    ``forecast`` is used by the policies that ask for it (``DayPolicy.forecast``).
    """
    return [
        (
            p,
            simulate_day(
                rate,
                mu_star_rps=mu_star_rps,
                target=target,
                startup_min=p.startup_min,
                reserve=p.reserve,
                fixed=p.fixed,
                calendar=p.calendar,
                forecast=forecast if p.forecast else None,
            ),
        )
        for p in policies
    ]


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
    mu_star_rps: float = EXAMPLE.mu_star_rps,
    target: float = EXAMPLE.target_utilization,
) -> ForecastStudy:
    """For each noise level: learn the season from ``history_days`` noisy days, then run the
    next day chasing and scaling ahead on the forecast; average over ``seeds`` runs."""
    levels = _check.rates("noise_levels", noise_levels)
    seeds = _check.integer("seeds", seeds, minimum=1)
    history_days = _check.integer("history_days", history_days, minimum=1)
    rows = []
    for level in levels:
        per_seed = []
        for seed in range(seeds):
            days = noisy_days(history_days + 1, noise=float(level), seed=seed)
            fc, today = seasonal_forecast(days[:-1]), days[-1]
            chase = simulate_day(today, mu_star_rps, target, startup_min)
            ahead = simulate_day(today, mu_star_rps, target, startup_min, forecast=fc)
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
    mu_star_rps: float = EXAMPLE.mu_star_rps,
    target: float = EXAMPLE.target_utilization,
    event_start_min: int = 21 * 60,
) -> tuple[int, int]:
    """Replicas the autoscaler wants for the traffic of the minute before the event and at it."""
    rate = reference_traffic() if rate is None else _check.rates("rate", rate)
    before, at = replicas_needed(rate[[event_start_min - 1, event_start_min]], mu_star_rps, target)
    return int(before), int(at)
