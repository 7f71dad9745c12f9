import math

import pytest
import sympy as sp

from replicaplan import autoscaler as hpa
from replicaplan import symbols as S
from replicaplan.autoscaler import (
    HorizontalAutoscaler,
    KnativeAutoscaler,
    Rules,
    ScalingPolicy,
    external_replica_count,
    limit_rate,
    replica_count,
    stabilize,
)

# ---------------------------------------------------------------- Kubernetes' published cases


def test_three_replicas_at_30_50_70_with_target_30():
    assert replica_count([30, 50, 70], 30) == 5


def test_same_with_the_first_replica_unready():
    assert replica_count([50, 70], 30, unready=1) == 4


def test_default_behaviour_doubles_ten_replicas_asking_for_fifty():
    # ten replicas whose metric asks for 50: 4 pods or 100 % per 15 s, Max → 20
    desired = replica_count([50.0] * 10, 10.0)
    assert desired == 50
    assert limit_rate(10, desired, [], now=0.0) == 20


def test_down_window_keeps_the_highest_recent_recommendation():
    history = [(-120.0, 4), (-60.0, 5)]
    assert stabilize(100, 3, history, now=0.0, down_window_s=180) == 5


def test_documented_algorithm_example():
    # "if the current metric value is 200m, and the desired value is 100m, the number of
    # replicas will be doubled"; "if the current value is instead 50m, halve"
    assert replica_count([200, 200], 100) == 4
    assert replica_count([50, 50, 50, 50], 100) == 2


# ---------------------------------------------------------------- tolerance and corrections


def test_tolerance_inclusive_at_both_ends():
    assert replica_count([11.0] * 4, 10.0) == 4  # ratio 1.1
    assert replica_count([9.0] * 4, 10.0) == 4  # ratio 0.9
    assert replica_count([11.01] * 4, 10.0) == 5
    assert replica_count([8.99] * 4, 10.0) == 4  # ⌈0.899·4⌉ = 4
    assert replica_count([8.0] * 10, 10.0) == 8


def test_tolerance_band_symbolic():
    lo, hi = hpa.tolerance_band()
    assert sp.simplify(lo - S.target * (1 - S.tolerance)) == 0
    assert sp.simplify(hi - S.target * (1 + S.tolerance)) == 0


def test_the_displayed_rule_is_the_one_that_runs():
    # Kubernetes documentation: 1 replica at 200m against 100m → 2; the source: 4 replicas at
    # 20 open requests each against 10 → 8; a ratio just above a whole number is not rounded up
    assert hpa.proportional_rule(1, 200.0, 100.0) == 2
    assert hpa.proportional_rule(4, 20.0, 10.0) == 8
    assert hpa.proportional_rule(3, 0.1 * 8, 0.8) == 3  # 3 · 0.8/0.8 with binary noise
    expr = hpa.proportional_rule_expression()
    assert expr.subs({S.N_r: 4, S.metric: 20, S.target: 10}) == 8


def test_missing_metrics_dampen_both_directions():
    # scale-up: missing counted at 0 → (90+90+0)/3 = 60 against 30 → 6, not ⌈3·2⌉ = 6 on two present
    assert replica_count([90, 90, None], 30) == 6
    # scale-down: missing counted at the target → (10+10+30)/3 = 16.7/30 → ⌈0.556·3⌉ = 2
    assert replica_count([10, 10, None], 30) == 2
    # a correction that reverses direction keeps the current count
    assert replica_count([40, None, None, None], 30) == 4


def test_unready_left_out_on_a_scale_down():
    assert replica_count([10, 10], 30, unready=2) == 1  # ⌈(1/3)·2⌉; unready only counted going up


def test_source_examples_of_the_elementary_level():
    # four replicas with 80 open requests, target 10 per replica → 8; 10.5 each → no move
    assert replica_count([20.0] * 4, 10.0) == 8
    assert replica_count([10.5] * 4, 10.0) == 4
    assert external_replica_count(4, 80.0, 10.0) == 8
    assert external_replica_count(4, 42.0, 10.0) == 4


def test_external_from_zero():
    assert external_replica_count(0, 25.0, 10.0) == 3
    assert external_replica_count(0, 0.0, 10.0) == 0


# ---------------------------------------------------------------- stabilization and rates


def test_up_window_waits_for_agreement():
    history = [(-30.0, 4), (-10.0, 9)]
    assert stabilize(4, 10, history, now=0.0, up_window_s=60) == 4  # min of 4, 9, 10
    assert stabilize(4, 10, history, now=0.0, up_window_s=20) == 9


