"""Knative's KPA, with cases from knative/serving pkg/autoscaler/scaling/autoscaler_test.go.

The upstream tests call ``Scale`` with a fake metric client that returns the stable and panic
concurrency directly; ``KnativeAutoscaler.scale`` takes the same two numbers. Their test
autoscaler aims at the given target (utilization 1) and caps each move at ×10 up and ÷10 down.
"""

import pytest

from replicaplan.autoscalers.kpa import KnativeAutoscaler


def _upstream(target=10.0, tbc=93.0, **kwargs):
    return KnativeAutoscaler(
        target=target,
        target_utilization=1.0,
        target_burst_capacity=tbc,
        max_scale_up_rate=10.0,
        max_scale_down_rate=10.0,
        **kwargs,
    )


def test_panic_then_unpanic_scale_down():
    # TestAutoscalerPanicThenUnPanicScaleDown
    a = _upstream()
    assert a.scale(0.0, 100.0, 100.0, ready=1) == 10
    assert a.scale(10.0, 100.0, 1000.0, ready=10) == 100  # panic: the panic count wins
    assert a.scale(40.0, 1.0, 1.0, ready=10) == 100  # traffic gone, still in panic
    assert a.scale(71.0, 1.0, 1.0, ready=10) == 1  # a stable window (and a second) later


def test_leaving_panic_needs_strictly_more_than_the_stable_window():
    a = _upstream()
    a.scale(0.0, 100.0, 100.0, ready=1)
    a.scale(10.0, 100.0, 1000.0, ready=10)
    assert a.scale(70.0, 1.0, 1.0, ready=10) == 100 and a.panicking  # exactly 60 s: still
    assert a.scale(72.0, 1.0, 1.0, ready=10) == 1 and not a.panicking


def test_rate_limit_scale_up():
    # TestAutoscalerRateLimitScaleUp: 100 pods needed, ×10 a step
    a = _upstream(tbc=61.0)
    assert a.scale(0.0, 1000.0, 1000.0, ready=1) == 10
    assert a.scale(2.0, 1000.0, 1000.0, ready=10) == 100


def test_panic_mode_exponential_track_and_stabilize():
    # TestAutoscalerPanicModeExponentialTrackAndStablize: target 1, traffic ×6 each step
    a = _upstream(target=1.0, tbc=101.0)
    ready = 1
    for concurrency in (6, 36, 216, 1296):
        ready = a.scale(float(ready), concurrency, concurrency, ready=ready)
        assert ready == concurrency
    assert a.scale(10.0, 1296.0, 1296.0, ready=1296) == 1296


def test_panic_mode_double_pod_count():
    # AutoscalerPanicModeDoublePodCount: the panic concurrency takes precedence
    assert _upstream(tbc=84.0).scale(0.0, 50.0, 100.0, ready=1) == 10


def test_panic_is_entered_on_the_unclamped_count():
    # 1 ready pod needing 40: the scale-up bound (×10) clamps the count to 10, but the panic test
    # uses the unclamped 40 ≥ 2 × 1
    a = _upstream()
    a.scale(0.0, 10.0, 10.0, ready=1)
    assert a.scale(2.0, 10.0, 400.0, ready=1) == 10 and a.panicking


def test_the_panic_peak_is_forgotten_when_panic_ends():
    a = _upstream()
    a.scale(0.0, 100.0, 1000.0, ready=10)  # panic, peak 100
    assert a.max_panic_pods == 100
    a.scale(70.0, 100.0, 100.0, ready=100)  # over a minute without reason: panic ends
    assert not a.panicking and a.max_panic_pods == 0


def test_a_new_autoscaler_over_several_pods_starts_in_panic():
    # newAutoscaler: start in panic, holding the current scale until data accumulates
    a = _upstream(replicas=8)
    assert a.scale(0.0, 1.0, 1.0, ready=8) == 8 and a.panicking
    fresh = _upstream(replicas=1)
    assert fresh.scale(0.0, 1.0, 1.0, ready=1) == 1 and not fresh.panicking


def test_excess_burst_capacity():
    # EBC = ⌊ready · per-pod total − target burst capacity − panic concurrency⌋
    a = _upstream(target=10.0, tbc=93.0)
    a.scale(0.0, 100.0, 100.0, ready=10)
    assert a.excess_burst_capacity == 10 * 10 - 93 - 100
    assert _upstream(tbc=0.0).scale(0.0, 1.0, 1.0, ready=1) == 1
    zero = _upstream(tbc=0.0)
    zero.scale(0.0, 1.0, 1.0, ready=1)
    assert zero.excess_burst_capacity == 0
    always = _upstream(tbc=-1)
    always.scale(0.0, 1.0, 1.0, ready=1)
    assert always.excess_burst_capacity == -1


