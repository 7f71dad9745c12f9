"""``core.startup``: T_start checked once when it is given, in minutes, and read in seconds
without a conversion at the caller (the issue's walk of ``--startup`` found five)."""

import math

import pytest

from replicaplan.core.sizing import ReplicaRate
from replicaplan.core.startup import STARTUP, Startup
from replicaplan.planner import plan


def test_the_running_examples_start_up_is_the_sources_eight_minutes():
    assert STARTUP.minutes == 8 and STARTUP.seconds == 480.0


@pytest.mark.parametrize("bad", [-1, 1.5, math.nan, "8", None])
def test_a_start_up_that_is_not_a_whole_number_of_minutes_is_refused_by_name(bad):
    with pytest.raises(ValueError, match="startup_min must be an integer >= 0"):
        Startup(bad)


def test_zero_minutes_is_a_replica_ready_at_once():
    assert Startup(0).seconds == 0.0


def test_a_start_up_is_frozen_so_a_checked_one_stays_checked():
    with pytest.raises(AttributeError):
        STARTUP.minutes = -1  # type: ignore[misc]


def test_the_scale_down_window_is_the_longer_of_five_minutes_and_the_start_up():
    """max(5, T_start): a dip shorter than a start-up releases no replica (chapter 3)."""
    assert [plan.scale_down_window_min(Startup(m)) for m in (0, 5, 6, 15)] == [5, 5, 6, 15]
    up, down = plan.behavior([10.0, 12.0, 9.0], ReplicaRate(8.0, 0.8), Startup(12))
    assert down.stabilization_s == 720
