"""A run's record: each request's lengths and its arrival, first-token and last-token times,
from which TTFT, TPOT and latency follow.

Layer: serving.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from replicaplan.core import _check
from replicaplan.core.promises import Promises


@dataclass(frozen=True)
class Trace:
    """Per-request times of one run, in arrival order (seconds)."""

    arrival: np.ndarray = field(repr=False)
    first_token: np.ndarray = field(repr=False)
    end: np.ndarray = field(repr=False)
    prompt: np.ndarray = field(repr=False)
    output: np.ndarray = field(repr=False)
    preemptions: np.ndarray | None = field(default=None, repr=False)
    """Times each request was preempted and recomputed (zeros when not recorded)."""
    rejected: np.ndarray | None = field(default=None, repr=False)
    """True for requests that could never fit the KV cache and were turned away."""

    def __post_init__(self):
        n = np.asarray(self.arrival).size
        if self.preemptions is None:
            object.__setattr__(self, "preemptions", np.zeros(n, dtype=int))
        if self.rejected is None:
            object.__setattr__(self, "rejected", np.zeros(n, dtype=bool))

    @property
    def ttft(self) -> np.ndarray:
        """Time to first token."""
        return self.first_token - self.arrival

    @property
    def tpot(self) -> np.ndarray:
        """(end − first token)/(output − 1); 0 for one-token answers."""
        steps = np.maximum(self.output - 1, 1)
        return np.where(self.output > 1, (self.end - self.first_token) / steps, 0.0)

    @property
    def latency(self) -> np.ndarray:
        """End-to-end latency (residence time W)."""
        return self.end - self.arrival

    def meets(self, promises: Promises) -> np.ndarray:
        """True for requests that meet both promises: TTFT ≤ τ_TTFT and TPOT ≤ τ_TPOT (a
        rejected request meets neither)."""
        return (
            (self.ttft <= promises.ttft_slo_s) & (self.tpot <= promises.tpot_slo_s) & ~self.rejected
        )

    def window(self, skip: int) -> Trace:
        """The trace without its first ``skip`` requests (the warm-up)."""
        skip = _check.integer("skip", skip, minimum=0)
        if skip >= self.arrival.size:
            raise ValueError(
                f"skip must be < the number of requests ({self.arrival.size}), got {skip}"
            )
        sl = slice(skip, None)
        return Trace(
            self.arrival[sl],
            self.first_token[sl],
            self.end[sl],
            self.prompt[sl],
            self.output[sl],
            self.preemptions[sl],
            self.rejected[sl],
        )

    @property
    def throughput_rps(self) -> float:
        """Completed requests per second between the first arrival and the last completion."""
        return self.arrival.size / float(self.end.max() - self.arrival.min())