def test_target_utilization_scales_the_target():
    # the defaults aim at 70 % of the revision's target: 100 requests on a target of 10 → 15 pods
    a = KnativeAutoscaler(target=10.0)
    assert a.target_value == pytest.approx(7.0)
    assert a.scale(0.0, 100.0, 100.0, ready=10) == 15


def test_activation_scale():
    a = _upstream(activation_scale=3)
    assert a.scale(0.0, 1.0, 1.0, ready=1) == 3


def test_min_max_and_initial_scale():
    assert _upstream(min_scale=4).scale(0.0, 1.0, 1.0, ready=1) == 4
    assert _upstream(max_scale=5).scale(0.0, 1000.0, 1000.0, ready=10) == 5
    a = _upstream(initial_scale=6)
    assert a.scale(0.0, 1.0, 1.0, ready=1) == 6  # held at the initial scale until reached
    assert a.scale(2.0, 1.0, 1.0, ready=3) == 6
    assert a.scale(4.0, 1.0, 1.0, ready=6) == 1  # reached once: no longer held


def test_scale_down_delay_keeps_the_highest_recent_count():
    a = _upstream(scale_down_delay_s=30.0)
    assert a.scale(0.0, 100.0, 100.0, ready=10) == 10
    assert a.scale(10.0, 10.0, 10.0, ready=10) == 10  # 1 wanted, but 10 within the last 30 s
    assert a.scale(41.0, 10.0, 10.0, ready=10) == 1


def test_scale_to_zero_only_after_the_grace_period():
    a = _upstream()
    assert a.scale(0.0, 0.0, 0.0, ready=1) == 1  # grace starts
    assert a.scale(20.0, 0.0, 0.0, ready=1) == 1
    assert a.scale(31.0, 0.0, 0.0, ready=1) == 0
    kept = _upstream(enable_scale_to_zero=False)
    assert kept.scale(100.0, 0.0, 0.0, ready=1) == 1


def test_step_averages_the_windows():
    a = _upstream()
    for t in range(0, 60, 2):
        a.step(float(t), 20.0, ready=2)
    assert a.replicas == 2 and not a.panicking
    a.step(60.0, 200.0, ready=2)  # the 6 s panic window averages (20 + 20 + 200)/3 = 80
    assert a.panicking and a.replicas == 8


@pytest.mark.parametrize(
    "kwargs, name",
    [
        (dict(target=0), "target"),
        (dict(target=1, target_utilization=1.5), "target_utilization"),
        (dict(target=1, panic_window_percentage=150), "panic_window_percentage"),
        (dict(target=1, max_scale_up_rate=1.0), "max_scale_up_rate"),
        (dict(target=1, max_scale_down_rate=0.5), "max_scale_down_rate"),
        (dict(target=1, min_scale=5, max_scale=2), "min_scale"),
        (dict(target=1, target_burst_capacity=-3), "target_burst_capacity"),
        (dict(target=1, activation_scale=0), "activation_scale"),
        (dict(target=1, scale_down_delay_s=-1), "scale_down_delay_s"),
    ],
)
def test_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        KnativeAutoscaler(**kwargs)


def test_an_unreachable_revision_has_no_scale_down_limit_and_no_min_scale():
    # Scale: maxScaleDown := 0. unless spec.Reachable; ScaleBounds: min ignored when the PA is
    # not reachable. 100 ready pods that now need 1: reachable, ÷10 a step → 10; unreachable → 1
    reachable = _upstream()
    reachable.replicas, reachable._new = 100, False
    assert reachable.scale(0.0, 10.0, 10.0, ready=100) == 10
    gone = _upstream(reachable=False)
    gone.replicas, gone._new = 100, False
    assert gone.scale(0.0, 10.0, 10.0, ready=100) == 1
    # a min-scale of 4 holds a reachable revision, not an unreachable one
    assert _upstream(min_scale=4).scale(0.0, 1.0, 1.0, ready=1) == 4
    assert _upstream(min_scale=4, reachable=False).scale(0.0, 1.0, 1.0, ready=1) == 1


def test_an_unreachable_revision_skips_the_scale_down_delay():
    """Upstream's TestAutoscalerScaleDownDelayNotReachable (knative/serving, 2026): a 5-minute
    delay holds 4 pods a minute after the load went, until the revision is marked unreachable
    (another revision took its traffic), when the next decision drops to 0 at once. Its fake pod
    counter reports no ready pod, which the decider counts as one (max(1, ready)): one ready
    pod here, so that the reconciler's initial scale is reached; its grace period before zero
    is set to 0 to read the decider's own count, as the upstream test does."""
    a = _upstream(scale_down_delay_s=300.0, scale_to_zero_grace_s=0.0)
    a.panic_threshold = 100.0
    assert a.scale(2.0, 40.0, 40.0, ready=1) == 4
    assert a.scale(60.0, 0.0, 0.0, ready=0) == 4  # within the delay
    a.reachable = False
    assert a.scale(2.0, 0.0, 0.0, ready=0) == 0
