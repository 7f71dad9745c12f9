import numpy as np
import pytest

from replicaplan.autoscalers.controllers import KPA, Fixed, HPAOn, Proportional
from replicaplan.autoscalers.hpa import Rules, ScalingPolicy
from replicaplan.core.example import EXAMPLE
from replicaplan.scenarios.synthetic import reference_traffic
from replicaplan.serving.fluid import FluidReplica
from replicaplan.simulation.control import per_second, simulate_fleet

L_STAR = EXAMPLE.concurrency_target


def test_fluid_replica_matches_the_running_example():
    fr = FluidReplica()
    assert fr.max_rate_rps == pytest.approx(8.0, rel=0.01)
    assert float(fr.completion_rate(0)) == 0.0
    assert np.all(np.diff(fr.completion_rate(np.arange(65))) > 0)


def test_queue_is_stable_iff_rate_below_fleet_capacity():
    mu = FluidReplica().max_rate_rps
    hour = 3600
    below = simulate_fleet(np.full(hour, 0.95 * 5 * mu), Fixed(5), initial=5, seed=1)
    above = simulate_fleet(np.full(hour, 1.05 * 5 * mu), Fixed(5), initial=5, seed=1)
    assert below.waiting[-600:].max() < 5 * 64
    growth = (above.waiting[-1] - above.waiting[hour // 2]) / (hour // 2)
    assert growth == pytest.approx(0.05 * 5 * mu, rel=0.15)


def test_concurrency_hpa_holds_its_target():
    run = simulate_fleet(np.full(4 * 3600, 40.0), HPAOn({"concurrency": L_STAR}), startup_s=60)
    per = run.in_flight[3600:] / run.ready[3600:]
    # whole replicas and the down window keep it at or a little below the target, never above
    # the tolerance band
    assert 0.75 * L_STAR < per.mean() <= 1.1 * L_STAR
    need = 40.0 / float(FluidReplica().completion_rate(L_STAR))  # replicas at exactly L*
    assert abs(run.ready[3600:].mean() - need) < 1.0


def test_gpu_utilization_saturates_and_overprovisions():
    traffic = np.full(3 * 3600, 40.0)
    on_util = simulate_fleet(traffic, HPAOn({"gpu_utilization": 0.8}), startup_s=60)
    on_conc = simulate_fleet(traffic, HPAOn({"concurrency": L_STAR}), startup_s=60)
    assert on_util.gpu_utilization[:60].min() > 0.99  # saturated at the start
    assert on_util.ready[-1] > 3 * on_conc.ready[-1]
    assert on_util.utilization < 0.3 < on_conc.utilization


def test_counting_starters_limits_the_overshoot():
    rate = per_second(reference_traffic())[20 * 3600 : 22 * 3600]
    counted = simulate_fleet(rate, Proportional(L_STAR), startup_s=480)
    blind = simulate_fleet(rate, Proportional(L_STAR, count_starting=False), startup_s=480)
    assert blind.paid.max() > 2 * counted.paid.max()
    assert blind.paid_hours > counted.paid_hours


def test_down_window_prevents_flapping():
    rng_day = per_second(reference_traffic())[10 * 3600 : 14 * 3600]
    flappy = simulate_fleet(
        rng_day,
        HPAOn(
            {"concurrency": L_STAR}, down=Rules((ScalingPolicy("Percent", 100, 15),), "Max", 0.0)
        ),
        startup_s=60,
    )
    steady = simulate_fleet(rng_day, HPAOn({"concurrency": L_STAR}), startup_s=60)
    assert flappy.scale_changes > 2 * steady.scale_changes


def test_kpa_runs_and_reacts_to_the_step():
    rate = per_second(reference_traffic())[20 * 3600 : 22 * 3600]
    run = simulate_fleet(rate, KPA(L_STAR), startup_s=60)
    assert run.ready[3600 + 600] > run.ready[3500]


def test_paid_counts_starting_replicas():
    rate = np.r_[np.full(300, 10.0), np.full(900, 60.0)]
    run = simulate_fleet(rate, HPAOn({"concurrency": L_STAR}), startup_s=300)
    assert np.all(run.paid >= run.ready)
    assert (run.paid > run.ready).any()


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: HPAOn({"latency": 1.0}), "metric"),
        (lambda: HPAOn({}), "targets"),
        (lambda: HPAOn({"concurrency": 0}), "concurrency"),
        (lambda: simulate_fleet([1.0, -1.0], Fixed(1)), "rate"),
        (lambda: simulate_fleet([1.0], Fixed(1), startup_s=-1), "startup_s"),
        (lambda: Fixed(0), "replicas"),
        (lambda: Proportional(0), "target"),
        (lambda: FluidReplica(output_tokens=0), "output_tokens"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_utilization_against_concurrency_on_steady_traffic():
    """At a steady 40 req/s the concurrency target holds λ/(ρ*μ*) = 6.25 replicas; the
    utilization signal, saturated long before the replicas are, keeps asking for more."""
    from replicaplan.scenarios.studies import utilization_against_concurrency

    on_util, on_conc = utilization_against_concurrency(np.full(3600, 40.0))
    steady = on_conc.ready[-600:].mean()
    assert abs(steady - 40 / (0.8 * 8)) <= 1.0
    assert on_util.ready[-600:].mean() > 2 * steady
    with pytest.raises(ValueError, match="utilization_target"):
        utilization_against_concurrency(np.full(60, 1.0), utilization_target=1.5)


class _Watching:
    """A fixed fleet that records what it is shown (``reads`` as given, or none at all)."""

    period_s = 15.0

    def __init__(self, reads=None):
        if reads is not None:
            self.reads = reads
        self.seen = []

    def decide(self, m):
        self.seen.append(m)
        return 3


def test_a_controller_gets_the_signals_it_reads_and_the_same_values():
    """One that names what it reads gets those, computed as for one that names nothing, and
    zeros for the rest (which the loop then need not compute)."""
    rate = np.full(600, 0.6 * 3 * FluidReplica().max_rate_rps)
    every, some = _Watching(), _Watching(reads=("concurrency", "kv_tokens"))
    for c in (every, some):
        simulate_fleet(rate, c, initial=3, seed=2, metric_window_s=60)
    assert len(every.seen) == len(some.seen) == 40
    for a, b in zip(every.seen, some.seen, strict=True):
        assert a.gpu_utilization > 0.5 and b.gpu_utilization == 0.0
        assert (b.concurrency, b.kv_tokens, b.in_flight) == (
            a.concurrency,
            a.kv_tokens,
            a.in_flight,
        )
        assert a.kv_tokens > 0
    assert HPAOn({"kv_tokens": 1000.0, "queue": 5.0}).reads == ("kv_tokens", "queue")
