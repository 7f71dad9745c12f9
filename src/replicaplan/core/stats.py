"""Uncertainty of a measured share: the binomial standard error and the batch-means error.

A conformance is a frequency: the share of n requests that met their promises. Counted as n
independent trials its standard error is √(p(1 − p)/n); requests that share a queue are not
independent (one slow prefill delays everyone behind it), and near saturation the spread of the
share over consecutive blocks of requests, std(block shares)/√blocks, is several times larger.
"""

from __future__ import annotations

import math

import numpy as np

from replicaplan.core import _check


def standard_error(p: float, n: int) -> float:
    """√(p(1 − p)/n): the standard error of a share p measured over n independent requests.

    >>> round(standard_error(0.9, 200), 4)
    0.0212
    """
    p = _check.fraction("p", p, low_open=False)
    n = _check.integer("n", n, minimum=1)
    return math.sqrt(p * (1 - p) / n)


def requests_for_error(p: float, error: float) -> int:
    """The fewest independent requests that bring the standard error of a share p down to
    ``error``: ⌈p(1 − p)/error²⌉.

    >>> requests_for_error(0.9, 0.01)
    900
    """
    p = _check.fraction("p", p, low_open=False)
    error = _check.positive("error", error)
    return math.ceil(round(p * (1 - p) / error**2, 9))


def batch_means_error(met, batches: int = 20) -> float:
    """Standard error of a share from its spread over ``batches`` consecutive blocks.

    ``met`` holds one outcome (True/False, or 0/1) per request in arrival order; the result is
    std(block shares, ddof = 1)/√batches, which keeps the correlation of neighbouring requests.
    """
    met = np.asarray(met, dtype=float)
    batches = _check.integer("batches", batches, minimum=2)
    if met.size < batches:
        raise ValueError(f"need at least {batches} requests for {batches} batches, got {met.size}")
    shares = np.array([block.mean() for block in np.array_split(met, batches)])
    return float(shares.std(ddof=1) / math.sqrt(batches))
