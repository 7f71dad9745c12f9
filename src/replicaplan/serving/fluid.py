"""A replica in its fluid limit, and the rules every fleet sizes with.

* ``replicas_needed``: the sizing rule N = ⌈λ / (ρ* μ*)⌉ + reserve;
* ``FluidReplica``: a batching replica reduced to its fluid limit (a request spends W_s(b) in a
  batch of b), which the closed-loop simulation runs replicas as;
* ``gpu_utilization``: the proxy that nvidia-smi's busy counter follows, 1 − e^(−L);
* ``warm_in_flight``: the requests a replica holds at a steady rate.

Layer: serving. Imports core and serving only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from replicaplan.core import _check, portable
from replicaplan.core.example import EXAMPLE
from replicaplan.serving.replica import ReplicaModel


def replicas_needed(rate, capacity: float, target: float = 1.0, reserve: int = 0):
    """⌈λ / (ρ* μ*)⌉ + reserve: replicas that keep each one at ``target`` of ``capacity``.

    ``rate`` may be a number or an array of rates. With ``target`` = 1 this is the naive
    ⌈λ/μ*⌉ of a fleet sized on full capacity.

    >>> replicas_needed(60, 8), replicas_needed(60, 8, 0.8), replicas_needed(42, 8, 0.8)
    (8, 10, 7)
    """
    capacity = _check.positive("capacity", capacity)
    target = _check.fraction("target", target)
    reserve = _check.integer("reserve", reserve, minimum=0)
    if np.ndim(rate):
        return _check.ceil_count(_check.rates("rate", rate) / (target * capacity)) + reserve
    return _check.ceil_count(_check.non_negative("rate", rate) / (target * capacity)) + reserve


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
    slowdown: float = 1.0
    """κ: every request's time multiplied by κ ≥ 1, the waits and the prefill passes that
    stall decoding in the discrete replica, which the fluid limit leaves out (``plan``
    calibrates it so that the two agree at the operating point)."""

    def __post_init__(self):
        _check.non_negative("prompt_tokens", self.prompt_tokens)
        _check.positive("output_tokens", self.output_tokens)
        if not self.slowdown >= 1:
            raise ValueError(f"slowdown must be >= 1, got {self.slowdown!r}")
        if self.gpu_memory_bytes <= self.model.weight_bytes:
            raise ValueError("gpu_memory_bytes must exceed the model's weight bytes")

    def residence_s(self, b):
        """W_s(b) = κ · [prefill + (output − 1) · TPOT(b)]: seconds a request spends in a batch
        of b."""
        return self.slowdown * (
            float(self.model.prefill_s(self.prompt_tokens))
            + (self.output_tokens - 1) * self.model.tpot(b)
        )

    def completion_rate(self, b):
        """c(b) = b / W_s(b), requests/s completed by a replica running b sequences."""
        b = np.asarray(b, dtype=float)
        return b / self.residence_s(np.maximum(b, 1.0))

    @property
    def capacity_rps(self) -> float:
        """μ = c(B): the most a full replica completes."""
        return float(self.completion_rate(self.model.batch))

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
