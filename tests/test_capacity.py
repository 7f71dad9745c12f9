import math

import numpy as np
import pytest
import sympy as sp

from replicaplan import capacity as cap
from replicaplan.loadgen import AZURE_CONVERSATION, think_times
from replicaplan.replica import ReplicaModel, simulate_closed


def test_mm1_closed_forms():
    lam, mu, tau = cap.lam_, cap.mu_, cap.tau_
    assert sp.simplify(cap.mm1_conformance_expression() - (1 - sp.exp(-(mu - lam) * tau))) == 0
    assert sp.simplify(cap.mm1_capacity_expression() - (mu - sp.log(10) / tau)) == 0
    assert (
        sp.simplify(cap.mm1_capacity_expression(sp.Rational(99, 100)) - (mu - sp.log(100) / tau))
        == 0
    )


def test_mm1_numbers():
    assert cap.mm1_capacity(10.0, 1.0) == pytest.approx(10 - math.log(10))
    assert cap.mm1_conformance(cap.mm1_capacity(10.0, 1.0), 10.0, 1.0) == pytest.approx(0.9)
    assert cap.mm1_conformance(12.0, 10.0, 1.0) == 0.0
    with pytest.raises(ValueError, match="no arrival rate"):
        cap.mm1_capacity(1.0, 1.0)  # 1 − ln 10 < 0


def test_two_point_standard_error():
    assert cap.standard_error(0.9, 200) == pytest.approx(math.sqrt(0.9 * 0.1 / 200))
    assert round(cap.standard_error(0.9, 200) * 100) == 2


def test_mm1_simulation_agrees_with_the_closed_form():
    grid = np.arange(1.0, 9.51, 0.5)
    sweep = cap.mm1_sweep(grid, mu=10.0, tau=1.0, n_requests=20_000, seed=0)
    for p in sweep.points:
        exact = cap.mm1_conformance(p.rate, 10.0, 1.0)
        tolerance = 3 * max(p.stderr_batch, 1 / p.n)
        assert abs(p.conformance - exact) <= tolerance, (
            p.rate,
            p.conformance,
            exact,
            p.stderr_batch,
        )
    assert sweep.mu_star == pytest.approx(7.5)  # the last grid point ≤ 7.70


def test_closed_loop_interactive_law():
    rng = np.random.default_rng(9)
    n, users, think = 6000, 40, 3.0
    prompt, output = AZURE_CONVERSATION.sample(n, rng)
    z = think_times(think, n, rng)
    trace = simulate_closed(
        ReplicaModel(), users, z, prompt, output, start_s=rng.uniform(0, think, users)
    )
    measured, predicted = cap.interactive_law(trace, users, z)
    assert measured == pytest.approx(predicted, rel=0.02)


def test_replica_sweep_finds_mu_star():
    grid = np.arange(5.0, 10.01, 0.5)
    sweep = cap.replica_sweep(grid, n_requests=3000, seed=3)
    conf = [p.conformance for p in sweep.points]
    assert conf[0] > 0.99 and conf[-1] < 0.1  # from easy to hopeless
    assert sweep.mu_star is not None and 6.0 <= sweep.mu_star <= 9.0
    assert all(p.conformance >= 0.9 for p in sweep.points if p.rate <= sweep.mu_star - 1)
    d = sweep.to_dict()
    assert d["mu_star"] == sweep.mu_star and len(d["points"]) == grid.size
    assert set(d["points"][0]) >= {"rate", "conformance", "stderr"}


def test_bursty_arrivals_lower_the_capacity():
    grid = np.arange(3.0, 9.01, 0.5)
    poisson = cap.replica_sweep(grid, n_requests=3000, seed=2)
    bursty = cap.replica_sweep(grid, n_requests=3000, seed=2, cv=3.0)
    assert bursty.mu_star < poisson.mu_star
    pairs = zip(bursty.points, poisson.points, strict=True)
    assert all(b.conformance <= p.conformance + 0.02 for b, p in pairs)


def test_sweep_reproducible():
    a = cap.replica_sweep([6.0, 8.0], n_requests=1000, seed=4).to_dict()
    b = cap.replica_sweep([6.0, 8.0], n_requests=1000, seed=4).to_dict()
    assert a == b


def test_no_rate_meets_the_quota():
    sweep = cap.replica_sweep([20.0, 30.0], n_requests=500)
    assert sweep.mu_star is None
    with pytest.raises(ValueError, match="no swept rate meets the quota"):
        sweep.require_mu_star()


def test_batch_means_error_grows_with_correlation():
    independent = np.random.default_rng(0).random(20_000) < 0.9
    blocks = np.repeat(np.random.default_rng(0).random(200) < 0.9, 100)
    assert cap.batch_means_error(independent) < cap.batch_means_error(blocks)
    assert cap.batch_means_error(independent) == pytest.approx(
        cap.standard_error(0.9, 20_000), rel=0.5
    )


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: cap.replica_sweep([0.0, 1.0]), "rates"),
        (lambda: cap.replica_sweep([-1.0]), "rates"),
        (lambda: cap.replica_sweep([1.0], quota=1.0), "quota"),
        (lambda: cap.replica_sweep([1.0], quota=0.0), "quota"),
        (lambda: cap.replica_sweep([1.0], ttft_slo_s=0), "ttft_slo_s"),
        (lambda: cap.replica_sweep([1.0], tpot_slo_s=-1), "tpot_slo_s"),
        (lambda: cap.replica_sweep([1.0], mix="uniform"), "mix"),
        (lambda: cap.replica_sweep([1.0], cv=0), "cv"),
        (lambda: cap.replica_sweep([1.0], model=ReplicaModel(batch=0)), "batch"),
        (lambda: cap.mm1_sweep([1.0], mu=0, tau=1), "mu"),
        (lambda: cap.mm1_conformance(0.0, 1.0, 1.0), "lam"),
        (lambda: cap.mm1_conformance(1.0, 2.0, 0.0), "tau"),
        (lambda: cap.standard_error(1.2, 10), "p"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()
