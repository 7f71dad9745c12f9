"""The operating point of one replica on a log's own length mix."""

from pathlib import Path

import numpy as np
import pytest

from replicaplan.planner import plan
from replicaplan.serving.replica import ReplicaModel, simulate_open
from replicaplan.simulation import capacity
from replicaplan.traffic import loadgen as lg

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "azure-llm-inference-2023"


@pytest.fixture(scope="module")
def sample():
    return lg.read_trace(SAMPLE / "conv_sample.csv")


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
    assert idle < point.residence_s < 1.0 + point.mean_output * capacity.TPOT_SLO_S


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


def test_stricter_promises_lower_capacity_and_a_lower_target_lowers_l_star(sample, point):
    strict = plan.operating_point(sample, tpot_slo_s=0.8 * capacity.TPOT_SLO_S)
    assert strict.mu_star < point.mu_star
    gentle = plan.operating_point(sample, target_utilization=0.5)
    assert gentle.mu_star == point.mu_star  # the same sweep: capacity does not depend on ρ*
    assert gentle.concurrency_target < point.concurrency_target


def test_reproducible_bit_for_bit(sample, point):
    again = plan.operating_point(sample)
    assert again == point


def test_promises_no_load_can_meet_are_refused(sample):
    with pytest.raises(ValueError, match="tpot_slo_s=0.001.*no load meets them"):
        plan.operating_point(sample, tpot_slo_s=0.001)
    with pytest.raises(ValueError, match="trace"):
        plan.operating_point("conv_sample.csv")
    with pytest.raises(ValueError, match="target_utilization"):
        plan.operating_point(sample, target_utilization=1.5)


def test_replay_of_a_step_by_hand():
    """2 req/s for an hour, 10 for half an hour, 2 again; μ* = 8, ρ* = 0.8 (6.4 req/s each)."""
    from replicaplan.core.example import EXAMPLE

    rate = np.r_[np.full(60, 2.0), np.full(30, 10.0), np.full(30, 2.0)]
    always, chase, spares = plan.replay(rate, 8.0, startup_min=8, price_per_hour=2.0)
    assert always.result.paid_hours == pytest.approx(2 * 2.0)  # ⌈10/6.4⌉ = 2 replicas, 2 h
    assert always.result.uncovered_minutes == 0
    assert chase.result.uncovered_minutes == 8  # the step waits one start-up
    assert plan.largest_step_reserve(rate, 8.0, 0.8) == 2  # ⌈8/6.4⌉
    assert spares.result.uncovered_minutes == 0
    served = (60 * 2 + 30 * 10 + 30 * 2) * 60  # every request finds room in the always-on fleet
    tokens = served * EXAMPLE.answer_tokens
    assert always.priced.per_million == pytest.approx(4.0 * 2.0 / tokens * 1e6)
    best, why = plan.recommend([always, chase, spares])
    assert best is always and "no minute uncovered" in why  # cheaper than spares kept all along


def test_recommend_when_nothing_covers():
    rate = np.r_[np.full(10, 1.0), np.full(10, 50.0)]
    rows = plan.replay(rate, 8.0, startup_min=8)
    rows = [r for r in rows if r.result.uncovered_minutes > 0]
    best, why = plan.recommend(rows)
    assert "fewest" in why and best.result.uncovered_minutes == min(
        r.result.uncovered_minutes for r in rows
    )
