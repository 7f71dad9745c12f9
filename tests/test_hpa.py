import math

import pytest
import sympy as sp

from replicaplan.autoscalers import hpa
from replicaplan.autoscalers.hpa import (
    HorizontalAutoscaler,
    MetricSpec,
    Pod,
    Rules,
    ScalingPolicy,
    Tolerances,
    combine_proposals,
    desired_replicas,
    external_replica_count,
    group_pods,
    limit_rate,
    limit_without_behavior,
    replica_count,
    stabilize,
    stabilize_without_behavior,
)
from replicaplan.core import symbols as S

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
    # ⌈(1/3)·2⌉: Pending replicas are counted only going up (calcPlainMetricReplicas)
    assert replica_count([10, 10], 30, unready=2) == 1


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


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: replica_count([1.0], 0), "target"),
        (lambda: replica_count([1.0], 1, tolerance=-0.1), "tolerance"),
        (lambda: replica_count([1.0], 1, tolerance=float("nan")), "tolerance"),
        (lambda: replica_count([1.0, math.nan], 1), "value"),
        (lambda: replica_count([None], 1), "no metrics"),
        (lambda: replica_count([1.0], 1, unready=-1), "unready"),
        (lambda: MetricSpec("Memory", "Value", 1), "kind"),
        (lambda: MetricSpec("Pods", "Utilization", 50), "target type"),
        (lambda: MetricSpec("Resource", "Utilization", 50.5), "integer percent"),
        (lambda: MetricSpec("External", "Value", 0), "target"),
        (lambda: Pod(phase="Lost"), "phase"),
        (lambda: Tolerances(scale_up=-0.1), "scale_up"),
        (lambda: ScalingPolicy("Pods", 1.5, 15), "Pods policy"),
        (lambda: ScalingPolicy("Pods", 1, 0), "period_s"),
        (lambda: HorizontalAutoscaler(target=1, replicas=-1), "replicas"),
        (lambda: HorizontalAutoscaler(target=1, metric="gauge"), "metric"),
        (lambda: desired_replicas(MetricSpec("Pods", "AverageValue", 1), 1), "pods"),
        (lambda: desired_replicas(MetricSpec("Object", "Value", 1), 1), "value"),
        (lambda: Rules(tolerance=-0.5, select="Disabled"), "tolerance"),
        (lambda: stabilize(1, 1, [], 0, down_window_s=-1), "down_window_s"),
        (lambda: stabilize(1, 1, [], 0, up_window_s=-1), "up_window_s"),
        (lambda: limit_rate(1, 2, [], 0, min_replicas=5, max_replicas=2), "min_replicas"),
        (lambda: ScalingPolicy("Percent", 0, 15), "value"),
        (lambda: ScalingPolicy("Percent", -10, 15), "value"),
        (lambda: ScalingPolicy("Nodes", 1, 15), "kind"),
        (lambda: Rules((), "Max"), "policies"),
        (lambda: Rules((ScalingPolicy("Pods", 1, 1),), "Avg"), "select"),
        (lambda: external_replica_count(1, 1, 0), "target"),
        (lambda: HorizontalAutoscaler(target=-1), "target"),
        (lambda: HorizontalAutoscaler(target=1, min_replicas=3, max_replicas=2), "min_replicas"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# ---------------------------------------------------------------- upstream replica calculator
# Cases from kubernetes/kubernetes pkg/controller/podautoscaler/replica_calculator_test.go.
# Levels there are milli-units (300 = 0.3 cores); requests 1.0 core unless said otherwise.


def _cpu(levels, *, requests=None, ready=None, phase=None, deleting=None, n=None):
    """Pods as that test file builds them: level i belongs to pod i; pods past the levels
    have no sample; an unready pod has never been ready (it is past its initialization)."""
    n = n or len(requests or levels)
    pods = []
    for i in range(n):
        pods.append(
            Pod(
                value=levels[i] / 1000 if i < len(levels) else None,
                request=(requests or [1.0] * n)[i],
                ready=True if ready is None else ready[i],
                ever_ready=True if ready is None else ready[i],
                phase="Running" if phase is None else phase[i],
                deleting=False if deleting is None else deleting[i],
            )
        )
    return pods


def _util(current, target, pods):
    return desired_replicas(MetricSpec("Resource", "Utilization", target), current, pods=pods)


@pytest.mark.parametrize(
    "name, current, target, pods, expected",
    [
        ("TestReplicaCalcScaleUp", 3, 30, _cpu([300, 500, 700]), 5),
        (
            "TestReplicaCalcScaleUpUnreadyLessScale",
            3,
            30,
            _cpu([300, 500, 700], ready=[False, True, True]),
            4,
        ),
        (
            "TestReplicaCalcScaleUpUnreadyNoScale",
            3,
            30,
            _cpu([400, 500, 700], ready=[True, False, False]),
            3,
        ),
        (
            "TestReplicaCalcScaleUpIgnoresFailedPods",
            2,
            30,
            _cpu(
                [500, 700],
                n=4,
                phase=["Running", "Running", "Failed", "Failed"],
                ready=[True, True, False, False],
            ),
            4,
        ),
        (
            "TestReplicaCalcScaleUpIgnoresDeletionPods",
            2,
            30,
            _cpu(
                [500, 700],
                n=4,
                deleting=[False, False, True, True],
                ready=[True, True, False, False],
            ),
            4,
        ),
        ("TestReplicaCalcScaleDown", 5, 50, _cpu([100, 300, 500, 250, 250]), 3),
        (
            "TestReplicaCalcScaleDownExcludeUnreadyPods",
            5,
            50,
            _cpu([100, 300, 500, 250, 250], ready=[True, True, True, False, False]),
            2,
        ),
        (
            "TestReplicaCalcScaleDownExcludeUnscheduledPods",
            5,
            50,
            _cpu([100], n=5, phase=["Running"] + ["Pending"] * 4, ready=[True] + [False] * 4),
            1,
        ),
        ("TestReplicaCalcMissingMetrics", 4, 100, _cpu([400, 95], n=4), 3),
        ("TestReplicaCalcMissingMetricsNoChangeEq", 2, 100, _cpu([1000], n=2), 2),
        ("TestReplicaCalcMissingMetricsNoChangeGt", 2, 100, _cpu([1900], n=2), 2),
        ("TestReplicaCalcMissingMetricsNoChangeLt", 2, 100, _cpu([600], n=2), 2),
        (
            "TestReplicaCalcMissingMetricsUnreadyChange",
            3,
            50,
            _cpu([100, 450], n=3, ready=[False, True, True]),
            3,
        ),
        (
            "TestReplicaCalcMissingMetricsUnreadyScaleUp",
            3,
            50,
            _cpu([100, 2000], n=3, ready=[False, True, True]),
            4,
        ),
        (
            "TestReplicaCalcMissingMetricsUnreadyScaleDown",
            4,
            50,
            _cpu([100, 100, 100], n=4, ready=[False, True, True, True]),
            3,
        ),
        (
            "TestReplicaCalcMissingMetricsScaleDownTargetOver100",
            4,
            300,
            _cpu([200, 100, 100], requests=[1.0, 1.0, 2.0, 2.0], ready=[False, True, True, True]),
            2,
        ),
        ("TestReplicaCalcDuringRollingUpdateWithMaxSurge", 2, 50, _cpu([100, 100], n=3), 2),
    ],
)
def test_upstream_resource_utilization_cases(name, current, target, pods, expected):
    assert _util(current, target, pods) == expected, name


def test_upstream_computed_tolerance_case():
    # TestReplicaCalcComputedToleranceAlgImplementation: 10 pods at 150 m, requests around
    # 300 m; a target of 56 % is just outside the tolerance (→ 9), 55 % just inside (→ 10)
    requests = [p / 1000 for p in (400, 200, 310, 290, 302, 298, 301, 299, 300, 300)]
    pods = _cpu([150] * 10, requests=requests)
    assert _util(10, 56, pods) == 9
    assert _util(10, 55, pods) == 10


@pytest.mark.parametrize(
    "name, spec, current, kwargs, expected",
    [
        (
            "TestReplicaCalcScaleUpCM",
            MetricSpec("Pods", "AverageValue", 15.0),
            3,
            dict(pods=_cpu([20000, 10000, 30000])),
            4,
        ),
        (
            "TestReplicaCalcScaleUpCMUnreadyHotCpuNoLessScale",
            MetricSpec("Pods", "AverageValue", 15.0),
            3,
            dict(pods=_cpu([50000, 10000, 30000], ready=[True, True, False])),
            6,
        ),
        (
            "TestReplicaCalcScaleDownCM",
            MetricSpec("Pods", "AverageValue", 20.0),
            5,
            dict(pods=_cpu([12000] * 5)),
            3,
        ),
        (
            "TestPlainMetricReplicaCalcMissingMetricsNoChangeEq",
            MetricSpec("Pods", "AverageValue", 20.0),
            5,
            dict(pods=_cpu([20000, 19000, 21000], n=5)),
            5,
        ),
        (
            "TestReplicaCalcDuringRollingUpdateWithMaxSurgeCM",
            MetricSpec("Pods", "AverageValue", 17.0),
            2,
            dict(pods=_cpu([10000, 10000], n=3)),
            2,
        ),
        (
            "TestReplicaCalcScaleUpCMObject",
            MetricSpec("Object", "Value", 15.0),
            3,
            dict(value=20.0),
            4,
        ),
        (
            "TestReplicaCalcScaleUpCMPerPodObject",
            MetricSpec("Object", "AverageValue", 5.0),
            3,
            dict(value=20.0),
            4,
        ),
        (
            "TestReplicaCalcScaleUpCMObjectIgnoresUnreadyPods",
            MetricSpec("Object", "Value", 10.0),
            3,
            dict(value=50.0, pods=_cpu([0, 0, 0], ready=[False, True, False])),
            5,
        ),
        (
            "TestReplicaCalcScaleUpCMExternal",
            MetricSpec("External", "Value", 4.4),
            1,
            dict(value=8.6),
            2,
        ),
        (
            "TestReplicaCalcScaleUpCMExternalIgnoresUnreadyPods",
            MetricSpec("External", "Value", 4.4),
            3,
            dict(value=8.6, pods=_cpu([0, 0, 0], ready=[False, True, False])),
            2,
        ),
        (
            "TestReplicaCalcScaleUpPerPodCMExternal",
            MetricSpec("External", "AverageValue", 2.15),
            3,
            dict(value=8.6),
            4,
        ),
        (
            "TestReplicaCalcScaleDownPerPodCMObject",
            MetricSpec("Object", "AverageValue", 2.0),
            5,
            dict(value=6.0),
            3,
        ),
        (
            "TestReplicaCalcScaleDownCMObject",
            MetricSpec("Object", "Value", 20.0),
            5,
            dict(value=12.0),
            3,
        ),
        (
            "TestReplicaCalcScaleDownCMExternal",
            MetricSpec("External", "Value", 14.334),
            5,
            dict(value=8.6),
            3,
        ),
        (
            "TestReplicaCalcScaleDownPerPodCMExternal",
            MetricSpec("External", "AverageValue", 2.867),
            5,
            dict(value=8.6),
            3,
        ),
    ],
)
def test_upstream_custom_object_and_external_cases(name, spec, current, kwargs, expected):
    assert desired_replicas(spec, current, **kwargs) == expected, name


def test_group_pods_follows_upstream():
    # TestGroupPods: failed and deleted pods are ignored, Pending ones unready, pods without a
    # sample missing; CPU alone looks at readiness and at how fresh the sample is
    pods = [
        Pod(value=1.0, phase="Failed"),
        Pod(value=1.0, deleting=True),
        Pod(phase="Pending"),
        Pod(value=None),
        Pod(value=1.0, initializing=True, ready=True, fresh_sample=False),
        Pod(value=1.0, initializing=True, ready=True, fresh_sample=True),
        Pod(value=1.0, initializing=False, ready=False, ever_ready=True),
        Pod(value=1.0, initializing=False, ready=False, ever_ready=False),
    ]
    ready, unready, missing, ignored = group_pods(pods, cpu=True)
    assert (ready, unready, missing, ignored) == (2, {2, 4, 7}, {3}, {0, 1})
    ready, unready, missing, ignored = group_pods(pods, cpu=False)
    assert (ready, unready, missing, ignored) == (4, {2}, {3}, {0, 1})


def test_separate_tolerances():
    # the behavior's per-direction tolerances (KEP-4951): a 5 % rise moves nothing with the
    # default 10 %, but scales with a 2 % scale-up tolerance; falls still need 10 %
    spec = MetricSpec("Pods", "AverageValue", 100.0)
    pods = [Pod(value=105.0)] * 10
    assert desired_replicas(spec, 10, pods=pods) == 10
    assert desired_replicas(spec, 10, pods=pods, tolerances=Tolerances(0.1, 0.02)) == 11
    low = [Pod(value=95.0)] * 10
    assert desired_replicas(spec, 10, pods=low, tolerances=Tolerances(0.1, 0.02)) == 10


# ---------------------------------------------------------------- upstream horizontal.go


def test_zero_replicas_disable_autoscaling():
    # TestZeroReplicas: spec.replicas 0 with minReplicas 3 → no scaling at all
    a = HorizontalAutoscaler(target=10.0, replicas=0, min_replicas=3, max_replicas=5)
    assert a.apply(0.0, 5) == 0 and a.events == []


def test_out_of_range_counts_are_brought_back_first():
    # TestTooFewReplicas and TestTooManyReplicas: min 3, max 5
    assert (
        HorizontalAutoscaler(target=1.0, replicas=2, min_replicas=3, max_replicas=5).apply(0.0, 1)
        == 3
    )
    assert (
        HorizontalAutoscaler(target=1.0, replicas=10, min_replicas=3, max_replicas=5).apply(0.0, 20)
        == 5
    )


def test_without_behavior_the_scale_up_is_capped_at_twice_or_four():
    # TestConvertDesiredReplicasWithRules: from 3 asking for 1,000 (max 2,000) → max(6, 4) = 6;
    # when maxReplicas is below that cap, maxReplicas
    assert limit_without_behavior(3, 1000, 1, 2000) == 6
    assert limit_without_behavior(1, 1000, 1, 2000) == 4
    assert limit_without_behavior(8, 1000, 1, 10) == 10
    a = HorizontalAutoscaler(target=10.0, replicas=3, behavior=False)
    assert a.step(0.0, [1000.0] * 3) == 6
    assert a.step(15.0, [1000.0] * 6) == 12  # no history: every decision may double


def test_without_behavior_the_downscale_window_holds_the_highest():
    # TestNormalizeDesiredReplicas: recent recommendations 4 and 5, a new 3 → 5; recent 1 and 2
    # → 3; recommendations older than the window do not count
    assert stabilize(5, 3, [(-120.0, 4), (-60.0, 5)], now=0.0) == 5
    assert stabilize(5, 3, [(-120.0, 1), (-60.0, 2)], now=0.0) == 3
    assert stabilize(10, 3, [(-600.0, 10), (-540.0, 9)], now=0.0) == 3


def test_without_behavior_the_window_maximum_is_not_bounded_by_the_current_count():
    # stabilizeRecommendation takes the largest recommendation of the window, and only then
    # does convertDesiredReplicasWithRules cap the scale-up at max(2 · current, 4): current 4,
    # desired 5, a recommendation of 8 a minute ago → 8 (not 5)
    assert stabilize_without_behavior(5, [(-60.0, 8)], now=0.0) == 8
    assert stabilize_without_behavior(5, [(-301.0, 8)], now=0.0) == 5  # older than 300 s
    assert stabilize_without_behavior(5, [(-300.0, 8)], now=0.0) == 8  # kept unless Before
    a = HorizontalAutoscaler(target=10.0, replicas=4, behavior=False)
    a.history = [(-60.0, 8)]
    assert a.step(0.0, [12.5] * 4) == 8  # the metric alone asks for ⌈4 · 12.5/10⌉ = 5


# TestReplicaCalcConfigurableTolerance: three pods requesting 0.9, 1.0 and 1.1 cores, a 100 %
# target, tolerances (scale-down, scale-up) of any size, 2.0 included
@pytest.mark.parametrize(
    "case, tolerances, levels, expected",
    [
        ("Outside of a 0% tolerance", (0.0, 0.0), (909, 1010, 1111), 4),
        ("Within a 200% scale-up tolerance", (0.1, 2.0), (1890, 1910, 1900), 3),
        ("Outside 8% scale-up tolerance", (2.0, 0.08), (1100, 1080, 1090), 4),
        ("Within a 36% scale-down tolerance", (0.36, 0.1), (660, 640, 650), 3),
        ("Outside a 34% scale-down tolerance", (0.34, 0.1), (660, 640, 650), 2),
    ],
)
def test_upstream_configurable_tolerances(case, tolerances, levels, expected):
    pods = _cpu(list(levels), requests=[0.9, 1.0, 1.1])
    spec = MetricSpec("Resource", "Utilization", 100)
    got = desired_replicas(spec, 3, pods=pods, tolerances=Tolerances(*tolerances))
    assert got == expected, case


def test_a_new_autoscaler_does_not_scale_down_before_a_window():
    # recordInitialRecommendation: the current count is the first recommendation
    a = HorizontalAutoscaler(target=10.0, replicas=8)
    assert a.step(0.0, [1.0] * 8) == 8
    assert a.step(301.0, [1.0] * 8) == 1


def test_an_invalid_metric_blocks_a_scale_down_only():
    # TestScaleUpOneMetricInvalid: the valid metric's scale-up goes through; a scale-down does
    # not while another metric cannot be read; all invalid: no decision
    assert combine_proposals([4, None], current=3) == 4
    assert combine_proposals([2, None], current=3) == 3
    assert combine_proposals([None, None], current=3) is None
    assert combine_proposals([2, 5], current=3) == 5


def test_the_uniform_fast_path_is_the_replica_calculator():
    """The closed loop's integer path (every ready pod with the same sample, Pending pods
    unready) gives the count the general replica calculator gives with Pod objects, over a
    grid of samples, targets, ready and Pending counts and per-direction tolerances."""
    from replicaplan.autoscalers.hpa import (
        MetricSpec,
        Pod,
        Tolerances,
        _milli,
        _pod_metric_replicas,
        uniform_pod_metric_replicas,
    )

    cases = 0
    for target in (1.0, 7.5, 35.2, 51.2):
        spec = MetricSpec("Pods", "AverageValue", target)
        for sample in (0.0, 0.3, 6.9, 7.4, 7.6, 12.0, 35.0, 36.0, 80.5, 400.0):
            for ready in (1, 2, 5, 13):
                for unready in (0, 1, 4):
                    for tol in (Tolerances(0.1, 0.1), Tolerances(0.0, 0.3), Tolerances(0.25, 0.0)):
                        current = ready + unready
                        pods = [Pod(value=sample)] * ready + [Pod(phase="Pending")] * unready
                        general = _pod_metric_replicas(spec, current, pods, tol)
                        fast = uniform_pod_metric_replicas(
                            _milli(target), current, _milli(sample), ready, unready, tol
                        )
                        assert fast == general, (target, sample, ready, unready, tol)
                        cases += 1
    assert cases == 4 * 10 * 4 * 3 * 3


def test_the_adapter_keeps_the_tolerances_per_direction():
    """HPAOn drives the model's own step: a behavior with a scale-up tolerance of 0.5 holds a
    fleet whose load is 40 % over target, which the default 0.1 would grow."""
    from replicaplan.autoscalers.controllers import HPAOn, Metrics
    from replicaplan.autoscalers.hpa import Rules

    lax = Rules(Rules.default_up().policies, "Max", 0.0, tolerance=0.5)
    over = Metrics(now=15.0, ready=4, starting=0, concurrency=14.0)
    assert HPAOn({"concurrency": 10.0}).decide(over) == 6  # ⌈4 × 1.4⌉
    assert HPAOn({"concurrency": 10.0}, up=lax).decide(over) == 4  # within 1 + 0.5


# ------------------------------------------------------------------ what the mutation run found
# Each test below pins a behaviour of replica_calculator.go or horizontal.go that a mutant of
# hpa.py changed without any test noticing (../shared/reviews/mutation.md); the expected values
# are worked by hand from the upstream rules, not read off this module.


def test_the_lower_tolerance_bound_is_inclusive_where_it_matters():
    """10 pods at 0.9 of the target: ⌈9⌉ = 9 outside the band, 10 inside it. At 4 pods the two
    readings agree (⌈3.6⌉ = 4), so the old case could not tell them apart."""
    assert replica_count([9.0] * 10, 10.0) == 10  # ratio 0.9: inside, no change
    assert replica_count([8.99] * 10, 10.0) == 9  # ratio 0.899: ⌈8.99⌉ = 9


def test_a_pod_built_with_no_arguments_is_a_ready_running_pod_with_a_unit_request():
    pod = Pod()
    assert (pod.value, pod.request, pod.phase) == (None, 1.0, "Running")
    assert pod.ready and pod.ever_ready and not pod.initializing and not pod.deleting
    # a Utilization target reads samples against that unit request: 0.5 cores of 1 at 50 %
    spec = MetricSpec("Resource", "Utilization", 50)
    assert desired_replicas(spec, 2, pods=[Pod(value=0.5), Pod(value=0.5)]) == 2
    assert desired_replicas(spec, 2, pods=[Pod(value=1.0), Pod(value=1.0)]) == 4


@pytest.mark.parametrize(
    "current, usage, expected",
    [
        (0, 30.0, 3),  # current 0: ⌈30/10⌉, the usage ratio alone
        (1, 10.5, 1),  # ratio 1.05 at one replica: inside the tolerance, kept
        (1, 30.0, 3),  # ratio 3 at one replica: ⌈1 · 3⌉
        (4, 10.5, 4),  # ratio 1.05: inside, kept (a Value target is the total's, not a pod's)
        (4, 30.0, 12),  # ratio 3: ⌈4 · 3⌉
        (4, 42.0, 17),  # ratio 4.2: ⌈4 · 4.2⌉
    ],
)
def test_a_value_target_follows_upstreams_usage_ratio(current, usage, expected):
    """GetObjectMetricReplicas / GetExternalMetricReplicas with a Value target: the ratio is
    usage/target; current 0 asks ⌈ratio⌉, a ratio within the tolerance keeps current, else
    ⌈ready · ratio⌉ (TestReplicaCalcToleranceCM's shape: inside the band, no change)."""
    for kind in ("Object", "External"):
        spec = MetricSpec(kind, "Value", 10.0)
        assert desired_replicas(spec, current, value=usage) == expected, kind


def test_every_metric_failing_leaves_the_count_as_it_is():
    auto = HorizontalAutoscaler(target=10.0, replicas=5)
    assert auto.apply(0.0, None) == 5
    assert auto.decide(15.0, [None, None]) == 5
    assert auto.replicas == 5


def test_zero_replicas_disable_autoscaling_with_the_default_minimum():
    """horizontal.go: spec.replicas = 0 with minReplicas ≠ 0 means autoscaling is off."""
    auto = HorizontalAutoscaler(target=10.0, replicas=0)
    assert auto.min_replicas == 1
    assert auto.apply(0.0, 40) == 0
    # with minReplicas = 0 (scale to zero, an alpha feature) it scales from zero
    zero = HorizontalAutoscaler(target=10.0, replicas=0, min_replicas=0)
    assert zero.apply(0.0, 3) == 3


def test_a_fixed_size_hpa_is_valid_and_holds_its_size():
    auto = HorizontalAutoscaler(target=10.0, replicas=3, min_replicas=3, max_replicas=3)
    assert auto.apply(0.0, 10) == 3 and auto.apply(400.0, 1) == 3
    with pytest.raises(ValueError, match="min_replicas must be <= max_replicas"):
        HorizontalAutoscaler(target=10.0, min_replicas=4, max_replicas=3)


def test_changes_are_recorded_and_limit_the_next_period():
    """A policy of 2 pods per 60 s, synced every 15 s: from 2 replicas asked for 20, the fleet
    climbs 2 pods a minute (4, then 6 at 60 s), as the events recorded by each change allow.
    Without the events (or with wrong ones) it would climb 2 pods every sync."""
    up = Rules((ScalingPolicy("Pods", 2, 60),), "Max", 0.0)
    auto = HorizontalAutoscaler(target=10.0, replicas=2, up=up)
    seen = [auto.apply(t, 20) for t in (0.0, 15.0, 30.0, 45.0, 60.0, 75.0, 120.0)]
    assert seen == [4, 4, 4, 4, 6, 6, 8]
    assert auto.events[-1] == (120.0, 2)
    assert all(d == 2 for _, d in auto.events)
    # a scale-down's events are counted for the down policy only: one pod a minute
    down = Rules((ScalingPolicy("Pods", 1, 60),), "Max", 0.0)
    auto = HorizontalAutoscaler(target=10.0, replicas=8, up=up, down=down)
    assert [auto.apply(t, 2) for t in (0.0, 15.0, 60.0)] == [7, 7, 6]
    assert auto.events == [(60.0, -1)]  # the first change left the 60-s period at 60 s


def test_the_tolerances_follow_a_change_of_rules():
    auto = HorizontalAutoscaler(target=10.0, replicas=4)
    assert auto.tolerances == Tolerances(0.1, 0.1)
    auto.tolerance = 0.3
    assert auto.tolerances == Tolerances(0.3, 0.3)
    auto.down = Rules((ScalingPolicy("Percent", 100, 15),), "Max", 300.0, tolerance=0.05)
    assert auto.tolerances == Tolerances(0.05, 0.3)
    auto.behavior = False  # the plain path has no per-direction tolerances
    assert auto.tolerances == Tolerances(0.3, 0.3)


def test_an_external_proposal_uses_the_autoscalers_tolerances():
    auto = HorizontalAutoscaler(target=10.0, replicas=4, tolerance=0.2)
    spec = MetricSpec("External", "AverageValue", 10.0)
    assert auto.propose(spec, value=46.0) == 4  # 46/40 = 1.15: inside 0.2
    assert auto.propose(spec, value=50.0) == 5  # 1.25: outside, ⌈50/10⌉


def test_the_uniform_path_refuses_no_ready_pod():
    with pytest.raises(ValueError, match="no metrics"):
        hpa.uniform_pod_metric_replicas(10_000, 3, 5_000, 0, 3, Tolerances())


def test_the_api_default_rules_are_the_documented_ones():
    """autoscaling/v2 defaults (HPAScalingRules' field documentation): scale-up 4 pods or 100 %
    per 15 s, the larger, no window; scale-down 100 % per 15 s after 300 s."""
    up, down = Rules.default_up(), Rules.default_down()
    assert up.policies == (ScalingPolicy("Pods", 4, 15), ScalingPolicy("Percent", 100, 15))
    assert (up.select, up.stabilization_s) == ("Max", 0.0)
    assert down.policies == (ScalingPolicy("Percent", 100, 15),)
    assert (down.select, down.stabilization_s) == ("Max", 300.0)


def test_stabilization_windows_end_exactly_at_their_length():
    """upstream keeps a recommendation in the scale-down window while its timestamp is After
    now − window: one exactly 300 s old is out, one 299 s old is in."""
    history = [(0.0, 9)]  # 9 replicas recommended at 0 s; 3 wanted now, 9 running
    assert stabilize(9, 3, history, 300.0) == 3
    assert stabilize(9, 3, history, 299.0) == 9
    assert stabilize(0, 0, [], 0.0) == 0  # a target at zero is a valid count
    assert stabilize_without_behavior(0, [], 0.0) == 0


def test_limit_rate_scales_down_to_the_default_minimum_of_one():
    assert limit_rate(3, 0, [], 0.0) == 1
    assert limit_rate(0, 0, [], 0.0) == 0


def test_the_average_of_a_pods_metric_is_floored_to_whole_milli_units():
    """replica_calculator.go averages the pods' samples in milli-units with integer division:
    1,000 m, 1,000 m and 1,001 m average 1,000 m, exactly the target, so with no tolerance the
    count holds; the exact mean, 1,000.33 m, would ask for ⌈3 · 1.00033⌉ = 4."""
    spec = MetricSpec("Pods", "AverageValue", 1.0)
    pods = [Pod(value=1.0), Pod(value=1.0), Pod(value=1.001)]
    assert desired_replicas(spec, 3, pods=pods, tolerances=Tolerances(0.0, 0.0)) == 3


def test_pending_pods_count_only_on_a_scale_up():
    """At a usage ratio of exactly 1, Pending pods are not counted as idle (upstream: only when
    the ratio exceeds 1): two pods at the target with two Pending keep four."""
    spec = MetricSpec("Pods", "AverageValue", 10.0)
    pods = [Pod(value=10.0), Pod(value=10.0), Pod(phase="Pending"), Pod(phase="Pending")]
    assert desired_replicas(spec, 4, pods=pods) == 4


def test_a_count_above_the_maximum_is_brought_down_and_one_at_it_decides():
    """At maxReplicas the controller decides as usual (a scale-down is allowed); only above it
    is the count clamped."""
    down = Rules((ScalingPolicy("Percent", 100, 15),), "Max", 0.0)
    auto = HorizontalAutoscaler(target=10.0, replicas=5, max_replicas=5, down=down)
    assert auto.apply(0.0, 2) == 2
    over = HorizontalAutoscaler(target=10.0, replicas=7, max_replicas=5, down=down)
    assert over.apply(0.0, 7) == 5


def test_the_rules_and_pods_cannot_be_changed():
    import dataclasses

    for obj, field in (
        (Pod(), "value"),
        (ScalingPolicy("Pods", 1, 15), "value"),
        (Rules.default_up(), "select"),
        (Tolerances(), "scale_up"),
        (MetricSpec("Pods", "AverageValue", 1.0), "target"),
    ):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(obj, field, None)
    assert ScalingPolicy("Pods", 1, 15).value == 1  # one pod a period is a policy


def test_the_default_up_window_is_none_and_the_plain_path_keeps_exactly_300_s():
    # behavior's default scale-up window is 0 s: a rise acts at once, whatever came 0.5 s before
    assert stabilize(2, 5, [(9.5, 2)], 10.0) == 5
    # without behavior, a recommendation 300 s old still counts, one 300.5 s old does not
    assert stabilize_without_behavior(2, [(0.0, 9)], 300.0) == 9
    assert stabilize_without_behavior(2, [(0.0, 9)], 300.5) == 2
    auto = HorizontalAutoscaler(target=10.0, replicas=9, behavior=False)
    auto.history.append((0.0, 9))
    assert auto.apply(300.5, 2) == 2


def test_a_step_without_pending_pods_reads_the_pods_it_is_given():
    """Two pods at 15 against 10: ⌈2 · 1.5⌉ = 3, from a controller that starts at two."""
    auto = HorizontalAutoscaler(target=10.0, replicas=2)
    assert auto.step(0.0, [15.0, 15.0]) == 3
    assert HorizontalAutoscaler(target=10.0).replicas == 1  # a Deployment's default replicas


@pytest.mark.parametrize(
    "call",
    [
        lambda: desired_replicas(MetricSpec("External", "Value", 1.0), -1, value=1.0),
        lambda: stabilize(-1, 2, [], 0.0),
        lambda: stabilize(2, -1, [], 0.0),
        lambda: stabilize_without_behavior(-1, [], 0.0),
        lambda: limit_rate(2, -1, [], 0.0),
        lambda: limit_rate(-1, 2, [], 0.0),
        lambda: HorizontalAutoscaler(target=1.0, max_replicas=0),
    ],
)
def test_negative_counts_are_refused(call):
    with pytest.raises(ValueError):
        call()


# ---------------------------------------------------------------- cases the mutation run found
# Each case is worked by hand from replica_calculator.go and horizontal.go (integer milli-units,
# int64 arithmetic), at the edge where a changed comparison or constant would move the answer.


def test_a_fallback_that_flips_a_scale_down_into_a_scale_up_keeps_the_count():
    """Target 40 %: one pod at 20 % and two without samples. The ratio 20/40 < 1 is a scale-down,
    so the missing pods count at max(100, 40) = 100 % of their request: (200 + 1000 + 1000) m
    over 3000 m = 73 %, 73/40 > 1. A correction that reverses the direction keeps 3."""
    assert _util(3, 40, _cpu([200], n=3)) == 3


def test_a_ratio_of_exactly_one_with_missing_pods_fills_nothing():
    """Target 40 %: a pod at exactly 40 % and one without a sample. The ratio is 1.0, neither a
    scale-down (< 1) nor a scale-up (> 1), so nothing is filled in and the count stays 2 (filling
    the missing pod at 100 % would read 70 %, 1.75, and ask for 4). For a Pods metric at its target
    with one of four missing, filling it with 0 would read 0.75 and ask for 3: it stays 4."""
    assert _util(2, 40, _cpu([400], n=2)) == 2
    assert replica_count([10, 10, 10, None], 10) == 4


def test_a_scale_up_between_one_and_two_counts_missing_pods_at_zero():
    """Nine pods at 12 against 10 and one without a sample: ratio 1.2 > 1, the missing pod counts
    as 0, the average is 108,000 m / 10 = 10.8, ratio 1.08, inside the tolerance: 10 stays 10
    (without the zero it would ask for ⌈9 · 1.2⌉ = 11)."""
    assert replica_count([12.0] * 9 + [None], 10) == 10


@pytest.mark.parametrize(
    "values, expected",
    [
        # 14,668 + 14,667 + 14,668 = 44,003 m; with the missing pod at 0: 44,003 // 4 = 11,000,
        # ratio 1.1, inside the (inclusive) tolerance: 4 stays (at 1 m it would be 11,001 → 5)
        ([14.668, 14.667, 14.668], 4),
        # 44,004 // 4 = 11,001: ratio 1.1001, outside: ⌈4 · 1.1001⌉ = 5 (at −1 m: 11,000 → 4)
        ([14.668, 14.668, 14.668], 5),
    ],
)
def test_missing_pods_count_at_exactly_zero_milli_units(values, expected):
    assert replica_count([*values, None], 10) == expected


@pytest.mark.parametrize(
    "target, present, missing, expected",
    [
        # target 100 %: 1 pod at 50 %, 99 missing at 100 % of 1000 m: 99,500 m / 100,000 m = 99 %,
        # ⌈100 · 0.99⌉ = 99 (at 101 %: 100,490 → 100 %, no change; at 1000·100//101 = 990: 98 %)
        (100, [500], 99, 99),
        # target 50 %: 98 pods at 404 m and one at 413 m (40,005 m) and 1 missing at 100 %:
        # 41,005 / 100,000 = 41 %, 0.82, ⌈100 · 0.82⌉ = 82 (at 99 %: 40,995 → 40 %, 80)
        (50, [404] * 98 + [413], 1, 82),
    ],
)
def test_missing_pods_on_a_scale_down_count_at_max_100_and_the_target(
    target, present, missing, expected
):
    spec = MetricSpec("Resource", "Utilization", target)
    pods = _cpu(present, n=len(present) + missing)
    tol = Tolerances(0.0, 0.0)
    assert desired_replicas(spec, len(pods), pods=pods, tolerances=tol) == expected


def test_the_fallback_of_a_missing_pod_is_whole_milli_units():
    """Requests of 301 m, target 150 %: a missing pod counts 301 · 150 / 100 = 451 m in int64
    (451.5 truncated). Two pods at 8 m and three missing: (16 + 3 · 451) · 100 / 1505 = 90 %,
    90/150 = 0.6, ⌈5 · 0.6⌉ = 3 (with 451.5 m it would read 91 % and ask for 4)."""
    assert _util(5, 150, _cpu([8, 8], requests=[0.301] * 5)) == 3


def test_a_request_of_one_milli_cpu_is_a_request():
    assert _util(1, 50, _cpu([1], requests=[0.001])) == 2  # 100 % of 50 %


def test_a_cpu_sample_is_fresh_unless_said_otherwise():
    """A pod inside its CPU initialization period that is ready counts as ready when its sample
    is fresh, which a Pod built without ``fresh_sample`` is."""
    ready, unready, missing, ignored = group_pods([Pod(value=1.0, initializing=True)], cpu=True)
    assert (ready, unready, missing, ignored) == (1, set(), set(), set())


def test_pending_pods_on_the_fast_path_scale_up_as_on_the_general_one():
    """Four ready pods at 20 against 10 and one Pending: ratio 2, the Pending one counts as 0,
    80/5 = 16, ratio 1.6, ⌈5 · 1.6⌉ = 8. With a current count of 10 (pods not listed), a
    proposal below it on a scale-up keeps 10."""
    tol = Tolerances()
    assert replica_count([20.0] * 4, 10.0, unready=1) == 8
    assert hpa.uniform_pod_metric_replicas(10_000, 5, 20_000, 4, 1, tol) == 8
    assert hpa.uniform_pod_metric_replicas(10_000, 10, 20_000, 4, 1, tol) == 10


def test_all_metrics_valid_scale_down_to_the_largest_proposal():
    assert combine_proposals([3, 2], 5) == 3
    assert combine_proposals([3, None], 5) == 5  # a failed metric blocks the scale-down


def test_changes_count_from_after_the_periods_start():
    """getReplicasChangePerPeriod counts events strictly after now − period. Up by at most one
    pod per 15 s from 5: a +1 at exactly now − 15 no longer counts (start 5, limit 6); a +1
    inside the period does (start 4, limit 5). Down by one pod per 60 s: a −1 inside the period
    means the period started at 6, so 5 is already the limit."""
    up = Rules((ScalingPolicy("Pods", 1, 15),))
    assert limit_rate(5, 10, [(0.0, 1)], 15.0, up=up) == 6
    assert limit_rate(5, 10, [(5.0, 1)], 15.0, up=up) == 5
    down = Rules((ScalingPolicy("Pods", 1, 60),), stabilization_s=0.0)
    assert limit_rate(5, 1, [(10.0, -1)], 20.0, down=down) == 5
    assert limit_rate(5, 1, [], 20.0, down=down) == 4


def test_percent_policies_on_a_thousand_replicas():
    """20 % per period from 1,000: up to ⌈1000 · 1.2⌉ = 1,200, down to ⌊1000 · 0.8⌋ = 800."""
    up = Rules((ScalingPolicy("Percent", 20, 15),))
    down = Rules((ScalingPolicy("Percent", 20, 60),))
    assert limit_rate(1000, 5000, [], 0.0, up=up) == 1200
    assert limit_rate(1000, 1, [], 0.0, down=down) == 800


def test_a_pods_policy_of_one_and_bounds_at_their_least():
    assert ScalingPolicy("Pods", 1, 15).value == 1
    assert limit_rate(0, 0, [], 0.0, min_replicas=0, max_replicas=1) == 0
    for kwargs, name in (
        ({"min_replicas": -1}, "^min_replicas must be an integer"),
        ({"max_replicas": 0}, "^max_replicas must be an integer"),
    ):
        with pytest.raises(ValueError, match=name):
            limit_rate(1, 1, [], 0.0, **kwargs)


def test_rules_without_a_window_stabilize_nothing():
    """The API's scale-up window defaults to 0 s: a recommendation half a second old is out."""
    window = Rules((ScalingPolicy("Pods", 4, 15),)).stabilization_s
    assert stabilize(1, 5, [(9.5, 1)], 10.0, up_window_s=window) == 5


def test_the_controller_syncs_every_15_s_and_caps_at_ten_thousand_by_default():
    """kube-controller-manager's --horizontal-pod-autoscaler-sync-period defaults to 15 s; the
    package's autoscaler, given no maximum, stops at 10,000 replicas (limit_rate too)."""
    a = HorizontalAutoscaler(target=1.0)
    assert a.sync_s == 15.0 and a.max_replicas == 10_000
    assert limit_rate(9_000, 20_000, [], 0.0) == 10_000


def test_the_tolerance_cache_is_not_part_of_an_autoscaler():
    """Two autoscalers with the same rules are equal whether or not one has read its
    tolerances; the cache is neither a constructor argument nor shown."""
    a, b = HorizontalAutoscaler(target=1.0), HorizontalAutoscaler(target=1.0)
    assert a.tolerances == Tolerances()
    assert a == b and "_tolerances" not in repr(a)
    with pytest.raises(TypeError):
        HorizontalAutoscaler(target=1.0, _tolerances=None)


def test_samples_are_served_as_the_adapter_and_keda_quantise_them():
    """prometheus-adapter truncates a sample to whole milli-units (int64(value*1000.0)): four pods
    at 11.0009 read 11,000 m each against 10, ratio 1.1, inside the tolerance, so 4 stay. KEDA
    prints the value with %.3f: a total of 44.0036 is 44,004 m, 1.1001 of 4 · 10, so 5; and
    0.0025 against a 1 m target reads 3 m (Python's round(2.5) would give 2)."""
    # Go's float64 product, as Python's: 1.001 · 1000 = 1000.9999999999999, so 1,000 m
    assert hpa.adapter_milli(11.0009) == 11_000 and hpa.adapter_milli(1.001) == 1_000
    assert hpa.keda_milli(0.0025) == 3 and hpa.keda_milli(-1.0) == 0
    assert hpa.keda_milli(float("nan")) == 0
    assert replica_count([11.0009] * 4, 10.0) == 4
    assert external_replica_count(4, 44.0036, 10.0) == 5
    assert external_replica_count(1, 0.0025, 0.001) == 3


@pytest.mark.parametrize(
    "values, expected",
    [
        # a Pending pod counts as 0 m on a scale-up: 44,003 // 4 = 11,000, inside: 4 stay
        ([14.668, 14.667, 14.668], 4),
        # 44,004 // 4 = 11,001, outside: ⌈4 · 1.1001⌉ = 5
        ([14.668, 14.668, 14.668], 5),
        # 3 · 14,667 = 44,001 // 4 = 11,000 (not 11,000.25): inside, 4 stay
        ([14.667, 14.667, 14.667], 4),
    ],
)
def test_pending_pods_count_at_exactly_zero_on_both_paths(values, expected):
    assert replica_count(values, 10, unready=1) == expected
    if len(set(values)) == 1:  # the fast path of identical samples
        milli = hpa.adapter_milli(values[0])
        assert hpa.uniform_pod_metric_replicas(10_000, 4, milli, 3, 1, Tolerances()) == expected


def test_at_the_target_a_pending_pod_changes_nothing():
    """Ratio exactly 1 with a Pending pod: the Pending pods are counted only on a scale-up
    (ratio > 1), so the count stays 5 on both paths (counting it at 0 would ask for 4)."""
    assert replica_count([10.0] * 4, 10, unready=1) == 5
    assert hpa.uniform_pod_metric_replicas(10_000, 5, 10_000, 4, 1, Tolerances()) == 5


def test_a_scale_up_below_the_current_count_keeps_it():
    """Ten replicas, of which four report 18 against 10 and one has no sample: 72/5 = 14.4, ratio
    1.44, ⌈5 · 1.44⌉ = 8 < 10; a scale-up that would shrink the fleet keeps 10."""
    pods = [Pod(value=18.0)] * 4 + [Pod(value=None)]
    assert desired_replicas(MetricSpec("Pods", "AverageValue", 10), 10, pods=pods) == 10


def test_pods_requesting_nothing_are_refused():
    spec = MetricSpec("Resource", "Utilization", 50)
    with pytest.raises(ValueError, match="request none of the resource"):
        desired_replicas(spec, 1, pods=[Pod(value=0.1, request=0.0)])


def test_a_sync_without_pending_pods_counts_none():
    """Two replicas at 12 against 10: ratio 1.2, ⌈2 · 1.2⌉ = 3 (a Pending pod, counted at 0,
    would make it 24/3 = 8, a reversal that keeps 2)."""
    a = HorizontalAutoscaler(target=10.0)
    assert a.step(0.0, [12.0, 12.0]) == 3


def test_without_behavior_the_rules_tolerances_are_not_read():
    """behavior=False is an HPA without a behavior section: the controller's tolerance (0.1)
    in both directions, whatever the rules would say, and a 300 s downscale window
    (--horizontal-pod-autoscaler-downscale-stabilization's default, 5 m)."""
    rules = Rules((ScalingPolicy("Pods", 4, 15),), tolerance=0.05)
    a = HorizontalAutoscaler(target=1.0, behavior=False, up=rules, down=rules)
    assert a.tolerances == Tolerances(0.1, 0.1) and a.downscale_window_s == 300.0
