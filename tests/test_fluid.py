"""The fluid replica, the sizing rule and the GPU-utilization proxy (serving.fluid)."""

import math

import numpy as np
import pytest

from replicaplan.core.sizing import ReplicaRate
from replicaplan.serving.fluid import (
    FluidReplica,
    MeasuredReplica,
    gpu_utilization,
    replicas_needed,
)


def test_sizing_rule_on_the_source_examples():
    assert replicas_needed(60, ReplicaRate(8)) == 8  # 60 req/s on replicas of 8: 7.5 → 8
    assert replicas_needed(60, ReplicaRate(8, 0.8)) == 10  # at the 80 % target: 9.375 → 10
    assert (
        replicas_needed(12, ReplicaRate(8, 0.8)) == 2
        and replicas_needed(42, ReplicaRate(8, 0.8)) == 7
    )
    assert replicas_needed(12, ReplicaRate(8, 0.8), reserve=3) == 5
    assert (
        replicas_needed(6.4 * 3, ReplicaRate(8, 0.8)) == 3
    )  # a whole number is not rounded up by noise
    assert list(replicas_needed(np.array([0.0, 6.4, 6.5]), ReplicaRate(8, 0.8))) == [0, 1, 2]


def test_utilization_proxy_saturates_long_before_the_batch():
    # P(at least one request) for a Poisson number of requests with mean L
    for L in (0.5, 3.0, 10.0):
        assert gpu_utilization(L) == pytest.approx(1 - math.exp(-L))
    assert gpu_utilization(3.0) > 0.95 and gpu_utilization(np.array([0.0]))[0] == 0.0


def test_fluid_replica_capacity_is_the_running_example():
    assert FluidReplica().max_rate_rps == pytest.approx(8.0, rel=0.01)


def test_stretched_busy_counter():
    # k requests read as busy as one does under the Poisson model
    assert gpu_utilization(4.0, busy_requests=4.0) == pytest.approx(gpu_utilization(1.0))
    with pytest.raises(ValueError, match="busy_requests"):
        gpu_utilization(1.0, busy_requests=0)


# ------------------------------------------------------------------ the measured replica
def _measured():
    """W = 0.5 s up to 10 req/s (ℓ = 5), then no more: c(ℓ) = 2ℓ, flat at 10 past ℓ = 5."""
    return MeasuredReplica((0.0, 2.5, 5.0), (0.0, 5.0, 10.0), (0.0, 100.0, 200.0), batch=64)


def test_a_measured_replica_settles_where_its_curve_says():
    advance = _measured().stepper()
    held = 0.0
    for _ in range(30):
        held, served = advance(held, 12.0, 3)  # 4 req/s a replica: ℓ = λW = 2
    assert held == pytest.approx(6.0) and served == pytest.approx(12.0)


def test_one_second_of_a_measured_replica_solved_by_hand():
    advance = _measured().stepper()
    # from empty at 4 req/s a replica: dℓ/dt = 4 − 2ℓ, ℓ(1) = 2 (1 − e^(−2))
    held, _ = advance(0.0, 12.0, 3)
    assert held / 3 == pytest.approx(2 * (1 - math.exp(-2)), rel=1e-12)
    # past the last point at 15 req/s a replica: ℓ grows by 15 − 10 = 5 a second
    held, served = advance(15.0, 45.0, 3)
    assert held / 3 == pytest.approx(10.0) and served == pytest.approx(30.0)
    # from ℓ = 8 with no arrivals: 0.3 s down the flat part to ℓ = 5, then e^(−2 · 0.7)
    held, _ = advance(24.0, 0.0, 3)
    assert held / 3 == pytest.approx(5 * math.exp(-2 * 0.7), rel=1e-12)
    # the same second run with explicit steps of a millisecond agrees
    x, lam = 8.0, 0.0
    for _ in range(1000):
        x += 0.001 * (lam - min(2 * x, 10.0))
    assert held / 3 == pytest.approx(x, rel=2e-3)


def test_a_measured_replica_reads_its_points():
    r = _measured()
    assert r.max_rate_rps == 10.0
    assert float(r.residence_s(1.0)) == pytest.approx(0.5)
    assert r.in_flight_at(4.0) == pytest.approx(2.0)
    assert float(r.kv_tokens(3.75)) == pytest.approx(150.0)
    assert r.warm(25.0) == pytest.approx(3 * r.in_flight_at(25.0 / 3))


@pytest.mark.parametrize(
    "points, match",
    [
        (((0.0,), (0.0,), (0.0,)), "length >= 2"),
        (((1.0, 2.0, 3.0), (0.0, 1.0, 2.0), (0.0, 1.0, 2.0)), "start at 0"),
        (((0.0, 2.0, 1.0), (0.0, 1.0, 2.0), (0.0, 1.0, 2.0)), "increase strictly"),
        (((0.0, 1.0, 2.0), (0.0, 1.0, 2.0), (0.0, 1.0)), "one length"),
    ],
)
def test_bad_measured_points(points, match):
    with pytest.raises(ValueError, match=match):
        MeasuredReplica(*points, batch=8)
