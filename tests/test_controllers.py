"""The controllers that drive a simulated fleet (autoscalers.controllers)."""

import numpy as np

from replicaplan.autoscalers.controllers import ExactTraffic, Fixed, Metrics, Proportional
from replicaplan.core.sizing import ReplicaRate
from replicaplan.scenarios.synthetic import reference_traffic


def test_exact_traffic_scales_down_only_after_the_window():
    rate = np.r_[np.full(10, 40.0), np.full(10, 12.0)]
    ctrl = ExactTraffic(rate, ReplicaRate(8.0, 0.8), window=5)
    assert ctrl.initial == 7
    decisions = []
    for m in range(rate.size):
        decisions.append(
            ctrl.decide(Metrics(now=60.0 * m, ready=decisions[-1] if decisions else 7, starting=0))
        )
    assert decisions[:14] == [7] * 14  # the drop at minute 10 is held for five decisions
    assert decisions[14:] == [2] * 6


def test_calendar_looks_ahead_by_the_start_up():
    rate = reference_traffic()
    plain = ExactTraffic(rate, ReplicaRate(8.0, 0.8))
    ahead = ExactTraffic(rate, ReplicaRate(8.0, 0.8), calendar=True, lookahead=8)
    event = 21 * 60
    assert plain.wanted[event - 8] == 2 and ahead.wanted[event - 8] == 7


def test_proportional_counts_or_ignores_starters():
    m = Metrics(now=0, ready=2, starting=3, in_flight=250.0)
    assert Proportional(50.0).decide(m) == 5
    assert Proportional(50.0, count_starting=False).decide(m) == 8  # 3 on their way + 5 more
    assert Fixed(4).decide(m) == 4