def test_rate_limit_counts_recent_changes():
    # 10 → 20 happened 5 s ago; within the same 15 s period only 4 pods or 100 % of 10 more
    assert limit_rate(20, 100, [(-5.0, 10)], now=0.0) == 20
    assert limit_rate(20, 100, [(-20.0, 10)], now=0.0) == 40
    assert limit_rate(3, 100, [], now=0.0) == 7  # 4 pods beats 100 % of 3


def test_rate_limit_down_and_bounds():
    slow = Rules((ScalingPolicy("Pods", 1, 60),), "Max", 0)
    assert limit_rate(10, 2, [], now=0.0, down=slow) == 9
    assert limit_rate(10, 2, [(-30.0, -1)], now=0.0, down=slow) == 10
    half = Rules((ScalingPolicy("Percent", 50, 60),), "Max", 0)
    assert limit_rate(9, 1, [], now=0.0, down=half) == 4  # ⌊9 · 0.5⌋
    assert limit_rate(10, 0, [], now=0.0, min_replicas=2) == 2
    assert limit_rate(10, 50, [], now=0.0, max_replicas=12) == 12
    assert limit_rate(10, 50, [], now=0.0, up=Rules(select="Disabled")) == 10


def test_select_min_takes_the_stricter_policy():
    rules = Rules((ScalingPolicy("Pods", 4, 15), ScalingPolicy("Percent", 100, 15)), "Min", 0)
    assert limit_rate(10, 50, [], now=0.0, up=rules) == 14


def test_controller_composes_the_three_stages():
    a = HorizontalAutoscaler(target=10.0, replicas=10)
    assert a.step(0.0, [50.0] * 10) == 20  # rate-limited doubling
    assert a.step(15.0, [25.0] * 20) == 40
    assert a.step(30.0, [1.0] * 40) == 40  # down window holds
    t = 30.0
    while t < 330.0:
        t += 15.0
        n = a.step(t, [1.0] * a.replicas)
    assert n == 4  # after 300 s it scales down


def test_external_controller():
    a = HorizontalAutoscaler(target=10.0, metric="external", replicas=4)
    assert a.step(0.0, total=80.0) == 8


def test_kpa_panics_on_a_burst_and_does_not_scale_down_while_panicking():
    k = KnativeAutoscaler(target=10.0, replicas=2)
    for t in range(0, 60, 2):
        k.step(float(t), 20.0, ready=2)
    assert k.replicas == 2 and not k.panicking
    k.step(60.0, 200.0, ready=2)  # panic window avg jumps
    assert k.panicking and k.replicas >= 4
    peak = k.replicas
    k.step(62.0, 20.0, ready=peak)
    assert k.replicas == peak  # no scale-down in panic
    t = 62.0
    while k.panicking:
        t += 2
        k.step(t, 20.0, ready=k.replicas)
    assert t - 60.0 >= 60.0  # a whole stable window
    assert k.replicas < peak


def test_kpa_scale_down_rate():
    k = KnativeAutoscaler(target=10.0, replicas=10)
    assert k.step(0.0, 0.0, ready=10) == 5  # at most halve per tick


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: replica_count([1.0], 0), "target"),
        (lambda: replica_count([1.0], 1, tolerance=-0.1), "tolerance"),
        (lambda: replica_count([1.0, math.nan], 1), r"values\[1\]"),
        (lambda: replica_count([None], 1), "values"),
        (lambda: stabilize(1, 1, [], 0, down_window_s=-1), "down_window_s"),
        (lambda: stabilize(1, 1, [], 0, up_window_s=-1), "up_window_s"),
        (lambda: limit_rate(1, 2, [], 0, min_replicas=5, max_replicas=2), "min_replicas"),
        (lambda: ScalingPolicy("Percent", 0, 15), "value"),
        (lambda: ScalingPolicy("Percent", -10, 15), "value"),
        (lambda: ScalingPolicy("Nodes", 1, 15), "kind"),
        (lambda: Rules((), "Max"), "policies"),
        (lambda: Rules((ScalingPolicy("Pods", 1, 1),), "Avg"), "select"),
        (lambda: external_replica_count(1, 1, 0), "target_average"),
        (lambda: HorizontalAutoscaler(target=-1), "target"),
        (lambda: HorizontalAutoscaler(target=1, min_replicas=3, max_replicas=2), "min_replicas"),
        (lambda: KnativeAutoscaler(target=0), "target"),
        (lambda: KnativeAutoscaler(target=1, panic_window_s=120), "panic_window_s"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()
