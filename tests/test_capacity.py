import dataclasses
import math

import numpy as np
import pytest

from replicaplan.core.promises import Promises
from replicaplan.serving.queueing import mm1_capacity, mm1_conformance
from replicaplan.serving.replica import ReplicaModel
from replicaplan.simulation import capacity as cap


def test_mm1_simulation_agrees_with_the_closed_form():
    grid = np.arange(1.0, 9.51, 0.5)
    sweep = cap.mm1_sweep(grid, mu=10.0, tau=1.0, n_requests=20_000, seed=0)
    for p in sweep.points:
        exact = mm1_conformance(p.rate, 10.0, 1.0)
        tolerance = 3 * max(p.stderr_batch, 1 / p.n)
        assert abs(p.conformance - exact) <= tolerance, (
            p.rate,
            p.conformance,
            exact,
            p.stderr_batch,
        )
    # the bisection lands within its statistical error of μ − ln 10/τ = 7.70, between grid points
    closed = mm1_capacity(10.0, 1.0)
    assert abs(sweep.mu_star - closed) <= 3 * sweep.mu_star_stderr + sweep.resolution
    assert sweep.mu_star == pytest.approx(closed, rel=0.05)
    assert sweep.mu_star not in grid and sweep.resolution <= 0.01


@pytest.mark.parametrize("mu, tau", [(10, 1), (25, 0.3), (10, 0.5), (100, 0.05), (2, 5), (4, 2)])
def test_mm1_search_finds_the_closed_form_over_a_wide_range(mu, tau):
    sweep = cap.mm1_sweep(np.linspace(mu / 20, mu, 20), mu=mu, tau=tau)
    assert sweep.mu_star == pytest.approx(mm1_capacity(mu, tau), rel=0.05)


def test_search_bisects_a_known_step():
    # a made-up model whose conformance drops from 1 to 0 at exactly 3.3: the search finds it
    def measure(rate):
        met = np.full(200, rate <= 3.3)
        return cap._point(rate, met)

    sweep = cap.search(measure, [1.0, 2.0, 3.0, 4.0, 5.0], 0.9, resolution=0.001)
    assert sweep.bracket[0] <= 3.3 < sweep.bracket[1]
    assert sweep.mu_star == pytest.approx(3.3, abs=0.001) and len(sweep.probes) == 10


def test_replica_sweep_finds_mu_star():
    grid = np.arange(5.0, 12.01, 0.5)
    sweep = cap.replica_sweep(grid, n_requests=3000, seed=3)
    conf = [p.conformance for p in sweep.points]
    assert conf[0] > 0.99 and conf[-1] < 0.1  # from easy to hopeless
    assert sweep.mu_star is not None and 6.0 <= sweep.mu_star <= 11.0
    lo, hi = sweep.bracket
    assert hi - lo <= 0.02 and all(p.conformance >= 0.9 for p in sweep.probes if p.rate <= lo)
    assert all(p.conformance >= 0.9 for p in sweep.points if p.rate <= sweep.mu_star - 1)
    d = sweep.to_dict()
    assert d["mu_star"] == sweep.mu_star and len(d["points"]) == grid.size
    assert set(d["points"][0]) >= {"rate", "conformance", "stderr"}


@pytest.mark.slow
def test_bursty_arrivals_lower_the_capacity():
    grid = np.arange(3.0, 13.01, 0.5)
    poisson = cap.replica_sweep(grid, n_requests=3000, seed=2)
    bursty = cap.replica_sweep(grid, n_requests=3000, seed=2, cv=3.0)
    assert bursty.mu_star < poisson.mu_star
    pairs = zip(bursty.points, poisson.points, strict=True)
    assert all(b.conformance <= p.conformance + 0.02 for b, p in pairs)


