"""A replica in its fluid limit, and the rules every fleet sizes with.

* ``replicas_needed``: the sizing rule N = ⌈λ / (ρ* μ*)⌉ + reserve, on a ``ReplicaRate``;
* ``FluidReplica``: a batching replica reduced to its fluid limit (a request spends W_s(b) in a
  batch of b), which the closed-loop simulation runs replicas as;
* ``MeasuredReplica``: a replica reduced to the steady states measured on the discrete replica
  (requests in flight against requests completed), prefill and queueing included, which the
  planner's replays run on;
* ``gpu_utilization``: the proxy that nvidia-smi's busy counter follows, 1 − e^(−L);
* ``warm_in_flight``: the requests a replica holds at a steady rate.

Both replicas give the closed loop (``simulation.control``) a ``stepper``: how the requests
in flight of a fleet of N replicas move over one second with a arrivals.

Layer: serving. Imports core and serving only.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field

import numpy as np

from replicaplan.core import _check, portable
from replicaplan.core.example import EXAMPLE
from replicaplan.core.sizing import ReplicaRate
from replicaplan.serving.replica import ReplicaModel


def replicas_needed(rate, replica_rate: ReplicaRate, reserve: int = 0):
    """⌈λ / (ρ* μ*)⌉ + reserve: replicas that keep each one at ρ* of μ*, both of
    ``replica_rate`` (``core.sizing.ReplicaRate``, checked when it was made).

    ``rate`` may be a number or an array of rates. With ρ* = 1 this is the naive ⌈λ/μ*⌉ of a
    fleet sized on the whole capacity.

    >>> at_8 = ReplicaRate(8.0)
    >>> replicas_needed(60, at_8), replicas_needed(60, ReplicaRate(8.0, 0.8)), replicas_needed(
    ...     42, ReplicaRate(8.0, 0.8))
    (8, 10, 7)
    """
    per = _check.instance("replica_rate", replica_rate, ReplicaRate).rps
    reserve = _check.integer("reserve", reserve, minimum=0)
    if np.ndim(rate):
        return _check.ceil_count(_check.rates("rate", rate) / per) + reserve
    return _check.ceil_count(_check.non_negative("rate", rate) / per) + reserve


def gpu_utilization(in_flight, busy_requests: float = 1.0):
    """1 − e^(−L/k): the share of time a replica with L requests in flight has a kernel running.

    The requests in a replica are close to Poisson with mean L (an M/G/∞ occupancy), so the
    share of time with at least one is 1 − e^(−L) (k = 1): the counter nvidia-smi reports
    saturates from about three requests on, long before the batch is full. ``busy_requests`` = k
    stretches that assumption (a counter that needs k times as many requests to read as busy),
    to see how a result depends on it. ``in_flight`` may be an array.
    """
    k = _check.positive("busy_requests", busy_requests)
    if np.ndim(in_flight):
        return 1.0 - portable.exp(-np.asarray(in_flight, dtype=float) / k)
    return 1.0 - math.exp(-float(in_flight) / k)


@dataclass(frozen=True)
class FluidReplica:
    """The fluid limit of a batching replica with a fixed mean request shape.

    With b sequences running (b ≤ B) it completes c(b) = b / W_s(b) requests per second, where
    W_s(b) = prefill(prompt) + (output − 1) · TPOT(b) is the time a request spends in a batch of
    b; a full replica of the running example completes about 8 req/s.
    """

    model: ReplicaModel = field(default_factory=ReplicaModel)
    prompt_tokens: float = 0.0
    output_tokens: float = EXAMPLE.answer_tokens
    gpu_memory_bytes: float = 80e9
    busy_requests: float = 1.0
    """k of ``gpu_utilization``: 1 under the Poisson occupancy model."""

    def __post_init__(self):
        _check.non_negative("prompt_tokens", self.prompt_tokens)
        _check.positive("output_tokens", self.output_tokens)
        if self.gpu_memory_bytes <= self.model.weight_bytes:
            raise ValueError("gpu_memory_bytes must exceed the model's weight bytes")

    def residence_s(self, b):
        """W_s(b) = prefill + (output − 1) · TPOT(b): seconds a request spends in a batch of b."""
        return float(self.model.prefill_s(self.prompt_tokens)) + (
            self.output_tokens - 1
        ) * self.model.tpot(b)

    def completion_rate(self, b):
        """c(b) = b / W_s(b), requests/s completed by a replica running b sequences."""
        b = np.asarray(b, dtype=float)
        return b / self.residence_s(np.maximum(b, 1.0))

    @property
    def max_rate_rps(self) -> float:
        """μ = c(B): the most a full replica completes."""
        return float(self.completion_rate(self.model.batch))

    @property
    def batch(self) -> int:
        return self.model.batch

    def kv_tokens(self, b):
        """Tokens of KV cache held by b running sequences of ``context_tokens`` each."""
        return np.asarray(b) * self.model.context_tokens

    def warm(self, rate_rps: float) -> float:
        """Requests in flight once ``rate_rps`` has run a while: λ · W_s(B) (``warm_in_flight``)."""
        return warm_in_flight(rate_rps, self)

    def stepper(self):
        """``advance(L, a, N) -> (L', served)``: one second of N replicas holding L requests in
        all, with a arrivals. An explicit step of the fluid limit: the a requests join, b =
        min(L/N, B) run in each replica, and min(N c(b), L) complete.

        c(b) is read on a fine grid of b, for speed (b is continuous in the fluid limit); the
        grid's points are k/4, exact in binary, so the cell of b is ⌊4b⌋ and the value is
        np.interp's own slope · (b − b_k) + c_k, bit for bit."""
        B = self.model.batch
        grid = np.linspace(0, B, 4 * B + 1)
        c_grid = self.completion_rate(grid)
        c_list, g_list, last = c_grid.tolist(), grid.tolist(), grid.size - 1
        slopes = (np.diff(c_grid) / np.diff(grid)).tolist()

        def advance(in_flight: float, arrivals: float, ready: int) -> tuple[float, float]:
            in_flight += arrivals
            b = min(in_flight / ready, B)
            k = int(4 * b)
            c = c_list[last] if k >= last else slopes[k] * (b - g_list[k]) + c_list[k]
            served = min(ready * c, in_flight)
            return in_flight - served, served

        return advance

    def kv_occupancy(self, b):
        """Share of the KV budget (GPU memory minus weights) used by b running sequences."""
        m = self.model
        return (
            np.asarray(b)
            * m.context_tokens
            * m.kv_bytes_per_token
            / (self.gpu_memory_bytes - m.weight_bytes)
        )


def warm_in_flight(rate_rps: float, replica: FluidReplica) -> float:
    """Requests in flight when traffic ``rate_rps`` has run a while at full speed: λ · W_s(B)."""
    return _check.non_negative("rate_rps", rate_rps) * float(
        replica.residence_s(replica.model.batch)
    )


@dataclass(frozen=True)
class MeasuredReplica:
    """A replica described by its measured steady states: with ℓ_k requests in flight it
    completes c_k requests a second and holds τ_k tokens of KV cache (k = 0 … m, ℓ_0 = c_0 = 0,
    both strictly increasing), read off the discrete replica at steady rates c_k (Little's law:
    ℓ_k = c_k W_k). Between the points c(ℓ) is linear; past ℓ_m it stays at c_m, the most a
    replica completes.

    A fleet of N such replicas holding L requests in all and receiving a requests a second
    moves as dL/dt = a − N c(L/N). On each linear piece that is a linear equation, solved
    exactly: L relaxes towards the L∞ = N ℓ at which c(ℓ) = a/N with rate N·slope/N, crossing
    to the next piece when it reaches a point. So a replica whose requests stay well under a
    second, which an explicit one-second step would empty every second, holds λW in flight at a
    steady rate, as the discrete replica does.
    """

    in_flight: tuple
    """ℓ_k: requests in flight per replica at the measured steady states, from 0."""
    rate: tuple
    """c_k: requests/s completed there (the offered rate), from 0."""
    cache_tokens: tuple
    """τ_k: tokens of KV cache held there (time-average), from 0."""
    batch: int
    busy_requests: float = 1.0

    def __post_init__(self):
        ell, c, tau = (
            np.asarray(x, dtype=float) for x in (self.in_flight, self.rate, self.cache_tokens)
        )
        if not (ell.ndim == 1 and ell.size >= 2 and c.shape == ell.shape == tau.shape):
            raise ValueError("in_flight, rate and cache_tokens must be 1-d, of one length >= 2")
        if ell[0] != 0 or c[0] != 0 or tau[0] != 0:
            raise ValueError("the measured points must start at 0 in flight, 0 req/s, 0 tokens")
        if not (np.all(np.diff(ell) > 0) and np.all(np.diff(c) > 0)):
            raise ValueError("in_flight and rate must increase strictly")
        if not np.all(np.isfinite(ell)) or not np.all(np.isfinite(c)) or np.any(tau < 0):
            raise ValueError("in_flight, rate and cache_tokens must be finite, tokens >= 0")
        _check.integer("batch", self.batch, minimum=1)

    @property
    def max_rate_rps(self) -> float:
        """c_m: the most a replica completes."""
        return float(self.rate[-1])

    def completion_rate(self, ell):
        """c(ℓ), linear between the measured points, c_m past the last."""
        return np.interp(np.asarray(ell, dtype=float), self.in_flight, self.rate)

    def residence_s(self, ell):
        """W(ℓ) = ℓ / c(ℓ): Little's law on the curve."""
        ell = np.asarray(ell, dtype=float)
        return ell / self.completion_rate(np.maximum(ell, 1e-12))

    def in_flight_at(self, rate_rps: float) -> float:
        """ℓ at which one replica completes ``rate_rps`` (the steady state), ℓ_m beyond c_m."""
        return float(
            np.interp(_check.non_negative("rate_rps", rate_rps), self.rate, self.in_flight)
        )

    def kv_tokens(self, ell):
        """τ(ℓ): tokens of KV cache held per replica with ℓ requests in flight."""
        return np.interp(np.asarray(ell, dtype=float), self.in_flight, self.cache_tokens)

    def kv_occupancy(self, ell):
        """Not measured for this replica: the KV budget's share is the cache tokens' business."""
        return 0.0 * np.asarray(ell, dtype=float)

    def warm(self, rate_rps: float) -> float:
        """Requests in flight in a fleet carrying ``rate_rps`` on one replica per c_m: the steady
        state of the ⌈λ/c_m⌉ replicas it starts with."""
        n = max(1, math.ceil(_check.non_negative("rate_rps", rate_rps) / self.max_rate_rps))
        return n * self.in_flight_at(rate_rps / n)

    def stepper(self):
        """``advance(L, a, N) -> (L', served)``: one second solved exactly, piece by piece."""
        ell = [float(x) for x in self.in_flight]
        c = [float(x) for x in self.rate]
        m = len(ell) - 1
        slope = [(c[k + 1] - c[k]) / (ell[k + 1] - ell[k]) for k in range(m)]
        exp, log, right = math.exp, math.log, bisect.bisect_right

        def advance(in_flight: float, arrivals: float, ready: int) -> tuple[float, float]:
            x = in_flight / ready  # per replica
            lam = arrivals / ready
            t = 1.0
            k = right(ell, x) - 1  # the piece x lies on, m past the last point
            if k > 0 and x == ell[k] and lam < c[k]:
                k -= 1  # on a point and falling: the piece below
            while t > 0:
                if k >= m:  # past the last point: c = c_m, a straight line
                    d = lam - c[m]
                    if d >= 0 or x + d * t >= ell[m]:
                        x += d * t
                        break
                    t -= (ell[m] - x) / d
                    x, k = ell[m], m - 1
                    continue
                s = slope[k]
                target = ell[k] + (lam - c[k]) / s  # where this piece's equation settles
                if ell[k] <= target <= ell[k + 1] or x == target:
                    x = target + (x - target) * exp(-s * t)
                    break
                edge, nxt = (ell[k + 1], k + 1) if target > ell[k + 1] else (ell[k], k - 1)
                tt = log((x - target) / (edge - target)) / s
                if tt >= t:
                    x = target + (x - target) * exp(-s * t)
                    break
                t -= tt
                x, k = edge, nxt
            x = max(x, 0.0)
            after = x * ready
            return after, in_flight + arrivals - after

        return advance
