"""The fluid replica, the sizing rule and the GPU-utilization proxy (serving.fluid)."""

import math

import numpy as np
import pytest

from replicaplan.serving.fluid import FluidReplica, gpu_utilization, replicas_needed


def test_sizing_rule_on_the_source_examples():
    assert replicas_needed(60, 8) == 8  # 60 req/s on replicas of 8: 7.5 → 8
    assert replicas_needed(60, 8, 0.8) == 10  # at the 80 % target: 9.375 → 10
    assert replicas_needed(12, 8, 0.8) == 2 and replicas_needed(42, 8, 0.8) == 7
    assert replicas_needed(12, 8, 0.8, reserve=3) == 5
    assert replicas_needed(6.4 * 3, 8, 0.8) == 3  # a whole number is not rounded up by noise
    assert list(replicas_needed(np.array([0.0, 6.4, 6.5]), 8, 0.8)) == [0, 1, 2]


def test_utilization_proxy_saturates_long_before_the_batch():
    # P(at least one request) for a Poisson number of requests with mean L
    for L in (0.5, 3.0, 10.0):
        assert gpu_utilization(L) == pytest.approx(1 - math.exp(-L))
    assert gpu_utilization(3.0) > 0.95 and gpu_utilization(np.array([0.0]))[0] == 0.0


def test_fluid_replica_capacity_is_the_running_example():
    assert FluidReplica().capacity_rps == pytest.approx(8.0, rel=0.01)


def test_stretched_busy_counter():
    # k requests read as busy as one does under the Poisson model
    assert gpu_utilization(4.0, busy_requests=4.0) == pytest.approx(gpu_utilization(1.0))
    with pytest.raises(ValueError, match="busy_requests"):
        gpu_utilization(1.0, busy_requests=0)
