"""The manifests' behavior from the start-up time and the log's steps (planner/behavior.py)."""

import math

import numpy as np
import pytest

from replicaplan.core.sizing import ReplicaRate
from replicaplan.core.startup import Startup
from replicaplan.planner import plan


@pytest.mark.parametrize("startup, window_s", [(3, 300), (12, 720)])
def test_behavior_from_the_start_up_and_the_logs_steps(startup, window_s):
    rate = np.r_[np.full(30, 2.0), np.full(30, 30.0), np.full(30, 2.0)]
    up, down = plan.behavior(rate, ReplicaRate(8.0, 0.8), Startup(startup))
    k = math.ceil(28 / 6.4)  # 5 replicas for the rise and for the fall
    assert [(p.kind, p.value, p.period_s) for p in up.policies] == [
        ("Pods", k, 15),
        ("Percent", 100, 15),
    ]
    assert up.stabilization_s == 0
    assert [(p.kind, p.value, p.period_s) for p in down.policies] == [("Pods", k, 60)]
    assert down.stabilization_s == window_s  # max(5 min, T_start)
    calm = np.full(30, 2.0)
    up, down = plan.behavior(calm, ReplicaRate(8.0, 0.8), Startup(3))
    assert up.policies[0].value == 4 and down.policies[0].value == 1  # the floors