def test_no_rate_meets_the_quota():
    sweep = cap.replica_sweep([20.0, 30.0], n_requests=500)
    assert sweep.mu_star is None
    with pytest.raises(ValueError, match="μ\\* < 20 req/s: .*widen the grid of rates downwards"):
        sweep.require_mu_star()
    easy = cap.replica_sweep([1.0, 2.0], n_requests=500)
    assert easy.mu_star is None
    with pytest.raises(ValueError, match="μ\\* ≥ 2 req/s: .*widen the grid of rates upwards"):
        easy.require_mu_star()


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: cap.replica_sweep([0.0, 1.0]), "rates"),
        (lambda: cap.replica_sweep([-1.0]), "rates"),
        (lambda: cap.replica_sweep([1.0], promises=Promises(quota=1.0)), "quota"),
        (lambda: cap.replica_sweep([1.0], promises=Promises(quota=0.0)), "quota"),
        (lambda: cap.replica_sweep([1.0], promises=Promises(ttft_slo_s=0)), "ttft_slo_s"),
        (lambda: cap.replica_sweep([1.0], promises=Promises(tpot_slo_s=-1)), "tpot_slo_s"),
        (lambda: cap.replica_sweep([1.0], mix="uniform"), "mix"),
        (lambda: cap.replica_sweep([1.0], cv=0), "cv"),
        (lambda: cap.replica_sweep([1.0], model=ReplicaModel(batch=0)), "batch"),
        (lambda: cap.mm1_sweep([1.0], mu=0, tau=1), "mu"),
        (lambda: cap.mm1_sweep([2.0, 1.0], mu=3, tau=1), "increasing"),
        (lambda: cap.mm1_sweep([1.0, 2.0], mu=3, tau=1, resolution=0), "resolution"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_closed_against_open_obeys_the_law_and_is_reproducible():
    a = cap.closed_against_open(users=40, think_s=5.0, requests=2000)
    b = cap.closed_against_open(users=40, think_s=5.0, requests=2000)
    # the interactive response-time law N_u/(W̄ + Z̄) against the measured rate
    assert a.rate == pytest.approx(a.predicted, rel=0.02)
    # 40 users thinking 5 s cannot send more than 40/5 = 8 req/s
    assert a.rate < 40 / 5.0
    assert np.array_equal(a.opened.ttft, b.opened.ttft) and a.rate == b.rate


def test_closed_loop_hides_the_queue_that_open_loop_shows_near_capacity():
    loops = cap.closed_against_open(users=100, think_s=5.0, requests=6000)
    assert loops.conformance("closed") > 0.9 > loops.conformance("open")


def test_closed_against_open_bad_input():
    with pytest.raises(ValueError, match="requests"):
        cap.closed_against_open(users=100, requests=500)
    with pytest.raises(ValueError, match="think_s"):
        cap.closed_loop(10, think_s=0)


@pytest.mark.slow
def test_the_replicated_error_of_mu_star_covers_the_closed_form():
    """On M/M/1, 20 seeds for each of 5 (mu, tau): mu* +- 2 SE (Stein's two-stage interval over
    independent replications) covers mu - ln 10/tau in at least 90 % of the runs (95 % measured),
    and the default run of each pair is within 3 % of it (1.5 to 1.8 % measured). Each pair
    gets its own seeds: the same seed for two pairs draws the same uniforms, so their errors
    would move together and the 100 runs would count as 20."""
    hits, runs = 0, 0
    for k, (mu, tau) in enumerate([(15, 0.8), (10, 1.0), (20, 0.5), (8, 2.0), (30, 0.3)]):
        truth = mu - math.log(10) / tau
        grid = np.linspace(0.5 * truth, 1.19 * mu, 12)
        default = cap.mm1_sweep(grid, mu=mu, tau=tau)
        assert default.mu_star == pytest.approx(truth, rel=0.03)
        assert default.precision_reached
        for seed in range(20):
            s = cap.mm1_sweep(grid, mu=mu, tau=tau, seed=1 + 100 * k + seed)
            assert len(s.replicas) >= cap.MIN_REPLICATIONS
            hits += abs(s.mu_star - truth) <= 2 * s.mu_star_stderr
            runs += 1
    assert hits / runs >= 0.9


def test_the_replicated_stderr_by_hand():
    # three estimates 9, 10, 11: s = 1, s/sqrt(3) = 0.577, x t(0.975, 2)/2 = 4.303/2
    assert cap.replicated_stderr([9.0, 10.0, 11.0]) == pytest.approx(4.303 / 2 / math.sqrt(3))
    # Stein: the spread of the first two (s = sqrt 2), t(0.975, 1) = 12.706, over sqrt 4 of all
    two_stage = cap.replicated_stderr([9.0, 11.0, 10.0, 10.0], pilot=2)
    assert two_stage == pytest.approx(12.706 * math.sqrt(2) / 2 / 2)
    # the second stage: a pilot of 5 with s = sqrt(1/2) and mean 10 needs
    # (2.776 sqrt(1/2) / (2 x 0.02 x 10))^2 = 24.1 replications for 2 %, capped at 12; for
    # 10 %, 0.96: the pilot's 5 suffice
    pilot = [9.0, 10.0, 11.0, 10.0, 10.0]
    assert np.std(pilot, ddof=1) == pytest.approx(math.sqrt(0.5))
    assert cap.replications_needed(pilot, 0.02) == cap.MAX_REPLICATIONS
    assert cap.replications_needed(pilot, 0.10) == 5


@pytest.mark.parametrize("prompt, output", [(200, 500), (100, 320), (50, 800)])
def test_saturation_rate_meets_the_full_batch_closed_form(prompt, output):
    # with short prompts a saturated replica decodes a full batch whose sequences hold, on
    # average, the prompt plus half the answer: B / (output · TPOT(B) + B · prefill), the
    # closed form of max_rate_rps, derived apart from the event engine
    model = dataclasses.replace(ReplicaModel(), context_tokens=prompt + output / 2)
    measured = cap.saturation_rate(model, (prompt, output), requests=3000)
    assert measured == pytest.approx(model.max_rate_rps(output, prompt), rel=0.03)
    # a prompt slice rides on a decode step that reads the weights anyway, so the engine does
    # better than the closed form's prefill computed apart, never worse
    assert measured >= model.max_rate_rps(output, prompt)


def test_the_raw_rate_of_the_mix_lies_above_its_capacity():
    # μ* < μ: the promises give out before the queue grows without end, so the saturated
    # replica completes more than the sweep's μ*, by more than three of its standard errors;
    # holding a full batch of 2,000-token contexts it would complete the source's 8 req/s
    model = ReplicaModel()
    mu = cap.saturation_rate(model, requests=3000)
    sweep = cap.replica_sweep(np.arange(6.0, 11.01, 1.0))
    assert mu > sweep.require_mu_star() + 3 * sweep.mu_star_stderr
    assert model.max_rate_rps(320) == pytest.approx(8.0, rel=1e-3)


@pytest.mark.parametrize(
    "kwargs, name",
    [({"requests": 5}, "requests"), ({"warmup": 1.0}, "warmup"), ({"mix": "bursty"}, "mix")],
)
def test_saturation_rate_bad_input(kwargs, name):
    with pytest.raises(ValueError, match=name):
        cap.saturation_rate(**kwargs)
