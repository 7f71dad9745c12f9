"""Replicas that are called, start and stop (simulation.fleet), and bad input."""

import pytest

from replicaplan.autoscalers.controllers import ExactTraffic
from replicaplan.core.sizing import ReplicaRate
from replicaplan.serving.fluid import replicas_needed
from replicaplan.simulation.fleet import Fleet


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


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: replicas_needed(-1, ReplicaRate(8)), "rate"),
        (lambda: Fleet(ready=-1, startup=1), "ready"),
        (lambda: Fleet(ready=1, startup=-1), "startup"),
        (lambda: ExactTraffic([1.0], ReplicaRate(8, 0.8), window=0), "window"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()
