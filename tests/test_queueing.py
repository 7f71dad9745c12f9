"""M/M/1 closed forms and simulators, each against an independent statement of the result."""

import math

import numpy as np
import pytest
import sympy as sp

from replicaplan.core.stats import batch_means_error
from replicaplan.core.symbols import lam, mu, q, tau
from replicaplan.serving import queueing as qu
from replicaplan.serving.engine import simulate_closed
from replicaplan.serving.replica import ReplicaModel
from replicaplan.traffic.loadgen import AZURE_CONVERSATION, think_times


def test_conformance_is_the_exponential_cdf():
    # textbook: the M/M/1 time in system is Exp(μ − λ), so P(W ≤ τ) = 1 − e^{−(μ−λ)τ}
    textbook = 1 - sp.exp(-(mu - lam) * tau)
    assert sp.simplify(qu.mm1_conformance_expression() - textbook) == 0


def test_capacity_solves_the_quota():
    general = qu.mm1_capacity_expression()
    assert sp.simplify(general - (mu + sp.log(1 - q) / tau)) == 0
    assert sp.simplify(qu.mm1_capacity_expression(0.9) - (mu - sp.log(10) / tau)) == 0
    assert sp.simplify(qu.mm1_capacity_expression(0.99) - (mu - sp.log(100) / tau)) == 0
    assert qu.mm1_capacity(10.0, 1.0) == pytest.approx(10 - math.log(10))
    assert qu.mm1_capacity(25.0, 0.3) == pytest.approx(25 - math.log(10) / 0.3)
    assert qu.mm1_conformance(qu.mm1_capacity(10.0, 1.0), 10.0, 1.0) == pytest.approx(0.9)
    assert qu.mm1_conformance(12.0, 10.0, 1.0) == 0.0
    with pytest.raises(ValueError, match="no arrival rate"):
        qu.mm1_capacity(1.0, 1.0)  # 1 − ln 10 < 0


@pytest.mark.parametrize("rate", [3.0, 7.0, 9.0])
def test_simulated_mm1_agrees_with_the_closed_form(rate):
    residence = qu.simulate_mm1(rate, 10.0, 40_000, np.random.default_rng(int(rate)))[4000:]
    met = residence <= 1.0
    assert abs(met.mean() - qu.mm1_conformance(rate, 10.0, 1.0)) < 4 * batch_means_error(met)
    # Little's law cross-check: mean time in system 1/(μ − λ)
    assert residence.mean() == pytest.approx(1 / (10.0 - rate), rel=0.15)


def _machine_repairman_throughput(users: int, mu_: float, think: float) -> float:
    """Exact throughput of N users, exponential think Z, one exponential server μ."""
    weights = [math.perm(users, n) * (1 / (think * mu_)) ** n for n in range(users + 1)]
    return mu_ * (1 - weights[0] / sum(weights))


@pytest.mark.parametrize("users", [2, 10, 40])
def test_closed_mm1_throughput_is_the_finite_source_queue(users):
    arrival, residence = qu.simulate_closed_mm1(users, 2.5, 4.0, 40_000, np.random.default_rng(3))
    measured = arrival.size / arrival[-1]
    assert measured == pytest.approx(_machine_repairman_throughput(users, 2.5, 4.0), rel=0.03)
    assert np.all(residence > 0)


def test_interactive_law_on_a_closed_replica():
    rng = np.random.default_rng(9)
    n, users, think = 6000, 40, 3.0
    prompt, output = AZURE_CONVERSATION.sample(n, rng)
    z = think_times(think, n, rng)
    trace = simulate_closed(
        ReplicaModel(), users, z, prompt, output, start_s=rng.uniform(0, think, users)
    )
    measured, predicted = qu.interactive_law(trace, users, z)
    assert measured == pytest.approx(predicted, rel=0.02)


@pytest.mark.parametrize(
    "call, name",
    [
        (lambda: qu.mm1_conformance(0.0, 1.0, 1.0), "rate"),
        (lambda: qu.mm1_conformance(1.0, 2.0, 0.0), "tau"),
        (lambda: qu.mm1_capacity(10.0, 1.0, quota=1.0), "quota"),
        (lambda: qu.simulate_mm1(1.0, 0.0, 10, np.random.default_rng(0)), "mu"),
        (lambda: qu.simulate_closed_mm1(0, 1.0, 1.0, 10, np.random.default_rng(0)), "users"),
        (lambda: qu.interactive_throughput(3, -1.0, 1.0), "residence_s"),
    ],
)
def test_bad_input(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_an_overloaded_queue_grows_at_the_fluid_rate():
    # above μ nothing settles but the slope: the time in the system grows by λ/μ − 1 a minute
    slopes = [
        qu.measured_overload_growth(3.0, 2.5, 20_000, np.random.default_rng(s)) for s in range(5)
    ]
    assert np.mean(slopes) == pytest.approx(3.0 / 2.5 - 1, rel=0.1)
    with pytest.raises(ValueError, match="exceed"):
        qu.overload_growth(2.0, 2.5)
