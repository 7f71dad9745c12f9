"""Queueing theory of one replica: the M/M/1 closed forms, their simulators, the interactive law.

The M/M/1 queue (Poisson arrivals at rate λ, one exponential server of raw rate μ) is the
book's teaching model for the shape of the conformance curve. Its time in the system is
exponential with rate μ − λ, so the share of requests served within τ is

    conformance(λ) = 1 − e^{−(μ−λ)τ},       and the quota q is met up to   μ* = μ + ln(1 − q)/τ,

μ − ln 10/τ for q = 0.9. Both are derived once below with sympy and the numeric functions are
those expressions lambdified. A closed population of N_u users who think Z between an answer
and their next request sends λ = N_u/(W + Z), the interactive response-time law.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING

import numpy as np

from replicaplan.core import _check, derived

if TYPE_CHECKING:
    import sympy as sp


def mm1_conformance_expression() -> sp.Expr:
    """P(W ≤ τ) for W ~ Exp(μ − λ): the integral of the time-in-system density up to τ."""
    import sympy as sp

    from replicaplan.core.symbols import lam, mu, tau, w

    density = (mu - lam) * sp.exp(-(mu - lam) * w)
    return sp.simplify(sp.integrate(density, (w, 0, tau)))


def mm1_capacity_expression(quota=None) -> sp.Expr:
    """Solve conformance(λ) = q for λ: μ* = μ + ln(1 − q)/τ; ``quota`` substitutes a value for q."""
    import sympy as sp

    from replicaplan.core.symbols import lam, q

    (lam_star,) = sp.solve(sp.Eq(mm1_conformance_expression(), q), lam)
    lam_star = sp.expand_log(sp.simplify(lam_star), force=True)
    return lam_star if quota is None else sp.simplify(lam_star.subs(q, sp.nsimplify(quota)))


def derivations() -> dict:
    """The numeric functions ``core.derived`` holds for this module (see ``tools/derive.py``)."""
    from replicaplan.core.symbols import lam, mu, q, tau

    return {
        "mm1_conformance": (
            (lam, mu, tau),
            mm1_conformance_expression(),
            "numpy",
            "mm1_conformance_expression()",
        ),
        "mm1_capacity": (
            (mu, tau, q),
            mm1_capacity_expression(),
            "math",
            "mm1_capacity_expression()",
        ),
    }


def mm1_conformance(rate, mu: float, tau: float):
    """1 − e^{−(μ−λ)τ} for λ < μ; 0 for λ ≥ μ (no steady state). ``rate`` may be an array."""
    mu = _check.positive("mu", mu)
    tau = _check.positive("tau", tau)
    lam_arr = np.asarray(rate, dtype=float)
    if np.any(~np.isfinite(lam_arr)) or np.any(lam_arr <= 0):
        raise ValueError(f"rate must be > 0, got {rate!r}")
    value = np.where(lam_arr < mu, derived.mm1_conformance(np.minimum(lam_arr, mu), mu, tau), 0.0)
    return float(value) if value.ndim == 0 else value


def mm1_capacity(mu: float, tau: float, quota: float = 0.9) -> float:
    """μ* = μ + ln(1 − q)/τ; raises if no positive rate meets the quota.

    >>> round(mm1_capacity(10, 1), 4)     # μ − ln 10/τ
    7.6974
    """
    mu = _check.positive("mu", mu)
    tau = _check.positive("tau", tau)
    quota = _check.fraction("quota", quota, high_open=True)
    value = float(derived.mm1_capacity(mu, tau, quota))
    if value <= 0:
        raise ValueError(
            f"no arrival rate meets the quota {quota}: μ + ln(1 − q)/τ = {value:.3g} ≤ 0"
        )
    return value


def simulate_mm1(rate: float, mu: float, n: int, rng: np.random.Generator) -> np.ndarray:
    """Times in the system of ``n`` Poisson arrivals at one exponential server (FIFO).

    Lindley's recursion: wait_i = max(0, wait_{i−1} + service_{i−1} − gap_i).
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


def overload_growth(rate: float, mu: float) -> float:
    """How fast the time in the system grows when arrivals outpace the server: λ/μ − 1 (a
    minute of waiting per minute of running). It has no steady state, so a mean over a run
    only grows with the run's length; this rate is what converges.

    >>> overload_growth(3.0, 2.5)
    0.19999999999999996
    """
    rate = _check.positive("rate", rate)
    mu = _check.positive("mu", mu)
    if rate <= mu:
        raise ValueError(f"rate must exceed mu for the queue to grow, got {rate} <= {mu}")
    return rate / mu - 1


def measured_overload_growth(rate: float, mu: float, n: int, rng: np.random.Generator) -> float:
    """The same growth measured on a simulated M/M/1 run: the least-squares slope of the time in
    the system against the arrival time of ``n`` Poisson arrivals."""
    rate = _check.positive("rate", rate)
    arrivals = np.cumsum(rng.exponential(1 / rate, _check.integer("n", n, minimum=2)))
    residence = simulate_mm1(rate, mu, n, rng)
    return float(np.polyfit(arrivals, residence, 1)[0])


def simulate_closed_mm1(
    users: int, mu: float, think_mean: float, n: int, rng: np.random.Generator
) -> tuple[np.ndarray, np.ndarray]:
    """A closed population at one exponential server: ``users`` who each send, wait, think, send.

    Think times are exponential with mean Z. Returns (arrival times, times in the system) of
    the first ``n`` requests in arrival order. Never more than ``users`` are in the system.
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
        now = heapq.heappop(sends)
        free_at = max(now, free_at) + service[i]
        arrival[i], residence[i] = now, free_at - now
        heapq.heappush(sends, free_at + think[users + i])
    return np.array(arrival), np.array(residence)


def littles_law(rate: float, residence_s: float) -> float:
    """L = λW: requests in a system that ``rate`` per second enter and stay ``residence_s`` in.

    >>> littles_law(6.4, 8.0)
    51.2
    """
    return _check.non_negative("rate", rate) * _check.non_negative("residence_s", residence_s)


def interactive_throughput(users: int, residence_s: float, think_s: float) -> float:
    """λ = N_u / (W + Z): what a closed population of N_u users sends.

    >>> interactive_throughput(100, 7.5, 5.0)
    8.0
    """
    users = _check.integer("users", users, minimum=1)
    total = _check.non_negative("residence_s", residence_s) + _check.non_negative(
        "think_s", think_s
    )
    if total <= 0:
        raise ValueError("residence_s + think_s must be > 0")
    return users / total


def interactive_law(trace, users: int, think_s, *, middle: float = 0.8):
    """Check λ = N_u / (W + Z) on a closed-loop run, over the middle of the run.

    ``trace`` is a replica ``Trace``. Returns (measured throughput, N_u / (W̄ + Z̄)), both from
    requests that arrived in the central ``middle`` share of the run, away from its start and
    its wind-down.
    """
    middle = _check.fraction("middle", middle)
    t0, t1 = trace.arrival.min(), trace.end.max()
    lo = t0 + (1 - middle) / 2 * (t1 - t0)
    hi = t1 - (1 - middle) / 2 * (t1 - t0)
    inside = (trace.arrival >= lo) & (trace.arrival < hi)
    measured = inside.sum() / (hi - lo)
    predicted = interactive_throughput(
        users, float(trace.latency[inside].mean()), float(np.asarray(think_s)[inside].mean())
    )
    return float(measured), float(predicted)
