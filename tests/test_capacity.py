import numpy as np
import pytest

from replicaplan import capacity as cap
from replicaplan.queueing import mm1_conformance
from replicaplan.replica import ReplicaModel


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
    assert sweep.mu_star == pytest.approx(7.5)  # the last grid point ≤ 7.70


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
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()
