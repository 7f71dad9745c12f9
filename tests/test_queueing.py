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


# ------------------------------------------------------------------ what the mutation run found
def test_conformance_of_an_array_is_an_array_and_of_a_number_a_float():
    rates = np.array([2.0, 5.0, 9.0, 12.0])
    out = qu.mm1_conformance(rates, 10.0, 0.5)
    assert isinstance(out, np.ndarray) and out.shape == (4,)
    expected = [1 - math.exp(-(10.0 - r) * 0.5) for r in rates[:3]] + [0.0]
    assert out == pytest.approx(expected)
    assert isinstance(qu.mm1_conformance(5.0, 10.0, 0.5), float)


def test_capacity_is_refused_at_zero_and_accepted_just_above():
    # μ = ln 10, τ = 1: μ* = ln 10 − ln 10 = 0, no positive rate meets the quota
    with pytest.raises(ValueError, match="no arrival rate"):
        qu.mm1_capacity(math.log(10), 1.0)
    assert qu.mm1_capacity(2.5, 1.0) == pytest.approx(2.5 - math.log(10))  # 0.197 req/s


def test_the_mm1_recursion_by_hand():
    """Lindley's recursion on the simulator's own draws, written out: the first customer's
    time is its service; each next one waits what the previous left minus the gap."""
    rate, mu_, n = 4.0, 5.0, 200
    got = qu.simulate_mm1(rate, mu_, n, np.random.default_rng(11))
    rng = np.random.default_rng(11)
    gaps, service = rng.exponential(1 / rate, n), rng.exponential(1 / mu_, n)
    wait, expected = 0.0, []
    for i in range(n):
        wait = 0.0 if i == 0 else max(0.0, wait + service[i - 1] - gaps[i])
        expected.append(wait + service[i])
    assert got.tolist() == pytest.approx(expected)
    assert qu.simulate_mm1(rate, mu_, 1, np.random.default_rng(0)).size == 1


def test_the_closed_queue_reports_times_in_the_system():
    """The interactive response-time law, W = N/X − Z, on the run's own throughput; and the
    first request finds the server idle, so its time is its service time."""
    users, mu_, think = 10, 2.5, 4.0
    arrival, residence = qu.simulate_closed_mm1(users, mu_, think, 40_000, np.random.default_rng(5))
    throughput = arrival.size / (arrival[-1] - arrival[0])
    assert residence.mean() == pytest.approx(users / throughput - think, rel=0.05)
    first_service = np.random.default_rng(5).exponential(1 / mu_, 40_000)[0]
    assert residence[0] == pytest.approx(first_service)


def test_the_closed_queue_never_holds_more_than_its_users():
    """Each user sends again only after its answer and a think time: at every arrival, the
    requests still in the system number fewer than the users."""
    users = 5
    arrival, residence = qu.simulate_closed_mm1(users, 2.0, 1.0, 3000, np.random.default_rng(4))
    done = arrival + residence
    in_system = [(arrival[:i] <= a) & (done[:i] > a) for i, a in enumerate(arrival)]
    assert max(int(s.sum()) for s in in_system) <= users - 1
    assert np.all(np.diff(arrival) >= 0)  # in arrival order: a send is never in the past
    one, _ = qu.simulate_closed_mm1(users, 2.0, 1.0, 1, np.random.default_rng(4))
    assert one.size == 1
    # the server is idle at the start: with a think time of 10 ms the first request, sent
    # before a second has passed, still takes only its service time
    arrival, residence = qu.simulate_closed_mm1(users, 2.0, 0.01, 10, np.random.default_rng(6))
    assert arrival[0] < 1.0
    assert residence[0] == pytest.approx(np.random.default_rng(6).exponential(0.5, 10)[0])


def test_the_counts_are_refused_below_their_minimum():
    rng = np.random.default_rng(0)
    for call in (
        lambda: qu.simulate_mm1(1.0, 2.0, 0, rng),
        lambda: qu.measured_overload_growth(3.0, 2.0, 1, rng),
        lambda: qu.simulate_closed_mm1(0, 2.0, 1.0, 10, rng),
        lambda: qu.simulate_closed_mm1(2, 2.0, 1.0, 0, rng),
        lambda: qu.interactive_throughput(0, 1.0, 1.0),
    ):
        with pytest.raises(ValueError):
            call()
    assert qu.mm1_conformance(0.5, 2.0, 1.0) == pytest.approx(1 - math.exp(-1.5))


def test_the_closed_queue_at_its_edges():
    # one user and no think time: the server is never idle and never queued, W = service
    arrival, residence = qu.simulate_closed_mm1(1, 2.0, 0.0, 500, np.random.default_rng(1))
    assert arrival.size == residence.size == 500
    assert np.diff(arrival) == pytest.approx(residence[:-1])
    # a think time under a second is drawn, not dropped: requests are spaced by more than W
    arrival, residence = qu.simulate_closed_mm1(1, 50.0, 0.5, 2000, np.random.default_rng(2))
    assert np.mean(np.diff(arrival) - residence[:-1]) == pytest.approx(0.5, rel=0.1)


def test_overload_and_the_interactive_throughput_at_their_edges():
    with pytest.raises(ValueError, match="exceed mu"):
        qu.overload_growth(2.0, 2.0)
    assert np.isfinite(qu.measured_overload_growth(3.0, 2.0, 2, np.random.default_rng(0)))
    assert qu.interactive_throughput(1, 0.5, 0.25) == pytest.approx(1 / 0.75)
    with pytest.raises(ValueError, match="residence_s \\+ think_s must be > 0"):
        qu.interactive_throughput(3, 0.0, 0.0)


def test_the_interactive_law_reads_the_middle_of_the_run():
    """A run from 5 s to 106 s whose arrivals thin out as it goes (the k-th at 5 + 100 (k/N)²)
    and whose requests stay longer as it goes: the law is read from the arrivals in the
    middle 80 % of the run only, [5 + 10.1, 106 − 10.1), counted by hand here."""
    from types import SimpleNamespace

    k = np.arange(401)
    arrival = 5.0 + 100.0 * (k / 400) ** 2
    latency = 0.5 + arrival / 50.0  # 0.6 s at the start, 2.6 s at the end
    end = arrival + latency
    think = np.full(arrival.size, 0.5)
    trace = SimpleNamespace(arrival=arrival, end=end, latency=latency)
    measured, predicted = qu.interactive_law(trace, 3, think)
    t0, t1 = 5.0, float(end.max())
    lo, hi = t0 + 0.1 * (t1 - t0), t1 - 0.1 * (t1 - t0)
    inside = (arrival >= lo) & (arrival < hi)
    assert measured == pytest.approx(inside.sum() / (hi - lo), rel=1e-9)
    assert predicted == pytest.approx(3 / (latency[inside].mean() + 0.5), rel=1e-9)
    # a wider or a narrower window reads other numbers: the window is what is tested
    assert measured != pytest.approx(qu.interactive_law(trace, 3, think, middle=0.6)[0])
