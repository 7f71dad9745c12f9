"""Capacity: the highest arrival rate a replica serves within its promises.

    μ* = max { λ : conformance(λ) ≥ q },   q = 0.9 by default,

where conformance(λ) is the share of requests that meet both SLOs when requests arrive at rate λ
in **open loop** (arrivals independent of answers). The sweep runs λ over a grid, discards the
warm-up at each λ (the queue is still forming), measures over thousands of requests and reports
each share with its standard error √(p(1 − p)/n).

The textbook reference is the M/M/1 queue with raw service rate μ: its residence time is
exponential with rate μ − λ, so conformance to a threshold τ is 1 − e^{−(μ−λ)τ} and the quota q
is met up to μ* = μ + ln(1 − q)/τ, which for q = 0.9 is μ − ln 10/τ. Both are derived below with
sympy; the numeric functions evaluate the derived expressions.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from functools import cache

import numpy as np
import sympy as sp

from . import _check
from .example import EXAMPLE
from .loadgen import AZURE_CONVERSATION, LengthMix, gamma_arrivals, identical, poisson_arrivals
from .replica import ReplicaModel, Trace, simulate_open

TTFT_SLO_S = EXAMPLE.ttft_slo_s
"""τ_TTFT default (the running example's promise)."""
TPOT_SLO_S = EXAMPLE.tpot_slo_s
"""τ_TPOT default (the running example's promise)."""
QUOTA = EXAMPLE.quota
"""Share of requests that must meet the SLOs."""

lam_, mu_, tau_, w_, q_ = sp.symbols("lambda mu tau w q", positive=True)


def mm1_conformance_expression() -> sp.Expr:
    """P(W ≤ τ) for W ~ Exp(μ − λ): the integral of the residence-time density up to τ."""
    density = (mu_ - lam_) * sp.exp(-(mu_ - lam_) * w_)
    return sp.simplify(sp.integrate(density, (w_, 0, tau_)))


def mm1_capacity_expression(quota=sp.Rational(9, 10)) -> sp.Expr:  # noqa: B008 (immutable)
    """Solve 1 − e^{−(μ−λ)τ} = q for λ: μ* = μ + ln(1 − q)/τ (μ − ln 10/τ at q = 0.9)."""
    (lam_star,) = sp.solve(sp.Eq(mm1_conformance_expression(), quota), lam_)
    return sp.simplify(lam_star)


@cache
def _mm1_conformance_fn():
    return sp.lambdify((lam_, mu_, tau_), mm1_conformance_expression(), "numpy")


def mm1_conformance(lam, mu: float, tau: float):
    """Closed-form M/M/1 conformance 1 − e^{−(μ−λ)τ} for λ < μ; 0 for λ ≥ μ (no steady state)."""
    mu = _check.positive("mu", mu)
    tau = _check.positive("tau", tau)
    lam_arr = np.asarray(lam, dtype=float)
    if np.any(~np.isfinite(lam_arr)) or np.any(lam_arr <= 0):
        raise ValueError(f"lam must be > 0, got {lam!r}")
    value = np.where(lam_arr < mu, _mm1_conformance_fn()(np.minimum(lam_arr, mu), mu, tau), 0.0)
    return float(value) if value.ndim == 0 else value


def mm1_capacity(mu: float, tau: float, quota: float = QUOTA) -> float:
    """μ* = μ + ln(1 − q)/τ; raises if no positive rate meets the quota."""
    mu = _check.positive("mu", mu)
    tau = _check.positive("tau", tau)
    quota = _check.fraction("quota", quota, high_open=True)
    value = float(mm1_capacity_expression(sp.nsimplify(quota)).subs({mu_: mu, tau_: tau}))
    if value <= 0:
        raise ValueError(
            f"no arrival rate meets the quota {quota}: μ + ln(1 − q)/τ = {value:.3g} ≤ 0"
        )
    return value


def simulate_mm1(rate: float, mu: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Residence times of ``n`` Poisson arrivals at one exponential server (FIFO, one at a time).

    Lindley's recursion: wait_{i} = max(0, wait_{i−1} + service_{i−1} − gap_i).
    """
    rate = _check.positive("rate", rate)
    mu = _check.positive("mu", mu)
    n = _check.integer("n", n, minimum=1)
    gaps = rng.exponential(1 / rate, n).tolist()
    service = rng.exponential(1 / mu, n).tolist()
    residence = [0.0] * n
    wait = 0.0
    for i in range(n):
        if i:
            wait = max(0.0, wait + service[i - 1] - gaps[i])
        residence[i] = wait + service[i]
    return np.array(residence)


def simulate_closed_mm1(
    users: int, mu: float, think_mean: float, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A closed population at one exponential server: ``users`` who each send, wait, think, send.

    Think times are exponential with mean Z. Returns (arrival times, residence times) of the
    first ``n`` requests in arrival order. The population bounds the queue: never more than
    ``users`` requests are in the system.
    """
    users = _check.integer("users", users, minimum=1)
    mu = _check.positive("mu", mu)
    think_mean = _check.non_negative("think_mean", think_mean)
    n = _check.integer("n", n, minimum=1)
    service = rng.exponential(1 / mu, n).tolist()
    think = (
        rng.exponential(think_mean, n + users) if think_mean > 0 else np.zeros(n + users)
    ).tolist()
    sends = think[:users]  # each user's first request after one think time
    heapq.heapify(sends)
    arrival, residence = [0.0] * n, [0.0] * n
    free_at = 0.0
    for i in range(n):
        t = heapq.heappop(sends)
        free_at = max(t, free_at) + service[i]
        arrival[i], residence[i] = t, free_at - t
        heapq.heappush(sends, free_at + think[users + i])
    return np.array(arrival), np.array(residence)


def standard_error(p: float, n: int) -> float:
    """√(p(1 − p)/n): the standard error of a share p measured over n independent requests."""
    p = _check.fraction("p", p, low_open=False)
    n = _check.integer("n", n, minimum=1)
    return math.sqrt(p * (1 - p) / n)


def batch_means_error(met, batches: int = 20) -> float:
    """Standard error of a share from the spread of its value over consecutive batches.

    Consecutive requests share a queue, so their outcomes are correlated and √(p(1−p)/n)
    understates the uncertainty near saturation. Splitting the run into ``batches`` contiguous
    blocks and taking std(block shares)/√batches accounts for that correlation.
    """
    met = np.asarray(met, dtype=float)
    batches = _check.integer("batches", batches, minimum=2)
    if met.size < batches:
        raise ValueError(f"need at least {batches} requests for {batches} batches, got {met.size}")
    shares = np.array([b.mean() for b in np.array_split(met, batches)])
    return float(shares.std(ddof=1) / math.sqrt(batches))


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


def interactive_law(trace: Trace, users: int, think_s: np.ndarray, *, middle: float = 0.8):
    """Check λ = N_u / (W + Z) on a closed-loop run, over the middle of the run.

    Returns (measured throughput, N_u / (W̄ + Z̄)), both from requests that arrived in the
    central ``middle`` share of the run's duration, away from its start and its wind-down.
    """
    users = _check.integer("users", users, minimum=1)
    middle = _check.fraction("middle", middle)
    t0, t1 = trace.arrival.min(), trace.end.max()
    lo = t0 + (1 - middle) / 2 * (t1 - t0)
    hi = t1 - (1 - middle) / 2 * (t1 - t0)
    inside = (trace.arrival >= lo) & (trace.arrival < hi)
    measured = inside.sum() / (hi - lo)
    predicted = users / (trace.latency[inside].mean() + np.asarray(think_s)[inside].mean())
    return float(measured), float(predicted)
