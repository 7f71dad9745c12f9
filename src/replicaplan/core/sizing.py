"""How a fleet is sized around μ*, checked once, where it is given.

A plan turns μ* (measured) into a fleet with four choices an operator makes: ρ*, the share of
μ* each replica is given; the floor and the ceiling of the fleet (the manifests' minReplicas
and maxReplicas, the planner's own when not given); and the share of requests the recommended
policy may leave beyond capacity. ``Sizing`` holds the four, checked when it is made; ``plan``
and the configuration search take one and trust it, as they trust ``Promises`` and
``Startup``.

Once μ* is measured, the pair the sizing rule N = ⌈λ/(ρ*μ*)⌉ needs is a ``ReplicaRate``: μ* and
ρ*, checked when made (``Sizing.at`` checks μ* alone, ρ* having been checked by the
``Sizing``). The rule, the reserves, the schedule, the behavior and the replays take one and
check nothing of it.

>>> Sizing().budget(Promises(quota=0.9))
0.01
>>> Sizing().at(8.0).rps
6.4
>>> Sizing(min_replicas=4, max_replicas=2)
Traceback (most recent call last):
...
ValueError: max_replicas must be >= min_replicas (4), got 2
"""

from __future__ import annotations

from dataclasses import dataclass

from replicaplan.core import _check
from replicaplan.core.example import EXAMPLE
from replicaplan.core.promises import Promises

REPLICAS_MAX = 2**31 - 1
"""The most replicas a manifest can ask for: the Kubernetes API's replica counts are int32."""


def default_short_budget(quota: float) -> float:
    """The default share of requests allowed to arrive beyond the ready replicas' capacity:
    (1 − quota)/10, a tenth of the share the quota already lets miss its promise at the
    operating point, so a fleet late to a burst costs the promise at most a tenth of its margin.
    Such requests are not lost: they wait for a replica still starting."""
    return _tenth_of_the_margin(_check.fraction("quota", quota))


def _tenth_of_the_margin(quota: float) -> float:
    return round(1 - quota, 12) / 10


@dataclass(frozen=True)
class Sizing:
    """ρ* (``target_utilization``, in (0, 1]); the fleet's floor (``min_replicas``, 0 to
    ``REPLICAS_MAX``; 0 scales to zero) and ceiling (``max_replicas``, 1 to ``REPLICAS_MAX``,
    not below the floor), None for the planner's own (the quietest minute's fleet; twice the
    busiest minute's); and ``short_budget``, the share of requests the recommended policy may
    leave beyond capacity, in [0, 1), None for ``default_short_budget`` of the quota."""

    target_utilization: float = EXAMPLE.target_utilization
    min_replicas: int | None = None
    max_replicas: int | None = None
    short_budget: float | None = None

    def __post_init__(self) -> None:
        def set_(name, value):
            object.__setattr__(self, name, value)

        set_("target_utilization", _check.fraction("target_utilization", self.target_utilization))
        for name, low in (("min_replicas", 0), ("max_replicas", 1)):
            value = getattr(self, name)
            if value is not None:
                value = _check.integer(name, value, minimum=low)
                if value > REPLICAS_MAX:
                    raise ValueError(
                        f"{name} must be at most {REPLICAS_MAX:,} (the API's int32), got {value:,}"
                    )
                set_(name, value)
        low, high = self.min_replicas, self.max_replicas
        if low is not None and high is not None and high < low:
            raise ValueError(f"max_replicas must be >= min_replicas ({low}), got {high}")
        if self.short_budget is not None:
            set_(
                "short_budget",
                _check.fraction("short_budget", self.short_budget, low_open=False, high_open=True),
            )

    def budget(self, promises: Promises) -> float:
        """The short budget under ``promises``: the one given, or ``default_short_budget`` of
        their quota."""
        if self.short_budget is None:
            return _tenth_of_the_margin(promises.quota)
        return self.short_budget

    def at(self, mu_star_rps: float) -> ReplicaRate:
        """The ``ReplicaRate`` of this sizing once μ* is known: μ* checked, ρ* this sizing's
        (checked when it was made)."""
        return _replica_rate(_check.positive("mu_star_rps", mu_star_rps), self.target_utilization)


@dataclass(frozen=True)
class ReplicaRate:
    """μ* (``mu_star_rps``, requests/s one replica serves within its promises, > 0) and ρ*
    (``target_utilization``, the share of it each replica is given, in (0, 1]; 1 sizes on the
    whole of μ*), checked when made. ``rps`` = ρ*μ* is the rate a fleet is sized on."""

    mu_star_rps: float
    target_utilization: float = 1.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "mu_star_rps", _check.positive("mu_star_rps", self.mu_star_rps))
        object.__setattr__(
            self,
            "target_utilization",
            _check.fraction("target_utilization", self.target_utilization),
        )

    @property
    def rps(self) -> float:
        """ρ*μ*: the requests a second each replica of the fleet is given."""
        return self.target_utilization * self.mu_star_rps


def _replica_rate(mu_star_rps: float, target_utilization: float) -> ReplicaRate:
    """A ``ReplicaRate`` of two values already checked (``Sizing.at``)."""
    made = object.__new__(ReplicaRate)
    object.__setattr__(made, "mu_star_rps", mu_star_rps)
    object.__setattr__(made, "target_utilization", target_utilization)
    return made


SIZING = Sizing()
"""The running example's sizing (ρ* = 0.8, the planner's own bounds and budget): the default
of ``plan`` and of the search's ``Settings``."""

REPLICA_RATE = SIZING.at(EXAMPLE.mu_star_rps)
"""The running example's μ* = 8 req/s at ρ* = 0.8: the default of the simulated day."""
