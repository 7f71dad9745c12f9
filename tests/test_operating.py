"""The operating point of one replica on a log's own length mix (planner/operating.py)."""

import numpy as np
import pytest

from replicaplan.core.promises import PROMISES, Promises
from replicaplan.planner import plan
from replicaplan.serving.engine import simulate_open
from replicaplan.serving.replica import ReplicaModel
from replicaplan.simulation import capacity
from replicaplan.traffic import loadgen as lg


@pytest.fixture(scope="module")
def point(sample):
    return plan.operating_point(sample)


def test_mu_star_on_the_sample_matches_the_full_traces_mix(point):
    """The vendored sample (every 6th request) and the full trace's mix give the same μ*."""
    grid = np.round(np.arange(6.0, 11.01, 0.5), 2)
    full = capacity.replica_sweep(grid).require_mu_star()
    assert point.mu_star == pytest.approx(full, rel=0.05)
    assert point.mu_star_stderr is not None and point.mu_star_stderr < 0.05 * point.mu_star


def test_the_target_follows_littles_law_at_the_operating_rate(point):
    assert point.rate == pytest.approx(0.8 * point.mu_star)
    # W̄ at 80 % of μ* lies between an idle replica's answer time and the promises' reach
    idle = plan.ReplicaModel().prefill_s(point.mean_prompt) + point.mean_output * float(
        plan.ReplicaModel().tpot(1)
    )
    assert idle < point.residence_s < 1.0 + point.mean_output * PROMISES.tpot_slo_s


def test_l_star_is_what_a_replica_holds_at_the_operating_rate(sample, point):
    """Measured, not restated: run the replica at ρ*μ* on the sample's mix and count, at a
    thousand instants, the requests that have arrived and not yet finished. Their mean is the
    concurrency the HPA will see, and it must be the L* the plan targets."""
    rng = np.random.default_rng(11)
    n = 6000
    prompt, output = sample.length_mix().sample(n, rng)
    run = simulate_open(ReplicaModel(), lg.poisson_arrivals(point.rate, n, rng), prompt, output)
    lo, hi = run.arrival[n // 10], run.arrival[-n // 10]
    instants = np.linspace(lo, hi, 1000)
    inside = [int(np.sum((run.arrival <= s) & (run.end > s))) for s in instants]
    assert np.mean(inside) == pytest.approx(point.concurrency_target, rel=0.1)


@pytest.mark.slow
def test_stricter_promises_lower_capacity_and_a_lower_target_lowers_l_star(sample, point):
    strict = plan.operating_point(sample, promises=Promises(tpot_slo_s=0.8 * PROMISES.tpot_slo_s))
    assert strict.mu_star < point.mu_star
    gentle = plan.operating_point(sample, sizing=plan.Sizing(target_utilization=0.5))
    assert gentle.mu_star == point.mu_star  # the same sweep: capacity does not depend on ρ*
    assert gentle.concurrency_target < point.concurrency_target


@pytest.mark.slow
def test_reproducible_bit_for_bit(sample, point):
    again = plan.operating_point(sample)
    assert again == point


def test_promises_no_load_can_meet_are_refused(sample):
    with pytest.raises(ValueError, match="tpot_slo_s=0.001.*no load meets them"):
        plan.operating_point(sample, promises=Promises(tpot_slo_s=0.001))
    with pytest.raises(ValueError, match="trace"):
        plan.operating_point("conv_sample.csv")
    with pytest.raises(ValueError, match="target_utilization"):
        plan.operating_point(sample, sizing=plan.Sizing(target_utilization=1.5))
