"""The simulated day: traffic minute by minute against an autoscaler with a start-up delay.

The traffic is any per-minute series of arrival rates (requests/s): the book's reference day
(``scenarios.synthetic.reference_traffic``), a reader's log (``traffic.logs``). The book's five
policies and its policy table are scenarios, in ``scenarios.studies``; this module runs any
list of ``DayPolicy`` over any day (``run_policies``).

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
from replicaplan.core.sizing import REPLICA_RATE, ReplicaRate
from replicaplan.core.startup import STARTUP, Startup
from replicaplan.simulation.fleet import Fleet


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
    replica_rate: ReplicaRate = REPLICA_RATE,
    startup: Startup = STARTUP,
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
    replica_rate : μ*, requests/s one replica serves within its promises, and ρ*, the share of
        it the autoscaler aims for (``core.sizing.ReplicaRate``, checked when made).
    startup : T_start (``core.startup.Startup``, whole minutes); 0 means a called replica is
        ready at once.
    reserve : spare replicas kept on top of the recommendation (integer ≥ 0).
    fixed : keep exactly this many replicas all day and never scale (integer ≥ 1), or None.
    calendar : also read the traffic ``startup`` minutes ahead (announced events).
    scale_down_window_min : how many recent recommendations a scale-down must respect (≥ 1).
    forecast : per-minute predicted rates (same length as ``rate``): also size for the forecast
        ``startup`` minutes ahead, as a policy that scales ahead on the daily season does.
    """
    policy = DayPolicy("", startup, reserve=reserve, fixed=fixed, calendar=calendar)
    return _simulate(
        _check.rates("rate", rate),
        _check.instance("replica_rate", replica_rate, ReplicaRate),
        policy,
        _check.integer("scale_down_window_min", scale_down_window_min, minimum=1),
        forecast,
    )


def _simulate(
    rate, replica_rate: ReplicaRate, policy: DayPolicy, window: int, forecast
) -> DayResult:
    """``simulate_day`` on values already checked: its callers' (one policy) and
    ``run_policies``' (each of a list, the day checked once for all)."""
    n_min = rate.size
    if policy.fixed is not None:
        controller, first = Fixed(policy.fixed), policy.fixed
    else:
        controller = ExactTraffic(
            rate,
            replica_rate,
            reserve=policy.reserve,
            calendar=policy.calendar,
            forecast=forecast,
            lookahead=policy.startup.minutes,
            window=window,
        )
        first = controller.initial
    # one clock for every simulator: seconds. The day is the closed loop's 60-second case: its
    # fleet is looked at once a minute, a replica called at t is ready T_start later, and the
    # controller decides every ``period_s`` (the day's autoscaler: 60 s)
    fleet = Fleet(ready=first, startup=policy.startup.seconds)
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
    wanted = ready.copy() if policy.fixed is not None else controller.wanted
    mu_star_rps = replica_rate.mu_star_rps
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


# --- policies over a day ----------------------------------------------------------------


@dataclass(frozen=True)
class DayPolicy:
    """One row of the policy table: a name and the arguments it gives ``simulate_day``,
    checked when it is made (``reserve`` a whole number ≥ 0, ``fixed`` ≥ 1 or None; the
    start-up a ``Startup``, checked when that was made), so that a list of them runs over a
    day with no check per row."""

    name: str
    startup: Startup
    reserve: int = 0
    fixed: int | None = None
    calendar: bool = False
    forecast: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "reserve", _check.integer("reserve", self.reserve, minimum=0))
        if self.fixed is not None:
            object.__setattr__(self, "fixed", _check.integer("fixed", self.fixed, minimum=1))


AHEAD = ("calendar", "forecast")
"""How a chasing policy may also look ahead: at the traffic ``startup`` minutes on (the calendar,
exact), or at a forecast of it."""


def standard_policies(
    peak_fleet: int,
    startup: Startup,
    *,
    spares: int,
    ahead: tuple[str, ...] = (),
    quick_start: Startup | None = None,
    names: list[str] | None = None,
) -> list[DayPolicy]:
    """The policies every comparison in the package runs, in this order, from the one place that
    builds them (the book's policy table and a reader's replay alike):

    1. always on: ``peak_fleet`` replicas all day, nothing to start;
    2. only if ``quick_start`` is given: the chase with that start-up;
    3. the chase with ``startup``;
    4. the same chase with ``spares`` replicas kept on top;
    5. one row per entry of ``ahead`` (``AHEAD``): the chase that also looks ahead.

    ``names`` (one per row) replaces the default labels, for a table that must read as its
    source's does.
    """
    peak_fleet = _check.integer("peak_fleet", peak_fleet, minimum=0)
    spares = _check.integer("spares", spares, minimum=0)
    unknown = [a for a in ahead if a not in AHEAD]
    if unknown:
        raise ValueError(f"ahead must be among {AHEAD}, got {unknown}")
    t = startup.minutes
    rows: list[tuple[str, Startup, dict]] = [
        ("always on, sized for the busiest minute", Startup(0), {"fixed": peak_fleet})
    ]
    if quick_start is not None:
        rows.append((f"chase, {quick_start.minutes} min start", quick_start, {}))
    rows.append((f"chase, {t} min start", startup, {}))
    rows.append((f"chase, {t} min start, spares: {spares}", startup, {"reserve": spares}))
    label = {"calendar": "with calendar", "forecast": "schedule from earlier days"}
    for a in ahead:
        rows.append((f"chase, {t} min start, {label[a]}", startup, {a: True}))
    if names is not None:
        if len(names) != len(rows):
            raise ValueError(f"names: {len(rows)} policies, got {len(names)} names")
        rows = [(n, *row[1:]) for n, row in zip(names, rows, strict=True)]
    return [DayPolicy(name, start, **kwargs) for name, start, kwargs in rows]


def run_policies(
    rate,
    policies: list[DayPolicy],
    replica_rate: ReplicaRate = REPLICA_RATE,
    forecast=None,
) -> list[tuple[DayPolicy, DayResult]]:
    """Each policy simulated over the same per-minute ``rate``: (policy, result) in order.

    ``forecast`` is used by the policies that ask for it (``DayPolicy.forecast``). The day is
    checked once for the whole list; each policy, and ``replica_rate`` (μ*, ρ*), was checked
    when it was made.
    """
    rate = _check.rates("rate", rate)
    replica_rate = _check.instance("replica_rate", replica_rate, ReplicaRate)
    window = SCALE_DOWN_WINDOW_MIN
    return [
        (p, _simulate(rate, replica_rate, p, window, forecast if p.forecast else None))
        for p in policies
    ]
