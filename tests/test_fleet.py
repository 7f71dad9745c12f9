"""The fleet: sizing rule, admission and resizing, the utilization proxy, and the controllers."""

import math

import numpy as np
import pytest

from replicaplan.autoscalers.controllers import ExactTraffic, Fixed, Metrics, Proportional
from replicaplan.serving.fluid import FluidReplica, gpu_utilization, replicas_needed
from replicaplan.simulation.fleet import Fleet
from replicaplan.traffic.synthetic import reference_traffic


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


def test_admission_and_resizing():
    fleet = Fleet(ready=2, startup=8)
    fleet.resize(5, now=10)  # three called at 10, ready at 18
    assert (fleet.ready, fleet.paid) == (2, 5)
    fleet.admit(17)
    assert fleet.ready == 2
    fleet.admit(18)
    assert (fleet.ready, fleet.starting) == (5, [])
    fleet.resize(7, now=20)
    fleet.resize(4, now=21)  # cancels the two starters first, then stops one ready replica
    assert (fleet.ready, fleet.paid) == (4, 4)
    instant = Fleet(ready=1, startup=0)
    instant.resize(3, now=5)  # a zero start-up is ready at once
    assert instant.ready == 3


def test_fluid_replica_capacity_is_the_running_example():
    assert FluidReplica().capacity_rps == pytest.approx(8.0, rel=0.01)


def test_exact_traffic_scales_down_only_after_the_window():
    rate = np.r_[np.full(10, 40.0), np.full(10, 12.0)]
    ctrl = ExactTraffic(rate, 8.0, 0.8, window=5)
    assert ctrl.initial == 7
    decisions = []
    for m in range(rate.size):
        decisions.append(
            ctrl.decide(Metrics(now=m, ready=decisions[-1] if decisions else 7, starting=0))
        )
    assert decisions[:14] == [7] * 14  # the drop at minute 10 is held for five decisions
    assert decisions[14:] == [2] * 6


def test_calendar_looks_ahead_by_the_start_up():
    rate = reference_traffic()
    plain = ExactTraffic(rate, 8.0, 0.8)
    ahead = ExactTraffic(rate, 8.0, 0.8, calendar=True, lookahead=8)
    event = 21 * 60
    assert plain.wanted[event - 8] == 2 and ahead.wanted[event - 8] == 7


def test_proportional_counts_or_ignores_starters():
    m = Metrics(now=0, ready=2, starting=3, in_flight=250.0)
    assert Proportional(50.0).decide(m) == 5
    assert Proportional(50.0, count_starting=False).decide(m) == 8  # 3 on their way + 5 more
    assert Fixed(4).decide(m) == 4


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: replicas_needed(-1, 8), "rate"),
        (lambda: replicas_needed(1, 0), "capacity"),
        (lambda: replicas_needed(1, 8, 1.5), "target"),
        (lambda: Fleet(ready=-1, startup=1), "ready"),
        (lambda: Fleet(ready=1, startup=-1), "startup"),
        (lambda: ExactTraffic([1.0], 8, 0.8, window=0), "window"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_stretched_busy_counter():
    # k requests read as busy as one does under the Poisson model
    assert gpu_utilization(4.0, busy_requests=4.0) == pytest.approx(gpu_utilization(1.0))
    with pytest.raises(ValueError, match="busy_requests"):
        gpu_utilization(1.0, busy_requests=0)
