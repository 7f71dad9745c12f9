"""Capacity: the highest arrival rate a replica serves within its promises, by a sweep.

    μ* = max { λ : conformance(λ) ≥ q },   q = 0.9 by default,

where conformance(λ) is the share of requests that meet both SLOs when requests arrive at rate λ
in **open loop** (arrivals independent of answers). The sweep runs λ over a grid, discards the
warm-up at each λ (the queue is still forming), measures over thousands of requests and reports
each share with its binomial and batch-means standard errors (``stats``). The same sweep runs on
the batching replica (``replica``) and on the textbook M/M/1 server (``queueing``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _check
from .example import EXAMPLE
from .loadgen import AZURE_CONVERSATION, LengthMix, gamma_arrivals, identical, poisson_arrivals
from .queueing import simulate_mm1
from .replica import ReplicaModel, simulate_open
from .stats import batch_means_error, standard_error

TTFT_SLO_S = EXAMPLE.ttft_slo_s
"""τ_TTFT default (the running example's promise)."""
TPOT_SLO_S = EXAMPLE.tpot_slo_s
"""τ_TPOT default (the running example's promise)."""
QUOTA = EXAMPLE.quota
"""Share of requests that must meet the SLOs."""


@dataclass(frozen=True)
class Point:
    """Conformance measured at one arrival rate."""

    rate: float
    conformance: float
    stderr: float
    """√(p(1 − p)/n), as if requests were independent."""
    n: int
    stderr_batch: float
    """Batch-means standard error, which accounts for requests sharing a queue."""


@dataclass(frozen=True)
class Sweep:
    """The result of a capacity sweep."""

    points: tuple
    quota: float

    @property
    def mu_star(self) -> float | None:
        """The largest swept rate whose conformance meets the quota; None if no rate does."""
        ok = [p.rate for p in self.points if p.conformance >= self.quota]
        return max(ok) if ok else None

    def require_mu_star(self) -> float:
        """μ*, or a ValueError that says no rate met the quota."""
        if self.mu_star is None:
            best = max(self.points, key=lambda p: p.conformance)
            raise ValueError(
                f"no swept rate meets the quota {self.quota:g}: the best is "
                f"{best.conformance:.3f} at {best.rate:g} req/s"
            )
        return self.mu_star

    def to_dict(self) -> dict:
        """``{"mu_star", "quota", "points": [{"rate", "conformance", "stderr"}, ...]}``."""
        return {
            "mu_star": self.mu_star,
            "quota": self.quota,
            "points": [
                {
                    "rate": p.rate,
                    "conformance": p.conformance,
                    "stderr": p.stderr,
                    "stderr_batch_means": p.stderr_batch,
                    "n": p.n,
                }
                for p in self.points
            ],
        }


def _grid(rates) -> list[float]:
    arr = np.asarray(rates, dtype=float)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError("rates must be a non-empty 1-d grid of arrival rates")
    if np.any(~np.isfinite(arr)) or np.any(arr <= 0):
        raise ValueError(f"rates must all be > 0 (λ ≤ 0 has no meaning), got {arr.tolist()}")
    return arr.tolist()


def _checked_sweep_args(n_requests: int, warmup: float, quota: float):
    n_requests = _check.integer("n_requests", n_requests, minimum=10)
    warmup = _check.fraction("warmup", warmup, low_open=False, high_open=True)
    quota = _check.fraction("quota", quota, high_open=True)
    return n_requests, int(n_requests * warmup), quota


def replica_sweep(
    rates,
    *,
    model: ReplicaModel | None = None,
    mix: LengthMix | str = "azure",
    n_requests: int = 5000,
    warmup: float = 0.1,
    quota: float = QUOTA,
    ttft_slo_s: float = TTFT_SLO_S,
    tpot_slo_s: float = TPOT_SLO_S,
    cv: float = 1.0,
    seed: int = 0,
) -> Sweep:
    """Open-loop sweep of a batching replica: Poisson arrivals, or gamma gaps when ``cv`` ≠ 1.

    ``mix`` is a ``LengthMix`` (default: the Azure conversation mix) or "identical" for every
    request at the Azure mix's mean lengths. The first ``warmup`` share of requests at each
    rate is discarded; the same seed gives the same lengths at every rate (common random
    numbers), so the curve is smooth in λ. ``cv`` is the coefficient of variation of the gaps
    between arrivals (1: Poisson; above 1: bursts).
    """
    grid = _grid(rates)
    cv = _check.positive("cv", cv)
    n_requests, skip, quota = _checked_sweep_args(n_requests, warmup, quota)
    _check.positive("ttft_slo_s", ttft_slo_s)
    _check.positive("tpot_slo_s", tpot_slo_s)
    model = model or ReplicaModel()
    if mix == "identical":
        prompt, output = identical(n_requests, *AZURE_CONVERSATION.mean())
    elif isinstance(mix, LengthMix):
        prompt, output = mix.sample(n_requests, np.random.default_rng(seed))
    elif mix == "azure":
        prompt, output = AZURE_CONVERSATION.sample(n_requests, np.random.default_rng(seed))
    else:
        raise ValueError(f"mix must be a LengthMix, 'azure' or 'identical', got {mix!r}")
    points = []
    for rate in grid:
        rng = np.random.default_rng([seed, 1])
        arrival = (
            poisson_arrivals(rate, n_requests, rng)
            if cv == 1.0
            else gamma_arrivals(rate, cv, n_requests, rng)
        )
        trace = simulate_open(model, arrival, prompt, output).window(skip)
        points.append(_point(rate, trace.meets(ttft_slo_s, tpot_slo_s)))
    return Sweep(tuple(points), quota)


def mm1_sweep(
    rates,
    *,
    mu: float,
    tau: float,
    n_requests: int = 5000,
    warmup: float = 0.1,
    quota: float = QUOTA,
    seed: int = 0,
) -> Sweep:
    """The same sweep on the textbook one-at-a-time exponential server (M/M/1)."""
    grid = _grid(rates)
    n_requests, skip, quota = _checked_sweep_args(n_requests, warmup, quota)
    mu = _check.positive("mu", mu)
    tau = _check.positive("tau", tau)
    points = []
    for k, rate in enumerate(grid):
        residence = simulate_mm1(rate, mu, n_requests, np.random.default_rng([seed, k]))
        points.append(_point(rate, residence[skip:] <= tau))
    return Sweep(tuple(points), quota)


def _point(rate: float, met: np.ndarray) -> Point:
    p = float(met.mean())
    return Point(rate, p, standard_error(p, met.size), int(met.size), batch_means_error(met))
