"""The HPA ``behavior`` a plan writes: scale up at once within the API's defaults, scale down
no faster than the log's steepest fall allows, after a window of max(5 min, T_start).

Layer: planner.
"""

from __future__ import annotations

import numpy as np

from replicaplan.autoscalers.hpa import Rules, ScalingPolicy
from replicaplan.core import _check
from replicaplan.core.sizing import ReplicaRate
from replicaplan.core.startup import Startup
from replicaplan.planner.reserve import step_reserve
from replicaplan.simulation.day import SCALE_DOWN_WINDOW_MIN


# ------------------------------------------------------------------ the autoscaler's behavior
def scale_down_window_min(startup: Startup) -> int:
    """Minutes of recommendations a scale-down respects: max(the book's window, T_start).

    A replica given back and wanted again within a start-up leaves that start-up uncovered,
    so a dip shorter than T_start should not release one."""
    return max(SCALE_DOWN_WINDOW_MIN, startup.minutes)


def behavior(rate, replica_rate: ReplicaRate, startup: Startup) -> tuple[Rules, Rules]:
    """The HPA's ``behavior`` from the start-up time and the log's ramps.

    Up, every 15 s sync: no window; at most max(4, k↑) pods or 100 % more, whichever is more,
    where k↑ = ⌈Δλ↑_max/(ρ*μ*)⌉ are the replicas the log's largest one-minute rise asks for, so
    the limit never holds back a rise the log has shown (4 and 100 % are the API's defaults).
    Down: the highest recommendation of the last ``scale_down_window_min`` minutes, and at
    most max(1, k↓) pods a minute, k↓ = ⌈Δλ↓_max/(ρ*μ*)⌉ for the largest one-minute fall.
    """
    rate = _check.rates("rate", rate)
    steps = np.diff(rate)
    k_up = step_reserve(float(np.max(steps, initial=0.0)), replica_rate)
    k_down = step_reserve(float(-np.min(steps, initial=0.0)), replica_rate)
    up = Rules((ScalingPolicy("Pods", max(4, k_up), 15), ScalingPolicy("Percent", 100, 15)))
    down = Rules(
        (ScalingPolicy("Pods", max(1, k_down), 60),),
        stabilization_s=60 * scale_down_window_min(startup),
    )
    return up, down
